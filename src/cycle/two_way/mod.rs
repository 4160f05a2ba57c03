//! Two-way ordered search over an order-maintenance list: incremental cycle
//! detection that moves only the vertices whose order must change.
//!
//! The order-maintenance list is in `list.rs`, the read-only probes that
//! test many edges at once in `probe.rs`, the oracle tests in `tests.rs`.

use super::IncrementalDag;
use super::arena::Adjacency;
use super::radix_heap::RadixHeap;
use probe::{PROBE, PROBE_BLOCK, PROBE_TASK};

mod list;
mod probe;

/// The search's per-vertex data: order label, search stamp, and the
/// ancestor epoch (in the padding the label leaves).
#[derive(Clone, Copy, Debug)]
struct Slot {
    label: u64,
    stamp: u32,
    anc: u32,
}

const NIL: u32 = u32::MAX;
/// Distance between labels given by lazy placement and order hints.
const GAP: u64 = 1 << 32;
const UNPLACED: u64 = u64::MAX;

/// Incremental cycle detection by two-way ordered search (Haeupler,
/// Kavitha, Mathew, Sen and Tarjan, "Incremental cycle detection,
/// topological ordering, and strong component maintenance", ACM TALG 8(1),
/// 2012, section 3), with the topological order kept in an
/// order-maintenance list (Bender, Cole, Demaine, Farach-Colton and Zito,
/// "Two simplified algorithms for maintaining order in a list", ESA 2002).
///
/// An edge `a -> b` with `a` before `b` is accepted in O(1). Otherwise a
/// forward search from `b` and a backward search from `a` run by turns, the
/// side that has scanned fewer arcs first; the forward search always
/// expands its lowest vertex in the order and the backward search its
/// highest, and both stop once the lowest forward vertex lies above the
/// highest backward one. A vertex reached by both sides proves a cycle.
/// Otherwise let `t` be `a` or, if lower, the lowest forward vertex left
/// unexpanded: when `t = a` the expanded forward vertices move just after
/// `a`; else the expanded backward vertices above `t`, then the expanded
/// forward vertices, move just before `t`. Only those vertices move, where
/// Pearce-Kelly ([`super::PearceKelly`]) searches and re-lays the whole
/// affected region; on the greedy workload that is most of its time.
///
/// Positions are `u64` labels in a doubly linked list, so a batch of
/// vertices fits into the gap before or after one vertex; when a gap is too
/// small, a window of the list around it is relabelled evenly, widened until
/// it holds at most `span^0.4` vertices for its label span (Bender et al.'s
/// density rule, read on the list). Vertices get a label when their first
/// edge arrives, as in [`super::PearceKelly`], or all at once from
/// [`IncrementalDag::hint_order`].
///
/// The frontiers are radix heaps (`RadixHeap`), which the searches'
/// monotone use allows, and ancestors of the tail found by one search are
/// kept for the next edges out of the same tail (see `search`).
///
/// Replaying the recorded greedy insertions (542k on Jellyfish-2000
/// `shortest`, 2.4M on `fattree:k=32` `kbounce:2`): 0.37x and 0.12x the time
/// of Pearce-Kelly, with identical answers; on Jellyfish-10000 (6.0M
/// insertions, 1.7M rejected) the radix heaps and kept ancestors took the
/// replay from 24.3 s to 19.9 s. Rejections are what is left: about 430
/// vertices touched each on Jellyfish-10000, bound by cache misses; greedy
/// finds most of them on all threads at once, ahead of the sequential
/// pass ([`IncrementalDag::try_add_edges`]).
///
/// Complexity: the paper bounds two-way search at O(m^{3/2}) arc
/// traversals over m insertions; the heaps add at most a log factor, and
/// relabelling is amortised O(log n) per moved vertex.
#[derive(Debug)]
pub struct OrderedDag {
    adj: Adjacency,
    slot: Vec<Slot>,
    /// Per placed vertex, its neighbours `[prev, next]` in the order.
    link: Vec<[u32; 2]>,
    head: u32,
    tail: u32,
    stamp: u32,
    /// Forward frontier by label; backward by complemented label.
    fheap: RadixHeap,
    bheap: RadixHeap,
    /// Expanded vertices: forward in rising label order, backward falling.
    fe: Vec<u32>,
    be: Vec<u32>,
    moved: Vec<u32>,
    /// Windows relabelled so far (tests make sure they happen).
    relabels: u64,
    /// The tail of the last searched edge, and the epoch whose mark in
    /// [`Slot::anc`] means "known ancestor of it".
    anc_tail: u32,
    anc_epoch: u32,
}

