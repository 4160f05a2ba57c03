//! What a person reads: the text reports of a run, an ELP study, a failure
//! what-if, an export and a sweep, rendered from the library's own result
//! types. The command line prints these as they are, so a program using the
//! library gets the same report, and every human-readable table has this
//! one home.
//!
//! A report of one item (a run, a what-if, an export) is its lines joined
//! by newlines, without a trailing one; a sweep's tables end each line in a
//! newline.
//!
//! One file per report: a run and its fit, a failure what-if, an export, a
//! sweep's tables and lines, and a change (`update`) with its steps.

use std::fmt::Write as _;

/// Lines collected with `line!`, joined without a trailing newline.
struct Lines(String);

impl Lines {
    fn new() -> Self {
        Lines(String::new())
    }

    fn push(&mut self, line: std::fmt::Arguments<'_>) {
        if !self.0.is_empty() {
            self.0.push('\n');
        }
        let _ = self.0.write_fmt(line);
    }

    fn done(self) -> String {
        self.0
    }
}

macro_rules! line {
    ($l:expr, $($t:tt)*) => { $l.push(format_args!($($t)*)) };
}

mod export;
mod failures;
mod run;
#[cfg(feature = "tables")]
mod sweep;
mod update;

pub use export::{export, topo};
pub use failures::failures;
pub use run::{fit, run};
#[cfg(feature = "tables")]
pub use sweep::{
    jobs_capped, merged, report_written, sweep_done, sweep_failures, sweep_started, sweep_summary,
    wrote,
};
pub use update::{export_steps, update};
