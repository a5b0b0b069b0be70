//! `fp8gen synth`, `board` and `board-test`: the command-line side of the FPGA flow.

use crate::args::CliError;
use crate::request::GenArgs;
use fpga::Core;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The core named by the generation arguments (`--unit int-mul8` is the integer 8×8
/// reference multiplier of the QoR table).
fn core_of(gen: &GenArgs) -> Result<Core, CliError> {
    if gen.unit.eq_ignore_ascii_case("int-mul8") {
        return fpga::refcores::int_mul(8, 8, gen.rest.stages.unwrap_or(0))
            .map_err(|e| CliError::usage(e.to_string()));
    }
    let req = gen.request()?;
    let core = rtl::generate(&req).map_err(|e| CliError::failed(e.to_string()))?;
    Ok(Core::from_manifest(core.verilog, &core.manifest))
}

/// Everything `synth` checks before it runs yosys (also the check of a planned sweep job):
/// seeds, target, clock, and the core.
pub fn synth_checked(
    gen: &GenArgs,
    target: &str,
    freq: f64,
    seeds: u32,
) -> Result<(fpga::Target, Core), CliError> {
    if !(1..=64).contains(&seeds) {
        return Err(CliError::usage(format!(
            "--seeds {seeds}: give 1 to 64 placement seeds"
        )));
    }
    let target =
        fpga::Target::from_str(target).map_err(|e| CliError::usage(format!("--target: {e}")))?;
    if !(freq > 0.0 && freq < 2000.0) {
        return Err(CliError::usage(format!(
            "--freq: {freq} MHz is not a clock frequency; give e.g. --freq 100"
        )));
    }
    Ok((target, core_of(gen)?))
}

/// Names the generated core in a JSON summary (request and core hash) so that
/// `fp8gen report` can tell which core it covers.
fn stamp(gen: &GenArgs, v: &mut serde_json::Value) {
    if let Some(core) = gen.request().ok().and_then(|r| rtl::generate(&r).ok()) {
        report::stamp(v, &core.manifest.command, &report::core_hash(&core.verilog));
    }
}

fn fpga_err(e: fpga::FpgaError) -> CliError {
    match e {
        // An output directory that cannot be used: a usage error.
        fpga::FpgaError::Output(_) => CliError::usage(e.to_string()),
        e => CliError::failed(e.to_string()),
    }
}

/// `fp8gen synth`.
pub fn synth(
    gen: &GenArgs,
    target: &str,
    freq: f64,
    no_dsp: bool,
    (seed, seeds): (u32, u32),
    keep: Option<PathBuf>,
    json: bool,
) -> Result<(), CliError> {
    let (target, core) = synth_checked(gen, target, freq, seeds)?;
    let mut req = fpga::SynthRequest::new(core, target);
    req.freq_mhz = freq;
    req.use_dsp = !no_dsp;
    req.seed = seed;
    req.seeds = seeds;
    req.keep_dir = keep;
    if !json {
        eprintln!(
            "synthesizing {} for {} (yosys + nextpnr)…",
            req.core.top,
            target.name()
        );
    }
    let rep = fpga::synth(&req).map_err(fpga_err)?;
    if json {
        let mut v = serde_json::to_value(&rep).unwrap_or_default();
        stamp(gen, &mut v);
        outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        outln!(
            "{:<40} {:<13} LUTs {:>5}  FFs {:>4}  DSP {:>2}  carry {:>4}  cells {:>5}  Fmax {:>7.1} MHz  ({} {:.0} MHz)",
            rep.core,
            target.name(),
            rep.luts,
            rep.ffs,
            rep.dsp,
            rep.carry,
            rep.cells,
            rep.fmax_mhz,
            if rep.timing_met { "meets" } else { "misses" },
            freq
        );
        if rep.fmax_by_seed.len() > 1 {
            outln!(
                "  Fmax over {} seeds: median {:.1}, min {:.1}, max {:.1} MHz ({})",
                rep.fmax_by_seed.len(),
                rep.fmax_mhz,
                rep.fmax_min_mhz,
                rep.fmax_max_mhz,
                rep.fmax_by_seed
                    .iter()
                    .map(|(s, f)| format!("seed {s}: {f:.1}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if let Some(cp) = &rep.critical_path {
            outln!("  worst path (nextpnr, seed {}): {}", cp.seed, cp.summary());
        }
        for (scope, times) in stage_times_by_scope(&rep.stage_times) {
            outln!("  stage times{scope} (nextpnr, latest arrival at the stage's end registers): {times}");
        }
        for m in &rep.stage_model {
            let scope = if m.scope.is_empty() {
                String::new()
            } else {
                format!(" of {}", m.scope)
            };
            let stages: Vec<String> = m
                .levels
                .iter()
                .zip(&m.ns)
                .map(|(l, ns)| format!("{l:.1} ({ns:.1} ns)"))
                .collect();
            outln!(
                "  stage estimate{scope} (levels by the pipeliner's model, not measured): {}",
                stages.join(" | ")
            );
        }
    }
    Ok(())
}

/// The measured stage times of a synthesis, one line per instance scope: (` of u_round`,
/// `stage 0 5.21 | stage 1 4.80 ns; other registers 3.1 ns (dut.acc_q)`).
fn stage_times_by_scope(times: &[fpga::report::StageTime]) -> Vec<(String, String)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for t in times {
        let item = match t.stage {
            Some(k) => format!("stage {k} {:.2} ns", t.ns),
            None => format!("other registers {:.2} ns ({})", t.ns, t.to),
        };
        match out.iter_mut().find(|(s, _)| *s == t.scope) {
            Some((_, v)) => v.push(item),
            None => out.push((t.scope.clone(), vec![item])),
        }
    }
    out.into_iter()
        .map(|(s, v)| {
            let scope = if s.is_empty() {
                String::new()
            } else {
                format!(" of {s}")
            };
            (scope, v.join(" | "))
        })
        .collect()
}

/// `fp8gen board`.
pub fn board(
    gen: &GenArgs,
    board: &str,
    out: &Path,
    baud: u32,
    json: bool,
) -> Result<(), CliError> {
    let board =
        fpga::Board::from_str(board).map_err(|e| CliError::usage(format!("--board: {e}")))?;
    let core = core_of(gen)?;
    let mut req = fpga::BoardRequest::new(board, core, out);
    req.baud = baud;
    if !json {
        eprintln!(
            "building a {} bitstream for {}…",
            board.name(),
            req.core.top
        );
    }
    let rep = fpga::board_build(&req).map_err(fpga_err)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&rep).unwrap_or_default());
    } else {
        outln!(
            "bitstream {} (Fmax {:.1} MHz, board clock {}); load it with: {}",
            rep.bitstream.display(),
            rep.fmax_mhz,
            if rep.timing_met { "met" } else { "multicycle" },
            rep.program
        );
    }
    Ok(())
}

