//! Capacity planning: does a plan fit a switch model? Per switch, the
//! lossless priorities present at each of its ports, the PFC headroom they
//! reserve, the buffer left, and verdicts on buffer, queues and rule space;
//! per run, the switches that fail each check, the worst margin, and the
//! longest switch-to-switch cable at which every switch still fits.
//!
//! A switch reserves headroom only for the priorities that actually arrive
//! at each ingress port, not the network-wide count: on Clos bounce
//! tagging a switch rarely sees all of them.

pub mod headroom;
pub mod profile;

use crate::rules::NodeCounts;
use crate::tagging::Tagging;
pub use headroom::{PortHeadroom, port_headroom, port_headroom_at};
pub use profile::{HeadroomModel, Profile, ProfileSpec};
use tagger_generators::{NodeKind, Topology};

/// One switch's fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFit {
    /// Ports (switch and host) with at least one lossless priority.
    pub lossless_ports: u32,
    /// Distinct lossless priorities present at the switch.
    pub priorities: u32,
    /// (port, priority) pairs on host ports.
    pub host_pairs: u64,
    /// Switch-to-switch (port, priority) pairs by port speed (the f64's
    /// bit pattern), for the cable solver, which varies only the cable.
    fabric_by_speed: Vec<(u64, u64)>,
    /// Headroom reserved (with a shared pool: the xons plus the pool).
    pub headroom_bytes: u64,
    /// `lossless_buffer_bytes - headroom_bytes` (negative: over).
    pub buffer_margin_bytes: i64,
    /// Whether the headroom fits the lossless buffer.
    pub fits_buffer: bool,
    /// `lossless_queues - priorities`.
    pub queue_margin: i64,
    /// Whether the switch has a lossless queue per priority present.
    pub fits_queues: bool,
    /// `acl_entries - acl_compressed`, when the profile gives a capacity.
    pub acl_margin: Option<i64>,
    /// Whether the compressed rules fit the ACL capacity (`None`: the profile gives none).
    pub fits_acl: Option<bool>,
    /// Traffic classes the switch's lossless traffic uses
    /// ([`crate::tagging::traffic`]; 0 until [`Fit::add_tcs`]).
    pub tcs: u32,
    /// Whether they fit the profile's traffic classes, one kept lossy.
    pub fits_tcs: bool,
}

impl NodeFit {
    /// (port, priority) pairs on switch-to-switch ports.
    pub fn fabric_pairs(&self) -> u64 {
        self.fabric_by_speed.iter().map(|&(_, k)| k).sum()
    }
}

/// A run's fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// Per node: `None` for a BCube server (not a switch).
    pub nodes: Vec<Option<NodeFit>>,
    /// The most lossless priorities present at one switch.
    pub priorities_per_switch_max: u32,
    /// The largest headroom one switch reserves, in bytes.
    pub headroom_total_max_bytes: u64,
    /// The smallest buffer margin over the switches (negative: some switch does not fit).
    pub buffer_margin_min_bytes: i64,
    /// Switches whose headroom exceeds their lossless buffer.
    pub switches_over_buffer: u64,
    /// Switches with more priorities than lossless queues.
    pub switches_over_queues: u64,
    /// Switches whose rules exceed the ACL capacity (`None`: the profile gives none).
    pub switches_over_acl: Option<u64>,
    /// The most traffic classes one node's lossless traffic uses (0
    /// until [`Fit::add_tcs`]; BCube's forwarding servers count, as they
    /// classify like switches).
    pub tcs_max: u32,
    /// Nodes needing more traffic classes than the profile has for
    /// lossless traffic.
    pub switches_over_tcs: u64,
    /// The longest switch-to-switch cable (host cables as in the profile)
    /// at which every switch still fits its buffer, to 0.1 m and at most
    /// [`MAX_CABLE_M`]; `None` when some switch does not fit even at 0 m.
    pub max_cable_m_fit: Option<f64>,
    /// The shortest and longest switch-to-switch cables the sizing used,
    /// in metres: the profile's `cable_m`, its per-level lengths or the
    /// topology file's per-link ones (`None`: no switch-to-switch link).
    pub cable_m_used: Option<(f64, f64)>,
}

/// Longest cable the solver tries.
pub const MAX_CABLE_M: f64 = 100_000.0;

