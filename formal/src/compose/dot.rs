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
//!   did not when the scales move the sum.
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

    // B: the tail.
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
const CUBE_OUT: &str = "dot_cube_o";
/// The free input the cubes fix, assumed equal to [`CUBE_OUT`].
const CUBE_IN: &str = "dot_cube_i";

/// Verilog texts, ports and (assumption, split) of the case split of lemma B with an addend:
/// the core's `{al_z_big, al_amt}` (which of the sum and z has the larger exponent, the
/// clamped alignment shift) driven out on [`CUBE_OUT`] (not compared), a free input
/// [`CUBE_IN`] of both cores (unused inside) assumed equal to it, and the CaDiCaL cubes on
/// its top bits: `z_big` and the shift in steps of 8. Every input has exactly one value of
/// [`CUBE_IN`] that meets the assumption, so the cubes together cover every input.
#[allow(clippy::type_complexity)]
fn alignment_cube(
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
}