/// `fp8gen board-test`.
pub fn board_test(port: &Path, dir: &Path) -> Result<(), CliError> {
    let lpath = dir.join("shell.json");
    let text =
        iface::read_text_bounded(&lpath, iface::MAX_JSON_BYTES, "shell layouts").map_err(|e| {
            CliError::usage(format!(
                "--dir: {e}; point it at the output directory of `fp8gen board`"
            ))
        })?;
    let layout: fpga::ShellLayout = serde_json::from_str(&text)
        .map_err(|e| CliError::usage(format!("{} is not a shell layout: {e}", lpath.display())))?;
    let mut tty = fpga::open_serial(port, layout.baud).map_err(fpga_err)?;
    let sum = fpga::board_test_serial(
        &mut tty,
        &layout,
        std::io::stdin().lock(),
        std::io::stdout().lock(),
    )
    .map_err(fpga_err)?;
    eprintln!(
        "{} vectors replayed, {} without valid_out",
        sum.vectors, sum.not_valid
    );
    Ok(())
}

/// The delay model's choice for `--fmax`: `gen` with `--stages` set, after checking the
/// options; prints the choice on stderr.
pub fn stages_for_fmax(
    gen: &GenArgs,
    fmax: f64,
    target: Option<&str>,
) -> Result<GenArgs, CliError> {
    let target = target.ok_or_else(|| {
        CliError::usage("--fmax needs --target T: the delay model is per device (ice40-up5k, ecp5-25k, ecp5-85k, gowin-gw1nr9)")
    })?;
    let target =
        fpga::Target::from_str(target).map_err(|e| CliError::usage(format!("--target: {e}")))?;
    let (s, pred, depth) = fmax_choice(gen, fmax, target)?;
    eprintln!(
        "--fmax {fmax}: {s} stage(s) on {} (logic depth {depth:.1} levels, predicted {pred:.0} MHz by the delay model; confirm with synth --fmax)",
        target.name()
    );
    let mut g = gen.clone();
    g.rest.stages = Some(s);
    Ok(g)
}