/// What [`OrderedDag::search`] found.
enum Search {
    /// `b` reaches `a`: the edge closes a cycle.
    Cycle,
    /// The search ran past its bound of work.
    GaveUp,
    /// No cycle; the reorder pivots on this vertex.
    Pivot(u32),
}

impl OrderedDag {
    fn label(&self, v: u32) -> u64 {
        self.slot[v as usize].label
    }

    /// Two-way ordered search for `a -> b` with `label(b) < label(a)`:
    /// [`Search::Cycle`] when `b` reaches `a`, else the vertex the reorder
    /// pivots on (`a` itself, or the lowest forward vertex left unexpanded).
    ///
    /// Greedy asks a run of edges out of the same tail `a` (its keys are
    /// sorted), and every vertex a backward search reaches is an ancestor of
    /// `a`. Edges out of `a` give `a` no new ancestor (that would be a
    /// cycle), so ancestors found by earlier searches of the run stay
    /// ancestors: they are kept as a mark, and a forward search that meets
    /// one has found a cycle (Jellyfish-10000 replay: 0.90x the time).
    ///
    /// A search that has scanned more than `work` arcs without an answer
    /// stops with [`Search::GaveUp`]; the graph is as it was (the ancestors
    /// it marked are ancestors still).
    fn search(&mut self, a: u32, b: u32, work: usize) -> Search {
        if self.stamp >= u32::MAX - 2 {
            for x in &mut self.slot {
                x.stamp = 0;
            }
            self.stamp = 0;
        }
        self.stamp += 2;
        let (sf, sb) = (self.stamp, self.stamp + 1);
        if self.anc_tail != a {
            if self.anc_epoch == u32::MAX {
                for x in &mut self.slot {
                    x.anc = 0;
                }
                self.anc_epoch = 0;
            }
            self.anc_epoch += 1;
            self.anc_tail = a;
        }
        let anc = self.anc_epoch;
        if self.slot[b as usize].anc == anc {
            return Search::Cycle;
        }
        let (la, lb) = (self.label(a), self.label(b));
        self.fheap.clear(lb);
        self.bheap.clear(!la);
        self.fe.clear();
        self.be.clear();
        self.slot[b as usize].stamp = sf;
        self.slot[a as usize].stamp = sb;
        self.slot[a as usize].anc = anc;
        self.fheap.push(lb, b);
        self.bheap.push(!la, a);
        let (node, out, inn, slot) = (&self.adj.node, &self.adj.out, &self.adj.inn, &mut self.slot);
        // The side whose first vertex has fewer edges goes first: an edge
        // into a class's hub (traffic classes), with thousands of out-edges,
        // is settled by the tail's few ancestors.
        let first_back = node[b as usize].out.len > node[a as usize].inn.len;
        let (mut fscan, mut bscan) = (usize::from(first_back), 0usize);
        while let (Some((fl, u)), Some((bl, z))) = (self.fheap.peek(), self.bheap.peek()) {
            if fl > !bl {
                break;
            }
            if fscan + bscan > work {
                return Search::GaveUp;
            }
            if fscan <= bscan {
                self.fheap.pop();
                self.fe.push(u);
                let l = out.list(node[u as usize].out);
                fscan += l.len() + 1;
                for &w in l {
                    let x = &mut slot[w as usize];
                    if x.stamp == sb || x.anc == anc {
                        return Search::Cycle;
                    }
                    if x.stamp != sf && x.label < la {
                        x.stamp = sf;
                        self.fheap.push(x.label, w);
                    }
                }
            } else {
                self.bheap.pop();
                self.be.push(z);
                let l = inn.list(node[z as usize].inn);
                bscan += l.len() + 1;
                for &y in l {
                    let x = &mut slot[y as usize];
                    if x.stamp == sf {
                        return Search::Cycle;
                    }
                    if x.stamp != sb && x.label > lb {
                        x.stamp = sb;
                        x.anc = anc;
                        self.bheap.push(!x.label, y);
                    }
                }
            }
        }
        Search::Pivot(match self.fheap.peek() {
            Some((fl, u)) if fl < la => u,
            _ => a,
        })
    }
}

