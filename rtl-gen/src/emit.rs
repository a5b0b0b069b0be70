//! From a [`ModuleBuilder`] to Verilog text: [`ModuleBuilder::finish`] runs the pipeliner
//! ([`crate::pipeline`]: dead-logic removal, depth estimate, stage assignment, register
//! insertion) and [`Netlist::emit`] prints the deterministic Verilog-2005 module.
//!
//! The valid handshake is a chain of `N` registers (`valid_q1 … valid_qN`) cleared by the
//! synchronous active-low reset `rst_ni`; data registers have no reset. A pipelined core
//! therefore computes exactly the combinational function, `N` cycles later.

use crate::ast::{mask, BinOp, Expr, Item, ModuleBuilder, Node, SigId, SigKind, Signal};
use crate::pipeline;
use std::fmt::Write as _;

/// A port of the finished module, in declaration order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDecl {
    /// Name.
    pub name: String,
    /// Input (true) or output.
    pub input: bool,
    /// Width.
    pub width: u32,
}

/// A finished, pipelined module ready to print.
#[derive(Clone, Debug)]
pub struct Netlist {
    /// Module name.
    pub name: String,
    /// Header comment lines (without `//`).
    pub header: Vec<String>,
    /// Pipeline stages.
    pub stages: u32,
    /// Ports in declaration order (control ports included).
    pub ports: Vec<PortDecl>,
    sigs: Vec<Signal>,
    /// (stage, item) in print order within the stage.
    items: Vec<(u32, Item)>,
    /// Registers entering each stage (index = stage).
    regs: Vec<Vec<SigId>>,
    /// Unused bits to sink: (signal, mask of unused bits).
    unused: Vec<(SigId, u128)>,
    /// Total depth estimate and per-stage budget (for the header).
    pub depth: u32,
    /// Depth budget per stage.
    pub budget: u32,
}

impl ModuleBuilder {
    /// Checks, removes dead logic, places `stages` pipeline registers (the passes of
    /// [`crate::pipeline`]) and returns the netlist. With `stages > 0` the ports `clk_i`,
    /// `rst_ni` and `valid_i` are added in front and `valid_o` at the end; with
    /// `stages == 0`, `valid_i`/`valid_o` are a pass-through.
    pub fn finish(self, name: &str, header: Vec<String>, stages: u32) -> Result<Netlist, String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        for s in &self.sigs {
            if let Some(m) = pipeline::def_expr(s).and_then(|e| e.error()) {
                return Err(format!("{}: {m}", s.name));
            }
        }
        let mut sigs = self.sigs;
        let live = pipeline::live_signals(&sigs);
        let end = pipeline::depths(&sigs);
        let plan = pipeline::assign_stages(&sigs, &live, &end, stages);
        let regs = pipeline::insert_registers(&mut sigs, &live, &plan.stage, stages);
        let items = pipeline::stage_items(self.items, &live, &plan.stage);
        let unused = pipeline::unused_bits(&sigs, &live);
        // Ports: control ports around the data ports.
        let port = |name: &str, input: bool, width: u32| PortDecl {
            name: name.into(),
            input,
            width,
        };
        let mut ports = Vec::new();
        if stages > 0 {
            ports.push(port("clk_i", true, 1));
            ports.push(port("rst_ni", true, 1));
        }
        ports.push(port("valid_i", true, 1));
        for &p in &self.ports {
            let s = &sigs[p];
            ports.push(port(&s.name, matches!(s.kind, SigKind::Input), s.width));
        }
        ports.push(port("valid_o", false, 1));
        Ok(Netlist {
            name: name.to_string(),
            header,
            stages,
            ports,
            sigs,
            items,
            regs,
            unused,
            depth: plan.depth,
            budget: plan.budget,
        })
    }
}

/// Longest generated line of logic (columns) before [`Netlist`] wraps an expression.
pub const LINE: usize = 100;

fn bin_op(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::And => "&",
        BinOp::Or => "|",
        BinOp::Xor => "^",
    }
}

