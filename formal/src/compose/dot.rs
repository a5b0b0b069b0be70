//! The `dot` proof in three lemmas, cut at the lane terms and at the exact sum.
//!
//! The optimized core and the reference both form each lane's signed product and the exact
//! sum of the N products on the product grid (LSB `2^(qmin_x + qmin_y)`) as T-bit
//! two's-complement integers: the core's `l<i>_term` and adder-tree output (the signal its
//! `s_abs` is taken of), the reference's `term<i>` and `ref_sum` ([`crate::reference`], dot).
//! The proof of `core ≡ reference` is split there ([`prove_dot`]):
//!
//! * **Lemma A1 (the lane terms)**: for every input, each `l<i>_term` equals `term<i>`
//!   (exposed as output ports).
//! * **Lemma A2 (the sum)**: with the lane terms of both cut and driven by one free input per
//!   lane, the sums are equal.
//! * **Lemma B (the tail)**: with both sums cut and driven by one free T-bit input (the sums'
//!   drivers removed), the two cores give identical `r_o`, `flags_o`, `valid_o` for every
//!   input and every value of the sum: scales as exponent offsets, the addend, the specials and
//!   the rounding, for more sums than are reachable. With an addend, lemma B is split into
//!   CaDiCaL cubes on the core's alignment decision `{al_z_big, al_amt}` (which of the sum
//!   and z has the larger exponent, the clamped shift), read through a free input assumed
//!   equal to it: each cube fixes how the sum and z line up, which the cubes on z's exponent
//!   did not when the scales move the sum. With block scales and an addend lemma B is two
//!   lemmas cut at the rounding input (the MSB position, the P+1 bits, the sticky bit): B1,
//!   the rounding, and B2, the alignment (`prove_tail_split`). The reference adds the sum
//!   and z in a window placed relative to the two normalized operands, so its alignment is
//!   the difference of their MSB exponents, the core's `al_d`: each alignment cube fixes
//!   both.
//!
//! Together: `core(in) = tail_core(in, tree_core(terms_core(in))) = tail_ref(in,
//! tree_ref(terms_ref(in))) = ref(in)`. Every lemma is an ordinary combinational miter
//! ([`crate::prove::prove_pair`]); a cut is a textual rewrite of one wire's driver in each
//! module into input ports (checked: the wire must be declared exactly once with the
//! expected width), an exposure an added output port.

use crate::prove::{
    mode_assumptions, prove_pair, prove_pair_with, replay, Compare, PairSpec, ProofReport,
    ProveOptions,
};
use crate::reference::generate_reference;
use crate::FormalError;
use crate::Verdict;
use rtl::manifest::{Direction, Port, Role};
use rtl::{GenRequest, GeneratedCore};

/// Name of the exposed sum and of the cut input of [`expose`] and [`cut`].
pub const SUM_OUT: &str = "dot_sum_o";
/// The free input of [`cut`].
pub const SUM_IN: &str = "dot_sum_i";

/// The text of module `top` in `verilog`: (start, end) byte offsets of `module top (` …
/// `endmodule`.
fn module_span(verilog: &str, top: &str) -> Result<(usize, usize), FormalError> {
    let head = format!("module {top} (");
    let s = verilog.find(&head).ok_or_else(|| {
        FormalError::Unsupported(format!("cannot find module {top} in the Verilog text"))
    })?;
    let e = verilog[s..]
        .find("\nendmodule")
        .map(|i| s + i)
        .ok_or_else(|| FormalError::Unsupported(format!("module {top} has no endmodule")))?;
    Ok((s, e))
}

/// The core's sum wire: the `X` of `wire [T-1:0] s_abs = X[T-1] ? (… - X) : X;` (the
/// absolute value the optimized dot takes of its adder-tree output), with its width T.
pub fn core_sum_wire(verilog: &str, top: &str) -> Result<(String, u32), FormalError> {
    let (s, e) = module_span(verilog, top)?;
    let body = &verilog[s..e];
    let err = || {
        FormalError::Unsupported(format!(
            "cannot find the exact sum in {top} (the wire s_abs of the adder tree's output); prove this core without the cut"
        ))
    };
    let line = body
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("wire [") && l.contains("] s_abs = "))
        .ok_or_else(err)?;
    let hi: u32 = line["wire [".len()..]
        .split(':')
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(err)?;
    let rhs = line.split("s_abs = ").nth(1).ok_or_else(err)?;
    let name: String = rhs
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() || !rhs[name.len()..].starts_with(&format!("[{hi}] ?")) {
        return Err(err());
    }
    Ok((name, hi + 1))
}

/// Adds a port declaration (`decl`, e.g. `output wire [39:0] dot_sum_o`) to module `top`.
fn add_port(verilog: &str, top: &str, decl: &str) -> Result<String, FormalError> {
    let (s, _) = module_span(verilog, top)?;
    let close = verilog[s..]
        .find("\n);")
        .map(|i| s + i)
        .ok_or_else(|| FormalError::Unsupported(format!("module {top}: no port list end")))?;
    Ok(format!(
        "{},\n    {decl}{}",
        &verilog[..close],
        &verilog[close..]
    ))
}

/// `top` with the wire `name` (`width` bits) also driven out on the new port [`SUM_OUT`].
pub fn expose(verilog: &str, top: &str, name: &str, width: u32) -> Result<String, FormalError> {
    expose_as(verilog, top, name, width, SUM_OUT)
}

/// `top` with the wire or register `name` (`width` bits) also driven out on a new output
/// port `port`.
pub fn expose_as(
    verilog: &str,
    top: &str,
    name: &str,
    width: u32,
    port: &str,
) -> Result<String, FormalError> {
    let (s, e) = module_span(verilog, top)?;
    let name_only = name.split('[').next().unwrap_or(name);
    let declared = verilog[s..e].lines().any(|l| {
        let l = l.trim_start();
        (l.starts_with("reg ") || l.starts_with("wire "))
            && l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == name_only)
    });
    if !declared {
        return Err(FormalError::Unsupported(format!(
            "module {top} has no signal {name} to compare"
        )));
    }
    let range = if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    };
    let v = add_port(verilog, top, &format!("output wire {range}{port}"))?;
    let (_, e) = module_span(&v, top)?;
    Ok(format!("{}\n  assign {port} = {name};{}", &v[..e], &v[e..]))
}

