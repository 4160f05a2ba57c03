//! What one failure trial does to traffic under installed rules, counted
//! per destination without listing paths.
//!
//! For each destination `t`, two breadth-first searches give the healthy
//! and the degraded distances to `t`. Every route to `t` is then a walk in
//! one of two acyclic graphs: the degraded shortest-path DAG toward `t`
//! (converged routing, and the tail of a deflected packet), and the healthy
//! one (a packet under local reroute before it meets a failure). A packet
//! state is `(channel, tag)`; the installed rules map it, per next channel,
//! to the next state or to nothing (the packet continues lossy). So one
//! backward pass per DAG counts, per state, the routes to `t` and the ones
//! that stay lossless, and one forward pass from every source marks the
//! states, channel transitions and rule entries that traffic uses. Work per
//! trial: O(E * (L + S * d)) for E endpoints, L links, S packet states and
//! degree d, split over the destinations in parallel.
//!
//! One file past 600 lines on purpose: one trial's replay (routing,
//! per-destination counting, fallback and proof) is one computation over shared
//! per-trial state.

use crate::rules::RuleSet;
use rayon::prelude::*;
use tagger_generators::{ChannelId, NodeId, Topology};

use super::spec::Routing;

/// Marks "no state" / "no entry".
const NONE: u32 = u32::MAX;

/// The installed rules compiled for replay: packet states and, per state,
/// its transitions sorted by out channel.
#[derive(Debug)]
pub struct Compiled {
    links: usize,
    /// States of position `p` (a channel, or `2L + v` for the host ports of
    /// node `v`) are `st_off[p]..st_off[p + 1]`, by tag.
    st_off: Vec<u32>,
    st_tag: Vec<u32>,
    /// Transitions of state `s`: `tr_off[s]..tr_off[s + 1]` of `tr`, sorted
    /// by out channel: `(out channel, next state, entry index)`.
    tr_off: Vec<u32>,
    tr: Vec<(ChannelId, u32, u32)>,
    /// The tag hosts send.
    pub initial_tag: u32,
    /// Per node, the position of each of its ports among its out channels
    /// (`slot[c]` for an out channel `c`), and per node the base of its
    /// transition indices (`(deg + 1) * deg` each: in-ports, host, x out).
    slot: Vec<u32>,
    trans_base: Vec<u64>,
}

impl Compiled {
    /// Compiles `rules` (already verified for `topo`).
    pub fn new(topo: &Topology, rules: &RuleSet) -> Self {
        let l = topo.link_count();
        let host = |v: NodeId| (2 * l) as u32 + v;
        let into = |link: u32, node: NodeId| -> ChannelId {
            let [a, _] = topo.links()[link as usize];
            if a == node { 2 * link + 1 } else { 2 * link }
        };
        // (position, tag) of every state, and every transition by its from
        // state's (position, tag).
        let mut keys: Vec<(u32, u32)> = Vec::with_capacity(2 * rules.entries.len());
        let mut raw: Vec<((u32, u32), ChannelId, u32, u32)> =
            Vec::with_capacity(rules.entries.len());
        for (i, e) in rules.entries.iter().enumerate() {
            let from = e.in_link.map_or(host(e.node), |k| into(k, e.node));
            let out = into(e.out_link, e.node) ^ 1;
            keys.push((from, e.tag));
            keys.push((out, e.next_tag));
            raw.push(((from, e.tag), out, e.next_tag, i as u32));
        }
        for &v in topo.endpoints() {
            keys.push((host(v), rules.initial_tag));
        }
        keys.sort_unstable();
        keys.dedup();
        let positions = 2 * l + topo.node_count();
        let mut st_off = vec![0u32; positions + 1];
        for &(p, _) in &keys {
            st_off[p as usize + 1] += 1;
        }
        for i in 0..positions {
            st_off[i + 1] += st_off[i];
        }
        let st_tag: Vec<u32> = keys.iter().map(|&(_, t)| t).collect();
        let id = |k: (u32, u32)| keys.binary_search(&k).expect("every key is a state") as u32;
        let mut tr: Vec<(u32, ChannelId, u32, u32)> = raw
            .into_iter()
            .map(|(from, out, nt, i)| (id(from), out, id((out, nt)), i))
            .collect();
        tr.sort_unstable();
        let mut tr_off = vec![0u32; keys.len() + 1];
        for &(s, ..) in &tr {
            tr_off[s as usize + 1] += 1;
        }
        for i in 0..keys.len() {
            tr_off[i + 1] += tr_off[i];
        }
        let mut slot = vec![0u32; 2 * l];
        let mut trans_base = Vec::with_capacity(topo.node_count() + 1);
        let mut acc = 0u64;
        for v in 0..topo.node_count() as NodeId {
            trans_base.push(acc);
            let outs = topo.out_channels(v);
            for (i, &c) in outs.iter().enumerate() {
                slot[c as usize] = i as u32;
            }
            acc += (outs.len() as u64 + 1) * outs.len() as u64;
        }
        trans_base.push(acc);
        Compiled {
            links: l,
            st_off,
            st_tag,
            tr_off,
            tr: tr.into_iter().map(|(_, c, s, i)| (c, s, i)).collect(),
            initial_tag: rules.initial_tag,
            slot,
            trans_base,
        }
    }