fn fmax_choice(
    gen: &GenArgs,
    fmax: f64,
    target: fpga::Target,
) -> Result<(u32, f64, f64), CliError> {
    if !(fmax > 0.0 && fmax < 2000.0) {
        return Err(CliError::usage(format!(
            "--fmax: {fmax} MHz is not a clock frequency; give e.g. --fmax 150"
        )));
    }
    if gen.rest.stages.is_some() {
        return Err(CliError::usage(
            "--fmax chooses the number of stages; do not give --stages too",
        ));
    }
    let req = gen.request()?;
    let core = rtl::generate(&req).map_err(|e| CliError::usage(e.to_string()))?;
    let m = fpga::delay::DelayModel::of(target);
    if fmax > m.max_measured_mhz {
        return Err(CliError::usage(format!(
            "--fmax {fmax}: no core measured on {}{} runs faster than {:.1} MHz (docs/qor/qor.csv); the delay model promises nothing beyond its measured rows: ask for at most {:.0} MHz",
            target.name(),
            if target.arch() == fpga::Arch::Gowin {
                " (no Gowin rows yet: the ECP5 figures)"
            } else {
                ""
            },
            m.max_measured_mhz,
            m.max_measured_mhz.floor()
        )));
    }
    let unit = qor_unit(&req);
    let best = fpga::delay::best_measured(&unit, target);
    if let Some(b) = best.filter(|b| fmax > *b) {
        return Err(CliError::usage(format!(
            "--fmax {fmax}: the fastest {unit} core measured on {} runs at {b:.1} MHz (docs/qor/qor.csv); the delay model promises nothing beyond it: ask for at most {:.0} MHz",
            target.name(),
            b.floor()
        )));
    }
    let max = rtl::MAX_STAGES;
    let levels = core.depth as f64 / 10.0;
    match m.stages_for(core.depth, fmax, max) {
        Some((s, pred)) => Ok((s, best.map_or(pred, |b| pred.min(b)), levels)),
        None => Err(CliError::usage(format!(
            "--fmax {fmax}: the delay model predicts at most {:.0} MHz for this core on {} (logic depth {levels:.1} levels, {max} stages); ask for a lower clock",
            m.predict_mhz(core.depth, max),
            target.name(),
        ))),
    }
}

/// The `unit` column of the QoR table a request is measured under
/// (scripts/fpga/qor_sweep.py `unit_args`): `mul-ftz-noflags`, `mac-exact`, `mac-il<L>`,
/// `dot<N>[-<scale>]`, `quantize<N>`, `convert-<in>`, else the unit's name.
fn qor_unit(req: &rtl::GenRequest) -> String {
    use rtl::manifest::Unit;
    let o = &req.options;
    match req.unit {
        Unit::Mul if o.ftz && o.no_flags => "mul-ftz-noflags".into(),
        Unit::Mac if o.acc_guard > 0 => "mac-exact".into(),
        Unit::Mac if o.interleave > 1 => format!("mac-il{}", o.interleave),
        Unit::Dot => match req.formats.scale {
            Some(s) => format!("dot{}-{}", o.dot.n, s.name()),
            None => format!("dot{}", o.dot.n),
        },
        Unit::Quantize => format!("quantize{}", o.block.n),
        Unit::Convert => format!("convert-{}", req.formats.x.name()),
        u => u.name().to_string(),
    }
}