/// `top` with the driver of the wire `name` (declared `wire [width-1:0] name = …;`) replaced
/// by the new input port [`SUM_IN`].
pub fn cut(verilog: &str, top: &str, name: &str, width: u32) -> Result<String, FormalError> {
    cut_as(verilog, top, name, width, &[(SUM_IN.to_string(), width)])
}

/// `top` with the driver of the wire `name` replaced by the concatenation of new input
/// ports `ports` (name, width; most significant first, widths summing to `width`).
pub fn cut_as(
    verilog: &str,
    top: &str,
    name: &str,
    width: u32,
    ports: &[(String, u32)],
) -> Result<String, FormalError> {
    let (s, e) = module_span(verilog, top)?;
    let decl = format!("wire [{}:0] {name} = ", width - 1);
    let hits: Vec<usize> = verilog[s..e]
        .match_indices(&decl)
        .map(|(i, _)| s + i)
        .collect();
    let [at] = hits.as_slice() else {
        return Err(FormalError::Unsupported(format!(
            "module {top}: expected one declaration `{decl}…;`, found {}",
            hits.len()
        )));
    };
    let rhs = at + decl.len();
    let semi = verilog[rhs..e]
        .find(';')
        .map(|i| rhs + i)
        .ok_or_else(|| FormalError::Unsupported(format!("module {top}: `{decl}` has no `;`")))?;
    let names: Vec<&str> = ports.iter().map(|(n, _)| n.as_str()).collect();
    let driver = if names.len() == 1 {
        names[0].to_string()
    } else {
        format!("{{{}}}", names.join(", "))
    };
    let mut v = format!("{}{driver}{}", &verilog[..rhs], &verilog[semi..]);
    for (n, w) in ports.iter().rev() {
        v = add_port(&v, top, &format!("input  wire [{}:0] {n}", w - 1))?;
    }
    Ok(v)
}

/// Ports of at most 64 bits covering a `width`-bit signal: `(name, width, lo)` from the least
/// significant, named `<base><j>_<suffix>`.
fn chunks(base: &str, suffix: &str, width: u32) -> Vec<(String, u32, u32)> {
    (0..width.div_ceil(64))
        .map(|j| {
            let lo = j * 64;
            (format!("{base}{j}_{suffix}"), (width - lo).min(64), lo)
        })
        .collect()
}

/// Ports for the miter: `Data` ports with indices from `*next` (so that both sides pair).
fn data_ports(list: &[(String, u32, u32)], dir: Direction, next: &mut u32) -> Vec<Port> {
    list.iter()
        .map(|(n, w, _)| {
            *next += 1;
            let mut p = Port::new(n.clone(), dir, *w, Role::Data);
            p.index = *next;
            p
        })
        .collect()
}

/// `top` with `name` (`width` bits) driven out on ports `<base><j>_o` (64-bit chunks).
fn expose_wide(
    verilog: &str,
    top: &str,
    name: &str,
    width: u32,
    base: &str,
    next: &mut u32,
) -> Result<(String, Vec<Port>), FormalError> {
    let list = chunks(base, "o", width);
    let mut v = verilog.to_string();
    for (p, w, lo) in &list {
        let sel = if list.len() == 1 {
            name.to_string()
        } else {
            format!("{name}[{}:{lo}]", lo + w - 1)
        };
        v = expose_as(&v, top, &sel, *w, p)?;
    }
    Ok((v, data_ports(&list, Direction::Output, next)))
}

/// `top` with the driver of `name` (`width` bits) replaced by ports `<base><j>_i`.
fn cut_wide(
    verilog: &str,
    top: &str,
    name: &str,
    width: u32,
    base: &str,
    next: &mut u32,
) -> Result<(String, Vec<Port>), FormalError> {
    let list = chunks(base, "i", width);
    let msb_first: Vec<(String, u32)> =
        list.iter().rev().map(|(n, w, _)| (n.clone(), *w)).collect();
    let v = cut_as(verilog, top, name, width, &msb_first)?;
    Ok((v, data_ports(&list, Direction::Input, next)))
}

/// The port of the exposed or cut sum.
pub fn sum_port(dir: Direction, width: u32) -> Port {
    let name = match dir {
        Direction::Input => SUM_IN,
        Direction::Output => SUM_OUT,
    };
    Port::new(name, dir, width, Role::Data)
}

/// `opts` with the kept directory (if any) moved to `<keep>/<sub>`.
fn sub_opts(opts: &ProveOptions, sub: &str) -> ProveOptions {
    ProveOptions {
        work_dir: opts.work_dir.as_ref().map(|d| d.join(sub)),
        ..opts.clone()
    }
}

/// The ports every lemma keeps: the inputs and `valid_o`.
fn base_ports(ports: &[Port]) -> Vec<Port> {
    ports
        .iter()
        .filter(|p| p.direction == Direction::Input || p.role == Role::ValidOut)
        .cloned()
        .collect()
}

