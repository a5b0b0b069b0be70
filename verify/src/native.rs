//! A user's core as it is (docs/byo.md): its rounding port in its own encoding
//! (`modes.rounding_encoding`), its flag bits where it puts them (`modes.flags`) and its tied
//! ports (`"tie"`), translated to and from the golden model's canonical ports around every
//! vector; the mismatch classifier of a run; what the summary says about them.

use std::collections::BTreeMap;
use std::sync::Arc;

use iface::{native::CANONICAL_FLAGS, FlagBits, Manifest, Port, Role};
use sim::CoreSpec;

use crate::classify::Classes;
use crate::{usage, Dut, Plan, VerifyError};

/// `(port value, mode)` of the core's rounding encoding (empty without one).
pub(crate) fn rounding_table(m: &Manifest) -> Result<Vec<(u64, golden::Rounding)>, VerifyError> {
    let Some(e) = &m.modes.rounding_encoding else {
        return Ok(Vec::new());
    };
    e.table(m.modes.sr_bits)
        .map_err(usage)?
        .into_iter()
        .map(|(v, n)| {
            golden::Rounding::parse(&n, m.modes.sr_bits.clamp(1, 255) as u8)
                .map(|r| (v, r))
                .map_err(|e| usage(format!("modes.rounding_encoding: {e}")))
        })
        .collect()
}

/// The core's flag layout (fp8gen's 4 bits without `modes.flags`).
pub(crate) fn flag_bits(m: &Manifest) -> FlagBits {
    m.modes
        .flags
        .as_ref()
        .and_then(|f| f.resolve().ok())
        .unwrap_or_else(FlagBits::canonical)
}

/// Translations between the core's columns and the canonical ones.
#[derive(Debug, Default)]
pub(crate) struct Native {
    /// Tied data inputs: (core input column, value).
    ties: Vec<(usize, u64)>,
    /// The rounding port: (core input column, (canonical value, core value) pairs).
    rm: Option<(usize, Vec<(u64, u64)>)>,
    /// The flags port: (core output column, (canonical bit, core bit) pairs).
    flags: Option<(usize, Vec<(u32, u32)>)>,
}

impl Native {
    pub(crate) fn new(spec: &CoreSpec, m: &Manifest) -> Result<Native, VerifyError> {
        let ins: Vec<&Port> = spec.data_inputs().collect();
        let ties = ins
            .iter()
            .enumerate()
            .filter_map(|(j, p)| p.tie.map(|v| (j, v)))
            .collect();
        let rm = match ins.iter().position(|p| p.role == Role::Rounding) {
            Some(col) if m.modes.rounding_encoding.is_some() => Some((
                col,
                rounding_table(m)?
                    .into_iter()
                    .map(|(v, r)| (rtl::blocks::rounding_index(r) as u64, v))
                    .collect(),
            )),
            _ => None,
        };
        let flags = match spec.data_outputs().position(|p| p.role == Role::Flags) {
            Some(col) if m.modes.flags.is_some() => {
                let fb = flag_bits(m);
                Some((
                    col,
                    CANONICAL_FLAGS
                        .iter()
                        .filter_map(|(n, cb)| fb.bit(n).map(|kb| (*cb, kb)))
                        .collect(),
                ))
            }
            _ => None,
        };
        Ok(Native { ties, rm, flags })
    }

    /// Nothing to translate: the core uses fp8gen's encodings and ties nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.ties.is_empty() && self.rm.is_none() && self.flags.is_none()
    }

    /// A core input row from one with canonical values: tied ports set, the rounding mode
    /// in the core's encoding.
    pub(crate) fn to_core(&self, row: &mut [u64]) {
        for &(j, v) in &self.ties {
            row[j] = v;
        }
        if let Some((j, pairs)) = &self.rm {
            if let Some((_, v)) = pairs.iter().find(|(c, _)| *c == row[*j]) {
                row[*j] = *v;
            }
        }
    }

    /// The canonical value of core input column `j` holding `v`.
    pub(crate) fn to_canonical(&self, j: usize, v: u64) -> u64 {
        match &self.rm {
            Some((col, pairs)) if *col == j => {
                pairs.iter().find(|(_, k)| *k == v).map_or(v, |(c, _)| *c)
            }
            _ => v,
        }
    }

    /// The golden outputs in the core's layout: the canonical flag bits moved to the core's
    /// bits (every other bit of the core's flags port, `divzero` included, expected 0).
    pub(crate) fn outputs_to_core(&self, out: &mut [u64]) {
        if let Some((col, pairs)) = &self.flags {
            let c = out[*col];
            out[*col] = pairs
                .iter()
                .filter(|(cb, _)| c >> cb & 1 != 0)
                .fold(0, |a, (_, kb)| a | 1 << kb);
        }
    }
}

