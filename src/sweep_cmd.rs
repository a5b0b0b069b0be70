//! `fp8gen sweep plan|slurm` and `fp8gen merge`: arguments and printing only; plans, the
//! job-array script and the merge live in the `sweep` crate.

use crate::args::parse_count;
use crate::args::CliError;
use crate::request::GenArgs;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use verify::space::Choice;

/// What a sweep runs.
#[derive(Subcommand, Debug, Clone)]
pub enum SweepWhat {
    /// Shards of one core's vector space: `fp8gen verify … --shard i/n --json` per job.
    Verify(Box<VerifySweepArgs>),
    /// A proof matrix: `fp8gen prove … --json` per (unit, format, rounding).
    Prove(ProveSweepArgs),
    /// A QoR matrix: `fp8gen synth … --json` per (unit, format, stages, target).
    Qor(QorSweepArgs),
}

/// Where and how (shared by every sweep kind).
#[derive(Args, Debug, Clone)]
pub struct SweepOut {
    /// JSON output (the plan; for `slurm`, the plan and the submission).
    #[arg(long)]
    pub json: bool,
    /// `slurm`: the sweep directory (plan.json, jobs.tsv, sweep.sbatch, one `<job>.json` per
    /// finished job, logs/): new, empty, or the same sweep's (a directory holding anything
    /// else is refused).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// `slurm`: #SBATCH --partition.
    #[arg(long)]
    pub partition: Option<String>,
    /// `slurm`: #SBATCH --time (e.g. 2:00:00).
    #[arg(long)]
    pub time: Option<String>,
    /// `slurm`: #SBATCH --cpus-per-task (default: the job's --threads, else 1 for proofs and
    /// QoR, else every core of this machine).
    #[arg(long)]
    pub cpus_per_task: Option<u32>,
    /// `slurm`: submit the unfinished jobs with sbatch and print the job id.
    #[arg(long)]
    pub submit: bool,
}

/// `sweep … verify`.
#[derive(Args, Debug, Clone)]
pub struct VerifySweepArgs {
    #[command(flatten)]
    pub gen: GenArgs,
    /// Every input of the core (split into the shards).
    #[arg(long)]
    pub exhaustive: bool,
    /// N random vectors per mode combination (1e9, 2^32 … accepted).
    #[arg(long, value_parser = parse_count)]
    pub random: Option<u64>,
    /// Seed of the random vectors.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of shards (one job each).
    #[arg(long)]
    pub shards: u32,
    /// --threads of each job (default: every core of the node).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Vectors/s of one node for the estimate, instead of measuring it now on this machine.
    #[arg(long)]
    pub rate: Option<f64>,
    #[command(flatten)]
    pub out: SweepOut,
}

/// `sweep … prove`.
#[derive(Args, Debug, Clone)]
pub struct ProveSweepArgs {
    /// Units (comma-separated): mul, fma, project.
    #[arg(long, value_delimiter = ',', default_value = "fma,mul,project")]
    pub units: Vec<String>,
    /// Formats (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "e4m3,e5m2,e4m3fnuz,binary8p3se"
    )]
    pub formats: Vec<String>,
    /// Rounding modes (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "rne,rna,rtp,rtn,rtz,rto")]
    pub roundings: Vec<String>,
    /// Saturation mode.
    #[arg(long, default_value = "satfinite")]
    pub saturation: String,
    /// --timeout of each proof, seconds.
    #[arg(long, default_value_t = 3600)]
    pub timeout: u64,
    #[command(flatten)]
    pub out: SweepOut,
}

/// `sweep … qor`.
#[derive(Args, Debug, Clone)]
pub struct QorSweepArgs {
    /// Units (comma-separated): fp8gen units and int-mul8 (the integer reference).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "int-mul8,project,mul,fma"
    )]
    pub units: Vec<String>,
    /// Formats (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "e4m3,e5m2")]
    pub formats: Vec<String>,
    /// Stage counts (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,3")]
    pub stages: Vec<u32>,
    /// Targets (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "ecp5-25k,ice40-up5k")]
    pub targets: Vec<String>,
    #[command(flatten)]
    pub out: SweepOut,
}

/// `fp8gen sweep plan|slurm`.
#[derive(Subcommand, Debug, Clone)]
pub enum SweepCmd {
    /// Print the jobs of a sweep, the work per job and the estimated node-hours.
    Plan {
        #[command(subcommand)]
        what: SweepWhat,
    },
    /// Write the sweep as a Slurm job array (DIR/sweep.sbatch) and, with --submit, submit it.
    Slurm {
        #[command(subcommand)]
        what: SweepWhat,
    },
}