/// Proves the combinational `dot` core `gold` (normally `rtl::generate(req)`; tests pass
/// mutants) equal to the reference of `req` by three lemmas, each run only when the ones
/// before are proven; one report per lemma, each statement naming its lemma:
///
/// * A1 (the lanes): every lane's signed product term of the core (`l<i>_term`) equals the
///   reference's `term<i>` (T-bit two's complement on the product grid);
/// * A2 (the sum): with every lane term cut and driven by one free input per lane, the core's
///   adder-tree output equals the reference's `ref_sum`;
/// * B (the tail): with both sums cut and driven by one free input, the outputs are equal.
///
/// A counterexample of A1 is replayed in Verilator against the golden model; those of A2
/// and B set free internal values (possibly unreachable): such a lemma is REFUTED only when
/// the flat miter of the uncut cores finds a real input (replayed), else NO VERDICT.
pub fn prove_dot(
    req: &GenRequest,
    gold: &GeneratedCore,
    opts: &ProveOptions,
) -> Result<Vec<ProofReport>, FormalError> {
    let reference = generate_reference(req)?;
    let fx = req.formats.x;
    let fy = req.formats.y.unwrap_or(fx);
    let n = req.options.dot.n;
    let (ws, lsb) = crate::reference::dot_sum_geometry(&fx, &fy, n);
    let (name, t) = core_sum_wire(&gold.verilog, &gold.top)?;
    if t != ws {
        return Err(FormalError::Unsupported(format!(
            "the core's sum {name} is {t} bits wide, the reference's {ws}: the cut needs the same grid"
        )));
    }
    let (gt, rt) = (&gold.top, &reference.top);
    let mut reports = Vec::new();
    let done = |r: &ProofReport| r.verdict != Verdict::Proven;

    // A1: the lane terms.
    let (mut gv, mut rv) = (gold.verilog.clone(), reference.verilog.clone());
    let (mut gp, mut rp) = (
        base_ports(&gold.manifest.ports),
        base_ports(&reference.manifest.ports),
    );
    let (mut ig, mut ir) = (0, 0);
    for i in 0..n {
        let (v, p) = expose_wide(
            &gv,
            gt,
            &format!("l{i}_term"),
            t,
            &format!("term{i}_"),
            &mut ig,
        )?;
        gv = v;
        gp.extend(p);
        let (v, p) = expose_wide(
            &rv,
            rt,
            &format!("term{i}"),
            t,
            &format!("term{i}_"),
            &mut ir,
        )?;
        rv = v;
        rp.extend(p);
    }
    let a1 = PairSpec {
        gold_verilog: gv,
        gold_top: gt.clone(),
        gold_ports: gp,
        gate_verilog: rv,
        gate_top: rt.clone(),
        gate_ports: rp,
        assumptions: mode_assumptions(req),
        split: None,
    };
    let mut r = prove_pair(&a1, &sub_opts(opts, "lemma_a1"))?;
    r.statement = format!(
        "Lemma A1 (the {n} lane terms): every lane's signed product l<i>_term of the core equals the reference's term<i> ({t}-bit two's complement, LSB 2^({lsb})): {}",
        r.statement
    );
    if opts.replay {
        if let Some(c) = &r.counterexample {
            let mut cx = replay(req, &[gold, &reference], &c.inputs, &opts.vcd)?;
            cx.yosys_vcd = c.yosys_vcd.clone();
            r.counterexample = Some(cx);
        }
    }
    reports.push(r);
    if done(&reports[0]) {
        return Ok(reports);
    }

    // A2: the sum of free lane terms.
    let (mut gv, mut rv) = (gold.verilog.clone(), reference.verilog.clone());
    let (mut gp, mut rp) = (
        base_ports(&gold.manifest.ports),
        base_ports(&reference.manifest.ports),
    );
    let (mut ig, mut ir) = (0, 0);
    for i in 0..n {
        let (v, p) = cut_wide(
            &gv,
            gt,
            &format!("l{i}_term"),
            t,
            &format!("term{i}_"),
            &mut ig,
        )?;
        gv = v;
        gp.extend(p);
        let (v, p) = cut_wide(
            &rv,
            rt,
            &format!("term{i}"),
            t,
            &format!("term{i}_"),
            &mut ir,
        )?;
        rv = v;
        rp.extend(p);
    }
    let (v, p) = expose_wide(&gv, gt, &name, t, "sum", &mut ig)?;
    gv = v;
    gp.extend(p);
    let (v, p) = expose_wide(&rv, rt, "ref_sum", t, "sum", &mut ir)?;
    rv = v;
    rp.extend(p);
    let a2 = PairSpec {
        gold_verilog: gv,
        gold_top: gt.clone(),
        gold_ports: gp,
        gate_verilog: rv,
        gate_top: rt.clone(),
        gate_ports: rp,
        assumptions: mode_assumptions(req),
        split: None,
    };
    let mut r = prove_pair(&a2, &sub_opts(opts, "lemma_a2"))?;
    r.statement = format!(
        "Lemma A2 (the exact sum): with every lane term of both cut and driven by one free {t}-bit input per lane, the core's adder-tree output {name} equals the reference's ref_sum: {}",
        r.statement
    );
    if r.verdict == Verdict::Refuted {
        confirm(
            req,
            gold,
            &reference,
            opts,
            "lemma_a2_confirm",
            "lane terms",
            &mut r,
        )?;
    }
    reports.push(r);
    if done(&reports[1]) {
        return Ok(reports);
    }

    // B: the tail; with an addend in two lemmas cut at the rounding input.
    let ri = if req.options.dot.addend {
        rounding_input(&gold.verilog, gt, &reference.verilog, rt)?
    } else {
        None
    };
    if let Some(ri) = &ri {
        reports.extend(prove_tail_split(req, gold, &reference, &name, t, ri, opts)?);
        return Ok(reports);
    }
    let mut ig = 0;
    let mut ir = 0;
    let (mut gv, mut gp) = cut_wide(&gold.verilog, gt, &name, t, "sum", &mut ig)?;
    let (mut rv, mut rp) = cut_wide(&reference.verilog, rt, "ref_sum", t, "sum", &mut ir)?;
    gp.extend(gold.manifest.ports.iter().cloned());
    rp.extend(reference.manifest.ports.iter().cloned());
    let mut assumptions = mode_assumptions(req);
    let mut cmp = Compare::default();
    let mut split = None;
    if req.options.dot.addend {
        // Cubes on the core's alignment of the sum and z: which is larger and the shift.
        let (v, p, note) = alignment_cube(&gv, gt, &rv, rt, ig.max(ir))?;
        gv = v.0;
        rv = v.1;
        gp.extend(p.0);
        rp.extend(p.1);
        assumptions.push(note.0);
        cmp.masks.push((CUBE_OUT.to_string(), 0));
        split = Some(note.1);
    }
    let b = PairSpec {
        gold_verilog: gv,
        gold_top: gt.clone(),
        gold_ports: gp,
        gate_verilog: rv,
        gate_top: rt.clone(),
        gate_ports: rp,
        assumptions,
        split,
    };
    let mut r = prove_pair_with(&b, &cmp, &sub_opts(opts, "lemma_b"))?;
    r.statement = format!(
        "Lemma B (the tail: scales, addend, specials, one rounding): with the core's {name} and the reference's ref_sum both cut and driven by one free {t}-bit input (every value, more than the reachable sums){}: {}{}",
        if req.options.dot.addend {
            format!("; split by the core's alignment of the sum and z: the free input {CUBE_IN} (unused by both cores) is assumed equal to the core's {{al_z_big, al_amt}} (which operand has the larger exponent, the clamped shift), so each input meets the assumption with exactly one value and the cubes on its top bits together cover every input")
        } else {
            String::new()
        },
        r.statement,
        if r.verdict == Verdict::Proven {
            format!("; with lemmas A1 and A2: {gt} equals {rt} on every input")
        } else {
            String::new()
        }
    );
    if r.verdict == Verdict::Refuted {
        confirm(
            req,
            gold,
            &reference,
            opts,
            "lemma_b_confirm",
            "sum",
            &mut r,
        )?;
    }
    reports.push(r);
    Ok(reports)
}

