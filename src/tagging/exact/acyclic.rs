//! Acyclicity inside the SAT search: a theory for BatSat that keeps, per
//! graph, the edges whose literals the solver has made true acyclic.
//!
//! `exact` asks "do P priorities suffice?" with one keep literal per
//! priority and transition: true puts the transition's dependency into that
//! priority's graph, which must stay acyclic. Without a theory the solver
//! sees acyclicity only through clauses: it finds a whole model, the cycles
//! of the model become clauses ("not all of these keep"), and it starts
//! again. On random paths (Jellyfish) those rounds run into the thousands.
//! Here the solver is told about a cycle the moment its last edge becomes
//! true, learns from it like from any conflict, and goes on without
//! restarting.
//!
//! The theory also propagates (Gebser, Janhunen and Rintanen's
//! acyclicity propagator): when an edge `a -> b` becomes true, every
//! undecided edge `y -> x` with `y` reachable from `b` and `x` reaching `a`
//! would close a cycle, so it is made false at once, explained by the path
//! `x ~> a -> b ~> y` (kept until the level it was made at is undone). The
//! searches stop at [`REACH`] nodes a side, and the nodes and candidates
//! they look at count as work, sixteen to an edge, for the first try's
//! bound. Measured against conflicts alone (2026-11-27, `exact` from the
//! same start, seconds of the tag stage): Jellyfish 64/8 r=4 seed 11
//! `shortest` 2 priorities in 28-31 s against 112 s; Jellyfish 60/8 r=4
//! seed 3 2 in 16-21 s where 30 s did not settle it; Jellyfish 250/64 and
//! 300/64 r=12, fat-tree k=4 and leaf-spine 8x4 proofs the same answers in
//! about the same time (the table in docs/priorities.md). A version
//! measured on 2026-11-25 cost five times the time per conflict and was
//! dropped; what changed is the bound on the searches and their charge
//! to the work bound. The candidates are scanned from whichever side has
//! fewer, in the forward search's order either way, and the adjacency
//! lists carry each edge's other end: `auto`'s solver step on 64/8 seed
//! 11 took 23.3 s instead of 28.1 s for the same plan.
//!
//! Each graph keeps a topological order of its true edges as they arrive
//! (Pearce-Kelly: an edge that agrees with the order costs O(1); otherwise
//! the region between its ends is searched, and either a cycle is found or
//! the region is reordered). Backtracking removes edges in the reverse order
//! they came, and a topological order of a graph is one of every subgraph,
//! so removal costs O(1) and never reorders. A cycle is reported as the
//! shortest path the breadth-first search finds back to the new edge's
//! tail, so the clauses the solver learns from are short.
//!
//! References: M. Gebser, T. Janhunen, J. Rintanen, "SAT modulo graphs:
//! acyclicity", JELIA 2014 (the acyclicity constraint as a propagator);
//! D. J. Pearce, P. H. J. Kelly, "A dynamic topological sort algorithm for
//! directed acyclic graphs", ACM JEA 11, 2006.
//!
//! Complexity: per edge that becomes true, O(1) when it agrees with the
//! order, else O(V + E) of the region between its ends, plus the
//! propagation's searches, O(R * D) for R = [`REACH`] nodes a side of
//! degree D; per backtracked edge O(1).

use batsat::theory::{Theory, TheoryArg};

/// No edge: a variable that is not an edge literal.
const NONE: u32 = u32::MAX;

/// Nodes searched on each side of a new edge for the edges it forces
/// false. On the small Jellyfish of docs/priorities.md 256 finds what an
/// unbounded search finds (Jellyfish 64/8 r=4 seed 11: 2 priorities in
/// 28 s at 256 or unbounded, none in 60 s at 32); on larger graphs the
/// searches cost more than they save, and the bound keeps them in check.
const REACH: usize = 256;

/// One edge the solver may make true: `from -> to` in graph `graph`, when
/// variable `var` is true.
#[derive(Clone, Copy, Debug)]
struct Edge {
    graph: u32,
    from: u32,
    to: u32,
    var: u32,
}

