//! The pipeliner: a pass over a built module's signals that removes dead logic, estimates
//! every signal's combinational depth, assigns each live signal to a pipeline stage and
//! inserts the registers that carry values across stage boundaries. It knows nothing about
//! Verilog text; [`crate::emit`] prints its result.
//!
//! * **Dead logic** ([`live_signals`]): a signal is live when an output port or an instance
//!   reads it, directly or through other signals (a state register's next value and enable
//!   included). Inputs and instance outputs are always live (ports; instances are kept).
//! * **Depth** ([`depths`]): the sum of [`Expr::cost`] along a signal's longest input path.
//! * **Stages** ([`assign_stages`]): with `N` stages and total depth `D`, cuts sit at depths
//!   `B, 2B, …, NB` with `B = ⌈D/(N+1)⌉`. A wire whose logic ends above a cut lives in the
//!   stage after it (never earlier than its operands); outputs live in stage `N`.
//! * **Registers** ([`insert_registers`]): every reference that crosses stages is rewritten
//!   to a chain of registers, one per crossed cut, named `<name>_q<stage>` (`_b<h>_<l>` when
//!   only a slice is carried). A chain carries only the bits its consumers at that stage or
//!   later read, so it narrows as it goes, and consumers share it.
//! * **Bit usage** ([`unused_bits`]): bits of live signals that nothing reads, which the
//!   emitter sinks for Verilator's `-Wall`.
//!
//! A pipelined core computes exactly the combinational function, `N` cycles later.
//!
//! State registers and instance outputs are stage-0 sources like inputs (depth 0). A module
//! holding state or instances is built with 0 stages (`ModuleBuilder::finish` refuses more),
//! so the stage and register passes never move them.

use crate::ast::{mask, Expr, Item, Node, SigId, SigKind, Signal};
use std::collections::BTreeMap;

/// The definition of a wire or output (`None` for inputs and registers).
pub fn def_expr(s: &Signal) -> Option<&Expr> {
    match &s.kind {
        SigKind::Wire(e) | SigKind::Output(e) => Some(e),
        _ => None,
    }
}

/// The signals an expression reads (with repeats).
fn refs(e: &Expr) -> Vec<SigId> {
    let mut v = Vec::new();
    e.visit(&mut |x| match &x.node {
        Node::Sig(s) | Node::Slice(s, _, _) => v.push(*s),
        _ => {}
    });
    v
}

/// Every expression a signal's definition reads: a wire's, output's or pipeline register's
/// source, a state register's next value and enable (none for inputs and instance outputs).
pub fn sig_reads(s: &Signal) -> Vec<&Expr> {
    match &s.kind {
        SigKind::Wire(e) | SigKind::Output(e) | SigKind::Reg(e) => vec![e],
        SigKind::State { next, enable, .. } => std::iter::once(next).chain(enable).collect(),
        SigKind::Input | SigKind::InstanceOut => Vec::new(),
    }
}

