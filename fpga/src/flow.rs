//! `fp8gen synth`: yosys + nextpnr on a core inside the registered [`wrapper`], and the
//! QoR report (LUTs, FFs, DSP blocks, carry cells, Fmax) as serde-serialisable JSON.
//!
//! [`wrapper`]: crate::wrapper

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::build_dir::BuildDir;
use crate::delay::DelayModel;
use crate::report::{self, CellCounts, CriticalPath, StageModel, StageTime};
use crate::tools::{self, Tool};
use crate::wrapper::{self, WrapperCost, WRAPPER_TOP};
use crate::{Arch, Core, FpgaError, Target};

/// One synthesis run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthRequest {
    /// The core to measure.
    pub core: Core,
    /// Device.
    pub target: Target,
    /// Clock the placer and router aim for, MHz (`--freq`); Fmax is reported either way.
    pub freq_mhz: f64,
    /// Allow hard multipliers / DSP blocks (iCE40: `synth_ice40 -dsp`; ECP5 and Gowin: on
    /// unless `-nodsp`).
    pub use_dsp: bool,
    /// nextpnr placer seed (fixed for reproducible numbers); with `seeds` > 1 the first one.
    pub seed: u32,
    /// Place and route with this many seeds (`seed`, `seed + 1`, …) after one synthesis and
    /// report the median Fmax with the minimum and maximum (one seed is noise).
    pub seeds: u32,
    /// Keep all artifacts (Verilog, netlist, logs, reports) in this directory: new, empty,
    /// or an earlier `synth --keep` run's, which is replaced ([`iface::outdir`]).
    pub keep_dir: Option<PathBuf>,
}

impl SynthRequest {
    /// A request with the defaults: DSP allowed, seed 1, 100 MHz target, nothing kept.
    pub fn new(core: Core, target: Target) -> SynthRequest {
        SynthRequest {
            core,
            target,
            freq_mhz: 100.0,
            use_dsp: true,
            seed: 1,
            seeds: 1,
            keep_dir: None,
        }
    }
}

/// Result of [`synth`]. Cell counts are the core's own (its module is kept separate from
/// the wrapper); `fmax_mhz` is that of the whole wrapped design, i.e. of the core's
/// register-to-register paths, because the wrapper adds only one-LUT-deep logic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthReport {
    /// Core top module.
    pub core: String,
    /// Device.
    pub target: Target,
    /// LUTs of the core.
    pub luts: u64,
    /// Flip-flops of the core (pipeline registers; the wrapper's are in `wrapper`).
    pub ffs: u64,
    /// DSP / hard-multiplier blocks of the core.
    pub dsp: u64,
    /// Carry cells of the core.
    pub carry: u64,
    /// All logic cells of the core (LUTs + FFs + carry + DSP + muxes + RAM + other).
    pub cells: u64,
    /// The core's cells by primitive type.
    pub cells_by_type: std::collections::BTreeMap<String, u64>,
    /// Achieved Fmax, MHz (slowest clock); with several seeds their median.
    pub fmax_mhz: f64,
    /// Fmax per placement seed, MHz: `(seed, fmax)`, in seed order.
    #[serde(default)]
    pub fmax_by_seed: Vec<(u32, f64)>,
    /// Lowest Fmax over the seeds, MHz.
    #[serde(default)]
    pub fmax_min_mhz: f64,
    /// Highest Fmax over the seeds, MHz.
    #[serde(default)]
    pub fmax_max_mhz: f64,
    /// Requested clock, MHz.
    pub target_mhz: f64,
    /// Whether the requested clock was met.
    pub timing_met: bool,
    /// Whether DSP blocks were allowed.
    pub use_dsp: bool,
    /// Pipeline latency of the core, cycles.
    pub latency: u32,
    /// Resources the wrapper adds.
    pub wrapper: WrapperCost,
    /// Device utilisation of the whole placed design (wrapper included): type → [used, available].
    pub pnr_utilization: std::collections::BTreeMap<String, (u64, u64)>,
    /// The worst register-to-register path nextpnr measured on the routed design (of the
    /// median seed's run when several seeds were placed): delay split into logic and
    /// routing, logic levels, start and end register, pipeline stage. `None` when nextpnr
    /// wrote no report with critical paths.
    #[serde(default)]
    pub critical_path: Option<CriticalPath>,
    /// The measured delay of every pipeline stage of the same run: the latest arrival at
    /// the registers that end it (nextpnr's `--detailed-timing-report`,
    /// [`report::parse_stage_times`]); empty when nextpnr wrote no detailed timings.
    #[serde(default)]
    pub stage_times: Vec<StageTime>,
    /// The pipeliner's estimate of every stage (levels, and ns by the target's `--fmax`
    /// delay model) of each pipelined module of the core: a model, not a measurement; set
    /// beside `critical_path` to say which stage the model expects to limit. Empty for a
    /// combinational core or one without the generator's `Stage depths` header line.
    #[serde(default)]
    pub stage_model: Vec<StageModel>,
    /// Tool versions.
    pub tools: ToolVersions,
    /// Wall time of yosys and of nextpnr, seconds.
    pub seconds: Seconds,
    /// Where the artifacts were kept, if requested.
    pub artifacts: Option<PathBuf>,
}

