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

use crate::ast::{mask, Expr, Item, ModuleBuilder, Node, SigId, SigKind, Signal};
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

/// Adds the load (LUT inputs driven, in bits) that `e` puts on the signals it reads, each
/// bit of a direct reference counting `per_bit`: a mux select, a shift amount or a case
/// selector drives every bit of its node, wiring (concatenation, replication, inversion)
/// passes its reader's load through, any other logic reads each bit once.
fn add_loads(e: &Expr, per_bit: u32, load: &mut [u32]) {
    let wide = e.width.max(1);
    match &e.node {
        Node::Sig(r) => load[*r] = load[*r].saturating_add(e.width * per_bit),
        Node::Slice(r, h, l) => load[*r] = load[*r].saturating_add((h - l + 1) * per_bit),
        Node::Const(..) | Node::Error(_) => {}
        Node::Concat(v) => v.iter().for_each(|x| add_loads(x, per_bit, load)),
        Node::Repl(n, a) => add_loads(a, per_bit.saturating_mul(*n), load),
        Node::Not(a) => add_loads(a, per_bit, load),
        Node::Red(_, a) => add_loads(a, 1, load),
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) => {
            add_loads(a, 1, load);
            add_loads(b, 1, load);
        }
        Node::Shift(_, a, n) => {
            add_loads(a, 1, load);
            add_loads(n, wide, load);
        }
        Node::Mux(s, a, b) => {
            add_loads(s, wide, load);
            add_loads(a, 1, load);
            add_loads(b, 1, load);
        }
        Node::Case(sel, arms, d) => {
            add_loads(sel, wide, load);
            arms.iter().for_each(|(_, a)| add_loads(a, 1, load));
            add_loads(d, 1, load);
        }
    }
}

/// Whether `e` is only wiring (no LUT): its signal is another name for bits of others.
fn is_wiring(e: &Expr) -> bool {
    match &e.node {
        Node::Sig(_) | Node::Slice(..) | Node::Const(..) => true,
        Node::Concat(v) => v.iter().all(is_wiring),
        Node::Repl(_, a) => is_wiring(a),
        _ => false,
    }
}

/// The load of every live signal: LUT inputs its bits drive, summed over live readers. A
/// wire that is only wiring passes its own load on to the signals it renames; an output
/// bit and a register bit count one.
pub fn loads(sigs: &[Signal], live: &[bool], items: &[Item]) -> Vec<u32> {
    let mut load = vec![0u32; sigs.len()];
    for e in instance_reads(items) {
        add_loads(e, 1, &mut load);
    }
    // Readers come after what they read (wires); a state register's next value may read a
    // later signal, which is fine: its reads count one per bit whenever they are added.
    for i in (0..sigs.len()).rev() {
        if !live.get(i).copied().unwrap_or(true) {
            continue;
        }
        match &sigs[i].kind {
            SigKind::Wire(e) if is_wiring(e) => {
                let per_bit = load[i].div_ceil(sigs[i].width.max(1)).max(1);
                add_loads(e, per_bit, &mut load);
            }
            SigKind::Wire(e) | SigKind::Output(e) | SigKind::Reg(e) => add_loads(e, 1, &mut load),
            SigKind::State { next, enable, .. } => {
                add_loads(next, 1, &mut load);
                if let Some(en) = enable {
                    add_loads(en, sigs[i].width, &mut load);
                }
            }
            SigKind::Input | SigKind::InstanceOut => {}
        }
    }
    load
}

/// Routing delay a net's load adds at its readers (tenths of a level, [`crate::ast::delay`]):
/// [`FANOUT_PER_LOG4`](crate::ast::delay::FANOUT_PER_LOG4) per factor of 4 beyond 4 inputs.
pub fn fanout_delay(load: u32) -> u32 {
    if load <= 4 {
        return 0;
    }
    let log4 = (32 - (load - 1).leading_zeros()).div_ceil(2);
    crate::ast::delay::FANOUT_PER_LOG4 * (log4 - 1)
}

