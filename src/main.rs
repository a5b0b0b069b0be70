//! `fp8gen`: generator and verifier of FP8 / small-float arithmetic hardware.
//!
//! The binary owns the command line: argument parsing and printing only. The golden model
//! lives in `golden`, the interface vocabulary in `iface`, Verilog generation in `rtl`,
//! Verilator simulation in `sim`, verification orchestration in `verify`, the FPGA flow in
//! `fpga`, formal proofs in `formal`.

#[macro_use]
mod out;
mod args;
mod batch;
mod request;
mod verify;

use args::{parse_named, scale_named, CliError, FormatArgs, ModeArgs};
use batch::{Column, OutOpts};
use clap::{Parser, Subcommand};
use golden::{Format, Rounding, Scale, Spec, PRESETS};
use std::io::Write;
use std::path::PathBuf;

mod add_cmd;
mod fpga_cmd;
mod prove_cmd;
mod sweep_cmd;

/// Generator and verifier of FP8 / small-float arithmetic hardware.
#[derive(Parser, Debug)]
#[command(name = "fp8gen", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Table of preset formats and their properties.
    Formats {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Every code of a format → its exact value.
    Decode {
        #[command(flatten)]
        format: FormatArgs,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Project binary32 (or binary16/bfloat16) values, one hex code per stdin line.
    Project {
        #[command(flatten)]
        format: FormatArgs,
        #[command(flatten)]
        modes: ModeArgs,
        /// Input format: binary32, binary16 or bfloat16.
        #[arg(long, default_value = "binary32")]
        in_format: String,
        /// Divide by a power-of-two block scale first (P3109 §5.1.2, the MX quantizer):
        /// lines are "a s" with the scale code s.
        #[command(flatten)]
        scale: ScaleArgs,
        #[command(flatten)]
        out: OutArgs,
    },
    /// Multiply "x y" hex pairs from stdin (one rounding).
    Mul {
        #[command(flatten)]
        format: FormatArgs,
        /// Format of y (default: the format of x).
        #[arg(long)]
        format_y: Option<String>,
        /// Result format (default: the format of x; may be binary32).
        #[arg(long)]
        out_format: Option<String>,
        #[command(flatten)]
        modes: ModeArgs,
        /// Flush subnormal operands and results to zero (results with underflow + inexact).
        #[arg(long)]
        ftz: bool,
        #[command(flatten)]
        scale: ScaleArgs,
        #[command(flatten)]
        out: OutArgs,
    },
    /// Add "x y" hex pairs from stdin: x + y (x - y with --sub), exact sum, one rounding.
    Add {
        #[command(flatten)]
        format: FormatArgs,
        /// Format of y (default: the format of x).
        #[arg(long)]
        format_y: Option<String>,
        /// Result format (default: the format of x; may be binary16, bfloat16, binary32).
        #[arg(long)]
        out_format: Option<String>,
        #[command(flatten)]
        modes: ModeArgs,
        /// Subtract: x - y.
        #[arg(long)]
        sub: bool,
        #[command(flatten)]
        out: OutArgs,
    },
    /// Fused multiply-add "x y z" from stdin: x, y small floats, z and the result binary32.
    Fma {
        #[command(flatten)]
        format: FormatArgs,
        /// Format of y (default: the format of x).
        #[arg(long)]
        format_y: Option<String>,
        #[command(flatten)]
        modes: ModeArgs,
        /// Flush subnormal binary32 inputs and results to zero.
        #[arg(long)]
        ftz: bool,
        #[command(flatten)]
        scale: ScaleArgs,
        #[command(flatten)]
        out: OutArgs,
    },
    /// Dot product `x0 … x{N-1} y0 … y{N-1} [sx sy] [z]` from stdin: Σ x_i·y_i · 2^(sx+sy)
    /// + z, exact, one rounding to --out-format (default binary32).
    Dot {
        #[command(flatten)]
        format: FormatArgs,
        /// Format of y (default: the format of x).
        #[arg(long)]
        format_y: Option<String>,
        /// Result format (default binary32).
        #[arg(long)]
        out_format: Option<String>,
        /// Elements per operand (1..=64).
        #[arg(long = "n", value_name = "N")]
        n: usize,
        /// Block scales of this format (e8m0 for OCP MX, binary8p1uf for P3109): two more
        /// columns sx sy.
        #[arg(long)]
        scale_format: Option<String>,
        /// A binary32 addend: one more column z.
        #[arg(long)]
        addend: bool,
        /// Small IEEE-style NaNs with a clear top trailing bit are signaling and raise invalid
        /// (IEEE 754 §6.2; CVFPU does this), as `verify --signaling-nan`.
        #[arg(long)]
        signaling_nan: bool,
        #[command(flatten)]
        modes: ModeArgs,
        #[command(flatten)]
        out: OutArgs,
    },
    /// Evaluate any unit's golden model on vectors from stdin: one line per vector holding
    /// the values of the core's data inputs in port order (hex, as `gen` would declare them:
    /// `fp8gen gen … --json` lists the ports), one line of its data outputs in port order.
    /// The same options as `gen` (e.g. `eval -u convert --in-format e5m2 -f e4m3 -r dyn`).
    Eval {
        #[command(flatten)]
        gen: request::GenArgs,
        /// One JSON object per line naming each output port.
        #[arg(long)]
        json: bool,
    },
    /// Generate a core: `<top>.v`, `manifest.json` and a FuseSoC `<top>.core` in the output directory.
    Gen {
        #[command(flatten)]
        gen: request::GenArgs,
        /// Output directory (written atomically): new or empty, or with --force an earlier
        /// `fp8gen gen`'s.
        #[arg(long, short = 'o')]
        out: PathBuf,
        /// Replace the core of an earlier `fp8gen gen` in the output directory (only the files
        /// its manifest.json lists; a directory holding anything else is refused).
        #[arg(long)]
        force: bool,
        /// Print the manifest as JSON.
        #[arg(long)]
        json: bool,
        /// Choose the number of pipeline stages for this clock (MHz) on --target from the
        /// per-target delay model (instead of --stages).
        #[arg(long)]
        fmax: Option<f64>,
        /// Target of --fmax: ice40-up5k, ecp5-25k, ecp5-85k, gowin-gw1nr9.
        #[arg(long, short = 't')]
        target: Option<String>,
    },
    /// Prove a core bit-exact against the golden model in Verilator.
    Verify {
        #[command(flatten)]
        gen: OptGenArgs,
        #[command(flatten)]
        verify: verify::VerifyArgs,
    },
    /// Synthesize a core with yosys + nextpnr and report LUTs, FFs, DSPs, carries, Fmax.
    Synth {
        #[command(flatten)]
        gen: request::GenArgs,
        /// Target: ice40-up5k, ecp5-25k, ecp5-85k, gowin-gw1nr9.
        #[arg(long, short = 't')]
        target: String,
        /// Requested clock (MHz).
        #[arg(long, default_value_t = 100.0)]
        freq: f64,
        /// Do not infer DSP / multiplier blocks.
        #[arg(long)]
        no_dsp: bool,
        /// Placement seed (the first one with --seeds).
        #[arg(long, default_value_t = 1)]
        seed: u32,
        /// Place and route with N seeds after one synthesis; report the median Fmax and the
        /// min / max (one seed is noise).
        #[arg(long, default_value_t = 1)]
        seeds: u32,
        /// Keep the build directory here: a new or empty directory, or an earlier
        /// `synth --keep` one's (replaced; a directory holding anything else is refused).
        #[arg(long)]
        keep: Option<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
        /// Reach this clock (MHz) with the fewest stages: start from the delay model's
        /// choice, add stages while place and route misses it, remove them while it is met.
        #[arg(long)]
        fmax: Option<f64>,
    },
    /// Build a bitstream: the core behind a UART test shell on a board.
    Board {
        #[command(flatten)]
        gen: request::GenArgs,
        /// Board: icebreaker, ulx3s (85F), ulx3s-25f, tangnano9k.
        #[arg(long, short = 'b')]
        board: String,
        /// Output directory (bitstream, logs, shell.json): a new or empty directory, or an
        /// earlier `fp8gen board` one's (replaced; a directory holding anything else is refused).
        #[arg(long, short = 'o')]
        out: PathBuf,
        /// UART baud rate.
        #[arg(long, default_value_t = 115_200)]
        baud: u32,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Replay hex vectors (stdin) through a board built by `fp8gen board` over its serial port.
    BoardTest {
        /// Serial device, e.g. /dev/ttyUSB0.
        #[arg(long)]
        port: PathBuf,
        /// The board build directory (holds shell.json).
        #[arg(long, short = 'd')]
        dir: PathBuf,
    },
    /// Prove a core equal to the independent reference on every input, flags included (CaDiCaL or yosys SAT).
    Prove(prove_cmd::ProveArgs),
    /// Write the datasheet of a core (a `gen -o DIR` directory): one HTML page with its
    /// request, ports, timing, modes, value tables and plots, and the verify/prove/synth
    /// summaries of this core in DIR/results/*.json (docs/report.md).
    Report {
        /// The core directory (written by `fp8gen gen -o DIR`).
        dir: PathBuf,
        /// Where the page goes (default `DIR/<top>.html`); an existing file is replaced only if
        /// `fp8gen report` wrote it.
        #[arg(long, short = 'o')]
        out: Option<PathBuf>,
        /// More summaries (`fp8gen verify/prove/synth --json` output) to read besides
        /// DIR/results/*.json.
        #[arg(long, num_args = 1..)]
        results: Vec<PathBuf>,
    },
    /// Long work as jobs: `sweep plan` prints them with estimates, `sweep slurm` writes (and
    /// submits) a Slurm job array (docs/sweeps.md).
    Sweep {
        #[command(subcommand)]
        cmd: sweep_cmd::SweepCmd,
    },
    /// Merge sweep results (DIR or DIR/*.json): verify shards into one summary, proofs into a
    /// list, synthesis points into qor.csv; exit 1 on any mismatch, refutation or gap.
    Merge {
        /// Result files or sweep directories.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
        /// Where qor.csv goes (default: the sweep directory).
        #[arg(long)]
        qor_out: Option<PathBuf>,
    },
    /// The simulation model cache: `fp8gen cache clean` removes its entries (nothing it did not
    /// create), `fp8gen cache info` shows it.
    Cache {
        /// `clean` or `info`.
        action: String,
    },
    /// Golden-model throughput (values/second, single thread).
    Bench {
        /// Formats to measure (default: e4m3 and a few non-preset formats).
        #[arg(long)]
        format: Vec<String>,
        /// Values per measurement.
        #[arg(long, default_value_t = 50_000_000)]
        n: u64,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

/// `verify`'s generation arguments: optional, since `--from DIR` brings its own core.
#[derive(clap::Args, Debug, Clone)]
struct OptGenArgs {
    #[arg(long, short = 'u', help = format!("{} (not with --from)", request::unit_help()))]
    unit: Option<String>,
    #[command(flatten)]
    rest: request::GenRest,
}

#[derive(clap::Args, Debug, Clone)]
struct OutArgs {
    /// Append the flags nibble {invalid, overflow, underflow, inexact} (bit 3..0) in hex.
    #[arg(long)]
    flags: bool,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

impl OutArgs {
    fn opts(&self) -> OutOpts {
        OutOpts {
            flags: self.flags,
            json: self.json,
        }
    }
}

#[derive(clap::Args, Debug, Clone)]
struct ScaleArgs {
    /// Operands carry power-of-two scales: lines are `x sx y sy [z]` with scale codes (E8M0
    /// unless --scale-format says otherwise).
    #[arg(long)]
    scaled: bool,
    /// Format of the scale codes (e8m0 or binary8p1uf); implies --scaled, as for gen.
    #[arg(long)]
    scale_format: Option<String>,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprint!("{}", tame(&e.render().to_string()));
            std::process::exit(e.exit_code());
        }
        Err(e) => e.exit(),
    };
    let run_or_check = |cli| match std::env::var_os("FP8GEN_PARSE_ONLY") {
        Some(_) => parse_only(&cli),
        None => run(cli),
    };
    if let Err(e) = out::check_stdout_open().and_then(|()| run_or_check(cli)) {
        if e.code != 0 {
            eprintln!("error: {}", tame(&e.message));
        }
        std::process::exit(e.code);
    }
}

/// `FP8GEN_PARSE_ONLY` set: the command line is checked and nothing is run (no file read or
/// written, no tool started). clap checks every subcommand's options; `verify -u`, `prove` and
/// `synth` without `--fmax` are also checked the way a planned sweep job is ([`check_job`]:
/// formats, modes, the generation request). Used by `tests/docs_examples.rs` for the
/// documentation's costly commands; it says on stdout that nothing ran.
fn parse_only(cli: &Cli) -> Result<(), CliError> {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match &cli.cmd {
        Cmd::Verify { gen, .. } if gen.unit.is_some() => check_job(&args)?,
        Cmd::Prove(_) | Cmd::Synth { fmax: None, .. } => check_job(&args)?,
        _ => {}
    }
    println!("arguments accepted; nothing run (FP8GEN_PARSE_ONLY is set)");
    Ok(())
}

/// An error message with every long or control-character-laden piece of the command line in
/// it shortened and escaped ([`args::shown`]): a 100 kB argument is never echoed whole.
fn tame(msg: &str) -> String {
    let mut pieces: Vec<String> = Vec::new();
    for a in std::env::args_os().skip(1) {
        let a = a.to_string_lossy().into_owned();
        let parts = a.split([',', '=']).map(str::to_string).collect::<Vec<_>>();
        pieces.push(a.to_ascii_lowercase());
        pieces.push(a.trim().to_string());
        pieces.push(a);
        pieces.extend(parts);
    }
    pieces.retain(|p| args::shown(p) != *p);
    // Longest first, so that a whole argument is replaced before a part of it.
    pieces.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let mut m = msg.to_string();
    for p in &pieces {
        if m.contains(p.as_str()) {
            m = m.replace(p.as_str(), &args::shown(p));
        }
    }
    m
}

fn cache(action: &str) -> Result<(), CliError> {
    let dir = sim::default_cache_dir();
    let sim_err = |e: sim::SimError| match e {
        sim::SimError::Usage(_) => CliError::usage(e.to_string()),
        _ => CliError::failed(e.to_string()),
    };
    match action {
        "clean" => {
            let r = sim::clean_cache(&dir).map_err(sim_err)?;
            out::println(&format!(
                "cleaned {}: {} models, {} runtimes, {} temporary directories, {:.1} MiB freed",
                dir.display(),
                r.models,
                r.runtimes,
                r.temporaries,
                r.bytes as f64 / (1 << 20) as f64
            ))?;
            if let Some(first) = r.left.first() {
                eprintln!(
                    "note: left {} entries the cache did not create (e.g. {}); remove them yourself if they are not needed",
                    r.left.len(),
                    first.display()
                );
            }
            Ok(())
        }
        "info" => {
            let (n, bytes) = sim::cache_usage(&dir).map_err(sim_err)?;
            let limit = sim::cache_limit_bytes().map_err(sim_err)?;
            out::println(&format!(
                "{}: {n} models, {:.1} MiB (limit {} MiB: FP8GEN_CACHE_MAX_MB, default 4096)",
                dir.display(),
                bytes as f64 / (1 << 20) as f64,
                limit >> 20
            ))
        }
        a => Err(CliError::usage(format!(
            "cache: unknown action '{a}'; expected clean or info"
        ))),
    }
}

/// `fp8gen report`.
fn report_page(
    dir: &std::path::Path,
    out: Option<PathBuf>,
    extra: &[PathBuf],
) -> Result<(), CliError> {
    let err = |e: report::ReportError| match e {
        report::ReportError::Usage(m) => CliError::usage(m),
        report::ReportError::Failed(m) => CliError::failed(m),
    };
    let core = report::CoreInfo::load(dir).map_err(err)?;
    let files = report::gather(&core, extra).map_err(err)?;
    let page = out.unwrap_or_else(|| core.default_page());
    report::write_page(&page, &report::render(&core, &files)).map_err(err)?;
    let used = files
        .iter()
        .filter(|f| matches!(f.found, report::Found::Used(..)))
        .count();
    out::println(&format!(
        "wrote {}: {} result files read, {used} of this core used",
        page.display(),
        files.len()
    ))
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.cmd {
        Cmd::Formats { json } => formats(json),
        Cmd::Decode { format, json } => decode(&format.resolve()?, json),
        Cmd::Report { dir, out, results } => report_page(&dir, out, &results),
        Cmd::Project {
            format,
            modes,
            in_format,
            scale,
            out,
        } => {
            let f = format.resolve()?;
            let spec = modes.spec()?;
            let inf = parse_named("--in-format", &in_format)?;
            if ![Format::BINARY32, Format::BINARY16, Format::BFLOAT16].contains(&inf) {
                return Err(CliError::usage(format!(
                    "--in-format: '{in_format}' is not an input format of project; use binary32, binary16 or bfloat16"
                )));
            }
            let sf = scale_format(&scale)?;
            let mut cols = vec![Column::of("a", &inf)];
            if let Some(sf) = &sf {
                cols.push(Column::of("s", sf));
            }
            add_random_column(&mut cols, &spec);
            let stdin = std::io::stdin().lock();
            let w = std::io::stdout().lock();
            match sf {
                None => batch::run(stdin, w, &cols, &f, out.opts(), |v| {
                    golden::convert(&inf, v[0], &f, &spec, rnd(v, 1))
                })?,
                Some(format) => batch::run(stdin, w, &cols, &f, out.opts(), |v| {
                    let s = Scale { format, code: v[1] };
                    golden::convert_scaled(&inf, v[0], s, &f, &spec, rnd(v, 2))
                })?,
            };
            Ok(())
        }
        Cmd::Mul {
            format,
            format_y,
            out_format,
            modes,
            ftz,
            scale,
            out,
        } => {
            let fx = format.resolve()?;
            let fy = opt_named("--format-y", format_y, fx)?;
            let fr = opt_named("--out-format", out_format, fx)?;
            let spec = modes.spec()?;
            let sf = scale_format(&scale)?;
            if ftz && sf.is_some() {
                return Err(CliError::usage(
                    "--ftz and --scaled exclude each other (a scaled operand's subnormal range is not defined)",
                ));
            }
            let mut cols = operand_columns(&fx, &fy, sf.as_ref());
            add_random_column(&mut cols, &spec);
            let stdin = std::io::stdin().lock();
            let w = std::io::stdout().lock();
            match sf {
                None if ftz => batch::run(stdin, w, &cols, &fr, out.opts(), |v| {
                    golden::mul_ftz(&fx, v[0], &fy, v[1], &fr, &spec, rnd(v, 2))
                })?,
                None => batch::run(stdin, w, &cols, &fr, out.opts(), |v| {
                    golden::mul(&fx, v[0], &fy, v[1], &fr, &spec, rnd(v, 2))
                })?,
                Some(sf) => batch::run(stdin, w, &cols, &fr, out.opts(), |v| {
                    let (sx, sy) = scales(sf, v);
                    golden::mul_scaled(&fx, v[0], sx, &fy, v[2], sy, &fr, &spec, rnd(v, 4))
                })?,
            };
            Ok(())
        }
        Cmd::Add {
            format,
            format_y,
            out_format,
            modes,
            sub,
            out,
        } => add_cmd::run(&format, format_y, out_format, &modes, sub, out.opts()),
        Cmd::Fma {
            format,
            format_y,
            modes,
            ftz,
            scale,
            out,
        } => {
            let fx = format.resolve()?;
            let fy = opt_named("--format-y", format_y, fx)?;
            let spec = modes.spec()?;
            if spec.rounding.random_bits() > 0 {
                return Err(CliError::usage(
                    "--rounding: fma rounds to binary32 in an IEEE mode or rto; stochastic modes are for small-float results",
                ));
            }
            let sf = scale_format(&scale)?;
            let mut cols = operand_columns(&fx, &fy, sf.as_ref());
            cols.push(Column::of("z", &Format::BINARY32));
            let opts = golden::FmaOptions { ftz };
            let stdin = std::io::stdin().lock();
            let w = std::io::stdout().lock();
            match sf {
                None => batch::run(stdin, w, &cols, &Format::BINARY32, out.opts(), |v| {
                    golden::fma(&fx, v[0], &fy, v[1], v[2], &spec, opts)
                })?,
                Some(sf) => batch::run(stdin, w, &cols, &Format::BINARY32, out.opts(), |v| {
                    let (sx, sy) = scales(sf, v);
                    golden::fma_scaled(&fx, v[0], sx, &fy, v[2], sy, v[4], &spec, opts)
                })?,
            };
            Ok(())
        }
        Cmd::Eval { gen, json } => {
            let req = gen.request()?;
            if req.unit.is_stateful() {
                return Err(CliError::usage(format!(
                    "eval evaluates one vector at a time; {} keeps state between inputs (verify it with fp8gen verify, which runs its streams)",
                    req.unit
                )));
            }
            let model =
                rtl::units::GoldenModel::new(&req).map_err(|e| CliError::usage(e.to_string()))?;
            let data = |d: iface::Direction| {
                rtl::interface(&req)
                    .into_iter()
                    .filter(move |p| p.direction == d && !p.role.is_control())
            };
            let cols: Vec<Column> = data(iface::Direction::Input)
                .map(|p| Column {
                    what: format!("{}-bit port {} ({})", p.width, p.name, p.role),
                    bits: p.width,
                    name: p.name,
                })
                .collect();
            let outs: Vec<(String, u32)> = data(iface::Direction::Output)
                .map(|p| (p.name, p.width))
                .collect();
            let mut inp = vec![0u64; cols.len()];
            batch::run_ports(
                std::io::stdin().lock(),
                std::io::stdout().lock(),
                &cols,
                &outs,
                json,
                |v| {
                    for (d, s) in inp.iter_mut().zip(v) {
                        *d = *s as u64;
                    }
                    model.eval(&inp)
                },
            )?;
            Ok(())
        }
        Cmd::Dot {
            format,
            format_y,
            out_format,
            n,
            scale_format,
            addend,
            signaling_nan,
            modes,
            out,
        } => {
            let fx = format.resolve()?;
            let fy = opt_named("--format-y", format_y, fx)?;
            let fr = opt_named("--out-format", out_format, Format::BINARY32)?;
            let sf = scale_format.as_deref().map(scale_named).transpose()?;
            let spec = modes.spec()?;
            if spec.rounding.random_bits() > 0 {
                return Err(CliError::usage(
                    "--rounding: dot rounds in a deterministic mode (rne, rna, rtp, rtn, rtz, rto)",
                ));
            }
            let unit = golden::DotUnit::new(fx, fy, n, sf, addend, fr)
                .map_err(|e| CliError::usage(format!("dot: {e}")))?;
            let mut cols: Vec<Column> = (0..n).map(|i| Column::of(format!("x{i}"), &fx)).collect();
            cols.extend((0..n).map(|i| Column::of(format!("y{i}"), &fy)));
            if let Some(sf) = &sf {
                cols.push(Column::of("sx", sf));
                cols.push(Column::of("sy", sf));
            }
            if addend {
                cols.push(Column::of("z", &Format::BINARY32));
            }
            let stdin = std::io::stdin().lock();
            let w = std::io::stdout().lock();
            let k = 2 * n;
            batch::run(stdin, w, &cols, &fr, out.opts(), |v| {
                let (sx, sy) = if sf.is_some() {
                    (v[k], v[k + 1])
                } else {
                    (0, 0)
                };
                let z = if addend { v[v.len() - 1] } else { 0 };
                let (c, mut fl) = unit.eval(&v[..n], &v[n..k], sx, sy, z, &spec);
                if signaling_nan && unit.has_small_signaling_nan(&v[..n], &v[n..k]) {
                    fl.0 |= golden::Flags::INVALID;
                }
                (c, fl)
            })?;
            Ok(())
        }
        Cmd::Prove(a) => prove_cmd::prove(&a),
        Cmd::Bench { format, n, json } => bench(&format, n, json),
        Cmd::Gen {
            gen,
            out,
            force,
            json,
            fmax,
            target,
        } => {
            let gen =
                match fmax {
                    Some(f) => fpga_cmd::stages_for_fmax(&gen, f, target.as_deref())?,
                    None if target.is_some() => return Err(CliError::usage(
                        "--target applies to gen with --fmax only (synth and board take their own)",
                    )),
                    None => gen,
                };
            verify::gen(&gen, &out, force, json)
        }
        Cmd::Verify { gen, verify: v } => verify::verify(gen.unit.as_deref(), &gen.rest, &v),
        Cmd::Cache { action } => cache(&action),
        Cmd::Sweep { cmd } => sweep_cmd::sweep(&cmd),
        Cmd::Merge {
            files,
            json,
            qor_out,
        } => sweep_cmd::merge(&files, json, qor_out.as_ref()),
        Cmd::Synth {
            gen,
            target,
            freq,
            no_dsp,
            seed,
            seeds,
            keep,
            json,
            fmax,
        } => match (fmax, keep) {
            (Some(_), Some(_)) => Err(CliError::usage(
                "--keep applies to synth without --fmax (the --fmax search runs several builds); run synth --stages N --keep DIR for the stage count it reports",
            )),
            (Some(f), None) => fpga_cmd::synth_fmax(&gen, &target, f, no_dsp, (seed, seeds), json),
            (None, keep) => fpga_cmd::synth(&gen, &target, freq, no_dsp, (seed, seeds), keep, json),
        },
        Cmd::Board {
            gen,
            board,
            out,
            baud,
            json,
        } => fpga_cmd::board(&gen, &board, &out, baud, json),
        Cmd::BoardTest { port, dir } => fpga_cmd::board_test(&port, &dir),
    }
}

/// Checks a planned sweep job (`args` without the program name) the way the job's command
/// will when it runs, without running it: a plan never holds a job that can only fail.
pub(crate) fn check_job(args: &[String]) -> Result<(), CliError> {
    let argv = std::iter::once("fp8gen".to_string()).chain(args.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        let text = e.render().to_string();
        CliError::usage(
            text.lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string(),
        )
    })?;
    match &cli.cmd {
        Cmd::Verify { gen, verify: v } => {
            let unit = gen.unit.as_deref().ok_or_else(|| {
                CliError::usage("a verify job needs --unit (sweeps generate their cores)")
            })?;
            gen.rest.request(unit)?;
            if let Some(s) = &v.shard {
                s.parse::<sim::Shard>()
                    .map_err(|e| CliError::usage(format!("--shard: {e}")))?;
            }
            Ok(())
        }
        Cmd::Prove(a) => prove_cmd::checked(a).map(|_| ()),
        Cmd::Synth {
            gen,
            target,
            freq,
            seeds,
            fmax: None,
            ..
        } => fpga_cmd::synth_checked(gen, target, *freq, *seeds).map(|_| ()),
        _ => Err(CliError::usage(
            "a sweep job runs verify, prove or synth (without --fmax)",
        )),
    }
}

fn opt_named(flag: &str, name: Option<String>, default: Format) -> Result<Format, CliError> {
    match name {
        Some(n) => parse_named(flag, &n),
        None => Ok(default),
    }
}

fn scale_format(s: &ScaleArgs) -> Result<Option<Format>, CliError> {
    match (&s.scale_format, s.scaled) {
        (Some(n), _) => scale_named(n).map(Some),
        (None, true) => Ok(Some(Format::E8M0)),
        (None, false) => Ok(None),
    }
}

fn operand_columns(fx: &Format, fy: &Format, sf: Option<&Format>) -> Vec<Column> {
    match sf {
        None => vec![Column::of("x", fx), Column::of("y", fy)],
        Some(sf) => vec![
            Column::of("x", fx),
            Column::of("sx", sf),
            Column::of("y", fy),
            Column::of("sy", sf),
        ],
    }
}

fn scales(sf: Format, v: &[u32]) -> (Scale, Scale) {
    (
        Scale {
            format: sf,
            code: v[1],
        },
        Scale {
            format: sf,
            code: v[3],
        },
    )
}

fn add_random_column(cols: &mut Vec<Column>, spec: &Spec) {
    let n = spec.rounding.random_bits();
    if n > 0 {
        cols.push(Column {
            name: "rnd".to_string(),
            bits: n,
            what: format!("{n} random bits of --sr-bits"),
        });
    }
}

fn rnd(v: &[u32], i: usize) -> u32 {
    v.get(i).copied().unwrap_or(0)
}

fn formats(json: bool) -> Result<(), CliError> {
    let rows: Vec<serde_json::Value> = PRESETS
        .iter()
        .map(|(name, f, desc)| format_json(name, f, desc))
        .collect();
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<12} {:>2} {:>2} {:>4} {:>3} {:<15} {:>12} {:>12} {:>12} {:>5} {:>5}  description",
        "name",
        "k",
        "p",
        "bias",
        "s/u",
        "specials",
        "max",
        "min normal",
        "min subnorm",
        "nan",
        "+inf"
    )?;
    for (name, f, desc) in PRESETS {
        let max = f.decode(f.max_finite_mag());
        let minn = f.decode(if f.has_subnormals() {
            1 << f.man_bits()
        } else {
            0
        });
        let mins = if f.has_subnormals() && f.p > 1 {
            f.decode(1).to_f64().to_string()
        } else {
            "-".into()
        };
        writeln!(
            out,
            "{:<12} {:>2} {:>2} {:>4} {:>3} {:<15} {:>12} {:>12} {:>12} {:>5} {:>5}  {}",
            name,
            f.k,
            f.p,
            f.bias,
            if f.signed { "s" } else { "u" },
            f.specials.name(),
            max.to_f64(),
            minn.to_f64(),
            mins,
            f.nan_code()
                .map(|c| format!("{c:#04x}"))
                .unwrap_or("-".into()),
            f.pos_inf_code()
                .map(|c| format!("{c:#04x}"))
                .unwrap_or("-".into()),
            desc
        )?;
    }
    writeln!(
        out,
        "\nAlso: binary{{K}}p{{P}}{{s|u}}{{e|f}} (IEEE P3109, K 2..=16), binary32/binary16/bfloat16 as external formats, and custom formats via --k --p --bias --signed/--unsigned --specials."
    )?;
    Ok(())
}

