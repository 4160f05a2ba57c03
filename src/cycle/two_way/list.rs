//! The order-maintenance list that holds [`OrderedDag`]'s topological
//! order: a doubly linked list of vertices with `u64` labels, relabelled
//! in windows by Bender et al.'s density rule when a gap fills up.

use super::{GAP, NIL, OrderedDag};

impl OrderedDag {
    pub(super) fn unlink(&mut self, v: u32) {
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
    pub(super) fn link_after(&mut self, prev: u32, v: u32) {
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
    pub(super) fn insert_between(&mut self, p: u32, q: u32) {
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
    pub(super) fn relabel(&mut self, mut first: u32, mut last: u32, mut count: u64) {
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

    pub(super) fn place_front(&mut self, v: u32) {
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

    pub(super) fn place_back(&mut self, v: u32) {
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
}