/// Arrival time at the output of `e` when each signal `r` it reads arrives at `at(r)`.
fn arrival(e: &Expr, at: &dyn Fn(SigId) -> u32) -> u32 {
    let mut d = 0;
    match &e.node {
        Node::Sig(s) | Node::Slice(s, _, _) => return at(*s),
        Node::Const(..) | Node::Error(_) => return 0,
        Node::Concat(v) => v.iter().for_each(|x| d = d.max(arrival(x, at))),
        Node::Repl(_, a) | Node::Not(a) | Node::Red(_, a) => d = arrival(a, at),
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Shift(_, a, b) => {
            d = arrival(a, at).max(arrival(b, at))
        }
        Node::Mux(s, a, b) => d = arrival(s, at).max(arrival(a, at)).max(arrival(b, at)),
        Node::Case(s, arms, df) => {
            d = arrival(s, at).max(arrival(df, at));
            for (_, a) in arms {
                d = d.max(arrival(a, at));
            }
        }
    }
    d + e.cost()
}

/// Delay (tenths of a level) at which each signal's logic ends: the sum of node costs and of
/// the fan-out delays of the nets on its longest input path (inputs, registers, state
/// registers and instance outputs: 0). `live` and `items` give the loads ([`loads`]).
pub fn depths(sigs: &[Signal], live: &[bool], items: &[Item]) -> Vec<u32> {
    let fan: Vec<u32> = loads(sigs, live, items)
        .into_iter()
        .map(fanout_delay)
        .collect();
    let mut end = vec![0u32; sigs.len()];
    for i in 0..sigs.len() {
        if let Some(e) = def_expr(&sigs[i]) {
            end[i] = arrival(e, &|r| end[r] + fan[r]);
        }
    }
    end
}

/// Where the cuts go: each signal's stage, the total depth and the per-stage budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagePlan {
    /// Stage of each signal (0 for dead ones and for every signal when `stages == 0`).
    pub stage: Vec<u32>,
    /// Deepest live signal (tenths of a level).
    pub depth: u32,
    /// The longest path inside one stage (tenths of a level, at least 1): with `stages == 0`
    /// the depth, else the smallest budget the stages can be cut to.
    pub budget: u32,
}

/// Stages of every signal when no stage may hold a path longer than `budget` (`fan`: the
/// fan-out delay of each signal): each wire goes in the earliest stage its operands allow,
/// and one stage later (its operands registered) when its logic would end past the budget
/// there; outputs go in stage `stages`. `None` when that needs more than `stages` cuts or
/// one definition alone is longer than the budget.
fn place(
    sigs: &[Signal],
    live: &[bool],
    fan: &[u32],
    stages: u32,
    budget: u32,
) -> Option<Vec<u32>> {
    let n = sigs.len();
    let mut stage = vec![0u32; n];
    // delay from the start of the signal's stage to the end of its logic
    let mut local = vec![0u32; n];
    for i in 0..n {
        if !live[i] {
            continue;
        }
        let e = match &sigs[i].kind {
            SigKind::Wire(e) | SigKind::Output(e) => e,
            _ => continue,
        };
        let ops = refs(e);
        let mut s = ops.iter().map(|&r| stage[r]).max().unwrap_or(0);
        if matches!(sigs[i].kind, SigKind::Output(_)) {
            s = stages;
        }
        let at = |t: u32| {
            arrival(e, &|r| {
                if stage[r] == t {
                    local[r] + fan[r]
                } else {
                    fan[r]
                }
            })
        };
        let mut d = at(s);
        if d > budget && s < stages {
            s += 1;
            d = at(s);
        }
        if d > budget || s > stages {
            return None;
        }
        stage[i] = s;
        local[i] = d;
    }
    Some(stage)
}

/// Assigns every live signal to a stage: the smallest per-stage budget for which `place`
/// fits the datapath into `stages + 1` stages (a binary search; a larger budget never needs
/// more cuts), so the longest stage is as short as the cut points allow and more stages
/// never make it longer.
pub fn assign_stages(
    sigs: &[Signal],
    live: &[bool],
    items: &[Item],
    end: &[u32],
    stages: u32,
) -> StagePlan {
    let n = sigs.len();
    let depth = (0..n)
        .filter(|&i| live[i])
        .map(|i| end[i])
        .max()
        .unwrap_or(0);
    if stages == 0 {
        return StagePlan {
            stage: vec![0; n],
            depth,
            budget: depth.max(1),
        };
    }
    let fan: Vec<u32> = loads(sigs, live, items)
        .into_iter()
        .map(fanout_delay)
        .collect();
    // With the whole depth as budget nothing is cut before the outputs, which always fits.
    let (mut lo, mut hi) = (1u32, depth.max(1));
    let mut best = place(sigs, live, &fan, stages, u32::MAX).unwrap_or_else(|| vec![0; n]);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match place(sigs, live, &fan, stages, mid) {
            Some(st) => {
                best = st;
                hi = mid;
            }
            None => lo = mid + 1,
        }
    }
    StagePlan {
        stage: best,
        depth,
        budget: hi,
    }
}

