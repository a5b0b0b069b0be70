//! From a [`ModuleBuilder`] to Verilog text: [`ModuleBuilder::finish`] runs the pipeliner
//! ([`crate::pipeline`]: dead-logic removal, depth estimate, stage assignment, register
//! insertion) and [`Netlist::emit`] prints the deterministic Verilog-2005 module.
//!
//! The valid handshake is a chain of `N` registers (`valid_q1 … valid_qN`) cleared by the
//! synchronous active-low reset `rst_ni`; data registers have no reset. A pipelined core
//! therefore computes exactly the combinational function, `N` cycles later.
//!
//! A wrapper module (0 stages) may hold state registers, printed as one
//! `always @(posedge clk_i)` block (registers without reset first, then
//! `if (!rst_ni) … else …`, each group of registers sharing an enable under one `if`), placed
//! right after the last definition they read; and instances of sub-modules, printed with
//! their output wires and one named connection per line. [`file()`] puts a top module and the
//! sub-modules it instantiates in one file.

use crate::ast::{mask, BinOp, Expr, Instance, Item, ModuleBuilder, Node, SigId, SigKind, Signal};
use crate::pipeline;
use std::fmt::Write as _;

pub use crate::ast::PortDecl;

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
    /// `valid_o` is driven by the module's logic (no valid handshake to print).
    own_valid_out: bool,
    /// Total depth estimate and per-stage budget (for the header).
    pub depth: u32,
    /// Depth budget per stage.
    pub budget: u32,
    /// Wires printed with `(* keep *)`.
    keep: Vec<SigId>,
}

impl ModuleBuilder {
    /// Checks, removes dead logic, places `stages` pipeline registers (the passes of
    /// [`crate::pipeline`]) and returns the netlist. The ports `clk_i` and `rst_ni` are added
    /// in front when the module is clocked (`stages > 0`, a state register, or an instance of
    /// a clocked module), then `valid_i`, and `valid_o` at the end; unless
    /// [`ModuleBuilder::set_valid_out`] drives it, `valid_o` is `valid_i` delayed by the
    /// `stages` (a pass-through with `stages == 0`). A module with state registers, instances
    /// or a driven `valid_o` takes no pipeline stages (an error otherwise).
    pub fn finish(self, name: &str, header: Vec<String>, stages: u32) -> Result<Netlist, String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        for s in &self.sigs {
            for e in pipeline::sig_reads(s) {
                if let Some(m) = e.error() {
                    return Err(format!("{}: {m}", s.name));
                }
            }
        }
        for e in pipeline::instance_reads(&self.items) {
            if let Some(m) = e.error() {
                return Err(format!("{name}: instance input: {m}"));
            }
        }
        let has_state = self
            .sigs
            .iter()
            .any(|s| matches!(s.kind, SigKind::State { .. }));
        let instances: Vec<&Instance> = self
            .items
            .iter()
            .filter_map(|it| match it {
                Item::Instance(i) => Some(i),
                _ => None,
            })
            .collect();
        if stages > 0 && (has_state || !instances.is_empty() || self.valid_out.is_some()) {
            return Err(format!(
                "{name}: a module with state registers, instances or its own valid_o is not \
                 pipelined (build it with 0 stages and pipeline the cores it instantiates), \
                 asked for {stages} stage(s)"
            ));
        }
        let clocked = stages > 0 || has_state || instances.iter().any(|i| i.clocked);
        let mut this = self;
        if stages > 0 {
            // cut points inside definitions longer than half a stage's share of the depth
            let live = pipeline::live_signals(&this.sigs, &this.items);
            let end = pipeline::depths(&this.sigs, &live, &this.items);
            let depth = end.iter().copied().max().unwrap_or(0);
            let limit = (depth / (stages + 1) / 2).max(2 * crate::ast::delay::LEVEL);
            pipeline::split_deep(&mut this, limit);
        }
        let mut sigs = std::mem::take(&mut this.sigs);
        let live = pipeline::live_signals(&sigs, &this.items);
        let end = pipeline::depths(&sigs, &live, &this.items);
        let plan = pipeline::assign_stages(&sigs, &live, &this.items, &end, stages);
        let regs = pipeline::insert_registers(&mut sigs, &live, &plan.stage, stages);
        let mut unused = pipeline::unused_bits(&sigs, &live, &this.items);
        if this.valid_out.is_none() {
            // The valid handshake reads valid_i.
            unused.retain(|&(id, _)| Some(id) != this.valid_in);
        }
        let mut header = header;
        if stages > 0 {
            header.push(stage_depths_line(&sigs, &this.items, &plan.stage, stages));
        }
        let items = pipeline::stage_items(this.items, &live, &plan.stage);
        // Ports: control ports around the data ports.
        let port = |name: &str, input: bool, width: u32| PortDecl {
            name: name.into(),
            input,
            width,
        };
        let mut ports = Vec::new();
        if clocked {
            ports.push(port("clk_i", true, 1));
            ports.push(port("rst_ni", true, 1));
        }
        ports.push(port("valid_i", true, 1));
        for &p in &this.ports {
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
            own_valid_out: this.valid_out.is_some(),
            depth: plan.depth,
            budget: plan.budget,
            keep: this.keep,
        })
    }
}

