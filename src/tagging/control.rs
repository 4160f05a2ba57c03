//! Stopping and watching a long `search` or `exact` from outside.
//!
//! Both algorithms hold a verified-so-far best plan at every moment, so a
//! stop request (Ctrl-C in `tagger run`) ends them early with that plan,
//! flagged `search_stopped_early`, instead of losing the run. Progress goes
//! to an optional observer (the CLI's progress bar); the library prints
//! nothing itself.
//!
//! A [`Control`] belongs to one run (a [`super::Context`] carries it), so
//! runs side by side in one process (a sweep's scenarios, a library user's
//! threads) are stopped and watched each on its own.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

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
    /// `search`: path evaluations spent so far, of `budget` (0 for solver
    /// calls).
    pub evaluations: u64,
    /// `search`: its budget in path evaluations (0 for solver calls).
    pub budget: u64,
}

type Observer = Arc<dyn Fn(Progress) + Send + Sync>;

/// A run's stop flag and progress observer. Clones share the flag: keep
/// one to stop the run from another thread or a signal handler.
///
/// ```
/// use tagger::tagging::{Algo, Context, Control, tag_in};
/// use tagger::elp::{ElpSet, ElpSpec};
/// let t = tagger::TopologySpec::parse("fattree:k=4")?.build()?;
/// let elp = ElpSet::build(&t, &ElpSpec::parse("kbounce:1")?)?;
/// let control = Control::new();
/// control.request_stop(); // e.g. from a Ctrl-C handler holding a clone
/// let budget = tagger::budget::Budget::unlimited();
/// let cx = Context::new(&t, &elp, &budget, &control);
/// // A stopped search still returns its best plan so far, verified.
/// let plan = tag_in(&cx, "search".parse()?)?;
/// assert!(plan.priorities >= plan.lower_bound);
/// # Ok::<(), tagger::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct Control {
    stop: Arc<AtomicBool>,
    /// A second flag that also stops this run (see [`Control::linked`]).
    also: Option<Arc<AtomicBool>>,
    observer: Option<Observer>,
}

impl fmt::Debug for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Control")
            .field("stop_requested", &self.stop_requested())
            .field("observed", &self.observer.is_some())
            .finish()
    }
}

impl Control {
    /// A control nobody has stopped, without an observer.
    pub fn new() -> Self {
        Self::default()
    }

    /// This control, with progress sent to `observer`.
    pub fn with_observer(mut self, observer: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Asks the run (and every clone's) to stop with its best plan
    /// (async-signal tolerant: one atomic store).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// True once [`Control::request_stop`] was called on this control or a
    /// clone.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self
                .also
                .as_ref()
                .is_some_and(|a| a.load(Ordering::Relaxed))
    }

    /// A control for a run inside this one: stopped by this control's
    /// requests and by `also`, without an observer (a run beside another
    /// would mix its progress into the other's).
    pub(crate) fn linked(&self, also: Arc<AtomicBool>) -> Control {
        Control {
            stop: Arc::clone(&self.stop),
            also: Some(also),
            observer: None,
        }
    }

    /// True when a stop was requested or `deadline` has passed.
    pub(crate) fn expired(&self, deadline: Option<Instant>) -> bool {
        deadline.is_some_and(|d| Instant::now() >= d) || self.stop_requested()
    }

    /// [`Control::expired`] as an owned check, for a solver's callback.
    pub(crate) fn expiry(&self, deadline: Option<Instant>) -> Box<dyn Fn() -> bool> {
        let c = self.clone();
        Box::new(move || c.expired(deadline))
    }

    pub(crate) fn report(&self, p: Progress) {
        if let Some(o) = &self.observer {
            o(p);
        }
    }
}