fn serr(e: sweep::SweepError) -> CliError {
    match e {
        sweep::SweepError::Usage(m) => CliError::usage(m),
        sweep::SweepError::Failed(m) => CliError::failed(m),
    }
}

fn plan_of(what: &SweepWhat) -> Result<(sweep::SweepPlan, &SweepOut, u32), CliError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    match what {
        SweepWhat::Verify(a) => {
            let choice = match (a.exhaustive, a.random) {
                (true, None) => Choice::Exhaustive,
                (false, Some(n)) if n > 0 => Choice::Random(n),
                (false, Some(_)) => {
                    return Err(CliError::usage(
                        "--random 0 checks nothing; give a positive count",
                    ))
                }
                (true, Some(_)) => {
                    return Err(CliError::usage(
                        "--exhaustive and --random exclude each other",
                    ))
                }
                (false, None) => {
                    return Err(CliError::usage(
                        "a verify sweep needs --exhaustive or --random N",
                    ))
                }
            };
            let s = sweep::VerifySweep {
                request: a.gen.request()?,
                choice,
                seed: a.seed,
                shards: a.shards,
                threads: a.threads,
            };
            let (rate, note) = match a.rate {
                Some(r) => (r, "given with --rate".to_string()),
                None => {
                    if !a.out.json {
                        eprintln!("measuring this machine's rate on the same core…");
                    }
                    let (r, v, m) = {
                        let _quiet = crate::out::CoreOutputToStderr::new()?;
                        sweep::calibrate(&s).map_err(serr)?
                    };
                    if m > 0 {
                        return Err(CliError::failed(format!(
                            "the calibration run found {m} mismatching vectors of {v}: the core is wrong; run fp8gen verify on it"
                        )));
                    }
                    (
                        r,
                        format!("measured now on this machine ({v} vectors, 0 mismatches)"),
                    )
                }
            };
            let plan = sweep::plan_verify(&s, rate, &note).map_err(serr)?;
            let cpus = if a.threads > 0 {
                a.threads as u32
            } else {
                cores
            };
            Ok((plan, &a.out, cpus))
        }
        SweepWhat::Prove(a) => {
            let plan = sweep::plan_prove(&sweep::ProveSweep {
                units: a.units.clone(),
                formats: a.formats.clone(),
                roundings: a.roundings.clone(),
                saturation: a.saturation.clone(),
                timeout_secs: a.timeout,
            })
            .map_err(serr)?;
            Ok((plan, &a.out, 1))
        }
        SweepWhat::Qor(a) => {
            let plan = sweep::plan_qor(&sweep::QorSweep {
                units: a.units.clone(),
                formats: a.formats.clone(),
                stages: a.stages.clone(),
                targets: a.targets.clone(),
            })
            .map_err(serr)?;
            Ok((plan, &a.out, 1))
        }
    }
}

/// Refuses a plan with a job that would fail: the first such job, named, with its error.
fn check_jobs(plan: &sweep::SweepPlan) -> Result<(), CliError> {
    for j in &plan.jobs {
        crate::check_job(&j.args).map_err(|e| {
            CliError::usage(format!(
                "job {} would fail: {}; fix the sweep's lists (command: fp8gen {})",
                j.name,
                e.message,
                j.args.join(" ")
            ))
        })?;
    }
    Ok(())
}

