//! Read-only cycle probes: the two-way search with a thread's own marks
//! and frontiers, so that many edges are probed at once
//! ([`crate::cycle::IncrementalDag::try_add_edges`]).

use super::{NIL, OrderedDag, UNPLACED};
use crate::cycle::radix_heap::RadixHeap;

/// A read-only search's own marks and frontiers ([`OrderedDag::closes_cycle`]),
/// one per thread, shared by every graph the thread probes.
pub(super) struct Probe {
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
    pub(super) fn forget(&mut self) {
        self.anc_tail = NIL;
    }
}

thread_local! {
    pub(super) static PROBE: std::cell::RefCell<Probe> = std::cell::RefCell::new(Probe::default());
}

/// Edges probed in parallel at a time by [`OrderedDag::try_add_edges`]:
/// smaller blocks probe a graph closer to the one the edge meets, at more
/// fork-joins.
pub(super) const PROBE_BLOCK: usize = 1024;
/// Edges one task probes.
pub(super) const PROBE_TASK: usize = 256;

impl OrderedDag {
    /// Whether `b` reaches `a`, so that `a -> b` would close a cycle, in
    /// the graph as it is, changing nothing: the two-way search of
    /// [`OrderedDag::search`] with the thread's own marks, frontiers and
    /// known ancestors, so that many run at once.
    pub(super) fn closes_cycle(&self, a: u32, b: u32, p: &mut Probe) -> bool {
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
