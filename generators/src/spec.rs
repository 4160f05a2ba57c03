//! Topology spec strings: `family:key=value,key=value` (or `file:PATH`).

use crate::error::{Result, TopologyError};
use crate::model::{Family, MAX_LINKS, MAX_NODES, Topology};
use std::path::{Path, PathBuf};

/// A parsed, validated topology spec: a generated family with its
/// parameters, or a file. Building it is then infallible except for random
/// constructions that may get stuck, and file I/O.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologySpec {
    /// A generated family with its parameters.
    Generated(Family),
    /// A `tagger-topology/1` file.
    File {
        /// The file.
        path: PathBuf,
    },
    /// An InfiniBand fabric as `ibnetdiscover` prints it (or an ibsim net
    /// file): [`crate::ibnet`].
    IbNet {
        /// The file.
        path: PathBuf,
    },
}

/// Key-value parameters of one spec ([`crate::params::Params`]) with the
/// family's name for its errors.
struct Params {
    family: &'static str,
    items: crate::params::Params,
}

impl Params {
    fn parse(family: &'static str, spec: &str, rest: &str) -> Result<Self> {
        use crate::params::ParamsError;
        let items = crate::params::Params::parse(rest, None).map_err(|e| match e {
            ParamsError::Twice { key, value } => TopologyError::Param {
                family,
                param: key,
                value,
                reason: "given twice".into(),
            },
            other => TopologyError::Spec {
                spec: spec.into(),
                reason: other.to_string(),
            },
        })?;
        Ok(Params { family, items })
    }

    fn take_opt(&mut self, key: &str) -> Result<Option<u64>> {
        let Some(v) = self.items.take(key) else {
            return Ok(None);
        };
        crate::params::non_negative(&v)
            .map(Some)
            .ok_or_else(|| TopologyError::Param {
                family: self.family,
                param: key.to_string(),
                reason: crate::params::not_a_count(&v).into(),
                value: v,
            })
    }

    fn take(&mut self, key: &str) -> Result<u64> {
        self.take_opt(key)?.ok_or_else(|| match self.items.first() {
            // A misspelt key (`K=4`) is the likelier fault than a missing
            // one: name it.
            Some((k, v)) => TopologyError::Param {
                family: self.family,
                param: k.to_string(),
                value: v.to_string(),
                reason: format!(
                    "unknown parameter (the required '{key}' is missing; keys are lower case)"
                ),
            },
            None => TopologyError::Param {
                family: self.family,
                param: key.into(),
                value: "(missing)".into(),
                reason: "required".into(),
            },
        })
    }

    /// A required `u32` in `min..=max`.
    fn take_u32(&mut self, key: &str, min: u64, max: u64) -> Result<u32> {
        let v = self.take(key)?;
        self.check_range(key, v, min, max)
    }

    fn take_u32_or(&mut self, key: &str, default: u32, min: u64, max: u64) -> Result<u32> {
        match self.take_opt(key)? {
            Some(v) => self.check_range(key, v, min, max),
            None => Ok(default),
        }
    }

    fn check_range(&self, key: &str, v: u64, min: u64, max: u64) -> Result<u32> {
        if v < min || v > max {
            return Err(self.bad(key, v, format!("must be in {min}..={max}")));
        }
        Ok(v as u32)
    }

    fn bad(&self, key: &str, v: impl ToString, reason: impl Into<String>) -> TopologyError {
        TopologyError::Param {
            family: self.family,
            param: key.into(),
            value: v.to_string(),
            reason: reason.into(),
        }
    }

    fn finish(self) -> Result<()> {
        if let Some((k, v)) = self.items.first() {
            return Err(TopologyError::Param {
                family: self.family,
                param: k.to_string(),
                value: v.to_string(),
                reason: "unknown parameter".into(),
            });
        }
        Ok(())
    }
}

fn too_large(family: &'static str, what: &'static str, value: u128, limit: u64) -> Result<()> {
    if value > limit as u128 {
        return Err(TopologyError::TooLarge {
            family,
            what,
            value,
            limit: limit as u128,
        });
    }
    Ok(())
}

impl std::str::FromStr for TopologySpec {
    type Err = TopologyError;

    /// [`TopologySpec::parse`].
    fn from_str(spec: &str) -> Result<Self> {
        TopologySpec::parse(spec)
    }
}

