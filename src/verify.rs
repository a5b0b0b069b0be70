//! `fp8gen gen` and `fp8gen verify`: the command-line side (arguments, progress, printing).
//! Requests are built here from the options; everything else (the device under test, vector
//! spaces, golden models, the run loop, the summary) is the `verify` library crate.

use crate::args::{check_timeout, check_writable, parse_count, CliError};
use crate::request::{GenArgs, GenRest};
use clap::Args;
use golden::{Rounding, Saturation};
use iface::Role;
use std::path::{Path, PathBuf};
use verify::space::Choice;
use verify::{Dut, Plan, Report, VerifyError};

/// `fp8gen gen`.
pub fn gen(args: &GenArgs, out: &Path, force: bool, json: bool) -> Result<(), CliError> {
    let req = args.request()?;
    let core = rtl::generate(&req).map_err(|e| CliError::usage(e.to_string()))?;
    rtl::write_core_with_testbench(out, &core, &req, force).map_err(|e| match e {
        rtl::GenError::Io(..) | rtl::GenError::Internal(_) => CliError::failed(e.to_string()),
        _ => CliError::usage(e.to_string()),
    })?;
    if json {
        crate::out::println(core.manifest.to_json().trim_end())?;
    } else {
        crate::out::println(&format!(
            "wrote {}/{}.v, manifest.json, {}.core and its testbench {}_tb.sv (FuseSoC targets lint, sim): {} {}, latency {}, {} ports",
            out.display(),
            core.top,
            core.top,
            core.top,
            core.manifest.unit.name(),
            verify::format_desc(&req),
            core.manifest.latency,
            core.manifest.ports.len()
        ))?;
    }
    Ok(())
}

/// How `verify` runs.
#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Every input vector (every code pair for mul; every binary32 input for project; every
    /// random-bit value of a stochastic core when the space allows).
    #[arg(long, conflicts_with = "random")]
    pub exhaustive: bool,
    /// N random vectors per mode combination (mac: N cycles), e.g. 1e9.
    #[arg(long, value_parser = parse_count)]
    pub random: Option<u64>,
    /// Seed of every random choice (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The random space of a dot product: `structured` (the default: random lanes, exact and
    /// near cancellation, ties, specials, extreme scales, addends around the sum) or
    /// `uniform` (every operand code equally likely).
    #[arg(long, value_name = "uniform|structured", conflicts_with = "exhaustive")]
    pub space: Option<String>,
    /// Run part i of n (0-based) of the space: `--shard 3/16`.
    #[arg(long)]
    pub shard: Option<String>,
    /// Check a core on disk (a directory with manifest.json and its Verilog) instead of
    /// generating one.
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// Rounding modes of an rm_i port to run (comma-separated; default: all the core has).
    #[arg(long, value_delimiter = ',')]
    pub run_rounding: Vec<String>,
    /// Saturation modes of a sat_i port to run (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    pub run_saturation: Vec<String>,
    /// Outputs not to compare, by role (e.g. `--ignore flags`).
    #[arg(long, value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Small IEEE-style NaNs with a clear top trailing bit are signaling and raise invalid
    /// (IEEE 754 §6.2; CVFPU does this). For checking other cores.
    #[arg(long)]
    pub signaling_nan: bool,
    /// Counterexamples to keep and print (default 8).
    #[arg(long)]
    pub max_counterexamples: Option<usize>,
    /// Lanes per model evaluation (core instances side by side, 1..=256).
    #[arg(long)]
    pub lanes: Option<u32>,
    /// Worker threads (0 = one per core; with --prove: parallel solver processes).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Refuse runs estimated to take longer than this (hours, default 24).
    #[arg(long)]
    pub max_hours: Option<f64>,
    /// Where to write the VCD replay of the first counterexample (default: a new file in the
    /// counterexamples directory of fp8gen's cache, printed; a given path is checked before
    /// the run).
    #[arg(long)]
    pub vcd: Option<PathBuf>,
    /// Print only the JSON summary.
    #[arg(long)]
    pub json: bool,
    /// With --from: prove the core equal to fp8gen's independent reference RTL on every input
    /// (yosys SAT) instead of simulating vectors.
    #[arg(long, requires = "from")]
    pub prove: bool,
    /// --prove: solver time limit in seconds (default 600).
    #[arg(long)]
    pub timeout: Option<u64>,
}