/// Versions of the tools that produced a report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolVersions {
    /// yosys version line.
    pub yosys: Option<String>,
    /// nextpnr version line.
    pub nextpnr: Option<String>,
}

/// Wall-clock times of the flow steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Seconds {
    /// yosys.
    pub yosys: f64,
    /// nextpnr.
    pub nextpnr: f64,
}

/// The nextpnr tool of a target.
pub(crate) fn nextpnr_tool(target: Target) -> Tool {
    match target.arch() {
        Arch::Ice40 => Tool::NextpnrIce40,
        Arch::Ecp5 => Tool::NextpnrEcp5,
        Arch::Gowin => Tool::NextpnrGowin,
    }
}

/// File nextpnr writes the routed design to for packing (board builds).
pub fn placed_file(arch: Arch) -> &'static str {
    match arch {
        Arch::Ice40 => "pnr.asc",
        Arch::Ecp5 => "pnr.config",
        Arch::Gowin => "pnr.json",
    }
}

/// The nextpnr command line of every run (synthesis and board builds), relative to the
/// build directory: device selection, the pin `constraints` file if any, `netlist.json` in,
/// with `placed` the routed design out ([`placed_file`], for packing), `--freq` /
/// `--seed`, `--timing-allow-fail` (Fmax is read from the report either way),
/// `--report report.json --detailed-timing-report` (the worst arrival at every register,
/// [`report::parse_stage_times`]) and `-l nextpnr.log`.
pub fn nextpnr_args(
    target: Target,
    constraints: Option<&str>,
    placed: bool,
    freq_mhz: f64,
    seed: u32,
) -> Vec<String> {
    let arch = target.arch();
    let mut args = target.nextpnr_device_args();
    if let Some(c) = constraints {
        match arch {
            Arch::Ice40 => args.extend(["--pcf".to_string(), c.to_string()]),
            Arch::Ecp5 => args.extend(["--lpf".to_string(), c.to_string()]),
            Arch::Gowin => args.extend(["--vopt".to_string(), format!("cst={c}")]),
        }
    }
    if placed {
        let flag = match arch {
            Arch::Ice40 => "--asc",
            Arch::Ecp5 => "--textcfg",
            Arch::Gowin => "--write",
        };
        args.extend([flag.to_string(), placed_file(arch).to_string()]);
    }
    args.extend(
        [
            "--json",
            "netlist.json",
            "--freq",
            &format!("{freq_mhz}"),
            "--seed",
            &seed.to_string(),
            "--timing-allow-fail",
            "--report",
            "report.json",
            "--detailed-timing-report",
            "-l",
            "nextpnr.log",
        ]
        .map(String::from),
    );
    args
}

/// Runs nextpnr with `args` in `dir`; returns seconds.
pub(crate) fn run_nextpnr(
    target: Target,
    nextpnr: &Path,
    args: &[String],
    dir: &Path,
) -> Result<f64, FpgaError> {
    tools::run(
        nextpnr_tool(target),
        nextpnr,
        args,
        dir,
        "nextpnr.out",
        Some("nextpnr.log"),
    )
}

