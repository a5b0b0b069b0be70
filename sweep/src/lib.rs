//! # fp8gen sweeps: long work as jobs, Slurm job arrays, and the merge of their results
//!
//! Owns three things, shared by the CLI (`fp8gen sweep plan|slurm`, `fp8gen merge`) and the
//! tests:
//!
//! * **Plans** ([`SweepPlan`]): a verify sweep (the shards of one core's vector space,
//!   [`plan_verify`]), a proof matrix ([`plan_prove`]) or a QoR matrix ([`plan_qor`]) as a list
//!   of jobs, each one `fp8gen` command line whose JSON output is the job's result, with the
//!   work per job and an estimate of its time from rates measured on this machine (a
//!   calibration run of the same core for verify sweeps; the committed proof-time table and
//!   QoR table for the others).
//! * **Slurm** ([`write_slurm`], [`submit`]): an `sbatch` job-array script, one array task per
//!   job; each task writes `DIR/<job>.json` atomically (a temporary file renamed when the
//!   command produced a result), so re-running skips finished jobs and one failed task can be
//!   resubmitted alone (`--array` lists only the unfinished jobs).
//! * **Merge** ([`merge`]): verify shards into one summary (vectors, mismatches,
//!   counterexamples, missing and duplicated shards; refusing summaries of different cores or
//!   requests), proof reports into a table, synthesis points into `qor.csv` (rendered by
//!   `scripts/fpga/qor_sweep.py --replot`, the one QoR table writer).
#![forbid(unsafe_code)]

use rtl::GenRequest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Schema of `plan.json`.
pub const PLAN_SCHEMA: u32 = 1;

/// Slurm's default `MaxArraySize` is 1001: array indices 0 … 1000.
pub const MAX_ARRAY_INDEX: usize = 1000;

/// Why a sweep could not be planned, written or merged.
#[derive(Debug)]
pub enum SweepError {
    /// Bad options or inputs (exit 2).
    Usage(String),
    /// A tool or the file system failed (exit 1).
    Failed(String),
}

impl std::fmt::Display for SweepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SweepError::Usage(m) | SweepError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SweepError {}

fn usage(m: impl Into<String>) -> SweepError {
    SweepError::Usage(m.into())
}

fn failed(m: impl Into<String>) -> SweepError {
    SweepError::Failed(m.into())
}

fn verr(e: verify::VerifyError) -> SweepError {
    match e {
        verify::VerifyError::Usage(m) => SweepError::Usage(m),
        verify::VerifyError::Failed(m) => SweepError::Failed(m),
    }
}

/// What a sweep's jobs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// `fp8gen verify … --shard i/n --json`.
    Verify,
    /// `fp8gen prove … --json`.
    Prove,
    /// `fp8gen synth … --json`.
    Qor,
}

impl Kind {
    /// `verify`, `prove` or `qor`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Verify => "verify",
            Kind::Prove => "prove",
            Kind::Qor => "qor",
        }
    }
}

/// One job: one `fp8gen` command line; its standard output (JSON) is the result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// File name stem of the result (`DIR/<name>.json`); `[a-z0-9_.-]` only.
    pub name: String,
    /// Arguments after `fp8gen` (single tokens without blanks).
    pub args: Vec<String>,
    /// The work, in words (e.g. `4294967296 vectors`).
    pub work: String,
    /// Estimated seconds on one node of this machine's size.
    pub est_seconds: f64,
    /// What the job covers, for tables (unit, format, stages, target, shard …).
    pub labels: BTreeMap<String, String>,
}

/// A sweep: its jobs and how their time was estimated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    /// [`PLAN_SCHEMA`].
    pub schema: u32,
    /// What the jobs run.
    pub kind: Kind,
    /// The sweep in words (the canonical request for a verify sweep).
    pub what: String,
    /// `fp8gen <version>` that planned it.
    pub generator: String,
    /// Verify sweeps: the hash of the core's sources (every shard must report the same).
    pub core_hash: Option<String>,
    /// How the estimates were made (the measured rate and where it comes from).
    pub rate: String,
    /// The jobs, in array-index order.
    pub jobs: Vec<Job>,
}

impl SweepPlan {
    /// Estimated node-hours of all jobs.
    pub fn node_hours(&self) -> f64 {
        self.jobs.iter().map(|j| j.est_seconds).sum::<f64>() / 3600.0
    }

    /// The plan as text: a header, one line per job (at most `max_lines`, then a count).
    pub fn to_text(&self, max_lines: usize) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "sweep: {} ({} jobs, ~{:.2} node-hours; {})",
            self.what,
            self.jobs.len(),
            self.node_hours(),
            self.rate
        );
        for (i, j) in self.jobs.iter().enumerate() {
            if i == max_lines {
                let _ = writeln!(s, "  … {} more jobs", self.jobs.len() - max_lines);
                break;
            }
            let _ = writeln!(
                s,
                "  {i:>4} {:<44} {:>24}  ~{}  fp8gen {}",
                j.name,
                j.work,
                verify::human_time(j.est_seconds),
                j.args.join(" ")
            );
        }
        s
    }
}

fn generator() -> String {
    format!("fp8gen {}", env!("CARGO_PKG_VERSION"))
}

/// The request as `fp8gen` arguments (its canonical command without `fp8gen gen`).
pub fn request_args(req: &GenRequest) -> Vec<String> {
    req.canonical_command()
        .split_whitespace()
        .skip(2)
        .map(str::to_string)
        .collect()
}

/// A file-name stem: lower-case letters, digits and `.`; every other run of characters
/// becomes one `-`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// A verify sweep: one core's vector space split into shards.
#[derive(Clone, Debug)]
pub struct VerifySweep {
    /// The core.
    pub request: GenRequest,
    /// `Exhaustive` or `Random(n)` (n per mode combination).
    pub choice: verify::space::Choice,
    /// Seed of random vectors.
    pub seed: u64,
    /// Number of shards (= jobs).
    pub shards: u32,
    /// `--threads` of each job (0: every core of the node).
    pub threads: usize,
}

/// Measures this machine's rate on the sweep's own core: shard 0 of a split of the same space
/// sized to ~2^22 vectors, run now (a real check: its mismatches are returned too).
pub fn calibrate(sweep: &VerifySweep) -> Result<(f64, u64, u64), SweepError> {
    let dut = verify::Dut::generate(&sweep.request).map_err(verr)?;
    let mut plan = verify::Plan {
        choice: sweep.choice,
        seed: sweep.seed,
        threads: sweep.threads,
        ..verify::Plan::default()
    };
    let len = verify::space_len(&dut, &plan).map_err(verr)?;
    let count = (len >> 22).clamp(1, u32::MAX as u64) as u32;
    plan.shard = sim::Shard { index: 0, count };
    let rep = verify::run(&dut, &plan, None, &|_| {}).map_err(verr)?;
    let s = &rep.summary;
    let rate = if s.seconds > 0.0 {
        s.vectors as f64 / s.seconds
    } else {
        0.0
    };
    if rate <= 0.0 {
        return Err(failed("the calibration run compared no vectors"));
    }
    Ok((rate, s.vectors, s.mismatches))
}

