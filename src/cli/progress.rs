//! Progress lines on standard error (drawn only on a terminal), and
//! Ctrl-C for a long search.

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
    let stop = control.clone();
    let first = std::sync::atomic::AtomicBool::new(true);
    let handler = ctrlc::set_handler(move || {
        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            stop.request_stop();
            errln!(
                "\nstopping: the best plan so far is verified and written (Ctrl-C again to quit)"
            );
        } else {
            std::process::exit(130);
        }
    });
    if let Err(e) = handler {
        errln!("warning: Ctrl-C will not stop the search gracefully: {e}");
    }
    (control, bar)
}
