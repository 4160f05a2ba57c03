//! The SONiC `config_db` writer.

use super::base::{Base, KeepDscp, SwitchBase};
use super::merge::{Plan, switch_config};
use super::stock::StockPort;
use super::{EGRESS_POOL, FORMAT, INGRESS_POOL, Mapping, Options, port_names};
use crate::capacity::port_headroom;
use crate::error::{Error, ExportKind, Result};
use crate::rules::RuleSet;
use crate::tagging::traffic::{Classification, NodeClasses, classify};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::rc::Rc;
use tagger_generators::NodeId as Node;
use tagger_generators::{NodeId, Topology};

/// One switch's export.
#[derive(Clone, Debug)]
pub struct Switch {
    /// The switch.
    pub node: NodeId,
    /// Its `config_db` object (or neutral table): for SONiC, the whole
    /// configuration the switch holds once the plan is installed.
    pub config: Value,
    /// Its base (SONiC exports): the configuration before the install.
    pub base: Option<Value>,
    /// The RFC 6902 JSON Patch from `base` to `config` (SONiC exports), as
    /// `config apply-patch` takes it.
    pub patch: Option<Value>,
    /// Traffic classes its lossless traffic uses (besides the lossy one).
    pub tcs: usize,
    /// What the switch reserves and holds (SONiC exports; `None` for the
    /// neutral table, which sizes no buffers).
    pub fit: Option<SwitchFit>,
}

/// How one exported switch fits its profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchFit {
    /// The most lossless priorities (PFC priorities) at one of its ports.
    pub lossless_queues: u32,
    /// Headroom its lossless priority groups reserve, in bytes (with a
    /// shared headroom pool: every xon plus the pool's share of the xoffs).
    pub headroom_bytes: u64,
    /// Whether both fit: queues within the profile's lossless queues,
    /// headroom within its lossless buffer.
    pub fits: bool,
}

/// A plan's export.
#[derive(Clone, Debug)]
pub struct Export {
    /// One per switch with lossless traffic, in node order.
    pub switches: Vec<Switch>,
    /// `summary.json`: the rule set's header, the mapping and buffer settings, per-switch counts.
    pub summary: Value,
}

impl Export {
    /// Switches that do not fit their profile (SONiC exports).
    pub fn misfits(&self) -> Vec<(NodeId, SwitchFit)> {
        misfits(&self.switches)
    }
}

/// Those of `switches` that do not fit their profile.
fn misfits<S: std::borrow::Borrow<Switch>>(switches: &[S]) -> Vec<(NodeId, SwitchFit)> {
    switches
        .iter()
        .map(|s| s.borrow())
        .filter_map(|s| s.fit.filter(|f| !f.fits).map(|f| (s.node, f)))
        .collect()
}

/// An export whose switches may be shared with the exports before it
/// ([`export_cached`]).
#[derive(Clone, Debug)]
pub(crate) struct SharedExport {
    /// As [`Export::switches`].
    pub switches: Vec<Rc<Switch>>,
    /// As [`Export::summary`].
    pub summary: Value,
}

impl From<Export> for SharedExport {
    fn from(ex: Export) -> Self {
        SharedExport {
            switches: ex.switches.into_iter().map(Rc::new).collect(),
            summary: ex.summary,
        }
    }
}

impl SharedExport {
    /// The export of `nodes` only (its summary still lists every switch).
    pub fn only(self, nodes: &[NodeId]) -> Export {
        Export {
            switches: self
                .switches
                .iter()
                .filter(|s| nodes.contains(&s.node))
                .map(|s| Switch::clone(s))
                .collect(),
            summary: self.summary,
        }
    }
}

/// What [`export_cached`] keeps from one export of a topology to the
/// next: each switch's base, read once for its ports, and its last
/// configuration with what it was made of. An update's steps export
/// hundreds of states of one fabric, most switches the same from one to
/// the next (building and dropping the others was 60% of a
/// switch-by-switch growth's step export).
#[derive(Debug, Default)]
pub(crate) struct SwitchCache {
    bases: BTreeMap<Node, (Vec<String>, SwitchBase)>,
    built: BTreeMap<Node, Built>,
}

