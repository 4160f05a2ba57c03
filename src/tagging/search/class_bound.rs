//! Traffic classes in the local search: what the orders cost a switch that
//! installs them with port maps (see [`crate::tagging::traffic`]).
//!
//! In an order plan, packets arriving at node `v` on in channel `c` with
//! tag `t` leave on out channel `o` with tag `t` when `c` comes before `o`
//! in order `t`, and `t + 1` otherwise. So the egress function of such a
//! packet depends only on the *gap* of `c` among `v`'s out channels in
//! order `t` (how many of them are not after it): in-channels in one gap
//! can share a traffic class, with every port, ELP or not, decided by the
//! order (a dependency that points forward in the order closes no cycle).
//! The classes a node needs are then at most the gaps its in channels
//! occupy, summed over the orders, with its host ports in the first gap of
//! the first order (hosts send with the first tag, and a first-gap member
//! keeps it on every port). That bound is what the search counts: its
//! excess over the budget, per node, is part of the objective, moved away
//! like a violated path (with a weight that rises where it resists). It
//! counts every in channel at every order, whether a packet arrives there
//! with that tag or not, and every out channel as a boundary.
//!
//! The plan found is classified as any other afterwards, from its keys
//! alone (the orders are not part of a rules file), and that first fit
//! can need more classes than the bound where its completions at one node
//! stray from the orders and then block those at another. The driver
//! checks each plan whose bound fits with the classification and holds the
//! nodes still over to a lower bound.

use tagger_generators::{ChannelId, NodeId, Topology};

/// Ports below which [`ClassState::gaps`] works on the stack.
const SMALL: usize = 128;

/// The class bound of every node and the nodes over the budget.
#[derive(Debug)]
pub(super) struct ClassState<'a> {
    /// The network: each node's out channels (its in channels are their
    /// reverses) and whether hosts hang off it.
    topo: &'a Topology,
    /// Per node: classes its bound may have.
    budget: Vec<u32>,
    /// The bound per node under the current orders.
    count: Vec<u32>,
    /// Per node: how much one class over the budget weighs.
    pub(super) weight: Vec<u32>,
    /// Nodes over the budget, and each one's index in it.
    over: Vec<u32>,
    slot: Vec<u32>,
    /// Classes over the budget, summed over the nodes.
    pub(super) excess: u64,
}

/// A channel put somewhere else in one order: `(order, channel, doubled
/// position)`, compared with the others' doubled positions.
pub(super) type Moved = (usize, ChannelId, u64);

impl<'a> ClassState<'a> {
    /// The bound of every node of `topo` under orders `pos`, held to
    /// `budget` classes a node.
    pub(super) fn new(topo: &'a Topology, pos: &[Vec<u64>], budget: u32) -> Self {
        let nodes = topo.node_count();
        let mut s = ClassState {
            topo,
            budget: vec![budget; nodes],
            count: vec![0; nodes],
            weight: vec![1; nodes],
            over: Vec::new(),
            slot: vec![u32::MAX; nodes],
            excess: 0,
        };
        for v in 0..nodes as NodeId {
            s.update(pos, v);
        }
        s
    }

