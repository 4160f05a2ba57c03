//! Two-way ordered search over an order-maintenance list: incremental cycle
//! detection that moves only the vertices whose order must change.
//!
//! One file past 600 lines on purpose: the order-maintenance list, the
//! two-way search and their oracle tests are one algorithm whose invariants are
//! read together.

use super::IncrementalDag;
use super::arena::Adjacency;
use super::radix_heap::RadixHeap;

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

    fn unlink(&mut self, v: u32) {
        let [p, n] = self.link[v as usize];
        if p == NIL {
            self.head = n;
        } else {
            self.link[p as usize][1] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.link[n as usize][0] = p;
        }
    }

    /// Links `v` after `prev` (`NIL`: at the head), leaving its successor
    /// to the caller.
    fn link_after(&mut self, prev: u32, v: u32) {
        self.link[v as usize] = [prev, NIL];
        if prev == NIL {
            self.head = v;
        } else {
            self.link[prev as usize][1] = v;
        }
    }

    /// Links `moved` (in order) between `p` and `q` (adjacent in the
    /// order, either may be `NIL`) and labels them, relabelling a window
    /// around them when the gap is too small.
    fn insert_between(&mut self, p: u32, q: u32) {
        let moved = std::mem::take(&mut self.moved);
        let k = moved.len() as u64;
        if k == 0 {
            self.moved = moved;
            return;
        }
        let mut prev = p;
        for &v in &moved {
            self.link_after(prev, v);
            prev = v;
        }
        let last = prev;
        self.link[last as usize][1] = q;
        if q == NIL {
            self.tail = last;
        } else {
            self.link[q as usize][0] = last;
        }
        let lo = if p == NIL { 0 } else { self.label(p) };
        let hi = if q == NIL { u64::MAX } else { self.label(q) };
        if hi - lo > k {
            let step = (hi - lo) / (k + 1);
            for (i, &v) in moved.iter().enumerate() {
                self.slot[v as usize].label = lo + step * (i as u64 + 1);
            }
        } else {
            self.relabel(moved[0], last, k);
        }
        self.moved = moved;
    }

    /// Spreads the labels of a window of the order that contains the
    /// segment `first..=last` (`k` vertices), widening it until its label
    /// range is sparse enough (Bender et al.'s density rule on a list).
    fn relabel(&mut self, mut first: u32, mut last: u32, mut count: u64) {
        self.relabels += 1;
        loop {
            let lo = match self.link[first as usize][0] {
                NIL => 0,
                p => self.label(p),
            };
            let hi = match self.link[last as usize][1] {
                NIL => u64::MAX,
                n => self.label(n),
            };
            let span = hi - lo;
            let whole = self.link[first as usize][0] == NIL && self.link[last as usize][1] == NIL;
            // A window may hold at most span^0.4 vertices, so small
            // windows keep wide gaps and relabelling stays rare.
            if whole || (count + 1) as f64 <= (span as f64).powf(0.4) {
                let step = span / (count + 1);
                let mut v = first;
                let mut l = lo;
                loop {
                    l += step;
                    self.slot[v as usize].label = l;
                    if v == last {
                        break;
                    }
                    v = self.link[v as usize][1];
                }
                return;
            }
            let grow = count.max(1);
            for _ in 0..grow {
                let p = self.link[first as usize][0];
                if p == NIL {
                    break;
                }
                first = p;
                count += 1;
            }
            for _ in 0..grow {
                let n = self.link[last as usize][1];
                if n == NIL {
                    break;
                }
                last = n;
                count += 1;
            }
        }
    }

    fn place_front(&mut self, v: u32) {
        if self.head != NIL && self.label(self.head) > GAP {
            let h = self.head;
            self.slot[v as usize].label = self.label(h) - GAP;
            self.link[v as usize] = [NIL, h];
            self.link[h as usize][0] = v;
            self.head = v;
            return;
        }
        self.moved.clear();
        self.moved.push(v);
        let h = self.head;
        if h == NIL {
            self.slot[v as usize].label = 1 << 63;
            self.link[v as usize] = [NIL, NIL];
            self.head = v;
            self.tail = v;
            return;
        }
        self.insert_between(NIL, h);
    }

    fn place_back(&mut self, v: u32) {
        if self.tail != NIL && self.label(self.tail) < u64::MAX - GAP {
            let t = self.tail;
            self.slot[v as usize].label = self.label(t) + GAP;
            self.link[v as usize] = [t, NIL];
            self.link[t as usize][1] = v;
            self.tail = v;
            return;
        }
        self.moved.clear();
        self.moved.push(v);
        if self.tail == NIL {
            self.slot[v as usize].label = 1 << 63;
            self.link[v as usize] = [NIL, NIL];
            self.head = v;
            self.tail = v;
            return;
        }
        let t = self.tail;
        self.insert_between(t, NIL);
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

/// A read-only search's own marks and frontiers ([`OrderedDag::closes_cycle`]),
/// one per thread, shared by every graph the thread probes.
struct Probe {
    /// Per vertex: search stamp, and the epoch whose mark means "known
    /// ancestor of `anc_tail`" (as [`Slot`] has them).
    marks: Vec<[u32; 2]>,
    cur: u32,
    anc_tail: u32,
    anc_epoch: u32,
    fheap: RadixHeap,
    bheap: RadixHeap,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            marks: Vec::new(),
            cur: 0,
            anc_tail: NIL,
            anc_epoch: 0,
            fheap: RadixHeap::default(),
            bheap: RadixHeap::default(),
        }
    }
}