/// The header line with the pipeliner's delay estimate of every stage of a pipelined
/// module: the deepest signal of each stage, the registers entering it arriving at 0
/// ([`pipeline::depths`] on the module with its pipeline registers, `stage`: each original
/// signal's stage), in levels, stage 0 first. `fp8gen synth` reads it back
/// (fpga::report::stage_depths) to set the model beside the measured critical path.
fn stage_depths_line(sigs: &[Signal], items: &[Item], stage: &[u32], stages: u32) -> String {
    let live = pipeline::live_signals(sigs, items);
    let end = pipeline::depths(sigs, &live, items);
    let mut per = vec![0u32; stages as usize + 1];
    for (i, &d) in end.iter().enumerate() {
        if let (true, Some(&st)) = (live[i], stage.get(i)) {
            let st = (st as usize).min(per.len() - 1);
            per[st] = per[st].max(d);
        }
    }
    let levels: Vec<String> = per
        .iter()
        .map(|d| format!("{:.1}", *d as f64 / 10.0))
        .collect();
    format!(
        "Stage depths: {} (levels by the pipeliner's delay model, stage 0 first)",
        levels.join(" | ")
    )
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
                let o = bin_op(*op);
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
                    let keep = if self.keep.contains(&id) {
                        "(* keep *) "
                    } else {
                        ""
                    };
                    let lhs = format!("  {keep}wire {}{} = ", range(s.width), s.name);
                    let body = self.rhs(e, lhs.len());
                    let _ = writeln!(out, "{lhs}{body};{note}");
                }
            }
            SigKind::Output(e) => {
                let lhs = format!("  assign {} = ", s.name);
                let body = self.rhs(e, lhs.len());
                let _ = writeln!(out, "{lhs}{body};");
            }
            SigKind::State { .. } => {
                let _ = writeln!(out, "  reg  {}{};{note}", range(s.width), s.name);
            }
            _ => {}
        }
    }

    /// An instance: its output wires, then the instance with one named connection per line
    /// (`clk_i`/`rst_ni` first when the sub-module is clocked, then its ports in order).
    fn emit_instance(&self, out: &mut String, inst: &Instance) {
        for &(_, id) in &inst.outputs {
            let s = &self.sigs[id];
            let _ = writeln!(out, "  wire {}{};", range(s.width), s.name);
        }
        let _ = writeln!(out, "  {} {} (", inst.module, inst.name);
        let mut conns: Vec<String> = Vec::new();
        if inst.clocked {
            conns.push(".clk_i(clk_i)".into());
            conns.push(".rst_ni(rst_ni)".into());
        }
        for (p, e) in &inst.inputs {
            let head = format!("    .{p}(");
            conns.push(format!(".{p}({})", self.rhs(e, head.len())));
        }
        for (p, id) in &inst.outputs {
            conns.push(format!(".{p}({})", self.name_of(*id)));
        }
        let _ = writeln!(out, "    {}\n  );", conns.join(",\n    "));
    }

    /// The live state registers, in definition order.
    fn state_regs(&self) -> Vec<SigId> {
        self.items
            .iter()
            .filter_map(|(_, it)| match it {
                Item::Def(id) if matches!(self.sigs[*id].kind, SigKind::State { .. }) => Some(*id),
                _ => None,
            })
            .collect()
    }

    /// Index (in `self.items`) of the item after which the state block goes: the last item
    /// that declares a state register or defines a signal their next values and enables read.
    fn state_block_position(&self, regs: &[SigId]) -> Option<usize> {
        let mut defined_at: std::collections::BTreeMap<SigId, usize> = Default::default();
        for (k, (_, it)) in self.items.iter().enumerate() {
            match it {
                Item::Def(id) => {
                    defined_at.insert(*id, k);
                }
                Item::Instance(inst) => inst.outputs.iter().for_each(|&(_, id)| {
                    defined_at.insert(id, k);
                }),
                Item::Comment(_) => {}
            }
        }
        let mut pos = None;
        for &r in regs {
            let mut at = |id: SigId| {
                if let Some(&k) = defined_at.get(&id) {
                    pos = pos.max(Some(k));
                }
            };
            at(r);
            for e in pipeline::sig_reads(&self.sigs[r]) {
                e.visit(&mut |x| match &x.node {
                    Node::Sig(id) | Node::Slice(id, _, _) => at(*id),
                    _ => {}
                });
            }
        }
        pos
    }

    /// The state registers' `always @(posedge clk_i)` block.
    fn emit_state_block(&self, out: &mut String, regs: &[SigId]) {
        let reset_of = |id: SigId| match &self.sigs[id].kind {
            SigKind::State { reset, .. } => *reset,
            _ => None,
        };
        out.push_str("  always @(posedge clk_i) begin\n");
        let plain: Vec<SigId> = regs
            .iter()
            .copied()
            .filter(|&r| reset_of(r).is_none())
            .collect();
        self.emit_updates(out, &plain, 4);
        let reset: Vec<SigId> = regs
            .iter()
            .copied()
            .filter(|&r| reset_of(r).is_some())
            .collect();
        if !reset.is_empty() {
            out.push_str("    if (!rst_ni) begin\n");
            let w = reset
                .iter()
                .map(|&r| self.name_of(r).len())
                .max()
                .unwrap_or(0);
            for &r in &reset {
                let s = &self.sigs[r];
                let v = reset_of(r).unwrap_or(0);
                let _ = writeln!(out, "      {:<w$} <= {};", s.name, lit(v, s.width));
            }
            out.push_str("    end else begin\n");
            self.emit_updates(out, &reset, 6);
            out.push_str("    end\n");
        }
        out.push_str("  end\n");
    }

    /// The loads of `regs` at indentation `ind`: registers without an enable first, then one
    /// `if (enable) begin … end` per distinct enable (in order of first use), names aligned
    /// within each group.
    fn emit_updates(&self, out: &mut String, regs: &[SigId], ind: usize) {
        let mut groups: Vec<(Option<&Expr>, Vec<SigId>)> = vec![(None, Vec::new())];
        for &r in regs {
            let SigKind::State { enable, .. } = &self.sigs[r].kind else {
                continue;
            };
            match groups.iter_mut().find(|(e, _)| *e == enable.as_ref()) {
                Some((_, v)) => v.push(r),
                None => groups.push((enable.as_ref(), vec![r])),
            }
        }
        for (en, group) in groups {
            if group.is_empty() {
                continue;
            }
            let pad = " ".repeat(ind);
            let inner = match en {
                Some(e) => {
                    let _ = writeln!(out, "{pad}if ({}) begin", self.expr(e));
                    ind + 2
                }
                None => ind,
            };
            let ipad = " ".repeat(inner);
            let w = group
                .iter()
                .map(|&r| self.name_of(r).len())
                .max()
                .unwrap_or(0);
            for &r in &group {
                let SigKind::State { next, .. } = &self.sigs[r].kind else {
                    continue;
                };
                let lhs = format!("{ipad}{:<w$} <= ", self.name_of(r));
                let body = self.rhs(next, lhs.len());
                let _ = writeln!(out, "{lhs}{body};");
            }
            if en.is_some() {
                let _ = writeln!(out, "{pad}end");
            }
        }
    }

    /// The named constants of the module's logic (`Expr::named`, `Expr::named_i`): name →
    /// (value, width, signed value and meaning).
    #[allow(clippy::type_complexity)]
    fn named_constants(
        &self,
    ) -> std::collections::BTreeMap<String, (u128, u32, Option<(i64, String)>)> {
        let mut m = std::collections::BTreeMap::new();
        let exprs = self
            .sigs
            .iter()
            .filter(|s| !matches!(s.kind, SigKind::Reg(_)))
            .flat_map(pipeline::sig_reads)
            .chain(self.items.iter().flat_map(|(_, it)| match it {
                Item::Instance(inst) => inst.inputs.iter().map(|(_, e)| e).collect(),
                _ => Vec::new(),
            }));
        for e in exprs {
            e.visit(&mut |x| {
                if let Node::Const(v, Some(n)) = &x.node {
                    let prev = m.insert(n.to_string(), (*v, x.width, n.signed.clone()));
                    debug_assert!(
                        prev.as_ref().is_none_or(|p| (p.0, p.1) == (*v, x.width)),
                        "localparam {n} defined twice with different values"
                    );
                }
            });
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
        let params_at = out.len();
        let state = self.state_regs();
        let state_at = self.state_block_position(&state);
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
            for (k, (s, it)) in self.items.iter().enumerate() {
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
                    Item::Instance(inst) => self.emit_instance(&mut out, inst),
                }
                if state_at == Some(k) {
                    self.emit_state_block(&mut out, &state);
                }
            }
        }
        if self.own_valid_out {
            // valid_o is an output of the module's own logic, printed with it.
        } else if self.stages == 0 {
            out.push_str("\n  // Valid handshake\n");
            out.push_str("  assign valid_o = valid_i;\n");
        } else {
            out.push_str("\n  // Valid handshake\n");
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
        let params = self.params_block(&out[params_at..]);
        out.insert_str(params_at, &params);
        out
    }

    /// The `localparam` declarations of the named constants that `body` uses (a constant of
    /// logic that was optimized away is not declared: Verilator's UNUSEDPARAM).
    fn params_block(&self, body: &str) -> String {
        let params: Vec<_> = self
            .named_constants()
            .into_iter()
            .filter(|(n, _)| uses_ident(body, n))
            .collect();
        let mut out = String::new();
        if params.is_empty() {
            return out;
        }
        let signed = params.iter().any(|(_, p)| p.2.is_some());
        out.push_str(if signed {
            "\n  // Named constants: special codes; biases and exponent bounds and offsets\n  // (two's complement, the signed value in the comment)\n"
        } else {
            "\n  // Special codes\n"
        });
        for (n, (v, w, s)) in &params {
            let _ = write!(out, "  localparam {}{n} = {w}'h{v:x};", range(*w));
            match s {
                Some((i, what)) => {
                    let _ = writeln!(out, "  // {i}: {what}");
                }
                None => out.push('\n'),
            }
        }
        out
    }
}

