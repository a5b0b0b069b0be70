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

/// The worst register-to-register path of a placed and routed design, read from the
/// `critical_paths` of nextpnr's `--report` JSON (nextpnr reports one path per clock: the
/// slowest; the clock's posedge → posedge entry, not the I/O paths to and from `<async>`).
///
/// Everything here is measured by nextpnr on the routed design. `total_ns` is the path's
/// delay (`1000 / total_ns` is the clock's Fmax); it splits into `logic_ns` (every cell arc
/// of the path: the start register's clock-to-out, LUTs, wide-function muxes, carry cells,
/// the end register's setup) and `routing_ns` (the nets between them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    /// Delay of the whole path, ns.
    pub total_ns: f64,
    /// Cell delays: clock-to-out, logic arcs and setup, ns.
    pub logic_ns: f64,
    /// Net (routing) delays, ns.
    pub routing_ns: f64,
    /// Logic levels: cell arcs entered through the general routing (a LUT input, a mux
    /// select, the first bit of a carry chain); the arcs inside a slice that only extend a
    /// level (LUT4 → PFUMX → L6MUX21 of a wide function: ECP5 `F1`/`FXA`/`FXB` inputs) and
    /// the carry propagation (`FCI` / `CIN`) are not levels of their own. On iCE40 the LUT of
    /// the end register's logic cell is in its setup arc and counts as a level.
    pub levels: u32,
    /// Carry-chain arcs (entered at the carry input `FCI` / `CIN`): the length of the carry
    /// chains on the path, one per arc (two bits per ECP5 CCU2C).
    pub carry_arcs: u32,
    /// The start register: the flip-flop's cell name without the cell-type suffix the
    /// synthesis adds (`in_r` is the wrapper's input register, `dut.` prefixes the core's
    /// own, `dut.u_round.` a register of the core's instance `u_round`). An iCE40 logic
    /// cell packing a LUT with the flip-flop is named after the LUT; then the net the
    /// flip-flop drives names it.
    pub from: String,
    /// The end register, named like `from` (`out_r` is the wrapper's output register); an
    /// iCE40 logic cell named after its LUT keeps that name (`…_SB_LUT4_O_LC`: which
    /// register it holds is not known, nor the path's stage unless its start tells).
    pub to: String,
    /// The instance inside the core that holds the path's pipeline stage (`u_fma`,
    /// `u_round`; empty for the core's top module or when the stage is unknown).
    pub scope: String,
    /// The pipeline stage the path lies in, from the register names ([`path_stage`]); `None`
    /// when neither end is a pipeline register (a state register loop, say).
    pub stage: Option<u32>,
    /// The placement seed of this path (set by the flow; 0 when unknown).
    #[serde(default)]
    pub seed: u32,
}

/// Cell-type suffixes the synthesis appends to a flip-flop's name (`<net>_TRELLIS_FF_Q_3`,
/// `<net>_SB_DFFSR_Q_DFFLC`, `<net>_DFFE_Q`): the register's name is what comes before.
const FF_MARKERS: [&str; 3] = ["_TRELLIS_FF_Q", "_SB_DFF", "_DFF"];

/// The register a flip-flop cell belongs to: its name before the first flip-flop marker
/// (`_TRELLIS_FF_Q`, `_SB_DFF`, `_DFF`), or the whole name.
pub fn register_of(cell: &str) -> String {
    FF_MARKERS
        .iter()
        .filter_map(|m| cell.find(m))
        .min()
        .map_or(cell, |i| &cell[..i])
        .to_string()
}

/// The pipeline stage a register enters: `<name>_q<k>` or `<name>_q<k>_<j>` (the
/// pipeliner's names, rtl-gen/src/pipeline.rs) enter stage `k`; `None` for other names.
pub fn register_stage(reg: &str) -> Option<u32> {
    let name = reg.rsplit('.').next().unwrap_or(reg);
    let parts: Vec<&str> = name.split('_').collect();
    let stage_of = |p: &str| {
        p.strip_prefix('q')
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse().ok())
    };
    let n = parts.len();
    if n >= 2 {
        if let Some(k) = stage_of(parts[n - 1]) {
            return Some(k);
        }
    }
    if n >= 3 && parts[n - 1].bytes().all(|b| b.is_ascii_digit()) {
        return stage_of(parts[n - 2]);
    }
    None
}

/// The wrapper's input and output registers ([`crate::wrapper`]) and its core instance.
const WRAPPER_IN: &str = "in_r";
const WRAPPER_OUT: &str = "out_r";
const WRAPPER_DUT: &str = "dut.";

