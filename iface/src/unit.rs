//! What a unit is, as data: the [`Unit`] names and one [`UnitSpec`] per unit — its summary,
//! what each format option means for it, the options it accepts, how it is verified (its
//! vector space, its throughput and lane figures). This table is the registry every other
//! crate reads (the CLI's help and checks, verification, sweeps, the report); the code that
//! builds and evaluates a unit registers in the generator crate (`rtl::units::def`), with one
//! exhaustive `match` per crate so that a unit added here and forgotten there fails to
//! compile.

use golden::Format;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Unit kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Small-float code → binary32 + class flags + exact fields.
    Decode,
    /// binary32 (binary16, bfloat16) → small-float code.
    Project,
    /// x·y, one rounding.
    Mul,
    /// x·y + z, z and result binary32.
    Fma,
    /// Streaming accumulator acc ← x·y + acc.
    Mac,
    /// Σ x_i·y_i (· block scales) + z, exact, one rounding.
    Dot,
    /// Any format → any other, one rounding.
    Convert,
    /// MX block quantizer: N inputs → a shared scale from the block maximum + N elements.
    Quantize,
    /// x ± y, exact sum, one rounding.
    Add,
}

/// Where the x operand's format comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XFormat {
    /// `--format`.
    Format,
    /// `--in-format` (then `--format` names the result): its default, or `None` when the
    /// option is required.
    InFormat(Option<Format>),
}

/// Where the result format comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RFormat {
    /// Always this format.
    Fixed(Format),
    /// `--format` (the unit's x comes from `--in-format`).
    Format,
    /// `--out-format`, by default this format (`None`: the format of x).
    OutFormat(Option<Format>),
}

/// What the format options mean for a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatUse {
    /// The x operand.
    pub x: XFormat,
    /// Whether the unit has a y operand (`--format-y`, by default the format of x).
    pub y: bool,
    /// The result.
    pub r: RFormat,
}

/// An option beyond formats and modes; a unit lists the ones it accepts and every other
/// unit refuses them with one message built from the registry ([`Unit::accepting`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitOption {
    /// Power-of-two block scales (`--scaled`, `--scale-format`).
    Scales,
    /// Flush subnormals to zero (`--ftz`).
    Ftz,
    /// No `flags_o` port (`--no-flags`).
    NoFlags,
    /// A dot product's shape (`--n`, `--addend`).
    DotShape,
    /// The accumulator kind (`--acc`, `--guard-bits`).
    Accumulator,
    /// Interleaved accumulators (`--interleave`).
    Interleave,
    /// A block quantizer's shape (`--n`, `--scale-policy`; `--scale-format` names the scale).
    Block,
    /// Subtraction, fixed or by a `sub_i` port (`--sub`, `--sub dyn`).
    Sub,
    /// Round-to-odd overflow as IEEE-style hardware does it (`--rto-overflow ieee`: the largest
    /// finite value instead of P3109 v4.0 §4.7.5's ±∞ under satnone).
    RtoOverflow,
}

impl UnitOption {
    /// `<flags> apply(ies) to`, for messages.
    pub fn applies(self) -> String {
        let f = self.flag();
        format!(
            "{f} {}",
            if f.contains(" and ") {
                "apply to"
            } else {
                "applies to"
            }
        )
    }

    /// The command-line spelling, for messages.
    pub fn flag(self) -> &'static str {
        match self {
            UnitOption::Scales => "--scaled and --scale-format",
            UnitOption::Ftz => "--ftz",
            UnitOption::NoFlags => "--no-flags",
            UnitOption::DotShape => "--n and --addend",
            UnitOption::Accumulator => "--acc and --guard-bits",
            UnitOption::Interleave => "--interleave",
            UnitOption::Block => "--scale-policy",
            UnitOption::Sub => "--sub",
            UnitOption::RtoOverflow => "--rto-overflow ieee",
        }
    }
}

/// The vector space a unit is verified on (the verification crate builds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpaceKind {
    /// Exhaustive when the inputs are few, else structured + random over the input ports.
    Generic,
    /// Small-float x·y plus a binary32 addend: every product against a structured addend set.
    ProductAddend,
    /// Dot products: structured windows of elements (cancellation, exponent spread).
    Dot,
    /// A stateful unit: streams checked cycle by cycle.
    Stream,
    /// Block quantizers: structured blocks (binade and policy edges of the block maximum,
    /// outliers, zeros, subnormals, ties after scaling, specials) + random.
    Block,
}

