//! Compositional proofs: a core and its reference cut at named internal wires, each piece
//! proven as its own lemma, the lemmas chained into the statement `core ≡ reference`.
//!
//! * [`dot`] — the `dot` proof in three lemmas cut at the lane terms and the exact sum;
//! * [`quantize`] — the block quantizer's proof: the scale lemma, one lemma per element with
//!   the scale wire cut, the flags lemma ([`Lemma`] is the report of each).
//!
//! A report says PROVEN only when every lemma of its chain is proven.

pub mod dot;
pub mod quantize;

pub use dot::*;
pub use quantize::*;