/// The yosys script that synthesises `top` from `files` for `target` and writes
/// `stat.json` (cell counts per module) and `netlist.json`.
pub(crate) fn yosys_script(target: Target, files: &[&str], top: &str, use_dsp: bool) -> String {
    let mut s = String::new();
    for f in files {
        s.push_str(&format!("read_verilog {f}\n"));
    }
    match target.arch() {
        Arch::Ice40 => {
            let dsp = if use_dsp { " -dsp" } else { "" };
            s.push_str(&format!("synth_ice40 -top {top}{dsp}\n"));
        }
        Arch::Ecp5 => {
            let dsp = if use_dsp { "" } else { " -nodsp" };
            s.push_str(&format!("synth_ecp5 -top {top}{dsp}\n"));
        }
        Arch::Gowin => {
            // Pads only on the top module (the kept core module must stay pad-free).
            let dsp = if use_dsp { "" } else { " -nodsp" };
            s.push_str(&format!("synth_gowin -top {top} -noiopads{dsp}\n"));
            s.push_str(&format!(
                "iopadmap -bits -inpad IBUF O:I -outpad OBUF I:O {top}\nclean\n"
            ));
        }
    }
    s.push_str("tee -q -o stat.json stat -json\n");
    s.push_str("write_json netlist.json\n");
    s
}