/// Headroom from summed xoffs and xons of a switch's (port, priority) pairs.
pub(crate) fn reserve(p: &Profile, xoff: u64, xon: u64) -> u64 {
    if p.shared_headroom_pool {
        xon + (xoff as f64 / p.oversubscription).ceil() as u64
    } else {
        xoff + xon
    }
}

/// Bytes [`fit`] works with: a priority mask per channel and a record per
/// node.
pub fn estimate_bytes(topo: &Topology) -> u64 {
    use crate::budget::bytes_of;
    bytes_of::<u64>(topo.channel_count()) + bytes_of::<Option<NodeFit>>(topo.node_count())
}

/// Checks, before any work, that the profile can size every port of
/// `topo`: a sonic profile needs a pause-quanta entry or a peer response
/// time for every speed a topology file gives its links.
///
/// # Errors
/// [`crate::Error::Profile`] naming the link.
pub fn check(topo: &Topology, p: &Profile) -> crate::Result<()> {
    if !topo.has_link_props() {
        // Every speed then comes from the profile, checked when it was read.
        return Ok(());
    }
    for l in 0..topo.link_count() as u32 {
        let (speed, _) = p.link(topo, l);
        if !p.sizes(speed) {
            return Err(crate::Error::Profile {
                origin: topo.name().to_string(),
                profile: p.name.clone(),
                field: format!("links[{l}].speed_gbps"),
                reason: format!(
                    "{speed} Gb/s has no pause-quanta entry (10/25/40/50/100/200/400) and the profile's peer_response_bytes is 0"
                ),
            });
        }
    }
    Ok(())
}

/// Fits a tagging's plan to the switch profile `p`.
///
/// Arguments: the topology, the tagging (its states give the priorities
/// arriving on each channel; its first-hop keys the nodes whose host ports
/// send at priority 1), and the rule counts per node.
///
/// Complexity: O(S + C + V * log(1/eps)) for S states, C channels and V
/// nodes (the cable bisection re-sums per-switch pair counts).
pub fn fit(topo: &Topology, tagging: &Tagging, counts: &[NodeCounts], p: &Profile) -> Fit {
    let n = topo.node_count();
    // Priorities arriving on each channel, as bits (priority p at bit p-1;
    // at most 63 priorities).
    let mut mask = vec![0u64; topo.channel_count()];
    for &(c, _, prio) in &tagging.states {
        mask[c as usize] |= 1u64 << (prio - 1).min(63);
    }
    let mut sources = vec![false; n];
    for k in &tagging.keys {
        if k.in_channel.is_none() {
            sources[k.node as usize] = true;
        }
    }
    fit_arriving(topo, &mask, &sources, counts, p)
}

/// [`fit`] of a rule set (an update's candidate plans have no tagging):
/// what arrives lossless where is read off its entries (a transition's
/// arriving priority on its in channel, its next priority on the channel
/// it leaves by), rule counts and traffic classes off its entries too.
///
/// # Errors
/// The traffic classes' errors (a rule set whose keys do not read on
/// `topo`).
pub fn fit_rules(
    topo: &Topology,
    rules: &crate::rules::RuleSet,
    p: &Profile,
) -> crate::Result<Fit> {
    let n = topo.node_count();
    let mut mask = vec![0u64; topo.channel_count()];
    let mut sources = vec![false; n];
    let bit = |prio: u32| 1u64 << prio.saturating_sub(1).min(63);
    for e in &rules.entries {
        match e.in_link {
            Some(l) => mask[(topo.channel_from(l, e.node) ^ 1) as usize] |= bit(e.priority),
            None => sources[e.node as usize] = true,
        }
        mask[topo.channel_from(e.out_link, e.node) as usize] |= bit(e.next_priority);
    }
    let counts: Vec<NodeCounts> = crate::compress::by_node(&rules.entries, n)
        .iter()
        .enumerate()
        .map(|(v, es)| crate::compress::node_counts(es, rules.ingress.get(v).map_or(0, Vec::len)))
        .collect();
    let mut fit = fit_arriving(topo, &mask, &sources, &counts, p);
    let classes = crate::tagging::traffic::classify(topo, &rules.keys(topo)?)?;
    fit.add_tcs(&classes.per_node(n), p);
    Ok(fit)
}

