//! The CaDiCaL engine: a combinational miter as an and-inverter graph (yosys
//! `write_aiger -ascii -map`), turned into CNF here (Tseitin: three clauses per AND gate), and
//! solved by the CaDiCaL SAT solver in cubes run in parallel.
//!
//! A cube fixes the top bits of one free input slice (for the FMA: the addend's exponent
//! field); the cubes together cover every value of the slice, so "every cube unsatisfiable"
//! is a proof for every input. Measured on the E4M3 FMA miter (2 cores): the whole miter in one
//! CaDiCaL call takes ~4 minutes; cubes of 16 addend binades take 1–3 s far from the product's
//! range and 55–75 s near it, fewer seconds in total than 256 single binades (MiniSat in
//! yosys: ~5 s per far binade, ~15 s per near one, and no verdict on ranges of near binades).
//!
//! Only CaDiCaL's `s UNSATISFIABLE` (exit code 20) counts as a proof of a cube; `s
//! SATISFIABLE` (exit code 10) gives a model, read back to the miter's input ports through the
//! AIGER map; anything else (time limit, crash) is "no verdict".

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::verdict::Verdict;

/// An and-inverter graph read from yosys's ASCII AIGER and its `-map` file.
#[derive(Clone, Debug)]
pub struct Aig {
    /// Largest variable index (AIGER `M`).
    pub max_var: u32,
    /// Input bits: (port, bit, AIGER literal).
    pub inputs: Vec<(String, u32, u32)>,
    /// Output bits named by the map: (port, bit, AIGER literal). yosys leaves constant
    /// outputs out of the map.
    pub outputs: Vec<(String, u32, u32)>,
    /// Every output literal, in AIGER order.
    pub output_lits: Vec<u32>,
    /// AND gates: (lhs, rhs0, rhs1) literals.
    pub ands: Vec<(u32, u32, u32)>,
}

fn num(s: Option<&str>, what: &str) -> Result<u32, String> {
    s.and_then(|x| x.parse().ok())
        .ok_or_else(|| format!("AIGER: expected a number for {what}"))
}

impl Aig {
    /// Parses `aag M I L O A` (no latches: a combinational miter) and the map file's
    /// `input <index> <bit> <name>` / `output <index> <bit> <name>` lines.
    pub fn parse(aag: &str, map: &str) -> Result<Aig, String> {
        let mut lines = aag.lines();
        let header: Vec<&str> = lines
            .next()
            .ok_or("AIGER: empty file")?
            .split_whitespace()
            .collect();
        if header.first() != Some(&"aag") || header.len() < 6 {
            return Err("AIGER: not an ASCII AIGER header (aag M I L O A)".into());
        }
        let f = |i: usize, w: &str| num(header.get(i).copied(), w);
        let (m, ni, nl, no, na) = (f(1, "M")?, f(2, "I")?, f(3, "L")?, f(4, "O")?, f(5, "A")?);
        if nl != 0 {
            return Err(format!(
                "AIGER: {nl} latches in a miter that should be combinational"
            ));
        }
        let mut in_lits = Vec::with_capacity(ni as usize);
        for _ in 0..ni {
            in_lits.push(num(lines.next(), "an input literal")?);
        }
        let mut out_lits = Vec::with_capacity(no as usize);
        for _ in 0..no {
            out_lits.push(num(lines.next(), "an output literal")?);
        }
        let mut ands = Vec::with_capacity(na as usize);
        for _ in 0..na {
            let l = lines.next().ok_or("AIGER: missing AND gates")?;
            let mut w = l.split_whitespace();
            ands.push((
                num(w.next(), "an AND lhs")?,
                num(w.next(), "an AND rhs")?,
                num(w.next(), "an AND rhs")?,
            ));
        }
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        for l in map.lines() {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() < 4 {
                continue;
            }
            let idx = num(Some(w[1]), "a map index")? as usize;
            let bit = num(Some(w[2]), "a map bit")?;
            match w[0] {
                "input" => {
                    let lit = *in_lits
                        .get(idx)
                        .ok_or("AIGER map: input index out of range")?;
                    inputs.push((w[3].to_string(), bit, lit));
                }
                "output" => {
                    let lit = *out_lits
                        .get(idx)
                        .ok_or("AIGER map: output index out of range")?;
                    outputs.push((w[3].to_string(), bit, lit));
                }
                _ => {}
            }
        }
        Ok(Aig {
            max_var: m,
            inputs,
            outputs,
            output_lits: out_lits,
            ands,
        })
    }

