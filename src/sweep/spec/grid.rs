//! A group's grid: every axis parsed and checked, each error naming the
//! group and key, then expanded into scenarios.

use super::{
    FailureRun, OneOrMany, RawGroup, RawSpec, Scenario, TcLimit, compatible, readable_file,
};
use crate::cycle::CycleBackend;
use crate::elp::ElpSpec;
use crate::error::{Error, SpecFault};
use crate::tagging::Algo;
use tagger_generators::TopologySpec;

/// One group's axes, parsed and checked: the grid its scenarios span.
pub(super) struct Grid {
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
type Fault = (String, SpecFault);

/// A fault whose key is a fixed name.
fn owned((key, fault): (&'static str, SpecFault)) -> Fault {
    (key.to_string(), fault)
}

/// Every element of `list` parsed, or the first error at `key`, kept
/// typed.
fn parse_all<T, E: Into<Error>>(
    list: &[String],
    key: &'static str,
    parse: impl Fn(&str) -> std::result::Result<T, E>,
) -> std::result::Result<Vec<T>, Fault> {
    list.iter()
        .map(|x| parse(x).map_err(|e| (key.to_string(), SpecFault::from(e.into()))))
        .collect()
}

/// An integer list key (`classes`, `max_tcs`) parsed element by element,
/// `default` when neither the group nor the spec gives it.
fn values<T>(
    list: Option<&OneOrMany<toml::Value>>,
    key: &'static str,
    default: T,
    parse: impl Fn(&toml::Value) -> std::result::Result<T, SpecFault>,
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
    pub(super) fn parse(
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
                    other => Err(format!("{other} must be an integer from 1 to 64").into()),
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
                    other => Err(SpecFault::from(format!(
                        "{other}: expected a number of traffic classes from 1 to 15, \"none\" or \"profile\""
                    ))),
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
    fn check(&self) -> std::result::Result<(), (&'static str, SpecFault)> {
        // The extension keeps one class's DSCP plan.
        if self.growths.iter().any(Option::is_some) {
            if let Some(m) = self.classes.iter().find(|&&m| m > 1) {
                return Err((
                    "growth",
                    format!("extends single-class plans, and the group has classes = {m}").into(),
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
                    readable_file(&e.text, path).map_err(|r| ("elp", r))?;
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
    pub(super) fn count(&self) -> u128 {
        (self.topos.len() as u128)
            * self.elps.len() as u128
            * self.algos.len() as u128
            * self.cycles.len() as u128
            * self.settings_count() as u128
            * self.trials as u128
    }

    /// Why `count` scenarios, after `before` of the groups above, pass
    /// the cap.
    pub(super) fn over_cap(&self, count: u128, before: usize, cap: usize) -> String {
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
    pub(super) fn expand(
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
            &'a Option<crate::update::Growth>,
        );
        let settings: Vec<Setting> = self
            .switches
            .iter()
            .flat_map(|p| self.classes.iter().map(move |&m| (p, m)))
            .flat_map(|(p, m)| self.limits.iter().map(move |&l| (p, m, l)))
            .flat_map(|(p, m, l)| self.failure_runs.iter().map(move |f| (p, m, l, f)))
            .flat_map(|(p, m, l, f)| self.growths.iter().map(move |g| (p, m, l, f, g)))
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
                                    growth: growth.clone(),
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
) -> std::result::Result<Vec<Option<crate::update::Growth>>, (&'static str, SpecFault)> {
    use crate::update::Growth;
    let Some(list) = g.growth.as_ref().or(top.growth.as_ref()) else {
        return Ok(vec![None]);
    };
    let growths: Vec<Growth> = list
        .list()
        .iter()
        .map(|t| Growth::parse(t).map_err(|e| ("growth", e.into())))
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
                    .into()
                } else {
                    format!(
                        "'{}' adds switches by taking over random links (Jellyfish's expansion), which would break the levels of '{text}': use grow:leaves or drain",
                        gr.canonical()
                    )
                    .into()
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
) -> std::result::Result<Vec<Option<FailureRun>>, (&'static str, SpecFault)> {
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
        .map(|t| FailureSpec::parse(t).map_err(|e| ("failures", e.into())))
        .collect::<std::result::Result<_, _>>()?;
    for f in &specs {
        if let FailureSpec::File { path } = f {
            readable_file(&f.text(), path).map_err(|r| ("failures", r))?;
        }
    }
    let routings: Vec<Routing> = routing
        .map_or(vec!["converged".to_string()], OneOrMany::list)
        .iter()
        .map(|r| r.parse::<Routing>().map_err(|e| ("routing", e.into())))
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
/// keys override the spec's top-level ones (both tables declare them
/// through `raw_table!`). Every profile is resolved (a
/// `file:` profile read and validated) now, before anything runs.
fn switch_grid(
    g: &RawGroup,
    top: &RawSpec,
) -> std::result::Result<Vec<crate::capacity::Profile>, (&'static str, SpecFault)> {
    use crate::capacity::{HeadroomModel, Profile};
    let names = g.switch.as_ref().or(top.switch.as_ref()).map_or(
        vec![crate::capacity::profile::DEFAULT_PROFILE.to_string()],
        OneOrMany::list,
    );
    let number = |key: &'static str, v: &toml::Value| match v {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) => Ok(*f),
        other => Err((key, SpecFault::from(format!("{other} is not a number")))),
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
                .map_err(|e| ("headroom", e.into()))
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
        let p = Profile::resolve(name).map_err(|e| ("switch", e.into()))?;
        for &c in &cables {
            out.push(p.with_links(c, speed, headroom).map_err(|e| {
                let key = match &e {
                    Error::Profile { field, .. } if field.ends_with("speed_gbps") => "speed_gbps",
                    Error::Profile { field, .. } if field == "headroom" => "headroom",
                    _ => "cable_m",
                };
                (key, e.into())
            })?);
        }
    }
    Ok(out)
}

/// Topology spec strings of a group: literal specs, or a family crossed with
/// the cartesian product of its `params` (keys in sorted order).
fn expand_topologies(g: &RawGroup) -> std::result::Result<Vec<String>, Fault> {
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
                            format!("{other} is not an integer or string").into(),
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