    fn states(&self) -> usize {
        self.st_tag.len()
    }

    fn host_pos(&self, v: NodeId) -> u32 {
        (2 * self.links) as u32 + v
    }

    fn states_at(&self, pos: u32) -> std::ops::Range<u32> {
        self.st_off[pos as usize]..self.st_off[pos as usize + 1]
    }

    /// The state hosts at `v` inject.
    fn host_state(&self, v: NodeId) -> u32 {
        let r = self.states_at(self.host_pos(v));
        r.clone()
            .find(|&s| self.st_tag[s as usize] == self.initial_tag)
            .unwrap_or(NONE)
    }

    /// Calls `f(i, step)` for each channel `list[i]` (sorted): `step` is
    /// `(next state, entry)` of state `s` over it, or `None` when no rule
    /// matches (the packet goes lossy). One merge of two sorted lists.
    #[inline]
    fn each_step(&self, s: u32, list: &[ChannelId], mut f: impl FnMut(usize, Option<(u32, u32)>)) {
        let t: &[(ChannelId, u32, u32)] = if s == NONE {
            &[]
        } else {
            &self.tr[self.tr_off[s as usize] as usize..self.tr_off[s as usize + 1] as usize]
        };
        let mut j = 0;
        for (i, &c) in list.iter().enumerate() {
            while j < t.len() && t[j].0 < c {
                j += 1;
            }
            if j < t.len() && t[j].0 == c {
                f(i, Some((t[j].1, t[j].2)));
                j += 1;
            } else {
                f(i, None);
            }
        }
    }

    /// Bits in the transition index space.
    pub fn transitions(&self) -> u64 {
        *self.trans_base.last().unwrap_or(&0)
    }

    /// Index of the hop from position `pos` (an in channel of `v`, or its
    /// host ports) out over `c2` at node `v`.
    fn transition(&self, topo: &Topology, v: NodeId, pos: u32, c2: ChannelId) -> u64 {
        let deg = topo.degree(v) as u64;
        let in_slot = if pos as usize >= 2 * self.links {
            deg
        } else {
            self.slot[(pos ^ 1) as usize] as u64
        };
        self.trans_base[v as usize] + in_slot * deg + self.slot[c2 as usize] as u64
    }

    /// The in channel or host port a transition index leaves from, and the
    /// out channel (for the dependency graph; host hops return `None`).
    pub fn channels_of(&self, topo: &Topology, idx: u64) -> Option<(ChannelId, ChannelId)> {
        let v = self.trans_base.partition_point(|&b| b <= idx) - 1;
        let outs = topo.out_channels(v as NodeId);
        let deg = outs.len() as u64;
        let off = idx - self.trans_base[v];
        let (i, j) = (off / deg, off % deg);
        (i < deg).then(|| (outs[i as usize] ^ 1, outs[j as usize]))
    }
}

/// What one trial did, summed over destinations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Ordered endpoint pairs `(s, t)`, `s != t`.
    pub pairs: u64,
    /// Pairs with no route (an endpoint failed, or no path is left).
    pub pairs_disconnected: u64,
    /// Connected pairs all of whose routes stay lossless.
    pub pairs_lossless: u64,
    /// Routes (link sequences) over all pairs, and those that stay lossless.
    pub paths: u128,
    /// Of those, routes that stay lossless under the installed rules.
    pub lossless_paths: u128,
    /// A count passed `u64::MAX` somewhere (the totals are then lower
    /// bounds).
    pub saturated: bool,
    /// Used hops (`transition` indices) as a bitset: every channel
    /// transition a route takes.
    pub used: Vec<u64>,
    /// Hops where a lossless packet found no rule and went lossy.
    pub fallback: Vec<u64>,
    /// Rule entries a lossless packet used, as a bitset.
    pub entries: Vec<u64>,
}

