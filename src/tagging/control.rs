//! Stopping and watching a long `search` or `exact` from outside.
//!
//! Both algorithms hold a verified-so-far best plan at every moment, so a
//! stop request (Ctrl-C in `tagger run`) ends them early with that plan,
//! flagged `search_stopped_early`, instead of losing the run. Progress goes
//! to an optional observer (the CLI's progress bar); the library prints
//! nothing itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

static STOP: AtomicBool = AtomicBool::new(false);

/// What a long search reports, about every 1,024 steps (and at each solver
/// call of `exact`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The priority count being tried.
    pub target: u32,
    /// Steps (or solver calls) so far in this run.
    pub steps: u64,
    /// Paths still past the target (0 for solver calls).
    pub violated: u64,
}

type Observer = Arc<dyn Fn(Progress) + Send + Sync>;

static OBSERVER: RwLock<Option<Observer>> = RwLock::new(None);

/// Asks running searches to stop with their best plan (async-signal
/// tolerant: one atomic store).
pub fn request_stop() {
    STOP.store(true, Ordering::Relaxed);
}

/// True once [`request_stop`] was called (until [`clear_stop`]).
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Forgets an earlier stop request.
pub fn clear_stop() {
    STOP.store(false, Ordering::Relaxed);
}

/// Sends progress to `observer` (replacing any earlier one); `None` stops
/// reporting.
pub fn observe(observer: Option<Observer>) {
    *OBSERVER.write().unwrap_or_else(|e| e.into_inner()) = observer;
}

pub(crate) fn report(p: Progress) {
    if let Some(o) = OBSERVER.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
        o(p);
    }
}
