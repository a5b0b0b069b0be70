//! From a [`ModuleBuilder`] to Verilog text: dead-logic removal, pipeline register placement
//! and the deterministic Verilog-2005 emitter.
//!
//! **Pipelining.** Every signal gets a combinational depth estimate (sum of
//! [`Expr::cost`] along its longest input path). With `N` stages and total depth `D`, cuts
//! are placed at depths `B, 2B, …, NB` with `B = ⌈D/(N+1)⌉`: a signal whose logic ends
//! above a cut lives in the stage after it, and every signal read across a cut gets one
//! register per crossed cut (`<name>_q<stage>`). Outputs live in stage `N`. The valid
//! handshake is a chain of `N` registers (`valid_q1 … valid_qN`) cleared by the synchronous
//! active-low reset `rst_ni`; data registers have no reset. A pipelined core therefore
//! computes exactly the combinational function, `N` cycles later.

use crate::ast::{mask, Expr, Item, ModuleBuilder, Node, SigId, SigKind, Signal};
use std::collections::BTreeMap;
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

fn expr_depth(e: &Expr, end: &[u32]) -> u32 {
    let mut d = 0;
    match &e.node {
        Node::Sig(s) | Node::Slice(s, _, _) => return end[*s],
        Node::Const(..) | Node::Error(_) => return 0,
        Node::Concat(v) => v.iter().for_each(|x| d = d.max(expr_depth(x, end))),
        Node::Repl(_, a) | Node::Not(a) | Node::Red(_, a) => d = expr_depth(a, end),
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Shift(_, a, b) => {
            d = expr_depth(a, end).max(expr_depth(b, end))
        }
        Node::Mux(s, a, b) => {
            d = expr_depth(s, end)
                .max(expr_depth(a, end))
                .max(expr_depth(b, end))
        }
        Node::Case(s, arms, df) => {
            d = expr_depth(s, end).max(expr_depth(df, end));
            for (_, a) in arms {
                d = d.max(expr_depth(a, end));
            }
        }
    }
    d + e.cost()
}

/// A signal and the bit range (`None` = all) carried by a pipeline register chain.
type RegKey = (SigId, Option<(u32, u32)>);

/// Replaces crossing references by their delayed registers (`map`: signal and registered
/// bit range → register).
fn remap(e: &Expr, map: &BTreeMap<RegKey, SigId>, sigs: &[Signal]) -> Expr {
    let lookup = |r: SigId| -> Option<(SigId, u32)> {
        map.iter()
            .find(|((s, _), _)| *s == r)
            .map(|((_, hl), d)| (*d, hl.map(|x| x.1).unwrap_or(0)))
    };
    let node = match &e.node {
        Node::Sig(r) => match lookup(*r) {
            Some((d, _)) => Node::Sig(d),
            None => e.node.clone(),
        },
        Node::Slice(r, h, l) => match lookup(*r) {
            Some((d, lo)) => {
                if h - l + 1 == sigs[d].width {
                    Node::Sig(d)
                } else {
                    Node::Slice(d, h - lo, l - lo)
                }
            }
            None => e.node.clone(),
        },
        Node::Const(..) | Node::Error(_) => e.node.clone(),
        Node::Concat(v) => Node::Concat(v.iter().map(|x| remap(x, map, sigs)).collect()),
        Node::Repl(k, a) => Node::Repl(*k, Box::new(remap(a, map, sigs))),
        Node::Not(a) => Node::Not(Box::new(remap(a, map, sigs))),
        Node::Red(o, a) => Node::Red(*o, Box::new(remap(a, map, sigs))),
        Node::Bin(o, a, b) => Node::Bin(
            *o,
            Box::new(remap(a, map, sigs)),
            Box::new(remap(b, map, sigs)),
        ),
        Node::Cmp(o, a, b) => Node::Cmp(
            *o,
            Box::new(remap(a, map, sigs)),
            Box::new(remap(b, map, sigs)),
        ),
        Node::Shift(o, a, b) => Node::Shift(
            *o,
            Box::new(remap(a, map, sigs)),
            Box::new(remap(b, map, sigs)),
        ),
        Node::Mux(s, a, b) => Node::Mux(
            Box::new(remap(s, map, sigs)),
            Box::new(remap(a, map, sigs)),
            Box::new(remap(b, map, sigs)),
        ),
        Node::Case(s, arms, d) => Node::Case(
            Box::new(remap(s, map, sigs)),
            arms.iter()
                .map(|(v, x)| (*v, remap(x, map, sigs)))
                .collect(),
            Box::new(remap(d, map, sigs)),
        ),
    };
    Expr {
        node,
        width: e.width,
    }
}

fn refs(e: &Expr) -> Vec<SigId> {
    let mut v = Vec::new();
    e.visit(&mut |x| match &x.node {
        Node::Sig(s) | Node::Slice(s, _, _) => v.push(*s),
        _ => {}
    });
    v
}

