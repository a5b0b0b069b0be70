//! The outcome of a proof ([`Verdict`]), shared by the yosys/SymbiYosys runs
//! ([`crate::prove`]) and the cube-and-conquer CaDiCaL engine ([`crate::cnf`]).

use serde::Serialize;

/// Outcome of one proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The miter's trigger is unsatisfiable: the statement holds.
    Proven,
    /// The solver found inputs on which the cores differ.
    Refuted,
    /// No verdict (solver timeout or an unexpected end of the run).
    NoVerdict,
}
