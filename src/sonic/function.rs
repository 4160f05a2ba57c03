//! The complete function an exported directory makes the switches apply,
//! judged as a whole: every packet, planned or not.
//!
//! Both formats decode to one [`SwitchFn`] per switch: per port and header
//! value (a DSCP value, or a tag in the neutral table), the class the
//! switch puts the packet in and whether it is lossless there (the port
//! pauses its upstream for that priority group and has headroom for it);
//! per class and egress port, the queue it leaves in, the header value it
//! leaves with and whether that queue stops when the next switch pauses it.
//! A switch with no file carries nothing lossless.
//!
//! The standard, checked here over the whole fabric:
//!
//! - what a switch classifies lossless carries a tag of the plan, in one
//!   of the plan's priorities, and on a host port a tag the hosts send;
//! - a packet the next switch classifies lossless left in the queue it
//!   pauses (PFC pauses the priority a packet arrives in: a packet that
//!   left from another queue, or a lossy one, is never held back for it,
//!   and lossy traffic that turns lossless there takes buffer nobody
//!   planned for);
//! - a lossless packet delivered to a host leaves in a paused queue of its
//!   own priority;
//! - the buffer dependencies of every packet, over any routing (U-turns
//!   included), have no cycle: (channel, priority group) waits on
//!   (channel, priority group) when a packet classified lossless on the
//!   first leaves in a pausable queue towards a port whose group of that
//!   priority is lossless.
//!
//! What passes becomes a rule set of every lossless transition, for the
//! verifier's own checks and its replay of the ELP.

use super::dir::excerpt;
use crate::error::{Error, ExportKind, Result};
use crate::rules::{Entry, RuleSet};
use std::collections::{BTreeMap, BTreeSet};
use tagger_generators::{ChannelId, LinkId, NodeId, Topology};

/// How a header value arrives at one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct In {
    /// The class (traffic class) the switch puts it in.
    pub class: u32,
    /// Its priority group when it is lossless here.
    pub lossless: Option<u32>,
}

/// What a class does on one egress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Out {
    /// The queue it leaves in (also the PFC priority that pauses it).
    pub queue: u32,
    /// The header value it leaves with (`None`: the one it arrived with).
    pub value: Option<u32>,
    /// Whether the queue stops when the next switch pauses it.
    pub pausable: bool,
}

/// One port of a switch.
#[derive(Clone, Debug)]
pub(super) struct Port {
    /// Its name in the files.
    pub name: String,
    /// Its link, or `None` for a host port.
    pub link: Option<LinkId>,
}

/// One switch's complete function.
#[derive(Clone, Debug)]
pub(super) struct SwitchFn {
    /// The switch.
    pub node: NodeId,
    /// The file it was read from.
    pub file: String,
    /// Its ports: its links in the topology's port order, then host ports.
    pub ports: Vec<Port>,
    /// Per port, per header value `0..values`: how it arrives.
    pub ingress: Vec<Vec<In>>,
    /// Per class, per port: what it does there.
    pub egress: BTreeMap<u32, Vec<Out>>,
}

impl SwitchFn {
    /// The port of link `l`, if the switch has it.
    fn port_of(&self, l: LinkId) -> Option<usize> {
        self.ports.iter().position(|p| p.link == Some(l))
    }

    /// Per class, the header values arriving in it at any port.
    fn values_by_class(&self) -> BTreeMap<u32, BTreeSet<u32>> {
        let mut m: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for port in &self.ingress {
            for (x, i) in port.iter().enumerate() {
                m.entry(i.class).or_default().insert(x as u32);
            }
        }
        m
    }
}

/// What the read-back of an exported directory gives: the rule set of
/// every lossless transition the switches apply (ELP or not), and what
/// `summary.json` records for verifying it.
#[derive(Clone, Debug)]
pub struct ReadBack {
    /// Every lossless transition, as a rule set (header from
    /// `summary.json`).
    pub rules: RuleSet,
    /// The ELP spec the plan was made for, if the export records it.
    pub elp: Option<String>,
    /// The switch profile the buffers were sized with (SONiC exports).
    pub profile: Option<crate::capacity::Profile>,
    /// Switches that do not fit the profile (lossless queues or headroom),
    /// each `file: reason`; only an export written with `--require-fit off`
    /// records them (`fits: false`): elsewhere a misfit is an error.
    pub misfits: Vec<String>,
}

