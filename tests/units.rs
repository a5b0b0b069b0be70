//! Units reached through the unit registry only: `convert` generated, verified exhaustively,
//! proven and evaluated by `eval` (the batch command every unit gets from the registry), a
//! mutant refuted, and the registry's option rules as exact messages.

use crate::common;

use common::{gen, run, run_stdin, stderr, stdout, verilog_of};

#[test]
fn convert_core_verifies_exhaustively_and_a_mutant_fails() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("c");
    gen(
        &d,
        &[
            "-u",
            "convert",
            "--in-format",
            "e5m2",
            "-f",
            "e4m3",
            "-r",
            "dyn",
            "-s",
            "dyn",
        ],
    );
    let o = run(&["verify", "--from", d.to_str().unwrap()]);
    let out = stderr(&o) + &stdout(&o);
    assert!(o.status.success(), "{out}");
    // 256 codes x 6 roundings x 4 saturations, every one.
    assert!(out.contains("PASS: 6144 vectors, 0 mismatches"), "{out}");
    assert!(out.contains("exhaustive"), "{out}");
    // The mutant: rounding mode 0 (RNE) reads as RTZ in one place.
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    let needle = "assign r_o = ";
    assert!(
        text.contains(needle),
        "no r_o assignment in {}",
        v.display()
    );
    let bad = text.replacen(needle, "assign r_o = (z_i == 8'h3d) ? 8'h38 : ", 1);
    std::fs::write(&v, bad).unwrap();
    let o = run(&["verify", "--from", d.to_str().unwrap()]);
    let out = stderr(&o) + &stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL"), "{out}");
}

#[test]
fn convert_is_proven() {
    let o = run(&[
        "prove",
        "-u",
        "convert",
        "--in-format",
        "e5m2",
        "-f",
        "e4m3",
        "-s",
        "satfinite",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}{}", out, stderr(&o));
    assert!(out.starts_with("PROVEN:"), "{out}");
}

#[test]
fn eval_gives_known_answers_for_any_unit() {
    // e5m2 -> e4m3, satfinite: 1.0, 1.25 (exact), 57344 (saturates to 448 with overflow and
    // inexact), NaN (NaN, no flag: every small NaN is quiet), -0.
    let o = run_stdin(
        &[
            "eval",
            "-u",
            "convert",
            "--in-format",
            "e5m2",
            "-f",
            "e4m3",
            "-s",
            "satfinite",
        ],
        "3c\n3d\n7b\n7f\n80\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "38 0\n3a 0\n7e 5\n7f 0\n80 0\n");
    // decode's five outputs, by name.
    let o = run_stdin(&["eval", "-u", "decode", "-f", "e4m3", "--json"], "38\n");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "{\"class_o\":\"0x0\",\"r_o\":\"0x3f800000\",\"sign_o\":\"0x0\",\"exp_o\":\"0x00\",\"sig_o\":\"0x8\"}\n"
    );
    // A field wider than its port is an error naming the port.
    let o = run_stdin(
        &["eval", "-u", "convert", "--in-format", "e5m2", "-f", "e4m3"],
        "100\n",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("field z_i = 100 does not fit in the 8-bit port z_i (z) (8 bits)"),
        "{}",
        stderr(&o)
    );
    // A stateful unit is refused with the reason.
    let o = run_stdin(&["eval", "-u", "mac", "-f", "e4m3"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("mac keeps state between inputs"));
}

#[test]
fn registry_rules_are_exact_messages() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["gen", "-u", "convert", "-f", "e4m3", "-o", "x"],
            "error: --unit convert needs --in-format F, the format it reads (--format is the result format)\n",
        ),
        (
            &["gen", "-u", "convert", "--in-format", "e5m2", "-f", "e4m3", "--format-y", "e5m2", "-o", "x"],
            "error: --format-y applies to --unit add, mul, fma, mac or dot only, not to convert\n",
        ),
        (
            &["gen", "-u", "mac", "-f", "e4m3", "--out-format", "e5m2", "-o", "x"],
            "error: --out-format applies to --unit add, mul, fma or dot only, not to mac\n",
        ),
        (
            &["gen", "-u", "convert", "--in-format", "e5m2", "-f", "e4m3", "--ftz", "-o", "x"],
            "error: unsupported request: --ftz applies to mul, fma or mac only, not to the convert unit\n",
        ),
        (
            &["gen", "-u", "convert", "--in-format", "e4m3", "-f", "e4m3", "-o", "x"],
            "error: invalid request: convert from e4m3 to itself is the identity; give a different --in-format or --format\n",
        ),
    ];
    for (args, want) in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&o), want, "{args:?}");
    }
}

