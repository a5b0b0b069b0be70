//! # fp8gen interface vocabulary
//!
//! The one description of a core's interface, shared by the generator (`rtl`), the simulator
//! (`sim`), the verification library (`verify`) and the FPGA flow: port [`Direction`]s and
//! [`Role`]s, [`Port`]s, the unit kinds ([`Unit`]), the run-time mode port encodings
//! ([`ROUNDING_ENCODING`], [`SATURATION_ENCODING`]) and `manifest.json` ([`Manifest`]), with
//! the structural checks every reader of a manifest needs ([`Manifest::from_json`]).
//!
//! What a port *means* for the golden model (which formats its value is a code of) is decided
//! by the verification library against the generator's canonical interface; this crate only
//! makes sure a manifest is well formed and says what it claims to say.

#![forbid(unsafe_code)]

mod bounded;
pub mod native;
pub mod outdir;
pub mod unit;

pub use native::{FlagBits, FlagLayout, RoundingEncoding};
pub use unit::{FormatUse, RFormat, SpaceKind, Unit, UnitOption, UnitSpec, XFormat, ZFormat};

pub use bounded::{
    human_size, kind_of, read_bounded, read_text_bounded, ReadError, MAX_JSON_BYTES,
    MAX_SOURCE_BYTES,
};

use golden::Format;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Schema version of `manifest.json` written and accepted by this version of fp8gen.
pub const MANIFEST_SCHEMA: u32 = 1;

/// Encoding of the `rm_i` port: index into this list (P3109 §4.7.4 rounding modes; the
/// stochastic modes take their random bits from `rnd_i`).
pub const ROUNDING_ENCODING: [&str; 9] = [
    "rne", "rna", "rtp", "rtn", "rtz", "rto", "sra", "srb", "src",
];

/// Number of deterministic rounding encodings (the first entries of [`ROUNDING_ENCODING`]).
pub const DETERMINISTIC_ROUNDINGS: usize = 6;

/// Encoding of the `sat_i` port: index into this list (P3109 §4.7.5 saturation modes).
pub const SATURATION_ENCODING: [&str; 4] = ["satfinite", "satpropagate", "satnone", "satnone-v4"];

/// Bits needed for an index into a list of `n` entries (at least 1).
pub fn index_bits(n: usize) -> u32 {
    (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1)
}

/// Mask of the `width` low bits (`width` ≤ 64).
pub fn width_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Direction of a port, seen from the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Driven into the core.
    Input,
    /// Driven by the core.
    Output,
}

/// What a port means. Control roles (clock, resets, valid) drive the harness; every other
/// role is data carried by the vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A data port with no arithmetic meaning (test cores, reference cores of the QoR table).
    Data,
    /// Clock (rising edge), 1-bit input.
    Clock,
    /// Active-high reset, 1-bit input.
    Reset,
    /// Active-low reset, 1-bit input.
    ResetN,
    /// Input valid, 1-bit input. On a combinational core it is driven 1.
    ValidIn,
    /// Output valid, 1-bit output: follows `valid_in` after exactly `latency` cycles; on a
    /// combinational core it must be 1.
    ValidOut,
    /// First small-float operand (`decode`: the decoded code; `project`: the binary32 input is
    /// [`Role::Z`]).
    X,
    /// Second small-float operand.
    Y,
    /// The addend of `fma` and `dot` (a code of the addend format, binary32 by default), the
    /// binary32 (binary16, bfloat16) input of `project`.
    Z,
    /// Block scale of the x elements (`dot --scale-format`).
    ScaleX,
    /// Block scale of the y elements.
    ScaleY,
    /// Run-time rounding mode, encoded as in [`ROUNDING_ENCODING`].
    Rounding,
    /// Run-time saturation mode, encoded as in [`SATURATION_ENCODING`].
    Saturation,
    /// Random bits of stochastic rounding.
    Random,
    /// Accumulator clear (`mac`).
    Clear,
    /// The result code (of the result format, or binary32).
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
    /// Which of the interleaved accumulators a result belongs to (`mac --interleave L`).
    Lane,
    /// The block scale a unit computes (`quantize`: the shared scale of its elements, in
    /// the scale format).
    ScaleOut,
    /// Run-time operation select of `add --sub dyn`: 1 = `x − y`, 0 = `x + y` (1-bit input).
    Sub,
}

impl Role {
    /// Every role, in declaration order.
    pub const ALL: [Role; 24] = [
        Role::Data,
        Role::Clock,
        Role::Reset,
        Role::ResetN,
        Role::ValidIn,
        Role::ValidOut,
        Role::X,
        Role::Y,
        Role::Z,
        Role::ScaleX,
        Role::ScaleY,
        Role::Rounding,
        Role::Saturation,
        Role::Random,
        Role::Clear,
        Role::Result,
        Role::Flags,
        Role::Class,
        Role::Sign,
        Role::Exponent,
        Role::Significand,
        Role::Lane,
        Role::ScaleOut,
        Role::Sub,
    ];

