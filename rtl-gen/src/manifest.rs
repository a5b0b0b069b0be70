//! `manifest.json`: the description of a generated (or user-supplied) core that `fp8gen
//! verify --from DIR` needs to drive it — unit, formats, modes, ports with their roles,
//! latency, generator version.

use golden::Format;
use serde::{Deserialize, Serialize};

/// Schema version of `manifest.json`.
pub const MANIFEST_SCHEMA: u32 = 1;

/// Direction of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Input port.
    Input,
    /// Output port.
    Output,
}

/// What a port means to the equivalence engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Clock (rising edge).
    Clock,
    /// Synchronous active-low reset.
    ResetN,
    /// Input valid.
    ValidIn,
    /// Output valid.
    ValidOut,
    /// First small-float operand (or the only operand of `decode`).
    X,
    /// Second small-float operand.
    Y,
    /// binary32 addend / accumulator input (fma), or binary32 input (project).
    Z,
    /// Run-time rounding mode (encoding: see [`crate::manifest::ROUNDING_ENCODING`]).
    Rounding,
    /// Run-time saturation mode (encoding: see [`crate::manifest::SATURATION_ENCODING`]).
    Saturation,
    /// Random bits for stochastic rounding.
    Random,
    /// Accumulator clear (mac).
    Clear,
    /// Main result (code of the result format, or binary32).
    Result,
    /// Exception flags {invalid, overflow, underflow, inexact} (bit 3..0).
    Flags,
    /// Class flags of `decode`: {nan, inf, zero, subnormal} (bit 3..0).
    Class,
    /// Sign of a decoded value (`decode`).
    Sign,
    /// Two's complement exponent of the most significant significand bit (`decode`).
    Exponent,
    /// Normalized significand, MSB = hidden bit (`decode`).
    Significand,
}

/// Encoding of the `rm_i` port: index into this list.
pub const ROUNDING_ENCODING: [&str; 9] = [
    "rne", "rna", "rtp", "rtn", "rtz", "rto", "sra", "srb", "src",
];

/// Encoding of the `sat_i` port: index into this list.
pub const SATURATION_ENCODING: [&str; 4] = ["satfinite", "satpropagate", "satnone", "satnone-v4"];

/// One port of the core.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    /// Verilog port name.
    pub name: String,
    /// Direction.
    pub direction: Direction,
    /// Width in bits (1..=64).
    pub width: u32,
    /// Meaning.
    pub role: Role,
}

/// Unit kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Small-float code → binary32 + class flags.
    Decode,
    /// binary32 → small-float code.
    Project,
    /// x·y, one rounding.
    Mul,
    /// x·y + z, z and result binary32.
    Fma,
    /// Streaming accumulator acc ← x·y + acc.
    Mac,
}

impl Unit {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Decode => "decode",
            Unit::Project => "project",
            Unit::Mul => "mul",
            Unit::Fma => "fma",
            Unit::Mac => "mac",
        }
    }
}

/// Formats of the operands and the result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Formats {
    /// Format of x (decode: the decoded format; project: binary32 input).
    pub x: Format,
    /// Format of y (mul/fma/mac).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<Format>,
    /// Result format.
    pub r: Format,
}

/// Rounding/saturation/option settings; `None` mode fields mean a run-time port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Modes {
    /// Fixed rounding mode name (`rne` …), or `None` when `rm_i` selects it at run time.
    pub rounding: Option<String>,
    /// Fixed saturation mode name, or `None` when `sat_i` selects it.
    pub saturation: Option<String>,
    /// Random bits for stochastic rounding (0 when none).
    #[serde(default)]
    pub sr_bits: u32,
    /// Flush-to-zero (fma/mac).
    #[serde(default)]
    pub ftz: bool,
    /// Tininess detected before rounding (default after).
    #[serde(default)]
    pub tininess_before: bool,
    /// Code written for NaN into NaN-less formats.
    #[serde(default)]
    pub nonan_code: u32,
}

/// The whole manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Schema version ([`MANIFEST_SCHEMA`]).
    pub schema: u32,
    /// `fp8gen <version>`, or the name of another tool.
    pub generator: String,
    /// The command line that produced the core.
    pub command: String,
    /// Unit kind.
    pub unit: Unit,
    /// Top module name.
    pub top: String,
    /// Verilog file, relative to the manifest's directory.
    pub verilog: String,
    /// Formats.
    pub formats: Formats,
    /// Modes and options.
    pub modes: Modes,
    /// Pipeline stages requested.
    pub stages: u32,
    /// Cycles from an input (with `valid_i`) to its result (with `valid_o`); 0 = combinational.
    pub latency: u32,
    /// Cycles between accepted inputs (1 = fully pipelined; mac reports its recurrence).
    pub initiation_interval: u32,
    /// Ports in declaration order.
    pub ports: Vec<Port>,
}

impl Manifest {
    /// The port with a role, if any.
    pub fn port(&self, role: Role) -> Option<&Port> {
        self.ports.iter().find(|p| p.role == role)
    }

    /// Pretty JSON text (deterministic field order) with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
