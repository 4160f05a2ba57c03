//! Failure scenarios: which links and switches are down in each trial.

use crate::error::{Error, Result};
use rand::SeedableRng;
use rand::seq::index::sample;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use tagger_generators::params::{Params, non_negative};
use tagger_generators::{LinkId, NodeId, NodeKind, Topology};

/// Trials of a spec that gives none: as many as `tagger failures` runs
/// without `--fail` (`links:1,trials=20,seed=1`), so that naming only the
/// count changes only the count.
pub const DEFAULT_TRIALS: u32 = 20;
/// The most trials one spec may ask for.
pub const MAX_TRIALS: u32 = 100_000;

/// What fails (`--fail`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailureSpec {
    /// `links:F[,trials=T][,seed=S]`: F links drawn uniformly per trial.
    Links {
        /// Links down per trial.
        count: u32,
        /// Trials.
        trials: u32,
        /// Seed of the draws (trial t uses its own stream).
        seed: u64,
    },
    /// `switches:F[,trials=T][,seed=S]`: F switches (and their links).
    Switches {
        /// Switches down per trial.
        count: u32,
        /// Trials.
        trials: u32,
        /// Seed of the draws (trial t uses its own stream).
        seed: u64,
    },
    /// `file:PATH`: one trial, the links listed as `u v` node pairs.
    File {
        /// The file of `u v` lines.
        path: PathBuf,
    },
}

/// Routing after a failure (`--routing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Routing {
    /// All shortest paths of the degraded network.
    #[default]
    Converged,
    /// Fast reroute before convergence: a packet follows its healthy path
    /// up to the failed link, is deflected to the neighbours nearest its
    /// destination, then follows degraded shortest paths.
    Local,
}

impl Routing {
    /// The model's name as `--routing` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Routing::Converged => "converged",
            Routing::Local => "local",
        }
    }
}

impl std::str::FromStr for FailureSpec {
    type Err = Error;

    /// [`FailureSpec::parse`].
    fn from_str(text: &str) -> Result<Self> {
        FailureSpec::parse(text)
    }
}

impl std::str::FromStr for Routing {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "converged" => Ok(Routing::Converged),
            "local" => Ok(Routing::Local),
            other => Err(Error::Choice {
                what: "routing",
                value: other.to_string(),
                expected: "converged or local",
            }),
        }
    }
}

impl std::fmt::Display for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One trial: the links and switches that are down.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trial {
    /// Failed links, sorted (a failed switch's links are not listed).
    pub links: Vec<LinkId>,
    /// Failed switches, sorted.
    pub switches: Vec<NodeId>,
}

impl Trial {
    /// Per link: whether it is down (failed itself, or at a failed switch).
    pub fn dead_links(&self, topo: &Topology) -> Vec<bool> {
        let mut dead = vec![false; topo.link_count()];
        for &l in &self.links {
            dead[l as usize] = true;
        }
        let nodes = self.dead_nodes(topo);
        for (l, &[a, b]) in topo.links().iter().enumerate() {
            if nodes[a as usize] || nodes[b as usize] {
                dead[l] = true;
            }
        }
        dead
    }

    /// Per node: whether it failed.
    pub fn dead_nodes(&self, topo: &Topology) -> Vec<bool> {
        let mut dead = vec![false; topo.node_count()];
        for &v in &self.switches {
            dead[v as usize] = true;
        }
        dead
    }
}