fn set(bits: &mut [u64], i: u64) {
    bits[(i / 64) as usize] |= 1 << (i % 64);
}

fn or_into(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
}

/// Reusable per-destination buffers.
struct Work {
    dist_h: Vec<u32>,
    dist_d: Vec<u32>,
    order_h: Vec<NodeId>,
    order_d: Vec<NodeId>,
    /// Routes from a node to `t` over the degraded DAG.
    p_node: Vec<u64>,
    /// Lossless routes per state over the degraded DAG (tails).
    l_d: Vec<u64>,
    /// Local routing: routes per position and lossless per state from
    /// healthy mode.
    p_h: Vec<u64>,
    l_h: Vec<u64>,
    /// Of those, the routes (and lossless ones) whose length is the
    /// degraded distance: the ones a deflection onto the same channel
    /// would repeat.
    m_h: Vec<u64>,
    ml_h: Vec<u64>,
    /// Forward marks: states reached lossless, and positions reached at
    /// all / lossy, per mode (0 degraded, 1 healthy).
    reach_s: [Vec<bool>; 2],
    used_p: [Vec<bool>; 2],
    lossy_p: [Vec<bool>; 2],
    outs: Vec<ChannelId>,
    defl: Vec<ChannelId>,
    acc: Outcome,
}

/// Counts what trial `dead_links`/`dead_nodes` does to every route under
/// `routing`, with the rules `plan`.
pub fn analyze(
    topo: &Topology,
    plan: &Compiled,
    dead_links: &[bool],
    dead_nodes: &[bool],
    routing: Routing,
) -> Outcome {
    let n = topo.node_count();
    let positions = 2 * topo.link_count() + n;
    let tw = plan.transitions().div_ceil(64) as usize;
    let ew = plan
        .tr
        .iter()
        .map(|x| x.2 as usize + 1)
        .max()
        .unwrap_or(0)
        .div_ceil(64);
    let fresh = || Work {
        dist_h: Vec::new(),
        dist_d: Vec::new(),
        order_h: Vec::new(),
        order_d: Vec::new(),
        p_node: vec![0; n],
        l_d: vec![0; plan.states()],
        p_h: vec![0; positions],
        l_h: vec![0; plan.states()],
        m_h: vec![0; positions],
        ml_h: vec![0; plan.states()],
        reach_s: [vec![false; plan.states()], vec![false; plan.states()]],
        used_p: [vec![false; positions], vec![false; positions]],
        lossy_p: [vec![false; positions], vec![false; positions]],
        outs: Vec::new(),
        defl: Vec::new(),
        acc: Outcome {
            used: vec![0; tw],
            fallback: vec![0; tw],
            entries: vec![0; ew],
            ..Default::default()
        },
    };
    let eps = topo.endpoints();
    let parts: Vec<Outcome> = (0..eps.len())
        .into_par_iter()
        .fold(fresh, |mut w, i| {
            destination(topo, plan, dead_links, dead_nodes, routing, eps[i], &mut w);
            w
        })
        .map(|w| w.acc)
        .collect();
    let mut out = Outcome {
        used: vec![0; tw],
        fallback: vec![0; tw],
        entries: vec![0; ew],
        ..Default::default()
    };
    for p in parts {
        out.pairs += p.pairs;
        out.pairs_disconnected += p.pairs_disconnected;
        out.pairs_lossless += p.pairs_lossless;
        out.paths = out.paths.saturating_add(p.paths);
        out.lossless_paths = out.lossless_paths.saturating_add(p.lossless_paths);
        out.saturated |= p.saturated;
        or_into(&mut out.used, &p.used);
        or_into(&mut out.fallback, &p.fallback);
        or_into(&mut out.entries, &p.entries);
    }
    out
}

/// Breadth-first search from `t` over live links (all of them when
/// `dead` is `None`); nothing is reached from a failed `t`.
fn bfs(
    topo: &Topology,
    t: NodeId,
    dead: Option<(&[bool], &[bool])>,
    dist: &mut Vec<u32>,
    order: &mut Vec<NodeId>,
) {
    match dead {
        Some((_, nodes)) if nodes[t as usize] => {
            dist.clear();
            dist.resize(topo.node_count(), u32::MAX);
            order.clear();
        }
        Some((links, _)) => topo.bfs_live(t, |l| !links[l as usize], dist, order),
        None => topo.bfs(t, dist, order),
    }
}