/// The expressions driving instance inputs among `items`.
pub fn instance_reads(items: &[Item]) -> Vec<&Expr> {
    items
        .iter()
        .flat_map(|it| match it {
            Item::Instance(inst) => inst.inputs.iter().map(|(_, e)| e).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// Live flags: outputs, inputs, instance outputs, and everything an output or an instance
/// input reads, through wires and state registers. A state register's next value may read
/// a later signal (a feedback loop), so this is a worklist over the read graph rather than
/// one backward pass.
pub fn live_signals(sigs: &[Signal], items: &[Item]) -> Vec<bool> {
    let mut live = vec![false; sigs.len()];
    let mut work: Vec<SigId> = Vec::new();
    let mark = |r: SigId, live: &mut [bool], work: &mut Vec<SigId>| {
        if !live[r] {
            live[r] = true;
            work.push(r);
        }
    };
    for (i, s) in sigs.iter().enumerate() {
        if matches!(
            s.kind,
            SigKind::Output(_) | SigKind::Input | SigKind::InstanceOut
        ) {
            mark(i, &mut live, &mut work);
        }
    }
    for e in instance_reads(items) {
        for r in refs(e) {
            mark(r, &mut live, &mut work);
        }
    }
    while let Some(i) = work.pop() {
        for e in sig_reads(&sigs[i]) {
            for r in refs(e) {
                mark(r, &mut live, &mut work);
            }
        }
    }
    live
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

/// Depth at which each signal's logic ends (inputs, registers, state registers and instance
/// outputs: 0).
pub fn depths(sigs: &[Signal]) -> Vec<u32> {
    let mut end = vec![0u32; sigs.len()];
    for i in 0..sigs.len() {
        if let Some(e) = def_expr(&sigs[i]) {
            end[i] = expr_depth(e, &end);
        }
    }
    end
}

/// Where the cuts go: each signal's stage, the total depth and the per-stage budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagePlan {
    /// Stage of each signal (0 for dead ones and for every signal when `stages == 0`).
    pub stage: Vec<u32>,
    /// Deepest live signal.
    pub depth: u32,
    /// Depth per stage, `⌈depth / (stages + 1)⌉` (at least 1).
    pub budget: u32,
}

/// Assigns every live signal to a stage (see the module documentation).
pub fn assign_stages(sigs: &[Signal], live: &[bool], end: &[u32], stages: u32) -> StagePlan {
    let n = sigs.len();
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
        stage[i] = match &sigs[i].kind {
            SigKind::Input | SigKind::Reg(_) | SigKind::State { .. } | SigKind::InstanceOut => 0,
            SigKind::Output(_) => stages,
            SigKind::Wire(e) => {
                let by_depth = end[i].saturating_sub(1) / budget;
                let by_ops = refs(e).iter().map(|&r| stage[r]).max().unwrap_or(0);
                by_depth.max(by_ops).min(stages)
            }
        };
    }
    StagePlan {
        stage,
        depth,
        budget,
    }
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
        _ => return e.map_children(&|x| remap(x, map, sigs)),
    };
    Expr {
        node,
        width: e.width,
    }
}

/// The name of a register carrying bits `hl` of signal `base` into stage `st`, unique
/// among `sigs`.
fn reg_name(sigs: &[Signal], base: &str, hl: Option<(u32, u32)>, st: u32) -> String {
    let base = base.strip_suffix("_i").unwrap_or(base);
    let base = match hl {
        Some((h, l)) if h == l => format!("{base}_b{h}"),
        Some((h, l)) => format!("{base}_b{h}_{l}"),
        None => base.to_string(),
    };
    let mut nm = format!("{base}_q{st}");
    let mut k = 1;
    while sigs.iter().any(|s| s.name == nm) {
        nm = format!("{base}_q{st}_{k}");
        k += 1;
    }
    nm
}

/// Rewrites every reference that crosses stages to read a register chain, appending the
/// registers to `sigs`. Returns the registers entering each stage (index = stage). A
/// reference to a slice registers only the bits read from that stage on.
pub fn insert_registers(
    sigs: &mut Vec<Signal>,
    live: &[bool],
    stage: &[u32],
    stages: u32,
) -> Vec<Vec<SigId>> {
    let n = live.len();
    let mut regs: Vec<Vec<SigId>> = vec![Vec::new(); stages as usize + 1];
    let order: Vec<SigId> = (0..n).filter(|&i| live[i]).collect();
    // Bits of each signal carried into each later stage: the bounding range of the bits read
    // by every consumer at that stage or later (so a chain narrows as it goes and two
    // consumers of overlapping slices share one register).
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
    let mut delayed: BTreeMap<(RegKey, u32), SigId> = BTreeMap::new();
    let mut stage_of: Vec<u32> = stage.to_vec();
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
        let mut map: BTreeMap<RegKey, SigId> = BTreeMap::new();
        for r in needed {
            // Walk (or extend) the register chain of `r` up to stage t.
            let full = sigs[r].width;
            let (mut cur, mut cur_lo, mut cur_w) = (r, 0u32, full);
            let mut key: RegKey = (r, None);
            for st in stage_of[r] + 1..=t {
                let (h, l) = carried.get(&(r, st)).copied().unwrap_or((full - 1, 0));
                let hl = (h != full - 1 || l != 0).then_some((h, l));
                key = (r, hl);
                let width = h - l + 1;
                let node = if width == cur_w {
                    Node::Sig(cur)
                } else {
                    Node::Slice(cur, h - cur_lo, l - cur_lo)
                };
                cur = *delayed.entry((key, st)).or_insert_with(|| {
                    let name = reg_name(sigs, &sigs[r].name, hl, st);
                    sigs.push(Signal {
                        name,
                        width,
                        kind: SigKind::Reg(Expr { node, width }),
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
            let ne = remap(&e, &map, sigs);
            if let SigKind::Wire(x) | SigKind::Output(x) = &mut sigs[i].kind {
                *x = ne;
            }
        }
    }
    regs
}

/// The body items with their stages, dead definitions dropped. A comment takes the stage of
/// the next live definition (so it stays next to the logic it describes); a comment whose
/// definitions are all dead (up to the next comment) is dropped with them.
pub fn stage_items(items: Vec<Item>, live: &[bool], stage: &[u32]) -> Vec<(u32, Item)> {
    let mut out: Vec<(u32, Item)> = Vec::new();
    let mut pending: Vec<Vec<String>> = Vec::new();
    let mut dead_since = false;
    for it in items {
        match it {
            Item::Comment(c) => {
                if dead_since {
                    pending.clear();
                }
                dead_since = false;
                pending.push(c);
            }
            Item::Def(id) if !live[id] => dead_since = true,
            Item::Def(id) => {
                for c in pending.drain(..) {
                    out.push((stage[id], Item::Comment(c)));
                }
                dead_since = false;
                out.push((stage[id], Item::Def(id)));
            }
            Item::Instance(inst) => {
                for c in pending.drain(..) {
                    out.push((0, Item::Comment(c)));
                }
                dead_since = false;
                out.push((0, Item::Instance(inst)));
            }
        }
    }
    out
}

/// Bits of live signals (the first `live.len()` signals as flagged, every later one, i.e.
/// the registers, always) that nothing reads (no live definition, no input of an instance
/// among `items`), outputs excepted: (signal, mask of unused bits).
pub fn unused_bits(sigs: &[Signal], live: &[bool], items: &[Item]) -> Vec<(SigId, u128)> {
    let is_live = |i: usize| i >= live.len() || live[i];
    let mut used = vec![0u128; sigs.len()];
    let mut mark = |e: &Expr| {
        e.visit(&mut |x| match &x.node {
            Node::Sig(r) => used[*r] = mask(sigs[*r].width),
            Node::Slice(r, h, l) => used[*r] |= mask(h - l + 1) << l,
            _ => {}
        })
    };
    for (i, s) in sigs.iter().enumerate() {
        if is_live(i) {
            sig_reads(s).into_iter().for_each(&mut mark);
        }
    }
    instance_reads(items).into_iter().for_each(&mut mark);
    let mut unused = Vec::new();
    for (i, s) in sigs.iter().enumerate() {
        if !is_live(i) || matches!(s.kind, SigKind::Output(_)) {
            continue;
        }
        let un = mask(s.width) & !used[i];
        if un != 0 {
            unused.push((i, un));
        }
    }
    unused
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ast::ModuleBuilder;

    /// a, b: 8-bit inputs; s1 = a + b, s2 = s1 + a, s3 = s2 + b (each add costs 2 levels);
    /// r = s3; dead = a - b (read by nothing).
    fn chain() -> ModuleBuilder {
        let mut m = ModuleBuilder::new();
        let a = m.input("a_i", 8);
        let b = m.input("b_i", 8);
        let _dead = m.wire("dead", a.sub(&b));
        let s1 = m.wire("s1", a.add(&b));
        let s2 = m.wire("s2", s1.add(&a));
        let s3 = m.wire("s3", s2.add(&b));
        m.output("r_o", s3);
        m
    }

    fn id(sigs: &[Signal], name: &str) -> SigId {
        sigs.iter().position(|s| s.name == name).expect(name)
    }

    #[test]
    fn dead_logic_is_not_live() {
        let m = chain();
        let live = live_signals(&m.sigs, &m.items);
        assert!(!live[id(&m.sigs, "dead")]);
        for n in ["a_i", "b_i", "s1", "s2", "s3", "r_o"] {
            assert!(live[id(&m.sigs, n)], "{n}");
        }
    }

    #[test]
    fn depth_is_the_sum_of_costs_on_the_longest_path() {
        let m = chain();
        let end = depths(&m.sigs);
        let add = m.sigs[id(&m.sigs, "s1")].kind.clone();
        let SigKind::Wire(e) = add else {
            panic!("s1 is a wire")
        };
        let c = e.cost();
        assert_eq!(c, 2, "an 8-bit add is a 2-level carry chain");
        let got: Vec<u32> = ["a_i", "s1", "s2", "s3", "r_o"]
            .iter()
            .map(|n| end[id(&m.sigs, n)])
            .collect();
        assert_eq!(got, vec![0, c, 2 * c, 3 * c, 3 * c]);
    }

    #[test]
    fn stages_follow_the_budget() {
        let m = chain();
        let live = live_signals(&m.sigs, &m.items);
        let end = depths(&m.sigs);
        // depth 6, 2 stages: budget 2, cuts after s1 (depth 2) and s2 (depth 4)
        let p = assign_stages(&m.sigs, &live, &end, 2);
        assert_eq!((p.depth, p.budget), (6, 2));
        let st: Vec<u32> = ["a_i", "s1", "s2", "s3", "r_o", "dead"]
            .iter()
            .map(|n| p.stage[id(&m.sigs, n)])
            .collect();
        assert_eq!(st, vec![0, 0, 1, 2, 2, 0]);
        // 0 stages: everything in stage 0, budget = depth
        let p0 = assign_stages(&m.sigs, &live, &end, 0);
        assert!(p0.stage.iter().all(|&s| s == 0));
        assert_eq!(p0.budget, 6);
    }

    #[test]
    fn registers_are_placed_on_every_crossing_and_shared() {
        let mut m = chain();
        let live = live_signals(&m.sigs, &m.items);
        let end = depths(&m.sigs);
        let p = assign_stages(&m.sigs, &live, &end, 2);
        let regs = insert_registers(&mut m.sigs, &live, &p.stage, 2);
        let names = |st: usize| -> Vec<String> {
            regs[st]
                .iter()
                .map(|&r| m.sigs[r].name.clone())
                .collect::<Vec<_>>()
        };
        // s2 (stage 1) reads s1 and a from stage 0; s3 (stage 2) reads s2 and b from
        // stages 1 and 0: b crosses two cuts, so it gets a chain b_q1 -> b_q2.
        assert!(regs[0].is_empty());
        assert_eq!(names(1), vec!["a_q1", "s1_q1", "b_q1"]);
        assert_eq!(names(2), vec!["b_q2", "s2_q2"]);
        let src = |n: &str| match &m.sigs[id(&m.sigs, n)].kind {
            SigKind::Reg(e) => m.sigs[refs(e)[0]].name.clone(),
            k => panic!("{n} is not a register: {k:?}"),
        };
        assert_eq!(src("b_q2"), "b_q1");
        assert_eq!(src("b_q1"), "b_i");
        // the consumers now read the registers
        let reads = |n: &str| -> Vec<String> {
            let e = def_expr(&m.sigs[id(&m.sigs, n)]).unwrap();
            refs(e).iter().map(|&r| m.sigs[r].name.clone()).collect()
        };
        assert_eq!(reads("s2"), vec!["s1_q1", "a_q1"]);
        assert_eq!(reads("s3"), vec!["s2_q2", "b_q2"]);
        // s3 and r_o share stage 2: no register between them
        assert_eq!(reads("r_o"), vec!["s3"]);
    }

    #[test]
    fn a_chain_carries_only_the_bits_read_later() {
        // w = a + b (stage 0), x = f(w) in stage 1 reads w[7:0], y in stage 2 reads w[3:2]
        let mut m = ModuleBuilder::new();
        let a = m.input("a_i", 12);
        let b = m.input("b_i", 12);
        let w = m.wire("w", a.add(&b));
        let x = m.wire("x", w.slice(7, 0).add(&Expr::c(3, 8)));
        let x2 = m.wire("x2", x.add(&x));
        let y = m.wire("y", x2.slice(3, 0).add(&w.slice(3, 2).zext(4)));
        m.output("r_o", y);
        let live = live_signals(&m.sigs, &m.items);
        let end = depths(&m.sigs);
        let p = assign_stages(&m.sigs, &live, &end, 2);
        assert_eq!(
            ["w", "x", "x2", "y"].map(|n| p.stage[id(&m.sigs, n)]),
            [0, 1, 1, 2],
            "depths {:?}",
            end
        );
        let regs = insert_registers(&mut m.sigs, &live, &p.stage, 2);
        let desc = |st: usize| -> Vec<(String, u32)> {
            regs[st]
                .iter()
                .map(|&r| (m.sigs[r].name.clone(), m.sigs[r].width))
                .collect()
        };
        // into stage 1: the bounding range of w[7:0] and w[3:2]; into stage 2 only w[3:2]
        assert_eq!(desc(1), vec![("w_b7_0_q1".to_string(), 8)]);
        assert_eq!(
            desc(2),
            vec![("w_b3_2_q2".to_string(), 2), ("x2_b3_0_q2".to_string(), 4)]
        );
    }

    #[test]
    fn unused_bits_are_reported_for_live_signals_only() {
        let mut m = ModuleBuilder::new();
        let a = m.input("a_i", 8);
        let _dead = m.wire("dead", a.add(&a));
        m.output("r_o", a.slice(5, 2));
        let live = live_signals(&m.sigs, &m.items);
        let un = unused_bits(&m.sigs, &live, &m.items);
        assert_eq!(un, vec![(id(&m.sigs, "a_i"), 0b1100_0011)]);
    }

    /// The ports of a sub-module `sub(clk_i, rst_ni, valid_i, a_i[8], r_o[8], valid_o)`.
    pub(crate) fn sub_ports() -> Vec<crate::ast::PortDecl> {
        let p = |name: &str, input: bool, width: u32| crate::ast::PortDecl {
            name: name.into(),
            input,
            width,
        };
        vec![
            p("clk_i", true, 1),
            p("rst_ni", true, 1),
            p("valid_i", true, 1),
            p("a_i", true, 8),
            p("r_o", false, 8),
            p("valid_o", false, 1),
        ]
    }

    #[test]
    fn liveness_follows_a_feedback_register() {
        // acc <- en ? acc + x : acc, where the sum and the enable are wires defined after
        // the register (they read it); a second register feeds only itself and is dead.
        let mut m = ModuleBuilder::new();
        let x = m.input("x_i", 8);
        let e = m.input("e_i", 1);
        let acc = m.state("acc_q", 8, Some(0));
        let lone = m.state("lone_q", 8, Some(0));
        let _dead = m.wire("dead", x.sub(&acc.q()));
        let sum = m.wire("sum", acc.q().add(&x));
        let en = m.wire("en", e.and(&sum.msb().not()));
        m.set_next(&acc, sum, Some(en));
        m.set_next(&lone, lone.q().add(&Expr::c(1, 8)), None);
        m.output("r_o", acc.q());
        let live = live_signals(&m.sigs, &m.items);
        for n in ["x_i", "e_i", "acc_q", "sum", "en", "r_o"] {
            assert!(live[id(&m.sigs, n)], "{n} is live");
        }
        for n in ["lone_q", "dead"] {
            assert!(!live[id(&m.sigs, n)], "{n} is dead");
        }
        // state registers are depth-0 sources; the sum after them is one adder deep
        let end = depths(&m.sigs);
        assert_eq!(end[id(&m.sigs, "acc_q")], 0);
        assert_eq!(end[id(&m.sigs, "sum")], 2);
        // the register's reads count as uses: nothing but the dead logic is unused
        assert!(unused_bits(&m.sigs, &live, &m.items).is_empty());
    }

    #[test]
    fn an_instance_keeps_its_inputs_live_even_with_unused_outputs() {
        // Instances are never dead logic: what drives their inputs stays live, and their
        // outputs are live signals whose unread bits are reported (sunk for -Wall).
        let mut m = ModuleBuilder::new();
        let v = m.valid_in();
        let a = m.input("a_i", 8);
        let w = m.wire("w", a.add(&Expr::c(1, 8)));
        let _unread = m.wire("unread", a.sub(&Expr::c(1, 8)));
        let o = m.instance(
            "sub",
            "u_sub",
            &sub_ports(),
            &[("valid_i", v), ("a_i", w)],
            &[("r_o", "sub_r"), ("valid_o", "sub_valid")],
        );
        m.output("r_o", o[0].slice(3, 0));
        assert_eq!(m.error, None);
        let live = live_signals(&m.sigs, &m.items);
        for n in ["w", "sub_r", "sub_valid"] {
            assert!(live[id(&m.sigs, n)], "{n} is live");
        }
        assert!(!live[id(&m.sigs, "unread")]);
        let un = unused_bits(&m.sigs, &live, &m.items);
        assert_eq!(
            un,
            vec![(id(&m.sigs, "sub_r"), 0xf0), (id(&m.sigs, "sub_valid"), 1)]
        );
        // the instance stays in the body
        let items = stage_items(m.items.clone(), &live, &vec![0; m.sigs.len()]);
        assert!(items
            .iter()
            .any(|(_, it)| matches!(it, Item::Instance(i) if i.name == "u_sub")));
    }

    #[test]
    fn state_or_instances_with_stages_is_an_error() {
        let mut m = ModuleBuilder::new();
        let x = m.input("x_i", 8);
        let acc = m.state("acc_q", 8, Some(0));
        m.set_next(&acc, acc.q().add(&x), None);
        m.output("r_o", acc.q());
        let e = m
            .clone()
            .finish("t", vec![], 2)
            .expect_err("state + stages");
        assert!(
            e.contains("state registers, instances or its own valid_o is not pipelined"),
            "{e}"
        );
        let n = m.finish("t", vec![], 0).expect("0 stages");
        let names: Vec<&str> = n.ports.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["clk_i", "rst_ni", "valid_i", "x_i", "r_o", "valid_o"]
        );
        let mut m = ModuleBuilder::new();
        let a = m.input("a_i", 8);
        let v = m.valid_in();
        let o = m.instance(
            "sub",
            "u_sub",
            &sub_ports(),
            &[("valid_i", v), ("a_i", a)],
            &[("r_o", "sub_r"), ("valid_o", "sub_valid")],
        );
        m.output("r_o", o[0].clone());
        m.set_valid_out(o[1].clone());
        assert!(m.clone().finish("t", vec![], 1).is_err());
        assert!(m.finish("t", vec![], 0).is_ok());
    }

    #[test]
    fn comments_move_with_the_next_live_definition() {
        let mut m = ModuleBuilder::new();
        let a = m.input("a_i", 8);
        m.comment(&["heading"]);
        m.comment(&["about dead"]);
        let _dead = m.wire("dead", a.add(&a));
        m.comment(&["about s"]);
        let _dead2 = m.wire("dead2", a.sub(&a));
        let s = m.wire("s", a.add(&Expr::c(1, 8)));
        m.output("r_o", s);
        let live = live_signals(&m.sigs, &m.items);
        let mut stage = vec![0; m.sigs.len()];
        stage[id(&m.sigs, "s")] = 1;
        stage[id(&m.sigs, "r_o")] = 1;
        let items = stage_items(m.items.clone(), &live, &stage);
        let (sid, rid) = (id(&m.sigs, "s"), id(&m.sigs, "r_o"));
        // "heading" and "about dead" describe only dead logic: dropped; "about s" keeps
        // its place before s although the definition right after it is dead.
        assert_eq!(
            items,
            vec![
                (1, Item::Comment(vec!["about s".into()])),
                (1, Item::Def(sid)),
                (1, Item::Def(rid)),
            ]
        );
    }
}
