//! One destination's replay: a backward pass per DAG (degraded, and under
//! local routing the healthy one) counting routes and lossless routes per
//! state, the per-source totals, then a forward pass marking what traffic
//! uses.

use super::{NONE, Trial, Work, add, bfs};
use crate::bits::set_bit;
use crate::failures::spec::Routing;
use tagger_generators::{ChannelId, NodeId};

/// A destination `t` of a trial: the distances to it over the degraded
/// network (`dd`) and, under local routing, over the healthy one (`dh`).
struct Dest<'a> {
    trial: &'a Trial<'a>,
    t: NodeId,
    dd: Vec<u32>,
    dh: Vec<u32>,
}

/// Counts every route to `t` under the trial into `w.acc`, and marks the
/// hops, fallbacks and entries its traffic uses.
pub(super) fn destination(trial: &Trial, t: NodeId, w: &mut Work) {
    let (topo, dead_nodes) = (trial.topo, trial.dead_nodes);
    let pairs = topo.endpoints().len() as u64 - 1;
    w.acc.pairs += pairs;
    if dead_nodes[t as usize] {
        w.acc.pairs_disconnected += pairs;
        return;
    }
    let dead = Some((trial.dead_links, dead_nodes));
    bfs(topo, t, dead, &mut w.dist_d, &mut w.order_d);
    let local = trial.routing == Routing::Local;
    if local {
        bfs(topo, t, None, &mut w.dist_h, &mut w.order_h);
    }
    let d = Dest {
        trial,
        t,
        dd: std::mem::take(&mut w.dist_d),
        dh: std::mem::take(&mut w.dist_h),
    };
    let mut sat = false;
    d.count_degraded(w, &mut sat);
    if local {
        d.count_healthy(w, &mut sat);
    }
    d.count_sources(w);
    d.mark_sources(w);
    if local {
        d.mark_healthy(w);
    }
    d.mark_degraded(w);
    // Reset the marks for the next destination.
    for mode in 0..2 {
        w.reach_s[mode].fill(false);
        w.used_p[mode].fill(false);
        w.lossy_p[mode].fill(false);
    }
    w.acc.saturated |= sat;
    w.dist_d = d.dd;
    w.dist_h = d.dh;
}

