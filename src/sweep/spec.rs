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
//! One file past 600 lines on purpose: the spec grammar, its validation and
//! its expansion share the per-field checks that make every error name its
//! group and key.

use crate::cycle::CycleBackend;
use crate::elp::ElpSpec;
use crate::error::{Error, Result};
use crate::tagging::Algo;
use serde::Deserialize;
use std::collections::BTreeMap;
use tagger_generators::TopologySpec;

/// Scenarios a spec may expand to unless `--max-scenarios` raises it.
pub const DEFAULT_MAX_SCENARIOS: usize = 10_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    name: String,
    #[serde(default = "one")]
    seed: u64,
    #[serde(default = "one")]
    trials: u64,
    /// Default per-scenario memory budget for groups.
    #[serde(default)]
    memory_budget: Option<RawSize>,
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
    #[serde(default)]
    group: Vec<RawGroup>,
}

/// A size: bytes as an integer, or a string with a unit (`"8GiB"`). Any
/// TOML value is accepted here and checked by [`RawSize::bytes`], so that a
/// wrong one is reported with its value rather than as a serde variant.
#[derive(Debug, Deserialize, Clone)]
#[serde(transparent)]
struct RawSize(toml::Value);

impl RawSize {
    fn bytes(&self) -> std::result::Result<u64, String> {
        match &self.0 {
            toml::Value::Integer(n) if *n >= 1 => Ok(*n as u64),
            toml::Value::Integer(n) => Err(format!("{n} bytes: must be at least 1 byte")),
            toml::Value::String(t) => crate::budget::parse_size(t),
            other => Err(format!(
                "{other} is not a size (a number of bytes, or a string such as \"8GiB\")"
            )),
        }
    }
}

fn one() -> u64 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
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
) -> std::result::Result<(), (&'static str, String)> {
    let family = match topo {
        TopologySpec::File { path } | TopologySpec::IbNet { path } => {
            return readable_file(path).map_err(|r| ("topology", format!("'{text}': {r}")));
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
                        ),
                    ));
                }
                crate::elp::FamilySpec::KBounce { .. } if !family.is_tiered() => {
                    return Err((
                        "elp",
                        format!(
                            "'{}' on '{text}': kbounce needs a tiered topology (fat-tree, leaf-spine)",
                            e.text
                        ),
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
                ),
            ));
        }
    }
    Ok(())
}