impl FailureSpec {
    /// The failure file it reads (`file:PATH`), if any.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            FailureSpec::File { path } => Some(path),
            _ => None,
        }
    }

    /// Parses `links:F[,trials=T][,seed=S]`, `switches:F[,...]` or
    /// `file:PATH`.
    ///
    /// # Errors
    /// [`Error::FailureSpec`] naming the parameter at fault.
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        let bad = |reason: String| Error::FailureSpec {
            spec: text.to_string(),
            reason,
        };
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        if kind == "file" {
            if rest.trim().is_empty() {
                return Err(bad("file: needs a path, e.g. file:failed-links.txt".into()));
            }
            return Ok(FailureSpec::File {
                path: PathBuf::from(rest.trim()),
            });
        }
        if kind != "links" && kind != "switches" {
            return Err(bad(format!(
                "unknown failure kind '{kind}' (expected links:F, switches:F or file:PATH)"
            )));
        }
        let mut p = Params::parse(rest, Some("count")).map_err(|e| Error::Param {
            what: "failures",
            spec: text.to_string(),
            cause: e.into(),
        })?;
        let mut num = |key: &str| -> Result<Option<u64>> {
            p.take(key)
                .map(|v| {
                    non_negative(&v).ok_or_else(|| {
                        bad(format!(
                            "{key} = {v} is {}",
                            tagger_generators::params::not_a_count(&v)
                        ))
                    })
                })
                .transpose()
        };
        let count = match (num("count")?, num("f")?) {
            (Some(_), Some(_)) => {
                return Err(bad("the count is given twice (count and f)".into()));
            }
            (a, b) => a.or(b),
        };
        let trials = num("trials")?.unwrap_or(u64::from(DEFAULT_TRIALS));
        let seed = num("seed")?.unwrap_or(1);
        if let Some((other, _)) = p.first() {
            return Err(bad(format!(
                "unknown parameter '{other}' (expected trials, seed)"
            )));
        }
        let count = count.ok_or_else(|| bad(format!("{kind} needs a count, e.g. {kind}:2")))?;
        if trials == 0 || trials > MAX_TRIALS as u64 {
            return Err(bad(format!(
                "trials = {trials} must be in 1..={MAX_TRIALS}"
            )));
        }
        let count = u32::try_from(count).map_err(|_| bad(format!("count {count} is too large")))?;
        let trials = trials as u32;
        Ok(if kind == "links" {
            FailureSpec::Links {
                count,
                trials,
                seed,
            }
        } else {
            FailureSpec::Switches {
                count,
                trials,
                seed,
            }
        })
    }

    /// Trials this spec runs.
    pub fn trials(&self) -> u32 {
        match self {
            FailureSpec::Links { trials, .. } | FailureSpec::Switches { trials, .. } => *trials,
            FailureSpec::File { .. } => 1,
        }
    }

    /// The spec as text (`links:4,trials=100,seed=1`).
    pub fn text(&self) -> String {
        match self {
            FailureSpec::Links {
                count,
                trials,
                seed,
            } => format!("links:{count},trials={trials},seed={seed}"),
            FailureSpec::Switches {
                count,
                trials,
                seed,
            } => format!("switches:{count},trials={trials},seed={seed}"),
            FailureSpec::File { path } => format!("file:{}", path.display()),
        }
    }

    /// Draws every trial. Trial `i` draws from its own ChaCha8 stream (the
    /// seed mixed with `i`), so trials do not depend on each other or on
    /// the thread count. Links between two nodes of the topology may fail
    /// (hosts are not nodes: their links never do); switches are drawn
    /// among switches (servers never fail).
    ///
    /// # Errors
    /// [`Error::FailureSpec`] when more links or switches are asked for
    /// than the topology has; a failure file's errors name its line.
    pub fn draw(&self, topo: &Topology) -> Result<Vec<Trial>> {
        let bad = |reason: String| Error::FailureSpec {
            spec: self.text(),
            reason,
        };
        match self {
            FailureSpec::Links {
                count,
                trials,
                seed,
            } => {
                let m = topo.link_count();
                if *count as usize > m {
                    return Err(bad(format!(
                        "{count} links cannot fail: {} has {m}",
                        topo.name()
                    )));
                }
                Ok((0..*trials)
                    .map(|i| {
                        let mut rng = ChaCha8Rng::seed_from_u64(crate::seed::mix(*seed, i as u64));
                        let mut links: Vec<LinkId> = sample(&mut rng, m, *count as usize)
                            .into_iter()
                            .map(|l| l as LinkId)
                            .collect();
                        links.sort_unstable();
                        Trial {
                            links,
                            switches: Vec::new(),
                        }
                    })
                    .collect())
            }
            FailureSpec::Switches {
                count,
                trials,
                seed,
            } => {
                let switches: Vec<NodeId> = (0..topo.node_count() as NodeId)
                    .filter(|&v| topo.node(v).kind == NodeKind::Switch)
                    .collect();
                if *count as usize > switches.len() {
                    return Err(bad(format!(
                        "{count} switches cannot fail: {} has {}",
                        topo.name(),
                        switches.len()
                    )));
                }
                Ok((0..*trials)
                    .map(|i| {
                        let mut rng = ChaCha8Rng::seed_from_u64(crate::seed::mix(*seed, i as u64));
                        let mut down: Vec<NodeId> =
                            sample(&mut rng, switches.len(), *count as usize)
                                .into_iter()
                                .map(|j| switches[j])
                                .collect();
                        down.sort_unstable();
                        Trial {
                            links: Vec::new(),
                            switches: down,
                        }
                    })
                    .collect())
            }
            FailureSpec::File { path } => Ok(vec![read_file(topo, path)?]),
        }
    }
}