impl SwitchCache {
    /// Switch `v`'s base as last read, if it was.
    pub fn base(&self, v: NodeId) -> Option<&Value> {
        self.bases.get(&v).map(|(_, b)| &b.db)
    }
}

/// A switch's configuration and every input to it that changes between
/// states (the topology and options do not: a cache serves one walk).
#[derive(Debug)]
struct Built {
    nc: NodeClasses,
    mapping: Mapping,
    tags: BTreeSet<u32>,
    tcs: Vec<u32>,
    switch: Rc<Switch>,
}

/// [`export_classified`] for exports of one topology with one `opts`,
/// state after state: a switch whose classes, mapping and tags are those
/// of its configuration in `cache` keeps that configuration (shared), and
/// only the others are built. The switches carry no base
/// ([`SwitchCache::base`] has it) and no patch.
///
/// # Errors
/// As [`export_classified`].
pub(crate) fn export_cached(
    topo: &Topology,
    rules: &RuleSet,
    opts: &Options,
    classes: &Classification,
    cache: &mut SwitchCache,
) -> Result<SharedExport> {
    check_mapping(rules, &opts.mapping, &opts.profile)?;
    refuse_over(classes, opts)?;
    let SwitchCache { bases, built } = cache;
    let names: Vec<Vec<String>> = classes
        .nodes
        .iter()
        .map(|nc| switch_ports(topo, nc))
        .collect();
    let (stale, stale_names): (Vec<NodeClasses>, Vec<Vec<String>>) = classes
        .nodes
        .iter()
        .zip(names)
        .filter(|(nc, n)| bases.get(&nc.node).is_none_or(|(m, _)| m != n))
        .map(|(nc, n)| (nc.clone(), n))
        .unzip();
    let read = read_bases(topo, opts, &stale)?;
    for ((nc, n), base) in stale.iter().zip(stale_names).zip(read) {
        built.remove(&nc.node);
        bases.insert(nc.node, (n, base));
    }
    let nodes: BTreeSet<Node> = classes.nodes.iter().map(|nc| nc.node).collect();
    let mapping = settle(
        rules,
        opts,
        bases
            .iter_mut()
            .filter(|(v, _)| nodes.contains(v))
            .map(|(_, (_, b))| b)
            .collect(),
    )?;
    let ordered: Vec<&SwitchBase> = classes.nodes.iter().map(|nc| &bases[&nc.node].1).collect();
    refuse_over_base(classes, &ordered, opts)?;
    let models: BTreeSet<&str> = ordered.iter().map(|b| b.model.name()).collect();
    let switches: Vec<Rc<Switch>> = classes
        .nodes
        .iter()
        .zip(&ordered)
        .map(|(nc, base)| {
            let tcs = class_tcs(opts, base, nc.classes.len());
            if let Some(b) = built.get(&nc.node)
                && b.nc == *nc
                && b.mapping == mapping
                && b.tags == base.tags
                && b.tcs == tcs
            {
                return Ok(b.switch.clone());
            }
            let mut sw = switch_config(&Plan {
                topo,
                nc,
                opts,
                mapping: &mapping,
                base,
                tcs: tcs.clone(),
            })?;
            // The base is the cache's ([`SwitchCache::base`]); the patch
            // is from whatever the switch holds before, its caller's.
            (sw.base, sw.patch) = (None, None);
            let switch = Rc::new(sw);
            let b = Built {
                nc: nc.clone(),
                mapping: mapping.clone(),
                tags: base.tags.clone(),
                tcs,
                switch: switch.clone(),
            };
            built.insert(nc.node, b);
            Ok(switch)
        })
        .collect::<Result<_>>()?;
    let summary = summary(rules, opts, &mapping, &switches, &models);
    refuse_misfits(&switches, opts)?;
    Ok(SharedExport { switches, summary })
}