/// One graph's true edges and a topological order of them.
#[derive(Debug, Default)]
struct Graph {
    /// Edges out of / into each node, true edges only, in the order they
    /// became true (so backtracking pops the last), each with its other
    /// end: the searches read the neighbour without the edge table.
    out: Vec<Vec<(u32, u32)>>,
    inn: Vec<Vec<(u32, u32)>>,
    /// Position of each node in the order: a permutation of `0..n`.
    ord: Vec<u32>,
}

impl Graph {
    fn grow(&mut self, n: usize) {
        while self.ord.len() < n {
            let v = self.ord.len() as u32;
            self.ord.push(v);
            self.out.push(Vec::new());
            self.inn.push(Vec::new());
        }
    }
}

/// The theory: see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Acyclicity {
    graphs: Vec<Graph>,
    edges: Vec<Edge>,
    /// Per solver variable, the edge its positive literal adds (NONE: not
    /// an edge).
    edge_of: Vec<u32>,
    /// Edges now true, in the order they became true.
    added: Vec<u32>,
    /// Per decision level: where the trail, `added` and `explained` stood
    /// when it began.
    levels: Vec<(usize, usize, usize)>,
    /// Trail literals read so far.
    seen: usize,
    /// Search marks: `mark[v] == stamp` means visited in this search.
    mark: Vec<u32>,
    stamp: u32,
    /// The edge a node was reached by, in the last forward search.
    parent: Vec<u32>,
    queue: Vec<u32>,
    back: Vec<u32>,
    /// Cycles reported to the solver as conflicts.
    conflicts: u64,
    /// Every declared edge out of / into each node, per graph, true or
    /// not: the candidates a new path may force false.
    cand_out: Vec<Vec<Vec<u32>>>,
    cand_in: Vec<Vec<Vec<u32>>>,
    /// Per node, its place in the last forward search.
    fpos: Vec<u32>,
    /// The candidates the last propagation found: (place of the tail in
    /// the forward search, edge).
    hits: Vec<(u32, u32)>,
    /// Reachability searched around a new edge to propagate from, per
    /// side, in nodes (0: no propagation).
    reach: usize,
    /// Explanations of the literals propagated, as ranges of `because`
    /// (the true edge literals whose path the forced edge would close),
    /// per propagated variable; truncated with the levels.
    because: Vec<batsat::Lit>,
    explained: Vec<(u32, u32, u32)>,
    expl_at: Vec<u32>,
    /// Backward search marks and parents (a second stamp space).
    bmark: Vec<u32>,
    bparent: Vec<u32>,
    fwd: Vec<u32>,
    /// Literals forced false by the theory.
    propagated: u64,
    /// Edges made true so far, shared with whoever bounds the solver's
    /// effort (a solver's stop callback cannot borrow the theory).
    work: std::rc::Rc<std::cell::Cell<u64>>,
}

impl Acyclicity {
    /// A theory with no edges.
    pub(crate) fn new() -> Self {
        Self::with_reach(REACH)
    }

    /// A theory that propagates from searches of up to `reach` nodes per
    /// side (0: conflicts only).
    pub(crate) fn with_reach(reach: usize) -> Self {
        Acyclicity {
            reach,
            ..Self::default()
        }
    }

    /// A counter of the edges made true so far (the theory's work, and a
    /// deterministic measure of the solver's), readable during a solve.
    pub(crate) fn work(&self) -> std::rc::Rc<std::cell::Cell<u64>> {
        std::rc::Rc::clone(&self.work)
    }

    /// Declares that variable `var`, when true, puts `from -> to` in graph
    /// `graph`. Call it before the variable's first solve. A variable is at
    /// most one edge.
    pub(crate) fn edge(&mut self, var: u32, graph: u32, from: u32, to: u32) {
        let g = graph as usize;
        while self.graphs.len() <= g {
            self.graphs.push(Graph::default());
        }
        let n = from.max(to) as usize + 1;
        self.graphs[g].grow(n);
        if self.mark.len() < n {
            self.mark.resize(n, 0);
            self.parent.resize(n, NONE);
            self.bmark.resize(n, 0);
            self.bparent.resize(n, NONE);
        }
        while self.cand_out.len() <= g {
            self.cand_out.push(Vec::new());
            self.cand_in.push(Vec::new());
        }
        if self.cand_out[g].len() < n {
            self.cand_out[g].resize(n, Vec::new());
            self.cand_in[g].resize(n, Vec::new());
        }
        if self.fpos.len() < n {
            self.fpos.resize(n, 0);
        }
        if self.edge_of.len() <= var as usize {
            self.edge_of.resize(var as usize + 1, NONE);
        }
        debug_assert_eq!(self.edge_of[var as usize], NONE, "a variable is one edge");
        let e = self.edges.len() as u32;
        self.cand_out[g][from as usize].push(e);
        self.cand_in[g][to as usize].push(e);
        self.edges.push(Edge {
            graph,
            from,
            to,
            var,
        });
        self.edge_of[var as usize] = e;
    }

