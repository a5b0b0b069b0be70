//! A core's own encodings, so that users' RTL is verified as it is (no wrapper): the values
//! its rounding-mode port takes for each mode (`modes.rounding_encoding`), where its flag
//! bits sit (`modes.flags`), and input ports held constant (`"tie"` on a port). See
//! docs/byo.md.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::{shown, Manifest, Role, DETERMINISTIC_ROUNDINGS, ROUNDING_ENCODING};

/// `modes.rounding_encoding`: the values of the core's rounding port for each mode, as a
/// preset name or a map from port value (decimal or `0x` hex, as a JSON key) to mode name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RoundingEncoding {
    /// `fp8gen`, `riscv` or `ieee754` ([`ROUNDING_PRESETS`]).
    Preset(String),
    /// `{"0": "rne", "1": "rtz", …}`.
    Map(BTreeMap<String, String>),
}

/// A rounding encoding preset: name, `(port value, mode)` pairs, where the order comes from.
pub type RoundingPreset = (&'static str, &'static [(u64, &'static str)], &'static str);

/// The rounding encoding presets: name, `(port value, mode)` pairs, and where the order
/// comes from.
pub const ROUNDING_PRESETS: [RoundingPreset; 3] = [
    (
        "fp8gen",
        &[
            (0, "rne"),
            (1, "rna"),
            (2, "rtp"),
            (3, "rtn"),
            (4, "rtz"),
            (5, "rto"),
            (6, "sra"),
            (7, "srb"),
            (8, "src"),
        ],
        "fp8gen's own rm_i encoding (iface::ROUNDING_ENCODING)",
    ),
    (
        "riscv",
        &[(0, "rne"), (1, "rtz"), (2, "rtn"), (3, "rtp"), (4, "rna")],
        "RISC-V frm: RNE 0, RTZ 1, RDN 2, RUP 3, RMM 4 (5, 6 reserved, 7 = dynamic)",
    ),
    (
        "ieee754",
        &[(0, "rne"), (1, "rna"), (2, "rtp"), (3, "rtn"), (4, "rtz")],
        "the order IEEE 754-2019 §4.3 defines the rounding-direction attributes: \
         roundTiesToEven, roundTiesToAway (§4.3.1), roundTowardPositive, roundTowardNegative, \
         roundTowardZero (§4.3.2)",
    ),
];

/// Parses a port value written as a JSON key: decimal or `0x` hex.
fn parse_value(s: &str) -> Option<u64> {
    let t = s.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

impl RoundingEncoding {
    /// `(port value, mode name)` pairs in value order, for a core with `sr_bits` random bits
    /// (the stochastic modes only with random bits). The error names the key or value.
    pub fn table(&self, sr_bits: u32) -> Result<Vec<(u64, String)>, String> {
        let allowed = if sr_bits > 0 {
            ROUNDING_ENCODING.len()
        } else {
            DETERMINISTIC_ROUNDINGS
        };
        let names = &ROUNDING_ENCODING[..allowed];
        let v: Vec<(u64, String)> = match self {
            RoundingEncoding::Preset(p) => {
                let Some((_, pairs, _)) = ROUNDING_PRESETS.iter().find(|(n, _, _)| n == p) else {
                    return Err(format!(
                        "modes.rounding_encoding: unknown preset `{}`; presets are fp8gen, riscv, ieee754, or give a map {{\"0\": \"rne\", \"1\": \"rtz\", …}}",
                        shown(p)
                    ));
                };
                pairs
                    .iter()
                    .filter(|(_, m)| names.contains(m))
                    .map(|(v, m)| (*v, m.to_string()))
                    .collect()
            }
            RoundingEncoding::Map(m) => {
                let mut v = Vec::new();
                for (k, mode) in m {
                    let Some(val) = parse_value(k) else {
                        return Err(format!(
                            "modes.rounding_encoding: key `{}` is not a port value; keys are the values of the rounding port (\"0\", \"4\", \"0x7\")",
                            shown(k)
                        ));
                    };
                    if !names.contains(&mode.as_str()) {
                        return Err(format!(
                            "modes.rounding_encoding: `{}` (value {val}) is not a rounding mode of this core; modes are {}",
                            shown(mode),
                            names.join(", ")
                        ));
                    }
                    if let Some((w, _)) = v.iter().find(|(_, n)| n == mode) {
                        return Err(format!(
                            "modes.rounding_encoding: values {w} and {val} both select {mode}; give each mode one value"
                        ));
                    }
                    if v.iter().any(|(w, _)| *w == val) {
                        return Err(format!(
                            "modes.rounding_encoding: value {val} is given twice"
                        ));
                    }
                    v.push((val, mode.clone()));
                }
                v.sort();
                v
            }
        };
        if v.is_empty() {
            return Err("modes.rounding_encoding selects no rounding mode".into());
        }
        Ok(v)
    }
}

/// The flag names a flags map may place: P3109/IEEE 754 §7 exceptions (`divzero` is never
/// raised by fp8gen's units and is checked to be 0).
pub const FLAG_NAMES: [&str; 5] = ["invalid", "divzero", "overflow", "underflow", "inexact"];

/// The flags fp8gen's units raise, with their bit in the canonical 4-bit flags port.
pub const CANONICAL_FLAGS: [(&str, u32); 4] = [
    ("invalid", 3),
    ("overflow", 2),
    ("underflow", 1),
    ("inexact", 0),
];

/// Widest flags port a map describes.
pub const MAX_FLAGS_WIDTH: u32 = 8;

/// `modes.flags`: where the core's flag bits sit, as a preset (`riscv`: the fflags layout
/// NV 4, DZ 3, OF 2, UF 1, NX 0; `fp8gen`: the canonical 4 bits) or
/// `{"width": 5, "bits": {"invalid": 4, …}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FlagLayout {
    /// `riscv` or `fp8gen`.
    Preset(String),
    /// Width and bit of each named flag.
    Map {
        /// Width of the flags port.
        width: u32,
        /// Bit of each flag.
        bits: BTreeMap<String, u32>,
    },
}

/// A resolved flags layout: the port width and `(name, bit)` of every named flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagBits {
    /// Width of the flags port.
    pub width: u32,
    /// Named bits, in [`FLAG_NAMES`] order.
    pub bits: Vec<(String, u32)>,
}

impl FlagBits {
    /// The canonical layout of fp8gen's flags port.
    pub fn canonical() -> FlagBits {
        FlagBits {
            width: 4,
            bits: CANONICAL_FLAGS
                .iter()
                .map(|(n, b)| (n.to_string(), *b))
                .collect(),
        }
    }

    /// The bit of flag `name`.
    pub fn bit(&self, name: &str) -> Option<u32> {
        self.bits.iter().find(|(n, _)| n == name).map(|(_, b)| *b)
    }

    /// The name of bit `b` (`bit5` for an unnamed bit).
    pub fn name(&self, b: u32) -> String {
        self.bits
            .iter()
            .find(|(_, x)| *x == b)
            .map_or_else(|| format!("bit{b}"), |(n, _)| n.clone())
    }
}

impl FlagLayout {
    /// The resolved layout; the error names the key that is wrong.
    pub fn resolve(&self) -> Result<FlagBits, String> {
        let (width, bits) = match self {
            FlagLayout::Preset(p) if p == "fp8gen" => return Ok(FlagBits::canonical()),
            FlagLayout::Preset(p) if p == "riscv" => {
                let b = [
                    ("invalid", 4),
                    ("divzero", 3),
                    ("overflow", 2),
                    ("underflow", 1),
                    ("inexact", 0),
                ];
                (5, b.iter().map(|(n, b)| (n.to_string(), *b)).collect())
            }
            FlagLayout::Preset(p) => {
                return Err(format!(
                    "modes.flags: unknown preset `{}`; presets are riscv (fflags NV DZ OF UF NX) and fp8gen, or give {{\"width\": 5, \"bits\": {{\"invalid\": 4, …}}}}",
                    shown(p)
                ))
            }
            FlagLayout::Map { width, bits } => (*width, bits.clone()),
        };
        if width == 0 || width > MAX_FLAGS_WIDTH {
            return Err(format!(
                "modes.flags: width {width}; a flags port of 1..={MAX_FLAGS_WIDTH} bits is supported"
            ));
        }
        let mut out: Vec<(String, u32)> = Vec::new();
        for (name, &bit) in &bits {
            if !FLAG_NAMES.contains(&name.as_str()) {
                return Err(format!(
                    "modes.flags.bits: unknown flag `{}`; flags are {}",
                    shown(name),
                    FLAG_NAMES.join(", ")
                ));
            }
            if bit >= width {
                return Err(format!(
                    "modes.flags.bits.{name}: bit {bit} is outside the {width}-bit flags port"
                ));
            }
            if let Some((o, _)) = out.iter().find(|(_, b)| *b == bit) {
                return Err(format!(
                    "modes.flags.bits: {o} and {name} are both bit {bit}"
                ));
            }
            out.push((name.clone(), bit));
        }
        let missing: Vec<&str> = CANONICAL_FLAGS
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| !out.iter().any(|(m, _)| m == n))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "modes.flags.bits places no bit for {}; every flag the unit raises needs a bit (to leave one unchecked, verify with --ignore flags.<name>)",
                missing.join(", ")
            ));
        }
        out.sort_by_key(|(n, _)| FLAG_NAMES.iter().position(|f| f == n));
        Ok(FlagBits { width, bits: out })
    }
}