/// The operands of a chain of `op` (`+`/`-` chains along their left spine, as Verilog
/// associates them; `&`, `|`, `^` on both sides), each with the operator before it.
fn flatten<'a>(e: &'a Expr, op: BinOp, out: &mut Vec<(Option<BinOp>, &'a Expr)>) {
    let additive = |o: BinOp| matches!(o, BinOp::Add | BinOp::Sub);
    match &e.node {
        Node::Bin(o, a, b) if additive(op) && additive(*o) => {
            flatten(a, op, out);
            out.push((Some(*o), b));
        }
        Node::Bin(o, a, b) if *o == op && !additive(op) => {
            flatten(a, op, out);
            let n = out.len();
            flatten(b, op, out);
            out[n].0 = Some(op);
        }
        _ => out.push((None, e)),
    }
}

fn range(w: u32) -> String {
    if w == 1 {
        String::new()
    } else {
        format!("[{}:0] ", w - 1)
    }
}

/// A Verilog constant literal.
pub fn lit(v: u128, w: u32) -> String {
    if w == 1 {
        format!("1'b{v}")
    } else if w <= 16 {
        format!("{w}'d{v}")
    } else {
        format!("{w}'h{v:x}")
    }
}

impl Netlist {
    fn name_of(&self, id: SigId) -> &str {
        &self.sigs[id].name
    }

    fn atom(&self, e: &Expr) -> String {
        let s = self.expr(e);
        match &e.node {
            Node::Const(..) | Node::Sig(_) | Node::Slice(..) | Node::Concat(_) | Node::Repl(..) => {
                s
            }
            Node::Not(a) | Node::Red(_, a)
                if matches!(a.node, Node::Sig(_) | Node::Slice(..) | Node::Concat(_)) =>
            {
                s
            }
            _ => format!("({s})"),
        }
    }

    /// Prints an expression.
    pub fn expr(&self, e: &Expr) -> String {
        match &e.node {
            Node::Const(_, Some(n)) => n.to_string(),
            Node::Const(v, None) => lit(*v, e.width),
            Node::Sig(s) => self.name_of(*s).to_string(),
            Node::Slice(s, h, l) => {
                let sw = self.sigs[*s].width;
                if *h == sw - 1 && *l == 0 {
                    self.name_of(*s).to_string()
                } else if h == l {
                    format!("{}[{h}]", self.name_of(*s))
                } else {
                    format!("{}[{h}:{l}]", self.name_of(*s))
                }
            }
            Node::Concat(v) => {
                let parts: Vec<String> = v.iter().map(|x| self.expr(x)).collect();
                format!("{{{}}}", parts.join(", "))
            }
            Node::Repl(k, a) => format!("{{{k}{{{}}}}}", self.expr(a)),
            Node::Not(a) => format!("~{}", self.atom(a)),
            Node::Red(op, a) => {
                let o = match op {
                    crate::ast::RedOp::And => "&",
                    crate::ast::RedOp::Or => "|",
                };
                format!("{o}{}", self.atom(a))
            }
            Node::Bin(op, a, b) => {
                let o = match op {
                    crate::ast::BinOp::Add => "+",
                    crate::ast::BinOp::Sub => "-",
                    crate::ast::BinOp::And => "&",
                    crate::ast::BinOp::Or => "|",
                    crate::ast::BinOp::Xor => "^",
                };
                // Chains of the same associative operator print without extra parentheses.
                let side = |x: &Expr| match &x.node {
                    Node::Bin(o2, _, _)
                        if o2 == op
                            && matches!(
                                op,
                                crate::ast::BinOp::And
                                    | crate::ast::BinOp::Or
                                    | crate::ast::BinOp::Xor
                            ) =>
                    {
                        self.expr(x)
                    }
                    _ => self.atom(x),
                };
                format!("{} {o} {}", side(a), side(b))
            }
            Node::Cmp(op, a, b) => {
                let o = match op {
                    crate::ast::CmpOp::Eq => "==",
                    crate::ast::CmpOp::Ne => "!=",
                    crate::ast::CmpOp::Lt => "<",
                    crate::ast::CmpOp::Le => "<=",
                    crate::ast::CmpOp::Gt => ">",
                    crate::ast::CmpOp::Ge => ">=",
                };
                format!("{} {o} {}", self.atom(a), self.atom(b))
            }
            Node::Mux(s, a, b) => {
                format!("{} ? {} : {}", self.atom(s), self.atom(a), self.atom(b))
            }
            Node::Shift(d, a, n) => {
                let o = match d {
                    crate::ast::ShiftDir::Left => "<<",
                    crate::ast::ShiftDir::Right => ">>",
                };
                format!("{} {o} {}", self.atom(a), self.atom(n))
            }
            Node::Case(..) => "/* case */".into(),
            Node::Error(m) => format!("/* error: {m} */"),
        }
    }