/// Exports `rules` (verified for `topo`) as one `config_db` object per
/// node with lossless traffic: per-port QoS maps, PFC and buffers, which
/// is all a stock SONiC switch offers for rewriting a tag hop by hop (its
/// ACL tables have no action that sets DSCP or queue).
///
/// Each switch's traffic classes are the plan's ([`classify`]), each in a
/// TC its base's kept lossy classes leave free; written into the switch's
/// base (`opts.base`), with the patch from it. A class's
/// function covers every packet classified into it, the ELP's and any
/// other, and the classes keep it deadlock-free under any routing.
///
/// ```
/// use tagger::sonic::{Options, export, read, write};
/// let t = tagger::TopologySpec::parse("fattree:k=4")?.build()?;
/// let elp = tagger::elp::ElpSet::build(&t, &tagger::elp::ElpSpec::parse("kbounce:1")?)?;
/// let tagging = tagger::tagging::tag(&t, &elp, "clos".parse()?, Default::default())?;
/// let rules = tagger::rules::RuleSet::from_tagging(&t, &tagging);
/// let ex = export(&t, &rules, &Options::default())?;
/// assert!(ex.switches.iter().all(|s| s.tcs <= 7)); // a stock switch's
/// let dir = std::env::temp_dir().join("tagger-doc-export");
/// write(&dir, &ex)?;
/// // The maps decode to every entry of the plan, and more: what the
/// // switches do with every other packet.
/// let back = read(&t, &dir)?;
/// assert!(rules.entries.iter().all(|e| back.rules.entries.binary_search(e).is_ok()));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), tagger::Error>(())
/// ```
///
/// # Errors
/// [`Error::Export`] when a priority has no queue or a tag no DSCP value
/// in `opts.mapping`, when a switch needs more traffic classes than the
/// profile gives (naming the switches and what each needs), or, with
/// `opts.require_fit`, when a switch's lossless queues or headroom do not
/// fit the profile.
pub fn export(topo: &Topology, rules: &RuleSet, opts: &Options) -> Result<Export> {
    export_classified(topo, rules, opts, &classify(topo, &rules.keys(topo)?)?)
}

/// [`export`] with the plan's traffic classes given (an update's states
/// are classified together, [`crate::tagging::traffic::classify_all`]).
pub(crate) fn export_classified(
    topo: &Topology,
    rules: &RuleSet,
    opts: &Options,
    classes: &Classification,
) -> Result<Export> {
    check_mapping(rules, &opts.mapping, &opts.profile)?;
    refuse_over(classes, opts)?;
    let (bases, mapping) = settle_bases(topo, rules, opts, classes)?;
    refuse_over_base(classes, &bases.iter().collect::<Vec<_>>(), opts)?;
    let models: BTreeSet<&str> = bases.iter().map(|b| b.model.name()).collect();
    // Each base goes once its switch is written (an export of thousands
    // of switches holds each configuration, base and patch once).
    let switches: Vec<Switch> = classes
        .nodes
        .iter()
        .zip(bases)
        .map(|(nc, base)| {
            switch_config(&Plan {
                topo,
                nc,
                opts,
                mapping: &mapping,
                base: &base,
                tcs: class_tcs(opts, &base, nc.classes.len()),
            })
        })
        .collect::<Result<_>>()?;
    let summary = summary(rules, opts, &mapping, &switches, &models);
    let ex = Export { summary, switches };
    refuse_misfits(&ex.switches, opts)?;
    Ok(ex)
}

/// With `opts.require_fit`, [`Error::Export`] naming the switches that do
/// not fit the profile.
fn refuse_misfits<S: std::borrow::Borrow<Switch>>(switches: &[S], opts: &Options) -> Result<()> {
    if opts.require_fit {
        let mis = misfits(switches);
        if let Some(&(v, f)) = mis.first() {
            let p = &opts.profile;
            return Err(Error::Export {
                kind: ExportKind::Plan,
                reason: format!(
                    "{} switch(es) do not fit {} (switch {v}: {} lossless queues at a port of {} allowed, headroom {} of a {} lossless buffer): nothing exported; --require-fit off exports them anyway, marked",
                    mis.len(),
                    p.name,
                    f.lossless_queues,
                    p.lossless_queues,
                    crate::budget::human(f.headroom_bytes),
                    crate::budget::human(p.lossless_buffer_bytes),
                ),
            });
        }
    }
    Ok(())
}