fn def_expr(s: &Signal) -> Option<&Expr> {
    match &s.kind {
        SigKind::Wire(e) | SigKind::Output(e) => Some(e),
        _ => None,
    }
}

impl ModuleBuilder {
    /// Checks, removes dead logic, places `stages` pipeline registers and returns the netlist.
    /// With `stages > 0` the ports `clk_i`, `rst_ni` and `valid_i` are added in front and
    /// `valid_o` at the end; with `stages == 0`, `valid_i`/`valid_o` are a pass-through.
    pub fn finish(self, name: &str, header: Vec<String>, stages: u32) -> Result<Netlist, String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        for s in &self.sigs {
            if let Some(e) = def_expr(s) {
                if let Some(m) = e.error() {
                    return Err(format!("{}: {m}", s.name));
                }
            }
        }
        let mut sigs = self.sigs;
        let n = sigs.len();
        // Dead logic removal: live = reachable from outputs.
        let mut live = vec![false; n];
        for (i, s) in sigs.iter().enumerate() {
            if matches!(s.kind, SigKind::Output(_) | SigKind::Input) {
                live[i] = true;
            }
        }
        for i in (0..n).rev() {
            if live[i] {
                if let Some(e) = def_expr(&sigs[i]) {
                    for r in refs(e) {
                        live[r] = true;
                    }
                }
            }
        }
        // Depth and stage assignment.
        let mut end = vec![0u32; n];
        for i in 0..n {
            if let Some(e) = def_expr(&sigs[i]) {
                end[i] = expr_depth(e, &end);
            }
        }
        let depth = (0..n)
            .filter(|&i| live[i])
            .map(|i| end[i])
            .max()
            .unwrap_or(0);
        let budget = depth.div_ceil(stages + 1).max(1);
        let mut stage = vec![0u32; n];
        for i in 0..n {
            if stages == 0 || !live[i] {
                continue;
            }
            match &sigs[i].kind {
                SigKind::Input | SigKind::Reg(_) => stage[i] = 0,
                SigKind::Output(_) => stage[i] = stages,
                SigKind::Wire(e) => {
                    let by_depth = if end[i] == 0 {
                        0
                    } else {
                        (end[i] - 1) / budget
                    };
                    let by_ops = refs(e).iter().map(|&r| stage[r]).max().unwrap_or(0);
                    stage[i] = by_depth.max(by_ops).min(stages);
                }
            }
        }
        // Register insertion: rewrite references that cross stages. A reference to a slice
        // registers only that slice.
        let mut regs: Vec<Vec<SigId>> = vec![Vec::new(); stages as usize + 1];
        type Key = RegKey;
        let order: Vec<SigId> = (0..n).filter(|&i| live[i]).collect();
        // Bits of each signal carried into each later stage: the bounding range of the bits
        // read by every consumer at that stage or later (so a chain narrows as it goes and
        // two consumers of overlapping slices share one register).
        let mut carried: BTreeMap<(SigId, u32), (u32, u32)> = BTreeMap::new();
        for &i in &order {
            let t = stage[i];
            let Some(e) = def_expr(&sigs[i]) else {
                continue;
            };
            e.visit(&mut |x| {
                let (r, h, l) = match &x.node {
                    Node::Sig(r) => (*r, sigs[*r].width - 1, 0),
                    Node::Slice(r, h, l) => (*r, *h, *l),
                    _ => return,
                };
                for st in stage[r] + 1..=t {
                    let ent = carried.entry((r, st)).or_insert((h, l));
                    *ent = (ent.0.max(h), ent.1.min(l));
                }
            });
        }
        let mut delayed: BTreeMap<(Key, u32), SigId> = BTreeMap::new();
        let mut stage_of: Vec<u32> = stage.clone();
        for &i in &order {
            let t = stage[i];
            let Some(e) = def_expr(&sigs[i]).cloned() else {
                continue;
            };
            let mut needed: Vec<SigId> = Vec::new();
            e.visit(&mut |x| match &x.node {
                Node::Sig(r) | Node::Slice(r, _, _) if stage_of[*r] < t => needed.push(*r),
                _ => {}
            });
            needed.sort_unstable();
            needed.dedup();
            let mut map: BTreeMap<Key, SigId> = BTreeMap::new();
            for r in needed {
                // Walk (or extend) the register chain of `r` up to stage t.
                let full = sigs[r].width;
                let (mut cur, mut cur_lo, mut cur_w) = (r, 0u32, full);
                let mut key: Key = (r, None);
                for st in stage_of[r] + 1..=t {
                    let (h, l) = carried.get(&(r, st)).copied().unwrap_or((full - 1, 0));
                    let hl = (h != full - 1 || l != 0).then_some((h, l));
                    key = (r, hl);
                    let width = h - l + 1;
                    let src = if width == cur_w {
                        Expr {
                            node: Node::Sig(cur),
                            width,
                        }
                    } else {
                        Expr {
                            node: Node::Slice(cur, h - cur_lo, l - cur_lo),
                            width,
                        }
                    };
                    cur = *delayed.entry((key, st)).or_insert_with(|| {
                        let base = sigs[r]
                            .name
                            .strip_suffix("_i")
                            .unwrap_or(&sigs[r].name)
                            .to_string();
                        let base = match hl {
                            Some((h, l)) if h == l => format!("{base}_b{h}"),
                            Some((h, l)) => format!("{base}_b{h}_{l}"),
                            None => base,
                        };
                        let mut nm = format!("{base}_q{st}");
                        let mut k = 1;
                        while sigs.iter().any(|s| s.name == nm) {
                            nm = format!("{base}_q{st}_{k}");
                            k += 1;
                        }
                        sigs.push(Signal {
                            name: nm,
                            width,
                            kind: SigKind::Reg(src),
                            note: None,
                        });
                        stage_of.push(st);
                        regs[st as usize].push(sigs.len() - 1);
                        sigs.len() - 1
                    });
                    cur_lo = l;
                    cur_w = width;
                }
                map.insert(key, cur);
            }
            if !map.is_empty() {
                let ne = remap(&e, &map, &sigs);
                match &mut sigs[i].kind {
                    SigKind::Wire(x) | SigKind::Output(x) => *x = ne,
                    _ => {}
                }
            }
        }
        // Items with stages; comments take the stage of the next live definition.
        let mut items: Vec<(u32, Item)> = Vec::new();
        let mut pending: Vec<Vec<String>> = Vec::new();
        for it in self.items {
            match it {
                Item::Comment(c) => pending.push(c),
                Item::Def(id) => {
                    if !live[id] {
                        continue;
                    }
                    for c in pending.drain(..) {
                        items.push((stage[id], Item::Comment(c)));
                    }
                    items.push((stage[id], Item::Def(id)));
                }
            }
        }
        // Bit usage: every bit of every live signal should be read by something.
        let mut used = vec![0u128; sigs.len()];
        for (i, s) in sigs.iter().enumerate() {
            if i < n && !live[i] {
                continue;
            }
            let mut mark = |e: &Expr| {
                e.visit(&mut |x| match &x.node {
                    Node::Sig(r) => used[*r] = mask(sigs[*r].width),
                    Node::Slice(r, h, l) => used[*r] |= mask(h - l + 1) << l,
                    _ => {}
                })
            };
            match &s.kind {
                SigKind::Wire(e) | SigKind::Output(e) => mark(e),
                SigKind::Reg(src) => mark(src),
                SigKind::Input => {}
            }
        }
        let mut unused = Vec::new();
        for (i, s) in sigs.iter().enumerate() {
            let live_i = i >= n || live[i];
            if !live_i || matches!(s.kind, SigKind::Output(_)) {
                continue;
            }
            let un = mask(s.width) & !used[i];
            if un != 0 {
                unused.push((i, un));
            }
        }
        // Ports.
        let mut ports = Vec::new();
        if stages > 0 {
            for nm in ["clk_i", "rst_ni"] {
                ports.push(PortDecl {
                    name: nm.into(),
                    input: true,
                    width: 1,
                });
            }
        }
        ports.push(PortDecl {
            name: "valid_i".into(),
            input: true,
            width: 1,
        });
        for &p in &self.ports {
            ports.push(PortDecl {
                name: sigs[p].name.clone(),
                input: matches!(sigs[p].kind, SigKind::Input),
                width: sigs[p].width,
            });
        }
        ports.push(PortDecl {
            name: "valid_o".into(),
            input: false,
            width: 1,
        });
        Ok(Netlist {
            name: name.to_string(),
            header,
            stages,
            ports,
            sigs,
            items,
            regs,
            unused,
            depth,
            budget,
        })
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

    /// A definition right-hand side; a top-level chain of muxes is printed one arm per line.
    fn rhs(&self, e: &Expr, indent: usize) -> String {
        let mut arms = Vec::new();
        let mut cur = e;
        while let Node::Mux(s, a, b) = &cur.node {
            arms.push(format!("{} ? {} :", self.atom(s), self.atom(a)));
            cur = b;
        }
        if arms.len() < 2 {
            return self.expr(e);
        }
        let pad = " ".repeat(indent);
        let mut out = String::new();
        for a in arms {
            out.push_str(&a);
            out.push('\n');
            out.push_str(&pad);
        }
        out.push_str(&self.atom(cur));
        out
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
                    for (v, a) in arms {
                        let _ = writeln!(
                            out,
                            "      {}: {} = {};",
                            lit(*v, sel.width),
                            s.name,
                            self.expr(a)
                        );
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
            let _ = writeln!(out, "  wire unused_ok = &{{1'b0, {}}};", parts.join(", "));
            out.push_str("  /* verilator lint_on UNUSEDSIGNAL */\n");
        }
        out.push_str("\nendmodule\n\n`default_nettype wire\n");
        out
    }
}