/// Plans a verify sweep. `rate` (vectors/s per node) comes from [`calibrate`] or the user.
pub fn plan_verify(
    sweep: &VerifySweep,
    rate: f64,
    rate_note: &str,
) -> Result<SweepPlan, SweepError> {
    if sweep.shards == 0 {
        return Err(usage("--shards must be at least 1"));
    }
    if sweep.shards as usize > MAX_ARRAY_INDEX + 1 {
        return Err(usage(format!(
            "--shards {}: at most {} jobs per sweep (Slurm's default MaxArraySize); use fewer, larger shards",
            sweep.shards,
            MAX_ARRAY_INDEX + 1
        )));
    }
    if !(rate > 0.0 && rate.is_finite()) {
        return Err(usage(format!(
            "rate {rate}: not a positive number of vectors/s"
        )));
    }
    let dut = verify::Dut::generate(&sweep.request).map_err(verr)?;
    let plan = verify::Plan {
        choice: sweep.choice,
        seed: sweep.seed,
        ..verify::Plan::default()
    };
    let len = verify::space_len(&dut, &plan).map_err(verr)?;
    if (sweep.shards as u64) > len {
        return Err(usage(format!(
            "--shards {} for a {len}-vector space leaves shards empty; use at most {len}",
            sweep.shards
        )));
    }
    let mut base = vec!["verify".to_string()];
    base.extend(request_args(&sweep.request));
    match sweep.choice {
        verify::space::Choice::Exhaustive => base.push("--exhaustive".into()),
        verify::space::Choice::Random(n) => {
            base.extend(["--random".into(), n.to_string()]);
            base.extend(["--seed".into(), sweep.seed.to_string()]);
        }
        verify::space::Choice::Default => {}
    }
    if sweep.threads > 0 {
        base.extend(["--threads".into(), sweep.threads.to_string()]);
    }
    let stem = slug(&format!(
        "verify-{}-{}",
        sweep.request.unit.name(),
        verify::format_desc(&sweep.request)
    ));
    let n = sweep.shards;
    let digits = (n.max(2) - 1).to_string().len();
    let jobs = (0..n)
        .map(|i| {
            let shard = sim::Shard { index: i, count: n };
            let (lo, hi) = shard.range(len);
            let mut args = base.clone();
            args.extend(["--shard".into(), format!("{i}/{n}"), "--json".into()]);
            let mut labels = BTreeMap::new();
            labels.insert("shard".to_string(), format!("{i}/{n}"));
            Job {
                name: format!("{stem}-shard-{i:0digits$}-of-{n}"),
                args,
                work: format!("{} vectors", hi - lo),
                est_seconds: (hi - lo) as f64 / rate,
                labels,
            }
        })
        .collect();
    Ok(SweepPlan {
        schema: PLAN_SCHEMA,
        kind: Kind::Verify,
        what: format!(
            "{} {}, {len} vectors in {n} shards",
            sweep
                .request
                .canonical_command()
                .replacen("fp8gen gen", "fp8gen verify", 1),
            match sweep.choice {
                verify::space::Choice::Exhaustive => "--exhaustive".to_string(),
                verify::space::Choice::Random(k) => format!("--random {k} --seed {}", sweep.seed),
                verify::space::Choice::Default => "(default vectors)".to_string(),
            }
        ),
        generator: generator(),
        core_hash: Some(dut.sources.content_hash()),
        rate: format!("{rate:.3e} vectors/s per node, {rate_note}"),
        jobs,
    })
}

/// Proof times measured here (`make prove`, docs/prove-table.md), the estimates of proof
/// jobs: rows `| unit | format | rounding | saturation | verdict | seconds | … |`.
const PROVE_TABLE: &str = include_str!("../../docs/prove-table.md");

/// QoR points measured here (`make qor`, docs/qor/qor.csv), the estimates of QoR jobs.
const QOR_CSV: &str = include_str!("../../docs/qor/qor.csv");

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Seconds of a proof from the measured table: the same (unit, format, rounding), else the
/// mean of the unit's rows, else 600 s (the default time limit).
fn proof_estimate(unit: &str, format: &str, rounding: &str) -> f64 {
    let cells = |l: &str| -> Vec<String> { l.split('|').map(|c| c.trim().to_string()).collect() };
    // The seconds column by its header (the table gained an options column once).
    let col = PROVE_TABLE
        .lines()
        .find(|l| l.starts_with("| unit"))
        .and_then(|h| cells(h).iter().position(|c| c == "seconds"))
        .unwrap_or(6);
    let rows: Vec<Vec<String>> = PROVE_TABLE
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| unit"))
        .map(cells)
        .collect();
    let secs = |r: &Vec<String>| r.get(col).and_then(|s| s.parse::<f64>().ok());
    let exact: Vec<f64> = rows
        .iter()
        .filter(|r| r.len() > 6 && r[1] == unit && r[2] == format && r[3] == rounding)
        .filter_map(secs)
        .collect();
    let same_unit: Vec<f64> = rows
        .iter()
        .filter(|r| r.len() > 6 && r[1] == unit)
        .filter_map(secs)
        .collect();
    mean(&exact).or(mean(&same_unit)).unwrap_or(600.0)
}

/// Seconds of a synthesis point from the measured QoR table: the same (unit, format, stages,
/// target), else the mean of the (unit, target) rows, else of the target's, else 60 s.
fn qor_estimate(unit: &str, format: &str, stages: u32, target: &str) -> f64 {
    let mut lines = QOR_CSV.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n);
    let (Some(cu), Some(cf), Some(cs), Some(ct), Some(csec)) = (
        col("unit"),
        col("format"),
        col("stages"),
        col("target"),
        col("seconds"),
    ) else {
        return 60.0;
    };
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let pick = |f: &dyn Fn(&Vec<&str>) -> bool| -> Option<f64> {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.len() > csec && f(r))
            .filter_map(|r| r[csec].parse().ok())
            .collect();
        mean(&v)
    };
    let st = stages.to_string();
    pick(&|r| r[cu] == unit && r[cf] == format && r[cs] == st && r[ct] == target)
        .or_else(|| pick(&|r| r[cu] == unit && r[ct] == target))
        .or_else(|| pick(&|r| r[ct] == target))
        .unwrap_or(60.0)
}

/// A proof matrix: units × formats × roundings, one saturation mode.
#[derive(Clone, Debug)]
pub struct ProveSweep {
    /// `mul`, `fma`, `project`.
    pub units: Vec<String>,
    /// Format names.
    pub formats: Vec<String>,
    /// Rounding mode names.
    pub roundings: Vec<String>,
    /// Saturation mode name.
    pub saturation: String,
    /// `--timeout` of each proof, seconds.
    pub timeout_secs: u64,
}

fn check_token(what: &str, v: &str) -> Result<(), SweepError> {
    if v.is_empty()
        || !v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(usage(format!(
            "{what} '{v}': expected a name such as e4m3 (letters, digits, - _ .)"
        )));
    }
    Ok(())
}

/// Plans a proof matrix (estimates from the measured proof-time table).
pub fn plan_prove(p: &ProveSweep) -> Result<SweepPlan, SweepError> {
    let mut jobs = Vec::new();
    for u in &p.units {
        check_token("unit", u)?;
        // Which units have a proof reference is the prover's to say: every planned job is
        // checked as `fp8gen prove` would check it before the plan is written.
        if iface::Unit::parse(u).is_none() {
            return Err(usage(format!(
                "unit '{u}': expected {}",
                iface::Unit::list()
            )));
        }
        for f in &p.formats {
            check_token("format", f)?;
            golden::Format::parse(f).map_err(|e| usage(format!("format '{f}': {e}")))?;
            for r in &p.roundings {
                check_token("rounding", r)?;
                let args: Vec<String> = [
                    "prove",
                    "--unit",
                    u,
                    "--format",
                    f,
                    "--rounding",
                    r,
                    "--saturation",
                    &p.saturation,
                ]
                .iter()
                .map(|s| s.to_string())
                .chain([
                    "--timeout".to_string(),
                    p.timeout_secs.to_string(),
                    "--json".to_string(),
                ])
                .collect();
                let mut labels = BTreeMap::new();
                labels.insert("unit".into(), u.clone());
                labels.insert("format".into(), f.clone());
                labels.insert("rounding".into(), r.clone());
                labels.insert("saturation".into(), p.saturation.clone());
                jobs.push(Job {
                    name: slug(&format!("prove-{u}-{f}-{r}-{}", p.saturation)),
                    args,
                    work: "1 proof".into(),
                    est_seconds: proof_estimate(u, f, r).min(p.timeout_secs as f64),
                    labels,
                });
            }
        }
    }
    check_jobs(&jobs)?;
    Ok(SweepPlan {
        schema: PLAN_SCHEMA,
        kind: Kind::Prove,
        what: format!(
            "prove {} × {} × {} ({})",
            p.units.join(","),
            p.formats.join(","),
            p.roundings.join(","),
            p.saturation
        ),
        generator: generator(),
        core_hash: None,
        rate: "proof times measured here (docs/prove-table.md)".into(),
        jobs,
    })
}