impl Probe {
    /// Forgets the known ancestors: they hold for one graph as it is.
    fn forget(&mut self) {
        self.anc_tail = NIL;
    }
}

thread_local! {
    static PROBE: std::cell::RefCell<Probe> = std::cell::RefCell::new(Probe::default());
}

/// Edges probed in parallel at a time by [`OrderedDag::try_add_edges`]:
/// smaller blocks probe a graph closer to the one the edge meets, at more
/// fork-joins.
const PROBE_BLOCK: usize = 1024;
/// Edges one task probes.
const PROBE_TASK: usize = 256;

impl OrderedDag {
    /// Whether `b` reaches `a`, so that `a -> b` would close a cycle, in
    /// the graph as it is, changing nothing: the two-way search of
    /// [`OrderedDag::search`] with the thread's own marks, frontiers and
    /// known ancestors, so that many run at once.
    fn closes_cycle(&self, a: u32, b: u32, p: &mut Probe) -> bool {
        if a == b {
            return true;
        }
        let (la, lb) = (self.label(a), self.label(b));
        // A vertex without edges has no label yet, and `b` after `a` in a
        // topological order cannot reach it.
        if la == UNPLACED || lb == UNPLACED || la < lb {
            return false;
        }
        if p.marks.len() < self.slot.len() {
            p.marks.resize(self.slot.len(), [0, 0]);
        }
        if p.cur >= u32::MAX - 2 {
            p.marks.iter_mut().for_each(|m| m[0] = 0);
            p.cur = 0;
        }
        p.cur += 2;
        let (sf, sb) = (p.cur, p.cur + 1);
        // Ancestors of the tail found by earlier probes of the same graph
        // stay ancestors (see `search`).
        if p.anc_tail != a {
            if p.anc_epoch == u32::MAX {
                p.marks.iter_mut().for_each(|m| m[1] = 0);
                p.anc_epoch = 0;
            }
            p.anc_epoch += 1;
            p.anc_tail = a;
        }
        let anc = p.anc_epoch;
        if p.marks[b as usize][1] == anc {
            return true;
        }
        p.fheap.clear(lb);
        p.bheap.clear(!la);
        p.marks[b as usize][0] = sf;
        p.marks[a as usize] = [sb, anc];
        p.fheap.push(lb, b);
        p.bheap.push(!la, a);
        let (node, out, inn) = (&self.adj.node, &self.adj.out, &self.adj.inn);
        let (mut fscan, mut bscan) = (0usize, 0usize);
        while let (Some((fl, u)), Some((bl, z))) = (p.fheap.peek(), p.bheap.peek()) {
            if fl > !bl {
                break;
            }
            if fscan <= bscan {
                p.fheap.pop();
                let l = out.list(node[u as usize].out);
                fscan += l.len() + 1;
                for &w in l {
                    let [st, wa] = p.marks[w as usize];
                    if st == sb || wa == anc {
                        return true;
                    }
                    let lw = self.slot[w as usize].label;
                    if st != sf && lw < la {
                        p.marks[w as usize][0] = sf;
                        p.fheap.push(lw, w);
                    }
                }
            } else {
                p.bheap.pop();
                let l = inn.list(node[z as usize].inn);
                bscan += l.len() + 1;
                for &y in l {
                    let st = p.marks[y as usize][0];
                    if st == sf {
                        return true;
                    }
                    let ly = self.slot[y as usize].label;
                    if st != sb && ly > lb {
                        p.marks[y as usize] = [sb, anc];
                        p.bheap.push(!ly, y);
                    }
                }
            }
        }
        false
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
mod tests {
    use super::*;
    use crate::cycle::NaiveDag;

    /// The list runs from `head` to `tail` through every placed vertex with
    /// rising labels, and every edge points up the order.
    fn check_order(d: &OrderedDag) {
        let mut seen = 0;
        let (mut v, mut prev_label) = (d.head, None);
        while v != NIL {
            let l = d.label(v);
            assert!(
                prev_label.is_none_or(|p| p < l),
                "labels rise along the list"
            );
            prev_label = Some(l);
            seen += 1;
            v = d.link[v as usize][1];
        }
        let placed = d.slot.iter().filter(|s| s.label != UNPLACED).count();
        assert_eq!(seen, placed, "the list holds every placed vertex");
        for a in 0..d.slot.len() as u32 {
            for &b in d.adj.out.list(d.adj.node[a as usize].out) {
                assert!(d.label(a) < d.label(b), "edge {a} -> {b} points down");
            }
        }
    }

    /// A bounded check gives up on a long walk, with the graph as it was,
    /// and answers as the full check does when the walk is short.
    #[test]
    fn bounded_checks_give_up_with_the_graph_unchanged() {
        // Two paths, q = 0 -> ... -> m-1 laid out before p = m -> ... ->
        // 2m-1: an edge from p's end to q's start closes no cycle, and
        // its check walks both paths.
        let m = 500u32;
        let mut d = OrderedDag::with_vertices(2 * m as usize);
        let rank: Vec<u32> = (0..2 * m).collect();
        d.hint_order(&rank);
        for v in (1..2 * m).filter(|&v| v != m) {
            assert!(d.try_add_edge(v - 1, v));
        }
        let edges = d.edge_count();
        assert!(!d.try_add_edge_within(2 * m - 1, 0, 64), "gave up");
        assert!(!d.has_edge(2 * m - 1, 0));
        assert_eq!(d.edge_count(), edges);
        check_order(&d);
        assert!(d.try_add_edge_within(2 * m - 1, 0, 1 << 20));
        assert!(d.has_edge(2 * m - 1, 0));
        check_order(&d);
        // Short checks answer as in full: a cycle of three, an edge
        // present already, a forward edge.
        assert!(!d.try_add_edge_within(3, 1, 64));
        assert!(d.try_add_edge_within(0, 1, 64));
        assert!(d.try_add_edge_within(m, m + 5, 64));
        check_order(&d);
    }

    /// Moving vertex after vertex into the gap behind one vertex halves the
    /// gap each time, so the windowed relabelling runs many times.
    #[test]
    fn repeated_moves_into_one_gap_relabel() {
        let m = 300u32;
        let (a, z) = (m, m + 1);
        let mut d = OrderedDag::with_vertices(m as usize + 2);
        let rank: Vec<u32> = (0..m + 2).collect();
        d.hint_order(&rank);
        let mut o = NaiveDag::with_vertices(m as usize + 2);
        assert!(d.try_add_edge(a, z) && o.try_add_edge(a, z));
        for v in 0..m {
            assert!(d.try_add_edge(a, v));
            assert!(o.try_add_edge(a, v));
            // And a chain among the moved ones, in the direction the
            // moves reverse.
            if v > 0 {
                assert_eq!(d.try_add_edge(v, v - 1), o.try_add_edge(v, v - 1));
            }
        }
        for v in 0..m {
            assert_eq!(d.try_add_edge(v, a), o.try_add_edge(v, a), "{v} -> {a}");
        }
        check_order(&d);
        assert_eq!(d.edge_count(), o.edge_count());
        assert!(d.relabels > 0, "the gap ran out at least once");
    }

    /// Edges in runs sharing a tail, as greedy asks them (where known
    /// ancestors are reused), with removals between runs that must drop
    /// them, against the oracle.
    #[test]
    fn runs_of_one_tail_match_the_oracle() {
        let n = 300u32;
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rnd = move |m: u32| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % u64::from(m)) as u32
        };
        let mut d = OrderedDag::with_vertices(n as usize);
        let mut o = NaiveDag::with_vertices(n as usize);
        let mut kept = Vec::new();
        let mut rejected = 0;
        for round in 0..40 {
            let mut edges: Vec<(u32, u32)> = (0..200).map(|_| (rnd(n), rnd(n))).collect();
            edges.sort_unstable();
            for (a, b) in edges {
                let ok = d.try_add_edge(a, b);
                assert_eq!(ok, o.try_add_edge(a, b), "round {round}: {a} -> {b}");
                if ok {
                    kept.push((a, b));
                } else {
                    rejected += 1;
                }
                // Removing an edge into the run's tail (or above it) takes
                // ancestors away mid-run.
                if rnd(8) == 0 {
                    let into_a: Vec<usize> = (0..kept.len()).filter(|&i| kept[i].1 == a).collect();
                    let i = match into_a.first() {
                        Some(&i) => i,
                        None => rnd(kept.len() as u32) as usize,
                    };
                    let (x, y) = kept.swap_remove(i);
                    d.remove_edge(x, y);
                    o.remove_edge(x, y);
                }
            }
        }
        check_order(&d);
        assert_eq!(d.edge_count(), o.edge_count());
        assert!(rejected > 1000, "only {rejected} rejections");
    }