/// The instance scope of a core register (`dut.u_fma.x_q1` → `u_fma`, `dut.x_q1` → ``).
fn scope_of(reg: &str) -> Option<&str> {
    let inner = reg.strip_prefix(WRAPPER_DUT)?;
    Some(inner.rfind('.').map_or("", |i| &inner[..i]))
}

/// The pipeline stage of a path from register `from` to register `to` in a core with
/// `stages` stages (`None` when the core's top module is not a pipeline of its own, a mac
/// around its cores; its combinational stages are 0 ..= `stages`: stage 0 from the inputs to
/// the `_q1` registers, stage k from the `_qk` to the `_q(k+1)` registers, the last into the
/// outputs), as `(scope, stage)`: a path that starts at the wrapper's input register or at
/// a `_qk` register lies in stage 0 or k, one that ends at a `_qk` register in stage k − 1,
/// one that ends at the wrapper's output register in the last stage of the core's top
/// module (the wrapper's input register alone places no path: it must meet a pipeline
/// register or the output register of a pipelined top module). Registers of an instance inside the core (`dut.u_fma.…`) number the stages of
/// that instance (`scope`). `None` when neither end is a pipeline register or the two ends
/// disagree.
pub fn path_stage(from: &str, to: &str, stages: Option<u32>) -> Option<(String, u32)> {
    let start = if from == WRAPPER_IN {
        Some((None, 0))
    } else {
        scope_of(from).and_then(|s| register_stage(from).map(|k| (Some(s), k)))
    };
    let end = if to == WRAPPER_OUT {
        // only a pipelined path ends in the last stage (a state register's does not)
        start.and(stages).map(|s| (Some(""), s))
    } else {
        scope_of(to).and_then(|s| {
            register_stage(to)
                .filter(|&k| k >= 1)
                .map(|k| (Some(s), k - 1))
        })
    };
    let own = |(s, k): (Option<&str>, u32)| (s.unwrap_or("").to_string(), k);
    match (start, end) {
        (Some((s0, k0)), Some((s1, k1))) => {
            (k0 == k1 && (s0.is_none() || s1.is_none() || s0 == s1)).then(|| own((s1.or(s0), k1)))
        }
        // from a pipeline register to a state register: the start's stage (the wrapper's
        // input register alone says nothing: the top module may be no pipeline)
        (Some(a @ (Some(_), _)), None) => Some(own(a)),
        (Some((None, _)), None) => None,
        (None, Some(b)) => Some(own(b)),
        (None, None) => None,
    }
}

/// The critical path of a `--report` JSON (`critical_paths`): the slowest clock-to-clock
/// entry (paths from or to `<async>`, the I/O pins, are left out); `None` when there is
/// none (an older report, or no register-to-register path). `stages` is the stage count of
/// the core's top module ([`path_stage`]).
pub fn parse_critical_path(
    report_json: &str,
    stages: Option<u32>,
) -> Result<Option<CriticalPath>, FpgaError> {
    let v: Value = serde_json::from_str(report_json)
        .map_err(|e| FpgaError::Parse(format!("nextpnr report JSON: {e}")))?;
    let Some(paths) = v.get("critical_paths").and_then(Value::as_array) else {
        return Ok(None);
    };
    let mut best: Option<CriticalPath> = None;
    for p in paths {
        let clocked = |k: &str| {
            p.get(k)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.contains("<async>"))
        };
        if !(clocked("from") && clocked("to")) {
            continue;
        }
        let segs = p.get("path").and_then(Value::as_array).ok_or_else(|| {
            FpgaError::Parse("nextpnr report: a critical path has no `path` list".into())
        })?;
        let cp = critical_path_of(segs)?;
        if best.as_ref().is_none_or(|b| cp.total_ns > b.total_ns) {
            best = Some(cp);
        }
    }
    Ok(best.map(|mut cp| {
        if let Some((scope, k)) = path_stage(&cp.from, &cp.to, stages) {
            cp.scope = scope;
            cp.stage = Some(k);
        }
        cp
    }))
}