fn add(a: u64, b: u64, sat: &mut bool) -> u64 {
    a.checked_add(b).unwrap_or_else(|| {
        *sat = true;
        u64::MAX
    })
}

#[allow(clippy::too_many_arguments)]
fn destination(
    topo: &Topology,
    plan: &Compiled,
    dead_links: &[bool],
    dead_nodes: &[bool],
    routing: Routing,
    t: NodeId,
    w: &mut Work,
) {
    let eps = topo.endpoints();
    let live = |c: ChannelId| !dead_links[(c >> 1) as usize];
    w.acc.pairs += eps.len() as u64 - 1;
    if dead_nodes[t as usize] {
        w.acc.pairs_disconnected += eps.len() as u64 - 1;
        return;
    }
    bfs(
        topo,
        t,
        Some((dead_links, dead_nodes)),
        &mut w.dist_d,
        &mut w.order_d,
    );
    if routing == Routing::Local {
        bfs(topo, t, None, &mut w.dist_h, &mut w.order_h);
    }
    let dd = std::mem::take(&mut w.dist_d);
    let dh = std::mem::take(&mut w.dist_h);
    let mut sat = false;
    // Degraded DAG out of v: live channels one step closer to t.
    let dag_out = |v: NodeId, outs: &mut Vec<ChannelId>| {
        outs.clear();
        let d = dd[v as usize];
        if d == u32::MAX || d == 0 {
            return;
        }
        for &c in topo.out_channels(v) {
            if live(c) && dd[topo.channel_dst(c) as usize] == d - 1 {
                outs.push(c);
            }
        }
    };
    // Backward pass over the degraded DAG: routes per node, lossless
    // routes per state on the DAG's channels and host ports (states on
    // other channels, where deflected packets enter, are summed when a
    // deflection needs them).
    let mut outs = std::mem::take(&mut w.outs);
    for &v in &w.order_d {
        dag_out(v, &mut outs);
        w.p_node[v as usize] = if v == t {
            1
        } else {
            outs.iter().fold(0, |a, &c| {
                add(a, w.p_node[topo.channel_dst(c) as usize], &mut sat)
            })
        };
        let dv = dd[v as usize];
        let ins = topo
            .out_channels(v)
            .iter()
            .map(|&c| c ^ 1)
            .filter(|&c| live(c) && dd[topo.channel_src(c) as usize] == dv.wrapping_add(1))
            .chain(std::iter::once(plan.host_pos(v)));
        for pos in ins {
            for s in plan.states_at(pos) {
                w.l_d[s as usize] = if v == t {
                    1
                } else {
                    let mut a = 0;
                    plan.each_step(s, &outs, |_, m| {
                        if let Some((s2, _)) = m {
                            a = add(a, w.l_d[s2 as usize], &mut sat);
                        }
                    });
                    a
                };
            }
        }
    }
    // Lossless routes of state `s2` on channel `c2` (into x) over the
    // degraded DAG, for a channel that may not be on it.
    let mut tail_outs = Vec::new();
    let mut tail_l = |s2: u32, c2: ChannelId, l_d: &[u64], sat: &mut bool| -> u64 {
        let x = topo.channel_dst(c2);
        if x == t {
            return 1;
        }
        dag_out(x, &mut tail_outs);
        let mut a = 0;
        plan.each_step(s2, &tail_outs, |_, m| {
            if let Some((s3, _)) = m {
                a = add(a, l_d[s3 as usize], sat);
            }
        });
        a
    };
    // Local routing: the healthy DAG, with deflection where a packet's
    // next link has failed.
    let mut defl = std::mem::take(&mut w.defl);
    // The deflection channels of a packet at v that came from `from`
    // (None: from a host).
    let deflect = |v: NodeId, from: Option<NodeId>, defl: &mut Vec<ChannelId>| {
        defl.clear();
        let mut best = u32::MAX;
        for &c in topo.out_channels(v) {
            let x = topo.channel_dst(c);
            if !live(c) || Some(x) == from {
                continue;
            }
            let d = dd[x as usize];
            if d < best {
                best = d;
                defl.clear();
            }
            if d == best && d != u32::MAX {
                defl.push(c);
            }
        }
        if best == u32::MAX {
            defl.clear();
        }
    };
    let healthy_out = |v: NodeId, outs: &mut Vec<ChannelId>| -> bool {
        outs.clear();
        let d = dh[v as usize];
        let mut failed = false;
        if d == u32::MAX || d == 0 {
            return false;
        }
        for &c in topo.out_channels(v) {
            if dh[topo.channel_dst(c) as usize] == d - 1 {
                if live(c) {
                    outs.push(c);
                } else {
                    failed = true;
                }
            }
        }
        failed
    };
    // Where packets in healthy mode enter v: live channels from one step
    // farther on the healthy DAG (with the node they came from), and v's
    // host ports.
    let dist_h: &[u32] = &dh;
    let healthy_ins = |v: NodeId| {
        let dv = dist_h[v as usize];
        topo.out_channels(v)
            .iter()
            .map(|&c| c ^ 1)
            .filter(move |&c| live(c) && dist_h[topo.channel_src(c) as usize] == dv + 1)
            .map(|c| (c, Some(topo.channel_src(c))))
            .chain(std::iter::once((plan.host_pos(v), None)))
    };
    if routing == Routing::Local {
        for &v in &w.order_h {
            if dead_nodes[v as usize] {
                continue;
            }
            let failed = healthy_out(v, &mut outs);
            let ddv = dd[v as usize];
            // Whether a route over `c2` from v has v's degraded distance.
            let tight =
                |c2: ChannelId| ddv != u32::MAX && dd[topo.channel_dst(c2) as usize] + 1 == ddv;
            for (pos, from) in healthy_ins(v) {
                if failed {
                    deflect(v, from, &mut defl);
                } else {
                    defl.clear();
                }
                let both = |c2: &ChannelId| outs.contains(c2);
                let p = pos as usize;
                if v == t {
                    w.p_h[p] = 1;
                    w.m_h[p] = 1;
                } else {
                    // A deflection over a channel the packet could also
                    // take healthy repeats the healthy routes over it that
                    // are degraded-shortest (m_h): counted once.
                    let mut a = 0;
                    let mut m = 0;
                    for &c2 in &outs {
                        a = add(a, w.p_h[c2 as usize], &mut sat);
                        if tight(c2) {
                            m = add(m, w.m_h[c2 as usize], &mut sat);
                        }
                    }
                    for c2 in defl.iter() {
                        let x = topo.channel_dst(*c2) as usize;
                        a = add(a, w.p_node[x], &mut sat);
                        if both(c2) {
                            a = a.saturating_sub(w.m_h[*c2 as usize]);
                        }
                        if tight(*c2) {
                            m = add(m, w.p_node[x], &mut sat);
                            if both(c2) {
                                m = m.saturating_sub(w.m_h[*c2 as usize]);
                            }
                        }
                    }
                    w.p_h[p] = a;
                    w.m_h[p] = m;
                }
                for s in plan.states_at(pos) {
                    let si = s as usize;
                    if v == t {
                        w.l_h[si] = 1;
                        w.ml_h[si] = 1;
                        continue;
                    }
                    let (mut a, mut m) = (0, 0);
                    plan.each_step(s, &outs, |i, step| {
                        if let Some((s2, _)) = step {
                            a = add(a, w.l_h[s2 as usize], &mut sat);
                            if tight(outs[i]) {
                                m = add(m, w.ml_h[s2 as usize], &mut sat);
                            }
                        }
                    });
                    plan.each_step(s, &defl, |i, step| {
                        if let Some((s2, _)) = step {
                            let c2 = defl[i];
                            let tail = tail_l(s2, c2, &w.l_d, &mut sat);
                            let over = if both(&c2) { w.ml_h[s2 as usize] } else { 0 };
                            a = add(a, tail, &mut sat).saturating_sub(over);
                            if tight(c2) {
                                m = add(m, tail, &mut sat).saturating_sub(over);
                            }
                        }
                    });
                    w.l_h[si] = a;
                    w.ml_h[si] = m;
                }
            }
        }
    }
    // Per source: its routes to t and the lossless ones.
    for &s in eps {
        if s == t {
            continue;
        }
        let hs = plan.host_state(s);
        let (total, lossless) = if dead_nodes[s as usize] {
            (0, 0)
        } else {
            match routing {
                Routing::Converged => (
                    if dd[s as usize] == u32::MAX {
                        0
                    } else {
                        w.p_node[s as usize]
                    },
                    if hs == NONE || dd[s as usize] == u32::MAX {
                        0
                    } else {
                        w.l_d[hs as usize]
                    },
                ),
                Routing::Local if dh[s as usize] == u32::MAX => (0, 0),
                Routing::Local => (
                    w.p_h[plan.host_pos(s) as usize],
                    if hs == NONE { 0 } else { w.l_h[hs as usize] },
                ),
            }
        };
        if total == 0 {
            w.acc.pairs_disconnected += 1;
            continue;
        }
        w.acc.paths = w.acc.paths.saturating_add(total as u128);
        w.acc.lossless_paths = w.acc.lossless_paths.saturating_add(lossless as u128);
        if lossless == total {
            w.acc.pairs_lossless += 1;
        }
    }
    // Forward passes: which states, hops and entries traffic uses. Mode 1
    // is healthy (local routing before a failure), mode 0 degraded.
    let sources = eps
        .iter()
        .copied()
        .filter(|&s| s != t && !dead_nodes[s as usize]);
    // Sources inject at their host ports: into healthy mode under local
    // routing, else straight into the degraded DAG (where one remains).
    let mode = usize::from(routing == Routing::Local);
    for s in sources {
        if mode == 0 && dd[s as usize] == u32::MAX {
            continue;
        }
        let hp = plan.host_pos(s) as usize;
        w.used_p[mode][hp] = true;
        match plan.host_state(s) {
            NONE => w.lossy_p[mode][hp] = true,
            hs => w.reach_s[mode][hs as usize] = true,
        }
    }
    if routing == Routing::Local {
        let order_h = std::mem::take(&mut w.order_h);
        for &v in order_h.iter().rev() {
            if v == t || dead_nodes[v as usize] {
                continue;
            }
            let failed = healthy_out(v, &mut outs);
            for (pos, from) in healthy_ins(v) {
                if !w.used_p[1][pos as usize] {
                    continue;
                }
                if failed {
                    deflect(v, from, &mut defl);
                } else {
                    defl.clear();
                }
                for (mode, list) in [(1usize, &outs), (0usize, &defl)] {
                    forward(topo, plan, v, pos, 1, mode, list, w);
                }
            }
        }
        w.order_h = order_h;
    }
    let order_d = std::mem::take(&mut w.order_d);
    for &v in order_d.iter().rev() {
        if v == t {
            continue;
        }
        dag_out(v, &mut outs);
        for i in 0..=topo.degree(v) {
            let pos = topo
                .out_channels(v)
                .get(i)
                .map_or(plan.host_pos(v), |&c| c ^ 1);
            if w.used_p[0][pos as usize] {
                forward(topo, plan, v, pos, 0, 0, &outs, w);
            }
        }
    }
    w.order_d = order_d;
    // Reset the marks for the next destination.
    for mode in 0..2 {
        w.reach_s[mode].fill(false);
        w.used_p[mode].fill(false);
        w.lossy_p[mode].fill(false);
    }
    w.acc.saturated |= sat;
    w.outs = outs;
    w.defl = defl;
    w.dist_d = dd;
    w.dist_h = dh;
}