/// A QoR matrix: units × formats × stages × targets.
#[derive(Clone, Debug)]
pub struct QorSweep {
    /// fp8gen units, or `int-mul8` (the integer reference, no format).
    pub units: Vec<String>,
    /// Format names.
    pub formats: Vec<String>,
    /// Stage counts.
    pub stages: Vec<u32>,
    /// Targets (`ecp5-25k`, `ice40-up5k`, …).
    pub targets: Vec<String>,
}

/// The `synth` options that select a QoR unit name: a unit (`mul`), `int-mul8`, or a dot
/// product `dot<N>` / `dot<N>-<scale format>` (N elements, binary32 result; the names of
/// `docs/qor/qor.csv` and `scripts/fpga/qor_sweep.py`).
pub fn qor_unit_args(u: &str) -> Result<Vec<String>, SweepError> {
    let bad = || {
        usage(format!(
            "unit '{u}': a dot product is dot<N> or dot<N>-<scale format>, e.g. dot8 or dot8-e8m0"
        ))
    };
    if let Some(from) = u.strip_prefix("convert-") {
        // convert-F: F converted to the row's format.
        golden::Format::parse(from).map_err(|e| usage(format!("unit '{u}': {e}")))?;
        return Ok(["--unit", "convert", "--in-format", from]
            .map(String::from)
            .to_vec());
    }
    match u.strip_prefix("dot") {
        Some(rest) if !rest.is_empty() => {
            let (n, scale) = match rest.split_once('-') {
                Some((n, s)) => (n, Some(s)),
                None => (rest, None),
            };
            let n: u32 = n.parse().map_err(|_| bad())?;
            let mut v: Vec<String> = ["--unit", "dot", "--n"].map(String::from).to_vec();
            v.push(n.to_string());
            if let Some(sf) = scale {
                golden::Format::parse(sf).map_err(|_| bad())?;
                v.extend(["--scale-format".to_string(), sf.to_string()]);
            }
            v.extend(["--out-format".to_string(), "binary32".to_string()]);
            Ok(v)
        }
        _ => Ok(vec!["--unit".to_string(), u.to_string()]),
    }
}

/// Plans a QoR matrix (estimates from the measured QoR table).
pub fn plan_qor(q: &QorSweep) -> Result<SweepPlan, SweepError> {
    let mut jobs = Vec::new();
    for u in &q.units {
        check_token("unit", u)?;
        let formats: Vec<String> = if u == "int-mul8" {
            vec!["-".into()]
        } else {
            q.formats.clone()
        };
        for f in &formats {
            if f != "-" {
                check_token("format", f)?;
                golden::Format::parse(f).map_err(|e| usage(format!("format '{f}': {e}")))?;
            }
            // The integer reference has 0, 1 or 2 stages (fpga::refcores::int_mul); like
            // scripts/fpga/qor_sweep.py, it is measured at the stage counts it has.
            let stages: Vec<u32> = if u == "int-mul8" {
                let v: Vec<u32> = q.stages.iter().copied().filter(|&s| s <= 2).collect();
                if v.is_empty() {
                    return Err(usage(
                        "int-mul8 has 0, 1 or 2 stages; none of the --stages lists one of them",
                    ));
                }
                v
            } else {
                q.stages.clone()
            };
            for &s in &stages {
                for t in &q.targets {
                    check_token("target", t)?;
                    let mut args = vec!["synth".to_string()];
                    args.extend(qor_unit_args(u)?);
                    if f != "-" {
                        args.extend(["--format".into(), f.clone()]);
                    }
                    args.extend([
                        "--stages".into(),
                        s.to_string(),
                        "--target".into(),
                        t.clone(),
                        "--json".into(),
                    ]);
                    let mut labels = BTreeMap::new();
                    labels.insert("unit".into(), u.clone());
                    labels.insert("format".into(), f.clone());
                    labels.insert("stages".into(), s.to_string());
                    labels.insert("target".into(), t.clone());
                    labels.insert("dsp".into(), "on".into());
                    jobs.push(Job {
                        name: slug(&format!(
                            "qor-{u}-{}-s{s}-{t}",
                            if f == "-" { "int" } else { f }
                        )),
                        args,
                        work: "1 synthesis + place and route".into(),
                        est_seconds: qor_estimate(u, f, s, t),
                        labels,
                    });
                }
            }
        }
    }
    check_jobs(&jobs)?;
    Ok(SweepPlan {
        schema: PLAN_SCHEMA,
        kind: Kind::Qor,
        what: format!(
            "qor {} × {} × stages {} × {}",
            q.units.join(","),
            q.formats.join(","),
            q.stages
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
            q.targets.join(",")
        ),
        generator: generator(),
        core_hash: None,
        rate: "synthesis times measured here (docs/qor/qor.csv)".into(),
        jobs,
    })
}

fn check_jobs(jobs: &[Job]) -> Result<(), SweepError> {
    if jobs.is_empty() {
        return Err(usage(
            "the sweep has no jobs: give at least one value per list",
        ));
    }
    if jobs.len() > MAX_ARRAY_INDEX + 1 {
        return Err(usage(format!(
            "{} jobs: at most {} per sweep (Slurm's default MaxArraySize); split the sweep",
            jobs.len(),
            MAX_ARRAY_INDEX + 1
        )));
    }
    let mut names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    names.sort();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(usage(format!("job {} is listed twice", w[0])));
    }
    Ok(())
}

/// Options of the job-array script.
#[derive(Clone, Debug)]
pub struct SlurmOptions {
    /// `#SBATCH --partition`.
    pub partition: Option<String>,
    /// `#SBATCH --time` (e.g. `2:00:00`).
    pub time: Option<String>,
    /// `#SBATCH --cpus-per-task`.
    pub cpus_per_task: u32,
    /// The `fp8gen` executable the tasks run (absolute; on a shared file system).
    pub fp8gen: PathBuf,
}

/// The written sweep directory.
#[derive(Clone, Debug)]
pub struct SlurmBatch {
    /// `DIR/sweep.sbatch`.
    pub script: PathBuf,
    /// Array indices of the jobs without a result.
    pub pending: Vec<usize>,
    /// Jobs with a result already.
    pub finished: usize,
}

