//! The compositional proof of a block quantizer (`quantize` with N > 1 elements).
//!
//! The flat miter of a 32-element quantizer against its reference gives the solver 32
//! element datapaths tied together by the block maximum (binary32 → E4M3, N = 32: 1.47 M AND
//! gates, no verdict from CaDiCaL within 20 minutes). It is split into lemmas on one miter of
//! the two cores with cuts, each lemma solved by CaDiCaL on its own cone of influence
//! ([`crate::cnf::Aig::cone`]). In both cores the scale wire (optimized `scale_code`,
//! reference `s_code`) and each element's flags wire (`z<k>_flags`, `f<k>`) are cut: driven
//! by inputs shared by both cores, their original drivers tapped ([`cut_wire`],
//! [`tap_wire`]).
//!
//! * **(A) scale**: the scale wire's driver and `valid_o` equal on every input.
//! * **(B_k) element k** (k = 0 … N−1): `r<k>_o` and the driver of element k's flags wire
//!   equal on every input and every value of the cut wires. Where that fails, the same
//!   comparison with the scale cut fed by the reference's own scale of the block (a
//!   counterexample of this form is a real block).
//! * **(C) flags**: `flags_o` and `s_o` equal on every input and every value of the cut wires.
//!
//! A cut core computes exactly the original core when each cut input carries the value of
//! its wire's original driver (the cut only replaces that wire's driver), so (A), (B_k) for
//! every k and (C) give every output of the cores equal on every input: the scale wires agree
//! by (A); fed with that common scale the elements and their flags agree by (B_k); fed with
//! the common scale and flags, `flags_o` and `s_o` agree by (C).

use rtl::manifest::{Direction, Role};
use rtl::{GenRequest, GeneratedCore};
use serde::Serialize;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::prove::{decl, matching, mode_assumptions, work_dir, write, ProofReport, ProveOptions};
use crate::tools;
use crate::verdict::Verdict;
use crate::FormalError;

/// The scale wire of the optimized quantizer and of its reference.
const GOLD_SCALE: &str = "scale_code";
const REF_SCALE: &str = "s_code";

/// One lemma's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct Lemma {
    /// Short name: `A`, `B0` … `B31`, `C`.
    pub name: String,
    /// What it states.
    pub statement: String,
    /// Proven, refuted or no verdict.
    pub verdict: Verdict,
    /// Solver wall time, seconds.
    pub seconds: f64,
    /// Size of the cone's CNF.
    pub problem: Option<String>,
    /// Why there is no verdict, or which form of the lemma was proven.
    pub detail: Option<String>,
}

/// The span `[start, end)` of `module <top> (` … `endmodule` in `v`.
fn module_span(v: &str, top: &str) -> Result<(usize, usize), FormalError> {
    let head = format!("module {top} (\n");
    let start = v.find(&head).ok_or_else(|| {
        FormalError::Unsupported(format!("no module {top} in the core's Verilog"))
    })?;
    let end = v[start..]
        .find("endmodule")
        .map(|i| start + i + "endmodule".len())
        .ok_or_else(|| FormalError::Unsupported(format!("module {top} has no endmodule")))?;
    Ok((start, end))
}

/// The one declaration `wire [H:0] <name> …` in `body`: (byte offset of the line, the line,
/// width).
fn find_decl<'a>(body: &'a str, name: &str) -> Result<(usize, &'a str, u32), FormalError> {
    let mut found = Vec::new();
    let mut off = 0;
    for line in body.split_inclusive('\n') {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("wire ") {
            let (width, rest) = match rest.strip_prefix('[') {
                Some(r) => {
                    let close = r.find(']').unwrap_or(0);
                    let hi: u32 = r[..close]
                        .split(':')
                        .next()
                        .and_then(|h| h.trim().parse().ok())
                        .unwrap_or(0);
                    (hi + 1, r[close + 1..].trim_start())
                }
                None => (1, rest),
            };
            let id: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if id == name {
                found.push((off, line, width));
            }
        }
        off += line.len();
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(FormalError::Unsupported(format!(
            "the compositional proof cuts wire {name}, which the core does not declare"
        ))),
        _ => Err(FormalError::Unsupported(format!(
            "wire {name} is declared {} times",
            found.len()
        ))),
    }
}