/// What is true of a unit, as data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitSpec {
    /// Lower-case name (CLI, manifest, module names).
    pub name: &'static str,
    /// One line for `--help` and the docs.
    pub summary: &'static str,
    /// The meaning of the format options.
    pub formats: FormatUse,
    /// The operator between x and y in descriptions (`e4m3 x e5m2 -> binary32`); empty for
    /// a unit of one operand.
    pub operator: &'static str,
    /// The options it accepts beyond formats and modes.
    pub options: &'static [UnitOption],
    /// Whether it rounds (has rounding / saturation modes).
    pub rounds: bool,
    /// The vector space it is verified on.
    pub space: SpaceKind,
    /// Upper bound of the golden + simulation rate per thread on this machine class
    /// (vectors/s), for the run-time estimate that refuses runs nobody would wait for.
    pub rate: f64,
    /// Default simulation lanes (vectors per model evaluation).
    pub lanes: u32,
}

const B32: Format = Format::BINARY32;

const DECODE: UnitSpec = UnitSpec {
    name: "decode",
    summary: "small-float code -> binary32 value, class and exact fields",
    formats: FormatUse {
        x: XFormat::Format,
        y: false,
        r: RFormat::Fixed(B32),
    },
    operator: "",
    options: &[],
    rounds: false,
    space: SpaceKind::Generic,
    rate: 1.0e8,
    lanes: 16,
};

const PROJECT: UnitSpec = UnitSpec {
    name: "project",
    summary: "binary32 / binary16 / bfloat16 -> --format, one rounding (P3109 Project)",
    formats: FormatUse {
        x: XFormat::InFormat(Some(B32)),
        y: false,
        r: RFormat::Format,
    },
    operator: "",
    options: &[UnitOption::Scales, UnitOption::RtoOverflow],
    rounds: true,
    space: SpaceKind::Generic,
    rate: 1.0e8,
    lanes: 16,
};

const MUL: UnitSpec = UnitSpec {
    name: "mul",
    summary: "x * y -> --out-format (default the format of x), exact product, one rounding",
    formats: FormatUse {
        x: XFormat::Format,
        y: true,
        r: RFormat::OutFormat(None),
    },
    operator: "x",
    options: &[
        UnitOption::Scales,
        UnitOption::Ftz,
        UnitOption::NoFlags,
        UnitOption::RtoOverflow,
    ],
    rounds: true,
    space: SpaceKind::Generic,
    rate: 5.0e7,
    lanes: 8,
};

const FMA: UnitSpec = UnitSpec {
    name: "fma",
    summary: "x * y + z with a binary32 z and result, one rounding",
    formats: FormatUse {
        x: XFormat::Format,
        y: true,
        r: RFormat::Fixed(B32),
    },
    operator: "x",
    options: &[UnitOption::Scales, UnitOption::Ftz, UnitOption::RtoOverflow],
    rounds: true,
    space: SpaceKind::ProductAddend,
    rate: 3.0e7,
    lanes: 4,
};

const MAC: UnitSpec = UnitSpec {
    name: "mac",
    summary: "streaming accumulator acc <- x * y + acc (binary32, interleaved or exact)",
    formats: FormatUse {
        x: XFormat::Format,
        y: true,
        r: RFormat::Fixed(B32),
    },
    operator: "x",
    options: &[
        UnitOption::Ftz,
        UnitOption::Accumulator,
        UnitOption::Interleave,
    ],
    rounds: true,
    space: SpaceKind::Stream,
    rate: 1.0e7,
    lanes: 8,
};

const DOT: UnitSpec = UnitSpec {
    name: "dot",
    summary: "sum of N products x_i * y_i (block scales, + z), exact, one rounding",
    formats: FormatUse {
        x: XFormat::Format,
        y: true,
        r: RFormat::OutFormat(Some(B32)),
    },
    operator: "x",
    options: &[UnitOption::Scales, UnitOption::DotShape],
    rounds: true,
    space: SpaceKind::Dot,
    rate: 2.0e7,
    lanes: 4,
};

const CONVERT: UnitSpec = UnitSpec {
    name: "convert",
    summary: "--in-format (any format) -> --format, one rounding (e5m2 -> e4m3, e4m3 -> bfloat16)",
    formats: FormatUse {
        x: XFormat::InFormat(None),
        y: false,
        r: RFormat::Format,
    },
    operator: "",
    options: &[UnitOption::RtoOverflow],
    rounds: true,
    space: SpaceKind::Generic,
    rate: 1.0e8,
    lanes: 16,
};