    /// A definition right-hand side starting at column `col`: one line when it fits in
    /// [`LINE`] columns, else wrapped at its top-level operators (a chain of muxes one arm
    /// per line, a chain of `+`/`-` or of one bitwise operator one operand per line, a
    /// concatenation one part per line), recursively inside parentheses.
    fn rhs(&self, e: &Expr, col: usize) -> String {
        let one = self.expr(e);
        // A chain of two or more muxes reads as a decision list: always one arm per line.
        let mux_chain = matches!(&e.node, Node::Mux(_, _, b) if matches!(b.node, Node::Mux(..)));
        if col + one.len() < LINE && !mux_chain {
            return one;
        }
        let pad = " ".repeat(col);
        match &e.node {
            Node::Mux(s, a, b) if !mux_chain => format!(
                "{}\n{pad}? {}\n{pad}: {}",
                self.atom_wrapped(s, col),
                self.atom_wrapped(a, col + 2),
                self.atom_wrapped(b, col + 2)
            ),
            Node::Mux(..) => {
                let mut out = String::new();
                let mut cur = e;
                while let Node::Mux(s, a, b) = &cur.node {
                    let head = format!("{} ? ", self.atom(s));
                    let arm = self.atom_wrapped(a, col + head.len());
                    let _ = write!(out, "{head}{arm} :\n{pad}");
                    cur = b;
                }
                out.push_str(&self.atom_wrapped(cur, col));
                out
            }
            Node::Bin(op, _, _) => {
                let mut terms: Vec<(Option<BinOp>, &Expr)> = Vec::new();
                flatten(e, *op, &mut terms);
                // Short operands share a line (greedy fill); an operand that wraps itself
                // starts a line of its own.
                let mut out = String::new();
                let mut line_len = col;
                for (i, (o, x)) in terms.iter().enumerate() {
                    let op = match o {
                        Some(o) if i > 0 => format!("{} ", bin_op(*o)),
                        _ => String::new(),
                    };
                    let flat = self.atom(x);
                    if i > 0 && line_len + 1 + op.len() + flat.len() < LINE && !flat.contains('\n')
                    {
                        let _ = write!(out, " {op}{flat}");
                        line_len += 1 + op.len() + flat.len();
                        continue;
                    }
                    if i > 0 {
                        let _ = write!(out, "\n{pad}");
                    }
                    let t = self.atom_wrapped(x, col + op.len());
                    line_len = col + op.len() + t.rsplit('\n').next().map_or(0, str::len);
                    if t.contains('\n') {
                        line_len = LINE; // what follows starts a new line
                    }
                    let _ = write!(out, "{op}{t}");
                }
                out
            }
            Node::Concat(parts) => {
                let body: Vec<String> = parts.iter().map(|x| self.rhs(x, col + 1)).collect();
                format!("{{{}}}", body.join(&format!(",\n{pad} ")))
            }
            Node::Not(a) if matches!(a.node, Node::Bin(..)) => {
                format!("~({})", self.rhs(a, col + 2))
            }
            _ => one,
        }
    }

    /// [`Netlist::atom`], wrapped like [`Netlist::rhs`] inside its parentheses.
    fn atom_wrapped(&self, e: &Expr, col: usize) -> String {
        let a = self.atom(e);
        if col + a.len() < LINE {
            a
        } else if a.starts_with('(') {
            format!("({})", self.rhs(e, col + 1))
        } else {
            self.rhs(e, col)
        }
    }