/// The arguments `fp8gen prove -u U` cannot do without, read from the registry: a format
/// (`-f e4m3`), the input format of a unit that has no default one (`--in-format e5m2`), and
/// the element count of a unit with a shape (`--n 2`). Everything else is the default.
fn default_proof_args(unit: iface::Unit) -> Vec<String> {
    use iface::{UnitOption, XFormat};
    let mut a: Vec<String> = ["prove", "-u", unit.name(), "-f", "e4m3"]
        .map(String::from)
        .to_vec();
    if unit.spec().formats.x == XFormat::InFormat(None) {
        a.extend(["--in-format", "e5m2"].map(String::from));
    }
    if unit.accepts(UnitOption::DotShape) || unit.accepts(UnitOption::Block) {
        a.extend(["--n", "2"].map(String::from));
    }
    a
}

/// Units whose default proof takes minutes, with the time measured (2 cores shared with other
/// jobs; docs/prove.md "Default proofs"): proven by the #[ignore]d test below.
const SLOW_DEFAULT_PROOFS: [(&str, &str); 3] = [
    (
        "fma",
        "satnone, binary32 addend: 95 s on 2 free cores, 165 CPU s (16 cubes on the alignment)",
    ),
    (
        "mac",
        "lemma F is the fma's proof, then the induction: 99 s on 2 free cores, 167 CPU s",
    ),
    ("quantize", "N = 2: 302 s wall under load, 15.5 CPU s"),
];

/// `fp8gen prove -u U` with only the arguments it needs proves U's default core: every line
/// of its output that gives a verdict says PROVEN.
fn default_proof_is_proven(unit: iface::Unit) {
    let args = default_proof_args(unit);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&a);
    let out = stdout(&o);
    let verdicts: Vec<&str> = out
        .lines()
        .filter(|l| {
            ["PROVEN", "REFUTED", "NO VERDICT"]
                .iter()
                .any(|v| l.starts_with(v))
        })
        .collect();
    assert!(
        o.status.success()
            && !verdicts.is_empty()
            && verdicts.iter().all(|l| l.starts_with("PROVEN:")),
        "{}: {out}{}",
        args.join(" "),
        stderr(&o)
    );
}

#[test]
fn every_units_default_proof_is_proven() {
    for (name, _) in SLOW_DEFAULT_PROOFS {
        assert!(iface::Unit::parse(name).is_some(), "{name} is no unit");
    }
    let units: Vec<iface::Unit> = iface::Unit::ALL
        .into_iter()
        .filter(|u| !SLOW_DEFAULT_PROOFS.iter().any(|(n, _)| *n == u.name()))
        .collect();
    assert!(!units.is_empty());
    // Two proofs at a time: each is mostly yosys and CaDiCaL processes, and one after the
    // other they left a core idle for most of this test's 100 s.
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    match units.get(i) {
                        Some(&u) => default_proof_is_proven(u),
                        None => break,
                    }
                })
            })
            .collect();
        for w in workers {
            if let Err(e) = w.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
}

#[test]
#[ignore = "minutes per unit (SLOW_DEFAULT_PROOFS)"]
fn the_slow_default_proofs_are_proven() {
    for unit in iface::Unit::ALL {
        if SLOW_DEFAULT_PROOFS.iter().any(|(n, _)| *n == unit.name()) {
            default_proof_is_proven(unit);
        }
    }
}