    /// The literal of output `name` bit `bit`.
    pub fn output(&self, name: &str, bit: u32) -> Option<u32> {
        self.outputs
            .iter()
            .find(|(n, b, _)| n == name && *b == bit)
            .map(|x| x.2)
    }

    /// The literal of input `name` bit `bit`.
    pub fn input(&self, name: &str, bit: u32) -> Option<u32> {
        self.inputs
            .iter()
            .find(|(n, b, _)| n == name && *b == bit)
            .map(|x| x.2)
    }

    /// The graph restricted to the transitive fan-in of `roots` (AIGER literals): the AND
    /// gates outside it are dropped, variable numbers and inputs are kept. A miter with
    /// several outputs, one per lemma, is solved output by output on its cone.
    pub fn cone(&self, roots: &[u32]) -> Aig {
        let mut need = vec![false; self.max_var as usize + 1];
        let mut stack: Vec<u32> = roots.iter().map(|l| l >> 1).collect();
        let by_lhs: std::collections::HashMap<u32, usize> = self
            .ands
            .iter()
            .enumerate()
            .map(|(i, a)| (a.0 >> 1, i))
            .collect();
        while let Some(v) = stack.pop() {
            if v == 0 || std::mem::replace(&mut need[v as usize], true) {
                continue;
            }
            if let Some(&i) = by_lhs.get(&v) {
                let (_, r0, r1) = self.ands[i];
                stack.push(r0 >> 1);
                stack.push(r1 >> 1);
            }
        }
        Aig {
            max_var: self.max_var,
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
            output_lits: self.output_lits.clone(),
            ands: self
                .ands
                .iter()
                .filter(|a| need[(a.0 >> 1) as usize])
                .copied()
                .collect(),
        }
    }

    /// DIMACS literal of an AIGER literal; variable 0 (constant false) is `max_var + 1`,
    /// forced false by a unit clause of [`Aig::dimacs`].
    fn lit(&self, l: u32) -> i64 {
        let v = (l >> 1) as i64;
        let d = if v == 0 { self.max_var as i64 + 1 } else { v };
        if l & 1 == 1 {
            -d
        } else {
            d
        }
    }

    /// The CNF (DIMACS text) of "every literal of `must_hold` is true" over the graph, plus
    /// the unit clauses `units` (AIGER literal, value).
    pub fn dimacs(&self, must_hold: &[u32], units: &[(u32, bool)]) -> String {
        self.with_units(&self.clauses(must_hold), units)
    }

    /// The graph after structural hashing: AND gates of the same two inputs (in either order)
    /// are one gate, `a ∧ a` is `a`, `a ∧ ¬a` and `a ∧ 0` are 0, `a ∧ 1` is `a`; each gate
    /// keeps its variable number, inputs are unchanged. Returns the gates left and the literal
    /// each old literal became (`Aig::hashed_lit`). yosys's `aigmap` writes the two cores of
    /// a miter gate by gate, so their common parts (operand decoding, the significand product)
    /// come out twice: on the E4M3 FMA miter 34816 gates become 24793.
    ///
    /// With `subst`, proven equalities are merged as well: `subst[v]`, when it is a literal of
    /// an earlier variable (not `2v`), is one that gate `v` equals on every input
    /// (e.g. by SAT sweeping); the gate is dropped and its fan-out reads that literal.
    pub fn strash_with(&self, subst: Option<&[u32]>) -> (Vec<(u32, u32, u32)>, Vec<u32>) {
        // rep[v]: the literal variable v became (identity for inputs and the constant).
        let mut rep: Vec<u32> = (0..=self.max_var).map(|v| 2 * v).collect();
        let mut table: std::collections::HashMap<(u32, u32), u32> =
            std::collections::HashMap::with_capacity(self.ands.len());
        let mut ands = Vec::with_capacity(self.ands.len());
        for &(lhs, r0, r1) in &self.ands {
            let v = (lhs >> 1) as usize;
            if let Some(&to) = subst
                .and_then(|s| s.get(v))
                .filter(|&&to| ((to >> 1) as usize) < v)
            {
                rep[v] = rep[(to >> 1) as usize] ^ (to & 1);
                continue;
            }
            let at = |l: u32| rep[(l >> 1) as usize] ^ (l & 1);
            let (x, y) = (at(r0).min(at(r1)), at(r0).max(at(r1)));
            let r = if x == 0 || x == y ^ 1 {
                0
            } else if x == 1 {
                y
            } else if x == y {
                x
            } else {
                *table.entry((x, y)).or_insert_with(|| {
                    ands.push((lhs & !1, x, y));
                    lhs & !1
                })
            };
            rep[(lhs >> 1) as usize] = r;
        }
        (ands, rep)
    }