/// [`fit`] from what arrives: per channel its priorities' bits, per node
/// whether its hosts send.
fn fit_arriving(
    topo: &Topology,
    mask: &[u64],
    sources: &[bool],
    counts: &[NodeCounts],
    p: &Profile,
) -> Fit {
    let n = topo.node_count();
    let (link_h, cable_m_used) = link_headroom(topo, p);
    let host_h = port_headroom(p, p.host_speed_gbps, p.host_cable_m);
    let at = Arriving {
        topo,
        p,
        mask,
        link_h: &link_h,
        host_h,
    };
    let nodes: Vec<Option<NodeFit>> = (0..n as u32)
        .map(|v| {
            (topo.node(v).kind == NodeKind::Switch).then(|| at.node(v, sources[v as usize], counts))
        })
        .collect();
    let switches: Vec<&NodeFit> = nodes.iter().flatten().collect();
    let max_cable_m_fit = max_cable_fit(p, &switches, host_h);
    Fit {
        priorities_per_switch_max: switches.iter().map(|s| s.priorities).max().unwrap_or(0),
        headroom_total_max_bytes: switches.iter().map(|s| s.headroom_bytes).max().unwrap_or(0),
        buffer_margin_min_bytes: switches
            .iter()
            .map(|s| s.buffer_margin_bytes)
            .min()
            .unwrap_or(p.lossless_buffer_bytes as i64),
        switches_over_buffer: switches.iter().filter(|s| !s.fits_buffer).count() as u64,
        switches_over_queues: switches.iter().filter(|s| !s.fits_queues).count() as u64,
        switches_over_acl: p.acl_entries.map(|_| {
            switches
                .iter()
                .filter(|s| s.fits_acl == Some(false))
                .count() as u64
        }),
        max_cable_m_fit,
        cable_m_used,
        tcs_max: 0,
        switches_over_tcs: 0,
        nodes,
    }
}

/// Per link, its speed and port headroom (links share few (speed, cable)
/// pairs, each sized once), and the range of switch-to-switch cable
/// lengths.
#[allow(clippy::type_complexity)]
fn link_headroom(topo: &Topology, p: &Profile) -> (Vec<(f64, PortHeadroom)>, Option<(f64, f64)>) {
    let mut by_link: std::collections::BTreeMap<(u64, u64), PortHeadroom> = Default::default();
    let mut cable_m_used: Option<(f64, f64)> = None;
    let link_h = (0..topo.link_count() as u32)
        .map(|l| {
            let (speed, cable) = p.link(topo, l);
            let [a, b] = topo.links()[l as usize];
            let switch = |v: u32| topo.node(v).kind == NodeKind::Switch;
            if switch(a) && switch(b) {
                let (lo, hi) = cable_m_used.unwrap_or((cable, cable));
                cable_m_used = Some((lo.min(cable), hi.max(cable)));
            }
            let h = *by_link
                .entry((speed.to_bits(), cable.to_bits()))
                .or_insert_with(|| port_headroom(p, speed, cable));
            (speed, h)
        })
        .collect();
    (link_h, cable_m_used)
}

/// What arrives lossless where: per channel its priorities (`mask`), per
/// link its speed and headroom, and a host port's headroom.
struct Arriving<'a> {
    topo: &'a Topology,
    p: &'a Profile,
    mask: &'a [u64],
    link_h: &'a [(f64, PortHeadroom)],
    host_h: PortHeadroom,
}