/// `fp8gen sweep …`.
pub fn sweep(cmd: &SweepCmd) -> Result<(), CliError> {
    match cmd {
        SweepCmd::Plan { what } => {
            let (plan, o, _) = plan_of(what)?;
            check_jobs(&plan)?;
            if o.out.is_some() || o.submit || o.partition.is_some() || o.time.is_some() {
                return Err(CliError::usage(
                    "sweep plan only prints; --out, --submit, --partition and --time belong to sweep slurm",
                ));
            }
            if o.json {
                crate::out::println(&serde_json::to_string_pretty(&plan).unwrap_or_default())
            } else {
                crate::out::println(plan.to_text(64).trim_end())
            }
        }
        SweepCmd::Slurm { what } => {
            let (plan, o, default_cpus) = plan_of(what)?;
            check_jobs(&plan)?;
            let dir = o.out.clone().ok_or_else(|| {
                CliError::usage("sweep slurm needs --out DIR (the sweep directory)")
            })?;
            let exe = std::env::current_exe()
                .and_then(|p| p.canonicalize())
                .map_err(|e| CliError::failed(format!("locating the fp8gen executable: {e}")))?;
            let opts = sweep::SlurmOptions {
                partition: o.partition.clone(),
                time: o.time.clone(),
                cpus_per_task: o.cpus_per_task.unwrap_or(default_cpus),
                fp8gen: exe,
            };
            let batch = sweep::write_slurm(&plan, &dir, &opts).map_err(serr)?;
            let job_id = if o.submit && !batch.pending.is_empty() {
                Some(sweep::submit(&batch).map_err(serr)?)
            } else {
                None
            };
            if o.json {
                let j = serde_json::json!({
                    "plan": plan,
                    "script": batch.script,
                    "pending": batch.pending,
                    "finished": batch.finished,
                    "array": sweep::array_spec(&batch.pending),
                    "job_id": job_id,
                });
                return crate::out::println(&serde_json::to_string_pretty(&j).unwrap_or_default());
            }
            crate::out::println(&format!(
                "wrote {} ({} jobs: {} finished, {} to run; ~{:.2} node-hours in all)",
                batch.script.display(),
                plan.jobs.len(),
                batch.finished,
                batch.pending.len(),
                plan.node_hours()
            ))?;
            match (&job_id, batch.pending.is_empty()) {
                (Some(id), _) => crate::out::println(&format!(
                    "submitted job {id} (array {}); when it ends: fp8gen merge {}",
                    sweep::array_spec(&batch.pending),
                    dir.display()
                )),
                (None, true) => crate::out::println(&format!(
                    "every job has a result: fp8gen merge {}",
                    dir.display()
                )),
                (None, false) => crate::out::println(&format!(
                    "submit with: sbatch --array={} {}",
                    sweep::array_spec(&batch.pending),
                    batch.script.display()
                )),
            }
        }
    }
}

/// `fp8gen merge`.
pub fn merge(files: &[PathBuf], json: bool, qor_out: Option<&PathBuf>) -> Result<(), CliError> {
    let r = sweep::merge(files).map_err(serr)?;
    let mut qor_csv = None;
    if !r.qor.is_empty() {
        let dir = qor_out.cloned().unwrap_or_else(|| {
            files
                .first()
                .map(|f| {
                    if f.is_dir() {
                        f.clone()
                    } else {
                        f.parent().map(PathBuf::from).unwrap_or_default()
                    }
                })
                .unwrap_or_default()
        });
        let p = sweep::write_qor_csv(&r.qor, &dir).map_err(serr)?;
        qor_csv = Some(p);
    }
    if json {
        let mut j = serde_json::to_value(&r).unwrap_or_default();
        if let (Some(p), Some(o)) = (&qor_csv, j.as_object_mut()) {
            o.insert("qor_csv".into(), serde_json::json!(p));
        }
        crate::out::println(&serde_json::to_string_pretty(&j).unwrap_or_default())?;
    } else {
        if let Some(p) = &r.plan {
            crate::out::println(&format!("sweep: {p}"))?;
        }
        if let Some(v) = &r.verify {
            let s = &v.summary;
            crate::out::println(&format!(
                "verify {} {} ({}): {} of {} shards, {} vectors, {} mismatches, {} counterexamples kept, compared {}",
                s.unit,
                s.format,
                s.top,
                v.shards_expected as usize - v.missing_shards.len(),
                v.shards_expected,
                s.vectors,
                s.mismatches,
                s.counterexamples.len(),
                s.compared.join(", ")
            ))?;
            for c in &s.counterexamples {
                crate::out::println(&format!(
                    "  vector {}: differs in {}",
                    c.index,
                    c.mismatched_ports.join(", ")
                ))?;
            }
        }
        for p in &r.proofs {
            crate::out::println(&format!(
                "prove {}: {} in {:.1} s ({})",
                p.core, p.verdict, p.seconds, p.solver
            ))?;
        }
        if let Some(p) = &qor_csv {
            crate::out::println(&format!(
                "qor: {} points in {} (tables and plots: .venv/bin/python scripts/fpga/qor_sweep.py --replot {})",
                r.qor.len(),
                p.display(),
                p.display()
            ))?;
        }
        for p in &r.problems {
            crate::out::println(&format!("problem: {p}"))?;
        }
        crate::out::println(if r.passed { "PASS" } else { "FAIL" })?;
    }
    if r.passed {
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "merge: {}",
            r.problems.first().cloned().unwrap_or_default()
        )))
    }
}