const QUANTIZE: UnitSpec = UnitSpec {
    name: "quantize",
    summary: "MX block quantizer: --n inputs -> shared scale (--scale-policy) + --format elements",
    formats: FormatUse {
        x: XFormat::InFormat(Some(B32)),
        y: false,
        r: RFormat::Format,
    },
    operator: "",
    options: &[
        UnitOption::Scales,
        UnitOption::Block,
        UnitOption::RtoOverflow,
    ],
    rounds: true,
    space: SpaceKind::Block,
    rate: 5.0e6,
    lanes: 4,
};

const ADD: UnitSpec = UnitSpec {
    name: "add",
    summary: "x + y or x - y (--sub, --sub dyn) -> --out-format (default the format of x), exact sum, one rounding",
    formats: FormatUse {
        x: XFormat::Format,
        y: true,
        r: RFormat::OutFormat(None),
    },
    operator: "+",
    options: &[UnitOption::Sub, UnitOption::RtoOverflow],
    rounds: true,
    space: SpaceKind::Generic,
    rate: 5.0e7,
    lanes: 8,
};

impl Unit {
    /// Every unit, in the order of the help texts.
    pub const ALL: [Unit; 9] = [
        Unit::Decode,
        Unit::Project,
        Unit::Convert,
        Unit::Add,
        Unit::Mul,
        Unit::Fma,
        Unit::Mac,
        Unit::Dot,
        Unit::Quantize,
    ];

    /// The unit's descriptor: the registry.
    pub const fn spec(self) -> &'static UnitSpec {
        match self {
            Unit::Decode => &DECODE,
            Unit::Project => &PROJECT,
            Unit::Mul => &MUL,
            Unit::Fma => &FMA,
            Unit::Mac => &MAC,
            Unit::Dot => &DOT,
            Unit::Convert => &CONVERT,
            Unit::Quantize => &QUANTIZE,
            Unit::Add => &ADD,
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Parses a unit name (case-insensitive).
    pub fn parse(s: &str) -> Option<Unit> {
        Unit::ALL
            .into_iter()
            .find(|u| u.name().eq_ignore_ascii_case(s.trim()))
    }

    /// Whether the unit keeps state between inputs (verified on streams, cycle by cycle).
    pub fn is_stateful(self) -> bool {
        self.spec().space == SpaceKind::Stream
    }

    /// Whether the unit accepts `opt`.
    pub fn accepts(self, opt: UnitOption) -> bool {
        self.spec().options.contains(&opt)
    }

    /// `a, b or c` of the units accepting `opt`, for messages.
    pub fn accepting(opt: UnitOption) -> String {
        or_list(Unit::ALL.into_iter().filter(|u| u.accepts(opt)))
    }

    /// `a, b or c` of the units whose formats satisfy `pred`, for messages.
    pub fn with_formats(pred: impl Fn(&FormatUse) -> bool) -> String {
        or_list(Unit::ALL.into_iter().filter(|u| pred(&u.spec().formats)))
    }

    /// `decode, project, … or dot` for messages.
    pub fn list() -> String {
        or_list(Unit::ALL)
    }

    /// One line per unit: `  name     summary`, for `--help`.
    pub fn help_table() -> String {
        Unit::ALL
            .iter()
            .map(|u| format!("  {:<8} {}", u.name(), u.spec().summary))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn or_list(units: impl IntoIterator<Item = Unit>) -> String {
    let names: Vec<&str> = units.into_iter().map(|u| u.name()).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_are_unique() {
        for u in Unit::ALL {
            assert_eq!(Unit::parse(u.name()), Some(u));
            assert_eq!(Unit::parse(&u.name().to_uppercase()), Some(u));
            assert_eq!(Unit::ALL.iter().filter(|v| v.name() == u.name()).count(), 1);
            let json = serde_json::to_string(&u).unwrap();
            assert_eq!(json, format!("\"{}\"", u.name()));
        }
        assert_eq!(Unit::parse("adder"), None);
    }

    #[test]
    fn option_lists_come_from_the_table() {
        assert_eq!(Unit::accepting(UnitOption::Ftz), "mul, fma or mac");
        assert_eq!(Unit::accepting(UnitOption::NoFlags), "mul");
        assert_eq!(
            Unit::accepting(UnitOption::Scales),
            "project, mul, fma, dot or quantize"
        );
        assert!(Unit::Mac.is_stateful() && !Unit::Dot.is_stateful());
    }
}