/// Where the VCD of a counterexample goes when --vcd is not given: a new file
/// `<kind>-<unix seconds>-<pid>[-k].vcd` in the `counterexamples` directory of fp8gen's cache
/// (`fp8gen cache` shows where), never the working directory and never an existing file;
/// the run prints the path.
pub(crate) fn default_vcd(kind: &str) -> PathBuf {
    let dir = sim::default_cache_dir().join("counterexamples");
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = format!("{kind}-{secs}-{}", std::process::id());
    let mut path = dir.join(format!("{base}.vcd"));
    let mut k = 1;
    while path.symlink_metadata().is_ok() {
        path = dir.join(format!("{base}-{k}.vcd"));
        k += 1;
    }
    path
}

impl VerifyArgs {
    /// The VCD path: a given one must be writable now, not after an hour of simulation.
    fn vcd_path(&self) -> Result<PathBuf, CliError> {
        match &self.vcd {
            Some(p) => {
                check_writable("--vcd", p)?;
                Ok(p.clone())
            }
            None => Ok(default_vcd("fp8gen-counterexample")),
        }
    }
}

fn verr(e: VerifyError) -> CliError {
    match e {
        VerifyError::Usage(m) => CliError::usage(m),
        VerifyError::Failed(m) => CliError::failed(m),
    }
}