/// A lemma `r` refuted with free cut values (`what`: the lane terms or the sum; maybe values
/// no input reaches) is no verdict unless the uncut cores differ too: the flat miter of
/// `gold` and `reference` (a counterexample is found far faster than a proof) decides. Its
/// counterexample, replayed in Verilator against the golden model, makes `r` REFUTED on a
/// real input; otherwise `r` is NO VERDICT.
fn confirm(
    req: &GenRequest,
    gold: &GeneratedCore,
    reference: &GeneratedCore,
    opts: &ProveOptions,
    sub: &str,
    what: &str,
    r: &mut ProofReport,
) -> Result<(), FormalError> {
    let flat = PairSpec {
        gold_verilog: gold.verilog.clone(),
        gold_top: gold.top.clone(),
        gold_ports: gold.manifest.ports.clone(),
        gate_verilog: reference.verilog.clone(),
        gate_top: reference.top.clone(),
        gate_ports: reference.manifest.ports.clone(),
        assumptions: mode_assumptions(req),
        split: None,
    };
    let f = prove_pair(&flat, &sub_opts(opts, sub))?;
    let free = format!("refuted with a free {what} (maybe one no input reaches)");
    match f.verdict {
        Verdict::Refuted => {
            let mut cx = f.counterexample.clone();
            if opts.replay {
                if let Some(c) = &f.counterexample {
                    let mut rc = replay(req, &[gold, reference], &c.inputs, &opts.vcd)?;
                    rc.yosys_vcd = c.yosys_vcd.clone();
                    cx = Some(rc);
                }
            }
            r.counterexample = cx;
            r.detail = Some(format!(
                "{free}; confirmed on the uncut cores by the flat miter ({:.1} s): the counterexample is a real input",
                f.seconds
            ));
        }
        v => {
            r.verdict = Verdict::NoVerdict;
            if let Some(c) = &mut r.counterexample {
                c.differs_from_golden.clear();
            }
            r.detail = Some(format!(
                "{free}; the flat miter of the uncut cores: {} ({:.1} s){}",
                match v {
                    Verdict::Proven => "proven equal, so the lemma's counterexample is unreachable",
                    _ => "no verdict",
                },
                f.seconds,
                f.detail
                    .as_ref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// The core's alignment decision exposed for the case split of lemma B with an addend.
pub(crate) const CUBE_OUT: &str = "align_cube_o";
/// The free input the cubes fix, assumed equal to [`CUBE_OUT`].
pub(crate) const CUBE_IN: &str = "align_cube_i";

/// Verilog texts, ports and (assumption, split) of the case split of lemma B with an addend:
/// the core's `{al_z_big, al_amt}` (which of the sum and z has the larger exponent, the
/// clamped alignment shift) driven out on [`CUBE_OUT`] (not compared), a free input
/// [`CUBE_IN`] of both cores (unused inside) assumed equal to it, and the CaDiCaL cubes on
/// its top bits: `z_big` and the shift in steps of 8. Every input has exactly one value of
/// [`CUBE_IN`] that meets the assumption, so the cubes together cover every input.
#[allow(clippy::type_complexity)]
pub(crate) fn alignment_cube(
    gv: &str,
    gt: &str,
    rv: &str,
    rt: &str,
    index: u32,
) -> Result<
    (
        (String, String),
        (Vec<Port>, Vec<Port>),
        (String, (String, u32, u32)),
    ),
    FormalError,
> {
    let (s, e) = module_span(gv, gt)?;
    let amt_w = gv[s..e]
        .lines()
        .map(str::trim)
        .find_map(|l| {
            l.strip_prefix("wire [")
                .and_then(|r| r.split_once(":0] al_amt = "))
                .and_then(|(h, _)| h.parse::<u32>().ok())
        })
        .ok_or_else(|| {
            FormalError::Unsupported(format!(
                "cannot find the alignment shift al_amt in {gt}: lemma B with an addend splits on it"
            ))
        })?
        + 1;
    let w = amt_w + 1;
    let g = expose_as(gv, gt, "al_amt", amt_w, CUBE_OUT)?;
    let g = g.replace(
        &format!("output wire [{}:0] {CUBE_OUT}", amt_w - 1),
        &format!("output wire [{}:0] {CUBE_OUT}", w - 1),
    );
    let g = g.replace(
        &format!("assign {CUBE_OUT} = al_amt;"),
        &format!("assign {CUBE_OUT} = {{al_z_big, al_amt}};"),
    );
    let g = add_port(&g, gt, &format!("input  wire [{}:0] {CUBE_IN}", w - 1))?;
    let r = add_port(rv, rt, &format!("output wire [{}:0] {CUBE_OUT}", w - 1))?;
    let (_, e) = module_span(&r, rt)?;
    let r = format!("{}\n  assign {CUBE_OUT} = {w}'h0;{}", &r[..e], &r[e..]);
    let r = add_port(&r, rt, &format!("input  wire [{}:0] {CUBE_IN}", w - 1))?;
    let port = |n: &str, d: Direction, i: u32| {
        let mut p = Port::new(n, d, w, Role::Data);
        p.index = i;
        p
    };
    let ports = vec![
        port(CUBE_IN, Direction::Input, index + 1),
        port(CUBE_OUT, Direction::Output, index + 2),
    ];
    Ok((
        (g, r),
        (ports.clone(), ports),
        (
            format!("g_{CUBE_OUT} == {CUBE_IN}"),
            (CUBE_IN.to_string(), w - 1, 0),
        ),
    ))
}

/// The declared width of the wire `name` of module `top` (`wire [H:0] name = …;`, or
/// `wire name = …;` for one bit).
fn wire_width(verilog: &str, top: &str, name: &str) -> Result<u32, FormalError> {
    let (s, e) = module_span(verilog, top)?;
    for l in verilog[s..e].lines() {
        let l = l.trim_start();
        let l = l.strip_prefix("(* keep *) ").unwrap_or(l);
        if l.starts_with(&format!("wire {name} = ")) {
            return Ok(1);
        }
        if let Some((h, _)) = l
            .strip_prefix("wire [")
            .and_then(|r| r.split_once(&format!(":0] {name} = ")))
        {
            if let Ok(h) = h.parse::<u32>() {
                return Ok(h + 1);
            }
        }
    }
    Err(FormalError::Unsupported(format!(
        "module {top} has no wire {name} (declared with its driver)"
    )))
}

/// `top` with the driver of the wire `name` (declared once, with its driver) replaced by
/// `expr`.
fn drive(verilog: &str, top: &str, name: &str, expr: &str) -> Result<String, FormalError> {
    let w = wire_width(verilog, top, name)?;
    let (s, e) = module_span(verilog, top)?;
    let decl = if w == 1 {
        format!("wire {name} = ")
    } else {
        format!("wire [{}:0] {name} = ", w - 1)
    };
    let hits: Vec<usize> = verilog[s..e]
        .match_indices(&decl)
        .map(|(i, _)| s + i)
        .filter(|&i| {
            // a whole declaration, not the tail of a longer name
            i == 0 || !verilog[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        })
        .collect();
    let [at] = hits.as_slice() else {
        return Err(FormalError::Unsupported(format!(
            "module {top}: expected one declaration `{decl}…;`, found {}",
            hits.len()
        )));
    };
    let rhs = at + decl.len();
    let semi = verilog[rhs..e]
        .find(';')
        .map(|i| rhs + i)
        .ok_or_else(|| FormalError::Unsupported(format!("module {top}: `{decl}` has no `;`")))?;
    Ok(format!("{}{expr}{}", &verilog[..rhs], &verilog[semi..]))
}

/// `top` with `lines` added at the end of its body.
fn append(verilog: &str, top: &str, lines: &[String]) -> Result<String, FormalError> {
    let (_, e) = module_span(verilog, top)?;
    let mut add = String::new();
    for l in lines {
        add.push_str("\n  ");
        add.push_str(l);
    }
    Ok(format!("{}{add}{}", &verilog[..e], &verilog[e..]))
}

/// `top` with a new output port `port` (`width` bits) driven by `expr`, as a `Data` port
/// with index `index`.
fn output_expr(
    verilog: &str,
    top: &str,
    port: &str,
    width: u32,
    expr: &str,
    index: u32,
) -> Result<(String, Port), FormalError> {
    let range = if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    };
    let v = add_port(verilog, top, &format!("output wire {range}{port}"))?;
    let v = append(&v, top, &[format!("assign {port} = {expr};")])?;
    let mut p = Port::new(port, Direction::Output, width, Role::Data);
    p.index = index;
    Ok((v, p))
}

/// `top` with a new input port `port` (`width` bits), a `Data` port with index `index`.
fn input_port(
    verilog: &str,
    top: &str,
    port: &str,
    width: u32,
    index: u32,
) -> Result<(String, Port), FormalError> {
    let v = add_port(
        verilog,
        top,
        &format!("input  wire [{}:0] {port}", width - 1),
    )?;
    let mut p = Port::new(port, Direction::Input, width, Role::Data);
    p.index = index;
    Ok((v, p))
}

/// The wires of the rounding input in the core (the datapath of [`rtl`]'s `add_round`: the
/// normalized exponent, the P+1 window bits, the sticky bit, the zero flag and the sign of
/// the exact sum) and in the reference ([`crate::reference`], dot with an addend).
const CORE_RI: [&str; 5] = ["add_zero", "add_sign", "nrm_exp", "round_win", "round_st0"];
const REF_RI: [&str; 5] = ["c_zero", "f_msign", "c_pos", "c_win", "c_st"];

/// Shape of the rounding input shared by the core and the reference of a dot with an addend.
#[derive(Debug)]
struct RoundingInput {
    /// The core's NaN-result wire.
    nan: &'static str,
    /// Exponent of the reference window's LSB.
    lw: i32,
    /// Window width (positions 0 … w-1).
    w: u32,
    /// Bits of the position `c_pos`.
    pw: u32,
    /// P+1: the kept bits and the round bit.
    p1: u32,
    /// Bits of the core's exponent `nrm_exp` (two's complement).
    rw: u32,
}

impl RoundingInput {
    /// Bits of the cut `{zero, sign, pos, win, sticky}`.
    fn width(&self) -> u32 {
        3 + self.pw + self.p1
    }
}

/// The rounding input of `gold` and `reference`; `None` for a core with the subnormal-addend
/// pass-through `f_z_pass` (its output then also reads the aligned sum: lemma B stays one
/// proof). An error names a wire the cut needs and does not find.
fn rounding_input(
    gv: &str,
    gt: &str,
    rv: &str,
    rt: &str,
) -> Result<Option<RoundingInput>, FormalError> {
    let (s, e) = module_span(gv, gt)?;
    if gv[s..e].contains("f_z_pass") {
        return Ok(None);
    }
    for n in CORE_RI
        .iter()
        .chain(&["f_is_inf", "s_mag_zero", "z_is_zero"])
    {
        wire_width(gv, gt, n)?;
    }
    // NaN results: `f_is_nan`, or `f_any_nan` where no ∞ − ∞ can occur (the wire then
    // stands for both)
    let nan = ["f_is_nan", "f_any_nan"]
        .into_iter()
        .find(|n| wire_width(gv, gt, n).is_ok())
        .ok_or_else(|| {
            FormalError::Unsupported(format!("module {gt} has no wire f_is_nan or f_any_nan"))
        })?;
    for n in REF_RI.iter().chain(&["a_nan", "a_inf", "c_m"]) {
        wire_width(rv, rt, n)?;
    }
    let (s, e) = module_span(rv, rt)?;
    let mark = crate::reference::DOT_WINDOW_MARK;
    let lw: Option<i32> = rv[s..e]
        .find(mark)
        .and_then(|at| rv[s + at + mark.len()..].split(')').next())
        .and_then(|v| v.trim().parse().ok());
    let lw = lw.ok_or_else(|| {
        FormalError::Unsupported(format!("module {rt}: no `{mark}<lsb>)` comment"))
    })?;
    let ri = RoundingInput {
        nan,
        lw,
        w: wire_width(rv, rt, "c_m")?,
        pw: wire_width(rv, rt, "c_pos")?,
        p1: wire_width(rv, rt, "c_win")?,
        rw: wire_width(gv, gt, "nrm_exp")?,
    };
    let win = wire_width(gv, gt, "round_win")?;
    if win != ri.p1
        || ri.p1 < 2
        || ri.rw <= ri.pw
        || 1i64 << (ri.rw - 1) <= lw.unsigned_abs() as i64
    {
        return Err(FormalError::Unsupported(format!(
            "the rounding inputs do not fit: core round_win {win} bits, nrm_exp {} bits; reference c_win {} bits, c_pos {} bits, window LSB 2^({lw})",
            ri.rw, ri.p1, ri.pw
        )));
    }
    Ok(Some(ri))
}

/// The core's rounding input `{zero, sign, pos, win, sticky}` with `pos = nrm_exp - lw`, its
/// checks and the flag of a finite result: wires `dot_c_e`, `dot_c_p` (`nrm_exp - lw`, two
/// bits wider), `dot_c_x`, `dot_live` (neither NaN nor infinity), `dot_ok` (the rounding
/// input is one the exact sum can give: zero with a zero window and sticky bit, and never a
/// zero result of a nonzero sum with a zero addend; otherwise the window's MSB set, the
/// position inside the reference window and no bit placed below its LSB) and `dot_canon`.
fn core_checks(ri: &RoundingInput) -> Vec<String> {
    let (rw, p1, pw, w) = (ri.rw, ri.p1, ri.pw, ri.w);
    let r = rw + 2;
    let (op, lwa) = if ri.lw <= 0 {
        ("+", -ri.lw)
    } else {
        ("-", ri.lw)
    };
    vec![
        format!("wire [{}:0] dot_c_e = {{{{2{{nrm_exp[{}]}}}}, nrm_exp}};", r - 1, rw - 1),
        format!("wire [{}:0] dot_c_p = dot_c_e {op} {r}'d{lwa};", r - 1),
        format!(
            "wire [{}:0] dot_c_x = {{{{{p1}{{1'b0}}}}, round_win, round_st0}} << dot_c_p;",
            2 * p1
        ),
        format!("wire dot_live = ~{} & ~f_is_inf;", ri.nan),
        format!(
            "wire dot_ok = ~dot_live | (add_zero ? ((s_mag_zero | ~z_is_zero) & ~|round_win & ~round_st0) : (round_win[{}] & ~dot_c_p[{}] & (dot_c_p <= {r}'d{}) & ~|dot_c_x[{}:0]));",
            p1 - 1,
            r - 1,
            w - 1,
            p1 - 1
        ),
        format!(
            "wire [{}:0] dot_canon = {{dot_live & add_zero, (dot_live & ~add_zero) ? {{add_sign, dot_c_p[{}:0], round_win, round_st0}} : {}'d0}};",
            ri.width() - 1,
            pw - 1,
            ri.width() - 1
        ),
    ]
}

/// Lemma B of a dot with an addend in two lemmas, cut at the rounding input (the exact value
/// as its MSB exponent, the P+1 bits from the MSB down and the sticky OR of the rest):
///
/// * B1 (the rounding, run first: it is the cheaper): with the rounding inputs of both cut,
///   the core's driven by a free input `dot_cg_i`, the reference's by a free `dot_cr_i`,
///   assumed equal when the core's result is finite and the core's satisfying `dot_ok`, the
///   outputs are equal;
/// * B2 (the alignment): with the sums cut and driven by one free input (as lemma B), the
///   core's rounding input (`nrm_exp`, `round_win`, `round_st0`, `add_zero`, `add_sign`)
///   equals the reference's (`c_pos + lw`, `c_win`, `c_st`, `c_zero`, `f_msign`) whenever
///   the result is finite (the finite flags compared too), and the core's is one the exact
///   sum can give (`dot_ok`, checked = 1 on every input); split into cubes on the core's
///   alignment as lemma B.
///
/// Together with A1 and A2: the core's output is its rounding of its rounding input, which
/// B2 says is the reference's whenever the result is finite (and one B1 covers), and B1 says
/// both round alike (for a NaN or infinite result whatever the two rounding inputs).
fn prove_tail_split(
    req: &GenRequest,
    gold: &GeneratedCore,
    reference: &GeneratedCore,
    name: &str,
    t: u32,
    ri: &RoundingInput,
    opts: &ProveOptions,
) -> Result<Vec<ProofReport>, FormalError> {
    let (gt, rt) = (&gold.top, &reference.top);
    let cw = ri.width();
    let (p1, pw) = (ri.p1, ri.pw);
    let mut reports = Vec::new();

    // B1: the rounding.
    let (mut ig, mut ir) = (0, 0);
    let (mut gv, mut gp) = cut_wide(&gold.verilog, gt, name, t, "sum", &mut ig)?;
    let (mut rv, mut rp) = cut_wide(&reference.verilog, rt, "ref_sum", t, "sum", &mut ir)?;
    gp.extend(gold.manifest.ports.iter().cloned());
    rp.extend(reference.manifest.ports.iter().cloned());
    let base = ig.max(ir);
    let (cg, cr) = ("dot_cg_i", "dot_cr_i");
    let fields = |c: &str| {
        [
            format!("{c}[{}]", cw - 1),
            format!("{c}[{}]", cw - 2),
            format!("{c}[{}:{}]", cw - 3, p1 + 1),
            format!("{c}[{p1}:1]"),
            format!("{c}[0]"),
        ]
    };
    let f = fields(cg);
    let (op, lwa) = if ri.lw <= 0 {
        ("-", -ri.lw)
    } else {
        ("+", ri.lw)
    };
    let exp = format!("{{{}'d0, {}}} {op} {}'d{lwa}", ri.rw - pw, f[2], ri.rw);
    for (n, e) in CORE_RI.iter().zip([&f[0], &f[1], &exp, &f[3], &f[4]]) {
        gv = drive(&gv, gt, n, e)?;
    }
    for (n, e) in REF_RI.iter().zip(fields(cr)) {
        rv = drive(&rv, rt, n, &e)?;
    }
    for (port, i) in [(cg, base + 1), (cr, base + 2)] {
        let (v, p) = input_port(&gv, gt, port, cw, i)?;
        gv = v;
        gp.push(p);
        let (v, p) = input_port(&rv, rt, port, cw, i)?;
        rv = v;
        rp.push(p);
    }
    gv = append(&gv, gt, &core_checks(ri))?;
    for (port, expr, i) in [
        ("dot_live_o", "dot_live", base + 3),
        ("dot_ok_o", "dot_ok", base + 4),
    ] {
        let (v, p) = output_expr(&gv, gt, port, 1, expr, i)?;
        gv = v;
        gp.push(p);
        // the reference's counterpart: never compared
        let (v, p) = output_expr(&rv, rt, port, 1, "1'b0", i)?;
        rv = v;
        rp.push(p);
    }
    let mut assumptions = mode_assumptions(req);
    assumptions.push(format!("g_dot_ok_o && (!g_dot_live_o || ({cg} == {cr}))"));
    let cmp = Compare {
        masks: vec![("dot_live_o".to_string(), 0), ("dot_ok_o".to_string(), 0)],
        ..Compare::default()
    };
    let b2 = PairSpec {
        gold_verilog: gv,
        gold_top: gt.clone(),
        gold_ports: gp,
        gate_verilog: rv,
        gate_top: rt.clone(),
        gate_ports: rp,
        assumptions,
        split: Some((cg.to_string(), cw - 3, p1 + 1)),
    };
    let mut r = prove_pair_with(&b2, &cmp, &sub_opts(opts, "lemma_b1"))?;
    r.statement = format!(
        "Lemma B1 (the rounding): with the rounding inputs of both cut, the core's driven by the free input {cg}, the reference's by the free input {cr} ({{zero, sign, position, {p1} bits, sticky}}; the reference places them back in its window and rounds with its plain rounder), assumed equal when the core's result is neither NaN nor infinite and the core's one an exact sum gives (dot_ok, checked in lemma B2), and the sum still free: {}",
        r.statement
    );
    if r.verdict == Verdict::Refuted {
        confirm(
            req,
            gold,
            reference,
            opts,
            "lemma_b1_confirm",
            "rounding input",
            &mut r,
        )?;
    }
    let stop = r.verdict != Verdict::Proven;
    reports.push(r);
    if stop {
        return Ok(reports);
    }

    // B2: the alignment.
    let (mut ig, mut ir) = (0, 0);
    let (gv, mut gp) = cut_wide(&gold.verilog, gt, name, t, "sum", &mut ig)?;
    let (rv, mut rp) = cut_wide(&reference.verilog, rt, "ref_sum", t, "sum", &mut ir)?;
    gp.extend(gold.manifest.ports.iter().cloned());
    rp.extend(reference.manifest.ports.iter().cloned());
    let base = ig.max(ir);
    let (v, p, note) = alignment_cube(&gv, gt, &rv, rt, base)?;
    let (mut gv, mut rv) = v;
    gp.extend(p.0);
    rp.extend(p.1);
    let mut assumptions = mode_assumptions(req);
    assumptions.push(note.0);
    gv = append(&gv, gt, &core_checks(ri))?;
    rv = append(
        &rv,
        rt,
        &[
            "wire dot_live = ~a_nan & ~a_inf;".to_string(),
            format!(
                "wire [{}:0] dot_canon = {{dot_live & c_zero, (dot_live & ~c_zero) ? {{f_msign, c_pos, c_win, c_st}} : {}'d0}};",
                cw - 1,
                cw - 1
            ),
        ],
    )?;
    for (port, width, expr, i) in [
        ("dot_live_o", 1, "dot_live", base + 3),
        ("dot_canon_o", cw, "dot_canon", base + 4),
    ] {
        let (v, p) = output_expr(&gv, gt, port, width, expr, i)?;
        gv = v;
        gp.push(p);
        let (v, p) = output_expr(&rv, rt, port, width, expr, i)?;
        rv = v;
        rp.push(p);
    }
    let (v, p) = output_expr(&gv, gt, "dot_bad_o", 1, "~dot_ok", base + 5)?;
    gv = v;
    gp.push(p);
    let cmp = Compare {
        masks: vec![
            (CUBE_OUT.to_string(), 0),
            ("r_o".to_string(), 0),
            ("flags_o".to_string(), 0),
        ],
        zero: vec![("dot_bad_o".to_string(), 1)],
        slang_top: None,
    };
    let b1 = PairSpec {
        gold_verilog: gv,
        gold_top: gt.clone(),
        gold_ports: gp,
        gate_verilog: rv,
        gate_top: rt.clone(),
        gate_ports: rp,
        assumptions,
        split: Some(note.1),
    };
    let mut r = prove_pair_with(&b1, &cmp, &sub_opts(opts, "lemma_b2"))?;
    r.statement = format!(
        "Lemma B2 (the alignment: the scaled sum and z to the rounding input): with the core's {name} and the reference's ref_sum both cut and driven by one free {t}-bit input, the core's rounding input {{zero, sign, exponent - ({lw}), {p1} bits from the MSB, sticky}} (add_zero, add_sign, nrm_exp, round_win, round_st0) equals the reference's (c_zero, f_msign, c_pos, c_win, c_st: the exact value's MSB position, its {p1} bits from the MSB down and the OR of the rest, from the reference's window placed relative to the normalized sum and z) whenever the result is neither NaN nor infinite (dot_live_o, compared), and the core's is one an exact sum gives (dot_bad_o = 0: a zero has no window bits and is never a nonzero sum plus a zero z; a nonzero value has its MSB set, lies in the reference's {w}-bit window and has no bit below its LSB); split by the core's alignment of the sum and z as lemma B (the free input {CUBE_IN} assumed equal to the core's {{al_z_big, al_amt}}): {}{}",
        r.statement,
        if r.verdict == Verdict::Proven {
            format!("; with lemmas A1, A2 and B1: {gt} equals {rt} on every input")
        } else {
            String::new()
        },
        lw = ri.lw,
        w = ri.w,
    );
    if r.verdict == Verdict::Refuted {
        confirm(
            req,
            gold,
            reference,
            opts,
            "lemma_b2_confirm",
            "sum",
            &mut r,
        )?;
    }
    reports.push(r);
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "module m (\n    input  wire [1:0] a_i,\n    output wire [2:0] r_o\n);\n  wire [2:0] s1_0 = a_i + 3'd1;\n  wire [2:0] s_abs = s1_0[2] ? (3'h0 - s1_0) : s1_0;\n  assign r_o = s_abs;\nendmodule\n";

    #[test]
    fn the_sum_is_found_exposed_and_cut() {
        assert_eq!(core_sum_wire(V, "m").unwrap(), ("s1_0".to_string(), 3));
        let e = expose(V, "m", "s1_0", 3).unwrap();
        assert!(e.contains("output wire [2:0] r_o,\n    output wire [2:0] dot_sum_o\n);"));
        assert!(e.contains("assign dot_sum_o = s1_0;\nendmodule"));
        let c = cut(V, "m", "s1_0", 3).unwrap();
        assert!(c.contains("wire [2:0] s1_0 = dot_sum_i;"));
        assert!(c.contains("input  wire [2:0] dot_sum_i\n);"));
        assert!(cut(V, "m", "s_x", 3).is_err());
        assert!(core_sum_wire(V, "n").is_err());
    }

    #[test]
    fn a_wire_is_driven_anew_and_checks_are_appended() {
        let v = V.replace("wire [2:0] s1_0", "(* keep *) wire [2:0] s1_0");
        let v = v.replace(
            "  assign r_o",
            "  wire ks1_0 = 1'b0;\n  wire z = a_i[0];\n  assign r_o",
        );
        assert_eq!(wire_width(&v, "m", "s1_0").unwrap(), 3);
        assert_eq!(wire_width(&v, "m", "z").unwrap(), 1);
        assert!(wire_width(&v, "m", "s1").is_err());
        let d = drive(&v, "m", "s1_0", "{1'b0, c_i}").unwrap();
        assert!(
            d.contains("(* keep *) wire [2:0] s1_0 = {1'b0, c_i};"),
            "{d}"
        );
        let d = drive(&d, "m", "z", "1'b1").unwrap();
        assert!(d.contains("wire z = 1'b1;") && d.contains("wire ks1_0 = 1'b0;"));
        let (a, p) = output_expr(&d, "m", "ok_o", 1, "~z", 7).unwrap();
        assert!(a.contains("output wire ok_o\n);") && a.contains("assign ok_o = ~z;\nendmodule"));
        assert_eq!((p.index, p.width), (7, 1));
        let (a, _) = input_port(&a, "m", "c_i", 2, 8).unwrap();
        assert!(a.contains("input  wire [1:0] c_i\n);"));
        // no addend datapath: the split is refused with the missing wire named
        let e = rounding_input(V, "m", V, "m").unwrap_err().to_string();
        assert!(e.contains("add_zero"), "{e}");
        let zp = V.replace("assign r_o", "wire f_z_pass = 1'b0;\n  assign r_o");
        assert!(rounding_input(&zp, "m", V, "m").unwrap().is_none());
    }
}