/// The traffic classes of a switch's `n` classes: the profile's first `n`
/// that its base's kept lossy classes leave free.
fn class_tcs(opts: &Options, base: &SwitchBase, n: usize) -> Vec<u32> {
    (0..opts.profile.traffic_classes)
        .filter(|t| !base.lossy.contains(t))
        .take(n)
        .collect()
}

/// Which DSCP values keep their base class: as given, else all with the
/// switches' own bases and none with the stock one.
fn keep_of(opts: &Options) -> KeepDscp {
    opts.keep.clone().unwrap_or(match opts.base {
        Base::Stock => KeepDscp::None,
        Base::Own { .. } => KeepDscp::All,
    })
}

/// A switch's port names: link ports, then host ports (an endpoint
/// without declared hosts that still sends gets one, `Host`).
fn switch_ports(topo: &Topology, nc: &NodeClasses) -> Vec<String> {
    let v = nc.node;
    let links = topo.out_channels(v).len();
    let declared = topo.node(v).hosts as usize;
    let hosts = if nc.ingress.iter().any(|x| x.0.is_none()) {
        declared.max(1)
    } else {
        declared
    };
    port_names(topo, v, links + hosts)
}

/// Port `i` of `v`'s speed (Gb/s) and cable (m).
pub(super) fn port_link(
    topo: &Topology,
    v: Node,
    i: usize,
    p: &crate::capacity::Profile,
) -> (f64, f64) {
    let outs = topo.out_channels(v);
    match outs.get(i) {
        Some(&c) => p.link(topo, c >> 1),
        None => (p.host_speed_gbps, p.host_cable_m),
    }
}

/// Each exported switch's base, read, and the mapping taken: tags get
/// the DSCP values of the mapping's list every base lets be tags
/// ([`SwitchBase::takes`]), lossless priorities the queues of its list no
/// kept lossy class uses at any switch.
fn settle_bases(
    topo: &Topology,
    rules: &RuleSet,
    opts: &Options,
    classes: &Classification,
) -> Result<(Vec<SwitchBase>, Mapping)> {
    let mut bases = read_bases(topo, opts, &classes.nodes)?;
    let mapping = settle(rules, opts, bases.iter_mut().collect())?;
    Ok((bases, mapping))
}

/// Settles `bases` ([`SwitchBase::settle`]) and takes the mapping, as
/// [`settle_bases`] says.
fn settle(rules: &RuleSet, opts: &Options, mut bases: Vec<&mut SwitchBase>) -> Result<Mapping> {
    let p = &opts.profile;
    let keep = keep_of(opts);
    let dscp: Vec<u32> = opts
        .mapping
        .dscp
        .iter()
        .copied()
        .filter(|&d| bases.iter().all(|b| b.takes(d)))
        .collect();
    let tags = max_tag(rules) as usize;
    let taken: BTreeSet<u32> = dscp.iter().take(tags).copied().collect();
    for b in &mut bases {
        b.settle(&taken);
    }
    let busy: BTreeSet<u32> = bases.iter().flat_map(|b| b.lossy_queues()).collect();
    let queues: Vec<u32> = opts
        .mapping
        .queues
        .iter()
        .copied()
        .filter(|q| !busy.contains(q))
        .collect();
    let bare = |list: &str, have: usize| Error::Export {
        kind: ExportKind::Base,
        reason: format!(
            "the bases leave too few {list} for the plan ({have} of the mapping's free of the lossy classes they keep; kept: --keep-dscp {}): keep fewer DSCP values, or give a longer --dscp / --queues list",
            keep.describe()
        ),
    };
    if dscp.is_empty() {
        return Err(bare("DSCP values", 0));
    }
    if queues.is_empty() {
        return Err(bare("queues", 0));
    }
    let mapping = Mapping { dscp, queues };
    check_mapping(rules, &mapping, p).map_err(|e| match e {
        Error::Mapping { cause, .. } => Error::Export {
            kind: ExportKind::Base,
            reason: format!(
                "{cause}, after passing over the values the bases keep for lossy classes (queues busy: {busy:?}; kept DSCP values: {}): keep fewer (--keep-dscp) or give more (--dscp, --queues)",
                keep.describe()
            ),
        },
        e => e,
    })?;
    Ok(mapping)
}

