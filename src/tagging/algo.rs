//! The algorithm names of `--algo`: [`Algo`], its parser and limits.

use super::*;
use crate::error::ValueError;

/// Tagging algorithm (`--algo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algo {
    /// Tag = hop number (Tagger Algorithm 1). Needs `longest ELP` priorities.
    Brute,
    /// Rule-level greedy merging with incremental cycle detection; with
    /// `restarts > 1`, that many runs under seeded key orders (run 0 in the
    /// canonical order), keeping the best.
    Greedy {
        /// Runs, each in its own key order.
        restarts: u32,
        /// Seed of the key orders after the first.
        seed: u64,
    },
    /// The paper's node-level greedy (Algorithm 2) on `(channel, hop)` nodes,
    /// realised with rules that match the hop count (TTL).
    GreedyTtl,
    /// Clos bounce tagging: +1 on every down-then-up bounce. `k` caps the
    /// bounces (default: the ELP spec's `kbounce:K`, or 0).
    Clos {
        /// Bounces the plan covers (`None`: the ELP's).
        k: Option<u32>,
    },
    /// Fewest priorities by search over order plans ([`order`]): the best of
    /// greedy and the up*/down* and alternating constructions, then a
    /// target-P local search ([`search`]) that lowers P while it succeeds,
    /// within `budget` path evaluations (and `time_ms`, if set). Never more priorities
    /// than greedy; among plans with the fewest, the fewest compressed rules.
    Search(SearchParams),
    /// The best plan of the others within their deterministic budgets
    /// (docs/formats.md): `clos` where the topology has levels, `greedy`,
    /// then `search` and, on small ELPs, `exact`'s solver with a fixed
    /// amount of work, while the plan is above the lower bound; ranked by
    /// priorities, then traffic classes, then rules.
    Auto {
        /// Time its `search` may take, in milliseconds (`--time-limit`;
        /// `None`: its work budget alone bounds it).
        time_ms: Option<u64>,
    },
    /// The fewest priorities, proven: `search`'s plan, then SAT under one
    /// priority fewer until the solver says impossible ([`exact`]). Stops
    /// after `timeout_ms` with the best plan and bound.
    Exact {
        /// Time the solver may take, in milliseconds.
        timeout_ms: u64,
    },
}

/// `search`'s options ([`Algo::Search`]): `search:budget=N,seed=X,time=S,paths=N,symmetric=0|1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SearchParams {
    /// Path evaluations the local search may spend (deterministic work,
    /// unlike time).
    pub budget: u64,
    /// Seed of the local search's moves.
    pub seed: u64,
    /// Wall-clock limit in milliseconds, if any.
    pub time_ms: Option<u64>,
    /// ELP paths past which the local search is not started (`None`:
    /// it runs wherever its state fits the memory budget).
    pub max_paths: Option<u64>,
    /// Also search reversal-symmetric plans: a symmetric and an
    /// unrestricted local search run side by side per target (on both
    /// cores), the first to reach it winning (on by default;
    /// `symmetric=0` runs the unrestricted one alone).
    pub symmetric: bool,
}

impl SearchParams {
    /// `search` as written bare: the default budget, seed 0, no time
    /// limit, no path limit, the symmetric search beside.
    pub const DEFAULT: SearchParams = SearchParams {
        budget: SEARCH_BUDGET,
        seed: 0,
        time_ms: None,
        max_paths: None,
        symmetric: true,
    };
}

/// Default time limit of `exact`, in milliseconds.
pub const EXACT_TIMEOUT_MS: u64 = 600_000;

/// Default work budget of `search`: path evaluations by its local search.
/// Jellyfish 300/64 r=12 `shortest` needs 3.1-4.0x10^8 to reach 2
/// priorities (16-21 s here); a target that stops improving ends sooner by
/// the stall rule (`search`'s `PATIENCE`), so the budget only binds while
/// the search still makes progress (Jellyfish 350: about 75 s).
pub const SEARCH_BUDGET: u64 = 1_000_000_000;

/// Restarts one greedy run may ask for.
pub const MAX_RESTARTS: u32 = 1024;

impl Algo {
    /// Greedy with one run in the canonical order (the default).
    pub const GREEDY: Algo = Algo::Greedy {
        restarts: 1,
        seed: 0,
    };

    /// `search` with its defaults.
    pub const SEARCH: Algo = Algo::Search(SearchParams::DEFAULT);

    /// `exact` with its default time limit.
    pub const EXACT: Algo = Algo::Exact {
        timeout_ms: EXACT_TIMEOUT_MS,
    };