impl Dest<'_> {
    fn live(&self, c: ChannelId) -> bool {
        !self.trial.dead_links[(c >> 1) as usize]
    }

    /// The degraded DAG out of `v`: live channels one step closer to `t`.
    fn dag_out(&self, v: NodeId, outs: &mut Vec<ChannelId>) {
        let topo = self.trial.topo;
        outs.clear();
        let d = self.dd[v as usize];
        if d == u32::MAX || d == 0 {
            return;
        }
        for &c in topo.out_channels(v) {
            if self.live(c) && self.dd[topo.channel_dst(c) as usize] == d - 1 {
                outs.push(c);
            }
        }
    }

    /// The healthy DAG out of `v` (live channels only), and whether one of
    /// its channels has failed.
    fn healthy_out(&self, v: NodeId, outs: &mut Vec<ChannelId>) -> bool {
        let topo = self.trial.topo;
        outs.clear();
        let d = self.dh[v as usize];
        let mut failed = false;
        if d == u32::MAX || d == 0 {
            return false;
        }
        for &c in topo.out_channels(v) {
            if self.dh[topo.channel_dst(c) as usize] == d - 1 {
                if self.live(c) {
                    outs.push(c);
                } else {
                    failed = true;
                }
            }
        }
        failed
    }

    /// Where packets in healthy mode enter `v`: live channels from one
    /// step farther on the healthy DAG (with the node they came from), and
    /// `v`'s host ports.
    fn healthy_ins(&self, v: NodeId) -> impl Iterator<Item = (u32, Option<NodeId>)> + '_ {
        let topo = self.trial.topo;
        let dv = self.dh[v as usize];
        topo.out_channels(v)
            .iter()
            .map(|&c| c ^ 1)
            .filter(move |&c| self.live(c) && self.dh[topo.channel_src(c) as usize] == dv + 1)
            .map(move |c| (c, Some(topo.channel_src(c))))
            .chain(std::iter::once((self.trial.plan.host_pos(v), None)))
    }

    /// The deflection channels of a packet at `v` that came from `from`
    /// (`None`: from a host): the live ones nearest `t` on the degraded
    /// network, not back.
    fn deflect(&self, v: NodeId, from: Option<NodeId>, defl: &mut Vec<ChannelId>) {
        let topo = self.trial.topo;
        defl.clear();
        let mut best = u32::MAX;
        for &c in topo.out_channels(v) {
            let x = topo.channel_dst(c);
            if !self.live(c) || Some(x) == from {
                continue;
            }
            let d = self.dd[x as usize];
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
    }

    /// Lossless routes of state `s2` on channel `c2` over the degraded
    /// DAG, for a channel that may not be on it.
    fn tail(
        &self,
        s2: u32,
        c2: ChannelId,
        l_d: &[u64],
        outs: &mut Vec<ChannelId>,
        sat: &mut bool,
    ) -> u64 {
        let x = self.trial.topo.channel_dst(c2);
        if x == self.t {
            return 1;
        }
        self.dag_out(x, outs);
        let mut a = 0;
        self.trial.plan.each_step(s2, outs, |_, m| {
            if let Some((s3, _)) = m {
                a = add(a, l_d[s3 as usize], sat);
            }
        });
        a
    }

    /// Backward pass over the degraded DAG: routes per node, lossless
    /// routes per state on the DAG's channels and host ports (states on
    /// other channels, where deflected packets enter, are summed when a
    /// deflection needs them).
    fn count_degraded(&self, w: &mut Work, sat: &mut bool) {
        let (topo, plan, t) = (self.trial.topo, self.trial.plan, self.t);
        let mut outs = std::mem::take(&mut w.outs);
        for &v in &w.order_d {
            self.dag_out(v, &mut outs);
            w.p_node[v as usize] = if v == t {
                1
            } else {
                outs.iter().fold(0, |a, &c| {
                    add(a, w.p_node[topo.channel_dst(c) as usize], sat)
                })
            };
            let dv = self.dd[v as usize];
            let ins = topo
                .out_channels(v)
                .iter()
                .map(|&c| c ^ 1)
                .filter(|&c| {
                    self.live(c) && self.dd[topo.channel_src(c) as usize] == dv.wrapping_add(1)
                })
                .chain(std::iter::once(plan.host_pos(v)));
            for pos in ins {
                for s in plan.states_at(pos) {
                    w.l_d[s as usize] = if v == t {
                        1
                    } else {
                        let mut a = 0;
                        plan.each_step(s, &outs, |_, m| {
                            if let Some((s2, _)) = m {
                                a = add(a, w.l_d[s2 as usize], sat);
                            }
                        });
                        a
                    };
                }
            }
        }
        w.outs = outs;
    }

    /// Backward pass over the healthy DAG under local routing, with
    /// deflection where a packet's next link has failed: routes per
    /// position and lossless routes per state.
    fn count_healthy(&self, w: &mut Work, sat: &mut bool) {
        let (outs, defl) = (std::mem::take(&mut w.outs), std::mem::take(&mut w.defl));
        let (mut outs, mut defl, mut tail_outs) = (outs, defl, Vec::new());
        let order_h = std::mem::take(&mut w.order_h);
        for &v in &order_h {
            if self.trial.dead_nodes[v as usize] {
                continue;
            }
            let failed = self.healthy_out(v, &mut outs);
            for (pos, from) in self.healthy_ins(v) {
                if failed {
                    self.deflect(v, from, &mut defl);
                } else {
                    defl.clear();
                }
                let lists = Lists {
                    v,
                    outs: &outs,
                    defl: &defl,
                };
                self.routes_at(&lists, pos, w, sat);
                self.lossless_at(&lists, pos, w, &mut tail_outs, sat);
            }
        }
        w.order_h = order_h;
        w.outs = outs;
        w.defl = defl;
    }

    /// Whether a route over `c2` from `v` has `v`'s degraded distance.
    fn tight(&self, v: NodeId, c2: ChannelId) -> bool {
        let ddv = self.dd[v as usize];
        ddv != u32::MAX && self.dd[self.trial.topo.channel_dst(c2) as usize] + 1 == ddv
    }

    /// Routes (and degraded-shortest routes) from position `pos` of `v` in
    /// healthy mode: over its healthy channels and its deflections.
    fn routes_at(&self, l: &Lists, pos: u32, w: &mut Work, sat: &mut bool) {
        let p = pos as usize;
        if l.v == self.t {
            w.p_h[p] = 1;
            w.m_h[p] = 1;
            return;
        }
        // A deflection over a channel the packet could also take healthy
        // repeats the healthy routes over it that are degraded-shortest
        // (m_h): counted once.
        let mut a = 0;
        let mut m = 0;
        for &c2 in l.outs {
            a = add(a, w.p_h[c2 as usize], sat);
            if self.tight(l.v, c2) {
                m = add(m, w.m_h[c2 as usize], sat);
            }
        }
        for &c2 in l.defl {
            let x = self.trial.topo.channel_dst(c2) as usize;
            let both = l.outs.contains(&c2);
            a = add(a, w.p_node[x], sat);
            if both {
                a = a.saturating_sub(w.m_h[c2 as usize]);
            }
            if self.tight(l.v, c2) {
                m = add(m, w.p_node[x], sat);
                if both {
                    m = m.saturating_sub(w.m_h[c2 as usize]);
                }
            }
        }
        w.p_h[p] = a;
        w.m_h[p] = m;
    }

    /// Lossless routes (and degraded-shortest ones) per state at position
    /// `pos` of `v` in healthy mode.
    fn lossless_at(
        &self,
        l: &Lists,
        pos: u32,
        w: &mut Work,
        tail_outs: &mut Vec<ChannelId>,
        sat: &mut bool,
    ) {
        let plan = self.trial.plan;
        for s in plan.states_at(pos) {
            let si = s as usize;
            if l.v == self.t {
                w.l_h[si] = 1;
                w.ml_h[si] = 1;
                continue;
            }
            let (mut a, mut m) = (0, 0);
            plan.each_step(s, l.outs, |i, step| {
                if let Some((s2, _)) = step {
                    a = add(a, w.l_h[s2 as usize], sat);
                    if self.tight(l.v, l.outs[i]) {
                        m = add(m, w.ml_h[s2 as usize], sat);
                    }
                }
            });
            plan.each_step(s, l.defl, |i, step| {
                if let Some((s2, _)) = step {
                    let c2 = l.defl[i];
                    let tail = self.tail(s2, c2, &w.l_d, tail_outs, sat);
                    let over = if l.outs.contains(&c2) {
                        w.ml_h[s2 as usize]
                    } else {
                        0
                    };
                    a = add(a, tail, sat).saturating_sub(over);
                    if self.tight(l.v, c2) {
                        m = add(m, tail, sat).saturating_sub(over);
                    }
                }
            });
            w.l_h[si] = a;
            w.ml_h[si] = m;
        }
    }

    /// Per source: its routes to `t` and the lossless ones.
    fn count_sources(&self, w: &mut Work) {
        let (plan, dead_nodes, dd) = (self.trial.plan, self.trial.dead_nodes, &self.dd);
        for &s in self.trial.topo.endpoints() {
            if s == self.t {
                continue;
            }
            let hs = plan.host_state(s);
            let (total, lossless) = if dead_nodes[s as usize] {
                (0, 0)
            } else {
                match self.trial.routing {
                    Routing::Converged if dd[s as usize] == u32::MAX => (0, 0),
                    Routing::Converged => (
                        w.p_node[s as usize],
                        if hs == NONE { 0 } else { w.l_d[hs as usize] },
                    ),
                    Routing::Local if self.dh[s as usize] == u32::MAX => (0, 0),
                    Routing::Local => (
                        w.p_h[plan.host_pos(s) as usize],
                        if hs == NONE { 0 } else { w.l_h[hs as usize] },
                    ),
                }
            };
            let acc = &mut w.acc;
            if total == 0 {
                acc.pairs_disconnected += 1;
                continue;
            }
            acc.paths = acc.paths.saturating_add(total as u128);
            acc.lossless_paths = acc.lossless_paths.saturating_add(lossless as u128);
            if lossless == total {
                acc.pairs_lossless += 1;
            }
        }
    }

    /// Sources inject at their host ports: into healthy mode (1) under
    /// local routing, else straight into the degraded DAG (0, where one
    /// remains).
    fn mark_sources(&self, w: &mut Work) {
        let plan = self.trial.plan;
        let mode = usize::from(self.trial.routing == Routing::Local);
        for &s in self.trial.topo.endpoints() {
            if s == self.t || self.trial.dead_nodes[s as usize] {
                continue;
            }
            if mode == 0 && self.dd[s as usize] == u32::MAX {
                continue;
            }
            let hp = plan.host_pos(s) as usize;
            w.used_p[mode][hp] = true;
            match plan.host_state(s) {
                NONE => w.lossy_p[mode][hp] = true,
                hs => w.reach_s[mode][hs as usize] = true,
            }
        }
    }

    /// Forward over the healthy DAG (local routing): traffic that meets a
    /// failure moves to the degraded DAG over its deflections.
    fn mark_healthy(&self, w: &mut Work) {
        let (mut outs, mut defl) = (std::mem::take(&mut w.outs), std::mem::take(&mut w.defl));
        let order_h = std::mem::take(&mut w.order_h);
        for &v in order_h.iter().rev() {
            if v == self.t || self.trial.dead_nodes[v as usize] {
                continue;
            }
            let failed = self.healthy_out(v, &mut outs);
            for (pos, from) in self.healthy_ins(v) {
                if !w.used_p[1][pos as usize] {
                    continue;
                }
                if failed {
                    self.deflect(v, from, &mut defl);
                } else {
                    defl.clear();
                }
                for (mode, list) in [(1usize, &outs), (0usize, &defl)] {
                    self.forward(v, pos, (1, mode), list, w);
                }
            }
        }
        w.order_h = order_h;
        w.outs = outs;
        w.defl = defl;
    }

    /// Forward over the degraded DAG.
    fn mark_degraded(&self, w: &mut Work) {
        let (topo, plan) = (self.trial.topo, self.trial.plan);
        let mut outs = std::mem::take(&mut w.outs);
        let order_d = std::mem::take(&mut w.order_d);
        for &v in order_d.iter().rev() {
            if v == self.t {
                continue;
            }
            self.dag_out(v, &mut outs);
            for i in 0..=topo.degree(v) {
                let pos = topo
                    .out_channels(v)
                    .get(i)
                    .map_or(plan.host_pos(v), |&c| c ^ 1);
                if w.used_p[0][pos as usize] {
                    self.forward(v, pos, (0, 0), &outs, w);
                }
            }
        }
        w.order_d = order_d;
        w.outs = outs;
    }

    /// Moves the traffic at position `pos` of node `v` from mode
    /// `modes.0` over each channel of `list` into mode `modes.1`, marking
    /// hops, lossy fallbacks and entries.
    fn forward(
        &self,
        v: NodeId,
        pos: u32,
        modes: (usize, usize),
        list: &[ChannelId],
        w: &mut Work,
    ) {
        let (topo, plan) = (self.trial.topo, self.trial.plan);
        let (from_mode, to_mode) = modes;
        let lossy_in = w.lossy_p[from_mode][pos as usize];
        for &c2 in list {
            let hop = plan.transition(topo, v, pos, c2);
            set_bit(&mut w.acc.used, hop as usize);
            w.used_p[to_mode][c2 as usize] = true;
            if lossy_in {
                w.lossy_p[to_mode][c2 as usize] = true;
            }
        }
        for s in plan.states_at(pos) {
            if !w.reach_s[from_mode][s as usize] {
                continue;
            }
            // The channels without an entry are where the packet falls back
            // to lossy.
            plan.each_step(s, list, |i, step| match step {
                Some((s2, e)) => {
                    w.reach_s[to_mode][s2 as usize] = true;
                    set_bit(&mut w.acc.entries, e as usize);
                }
                None => {
                    w.lossy_p[to_mode][list[i] as usize] = true;
                    let hop = plan.transition(topo, v, pos, list[i]);
                    set_bit(&mut w.acc.fallback, hop as usize);
                }
            });
        }
    }
}

/// A node's channels in healthy mode: the healthy DAG's live ones and the
/// deflections.
struct Lists<'a> {
    v: NodeId,
    outs: &'a [ChannelId],
    defl: &'a [ChannelId],
}