    fn emit_def(&self, out: &mut String, id: SigId) {
        let s = &self.sigs[id];
        let note = s
            .note
            .as_ref()
            .map(|n| format!("  // {n}"))
            .unwrap_or_default();
        match &s.kind {
            SigKind::Wire(e) => {
                if let Node::Case(sel, arms, d) = &e.node {
                    let _ = writeln!(out, "  reg  {}{};{note}", range(s.width), s.name);
                    let _ = writeln!(out, "  always @* begin");
                    let _ = writeln!(out, "    case ({})", self.expr(sel));
                    // Arms with the same result share one item (several labels), wrapped
                    // at LINE columns.
                    let mut groups: Vec<(String, Vec<u128>)> = Vec::new();
                    for (v, a) in arms {
                        let r = self.expr(a);
                        match groups.iter_mut().find(|(x, _)| *x == r) {
                            Some((_, vs)) => vs.push(*v),
                            None => groups.push((r, vec![*v])),
                        }
                    }
                    for (r, vs) in groups {
                        let labels: Vec<String> = vs.iter().map(|v| lit(*v, sel.width)).collect();
                        let mut line = String::from("      ");
                        for (i, l) in labels.iter().enumerate() {
                            let sep = if i + 1 < labels.len() { "," } else { ":" };
                            if line.len() + l.len() + 2 > LINE && !line.trim().is_empty() {
                                out.push_str(line.trim_end());
                                out.push('\n');
                                line = String::from("      ");
                            }
                            line.push_str(l);
                            line.push_str(sep);
                            line.push(' ');
                        }
                        let _ = writeln!(out, "{line}{} = {r};", s.name);
                    }
                    let _ = writeln!(out, "      default: {} = {};", s.name, self.expr(d));
                    let _ = writeln!(out, "    endcase");
                    let _ = writeln!(out, "  end");
                } else {
                    let lhs = format!("  wire {}{} = ", range(s.width), s.name);
                    let body = self.rhs(e, lhs.len());
                    let _ = writeln!(out, "{lhs}{body};{note}");
                }
            }
            SigKind::Output(e) => {
                let lhs = format!("  assign {} = ", s.name);
                let body = self.rhs(e, lhs.len());
                let _ = writeln!(out, "{lhs}{body};");
            }
            _ => {}
        }
    }

    /// The named constants of the module's logic (`Expr::named`): name → (value, width).
    fn named_constants(&self) -> std::collections::BTreeMap<String, (u128, u32)> {
        let mut m = std::collections::BTreeMap::new();
        for s in &self.sigs {
            if let SigKind::Wire(e) | SigKind::Output(e) = &s.kind {
                e.visit(&mut |x| {
                    if let Node::Const(v, Some(n)) = &x.node {
                        let prev = m.insert(n.to_string(), (*v, x.width));
                        debug_assert!(
                            prev.is_none() || prev == Some((*v, x.width)),
                            "localparam {n} defined twice with different values"
                        );
                    }
                });
            }
        }
        m
    }

