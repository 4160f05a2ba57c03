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

/// `n` and `noun`, the noun plural unless `n` is 1: "1 step", "2 steps",
/// "3 switches", "1 directory", "2 directories".
fn count(n: impl std::fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    if n == "1" {
        return format!("1 {noun}");
    }
    let (head, last) = noun.rsplit_once(' ').map_or(("", noun), |(h, t)| (h, t));
    let plural = if let Some(stem) = last.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'o', 'u'])
    {
        format!("{stem}ies")
    } else if last.ends_with("ch") || last.ends_with("sh") || last.ends_with(['s', 'x']) {
        format!("{last}es")
    } else {
        format!("{last}s")
    };
    if head.is_empty() {
        format!("{n} {plural}")
    } else {
        format!("{n} {head} {plural}")
    }
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

/// A line per file a command wrote besides its summary (`what`: its
/// format), standard output (`-`) left out: "wrote         PATH (WHAT)".
pub fn written(files: &[(&str, Option<&std::path::Path>)]) -> String {
    let mut l = Lines::new();
    for (what, p) in files {
        if let Some(p) = p.filter(|p| *p != std::path::Path::new("-")) {
            line!(l, "wrote         {} ({what})", p.display());
        }
    }
    l.done()
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_are_singular_for_one_and_plural_otherwise() {
        assert_eq!(count(1, "step"), "1 step");
        assert_eq!(count(0, "step"), "0 steps");
        assert_eq!(count(2u64, "switch"), "2 switches");
        assert_eq!(count(1, "switch"), "1 switch");
        assert_eq!(count(3, "directory"), "3 directories");
        assert_eq!(count(2, "key"), "2 keys");
        assert_eq!(count(1, "lossless priority"), "1 lossless priority");
        assert_eq!(count(2, "lossless priority"), "2 lossless priorities");
        assert_eq!(count(5, "pass"), "5 passes");
    }
}