    /// The literal `l` of the graph in its structurally hashed form ([`Aig::strash_with`]).
    fn hashed_lit(rep: &[u32], l: u32) -> u32 {
        rep.get((l >> 1) as usize).map_or(l, |r| r ^ (l & 1))
    }

    /// The graph's clauses (the constant, three per AND gate of the structurally hashed graph
    /// (`Aig::strash_with`) in the fan-in of `must_hold`, one per `must_hold` literal) without
    /// the header: written once and shared by every cube ([`Aig::with_units`]). Input
    /// variables are the graph's, so cubes and models read the same bits.
    pub fn clauses(&self, must_hold: &[u32]) -> Clauses {
        self.clauses_with(must_hold, None)
    }

    /// [`Aig::clauses`] of the graph with the proven equalities `subst` merged
    /// ([`Aig::strash_with`]).
    pub fn clauses_with(&self, must_hold: &[u32], subst: Option<&[u32]>) -> Clauses {
        use std::fmt::Write as _;
        let (ands, rep) = self.strash_with(subst);
        let must: Vec<u32> = must_hold
            .iter()
            .map(|&l| Self::hashed_lit(&rep, l))
            .collect();
        let hashed = Aig {
            max_var: self.max_var,
            inputs: Vec::new(),
            outputs: Vec::new(),
            output_lits: Vec::new(),
            ands,
        }
        .cone(&must);
        let count = 1 + 3 * hashed.ands.len() + must.len();
        let mut s = String::with_capacity(24 * count);
        let _ = writeln!(s, "-{} 0", self.max_var + 1);
        for &(lhs, r0, r1) in &hashed.ands {
            let (a, b, c) = (self.lit(lhs), self.lit(r0), self.lit(r1));
            let _ = writeln!(s, "{} {b} 0\n{} {c} 0\n{a} {} {} 0", -a, -a, -b, -c);
        }
        for &l in &must {
            let _ = writeln!(s, "{} 0", self.lit(l));
        }
        Clauses {
            text: s,
            count,
            gates: hashed.ands.len(),
        }
    }

    /// DIMACS text of `clauses` plus the unit clauses `units` (AIGER literal, value).
    pub fn with_units(&self, clauses: &Clauses, units: &[(u32, bool)]) -> String {
        use std::fmt::Write as _;
        let mut s = String::with_capacity(clauses.text.len() + 16 * units.len() + 32);
        let _ = writeln!(
            s,
            "p cnf {} {}",
            self.max_var + 1,
            clauses.count + units.len()
        );
        s.push_str(&clauses.text);
        for &(l, v) in units {
            let d = self.lit(l);
            let _ = writeln!(s, "{} 0", if v { d } else { -d });
        }
        s
    }

    /// Input port values (hex, most significant first) from a CaDiCaL model (`v` lines).
    pub fn input_values(&self, model: &[bool]) -> Vec<(String, String)> {
        let mut ports: Vec<(String, Vec<(u32, bool)>)> = Vec::new();
        for (name, bit, lit) in &self.inputs {
            let var = (lit >> 1) as usize;
            let v = model.get(var).copied().unwrap_or(false) ^ (lit & 1 == 1);
            match ports.iter_mut().find(|(n, _)| n == name) {
                Some((_, bits)) => bits.push((*bit, v)),
                None => ports.push((name.clone(), vec![(*bit, v)])),
            }
        }
        ports
            .into_iter()
            .map(|(n, mut bits)| {
                bits.sort();
                let width = bits.last().map_or(1, |b| b.0 + 1);
                let mut digits = String::new();
                let nd = width.div_ceil(4);
                for d in (0..nd).rev() {
                    let mut x = 0u32;
                    for k in 0..4 {
                        let b = d * 4 + k;
                        if bits.iter().any(|&(i, v)| i == b && v) {
                            x |= 1 << k;
                        }
                    }
                    digits.push(char::from_digit(x, 16).unwrap_or('0'));
                }
                let t = digits.trim_start_matches('0');
                (
                    n,
                    if t.is_empty() {
                        "0".into()
                    } else {
                        t.to_string()
                    },
                )
            })
            .collect()
    }
}