/// A failure file: one `u v` node pair per line (every link between them
/// fails); `#` starts a comment.
fn read_file(topo: &Topology, path: &Path) -> Result<Trial> {
    let text = tagger_generators::file::read_input(path).map_err(|e| Error::io(path, e))?;
    let n = topo.node_count();
    let mut links = Vec::new();
    for (i, raw) in tagger_generators::file::text_lines(&text).map(|(i, l)| (i - 1, l)) {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| Error::PathFile {
            path: path.to_path_buf(),
            line: i + 1,
            reason,
        };
        let ids: Vec<&str> = line.split_whitespace().collect();
        let [a, b] = ids.as_slice() else {
            return Err(bad(format!(
                "'{line}': expected two node ids 'u v' (one failed link per line)"
            )));
        };
        let parse = |s: &str| -> Result<NodeId> {
            let v: NodeId = s
                .parse()
                .map_err(|_| bad(format!("'{s}' is not a node id")))?;
            if v as usize >= n {
                return Err(bad(format!(
                    "node {v} is not in the topology (its {n} nodes are numbered from 0)"
                )));
            }
            Ok(v)
        };
        let (u, v) = (parse(a)?, parse(b)?);
        let before = links.len();
        for &c in topo.out_channels(u) {
            if topo.channel_dst(c) == v {
                links.push(c >> 1);
            }
        }
        if links.len() == before {
            return Err(bad(format!("no link joins nodes {u} and {v}")));
        }
    }
    links.sort_unstable();
    links.dedup();
    Ok(Trial {
        links,
        switches: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_refuse() {
        assert_eq!(
            FailureSpec::parse("links:4,trials=100,seed=3").unwrap(),
            FailureSpec::Links {
                count: 4,
                trials: 100,
                seed: 3
            }
        );
        // No trials given: as many as the default `--fail`.
        assert_eq!(
            FailureSpec::parse("switches:2").unwrap().trials(),
            DEFAULT_TRIALS
        );
        for (bad, msg) in [
            ("links", "needs a count"),
            ("links:x", "count = x"),
            ("links:2,trials=0", "trials = 0"),
            ("links:2,foo=1", "unknown parameter 'foo'"),
            ("cables:2", "unknown failure kind"),
            ("file:", "needs a path"),
        ] {
            let e = FailureSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }

    #[test]
    fn draws_are_seeded_distinct_and_sorted() {
        let t = crate::TopologySpec::parse("fattree:k=8")
            .unwrap()
            .build()
            .unwrap();
        let s = FailureSpec::parse("links:5,trials=20,seed=7").unwrap();
        let a = s.draw(&t).unwrap();
        assert_eq!(a, s.draw(&t).unwrap());
        assert_eq!(a.len(), 20);
        for tr in &a {
            assert_eq!(tr.links.len(), 5);
            assert!(tr.links.windows(2).all(|w| w[0] < w[1]));
        }
        assert_ne!(a[0], a[1]);
        let e = FailureSpec::parse("links:1000")
            .unwrap()
            .draw(&t)
            .unwrap_err();
        assert!(e.to_string().contains("has 256"), "{e}");
        let sw = FailureSpec::parse("switches:3,trials=2")
            .unwrap()
            .draw(&t)
            .unwrap();
        assert_eq!(sw[0].switches.len(), 3);
        let dead = sw[0].dead_links(&t);
        assert!(dead.iter().filter(|&&d| d).count() >= 3 * 4);
    }

    #[test]
    fn failure_files_name_their_lines() {
        let t = crate::TopologySpec::parse("fattree:k=4")
            .unwrap()
            .build()
            .unwrap();
        let dir = std::env::temp_dir().join(format!("tagger-fail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("f.txt");
        std::fs::write(&f, "# ToR 0 to its first aggregation switch\n0 8\n").unwrap();
        let tr = FailureSpec::parse(&format!("file:{}", f.display()))
            .unwrap()
            .draw(&t)
            .unwrap();
        assert_eq!(tr[0].links, vec![0]);
        for (text, msg) in [
            ("0 8\n0 1\n", "line 2: no link joins nodes 0 and 1"),
            ("0\n", "line 1: '0': expected two node ids"),
            ("0 99\n", "line 1: node 99 is not in the topology"),
        ] {
            std::fs::write(&f, text).unwrap();
            let e = FailureSpec::parse(&format!("file:{}", f.display()))
                .unwrap()
                .draw(&t)
                .unwrap_err()
                .to_string();
            assert!(e.contains(msg), "{text:?}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