impl Arriving<'_> {
    /// Switch `v`'s fit: its lossless ports and priorities, headroom and
    /// margins; `source` when its hosts send; `counts` the rule counts per
    /// node (read where the profile has an ACL capacity).
    fn node(&self, v: u32, source: bool, counts: &[NodeCounts]) -> NodeFit {
        let (p, host_h) = (self.p, self.host_h);
        let node = self.topo.node(v);
        let (mut ports, mut present) = (0u32, 0u64);
        let (mut xoff, mut xon) = (0u64, 0u64);
        let mut by_speed: Vec<(u64, u64)> = Vec::new();
        for &out in self.topo.out_channels(v) {
            let m = self.mask[Topology::reverse(out) as usize];
            let k = u64::from(m.count_ones());
            ports += u32::from(m != 0);
            present |= m;
            let (speed, h) = self.link_h[(out >> 1) as usize];
            xoff += k * h.xoff;
            xon += k * h.xon;
            if k > 0 {
                let bits = speed.to_bits();
                match by_speed.iter_mut().find(|(b, _)| *b == bits) {
                    Some((_, c)) => *c += k,
                    None => by_speed.push((bits, k)),
                }
            }
        }
        // Host ports carry what hosts send: the initial priority.
        let host = if source { u64::from(node.hosts) } else { 0 };
        if host > 0 {
            ports += node.hosts;
            present |= 1;
        }
        let headroom = reserve(p, xoff + host * host_h.xoff, xon + host * host_h.xon);
        let margin = p.lossless_buffer_bytes as i64 - headroom as i64;
        let priorities = present.count_ones();
        let queue_margin = i64::from(p.lossless_queues) - i64::from(priorities);
        let acl_margin = p
            .acl_entries
            .map(|cap| cap as i64 - counts[v as usize].acl_compressed as i64);
        NodeFit {
            lossless_ports: ports,
            priorities,
            host_pairs: host,
            fabric_by_speed: by_speed,
            headroom_bytes: headroom,
            buffer_margin_bytes: margin,
            fits_buffer: margin >= 0,
            queue_margin,
            fits_queues: queue_margin >= 0,
            acl_margin,
            fits_acl: acl_margin.map(|m| m >= 0),
            tcs: 0,
            fits_tcs: true,
        }
    }
}