/// Every lossless transition as rule entries, sorted, with each node's
/// ingress map `(tag, priority)`.
pub(super) type Transitions = (Vec<Entry>, Vec<Vec<(u32, u32)>>);

/// How header values and priority groups read as the plan's tags and
/// priorities.
pub(super) struct Reading<'a> {
    /// The tag a header value carries, if any.
    pub tag_of: &'a dyn Fn(u32) -> Option<u32>,
    /// The lossless priority a priority group (queue) is, if any.
    pub priority_of: &'a dyn Fn(u32) -> Option<u32>,
    /// What the header value of a tag is (for messages).
    pub value_name: &'static str,
}

/// Judges the fabric of `switches` (any order, at most one per node) and
/// returns every lossless transition, sorted, with each node's ingress
/// map.
///
/// # Errors
/// [`Error::Export`] naming the file, port and value at fault, or the
/// dependency cycle.
pub(super) fn judge(
    topo: &Topology,
    switches: &[SwitchFn],
    reading: &Reading,
    host_tags: &[u32],
) -> Result<Transitions> {
    let mut at: Vec<Option<usize>> = vec![None; topo.node_count()];
    for (i, s) in switches.iter().enumerate() {
        at[s.node as usize] = Some(i);
    }
    let f = Fabric {
        topo,
        switches,
        at: &at,
        reading,
    };
    for s in switches {
        f.check_values(s, host_tags)?;
        f.check_links(s)?;
        f.check_delivery(s)?;
    }
    check_cycles(topo, switches, &at)?;
    transitions(topo, switches, reading, &at)
}

fn bad(file: &str, reason: String) -> Error {
    Error::Export {
        kind: ExportKind::ReadBack,
        reason: format!("{file}: {reason}"),
    }
}

/// The switches being judged, each by its node (`at`), and how their
/// header values read.
struct Fabric<'a> {
    topo: &'a Topology,
    switches: &'a [SwitchFn],
    at: &'a [Option<usize>],
    reading: &'a Reading<'a>,
}

