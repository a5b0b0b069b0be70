//! The `mac` proof: the core against a reference accumulator ([`crate::reference::mac`]) in
//! every cycle from reset, by k-induction on a sequential miter.
//!
//! The miter runs the core and the reference on the same inputs (`rst_ni`, `valid_i`,
//! `clear_i`, `x_i`, `y_i`, modes: free in every cycle); `out_diff` is 1 when an output
//! differs (`acc_o`, `flags_o`, `valid_o`), `state_diff` when a pair of corresponding state
//! registers differs (the accumulator, its class/overflow state, the registered modes, the
//! valid bit): the equality invariant. Lemma O (`sat -seq 1`, every register free): equal
//! states give equal outputs. Then for k = 1, 2, 4, … up to [`MAX_K`]:
//!
//! * base case: yosys `sat -seq k+1` with `rst_ni` low in cycle 1 and every register's
//!   initial value free proves `state_diff = 0` in cycles 2 … k+1; a model is a real trace
//!   from reset on which the invariant fails (REFUTED, the trace reported);
//! * induction step: `sat -seq k+1` from **any** register state, `state_diff = 0` assumed in
//!   cycles 1 … k, proves it in cycle k+1.
//!
//! Base case and step at the same k prove the invariant in every cycle after reset, however
//! long the run, and with lemma O the outputs. A step that fails is not a refutation (its start state may be unreachable);
//! the loop then deepens k, and the deeper base case finds the real trace of a design that
//! fails only after many cycles. No verdict at [`MAX_K`] is reported as such.
//!
//! The binary32 accumulator reuses the core's FMA module inside the reference (the step of
//! the induction then compares the accumulator loop, not two FMA datapaths); that module is
//! proven equal to the independent FMA reference first (lemma F, a combinational
//! [`crate::prove::prove_pair`] with the FMA's case split).

use crate::prove::{
    default_split, mode_assumptions, prove_pair, replay, run_yosys, sat_script, work_dir, write,
    PairSpec, ProofReport, ProveOptions,
};
use crate::reference::generate_reference;
use crate::{FormalError, Verdict};
use rtl::manifest::{Direction, Role, Unit};
use rtl::{GenRequest, GeneratedCore};
use std::fmt::Write as _;

/// Deepest induction tried.
pub const MAX_K: u32 = 32;

/// `fp8gen prove -u mac`: lemma F (binary32 accumulator only) and the induction (lemma M).
pub fn prove_mac(req: &GenRequest, opts: &ProveOptions) -> Result<Vec<ProofReport>, FormalError> {
    let core = rtl::generate(req).map_err(|e| FormalError::Generate(e.to_string()))?;
    let mut reports = Vec::new();
    if req.options.acc_guard == 0 {
        // Check the request first (stages, interleave) before the long lemma.
        crate::reference::mac::reference(req, &core.top, &core.manifest.ports)?;
        let rf = lemma_f(req, &core, opts)?;
        let ok = rf.verdict == Verdict::Proven;
        reports.push(rf);
        if !ok {
            return Ok(reports);
        }
    }
    reports.push(prove_mac_core(req, &core, opts)?);
    Ok(reports)
}

/// Lemma F: the FMA module inside the binary32 mac equals the independent FMA reference.
fn lemma_f(
    req: &GenRequest,
    core: &GeneratedCore,
    opts: &ProveOptions,
) -> Result<ProofReport, FormalError> {
    let mut freq = req.clone();
    freq.unit = Unit::Fma;
    freq.options.interleave = 0;
    let fma = rtl::generate(&freq).map_err(|e| FormalError::Generate(e.to_string()))?;
    let top = format!("{}_fma", core.top);
    let mut manifest = fma.manifest.clone();
    manifest.top = top.clone();
    let gold = GeneratedCore {
        verilog: core.verilog.clone(),
        manifest,
        top: top.clone(),
        depth: 0,
    };
    let reference = generate_reference(&freq)?;
    let spec = PairSpec {
        gold_verilog: gold.verilog.clone(),
        gold_top: top.clone(),
        gold_ports: gold.manifest.ports.clone(),
        gate_verilog: reference.verilog.clone(),
        gate_top: reference.top.clone(),
        gate_ports: reference.manifest.ports.clone(),
        assumptions: mode_assumptions(&freq),
        split: default_split(&freq),
    };
    let sub = ProveOptions {
        work_dir: opts.work_dir.as_ref().map(|d| d.join("lemma_f")),
        ..opts.clone()
    };
    let mut r = prove_pair(&spec, &sub)?;
    r.statement = format!("Lemma F (the mac's FMA module): {}", r.statement);
    if opts.replay {
        if let Some(c) = &r.counterexample {
            let mut cx = replay(&freq, &[&gold, &reference], &c.inputs, &opts.vcd)?;
            cx.yosys_vcd = c.yosys_vcd.clone();
            r.counterexample = Some(cx);
        }
    }
    Ok(r)
}