    /// A removal drops the ancestors known for the current tail: after
    /// `2 -> 3` goes, `2` no longer reaches `3`, so `3 -> 2` is acyclic
    /// even though a search from tail `3` saw `2` as an ancestor.
    #[test]
    fn removal_forgets_known_ancestors() {
        let mut d = OrderedDag::with_vertices(4);
        d.hint_order(&[0, 1, 2, 3]);
        assert!(d.try_add_edge(0, 1));
        assert!(d.try_add_edge(2, 3));
        // Searches forward from 0 and backward from 3, meeting nothing.
        assert!(d.try_add_edge(3, 0));
        d.remove_edge(2, 3);
        assert!(d.try_add_edge(3, 2));
        assert!(!d.try_add_edge(2, 3));
        check_order(&d);
    }

    /// Random insertions on a few hundred vertices, lazily placed, against
    /// the oracle, with the order checked at the end.
    #[test]
    fn random_insertions_match_the_oracle() {
        let n = 400;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as u32
        };
        let mut d = OrderedDag::with_vertices(n);
        let mut o = NaiveDag::with_vertices(n);
        for i in 0..6000 {
            let (a, b) = (rnd(), rnd());
            assert_eq!(
                d.try_add_edge(a, b),
                o.try_add_edge(a, b),
                "insertion {i}: {a} -> {b}"
            );
        }
        check_order(&d);
        assert_eq!(d.edge_count(), o.edge_count());
    }

    /// Batches probed in parallel give the answers of one edge at a time
    /// (the oracle's), over several blocks, with runs of one tail, repeated
    /// edges and self-loops, on graphs lazily placed and hinted; and the
    /// probes refuse only what the oracle refuses.
    #[test]
    fn batches_match_one_edge_at_a_time() {
        let n = 500u32;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool");
        let mut x: u64 = 0x0bad_5eed_1234_5678;
        let mut rnd = move |m: u32| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % u64::from(m)) as u32
        };
        for hinted in [false, true] {
            let mut d = OrderedDag::with_vertices(n as usize);
            if hinted {
                let rank: Vec<u32> = (0..n).map(|v| (v * 7919) % n).collect();
                d.hint_order(&rank);
            }
            let mut o = NaiveDag::with_vertices(n as usize);
            let (mut refused, mut probed) = (0, 0);
            for round in 0..6 {
                let len = [1, 700, PROBE_BLOCK, 3 * PROBE_BLOCK + 5][round % 4];
                let mut edges: Vec<(u32, u32)> = (0..len).map(|_| (rnd(n), rnd(n))).collect();
                edges.sort_unstable();
                let probe = PROBE.with_borrow_mut(|p| {
                    p.forget();
                    edges
                        .iter()
                        .map(|&(a, b)| d.closes_cycle(a, b, p))
                        .collect::<Vec<_>>()
                });
                // Two threads, or the probes are skipped.
                let got = pool.install(|| d.try_add_edges(&edges));
                for (i, &(a, b)) in edges.iter().enumerate() {
                    let want = o.try_add_edge(a, b);
                    assert_eq!(got[i], want, "round {round}, edge {i}: {a} -> {b}");
                    assert!(!(probe[i] && want), "probe refused {a} -> {b}");
                    refused += usize::from(!want);
                    probed += usize::from(probe[i]);
                }
                check_order(&d);
            }
            assert_eq!(d.edge_count(), o.edge_count());
            assert!(refused > 1000, "only {refused} refusals");
            // Most refusals close a cycle through edges of earlier blocks.
            assert!(probed > refused / 2, "{probed} of {refused} probed");
        }
    }
}
