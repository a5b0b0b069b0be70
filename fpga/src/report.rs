//! Parsing of tool reports: yosys `stat -json` (cell counts per module) and nextpnr's
//! `--report` JSON (Fmax per clock, device utilisation), with a fallback to nextpnr's log
//! text (`Max frequency for clock …`) for builds without `--report`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Arch, FpgaError};

/// What a cell type counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellClass {
    /// Look-up table (SB_LUT4, LUT4, gowin LUT1..LUT4).
    Lut,
    /// Flip-flop.
    Ff,
    /// Carry cell (SB_CARRY, CCU2C, gowin ALU).
    Carry,
    /// Hard multiplier / DSP block.
    Dsp,
    /// Wide-function mux (PFUMX, L6MUX21, MUX2_LUT5…).
    Mux,
    /// Block or distributed RAM.
    Ram,
    /// Constant drivers and I/O buffers: not logic, not counted.
    Ignored,
    /// Any other primitive (counted in `cells`).
    Other,
}

/// Classifies a mapped cell type of the given architecture.
pub fn classify(arch: Arch, ty: &str) -> CellClass {
    if ty.starts_with('$') {
        return CellClass::Ignored;
    }
    match arch {
        Arch::Ice40 => match ty {
            "SB_LUT4" => CellClass::Lut,
            "SB_CARRY" => CellClass::Carry,
            "SB_MAC16" => CellClass::Dsp,
            "SB_RAM40_4K" | "SB_SPRAM256KA" => CellClass::Ram,
            "SB_IO" | "SB_GB" | "SB_GB_IO" => CellClass::Ignored,
            t if t.starts_with("SB_DFF") => CellClass::Ff,
            _ => CellClass::Other,
        },
        Arch::Ecp5 => match ty {
            "LUT4" => CellClass::Lut,
            "TRELLIS_FF" => CellClass::Ff,
            "CCU2C" => CellClass::Carry,
            "MULT18X18D" | "ALU54B" => CellClass::Dsp,
            "PFUMX" | "L6MUX21" => CellClass::Mux,
            "DP16KD" | "TRELLIS_DPR16X4" | "TRELLIS_RAMW" => CellClass::Ram,
            "VHI" | "VLO" | "TRELLIS_IO" | "DCCA" => CellClass::Ignored,
            _ => CellClass::Other,
        },
        Arch::Gowin => match ty {
            "LUT1" | "LUT2" | "LUT3" | "LUT4" => CellClass::Lut,
            "ALU" => CellClass::Carry,
            "GND" | "VCC" | "IBUF" | "OBUF" | "TBUF" | "IOBUF" => CellClass::Ignored,
            t if t.starts_with("MULT") || t.starts_with("ALU54") || t.starts_with("PADD") => {
                CellClass::Dsp
            }
            t if t.starts_with("MUX2_LUT") => CellClass::Mux,
            t if t.starts_with("DFF") => CellClass::Ff,
            t if t.starts_with("RAM16") || t.starts_with("SDPB") || t.starts_with("DPB") => {
                CellClass::Ram
            }
            _ => CellClass::Other,
        },
    }
}

/// Cell counts of one module, by class and by type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellCounts {
    /// LUTs.
    pub luts: u64,
    /// Flip-flops.
    pub ffs: u64,
    /// Carry cells.
    pub carry: u64,
    /// DSP / hard-multiplier blocks.
    pub dsp: u64,
    /// Wide-function muxes.
    pub muxes: u64,
    /// RAM blocks.
    pub ram: u64,
    /// All logic cells (everything but constants, I/O buffers and submodule instances).
    pub cells: u64,
    /// Every mapped primitive type and its count (constants and I/O buffers included).
    pub by_type: BTreeMap<String, u64>,
}