    /// The module text (without the file header).
    pub fn emit(&self) -> String {
        let mut out = String::new();
        for h in &self.header {
            if h.is_empty() {
                out.push_str("//\n");
            } else {
                let _ = writeln!(out, "// {h}");
            }
        }
        out.push_str("\n`default_nettype none\n\n");
        let _ = writeln!(out, "module {} (", self.name);
        let wmax = self
            .ports
            .iter()
            .map(|p| range(p.width).len())
            .max()
            .unwrap_or(0);
        for (i, p) in self.ports.iter().enumerate() {
            let dir = if p.input { "input " } else { "output" };
            let r = range(p.width);
            let comma = if i + 1 < self.ports.len() { "," } else { "" };
            let _ = writeln!(out, "    {dir} wire {r:<wmax$}{}{comma}", p.name);
        }
        out.push_str(");\n");
        let params = self.named_constants();
        if !params.is_empty() {
            out.push_str("\n  // Special codes\n");
            for (n, (v, w)) in &params {
                let _ = writeln!(out, "  localparam {}{n} = {w}'h{v:x};", range(*w));
            }
        }
        for st in 0..=self.stages {
            if self.stages > 0 {
                let _ = writeln!(out, "\n  // ======== stage {st} ========");
            }
            if st > 0 && !self.regs[st as usize].is_empty() {
                let _ = writeln!(out, "\n  // Pipeline registers: stage {} -> {}", st - 1, st);
                for &r in &self.regs[st as usize] {
                    let s = &self.sigs[r];
                    let _ = writeln!(out, "  reg  {}{};", range(s.width), s.name);
                }
                out.push_str("  always @(posedge clk_i) begin\n");
                for &r in &self.regs[st as usize] {
                    if let SigKind::Reg(src) = &self.sigs[r].kind {
                        let _ = writeln!(out, "    {} <= {};", self.sigs[r].name, self.expr(src));
                    }
                }
                out.push_str("  end\n");
            }
            for (s, it) in &self.items {
                if *s != st {
                    continue;
                }
                match it {
                    Item::Comment(lines) => {
                        out.push('\n');
                        for l in lines {
                            if l.is_empty() {
                                out.push_str("  //\n");
                            } else {
                                let _ = writeln!(out, "  // {l}");
                            }
                        }
                    }
                    Item::Def(id) => self.emit_def(&mut out, *id),
                }
            }
        }
        out.push_str("\n  // Valid handshake\n");
        if self.stages == 0 {
            out.push_str("  assign valid_o = valid_i;\n");
        } else {
            for k in 1..=self.stages {
                let _ = writeln!(out, "  reg  valid_q{k};");
            }
            out.push_str("  always @(posedge clk_i) begin\n    if (!rst_ni) begin\n");
            for k in 1..=self.stages {
                let _ = writeln!(out, "      valid_q{k} <= 1'b0;");
            }
            out.push_str("    end else begin\n");
            for k in 1..=self.stages {
                let src = if k == 1 {
                    "valid_i".to_string()
                } else {
                    format!("valid_q{}", k - 1)
                };
                let _ = writeln!(out, "      valid_q{k} <= {src};");
            }
            out.push_str("    end\n  end\n");
            let _ = writeln!(out, "  assign valid_o = valid_q{};", self.stages);
        }
        if !self.unused.is_empty() {
            out.push_str(
                "\n  // Bits that this configuration does not need (kept for readability).\n",
            );
            out.push_str("  /* verilator lint_off UNUSEDSIGNAL */\n");
            let parts: Vec<String> = self
                .unused
                .iter()
                .map(|&(id, m)| {
                    let s = &self.sigs[id];
                    if m == mask(s.width) {
                        return s.name.clone();
                    }
                    // Print maximal runs of unused bits.
                    let mut runs = Vec::new();
                    let mut b = s.width as i64 - 1;
                    while b >= 0 {
                        if m >> b & 1 == 1 {
                            let hi = b;
                            while b >= 0 && m >> b & 1 == 1 {
                                b -= 1;
                            }
                            let lo = b + 1;
                            runs.push(if hi == lo {
                                format!("{}[{hi}]", s.name)
                            } else {
                                format!("{}[{hi}:{lo}]", s.name)
                            });
                        } else {
                            b -= 1;
                        }
                    }
                    runs.join(", ")
                })
                .collect();
            let mut line = String::from("  wire unused_ok = &{1'b0");
            for p in parts {
                if line.len() + p.len() + 4 > LINE {
                    out.push_str(&line);
                    out.push_str(",\n");
                    line = format!("{:20}{p}", "");
                } else {
                    line.push_str(", ");
                    line.push_str(&p);
                }
            }
            let _ = writeln!(out, "{line}}};");
            out.push_str("  /* verilator lint_on UNUSEDSIGNAL */\n");
        }
        out.push_str("\nendmodule\n\n`default_nettype wire\n");
        out
    }
}