fn format_json(name: &str, f: &Format, desc: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name,
        "k": f.k,
        "p": f.p,
        "bias": f.bias,
        "signed": f.signed,
        "specials": f.specials.name(),
        "exp_bits": f.exp_bits(),
        "man_bits": f.man_bits(),
        "max_finite": f.decode(f.max_finite_mag()).to_hex_float(),
        "nan_code": f.nan_code(),
        "pos_inf_code": f.pos_inf_code(),
        "neg_inf_code": f.neg_inf_code(),
        "has_neg_zero": f.has_neg_zero(),
        "description": desc,
    })
}

fn decode(f: &Format, json: bool) -> Result<(), CliError> {
    if f.k > 16 {
        return Err(CliError::usage(format!(
            "decode lists every code of a format; {} has 2^{} codes: use a format of at most 16 bits",
            f.name(),
            f.k
        )));
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let w = f.k.div_ceil(4) as usize;
    let b32 = Format::BINARY32;
    let to32 = |c: u32| {
        let (r, fl) = golden::convert(f, c, &b32, &Spec::ieee(Rounding::Rne), 0);
        (fl == golden::Flags::NONE).then_some(r)
    };
    if json {
        let rows: Vec<serde_json::Value> = (0..f.num_codes() as u32)
            .map(|c| {
                let d = f.decode(c);
                serde_json::json!({
                    "code": format!("0x{c:0w$x}"),
                    "class": d.class,
                    "value": d.to_hex_float(),
                    "decimal": d.to_f64(),
                    "binary32": to32(c).map(|b| format!("0x{b:08x}")),
                })
            })
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "format": f.name(),
                "codes": rows
            }))
            .unwrap_or_default()
        )?;
    } else {
        writeln!(
            out,
            "# {} (k={}, p={}, bias={}, {}, {})",
            f.name(),
            f.k,
            f.p,
            f.bias,
            if f.signed { "signed" } else { "unsigned" },
            f.specials.name()
        )?;
        writeln!(
            out,
            "# code  class      value (exact)        decimal  binary32"
        )?;
        for c in 0..f.num_codes() as u32 {
            let d = f.decode(c);
            let cls = format!("{:?}", d.class).to_lowercase();
            let b = to32(c)
                .map(|b| format!("{b:08x}"))
                .unwrap_or_else(|| "-".into());
            writeln!(
                out,
                "{c:0w$x}  {cls:<9}  {:<20} {:>8}  {b}",
                d.to_hex_float(),
                d.to_f64()
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

fn bench(formats: &[String], n: u64, json: bool) -> Result<(), CliError> {
    let names: Vec<String> = if formats.is_empty() {
        [
            "e4m3",
            "e5m2",
            "binary8p3se",
            "k11p6b9s-ieee",
            "binary12p5uf",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    } else {
        formats.to_vec()
    };
    let mut rows = Vec::new();
    for name in &names {
        let f = parse_named("--format", name)?;
        let spec = Spec::new(Rounding::Rne, golden::Saturation::SatFinite);
        // binary32 → f projection over a pre-generated array, like a tensor cast: values of
        // an ML-like spread (exponents within ±12 binades of 1, random mantissas and signs),
        // and, separately, uniformly random bit patterns (every class, worst case).
        let pr = golden::Projector::new(Format::BINARY32, f, spec);
        let mut acc = 0u32;
        let mut x: u64 = 0x1234_5678;
        let mut gen = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 32) as u32
        };
        let typical: Vec<u32> = (0..1 << 20)
            .map(|_| {
                let r = gen();
                let e = 115 + (r >> 8) % 24;
                (r & 0x8000_0000) | (e << 23) | (gen() & 0x7F_FFFF)
            })
            .collect();
        let uniform: Vec<u32> = (0..1 << 20).map(|_| gen()).collect();
        let reps = (n >> 20).max(1);
        let t = std::time::Instant::now();
        for _ in 0..reps {
            for &v in &typical {
                let (c, fl) = pr.convert(std::hint::black_box(v), 0);
                acc = acc.wrapping_add(c ^ fl.0 as u32);
            }
        }
        let n = reps << 20;
        let proj = n as f64 / t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        for _ in 0..reps {
            for &v in &uniform {
                let (c, fl) = pr.convert(std::hint::black_box(v), 0);
                acc = acc.wrapping_add(c ^ fl.0 as u32);
            }
        }
        let proj_uniform = n as f64 / t.elapsed().as_secs_f64();
        // f × f → f multiply over all code pairs, repeated.
        let codes = f.num_codes().min(1 << 16) as u32;
        let t = std::time::Instant::now();
        let mut m = 0u64;
        let mut y: u32 = 0;
        while m < n / 4 {
            y = y.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let (c, fl) = golden::mul(&f, y % codes, &f, (y >> 16) % codes, &f, &spec, 0);
            acc = acc.wrapping_add(c ^ fl.0 as u32);
            m += 1;
        }
        let mul = m as f64 / t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let mut k = 0u64;
        while k < n / 8 {
            y = y.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let z = y.rotate_left(7) ^ 0x3c00_0000;
            let (c, fl) = golden::fma(
                &f,
                y % codes,
                &f,
                (y >> 16) % codes,
                z,
                &Spec::ieee(Rounding::Rne),
                golden::FmaOptions::default(),
            );
            acc = acc.wrapping_add(c ^ fl.0 as u32);
            k += 1;
        }
        let fma = k as f64 / t.elapsed().as_secs_f64();
        std::hint::black_box(acc);
        rows.push(serde_json::json!({
            "format": f.name(),
            "project_binary32_rne_per_s": proj,
            "project_binary32_rne_uniform_bits_per_s": proj_uniform,
            "mul_rne_per_s": mul,
            "fma_binary32_rne_per_s": fma,
        }));
        if !json {
            outln!(
                "{:<16} project binary32→fmt {:>8.3e}/s (uniform bits {:>8.3e}/s)   mul {:>8.3e}/s   fma {:>8.3e}/s",
                f.name(),
                proj,
                proj_uniform,
                mul,
                fma
            );
        }
    }
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
    } else {
        outln!(
            "single thread; target ≥ 1.5e8 projections/s (ml_dtypes' binary32→E4M3 cast: 1.4e8/s)"
        );
    }
    Ok(())
}
