//! The SAT solver behind `exact`, one small interface over two backends.
//!
//! - **BatSat** (default): a MiniSat-style CDCL solver written in Rust, so
//!   the default build needs nothing but the Rust toolchain. It also takes
//!   a theory (`batsat::Theory`) that sees every assignment and can add
//!   clauses during the search: `exact` keeps each priority's graph
//!   acyclic there (`tagging/exact/acyclic.rs`), with conflicts and propagation.
//! - **CaDiCaL** (cargo feature `cadical`, through `rustsat-cadical`):
//!   faster on the large proofs, but its build runs bindgen, which needs
//!   libclang (`apt-get install libclang-dev`).
//!
//! Both are deterministic: the same clauses in the same order give the same
//! model. Models may differ between the two backends; proofs (UNSAT) never
//! do, since both are complete.

#[cfg(feature = "cadical")]
use crate::error::Error;
use crate::error::Result;

/// A literal: variable `v` (from 0) positive is `2v`, negative `2v + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lit(u32);

impl Lit {
    /// The positive literal of variable `v`.
    pub(crate) fn positive(v: u32) -> Lit {
        Lit(v << 1)
    }

    fn var(self) -> u32 {
        self.0 >> 1
    }

    fn is_negative(self) -> bool {
        self.0 & 1 == 1
    }
}

impl std::ops::Not for Lit {
    type Output = Lit;
    fn not(self) -> Lit {
        Lit(self.0 ^ 1)
    }
}

/// What a solver call ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Sat,
    Unsat,
    /// The stop callback asked to end it.
    Interrupted,
}

/// Whether the build's solver takes the acyclicity theory
/// (`tagging/exact/acyclic.rs`): BatSat does, CaDiCaL here does not.
pub(crate) const THEORY: bool = !cfg!(feature = "cadical");

/// Which solver a build uses.
pub(crate) const BACKEND: &str = if cfg!(feature = "cadical") {
    "CaDiCaL"
} else {
    "BatSat"
};

#[cfg(feature = "cadical")]
fn sat_err(e: impl std::fmt::Display) -> Error {
    Error::Algo {
        algo: "exact".into(),
        reason: format!("SAT solver: {e:#}"),
    }
}

#[cfg(not(feature = "cadical"))]
mod backend {
    use super::{Lit, Outcome, Result};
    use crate::tagging::exact::acyclic::Acyclicity;
    use batsat::{BasicSolver, SolverInterface, lbool};

    pub(crate) struct Solver {
        s: BasicSolver,
        /// Phases asked for variables the solver has not created yet:
        /// BatSat fixes a variable's preferred polarity when it creates it.
        pending: rustc_hash::FxHashMap<u32, bool>,
        /// Acyclicity checked inside the search, once asked for.
        pub(crate) theory: Option<Acyclicity>,
    }

    impl Solver {
        pub(crate) fn new() -> Self {
            // Activity decays faster than MiniSat's 0.95: the cut rounds
            // add clauses between calls, and recent conflicts are the ones
            // that matter. Measured on the README's proof table: leaf-spine
            // 8x4 `kbounce:3` 39 s at 0.95, 19 s at 0.8 (10 s on CaDiCaL);
            // the others within 10%.
            let o = batsat::SolverOpts {
                var_decay: 0.8,
                ..Default::default()
            };
            Solver {
                s: BasicSolver::new(o, Default::default()),
                pending: Default::default(),
                theory: None,
            }
        }

        fn ensure(&mut self, var: u32) {
            while self.s.num_vars() <= var {
                let v = self.s.num_vars();
                let pol = match self.pending.remove(&v) {
                    Some(true) => lbool::TRUE,
                    Some(false) => lbool::FALSE,
                    None => lbool::UNDEF,
                };
                self.s.new_var(pol, true);
            }
        }

        fn lit(l: Lit) -> batsat::Lit {
            batsat::Lit::new(batsat::Var::unsafe_from_idx(l.var()), !l.is_negative())
        }

        pub(crate) fn add_clause(&mut self, lits: &[Lit]) -> Result<()> {
            if let Some(m) = lits.iter().map(|l| l.var()).max() {
                self.ensure(m);
            }
            let mut c: Vec<batsat::Lit> = lits.iter().map(|&l| Self::lit(l)).collect();
            // False means the clauses are already unsatisfiable: the next
            // solve says so.
            self.s.add_clause_reuse(&mut c);
            Ok(())
        }

