//! Progress lines on standard error (drawn only on a terminal), and
//! signals: Ctrl-C for a long search, and no temporaries left behind.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use tagger::tagging::control::{Control, Progress};

/// A bar of `len` steps with `template`'s labels, drawn on a terminal only.
pub fn bar(len: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(ProgressStyle::with_template(template).expect("the template is valid"));
    bar
}

/// The control of a `search` or `exact` run: a progress line (target,
/// steps, paths still violated; on a terminal), and Ctrl-C: the first ends
/// the search with its best plan, which is then verified and written as
/// usual; a second one quits.
pub fn watch_search() -> (Control, ProgressBar) {
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new_spinner()
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("the template is valid"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let b = bar.clone();
    let control = Control::new().with_observer(move |p: Progress| {
        b.set_message(if p.violated > 0 && p.budget > 0 {
            format!(
                "trying {} priorities: {}% of the search budget, step {}, {} paths still need more",
                p.target,
                p.evaluations * 100 / p.budget,
                p.steps,
                p.violated
            )
        } else if p.violated > 0 {
            format!(
                "trying {} priorities: step {}, {} paths still need more",
                p.target, p.steps, p.violated
            )
        } else {
            format!("trying {} priorities: solver call {}", p.target, p.steps)
        });
    });
    *SEARCH
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(control.clone());
    (control, bar)
}

/// The search is over: a signal from now on quits (see
/// [`install_signal_handler`]).
pub fn search_over() {
    SEARCH
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
}

/// The search a first Ctrl-C stops, if one runs.
static SEARCH: std::sync::Mutex<Option<Control>> = std::sync::Mutex::new(None);

/// The process's handler of Ctrl-C, SIGTERM and SIGHUP, installed once at
/// start: during a `search` or `exact` run the first ends the search with
/// its best plan (verified and written as usual); otherwise, or the second
/// time, the temporaries being written are removed and the process exits
/// with 130, so an interrupted run leaves no half-written sibling behind.
pub fn install_signal_handler() {
    let handler = ctrlc::set_handler(|| {
        let search = SEARCH
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(stop) = search {
            stop.request_stop();
            errln!(
                "\nstopping: the best plan so far is verified and written (Ctrl-C again to quit)"
            );
        } else {
            tagger::output::remove_live_temporaries();
            std::process::exit(130);
        }
    });
    if let Err(e) = handler {
        errln!("warning: Ctrl-C will not stop a run cleanly: {e}");
    }
}