/// Configurations of switches with no lossless traffic (`nodes`): each
/// one's base with nothing lossless (no PFC, no lossless buffer), every
/// DSCP value in a lossy class and a tag's (the first `tags` of
/// `mapping`) untagged as it leaves by a link. What a switch an update
/// step leaves without lossless entries holds.
///
/// # Errors
/// As [`export`]'s bases.
pub(crate) fn idle_switches(
    topo: &Topology,
    nodes: &[Node],
    mapping: &Mapping,
    tags: usize,
    opts: &Options,
) -> Result<Vec<Switch>> {
    let ncs: Vec<NodeClasses> = nodes
        .iter()
        .map(|&v| NodeClasses {
            node: v,
            classes: Vec::new(),
            ingress: Vec::new(),
        })
        .collect();
    let mut bases = read_bases(topo, opts, &ncs)?;
    let taken: BTreeSet<u32> = mapping.dscp.iter().take(tags).copied().collect();
    ncs.iter()
        .zip(&mut bases)
        .map(|(nc, base)| {
            base.settle(&taken);
            switch_config(&Plan {
                topo,
                nc,
                opts,
                mapping,
                base,
                tcs: Vec::new(),
            })
        })
        .collect()
}

/// Each switch's base (`ncs`' nodes), read for its ports, each at the
/// speed the plan sizes it for.
fn read_bases(topo: &Topology, opts: &Options, ncs: &[NodeClasses]) -> Result<Vec<SwitchBase>> {
    let p = &opts.profile;
    let nodes: Vec<Node> = ncs.iter().map(|n| n.node).collect();
    let names: BTreeMap<Node, Vec<String>> = ncs
        .iter()
        .map(|nc| (nc.node, switch_ports(topo, nc)))
        .collect();
    let dbs = opts.base.for_nodes(topo, &nodes, |v| {
        let ports: Vec<StockPort> = names[&v]
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let (speed, cable_m) = port_link(topo, v, i, p);
                let h = port_headroom(p, speed, cable_m.ceil());
                let size = if p.shared_headroom_pool {
                    h.xon
                } else {
                    h.size()
                };
                let outs = topo.out_channels(v);
                let description = match outs.get(i) {
                    Some(&c) => {
                        let l = c >> 1;
                        let [a, b] = topo.links()[l as usize];
                        format!("link {l} to node {}", if a == v { b } else { a })
                    }
                    None => "host port".to_string(),
                };
                StockPort {
                    description,
                    name: name.clone(),
                    speed_mbps: (speed * 1000.0).round() as u64,
                    cable: cable_text(cable_m),
                    lossless: json!({
                        "pool": super::INGRESS_POOL,
                        "xoff": h.xoff.to_string(),
                        "xon": h.xon.to_string(),
                        "size": size.to_string(),
                        "dynamic_th": "0",
                    }),
                }
            })
            .collect();
        super::stock::stock(topo, v, p, &ports)
    })?;
    let keep = keep_of(opts);
    let mut bases = Vec::with_capacity(nodes.len());
    for (v, db) in dbs {
        let label = format!("switch {v}");
        let b = SwitchBase::new(db, label.clone(), &names[&v], keep.clone())?;
        for (i, port) in b.ports.iter().enumerate() {
            let want = (port_link(topo, v, i, p).0 * 1000.0).round() as u64;
            if port.speed.parse::<u64>().ok() != Some(want) {
                return Err(Error::Export {
                    kind: ExportKind::Base,
                    reason: format!(
                        "{label}: PORT|{} runs at speed {}, the plan sizes its buffers for {want} (Mb/s): give the topology the switch's speeds",
                        super::dir::excerpt(&port.name),
                        super::dir::excerpt(&port.speed)
                    ),
                });
            }
        }
        bases.push(b);
    }
    Ok(bases)
}