/// Sums and counts the segments of one critical path.
fn critical_path_of(segs: &[Value]) -> Result<CriticalPath, FpgaError> {
    let field = |s: &Value, end: &str, key: &str| -> String {
        let e = if end.is_empty() { Some(s) } else { s.get(end) };
        e.and_then(|e| e.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut cp = CriticalPath::default();
    let mut from_net_pending = false;
    for s in segs {
        let ty = s.get("type").and_then(Value::as_str).unwrap_or("");
        let d = s.get("delay").and_then(Value::as_f64).ok_or_else(|| {
            FpgaError::Parse(format!(
                "nextpnr report: a `{ty}` segment of the critical path has no delay"
            ))
        })?;
        cp.total_ns += d;
        let port = field(s, "from", "port");
        match ty {
            "routing" => {
                cp.routing_ns += d;
                if from_net_pending {
                    // the start cell is named after a LUT: its flip-flop drives this net
                    let net = field(s, "", "net");
                    let net = net.split('[').next().unwrap_or("");
                    if !net.is_empty() {
                        cp.from = net.to_string();
                    }
                    from_net_pending = false;
                }
            }
            "clk-to-q" | "source" => {
                cp.logic_ns += d;
                let cell = field(s, "from", "cell");
                cp.from = register_of(&cell);
                from_net_pending = !FF_MARKERS.iter().any(|m| cell.contains(m));
            }
            "setup" => {
                cp.logic_ns += d;
                cp.to = register_of(&field(s, "to", "cell"));
                // iCE40: the end register's own LUT (inputs I0..I3) is in the setup arc
                if matches!(port.as_str(), "I0" | "I1" | "I2" | "I3") {
                    cp.levels += 1;
                }
            }
            _ => {
                cp.logic_ns += d;
                match port.as_str() {
                    "FCI" | "CIN" => cp.carry_arcs += 1,
                    "F1" | "FXA" | "FXB" => {}
                    _ => cp.levels += 1,
                }
            }
        }
    }
    let ms = |x: f64| (x * 1000.0).round() / 1000.0;
    cp.total_ns = ms(cp.total_ns);
    cp.logic_ns = ms(cp.logic_ns);
    cp.routing_ns = ms(cp.total_ns - cp.logic_ns);
    Ok(cp)
}

/// The pipeliner's delay estimate of the stages of one pipelined module of a core.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageModel {
    /// The module's instance inside the core (`u_fma`; empty for the core's top module), as
    /// in [`CriticalPath::scope`].
    pub scope: String,
    /// Estimated logic levels of each stage, stage 0 first (a model estimate, not measured).
    pub levels: Vec<f64>,
    /// Estimated delay of each stage, ns: the `--fmax` delay model of the target
    /// ([`crate::delay::DelayModel`]: `fixed_ns + ns_per_level · levels`), not measured.
    pub ns: Vec<f64>,
}

/// The per-stage depth estimates a generated core's Verilog carries (the header line
/// `Stage depths: 7.4 | 7.1 | 6.3 (…)` the generator writes before each pipelined module),
/// as `(scope, levels)`: the module `top` itself has scope "", a module that `top`
/// instantiates the instance's name. Modules without the line (combinational ones, foreign
/// cores) have none.
pub fn stage_depths(verilog: &str, top: &str) -> Vec<(String, Vec<f64>)> {
    let mut pending: Option<Vec<f64>> = None;
    let mut by_module: Vec<(String, Vec<f64>)> = Vec::new();
    let mut in_top = false;
    let mut out = Vec::new();
    for line in verilog.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("// Stage depths:") {
            let body = rest.split('(').next().unwrap_or("");
            let v: Option<Vec<f64>> = body.split('|').map(|x| x.trim().parse().ok()).collect();
            pending = v.filter(|v| !v.is_empty());
            continue;
        }
        if let Some(rest) = t.strip_prefix("module ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            in_top = name == top;
            if let Some(v) = pending.take() {
                if in_top {
                    out.push((String::new(), v.clone()));
                }
                by_module.push((name, v));
            }
            continue;
        }
        if t.starts_with("endmodule") {
            in_top = false;
            continue;
        }
        if in_top {
            // an instance: `<module> <instance> (`
            let w: Vec<&str> = t.split_whitespace().collect();
            if w.len() == 3 && w[2] == "(" {
                if let Some((_, v)) = by_module.iter().find(|(m, _)| m == w[0]) {
                    out.push((w[1].to_string(), v.clone()));
                }
            }
        }
    }
    out
}

impl CriticalPath {
    /// Where the path lies, for people: `stage 1`, `stage 0 of u_round`, or `from → to` when
    /// no stage is known.
    pub fn stage_text(&self) -> String {
        match (self.stage, self.scope.as_str()) {
            (Some(k), "") => format!("stage {k}"),
            (Some(k), s) => format!("stage {k} of {s}"),
            (None, _) => "no pipeline stage".to_string(),
        }
    }

    /// One line: `6.29 ns = 2.56 logic + 3.73 routing, 5 LUT levels + 3 carry arcs, stage 0:
    /// in_r → dut.p_raw_q1`.
    pub fn summary(&self) -> String {
        let carry = if self.carry_arcs > 0 {
            format!(" + {} carry arcs", self.carry_arcs)
        } else {
            String::new()
        };
        format!(
            "{:.2} ns = {:.2} logic + {:.2} routing, {} LUT levels{carry}, {}: {} → {}",
            self.total_ns,
            self.logic_ns,
            self.routing_ns,
            self.levels,
            self.stage_text(),
            self.from,
            self.to
        )
    }
}