    /// Starts graph `graph`'s order from `rank` (a position per node; ties
    /// by node id), before any edge is true: edges that agree with it cost
    /// nothing. Affects speed only, never an answer.
    pub(crate) fn hint(&mut self, graph: u32, rank: &[u64]) {
        let g = graph as usize;
        while self.graphs.len() <= g {
            self.graphs.push(Graph::default());
        }
        debug_assert!(self.added.is_empty(), "hint before the first solve");
        let gr = &mut self.graphs[g];
        gr.grow(rank.len());
        let mut nodes: Vec<u32> = (0..gr.ord.len() as u32).collect();
        nodes.sort_by_key(|&v| (rank.get(v as usize).copied().unwrap_or(u64::MAX), v));
        for (i, v) in nodes.into_iter().enumerate() {
            gr.ord[v as usize] = i as u32;
        }
    }

    fn lit(&self, e: u32) -> batsat::Lit {
        batsat::Lit::new(
            batsat::Var::unsafe_from_idx(self.edges[e as usize].var),
            true,
        )
    }

    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.bmark.iter_mut().for_each(|m| *m = 0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Makes edge `e` true. `Err` holds a cycle it would close (its edges,
    /// `e` last), and the graph is unchanged.
    fn add(&mut self, e: u32) -> Result<(), Vec<u32>> {
        let Edge {
            graph, from, to, ..
        } = self.edges[e as usize];
        if from == to {
            return Err(vec![e]);
        }
        self.work.set(self.work.get() + 1);
        let g = graph as usize;
        let (lb, ub) = (
            self.graphs[g].ord[to as usize],
            self.graphs[g].ord[from as usize],
        );
        if lb > ub {
            self.push(e);
            return Ok(());
        }
        // Forward from `to` inside the region: reaching `from` is a cycle.
        let s = self.next_stamp();
        self.queue.clear();
        self.queue.push(to);
        self.mark[to as usize] = s;
        self.parent[to as usize] = NONE;
        let mut i = 0;
        while i < self.queue.len() {
            let v = self.queue[i];
            i += 1;
            for &(f, w) in &self.graphs[g].out[v as usize] {
                if self.mark[w as usize] == s || self.graphs[g].ord[w as usize] > ub {
                    continue;
                }
                self.mark[w as usize] = s;
                self.parent[w as usize] = f;
                if w == from {
                    let mut cycle = Vec::new();
                    let mut at = from;
                    while at != to {
                        let f = self.parent[at as usize];
                        cycle.push(f);
                        at = self.edges[f as usize].from;
                    }
                    cycle.reverse();
                    cycle.push(e);
                    return Err(cycle);
                }
                self.queue.push(w);
            }
        }
        // No cycle: backward from `from` inside the region, then the two
        // sets take the region's positions, backward set first.
        self.back.clear();
        self.back.push(from);
        self.mark[from as usize] = s;
        let mut i = 0;
        while i < self.back.len() {
            let v = self.back[i];
            i += 1;
            for &(_, w) in &self.graphs[g].inn[v as usize] {
                if self.mark[w as usize] == s || self.graphs[g].ord[w as usize] < lb {
                    continue;
                }
                self.mark[w as usize] = s;
                self.back.push(w);
            }
        }
        let ord = &mut self.graphs[g].ord;
        self.back.sort_unstable_by_key(|&v| ord[v as usize]);
        self.queue.sort_unstable_by_key(|&v| ord[v as usize]);
        let mut slots: Vec<u32> = self
            .back
            .iter()
            .chain(&self.queue)
            .map(|&v| ord[v as usize])
            .collect();
        slots.sort_unstable();
        for (&v, &o) in self.back.iter().chain(&self.queue).zip(&slots) {
            ord[v as usize] = o;
        }
        self.push(e);
        Ok(())
    }

    fn push(&mut self, e: u32) {
        let Edge {
            graph, from, to, ..
        } = self.edges[e as usize];
        let gr = &mut self.graphs[graph as usize];
        gr.out[from as usize].push((e, to));
        gr.inn[to as usize].push((e, from));
        self.added.push(e);
    }

    fn pop(&mut self) {
        let e = self.added.pop().expect("an edge to pop");
        let Edge {
            graph, from, to, ..
        } = self.edges[e as usize];
        let gr = &mut self.graphs[graph as usize];
        let a = gr.out[from as usize].pop();
        let b = gr.inn[to as usize].pop();
        debug_assert_eq!(
            (a, b),
            (Some((e, to)), Some((e, from))),
            "edges leave in reverse order"
        );
    }

    /// After edge `e` (`a -> b`) became true: every undecided edge `y -> x`
    /// with `y` reachable from `b` and `x` reaching `a` (each side searched
    /// up to `reach` nodes) would close a cycle, so it is forced false,
    /// explained by the path `x ~> a -> b ~> y`. `false`: the solver is
    /// in conflict (a forced edge was already true), stop.
    fn propagate_from(&mut self, e: u32, acts: &mut TheoryArg) -> bool {
        let Edge {
            graph, from, to, ..
        } = self.edges[e as usize];
        let g = graph as usize;
        // Backward from `from`: the nodes reaching it, with parents.
        let bs = self.next_stamp();
        self.back.clear();
        self.back.push(from);
        self.bmark[from as usize] = bs;
        self.bparent[from as usize] = NONE;
        let mut i = 0;
        while i < self.back.len() && self.back.len() < self.reach {
            let v = self.back[i];
            i += 1;
            for &(f, w) in &self.graphs[g].inn[v as usize] {
                if self.bmark[w as usize] == bs {
                    continue;
                }
                self.bmark[w as usize] = bs;
                self.bparent[w as usize] = f;
                self.back.push(w);
            }
        }
        // Forward from `to`: the nodes it reaches, in search order.
        let fs = self.next_stamp();
        self.fwd.clear();
        self.fwd.push(to);
        self.mark[to as usize] = fs;
        self.parent[to as usize] = NONE;
        let mut i = 0;
        while i < self.fwd.len() {
            let y = self.fwd[i];
            self.fpos[y as usize] = i as u32;
            i += 1;
            if self.fwd.len() >= self.reach {
                continue;
            }
            for &(f, w) in &self.graphs[g].out[y as usize] {
                if self.mark[w as usize] == fs {
                    continue;
                }
                self.mark[w as usize] = fs;
                self.parent[w as usize] = f;
                self.fwd.push(w);
            }
        }
        // The candidates `y -> x`, `y` forward and `x` backward, scanned
        // from the side with fewer of them, taken in the forward search's
        // order either way (the solver sees the same propagations).
        let outs: u64 = self
            .fwd
            .iter()
            .map(|&y| self.cand_out[g][y as usize].len() as u64)
            .sum();
        let ins: u64 = self
            .back
            .iter()
            .map(|&x| self.cand_in[g][x as usize].len() as u64)
            .sum();
        let scanned = self.back.len() as u64 + outs;
        self.hits.clear();
        if ins < outs {
            for &x in &self.back {
                for &f in &self.cand_in[g][x as usize] {
                    let y = self.edges[f as usize].from;
                    if self.mark[y as usize] == fs {
                        self.hits.push((self.fpos[y as usize], f));
                    }
                }
            }
            self.hits.sort_unstable();
        } else {
            for (i, &y) in self.fwd.iter().enumerate() {
                for &f in &self.cand_out[g][y as usize] {
                    if self.bmark[self.edges[f as usize].to as usize] == bs {
                        self.hits.push((i as u32, f));
                    }
                }
            }
        }
        for h in 0..self.hits.len() {
            if !self.force(e, self.hits[h].1, acts) {
                return false;
            }
        }
        self.charge(scanned);
        true
    }

    /// Forces candidate `f` (`y -> x`) false, unless it is already, after
    /// `e` (`from -> to`) became true, with the path `x ~> from -> to ~> y`
    /// of the last two searches as the reason. `false`: the solver is in
    /// conflict (`f` was true).
    fn force(&mut self, e: u32, f: u32, acts: &mut TheoryArg) -> bool {
        let Edge { from, to, .. } = self.edges[e as usize];
        let Edge { from: y, to: x, .. } = self.edges[f as usize];
        let l = self.lit(f);
        if acts.value(l.var()) == batsat::lbool::FALSE {
            return true;
        }
        let start = self.because.len() as u32;
        let mut at = x;
        while at != from {
            let h = self.bparent[at as usize];
            self.because.push(self.lit(h));
            at = self.edges[h as usize].to;
        }
        self.because.push(self.lit(e));
        let tail = self.because.len();
        let mut at = y;
        while at != to {
            let h = self.parent[at as usize];
            self.because.push(self.lit(h));
            at = self.edges[h as usize].from;
        }
        // Read back from y: turned round, the path runs in order (the
        // solver takes it as a set; the test builds check it).
        self.because[tail..].reverse();
        let len = self.because.len() as u32 - start;
        let var = l.var().idx() as usize;
        if self.expl_at.len() <= var {
            self.expl_at.resize(var + 1, NONE);
        }
        self.expl_at[var] = self.explained.len() as u32;
        self.explained.push((var as u32, start, len));
        self.propagated += 1;
        acts.propagate(!l)
    }

    /// Counts `n` nodes and candidates looked at as work, sixteen to an
    /// edge taken in, so that the first try of `exact` (bounded in work)
    /// stays about a second: uncharged it ran 5.1 s on Jellyfish 250/64
    /// r=12 seed 1 (1.1 s charged, 1.0 s without propagation).
    fn charge(&self, n: u64) {
        self.work.set(self.work.get() + n / 16);
    }

    /// Test builds check each explanation asked for: a path of edges of
    /// one graph from the forced edge's head to its tail, so that the
    /// forced edge would close it.
    #[cfg(test)]
    fn closes_a_cycle(&self, var: u32, why: &[batsat::Lit]) {
        let forced = self.edges[self.edge_of[var as usize] as usize];
        let path: Vec<Edge> = why
            .iter()
            .map(|l| {
                assert!(l.sign(), "an explanation is of edges made true");
                self.edges[self.edge_of[l.var().idx() as usize] as usize]
            })
            .collect();
        assert!(!path.is_empty());
        assert_eq!(path[0].from, forced.to, "the path starts at the head");
        assert_eq!(path[path.len() - 1].to, forced.from, "and ends at the tail");
        for w in path.windows(2) {
            assert_eq!(w[0].to, w[1].from, "a path");
        }
        assert!(path.iter().all(|e| e.graph == forced.graph));
    }

    /// Reads the trail from where the last check stopped: each edge literal
    /// made true joins its graph, or its cycle becomes the solver's
    /// conflict.
    fn check(&mut self, acts: &mut TheoryArg) {
        while self.seen < acts.model().len() {
            let l = acts.model()[self.seen];
            self.seen += 1;
            if !l.sign() {
                continue;
            }
            let e = self
                .edge_of
                .get(l.var().idx() as usize)
                .copied()
                .unwrap_or(NONE);
            if e == NONE {
                continue;
            }
            if let Err(cycle) = self.add(e) {
                self.conflicts += 1;
                let clause: Vec<batsat::Lit> = cycle.iter().map(|&f| !self.lit(f)).collect();
                acts.raise_conflict(&clause, false);
                return;
            }
            if self.reach > 0 && !self.propagate_from(e, acts) {
                return;
            }
        }
    }
}

impl Theory for Acyclicity {
    fn final_check(&mut self, acts: &mut TheoryArg) {
        self.check(acts);
    }

    fn partial_check(&mut self, acts: &mut TheoryArg) {
        self.check(acts);
    }

    fn create_level(&mut self) {
        self.levels
            .push((self.seen, self.added.len(), self.explained.len()));
    }

    fn pop_levels(&mut self, n: usize) {
        let keep = self.levels.len() - n;
        let (seen, added, explained) = self.levels[keep];
        self.levels.truncate(keep);
        while self.added.len() > added {
            self.pop();
        }
        self.seen = seen;
        if let Some(&(_, start, _)) = self.explained.get(explained) {
            self.because.truncate(start as usize);
        }
        self.explained.truncate(explained);
    }

    fn n_levels(&self) -> usize {
        self.levels.len()
    }

    fn explain_propagation(&mut self, p: batsat::Lit) -> &[batsat::Lit] {
        let i = self.expl_at[p.var().idx() as usize] as usize;
        let (_var, start, len) = self.explained[i];
        let why = &self.because[start as usize..(start + len) as usize];
        #[cfg(test)]
        self.closes_a_cycle(_var, why);
        why
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use batsat::{BasicSolver, SolverInterface, lbool};
    use rand::{Rng, SeedableRng};

    fn lit(v: u32, positive: bool) -> batsat::Lit {
        batsat::Lit::new(batsat::Var::unsafe_from_idx(v), positive)
    }

    /// Whether the edges `(from, to)` have a cycle (Kahn's algorithm).
    fn cyclic(n: usize, edges: &[(u32, u32)]) -> bool {
        let mut indeg = vec![0; n];
        for &(_, b) in edges {
            indeg[b as usize] += 1;
        }
        let mut ready: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
        let mut done = 0;
        while let Some(v) = ready.pop() {
            done += 1;
            for &(a, b) in edges {
                if a as usize == v {
                    indeg[b as usize] -= 1;
                    if indeg[b as usize] == 0 {
                        ready.push(b as usize);
                    }
                }
            }
        }
        done < n
    }

    /// Oracle test: random small instances (edges in one or two graphs,
    /// random clauses over their variables) are satisfiable with acyclic
    /// graphs exactly when some assignment, tried one by one, is; and the
    /// solver's model satisfies every clause with every graph acyclic.
    #[test]
    fn agrees_with_brute_force_on_random_instances() {
        // Conflicts only, searches cut short (1 and 2 nodes a side: some
        // forced edges go unseen) and unbounded ones.
        for reach in [0, 1, 2, REACH] {
            agrees_with_brute_force(reach);
        }
    }

    fn agrees_with_brute_force(reach: usize) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut sat, mut unsat) = (0, 0);
        let mut propagated = 0;
        for _ in 0..400 {
            let n = rng.random_range(2..8u32);
            let m = rng.random_range(1..15usize);
            let graphs = rng.random_range(1..3u32);
            let edges: Vec<(u32, u32, u32)> = (0..m)
                .map(|_| {
                    let a = rng.random_range(0..n);
                    let b = (a + rng.random_range(1..n)) % n;
                    (rng.random_range(0..graphs), a, b)
                })
                .collect();
            // Clauses lean positive, so that cycles are wanted.
            let clauses: Vec<Vec<(u32, bool)>> = (0..rng.random_range(0..2 * m))
                .map(|_| {
                    (0..rng.random_range(1..4))
                        .map(|_| (rng.random_range(0..m as u32), rng.random_ratio(3, 4)))
                        .collect()
                })
                .collect();
            let acyclic = |on: &dyn Fn(usize) -> bool| {
                (0..graphs).all(|g| {
                    let es: Vec<(u32, u32)> = (0..m)
                        .filter(|&i| edges[i].0 == g && on(i))
                        .map(|i| (edges[i].1, edges[i].2))
                        .collect();
                    !cyclic(n as usize, &es)
                })
            };
            let holds = |on: &dyn Fn(usize) -> bool, upto: usize| {
                clauses[..upto]
                    .iter()
                    .all(|c| c.iter().any(|&(v, pos)| on(v as usize) == pos))
            };
            // Solved twice, incrementally: half the clauses, then all, as
            // `exact` adds paths between solver calls.
            let mut s = BasicSolver::default();
            let mut th = Acyclicity::with_reach(reach);
            for (v, &(g, a, b)) in edges.iter().enumerate() {
                s.new_var_default();
                th.edge(v as u32, g, a, b);
            }
            let half = clauses.len() / 2;
            for upto in [half, clauses.len()] {
                let from = if upto == half { 0 } else { half };
                for c in &clauses[from..upto] {
                    let mut c: Vec<batsat::Lit> = c.iter().map(|&(v, pos)| lit(v, pos)).collect();
                    s.add_clause_reuse(&mut c);
                }
                let brute = (0..1u32 << m).any(|bits| {
                    let on = |i: usize| bits >> i & 1 == 1;
                    acyclic(&on) && holds(&on, upto)
                });
                let r = s.solve_limited_th(&mut th, &[]);
                assert_eq!(r == lbool::TRUE, brute, "{edges:?} {clauses:?} {upto}");
                if r == lbool::TRUE {
                    sat += 1;
                    let on = |i: usize| s.value_lit(lit(i as u32, true)) == lbool::TRUE;
                    assert!(acyclic(&on) && holds(&on, upto), "{edges:?} {clauses:?}");
                } else {
                    unsat += 1;
                }
            }
            propagated += th.propagated;
        }
        // Both answers occur, and the theory did its part.
        assert!(sat > 50 && unsat > 50, "{sat} sat, {unsat} unsat");
        assert_eq!(
            propagated > 0,
            reach > 0,
            "reach {reach}: {propagated} forced"
        );
    }

    /// A triangle whose three edges are all required is refuted by the
    /// theory alone (no clause speaks of cycles): as a conflict, or with
    /// propagation, by forcing the third edge false once two are true.
    /// Dropping one requirement makes it satisfiable with that edge off.
    #[test]
    fn a_required_cycle_is_refuted() {
        let solve = |reach: usize, required: &[u32]| {
            let mut s = BasicSolver::default();
            let mut th = Acyclicity::with_reach(reach);
            for (v, (a, b)) in [(0, 1), (1, 2), (2, 0)].into_iter().enumerate() {
                s.new_var_default();
                th.edge(v as u32, 0, a, b);
            }
            for &v in required {
                s.add_clause_reuse(&mut vec![lit(v, true)]);
            }
            let r = s.solve_limited_th(&mut th, &[]);
            (
                r,
                (0..3)
                    .map(|v| s.value_lit(lit(v, true)) == lbool::TRUE)
                    .collect::<Vec<_>>(),
                th.conflicts,
                th.propagated,
            )
        };
        let (r, _, conflicts, propagated) = solve(0, &[0, 1, 2]);
        assert_eq!(r, lbool::FALSE);
        assert!(conflicts >= 1 && propagated == 0);
        let (r, _, _, propagated) = solve(REACH, &[0, 1, 2]);
        assert_eq!(r, lbool::FALSE);
        assert!(propagated >= 1);
        for reach in [0, REACH] {
            let (r, model, conflicts, propagated) = solve(reach, &[0, 1]);
            assert_eq!(r, lbool::TRUE);
            assert_eq!(model, vec![true, true, false]);
            // With propagation the third edge is never tried.
            if reach > 0 {
                assert!(conflicts == 0 && propagated > 0);
            } else {
                assert_eq!(propagated, 0);
            }
        }
    }

    /// The explanation of a forced edge is the path it would close, both
    /// sides of the new edge included: a chain 0 -> 1 -> 2 -> 3 -> 4
    /// assumed true with its middle edge last forces 4 -> 0 false, and a
    /// clause pair that needs 4 -> 0 makes the solver ask why (the test
    /// build checks the path each time).
    #[test]
    fn explanations_are_the_closing_path() {
        let mut s = BasicSolver::default();
        let mut th = Acyclicity::new();
        for (v, (a, b)) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]
            .into_iter()
            .enumerate()
        {
            s.new_var_default();
            th.edge(v as u32, 0, a, b);
        }
        let z = s.new_var_default();
        s.add_clause_reuse(&mut vec![lit(4, true), batsat::Lit::new(z, true)]);
        s.add_clause_reuse(&mut vec![lit(4, true), batsat::Lit::new(z, false)]);
        let chain = [lit(0, true), lit(2, true), lit(3, true), lit(1, true)];
        assert_eq!(s.solve_limited_th(&mut th, &chain), lbool::FALSE);
        assert!(th.propagated >= 1 && th.conflicts == 0);
        // The learnt clause is the chain's: without the assumptions the
        // back edge is kept and a chain edge is not.
        assert_eq!(s.solve_limited_th(&mut th, &[]), lbool::TRUE);
        assert_eq!(s.value_lit(lit(4, true)), lbool::TRUE);
        assert!((0..4).any(|v| s.value_lit(lit(v, true)) == lbool::FALSE));
    }
}
