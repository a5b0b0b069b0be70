//! The `dot` proof in two lemmas, cut at the exact sum of the products.
//!
//! The optimized core and the reference both form the exact sum of the N products on the
//! product grid (LSB `2^(qmin_x + qmin_y)`) as a T-bit two's-complement integer: the core's
//! adder tree output (the signal its `s_abs` is taken of), the reference's `ref_sum`
//! ([`crate::reference`], dot). The proof of `core ≡ reference` is split there:
//!
//! * **Lemma A (the integer sum)**: for every input, the core's sum equals the reference's
//!   `ref_sum` (a miter whose only compared output is the sum, exposed as a port `dot_sum_o`).
//! * **Lemma B (the tail)**: with both sums cut and driven by one free T-bit input
//!   `dot_sum_i` (the sums' drivers removed), the two cores give identical `r_o`, `flags_o`,
//!   `valid_o` for every input and every value of `dot_sum_i`: scales as exponent offsets, the
//!   addend, the specials and the rounding are all covered here, for more sums than are
//!   reachable.
//!
//! Together: `core(in) = tail_core(in, sum_core(in)) = tail_core(in, ref_sum(in)) =
//! tail_ref(in, ref_sum(in)) = ref(in)`. Both lemmas are ordinary combinational miters
//! ([`crate::prove::prove_pair`]); the cut is a textual rewrite of one wire's driver in each
//! module (checked: the wire must exist, with the expected width, exactly once).

use crate::FormalError;
use rtl::manifest::{Direction, Port, Role};

/// Name of the exposed sum (lemma A) and of the cut input (lemma B).
pub const SUM_OUT: &str = "dot_sum_o";
/// The free input that drives both sums in lemma B.
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
    let v = add_port(
        verilog,
        top,
        &format!("output wire [{}:0] {SUM_OUT}", width - 1),
    )?;
    let (_, e) = module_span(&v, top)?;
    Ok(format!(
        "{}\n  assign {SUM_OUT} = {name};{}",
        &v[..e],
        &v[e..]
    ))
}

/// `top` with the driver of the wire `name` (declared `wire [width-1:0] name = …;`) replaced
/// by the new input port [`SUM_IN`].
pub fn cut(verilog: &str, top: &str, name: &str, width: u32) -> Result<String, FormalError> {
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
    let v = format!("{}{SUM_IN}{}", &verilog[..rhs], &verilog[semi..]);
    add_port(&v, top, &format!("input  wire [{}:0] {SUM_IN}", width - 1))
}

/// The port of the exposed or cut sum.
pub fn sum_port(dir: Direction, width: u32) -> Port {
    let name = match dir {
        Direction::Input => SUM_IN,
        Direction::Output => SUM_OUT,
    };
    Port::new(name, dir, width, Role::Data)
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

use crate::prove::{mode_assumptions, prove_pair, replay, PairSpec, ProofReport, ProveOptions};
use crate::reference::generate_reference;
use crate::Verdict;
use rtl::{GenRequest, GeneratedCore};

/// `opts` with the kept directory (if any) moved to `<keep>/<sub>`.
fn sub_opts(opts: &ProveOptions, sub: &str) -> ProveOptions {
    ProveOptions {
        work_dir: opts.work_dir.as_ref().map(|d| d.join(sub)),
        ..opts.clone()
    }
}

/// Proves the combinational `dot` core `gold` (normally `rtl::generate(req)`; tests pass
/// mutants) equal to the reference of `req` by lemma A, then (when A is proven) lemma B: one
/// report per lemma, each statement naming its lemma. A counterexample of lemma A is replayed
/// in Verilator against the golden model; one of lemma B names a value of the free sum, which
/// may be unreachable, and is reported as found.
pub fn prove_dot(
    req: &GenRequest,
    gold: &GeneratedCore,
    opts: &ProveOptions,
) -> Result<Vec<ProofReport>, FormalError> {
    let reference = generate_reference(req)?;
    let fx = req.formats.x;
    let fy = req.formats.y.unwrap_or(fx);
    let (ws, lsb) = crate::reference::dot_sum_geometry(&fx, &fy, req.options.dot.n);
    let (name, t) = core_sum_wire(&gold.verilog, &gold.top)?;
    if t != ws {
        return Err(FormalError::Unsupported(format!(
            "the core's sum {name} is {t} bits wide, the reference's {ws}: the cut needs the same grid"
        )));
    }
    let inputs = |ports: &[Port]| -> Vec<Port> {
        ports
            .iter()
            .filter(|p| p.direction == Direction::Input || p.role == Role::ValidOut)
            .cloned()
            .collect()
    };
    let mut a_gold = inputs(&gold.manifest.ports);
    a_gold.push(sum_port(Direction::Output, t));
    let mut a_ref = inputs(&reference.manifest.ports);
    a_ref.push(sum_port(Direction::Output, t));
    let a = PairSpec {
        gold_verilog: expose(&gold.verilog, &gold.top, &name, t)?,
        gold_top: gold.top.clone(),
        gold_ports: a_gold,
        gate_verilog: expose(&reference.verilog, &reference.top, "ref_sum", t)?,
        gate_top: reference.top.clone(),
        gate_ports: a_ref,
        assumptions: mode_assumptions(req),
        split: None,
    };
    let mut ra = prove_pair(&a, &sub_opts(opts, "lemma_a"))?;
    ra.statement = format!(
        "Lemma A (the exact sum of the products): the core's adder-tree output {name} equals the reference's ref_sum ({t}-bit two's complement, LSB 2^({lsb})): {}",
        ra.statement
    );
    if opts.replay {
        if let Some(c) = &ra.counterexample {
            let mut r = replay(req, &[gold, &reference], &c.inputs, &opts.vcd)?;
            r.yosys_vcd = c.yosys_vcd.clone();
            ra.counterexample = Some(r);
        }
    }
    if ra.verdict != Verdict::Proven {
        return Ok(vec![ra]);
    }
    let mut b_gold = gold.manifest.ports.clone();
    b_gold.push(sum_port(Direction::Input, t));
    let mut b_ref = reference.manifest.ports.clone();
    b_ref.push(sum_port(Direction::Input, t));
    let b = PairSpec {
        gold_verilog: cut(&gold.verilog, &gold.top, &name, t)?,
        gold_top: gold.top.clone(),
        gold_ports: b_gold,
        gate_verilog: cut(&reference.verilog, &reference.top, "ref_sum", t)?,
        gate_top: reference.top.clone(),
        gate_ports: b_ref,
        assumptions: mode_assumptions(req),
        split: req.options.dot.addend.then(|| ("z_i".to_string(), 30, 23)),
    };
    let mut rb = prove_pair(&b, &sub_opts(opts, "lemma_b"))?;
    rb.statement = format!(
        "Lemma B (the tail: scales, addend, specials, one rounding): with the core's {name} and the reference's ref_sum both cut and driven by the one free input {SUM_IN}[{t}] (every {t}-bit value, more than the reachable sums): {}{}",
        rb.statement,
        if rb.verdict == Verdict::Proven {
            format!("; with lemma A: {} equals {} on every input", gold.top, reference.top)
        } else {
            String::new()
        }
    );
    if let Some(c) = &mut rb.counterexample {
        c.differs_from_golden.clear();
        rb.detail = Some(format!(
            "{}the counterexample sets the free sum {SUM_IN}; it may be a sum no input reaches (not replayed)",
            rb.detail.as_ref().map(|d| format!("{d}; ")).unwrap_or_default()
        ));
    }
    Ok(vec![ra, rb])
}