    /// Out channels of `v`.
    pub(super) fn outs(&self, v: NodeId) -> &'a [ChannelId] {
        self.topo.out_channels(v)
    }

    /// The two nodes a move of channel `c` changes the bound of: the one it
    /// enters (where it is an in channel) and the one it leaves (where it
    /// is a boundary).
    pub(super) fn ends(&self, c: ChannelId) -> [NodeId; 2] {
        [self.topo.channel_dst(c), self.topo.channel_src(c)]
    }

    /// Nodes over the budget.
    pub(super) fn over(&self) -> &[u32] {
        &self.over
    }

    /// Gaps node `v`'s in channels occupy among its out channels in order
    /// `t` (positions `o`), with `moved` at its new place where it is in
    /// this order.
    pub(super) fn gaps(&self, o: &[u64], t: usize, v: NodeId, moved: Option<Moved>) -> u32 {
        self.gaps_below(o, t, v, moved, SMALL)
    }

    /// [`ClassState::gaps`], on the stack for nodes of fewer than `small`
    /// (at most [`SMALL`]) ports (tests: both ways agree).
    fn gaps_below(
        &self,
        o: &[u64],
        t: usize,
        v: NodeId,
        moved: Option<Moved>,
        small: usize,
    ) -> u32 {
        let at = |ch: ChannelId| -> u64 {
            match moved {
                Some((mt, mc, x2)) if mt == t && mc == ch => x2,
                _ => 2 * o[ch as usize],
            }
        };
        let outs = self.outs(v);
        let host = t == 0 && self.topo.node(v).is_endpoint();
        // The hot path of a class-held search's move costs: a node of
        // fewer than `small` ports sorts its bounds on the stack and marks
        // its gaps in a stack bit set, without allocating; larger ones
        // take both from the heap.
        let (mut stack_bounds, mut heap_bounds) = ([0u64; SMALL], Vec::new());
        let (mut stack_seen, mut heap_seen) = ([0u64; SMALL / 64], Vec::new());
        let (bounds, seen): (&mut [u64], &mut [u64]) = if outs.len() < small.min(SMALL) {
            (&mut stack_bounds[..outs.len()], &mut stack_seen[..])
        } else {
            heap_bounds.resize(outs.len(), 0);
            heap_seen.resize(outs.len() / 64 + 1, 0);
            (&mut heap_bounds[..], &mut heap_seen[..])
        };
        for (x, &c) in bounds.iter_mut().zip(outs) {
            *x = at(c);
        }
        bounds.sort_unstable();
        seen[0] |= u64::from(host);
        // A gap is the count of out channels not after the in channel
        // (ties: not after, so the tag moves up, as the orders decide).
        for &c in outs {
            let x = at(c ^ 1);
            let g = bounds.partition_point(|&b| b <= x);
            seen[g / 64] |= 1 << (g % 64);
        }
        seen.iter().map(|w| w.count_ones()).sum()
    }

    /// Node `v`'s bound under orders `pos` with `moved`.
    pub(super) fn bound(&self, pos: &[Vec<u64>], v: NodeId, moved: Option<Moved>) -> u32 {
        pos.iter()
            .enumerate()
            .map(|(t, o)| self.gaps(o, t, v, moved))
            .sum()
    }

    /// Node `v`'s bound now.
    pub(super) fn count(&self, v: NodeId) -> u32 {
        self.count[v as usize]
    }

    /// Classes over node `v`'s budget a bound of `n` has.
    pub(super) fn excess_of(&self, v: NodeId, n: u32) -> u32 {
        n.saturating_sub(self.budget[v as usize])
    }

    /// Holds node `v`'s bound to `n` classes (at least one) from now on:
    /// where the classification needs `k` more than the budget at a node
    /// whose bound fits, the bound is held `k` lower.
    pub(super) fn tighten(&mut self, pos: &[Vec<u64>], v: NodeId, n: u32) {
        self.excess -= u64::from(self.excess_of(v, self.count(v)));
        self.budget[v as usize] = n.max(1);
        self.excess += u64::from(self.excess_of(v, self.count(v)));
        // Keeps the list of nodes over the budget.
        self.update(pos, v);
    }

    /// Node `v`'s bound computed again under `pos` (after a move).
    pub(super) fn update(&mut self, pos: &[Vec<u64>], v: NodeId) {
        let n = self.bound(pos, v, None);
        let (old, new) = (self.excess_of(v, self.count(v)), self.excess_of(v, n));
        self.count[v as usize] = n;
        self.excess = self.excess - u64::from(old) + u64::from(new);
        let vi = v as usize;
        let was = self.slot[vi] != u32::MAX;
        if new > 0 && !was {
            self.slot[vi] = self.over.len() as u32;
            self.over.push(v);
        } else if new == 0 && was {
            let at = self.slot[vi] as usize;
            let last = *self.over.last().expect("v is in the list");
            self.over.swap_remove(at);
            if last != v {
                self.slot[last as usize] = at as u32;
            }
            self.slot[vi] = u32::MAX;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn topo() -> Topology {
        crate::TopologySpec::parse("jellyfish:n=12,ports=6,r=4,seed=2")
            .unwrap()
            .build()
            .unwrap()
    }

    /// The oracle: the classes of node `v` in order form, one per distinct
    /// egress function (the out channels a packet keeps its tag on), the
    /// hosts' (every port) in the first order.
    fn functions(topo: &Topology, pos: &[Vec<u64>], v: NodeId) -> u32 {
        let outs = topo.out_channels(v);
        let mut total = 0;
        for (t, o) in pos.iter().enumerate() {
            let mut fs: Vec<Vec<bool>> = outs
                .iter()
                .map(|&i| {
                    let c = i ^ 1;
                    outs.iter()
                        .map(|&x| o[c as usize] < o[x as usize])
                        .collect()
                })
                .collect();
            if t == 0 && topo.node(v).is_endpoint() {
                fs.push(vec![true; outs.len()]);
            }
            fs.sort();
            fs.dedup();
            total += fs.len() as u32;
        }
        total
    }

    proptest! {
        /// The bound counts the distinct egress functions, and follows a
        /// channel moved, before the move and after it.
        #[test]
        fn the_bound_counts_egress_functions(
            raw in proptest::collection::vec(0u64..6, 2 * 48),
            moved in (0u32..48, 0usize..2, 0u64..14),
            budget in 1u32..8,
        ) {
            let t = topo();
            let n = t.channel_count();
            prop_assert_eq!(n, 48);
            let mut pos: Vec<Vec<u64>> = raw.chunks(n).map(<[u64]>::to_vec).collect();
            let mut s = ClassState::new(&t, &pos, budget);
            let mut excess = 0;
            for v in 0..t.node_count() as NodeId {
                prop_assert_eq!(s.count(v), functions(&t, &pos, v));
                for (k, o) in pos.iter().enumerate() {
                    prop_assert_eq!(s.gaps(o, k, v, None), s.gaps_below(o, k, v, None, 0));
                }
                excess += u64::from(s.count(v).saturating_sub(budget));
            }
            prop_assert_eq!(s.excess, excess);
            // Scored at a doubled position, then made.
            let (c, o, x2) = moved;
            for v in s.ends(c) {
                let scored = s.bound(&pos, v, Some((o, c, x2)));
                let mut after = pos.clone();
                // An odd doubled position sits between two integers: the
                // oracle's positions are doubled to hold it.
                for order in &mut after {
                    for x in order.iter_mut() {
                        *x *= 2;
                    }
                }
                after[o][c as usize] = x2;
                prop_assert_eq!(scored, functions(&t, &after, v));
            }
            pos[o][c as usize] = x2 / 2;
            for v in s.ends(c) {
                s.update(&pos, v);
            }
            let fresh = ClassState::new(&t, &pos, budget);
            prop_assert_eq!(&s.count, &fresh.count);
            prop_assert_eq!(s.excess, fresh.excess);
            let mut over = s.over().to_vec();
            over.sort_unstable();
            prop_assert_eq!(over, fresh.over().to_vec());
        }
    }
}