    /// The name used in `manifest.json` (`valid_in`, `x`, `rounding`, …).
    pub fn name(self) -> &'static str {
        match self {
            Role::Data => "data",
            Role::Clock => "clock",
            Role::Reset => "reset",
            Role::ResetN => "reset_n",
            Role::ValidIn => "valid_in",
            Role::ValidOut => "valid_out",
            Role::X => "x",
            Role::Y => "y",
            Role::Z => "z",
            Role::ScaleX => "scale_x",
            Role::ScaleY => "scale_y",
            Role::Rounding => "rounding",
            Role::Saturation => "saturation",
            Role::Random => "random",
            Role::Clear => "clear",
            Role::Result => "result",
            Role::Flags => "flags",
            Role::Class => "class",
            Role::Sign => "sign",
            Role::Exponent => "exponent",
            Role::Significand => "significand",
            Role::Lane => "lane",
            Role::ScaleOut => "scale_out",
            Role::Sub => "sub",
        }
    }

    /// Parses a manifest role name.
    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == s)
    }

    /// Clock and resets: driven by the harness (or tied by a wrapper) on every core, never
    /// data.
    pub fn is_clock_or_reset(self) -> bool {
        matches!(self, Role::Clock | Role::Reset | Role::ResetN)
    }

    /// The valid handshake (`valid_in`, `valid_out`).
    pub fn is_handshake(self) -> bool {
        matches!(self, Role::ValidIn | Role::ValidOut)
    }

    /// Clock, resets and the valid handshake: driven by the harness, never part of a vector
    /// of a clocked core.
    pub fn is_control(self) -> bool {
        self.is_clock_or_reset() || self.is_handshake()
    }

    /// Whether a port of this role is carried by the vectors (data) rather than driven by the
    /// harness (control). Clock and resets are always control; the valid handshake is
    /// control on a `clocked` core, and plain data on a combinational one and in `stream`
    /// mode (a stateful core driven one row per cycle, its valid ports part of each row);
    /// every other role is data. The one statement of the rule for the simulator, the
    /// verification library, the FPGA wrappers and the prover.
    pub fn is_data(self, clocked: bool, stream: bool) -> bool {
        !self.is_clock_or_reset() && (!self.is_handshake() || stream || !clocked)
    }

    /// The direction a port of this role must have, where the role fixes it.
    pub fn direction(self) -> Option<Direction> {
        match self {
            Role::Data => None,
            Role::ValidOut
            | Role::Result
            | Role::Flags
            | Role::Class
            | Role::Sign
            | Role::Exponent
            | Role::Significand
            | Role::Lane
            | Role::ScaleOut => Some(Direction::Output),
            _ => Some(Direction::Input),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One port of a core.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Port {
    /// Verilog identifier of the port.
    pub name: String,
    /// Input or output.
    pub direction: Direction,
    /// Width in bits.
    pub width: u32,
    /// Meaning; `data` when omitted.
    #[serde(default = "data_role")]
    pub role: Role,
    /// Element index of an operand of several elements (`dot`: `x3_i` has role `x`,
    /// index 3); 0 (omitted) for every other port. A role and an index name one port.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub index: u32,
    /// A data input held at this value on every vector (an op-select of a multi-function
    /// core, an enable): not part of the vectors, listed in the summary (docs/byo.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tie: Option<u64>,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn data_role() -> Role {
    Role::Data
}

impl Port {
    /// A port with every field given.
    pub fn new(name: impl Into<String>, direction: Direction, width: u32, role: Role) -> Port {
        Port {
            name: name.into(),
            direction,
            width,
            role,
            index: 0,
            tie: None,
        }
    }

    /// Element `index` of an operand of several elements.
    pub fn element(
        name: impl Into<String>,
        direction: Direction,
        width: u32,
        role: Role,
        index: u32,
    ) -> Port {
        Port {
            index,
            ..Port::new(name, direction, width, role)
        }
    }

    /// Whether `self` and `o` carry the same meaning (role and element index).
    pub fn same_role(&self, o: &Port) -> bool {
        self.role == o.role && self.index == o.index
    }

    /// `role` or `role[index]` for messages.
    pub fn role_name(&self) -> String {
        if self.index == 0 {
            self.role.to_string()
        } else {
            format!("{}[{}]", self.role, self.index)
        }
    }

    /// A data input of `width` bits with no arithmetic meaning.
    pub fn input(name: impl Into<String>, width: u32) -> Port {
        Port::new(name, Direction::Input, width, Role::Data)
    }

    /// A data output of `width` bits with no arithmetic meaning.
    pub fn output(name: impl Into<String>, width: u32) -> Port {
        Port::new(name, Direction::Output, width, Role::Data)
    }

    /// A 1-bit control port; its direction follows from the role.
    pub fn control(name: impl Into<String>, role: Role) -> Port {
        let direction = role.direction().unwrap_or(Direction::Input);
        Port::new(name, direction, 1, role)
    }

    /// Mask of the port's `width` low bits.
    pub fn mask(&self) -> u64 {
        width_mask(self.width)
    }

    /// Number of hex digits needed to print a value of this port.
    pub fn hex_digits(&self) -> usize {
        self.width.div_ceil(4).max(1) as usize
    }
}

/// Whether `s` is a plain (non-escaped) Verilog identifier that is also safe in C++: the
/// lexical form, and not a reserved word of Verilog, SystemVerilog or C++
/// ([`reserved_word`]).
pub fn is_identifier(s: &str) -> bool {
    is_plain_name(s) && reserved_word(s).is_none()
}

/// The lexical form of a simple identifier (IEEE 1800-2017 §5.6): a letter or `_`, then
/// letters, digits and `_`.
fn is_plain_name(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Keywords of SystemVerilog (IEEE 1800-2017 Annex B; a superset of Verilog-2005's).
#[rustfmt::skip]
const SV_KEYWORDS: &[&str] = &[
    "accept_on", "alias", "always", "always_comb", "always_ff", "always_latch", "and", "assert",
    "assign", "assume", "automatic", "before", "begin", "bind", "bins", "binsof", "bit",
    "break", "buf", "bufif0", "bufif1", "byte", "case", "casex", "casez", "cell", "chandle",
    "checker", "class", "clocking", "cmos", "config", "const", "constraint", "context",
    "continue", "cover", "covergroup", "coverpoint", "cross", "deassign", "default", "defparam",
    "design", "disable", "dist", "do", "edge", "else", "end", "endcase", "endchecker",
    "endclass", "endclocking", "endconfig", "endfunction", "endgenerate", "endgroup",
    "endinterface", "endmodule", "endpackage", "endprimitive", "endprogram", "endproperty",
    "endspecify", "endsequence", "endtable", "endtask", "enum", "event", "eventually", "expect",
    "export", "extends", "extern", "final", "first_match", "for", "force", "foreach", "forever",
    "fork", "forkjoin", "function", "generate", "genvar", "global", "highz0", "highz1", "if",
    "iff", "ifnone", "ignore_bins", "illegal_bins", "implements", "implies", "import", "incdir",
    "include", "initial", "inout", "input", "inside", "instance", "int", "integer",
    "interconnect", "interface", "intersect", "join", "join_any", "join_none", "large", "let",
    "liblist", "library", "local", "localparam", "logic", "longint", "macromodule", "matches",
    "medium", "modport", "module", "nand", "negedge", "nettype", "new", "nexttime", "nmos",
    "nor", "noshowcancelled", "not", "notif0", "notif1", "null", "or", "output", "package",
    "packed", "parameter", "pmos", "posedge", "primitive", "priority", "program", "property",
    "protected", "pull0", "pull1", "pulldown", "pullup", "pulsestyle_ondetect",
    "pulsestyle_onevent", "pure", "rand", "randc", "randcase", "randsequence", "rcmos", "real",
    "realtime", "ref", "reg", "reject_on", "release", "repeat", "restrict", "return", "rnmos",
    "rpmos", "rtran", "rtranif0", "rtranif1", "s_always", "s_eventually", "s_nexttime",
    "s_until", "s_until_with", "scalared", "sequence", "shortint", "shortreal", "showcancelled",
    "signed", "small", "soft", "solve", "specify", "specparam", "static", "string", "strong",
    "strong0", "strong1", "struct", "super", "supply0", "supply1", "sync_accept_on",
    "sync_reject_on", "table", "tagged", "task", "this", "throughout", "time", "timeprecision",
    "timeunit", "tran", "tranif0", "tranif1", "tri", "tri0", "tri1", "triand", "trior",
    "trireg", "type", "typedef", "union", "unique", "unique0", "unsigned", "until",
    "until_with", "untyped", "use", "uwire", "var", "vectored", "virtual", "void", "wait",
    "wait_order", "wand", "weak", "weak0", "weak1", "while", "wildcard", "wire", "with",
    "within", "wor", "xnor", "xor",
];

/// Keywords and alternative tokens of C++ (ISO/IEC 14882:2020 [lex.key], [lex.digraph]).
#[rustfmt::skip]
const CPP_KEYWORDS: &[&str] = &[
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
];

/// The language that reserves `s` (`"SystemVerilog"` or `"C++"`), if any: such a name breaks
/// the simulation wrapper or Verilator's C++ model even where a Verilog-2005 parser would
/// accept it.
pub fn reserved_word(s: &str) -> Option<&'static str> {
    if SV_KEYWORDS.contains(&s) {
        Some("SystemVerilog")
    } else if CPP_KEYWORDS.contains(&s) {
        Some("C++")
    } else {
        None
    }
}

/// Why `name` (of a `what`, e.g. "port") cannot be used, if it cannot.
fn identifier_problem(what: &str, name: &str) -> Option<String> {
    if !is_plain_name(name) {
        return Some(format!(
            "{what} name `{}` is not a plain Verilog identifier (a letter or _, then letters, digits, _)",
            shown(name)
        ));
    }
    reserved_word(name).map(|lang| {
        format!("{what} name `{name}` is a reserved word of {lang}; rename it in the Verilog and the manifest (e.g. `{name}_i`)")
    })
}

/// User text for a message: control characters escaped, at most 80 characters (then `…`).
pub fn shown(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == 80 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A format in a manifest: a preset or P3109 name (`"e5m2"`, `"binary8p3se"`) or the full
/// object `{"k":8,"p":3,"bias":15,"signed":true,"specials":"ieee"}`; both are validated, and
/// an object with a key it does not know is an error naming the key.
fn de_format<'de, D: Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
    use serde::de::Error;
    const FORMS: &str = "a format is a name (\"e4m3\", \"binary8p3se\"; `fp8gen formats` lists them) or an object {\"k\": 8, \"p\": 4, \"bias\": 7, \"signed\": true, \"specials\": \"fn\"}";
    const KEYS: [&str; 5] = ["k", "p", "bias", "signed", "specials"];
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(n) => Format::parse(&n).map_err(Error::custom),
        serde_json::Value::Object(o) => {
            if let Some(k) = o.keys().find(|k| !KEYS.contains(&k.as_str())) {
                return Err(Error::custom(format!(
                    "unknown key `{}` in a format object; its keys are k, p, bias, signed, specials",
                    shown(k)
                )));
            }
            if let Some(k) = KEYS.iter().find(|k| !o.contains_key(**k)) {
                return Err(Error::custom(format!(
                    "a format object needs the key `{k}`; {FORMS}"
                )));
            }
            let f: Format = serde_json::from_value(serde_json::Value::Object(o))
                .map_err(|e| Error::custom(format!("bad format object: {e}; {FORMS}")))?;
            // The external IEEE formats (binary32, binary16, bfloat16) are wider than a small
            // format may be; they are accepted as themselves.
            if [Format::BINARY32, Format::BINARY16, Format::BFLOAT16].contains(&f) {
                Ok(f)
            } else {
                Format::new(f.k, f.p, f.bias, f.signed, f.specials).map_err(Error::custom)
            }
        }
        v => Err(Error::custom(format!(
            "{} is not a format; {FORMS}",
            json_kind(&v)
        ))),
    }
}

/// `a number`, `an array` … for messages about a JSON value of the wrong kind.
fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn de_opt_format<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Format>, D::Error> {
    #[derive(Deserialize)]
    struct W(#[serde(deserialize_with = "de_format")] Format);
    Ok(Option::<W>::deserialize(d)?.map(|w| w.0))
}

/// Formats of the operands and the result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Formats {
    /// Format of x (`decode`: the decoded format; `project`: the binary32/16/bfloat16 input).
    #[serde(deserialize_with = "de_format")]
    pub x: Format,
    /// Format of y (`mul`, `fma`, `mac`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_format"
    )]
    pub y: Option<Format>,
    /// Result format.
    #[serde(deserialize_with = "de_format")]
    pub r: Format,
    /// Format of the power-of-two block scales (roles `scale_x`, `scale_y` on `mul`, `fma`,
    /// `dot`; `scale_x` = the divisor of a scaled `project`, P3109 §5.1.2), if the core
    /// has them.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_format"
    )]
    pub scale: Option<Format>,
    /// Format of the addend `z` (role `z` of `fma` and `dot`) when it is not the unit's
    /// default (`fma`: the result format; `dot`: binary32; P3109 FMA<fx, fy, fz, fr>).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "de_opt_format"
    )]
    pub z: Option<Format>,
}

