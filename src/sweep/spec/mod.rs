//! Sweep specs (TOML): validated completely, then expanded into scenarios.
//!
//! ```toml
//! name = "example"
//! seed = 1          # base seed; scenario seeds derive from (seed, scenario id)
//! trials = 1        # default for groups
//! memory_budget = "8GiB"  # optional: per-scenario budget (groups may override)
//!
//! [[group]]
//! name = "fattree"
//! topology = "fattree"            # a family with `params`, or full spec strings
//! params = { k = [4, 8] }         # scalar or list values; lists expand
//! elp = ["kbounce:0", "kbounce:1"]
//! algo = ["clos", "greedy"]
//! cycle = "ordered"               # optional
//! trials = 1                      # optional
//! switch = ["spectrum2", "tomahawk"]  # optional: switch profiles (default spectrum2)
//! cable_m = [100, 300]            # optional: switch-to-switch cables (default: the profile's)
//! speed_gbps = 100                # optional: switch-to-switch port speed
//! headroom = "sonic"              # optional: sonic or simple (default: the profile's)
//! classes = [1, 2]                # optional: lossless application classes (default 1)
//! max_tcs = ["profile", "none"]    # optional: traffic classes a plan may use per switch: a
//!                                 # number, "none", or "profile" (the default: the switch
//!                                 # profile's traffic classes less the lossy one)
//! failures = ["links:1,trials=50", "links:4,trials=50"]  # optional: failure what-if
//! routing = ["converged", "local"]  # optional: routing after failures (default converged)
//! replan = true                   # optional: replan each trial, and plan for all of them
//! growth = "drain:links=2,steps=3" # optional: grow or drain the plan in steps (tagger update)
//! ```
//!
//! `switch`, `cable_m`, `speed_gbps`, `headroom`, `classes`, `max_tcs`,
//! `failures`, `routing`, `replan` and `growth` may also be given at the top level, as
//! defaults for every group. A failure spec's own seed (default 1) draws the same
//! failures for every scenario of the same topology, so plans are compared
//! on the same trials.
//!
//! The spec's shape and the sweep are here; a group's grid (each axis
//! parsed, checked and expanded) in `grid.rs`.

use crate::cycle::CycleBackend;
use crate::elp::ElpSpec;
use crate::error::{Error, Result, SpecFault};
use crate::tagging::Algo;
use grid::Grid;
use serde::Deserialize;

mod grid;
use std::collections::BTreeMap;
use tagger_generators::TopologySpec;

/// Scenarios a spec may expand to unless `--max-scenarios` raises it.
pub const DEFAULT_MAX_SCENARIOS: usize = 10_000;