/// Logic depth inside one expression (its operands' arrival 0), tenths of a level.
pub fn own_depth(e: &Expr) -> u32 {
    arrival(e, &|_| 0)
}

/// Cut points inside long definitions: a live wire or output whose own logic
/// ([`own_depth`]) is deeper than `limit` gets, bottom-up, every operand of a node that
/// would end past `limit` named as a wire of its own (`<name>_t<k>`, defined just before
/// it), so the stage pass can place a register there. Names change nothing in the logic
/// (synthesis flattens them); each piece is at most `limit` deep unless one node alone is
/// deeper. For modules without state registers or instances (the pipelined ones).
pub fn split_deep(m: &mut ModuleBuilder, limit: u32) {
    let old = std::mem::take(&mut m.sigs);
    let live = live_signals(&old, &m.items);
    let mut map: Vec<SigId> = vec![0; old.len()];
    let mut sigs: Vec<Signal> = Vec::with_capacity(old.len());
    // new wires defined before each old signal
    let mut before: Vec<Vec<SigId>> = vec![Vec::new(); old.len()];
    let mut names: std::collections::BTreeSet<String> =
        old.iter().map(|s| s.name.clone()).collect();
    for (i, s) in old.iter().enumerate() {
        let mut s = s.clone();
        if let SigKind::Wire(e) | SigKind::Output(e) = &mut s.kind {
            let mut x = renumber(e, &map);
            if live[i] && own_depth(&x) > limit {
                let mut k = 0;
                let mut fresh = |w: Expr, sigs: &mut Vec<Signal>| -> Expr {
                    let base = s.name.strip_suffix("_o").unwrap_or(&s.name).to_string();
                    let mut nm = format!("{base}_t{k}");
                    while names.contains(&nm) {
                        k += 1;
                        nm = format!("{base}_t{k}");
                    }
                    k += 1;
                    names.insert(nm.clone());
                    let width = w.width;
                    sigs.push(Signal {
                        name: nm,
                        width,
                        kind: SigKind::Wire(w),
                        note: None,
                    });
                    before[i].push(sigs.len() - 1);
                    Expr {
                        node: Node::Sig(sigs.len() - 1),
                        width,
                    }
                };
                x = cut(&x, limit, &mut sigs, &mut fresh).0;
            }
            *e = x;
        }
        if let SigKind::Reg(e) = &mut s.kind {
            *e = renumber(e, &map);
        }
        sigs.push(s);
        map[i] = sigs.len() - 1;
    }
    let items = std::mem::take(&mut m.items);
    for it in items {
        match it {
            Item::Def(id) => {
                for &w in &before[id] {
                    m.items.push(Item::Def(w));
                }
                m.items.push(Item::Def(map[id]));
            }
            Item::Comment(c) => m.items.push(Item::Comment(c)),
            Item::Instance(inst) => m.items.push(Item::Instance(inst)),
        }
    }
    m.sigs = sigs;
    m.ports = m.ports.iter().map(|&p| map[p]).collect();
    m.valid_in = m.valid_in.map(|v| map[v]);
    m.valid_out = m.valid_out.map(|v| map[v]);
}

/// `e` reading the renumbered signals (`map`: old id → new id).
fn renumber(e: &Expr, map: &[SigId]) -> Expr {
    let node = match &e.node {
        Node::Sig(r) => Node::Sig(map[*r]),
        Node::Slice(r, h, l) => Node::Slice(map[*r], *h, *l),
        _ => return e.map_children(&|x| renumber(x, map)),
    };
    Expr {
        node,
        width: e.width,
    }
}