impl TopologySpec {
    /// Parses and validates a spec string such as `fattree:k=8` or
    /// `jellyfish:n=1000,ports=64,r=12,seed=1`. `file:PATH` reads a
    /// `tagger-topology/1` file, and so does a bare path that ends in
    /// `.json` or holds a `/`, or that names an existing file and no
    /// family (its canonical form is `file:PATH`).
    ///
    /// ```
    /// use tagger_generators::{NodeKind, TopologySpec};
    /// let t = TopologySpec::parse("fattree:k=4")?.build()?;
    /// assert_eq!(t.count_kind(NodeKind::Switch), 20); // 5k^2/4
    /// assert_eq!(t.endpoints().len(), 8); // the ToRs, 2 hosts each
    /// let e = TopologySpec::parse("fattree:k=5").unwrap_err();
    /// assert_eq!(e.to_string(), "fattree: parameter k = 5: must be even");
    /// # Ok::<(), tagger_generators::TopologyError>(())
    /// ```
    ///
    /// # Errors
    /// A [`TopologyError`] naming the family, parameter and value at fault.
    pub fn parse(spec: &str) -> Result<Self> {
        let spec = spec.trim();
        // A bare path (`my-fabric.json`, `nets/a`) is a file: no family
        // name ends in `.json` or holds a `/`, so nothing else is shadowed.
        if !spec.contains(':') && (spec.ends_with(".json") || spec.contains('/')) {
            return Ok(TopologySpec::File {
                path: PathBuf::from(spec),
            });
        }
        let (family, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let family = family.trim().to_ascii_lowercase();
        if family == "file" {
            if rest.trim().is_empty() {
                return Err(TopologyError::Spec {
                    spec: spec.into(),
                    reason: "file: needs a path, e.g. file:net.json".into(),
                });
            }
            return Ok(TopologySpec::File {
                path: PathBuf::from(rest.trim()),
            });
        }
        if family == "ibnet" {
            if rest.trim().is_empty() {
                return Err(TopologyError::Spec {
                    spec: spec.into(),
                    reason: "ibnet: needs a path, e.g. ibnet:fabric.txt (ibnetdiscover's output)"
                        .into(),
                });
            }
            return Ok(TopologySpec::IbNet {
                path: PathBuf::from(rest.trim()),
            });
        }
        let fam: &'static str = match family.as_str() {
            "fattree" | "fat-tree" => "fattree",
            "leafspine" | "leaf-spine" => "leafspine",
            "bcube" => "bcube",
            "hyperx" => "hyperx",
            "jellyfish" => "jellyfish",
            // A file named as it is (`fabric.topo`, `runs/10:00/t.json`),
            // as scripts that took a path gave it.
            _ if Path::new(spec).is_file() => {
                return Ok(TopologySpec::File {
                    path: PathBuf::from(spec),
                });
            }
            _ => return Err(TopologyError::UnknownFamily { family }),
        };
        let mut p = Params::parse(fam, spec, rest)?;
        let parsed = TopologySpec::Generated(family_of(fam, &mut p)?);
        p.finish()?;
        Ok(parsed)
    }

    /// Builds the topology. `name` is the spec string it came from.
    ///
    /// # Errors
    /// File errors for `file:`, or a [`TopologyError::Construction`] when a
    /// random construction cannot complete.
    pub fn build(&self) -> Result<Topology> {
        match self {
            TopologySpec::Generated(f) => match *f {
                Family::FatTree { k } => Ok(crate::fattree::fat_tree(k)),
                Family::LeafSpine {
                    leaves,
                    spines,
                    hosts,
                    links,
                } => Ok(crate::leafspine::leaf_spine(leaves, spines, hosts, links)),
                Family::BCube { n, k } => Ok(crate::bcube::bcube(n, k)),
                Family::HyperX { l, s, k, t } => Ok(crate::hyperx::hyperx(l, s, k, t)),
                Family::Jellyfish { n, ports, r, seed } => {
                    crate::jellyfish::jellyfish(n, ports, r, seed)
                }
                Family::File => unreachable!("parse never makes a generated File family"),
            },
            TopologySpec::File { path } => crate::file::read_json_file(path),
            TopologySpec::IbNet { path } => crate::ibnet::read(path, &self.canonical()),
        }
    }

    /// The canonical spec string (`fattree:k=8`), used as the topology's name.
    pub fn canonical(&self) -> String {
        match self {
            TopologySpec::Generated(f) => f.canonical(),
            TopologySpec::File { path } => format!("file:{}", path.display()),
            TopologySpec::IbNet { path } => format!("ibnet:{}", path.display()),
        }
    }

