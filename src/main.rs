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

/// Keeps freed memory with the process instead of returning it to the OS
/// a second after it is freed (mimalloc's default purge delay). The walk
/// and the replay free and allocate their per-hop buffers again and again;
/// returned memory faults back in, and under transparent huge pages each
/// fault zeroes up to 2 MiB. Measured on Jellyfish 2000 `greedy`: 9,600 to
/// 17,000 page faults become 430, and the run's CPU time drops by 12-18%
/// (docs/performance.md). The peak resident memory, which budgets are
/// about, barely moves; memory is still reused within the process.
/// `MIMALLOC_PURGE_DELAY` in the environment still overrides it.
#[allow(unsafe_code)]
fn keep_freed_memory() {
    unsafe extern "C" {
        /// mimalloc's `mi_option_set_default`: sets an option unless the
        /// environment (`MIMALLOC_<OPTION>`) already did.
        fn mi_option_set_default(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    /// `mi_option_purge_delay` in mimalloc's `mi_option_t` (v2 and v3).
    const PURGE_DELAY: std::ffi::c_int = 15;
    // SAFETY: an option setter of the allocator linked above, taking two
    // integers, called before any other thread exists.
    unsafe { mi_option_set_default(PURGE_DELAY, -1) };
}

fn main() -> ExitCode {
    keep_freed_memory();
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