/// Refuses a plan needing more traffic classes at a switch than its base
/// leaves free of the lossy classes it keeps.
fn refuse_over_base(classes: &Classification, bases: &[&SwitchBase], opts: &Options) -> Result<()> {
    let n = opts.profile.traffic_classes;
    let over: Vec<(Node, usize, usize)> = classes
        .nodes
        .iter()
        .zip(bases)
        .map(|(nc, b)| {
            (
                nc.node,
                nc.classes.len(),
                (n as usize).saturating_sub(b.lossy.len()),
            )
        })
        .filter(|(_, need, free)| need > free)
        .collect();
    let Some(&(v, need, free)) = over.iter().max_by_key(|x| (x.1, std::cmp::Reverse(x.0))) else {
        return Ok(());
    };
    let b = &bases[classes
        .nodes
        .iter()
        .position(|nc| nc.node == v)
        .expect("listed")];
    let least = over.iter().map(|x| x.2).min().unwrap_or(free);
    Err(Error::Export {
        kind: ExportKind::Base,
        reason: format!(
            "{} switch(es) need more traffic classes than their base leaves the plan (switch {v} needs {need}; its base keeps traffic classes {:?} for lossy traffic, leaving {free} of {n}): plan within {least} (--max-tcs {least}), or keep fewer of the base's lossy classes (--keep-dscp LIST or none)",
            over.len(),
            b.lossy
        ),
    })
}

/// Refuses a plan that needs more traffic classes at some switch than the
/// profile has for lossless traffic.
fn refuse_over(classes: &Classification, opts: &Options) -> Result<()> {
    let limit = opts.profile.lossless_tcs() as usize;
    let mut over = classes.over(limit);
    if over.is_empty() {
        return Ok(());
    }
    over.sort_by_key(|&(v, n)| (std::cmp::Reverse(n), v));
    let shown: Vec<String> = over
        .iter()
        .take(8)
        .map(|(v, n)| format!("switch {v} needs {n}"))
        .collect();
    Err(Error::Export {
        kind: ExportKind::Plan,
        reason: format!(
            "the plan needs more traffic classes than {} has for lossless traffic ({} of its {}, one kept lossy) at {} switch(es): {}{}. A stock SONiC switch rewrites tags with its port maps only; plan within the classes (tagger run's --max-tcs, on by default) or export the neutral table (--format json)",
            opts.profile.name,
            limit,
            opts.profile.traffic_classes,
            over.len(),
            shown.join(", "),
            if over.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        ),
    })
}

fn check_mapping(rules: &RuleSet, m: &Mapping, profile: &crate::capacity::Profile) -> Result<()> {
    m.check_queues(profile).map_err(|cause| Error::Mapping {
        origin: None,
        cause,
    })?;
    for e in &rules.entries {
        m.queue_of(e.priority)?;
        m.queue_of(e.next_priority)?;
        m.dscp_of(e.tag)?;
        m.dscp_of(e.next_tag)?;
    }
    Ok(())
}

/// `summary.json`: the rule set's header, the mapping, the switch profile
/// the buffers were sized with (whole, so the read-back can size them
/// again), and per switch its file, classes and fit.
fn summary<S: std::borrow::Borrow<Switch>>(
    rules: &RuleSet,
    opts: &Options,
    mapping: &Mapping,
    switches: &[S],
    models: &BTreeSet<&str>,
) -> Value {
    let p = &opts.profile;
    let fits = |s: &Switch| s.fit.is_none_or(|f| f.fits);
    let switches = || switches.iter().map(|s| s.borrow());
    json!({
        "format": FORMAT,
        "topology": rules.topology,
        "algo": rules.algo,
        "elp": opts.elp,
        "priorities": rules.priorities,
        "tags": max_tag(rules),
        "initial_tag": rules.initial_tag,
        "classes": rules.classes,
        "mapping": mapping.to_json(),
        "buffer": {
            "profile": p.name,
            "headroom_model": p.headroom.name(),
            "shared_headroom_pool": p.shared_headroom_pool,
            "ingress_pool": INGRESS_POOL,
            "egress_pool": EGRESS_POOL,
        },
        "switch_profile": p.to_toml(),
        "traffic_classes": p.traffic_classes,
        "tcs_max": switches().map(|s| s.tcs).max().unwrap_or(0),
        "switches_not_fitting": switches().filter(|s| !fits(s)).count(),
        "switches": switches().map(switch_entry).collect::<Vec<_>>(),
        "base": {
            "source": opts.base.describe(),
            "keep_dscp": keep_of(opts).describe(),
            "buffer_models": models,
        },
    })
}