/// The longest switch-to-switch cable at which every switch still fits
/// its buffer, to 0.1 m (`None`: not even at 0 m). Headroom never falls
/// as cables grow, so the fitting lengths form an interval from 0: its end
/// is bisected.
fn max_cable_fit(p: &Profile, switches: &[&NodeFit], host_h: PortHeadroom) -> Option<f64> {
    // Every switch-to-switch cable at `cable` metres, speeds as they are.
    let fits_at = |cable: f64| {
        let mut at_speed: Vec<(u64, PortHeadroom)> = Vec::new();
        switches.iter().all(|s| {
            let (mut xoff, mut xon) = (s.host_pairs * host_h.xoff, s.host_pairs * host_h.xon);
            for &(bits, k) in &s.fabric_by_speed {
                let h = match at_speed.iter().find(|x| x.0 == bits) {
                    Some(&(_, h)) => h,
                    None => {
                        let h = port_headroom(p, f64::from_bits(bits), cable);
                        at_speed.push((bits, h));
                        h
                    }
                };
                xoff += k * h.xoff;
                xon += k * h.xon;
            }
            reserve(p, xoff, xon) <= p.lossless_buffer_bytes
        })
    };
    if !fits_at(0.0) {
        None
    } else if fits_at(MAX_CABLE_M) {
        Some(MAX_CABLE_M)
    } else {
        let (mut lo, mut hi) = (0.0f64, MAX_CABLE_M);
        while hi - lo > 0.05 {
            let mid = (lo + hi) / 2.0;
            if fits_at(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some((lo * 10.0).floor() / 10.0)
    }
}

impl Fit {
    /// Adds each node's traffic classes (`tcs[v]`, as
    /// [`crate::tagging::traffic::Classification::per_node`] gives them)
    /// to the fit against `p`'s traffic classes.
    pub fn add_tcs(&mut self, tcs: &[u32], p: &Profile) {
        for (v, n) in self.nodes.iter_mut().enumerate() {
            if let Some(n) = n {
                n.tcs = tcs.get(v).copied().unwrap_or(0);
                n.fits_tcs = n.tcs <= p.lossless_tcs();
            }
        }
        // Every node that forwards counts, BCube's servers too: each
        // classifies and rewrites like a switch (and the export writes it
        // one).
        self.tcs_max = tcs.iter().copied().max().unwrap_or(0);
        self.switches_over_tcs = tcs.iter().filter(|&&n| n > p.lossless_tcs()).count() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elp::ElpSpec;
    use crate::pipeline::{RunConfig, RunResult, run};

    fn plan(topo: &str, elp: &str, algo: &str, switch: Profile) -> RunResult {
        run(&RunConfig {
            topology: crate::TopologySpec::parse(topo).unwrap(),
            elp: ElpSpec::parse(elp).unwrap(),
            algo: algo.parse().unwrap(),
            cycle: Default::default(),
            memory_budget: None,
            switch,
            max_tcs: None,
            classes: 1,
            limits: Default::default(),
        })
        .unwrap()
    }

    /// A profile from TOML text: a base with the `key = value` lines of
    /// `extra` replacing its own or added.
    fn profile(extra: &str) -> Result<Profile, crate::Error> {
        let mut lines: Vec<String> = "description = \"d\"\nsource = \"s\"\nheadroom = \"simple\"\nlossless_buffer_bytes = 1000000\nshared_headroom_pool = false\nqueues_per_port = 8\nlossless_queues = 2\nport_speed_gbps = 100\ncable_m = 100\nport_mtu = 9100\nlossless_mtu = 1500"
            .lines()
            .map(String::from)
            .collect();
        for l in extra.lines() {
            let key = l.split('=').next().unwrap().trim();
            match lines
                .iter()
                .position(|x| x.split('=').next().unwrap().trim() == key)
            {
                Some(i) => lines[i] = l.to_string(),
                None => lines.push(l.to_string()),
            }
        }
        let text = format!("[t]\n{}\n", lines.join("\n"));
        Profile::parse_all(&text, "t.toml").map(|mut m| m.remove("t").unwrap())
    }

    /// Every built-in profile, with links overridden and level classes,
    /// survives its own TOML: an export records it so.
    #[test]
    fn profiles_round_trip_through_their_toml() {
        let mut all: Vec<Profile> = Profile::builtin().into_values().collect();
        all.push(
            profile("levels = { \"0-1\" = { cable_m = 10 }, \"1-2\" = { speed_gbps = 400 } }")
                .unwrap(),
        );
        all.push(
            Profile::resolve("spectrum2")
                .unwrap()
                .with_links(Some(12.5), Some(200.0), None)
                .unwrap(),
        );
        for p in all {
            let back = Profile::parse_all(&p.to_toml(), "t").unwrap();
            assert_eq!(back.get(&p.name), Some(&p), "{}", p.to_toml());
        }
    }

    #[test]
    fn builtin_profiles_are_valid() {
        let all = Profile::builtin();
        assert!(all.len() >= 5);
        assert!(all.contains_key(profile::DEFAULT_PROFILE));
        assert_eq!(Profile::default().name, profile::DEFAULT_PROFILE);
    }

    /// On `fattree:k=16` with `kbounce:1` and `clos`, a switch sees at most
    /// 2 priorities, and a ToR's headroom counts the priorities arriving at
    /// each port: its host ports carry only priority 1, so it reserves less
    /// than its ports times the network's priorities.
    #[test]
    fn headroom_counts_the_priorities_present_per_port() {
        let p = Profile::default();
        let r = plan("fattree:k=16", "kbounce:1", "clos", p.clone());
        assert_eq!(r.tagging.priorities, 2);
        assert!(r.fit.priorities_per_switch_max <= 2);
        let size = port_headroom(&p, p.port_speed_gbps, p.cable_m).size();
        let host = port_headroom(&p, p.host_speed_gbps, p.host_cable_m).size();
        let tor = (0..r.topo.node_count())
            .find(|&v| r.topo.nodes()[v].hosts > 0)
            .unwrap();
        let f = r.fit.nodes[tor].clone().unwrap();
        let (uplinks, hosts) = (
            r.topo.degree(tor as u32) as u64,
            r.topo.nodes()[tor].hosts as u64,
        );
        // Uplinks carry both priorities (bounced packets come back down at
        // priority 2), host ports only the first.
        assert_eq!(f.headroom_bytes, uplinks * 2 * size + hosts * host);
        let network_count = (uplinks * size + hosts * host) * 2;
        assert!(f.headroom_bytes < network_count);
    }

    /// Verdicts on a hand-sized profile: a buffer of exactly the busiest
    /// switch's headroom fits with margin 0, one byte less fails; one
    /// lossless queue fails a 2-priority plan; an ACL capacity equal to the
    /// busiest switch's compressed entries fits and one less fails.
    #[test]
    fn verdicts_fit_and_fail_by_one() {
        let base = profile("").unwrap();
        let r = plan(
            "leafspine:leaves=4,spines=2,hosts=1",
            "kbounce:1",
            "clos",
            base.clone(),
        );
        let need = r.fit.headroom_total_max_bytes;
        let acl = r
            .node_counts
            .iter()
            .map(|c| c.acl_compressed)
            .max()
            .unwrap();
        let exact = Profile {
            lossless_buffer_bytes: need,
            acl_entries: Some(acl),
            ..base.clone()
        };
        let f = fit(&r.topo, &r.tagging, &r.node_counts, &exact);
        assert_eq!(f.buffer_margin_min_bytes, 0);
        assert_eq!((f.switches_over_buffer, f.switches_over_queues), (0, 0));
        assert_eq!(f.switches_over_acl, Some(0));
        let short = Profile {
            lossless_buffer_bytes: need - 1,
            acl_entries: Some(acl - 1),
            lossless_queues: 1,
            ..base
        };
        let f = fit(&r.topo, &r.tagging, &r.node_counts, &short);
        assert_eq!(f.buffer_margin_min_bytes, -1);
        assert!(f.switches_over_buffer >= 1);
        assert!(f.switches_over_queues >= 1);
        assert!(f.switches_over_acl.unwrap() >= 1);
        let worst = f.nodes.iter().flatten().find(|n| !n.fits_buffer).unwrap();
        assert_eq!(worst.buffer_margin_bytes, -1);
        assert_eq!(worst.fits_acl, Some(false));
    }

    /// Link speeds and cables come from the topology file first, then the
    /// profile's level classes, then its defaults; a sonic profile refuses
    /// a file speed it cannot size before any work.
    #[test]
    fn per_link_and_per_level_speeds_and_cables() {
        let t = crate::TopologySpec::parse("fattree:k=4")
            .unwrap()
            .build()
            .unwrap();
        let p = Profile::parse_all(
            &profile::BUILTIN.replace(
                "[spectrum1]",
                "[spectrum2.levels]\n\"1-0\" = { cable_m = 10 }\n\"1-2\" = { speed_gbps = 400 }\n\n[spectrum1]",
            ),
            "l.toml",
        )
        .unwrap()
        .remove("spectrum2")
        .unwrap();
        let tor_agg = (0..t.link_count() as u32)
            .find(|&l| t.links()[l as usize].iter().any(|&v| t.level(v) == Some(0)))
            .unwrap();
        let agg_core = (0..t.link_count() as u32)
            .find(|&l| t.links()[l as usize].iter().any(|&v| t.level(v) == Some(2)))
            .unwrap();
        assert_eq!(p.link(&t, tor_agg), (100.0, 10.0));
        assert_eq!(p.link(&t, agg_core), (400.0, 300.0));
        let mut props = vec![tagger_generators::LinkProps::default(); t.link_count()];
        props[tor_agg as usize].cable_m = Some(2.0);
        props[agg_core as usize].speed_gbps = Some(800.0);
        let json = tagger_generators::file::to_json(&t.with_link_props(props).unwrap());
        let f = tagger_generators::file::parse_json(&json, "f").unwrap();
        assert_eq!(p.link(&f, tor_agg), (100.0, 2.0));
        assert_eq!(p.link(&f, agg_core), (800.0, 300.0));
        let strict = Profile {
            sonic: p.sonic.map(|s| profile::SonicParams {
                peer_response_bytes: 0,
                ..s
            }),
            ..p.clone()
        };
        let e = check(&f, &strict).unwrap_err().to_string();
        assert!(
            e.contains(&format!("links[{agg_core}].speed_gbps")) && e.contains("800"),
            "{e}"
        );
        assert!(check(&f, &p).is_ok());
        // The fit sums each port at its own link's headroom.
        let r = plan("fattree:k=4", "kbounce:1", "clos", p.clone());
        let fit_levels = fit(&r.topo, &r.tagging, &r.node_counts, &p);
        let fit_flat = fit(
            &r.topo,
            &r.tagging,
            &r.node_counts,
            &Profile {
                levels: Vec::new(),
                ..p
            },
        );
        assert_ne!(
            fit_levels.headroom_total_max_bytes,
            fit_flat.headroom_total_max_bytes
        );
        // The cables used are reported: the levels' 10 m and the
        // profile's 300 m, or 300 m throughout.
        assert_eq!(fit_levels.cable_m_used, Some((10.0, 300.0)));
        assert_eq!(fit_flat.cable_m_used, Some((300.0, 300.0)));
    }

    /// The cable solver's answer fits, and 0.1 m more does not.
    #[test]
    fn max_cable_is_the_fitting_edge() {
        let base = Profile::default();
        let r = plan("fattree:k=8", "kbounce:2", "clos", base.clone());
        let tight = Profile {
            lossless_buffer_bytes: r.fit.headroom_total_max_bytes,
            ..base
        };
        let f = fit(&r.topo, &r.tagging, &r.node_counts, &tight);
        let edge = f.max_cable_m_fit.unwrap();
        assert!(
            (edge - tight.cable_m).abs() < 30.0,
            "{edge} near {}",
            tight.cable_m
        );
        let at = |c: f64| {
            let p = tight.with_links(Some(c), None, None).unwrap();
            fit(&r.topo, &r.tagging, &r.node_counts, &p).switches_over_buffer
        };
        assert_eq!(at(edge), 0);
        assert!(at(edge + 0.1) > 0);
        let none = Profile {
            lossless_buffer_bytes: 1000,
            ..tight
        };
        assert_eq!(
            fit(&r.topo, &r.tagging, &r.node_counts, &none).max_cable_m_fit,
            None
        );
    }

    /// With a shared headroom pool only the xons are reserved per priority
    /// and the xoffs share a pool divided by the oversubscription ratio.
    #[test]
    fn shared_pool_reserves_less() {
        let own = Profile::default();
        let pooled = Profile {
            shared_headroom_pool: true,
            oversubscription: 2.0,
            ..own.clone()
        };
        let r = plan("fattree:k=4", "kbounce:1", "clos", own.clone());
        let a = fit(&r.topo, &r.tagging, &r.node_counts, &own);
        let b = fit(&r.topo, &r.tagging, &r.node_counts, &pooled);
        let (x, y) = (a.nodes[0].clone().unwrap(), b.nodes[0].clone().unwrap());
        let h = port_headroom(&own, own.port_speed_gbps, own.cable_m);
        let hh = port_headroom(&own, own.host_speed_gbps, own.host_cable_m);
        let xoffs = x.fabric_pairs() * h.xoff + x.host_pairs * hh.xoff;
        assert_eq!(
            y.headroom_bytes,
            x.fabric_pairs() * h.xon + x.host_pairs * hh.xon + xoffs.div_ceil(2)
        );
        assert!(y.headroom_bytes < x.headroom_bytes);
    }

    /// A bad profile is refused naming the file, the profile and the field.
    #[test]
    fn bad_profiles_name_file_profile_and_field() {
        for (extra, field) in [
            ("acl_entries = -3\n", "acl_entries"),
            ("levels = { \"x-1\" = { cable_m = 1 } }\n", "levels"),
            ("levels = { \"0-1\" = { colour = 1 } }\n", "colour"),
            ("lossless_buffer_bytes = -5\n", "lossless_buffer_bytes"),
            ("port_speed_gbps = 0\n", "port_speed_gbps"),
            ("headroom = \"magic\"\n", "headroom"),
            ("cell_bytes = 144\n", "cell_bytes"),
            ("oversubscription = 0.5\n", "oversubscription"),
            ("lossless_queues = 9\n", "lossless_queues"),
            ("colour = 1\n", "colour"),
        ] {
            let text = profile(extra).unwrap_err().to_string();
            assert!(
                text.contains("t.toml") && text.contains("[t]") && text.contains(field),
                "{extra}: {text}"
            );
        }
        // A sonic profile at a speed without pause quanta and no peer
        // response time to fall back on.
        let e = Profile::parse_all(
            &profile::BUILTIN
                .replace("port_speed_gbps = 100\ncable_m = 300\nhost_cable_m = 5\nport_mtu = 9100\nlossless_mtu = 1500\n\n[spectrum1]", "port_speed_gbps = 800\ncable_m = 300\nhost_cable_m = 5\nport_mtu = 9100\nlossless_mtu = 1500\n\n[spectrum1]")
                .replace("peer_response_bytes = 3_891       # 3.8 KiB", "peer_response_bytes = 0"),
            "b.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("[spectrum2]") && e.contains("port_speed_gbps") && e.contains("800"),
            "{e}"
        );
        // A missing field.
        let e = Profile::parse_all("[x]\ndescription = \"d\"\n", "m.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("m.toml") && e.contains("[x]") && e.contains("missing field"),
            "{e}"
        );
        let e = Profile::resolve("spectrum9").unwrap_err().to_string();
        assert!(e.contains("spectrum9") && e.contains("spectrum2"), "{e}");
    }
}