impl Fabric<'_> {
    /// How switch `w` receives header value `x` over link `l` (None: it
    /// has no file, so nothing is lossless there).
    fn arrives(&self, w: NodeId, l: LinkId, x: u32) -> Option<(&SwitchFn, usize, In)> {
        let s = &self.switches[self.at[w as usize]?];
        let p = s.port_of(l)?;
        let i = *s.ingress[p].get(x as usize)?;
        Some((s, p, i))
    }

    /// What `s` takes lossless carries a tag of the plan in one of its
    /// priorities, and from hosts a tag they send (`host_tags`).
    fn check_values(&self, s: &SwitchFn, host_tags: &[u32]) -> Result<()> {
        let (reading, v_name) = (self.reading, self.reading.value_name);
        for (p, port) in s.ports.iter().enumerate() {
            for (x, i) in s.ingress[p].iter().enumerate() {
                let Some(g) = i.lossless else { continue };
                let Some(tag) = (reading.tag_of)(x as u32) else {
                    return Err(bad(
                        &s.file,
                        format!(
                            "port {}: {v_name} {x} is classified lossless (priority group {g}) but is no tag of the plan: traffic that is not the plan's would take its buffers",
                            excerpt(&port.name)
                        ),
                    ));
                };
                if (reading.priority_of)(g).is_none() {
                    return Err(bad(
                        &s.file,
                        format!(
                            "port {}: {v_name} {x} is lossless in priority group {g}, which is none of the plan's lossless queues",
                            excerpt(&port.name)
                        ),
                    ));
                }
                if port.link.is_none() && !host_tags.contains(&tag) {
                    return Err(bad(
                        &s.file,
                        format!(
                            "host port {}: {v_name} {x} (tag {tag}) is classified lossless, but hosts send only tag(s) {host_tags:?}: hosts would enter priority group {g} unplanned",
                            excerpt(&port.name)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// What `s` sends over a link in a class arrives at the peer, where
    /// the peer takes it lossless, in the queue the peer pauses.
    fn check_links(&self, s: &SwitchFn) -> Result<()> {
        let v_name = self.reading.value_name;
        let by_class = s.values_by_class();
        for (&k, values) in &by_class {
            let outs = s.egress.get(&k).ok_or_else(|| {
                bad(
                    &s.file,
                    format!("class {k} is used at ingress but has no egress behaviour"),
                )
            })?;
            for (o, port) in s.ports.iter().enumerate() {
                let out = outs[o];
                let Some(l) = port.link else { continue };
                let [a, b] = self.topo.links()[l as usize];
                let w = if a == s.node { b } else { a };
                for &x in values {
                    let x2 = out.value.unwrap_or(x);
                    let Some((ws, wp, wi)) = self.arrives(w, l, x2) else {
                        continue;
                    };
                    if let Some(g) = wi.lossless
                        && !(out.pausable && out.queue == g)
                    {
                        let how = if out.pausable {
                            format!("in queue {}", out.queue)
                        } else {
                            format!("in queue {}, which is not paused (lossy)", out.queue)
                        };
                        return Err(bad(
                            &ws.file,
                            format!(
                                "port {} classifies {v_name} {x2} from switch {} lossless in priority group {g}, but switch {} sends it on port {} {how} (class {k}, arriving as {v_name} {x}): PFC pauses priority {g}, which does not hold that queue back",
                                excerpt(&ws.ports[wp].name),
                                s.node,
                                s.node,
                                excerpt(&port.name)
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Lossless packets delivered to hosts leave in a paused queue of
    /// their own priority.
    fn check_delivery(&self, s: &SwitchFn) -> Result<()> {
        let v_name = self.reading.value_name;
        for (p, port) in s.ports.iter().enumerate() {
            for (x, i) in s.ingress[p].iter().enumerate() {
                let Some(g) = i.lossless else { continue };
                let outs = &s.egress[&i.class];
                for (h, hp) in s.ports.iter().enumerate() {
                    if hp.link.is_some() {
                        continue;
                    }
                    let out = outs[h];
                    if !(out.pausable && out.queue == g) {
                        return Err(bad(
                            &s.file,
                            format!(
                                "{v_name} {x} arriving lossless on port {} (priority group {g}) is delivered to host port {} in queue {}{}: the last hop would drop",
                                excerpt(&port.name),
                                excerpt(&hp.name),
                                out.queue,
                                if out.pausable {
                                    ", another priority"
                                } else {
                                    ", which is not paused (lossy)"
                                }
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The buffer dependencies of every packet over any routing have no cycle
/// (see the module documentation).
///
/// # Errors
/// [`Error::Export`] printing one cycle, switch by switch.
fn check_cycles(topo: &Topology, switches: &[SwitchFn], at: &[Option<usize>]) -> Result<()> {
    // Vertex (channel, group) = channel * 16 + group (groups are 0-15).
    const G: usize = 16;
    let n = topo.channel_count() * G;
    // Per (switch, port): the priority groups that are lossless there.
    let lossless_groups = |s: &SwitchFn, p: usize| -> u16 {
        s.ingress[p]
            .iter()
            .filter_map(|i| i.lossless)
            .fold(0u16, |m, g| m | 1 << g.min(15))
    };
    let groups: Vec<Vec<u16>> = switches
        .iter()
        .map(|s| (0..s.ports.len()).map(|p| lossless_groups(s, p)).collect())
        .collect();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for s in switches {
        let v = s.node;
        for (p, port) in s.ports.iter().enumerate() {
            let Some(l) = port.link else { continue };
            let c_in = topo.channel_from(l, v) ^ 1;
            let mut seen: BTreeSet<(u32, u32)> = BTreeSet::new();
            for i in &s.ingress[p] {
                let Some(g) = i.lossless else { continue };
                if !seen.insert((i.class, g)) {
                    continue;
                }
                for (o, op) in s.ports.iter().enumerate() {
                    let Some(lo) = op.link else { continue };
                    let out = s.egress[&i.class][o];
                    if !out.pausable {
                        continue;
                    }
                    let c_out = topo.channel_from(lo, v);
                    let w = topo.channel_dst(c_out);
                    let Some(wi) = at[w as usize] else { continue };
                    let ws = &switches[wi];
                    let Some(wp) = ws.port_of(lo) else { continue };
                    if groups[wi][wp] & (1 << out.queue.min(15)) != 0 {
                        edges.push((
                            (c_in as usize * G + g as usize) as u32,
                            (c_out as usize * G + out.queue as usize) as u32,
                        ));
                    }
                }
            }
        }
    }
    let Some(cycle) = crate::cycle::find_cycle(n, edges) else {
        return Ok(());
    };
    let name = |vx: u32| -> String {
        let c = vx as usize / G;
        let g = vx as usize % G;
        let w = topo.channel_dst(c as ChannelId);
        let port = at[w as usize]
            .and_then(|i| {
                let s = &switches[i];
                s.port_of((c >> 1) as LinkId)
                    .map(|p| s.ports[p].name.clone())
            })
            .unwrap_or_default();
        format!(
            "switch {w} port {} (from switch {}) group {g}",
            excerpt(&port),
            topo.channel_src(c as ChannelId)
        )
    };
    let shown: Vec<String> = cycle.iter().map(|&vx| name(vx)).collect();
    Err(Error::Export {
        kind: ExportKind::ReadBack,
        reason: format!(
            "the switches' buffer dependencies have a cycle (any routing, U-turns included), so PFC can deadlock: {} -> back to the first",
            shown.join(" -> ")
        ),
    })
}

/// Every lossless transition as rule entries, with each node's ingress
/// map. A switch's host ports must act alike (the rule set has one "from
/// a host" port).
fn transitions(
    topo: &Topology,
    switches: &[SwitchFn],
    reading: &Reading,
    at: &[Option<usize>],
) -> Result<Transitions> {
    let mut entries = Vec::new();
    let mut ingress: Vec<Vec<(u32, u32)>> = vec![Vec::new(); topo.node_count()];
    for s in switches {
        let v = s.node;
        // The first host port: its position, entries and classification.
        type HostRows = (usize, Vec<Entry>, Vec<(u32, u32)>);
        let mut host_rows: Option<HostRows> = None;
        for (p, port) in s.ports.iter().enumerate() {
            let mut rows = Vec::new();
            let mut classified = Vec::new();
            for (x, i) in s.ingress[p].iter().enumerate() {
                let Some(g) = i.lossless else { continue };
                let tag = (reading.tag_of)(x as u32).expect("judged");
                let prio = (reading.priority_of)(g).expect("judged");
                classified.push((tag, prio));
                for (o, op) in s.ports.iter().enumerate() {
                    let Some(lo) = op.link else { continue };
                    let out = s.egress[&i.class][o];
                    let x2 = out.value.unwrap_or(x as u32);
                    let w = topo.channel_dst(topo.channel_from(lo, v));
                    let lossless_there = at[w as usize].is_some_and(|wi| {
                        let ws = &switches[wi];
                        ws.port_of(lo)
                            .and_then(|wp| ws.ingress[wp].get(x2 as usize))
                            .is_some_and(|wi| wi.lossless.is_some())
                    });
                    if !(out.pausable && lossless_there) {
                        continue;
                    }
                    rows.push(Entry {
                        node: v,
                        in_link: port.link,
                        tag,
                        out_link: lo,
                        next_tag: (reading.tag_of)(x2).expect("judged at the next switch"),
                        priority: prio,
                        next_priority: (reading.priority_of)(out.queue)
                            .expect("judged at the next switch"),
                    });
                }
            }
            if port.link.is_none() {
                match &host_rows {
                    None => host_rows = Some((p, rows.clone(), classified.clone())),
                    Some((first, r, c)) => {
                        if *r != rows || *c != classified {
                            return Err(Error::Export {
                                kind: ExportKind::ReadBack,
                                reason: format!(
                                    "{}: host ports {} and {} are configured differently: the plan treats a switch's host ports alike",
                                    s.file,
                                    excerpt(&s.ports[*first].name),
                                    excerpt(&port.name)
                                ),
                            });
                        }
                        continue;
                    }
                }
            }
            entries.extend(rows);
            ingress[v as usize].extend(classified);
        }
    }
    entries.sort_unstable();
    for m in &mut ingress {
        m.sort_unstable();
        m.dedup();
    }
    Ok((entries, ingress))
}