/// A SONiC switch's entry in `summary.json`'s switch list.
pub(crate) fn switch_entry(s: &Switch) -> Value {
    let f = s.fit.expect("a SONiC switch has a fit");
    json!({
        "node": s.node,
        "file": format!("{}.json", s.node),
        "tcs": s.tcs,
        "lossless_queues": f.lossless_queues,
        "headroom_bytes": f.headroom_bytes,
        "fits": f.fits,
    })
}

/// The largest tag the plan uses (a packet with a larger one is none of
/// the plan's).
pub(crate) fn max_tag(rules: &RuleSet) -> u32 {
    rules
        .entries
        .iter()
        .map(|e| e.tag.max(e.next_tag))
        .chain(rules.host_tags())
        .max()
        .unwrap_or(0)
}

/// Cable lengths as SONiC's `CABLE_LENGTH` writes them: whole metres,
/// rounded up (the buffers are sized for the exact length).
pub(super) fn cable_text(m: f64) -> String {
    format!("{}m", m.ceil() as u64)
}

/// Writes `DIR/<node>.json` per switch and `DIR/summary.json`: into a
/// temporary sibling directory that then replaces `DIR` whole, so a reader
/// never sees a half-written export or files of an earlier one. `DIR` must
/// be new, empty or an earlier export ([`replaceable`]).
///
/// # Errors
/// [`Error::OutputDir`] for a directory that is not an export; I/O errors
/// naming the file.
pub fn write(dir: &Path, ex: &Export) -> Result<()> {
    let mut staging = crate::output::Staging::default();
    staging.dir(dir, replaceable, |tmp| write_files(tmp, ex));
    staging.commit()
}

/// Writes the export's files into the (empty) directory `dir`: one
/// `<node>.json` per switch and `summary.json`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_files(dir: &Path, ex: &Export) -> Result<()> {
    for s in &ex.switches {
        let text = serde_json::to_string_pretty(&s.config).expect("JSON values serialise");
        crate::output::write_staged(&dir.join(format!("{}.json", s.node)), &(text + "\n"))?;
        for (what, v) in [("patch", &s.patch), ("base", &s.base)] {
            if let Some(v) = v {
                let text = serde_json::to_string_pretty(v).expect("JSON values serialise");
                crate::output::write_staged(
                    &dir.join(format!("{}.{what}.json", s.node)),
                    &(text + "\n"),
                )?;
            }
        }
    }
    let text = serde_json::to_string_pretty(&ex.summary).expect("JSON values serialise");
    crate::output::write_staged(&dir.join("summary.json"), &(text + "\n"))
}

/// Whether an export may replace the directory `dir`: it does not exist,
/// is empty, or holds an earlier export (its `summary.json` names a SONiC
/// or neutral-table format). Anything else is refused, so an export never
/// mixes with or deletes files it did not write, and never replaces an
/// update's steps.
///
/// # Errors
/// [`Error::OutputDir`] saying why.
pub fn replaceable(dir: &Path) -> Result<()> {
    replaceable_as(dir, &["tagger-sonic/", "tagger-switch-table/"], "an export")
}

/// [`replaceable`] for an update's steps (`--steps-out`,
/// `--export-steps`): new, empty, or earlier steps; never an export, which
/// is the configuration the switches run and every step is applied to.
///
/// # Errors
/// [`Error::OutputDir`] saying why.
pub fn replaceable_steps(dir: &Path) -> Result<()> {
    replaceable_as(
        dir,
        &["tagger-update-steps/", "tagger-update-export/"],
        "update steps",
    )
}