/// Rounding/saturation/option settings; a `None` mode means a run-time port.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Modes {
    /// Fixed rounding mode name (`rne` …), or `None` when `rm_i` selects it at run time.
    #[serde(default)]
    pub rounding: Option<String>,
    /// Fixed saturation mode name, or `None` when `sat_i` selects it.
    #[serde(default)]
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
    /// Small IEEE-style operand NaNs with a clear top trailing significand bit are signaling
    /// and raise `invalid` (IEEE 754 §6.2; CVFPU does this for FP8). Off by default: OCP
    /// E5M2 and P3109 have no signaling NaNs.
    #[serde(default, skip_serializing_if = "is_false")]
    pub signaling_nan: bool,
    /// `mac` only: 0 = the binary32 accumulator (one rounding per step); N > 0 = the exact
    /// fixed-point accumulator with N guard bits (`--acc exact --guard-bits N`: 2^N products
    /// of any magnitude sum exactly; one rounding on output).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub acc_guard_bits: u32,
    /// `mac` only: L ≥ 2 interleaved binary32 accumulators (`--interleave L`; 0 = one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interleave: u32,
    /// `add` only: the core computes `x − y` (`--sub`). A core with a `sub_i` port (role
    /// `sub`, `--sub dyn`) chooses at run time and leaves this false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub subtract: bool,
    /// The values the core's rounding port takes for each mode (a preset `fp8gen`, `riscv`,
    /// `ieee754`, or a map); `None`: fp8gen's [`ROUNDING_ENCODING`]. Values outside it are
    /// never driven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding_encoding: Option<RoundingEncoding>,
    /// Where the core's flag bits sit (a preset `riscv`, `fp8gen`, or a width and bit map);
    /// `None`: fp8gen's 4-bit {invalid, overflow, underflow, inexact}.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<FlagLayout>,
    /// Round-to-odd on overflow under satnone: `p3109` (±∞, P3109 §4.7.5; the default) or
    /// `ieee` (the largest finite value, as SoftFloat's `round_odd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_overflow: Option<golden::RtoOverflow>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A Verilog parameter override of a user core (`"WIDTH": 8` or `"MODE": "fast"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// An integer.
    Int(i64),
    /// A string (passed as a Verilog string literal).
    Str(String),
}

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Ok(ParamValue::Str(s)),
            serde_json::Value::Number(n) if n.as_i64().is_some() => {
                Ok(ParamValue::Int(n.as_i64().unwrap_or_default()))
            }
            v => Err(serde::de::Error::custom(format!(
                "a parameter value is an integer (\"WIDTH\": 8, 64-bit signed) or a string (\"MODE\": \"fast\"), not {}",
                match &v {
                    serde_json::Value::Number(_) => "a fraction or a number out of the 64-bit range",
                    v => json_kind(v),
                }
            ))),
        }
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Str(s) => write!(f, "\"{s}\""),
        }
    }
}

