//! The `tagger` command line: thin glue over the library. `cli/args.rs`
//! declares the arguments, one function per subcommand runs it
//! (`cli/plan.rs`, `cli/inspect.rs`, `cli/sweep.rs`), and everything
//! printed is rendered by the library (`tagger::render`).

#[macro_use]
mod cli;

use clap::Parser;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match cli::run(cli::args::Cli::parse()) {
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
            errln!("error: {}", cli::out::bounded(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}