        pub(crate) fn phase(&mut self, lit: Lit) -> Result<()> {
            if lit.var() >= self.s.num_vars() {
                self.pending.insert(lit.var(), !lit.is_negative());
            }
            Ok(())
        }

        pub(crate) fn solve(&mut self, stop: Box<dyn Fn() -> bool>) -> Result<Outcome> {
            self.s.cb_mut().set_stop(stop);
            let r = match &mut self.theory {
                Some(th) => self.s.solve_limited_th(th, &[]),
                None => self.s.solve_limited(&[]),
            };
            Ok(if r == lbool::TRUE {
                Outcome::Sat
            } else if r == lbool::FALSE {
                Outcome::Unsat
            } else {
                Outcome::Interrupted
            })
        }

        pub(crate) fn value(&self, lit: Lit) -> Result<bool> {
            if lit.var() >= self.s.num_vars() {
                // A variable in no clause: any value fits; false, as the
                // solver's own default polarity.
                return Ok(lit.is_negative());
            }
            Ok(self.s.value_lit(Self::lit(lit)) == lbool::TRUE)
        }
    }
}

#[cfg(feature = "cadical")]
mod backend {
    use super::{Lit, Outcome, Result, sat_err};
    use rustsat::solvers::{ControlSignal, PhaseLit, Solve, SolverResult, Terminate};
    use rustsat::types::{Clause, TernaryVal};

    pub(crate) struct Solver {
        s: rustsat_cadical::CaDiCaL<'static, 'static>,
        /// CaDiCaL here takes no theory: acyclicity stays with the caller.
        pub(crate) theory: Option<crate::tagging::exact::acyclic::Acyclicity>,
    }

    fn lit(l: Lit) -> rustsat::types::Lit {
        let p = rustsat::types::Lit::positive(l.var());
        if l.is_negative() { !p } else { p }
    }

    impl Solver {
        pub(crate) fn new() -> Self {
            Solver {
                s: rustsat_cadical::CaDiCaL::default(),
                theory: None,
            }
        }

        pub(crate) fn add_clause(&mut self, lits: &[Lit]) -> Result<()> {
            self.s
                .add_clause(lits.iter().map(|&l| lit(l)).collect::<Clause>())
                .map_err(sat_err)
        }

        pub(crate) fn phase(&mut self, l: Lit) -> Result<()> {
            self.s.phase_lit(lit(l)).map_err(sat_err)
        }

        pub(crate) fn solve(&mut self, stop: Box<dyn Fn() -> bool>) -> Result<Outcome> {
            self.s.attach_terminator(move || {
                if stop() {
                    ControlSignal::Terminate
                } else {
                    ControlSignal::Continue
                }
            });
            Ok(match self.s.solve().map_err(sat_err)? {
                SolverResult::Sat => Outcome::Sat,
                SolverResult::Unsat => Outcome::Unsat,
                SolverResult::Interrupted => Outcome::Interrupted,
            })
        }

        pub(crate) fn value(&self, l: Lit) -> Result<bool> {
            Ok(self.s.lit_val(lit(l)).map_err(sat_err)? == TernaryVal::True)
        }
    }
}

/// An incremental SAT instance: clauses are added between solver calls and
/// stay.
pub(crate) struct Sat(backend::Solver);

impl std::fmt::Debug for Sat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sat({BACKEND})")
    }
}

impl Sat {
    pub(crate) fn new() -> Self {
        Sat(backend::Solver::new())
    }

    /// Adds a clause (the disjunction of `lits`).
    pub(crate) fn add_clause(&mut self, lits: &[Lit]) -> Result<()> {
        self.0.add_clause(lits)
    }

    /// Asks the solver to try `lit` first when it decides its variable.
    /// Call it before the variable's first clause: BatSat fixes a
    /// variable's preferred phase when the variable first appears.
    pub(crate) fn phase(&mut self, lit: Lit) -> Result<()> {
        self.0.phase(lit)
    }

    /// Solves the clauses so far; `stop` is polled during the search.
    pub(crate) fn solve(&mut self, stop: Box<dyn Fn() -> bool>) -> Result<Outcome> {
        self.0.solve(stop)
    }

    /// The value of `lit` in the last model (after [`Outcome::Sat`]).
    pub(crate) fn value(&self, lit: Lit) -> Result<bool> {
        self.0.value(lit)
    }

