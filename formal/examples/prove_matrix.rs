//! The proof matrix of `make prove`: every (unit, format, rounding) combination proven with
//! `formal::prove_request`, one Markdown row each, the table rewritten after every proof so a
//! partial run keeps its results.
//!
//! ```text
//! cargo run --release -p fp8gen-formal --example prove_matrix -- \
//!     [--units fma,mul,project] [--formats e4m3,e5m2,e4m3fnuz,binary8p3se] \
//!     [--roundings rne,rna,rtp,rtn,rtz,rto] [--saturation satfinite] [--timeout 3600] \
//!     [--engine cadical|sat|sby-yices] [--out docs/prove-table.md]
//! ```

use formal::{prove_request, Engine, ProveOptions, Verdict};
use golden::{Format, Rounding, Saturation};
use rtl::manifest::{Formats, Unit};
use rtl::{GenOptions, GenRequest, RoundingSel, SaturationSel};
use std::fmt::Write as _;

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
    let mut rows: Vec<String> = Vec::new();
    let mut solver = String::new();
    let t0 = std::time::Instant::now();
    for u in &units {
        let unit = match u.as_str() {
            "fma" => Unit::Fma,
            "mul" => Unit::Mul,
            "project" => Unit::Project,
            other => panic!("unit {other}"),
        };
        for f in &formats {
            let f = Format::parse(f).expect("format");
            for r in &roundings {
                let r = Rounding::parse(r, 0).expect("rounding");
                let req = GenRequest {
                    unit,
                    formats: Formats {
                        x: if unit == Unit::Project {
                            Format::BINARY32
                        } else {
                            f
                        },
                        y: (unit != Unit::Project).then_some(f),
                        r: if unit == Unit::Fma {
                            Format::BINARY32
                        } else {
                            f
                        },
                        scale: None,
                        z: None,
                    },
                    rounding: RoundingSel::Fixed(r),
                    saturation: SaturationSel::Fixed(sat),
                    sr_bits: 0,
                    stages: 0,
                    options: GenOptions::default(),
                };
                let opts = ProveOptions {
                    timeout_secs: timeout,
                    replay: true,
                    engine: engine.clone(),
                    vcd: std::path::PathBuf::from(format!(
                        "out/prove/{}_{}_{}.vcd",
                        unit.name(),
                        f.ident(),
                        r.name()
                    )),
                    ..ProveOptions::default()
                };
                let cell = match prove_request(&req, &opts) {
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
                            "| {} | {} | {} | {} | {v} | {:.1} | {} |",
                            unit.name(),
                            f.name(),
                            r.name(),
                            sat.name(),
                            rep.seconds,
                            rep.problem
                                .as_deref()
                                .unwrap_or("")
                                .trim_start_matches("Solving problem with ")
                        )
                    }
                    Err(e) => format!(
                        "| {} | {} | {} | {} | error: {e} | | |",
                        unit.name(),
                        f.name(),
                        r.name(),
                        sat.name()
                    ),
                };
                eprintln!("{cell}");
                rows.push(cell);
                let mut md = String::new();
                let _ = writeln!(
                    md,
                    "<!-- written by `make prove` (formal/examples/prove_matrix.rs); {:.0} s so far -->",
                    t0.elapsed().as_secs_f64()
                );
                let _ = writeln!(md, "Solver: {solver}; time limit {timeout} s per proof.\n");
                md.push_str("| unit | format | rounding | saturation | verdict | seconds | SAT problem |\n|---|---|---|---|---|---|---|\n");
                for r in &rows {
                    md.push_str(r);
                    md.push('\n');
                }
                if let Some(dir) = std::path::Path::new(&out).parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                std::fs::write(&out, md).expect("write table");
            }
        }
    }
}
