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
//!
//! A pipelined mac (`--stages N`) is proven through its 0-stage twin: the twin against the
//! reference (lemmas F and M), then [`prove_mac_pipeline`] (lemma P): the pipelined core
//! equals the twin with its inputs and outputs delayed, by k-induction on one sequential
//! miter of the two cores.

use crate::prove::{
    mode_assumptions, replay, run_yosys, sat_script, work_dir, write, ProofReport, ProveOptions,
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
    if req.stages > 0 {
        // The 0-stage twin against the reference (lemmas F and M), then lemma P.
        let twin_req = GenRequest {
            stages: 0,
            ..req.clone()
        };
        let twin = rtl::generate(&twin_req).map_err(|e| FormalError::Generate(e.to_string()))?;
        // Check the request first (the reference of the twin) before the long lemmas.
        crate::reference::mac::reference(&twin_req, &twin.top, &twin.manifest.ports)?;
        let mut reports = prove_mac(&twin_req, opts)?;
        if reports.iter().any(|r| r.verdict != Verdict::Proven) {
            return Ok(reports);
        }
        let mut p = prove_mac_pipeline(req, &core, &twin, opts)?;
        if p.verdict == Verdict::Proven {
            p.statement.push_str(&format!(
                "; with the lemmas of the twin above: {} equals the reference accumulator of its 0-stage twin delayed by its latency less one ({} cycles), in every cycle after reset{}",
                core.top,
                req.stages,
                if req.options.acc_guard > 0 {
                    ""
                } else {
                    ", for steps at least the initiation interval apart"
                }
            ));
        }
        reports.push(p);
        return Ok(reports);
    }
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
    let sub = ProveOptions {
        work_dir: opts.work_dir.as_ref().map(|d| d.join("lemma_f")),
        ..opts.clone()
    };
    let (spec, cmp) = crate::prove::reference_pair(&freq, &gold, &reference);
    let mut r = crate::prove::prove_pair_with(&spec, &cmp, &sub)?;
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
    let (verdict, run, detail, proven_k, k, last_step) = if out.verdict != Verdict::Proven {
        let d = match out.verdict {
            Verdict::Refuted => "lemma O: the outputs differ from a state where the corresponding registers are equal (the state is free, it may be unreachable)".to_string(),
            _ => format!("lemma O: {}", out.detail.clone().unwrap_or_default()),
        };
        (out.verdict, out, Some(d), None, 1, None)
    } else {
        let l = k_induction(&dir, &src, "fp8_mac_miter", "state_diff", &rst.name, opts)?;
        seconds += l.seconds;
        (l.verdict, l.run, l.detail, l.proven_k, l.k, l.last_step)
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
    let cex = (verdict == Verdict::Refuted).then(|| {
        crate::prove::CexReport::from_trace(run.rows.clone(), keep.then(|| dir.join("cex.vcd")))
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

/// The outcome of [`k_induction`].
struct Induction {
    verdict: Verdict,
    run: crate::prove::SatRun,
    detail: Option<String>,
    /// The depth of the proof, when proven.
    proven_k: Option<u32>,
    /// The last depth tried.
    k: u32,
    /// The deepest failed step.
    last_step: Option<u32>,
    seconds: f64,
}

/// k-induction of `sig = 0` on the miter `top` in `dir` (sources `src`) for k = 1, 2, 4, …,
/// [`MAX_K`]: the base case from `rst` low in cycle 1 (cycles 2 … k+1), the step from any
/// state with `sig = 0` in cycles 1 … k.
fn k_induction(
    dir: &std::path::Path,
    src: &[&str],
    top: &str,
    sig: &str,
    rst: &str,
    opts: &ProveOptions,
) -> Result<Induction, FormalError> {
    let mut seconds = 0.0;
    let mut k = 1;
    let mut last_step = None;
    let (verdict, run, detail, proven_k) = loop {
        // Base case: from reset, cycles 2 ..= k+1.
        write(
            dir,
            "prove.ys",
            &sat_script(
                src,
                top,
                &format!(
                    "-seq {} -set-at 1 {rst} 0 -prove-skip 1 -prove {sig} 0",
                    k + 1
                ),
                opts.timeout_secs,
            ),
        )?;
        let base = run_yosys(dir, opts.timeout_secs)?;
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
        // Induction step: any state, sig = 0 assumed in cycles 1 ..= k.
        let hyp: Vec<String> = (1..=k).map(|s| format!("-set-at {s} {sig} 0")).collect();
        write(
            dir,
            "prove.ys",
            &sat_script(
                src,
                top,
                &format!(
                    "-seq {} {} -prove-skip {k} -prove {sig} 0",
                    k + 1,
                    hyp.join(" ")
                ),
                opts.timeout_secs,
            ),
        )?;
        let step = run_yosys(dir, opts.timeout_secs)?;
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
    };
    Ok(Induction {
        verdict,
        run,
        detail,
        proven_k,
        k,
        last_step,
        seconds,
    })
}

/// Lemma P: the pipelined mac `pipe` of `req` (`--stages N`) equals its 0-stage twin `twin`
/// (the same request with `--stages 0`) fed the same inputs `a` cycles later and showing its
/// outputs `b` cycles later (`a + b = N`: the binary32 accumulator `a = N`, the FMA in front
/// of the loop; the exact accumulator `a = N/2` (the term stages), `b` the rounding stages),
/// in every cycle after reset, by k-induction. Invariant: the outputs and the registers
/// written when a step completes (the accumulators, flags, valid; the exact accumulator's
/// class state and modes) equal. A binary32 mac takes a step at most every initiation
/// interval `⌈(N+1)/L⌉` cycles (`L` interleaved accumulators): the miter assumes it.
pub fn prove_mac_pipeline(
    req: &GenRequest,
    pipe: &GeneratedCore,
    twin: &GeneratedCore,
    opts: &ProveOptions,
) -> Result<ProofReport, FormalError> {
    use rtl::units::mac::{exact_stage_split, initiation_interval};
    let n = req.stages;
    let exact = req.options.acc_guard > 0;
    // The exact mac's stages before the accumulator (product half and term register) delay
    // its inputs, the rest (the output projection) its outputs.
    let (a, b): (u32, u32) = if exact {
        let (front, term, back) = exact_stage_split(n);
        (front + term, back)
    } else {
        (n, 0)
    };
    let ii = if exact {
        1
    } else {
        initiation_interval(n, req.options.interleave.max(1))
    };
    let twin_req = GenRequest {
        stages: 0,
        ..req.clone()
    };
    let ports = &pipe.manifest.ports;
    // The registers written when a step completes: aligned in the two cores. The lane
    // counter and the fresh lanes (written when a step is issued) are not compared.
    let mref = crate::reference::mac::reference(&twin_req, &twin.top, &twin.manifest.ports)?;
    let issued = |c: &str| c == "k_q" || c == "fresh_q";
    let pairs: Vec<(String, u32)> = mref
        .state
        .iter()
        .filter(|(c, _, _)| !issued(c))
        .map(|(c, _, w)| (c.clone(), *w))
        .collect();
    // The registers written when a step is issued (the lane counter, the fresh lanes; reset
    // to 0): the twin's equal the pipeline's `a` cycles earlier (0 in the `a` cycles after a
    // reset).
    let early: Vec<(String, u32)> = mref
        .state
        .iter()
        .filter(|(c, _, _)| issued(c))
        .map(|(c, _, w)| (c.clone(), *w))
        .collect();
    let (mut pv, mut tv) = (pipe.verilog.clone(), twin.verilog.clone());
    for (i, (r, w)) in pairs.iter().chain(&early).enumerate() {
        pv = crate::compose::expose_as(&pv, &pipe.top, r, *w, &format!("st{i}_o"))?;
        tv = crate::compose::expose_as(&tv, &twin.top, r, *w, &format!("st{i}_o"))?;
    }
    let role = |r: Role, what: &str| {
        ports
            .iter()
            .find(|p| p.role == r)
            .map(|p| p.name.clone())
            .ok_or_else(|| FormalError::Unsupported(format!("the mac core has no {what}")))
    };
    let clk = role(Role::Clock, "clock")?;
    let rst = role(Role::ResetN, "rst_ni")?;
    let vin = role(Role::ValidIn, "valid_i")?;
    let range = |w: u32| {
        if w == 1 {
            String::new()
        } else {
            format!("[{}:0] ", w - 1)
        }
    };
    let mut m = String::from("`default_nettype none\nmodule fp8_macpipe_miter (\n");
    let mut decls = Vec::new();
    let mut free = Vec::new();
    let (mut pc, mut tc) = (Vec::new(), Vec::new());
    let mut body = String::new();
    let mut always = String::new();
    for p in ports.iter().filter(|p| p.direction == Direction::Input) {
        decls.push(format!("  input wire {}{}", range(p.width), p.name));
        pc.push(format!(".{0}({0})", p.name));
        if p.role.is_clock_or_reset() {
            tc.push(format!(".{0}({0})", p.name));
            continue;
        }
        free.push(format!("{}[{}]", p.name, p.width));
        // The twin's inputs `a` cycles late; the delayed valid is cleared by the reset.
        let mut src = p.name.clone();
        for s in 1..=a {
            let d = format!("di{s}_{}", p.name);
            let _ = writeln!(body, "  reg {}{d};", range(p.width));
            if p.name == vin {
                let _ = writeln!(always, "    {d} <= {rst} ? {src} : 1'b0;");
            } else {
                let _ = writeln!(always, "    {d} <= {src};");
            }
            src = d;
        }
        tc.push(format!(".{}({src})", p.name));
    }
    decls.push("  output wire trigger".into());
    m.push_str(&decls.join(",\n"));
    m.push_str("\n);\n");
    let mut diffs = Vec::new();
    let mut compared = Vec::new();
    let outs: Vec<(String, u32, bool)> = ports
        .iter()
        .filter(|p| p.direction == Direction::Output)
        .map(|p| (p.name.clone(), p.width, p.role == Role::ValidOut))
        .collect();
    for (name, w, valid) in &outs {
        let _ = writeln!(
            body,
            "  wire {}p_{name};\n  wire {}t_{name};",
            range(*w),
            range(*w)
        );
        pc.push(format!(".{name}(p_{name})"));
        tc.push(format!(".{name}(t_{name})"));
        // The twin's outputs `b` cycles late; the delayed valid is cleared by the reset.
        let mut src = format!("t_{name}");
        for s in 1..=b {
            let d = format!("do{s}_{name}");
            let _ = writeln!(body, "  reg {}{d};", range(*w));
            if *valid {
                let _ = writeln!(always, "    {d} <= {rst} ? {src} : 1'b0;");
            } else {
                let _ = writeln!(always, "    {d} <= {src};");
            }
            src = d;
        }
        if b > 0 && !*valid {
            // The rounding stages show the pre-reset accumulator for b cycles after a reset
            // (valid_o = 0 then): compared from the b-th cycle after a reset on.
            diffs.push(format!("(settled & (p_{name} != {src}))"));
        } else {
            diffs.push(format!("(p_{name} != {src})"));
        }
        compared.push(format!("{name}[{w}]"));
    }
    for (i, (_, w)) in pairs.iter().chain(&early).enumerate() {
        let _ = writeln!(
            body,
            "  wire {}ps{i};\n  wire {}ts{i};",
            range(*w),
            range(*w)
        );
        pc.push(format!(".st{i}_o(ps{i})"));
        tc.push(format!(".st{i}_o(ts{i})"));
        let mut src = format!("ps{i}");
        if i >= pairs.len() {
            for s in 1..=a {
                let d = format!("ds{s}_{i}");
                let _ = writeln!(body, "  reg {}{d};", range(*w));
                let _ = writeln!(always, "    {d} <= {rst} ? {src} : {w}'d0;");
                src = d;
            }
        }
        diffs.push(format!("({src} != ts{i})"));
    }
    m.push_str(&body);
    if b > 0 {
        // Cycles since the last reset, saturating at b.
        let w = 32 - b.leading_zeros();
        let _ = writeln!(m, "  reg [{}:0] age_q;", w - 1);
        let _ = writeln!(m, "  wire settled = age_q >= {w}'d{b};");
        let _ = writeln!(
            always,
            "    age_q <= !{rst} ? {w}'d0 : settled ? {w}'d{b} : age_q + {w}'d1;"
        );
    }
    let mut assumptions = mode_assumptions(req);
    if ii > 1 {
        // Cycles since the last step (saturating at the initiation interval).
        let w = 32 - ii.leading_zeros();
        let _ = writeln!(m, "  reg [{}:0] since_q;", w - 1);
        let _ = writeln!(
            always,
            "    since_q <= !{rst} ? {w}'d{ii} : {vin} ? {w}'d1 : (since_q >= {w}'d{ii}) ? {w}'d{ii} : since_q + {w}'d1;"
        );
        assumptions.push(format!("!{rst} | !{vin} | (since_q >= {w}'d{ii})"));
    }
    if !always.is_empty() {
        let _ = writeln!(m, "  always @(posedge {clk}) begin\n{always}  end");
    }
    let _ = writeln!(m, "  {} u_pipe ({});", pipe.top, pc.join(", "));
    let _ = writeln!(m, "  {} u_twin ({});", twin.top, tc.join(", "));
    let _ = writeln!(m, "  assign trigger = {};", diffs.join(" | "));
    for x in &assumptions {
        let _ = writeln!(m, "  always @* assume({x});");
    }
    m.push_str("endmodule\n`default_nettype wire\n");

    let work = work_dir(opts, "pipeline")?;
    let (dir, keep) = (work.dir.to_path_buf(), work.keep());
    write(&dir, "pipe.v", &pv)?;
    write(&dir, "twin.v", &tv)?;
    write(&dir, "miter.v", &m)?;
    let src = ["pipe.v", "twin.v", "miter.v"];
    let l = k_induction(&dir, &src, "fp8_macpipe_miter", "trigger", &rst, opts)?;
    let mut invariant: Vec<String> = pairs
        .iter()
        .map(|(r, w)| format!("{r} ({w} bits)"))
        .collect();
    invariant.extend(early.iter().map(|(r, w)| {
        format!("the twin's {r} ({w} bits) equal to the pipeline's {a} cycles earlier")
    }));
    let state_bits: u32 = pairs.iter().chain(&early).map(|p| p.1).sum();
    let cycles = |n: u32| format!("{n} cycle{}", if n == 1 { "" } else { "s" });
    let delays = match (a, b) {
        (_, 0) => format!("fed the same inputs {} later", cycles(a)),
        (0, _) => format!("showing its outputs {} later", cycles(b)),
        _ => format!(
            "fed the same inputs {} later and showing its outputs {} later",
            cycles(a),
            cycles(b)
        ),
    };
    let settle = if b > 0 {
        format!(" (acc_o and flags_o once {} have passed since a reset: until then the rounding stages still show the accumulator of before the reset, with valid_o = 0)", cycles(b))
    } else {
        String::new()
    };
    let statement = format!(
        "{p} (latency {lat}) equals its 0-stage twin {t} {delays} (the delayed valid cleared by rst_ni) in every cycle after reset: the outputs {outs}{settle} and the registers written when a step completes or is issued ({inv}; {state_bits} state bits in each core) are equal in cycles 2..{kk} after rst_ni low in cycle 1 (base case, every register's initial value free), and from any state where they are equal for {k} consecutive cycles they are in the next (induction step){ii_note}; free inputs every cycle: {free}{ass}",
        p = pipe.top,
        lat = pipe.manifest.latency,
        t = twin.top,
        outs = compared.join(", "),
        inv = invariant.join(", "),
        kk = l.k + 1,
        k = l.k,
        ii_note = if ii > 1 {
            format!("; a step at most every {ii} cycles (the core's initiation interval, assumed: since_q counts the cycles since the last valid_i)")
        } else {
            "; a step in every cycle allowed".to_string()
        },
        free = free.join(", "),
        ass = if assumptions.is_empty() {
            String::new()
        } else {
            format!("; assumed every cycle: {}", assumptions.join(" and "))
        }
    );
    let statement = match l.proven_k {
        Some(k) => format!("Lemma P (the pipeline, {k}-induction): {statement}"),
        None => format!(
            "Lemma P (the pipeline, k-induction; {}): {statement}",
            l.last_step.map_or("depth 1".to_string(), |s| format!(
                "steps failed up to depth {s}"
            ))
        ),
    };
    let cex = (l.verdict == Verdict::Refuted).then(|| {
        crate::prove::CexReport::from_trace(l.run.rows.clone(), keep.then(|| dir.join("cex.vcd")))
    });
    let mut report = ProofReport {
        verdict: l.verdict,
        statement,
        gold: pipe.top.clone(),
        gate: twin.top.clone(),
        free_inputs: free,
        compared,
        assumptions,
        solver: l.run.solver,
        seconds: l.seconds,
        problem: l.run.problem,
        detail: l.detail,
        counterexample: cex,
        work_dir: keep.then(|| dir.clone()),
        lemmas: Vec::new(),
    };
    work.finish(&mut report)?;
    Ok(report)
}