/// The classifier of a vector run: modes by the core's port values, the result's format,
/// the flag layout.
pub(crate) fn classifier(
    dut: &Dut,
    spec: &CoreSpec,
    combos: &[(u64, u64)],
    names: &[String],
) -> sim::Classifier {
    let m = &dut.manifest;
    let ins: Vec<&Port> = spec.data_inputs().collect();
    let outs: Vec<&Port> = spec.data_outputs().collect();
    let rm_col = ins.iter().position(|p| p.role == Role::Rounding);
    let sat_col = ins.iter().position(|p| p.role == Role::Saturation);
    let table = rounding_table(m).unwrap_or_default();
    let core_rm = |c: u64| {
        table
            .iter()
            .find(|(_, r)| rtl::blocks::rounding_index(*r) as u64 == c)
            .map_or(c, |(v, _)| *v)
    };
    let modes = combos
        .iter()
        .zip(names)
        .map(|(&(rm, sat), n)| (core_rm(rm), sat, n.clone()))
        .collect();
    let r = dut.request.formats.r;
    let result = outs
        .iter()
        .position(|p| p.role == Role::Result && p.width == r.k)
        .map(|c| (c, r));
    let flags = outs
        .iter()
        .position(|p| p.role == Role::Flags)
        .map(|c| (c, flag_bits(m)));
    sim::Classifier(Arc::new(Classes {
        rm_col,
        sat_col,
        modes,
        result,
        flags,
    }))
}

/// The summary's account of the core's own encodings, tied ports and waived outputs.
pub(crate) fn describe(dut: &Dut, plan: &Plan, meta: &mut BTreeMap<String, String>) {
    let m = &dut.manifest;
    let tied: Vec<String> = m
        .ports
        .iter()
        .filter_map(|p| p.tie.map(|v| format!("{} = {v:#x}", p.name)))
        .collect();
    if !tied.is_empty() {
        meta.insert("tied".into(), tied.join(", "));
    }
    if let (Some(e), Some(p)) = (&m.modes.rounding_encoding, m.port(Role::Rounding)) {
        let pairs: Vec<String> = rounding_table(m)
            .unwrap_or_default()
            .iter()
            .map(|(v, r)| format!("{} = {v}", r.name()))
            .collect();
        let how = match e {
            iface::RoundingEncoding::Preset(n) => format!("{n}: "),
            iface::RoundingEncoding::Map(_) => String::new(),
        };
        meta.insert(
            "rounding_encoding".into(),
            format!(
                "{}: {how}{} (no other value driven)",
                p.name,
                pairs.join(", ")
            ),
        );
    }
    let fb = flag_bits(m);
    let flags_port = m.port(Role::Flags);
    if let (Some(_), Some(p)) = (&m.modes.flags, flags_port) {
        let bits: Vec<String> = (0..fb.width)
            .rev()
            .map(|b| {
                let n = fb.name(b);
                if CANONICAL_FLAGS.iter().any(|(c, _)| *c == n) {
                    format!("{b} {n}")
                } else {
                    format!("{b} {n} (never raised: checked 0)")
                }
            })
            .collect();
        meta.insert(
            "flags_layout".into(),
            format!("{}[{}]: bits {}", p.name, p.width, bits.join(", ")),
        );
    }
    let mut waived: Vec<String> = plan
        .ignore
        .iter()
        .map(|r| match m.port(*r) {
            Some(p) => format!("{r} (all of {})", p.name),
            None => r.to_string(),
        })
        .collect();
    for n in &plan.ignore_flags {
        match (fb.bit(n), flags_port) {
            (Some(b), Some(p)) => waived.push(format!("flags.{n} ({} bit {b})", p.name)),
            _ => waived.push(format!("flags.{n}")),
        }
    }
    if !waived.is_empty() {
        meta.insert("waived".into(), waived.join(", "));
    }
}