/// `fp8gen synth --fmax F`: the fewest stages that meet `F` on `target`, found from the
/// delay model's choice by place and route (up while missed, down while met).
pub fn synth_fmax(
    gen: &GenArgs,
    target: &str,
    fmax: f64,
    no_dsp: bool,
    (seed, seeds): (u32, u32),
    json: bool,
) -> Result<(), CliError> {
    let target =
        fpga::Target::from_str(target).map_err(|e| CliError::usage(format!("--target: {e}")))?;
    let (s0, pred, depth) = fmax_choice(gen, fmax, target)?;
    let run = |s: u32| -> Result<fpga::SynthReport, CliError> {
        let mut g = gen.clone();
        g.rest.stages = Some(s);
        let core = core_of(&g)?;
        let mut req = fpga::SynthRequest::new(core, target);
        req.freq_mhz = fmax;
        req.use_dsp = !no_dsp;
        req.seed = seed;
        req.seeds = seeds;
        if !json {
            eprintln!("  {s} stage(s): synthesizing {} …", req.core.top);
        }
        fpga::synth(&req).map_err(fpga_err)
    };
    if !json {
        eprintln!(
            "--fmax {fmax} on {}: delay model says {s0} stage(s) (depth {depth:.1} levels, predicted {pred:.0} MHz)",
            target.name()
        );
    }
    let mut tried: Vec<(u32, f64)> = Vec::new();
    let mut s = s0;
    let mut rep = run(s)?;
    tried.push((s, rep.fmax_mhz));
    let mut best = if rep.fmax_mhz >= fmax {
        Some((s, rep.clone()))
    } else {
        None
    };
    if best.is_none() {
        // more stages while missed (at most 4 more runs)
        while best.is_none() && s < s0 + 4 && s < rtl::MAX_STAGES {
            s += 1;
            rep = run(s)?;
            tried.push((s, rep.fmax_mhz));
            if rep.fmax_mhz >= fmax {
                best = Some((s, rep.clone()));
            }
        }
    } else {
        // fewer stages while still met
        while s > 0 {
            let r = run(s - 1)?;
            tried.push((s - 1, r.fmax_mhz));
            if r.fmax_mhz >= fmax {
                s -= 1;
                best = Some((s, r));
            } else {
                break;
            }
        }
    }
    let summary = tried
        .iter()
        .map(|(s, f)| format!("{s} stage(s): {f:.1} MHz"))
        .collect::<Vec<_>>()
        .join(", ");
    match best {
        Some((s, rep)) => {
            if json {
                let mut v = serde_json::to_value(&rep).unwrap_or_default();
                v["fmax_request_mhz"] = serde_json::json!(fmax);
                v["stages"] = serde_json::json!(s);
                v["model_stages"] = serde_json::json!(s0);
                v["tried"] = serde_json::json!(tried);
                // The summary describes the core of the chosen stage count.
                let mut g = gen.clone();
                g.rest.stages = Some(s);
                stamp(&g, &mut v);
                outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                outln!(
                    "{:<40} {:<13} {s} stage(s) meet {fmax} MHz: Fmax {:.1} MHz, LUTs {}, FFs {}, cells {} (model: {s0}; tried {summary})",
                    rep.core,
                    target.name(),
                    rep.fmax_mhz,
                    rep.luts,
                    rep.ffs,
                    rep.cells
                );
            }
            Ok(())
        }
        None => Err(CliError::failed(format!(
            "--fmax {fmax} on {}: not met ({summary}); ask for a lower clock or more stages with --stages",
            target.name()
        ))),
    }
}