    /// The canonical spec string without the random seed
    /// (`jellyfish:n=100,ports=32,r=12`): how a sweep labels a grid point
    /// whose trials draw their own seeds. Other families: as
    /// [`canonical`](Self::canonical).
    pub fn canonical_unseeded(&self) -> String {
        match self {
            TopologySpec::Generated(Family::Jellyfish { n, ports, r, .. }) => {
                format!("jellyfish:n={n},ports={ports},r={r}")
            }
            other => other.canonical(),
        }
    }

    /// The family name (`fattree`, ..., `file`).
    pub fn family_name(&self) -> &'static str {
        match self {
            TopologySpec::Generated(f) => f.name(),
            TopologySpec::File { .. } => "file",
            TopologySpec::IbNet { .. } => "ibnet",
        }
    }

    /// A copy with the random seed replaced, for sweeps that derive seeds per
    /// trial. Families without a seed are returned unchanged.
    pub fn with_seed(&self, seed: u64) -> Self {
        match self {
            TopologySpec::Generated(Family::Jellyfish { n, ports, r, .. }) => {
                TopologySpec::Generated(Family::Jellyfish {
                    n: *n,
                    ports: *ports,
                    r: *r,
                    seed,
                })
            }
            other => other.clone(),
        }
    }
}

/// Parses and builds in one step.
///
/// # Errors
/// As [`TopologySpec::parse`] and [`TopologySpec::build`].
pub fn build(spec: &str) -> Result<Topology> {
    TopologySpec::parse(spec)?.build()
}