/// Clauses without a DIMACS header, and how many.
#[derive(Clone, Debug)]
pub struct Clauses {
    text: String,
    count: usize,
    /// AND gates written (after structural hashing and the cone of the literals).
    gates: usize,
}

/// One cube: fixed input bits (port, bit, value) and a label.
#[derive(Clone, Debug)]
pub struct Cube {
    /// e.g. `z_i[30:27] = 7`.
    pub label: String,
    /// Fixed bits.
    pub fixed: Vec<(String, u32, bool)>,
}

/// The cubes over the top `bits` bits of `port[hi:lo]` (one cube without a split), middle
/// values first: for a biased exponent field the middle is where an addend meets the
/// product's range and the cubes are hardest (on the E4M3 FMA, the cubes 7 and 8 of 16 take
/// 80% of the time), so starting them first balances the parallel jobs.
pub fn cubes(split: Option<(&str, u32, u32)>, bits: u32) -> Vec<Cube> {
    let Some((port, hi, lo)) = split else {
        return vec![Cube {
            label: "whole miter".into(),
            fixed: Vec::new(),
        }];
    };
    let bits = bits.min(hi - lo + 1);
    let clo = hi + 1 - bits;
    let n = 1u32 << bits;
    let mut order: Vec<u32> = (0..n).collect();
    order.sort_by_key(|&v| (2 * v as i64 + 1 - n as i64).abs());
    order
        .into_iter()
        .map(|v| Cube {
            label: format!("{port}[{hi}:{clo}] = {v}"),
            fixed: (0..bits)
                .map(|k| (port.to_string(), clo + k, (v >> k) & 1 == 1))
                .collect(),
        })
        .collect()
}

/// What the cube runs said.
#[derive(Debug)]
pub struct CubeRun {
    /// Proven when every cube is unsatisfiable.
    pub verdict: Verdict,
    /// Wall time.
    pub seconds: f64,
    /// `CaDiCaL <version>`.
    pub solver: String,
    /// Size of the CNF.
    pub problem: String,
    /// Why there is no verdict / which cube failed, and per-cube times.
    pub detail: Option<String>,
    /// Counterexample inputs (port, hex).
    pub inputs: Vec<(String, String)>,
    /// Seconds per cube (label, seconds, verdict), in cube order.
    pub cube_seconds: Vec<(String, f64, Verdict)>,
}

/// `cadical --version` (best effort).
pub fn cadical_version(exe: &Path) -> String {
    Command::new(exe)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .map_or_else(|| "CaDiCaL".to_string(), |v| format!("CaDiCaL {v}"))
}

pub(crate) enum One {
    Unsat,
    Sat(Vec<bool>),
    Unknown(String),
}

