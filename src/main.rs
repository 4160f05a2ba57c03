//! The `tagger` command line: thin glue over the library. `cli/args.rs`
//! declares the arguments, one function per subcommand runs it
//! (`cli/plan.rs`, `cli/inspect.rs`, `cli/sweep.rs`), and everything
//! printed is rendered by the library (`tagger::render`).

#[macro_use]
mod cli;

use clap::Parser;
use std::process::ExitCode;

// mimalloc with its defaults but one: transparent huge pages are off,
// by a compile-time default set in `.cargo/config.toml` (page faults are
// slow on the CI machine type, and a huge page zeroes 2 MiB however
// little of it is used: fat-tree k=64 `clos` 12.1-13.5 s -> 10.1-11.1 s,
// docs/performance.md). `MIMALLOC_ALLOW_THP=1` turns them back on. The
// purge delay (1 s in v3) was once set to "never" here, to keep freed
// memory from faulting back in; measured again on 2026-11-25 it made
// Jellyfish 2000 `greedy` slower (median 1.40 s against 1.25 s), left
// Jellyfish 10000 and fat-tree k=32 within noise, and raised `search`'s
// peak on Jellyfish 2000 from 1.60 to 2.32 GiB. `MIMALLOC_PURGE_DELAY` in
// the environment sets it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = match cli::args::Cli::try_parse() {
        Ok(a) => a,
        Err(e) => return parse_error(e),
    };
    cli::progress::install_signal_handler();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            // Standard output closed under a data write (`run --rules-out
            // - | head`): quiet, as for the summary lines.
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().map(std::io::Error::kind)
                    == Some(std::io::ErrorKind::BrokenPipe)
                    || c.downcast_ref::<tagger::Error>()
                        .and_then(tagger::Error::io_kind)
                        == Some(std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            errln!("error: {}", cli::out::bounded(&cli::out::chain(&e)));
            ExitCode::FAILURE
        }
    }
}

/// What clap's parse gave instead of arguments: help and the version go to
/// standard output, and a failure to write them is an error (exit 1);
/// usage errors go to standard error with exit 2.
fn parse_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let text = cli::styled(e.render());
            if let Err(err) = cli::print_help(&text) {
                errln!("error: {err:#}");
                return ExitCode::FAILURE;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            let _ = e.print();
            ExitCode::from(2)
        }
    }
}