    /// Asks the solver to keep graphs acyclic inside its search (see
    /// `tagging/exact/acyclic.rs`). Returns false where the backend takes no
    /// theory (CaDiCaL): the caller then checks models itself.
    pub(crate) fn keep_acyclic(&mut self) -> bool {
        if !THEORY {
            return false;
        }
        if self.0.theory.is_none() {
            self.0.theory = Some(super::acyclic::Acyclicity::new());
        }
        true
    }

    /// Declares that `lit` (a positive literal) true puts `from -> to` into
    /// graph `graph`, which must stay acyclic. Needs
    /// [`Sat::keep_acyclic`]; call it before `lit`'s first solve.
    pub(crate) fn acyclic_edge(&mut self, lit: Lit, graph: u32, from: u32, to: u32) {
        debug_assert!(!lit.is_negative());
        if let Some(th) = &mut self.0.theory {
            th.edge(lit.var(), graph, from, to);
        }
    }

    /// The acyclicity theory's work counter (edges it has taken in), for a
    /// stop callback that bounds a solve deterministically; `None` without
    /// a theory.
    pub(crate) fn acyclic_work(&self) -> Option<std::rc::Rc<std::cell::Cell<u64>>> {
        self.0.theory.as_ref().map(|t| t.work())
    }

    /// A likely topological order of graph `graph` (a rank per node),
    /// before the first solve: speed only.
    pub(crate) fn acyclic_hint(&mut self, graph: u32, rank: &[u64]) {
        if let Some(th) = &mut self.0.theory {
            th.hint(graph, rank);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pigeonhole 4 into 3 is unsatisfiable; 3 into 3 is satisfiable and
    /// the model is a matching.
    #[test]
    fn pigeonhole() {
        let solve = |pigeons: u32, holes: u32| {
            let mut s = Sat::new();
            let v = |p: u32, h: u32| Lit::positive(p * holes + h);
            for p in 0..pigeons {
                s.add_clause(&(0..holes).map(|h| v(p, h)).collect::<Vec<_>>())
                    .unwrap();
            }
            for h in 0..holes {
                for a in 0..pigeons {
                    for b in a + 1..pigeons {
                        s.add_clause(&[!v(a, h), !v(b, h)]).unwrap();
                    }
                }
            }
            let r = s.solve(Box::new(|| false)).unwrap();
            if r == Outcome::Sat {
                for h in 0..holes {
                    let n = (0..pigeons).filter(|&p| s.value(v(p, h)).unwrap()).count();
                    assert!(n <= 1);
                }
                for p in 0..pigeons {
                    assert!((0..holes).any(|h| s.value(v(p, h)).unwrap()));
                }
            }
            r
        };
        assert_eq!(solve(4, 3), Outcome::Unsat);
        assert_eq!(solve(3, 3), Outcome::Sat);
    }

    /// A phase asked before the variable appears is the model's value where
    /// the clauses leave a choice, and a negative literal reads back as the
    /// opposite of its variable.
    #[test]
    fn phases_and_negation() {
        let mut s = Sat::new();
        let (a, b) = (Lit::positive(0), Lit::positive(1));
        s.phase(!a).unwrap();
        s.phase(b).unwrap();
        s.add_clause(&[a, b]).unwrap();
        assert_eq!(s.solve(Box::new(|| false)).unwrap(), Outcome::Sat);
        assert!(s.value(b).unwrap());
        assert_eq!(s.value(a).unwrap(), !s.value(!a).unwrap());
        // Incremental: forcing b false makes a true.
        s.add_clause(&[!b]).unwrap();
        assert_eq!(s.solve(Box::new(|| false)).unwrap(), Outcome::Sat);
        assert!(s.value(a).unwrap() && !s.value(b).unwrap());
        s.add_clause(&[!a]).unwrap();
        assert_eq!(s.solve(Box::new(|| false)).unwrap(), Outcome::Unsat);
    }

    /// A stop that is already true interrupts a hard instance.
    #[test]
    fn stop_interrupts() {
        let mut s = Sat::new();
        let (pigeons, holes) = (12u32, 11u32);
        let v = |p: u32, h: u32| Lit::positive(p * holes + h);
        for p in 0..pigeons {
            s.add_clause(&(0..holes).map(|h| v(p, h)).collect::<Vec<_>>())
                .unwrap();
        }
        for h in 0..holes {
            for a in 0..pigeons {
                for b in a + 1..pigeons {
                    s.add_clause(&[!v(a, h), !v(b, h)]).unwrap();
                }
            }
        }
        assert_eq!(s.solve(Box::new(|| true)).unwrap(), Outcome::Interrupted);
    }
}
