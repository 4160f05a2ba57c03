//! Per-scenario memory budgets.
//!
//! A budget is charged with the sizes of the large structures each stage
//! holds (topology, ELP tables, the walk's states and decisions, tagging
//! keys, rules, the verifier's replay), counted from their lengths at stage
//! boundaries and after every hop of a walk. The count is deterministic, so
//! whether a scenario fits does not depend on what else runs beside it or on
//! thread timing, as a process-wide allocator counter would. It leaves out
//! allocator overhead and small objects: it estimates the peak from below,
//! and the README records how it compares with the measured peak RSS.

use crate::error::{Error, Result, ValueError};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Largest budget accepted (1 PiB): anything above is a typo.
const MAX_BUDGET: u64 = 1 << 50;

/// The budget a run gets when none is given: half the memory this process
/// may use ([`tagger_generators::file::machine_memory`]: the machine's, or
/// its cgroup's limit), so an instance too large for the machine is refused
/// by its estimate before it allocates, instead of ending in an aborted
/// allocation or swapping. Half, because the estimates count the large
/// structures only and come in below the measured peak. `None` where the
/// memory cannot be read. `--memory-budget SIZE` replaces it, `--memory-budget
/// none` lifts it.
pub fn machine_default() -> Option<u64> {
    tagger_generators::file::machine_memory().map(|m| m / 2)
}

/// A memory budget, the bytes held by finished stages' structures, and the
/// largest estimate charged against it. Shared by the threads of one
/// scenario (greedy restarts), hence atomics.
#[derive(Debug, Default)]
pub struct Budget {
    limit: Option<u64>,
    held: AtomicU64,
    peak: AtomicU64,
}

impl Budget {
    /// A budget of `limit` bytes (`None`: unlimited).
    pub fn new(limit: Option<u64>) -> Self {
        Budget {
            limit,
            held: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        }
    }

    /// No limit; estimates are still recorded.
    pub fn unlimited() -> Self {
        Budget::new(None)
    }

    /// The limit in bytes, if any.
    pub fn limit(&self) -> Option<u64> {
        self.limit
    }

    /// The largest estimate checked so far.
    pub fn peak(&self) -> u64 {
        self.peak.load(Relaxed)
    }

    /// Records `bytes` that stay held by a finished stage's output, and
    /// checks the total.
    ///
    /// # Errors
    /// As [`Budget::check`].
    pub fn hold(&self, stage: &'static str, bytes: u64) -> Result<()> {
        self.held.fetch_add(bytes, Relaxed);
        self.check(stage, 0)
    }

    /// The bytes left beside what is held (`None`: no limit). Lets a stage
    /// choose a cheaper way before [`Budget::check`] would refuse it.
    pub fn left(&self) -> Option<u64> {
        self.limit
            .map(|l| l.saturating_sub(self.held.load(Relaxed)))
    }

    /// Checks that `stage`, working with `bytes` beyond what is held, fits.
    ///
    /// # Errors
    /// [`Error::MemoryBudget`] when held plus `bytes` exceeds the limit.
    pub fn check(&self, stage: &'static str, bytes: u64) -> Result<()> {
        let bytes = self.held.load(Relaxed).saturating_add(bytes);
        self.peak.fetch_max(bytes, Relaxed);
        match self.limit {
            Some(limit) if bytes > limit => Err(Error::MemoryBudget {
                stage,
                needed: bytes,
                budget: limit,
            }),
            _ => Ok(()),
        }
    }
}

/// Bytes held by `n` values of type `T`.
pub fn bytes_of<T>(n: usize) -> u64 {
    (n as u64).saturating_mul(std::mem::size_of::<T>() as u64)
}

/// Parses a size: an integer number of bytes, or a number with a unit `B`,
/// `KB`/`MB`/`GB`/`TB` (powers of 1000) or `KiB`/`MiB`/`GiB`/`TiB` (powers of
/// 1024), e.g. `8GiB`, `1.5 GB`.
///
/// # Errors
/// [`ValueError`] naming the text when it does not parse, is zero, or
/// exceeds 1 PiB.
pub fn parse_size(text: &str) -> std::result::Result<u64, ValueError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (t[..split].trim(), t[split..].trim());
    let not_a_size = || ValueError::NotASize {
        text: text.to_string(),
    };
    if num.is_empty() {
        return Err(not_a_size());
    }
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(ValueError::UnknownUnit {
                text: text.to_string(),
                unit: unit.to_string(),
            });
        }
    };
    let n: f64 = num.parse().map_err(|_| not_a_size())?;
    let bytes = n * mult;
    if bytes < 1.0 {
        return Err(ValueError::BelowOneByte {
            text: text.to_string(),
        });
    }
    if bytes > MAX_BUDGET as f64 {
        return Err(ValueError::AbovePebibyte {
            text: text.to_string(),
        });
    }
    Ok(bytes as u64)
}

pub use crate::error::human;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("1.5 GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("512mib"), Ok(512 << 20));
        for bad in ["", "GiB", "8 parsecs", "0", "-3GB", "2PiB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_size("8 parsecs"),
            Err(ValueError::UnknownUnit {
                text: "8 parsecs".into(),
                unit: "parsecs".into()
            })
        );
        assert!(
            parse_size("0")
                .unwrap_err()
                .to_string()
                .contains("at least 1 byte")
        );
    }

    #[test]
    fn budget_fails_past_its_limit_and_keeps_the_peak() {
        let b = Budget::new(Some(100));
        assert!(b.hold("elp", 60).is_ok());
        assert!(b.check("tagging", 40).is_ok());
        let e = b.check("tagging", 90).unwrap_err().to_string();
        assert!(
            e.contains("tagging") && e.contains("150 B") && e.contains("100 B"),
            "{e}"
        );
        assert_eq!(b.peak(), 150);
        assert!(Budget::unlimited().check("x", u64::MAX).is_ok());
    }
}