/// Adds a port declaration as the first port of module `top`.
fn add_port(
    v: &mut String,
    top: &str,
    dir: &str,
    width: u32,
    port: &str,
) -> Result<(), FormalError> {
    let (start, _) = module_span(v, top)?;
    let at = start + format!("module {top} (\n").len();
    let range = if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    };
    v.insert_str(at, &format!("    {dir} wire {range}{port},\n"));
    Ok(())
}

/// The Verilog of `v` with wire `name` of module `top` cut: its declaration
/// `wire [H:0] name = expr;` becomes `wire [H:0] name = port;` plus an unread
/// `wire [H:0] name_uncut = expr;`, and `port` is a new input. Nothing else changes, so the
/// result computes exactly what `v` computes whenever `port` carries the value `expr` had.
pub fn cut_wire(v: &str, top: &str, name: &str, port: &str) -> Result<String, FormalError> {
    let (start, end) = module_span(v, top)?;
    let (off, line, width) = find_decl(&v[start..end], name)?;
    let eq = line.find(" = ").ok_or_else(|| {
        FormalError::Unsupported(format!(
            "wire {name} has no driver in its declaration; the cut needs `wire {name} = …;`"
        ))
    })?;
    let head = &line[..eq]; // "  wire [H:0] name"
    let rest = &line[eq + 3..];
    let new = format!("{head} = {port};\n{head}_uncut = {rest}");
    let mut out = String::with_capacity(v.len() + 128);
    out.push_str(&v[..start + off]);
    out.push_str(&new);
    out.push_str(&v[start + off + line.len()..]);
    add_port(&mut out, top, "input", width, port)?;
    Ok(out)
}

/// The Verilog of `v` with wire `name` of module `top` also driven onto a new output `port`.
pub fn tap_wire(v: &str, top: &str, name: &str, port: &str) -> Result<String, FormalError> {
    let (start, end) = module_span(v, top)?;
    let (_, _, width) = find_decl(&v[start..end], name)?;
    let mut out = v.to_string();
    let endm = end - "endmodule".len();
    out.insert_str(endm, &format!("  assign {port} = {name};\n"));
    add_port(&mut out, top, "output", width, port)?;
    Ok(out)
}

/// The lemma outputs of the miter: (output name, lemma name, statement).
struct Goal {
    output: String,
    lemma: String,
    statement: String,
}

/// Whether `prove` takes the compositional route for `gold`: a quantizer of several elements,
/// the CaDiCaL engine, and a core that declares the wires the lemmas cut (`scale_code` and
/// `z<k>_flags`, each with its driver: every generated quantizer; a core brought by the user
/// may name them otherwise and is proven by the flat miter).
pub fn applies(req: &GenRequest, gold: &GeneratedCore, opts: &ProveOptions) -> bool {
    let n = req.options.block.n;
    let declares = |w: &str| {
        module_span(&gold.verilog, &gold.top)
            .and_then(|(a, b)| find_decl(&gold.verilog[a..b], w))
            .is_ok_and(|(_, line, _)| line.contains(" = "))
    };
    req.unit == rtl::manifest::Unit::Quantize
        && n > 1
        && opts.engine == crate::prove::Engine::Cadical
        && declares(GOLD_SCALE)
        && (0..n).all(|k| declares(&format!("z{k}_flags")))
}

