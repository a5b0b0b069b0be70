//! The proof matrix of `make prove`: every (unit, format, rounding) combination proven with
//! `formal::prove_request`, one Markdown row each, the table rewritten after every proof so a
//! partial run keeps its results.
//!
//! ```text
//! cargo run --release -p fp8gen-formal --example prove_matrix -- \
//!     [--units fma,mul,project] [--formats e4m3,e5m2,e4m3fnuz,binary8p3se] \
//!     [--roundings rne,rna,rtp,rtn,rtz,rto] [--saturation satfinite] [--timeout 3600] \
//!     [--engine cadical|sat|sby-yices] [--out docs/prove-table.md] \
//!     [--set options [--slow]] [--merge] [--summary]
//! ```
//!
//! Under the table a line says how many proofs it holds, the sum of their seconds and the
//! slowest ([`formal::matrix::summary`]; README.md quotes it, a test compares the two);
//! `--summary` rewrites only that line of `--out`.
//!
//! `--set options` proves instead one row per unit and option the reference covers beyond the
//! rounding matrix ([`option_rows`]: decode of every family, convert, add, quantize, stochastic
//! rounding, block scales, run-time modes, every saturation, `--ftz`, `--no-flags`,
//! `--rto-overflow ieee`, tininess before rounding); `--slow` adds the FMA rows among them
//! (minutes each). `--merge` keeps the rows of the existing table that this run does not
//! prove again (same unit, format, rounding, saturation and options).

use formal::{prove_request, Engine, ProveOptions, Verdict};
use golden::{Format, Rounding, Saturation};
use rtl::manifest::{Formats, Unit};
use rtl::{GenOptions, GenRequest, RoundingSel, SaturationSel};
use std::fmt::Write as _;

/// CPU seconds of this process and of its children waited for so far (utime, stime, cutime,
/// cstime of `/proc/self/stat`, in clock ticks of `getconf CLK_TCK`): the matrix proves one
/// row at a time, so the difference around a proof is its CPU time (fp8gen, yosys and the
/// CaDiCaL processes), which a loaded machine does not inflate as it does wall time. `None`
/// where `/proc` is missing.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name in parentheses; utime is the 14th field of the line.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    static TCK: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let tck = *TCK.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    });
    (f.len() == 4).then(|| f.iter().sum::<f64>() / tck)
}

fn f(name: &str) -> Format {
    Format::parse(name).expect("format")
}

/// A request of `unit` with x = y = `fx`, result `fr`, fixed modes `rm` / `sat` (`None`: a
/// run-time port).
fn base(
    unit: Unit,
    fx: Format,
    fr: Format,
    rm: Option<Rounding>,
    sat: Option<Saturation>,
) -> GenRequest {
    let two = matches!(unit, Unit::Mul | Unit::Fma | Unit::Add);
    GenRequest {
        unit,
        formats: Formats {
            x: fx,
            y: two.then_some(fx),
            r: fr,
            scale: None,
            z: None,
        },
        rounding: rm.map_or(RoundingSel::Dynamic, RoundingSel::Fixed),
        saturation: sat.map_or(SaturationSel::Dynamic, SaturationSel::Fixed),
        sr_bits: rm.map_or(0, |r| r.random_bits()),
        stages: 0,
        options: GenOptions::default(),
    }
}

