//! # fp8gen formal equivalence ("proof, not samples")
//!
//! Owns two things:
//!
//! * [`reference`](mod@reference) — an independent, deliberately naive second generator path for
//!   `decode`, `mul`, `fma`, `project`, `convert`, `add` and `quantize` with every option of
//!   theirs: operands decoded to integer significand × 2^exponent in one exact
//!   fixed-point window, the exact product / sum, and a plain rounder written from P3109 v4.0
//!   §4.7 and docs/semantics.md (not from `rtl-gen`'s blocks). It is checked against the
//!   golden model by simulation (tests in `formal/tests/`) like every generated unit.
//! * [`prove`] — miters between two cores (optimized vs reference, or an N-stage pipeline vs
//!   its combinational twin) proven with yosys's SAT solver (`sat -prove`), run in a private
//!   build directory with relative paths (YoWASP/WASI sandbox); verdicts are PROVEN (with the
//!   time and solver), REFUTED (with the counterexample read from yosys's output file and
//!   replayed in Verilator against the golden model, VCD written) or NO VERDICT (timeout) —
//!   never a silent pass.
//!
//! * [`compose`] — compositional proofs: `dot` in lemmas cut at the exact sum (lane terms, the sum of
//!   free terms, the tail with the sum free), the block quantizer in a scale lemma and one lemma per element; [`induct`] — the `mac` proof by k-induction
//!   against a reference accumulator ([`reference::mac`]) with a state-equality invariant (a
//!   pipelined mac through its 0-stage twin, lemma P).
//!
//! Entry points: [`prove::prove_request`] (the `fp8gen prove` command), [`prove::prove_pair`]
//! (two Verilog cores with the same port names, e.g. a core on disk against
//! [`reference::generate_reference`] of its request) and [`prove::prove_pipeline`].
#![forbid(unsafe_code)]

pub mod cnf;
pub mod compose;
pub mod induct;
pub mod matrix;
pub mod prove;
pub mod reference;
pub mod tools;
pub mod verdict;

pub use prove::{
    prove_pair, prove_pair_with, prove_pipeline, prove_request, prove_unrolled, CexReport, Compare,
    Engine, PairSpec, ProofReport, ProveOptions, Verdict,
};
pub use reference::{check_request, check_unit, generate_reference};

use std::fmt;

/// Why a proof could not be set up or run (as opposed to a verdict).
#[derive(Debug)]
pub enum FormalError {
    /// The request is outside what the reference or the prover covers.
    Unsupported(String),
    /// The optimized core could not be generated.
    Generate(String),
    /// yosys is missing (where it was searched) or failed to run.
    Tool(String),
    /// Simulation (counterexample replay) failed.
    Sim(String),
    /// File system error.
    Io(String, std::io::Error),
    /// The `--keep` directory cannot be used ([`iface::outdir`]): what and what to do.
    Output(String),
}

impl fmt::Display for FormalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormalError::Unsupported(m) => write!(f, "not supported: {m}"),
            FormalError::Generate(m) => write!(f, "cannot generate the core: {m}"),
            FormalError::Tool(m) => write!(f, "{m}"),
            FormalError::Sim(m) => write!(f, "counterexample replay failed: {m}"),
            FormalError::Io(what, e) => write!(f, "{what}: {e}"),
            FormalError::Output(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FormalError {}