/// The native-encoding checks of a manifest: the rounding encoding and flags map resolve,
/// each describes a port the core has, and tied ports are data inputs whose value fits.
pub(crate) fn check(m: &Manifest) -> Result<(), String> {
    if let Some(e) = &m.modes.rounding_encoding {
        let t = e.table(m.modes.sr_bits)?;
        let Some(p) = m.port(Role::Rounding) else {
            return Err(
                "modes.rounding_encoding describes the rounding port, but the core has none (role rounding); drop it or add the port".into(),
            );
        };
        if let Some((v, mode)) = t.iter().find(|(v, _)| *v > p.mask()) {
            return Err(format!(
                "modes.rounding_encoding: value {v} ({mode}) does not fit the {}-bit port `{}`",
                p.width, p.name
            ));
        }
    }
    if let Some(f) = &m.modes.flags {
        let f = f.resolve()?;
        match m.port(Role::Flags) {
            None => {
                return Err(
                    "modes.flags describes the flags port, but the core has none (role flags); drop it or add the port".into(),
                )
            }
            Some(p) if p.width != f.width => {
                return Err(format!(
                    "modes.flags: width {} but port `{}` is {} bits wide; make them agree",
                    f.width, p.name, p.width
                ))
            }
            _ => {}
        }
    }
    for p in &m.ports {
        let Some(v) = p.tie else { continue };
        if p.direction != crate::Direction::Input || p.role != Role::Data {
            return Err(format!(
                "port `{}` has \"tie\" but is {} with role {}; only data inputs (role data) are tied",
                p.name,
                if p.direction == crate::Direction::Input {
                    "an input"
                } else {
                    "an output"
                },
                p.role
            ));
        }
        if v & !p.mask() != 0 {
            return Err(format!(
                "port `{}`: tie value {v:#x} does not fit its {} bits",
                p.name, p.width
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYO: &str = include_str!("../../tests/fixtures/byo/manifest.json");

    #[test]
    fn native_fields_round_trip_and_are_absent_when_unused() {
        let m = Manifest::from_json(BYO).unwrap();
        assert_eq!(
            m.modes.rounding_encoding,
            Some(RoundingEncoding::Preset("riscv".into()))
        );
        let t = m
            .modes
            .rounding_encoding
            .as_ref()
            .unwrap()
            .table(0)
            .unwrap();
        assert_eq!(t[4], (4, "rna".to_string()));
        let fb = m.modes.flags.as_ref().unwrap().resolve().unwrap();
        assert_eq!(
            (fb.width, fb.bit("divzero"), fb.name(7)),
            (5, Some(3), "bit7".into())
        );
        assert_eq!(m.ports[3].tie, Some(1));
        assert_eq!(Manifest::from_json(&m.to_json()).unwrap(), m);
        // Without them, nothing new is written.
        let mut plain = m.clone();
        plain.modes.rounding_encoding = None;
        plain.modes.flags = None;
        plain.modes.saturation = Some("satfinite".into());
        plain.ports[3].tie = None;
        plain.ports[3].role = Role::Data;
        let j = plain.to_json();
        for k in ["tie", "rounding_encoding", "\"flags\":", "rto_overflow"] {
            assert!(!j.contains(k), "{k} in {j}");
        }
        // The riscv flags preset equals the fixture's explicit map.
        assert_eq!(FlagLayout::Preset("riscv".into()).resolve().unwrap(), fb);
        // ieee754: the order of IEEE 754-2019 §4.3, no round-to-odd.
        let ieee = RoundingEncoding::Preset("ieee754".into()).table(0).unwrap();
        let names: Vec<&str> = ieee.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["rne", "rna", "rtp", "rtn", "rtz"]);
    }
}