/// `0-3,7,9-10` from sorted indices.
pub fn array_spec(idx: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && idx[j + 1] == idx[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            idx[i].to_string()
        } else {
            format!("{}-{}", idx[i], idx[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> SweepError {
    move |e| failed(format!("{what}: {e}"))
}

/// Writes a file through a temporary name and a rename (never half-written).
fn write_atomic(path: &Path, text: &str) -> Result<(), SweepError> {
    let tmp = path.with_extension("tmp-fp8gen");
    std::fs::write(&tmp, text).map_err(io(format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(io(format!("renaming to {}", path.display())))
}

fn check_safe(s: &str, what: &str) -> Result<(), SweepError> {
    if s.is_empty()
        || s.chars()
            .any(|c| c.is_whitespace() || "'\"\\$`;&|<>".contains(c))
    {
        return Err(usage(format!(
            "{what} '{s}': blanks and shell characters are not allowed"
        )));
    }
    Ok(())
}

/// `plan.json` of a sweep directory, if there is one (read as a user-named file:
/// [`iface::read_bounded`]).
fn read_plan(path: &Path) -> Result<Option<SweepPlan>, SweepError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    let text = iface::read_text_bounded(path, iface::MAX_JSON_BYTES, "sweep plans")
        .map_err(|e| usage(e.to_string()))?;
    let plan: SweepPlan = serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "{} is not a sweep plan ({e}); use an empty --out directory",
            path.display()
        ))
    })?;
    Ok(Some(plan))
}

/// What a sweep directory of `plan` holds that fp8gen wrote: `plan.json`, `jobs.tsv`,
/// `sweep.sbatch`, `qor.csv` (merge), their temporary names, `logs/` (Slurm's task logs),
/// each job's `<job>.json` and the task's temporary `.<job>.json.<id>.tmp`.
fn sweep_owns(plan: &SweepPlan) -> iface::outdir::Owns {
    let jobs: std::collections::BTreeSet<String> =
        plan.jobs.iter().map(|j| j.name.clone()).collect();
    Box::new(move |rel: &Path| {
        let mut parts = rel.components();
        let first = parts
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        if first == "logs" {
            return true;
        }
        if parts.next().is_some() {
            return false;
        }
        let n = first.as_str();
        const OWN: [&str; 8] = [
            "plan.json",
            "jobs.tsv",
            "sweep.sbatch",
            "qor.csv",
            "plan.tmp-fp8gen",
            "jobs.tmp-fp8gen",
            "sweep.tmp-fp8gen",
            "qor.tmp-fp8gen",
        ];
        if OWN.contains(&n) {
            return true;
        }
        if let Some(job) = n.strip_suffix(".json") {
            return jobs.contains(job);
        }
        // `.<job>.json.<Slurm job id>.tmp`
        n.strip_prefix('.')
            .and_then(|t| t.strip_suffix(".tmp"))
            .and_then(|t| t.rsplit_once(".json."))
            .is_some_and(|(job, id)| jobs.contains(job) && id.chars().all(|c| c.is_ascii_digit()))
    })
}

/// The `--out` directory must be new, empty, or an earlier sweep's ([`iface::outdir`]; the
/// same plan is then checked by [`write_slurm`]): nothing else is written into.
fn prepare_sweep_dir(dir: &Path) -> Result<(), SweepError> {
    use iface::outdir::{Earlier, OutDir, OutDirError, Rule};
    let earlier = |d: &Path| match read_plan(&d.join("plan.json")) {
        Ok(None) => Earlier::None,
        Ok(Some(p)) if p.generator.starts_with("fp8gen ") => Earlier::Owned(sweep_owns(&p)),
        Ok(Some(p)) => Earlier::Foreign(format!("generator '{}'", p.generator)),
        Err(e) => Earlier::Foreign(e.to_string()),
    };
    OutDir::prepare(
        dir,
        &Rule {
            command: "sweep slurm",
            option: "--out",
            replace: Ok(()),
            listing: "plan.json",
            earlier: &earlier,
            in_place: true,
        },
    )
    .map(|_| ())
    .map_err(|e| match e {
        OutDirError::Refused(m) => usage(m),
        OutDirError::Failed(m) => failed(m),
    })
}

/// Writes `DIR/plan.json`, `DIR/jobs.tsv` and `DIR/sweep.sbatch`. A directory that holds a
/// different plan is refused (results of two sweeps never mix); the same plan keeps its
/// finished results, and the script's `--array` lists only the jobs without one.
pub fn write_slurm(
    plan: &SweepPlan,
    dir: &Path,
    o: &SlurmOptions,
) -> Result<SlurmBatch, SweepError> {
    for j in &plan.jobs {
        check_safe(&j.name, "job name")?;
        for a in &j.args {
            check_safe(a, "job argument")?;
        }
    }
    if let Some(p) = &o.partition {
        check_safe(p, "--partition")?;
    }
    if let Some(t) = &o.time {
        check_safe(t, "--time")?;
    }
    if !o.fp8gen.is_absolute() {
        return Err(usage(format!(
            "the fp8gen executable {} must be an absolute path",
            o.fp8gen.display()
        )));
    }
    let fp8gen = o.fp8gen.display().to_string();
    check_safe(&fp8gen, "the fp8gen path")?;
    prepare_sweep_dir(dir)?;
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let dir = dir
        .canonicalize()
        .map_err(io(format!("resolving {}", dir.display())))?;
    let dir_s = dir.display().to_string();
    check_safe(&dir_s, "--out")?;
    let plan_path = dir.join("plan.json");
    if let Some(old) = read_plan(&plan_path)? {
        let same = old.kind == plan.kind
            && old.core_hash == plan.core_hash
            && old.jobs.len() == plan.jobs.len()
            && old
                .jobs
                .iter()
                .zip(&plan.jobs)
                .all(|(a, b)| a.name == b.name && a.args == b.args);
        if !same {
            return Err(usage(format!(
                "{} holds a different sweep ({}); use another --out directory",
                dir.display(),
                old.what
            )));
        }
    }
    let text = serde_json::to_string_pretty(plan).map_err(|e| failed(e.to_string()))?;
    write_atomic(&plan_path, &(text + "\n"))?;
    let mut tsv = String::new();
    for j in &plan.jobs {
        let _ = writeln!(tsv, "{}\t{}", j.name, j.args.join(" "));
    }
    write_atomic(&dir.join("jobs.tsv"), &tsv)?;
    std::fs::create_dir_all(dir.join("logs")).map_err(io(format!("creating {dir_s}/logs")))?;
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(s, "# fp8gen sweep ({}): {}", plan.kind.name(), plan.what);
    let _ = writeln!(
        s,
        "# {} jobs, ~{:.2} node-hours ({}). Written by {}.",
        plan.jobs.len(),
        plan.node_hours(),
        plan.rate,
        plan.generator
    );
    let _ = writeln!(
        s,
        "# Array task i runs line i+1 of jobs.tsv and keeps its JSON output as <job>.json (a\n\
         # temporary file renamed on success or on a reported difference); a task whose\n\
         # result exists exits at once, so `fp8gen sweep slurm` again resubmits only the rest."
    );
    let _ = writeln!(s, "#SBATCH --job-name=fp8gen-{}", plan.kind.name());
    let _ = writeln!(s, "#SBATCH --chdir={dir_s}");
    let _ = writeln!(s, "#SBATCH --output={dir_s}/logs/%A_%a.out");
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", o.cpus_per_task.max(1));
    if let Some(p) = &o.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    if let Some(t) = &o.time {
        let _ = writeln!(s, "#SBATCH --time={t}");
    }
    s.push_str(&format!(
        r#"set -euo pipefail
FP8GEN={fp8gen}
i=${{SLURM_ARRAY_TASK_ID:?submit with sbatch --array}}
line=$(sed -n "$((i + 1))p" jobs.tsv)
[ -n "$line" ] || {{ echo "no job $i in jobs.tsv" >&2; exit 2; }}
name=${{line%%$'\t'*}}
args=${{line#*$'\t'}}
if [ -s "$name.json" ]; then echo "$name: finished before, skipped"; exit 0; fi
tmp=".$name.json.${{SLURM_JOB_ID:-0}}.tmp"
echo "$name: fp8gen $args (host $(hostname), $(date -u +%FT%TZ))"
set +e
# shellcheck disable=SC2086 # one token per argument, written by fp8gen without blanks
"$FP8GEN" $args > "$tmp"
rc=$?
set -e
# 0: passed; 1: a result that reports a difference (kept for the merge); else: no result.
if [ "$rc" -le 1 ] && [ -s "$tmp" ]; then mv -f "$tmp" "$name.json"; else rm -f "$tmp"; fi
echo "$name: exit $rc"
exit "$rc"
"#
    ));
    let script = dir.join("sweep.sbatch");
    write_atomic(&script, &s)?;
    let pending: Vec<usize> = plan
        .jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| !result_exists(&dir, &j.name))
        .map(|(i, _)| i)
        .collect();
    Ok(SlurmBatch {
        script,
        finished: plan.jobs.len() - pending.len(),
        pending,
    })
}

fn result_exists(dir: &Path, name: &str) -> bool {
    std::fs::metadata(dir.join(format!("{name}.json"))).is_ok_and(|m| m.len() > 0)
}

/// Submits the pending jobs of a written sweep (`sbatch --parsable --array=…`); returns the
/// Slurm job id. `sbatch` missing or refusing is an error with its message.
pub fn submit(batch: &SlurmBatch) -> Result<String, SweepError> {
    if batch.pending.is_empty() {
        return Err(usage(
            "every job has a result: nothing to submit (run fp8gen merge)",
        ));
    }
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(format!("--array={}", array_spec(&batch.pending)))
        .arg(&batch.script)
        .output()
        .map_err(|e| {
            failed(format!(
                "running sbatch: {e}; is Slurm installed (Debian: slurm-wlm) and on PATH?"
            ))
        })?;
    if !out.status.success() {
        return Err(failed(format!(
            "sbatch failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(failed(format!("sbatch printed no job id: {}", text.trim())));
    }
    Ok(id)
}

/// One proof job's result row.
#[derive(Clone, Debug, Serialize)]
pub struct ProofRow {
    /// The result file.
    pub file: String,
    /// The optimized core.
    pub core: String,
    /// `proven`, `refuted`, `no-verdict`.
    pub verdict: String,
    /// Seconds.
    pub seconds: f64,
    /// Solver.
    pub solver: String,
}

/// The merged verify shards.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyMerge {
    /// The merged summary (schema of `sim::Summary`).
    pub summary: sim::Summary,
    /// Shards expected (from the split).
    pub shards_expected: u32,
    /// Shards with no result.
    pub missing_shards: Vec<u32>,
    /// Shards given more than once (counted once).
    pub duplicated_shards: Vec<u32>,
}

/// What `fp8gen merge` found.
#[derive(Clone, Debug, Serialize)]
pub struct MergeReport {
    /// The plan found next to the results, if any.
    pub plan: Option<String>,
    /// Verify shards, merged.
    pub verify: Option<VerifyMerge>,
    /// Proof results.
    pub proofs: Vec<ProofRow>,
    /// QoR points as rows of `qor.csv` (header [`QOR_COLUMNS`]).
    pub qor: Vec<Vec<String>>,
    /// Jobs of the plan without a result.
    pub missing_jobs: Vec<String>,
    /// Passed: something merged, no mismatch, no refutation or missing verdict, no gap.
    pub passed: bool,
    /// Why it did not pass, one line each.
    pub problems: Vec<String>,
}

/// Columns of `qor.csv` (as `scripts/fpga/qor_sweep.py` writes and reads them; the test
/// `qor_columns_are_the_sweep_scripts` keeps the two lists equal). Tables written before a
/// column existed have fewer columns, at the end.
pub const QOR_COLUMNS: [&str; 29] = [
    "unit",
    "format",
    "stages",
    "target",
    "dsp",
    "luts",
    "ffs",
    "carry",
    "dsp_blocks",
    "cells",
    "fmax_mhz",
    "target_mhz",
    "timing_met",
    "seconds",
    "error",
    "seeds",
    "fmax_min_mhz",
    "fmax_max_mhz",
    "pnr_luts",
    "crit_ns",
    "crit_logic_ns",
    "crit_route_ns",
    "crit_levels",
    "crit_carry",
    "crit_stage",
    "crit_from",
    "crit_to",
    "stage_ns",
    "model_levels",
];

/// nextpnr's placed logic cells (the `pnr_luts` column, as qor_sweep.py's `PNR_LUT_TYPES`):
/// ECP5 TRELLIS_COMB, iCE40 ICESTORM_LC, Gowin LUT4, of the whole placed design.
const PNR_LUT_TYPES: [&str; 3] = ["TRELLIS_COMB", "ICESTORM_LC", "LUT4"];

/// One `qor.csv` row ([`QOR_COLUMNS`]) of an `fp8gen synth --json` report `v`, with the
/// point's unit, format, stage count, target and DSP setting from its job's labels (`l`).
pub fn qor_row(l: &dyn Fn(&str) -> String, v: &serde_json::Value) -> Vec<String> {
    let n = |k: &str| match v.get(k) {
        Some(serde_json::Value::Null) | None => String::new(),
        Some(x) => x.to_string(),
    };
    let secs = v
        .get("seconds")
        .map(|s| {
            s.as_object()
                .map(|o| o.values().filter_map(|x| x.as_f64()).sum::<f64>())
                .unwrap_or(0.0)
        })
        .unwrap_or(0.0);
    let seeds = v
        .get("fmax_by_seed")
        .and_then(|x| x.as_array())
        .map_or(1, |a| a.len().max(1));
    let util = v.get("pnr_utilization");
    let pnr_luts = PNR_LUT_TYPES
        .iter()
        .find_map(|t| util.and_then(|u| u.get(t)).and_then(|e| e.get(0)))
        .map(|x| x.to_string())
        .unwrap_or_default();
    let cp = v.get("critical_path").filter(|c| !c.is_null());
    let c = |k: &str| match cp.and_then(|c| c.get(k)) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(x) => x.to_string(),
    };
    let stage = match (c("scope"), c("stage")) {
        (_, k) if k.is_empty() => String::new(),
        (s, k) if s.is_empty() => k,
        (s, k) => format!("{s}:{k}"),
    };
    let model = v
        .get("stage_model")
        .and_then(|m| m.as_array())
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    let scope = m.get("scope").and_then(|s| s.as_str()).unwrap_or("");
                    let levels: Vec<String> = m
                        .get("levels")
                        .and_then(|x| x.as_array())
                        .map(|a| a.iter().filter_map(|x| x.as_f64()))
                        .into_iter()
                        .flatten()
                        .map(|x| format!("{x:.1}"))
                        .collect();
                    let pre = if scope.is_empty() {
                        String::new()
                    } else {
                        format!("{scope}=")
                    };
                    format!("{pre}{}", levels.join("|"))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    vec![
        l("unit"),
        l("format"),
        l("stages"),
        l("target"),
        l("dsp"),
        n("luts"),
        n("ffs"),
        n("carry"),
        n("dsp"),
        n("cells"),
        n("fmax_mhz"),
        n("target_mhz"),
        if v.get("timing_met").and_then(|x| x.as_bool()) == Some(true) {
            "True".into()
        } else {
            "False".into()
        },
        format!("{secs:.1}"),
        String::new(),
        seeds.to_string(),
        n("fmax_min_mhz"),
        n("fmax_max_mhz"),
        pnr_luts,
        c("total_ns"),
        c("logic_ns"),
        c("routing_ns"),
        c("levels"),
        c("carry_arcs"),
        stage,
        c("from"),
        c("to"),
        stage_ns_cell(v.get("stage_times")),
        model,
    ]
}

/// The `stage_ns` cell of a report's `stage_times` (as qor_sweep.py's `stage_ns_cell`): per
/// instance scope `[scope=]ns|ns|…` ("-" for a stage without registers), and
/// `[scope.]other=ns` for the scope's registers outside the stages.
fn stage_ns_cell(times: Option<&serde_json::Value>) -> String {
    let times: Vec<&serde_json::Value> = times
        .and_then(|t| t.as_array())
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let scope = |t: &serde_json::Value| {
        t.get("scope")
            .and_then(|s| s.as_str())
            .unwrap_or("")
            .to_string()
    };
    let mut scopes: Vec<String> = Vec::new();
    for t in &times {
        if !scopes.contains(&scope(t)) {
            scopes.push(scope(t));
        }
    }
    let mut tokens = Vec::new();
    for sc in &scopes {
        let ns = |t: &serde_json::Value| t.get("ns").and_then(|x| x.as_f64()).unwrap_or(0.0);
        let mine: Vec<&&serde_json::Value> = times.iter().filter(|t| scope(t) == *sc).collect();
        let staged: Vec<(u64, f64)> = mine
            .iter()
            .filter_map(|t| t.get("stage").and_then(|k| k.as_u64()).map(|k| (k, ns(t))))
            .collect();
        if let Some(last) = staged.iter().map(|x| x.0).max() {
            let vals: Vec<String> = (0..=last)
                .map(|k| {
                    staged
                        .iter()
                        .find(|x| x.0 == k)
                        .map_or("-".to_string(), |x| format!("{:.2}", x.1))
                })
                .collect();
            let pre = if sc.is_empty() {
                String::new()
            } else {
                format!("{sc}=")
            };
            tokens.push(format!("{pre}{}", vals.join("|")));
        }
        for t in mine
            .iter()
            .filter(|t| t.get("stage").is_none_or(|k| k.is_null()))
        {
            let pre = if sc.is_empty() {
                String::new()
            } else {
                format!("{sc}.")
            };
            tokens.push(format!("{pre}other={:.2}", ns(t)));
        }
    }
    tokens.join(" ")
}

/// A CSV field: quoted (inner quotes doubled) when it holds a comma, a quote or a newline.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn read_json(p: &Path) -> Result<serde_json::Value, SweepError> {
    let text = iface::read_text_bounded(p, 64 << 20, "job results").map_err(|e| match e.io {
        Some(_) => failed(e.message),
        None => usage(e.message),
    })?;
    serde_json::from_str(&text)
        .map_err(|e| usage(format!("{}: not a JSON job result ({e})", p.display())))
}

/// Expands directories into their `*.json` files (sorted).
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, SweepError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(io(format!("listing {}", p.display())))?
                .flatten()
                .map(|e| e.path())
                .filter(|q| {
                    q.extension().is_some_and(|e| e == "json")
                        && !q
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect();
            v.sort();
            out.extend(v);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Merges job results (files or directories of them). A `plan.json` among them (or next to
/// them) names the expected jobs, so a missing result is a gap.
pub fn merge(paths: &[PathBuf]) -> Result<MergeReport, SweepError> {
    let files = expand(paths)?;
    if files.is_empty() {
        return Err(usage(
            "no result files given: fp8gen merge DIR or DIR/*.json",
        ));
    }
    let mut plan: Option<SweepPlan> = None;
    let mut plan_dir: Option<PathBuf> = None;
    let mut results = Vec::new();
    for f in &files {
        if f.file_name().is_some_and(|n| n == "plan.json") {
            let v = read_json(f)?;
            plan = Some(
                serde_json::from_value(v)
                    .map_err(|e| usage(format!("{}: not a sweep plan ({e})", f.display())))?,
            );
            plan_dir = f.parent().map(Path::to_path_buf);
        } else {
            results.push(f.clone());
        }
    }
    if plan.is_none() {
        if let Some(d) = results.first().and_then(|f| f.parent()) {
            let p = d.join("plan.json");
            if p.is_file() {
                plan = serde_json::from_value(read_json(&p)?).ok();
                plan_dir = Some(d.to_path_buf());
            }
        }
    }
    let mut problems = Vec::new();
    let mut summaries: Vec<(PathBuf, sim::Summary)> = Vec::new();
    let mut proofs = Vec::new();
    let mut proof_stems = std::collections::BTreeSet::new();
    let mut qor = Vec::new();
    let job_of = |f: &Path| -> Option<Job> {
        let stem = f.file_stem()?.to_string_lossy().to_string();
        plan.as_ref()?.jobs.iter().find(|j| j.name == stem).cloned()
    };
    for f in &results {
        let v = read_json(f)?;
        let name = f.display().to_string();
        if v.get("shards").is_some() && v.get("vectors").is_some() {
            let s: sim::Summary = serde_json::from_value(v)
                .map_err(|e| usage(format!("{name}: not a verify summary ({e})")))?;
            summaries.push((f.clone(), s));
        } else if let Some(arr) = v.as_array().filter(|a| {
            a.first()
                .is_some_and(|x| x.get("verdict").is_some() && x.get("statement").is_some())
        }) {
            if let Some(pl) = plan.as_ref().filter(|_| job_of(f).is_none()) {
                return Err(usage(format!(
                    "{name}: a proof report that is no job of plan.json ({}); merge only the sweep's own results",
                    pl.what
                )));
            }
            let stem = f
                .file_stem()
                .map(|x| x.to_string_lossy().to_string())
                .unwrap_or_default();
            if !proof_stems.insert(stem.clone()) {
                return Err(usage(format!(
                    "{name}: the result of job {stem} is given twice; give each result once"
                )));
            }
            for r in arr {
                let g = |k: &str| r.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
                proofs.push(ProofRow {
                    file: name.clone(),
                    core: format!("{} vs {}", g("gold"), g("gate")),
                    verdict: g("verdict"),
                    seconds: r.get("seconds").and_then(|x| x.as_f64()).unwrap_or(0.0),
                    solver: g("solver"),
                });
            }
        } else if v.get("fmax_mhz").is_some() && v.get("cells").is_some() {
            let job = job_of(f).ok_or_else(|| {
                usage(format!(
                    "{name}: a synthesis result without its job in plan.json (merge a sweep directory)"
                ))
            })?;
            let l = |k: &str| job.labels.get(k).cloned().unwrap_or_default();
            qor.push(qor_row(&l, &v));
        } else {
            return Err(usage(format!(
                "{name}: not a verify summary, proof report or synthesis report"
            )));
        }
    }
    let verify = merge_summaries(&summaries, plan.as_ref(), &mut problems)?;
    for p in &proofs {
        if p.verdict != "proven" {
            problems.push(format!("{}: {} ({})", p.file, p.verdict, p.core));
        }
    }
    let mut missing_jobs = Vec::new();
    if let (Some(pl), Some(d)) = (&plan, &plan_dir) {
        for j in &pl.jobs {
            if !result_exists(d, &j.name) {
                missing_jobs.push(j.name.clone());
            }
        }
        if !missing_jobs.is_empty() {
            problems.push(format!(
                "{} of {} jobs have no result: {}",
                missing_jobs.len(),
                pl.jobs.len(),
                missing_jobs.join(", ")
            ));
        }
    }
    let merged_any = verify.is_some() || !proofs.is_empty() || !qor.is_empty();
    if !merged_any {
        problems.push("nothing to merge".into());
    }
    Ok(MergeReport {
        plan: plan.as_ref().map(|p| p.what.clone()),
        verify,
        proofs,
        qor,
        missing_jobs,
        passed: merged_any && problems.is_empty(),
        problems,
    })
}

/// The vectors a summary's shards hold: each shard's part of the space ([`sim::Shard::range`];
/// a stream run splits its streams, each `cycles` long). A summary whose `vectors` or
/// `mismatches` disagree with its shards was edited or truncated: refused.
fn check_shard_counts(f: &Path, s: &sim::Summary) -> Result<(), SweepError> {
    let space_words = s.meta.get("space").cloned().unwrap_or_default();
    // `random streams: N streams x C cycles ...`
    let streams = space_words.strip_prefix("random streams: ").and_then(|r| {
        let mut w = r.split_whitespace();
        let n = w.next()?.parse::<u64>().ok()?;
        let _ = w.next()?;
        let _ = w.next()?;
        let c = w.next()?.parse::<u64>().ok()?;
        Some((n, c))
    });
    let part = |sh: &sim::Shard| -> u64 {
        match streams {
            Some((n, c)) => {
                let (lo, hi) = sh.range(n);
                (hi - lo) * c
            }
            None => {
                let (lo, hi) = sh.range(s.space);
                hi - lo
            }
        }
    };
    let expected: u64 = s.shards.iter().map(part).sum();
    let shards: Vec<String> = s.shards.iter().map(|x| x.to_string()).collect();
    let bad_count = if s.complete {
        s.vectors != expected
    } else {
        s.vectors > expected
    };
    if bad_count {
        return Err(usage(format!(
            "{}: shard {} of a {}-vector space holds {expected} vectors, but the summary says {} ({}); the file was edited or is from another run: re-run the shard",
            f.display(),
            shards.join(","),
            s.space,
            s.vectors,
            if s.complete { "complete" } else { "incomplete" }
        )));
    }
    // (The x/z check adds up to two mismatches per vector it ran, at most one per vector.)
    let per_port: u64 = s.mismatches_per_port.values().copied().max().unwrap_or(0);
    let cex = s.counterexamples.len() as u64;
    if s.mismatches > s.vectors.saturating_mul(3)
        || (s.mismatches == 0 && (per_port > 0 || cex > 0))
        || per_port > s.mismatches
    {
        return Err(usage(format!(
            "{}: {} mismatches over {} vectors ({per_port} on one port, {cex} counterexamples) do not add up; the file was edited: re-run the shard",
            f.display(),
            s.mismatches,
            s.vectors,
        )));
    }
    Ok(())
}

fn merge_summaries(
    summaries: &[(PathBuf, sim::Summary)],
    plan: Option<&SweepPlan>,
    problems: &mut Vec<String>,
) -> Result<Option<VerifyMerge>, SweepError> {
    let Some((f0, first)) = summaries.first() else {
        return Ok(None);
    };
    let key = |s: &sim::Summary| {
        (
            s.meta.get("request").cloned().unwrap_or_default(),
            s.meta.get("core_hash").cloned().unwrap_or_default(),
            s.meta.get("generator").cloned().unwrap_or_default(),
        )
    };
    let k0 = key(first);
    if k0.1.is_empty() {
        return Err(usage(format!(
            "{}: the summary has no core_hash (written by an older fp8gen); re-run it",
            f0.display()
        )));
    }
    if let Some(h) = plan.and_then(|p| p.core_hash.as_ref()) {
        if *h != k0.1 {
            return Err(usage(format!(
                "{}: core {} is not the core of plan.json ({h}); merge refuses to combine different cores",
                f0.display(),
                k0.1
            )));
        }
    }
    let mut by_shard: BTreeMap<u32, usize> = BTreeMap::new();
    let mut duplicated = Vec::new();
    let mut count = None;
    for (n, (f, s)) in summaries.iter().enumerate() {
        if key(s) != k0 {
            let k = key(s);
            return Err(usage(format!(
                "{} and {} are runs of different cores or requests ({} {} vs {} {}); merge refuses to combine them",
                f0.display(),
                f.display(),
                k0.0,
                k0.1,
                k.0,
                k.1
            )));
        }
        check_shard_counts(f, s)?;
        if let Some(pl) = plan {
            // The plan's job of each shard says how many vectors it holds.
            for sh in &s.shards {
                let want = pl
                    .jobs
                    .iter()
                    .find(|j| j.labels.get("shard") == Some(&sh.to_string()))
                    .and_then(|j| j.work.strip_suffix(" vectors")?.parse::<u64>().ok());
                let (lo, hi) = sh.range(s.space);
                if want.is_some_and(|w| w != hi - lo) {
                    return Err(usage(format!(
                        "{}: shard {sh} of plan.json holds {} vectors, the summary's space gives it {}; the file was edited or is from another plan",
                        f.display(),
                        want.unwrap_or(0),
                        hi - lo
                    )));
                }
            }
        }
        if let Some(k) = first
            .meta
            .keys()
            .chain(s.meta.keys())
            .find(|k| first.meta.get(*k) != s.meta.get(*k))
        {
            let v = |x: &sim::Summary| x.meta.get(k).cloned().unwrap_or_else(|| "-".into());
            return Err(usage(format!(
                "{} and {} are different runs: {k} {} vs {k} {}; merge combines shards of one run only (same seed, space and modes)",
                f0.display(),
                f.display(),
                v(first),
                v(s)
            )));
        }
        for sh in &s.shards {
            match count {
                None => count = Some(sh.count),
                Some(c) if c != sh.count => {
                    return Err(usage(format!(
                        "{}: shard {sh} is from a split into {} parts, the others into {c}",
                        f.display(),
                        sh.count
                    )))
                }
                _ => {}
            }
            if by_shard.insert(sh.index, n).is_some() {
                duplicated.push(sh.index);
            }
        }
    }
    let count = count.unwrap_or(0);
    // Each summary whose shards are kept is merged once.
    let mut kept: Vec<usize> = by_shard.values().copied().collect();
    kept.sort_unstable();
    kept.dedup();
    let mut merged: Option<sim::Summary> = None;
    for n in kept {
        let s = &summaries[n].1;
        merged = Some(match merged {
            None => s.clone(),
            Some(m) => m.merge(s).map_err(|e| usage(e.to_string()))?,
        });
    }
    let summary = merged.ok_or_else(|| usage("no shards in the summaries"))?;
    let missing: Vec<u32> = (0..count).filter(|i| !by_shard.contains_key(i)).collect();
    if summary.mismatches > 0 {
        problems.push(format!(
            "{} mismatching vectors of {}",
            summary.mismatches, summary.vectors
        ));
    }
    if !summary.complete {
        problems.push("a shard stopped before its last vector".into());
    }
    if summary.vectors == 0 {
        problems.push("no vector was compared: nothing was checked".into());
    }
    if !missing.is_empty() {
        problems.push(format!(
            "{} of {count} shards missing: {}",
            missing.len(),
            missing
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    if !duplicated.is_empty() {
        problems.push(format!(
            "shards given twice (counted once): {}",
            duplicated
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    Ok(Some(VerifyMerge {
        summary,
        shards_expected: count,
        missing_shards: missing,
        duplicated_shards: duplicated,
    }))
}

/// Writes the QoR rows as `qor.csv` in `dir` (atomically) and returns its path. An existing
/// `qor.csv` is replaced only when it is a QoR table (its first line the [`QOR_COLUMNS`]
/// header fp8gen and `scripts/fpga/qor_sweep.py` write): another file of that name is never
/// overwritten.
pub fn write_qor_csv(rows: &[Vec<String>], dir: &Path) -> Result<PathBuf, SweepError> {
    let header = QOR_COLUMNS.join(",");
    let p = dir.join("qor.csv");
    if std::fs::symlink_metadata(&p).is_ok() {
        // this header, or an older one (the same columns, fewer of them at the end)
        let known = |first: &str| {
            first.starts_with(&QOR_COLUMNS[..15].join(","))
                && (header == first || header.starts_with(&format!("{first},")))
        };
        let ours = iface::read_text_bounded(&p, 256 << 20, "QoR tables")
            .is_ok_and(|t| t.lines().next().is_some_and(known));
        if !ours {
            return Err(usage(format!(
                "{} exists and is not a QoR table fp8gen wrote; move it away or give --qor-out another directory",
                p.display()
            )));
        }
    }
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let mut s = header;
    s.push('\n');
    for r in rows {
        let fields: Vec<String> = r.iter().map(|f| csv_field(f)).collect();
        s.push_str(&fields.join(","));
        s.push('\n');
    }
    write_atomic(&p, &s)?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_are_file_stems() {
        assert_eq!(
            slug("verify-mul-e4m3 × e5m2 → e4m3"),
            "verify-mul-e4m3-e5m2-e4m3"
        );
        assert_eq!(slug("qor-int-mul8-s0-ecp5-25k"), "qor-int-mul8-s0-ecp5-25k");
    }

    #[test]
    fn array_specs_compress_runs() {
        assert_eq!(array_spec(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(array_spec(&[5]), "5");
        assert_eq!(array_spec(&[]), "");
    }

    #[test]
    fn estimates_come_from_the_measured_tables() {
        let mul = proof_estimate("mul", "e4m3", "rne");
        assert!(mul > 0.1 && mul < 60.0, "{mul}");
        assert_eq!(proof_estimate("nope", "x", "y"), 600.0);
        let q = qor_estimate("mul", "e4m3", 0, "ecp5-25k");
        assert!(q > 0.5 && q < 600.0, "{q}");
    }

    #[test]
    fn bad_names_are_refused() {
        let p = ProveSweep {
            units: vec!["mul".into()],
            formats: vec!["e4m3; rm -rf /".into()],
            roundings: vec!["rne".into()],
            saturation: "satfinite".into(),
            timeout_secs: 60,
        };
        let e = plan_prove(&p).unwrap_err().to_string();
        assert!(e.contains("format 'e4m3; rm -rf /'"), "{e}");
        let p = ProveSweep {
            units: vec!["decode".into()],
            ..p
        };
        assert!(plan_prove(&p).is_err());
    }

    #[test]
    fn qor_row_has_every_column_of_a_synth_report() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"luts": 707, "ffs": 237, "carry": 85, "dsp": 0, "cells": 1103,
                "fmax_mhz": 108.4, "target_mhz": 100.0, "timing_met": true,
                "fmax_by_seed": [[1, 109.76], [2, 108.4], [3, 108.2]],
                "fmax_min_mhz": 108.2, "fmax_max_mhz": 109.76,
                "pnr_utilization": {"TRELLIS_COMB": [928, 24288], "TRELLIS_FF": [310, 24288]},
                "seconds": {"yosys": 10.0, "nextpnr": 20.5},
                "critical_path": {"total_ns": 9.111, "logic_ns": 3.951, "routing_ns": 5.16,
                    "levels": 5, "carry_arcs": 28, "from": "dut.u_round.acc_i",
                    "to": "dut.u_round.onrm_t5_c_q1", "scope": "u_round", "stage": 0, "seed": 2},
                "stage_times": [{"scope": "", "stage": null, "ns": 2.5, "to": "dut.acc_q"},
                    {"scope": "u_round", "stage": 0, "ns": 9.111, "to": "dut.u_round.x_q1"},
                    {"scope": "u_round", "stage": 2, "ns": 7.0, "to": "out_r"}],
                "stage_model": [{"scope": "u_term", "levels": [6.4, 6.8], "ns": [5.5, 5.8]},
                    {"scope": "u_round", "levels": [11.8, 12.0, 10.2], "ns": [8.4, 8.6, 7.6]}]}"#,
        )
        .unwrap();
        let labels = |k: &str| match k {
            "unit" => "mac-exact".to_string(),
            "format" => "e4m3".to_string(),
            "stages" => "4".to_string(),
            "target" => "ecp5-25k".to_string(),
            _ => "on".to_string(),
        };
        let row = qor_row(&labels, &v);
        assert_eq!(row.len(), QOR_COLUMNS.len());
        let col = |k: &str| row[QOR_COLUMNS.iter().position(|c| *c == k).unwrap()].as_str();
        assert_eq!(col("unit"), "mac-exact");
        assert_eq!(col("cells"), "1103");
        assert_eq!(col("seconds"), "30.5");
        assert_eq!(col("seeds"), "3");
        assert_eq!(
            (col("fmax_min_mhz"), col("fmax_max_mhz")),
            ("108.2", "109.76")
        );
        assert_eq!(col("pnr_luts"), "928", "nextpnr's placed TRELLIS_COMB");
        assert_eq!((col("crit_ns"), col("crit_route_ns")), ("9.111", "5.16"));
        assert_eq!((col("crit_levels"), col("crit_carry")), ("5", "28"));
        assert_eq!(col("crit_stage"), "u_round:0");
        assert_eq!(
            (col("crit_from"), col("crit_to")),
            ("dut.u_round.acc_i", "dut.u_round.onrm_t5_c_q1")
        );
        assert_eq!(col("model_levels"), "u_term=6.4|6.8 u_round=11.8|12.0|10.2");
        assert_eq!(col("stage_ns"), "other=2.50 u_round=9.11|-|7.00");
        // A report from before the critical path and the placed-cell count: empty cells.
        let old: serde_json::Value = serde_json::from_str(
            r#"{"luts": 1, "ffs": 0, "carry": 0, "dsp": 1, "cells": 1, "fmax_mhz": 146.95,
                "target_mhz": 100.0, "timing_met": true, "pnr_utilization": {}}"#,
        )
        .unwrap();
        let row = qor_row(&labels, &old);
        let col = |k: &str| row[QOR_COLUMNS.iter().position(|c| *c == k).unwrap()].as_str();
        assert_eq!(
            (col("pnr_luts"), col("crit_ns"), col("crit_stage")),
            ("", "", "")
        );
        assert_eq!(
            (col("seeds"), col("model_levels"), col("stage_ns")),
            ("1", "", "")
        );
    }

    #[test]
    fn qor_columns_are_the_sweep_scripts() {
        let py = include_str!("../../scripts/fpga/qor_sweep.py");
        let start = py.find("\nCOLUMNS = [").expect("COLUMNS in qor_sweep.py");
        let body = &py[start..];
        let body = &body[..body.find(']').unwrap()];
        let cols: Vec<&str> = body
            .split('"')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, c)| c)
            .collect();
        assert_eq!(cols, QOR_COLUMNS);
    }

    #[test]
    fn qor_csv_replaces_only_a_qor_table() {
        let d = tempfile::tempdir().unwrap();
        let row = vec![vec!["mul".to_string(); QOR_COLUMNS.len()]];
        let p = write_qor_csv(&row, d.path()).unwrap();
        write_qor_csv(&row, d.path()).expect("an earlier table is replaced");
        // a table with the header of an older fp8gen (fewer columns) is replaced too
        std::fs::write(&p, format!("{}\nmul\n", QOR_COLUMNS[..19].join(","))).unwrap();
        write_qor_csv(&row, d.path()).expect("an older table is replaced");
        // a field with a comma is quoted
        let mut quoted = row.clone();
        quoted[0][14] = "error: a, b".into();
        write_qor_csv(&quoted, d.path()).unwrap();
        assert!(std::fs::read_to_string(&p)
            .unwrap()
            .contains(",\"error: a, b\","));
        std::fs::write(&p, "name,phone\nAda,123\n").unwrap();
        let e = write_qor_csv(&row, d.path()).unwrap_err().to_string();
        assert!(e.ends_with("qor.csv exists and is not a QoR table fp8gen wrote; move it away or give --qor-out another directory"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "name,phone\nAda,123\n"
        );
    }

    #[test]
    fn qor_dot_names_select_the_dot_unit() {
        assert_eq!(
            qor_unit_args("dot8-e8m0").unwrap().join(" "),
            "--unit dot --n 8 --scale-format e8m0 --out-format binary32"
        );
        assert_eq!(
            qor_unit_args("dot4").unwrap().join(" "),
            "--unit dot --n 4 --out-format binary32"
        );
        assert_eq!(qor_unit_args("mul").unwrap().join(" "), "--unit mul");
        assert!(qor_unit_args("dotx").is_err());
    }
}