/// The rows of `--set options`: (options label, request, slow).
fn option_rows() -> Vec<(String, GenRequest, bool)> {
    use Saturation::*;
    let b32 = Format::BINARY32;
    let (e4m3, e5m2) = (Format::E4M3, Format::E5M2);
    let rne = Some(Rounding::Rne);
    let mut v: Vec<(String, GenRequest, bool)> = Vec::new();
    let mut add = |label: &str, r: GenRequest, slow: bool| v.push((label.to_string(), r, slow));
    for name in [
        "e4m3",
        "e5m2",
        "e4m3fnuz",
        "binary8p3se",
        "binary8p3uf",
        "e2m1",
        "e8m0",
        "binary10p1se",
    ] {
        add("", GenRequest::decode(f(name)), false);
    }
    // Every saturation (satfinite is the rounding matrix's) and run-time modes.
    for sat in [SatNone, SatPropagate, SatNoneV4] {
        add("", base(Unit::Mul, e4m3, e4m3, rne, Some(sat)), false);
        add("", base(Unit::Project, b32, e4m3, rne, Some(sat)), false);
        add("", base(Unit::Convert, e5m2, e4m3, rne, Some(sat)), false);
        add("", base(Unit::Add, e4m3, e4m3, rne, Some(sat)), false);
    }
    add("", base(Unit::Mul, e5m2, e5m2, rne, Some(SatNone)), false);
    add(
        "",
        base(Unit::Project, b32, e5m2, rne, Some(SatNone)),
        false,
    );
    add(
        "",
        base(Unit::Convert, e4m3, Format::BFLOAT16, rne, Some(SatNone)),
        false,
    );
    add("", base(Unit::Add, e5m2, b32, rne, Some(SatNone)), false);
    for unit in [Unit::Mul, Unit::Project, Unit::Convert, Unit::Add] {
        let (fx, fr) = match unit {
            Unit::Project => (b32, e4m3),
            Unit::Convert => (e5m2, e4m3),
            _ => (e4m3, e4m3),
        };
        add("", base(unit, fx, fr, None, None), false);
    }
    for sat in [SatFinite, SatNone, SatPropagate] {
        let mut q = base(Unit::Quantize, Format::BFLOAT16, e4m3, rne, Some(sat));
        q.formats.scale = Some(Format::E8M0);
        q.options.block = iface::BlockShape {
            n: 2,
            policy: golden::ScalePolicy::Rceil,
        };
        add("n=2 rceil", q, false);
    }
    // Stochastic rounding: rnd_i is a free input.
    for r in [Rounding::Sra(3), Rounding::Srb(3), Rounding::Src(3)] {
        add(
            "",
            base(Unit::Project, b32, e4m3, Some(r), Some(SatFinite)),
            false,
        );
    }
    let mut r = base(Unit::Project, b32, e4m3, None, None);
    r.sr_bits = 4;
    add("--sr-bits 4", r, false);
    let mut r = base(Unit::Mul, e4m3, e4m3, None, None);
    r.sr_bits = 2;
    add("--sr-bits 2", r, false);
    let mut r = base(Unit::Convert, e5m2, e4m3, None, Some(SatNone));
    r.sr_bits = 3;
    add("--sr-bits 3", r, false);
    // Block scales.
    for (sf, sat) in [(Format::E8M0, SatFinite), (f("binary8p1ue"), SatNone)] {
        let mut r = base(Unit::Project, b32, e4m3, rne, Some(sat));
        r.formats.scale = Some(sf);
        add(&format!("--scale-format {}", sf.name()), r, false);
    }
    let mut r = base(Unit::Mul, e4m3, e4m3, rne, Some(SatFinite));
    r.formats.scale = Some(Format::E8M0);
    add("--scale-format e8m0", r, false);
    // Options of the rounder and of mul.
    let mut r = base(Unit::Mul, e4m3, e4m3, None, None);
    r.options.ftz = true;
    add("--ftz", r, false);
    let mut r = base(Unit::Mul, e4m3, e4m3, rne, Some(SatNone));
    r.options.no_flags = true;
    add("--no-flags", r, false);
    for unit in [Unit::Convert, Unit::Add] {
        let fx = if unit == Unit::Add {
            e5m2
        } else {
            f("binary8p3se")
        };
        let mut r = base(unit, fx, e5m2, None, None);
        r.options.rto_overflow = golden::RtoOverflow::Ieee;
        add("--rto-overflow ieee", r, false);
    }
    for unit in [Unit::Mul, Unit::Project] {
        let fx = if unit == Unit::Mul { e5m2 } else { b32 };
        let mut r = base(unit, fx, e5m2, Some(Rounding::Rto), Some(SatNone));
        r.options.rto_overflow = golden::RtoOverflow::Ieee;
        add("--rto-overflow ieee", r, false);
        let mut r = base(unit, fx, e4m3, rne, Some(SatFinite));
        r.options.tininess = golden::Tininess::BeforeRounding;
        add("--tininess before", r, false);
    }
    // The FMA: minutes per proof.
    for sat in [SatNone, SatPropagate] {
        add("", base(Unit::Fma, e4m3, b32, rne, Some(sat)), true);
    }
    add("", base(Unit::Fma, e4m3, b32, None, None), true);
    let mut r = base(Unit::Fma, e4m3, b32, rne, Some(SatFinite));
    r.options.ftz = true;
    add("--ftz", r, true);
    let mut r = base(Unit::Fma, e4m3, b32, rne, Some(SatFinite));
    r.formats.scale = Some(Format::E8M0);
    add("--scale-format e8m0", r, true);
    v
}