/// Runs CaDiCaL on `cnf` with a wall-clock limit; the model is read from `out`.
pub(crate) fn run_one(
    exe: &Path,
    dir: &Path,
    tag: &str,
    cnf: &str,
    limit_secs: u64,
    stop: &AtomicBool,
    extra_args: &[&str],
) -> One {
    let cnf_path = dir.join(format!("{tag}.cnf"));
    let out_path = dir.join(format!("{tag}.out"));
    if let Err(e) = std::fs::write(&cnf_path, cnf) {
        return One::Unknown(format!("writing {}: {e}", cnf_path.display()));
    }
    let out = match std::fs::File::create(&out_path) {
        Ok(f) => f,
        Err(e) => return One::Unknown(format!("creating {}: {e}", out_path.display())),
    };
    let mut cmd = Command::new(exe);
    cmd.args(["-q", "-t", &limit_secs.max(1).to_string()])
        .args(extra_args)
        .arg(&cnf_path)
        .stdout(out)
        .stderr(Stdio::null());
    let status =
        match crate::tools::run_limited(&mut cmd, Duration::from_secs(limit_secs + 10), Some(stop))
        {
            Ok(s) => s,
            Err(e) => return One::Unknown(e),
        };
    let _ = std::fs::remove_file(&cnf_path);
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let Some(status) = status else {
        return One::Unknown("stopped".into());
    };
    let answer = text.lines().find(|l| l.starts_with("s "));
    match (status.code(), answer) {
        (Some(20), Some("s UNSATISFIABLE")) => One::Unsat,
        (Some(10), Some("s SATISFIABLE")) => {
            let mut model = Vec::new();
            for l in text.lines().filter_map(|l| l.strip_prefix("v ")) {
                for x in l.split_whitespace().filter_map(|t| t.parse::<i64>().ok()) {
                    let v = x.unsigned_abs() as usize;
                    if v == 0 {
                        continue;
                    }
                    if model.len() <= v {
                        model.resize(v + 1, false);
                    }
                    model[v] = x > 0;
                }
            }
            One::Sat(model)
        }
        (code, a) => One::Unknown(format!(
            "CaDiCaL ended with {} ({})",
            code.map_or("a signal".to_string(), |c| format!("exit code {c}")),
            a.unwrap_or("s UNKNOWN: time limit")
        )),
    }
}

/// Proves "no input makes every literal of `must_hold` true" cube by cube, `jobs` CaDiCaL
/// processes at a time, within `timeout_secs` of wall time for all cubes together. Stops at
/// the first satisfiable cube.
pub fn solve_cubes(
    exe: &Path,
    dir: &Path,
    aig: &Aig,
    must_hold: &[u32],
    cubes: &[Cube],
    jobs: usize,
    timeout_secs: u64,
) -> Result<CubeRun, String> {
    let t0 = Instant::now();
    let mut fixed = Vec::with_capacity(cubes.len());
    for c in cubes {
        let mut units = Vec::new();
        for (p, b, v) in &c.fixed {
            let l = aig
                .input(p, *b)
                .ok_or_else(|| format!("the miter has no input bit {p}[{b}] to split on"))?;
            units.push((l, *v));
        }
        fixed.push(units);
    }
    let base = aig.clauses(must_hold);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let results: Mutex<Vec<Option<(f64, One)>>> =
        Mutex::new((0..cubes.len()).map(|_| None).collect());
    let jobs = jobs.clamp(1, cubes.len().max(1));
    std::thread::scope(|s| {
        for w in 0..jobs {
            let (next, stop, results, fixed, base) = (&next, &stop, &results, &fixed, &base);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= cubes.len() || stop.load(Ordering::Relaxed) {
                    break;
                }
                let left = timeout_secs.saturating_sub(t0.elapsed().as_secs());
                let c0 = Instant::now();
                let r = if left == 0 {
                    One::Unknown("time limit".into())
                } else {
                    let cnf = aig.with_units(base, &fixed[i]);
                    run_one(exe, dir, &format!("cube{w}"), &cnf, left, stop, &[])
                };
                if !matches!(r, One::Unsat) {
                    stop.store(true, Ordering::Relaxed);
                }
                if let Ok(mut g) = results.lock() {
                    g[i] = Some((c0.elapsed().as_secs_f64(), r));
                }
            });
        }
    });
    let results = results.into_inner().map_err(|_| "a cube worker panicked")?;
    let mut cube_seconds = Vec::new();
    let mut verdict = Verdict::Proven;
    let mut detail = None;
    let mut inputs = Vec::new();
    let mut proven = 0;
    for (c, r) in cubes.iter().zip(results) {
        match r {
            Some((t, One::Unsat)) => {
                proven += 1;
                cube_seconds.push((c.label.clone(), t, Verdict::Proven));
            }
            Some((t, One::Sat(model))) => {
                if verdict != Verdict::Refuted {
                    verdict = Verdict::Refuted;
                    inputs = aig.input_values(&model);
                    detail = Some(format!("cube {} is satisfiable", c.label));
                }
                cube_seconds.push((c.label.clone(), t, Verdict::Refuted));
            }
            Some((t, One::Unknown(why))) => {
                if verdict == Verdict::Proven {
                    verdict = Verdict::NoVerdict;
                    detail = Some(format!("cube {}: {why}", c.label));
                }
                cube_seconds.push((c.label.clone(), t, Verdict::NoVerdict));
            }
            None => {
                if verdict == Verdict::Proven {
                    verdict = Verdict::NoVerdict;
                    detail = Some(format!("cube {} not run", c.label));
                }
            }
        }
    }
    if verdict == Verdict::NoVerdict {
        detail = Some(format!(
            "no verdict within {timeout_secs} s ({proven} of {} cubes proven; {})",
            cubes.len(),
            detail.unwrap_or_default()
        ));
    }
    let vars = aig.max_var + 1;
    let clauses = base.count;
    let gates = base.gates;
    Ok(CubeRun {
        verdict,
        seconds: t0.elapsed().as_secs_f64(),
        solver: cadical_version(exe),
        problem: format!(
            "CNF with {vars} variables and {clauses} clauses ({gates} AND gates after structural hashing, of {}), {} cube{} on {jobs} job{}",
            aig.ands.len(),
            cubes.len(),
            if cubes.len() == 1 { "" } else { "s" },
            if jobs == 1 { "" } else { "s" }
        ),
        detail,
        inputs,
        cube_seconds,
    })
}