/// The [`StageTime::scope`] of register inputs whose register is not known from the cell
/// name (an iCE40 logic cell named after the LUT packed with its flip-flop).
pub const UNKNOWN_SCOPE: &str = "?";

/// The measured delay of one pipeline stage: the latest arrival nextpnr computed at the
/// registers that end it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTime {
    /// The instance inside the core the stage belongs to (empty for the core's top module),
    /// as in [`CriticalPath::scope`].
    pub scope: String,
    /// The stage (the registers `_q<stage + 1>` end it; the wrapper's output register ends
    /// the top module's last one); `None` for the core's other registers in `scope` (state
    /// registers: an accumulator loop).
    pub stage: Option<u32>,
    /// The latest arrival at those registers' inputs, ns from the launching clock edge (the
    /// start register's clock-to-out and all logic and routing; the end register's setup
    /// not included: 0 on ECP5, on iCE40 the end register's own LUT, ~1.2 ns).
    pub ns: f64,
    /// The register it arrives at.
    pub to: String,
}

/// The measured delay of every pipeline stage, from the `detailed_net_timings` nextpnr
/// writes with `--detailed-timing-report`: for each register input of the routed design
/// the latest arrival, grouped by the stage the register ends ([`path_stage`]'s numbering:
/// a `_qk` register ends stage k − 1 of its instance, the wrapper's `out_r` the top
/// module's last stage `top_stages` when the top module is a pipeline of its own; the
/// core's other registers (state registers), and `out_r` when the top module's outputs come
/// from instances or state registers (`top_stages` `None`), are grouped as `stage: None` of
/// their scope). So the last stage of an instance that drives the core's outputs is in
/// that `None` group (named `out_r` when it is the worst). The wrapper's input shift chain
/// and output XOR tree are not stages of the core. A register input of a logic cell named
/// after its LUT (iCE40 packs a LUT and its flip-flop into one cell) cannot be placed in a
/// stage: those are grouped under the scope [`UNKNOWN_SCOPE`] (their latest arrival may
/// exceed every stage's; the critical path then ends there). Sorted by scope (the top
/// module first), then the registers outside the stages, then the stages; empty when the
/// report has no detailed timings.
pub fn parse_stage_times(
    report_json: &str,
    top_stages: Option<u32>,
) -> Result<Vec<StageTime>, FpgaError> {
    let v: Value = serde_json::from_str(report_json)
        .map_err(|e| FpgaError::Parse(format!("nextpnr report JSON: {e}")))?;
    let Some(nets) = v.get("detailed_net_timings").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    let mut worst: BTreeMap<(String, Option<u32>), (f64, String)> = BTreeMap::new();
    for n in nets {
        for e in n
            .get("endpoints")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let cell = e.get("cell").and_then(Value::as_str).unwrap_or("");
            let at = e
                .get("delay")
                .and_then(|d| match d {
                    Value::Array(a) => a.iter().filter_map(Value::as_f64).reduce(f64::max),
                    d => d.as_f64(),
                })
                .ok_or_else(|| {
                    FpgaError::Parse(format!(
                        "nextpnr report: the arrival at `{cell}` has no delay"
                    ))
                })?;
            let reg = register_of(cell);
            let key = if !FF_MARKERS.iter().any(|m| cell.contains(m)) {
                // a logic cell holding a register (an iCE40 LUT packed with its flip-flop)
                // is named after the LUT: which register, and so which stage, is not known;
                // a LUT of the core ends a path of the core (other cells: I/O pins, the
                // wrapper's own logic)
                if !(cell.starts_with(WRAPPER_DUT) && cell.ends_with("_LC")) {
                    continue;
                }
                (UNKNOWN_SCOPE.to_string(), None)
            } else if reg == WRAPPER_OUT {
                (String::new(), top_stages)
            } else if let Some(scope) = scope_of(&reg) {
                match register_stage(&reg) {
                    Some(k) if k >= 1 => (scope.to_string(), Some(k - 1)),
                    Some(_) => continue,
                    None => (scope.to_string(), None),
                }
            } else {
                continue; // the wrapper's shift chain, XOR tree, I/O
            };
            let w = worst.entry(key).or_insert((f64::MIN, String::new()));
            if at > w.0 {
                *w = (at, reg);
            }
        }
    }
    Ok(worst
        .into_iter()
        .map(|((scope, stage), (ns, to))| StageTime {
            scope,
            stage,
            ns: (ns * 1000.0).round() / 1000.0,
            to,
        })
        .collect())
}