/// The family `fam` (a name [`TopologySpec::parse`] accepted) with its
/// parameters taken from `p`, each checked and the network's size capped.
fn family_of(fam: &'static str, p: &mut Params) -> Result<Family> {
    Ok(match fam {
        "fattree" => {
            let k = p.take_u32("k", 2, 1024)?;
            if k % 2 != 0 {
                return Err(p.bad("k", k, "must be even"));
            }
            let k64 = k as u128;
            too_large(fam, "switches", 5 * k64 * k64 / 4, MAX_NODES)?;
            too_large(fam, "links", k64 * k64 * k64 / 2, MAX_LINKS)?;
            Family::FatTree { k }
        }
        "leafspine" => {
            let leaves = p.take_u32("leaves", 1, MAX_NODES)?;
            let spines = p.take_u32("spines", 1, MAX_NODES)?;
            let hosts = p.take_u32_or("hosts", 1, 0, 1 << 20)?;
            let links = p.take_u32_or("links", 1, 1, 64)?;
            too_large(fam, "switches", leaves as u128 + spines as u128, MAX_NODES)?;
            too_large(
                fam,
                "links",
                leaves as u128 * spines as u128 * links as u128,
                MAX_LINKS,
            )?;
            Family::LeafSpine {
                leaves,
                spines,
                hosts,
                links,
            }
        }
        "bcube" => {
            let n = p.take_u32("n", 2, 1 << 12)?;
            let k = p.take_u32("k", 0, 23)?;
            let servers = (n as u128).checked_pow(k + 1).unwrap_or(u128::MAX);
            too_large(fam, "servers", servers, MAX_NODES)?;
            let switches = servers / n as u128 * (k as u128 + 1);
            too_large(fam, "nodes", servers + switches, MAX_NODES)?;
            too_large(fam, "links", servers * (k as u128 + 1), MAX_LINKS)?;
            Family::BCube { n, k }
        }
        "hyperx" => {
            let l = p.take_u32("l", 1, 24)?;
            let s = p.take_u32("s", 2, 1 << 12)?;
            let k = p.take_u32_or("k", 1, 1, 64)?;
            let t = p.take_u32_or("t", 1, 0, 1 << 20)?;
            let sw = (s as u128).checked_pow(l).unwrap_or(u128::MAX);
            too_large(fam, "switches", sw, MAX_NODES)?;
            let links = sw * l as u128 * (s as u128 - 1) / 2 * k as u128;
            too_large(fam, "links", links, MAX_LINKS)?;
            Family::HyperX { l, s, k, t }
        }
        "jellyfish" => {
            let n = p.take_u32("n", 2, MAX_NODES)?;
            let ports = p.take_u32("ports", 1, 1 << 16)?;
            let r = p.take_u32("r", 1, 1 << 16)?;
            let seed = p.take_opt("seed")?.unwrap_or(1);
            if r >= n {
                return Err(p.bad("r", r, format!("must be below n = {n}")));
            }
            if r > ports {
                return Err(p.bad("r", r, format!("must be at most ports = {ports}")));
            }
            if !(n as u64 * r as u64).is_multiple_of(2) {
                return Err(p.bad(
                    "r",
                    r,
                    format!("n*r = {} must be even", n as u64 * r as u64),
                ));
            }
            if r == 1 && n > 2 {
                return Err(p.bad("r", r, "r = 1 cannot connect more than 2 switches"));
            }
            too_large(fam, "links", n as u128 * r as u128 / 2, MAX_LINKS)?;
            Family::Jellyfish { n, ports, r, seed }
        }
        _ => unreachable!("TopologySpec::parse names the families"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(spec: &str) -> String {
        TopologySpec::parse(spec).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_family() {
        assert_eq!(
            TopologySpec::parse("fattree:k=8").unwrap(),
            TopologySpec::Generated(Family::FatTree { k: 8 })
        );
        assert_eq!(
            TopologySpec::parse("jellyfish:n=1000,ports=64,r=12,seed=1")
                .unwrap()
                .canonical(),
            "jellyfish:n=1000,ports=64,r=12,seed=1"
        );
        assert_eq!(
            TopologySpec::parse("hyperx:l=2,s=4,k=2,t=1").unwrap(),
            TopologySpec::Generated(Family::HyperX {
                l: 2,
                s: 4,
                k: 2,
                t: 1
            })
        );
        assert_eq!(
            TopologySpec::parse("bcube:n=4,k=1").unwrap(),
            TopologySpec::Generated(Family::BCube { n: 4, k: 1 })
        );
        assert!(matches!(
            TopologySpec::parse("file:x.json").unwrap(),
            TopologySpec::File { .. }
        ));
    }

    #[test]
    fn a_bare_path_is_a_file() {
        for (spec, path) in [
            ("my-fabric.json", "my-fabric.json"),
            ("nets/a", "nets/a"),
            ("./x.JSON.json", "./x.JSON.json"),
        ] {
            let t = TopologySpec::parse(spec).unwrap();
            assert_eq!(t, TopologySpec::File { path: path.into() });
            assert_eq!(t.canonical(), format!("file:{path}"));
        }
        // Not a path: a family name still has to be one.
        assert!(
            err("my-fabric").contains("file:PATH"),
            "{}",
            err("my-fabric")
        );
        // A file that exists is one, whatever its name (a script's
        // `--topology fabric.topo`, a directory with a colon).
        let dir = std::env::temp_dir().join(format!("tagger-spec-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("10:00")).unwrap();
        for name in ["fabric.topo", "10:00/t.json"] {
            let f = dir.join(name);
            std::fs::write(&f, "{}").unwrap();
            let spec = f.to_str().unwrap();
            assert_eq!(
                TopologySpec::parse(spec).unwrap(),
                TopologySpec::File { path: f.clone() }
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parameter_errors_name_the_value() {
        assert!(err("fattree:k=7").contains("k = 7: must be even"));
        assert!(err("fattree:k=x").contains("not a non-negative integer"));
        assert!(err("fattree:k=8,q=1").contains("q = 1: unknown parameter"));
        assert!(err("fattree:").contains("k = (missing)"));
        assert!(
            err("fattree:K=4")
                .contains("parameter K = 4: unknown parameter (the required 'k' is missing"),
            "{}",
            err("fattree:K=4")
        );
        assert!(err("fattree:x=1").contains("parameter x = 1: unknown parameter"));
        assert!(err("torus:k=2").contains("unknown topology family 'torus'"));
        assert!(err("jellyfish:n=5,ports=4,r=3").contains("must be even"));
        assert!(err("jellyfish:n=5,ports=8,r=5").contains("must be below n = 5"));
        assert!(err("jellyfish:n=10,ports=4,r=6").contains("at most ports = 4"));
        assert!(err("jellyfish:n=10,ports=4,r=1").contains("cannot connect"));
        assert!(err("bcube:n=1,k=1").contains("n = 1"));
        assert!(err("hyperx:l=0,s=4").contains("l = 0"));
        assert!(err("bcube:n=4096,k=23").contains("exceeds the limit"));
        assert!(err("hyperx:l=24,s=4096").contains("exceeds the limit"));
        assert!(err("fattree:k=1024").contains("exceeds the limit"));
        assert!(err("fattree:k").contains("not key=value"));
        assert!(err("file:").contains("needs a path"));
    }
}