/// The yosys script that writes the miter `top` in `dir` as ASCII AIGER (`miter.aag`,
/// `miter.map`) with the one output `bad`: formal statements removed (`bad` is the trigger
/// and the assumptions), the `trigger` port removed, word-level cells lowered to gates.
pub fn aiger_script(sources: &[&str], top: &str) -> String {
    let mut s = String::new();
    for f in sources {
        s.push_str(&format!("{}\n", crate::prove::read_cmd(f)));
    }
    s.push_str(&format!("prep -top {top}\n"));
    s.push_str(&format!(
        "flatten\nsetundef -anyseq\nchformal -remove\ndelete -port {top}/trigger\n"
    ));
    // A `case` table that yosys turned into a ROM (`proc_rom`, a `$mem_v2` cell) becomes
    // logic again; write_aiger takes gates and flip-flops only.
    s.push_str("memory_map\n");
    s.push_str("opt -fast\ntechmap\nopt -fast\naigmap\nopt_clean\n");
    s.push_str("write_aiger -ascii -map miter.map miter.aag\n");
    s
}

/// Reads `miter.aag` / `miter.map` from `dir`.
pub fn read_aiger(dir: &Path) -> Result<Aig, String> {
    let rd = |n: &str| -> Result<String, String> {
        let p: PathBuf = dir.join(n);
        std::fs::read_to_string(&p).map_err(|e| format!("reading {}: {e}", p.display()))
    };
    Aig::parse(&rd("miter.aag")?, &rd("miter.map")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    // out = a & !b  (aag 3 2 0 1 1)
    const AAG: &str = "aag 3 2 0 1 1\n2\n4\n6\n6 2 5\n";
    const MAP: &str = "input 0 0 a\ninput 1 0 b\noutput 0 0 out\n";

    #[test]
    fn parses_and_writes_tseitin_cnf() {
        let g = Aig::parse(AAG, MAP).unwrap();
        assert_eq!(g.input("a", 0), Some(2));
        assert_eq!(g.input("b", 0), Some(4));
        assert_eq!(g.output("out", 0), Some(6));
        let cnf = g.dimacs(&[6], &[(4, false)]);
        assert_eq!(
            cnf,
            "p cnf 4 6\n-4 0\n-3 1 0\n-3 -2 0\n3 -1 2 0\n3 0\n-2 0\n"
        );
    }

    /// Every assignment of the variables satisfying the DIMACS clauses (brute force).
    fn models(cnf: &str) -> Vec<Vec<bool>> {
        let mut lines = cnf.lines();
        let header = lines.next().unwrap();
        let n: usize = header.split_whitespace().nth(2).unwrap().parse().unwrap();
        let clauses: Vec<Vec<i64>> = lines
            .map(|l| {
                l.split_whitespace()
                    .map(|t| t.parse().unwrap())
                    .filter(|&x| x != 0)
                    .collect()
            })
            .collect();
        (0..1u32 << n)
            .map(|m| (0..=n).map(|v| v > 0 && (m >> (v - 1)) & 1 == 1).collect())
            .filter(|val: &Vec<bool>| {
                clauses
                    .iter()
                    .all(|c| c.iter().any(|&x| val[x.unsigned_abs() as usize] == (x > 0)))
            })
            .collect()
    }

    #[test]
    fn structural_hashing_merges_equal_gates_and_keeps_the_meaning() {
        // a = 2, b = 4; g6 = a & b, g8 = b & a (the same gate), g10 = g6 & !g8 (always 0),
        // g12 = a & !b, g14 = g6 | g12 = !(!g6 & !g12) as 15 (that is: a).
        let aag = "aag 7 2 0 3 5\n2\n4\n10\n15\n8\n6 2 4\n8 4 2\n10 6 9\n12 2 5\n14 7 13\n";
        let map = "input 0 0 a\ninput 1 0 b\noutput 0 0 zero\noutput 1 0 a_again\noutput 2 0 ab\n";
        let g = Aig::parse(aag, map).unwrap();
        let (ands, rep) = g.strash_with(None);
        assert_eq!(ands, vec![(6, 2, 4), (12, 2, 5), (14, 7, 13)]);
        assert_eq!(Aig::hashed_lit(&rep, 8), 6);
        assert_eq!(Aig::hashed_lit(&rep, 10), 0);
        assert_eq!(Aig::hashed_lit(&rep, 9), 7);
        // "zero" can never hold: the CNF has no gate left and no model.
        let cnf = g.dimacs(&[10], &[]);
        assert_eq!(cnf, "p cnf 8 2\n-8 0\n8 0\n");
        assert!(models(&cnf).is_empty());
        // g6 true and g8 false: contradictory once the two are one gate.
        assert!(models(&g.dimacs(&[6, 9], &[])).is_empty());
        // a_again (literal 15 = g6 | g12) holds exactly when a does, for both values of b.
        for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
            let cnf = g.dimacs(&[15], &[(2, a), (4, b)]);
            assert_eq!(models(&cnf).is_empty(), !a, "a = {a}, b = {b}");
        }
    }

    #[test]
    fn model_to_port_values() {
        let g = Aig::parse(
            "aag 3 3 0 0 0\n2\n4\n6\n",
            "input 0 0 z\ninput 1 1 z\ninput 2 4 z\n",
        )
        .unwrap();
        // z[0]=1, z[1]=0, z[4]=1 -> 0x11
        assert_eq!(
            g.input_values(&[false, true, false, true]),
            vec![("z".to_string(), "11".to_string())]
        );
    }

    #[test]
    fn cubes_cover_the_slice() {
        let c = cubes(Some(("z_i", 30, 23)), 4);
        assert_eq!(c.len(), 16);
        let mut labels: Vec<&str> = c.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels[..3],
            ["z_i[30:27] = 7", "z_i[30:27] = 8", "z_i[30:27] = 6"]
        );
        labels.sort();
        labels.dedup();
        assert_eq!(labels.len(), 16);
        assert_eq!(
            c[0].fixed,
            vec![
                ("z_i".to_string(), 27, true),
                ("z_i".to_string(), 28, true),
                ("z_i".to_string(), 29, true),
                ("z_i".to_string(), 30, false)
            ]
        );
        assert_eq!(cubes(None, 4).len(), 1);
        assert_eq!(cubes(Some(("x", 1, 0)), 4).len(), 4);
    }

    #[test]
    fn a_cone_keeps_the_fan_in_only() {
        // o1 = a & !b (gate 6), o2 = b & c (gate 10)
        let aag = "aag 5 3 0 2 2\n2\n4\n8\n6\n10\n6 2 5\n10 4 8\n";
        let map = "input 0 0 a\ninput 1 0 b\ninput 2 0 c\noutput 0 0 o1\noutput 1 0 o2\n";
        let g = Aig::parse(aag, map).unwrap();
        assert_eq!(g.cone(&[6]).ands, vec![(6, 2, 5)]);
        assert_eq!(g.cone(&[11]).ands, vec![(10, 4, 8)]);
        assert_eq!(g.cone(&[6, 10]).ands.len(), 2);
    }

    #[test]
    fn rejects_latches_and_garbage() {
        assert!(Aig::parse("aag 1 0 1 0 0\n2 3\n", "").is_err());
        assert!(Aig::parse("hello", "").is_err());
        assert!(Aig::parse("aag 3 2 0 1 1\n2\n", MAP).is_err());
    }
}