impl IncrementalDag for OrderedDag {
    fn with_vertices(n: usize) -> Self {
        OrderedDag {
            adj: Adjacency::new(n),
            slot: vec![
                Slot {
                    label: UNPLACED,
                    stamp: 0,
                    anc: 0,
                };
                n
            ],
            link: vec![[NIL, NIL]; n],
            head: NIL,
            tail: NIL,
            stamp: 0,
            fheap: RadixHeap::default(),
            bheap: RadixHeap::default(),
            fe: Vec::new(),
            be: Vec::new(),
            moved: Vec::new(),
            relabels: 0,
            anc_tail: NIL,
            anc_epoch: 0,
        }
    }

    fn try_add_edge(&mut self, a: u32, b: u32) -> bool {
        self.try_add_edge_within(a, b, usize::MAX)
    }

    fn try_add_edge_within(&mut self, a: u32, b: u32, work: usize) -> bool {
        if a == b {
            return false;
        }
        if self.label(a) == UNPLACED {
            self.place_front(a);
        }
        if self.label(b) == UNPLACED {
            self.place_back(b);
        }
        if self.label(a) < self.label(b) {
            if !self.adj.contains(a, b) {
                self.adj.push(a, b);
            }
            return true;
        }
        let Search::Pivot(t) = self.search(a, b, work) else {
            return false;
        };
        let mut moved = std::mem::take(&mut self.moved);
        moved.clear();
        if t == a {
            // Every forward vertex lies below `a`: they go just after it.
            moved.extend_from_slice(&self.fe);
            for &v in &moved {
                self.unlink(v);
            }
            self.moved = moved;
            let q = self.link[a as usize][1];
            self.insert_between(a, q);
        } else {
            // Backward vertices above the pivot, then the forward ones, go
            // just before it.
            let lt = self.label(t);
            let above = self.be.iter().take_while(|&&v| self.label(v) > lt).count();
            moved.extend(self.be[..above].iter().rev());
            moved.extend_from_slice(&self.fe);
            for &v in &moved {
                self.unlink(v);
            }
            self.moved = moved;
            let p = self.link[t as usize][0];
            self.insert_between(p, t);
        }
        self.adj.push(a, b);
        true
    }