/// Moves the traffic at position `pos` of node `v` (in mode `from_mode`)
/// over each channel of `list` into mode `to_mode`, marking hops, lossy
/// fallbacks and entries.
#[allow(clippy::too_many_arguments)]
fn forward(
    topo: &Topology,
    plan: &Compiled,
    v: NodeId,
    pos: u32,
    from_mode: usize,
    to_mode: usize,
    list: &[ChannelId],
    w: &mut Work,
) {
    let lossy_in = w.lossy_p[from_mode][pos as usize];
    for &c2 in list {
        let hop = plan.transition(topo, v, pos, c2);
        set(&mut w.acc.used, hop);
        w.used_p[to_mode][c2 as usize] = true;
        if lossy_in {
            w.lossy_p[to_mode][c2 as usize] = true;
        }
    }
    for s in plan.states_at(pos) {
        if !w.reach_s[from_mode][s as usize] {
            continue;
        }
        // The channels without an entry are where the packet falls back to
        // lossy.
        plan.each_step(s, list, |i, step| match step {
            Some((s2, e)) => {
                w.reach_s[to_mode][s2 as usize] = true;
                set(&mut w.acc.entries, e as u64);
            }
            None => {
                w.lossy_p[to_mode][list[i] as usize] = true;
                set(&mut w.acc.fallback, plan.transition(topo, v, pos, list[i]));
            }
        });
    }
}