fn mode_name(r: &GenRequest) -> (String, String) {
    let rm = match r.rounding {
        RoundingSel::Fixed(x) => x.to_string(),
        RoundingSel::Dynamic => "dyn".into(),
    };
    let sat = match r.saturation {
        SaturationSel::Fixed(x) => x.name().to_string(),
        SaturationSel::Dynamic => "dyn".into(),
    };
    (rm, sat)
}

fn list(args: &[String], flag: &str, default: &str) -> Vec<String> {
    let v = args
        .iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
        .unwrap_or(default);
    v.split(',').map(str::to_string).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let units = list(&args, "--units", "fma,mul,project");
    let formats = list(&args, "--formats", "e4m3,e5m2,e4m3fnuz,binary8p3se");
    let roundings = list(&args, "--roundings", "rne,rna,rtp,rtn,rtz,rto");
    let sat = Saturation::parse(&list(&args, "--saturation", "satfinite")[0]).expect("saturation");
    let timeout: u64 = list(&args, "--timeout", "3600")[0]
        .parse()
        .expect("timeout");
    let engine = Engine::parse(&list(&args, "--engine", "cadical")[0]).expect("engine");
    let out = list(&args, "--out", "docs/prove-table.md")[0].clone();
    let set = list(&args, "--set", "matrix")[0].clone();
    let slow = args.iter().any(|a| a == "--slow");
    let merge = args.iter().any(|a| a == "--merge");
    if args.iter().any(|a| a == "--summary") {
        // Only the line under the table (count, sum of seconds, slowest), from its rows.
        let old = std::fs::read_to_string(&out).expect("read table");
        std::fs::write(&out, formal::matrix::with_summary(&old)).expect("write table");
        return;
    }
    let mut jobs: Vec<(String, GenRequest)> = Vec::new();
    if set == "options" {
        for (label, r, is_slow) in option_rows() {
            let name = r.unit.name();
            // Every unit unless --units names some.
            let wanted = !args.iter().any(|a| a == "--units") || units.iter().any(|u| u == name);
            if (!is_slow || slow) && wanted {
                jobs.push((label, r));
            }
        }
    } else {
        for u in &units {
            let unit = Unit::parse(u).unwrap_or_else(|| panic!("unit {u}"));
            for fmt in &formats {
                let fmt = f(fmt);
                for r in &roundings {
                    let r = Rounding::parse(r, 0).expect("rounding");
                    let (x, res) = match unit {
                        Unit::Project => (Format::BINARY32, fmt),
                        Unit::Fma => (fmt, Format::BINARY32),
                        _ => (fmt, fmt),
                    };
                    jobs.push((String::new(), base(unit, x, res, Some(r), Some(sat))));
                }
            }
        }
    }
    // Rows kept from the existing table (--merge): keyed by their first five cells.
    let key = |row: &str| -> String {
        row.split('|')
            .skip(1)
            .take(5)
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("|")
    };
    let mut kept: Vec<String> = Vec::new();
    let mut header_note = String::new();
    if merge {
        let old = std::fs::read_to_string(&out).unwrap_or_default();
        // The lines between the `Solver:` line and the table are a note that is kept (the
        // summary line after the table is written anew).
        let mut after_solver = false;
        let mut in_table = false;
        for l in old.lines() {
            if l.starts_with('|') {
                in_table = true;
            }
            if l.starts_with("| ") && !l.starts_with("| unit ") {
                kept.push(formal::matrix::upgrade_row(l));
            } else if l.starts_with("Solver") {
                after_solver = true;
            } else if after_solver && !in_table && !l.starts_with('|') {
                header_note.push_str(l);
                header_note.push('\n');
            }
        }
    }
    let mut rows: Vec<String> = Vec::new();
    let mut solver = String::new();
    let t0 = std::time::Instant::now();
    for (label, req) in &jobs {
        let unit = req.unit;
        let fl = formal::prove::formats_label(req);
        let (rm, sname) = mode_name(req);
        let opts = ProveOptions {
            timeout_secs: timeout,
            replay: true,
            engine: engine.clone(),
            vcd: std::path::PathBuf::from(format!(
                "out/prove/{}_{}_{}.vcd",
                unit.name(),
                req.formats.x.ident(),
                rm
            )),
            ..ProveOptions::default()
        };
        let label = if label.is_empty() {
            "-"
        } else {
            label.as_str()
        };
        let cpu0 = cpu_seconds();
        let result = prove_request(req, &opts);
        let cpu = match (cpu0, cpu_seconds()) {
            (Some(a), Some(b)) => format!("{:.1}", b - a),
            _ => String::new(),
        };
        let cell = match result {
            Ok(reps) => {
                let rep = &reps[0];
                solver = rep.solver.clone();
                let v = match rep.verdict {
                    Verdict::Proven => "**proven**".to_string(),
                    Verdict::Refuted => format!(
                        "REFUTED: {}",
                        rep.counterexample
                            .as_ref()
                            .map(|c| c
                                .inputs
                                .iter()
                                .map(|(n, v)| format!("{n}=0x{v}"))
                                .collect::<Vec<_>>()
                                .join(" "))
                            .unwrap_or_default()
                    ),
                    Verdict::NoVerdict => {
                        format!("no verdict ({})", rep.detail.clone().unwrap_or_default())
                    }
                };
                format!(
                    "| {} | {fl} | {rm} | {sname} | {label} | {v} | {:.1} | {cpu} | {} |",
                    unit.name(),
                    rep.seconds,
                    rep.problem
                        .as_deref()
                        .unwrap_or("")
                        .trim_start_matches("Solving problem with ")
                )
            }
            Err(e) => format!(
                "| {} | {fl} | {rm} | {sname} | {label} | error: {e} | | | |",
                unit.name(),
            ),
        };
        eprintln!("{cell}");
        rows.push(cell);
        let done: Vec<String> = rows.iter().map(|r| key(r)).collect();
        let mut all: Vec<&String> = kept.iter().filter(|r| !done.contains(&key(r))).collect();
        all.extend(rows.iter());
        let mut md = String::new();
        let _ = writeln!(
            md,
            "<!-- written by `make prove` (formal/examples/prove_matrix.rs){}; this run {:.0} s so far -->",
            if merge { " merging into the rows of earlier runs" } else { "" },
            t0.elapsed().as_secs_f64()
        );
        let _ = writeln!(md, "Solver: {solver}; time limit {timeout} s per proof.");
        md.push_str(&header_note);
        if header_note.is_empty() {
            md.push('\n');
        }
        md.push_str(formal::matrix::HEADER);
        for r in all {
            md.push_str(r);
            md.push('\n');
        }
        if let Some(dir) = std::path::Path::new(&out).parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        std::fs::write(&out, formal::matrix::with_summary(&md)).expect("write table");
    }
}