/// Runs yosys on `script` (written to `synth.ys`) in `dir`; returns seconds.
pub(crate) fn run_yosys(yosys: &Path, dir: &Path, script: &str) -> Result<f64, FpgaError> {
    write(dir, "synth.ys", script)?;
    let args: Vec<String> = ["-q", "-l", "yosys.log", "-s", "synth.ys"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    tools::run(
        Tool::Yosys,
        yosys,
        &args,
        dir,
        "yosys.out",
        Some("yosys.log"),
    )
}

pub(crate) fn write(dir: &Path, name: &str, text: &str) -> Result<(), FpgaError> {
    let p = dir.join(name);
    std::fs::write(&p, text).map_err(|e| FpgaError::io(format!("writing {}", p.display()), e))
}

pub(crate) fn read(dir: &Path, name: &str) -> Result<String, FpgaError> {
    let p = dir.join(name);
    std::fs::read_to_string(&p).map_err(|e| FpgaError::io(format!("reading {}", p.display()), e))
}

/// Reads Fmax and utilisation from `report.json`, falling back to the log text.
pub(crate) fn read_pnr(dir: &Path) -> Result<report::PnrResult, FpgaError> {
    match read(dir, "report.json") {
        Ok(text) => report::parse_nextpnr_report(&text),
        Err(_) => report::parse_nextpnr_log(&read(dir, "nextpnr.log")?),
    }
}

/// Synthesises, places and routes `req.core` for `req.target` and reports its QoR.
///
/// Errors: a missing tool (→ run `scripts/setup-fpga.sh`), an invalid core, a tool failure
/// (with the tail of its log; the build directory is then left in place for inspection).
pub fn synth(req: &SynthRequest) -> Result<SynthReport, FpgaError> {
    req.core.validate(1024)?;
    if !(req.freq_mhz.is_finite() && req.freq_mhz > 0.0 && req.freq_mhz <= 2000.0) {
        return Err(FpgaError::BadRequest(format!(
            "target frequency {} MHz is out of range; give 0 < MHz <= 2000",
            req.freq_mhz
        )));
    }
    if req.seeds == 0 || req.seeds > 64 {
        return Err(FpgaError::BadRequest(format!(
            "{} placement seeds: give 1 to 64",
            req.seeds
        )));
    }
    let keep = req
        .keep_dir
        .as_deref()
        .map(|d| crate::build_dir::prepare_output(d, "synth", "--keep"))
        .transpose()?;
    let yosys = tools::find(Tool::Yosys)?;
    let pnr_tool = nextpnr_tool(req.target);
    let nextpnr = tools::find(pnr_tool)?;

    let mut bd = BuildDir::new("fp8gen-synth", keep)?;
    let result = synth_in(req, &yosys, &nextpnr, bd.path());
    match result {
        Ok(mut rep) => {
            rep.tools.nextpnr = tools::version(pnr_tool, &nextpnr);
            rep.artifacts = bd.finish()?;
            Ok(rep)
        }
        Err(e) => {
            if matches!(e, FpgaError::ToolFailed { .. }) {
                bd.keep_for_debugging();
            }
            Err(e)
        }
    }
}

/// The median of sorted values (the mean of the middle two for an even count).
fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn synth_in(
    req: &SynthRequest,
    yosys: &Path,
    nextpnr: &Path,
    dir: &Path,
) -> Result<SynthReport, FpgaError> {
    let core = &req.core;
    let (wrapper_v, cost) = wrapper::wrapper_verilog(core);
    write(dir, "core.v", &core.verilog)?;
    write(dir, "wrapper.v", &wrapper_v)?;
    let script = yosys_script(
        req.target,
        &["core.v", "wrapper.v"],
        WRAPPER_TOP,
        req.use_dsp,
    );
    let t_yosys = run_yosys(yosys, dir, &script)?;
    let arch = req.target.arch();
    let counts: CellCounts = report::parse_yosys_stat(arch, &read(dir, "stat.json")?, &core.top)?;

    let constraints = if arch == Arch::Gowin {
        // himbaechel-gowin refuses unconstrained I/O: use Tang Nano 9K pins.
        write(
            dir,
            "synth.cst",
            "IO_LOC \"clk\" 52;\nIO_LOC \"si\" 18;\nIO_LOC \"so\" 17;\n",
        )?;
        Some("synth.cst")
    } else {
        None
    };
    let depths = report::stage_depths(&core.verilog, &core.top);
    // The top module's stage count when it is a pipeline of its own (its outputs end its
    // last stage), 0 for a combinational core; else its outputs come from instances or
    // state registers.
    let top_stages = match depths.iter().find(|(scope, _)| scope.is_empty()) {
        Some((_, levels)) => Some(levels.len().saturating_sub(1) as u32),
        None => (core.latency == 0).then_some(0),
    };
    let mut by_seed = Vec::new();
    let mut paths = Vec::new();
    let mut t_pnr = 0.0;
    let mut last = None;
    for seed in req.seed..req.seed.saturating_add(req.seeds) {
        let args = nextpnr_args(req.target, constraints, false, req.freq_mhz, seed);
        t_pnr += run_nextpnr(req.target, nextpnr, &args, dir)?;
        let pnr = read_pnr(dir)?;
        let f = pnr.fmax().ok_or_else(|| {
            FpgaError::Parse("nextpnr timed no clock; the wrapper clock `clk` is missing".into())
        })?;
        by_seed.push((seed, (f * 100.0).round() / 100.0));
        let (path, times) = match read(dir, "report.json") {
            Ok(text) => (
                report::parse_critical_path(&text, top_stages)?,
                report::parse_stage_times(&text, top_stages)?,
            ),
            Err(_) => (None, Vec::new()),
        };
        paths.push((path.map(|p| CriticalPath { seed, ..p }), times));
        last = Some(pnr);
    }
    let pnr = last.ok_or_else(|| FpgaError::BadRequest("no seed was run".into()))?;
    let mut sorted: Vec<f64> = by_seed.iter().map(|x| x.1).collect();
    sorted.sort_by(f64::total_cmp);
    let fmax = median(&sorted);
    // The path of the median seed (of the slower middle one for an even count).
    let mut order: Vec<usize> = (0..by_seed.len()).collect();
    order.sort_by(|&a, &b| by_seed[a].1.total_cmp(&by_seed[b].1));
    let (critical_path, stage_times) = order
        .get(order.len().saturating_sub(1) / 2)
        .map(|&i| paths[i].clone())
        .unwrap_or_default();
    let model = DelayModel::of(req.target);
    let stage_model = depths
        .into_iter()
        .map(|(scope, levels)| StageModel {
            scope,
            ns: levels
                .iter()
                .map(|l| ((model.fixed_ns + model.ns_per_level * l) * 100.0).round() / 100.0)
                .collect(),
            levels,
        })
        .collect();
    let yosys_log = read(dir, "yosys.log").unwrap_or_default();
    Ok(SynthReport {
        core: core.top.clone(),
        target: req.target,
        luts: counts.luts,
        ffs: counts.ffs,
        dsp: counts.dsp,
        carry: counts.carry,
        cells: counts.cells,
        cells_by_type: counts.by_type,
        fmax_mhz: (fmax * 100.0).round() / 100.0,
        fmax_min_mhz: sorted.first().copied().unwrap_or(fmax),
        fmax_max_mhz: sorted.last().copied().unwrap_or(fmax),
        fmax_by_seed: by_seed,
        target_mhz: req.freq_mhz,
        timing_met: if req.seeds == 1 {
            pnr.met()
        } else {
            fmax >= req.freq_mhz
        },
        use_dsp: req.use_dsp,
        latency: core.latency,
        wrapper: cost,
        pnr_utilization: pnr.utilization,
        critical_path,
        stage_times,
        stage_model,
        tools: ToolVersions {
            yosys: report::yosys_version_from_log(&yosys_log),
            nextpnr: None,
        },
        seconds: Seconds {
            yosys: t_yosys,
            nextpnr: t_pnr,
        },
        artifacts: None,
    })
}