/// Lemma M: the (possibly mutated) mac core `core` of `req` equals the reference accumulator
/// in every cycle from reset, by k-induction with the state-equality invariant.
pub fn prove_mac_core(
    req: &GenRequest,
    core: &GeneratedCore,
    opts: &ProveOptions,
) -> Result<ProofReport, FormalError> {
    let ports = &core.manifest.ports;
    let mref = crate::reference::mac::reference(req, &core.top, ports)?;
    let mut gold = core.verilog.clone();
    for (i, (c, _, w)) in mref.state.iter().enumerate() {
        gold = crate::compose::expose_as(&gold, &core.top, c, *w, &format!("st{i}_o"))?;
    }
    let rst = ports
        .iter()
        .find(|p| p.role == Role::ResetN)
        .ok_or_else(|| FormalError::Unsupported("the mac core has no rst_ni".into()))?;
    let mut m = String::from("`default_nettype none\nmodule fp8_mac_miter (\n");
    let mut decls = Vec::new();
    let mut free = Vec::new();
    let mut conns = Vec::new();
    for p in ports.iter().filter(|p| p.direction == Direction::Input) {
        decls.push(if p.width == 1 {
            format!("  input wire {}", p.name)
        } else {
            format!("  input wire [{}:0] {}", p.width - 1, p.name)
        });
        if p.role != Role::Clock {
            free.push(format!("{}[{}]", p.name, p.width));
        }
        conns.push((p.name.clone(), p.name.clone(), p.name.clone()));
    }
    decls.push("  output wire state_diff".into());
    decls.push("  output wire out_diff".into());
    m.push_str(&decls.join(",\n"));
    m.push_str("\n);\n");
    let mut diffs = Vec::new();
    let mut sdiffs = Vec::new();
    let mut compared = Vec::new();
    let outs: Vec<(String, u32)> = ports
        .iter()
        .filter(|p| p.direction == Direction::Output)
        .map(|p| (p.name.clone(), p.width))
        .chain(
            mref.state
                .iter()
                .enumerate()
                .map(|(i, (_, _, w))| (format!("st{i}_o"), *w)),
        )
        .collect();
    for (n, w) in &outs {
        let range = if *w == 1 {
            String::new()
        } else {
            format!("[{}:0] ", w - 1)
        };
        let _ = writeln!(m, "  wire {range}c_{n};\n  wire {range}r_{n};");
        conns.push((n.clone(), format!("c_{n}"), format!("r_{n}")));
        if n.starts_with("st") && n.ends_with("_o") && !ports.iter().any(|p| &p.name == n) {
            sdiffs.push(format!("(c_{n} != r_{n})"));
        } else {
            diffs.push(format!("(c_{n} != r_{n})"));
        }
    }
    for p in ports.iter().filter(|p| p.direction == Direction::Output) {
        compared.push(format!("{}[{}]", p.name, p.width));
    }
    let cc: Vec<String> = conns.iter().map(|(p, c, _)| format!(".{p}({c})")).collect();
    let rc: Vec<String> = conns.iter().map(|(p, _, r)| format!(".{p}({r})")).collect();
    let _ = writeln!(m, "  {} u_core ({});", core.top, cc.join(", "));
    let _ = writeln!(m, "  {} u_ref ({});", mref.top, rc.join(", "));
    let _ = writeln!(m, "  assign out_diff = {};", diffs.join(" | "));
    let _ = writeln!(m, "  assign state_diff = {};", sdiffs.join(" | "));
    let assumptions = mode_assumptions(req);
    for a in &assumptions {
        let _ = writeln!(m, "  always @* assume({a});");
    }
    m.push_str("endmodule\n`default_nettype wire\n");
    let invariant: Vec<String> = mref
        .state
        .iter()
        .map(|(c, r, w)| format!("{c} = {r} ({w} bits)"))
        .collect();
    let state_bits: u32 = mref.state.iter().map(|s| s.2).sum();

    let work = work_dir(opts, "induction")?;
    let (dir, keep) = (work.dir.to_path_buf(), work.keep());
    write(&dir, "core.v", &gold)?;
    write(&dir, "ref.v", &mref.verilog)?;
    write(&dir, "miter.v", &m)?;
    let src = ["core.v", "ref.v", "miter.v"];
    // Lemma O: from any state where the corresponding registers are equal, the outputs are
    // equal (one cycle, every register and input free).
    write(
        &dir,
        "prove.ys",
        &sat_script(
            &src,
            "fp8_mac_miter",
            "-seq 1 -set-at 1 state_diff 0 -prove out_diff 0",
            opts.timeout_secs,
        ),
    )?;
    let out = run_yosys(&dir, opts.timeout_secs)?;
    let _ = std::fs::rename(dir.join("sat.log"), dir.join("sat_outputs.log"));
    let mut seconds = out.seconds;
    let mut k = 1;
    let mut last_step = None;
    let (verdict, run, detail, proven_k) = if out.verdict != Verdict::Proven {
        let d = match out.verdict {
            Verdict::Refuted => "lemma O: the outputs differ from a state where the corresponding registers are equal (the state is free, it may be unreachable)".to_string(),
            _ => format!("lemma O: {}", out.detail.clone().unwrap_or_default()),
        };
        (out.verdict, out, Some(d), None)
    } else {
        loop {
            // Base case: from reset, cycles 2 ..= k+1.
            write(
                &dir,
                "prove.ys",
                &sat_script(
                    &src,
                    "fp8_mac_miter",
                    &format!(
                        "-seq {} -set-at 1 {} 0 -prove-skip 1 -prove state_diff 0",
                        k + 1,
                        rst.name
                    ),
                    opts.timeout_secs,
                ),
            )?;
            let base = run_yosys(&dir, opts.timeout_secs)?;
            seconds += base.seconds;
            let _ = std::fs::rename(dir.join("sat.log"), dir.join(format!("sat_base_{k}.log")));
            if base.verdict != Verdict::Proven {
                let d = match base.verdict {
                    Verdict::Refuted => format!(
                        "base case: a trace from reset fails in cycle {}",
                        base.rows.iter().map(|r| r.0).max().unwrap_or(0)
                    ),
                    _ => format!(
                        "base case at depth {k}: {}",
                        base.detail.clone().unwrap_or_default()
                    ),
                };
                break (base.verdict, base, Some(d), None);
            }
            // Induction step: any state, trigger = 0 assumed in cycles 1 ..= k.
            let hyp: Vec<String> = (1..=k)
                .map(|s| format!("-set-at {s} state_diff 0"))
                .collect();
            write(
                &dir,
                "prove.ys",
                &sat_script(
                    &src,
                    "fp8_mac_miter",
                    &format!(
                        "-seq {} {} -prove-skip {k} -prove state_diff 0",
                        k + 1,
                        hyp.join(" ")
                    ),
                    opts.timeout_secs,
                ),
            )?;
            let step = run_yosys(&dir, opts.timeout_secs)?;
            seconds += step.seconds;
            let _ = std::fs::rename(dir.join("sat.log"), dir.join(format!("sat_step_{k}.log")));
            match step.verdict {
                Verdict::Proven => break (Verdict::Proven, step, None, Some(k)),
                Verdict::NoVerdict => {
                    let d = format!(
                        "induction step at depth {k}: {}",
                        step.detail.clone().unwrap_or_default()
                    );
                    break (Verdict::NoVerdict, step, Some(d), None);
                }
                Verdict::Refuted => {}
            }
            last_step = Some(k);
            if k >= MAX_K {
                let d = format!(
                "not inductive up to depth {MAX_K} and no trace from reset within {} cycles: no verdict",
                MAX_K + 1
            );
                break (Verdict::NoVerdict, step, Some(d), None);
            }
            k = (k * 2).min(MAX_K);
        }
    };
    let statement = format!(
        "{c} equals the reference accumulator {r} in every cycle after reset: (lemma O) from any state where the invariant {inv} ({state_bits} state bits) holds, the outputs {outs} are equal; (induction) the invariant holds in cycles 2..{kk} after rst_ni low in cycle 1 (base case, every register's initial value free), and from any state where it holds for {kind} consecutive cycles it holds in the next (induction step){lemma}; free inputs every cycle: {free}{ass}",
        c = core.top,
        r = mref.top,
        outs = compared.join(", "),
        inv = invariant.join(", "),
        kk = k + 1,
        kind = k,
        lemma = if req.options.acc_guard == 0 {
            "; the reference reuses the core's FMA module, proven by lemma F"
        } else {
            "; the exact reference shares no logic with the core (guard overflow: the sum one bit wider leaves the register's range)"
        },
        free = free.join(", "),
        ass = if assumptions.is_empty() {
            String::new()
        } else {
            format!("; assumed every cycle: {}", assumptions.join(" and "))
        }
    );
    let statement = match proven_k {
        Some(k) => format!("Lemma M (the accumulator, {k}-induction): {statement}"),
        None => format!(
            "Lemma M (the accumulator, k-induction; {}): {statement}",
            last_step.map_or("depth 1".to_string(), |s| format!(
                "steps failed up to depth {s}"
            ))
        ),
    };
    let cex = (verdict == Verdict::Refuted).then(|| crate::prove::CexReport {
        inputs: Vec::new(),
        trace: run.rows.clone(),
        cycle: run.rows.iter().map(|r| r.0).max(),
        replayed: Vec::new(),
        golden: Vec::new(),
        differs_from_golden: Vec::new(),
        vcd: None,
        yosys_vcd: keep.then(|| dir.join("cex.vcd")),
    });
    let mut report = ProofReport {
        verdict,
        statement,
        gold: core.top.clone(),
        gate: mref.top.clone(),
        free_inputs: free,
        compared,
        assumptions,
        solver: run.solver,
        seconds,
        problem: run.problem,
        detail,
        counterexample: cex,
        work_dir: keep.then(|| dir.clone()),
        lemmas: Vec::new(),
    };
    work.finish(&mut report)?;
    Ok(report)
}
