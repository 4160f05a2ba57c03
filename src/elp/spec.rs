//! The ELP spec grammar: `family[+family...]`, each family with its
//! parameters (`shortest`, `kbounce:K`, `dor`, `random:N`, `ksp:K`,
//! `file:PATH`, `lfts:PATH`).

use super::KBounce;
use crate::error::{Error, Result};
pub use crate::error::{MAX_BOUNCES, MAX_RANDOM_PATHS, SpecError};
use std::path::PathBuf;
use tagger_generators::Topology;
use tagger_generators::params::{Params, non_negative};

/// One family of a spec such as `shortest+random:200,seed=3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FamilySpec {
    /// Shortest paths between every pair of endpoints.
    Shortest,
    /// Paths with at most `k` bounces (a down-then-up turn) on a tiered topology.
    KBounce {
        /// Bounces allowed.
        k: u32,
    },
    /// Dimension-order routes (HyperX, BCube).
    Dor,
    /// `n` random simple paths between random endpoint pairs.
    Random {
        /// Paths drawn.
        n: u32,
        /// Longest path in links (`None`: twice the endpoint diameter).
        maxlen: Option<u32>,
        /// Seed of the draw.
        seed: u64,
    },
    /// The `k` shortest simple paths per endpoint pair (Yen).
    Ksp {
        /// Paths per pair.
        k: u32,
        /// Pairs drawn at random (`None`: every pair).
        pairs: Option<u64>,
        /// Seed of the pair draw.
        seed: u64,
    },
    /// Paths read from a file, one per line.
    File {
        /// The path file.
        path: PathBuf,
    },
    /// The routes of a subnet manager's forwarding-table dump
    /// (`opensm-lfts.dump`) on an `ibnet:` fabric ([`super::lfts`]).
    Lfts {
        /// The dump.
        path: PathBuf,
    },
}

/// A parsed ELP spec: a union of families.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElpSpec {
    /// The spec as written.
    pub text: String,
    /// Its families, in order.
    pub families: Vec<FamilySpec>,
}

impl ElpSpec {
    /// Bytes the ELP's tables take while they are built, estimated before
    /// any is, so that a budget refuses them up front:
    ///
    /// - `shortest`: [`super::Shortest::estimate_bytes`] (the DAG rows, an
    ///   upper bound from one BFS; sparse on deep fabrics);
    /// - `random:N` and `ksp`: each path a vector of node ids, as long as
    ///   `maxlen` (default twice that eccentricity) or D + 1;
    /// - `kbounce`, `dor` and path files: small beside the walk that
    ///   follows, which charges itself as it grows (0 here).
    pub fn estimate_bytes(&self, topo: &Topology) -> u64 {
        let eps = topo.endpoints();
        if eps.is_empty() {
            return 0;
        }
        let ecc = u64::from(super::Shortest::is_deep(topo).1);
        let e = eps.len() as u64;
        let path_bytes = |len: u64| 24 + 4 * (len + 1);
        self.families
            .iter()
            .map(|f| match f {
                FamilySpec::Shortest => super::Shortest::estimate_bytes(topo),
                FamilySpec::Random { n, maxlen, .. } => {
                    (*n as u64).saturating_mul(path_bytes(maxlen.map_or(2 * ecc, u64::from)))
                }
                FamilySpec::Ksp { k, pairs, .. } => pairs
                    .unwrap_or(e * e.saturating_sub(1))
                    .min(e * e.saturating_sub(1))
                    .saturating_mul(*k as u64)
                    .saturating_mul(path_bytes(ecc + 1)),
                FamilySpec::KBounce { k } => KBounce::estimate_bytes(topo, *k),
                FamilySpec::Dor | FamilySpec::File { .. } | FamilySpec::Lfts { .. } => 0,
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Parses `family[+family...]`.
    ///
    /// # Errors
    /// [`Error::ElpSyntax`] naming the part and parameter at fault.
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        let bad = |cause: SpecError| Error::ElpSyntax {
            spec: text.to_string(),
            cause,
        };
        if text.is_empty() {
            return Err(bad(SpecError::Empty));
        }
        let mut families = Vec::new();
        for part in text.split('+').map(str::trim) {
            let (name, rest) = part.split_once(':').unwrap_or((part, ""));
            let fam = family(name, rest).map_err(bad)?;
            if families
                .iter()
                .any(|f| std::mem::discriminant(f) == std::mem::discriminant(&fam))
                && !matches!(
                    fam,
                    FamilySpec::Random { .. }
                        | FamilySpec::File { .. }
                        | FamilySpec::Lfts { .. }
                        | FamilySpec::Ksp { .. }
                )
            {
                return Err(bad(SpecError::Twice {
                    name: name.to_string(),
                }));
            }
            families.push(fam);
        }
        Ok(ElpSpec {
            text: text.to_string(),
            families,
        })
    }

    /// The largest K of a `kbounce` part, if any.
    pub fn kbounce(&self) -> Option<u32> {
        self.families.iter().find_map(|f| match f {
            FamilySpec::KBounce { k } => Some(*k),
            _ => None,
        })
    }

    /// A copy with the seed of every `random` part derived from `seed`, so a
    /// sweep's trials draw different paths.
    pub fn with_seed(&self, seed: u64) -> Self {
        let families = self
            .families
            .iter()
            .enumerate()
            .map(|(i, f)| match f {
                FamilySpec::Random { n, maxlen, .. } => FamilySpec::Random {
                    n: *n,
                    maxlen: *maxlen,
                    seed: crate::seed::mix(seed, i as u64),
                },
                FamilySpec::Ksp {
                    k, pairs: Some(p), ..
                } => FamilySpec::Ksp {
                    k: *k,
                    pairs: Some(*p),
                    seed: crate::seed::mix(seed, i as u64),
                },
                other => other.clone(),
            })
            .collect();
        ElpSpec {
            text: self.text.clone(),
            families,
        }
    }
}

impl ElpSpec {
    /// The files its `file:PATH` and `lfts:PATH` families read, in order.
    pub fn files(&self) -> impl Iterator<Item = &std::path::Path> {
        self.families.iter().filter_map(|f| match f {
            FamilySpec::File { path } | FamilySpec::Lfts { path } => Some(path.as_path()),
            _ => None,
        })
    }
}

impl std::str::FromStr for ElpSpec {
    type Err = Error;

    /// [`ElpSpec::parse`].
    fn from_str(text: &str) -> Result<Self> {
        ElpSpec::parse(text)
    }
}

/// One part of a spec: family `name` with parameters `rest`; `Err` says
/// why not.
fn family(name: &str, rest: &str) -> std::result::Result<FamilySpec, SpecError> {
    // The first parameter may be given bare: `kbounce:1`, `random:1000`,
    // `ksp:8` (and, to be refused by name, any other family's).
    let bare = match name {
        "kbounce" | "ksp" => "k",
        "random" => "n",
        _ => "_",
    };
    let mut params = if name == "file" || name == "lfts" {
        Params::default()
    } else {
        Params::parse(rest, Some(bare)).map_err(|cause| SpecError::Params {
            family: name.to_string(),
            cause,
        })?
    };
    let p = Part { name };
    Ok(match name {
        "shortest" | "dor" => {
            if let Some((k, v)) = params.first() {
                return Err(SpecError::NoParameters {
                    family: name.to_string(),
                    got: if k == "_" {
                        v.to_string()
                    } else {
                        format!("{k}={v}")
                    },
                });
            }
            if name == "shortest" {
                FamilySpec::Shortest
            } else {
                FamilySpec::Dor
            }
        }
        "kbounce" => {
            let (Some(v), true) = (params.take("k"), params.is_empty()) else {
                return Err(SpecError::KBounceArity);
            };
            let k = p.num("K", &v)?;
            if k > MAX_BOUNCES as u64 {
                return Err(SpecError::TooManyBounces { k });
            }
            FamilySpec::KBounce { k: k as u32 }
        }
        "random" => random(&p, &mut params)?,
        "ksp" => ksp(&p, &mut params)?,
        "file" | "lfts" => {
            if rest.trim().is_empty() {
                return Err(SpecError::PathMissing {
                    family: name.to_string(),
                    example: if name == "file" {
                        "paths.txt"
                    } else {
                        "opensm-lfts.dump"
                    },
                });
            }
            let path = PathBuf::from(rest.trim());
            if name == "file" {
                FamilySpec::File { path }
            } else {
                FamilySpec::Lfts { path }
            }
        }
        other => {
            return Err(SpecError::UnknownFamily {
                name: other.to_string(),
            });
        }
    })
}

/// A family's parameters as its messages name them.
struct Part<'a> {
    name: &'a str,
}

impl Part<'_> {
    /// Parameter `key` = `v`, a count.
    fn num(&self, key: &str, v: &str) -> std::result::Result<u64, SpecError> {
        non_negative(v).ok_or_else(|| SpecError::NotACount {
            family: self.name.to_string(),
            key: key.to_string(),
            value: v.to_string(),
            why: tagger_generators::params::not_a_count(v),
        })
    }