/// Proves the quantizer `gold` (0 stages) equal to `reference` by the lemmas of the module
/// documentation. The report's verdict is Proven only if every lemma is; a refutation of (A)
/// or of an element lemma fed by the reference's scale is a real counterexample (its inputs
/// are a block); a lemma refuted only with a free cut value gives no verdict.
pub fn prove_quantize(
    req: &GenRequest,
    gold: &GeneratedCore,
    reference: &GeneratedCore,
    opts: &ProveOptions,
) -> Result<ProofReport, FormalError> {
    let n = req.options.block.n;
    let gports = &gold.manifest.ports;
    let rports = &reference.manifest.ports;
    let (gt, rt) = (gold.top.as_str(), reference.top.as_str());
    let sk = req.formats.scale.map_or(8, |f| f.k);

    // One copy of each core with every cut: the scale wire and each element's flags wire
    // driven by inputs shared by both cores, their original drivers (`<wire>_uncut`) tapped.
    let cut_all = |v: &str, top: &str, scale: &str, flags: &dyn Fn(u32) -> String| {
        let mut v = cut_wire(v, top, scale, "lemma_scale_i")?;
        v = tap_wire(&v, top, &format!("{scale}_uncut"), "lemma_scale_o")?;
        for k in 0..n {
            let f = flags(k);
            v = cut_wire(&v, top, &f, &format!("lemma_flags{k}_i"))?;
            v = tap_wire(&v, top, &format!("{f}_uncut"), &format!("lemma_flags{k}_o"))?;
        }
        Ok::<String, FormalError>(v)
    };
    let gold_v = cut_all(&gold.verilog, gt, GOLD_SCALE, &|k| format!("z{k}_flags"))?;
    let gate_v = cut_all(&reference.verilog, rt, REF_SCALE, &|k| format!("f{k}"))?;

    // The miter.
    let assumptions = mode_assumptions(req);
    let assume = if assumptions.is_empty() {
        String::new()
    } else {
        format!(
            " & {}",
            assumptions
                .iter()
                .map(|a| format!("({a})"))
                .collect::<Vec<_>>()
                .join(" & ")
        )
    };
    let mut m = String::from("`default_nettype none\nmodule fp8_lemmas (\n");
    let mut decls = Vec::new();
    let mut free = Vec::new();
    for p in rports.iter().filter(|p| p.direction == Direction::Input) {
        decls.push(format!("  input wire {}", decl(p, "")));
        free.push(format!("{}[{}]", p.name, p.width));
    }
    decls.push(format!("  input wire [{}:0] lemma_scale_i", sk - 1));
    decls.push("  input wire lemma_free_i".into());
    for k in 0..n {
        decls.push(format!("  input wire [3:0] lemma_flags{k}_i"));
    }
    decls.push("  output wire trigger".into());
    let mut goals: Vec<Goal> = Vec::new();
    let mut goal = |output: String, lemma: String, statement: String| {
        goals.push(Goal {
            output,
            lemma,
            statement,
        })
    };
    goal(
        "bad_a".into(),
        "A".into(),
        format!(
            "the scale wire's driver ({GOLD_SCALE} / {REF_SCALE}) and valid_o equal on every input"
        ),
    );
    goal(
        "bad_c".into(),
        "C".into(),
        "with the scale wire and every element's flags wire (z<k>_flags / f<k>) cut to free values shared by both cores, flags_o and s_o equal on every input and every value of the cut wires".into(),
    );
    for k in 0..n {
        goal(
            format!("bad_b{k}"),
            format!("B{k}"),
            format!("with the scale wire and the element flags wires of both cores cut to shared free values, r{k}_o and the driver of element {k}'s flags wire (z{k}_flags / f{k}) equal on every input and every value of the cut wires"),
        );
    }
    for g in &goals {
        decls.push(format!("  output wire {}", g.output));
    }
    for k in 0..n {
        decls.push(format!("  output wire bad_r{k}"));
    }
    m.push_str(&decls.join(",\n"));
    m.push_str("\n);\n");
    // Instance connections: inputs by role (the gold core's names may differ), outputs to
    // prefixed wires.
    let mut gcn = Vec::new();
    let mut rcn = Vec::new();
    for p in gports {
        let r = matching(rports, p, rt)?;
        match p.direction {
            Direction::Input => gcn.push(format!(".{}({})", p.name, r.name)),
            Direction::Output => gcn.push(format!(".{}(g_{})", p.name, r.name)),
        }
    }
    for p in rports {
        matching(gports, p, gt)?;
        match p.direction {
            Direction::Input => rcn.push(format!(".{0}({0})", p.name)),
            Direction::Output => {
                let _ = writeln!(m, "  wire {};", decl(p, "g_"));
                let _ = writeln!(m, "  wire {};", decl(p, "r_"));
                rcn.push(format!(".{0}(r_{0})", p.name));
            }
        }
    }
    let _ = writeln!(
        m,
        "  wire [{0}:0] g_scale, r_scale;\n  // a free scale, or (lemma_free_i = 0) the reference's scale of the block\n  wire [{0}:0] lemma_scale = lemma_free_i ? lemma_scale_i : r_scale;",
        sk - 1
    );
    for (c, pre) in [(&mut gcn, "g"), (&mut rcn, "r")] {
        c.push(".lemma_scale_i(lemma_scale)".into());
        c.push(format!(".lemma_scale_o({pre}_scale)"));
        for k in 0..n {
            c.push(format!(".lemma_flags{k}_i(lemma_flags{k}_i)"));
            c.push(format!(".lemma_flags{k}_o({pre}_f{k})"));
        }
    }
    for k in 0..n {
        let _ = writeln!(m, "  wire [3:0] g_f{k}, r_f{k};");
    }
    let _ = writeln!(m, "  {gt} u_gold ({});", gcn.join(", "));
    let _ = writeln!(m, "  {rt} u_gate ({});", rcn.join(", "));
    let mut diffs_a = vec!["(g_scale != r_scale)".to_string()];
    let mut diffs_c = Vec::new();
    for p in rports.iter().filter(|p| p.direction == Direction::Output) {
        match p.role {
            Role::Result => {}
            Role::Flags | Role::ScaleOut => diffs_c.push(format!("(g_{0} != r_{0})", p.name)),
            _ => diffs_a.push(format!("(g_{0} != r_{0})", p.name)),
        }
    }
    let _ = writeln!(m, "  assign bad_a = ({}){assume};", diffs_a.join(" | "));
    let _ = writeln!(m, "  assign bad_c = ({}){assume};", diffs_c.join(" | "));
    let mut all = vec!["bad_a".to_string(), "bad_c".to_string()];
    for k in 0..n {
        let r = rports
            .iter()
            .find(|p| p.role == Role::Result && p.index == k && p.direction == Direction::Output)
            .ok_or_else(|| FormalError::Unsupported(format!("{rt} has no result {k}")))?;
        let _ = writeln!(
            m,
            "  wire diff{k} = (g_{0} != r_{0}) | (g_f{k} != r_f{k});",
            r.name
        );
        let _ = writeln!(m, "  assign bad_b{k} = diff{k} & lemma_free_i{assume};");
        let _ = writeln!(m, "  assign bad_r{k} = diff{k} & ~lemma_free_i{assume};");
        all.push(format!("bad_b{k}"));
        all.push(format!("bad_r{k}"));
    }
    let _ = writeln!(m, "  assign trigger = {};", all.join(" | "));
    m.push_str("endmodule\n`default_nettype wire\n");

    let work = work_dir(opts, "lemmas")?;
    let (dir, keep) = (work.dir.to_path_buf(), work.keep());
    write(&dir, "gold.v", &gold_v)?;
    write(&dir, "gate.v", &gate_v)?;
    write(&dir, "miter.v", &m)?;
    let exe = tools::find_cadical().map_err(FormalError::Tool)?;
    write(
        &dir,
        "aiger.ys",
        &crate::cnf::aiger_script(&["gold.v", "gate.v", "miter.v"], "fp8_lemmas"),
    )?;
    let t_yosys = crate::prove::run_yosys_script(&dir, "aiger.ys", opts.timeout_secs)?;
    let t0 = Instant::now();
    let aig = crate::cnf::read_aiger(&dir).map_err(FormalError::Tool)?;
    let jobs = if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.jobs
    };
    let budget = opts.timeout_secs.saturating_sub(t_yosys as u64).max(1);

    // Solve the lemmas, `jobs` at a time; an element lemma refuted with a free scale is
    // solved again with the block's own scale.
    let solve = |output: &str, sub: &str| -> Result<Outcome, FormalError> {
        let Some(lit) = aig.output(output, 0) else {
            // yosys leaves constant outputs out of the map: the difference folded to a
            // constant. Proven only if every unmapped output (the AIGER outputs left when
            // each mapped one is taken away once) is constant false.
            let mut unmapped: Vec<u32> = aig.output_lits.clone();
            for o in &aig.outputs {
                if let Some(i) = unmapped.iter().position(|&l| l == o.2) {
                    unmapped.swap_remove(i);
                }
            }
            return Ok(
                if !unmapped.is_empty() && unmapped.iter().all(|&l| l == 0) {
                    Outcome {
                        verdict: Verdict::Proven,
                        seconds: 0.0,
                        problem: Some(
                            "the difference is constant 0 after yosys's optimization".into(),
                        ),
                        detail: None,
                        inputs: Vec::new(),
                    }
                } else {
                    Outcome {
                        verdict: Verdict::NoVerdict,
                        seconds: 0.0,
                        problem: None,
                        detail: Some(format!("output {output} is missing from the AIGER map")),
                        inputs: Vec::new(),
                    }
                },
            );
        };
        let cone = aig.cone(&[lit]);
        let d = dir.join(sub);
        std::fs::create_dir_all(&d)
            .map_err(|e| FormalError::Io(format!("creating {}", d.display()), e))?;
        let left = budget.saturating_sub(t0.elapsed().as_secs()).max(1);
        let run = crate::cnf::solve_cubes(
            &exe,
            &d,
            &cone,
            &[lit],
            &crate::cnf::cubes(None, 0),
            1,
            left,
        )
        .map_err(FormalError::Tool)?;
        Ok(Outcome {
            verdict: run.verdict,
            seconds: run.seconds,
            problem: Some(run.problem),
            detail: run.detail,
            inputs: run.inputs,
        })
    };
    let next = AtomicUsize::new(0);
    // A real counterexample settles the verdict: the lemmas not started by then are skipped.
    let stop = AtomicBool::new(false);
    let results: Mutex<Vec<Option<LemmaRun>>> =
        Mutex::new((0..goals.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, goals.len()) {
            s.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= goals.len() {
                    break;
                }
                let g = &goals[i];
                let r = solve(&g.output, &g.output).and_then(|o| {
                    if o.verdict == Verdict::Refuted && g.lemma.starts_with('B') {
                        let k = &g.lemma[1..];
                        let again = solve(&format!("bad_r{k}"), &format!("bad_r{k}"))?;
                        Ok((o, Some(again)))
                    } else {
                        Ok((o, None))
                    }
                });
                let real = match &r {
                    Ok((o, None)) => o.verdict == Verdict::Refuted && g.lemma != "C",
                    Ok((_, Some(again))) => again.verdict == Verdict::Refuted,
                    Err(_) => true,
                };
                if real {
                    stop.store(true, Ordering::Relaxed);
                }
                if let Ok(mut v) = results.lock() {
                    v[i] = Some(r);
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| FormalError::Tool("a lemma worker panicked".into()))?;

    let mut lemmas = Vec::new();
    let mut verdict = Verdict::Proven;
    let mut detail: Option<String> = None;
    let mut cex: Option<Vec<(String, String)>> = None;
    let mut seconds = t_yosys;
    let mut largest: Option<String> = None;
    for (g, r) in goals.iter().zip(results) {
        let Some(r) = r else {
            lemmas.push(Lemma {
                name: g.lemma.clone(),
                statement: g.statement.clone(),
                verdict: Verdict::NoVerdict,
                seconds: 0.0,
                problem: None,
                detail: Some("not run: another lemma was refuted".into()),
            });
            continue;
        };
        let (first, second) = r?;
        seconds += first.seconds + second.as_ref().map_or(0.0, |o| o.seconds);
        if g.lemma == "A" {
            largest = first.problem.clone();
        }
        let (v, d, problem, real_inputs) = match (&first.verdict, second) {
            (Verdict::Refuted, Some(o)) => match o.verdict {
                Verdict::Proven => (
                    Verdict::Proven,
                    Some(format!(
                        "refuted with a free scale value ({}); proven with the scale the reference computes for the block",
                        first.detail.clone().unwrap_or_default()
                    )),
                    o.problem,
                    None,
                ),
                Verdict::Refuted => (
                    Verdict::Refuted,
                    Some("refuted with the scale the reference computes for the block".into()),
                    o.problem,
                    Some(o.inputs),
                ),
                Verdict::NoVerdict => (
                    Verdict::NoVerdict,
                    Some(format!(
                        "refuted with a free scale value only (maybe one no block has); with the block's own scale: {}",
                        o.detail.unwrap_or_else(|| "no verdict".into())
                    )),
                    o.problem,
                    None,
                ),
            },
            (Verdict::Refuted, None) if g.lemma == "C" => (
                Verdict::NoVerdict,
                Some("refuted with free element flags (maybe flags no element raises)".into()),
                first.problem.clone(),
                None,
            ),
            (Verdict::Refuted, None) => (
                Verdict::Refuted,
                first.detail.clone(),
                first.problem.clone(),
                Some(first.inputs.clone()),
            ),
            (v, _) => (*v, first.detail.clone(), first.problem.clone(), None),
        };
        if v != Verdict::Proven && verdict != Verdict::Refuted {
            if v == Verdict::Refuted || verdict == Verdict::Proven {
                detail = Some(format!(
                    "lemma {} {}: {}",
                    g.lemma,
                    if v == Verdict::Refuted {
                        "refuted"
                    } else {
                        "has no verdict"
                    },
                    d.clone().unwrap_or_default()
                ));
            }
            if v == Verdict::Refuted {
                cex = real_inputs;
            }
            verdict = if v == Verdict::Refuted {
                Verdict::Refuted
            } else {
                Verdict::NoVerdict
            };
        }
        lemmas.push(Lemma {
            name: g.lemma.clone(),
            statement: g.statement.clone(),
            verdict: v,
            seconds: first.seconds,
            problem,
            detail: d,
        });
    }
    let compared: Vec<String> = rports
        .iter()
        .filter(|p| p.direction == Direction::Output)
        .map(|p| format!("{}[{}]", p.name, p.width))
        .collect();
    let statement = format!(
        "{gt} and {rt} give identical {} for every value of the free inputs {}{}; proven compositionally from {} lemmas on one miter, each solved on its own cone: (A) {}; (B0..B{}) {}; (C) {}. A cut core computes the original core when each cut input carries its wire's own driver value, so the lemmas together give every output equal on every input",
        compared.join(", "),
        free.join(", "),
        if assumptions.is_empty() {
            String::new()
        } else {
            format!(" satisfying {}", assumptions.join(" and "))
        },
        goals.len(),
        goals[0].statement,
        n - 1,
        "with the scale wire and the element flags wires of both cores cut to shared free values (or, where that fails, the scale cut fed the reference's scale of the block), r<k>_o and the driver of element k's flags wire (z<k>_flags / f<k>) equal on every input",
        goals[1].statement,
    );
    let inputs_names: Vec<String> = rports
        .iter()
        .filter(|p| p.direction == Direction::Input)
        .map(|p| p.name.clone())
        .collect();
    let counterexample = cex.map(|inputs| crate::prove::CexReport {
        inputs: inputs
            .into_iter()
            .filter(|(n, _)| inputs_names.contains(n))
            .collect(),
        trace: Vec::new(),
        cycle: None,
        replayed: Vec::new(),
        golden: Vec::new(),
        differs_from_golden: Vec::new(),
        vcd: None,
        yosys_vcd: None,
    });
    let solver = format!(
        "{}, CNF from yosys write_aiger, one cone per lemma",
        crate::cnf::cadical_version(&exe)
    );
    let mut report = ProofReport {
        verdict,
        statement,
        gold: gt.to_string(),
        gate: rt.to_string(),
        free_inputs: free,
        compared,
        assumptions,
        solver,
        seconds,
        problem: largest.map(|p| format!("lemma A: {p}")),
        detail,
        counterexample,
        work_dir: keep.then(|| dir.clone()),
        lemmas,
    };
    work.finish(&mut report)?;
    Ok(report)
}

/// A lemma's run: with a free scale, and (element lemmas refuted with a free scale) again
/// with the block's own scale.
type LemmaRun = Result<(Outcome, Option<Outcome>), FormalError>;

/// One lemma run.
struct Outcome {
    verdict: Verdict,
    seconds: f64,
    problem: Option<String>,
    detail: Option<String>,
    inputs: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "module top (\n    input wire [3:0] a_i,\n    output wire [3:0] r_o\n);\n  wire [3:0] w = a_i +\n                4'd1;\n  wire b = &w;\n  assign r_o = w ^ {3'd0, b};\nendmodule\n";

    #[test]
    fn a_cut_replaces_the_driver_only() {
        let c = cut_wire(V, "top", "w", "w_i").unwrap();
        assert!(c.contains("module top (\n    input wire [3:0] w_i,\n    input wire [3:0] a_i,"));
        assert!(c.contains(
            "  wire [3:0] w = w_i;\n  wire [3:0] w_uncut = a_i +\n                4'd1;\n"
        ));
        assert!(c.contains("assign r_o = w ^ {3'd0, b};"));
        let t = tap_wire(V, "top", "b", "b_o").unwrap();
        assert!(t.contains("    output wire b_o,\n"));
        assert!(t.contains("  assign b_o = b;\nendmodule"));
        assert!(cut_wire(V, "top", "nope", "x").is_err());
        assert!(cut_wire(V, "other", "w", "x").is_err());
    }
}
