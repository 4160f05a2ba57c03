//! Adjacency lists for the incremental DAGs, laid out for searches: one
//! array per direction holding every list in a power-of-two block, found
//! through a small record per vertex, instead of one heap allocation per
//! list (a search touches a few hundred vertices scattered over the graph,
//! and each `Vec` header is one more cache miss).

/// A graph's edges as out- and in-lists, the part every search reads.
#[derive(Debug)]
pub(super) struct Adjacency {
    pub(super) node: Vec<Node>,
    pub(super) out: Arena,
    pub(super) inn: Arena,
    edges: usize,
}

impl Adjacency {
    pub(super) fn new(n: usize) -> Self {
        Adjacency {
            node: vec![Node::default(); n],
            out: Arena::default(),
            inn: Arena::default(),
            edges: 0,
        }
    }

    /// The graph of `edges` on vertices `0..n` when each tail's edges are
    /// one run of `edges` (`None` otherwise): the lists and blocks that
    /// pushing each edge in turn (repeats skipped) leaves, built in two
    /// sequential passes instead of a push per edge, which on ten million
    /// edges scattered over the vertices was a cache miss or two each
    /// (fat-tree k=64's traffic classes).
    pub(super) fn from_runs(n: usize, edges: &[(u32, u32)]) -> Option<Self> {
        let mut node = vec![Node::default(); n];
        // A run's heads so far: `last[b] == a` while in `a`'s run.
        let mut last = vec![u32::MAX; n];
        let mut ran = vec![false; n];
        let mut prev = u32::MAX;
        for &(a, b) in edges {
            if a != prev {
                if std::mem::replace(&mut ran[a as usize], true) {
                    return None;
                }
                prev = a;
            }
            if std::mem::replace(&mut last[b as usize], a) != a {
                node[a as usize].out.len += 1;
                node[b as usize].inn.len += 1;
            }
        }
        drop(ran);
        let mut out = Arena::laid_out(node.iter_mut().map(|x| &mut x.out));
        let mut inn = Arena::laid_out(node.iter_mut().map(|x| &mut x.inn));
        for x in &mut node {
            x.out.len = 0;
            x.inn.len = 0;
        }
        last.fill(u32::MAX);
        for &(a, b) in edges {
            if std::mem::replace(&mut last[b as usize], a) != a {
                out.put(&mut node[a as usize].out, b);
                inn.put(&mut node[b as usize].inn, a);
            }
        }
        let edges = node.iter().map(|x| x.out.len as usize).sum();
        Some(Adjacency {
            node,
            out,
            inn,
            edges,
        })
    }

    /// Adds `a -> b`, which must be absent.
    pub(super) fn push(&mut self, a: u32, b: u32) {
        self.out.push(&mut self.node[a as usize].out, b);
        self.inn.push(&mut self.node[b as usize].inn, a);
        self.edges += 1;
    }

    /// Scans the shorter of `a`'s out-list and `b`'s in-list: a hub with
    /// thousands of out-edges is asked about one of its heads in the time
    /// that head's few in-edges take.
    pub(super) fn contains(&self, a: u32, b: u32) -> bool {
        let (out, inn) = (self.node[a as usize].out, self.node[b as usize].inn);
        if out.len <= inn.len {
            self.out.list(out).contains(&b)
        } else {
            self.inn.list(inn).contains(&a)
        }
    }

    /// Adds a vertex without edges; its id.
    pub(super) fn add_vertex(&mut self) -> u32 {
        self.node.push(Node::default());
        u32::try_from(self.node.len() - 1).expect("vertex ids fit u32")
    }

    pub(super) fn remove(&mut self, a: u32, b: u32) {
        if self.out.remove(&mut self.node[a as usize].out, b) {
            let found = self.inn.remove(&mut self.node[b as usize].inn, a);
            debug_assert!(found, "in and out lists agree");
            self.edges -= 1;
        }
    }

    pub(super) fn edges(&self) -> usize {
        self.edges
    }

    /// Heap bytes held: the per-vertex spans and both arenas (capacity,
    /// free blocks included).
    pub(super) fn heap_bytes(&self) -> u64 {
        use crate::budget::bytes_of;
        bytes_of::<Node>(self.node.capacity())
            + bytes_of::<u32>(self.out.data.capacity() + self.inn.data.capacity())
    }
}

/// Where a vertex's out- and in-lists lie.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Node {
    pub(super) out: Span,
    pub(super) inn: Span,
}

/// A list in an [`Arena`]: `len` entries at `off`, in a block of at least
/// [`Span::cap`] (more after a removal).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Span {
    off: u32,
    pub(super) len: u32,
}

impl Span {
    fn cap(self) -> u32 {
        if self.len == 0 {
            0
        } else {
            self.len.next_power_of_two().max(4)
        }
    }
}

/// Adjacency lists in one array, each in a power-of-two block that moves to
/// a block twice its size when full; vacated blocks are reused by size.
#[derive(Debug, Default)]
pub(super) struct Arena {
    data: Vec<u32>,
    /// Free block offsets by log2 of their size.
    free: Vec<Vec<u32>>,
}

impl Arena {
    pub(super) fn list(&self, s: Span) -> &[u32] {
        &self.data[s.off as usize..(s.off + s.len) as usize]
    }

    /// An arena with a block for each span's `len` entries (the block a
    /// list of that length grown by pushes sits in), the spans' offsets set
    /// to them in turn; the entries are left to fill.
    fn laid_out<'a>(spans: impl Iterator<Item = &'a mut Span>) -> Arena {
        let mut at = 0u64;
        for s in spans {
            s.off = u32::try_from(at).expect("adjacency arena past 2^32 entries");
            at += u64::from(s.cap());
        }
        Arena {
            data: vec![0; at as usize],
            free: Vec::new(),
        }
    }

    /// Appends `x` to a list laid out with room for it.
    fn put(&mut self, s: &mut Span, x: u32) {
        self.data[(s.off + s.len) as usize] = x;
        s.len += 1;
    }

    fn push(&mut self, s: &mut Span, x: u32) {
        let old_cap = s.cap();
        if s.len == old_cap {
            let cap = (old_cap * 2).max(4);
            let class = cap.trailing_zeros() as usize;
            let off = match self.free.get_mut(class).and_then(Vec::pop) {
                Some(off) => off,
                None => {
                    let off = self.data.len();
                    self.data.resize(off + cap as usize, 0);
                    u32::try_from(off).expect("adjacency arena past 2^32 entries")
                }
            };
            self.data
                .copy_within(s.off as usize..(s.off + s.len) as usize, off as usize);
            if old_cap > 0 {
                let old = old_cap.trailing_zeros() as usize;
                if self.free.len() <= old {
                    self.free.resize_with(old + 1, Vec::new);
                }
                self.free[old].push(s.off);
            }
            s.off = off;
        }
        self.data[(s.off + s.len) as usize] = x;
        s.len += 1;
    }

    /// Removes `x` from the list (order not kept); false when absent.
    fn remove(&mut self, s: &mut Span, x: u32) -> bool {
        let l = &mut self.data[s.off as usize..(s.off + s.len) as usize];
        match l.iter().position(|&y| y == x) {
            Some(i) => {
                l.swap(i, l.len() - 1);
                s.len -= 1;
                true
            }
            None => false,
        }
    }
}