/// `Ok` when `path` names a file that can be opened for reading.
fn readable_file(path: &std::path::Path) -> std::result::Result<(), String> {
    // Metadata first: opening a FIFO would block until a writer comes.
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(format!("{} is a directory", path.display())),
        Ok(m) if !m.is_file() => {
            return Err(format!(
                "{} is not a regular file (a device, FIFO or socket)",
                path.display()
            ));
        }
        _ => {}
    }
    match std::fs::File::open(path) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
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
        let err = |location: String, reason: String| Error::SweepSpec {
            file: file.to_string(),
            location,
            reason,
        };
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let (location, reason) = toml_fault(text, &e);
            err(location, reason)
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
                    format!("group name '{}' is used twice", g.name),
                ));
            }
            let grid = Grid::parse(g, &raw, default_budget).map_err(|(k, r)| err(at(&k), r))?;
            let count = grid.count();
            if scenarios.len() as u128 + count > max_scenarios as u128 {
                return Err(err(
                    format!("group {} ('{}')", gi + 1, g.name),
                    grid.over_cap(count, scenarios.len(), max_scenarios),
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

/// One group's axes, parsed and checked: the grid its scenarios span.
struct Grid {
    topos: Vec<(String, TopologySpec)>,
    elps: Vec<ElpSpec>,
    algos: Vec<Algo>,
    cycles: Vec<CycleBackend>,
    switches: Vec<crate::capacity::Profile>,
    classes: Vec<u32>,
    limits: Vec<TcLimit>,
    failure_runs: Vec<Option<FailureRun>>,
    growths: Vec<Option<crate::update::Growth>>,
    trials: u64,
    memory_budget: Option<u64>,
}

/// A key at fault in a group, and why.
type Fault = (String, String);

/// A fault whose key is a fixed name.
fn owned((key, reason): (&'static str, String)) -> Fault {
    (key.to_string(), reason)
}

/// Every element of `list` parsed, or the first error at `key`.
fn parse_all<T, E: std::fmt::Display>(
    list: &[String],
    key: &'static str,
    parse: impl Fn(&str) -> std::result::Result<T, E>,
) -> std::result::Result<Vec<T>, Fault> {
    list.iter()
        .map(|x| parse(x).map_err(|e| (key.to_string(), e.to_string())))
        .collect()
}

/// An integer list key (`classes`, `max_tcs`) parsed element by element,
/// `default` when neither the group nor the spec gives it.
fn values<T>(
    list: Option<&OneOrMany<toml::Value>>,
    key: &'static str,
    default: T,
    parse: impl Fn(&toml::Value) -> std::result::Result<T, String>,
) -> std::result::Result<Vec<T>, Fault> {
    let out: Vec<T> = match list {
        None => vec![default],
        Some(list) => list
            .list()
            .iter()
            .map(|v| parse(v).map_err(|r| (key.to_string(), r)))
            .collect::<std::result::Result<_, _>>()?,
    };
    if out.is_empty() {
        return Err((key.to_string(), "empty list: the grid is empty".into()));
    }
    Ok(out)
}

impl Grid {
    /// Group `g` of spec `top`, its budget `default_budget` unless it
    /// gives one.
    fn parse(
        g: &RawGroup,
        top: &RawSpec,
        default_budget: Option<u64>,
    ) -> std::result::Result<Grid, Fault> {
        let topos = expand_topologies(g)?;
        let elps = g.elp.list();
        let algos = g
            .algo
            .as_ref()
            .map_or(vec!["greedy".to_string()], OneOrMany::list);
        let cycles = g
            .cycle
            .as_ref()
            .map_or(vec!["ordered".to_string()], OneOrMany::list);
        let trials = g.trials.unwrap_or(top.trials);
        for (key, len) in [
            ("topology", topos.len()),
            ("elp", elps.len()),
            ("algo", algos.len()),
            ("cycle", cycles.len()),
        ] {
            if len == 0 {
                return Err(owned((key, "empty list: the grid is empty".into())));
            }
        }
        if trials == 0 {
            return Err(owned(("trials", "must be at least 1".into())));
        }
        let memory_budget = match &g.memory_budget {
            Some(b) => Some(b.bytes().map_err(|r| owned(("memory_budget", r)))?),
            None => default_budget,
        };
        // Labelled canonically, so `bcube:k=1,n=4` and `bcube:n=4,k=1` are
        // one grid point in every table.
        let topos = parse_all(&topos, "topology", |t| {
            TopologySpec::parse(t).map(|s| {
                let label = if t.contains("seed=") {
                    s.canonical()
                } else {
                    s.canonical_unseeded()
                };
                (label, s)
            })
        })?;
        let grid = Grid {
            elps: parse_all(&elps, "elp", ElpSpec::parse)?,
            algos: parse_all(&algos, "algo", str::parse::<Algo>)?,
            cycles: parse_all(&cycles, "cycle", str::parse::<CycleBackend>)?,
            switches: switch_grid(g, top).map_err(owned)?,
            classes: values(
                g.classes.as_ref().or(top.classes.as_ref()),
                "classes",
                1,
                |v| match v {
                    toml::Value::Integer(i) if (1..=64).contains(i) => Ok(*i as u32),
                    other => Err(format!("{other} must be an integer from 1 to 64")),
                },
            )?,
            limits: values(
                g.max_tcs.as_ref().or(top.max_tcs.as_ref()),
                "max_tcs",
                TcLimit::Profile,
                |v| match v {
                    toml::Value::Integer(i) if (1..=15).contains(i) => Ok(TcLimit::At(*i as u32)),
                    toml::Value::String(t) if t == "none" => Ok(TcLimit::None),
                    toml::Value::String(t) if t == "profile" => Ok(TcLimit::Profile),
                    other => Err(format!(
                        "{other}: expected a number of traffic classes from 1 to 15, \"none\" or \"profile\""
                    )),
                },
            )?,
            failure_runs: failure_grid(g, top).map_err(owned)?,
            growths: growth_grid(g, top, &topos).map_err(owned)?,
            topos,
            trials,
            memory_budget,
        };
        grid.check().map_err(owned)?;
        Ok(grid)
    }

    /// Every grid point must be able to run: growth of what cannot grow,
    /// families the ELP or the algorithm cannot apply to, and missing
    /// files are spec errors now rather than failed rows later.
    fn check(&self) -> std::result::Result<(), (&'static str, String)> {
        // The extension keeps one class's DSCP plan.
        if self.growths.iter().any(Option::is_some) {
            if let Some(m) = self.classes.iter().find(|&&m| m > 1) {
                return Err((
                    "growth",
                    format!("extends single-class plans, and the group has classes = {m}"),
                ));
            }
            if self.algos.contains(&Algo::GreedyTtl) {
                return Err((
                    "growth",
                    "extends DSCP plans (each tag its priority); greedy-ttl's tags are hop counts"
                        .into(),
                ));
            }
        }
        for (text, topo) in &self.topos {
            compatible(text, topo, &self.elps, &self.algos)?;
        }
        for e in &self.elps {
            for f in &e.families {
                if let crate::elp::FamilySpec::File { path }
                | crate::elp::FamilySpec::Lfts { path } = f
                {
                    readable_file(path).map_err(|r| ("elp", format!("'{}': {r}", e.text)))?;
                }
            }
        }
        Ok(())
    }

    /// Settings varied beside the topology, ELP, algorithm and cycle
    /// backend: switch, class, traffic-class, failure and growth.
    fn settings_count(&self) -> usize {
        self.switches.len()
            * self.classes.len()
            * self.limits.len()
            * self.failure_runs.len()
            * self.growths.len()
    }

    /// Scenarios the grid expands to.
    fn count(&self) -> u128 {
        (self.topos.len() as u128)
            * self.elps.len() as u128
            * self.algos.len() as u128
            * self.cycles.len() as u128
            * self.settings_count() as u128
            * self.trials as u128
    }

    /// Why `count` scenarios, after `before` of the groups above, pass
    /// the cap.
    fn over_cap(&self, count: u128, before: usize, cap: usize) -> String {
        let settings = self.settings_count();
        let total = before as u128 + count;
        format!(
            "{} topologies x {} ELPs x {} algorithms x {} cycle backends{} x {} trials = {count} scenarios, {total} in the sweep so far: more than the cap of {cap} (raise the scenario cap to run it)",
            self.topos.len(),
            self.elps.len(),
            self.algos.len(),
            self.cycles.len(),
            if settings > 1 {
                format!(
                    " x {settings} switch, cable, class, traffic-class, failure and growth settings"
                )
            } else {
                String::new()
            },
            self.trials,
        )
    }

    /// Appends the grid's scenarios to `scenarios`, seeded from the
    /// sweep's seed and each scenario's id; `machine` is the budget of
    /// those without one.
    fn expand(
        &self,
        g: &RawGroup,
        (seed, machine): (u64, Option<u64>),
        scenarios: &mut Vec<Scenario>,
    ) {
        // Switch and class settings vary fastest after the cycle backend,
        // so a spec without them keeps its scenario ids.
        type Setting<'a> = (
            &'a crate::capacity::Profile,
            u32,
            TcLimit,
            &'a Option<FailureRun>,
            Option<crate::update::Growth>,
        );
        let settings: Vec<Setting> = self
            .switches
            .iter()
            .flat_map(|p| self.classes.iter().map(move |&m| (p, m)))
            .flat_map(|(p, m)| self.limits.iter().map(move |&l| (p, m, l)))
            .flat_map(|(p, m, l)| self.failure_runs.iter().map(move |f| (p, m, l, f)))
            .flat_map(|(p, m, l, f)| self.growths.iter().map(move |&g| (p, m, l, f, g)))
            .collect();
        for (text, topo) in &self.topos {
            for elp in &self.elps {
                for &algo in &self.algos {
                    for &cycle in &self.cycles {
                        for &(switch, m, max_tcs, fail, growth) in &settings {
                            for trial in 0..self.trials {
                                let id = scenarios.len() as u64;
                                let seed = crate::seed::mix(seed, id);
                                scenarios.push(Scenario {
                                    id,
                                    group: g.name.clone(),
                                    trial,
                                    seed,
                                    topology_text: text.clone(),
                                    topology: if text.contains("seed=") {
                                        topo.clone()
                                    } else {
                                        topo.with_seed(seed)
                                    },
                                    elp: elp.with_seed(seed),
                                    algo,
                                    cycle,
                                    memory_budget: self.memory_budget,
                                    default_budget: machine,
                                    switch: switch.clone(),
                                    classes: m,
                                    max_tcs,
                                    failures: fail.clone(),
                                    growth,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The growth paths of a group (`[None]` without `growth`). Growth by
/// switches is Jellyfish's expansion: a topology with levels would lose
/// them, so it is refused on tiered families; growth by leaves needs the
/// levels, so it is refused on the others.
fn growth_grid(
    g: &RawGroup,
    top: &RawSpec,
    topos: &[(String, TopologySpec)],
) -> std::result::Result<Vec<Option<crate::update::Growth>>, (&'static str, String)> {
    use crate::update::Growth;
    let Some(list) = g.growth.as_ref().or(top.growth.as_ref()) else {
        return Ok(vec![None]);
    };
    let growths: Vec<Growth> = list
        .list()
        .iter()
        .map(|t| Growth::parse(t).map_err(|e| ("growth", e.to_string())))
        .collect::<std::result::Result<_, _>>()?;
    if growths.is_empty() {
        return Err(("growth", "empty list: the grid is empty".into()));
    }
    for gr in &growths {
        let Some(tiers) = gr.change.tiers() else {
            continue;
        };
        let clash = topos.iter().find(|(_, t)| match t {
            TopologySpec::Generated(f) => f.is_tiered() != tiers,
            _ => false,
        });
        if let Some((text, _)) = clash {
            return Err((
                "growth",
                if tiers {
                    format!(
                        "'{}' adds leaves to a tiered fabric (fat-tree, leaf-spine), and '{text}' has no tiers: use grow:switches or drain",
                        gr.canonical()
                    )
                } else {
                    format!(
                        "'{}' adds switches by taking over random links (Jellyfish's expansion), which would break the levels of '{text}': use grow:leaves or drain",
                        gr.canonical()
                    )
                },
            ));
        }
    }
    Ok(growths.into_iter().map(Some).collect())
}

/// The failure what-ifs of a group: each failure spec under each routing
/// model (`[None]` without `failures`). File specs are checked for
/// readability now.
fn failure_grid(
    g: &RawGroup,
    top: &RawSpec,
) -> std::result::Result<Vec<Option<FailureRun>>, (&'static str, String)> {
    use crate::failures::{FailureSpec, Options, Routing};
    let routing = g.routing.as_ref().or(top.routing.as_ref());
    let replan = g.replan.or(top.replan);
    let Some(specs) = g.failures.as_ref().or(top.failures.as_ref()) else {
        // Top-level defaults apply to the groups that have failures; a
        // group's own key without them is a mistake.
        if g.routing.is_some() {
            return Err(("routing", "given without failures".into()));
        }
        if g.replan.is_some() {
            return Err(("replan", "given without failures".into()));
        }
        return Ok(vec![None]);
    };
    let specs: Vec<FailureSpec> = specs
        .list()
        .iter()
        .map(|t| FailureSpec::parse(t).map_err(|e| ("failures", e.to_string())))
        .collect::<std::result::Result<_, _>>()?;
    for f in &specs {
        if let FailureSpec::File { path } = f {
            readable_file(path).map_err(|r| ("failures", format!("'{}': {r}", f.text())))?;
        }
    }
    let routings: Vec<Routing> = routing
        .map_or(vec!["converged".to_string()], OneOrMany::list)
        .iter()
        .map(|r| r.parse::<Routing>().map_err(|e| ("routing", e.to_string())))
        .collect::<std::result::Result<_, _>>()?;
    if specs.is_empty() {
        return Err(("failures", "empty list: the grid is empty".into()));
    }
    if routings.is_empty() {
        return Err(("routing", "empty list: the grid is empty".into()));
    }
    let replan = replan.unwrap_or(true);
    Ok(specs
        .iter()
        .flat_map(|f| {
            routings.iter().map(move |&r| {
                Some(FailureRun {
                    spec: f.clone(),
                    routing: r,
                    options: Options {
                        replan,
                        aware: replan,
                    },
                })
            })
        })
        .collect())
}

/// The switch profiles of a group, crossed with its cable lengths: group
/// keys override the spec's top-level ones (the capacity keys are fields of
/// both structs rather than one flattened struct, since serde cannot refuse
/// unknown keys beside a flattened one). Every profile is resolved (a
/// `file:` profile read and validated) now, before anything runs.
fn switch_grid(
    g: &RawGroup,
    top: &RawSpec,
) -> std::result::Result<Vec<crate::capacity::Profile>, (&'static str, String)> {
    use crate::capacity::{HeadroomModel, Profile};
    let names = g.switch.as_ref().or(top.switch.as_ref()).map_or(
        vec![crate::capacity::profile::DEFAULT_PROFILE.to_string()],
        OneOrMany::list,
    );
    let number = |key: &'static str, v: &toml::Value| match v {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) => Ok(*f),
        other => Err((key, format!("{other} is not a number"))),
    };
    let cables: Vec<Option<f64>> = match g.cable_m.as_ref().or(top.cable_m.as_ref()) {
        None => vec![None],
        Some(list) => list
            .list()
            .iter()
            .map(|v| number("cable_m", v).map(Some))
            .collect::<std::result::Result<_, _>>()?,
    };
    let speed = g
        .speed_gbps
        .as_ref()
        .or(top.speed_gbps.as_ref())
        .map(|v| number("speed_gbps", v))
        .transpose()?;
    let headroom = g
        .headroom
        .as_ref()
        .or(top.headroom.as_ref())
        .map(|h| {
            h.parse::<HeadroomModel>()
                .map_err(|e| ("headroom", e.to_string()))
        })
        .transpose()?;
    if names.is_empty() {
        return Err(("switch", "empty list: the grid is empty".into()));
    }
    if cables.is_empty() {
        return Err(("cable_m", "empty list: the grid is empty".into()));
    }
    let mut out = Vec::new();
    for name in &names {
        let p = Profile::resolve(name).map_err(|e| ("switch", e.to_string()))?;
        for &c in &cables {
            out.push(p.with_links(c, speed, headroom).map_err(|e| {
                let key = match &e {
                    Error::Profile { field, .. } if field.ends_with("speed_gbps") => "speed_gbps",
                    Error::Profile { field, .. } if field == "headroom" => "headroom",
                    _ => "cable_m",
                };
                (key, e.to_string())
            })?);
        }
    }
    Ok(out)
}

/// Topology spec strings of a group: literal specs, or a family crossed with
/// the cartesian product of its `params` (keys in sorted order).
fn expand_topologies(g: &RawGroup) -> std::result::Result<Vec<String>, (String, String)> {
    let list = g.topology.list();
    if g.params.is_empty() {
        return Ok(list);
    }
    if list.len() != 1 || list[0].contains(':') {
        return Err((
            "params".into(),
            "params need `topology` to be one family name (e.g. topology = \"jellyfish\")".into(),
        ));
    }
    let mut specs = vec![String::new()];
    for (key, values) in &g.params {
        let values = values.list();
        if values.is_empty() {
            return Err((
                format!("params.{key}"),
                "empty list: the grid is empty".into(),
            ));
        }
        let mut next = Vec::with_capacity(specs.len() * values.len());
        for s in &specs {
            for v in &values {
                let v = match v {
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::String(s) => s.clone(),
                    other => {
                        return Err((
                            format!("params.{key}"),
                            format!("{other} is not an integer or string"),
                        ));
                    }
                };
                let sep = if s.is_empty() { "" } else { "," };
                next.push(format!("{s}{sep}{key}={v}"));
            }
        }
        specs = next;
    }
    Ok(specs
        .into_iter()
        .map(|p| format!("{}:{p}", list[0]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> Result<Sweep> {
        Sweep::parse(t, "t.toml", 100)
    }

    /// One network spelled two ways is one grid point, labelled canonically
    /// (the seed stays out unless the grid gave it).
    #[test]
    fn grid_labels_are_canonical() {
        let s = parse(
            r#"
name = "x"
[[group]]
name = "a"
topology = ["bcube:k=1,n=4", "bcube:n=4,k=1", "leafspine:spines=2,leaves=4", "jellyfish:r=3,n=20,ports=6", "jellyfish:n=20,ports=6,r=3,seed=7"]
elp = "shortest"
"#,
        )
        .unwrap();
        let labels: Vec<&str> = s
            .scenarios
            .iter()
            .map(|x| x.topology_text.as_str())
            .collect();
        assert_eq!(
            labels,
            [
                "bcube:n=4,k=1",
                "bcube:n=4,k=1",
                "leafspine:leaves=4,spines=2,hosts=1,links=1",
                "jellyfish:n=20,ports=6,r=3",
                "jellyfish:n=20,ports=6,r=3,seed=7"
            ]
        );
        // The explicit seed is kept; the other Jellyfish draws the trial's.
        assert_eq!(s.scenarios[4].topology.canonical(), labels[4]);
    }

    #[test]
    fn switches_and_cables_expand_the_grid() {
        let s = parse(
            "name = \"x\"\nswitch = [\"spectrum2\", \"tomahawk\"]\ncable_m = [10, 300.5]\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\n[[group]]\nname = \"b\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\nswitch = \"drafts-40g\"\nspeed_gbps = 25\n",
        )
        .unwrap();
        let got: Vec<(String, f64, f64)> = s
            .scenarios
            .iter()
            .map(|c| {
                (
                    c.switch.name.clone(),
                    c.switch.cable_m,
                    c.switch.port_speed_gbps,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("spectrum2".into(), 10.0, 100.0),
                ("spectrum2".into(), 300.5, 100.0),
                ("tomahawk".into(), 10.0, 100.0),
                ("tomahawk".into(), 300.5, 100.0),
                ("drafts-40g".into(), 10.0, 25.0),
                ("drafts-40g".into(), 300.5, 25.0),
            ]
        );
        // Without switch keys every scenario gets the default profile.
        let d = parse("name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\n").unwrap();
        assert_eq!(d.scenarios[0].switch, crate::capacity::Profile::default());
    }

    #[test]
    fn expands_the_grid() {
        let s = parse(
            r#"name = "x"
seed = 7
[[group]]
name = "jf"
topology = "jellyfish"
params = { n = [20, 30], ports = 6, r = [3, 4] }
elp = "shortest"
algo = ["greedy", "brute"]
trials = 2
"#,
        )
        .unwrap();
        assert_eq!(s.scenarios.len(), 2 * 2 * 2 * 2);
        assert_eq!(s.scenarios[0].topology_text, "jellyfish:n=20,ports=6,r=3");
        // Trials get different seeds, and seeds depend only on (seed, id).
        assert_ne!(s.scenarios[0].topology, s.scenarios[1].topology);
        let again = parse(&s.text).unwrap();
        assert_eq!(again.scenarios[5].seed, s.scenarios[5].seed);
    }

    #[test]
    fn errors_name_file_group_and_key() {
        let g = "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\n";
        let switch_cases = [
            (
                format!("{g}switch = \"spectrum9\"\n"),
                "group 1 ('a'), key switch: switch profile built-in: [spectrum9]",
            ),
            (
                format!("{g}cable_m = [100, \"far\"]\n"),
                "key cable_m: \"far\" is not a number",
            ),
            (format!("{g}cable_m = -5\n"), "key cable_m"),
            (format!("{g}headroom = \"exact\"\n"), "key headroom"),
            (
                format!("{g}switch = \"tomahawk\"\nheadroom = \"sonic\"\n"),
                "key headroom",
            ),
            (
                format!("{g}switch = \"file:/no/such.toml\"\n"),
                "key switch: /no/such.toml",
            ),
            (format!("{g}switch = []\n"), "key switch: empty list"),
            // Type errors name the key and the value, as the line has them.
            (
                format!("trials = \"3\"\n{g}"),
                "line 1: trials = \"3\": invalid type: string \"3\", expected u64",
            ),
            (
                format!("{g}algo = 5\n"),
                "line 6: algo = 5: expected a string or a list of strings",
            ),
            (
                format!("{g}routing = [\"local\", 2]\n"),
                "routing = [\"local\", 2]: expected a string or a list of strings",
            ),
        ];
        for (text, want) in &switch_cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        let cases = [
            ("name = \"x\"\n", "grid is empty"),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=3\"\nelp = \"shortest\"\n",
                "group 1 ('a'), key topology",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"bogus\"\n",
                "key elp",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\nalgo = \"magic\"\n",
                "key algo",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\ncycle = \"dfs\"\n",
                "key cycle",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = []\n",
                "key elp",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\ncolour = 1\n",
                "unknown field",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree\"\nparams = { k = [] }\nelp = \"shortest\"\n",
                "params.k",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = [\"hyperx:l=2,s=3\", \"fattree:k=4\"]\nelp = \"dor\"\n",
                "group 1 ('a'), key elp: 'dor' on 'fattree:k=4': dor needs a HyperX or BCube topology",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"jellyfish:n=10,ports=5,r=4\"\nelp = \"shortest\"\nalgo = [\"greedy\", \"clos\"]\n",
                "key algo: 'clos' on 'jellyfish:n=10,ports=5,r=4': the Clos scheme needs a tiered topology",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"file:/no/such/net.json\"\nelp = \"shortest\"\n",
                "key topology: 'file:/no/such/net.json': cannot read /no/such/net.json",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest+file:/no/such/p.txt\"\n",
                "key elp: 'shortest+file:/no/such/p.txt': cannot read /no/such/p.txt",
            ),
            (
                "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\ntrials = 500\n",
                "500 trials = 500 scenarios, 500 in the sweep so far: more than the cap of 100",
            ),
        ];
        for (text, want) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with("t.toml: "), "{e}");
            assert!(e.contains(want), "want '{want}' in: {e}");
        }
    }
}