    /// Graphs only grow, so an edge that closes a cycle in the graph as it
    /// was closes one in every later graph. A block of edges is probed in
    /// parallel against the graph before it (a read-only two-way search),
    /// then taken in turn: an edge refused by its probe is refused without
    /// a search, the others are tried as [`IncrementalDag::try_add_edge`]
    /// would. Every answer is the one the edges in turn get; refusals,
    /// most of the search work on Jellyfish, spread over the threads.
    fn try_add_edges(&mut self, edges: &[(u32, u32)]) -> Vec<bool> {
        use rayon::prelude::*;
        // On one thread a probe only repeats the search the edge gets
        // anyway (fat-tree k=8 greedy: +25% instructions).
        if rayon::current_num_threads() == 1 {
            return edges
                .iter()
                .map(|&(a, b)| self.try_add_edge(a, b))
                .collect();
        }
        let mut out = Vec::with_capacity(edges.len());
        let mut refused: Vec<bool> = Vec::with_capacity(PROBE_BLOCK);
        for block in edges.chunks(PROBE_BLOCK) {
            let me = &*self;
            refused.clear();
            refused.resize(block.len(), false);
            // Runs of one tail stay in one task, which keeps their known
            // ancestors.
            block
                .par_chunks(PROBE_TASK)
                .zip(refused.par_chunks_mut(PROBE_TASK))
                .for_each(|(edges, no)| {
                    PROBE.with_borrow_mut(|p| {
                        p.forget();
                        for (&(a, b), no) in edges.iter().zip(no) {
                            *no = me.closes_cycle(a, b, p);
                        }
                    })
                });
            for (&(a, b), &no) in block.iter().zip(&refused) {
                out.push(!no && self.try_add_edge(a, b));
            }
        }
        out
    }

    fn hint_order(&mut self, rank: &[u32]) {
        if self.adj.edges() > 0 || rank.len() != self.slot.len() || self.head != NIL {
            return;
        }
        let mut v: Vec<u32> = (0..rank.len() as u32).collect();
        v.sort_unstable_by_key(|&x| (rank[x as usize], x));
        // Labels from 2^62 up, GAP apart unless that would pass 2^63 (over
        // 2^30 vertices), leaving room at both ends for lazy placement.
        let gap = GAP.min((1 << 62) / (v.len() as u64 + 1));
        let mut prev = NIL;
        for (i, &x) in v.iter().enumerate() {
            self.slot[x as usize].label = (1 << 62) + i as u64 * gap;
            self.link_after(prev, x);
            prev = x;
        }
        self.tail = prev;
    }

    /// Where each tail's edges are one run of `edges` (the traffic
    /// classes' plan dependencies, sorted by key), the lists are built at
    /// once (`Adjacency::from_runs`) and the order is taken from them:
    /// every edge then goes forward, an O(1) accept, so the lists, labels
    /// and order are those the edges in turn leave.
    fn from_acyclic(n: usize, edges: &[(u32, u32)]) -> Option<Self> {
        let Some(adj) = Adjacency::from_runs(n, edges) else {
            return super::from_acyclic_in_turn(n, edges);
        };
        // Kahn's order as `topological_order` takes it, smallest ready id
        // first (repeats, gone here, would only be peeled as often).
        let indeg: Vec<u32> = adj.node.iter().map(|x| x.inn.len).collect();
        let order = super::topo_order::kahn_order(
            indeg,
            |v| adj.out.list(adj.node[v as usize].out).iter().copied(),
            |_| 0,
        );
        let rank = super::rank_of(&order, n)?;
        let mut d = Self::with_vertices(n);
        d.hint_order(&rank);
        d.adj = adj;
        Some(d)
    }

    fn has_edge(&self, a: u32, b: u32) -> bool {
        self.adj.contains(a, b)
    }

    fn remove_edge(&mut self, a: u32, b: u32) {
        // A topological order stays valid when edges go, so labels stay;
        // known ancestors may not.
        self.adj.remove(a, b);
        self.anc_tail = NIL;
    }

    fn edge_count(&self) -> usize {
        self.adj.edges()
    }

    fn add_vertex(&mut self) -> u32 {
        self.slot.push(Slot {
            label: UNPLACED,
            stamp: 0,
            anc: 0,
        });
        self.link.push([NIL, NIL]);
        self.adj.add_vertex()
    }

    fn heap_bytes(&self) -> u64 {
        use crate::budget::bytes_of;
        self.adj.heap_bytes()
            + bytes_of::<Slot>(self.slot.capacity())
            + bytes_of::<[u32; 2]>(self.link.capacity())
            + bytes_of::<u32>(self.fe.capacity() + self.be.capacity() + self.moved.capacity())
    }
}

#[cfg(test)]
mod tests;
