//! Writing to standard output and standard error the way coreutils and
//! ripgrep do: a closed pipe ends the program quietly with success
//! (`tagger sweep | head`), where `println!` would panic; any other write
//! error ends it with a message and exit 1.

use std::io::Write;

/// Writes one formatted piece (and a newline) to standard output, or to
/// standard error.
pub fn emit(args: std::fmt::Arguments<'_>, newline: bool, to_stderr: bool) {
    let r = if to_stderr {
        let mut e = std::io::stderr().lock();
        e.write_fmt(args)
            .and_then(|()| if newline { e.write_all(b"\n") } else { Ok(()) })
    } else {
        let mut o = std::io::stdout().lock();
        o.write_fmt(args)
            .and_then(|()| if newline { o.write_all(b"\n") } else { Ok(()) })
            .and_then(|()| o.flush())
    };
    if let Err(e) = r {
        quit_on_write_error(&e, to_stderr);
    }
}

/// Ends the program after a failed write to a standard stream.
fn quit_on_write_error(e: &std::io::Error, stderr: bool) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    if !stderr {
        let _ =
            std::io::stderr().write_fmt(format_args!("error: writing to standard output: {e}\n"));
    }
    std::process::exit(1);
}

/// Where a command's human summary goes: standard output, or standard
/// error when a data output (`-`) holds standard output.
#[derive(Clone, Copy, Debug, Default)]
pub struct Out {
    /// A data output is on standard output.
    pub data_on_stdout: bool,
}

impl Out {
    /// One line of the summary.
    pub fn line(self, args: std::fmt::Arguments<'_>) {
        emit(args, true, self.data_on_stdout);
    }
}

/// An error and its causes as one message, `a: b: c`, each cause printed
/// once: the library's errors name their typed cause in their own text
/// (so that `to_string()` reads whole) and also give it as `source()` (so
/// that a caller can match it); `{:#}` would print such a cause twice.
pub fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// An error message as printed: each line at most 500 characters and at
/// most 40 lines (an input's 10 MB line once became a 10 MB error), control
/// and bidirectional characters escaped so that a name read from a file
/// cannot rewrite the terminal.
pub fn bounded(msg: &str) -> String {
    const LINE: usize = 500;
    const LINES: usize = 40;
    let total = msg.lines().count();
    let mut out: Vec<String> = msg
        .lines()
        .take(LINES)
        .map(|l| tagger::error::excerpt(l, LINE))
        .collect();
    if total > LINES {
        out.push(format!("... ({} more lines)", total - LINES));
    }
    out.join("\n")
}

/// `println!` through [`emit`].
macro_rules! outln {
    ($($t:tt)*) => { $crate::cli::out::emit(format_args!($($t)*), true, false) };
}

/// `print!` through [`emit`].
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::out::emit(format_args!($($t)*), false, false) };
}

/// `eprintln!` through [`emit`].
macro_rules! errln {
    ($($t:tt)*) => { $crate::cli::out::emit(format_args!($($t)*), true, true) };
}

/// A summary line through an [`Out`]: standard output, or standard error
/// while standard output carries data.
macro_rules! say {
    ($o:expr, $($t:tt)*) => { $o.line(format_args!($($t)*)) };
}