/// Reads the counts for module `module` out of yosys `stat -json` output.
pub fn parse_yosys_stat(
    arch: Arch,
    stat_json: &str,
    module: &str,
) -> Result<CellCounts, FpgaError> {
    let v: Value = serde_json::from_str(stat_json)
        .map_err(|e| FpgaError::Parse(format!("yosys stat JSON: {e}")))?;
    let modules = v
        .get("modules")
        .and_then(Value::as_object)
        .ok_or_else(|| FpgaError::Parse("yosys stat JSON has no `modules` object".into()))?;
    let escaped = format!("\\{module}");
    let m = modules
        .get(&escaped)
        .or_else(|| modules.get(module))
        .ok_or_else(|| {
            FpgaError::Parse(format!(
                "yosys stat JSON has no module `{module}` (has: {})",
                modules.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })?;
    let by = m
        .get("num_cells_by_type")
        .and_then(Value::as_object)
        .ok_or_else(|| FpgaError::Parse(format!("module `{module}` has no `num_cells_by_type`")))?;
    let submodules: Vec<String> = modules
        .keys()
        .map(|k| k.trim_start_matches('\\').to_string())
        .collect();
    let mut c = CellCounts::default();
    for (ty, n) in by {
        let n = n
            .as_u64()
            .ok_or_else(|| FpgaError::Parse(format!("count of `{ty}` is not an integer")))?;
        let ty = ty.trim_start_matches('\\');
        if submodules.iter().any(|s| s == ty) {
            continue; // an instance of another (kept) module, not a primitive
        }
        c.by_type.insert(ty.to_string(), n);
        let class = classify(arch, ty);
        match class {
            CellClass::Lut => c.luts += n,
            CellClass::Ff => c.ffs += n,
            CellClass::Carry => c.carry += n,
            CellClass::Dsp => c.dsp += n,
            CellClass::Mux => c.muxes += n,
            CellClass::Ram => c.ram += n,
            CellClass::Ignored | CellClass::Other => {}
        }
        if class != CellClass::Ignored {
            c.cells += n;
        }
    }
    Ok(c)
}

/// Timing and utilisation of a placed-and-routed design.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PnrResult {
    /// Achieved Fmax per clock net, MHz.
    pub fmax_mhz: BTreeMap<String, f64>,
    /// Requested frequency per clock net, MHz.
    pub constraint_mhz: BTreeMap<String, f64>,
    /// Used resources of the whole design (wrapper included): type → (used, available).
    pub utilization: BTreeMap<String, (u64, u64)>,
}

impl PnrResult {
    /// The slowest clock's Fmax (the design's Fmax), if any clock was timed.
    pub fn fmax(&self) -> Option<f64> {
        self.fmax_mhz.values().copied().reduce(f64::min)
    }

    /// Whether every clock met its constraint.
    pub fn met(&self) -> bool {
        !self.fmax_mhz.is_empty()
            && self
                .fmax_mhz
                .iter()
                .all(|(clk, f)| self.constraint_mhz.get(clk).is_none_or(|c| *f + 1e-9 >= *c))
    }
}

/// Parses nextpnr's `--report` JSON.
pub fn parse_nextpnr_report(report_json: &str) -> Result<PnrResult, FpgaError> {
    let v: Value = serde_json::from_str(report_json)
        .map_err(|e| FpgaError::Parse(format!("nextpnr report JSON: {e}")))?;
    let mut r = PnrResult::default();
    if let Some(fmax) = v.get("fmax").and_then(Value::as_object) {
        for (clk, e) in fmax {
            let achieved = e.get("achieved").and_then(Value::as_f64).ok_or_else(|| {
                FpgaError::Parse(format!("nextpnr report: clock `{clk}` has no `achieved`"))
            })?;
            r.fmax_mhz.insert(clk.clone(), achieved);
            if let Some(c) = e.get("constraint").and_then(Value::as_f64) {
                r.constraint_mhz.insert(clk.clone(), c);
            }
        }
    } else {
        return Err(FpgaError::Parse(
            "nextpnr report JSON has no `fmax` object".into(),
        ));
    }
    if let Some(util) = v.get("utilization").and_then(Value::as_object) {
        for (ty, e) in util {
            let used = e.get("used").and_then(Value::as_u64).unwrap_or(0);
            let avail = e.get("available").and_then(Value::as_u64).unwrap_or(0);
            if used > 0 {
                r.utilization.insert(ty.clone(), (used, avail));
            }
        }
    }
    Ok(r)
}

/// Parses nextpnr's log text: the last `Max frequency for clock` line of each clock (the
/// post-route one) and the last `Device utilisation` block.
pub fn parse_nextpnr_log(log: &str) -> Result<PnrResult, FpgaError> {
    let mut r = PnrResult::default();
    for line in log.lines() {
        let Some(rest) = line.split("Max frequency for clock '").nth(1) else {
            continue;
        };
        // e.g.  clk$SB_IO_IN_$glb_clk': 221.48 MHz (PASS at 50.00 MHz)
        let Some((clk, tail)) = rest.split_once("': ") else {
            continue;
        };
        let mut words = tail.split_whitespace();
        let Some(f) = words.next().and_then(|w| w.parse::<f64>().ok()) else {
            continue;
        };
        r.fmax_mhz.insert(clk.to_string(), f);
        if let Some(at) = tail.split(" at ").nth(1) {
            if let Some(c) = at.split_whitespace().next().and_then(|w| w.parse().ok()) {
                r.constraint_mhz.insert(clk.to_string(), c);
            }
        }
    }
    if r.fmax_mhz.is_empty() {
        return Err(FpgaError::Parse(
            "nextpnr log has no `Max frequency for clock` line".into(),
        ));
    }
    let mut in_util = false;
    for line in log.lines() {
        if line.contains("Device utilisation:") {
            in_util = true;
            r.utilization.clear();
            continue;
        }
        if !in_util {
            continue;
        }
        // Info: \t          TRELLIS_IO:       3/    197     1%
        let body = line.trim_start_matches("Info:").trim();
        let Some((ty, counts)) = body.split_once(':') else {
            in_util = false;
            continue;
        };
        let Some((used, avail)) = counts.split_once('/') else {
            in_util = false;
            continue;
        };
        let used = used.trim().parse::<u64>();
        let avail = avail.split_whitespace().next().map(str::parse::<u64>);
        match (used, avail) {
            (Ok(u), Some(Ok(a))) => {
                if u > 0 {
                    r.utilization.insert(ty.trim().to_string(), (u, a));
                }
            }
            _ => in_util = false,
        }
    }
    Ok(r)
}

/// The `Yosys X.Y (git sha1 …)` line of a yosys log, for reports.
pub fn yosys_version_from_log(log: &str) -> Option<String> {
    log.lines()
        .map(str::trim)
        .find(|l| l.starts_with("Yosys ") && l.contains("git sha1"))
        .map(|l| match l.find(", ") {
            Some(i) => format!("{})", &l[..i]),
            None => l.to_string(),
        })
}