fn mode_list<T: PartialEq>(
    flag: &str,
    v: &[String],
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<Vec<T>>, CliError> {
    if v.is_empty() {
        return Ok(None);
    }
    let mut out: Vec<T> = Vec::new();
    for s in v {
        let m = parse(s.trim()).map_err(|e| CliError::usage(format!("{flag}: {e}")))?;
        if out.contains(&m) {
            return Err(CliError::usage(format!(
                "{flag}: '{}' is listed twice; list each mode once (it would run twice)",
                crate::args::shown(s.trim())
            )));
        }
        out.push(m);
    }
    Ok(Some(out))
}

/// `fp8gen verify`: `unit` and `gen` generate the core, or `v.from` names one on disk.
pub fn verify(unit: Option<&str>, gen: &GenRest, v: &VerifyArgs) -> Result<(), CliError> {
    let mut sel_r = v.run_rounding.clone();
    let mut sel_s = v.run_saturation.clone();
    let dut = match (&v.from, unit) {
        (Some(_), Some(_)) => return Err(CliError::usage(
            "give either --from DIR (a core on disk) or --unit/--format (generate one), not both",
        )),
        (Some(dir), None) => {
            // -r/-s next to --from select the modes to run on the core's mode ports.
            for (opt, sel) in [(&gen.rounding, &mut sel_r), (&gen.saturation, &mut sel_s)] {
                if let Some(list) = opt {
                    sel.extend(list.split(',').map(|s| s.trim().to_string()));
                }
            }
            Dut::load(dir, &gen.overrides(v.signaling_nan)?).map_err(verr)?
        }
        (None, Some(u)) => {
            if v.signaling_nan {
                return Err(CliError::usage(
                    "--signaling-nan describes another core's NaN semantics; fp8gen's cores treat every small-format NaN as quiet. Use it with --from DIR",
                ));
            }
            Dut::generate(&gen.request(u)?).map_err(verr)?
        }
        (None, None) => {
            return Err(CliError::usage(
                "verify needs a core: --unit/--format to generate one, or --from DIR",
            ))
        }
    };
    // `--ignore flags.underflow`: one flag bit (by the manifest's name); `--ignore flags`:
    // the whole port.
    let ignore_flags: Vec<String> = v
        .ignore
        .iter()
        .filter_map(|r| r.trim().strip_prefix("flags."))
        .map(|n| n.to_string())
        .collect();
    for n in &ignore_flags {
        if !iface::native::FLAG_NAMES.contains(&n.as_str()) {
            return Err(CliError::usage(format!(
                "--ignore flags.{n}: unknown flag; flag bits are {}",
                iface::native::FLAG_NAMES.join(", ")
            )));
        }
    }
    let ignore = v
        .ignore
        .iter()
        .filter(|r| !r.trim().starts_with("flags."))
        .map(|r| {
            Role::parse(r.trim()).ok_or_else(|| {
                CliError::usage(format!(
                    "--ignore: unknown role '{r}'; outputs have roles result, flags, class, sign, exponent, significand (one flag bit: flags.underflow, flags.inexact, …)"
                ))
            })
        })
        .collect::<Result<Vec<Role>, CliError>>()?;
    let uniform = match v.space.as_deref().map(str::trim) {
        None | Some("structured") => false,
        Some("uniform") => true,
        Some(o) => {
            return Err(CliError::usage(format!(
                "--space '{}': expected uniform or structured",
                crate::args::shown(o)
            )))
        }
    };
    if v.space.is_some() && dut.request.unit.spec().space != iface::SpaceKind::Dot {
        return Err(CliError::usage(format!(
            "--space chooses between the dot product's random spaces; {} has one (--random N: uniform random vectors)",
            dut.request.unit
        )));
    }
    if v.prove && v.space.is_some() {
        return Err(CliError::usage(
            "--space chooses the vectors of a simulation run; --prove covers every input: drop --space",
        ));
    }
    if v.prove {
        let w = verify::Waivers {
            roles: ignore,
            flags: ignore_flags,
        };
        return prove(&dut, v, &w);
    }
    if v.timeout.is_some() {
        return Err(CliError::usage(
            "--timeout limits the solver of --prove; a simulation run is bounded by --max-hours (its estimate) instead",
        ));
    }
    let max_hours = v.max_hours.unwrap_or(24.0);
    if !(max_hours.is_finite() && max_hours > 0.0) {
        return Err(CliError::usage(format!(
            "--max-hours {max_hours}: give a positive number of hours (default 24)"
        )));
    }
    let vcd = v.vcd_path()?;
    let shard = match &v.shard {
        Some(s) => s
            .parse::<sim::Shard>()
            .map_err(|e| CliError::usage(format!("--shard: {e}")))?,
        None => sim::Shard::default(),
    };
    let plan = Plan {
        choice: match (v.exhaustive, v.random) {
            (true, _) => Choice::Exhaustive,
            (false, Some(n)) => Choice::Random(n),
            (false, None) => Choice::Default,
        },
        seed: v.seed.unwrap_or(1),
        shard,
        threads: v.threads,
        lanes: v.lanes,
        roundings: mode_list("--rounding", &sel_r, |s| {
            Rounding::parse(s, dut.request.random_bits().max(1) as u8)
        })?,
        saturations: mode_list("--saturation", &sel_s, Saturation::parse)?,
        ignore,
        ignore_flags,
        max_counterexamples: v.max_counterexamples.unwrap_or(8),
        vcd: Some(vcd),
        max_hours,
        uniform,
        ..Plan::default()
    };
    let bar = if v.json {
        None
    } else {
        let pb = indicatif::ProgressBar::new(0);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} vectors ({per_sec}, eta {eta}) {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(pb)
    };
    let progress = |p: &sim::Progress| {
        if let Some(pb) = &bar {
            pb.set_length(p.total);
            pb.set_position(p.done);
            if p.mismatches > 0 {
                pb.set_message(format!("{} mismatches", p.mismatches));
            }
        }
    };
    let json = v.json;
    let on_build = |m: &str| {
        if !json {
            eprintln!("{m}");
        }
    };
    let report = {
        let _quiet = crate::out::CoreOutputToStderr::new()?;
        verify::run(&dut, &plan, Some(&progress), &on_build).map_err(verr)?
    };
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    print_report(&report, v.json)
}

/// `verify --from DIR --prove`.
fn prove(dut: &Dut, v: &VerifyArgs, w: &verify::Waivers) -> Result<(), CliError> {
    let sim_only = [
        (v.exhaustive, "--exhaustive"),
        (v.random.is_some(), "--random"),
        (v.shard.is_some(), "--shard"),
        (
            !v.run_rounding.is_empty() || !v.run_saturation.is_empty(),
            "--run-rounding/--run-saturation",
        ),
        (v.lanes.is_some(), "--lanes"),
        (v.seed.is_some(), "--seed"),
        (v.space.is_some(), "--space"),
        (v.max_counterexamples.is_some(), "--max-counterexamples"),
    ];
    if let Some((_, opt)) = sim_only.iter().find(|(given, _)| *given) {
        return Err(CliError::usage(format!(
            "{opt} selects simulation vectors; --prove covers every input and every legal mode value"
        )));
    }
    if v.max_hours.is_some() {
        return Err(CliError::usage(
            "--max-hours bounds a simulation run's estimate; --prove is bounded by --timeout (seconds)",
        ));
    }
    let timeout = check_timeout(v.timeout.unwrap_or(600))?;
    let opts = formal::ProveOptions {
        timeout_secs: timeout,
        work_dir: None,
        vcd: v.vcd_path()?,
        replay: true,
        engine: formal::Engine::default(),
        jobs: v.threads,
    };
    let r = {
        let _quiet = crate::out::CoreOutputToStderr::new()?;
        verify::prove_with(dut, w, &opts).map_err(verr)?
    };
    if v.json {
        let mut j = serde_json::to_value(&r).unwrap_or_default();
        report::stamp(
            &mut j,
            &dut.request.canonical_command(),
            &dut.sources.content_hash(),
        );
        crate::out::println(&serde_json::to_string_pretty(&j).unwrap_or_default())?;
    } else {
        crate::prove_cmd::print(&r);
    }
    match r.verdict {
        formal::Verdict::Proven => Ok(()),
        formal::Verdict::Refuted => Err(CliError::failed(format!(
            "{} is not equivalent to {}",
            r.gold, r.gate
        ))),
        _ => Err(CliError::failed(format!(
            "no verdict within {timeout} s: nothing was proven; a longer --timeout may reach one"
        ))),
    }
}

fn fmt_pv(p: &sim::PortValues) -> String {
    p.0.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn print_report(r: &Report, json: bool) -> Result<(), CliError> {
    let s = &r.summary;
    if !json {
        for cx in &s.counterexamples {
            eprintln!(
                "MISMATCH #{}: inputs {} expected {} got {} (ports {})",
                cx.index,
                fmt_pv(&cx.inputs),
                fmt_pv(&cx.expected),
                fmt_pv(&cx.got),
                cx.mismatched_ports.join(",")
            );
        }
        if let Some(p) = &r.vcd {
            eprintln!("VCD of the first counterexample: {}", p.display());
        }
        if let Some(e) = &r.vcd_error {
            eprintln!("VCD of the first counterexample not written: {e}");
        }
        let get = |k: &str| s.meta.get(k).map(String::as_str).unwrap_or("-");
        eprintln!(
            "compared: outputs {}; inputs {}",
            s.compared.join(" "),
            get("inputs")
        );
        eprintln!(
            "modes:    {} ({} vectors per mode)",
            get("modes"),
            get("vectors_per_mode")
        );
        eprintln!("space:    {} (shards {})", get("space"), {
            let v: Vec<String> = s.shards.iter().map(|x| x.to_string()).collect();
            v.join(",")
        });
        match s.clocking() {
            Some(c) => eprintln!("clocked:  {c}"),
            None if s.bubbles > 0 => eprintln!(
                "handshake: {} bubble rows (valid_i = 0) checked for valid_o = 0",
                s.bubbles
            ),
            None => {}
        }
        if let Some(g) = s.meta.get("guard_overflow") {
            eprintln!("guard overflow {g}");
        }
        for (k, label) in [("compiled", "text:    "), ("xz_check", "x/z check:")] {
            if let Some(v) = s.meta.get(k) {
                eprintln!("{label} {v}");
            }
        }
        for (k, label) in [
            ("tied", "tied:     "),
            ("rounding_encoding", "rounding: "),
            ("flags_layout", "flags:    "),
            ("waived", "waived:   "),
        ] {
            if let Some(v) = s.meta.get(k) {
                eprintln!("{label}{v}");
            }
        }
        let c = &s.mismatch_classes;
        for (map, label) in [
            (&c.per_mode, "mismatches per mode: "),
            (&c.per_flag, "mismatches per flag bit: "),
            (&c.classes, "mismatch classes: "),
        ] {
            if !map.is_empty() {
                let v: Vec<String> = map.iter().map(|(k, n)| format!("{k}: {n}")).collect();
                eprintln!("{label}{}", v.join(", "));
            }
        }
        if !s.mismatches_per_port.is_empty() {
            let v: Vec<String> = s
                .mismatches_per_port
                .iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect();
            eprintln!("mismatches per port: {}", v.join(", "));
        }
        eprintln!(
            "{}: {} vectors, {} mismatches, {:.2} s, {:.3e} vectors/s ({} threads x {} lanes; model {})",
            if s.passed() { "PASS" } else { "FAIL" },
            s.vectors,
            s.mismatches,
            s.seconds,
            s.vectors_per_second,
            s.threads,
            s.lanes,
            if r.cache_hit {
                "from cache".to_string()
            } else {
                format!("built in {:.1} s", r.build_seconds)
            }
        );
        if let Some(p) = &s.phases {
            eprintln!("time:     {}", p.per_vector(s.vectors));
        }
    }
    let mut j = serde_json::to_value(s).unwrap_or_default();
    if let (Some(p), Some(obj)) = (&r.vcd, j.as_object_mut()) {
        obj.insert(
            "vcd".into(),
            serde_json::Value::String(p.display().to_string()),
        );
    }
    crate::out::println(&serde_json::to_string_pretty(&j).unwrap_or_default())?;
    if s.passed() {
        Ok(())
    } else if s.mismatches > 0 {
        Err(CliError::failed(format!(
            "{} of {} vectors differ from the golden model",
            s.mismatches, s.vectors
        )))
    } else if s.vectors == 0 {
        Err(CliError::failed(
            "no vector was compared: nothing was checked",
        ))
    } else {
        Err(CliError::failed("verification did not complete"))
    }
}