    /// This algorithm with its time limit lowered to `ms` milliseconds (the
    /// smaller of its own and `ms`). Only `search` and `exact` have one.
    ///
    /// ```
    /// use tagger::tagging::Algo;
    /// let a: Algo = "search:time=60".parse()?;
    /// assert_eq!(a.with_time_limit(5_000)?.name(), "search:budget=1000000000,seed=0,time=5");
    /// assert!(Algo::GREEDY.with_time_limit(5_000).is_err());
    /// # Ok::<(), tagger::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Algo`] for an algorithm without a time limit.
    pub fn with_time_limit(self, ms: u64) -> Result<Algo> {
        Ok(match self {
            Algo::Search(p) => Algo::Search(SearchParams {
                time_ms: Some(p.time_ms.map_or(ms, |t| t.min(ms))),
                ..p
            }),
            Algo::Exact { timeout_ms } => Algo::Exact {
                timeout_ms: timeout_ms.min(ms),
            },
            Algo::Auto { time_ms } => Algo::Auto {
                time_ms: Some(time_ms.map_or(ms, |t| t.min(ms))),
            },
            other => {
                return Err(Error::Algo {
                    algo: other.name(),
                    reason: "a time limit applies to auto, search and exact only".into(),
                });
            }
        })
    }

    /// The algorithm as written (`greedy`, `search:budget=...`), parsed back by `FromStr`.
    pub fn name(&self) -> String {
        match self {
            Algo::Brute => "brute".into(),
            Algo::Auto { time_ms: None } => "auto".into(),
            Algo::Auto { time_ms: Some(ms) } => format!("auto:time={}", *ms as f64 / 1000.0),
            Algo::Greedy { restarts: 1, .. } => "greedy".into(),
            Algo::Greedy { restarts, seed } => format!("greedy:restarts={restarts},seed={seed}"),
            Algo::GreedyTtl => "greedy-ttl".into(),
            Algo::Clos { k: None } => "clos".into(),
            Algo::Clos { k: Some(k) } => format!("clos:{k}"),
            &Algo::SEARCH => "search".into(),
            Algo::Exact {
                timeout_ms: EXACT_TIMEOUT_MS,
            } => "exact".into(),
            Algo::Exact { timeout_ms } => format!("exact:timeout={}", *timeout_ms as f64 / 1000.0),
            Algo::Search(SearchParams {
                budget,
                seed,
                time_ms,
                max_paths,
                symmetric,
            }) => {
                let mut s = format!("search:budget={budget},seed={seed}");
                if let Some(ms) = time_ms {
                    s += &format!(",time={}", *ms as f64 / 1000.0);
                }
                if let Some(n) = max_paths {
                    s += &format!(",paths={n}");
                }
                if !*symmetric {
                    s += ",symmetric=0";
                }
                s
            }
        }
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Algo {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = |reason: String| Error::Algo {
            algo: s.to_string(),
            reason,
        };
        let (name, rest) = s.trim().split_once(':').unwrap_or((s.trim(), ""));
        let param = |cause: crate::error::ParamError| Error::Param {
            what: "algorithm",
            spec: s.to_string(),
            cause,
        };
        let params = |rest: &str| Params::parse(rest, None).map_err(|e| param(e.into()));
        let unknown = |p: &Params, expected: &str| match p.first() {
            Some((k, _)) => Err(bad(format!(
                "unknown parameter '{k}' (expected {expected})"
            ))),
            None => Ok(()),
        };
        match name {
            "brute" | "greedy-ttl" | "clos" if rest.is_empty() => Ok(match name {
                "brute" => Algo::Brute,
                "greedy-ttl" => Algo::GreedyTtl,
                _ => Algo::Clos { k: None },
            }),
            "clos" => rest
                .parse::<u32>()
                .ok()
                .filter(|&k| k <= crate::elp::MAX_BOUNCES)
                .map(|k| Algo::Clos { k: Some(k) })
                .ok_or_else(|| bad(format!("clos:K needs K in 0..={}", crate::elp::MAX_BOUNCES))),
            "greedy" => {
                let mut p = params(rest)?;
                let num = |k: &str, v: Option<String>, default: u64| -> Result<u64> {
                    v.map_or(Ok(default), |v| {
                        v.parse()
                            .map_err(|_| bad(format!("{k} = {v} is {}", tagger_generators::params::not_a_count(&v))))
                    })
                };
                let restarts = num("restarts", p.take("restarts"), 1)?;
                let seed = num("seed", p.take("seed"), 0)?;
                unknown(&p, "restarts, seed")?;
                if restarts == 0 || restarts > MAX_RESTARTS as u64 {
                    return Err(bad(format!("restarts = {restarts} must be in 1..={MAX_RESTARTS}")));
                }
                Ok(Algo::Greedy {
                    restarts: restarts as u32,
                    seed,
                })
            }
            "auto" => {
                let mut p = params(rest)?;
                let time_ms = p.take("time").map(|v| millis("time", &v).map_err(|e| param(e.into()))).transpose()?;
                unknown(&p, "time")?;
                Ok(Algo::Auto { time_ms })
            }
            "exact" => {
                let mut p = params(rest)?;
                let timeout_ms = match p.take("timeout") {
                    Some(v) => millis("timeout", &v).map_err(|e| param(e.into()))?,
                    None => EXACT_TIMEOUT_MS,
                };
                unknown(&p, "timeout")?;
                Ok(Algo::Exact { timeout_ms })
            }
            "search" => {
                let mut p = params(rest)?;
                let n = |k: &str, p: &mut Params| -> Result<Option<u64>> {
                    p.take(k)
                        .map(|v| {
                            count(&v).ok_or_else(|| bad(format!("{k} = {v} is {} (e.g. 100000000 or 1e8)", tagger_generators::params::not_a_count(&v))))
                        })
                        .transpose()
                };
                let budget = n("budget", &mut p)?.unwrap_or(SEARCH_BUDGET);
                let seed = n("seed", &mut p)?.unwrap_or(0);
                let max_paths = n("paths", &mut p)?;
                let time_ms = p.take("time").map(|v| millis("time", &v).map_err(|e| param(e.into()))).transpose()?;
                let symmetric = match p.take("symmetric").as_deref() {
                    Some("0") | Some("false") => false,
                    None | Some("1") | Some("true") => true,
                    Some(v) => return Err(bad(format!("symmetric = {v} must be 0 or 1"))),
                };
                unknown(&p, "budget, seed, time, paths, symmetric")?;
                Ok(Algo::Search(SearchParams { budget, seed, time_ms, max_paths, symmetric }))
            }
            _ => Err(bad(
                "unknown algorithm (expected auto[:time=S], brute, greedy, greedy:restarts=R,seed=X, greedy-ttl, clos, clos:K, search[:budget=N,seed=X,time=S,paths=N,symmetric=0] or exact[:timeout=S])".into(),
            )),
        }
    }
}

/// A non-negative integer, also in exponent form when the value is whole
/// (`5e9`, `1.5e9`): budgets are large numbers people write that way.
pub fn count(v: &str) -> Option<u64> {
    if let Ok(n) = v.parse::<u64>() {
        return Some(n);
    }
    let (mantissa, exp) = v.split_once(['e', 'E'])?;
    let exp: u32 = exp.strip_prefix('+').unwrap_or(exp).parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let frac = frac.trim_end_matches('0');
    if int.is_empty() && frac.is_empty()
        || !(int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    let shift = exp.checked_sub(frac.len() as u32)?;
    let n = digits.checked_mul(10u128.checked_pow(shift)?)?;
    u64::try_from(n).ok()
}

/// Milliseconds from a `key=SECONDS` parameter (positive, at most 10^7 s);
/// the error names `key` and the value.
///
/// # Errors
/// [`ValueError`] naming `key` and `v`, when `v` is not such a number of
/// seconds.
pub fn millis(key: &str, v: &str) -> std::result::Result<u64, ValueError> {
    let (key, value) = (key.to_string(), v.to_string());
    match v.parse::<f64>() {
        Ok(x) if x > 1e7 => Err(ValueError::SecondsOutOfRange { key, value }),
        Ok(x) if x.is_finite() && x > 0.0 => Ok((x * 1000.0).round().max(1.0) as u64),
        _ => Err(ValueError::NotSeconds { key, value }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds become milliseconds; what is not a positive number of
    /// seconds at most 10^7 is a typed error naming the key and value.
    #[test]
    fn millis_are_typed() {
        assert_eq!(millis("time", "1.5"), Ok(1500));
        assert_eq!(millis("time", "0.0001"), Ok(1));
        let value = |v: &str| ("timeout".to_string(), v.to_string());
        for bad in ["0", "-1", "NaN", "soon"] {
            let (key, value) = value(bad);
            assert_eq!(
                millis("timeout", bad),
                Err(ValueError::NotSeconds { key, value }),
                "{bad}"
            );
        }
        for far in ["1e8", "inf"] {
            let (key, value) = value(far);
            assert_eq!(
                millis("timeout", far),
                Err(ValueError::SecondsOutOfRange { key, value }),
                "{far}"
            );
        }
    }

    /// A parameter the list or value parser refuses stays that parser's
    /// typed error; the message is the one the algorithm's own errors have.
    #[test]
    fn parameter_errors_keep_the_parsers_cause() {
        let e = "exact:timeout=soon".parse::<Algo>().unwrap_err();
        assert!(
            matches!(&e, Error::Param { what: "algorithm", spec, cause: crate::error::ParamError::Value(ValueError::NotSeconds { key, .. }) }
                if spec == "exact:timeout=soon" && key == "timeout"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "algorithm 'exact:timeout=soon': timeout = soon must be seconds, a positive number"
        );
        let e = "search:budget".parse::<Algo>().unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Param {
                    cause: crate::error::ParamError::List(_),
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(e.kind(), "param");
    }
}
