//! `fp8gen prove`: formal equivalence of a generated core with the independent reference
//! (and of its pipelined form with the combinational one). Arguments and printing only; the
//! reference, the miters and the solver runs live in the `formal` crate.

use crate::args::CliError;
use crate::request::GenArgs;
use clap::Args;
use formal::{Engine, FormalError, ProofReport, ProveOptions, Verdict};
use std::path::PathBuf;

/// Options of `fp8gen prove`.
#[derive(Args, Debug, Clone)]
pub struct ProveArgs {
    #[command(flatten)]
    pub gen: GenArgs,
    /// Solver time limit per proof in seconds; without a verdict by then the result is
    /// "no verdict" (exit code 1), never a pass.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// Keep the miters, yosys scripts, solver logs and the solver's VCD in this directory: a
    /// new or empty one, or an earlier `prove --keep` one's (replaced; a directory holding
    /// anything else is refused).
    #[arg(long)]
    pub keep: Option<PathBuf>,
    /// Where the Verilator replay of a counterexample writes its VCD (default
    /// a new file in the counterexamples directory of fp8gen's cache, printed; a given path
    /// is checked before the proof).
    #[arg(long)]
    pub vcd: Option<PathBuf>,
    /// Engine of the combinational proof: `cadical` (the miter as CNF, CaDiCaL in parallel
    /// cubes), `sat` (yosys `sat -prove`, MiniSat) or `sby-<solver>` (SymbiYosys smtbmc, e.g.
    /// `sby-yices`); pipelines always use yosys `sat`.
    #[arg(long, default_value = "cadical")]
    pub engine: String,
    /// Parallel CaDiCaL processes (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Print the proof reports as JSON.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn cli_err(e: FormalError) -> CliError {
    match e {
        FormalError::Unsupported(_) | FormalError::Output(_) => CliError::usage(e.to_string()),
        _ => CliError::failed(e.to_string()),
    }
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Proven => "PROVEN",
        Verdict::Refuted => "REFUTED",
        Verdict::NoVerdict => "NO VERDICT",
    }
}

pub(crate) fn print(r: &ProofReport) {
    let v = verdict_word(r.verdict);
    outln!(
        "{v}: {} vs {} ({:.1} s, {})",
        r.gold,
        r.gate,
        r.seconds,
        r.solver
    );
    outln!("  statement: {}", r.statement);
    if let Some(p) = &r.problem {
        outln!("  problem: {p}");
    }
    if let Some(d) = &r.detail {
        outln!("  {d}");
    }
    for l in &r.lemmas {
        outln!(
            "  lemma {}: {} ({:.1} s): {}{}",
            l.name,
            verdict_word(l.verdict),
            l.seconds,
            l.statement,
            l.detail
                .as_ref()
                .map(|d| format!(" [{d}]"))
                .unwrap_or_default()
        );
    }
    if let Some(c) = &r.counterexample {
        let kv = |v: &[(String, String)]| {
            v.iter()
                .map(|(n, x)| format!("{n}=0x{x}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if !c.inputs.is_empty() {
            outln!("  counterexample inputs: {}", kv(&c.inputs));
        }
        if let Some(cy) = c.cycle {
            outln!("  failing cycle: {cy}");
            for (t, n, x) in &c.trace {
                outln!("    cycle {t}: {n}=0x{x}");
            }
        }
        let mut tops: Vec<&String> = c.replayed.iter().map(|r| &r.0).collect();
        tops.dedup();
        for top in tops {
            let outs: Vec<String> = c
                .replayed
                .iter()
                .filter(|r| &r.0 == top)
                .map(|r| format!("{}=0x{}", r.1, r.2))
                .collect();
            outln!("  Verilator {top}: {}", outs.join(" "));
        }
        if !c.golden.is_empty() {
            outln!("  golden model: {}", kv(&c.golden));
        }
        if !c.differs_from_golden.is_empty() {
            outln!(
                "  differs from the golden model: {}",
                c.differs_from_golden.join(", ")
            );
        }
        if let Some(p) = &c.vcd {
            outln!("  VCD (Verilator replay): {}", p.display());
        }
        if let Some(p) = &c.yosys_vcd {
            outln!("  VCD (solver model): {}", p.display());
        }
    }
    if let Some(d) = &r.work_dir {
        outln!("  artifacts: {}", d.display());
    }
}

/// Everything `prove` checks before it runs a solver: the request, that the reference covers
/// it, the engine and the time limit (also the check of a planned sweep job).
pub fn checked(a: &ProveArgs) -> Result<(rtl::GenRequest, Engine, u64), CliError> {
    let req = a.gen.request()?;
    formal::check_request(&req).map_err(cli_err)?;
    let engine = Engine::parse(&a.engine).ok_or_else(|| {
        CliError::usage(format!(
            "--engine: unknown engine '{}'; expected cadical, sat or sby-<solver> (e.g. sby-yices)",
            a.engine
        ))
    })?;
    let timeout = crate::args::check_timeout(a.timeout)?;
    if let Some(p) = &a.vcd {
        crate::args::check_writable("--vcd", p)?;
    }
    Ok((req, engine, timeout))
}

/// `fp8gen prove`.
pub fn prove(a: &ProveArgs) -> Result<(), CliError> {
    let (req, engine, timeout) = checked(a)?;
    let opts = ProveOptions {
        timeout_secs: timeout,
        work_dir: a.keep.clone(),
        vcd: a
            .vcd
            .clone()
            .unwrap_or_else(|| crate::verify::default_vcd("fp8gen-prove-counterexample")),
        replay: true,
        engine,
        jobs: a.jobs,
    };
    let reports = {
        let _quiet = crate::out::CoreOutputToStderr::new()?;
        formal::prove_request(&req, &opts).map_err(cli_err)?
    };
    if a.json {
        let mut v = serde_json::to_value(&reports).unwrap_or_default();
        if let Ok(core) = rtl::generate(&req) {
            report::stamp(
                &mut v,
                &core.manifest.command,
                &report::core_hash(&core.verilog),
            );
        }
        outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        for r in &reports {
            print(r);
        }
    }
    match reports.iter().find(|r| r.verdict != Verdict::Proven) {
        None => Ok(()),
        Some(r) => Err(CliError::failed(match r.verdict {
            Verdict::Refuted => format!("{} is not equivalent to {}", r.gold, r.gate),
            _ => format!(
                "{} vs {}: {}",
                r.gold,
                r.gate,
                r.detail.clone().unwrap_or_else(|| "no verdict".into())
            ),
        })),
    }
}