/// Whether `text` holds `name` as a whole identifier.
fn uses_ident(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// One Verilog file: the sub-modules `subs` (printed modules, in order, separated by a blank
/// line) and then the `top` module that instantiates them. Verilator's DECLFILENAME (a module
/// not named after its file) is waived around the sub-modules only.
pub fn file(subs: &[&str], top: &str) -> String {
    let mut v = String::from("/* verilator lint_off DECLFILENAME */\n");
    v.push_str(&subs.join("\n"));
    v.push_str("/* verilator lint_on DECLFILENAME */\n\n");
    v.push_str(top);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A named signed constant is a `localparam` with its signed value and meaning in a
    /// comment, an offset-binary compare keeps a name, and a constant of logic that was
    /// optimized away is not declared.
    #[test]
    fn named_signed_constants_are_declared_where_used() {
        let mut b = ModuleBuilder::new();
        let e = b.input("e_i", 6);
        let emin = Expr::named_i("T_EMIN", -6, 6, "emin of t");
        let dead = Expr::named_i("T_DEAD", -3, 6, "never read");
        let _unused = b.wire("w_dead", e.add(&dead));
        b.output("tiny_o", e.slt(&emin));
        b.output("d_o", emin.sub(&e));
        let text = b
            .finish("top", vec!["hdr".into()], 0)
            .expect("finish")
            .emit();
        assert!(
            text.contains("localparam [5:0] T_EMIN = 6'h3a;  // -6: emin of t\n"),
            "{text}"
        );
        assert!(
            text.contains("localparam [5:0] T_EMIN_OB = 6'h1a;  // -6: emin of t; offset binary"),
            "{text}"
        );
        assert!(text.contains("T_EMIN - e_i"), "{text}");
        assert!(text.contains("< T_EMIN_OB"), "{text}");
        assert!(!text.contains("T_DEAD"), "{text}");
        assert!(text.contains("// Named constants"), "{text}");
        assert!(uses_ident("a + T_EMIN;", "T_EMIN"));
        assert!(!uses_ident("a + T_EMIN_OB;", "T_EMIN"));
    }

    /// A wrapper around `sub(clk_i, rst_ni, valid_i, a_i[8], r_o[8], valid_o)`: a delayed
    /// copy without reset, a counter with an enable, a result register, its own valid_o.
    #[test]
    fn state_block_and_instance_print_as_one_always_block_after_their_sources() {
        let sub = crate::pipeline::tests::sub_ports();
        let mut b = ModuleBuilder::new();
        let v = b.valid_in();
        let a = b.input("a_i", 8);
        let res = b.state("res_q", 8, Some(0));
        let cnt = b.state("count_q", 4, Some(5));
        let dly = b.state("a_d1_q", 8, None);
        b.set_next(&dly, a.clone(), None);
        let sum = b.wire("a_sum", a.add(&res.q()));
        let o = b.instance(
            "sub",
            "u_sub",
            &sub,
            &[("valid_i", v.clone()), ("a_i", sum)],
            &[("r_o", "sub_r"), ("valid_o", "sub_valid")],
        );
        b.set_next(&res, o[0].clone(), Some(o[1].clone()));
        b.set_next(&cnt, cnt.q().add(&Expr::c(1, 4)), Some(v));
        b.output("r_o", res.q().xor(&dly.q()));
        b.output("n_o", cnt.q());
        b.set_valid_out(o[1].clone());
        let n = b.finish("top", vec!["hdr".into()], 0).expect("finish");
        let text = n.emit();
        let body = text
            .split_once(");\n")
            .map(|(_, b)| b)
            .expect("module header");
        let want = "  reg  [7:0] res_q;
  reg  [3:0] count_q;
  reg  [7:0] a_d1_q;
  wire [7:0] a_sum = a_i + res_q;
  wire [7:0] sub_r;
  wire sub_valid;
  sub u_sub (
    .clk_i(clk_i),
    .rst_ni(rst_ni),
    .valid_i(valid_i),
    .a_i(a_sum),
    .r_o(sub_r),
    .valid_o(sub_valid)
  );
  always @(posedge clk_i) begin
    a_d1_q <= a_i;
    if (!rst_ni) begin
      res_q   <= 8'd0;
      count_q <= 4'd5;
    end else begin
      if (sub_valid) begin
        res_q <= sub_r;
      end
      if (valid_i) begin
        count_q <= count_q + 4'd1;
      end
    end
  end
  assign r_o = res_q ^ a_d1_q;
  assign n_o = count_q;
  assign valid_o = sub_valid;

endmodule

`default_nettype wire
";
        assert_eq!(body, want, "got:\n{body}");
        let names: Vec<&str> = n.ports.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["clk_i", "rst_ni", "valid_i", "a_i", "r_o", "n_o", "valid_o"]
        );
    }
}