/// Declares a raw spec table with the settings a spec gives at its top
/// level as defaults and a group gives for itself (switch, cables, classes,
/// failures, growth), written once here. They are fields of each struct
/// rather than one flattened struct because serde cannot refuse unknown
/// keys beside a flattened one.
macro_rules! raw_table {
    ($(#[$m:meta])* struct $name:ident { $($field:tt)* }) => {
        $(#[$m])*
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $name {
            $($field)*
            switch: Option<OneOrMany<String>>,
            cable_m: Option<OneOrMany<toml::Value>>,
            speed_gbps: Option<toml::Value>,
            headroom: Option<String>,
            classes: Option<OneOrMany<toml::Value>>,
            max_tcs: Option<OneOrMany<toml::Value>>,
            failures: Option<OneOrMany<String>>,
            routing: Option<OneOrMany<String>>,
            replan: Option<bool>,
            growth: Option<OneOrMany<String>>,
        }
    };
}

raw_table! {
    /// A spec file as written: its own keys, the settings' defaults and
    /// its groups.
    struct RawSpec {
        name: String,
        #[serde(default = "one")]
        seed: u64,
        #[serde(default = "one")]
        trials: u64,
        /// Default per-scenario memory budget for groups.
        #[serde(default)]
        memory_budget: Option<RawSize>,
        #[serde(default)]
        group: Vec<RawGroup>,
    }
}

/// A size: bytes as an integer, or a string with a unit (`"8GiB"`). Any
/// TOML value is accepted here and checked by [`RawSize::bytes`], so that a
/// wrong one is reported with its value rather than as a serde variant.
#[derive(Debug, Deserialize, Clone)]
#[serde(transparent)]
struct RawSize(toml::Value);

impl RawSize {
    fn bytes(&self) -> std::result::Result<u64, SpecFault> {
        match &self.0 {
            toml::Value::Integer(n) if *n >= 1 => Ok(*n as u64),
            toml::Value::Integer(n) => Err(format!("{n} bytes: must be at least 1 byte").into()),
            toml::Value::String(t) => Ok(crate::budget::parse_size(t)?),
            other => Err(format!(
                "{other} is not a size (a number of bytes, or a string such as \"8GiB\")"
            )
            .into()),
        }
    }
}

fn one() -> u64 {
    1
}

raw_table! {
    /// A `[[group]]` as written: its grid's axes and its own settings.
    struct RawGroup {
        name: String,
        topology: OneOrMany<String>,
        #[serde(default)]
        params: BTreeMap<String, OneOrMany<toml::Value>>,
        elp: OneOrMany<String>,
        #[serde(default)]
        algo: Option<OneOrMany<String>>,
        #[serde(default)]
        cycle: Option<OneOrMany<String>>,
        trials: Option<u64>,
        memory_budget: Option<RawSize>,
    }
}

/// A scenario's traffic-class limit (`max_tcs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcLimit {
    /// The switch profile's traffic classes less the lossy one (the
    /// default, as `tagger run`'s).
    Profile,
    /// No limit (`"none"`).
    None,
    /// This many.
    At(u32),
}

impl TcLimit {
    /// The limit for a plan fitted to profile `p`.
    pub fn resolve(self, p: &crate::capacity::Profile) -> Option<u32> {
        match self {
            TcLimit::Profile => Some(p.lossless_tcs()),
            TcLimit::None => None,
            TcLimit::At(n) => Some(n),
        }
    }
}

/// Where a TOML parse error of spec `text` is (`line N`, or `spec`) and
/// why, with the key and value at fault as the line gives them
/// (`trials = "3": invalid type: ...`), and serde's name for a list-or-one
/// field replaced by what it accepts.
fn toml_fault(text: &str, e: &toml::de::Error) -> (String, String) {
    let reason = e.message().replace(
        "data did not match any variant of untagged enum OneOrMany",
        "expected a string or a list of strings",
    );
    let Some(s) = e.span() else {
        return ("spec".into(), reason);
    };
    let start = s.start.min(text.len());
    let line = text[..start].matches('\n').count() + 1;
    let from = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let to = text[start..].find('\n').map_or(text.len(), |i| start + i);
    // A key before the span: the value is at fault (not the key itself).
    let key = text[from..to]
        .split_once('=')
        .filter(|(k, _)| from + k.len() < start);
    let reason = match key {
        Some((key, _)) => {
            let value = text.get(start..s.end.min(text.len())).unwrap_or("");
            let value: String = value.chars().take(60).collect();
            format!("{} = {value}: {reason}", key.trim())
        }
        None => reason,
    };
    (format!("line {line}"), reason)
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
enum OneOrMany<T> {
    // Many first: a TOML value can itself be an array.
    Many(Vec<T>),
    One(T),
}

impl<T: Clone> OneOrMany<T> {
    fn list(&self) -> Vec<T> {
        match self {
            OneOrMany::One(x) => vec![x.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// One point of the grid, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Position in the expanded grid, from 0 (stable across runs of the same spec).
    pub id: u64,
    /// The group it comes from.
    pub group: String,
    /// Its trial number within the group.
    pub trial: u64,
    /// The seed its random parts use (the sweep's seed, trial and id mixed).
    pub seed: u64,
    /// The grid point's topology spec, canonical, before seeding.
    pub topology_text: String,
    /// The topology, seeded.
    pub topology: TopologySpec,
    /// The ELP families, seeded.
    pub elp: ElpSpec,
    /// The tagging algorithm.
    pub algo: Algo,
    /// Incremental cycle detection backend.
    pub cycle: CycleBackend,
    /// Bytes the scenario may use (estimated, see [`crate::budget`]), as
    /// the spec (or `--memory-budget`) gives it; the `memory_budget_bytes`
    /// column.
    pub memory_budget: Option<u64>,
    /// The budget that applies when `memory_budget` is `None`: the
    /// machine's ([`crate::budget::machine_default`]), or none when lifted.
    pub default_budget: Option<u64>,
    /// The switch model the plan is fitted to, with the grid's links.
    pub switch: crate::capacity::Profile,
    /// Lossless application classes sharing the network.
    pub classes: u32,
    /// The traffic classes a plan may use per switch.
    pub max_tcs: TcLimit,
    /// A failure what-if to run on the plan, if any.
    pub failures: Option<FailureRun>,
    /// A growth path to run from the plan, if any (`growth.parquet`).
    pub growth: Option<crate::update::Growth>,
}

/// The failure what-if of a scenario.
#[derive(Clone, Debug)]
pub struct FailureRun {
    /// What fails.
    pub spec: crate::failures::FailureSpec,
    /// How traffic is routed after a failure.
    pub routing: crate::failures::Routing,
    /// Whether to replan and build the failure-aware plan.
    pub options: crate::failures::Options,
}

/// A validated, expanded sweep.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep's name.
    pub name: String,
    /// The spec's text, written into the outputs' metadata.
    pub text: String,
    /// Every scenario, in id order.
    pub scenarios: Vec<Scenario>,
}

/// Why a topology cannot run one of `elps` or `algos`, with the key at
/// fault; generated families are judged by their structure, files only for
/// existence (their levels are known once read).
fn compatible(
    text: &str,
    topo: &TopologySpec,
    elps: &[ElpSpec],
    algos: &[Algo],
) -> std::result::Result<(), (&'static str, SpecFault)> {
    let family = match topo {
        TopologySpec::File { path } | TopologySpec::IbNet { path } => {
            return readable_file(text, path).map_err(|r| ("topology", r));
        }
        TopologySpec::Generated(f) => f,
    };
    for e in elps {
        for f in &e.families {
            match f {
                crate::elp::FamilySpec::Dor if !family.has_dimensions() => {
                    return Err((
                        "elp",
                        format!(
                            "'{}' on '{text}': dor needs a HyperX or BCube topology",
                            e.text
                        )
                        .into(),
                    ));
                }
                crate::elp::FamilySpec::Lfts { .. } => {
                    return Err((
                        "elp",
                        format!(
                            "'{}' on '{text}': lfts reads forwarding tables against an InfiniBand fabric's switch names and port numbers; give the topology as ibnet:PATH (or a file --topology-out wrote from one)",
                            e.text
                        )
                        .into(),
                    ));
                }
                crate::elp::FamilySpec::KBounce { .. } if !family.is_tiered() => {
                    return Err((
                        "elp",
                        format!(
                            "'{}' on '{text}': kbounce needs a tiered topology (fat-tree, leaf-spine)",
                            e.text
                        )
                        .into(),
                    ));
                }
                _ => {}
            }
        }
    }
    for a in algos {
        if matches!(a, Algo::Clos { .. }) && !family.is_tiered() {
            return Err((
                "algo",
                format!(
                    "'{}' on '{text}': the Clos scheme needs a tiered topology (fat-tree, leaf-spine)",
                    a.name()
                )
                .into(),
            ));
        }
    }
    Ok(())
}

/// `Ok` when `path`, named by `spec`, is a file that can be opened for
/// reading.
fn readable_file(spec: &str, path: &std::path::Path) -> std::result::Result<(), SpecFault> {
    // Metadata first: opening a FIFO would block until a writer comes.
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(format!("'{spec}': {} is a directory", path.display()).into());
        }
        Ok(m) if !m.is_file() => {
            return Err(format!(
                "'{spec}': {} is not a regular file (a device, FIFO or socket)",
                path.display()
            )
            .into());
        }
        _ => {}
    }
    match std::fs::File::open(path) {
        Ok(_) => Ok(()),
        Err(cause) => Err(SpecFault::Unreadable {
            spec: spec.to_string(),
            path: path.to_path_buf(),
            cause,
        }),
    }
}

impl Sweep {
    /// Every scenario's memory budget replaced by `bytes` (`None`: no
    /// limit), as `--memory-budget` does over the spec's.
    pub fn override_budget(&mut self, bytes: Option<u64>) {
        for s in &mut self.scenarios {
            s.memory_budget = bytes;
            s.default_budget = None;
        }
    }

    /// Whether any scenario runs a failure what-if (the sweep then writes
    /// `failures.parquet`).
    pub fn has_failures(&self) -> bool {
        self.scenarios.iter().any(|s| s.failures.is_some())
    }

    /// Whether any scenario has a growth path (and the sweep writes
    /// `growth.parquet`).
    pub fn has_growth(&self) -> bool {
        self.scenarios.iter().any(|s| s.growth.is_some())
    }

    /// Parses and expands `text` (from `file`, used in errors).
    ///
    /// ```
    /// use tagger::sweep::{DEFAULT_MAX_SCENARIOS, Sweep, run_all};
    /// let spec = r#"
    /// name = "tiny"
    /// [[group]]
    /// name = "fat-trees"
    /// topology = "fattree"
    /// params = { k = [4, 6] }
    /// elp = "kbounce:1"
    /// algo = ["greedy", "clos"]
    /// "#;
    /// let sweep = Sweep::parse(spec, "tiny.toml", DEFAULT_MAX_SCENARIOS)?;
    /// assert_eq!(sweep.scenarios.len(), 4); // 2 sizes x 2 algorithms
    /// let outcomes = run_all(&sweep.scenarios, 2, |_| {})?;
    /// for o in &outcomes {
    ///     let s = o.result.as_ref().expect("every scenario runs");
    ///     assert!(s.verified && s.figures.priorities >= s.figures.priorities_lower_bound);
    /// }
    /// # Ok::<(), tagger::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::SweepSpec`] naming the file, group and key at fault; the grid
    /// is checked in full before anything runs.
    pub fn parse(text: &str, file: &str, max_scenarios: usize) -> Result<Self> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let err = |location: String, cause: SpecFault| Error::SweepSpec {
            file: file.to_string(),
            location,
            cause: Box::new(cause),
        };
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let (location, reason) = toml_fault(text, &e);
            err(location, reason.into())
        })?;
        if raw.group.is_empty() {
            return Err(err(
                "spec".into(),
                "no [[group]] given: the grid is empty".into(),
            ));
        }
        if raw.trials == 0 {
            return Err(err("trials".into(), "must be at least 1".into()));
        }
        let default_budget = raw
            .memory_budget
            .as_ref()
            .map(RawSize::bytes)
            .transpose()
            .map_err(|r| err("memory_budget".into(), r))?;
        let machine = crate::budget::machine_default();
        let mut scenarios = Vec::new();
        let mut names = std::collections::BTreeSet::new();
        for (gi, g) in raw.group.iter().enumerate() {
            let at = |key: &str| format!("group {} ('{}'), key {key}", gi + 1, g.name);
            if !names.insert(g.name.clone()) {
                return Err(err(
                    at("name"),
                    format!("group name '{}' is used twice", g.name).into(),
                ));
            }
            let grid = Grid::parse(g, &raw, default_budget).map_err(|(k, r)| err(at(&k), r))?;
            let count = grid.count();
            if scenarios.len() as u128 + count > max_scenarios as u128 {
                return Err(err(
                    format!("group {} ('{}')", gi + 1, g.name),
                    grid.over_cap(count, scenarios.len(), max_scenarios).into(),
                ));
            }
            grid.expand(g, (raw.seed, machine), &mut scenarios);
        }
        Ok(Sweep {
            name: raw.name,
            text: text.to_string(),
            scenarios,
        })
    }
}

#[cfg(test)]
mod tests;