/// Whether output `what` may replace `dir`: it does not exist, is empty,
/// or holds an earlier output of its kind (`summary.json`'s format starts
/// with one of `kinds`) and nothing an output does not write.
fn replaceable_as(dir: &Path, kinds: &[&str], what: &str) -> Result<()> {
    let refuse = |reason: String| {
        Err(Error::OutputDir {
            path: dir.to_path_buf(),
            reason,
        })
    };
    let meta = match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return refuse("exists and is not a directory".into());
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    if entries.next().is_none() {
        return Ok(());
    }
    // An earlier output: its summary.json names a tagger format and says
    // what it holds (switches or steps), and every entry is one an output
    // writes, so nothing of the user's is deleted with it.
    let summary = dir.join("summary.json");
    let format = (std::fs::metadata(&summary).is_ok_and(|m| m.is_file() && m.len() < 1 << 20))
        .then(|| std::fs::read_to_string(&summary).ok())
        .flatten()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .filter(|v| v["switches"].is_array() || !v["steps"].is_null())
        .and_then(|v| v["format"].as_str().map(str::to_string))
        .filter(|f| f.starts_with("tagger-"));
    let Some(format) = format else {
        return refuse(format!(
            "holds files that are not a tagger export or update steps (no summary.json of one): {what} replaces its directory whole, so give a new or empty directory"
        ));
    };
    if !kinds.iter().any(|k| format.starts_with(k)) {
        let held = if format.starts_with("tagger-update-") {
            "an update's steps"
        } else {
            "an export: the configuration switches run, which update steps are applied to"
        };
        return refuse(format!(
            "holds {held} ({format}), which {what} does not replace: give another directory"
        ));
    }
    if let Some(foreign) = foreign_entry(dir, 0)? {
        return Err(Error::OutputDir {
            path: dir.to_path_buf(),
            reason: format!(
                "is an earlier one but also holds {}, which no export writes: {what} replaces its directory whole, so move it out or give another directory",
                foreign.display()
            ),
        });
    }
    Ok(())
}

/// The first entry of an export directory (or, at `depth` 1, of one of
/// its step directories) that no export writes: `summary.json`,
/// `<node>.json`, `topology.json`, `union-topology.json`, `step-*.json`
/// and `step-*` directories.
fn foreign_entry(dir: &Path, depth: u32) -> Result<Option<std::path::PathBuf>> {
    let mut names: Vec<(std::ffi::OsString, bool)> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .map(|e| {
            let e = e.map_err(|x| Error::io(dir, x))?;
            let is_dir = e.file_type().map_err(|x| Error::io(dir, x))?.is_dir();
            Ok((e.file_name(), is_dir))
        })
        .collect::<Result<_>>()?;
    names.sort();
    for (name, is_dir) in names {
        let path = dir.join(&name);
        let ok = match (name.to_str(), is_dir) {
            (Some(n), false) => {
                n == "summary.json"
                    || n == "topology.json"
                    || n == "union-topology.json"
                    || (n.starts_with("step-") && n.ends_with(".json"))
                    || n.strip_suffix(".json")
                        .map(|v| {
                            v.strip_suffix(".patch")
                                .or_else(|| v.strip_suffix(".base"))
                                .unwrap_or(v)
                        })
                        .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            }
            (Some(n), true) if depth == 0 && n.starts_with("step-") => {
                if let Some(f) = foreign_entry(&path, 1)? {
                    return Ok(Some(f));
                }
                true
            }
            _ => false,
        };
        if !ok {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// Traffic classes of `rules` per switch as a SONiC export would use them:
/// (the most at one switch, switches over the profile's lossless ones).
///
/// # Errors
/// As [`export`]'s classification.
pub fn traffic_classes(topo: &Topology, rules: &RuleSet, limit: u32) -> Result<(usize, usize)> {
    let c = classify(topo, &rules.keys(topo)?)?;
    Ok((c.max(), c.over(limit as usize).len()))
}