    /// Named numeric parameters in `keys` order (key, name in messages);
    /// any other key is refused.
    fn named(
        &self,
        params: &mut Params,
        keys: &[(&str, &str)],
    ) -> std::result::Result<Vec<Option<u64>>, SpecError> {
        let out = keys
            .iter()
            .map(|(k, shown)| params.take(k).map(|v| self.num(shown, &v)).transpose())
            .collect::<std::result::Result<Vec<_>, _>>()?;
        match params.first() {
            Some((k, v)) => Err(SpecError::UnknownParameter {
                family: self.name.to_string(),
                key: (if k == "_" { v } else { k }).to_string(),
            }),
            None => Ok(out),
        }
    }
}

/// `random:N[,maxlen=M][,seed=X]`.
fn random(p: &Part, params: &mut Params) -> std::result::Result<FamilySpec, SpecError> {
    let v = p.named(
        params,
        &[("n", "N"), ("maxlen", "maxlen"), ("seed", "seed")],
    )?;
    let (n, maxlen, seed) = (v[0], v[1], v[2].unwrap_or(1));
    let n = n.ok_or(SpecError::RandomCountMissing)?;
    if n == 0 || n > MAX_RANDOM_PATHS as u64 {
        return Err(SpecError::RandomCount { n });
    }
    if let Some(maxlen) = maxlen.filter(|&m| m == 0 || m > 1 << 16) {
        return Err(SpecError::RandomMaxlen { maxlen });
    }
    Ok(FamilySpec::Random {
        n: n as u32,
        maxlen: maxlen.map(|m| m as u32),
        seed,
    })
}

/// `ksp:K[,pairs=N][,seed=X]`.
fn ksp(p: &Part, params: &mut Params) -> std::result::Result<FamilySpec, SpecError> {
    let v = p.named(params, &[("k", "K"), ("pairs", "pairs"), ("seed", "seed")])?;
    let (k, pairs, seed) = (v[0], v[1], v[2].unwrap_or(1));
    let k = k.ok_or(SpecError::KspKMissing)?;
    if k == 0 || k > 1024 {
        return Err(SpecError::KspK { k });
    }
    if pairs == Some(0) {
        return Err(SpecError::KspNoPairs);
    }
    Ok(FamilySpec::Ksp {
        k: k as u32,
        pairs,
        seed,
    })
}