/// [`split_deep`] on one expression: the rewritten expression and its depth, operands
/// named by `fresh` where the depth would pass `limit`.
fn cut(
    e: &Expr,
    limit: u32,
    sigs: &mut Vec<Signal>,
    fresh: &mut dyn FnMut(Expr, &mut Vec<Signal>) -> Expr,
) -> (Expr, u32) {
    // A barrel shift deeper than the limit becomes two: by the high bits of the amount
    // (low bits zero), then by the low bits; `a >> n == (a >> {n_hi, 0..0}) >> n_lo` for a
    // logical shift of a fixed width (bits shifted out are gone either way).
    // (Only an amount that is a signal or a slice of one is split: the high half's amount
    // is a concatenation, left whole.)
    if let Node::Shift(dir, a, n) = &e.node {
        if n.width >= 2 && e.cost() > limit && matches!(n.node, Node::Sig(_) | Node::Slice(..)) {
            let j = n.width / 2;
            let hi = crate::ast::concat(&[n.slice(n.width - 1, j), Expr::c(0, j)]);
            let inner = a.shift(*dir, &hi);
            return cut(&inner.shift(*dir, &n.slice(j - 1, 0)), limit, sigs, fresh);
        }
    }
    let kids: Vec<&Expr> = match &e.node {
        Node::Sig(_) | Node::Slice(..) | Node::Const(..) | Node::Error(_) => return (e.clone(), 0),
        Node::Concat(v) => v.iter().collect(),
        Node::Repl(_, a) | Node::Not(a) | Node::Red(_, a) => vec![a],
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Shift(_, a, b) => vec![a, b],
        Node::Mux(s, a, b) => vec![s, a, b],
        Node::Case(s, arms, d) => std::iter::once(&**s)
            .chain(arms.iter().map(|(_, a)| a))
            .chain(std::iter::once(&**d))
            .collect(),
    };
    let mut done: Vec<(Expr, u32)> = kids.iter().map(|k| cut(k, limit, sigs, fresh)).collect();
    let cost = e.cost();
    let deepest = done.iter().map(|d| d.1).max().unwrap_or(0);
    if deepest + cost > limit && cost > 0 {
        for d in done.iter_mut() {
            if d.1 > 0 {
                d.0 = fresh(d.0.clone(), sigs);
                d.1 = 0;
            }
        }
    }
    let depth = done.iter().map(|d| d.1).max().unwrap_or(0) + cost;
    let mut it = done.into_iter().map(|d| d.0);
    let mut next = || it.next().unwrap_or_else(|| Expr::c(0, 1));
    let b = |x: Expr| Box::new(x);
    let node = match &e.node {
        Node::Concat(v) => Node::Concat(v.iter().map(|_| next()).collect()),
        Node::Repl(n, _) => Node::Repl(*n, b(next())),
        Node::Not(_) => Node::Not(b(next())),
        Node::Red(o, _) => Node::Red(*o, b(next())),
        Node::Bin(o, ..) => Node::Bin(*o, b(next()), b(next())),
        Node::Cmp(o, ..) => Node::Cmp(*o, b(next()), b(next())),
        Node::Shift(o, ..) => Node::Shift(*o, b(next()), b(next())),
        Node::Mux(..) => Node::Mux(b(next()), b(next()), b(next())),
        Node::Case(_, arms, _) => {
            let sel = b(next());
            let arms = arms.iter().map(|(v, _)| (*v, next())).collect();
            Node::Case(sel, arms, b(next()))
        }
        _ => e.node.clone(),
    };
    (
        Expr {
            node,
            width: e.width,
        },
        depth,
    )
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
    use crate::ast::concat;

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
    fn depth_is_the_sum_of_costs_and_fan_out_on_the_longest_path() {
        let m = chain();
        let live = live_signals(&m.sigs, &m.items);
        let end = depths(&m.sigs, &live, &m.items);
        let add = m.sigs[id(&m.sigs, "s1")].kind.clone();
        let SigKind::Wire(e) = add else {
            panic!("s1 is a wire")
        };
        let c = e.cost();
        // 1.4 levels into and out of the carry chain, 8 bits of ripple 0.3 level
        assert_eq!(c, 17, "an 8-bit add is a short carry chain");
        // every net drives 8 or 16 LUT inputs (the dead a - b is not a reader): 0.2 level
        let ld = loads(&m.sigs, &live, &m.items);
        let got: Vec<u32> = ["a_i", "s1", "s2", "s3"]
            .iter()
            .map(|n| ld[id(&m.sigs, n)])
            .collect();
        assert_eq!(got, vec![16, 8, 8, 8]);
        let f = fanout_delay(8);
        assert_eq!(
            (fanout_delay(4), f, fanout_delay(16), fanout_delay(64)),
            (0, 2, 2, 4)
        );
        let got: Vec<u32> = ["a_i", "s1", "s2", "s3", "r_o"]
            .iter()
            .map(|n| end[id(&m.sigs, n)])
            .collect();
        assert_eq!(
            got,
            vec![0, f + c, 2 * (f + c), 3 * (f + c), 3 * (f + c) + f]
        );
    }

    #[test]
    fn loads_count_selects_and_pass_through_wiring() {
        // sel drives a 16-bit mux (16 inputs); w renames a[3:0] and is read by two 4-bit
        // adders: a's low bits carry w's load of 8 per 4 bits, its high bits none.
        let mut m = ModuleBuilder::new();
        let a = m.input("a_i", 16);
        let b = m.input("b_i", 16);
        let sel = m.input("sel_i", 1);
        let w = m.wire("w", a.slice(3, 0));
        let s1 = m.wire("s1", w.add(&Expr::c(1, 4)));
        let s2 = m.wire("s2", w.add(&Expr::c(2, 4)));
        m.output("r_o", Expr::mux(&sel, &a, &b));
        m.output("t_o", s1.add(&s2));
        let live = live_signals(&m.sigs, &m.items);
        let ld = loads(&m.sigs, &live, &m.items);
        assert_eq!(ld[id(&m.sigs, "sel_i")], 16);
        assert_eq!(ld[id(&m.sigs, "w")], 8);
        // 16 bits into the mux, plus w's 8 readers per bit on a[3:0]
        assert_eq!(ld[id(&m.sigs, "a_i")], 16 + 8);
        assert_eq!(ld[id(&m.sigs, "b_i")], 16);
    }

    #[test]
    fn stages_take_the_smallest_budget_that_fits() {
        let m = chain();
        let live = live_signals(&m.sigs, &m.items);
        let end = depths(&m.sigs, &live, &m.items);
        // 2 stages: s1 | s2 | s3 r_o. Each stage holds one add (fan-out 0.2 + 1.7 levels);
        // the last also the route of s3 to the output (0.2): budget 2.1 levels.
        let p = assign_stages(&m.sigs, &live, &m.items, &end, 2);
        assert_eq!((p.depth, p.budget), (59, 21));
        let st: Vec<u32> = ["a_i", "s1", "s2", "s3", "r_o", "dead"]
            .iter()
            .map(|n| p.stage[id(&m.sigs, n)])
            .collect();
        assert_eq!(st, vec![0, 0, 1, 2, 2, 0]);
        // 0 stages: everything in stage 0, budget = depth
        let p0 = assign_stages(&m.sigs, &live, &m.items, &end, 0);
        assert!(p0.stage.iter().all(|&s| s == 0));
        assert_eq!(p0.budget, 59);
        // 1 stage: two adds in one stage, one in the other
        let p1 = assign_stages(&m.sigs, &live, &m.items, &end, 1);
        assert_eq!(p1.budget, 38);
        // More stages never make the longest stage longer; past one add per stage the
        // extra stages only delay the outputs.
        let budgets: Vec<u32> = (0..=6)
            .map(|n| assign_stages(&m.sigs, &live, &m.items, &end, n).budget)
            .collect();
        assert!(budgets.windows(2).all(|w| w[1] <= w[0]), "{budgets:?}");
        assert_eq!(budgets[6], 19, "one add and its input route per stage");
    }

    #[test]
    fn place_refuses_a_budget_below_one_definition() {
        let m = chain();
        let live = live_signals(&m.sigs, &m.items);
        let fan: Vec<u32> = loads(&m.sigs, &live, &m.items)
            .into_iter()
            .map(fanout_delay)
            .collect();
        // an add alone is 1.9 levels with its input route: no budget below fits, however
        // many stages
        assert!(place(&m.sigs, &live, &fan, 8, 18).is_none());
        assert!(place(&m.sigs, &live, &fan, 8, 19).is_some());
        // 3 adds in 2 stages at 1.9 levels each: not enough stages
        assert!(place(&m.sigs, &live, &fan, 1, 19).is_none());
    }

    #[test]
    fn registers_are_placed_on_every_crossing_and_shared() {
        let mut m = chain();
        let live = live_signals(&m.sigs, &m.items);
        let end = depths(&m.sigs, &live, &m.items);
        let p = assign_stages(&m.sigs, &live, &m.items, &end, 2);
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
        // the stages by hand (the planner would put x2 in stage 2: its 3.5-level last
        // stage is shorter than 1.9 + 1.9 levels for x and x2 together)
        let end = depths(&m.sigs, &live, &m.items);
        let p = assign_stages(&m.sigs, &live, &m.items, &end, 2);
        assert_eq!(
            ["w", "x", "x2", "y"].map(|n| p.stage[id(&m.sigs, n)]),
            [0, 1, 2, 2]
        );
        let mut stage = vec![0; m.sigs.len()];
        for (n, st) in [("x", 1), ("x2", 1), ("y", 2), ("r_o", 2)] {
            stage[id(&m.sigs, n)] = st;
        }
        let regs = insert_registers(&mut m.sigs, &live, &stage, 2);
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
        let end = depths(&m.sigs, &live, &m.items);
        assert_eq!(end[id(&m.sigs, "acc_q")], 0);
        assert_eq!(end[id(&m.sigs, "sum")], 2 + 17);
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

    /// Every signal's value for inputs `inp` (by input order): wires and outputs in order.
    fn run(m: &ModuleBuilder, inp: &[u128]) -> Vec<u128> {
        let mut env = vec![0u128; m.sigs.len()];
        let mut k = 0;
        for (i, s) in m.sigs.iter().enumerate() {
            env[i] = match &s.kind {
                SigKind::Input => {
                    k += 1;
                    inp[k - 1] & mask(s.width)
                }
                SigKind::Wire(e) | SigKind::Output(e) => {
                    crate::ast::tests::eval(e, &env) & mask(s.width)
                }
                _ => 0,
            };
        }
        env
    }

    #[test]
    fn split_deep_names_cut_points_and_keeps_the_function() {
        // one long definition: a 40-bit shift by a 6-bit amount, then an add and a compare
        let mut m = ModuleBuilder::new();
        let a = m.input("a_i", 40);
        let n = m.input("n_i", 6);
        let b = m.input("b_i", 40);
        let _dead = m.wire("dead", a.sub(&b));
        let long = a.shr(&n).add(&b).xor(&a);
        let w = m.wire("w", long);
        m.output("r_o", concat(&[w.lt(&b), w.slice(38, 0)]));
        let before = m.clone();
        let limit = 30;
        split_deep(&mut m, limit);
        let names: Vec<&str> = m.sigs.iter().map(|s| s.name.as_str()).collect();
        // the shift became two (by n[5:3] then n[2:0]), each named, and the add named
        assert!(
            names.contains(&"w_t0") && names.contains(&"w_t1"),
            "{names:?}"
        );
        let live = live_signals(&m.sigs, &m.items);
        for (i, s) in m.sigs.iter().enumerate() {
            if let (true, Some(e)) = (live[i], def_expr(s)) {
                let d = own_depth(e);
                // pieces within the limit unless one node alone is deeper
                assert!(d <= limit.max(e.cost()), "{}: {d}", s.name);
            }
        }
        // every definition still comes after what it reads, items list the new wires
        for (i, s) in m.sigs.iter().enumerate() {
            for e in sig_reads(s) {
                assert!(
                    refs(e).iter().all(|&r| r < i),
                    "{} reads a later signal",
                    s.name
                );
            }
        }
        let defs = m
            .items
            .iter()
            .filter(|it| matches!(it, Item::Def(_)))
            .count();
        assert_eq!(
            defs,
            before
                .items
                .iter()
                .filter(|it| matches!(it, Item::Def(_)))
                .count()
                + m.sigs.len()
                - before.sigs.len()
        );
        assert_eq!(m.ports.len(), before.ports.len());
        // the same outputs for inputs across the shift range
        let out = |mm: &ModuleBuilder, env: &[u128]| -> u128 { env[*mm.ports.last().unwrap()] };
        let mut x = 0x1234_5678_9abc_u128;
        for k in 0..200u128 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407)
                & mask(100);
            let inp = [x, k % 64, x >> 40];
            assert_eq!(
                out(&before, &run(&before, &inp)),
                out(&m, &run(&m, &inp)),
                "{inp:?}"
            );
        }
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
