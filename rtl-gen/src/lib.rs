//! # fp8gen RTL generator
//!
//! Owns the typed Verilog AST and its deterministic emitter, the reusable datapath blocks
//! (unpack, leading-zero count + normalize, alignment shifter with sticky, the one rounder,
//! saturation/encode), pipelining, and the hardware units. Also owns `manifest.json`.

pub mod manifest;