/// Verilog / SystemVerilog source files: one file (`"verilog": "core.v"`) or a list in
/// compilation order (`"verilog": ["pkg.sv", "core.sv"]`), relative to the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileList(pub Vec<String>);

impl Serialize for FileList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.len() == 1 {
            self.0[0].serialize(s)
        } else {
            self.0.serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for FileList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const FORMS: &str = "`verilog` is a file name (\"core.v\") or a list of file names in compilation order ([\"pkg.sv\", \"core.sv\"])";
        let bad = |what: &str| serde::de::Error::custom(format!("{FORMS}, not {what}"));
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Ok(FileList(vec![s])),
            serde_json::Value::Array(v) => v
                .into_iter()
                .map(|e| match e {
                    serde_json::Value::String(s) => Ok(s),
                    e => Err(bad(&format!("a list holding {}", json_kind(&e)))),
                })
                .collect::<Result<Vec<String>, D::Error>>()
                .map(FileList),
            v => Err(bad(json_kind(&v))),
        }
    }
}

fn default_schema() -> u32 {
    MANIFEST_SCHEMA
}

fn default_ii() -> u32 {
    1
}

fn is_empty_map<K, V>(m: &BTreeMap<K, V>) -> bool {
    m.is_empty()
}

/// `manifest.json`: everything needed to drive, verify and synthesize a core.
///
/// Required in a hand-written manifest: `unit`, `top`, `verilog`, `formats` (`x`, `r`, and
/// `y` for mul/fma/mac), `ports`, and the fixed modes the core implements (`modes.rounding`
/// unless the core has a `rounding` port, likewise `modes.saturation`). Everything else has a
/// default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Schema version ([`MANIFEST_SCHEMA`]).
    #[serde(default = "default_schema")]
    pub schema: u32,
    /// `fp8gen <version>`, or the name of another tool.
    #[serde(default)]
    pub generator: String,
    /// The canonical request that produced the core (`fp8gen gen …` with every option
    /// spelled out); never a path or a verification option.
    #[serde(default)]
    pub command: String,
    /// Unit kind.
    pub unit: Unit,
    /// Top module name.
    pub top: String,
    /// Source files, relative to the manifest's directory.
    pub verilog: FileList,
    /// Include directories (`` `include `` search path), relative to the manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include_dirs: Vec<String>,
    /// Preprocessor defines (`"NAME": "value"`, `""` for a bare define).
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub defines: BTreeMap<String, String>,
    /// Top-level parameter overrides.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub parameters: BTreeMap<String, ParamValue>,
    /// Formats.
    pub formats: Formats,
    /// Modes and options.
    #[serde(default)]
    pub modes: Modes,
    /// Pipeline stages requested (generated cores).
    #[serde(default)]
    pub stages: u32,
    /// Cycles from an input (with `valid_i`) to its result (with `valid_o`); 0 = combinational.
    #[serde(default)]
    pub latency: u32,
    /// Cycles between accepted inputs (1 = fully pipelined).
    #[serde(default = "default_ii")]
    pub initiation_interval: u32,
    /// Shape of a `dot` unit (elements, block scales, addend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dot: Option<DotShape>,
    /// Shape of a `quantize` unit (block size, scale policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockShape>,
    /// Ports in declaration order.
    pub ports: Vec<Port>,
}

/// Shape of a dot product: `n` elements per operand (ports `x0_i … x{n-1}_i`, role `x` with
/// indices 0..n) and an optional addend (role `z`, format `formats.z`, binary32 by
/// default); block scales are `formats.scale`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DotShape {
    /// Elements per operand.
    pub n: u32,
    /// Whether a binary32 addend is added.
    #[serde(default)]
    pub addend: bool,
}

/// Shape of a block quantizer: `n` elements (ports `z0_i … z{n-1}_i`, role `z` with
/// indices 0..n, and `r0_o …`) sharing one scale (`s_o`, role `scale_out`, format
/// `formats.scale`) computed by `policy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockShape {
    /// Elements per block.
    pub n: u32,
    /// The scale policy (`floor`, `ceil`, `even`, `rceil`: golden::ScalePolicy).
    #[serde(serialize_with = "ser_policy", deserialize_with = "de_policy")]
    pub policy: golden::ScalePolicy,
}

fn ser_policy<S: serde::Serializer>(p: &golden::ScalePolicy, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

fn de_policy<'de, D: serde::Deserializer<'de>>(d: D) -> Result<golden::ScalePolicy, D::Error> {
    let s = String::deserialize(d)?;
    golden::ScalePolicy::parse(&s).map_err(serde::de::Error::custom)
}

/// The first few characters of `text` after leading white space, for messages.
fn c_first(text: &str) -> String {
    text.trim_start().chars().take(12).collect()
}

/// A manifest that cannot be used, with the reason and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError(pub String);

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ManifestError {}

/// Largest port width the harness and the board shell support.
pub const MAX_PORT_WIDTH: u32 = 64;

/// The rules every reader of a core's port list applies (the manifest, the simulator's
/// `CoreSpec`, the FPGA flow's `Core`, the prover's pairs): the `top` and port names are
/// plain identifiers reserved by no language, no port is listed twice, widths are
/// 1..=`max_width`, a role fixes its direction and a control role is 1 bit, one port per
/// role (and element index), at most one kind of reset, `valid_in` and `valid_out`
/// together, a core without a clock has latency 0 and no reset, and there is a data input
/// and a data output besides the control ports ([`Role::is_control`]). The message names
/// the port and says how to fix it.
pub fn check_ports(top: &str, ports: &[Port], latency: u32, max_width: u32) -> Result<(), String> {
    if let Some(m) = identifier_problem("top", top) {
        return Err(m);
    }
    if ports.is_empty() {
        return Err(format!("module `{top}` has no ports"));
    }
    let mut names: Vec<&str> = Vec::new();
    for p in ports {
        if let Some(m) = identifier_problem("port", &p.name) {
            return Err(m);
        }
        if names.contains(&p.name.as_str()) {
            return Err(format!("port `{}` is listed twice", p.name));
        }
        names.push(&p.name);
        if p.width == 0 || p.width > max_width {
            return Err(format!(
                "port `{}` is {} bits wide; ports of 1..={max_width} bits are supported (split wider buses into several ports)",
                p.name, p.width
            ));
        }
        if let Some(d) = p.role.direction() {
            if d != p.direction {
                return Err(format!(
                    "port `{}` has role {} but is declared as {:?}; a {} port is an {:?}",
                    p.name, p.role, p.direction, p.role, d
                ));
            }
        }
        if p.role.is_control() && p.width != 1 {
            return Err(format!(
                "port `{}` has role {} and must be 1 bit wide, not {}",
                p.name, p.role, p.width
            ));
        }
    }
    for p in ports.iter().filter(|p| p.role != Role::Data) {
        let same: Vec<&str> = ports
            .iter()
            .filter(|q| q.same_role(p))
            .map(|q| q.name.as_str())
            .collect();
        if same.len() > 1 {
            return Err(format!(
                "ports {} all have role {}; one port per role (operands of several elements give each port its own \"index\")",
                same.join(", "),
                p.role_name()
            ));
        }
    }
    let has = |r: Role| ports.iter().any(|p| p.role == r);
    if has(Role::Reset) && has(Role::ResetN) {
        return Err("both an active-high and an active-low reset are listed".into());
    }
    if !has(Role::Clock) {
        if latency != 0 {
            return Err(format!(
                "latency is {latency} but the core has no clock port (role clock); a combinational core has latency 0: mark the clock port or set latency 0"
            ));
        }
        if let Some(p) = ports.iter().find(|p| p.role.is_clock_or_reset()) {
            return Err(format!(
                "port `{}` has role {} but the core has no clock port",
                p.name, p.role
            ));
        }
    }
    if has(Role::ValidIn) != has(Role::ValidOut) {
        return Err("valid_in and valid_out must be given together".into());
    }
    let data = |d: Direction| {
        ports
            .iter()
            .any(|p| p.direction == d && !p.role.is_control())
    };
    if !data(Direction::Input) {
        return Err(format!(
            "module `{top}` has no data input (a port other than clock, resets and valid)"
        ));
    }
    if !data(Direction::Output) {
        return Err(format!(
            "module `{top}` has no data output (a port other than valid_out)"
        ));
    }
    Ok(())
}

impl Manifest {
    /// The first port with a role, if any.
    pub fn port(&self, role: Role) -> Option<&Port> {
        self.ports.iter().find(|p| p.role == role && p.index == 0)
    }

    /// The port of `role` and element `index`.
    pub fn port_at(&self, role: Role, index: u32) -> Option<&Port> {
        self.ports
            .iter()
            .find(|p| p.role == role && p.index == index)
    }

    /// Whether the core has a clock port.
    pub fn is_clocked(&self) -> bool {
        self.port(Role::Clock).is_some()
    }

    /// Pretty JSON text (deterministic field order) with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Parses and structurally validates manifest text (see [`Manifest::validate`]).
    pub fn from_json(text: &str) -> Result<Manifest, ManifestError> {
        // A byte-order mark (some Windows editors write one) is not JSON; it carries no
        // meaning in UTF-8 and is skipped.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let first = text.trim_start().chars().next();
        if first.is_none() {
            return Err(ManifestError(
                "malformed manifest: the file is empty; manifest.json is a JSON object with the keys unit, top, verilog, formats and ports (`fp8gen gen` writes one to start from)".into(),
            ));
        }
        if first.is_some_and(|c| c != '{') {
            return Err(ManifestError(format!(
                "malformed manifest: manifest.json must be a JSON object {{\"unit\": …, \"top\": …, \"verilog\": …, \"formats\": …, \"ports\": …}}, not text starting with '{}'",
                shown(&c_first(text))
            )));
        }
        let m: Manifest = serde_json::from_str(text)
            .map_err(|e| ManifestError(format!("malformed manifest: {e}")))?;
        m.validate()?;
        Ok(m)
    }

    /// Reads `path` (a `manifest.json`, or a directory holding one); returns the manifest and
    /// the directory its relative paths are resolved against. Errors name the file.
    pub fn load(path: &Path) -> Result<(Manifest, PathBuf), ManifestError> {
        let file = if path.is_dir() {
            path.join("manifest.json")
        } else {
            path.to_path_buf()
        };
        let text = read_text_bounded(&file, MAX_JSON_BYTES, "manifests").map_err(|e| {
            ManifestError(if e.io.is_some() {
                format!(
                    "{e}; point at a directory written by `fp8gen gen` (or holding a manifest.json in the same schema)"
                )
            } else {
                e.message
            })
        })?;
        let dir = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."))
            .to_path_buf();
        let m = Manifest::from_json(&text)
            .map_err(|e| ManifestError(format!("{}: {}", file.display(), e.0)))?;
        Ok((m, dir))
    }

    /// The source files resolved against `dir`.
    pub fn source_paths(&self, dir: &Path) -> Vec<PathBuf> {
        self.verilog.0.iter().map(|f| dir.join(f)).collect()
    }

    /// The include directories resolved against `dir`.
    pub fn include_paths(&self, dir: &Path) -> Vec<PathBuf> {
        self.include_dirs.iter().map(|f| dir.join(f)).collect()
    }

    /// Structural checks: schema, the port list ([`check_ports`]), sources, stages and
    /// latency, initiation interval.
    pub fn validate(&self) -> Result<(), ManifestError> {
        let bad = |m: String| Err(ManifestError(m));
        if self.schema != MANIFEST_SCHEMA {
            return bad(format!(
                "schema {} is not supported; this fp8gen reads schema {MANIFEST_SCHEMA}",
                self.schema
            ));
        }
        check_ports(&self.top, &self.ports, self.latency, MAX_PORT_WIDTH).map_err(ManifestError)?;
        native::check(self).map_err(ManifestError)?;
        if self.verilog.0.is_empty() {
            return bad("`verilog` lists no source file".into());
        }
        for f in &self.verilog.0 {
            if f.trim().is_empty() {
                return bad("`verilog` holds an empty file name".into());
            }
        }
        for d in self.defines.keys() {
            if !is_plain_name(d) {
                return bad(format!("define `{}` is not a plain identifier", shown(d)));
            }
        }
        for p in self.parameters.keys() {
            if !is_plain_name(p) {
                return bad(format!(
                    "parameter `{}` is not a plain identifier",
                    shown(p)
                ));
            }
        }
        if !self.is_clocked() && self.stages != 0 {
            return bad(format!(
                "stages is {} but the core has no clock port (role clock); a combinational core has 0 stages: drop \"stages\" or add the clock port",
                self.stages
            ));
        }
        if self.is_clocked() && self.port(Role::ValidIn).is_none() && self.latency > 0 {
            return bad(
                "a pipelined core needs valid_in/valid_out ports so that results can be matched to inputs"
                    .into(),
            );
        }
        // A generated pipeline's latency follows from its stages: one cycle per stage, and
        // one more for mac's accumulator register.
        let stage_latency = self.stages + u32::from(self.unit.is_stateful());
        if self.stages > 0 && self.latency != stage_latency {
            return bad(format!(
                "stages is {} but latency is {}; a {} core with {} pipeline stages has latency {stage_latency}: fix one of them (or drop \"stages\", which only records how a core was generated)",
                self.stages, self.latency, self.unit, self.stages
            ));
        }
        if self.initiation_interval == 0 {
            return bad("initiation_interval must be at least 1".into());
        }
        if self.initiation_interval > 1 && !self.unit.is_stateful() {
            return bad(format!(
                "initiation_interval {} on a {} core: only stateful units (mac) may accept inputs less often than every cycle",
                self.initiation_interval, self.unit
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every NaN/Inf family as a manifest spells it (`"specials": "no-nan"`) is accepted back
    /// by `--specials` and `fp8gen.Format(specials=…)` (both use `Specials::parse`), so a
    /// manifest's format object can be handed to them as it is.
    #[test]
    fn manifest_spellings_of_specials_parse() {
        for sp in golden::Specials::ALL {
            let text = serde_json::to_string(&sp).expect("serialize");
            let name = text.trim_matches('"');
            assert_eq!(golden::Specials::parse(name).ok(), Some(sp), "{name}");
        }
    }

    fn mul_manifest() -> String {
        r#"{"unit":"mul","top":"m","verilog":"m.v",
            "formats":{"x":"e4m3","y":"e4m3","r":"e4m3"},
            "modes":{"rounding":"rne","saturation":"satfinite"},
            "ports":[{"name":"x_i","direction":"input","width":8,"role":"x"},
                     {"name":"y_i","direction":"input","width":8,"role":"y"},
                     {"name":"r_o","direction":"output","width":8,"role":"result"}]}"#
            .to_string()
    }

    #[test]
    fn minimal_manifest_with_preset_names_parses() {
        let m = Manifest::from_json(&mul_manifest()).unwrap();
        assert_eq!(m.schema, 1);
        assert_eq!(m.formats.x, Format::E4M3);
        assert_eq!(m.verilog.0, vec!["m.v".to_string()]);
        assert_eq!(m.initiation_interval, 1);
        // Round trip keeps the single file as a string.
        let j = m.to_json();
        assert!(j.contains("\"verilog\": \"m.v\""), "{j}");
        assert_eq!(Manifest::from_json(&j).unwrap(), m);
    }

    #[test]
    fn schema_and_latency_are_checked() {
        let t = mul_manifest().replacen('{', "{\"schema\":2,", 1);
        let e = Manifest::from_json(&t).unwrap_err().to_string();
        assert_eq!(
            e, "schema 2 is not supported; this fp8gen reads schema 1",
            "{e}"
        );
        let t = mul_manifest().replacen('{', "{\"latency\":3,", 1);
        let e = Manifest::from_json(&t).unwrap_err().to_string();
        assert!(
            e.starts_with("latency is 3 but the core has no clock port"),
            "{e}"
        );
    }

    #[test]
    fn invalid_format_objects_are_rejected() {
        let t = mul_manifest().replace(
            "\"x\":\"e4m3\"",
            "\"x\":{\"k\":8,\"p\":4,\"bias\":-2147483648,\"signed\":true,\"specials\":\"fn\"}",
        );
        let e = Manifest::from_json(&t).unwrap_err().to_string();
        assert!(e.contains("bias -2147483648 is out of range"), "{e}");
        let t = mul_manifest().replace("\"x\":\"e4m3\"", "\"x\":\"e9m9\"");
        let e = Manifest::from_json(&t).unwrap_err().to_string();
        assert!(e.contains("unknown format 'e9m9'"), "{e}");
    }

    #[test]
    fn file_lists_defines_and_parameters() {
        let t = mul_manifest()
            .replace("\"verilog\":\"m.v\"", "\"verilog\":[\"pkg.sv\",\"m.sv\"],\"include_dirs\":[\"inc\"],\"defines\":{\"FAST\":\"\"},\"parameters\":{\"W\":8,\"S\":\"x\"}");
        let m = Manifest::from_json(&t).unwrap();
        assert_eq!(m.verilog.0.len(), 2);
        assert_eq!(m.parameters["W"], ParamValue::Int(8));
        assert_eq!(m.parameters["S"].to_string(), "\"x\"");
        assert_eq!(
            m.source_paths(Path::new("/d")),
            vec![PathBuf::from("/d/pkg.sv"), PathBuf::from("/d/m.sv")]
        );
    }

    #[test]
    fn roles_fix_directions_and_control_widths() {
        let t = mul_manifest().replace(
            "{\"name\":\"r_o\",\"direction\":\"output\"",
            "{\"name\":\"r_o\",\"direction\":\"input\"",
        );
        let e = Manifest::from_json(&t).unwrap_err().to_string();
        assert!(
            e.contains("port `r_o` has role result but is declared as Input"),
            "{e}"
        );
        let e = Manifest::from_json(&mul_manifest().replace("\"role\":\"y\"", "\"role\":\"x\""))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "ports x_i, y_i all have role x; one port per role (operands of several elements give each port its own \"index\")"
        );
        let e = Manifest::from_json(&mul_manifest().replace("\"role\":\"y\"", "\"role\":\"why\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variant `why`"), "{e}");
    }

    /// Each hand-written manifest mistake and the message that names it (exact where the
    /// wording matters).
    #[test]
    fn manifest_mistakes_get_messages_that_name_them() {
        let m = mul_manifest();
        let cases: Vec<(String, &str)> = vec![
            (
                m.replace("\"x\":\"e4m3\"", "\"x\":{\"k\":8,\"p\":4,\"bias\":7,\"signed\":true,\"specials\":\"fn\",\"exp_bits\":4}"),
                "unknown key `exp_bits` in a format object; its keys are k, p, bias, signed, specials",
            ),
            (
                m.replace("\"x\":\"e4m3\"", "\"x\":{\"k\":8,\"p\":4,\"signed\":true,\"specials\":\"fn\"}"),
                "a format object needs the key `bias`",
            ),
            (
                m.replace("\"x\":\"e4m3\"", "\"x\":8"),
                "a number is not a format; a format is a name (\"e4m3\"",
            ),
            (
                m.replace("\"width\":8,\"role\":\"x\"", "\"width\":8,\"role\":\"x\",\"signed\":true"),
                "unknown field `signed`, expected one of `name`, `direction`, `width`, `role`, `index`",
            ),
            (
                m.replace("\"verilog\":\"m.v\"", "\"verilog\":7"),
                "`verilog` is a file name (\"core.v\") or a list of file names in compilation order ([\"pkg.sv\", \"core.sv\"]), not a number",
            ),
            (
                m.replace("\"verilog\":\"m.v\"", "\"verilog\":[\"m.v\",3]"),
                "not a list holding a number",
            ),
            (
                m.replace("\"verilog\":\"m.v\"", "\"verilog\":\"m.v\",\"parameters\":{\"W\":1.5}"),
                "a parameter value is an integer (\"WIDTH\": 8, 64-bit signed) or a string (\"MODE\": \"fast\"), not a fraction or a number out of the 64-bit range",
            ),
            (
                "[1, 2, 3]".to_string(),
                "malformed manifest: manifest.json must be a JSON object {\"unit\": …, \"top\": …, \"verilog\": …, \"formats\": …, \"ports\": …}, not text starting with '[1, 2, 3]'",
            ),
            (
                m.replace("\"name\":\"y_i\"", "\"name\":\"class\""),
                "port name `class` is a reserved word of SystemVerilog; rename it in the Verilog and the manifest (e.g. `class_i`)",
            ),
            (
                m.replace("\"name\":\"y_i\"", "\"name\":\"delete\""),
                "port name `delete` is a reserved word of C++",
            ),
            (
                m.replace("\"top\":\"m\"", "\"top\":\"module\""),
                "top name `module` is a reserved word of SystemVerilog",
            ),
            (
                m.replacen('{', "{\"stages\":2,", 1),
                "stages is 2 but the core has no clock port (role clock); a combinational core has 0 stages",
            ),
        ];
        for (text, want) in cases {
            let e = Manifest::from_json(&text).unwrap_err().to_string();
            assert!(e.contains(want), "got: {e}\nwant: {want}");
            assert!(!e.contains("untagged"), "{e}");
        }
        let e = Manifest::from_json(" \n").unwrap_err().to_string();
        assert!(
            e.starts_with("malformed manifest: the file is empty"),
            "{e}"
        );
        // A byte-order mark is skipped.
        assert!(Manifest::from_json(&format!("\u{feff}{m}")).is_ok());
        // Stages and latency of a clocked core agree.
        let clocked = m.replace(
            "\"ports\":[",
            "\"stages\":2,\"latency\":3,\"ports\":[{\"name\":\"clk\",\"direction\":\"input\",\"width\":1,\"role\":\"clock\"},{\"name\":\"v_i\",\"direction\":\"input\",\"width\":1,\"role\":\"valid_in\"},{\"name\":\"v_o\",\"direction\":\"output\",\"width\":1,\"role\":\"valid_out\"},",
        );
        let e = Manifest::from_json(&clocked).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "stages is 2 but latency is 3; a mul core with 2 pipeline stages has latency 2"
            ),
            "{e}"
        );
        assert!(Manifest::from_json(&clocked.replace("\"latency\":3", "\"latency\":2")).is_ok());
    }

    /// The one port-list check, as the simulator and the FPGA flow call it: each rule and
    /// the message that names what is wrong.
    #[test]
    fn port_list_rules_name_the_problem() {
        let x = Port::new("x_i", Direction::Input, 8, Role::X);
        let r = Port::new("r_o", Direction::Output, 8, Role::Result);
        let clk = Port::control("clk", Role::Clock);
        let cases: Vec<(Vec<Port>, u32, &str)> = vec![
            (vec![], 0, "module `m` has no ports"),
            (
                vec![Port::input("a", 65), r.clone()],
                0,
                "port `a` is 65 bits wide; ports of 1..=64 bits are supported (split wider buses into several ports)",
            ),
            (
                vec![x.clone(), r.clone()],
                2,
                "latency is 2 but the core has no clock port (role clock)",
            ),
            (
                vec![Port::control("rst_ni", Role::ResetN), x.clone(), r.clone()],
                0,
                "port `rst_ni` has role reset_n but the core has no clock port",
            ),
            (
                vec![clk.clone(), Port::control("v_i", Role::ValidIn), x.clone(), r.clone()],
                1,
                "valid_in and valid_out must be given together",
            ),
            (
                vec![clk.clone(), Port::control("c2", Role::Clock), x.clone(), r.clone()],
                0,
                "ports clk, c2 all have role clock",
            ),
            (
                vec![Port::control("v_i", Role::ValidIn), Port::control("v_o", Role::ValidOut), r.clone()],
                0,
                "module `m` has no data input (a port other than clock, resets and valid)",
            ),
            (
                vec![
                    Port::control("v_i", Role::ValidIn),
                    x.clone(),
                    Port::control("v_o", Role::ValidOut),
                ],
                0,
                "module `m` has no data output",
            ),
            (
                vec![Port::input("int", 8), r.clone()],
                0,
                "port name `int` is a reserved word of SystemVerilog",
            ),
        ];
        for (ports, latency, want) in cases {
            let e = check_ports("m", &ports, latency, MAX_PORT_WIDTH).unwrap_err();
            assert!(e.starts_with(want), "got: {e}\nwant: {want}");
        }
        assert!(check_ports("m", &[x.clone(), r.clone()], 0, MAX_PORT_WIDTH).is_ok());
        assert!(check_ports("m", &[Port::input("w", 1024), r], 0, 1024).is_ok());
    }

    #[test]
    fn data_and_control_roles() {
        for role in Role::ALL {
            let control = role.is_control();
            assert_eq!(control, role.is_clock_or_reset() || role.is_handshake());
            assert_eq!(role.is_data(true, false), !control, "{role}");
            assert_eq!(
                role.is_data(false, false),
                !role.is_clock_or_reset(),
                "{role}"
            );
            assert_eq!(
                role.is_data(true, true),
                !role.is_clock_or_reset(),
                "{role}"
            );
        }
    }

    #[test]
    fn index_bits_and_roles() {
        assert_eq!(index_bits(1), 1);
        assert_eq!(index_bits(2), 1);
        assert_eq!(index_bits(6), 3);
        assert_eq!(index_bits(9), 4);
        for r in Role::ALL {
            assert_eq!(Role::parse(r.name()), Some(r));
            let j = serde_json::to_string(&r).unwrap();
            assert_eq!(j, format!("\"{}\"", r.name()));
        }
        assert_eq!(
            Unit::list(),
            "decode, project, convert, add, mul, fma, mac, dot or quantize"
        );
    }
}
