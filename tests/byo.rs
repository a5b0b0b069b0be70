//! Users' RTL as it is (docs/byo.md): a third-party-style core with its own port names, a
//! RISC-V `frm` rounding port, a 5-bit RISC-V `fflags` port and a tied operation select,
//! verified with `fp8gen verify --from` and no wrapper; its mutants fail with mismatch counts
//! per mode, per flag bit and per class that the planted bugs fix exactly.

mod common;
use common::{edit_manifest, gen, run, run_stdin, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/byo");

/// The walk-through of docs/byo.md in `dir`: the fp8gen datapath the fixture instantiates,
/// then the fixture's core and manifest.
fn acme(dir: &Path) -> PathBuf {
    let gen_dir = dir.join("datapath");
    gen(
        &gen_dir,
        &["-u", "mul", "-f", "e4m3", "-r", "dyn", "-s", "satfinite"],
    );
    let d = dir.join("acme");
    std::fs::create_dir_all(&d).unwrap();
    let core = "fp8_mul_e4m3_to_e4m3_rmdyn_satfinite_s0.v";
    std::fs::copy(gen_dir.join(core), d.join(core)).unwrap();
    for f in ["acme_fmul.v", "manifest.json"] {
        std::fs::copy(Path::new(FIXTURE).join(f), d.join(f)).unwrap();
    }
    d
}

/// `verify --from d --json extra…`: exit code and the summary.
fn verify(d: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let vcd = d.join("cx.vcd");
    let mut a = vec!["verify", "--from", d.to_str().unwrap(), "--json"];
    a.extend_from_slice(&["--vcd", vcd.to_str().unwrap()]);
    a.extend_from_slice(extra);
    let o = run(&a);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
    (o.status.code(), v, stderr(&o))
}

fn counts(v: &Value) -> Value {
    v["mismatch_classes"].clone()
}

#[test]
fn a_riscv_style_core_passes_with_no_wrapper_and_its_mutants_are_classified() {
    let t = tempfile::tempdir().unwrap();
    let d = acme(t.path());
    let (code, s, e) = verify(&d, &[]);
    assert_eq!(code, Some(0), "{e}");
    // 5 RISC-V modes (no rto: frm has none) x every operand pair; op tied, not a vector.
    assert_eq!(s["vectors"], 5 * 65536);
    assert_eq!(s["meta"]["tied"], "op = 0x1");
    assert_eq!(s["meta"]["inputs"], "a[8] b[8] frm[3]");
    assert_eq!(
        s["meta"]["modes"],
        "rne/satfinite, rtz/satfinite, rtn/satfinite, rtp/satfinite, rna/satfinite"
    );
    assert!(s["meta"]["rounding_encoding"]
        .as_str()
        .unwrap()
        .starts_with("frm: riscv: rne = 0, rtz = 1, rtn = 2, rtp = 3, rna = 4"));
    assert!(s["meta"]["flags_layout"]
        .as_str()
        .unwrap()
        .contains("3 divzero (never raised: checked 0)"));
    assert_eq!(s["compared"], serde_json::json!(["res[8]", "fflags[5]"]));

    // Planted bugs: RTZ 1.0 * y one ulp high for y = 0x01..0x7d (125 vectors), the
    // underflow flag flipped on every RNE product with a = 2.0 (256 vectors).
    edit_manifest(&d, |m| {
        m["defines"] = serde_json::json!({"ACME_ULP_BUG": "", "ACME_UF_BUG": ""});
    });
    let (code, s, e) = verify(&d, &[]);
    assert_eq!(code, Some(1), "{e}");
    assert_eq!(s["mismatches"], 381);
    assert_eq!(
        counts(&s),
        serde_json::json!({
            "per_mode": {"rne/satfinite": 256, "rtz/satfinite": 125},
            "per_flag": {"underflow": 256},
            "classes": {"flags_only.underflow": 256, "result_1ulp": 125},
        })
    );
    // The human summary says the same.
    let vcd = d.join("cx.vcd");
    let e = stderr(&run(&[
        "verify",
        "--from",
        d.to_str().unwrap(),
        "--vcd",
        vcd.to_str().unwrap(),
    ]));
    for line in [
        "mismatches per mode: rne/satfinite: 256, rtz/satfinite: 125",
        "mismatches per flag bit: underflow: 256",
        "mismatch classes: flags_only.underflow: 256, result_1ulp: 125",
        "tied:     op = 0x1",
    ] {
        assert!(e.contains(line), "{line}\n{e}");
    }

    // One flag bit waived: only the ulp bug is left, and the summary says what was waived.
    let (code, s, e) = verify(&d, &["--ignore", "flags.underflow"]);
    assert_eq!(code, Some(1), "{e}");
    assert_eq!(s["mismatches"], 125);
    assert_eq!(s["meta"]["waived"], "flags.underflow (fflags bit 1)");
    assert_eq!(
        s["compared"],
        serde_json::json!(["res[8]", "fflags[5] bits 0x1d"])
    );
    assert_eq!(
        counts(&s),
        serde_json::json!({
            "per_mode": {"rtz/satfinite": 125},
            "per_flag": {},
            "classes": {"result_1ulp": 125},
        })
    );
    // The whole flags port and the result, as before.
    let (code, s, _) = verify(&d, &["--ignore", "flags"]);
    assert_eq!((code, s["mismatches"].clone()), (Some(1), 125.into()));
    let (code, s, _) = verify(&d, &["--ignore", "result"]);
    assert_eq!((code, s["mismatches"].clone()), (Some(1), 256.into()));
    let o = run(&[
        "verify",
        "--from",
        d.to_str().unwrap(),
        "--ignore",
        "flags.carry",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--ignore flags.carry: unknown flag"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_divzero_bit_the_unit_never_raises_is_checked_zero() {
    let t = tempfile::tempdir().unwrap();
    let d = acme(t.path());
    // The core drives fflags[3] (DZ) with the overflow bit: a mul never divides by zero.
    let v = d.join("acme_fmul.v");
    let text = std::fs::read_to_string(&v).unwrap();
    let text = text.replace("{f_bug[3], 1'b0, f_bug[2]", "{f_bug[3], f_bug[2], f_bug[2]");
    std::fs::write(&v, text).unwrap();
    let (code, s, e) = verify(&d, &[]);
    assert_eq!(code, Some(1), "{e}");
    let n = s["mismatches"].as_u64().unwrap();
    assert!(n > 0);
    assert_eq!(s["mismatch_classes"]["per_flag"]["divzero"], n);
    assert_eq!(
        s["mismatch_classes"]["classes"]["flags_only.divzero"], n,
        "{}",
        s["mismatch_classes"]
    );
}

#[test]
fn native_encoding_mistakes_name_the_key() {
    let t = tempfile::tempdir().unwrap();
    let d = acme(t.path());
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|m| m["modes"]["flags"]["bits"]["carry"] = 5.into()),
            "modes.flags.bits: unknown flag `carry`",
        ),
        (
            Box::new(|m| {
                m["modes"]["flags"]["bits"]
                    .as_object_mut()
                    .unwrap()
                    .remove("underflow");
            }),
            "modes.flags.bits places no bit for underflow",
        ),
        (
            Box::new(|m| m["modes"]["flags"]["width"] = 9.into()),
            "modes.flags: width 9; a flags port of 1..=8 bits is supported",
        ),
        (
            Box::new(|m| m["modes"]["rounding_encoding"] = "x86".into()),
            "modes.rounding_encoding: unknown preset `x86`",
        ),
        (
            Box::new(|m| {
                m["modes"]["rounding_encoding"] = serde_json::json!({"0": "rne", "9": "rtz"})
            }),
            "modes.rounding_encoding: value 9 (rtz) does not fit the 3-bit port `frm`",
        ),
        (
            Box::new(|m| m["modes"]["rounding_encoding"] = serde_json::json!({"0": "nearest"})),
            "modes.rounding_encoding: `nearest` (value 0) is not a rounding mode",
        ),
        (
            Box::new(|m| m["ports"][3]["tie"] = 4.into()),
            "port `op`: tie value 0x4 does not fit its 2 bits",
        ),
        (
            Box::new(|m| m["ports"][0]["tie"] = 1.into()),
            "port `a` has \"tie\" but is an input with role x",
        ),
    ];
    let orig = std::fs::read_to_string(d.join("manifest.json")).unwrap();
    for (edit, want) in cases {
        std::fs::write(d.join("manifest.json"), &orig).unwrap();
        edit_manifest(&d, |m| edit(m));
        let o = run(&["verify", "--from", d.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{want}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "want {want}\ngot {}", stderr(&o));
    }
    // A custom map: the same core with its encoding spelled out passes.
    std::fs::write(d.join("manifest.json"), &orig).unwrap();
    edit_manifest(&d, |m| {
        m["modes"]["rounding_encoding"] =
            serde_json::json!({"0": "rne", "1": "rtz", "0x2": "rtn", "3": "rtp"});
        m["modes"]["flags"] = "riscv".into();
    });
    let (code, s, e) = verify(&d, &[]);
    assert_eq!(code, Some(0), "{e}");
    assert_eq!(s["vectors"], 4 * 65536);
    // --prove cannot honour encodings yet: an error, never a partial proof.
    let o = run(&["verify", "--from", d.to_str().unwrap(), "--prove"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--prove cannot yet honour the core's own encodings"));
}

/// docs/byo.md shows the fixture's core and manifest as they are, so the page's walk-through
/// is what the tests above run.
#[test]
fn the_walk_through_holds_the_fixture_verbatim() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/byo.md")).unwrap();
    for f in ["acme_fmul.v", "manifest.json"] {
        let text = std::fs::read_to_string(Path::new(FIXTURE).join(f)).unwrap();
        assert!(
            doc.contains(&text),
            "docs/byo.md does not hold tests/fixtures/byo/{f} as it is"
        );
    }
    for cmd in [
        "fp8gen gen -u mul -f e4m3 -r dyn -s satfinite -o datapath",
        "fp8gen verify --from acme\n",
        "fp8gen verify --from acme --ignore flags.underflow",
    ] {
        assert!(doc.contains(cmd), "{cmd}");
    }
}

/// `--rto-overflow ieee`: a generated core verifies; the same core described without the
/// convention (a user's core with IEEE-style round-to-odd hardware) FAILS against P3109's
/// table, every mismatch an Inf-vs-largest-finite result, and PASSES with the option.
#[test]
fn rto_overflow_ieee_cores_verify_and_fail_against_the_p3109_default() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("rto");
    gen(
        &d,
        &[
            "-u",
            "mul",
            "-f",
            "e5m2",
            "-r",
            "rto",
            "-s",
            "satnone",
            "--rto-overflow",
            "ieee",
        ],
    );
    let m = std::fs::read_to_string(d.join("manifest.json")).unwrap();
    assert!(m.contains("\"rto_overflow\": \"ieee\""), "{m}");
    assert!(m.contains("_rtoieee_s0"), "{m}");
    let (code, s, e) = verify(&d, &[]);
    assert_eq!(code, Some(0), "{e}");
    assert_eq!(s["vectors"], 65536);
    // The manifest says nothing: P3109's ±Inf is expected, the core gives ±max finite.
    edit_manifest(&d, |m| {
        m["modes"].as_object_mut().unwrap().remove("rto_overflow");
    });
    let (code, s, e) = verify(&d, &[]);
    assert_eq!(code, Some(1), "{e}");
    let n = s["mismatches"].as_u64().unwrap();
    assert!(n > 0);
    assert_eq!(s["mismatch_classes"]["classes"]["result_inf_vs_finite"], n);
    assert_eq!(s["mismatch_classes"]["per_mode"]["rto/satnone"], n);
    let (code, _, e) = verify(&d, &["--rto-overflow", "ieee"]);
    assert_eq!(code, Some(0), "{e}");
    // A manifest that gives the convention and an option that contradicts it: an error.
    edit_manifest(&d, |m| m["modes"]["rto_overflow"] = "ieee".into());
    let o = run(&[
        "verify",
        "--from",
        d.to_str().unwrap(),
        "--rto-overflow",
        "p3109",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--rto-overflow p3109 conflicts with the core in --from"));
    // Refusals: a unit without the option, a core that never rounds to odd, a proof.
    for (args, want) in [
        (
            vec!["-u", "mac", "-f", "e5m2", "-r", "rto", "-s", "satnone"],
            "not to the mac unit",
        ),
        (
            vec!["-u", "mul", "-f", "e5m2", "-r", "rne", "-s", "satnone"],
            "--rto-overflow ieee changes round-to-odd only",
        ),
    ] {
        let mut a = vec!["verify"];
        a.extend(args);
        a.extend(["--rto-overflow", "ieee"]);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
    let o = run(&["verify", "--from", d.to_str().unwrap(), "--prove"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("round-to-odd overflow"),
        "{}",
        stderr(&o)
    );
}

/// `--rto-overflow ieee` reaches every unit whose spec lists it (iface's registry), not only
/// mul/fma/project: the golden model of add and quantize changes (E4M3 448 + 448 under
/// rto/satnone: P3109's overflow gives NaN in a format without Inf, IEEE-style hardware the
/// largest finite value), and generated add and quantize cores verify exhaustively against it.
#[test]
fn rto_overflow_ieee_reaches_add_convert_and_quantize() {
    let rto = ["-r", "rto", "-s", "satnone"];
    let eval = |unit: &[&str], ieee: bool, line: &str| {
        let mut a = vec!["eval", "-u"];
        a.extend(unit);
        a.extend(rto);
        if ieee {
            a.extend(["--rto-overflow", "ieee"]);
        }
        let o = run_stdin(&a, line);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).trim().to_string()
    };
    assert_eq!(eval(&["add", "-f", "e4m3"], false, "7e 7e"), "7f d");
    assert_eq!(eval(&["add", "-f", "e4m3"], true, "7e 7e"), "7e 5");
    // binary32 0x44000000 = 512 > 448 (E4M3's largest finite value), one rounding to E4M3.
    let conv = ["convert", "--in-format", "binary32", "-f", "e4m3"];
    assert_eq!(eval(&conv, false, "44000000"), "7f d");
    assert_eq!(eval(&conv, true, "44000000"), "7e 5");
    for unit in [
        vec!["add", "-f", "e4m3"],
        vec![
            "quantize",
            "-f",
            "e4m3",
            "--n",
            "1",
            "--in-format",
            "bfloat16",
            "--scale-policy",
            "floor",
        ],
    ] {
        let mut a = vec!["verify", "-u"];
        a.extend(&unit);
        a.extend(rto);
        a.extend(["--rto-overflow", "ieee", "--json"]);
        let o = run(&a);
        assert!(o.status.success(), "{unit:?}: {}", stderr(&o));
        let s: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(s["mismatches"], 0, "{unit:?}");
        assert_eq!(s["vectors"], 65536, "{unit:?}");
        assert!(s["top"].as_str().unwrap().contains("_rtoieee"), "{s}");
    }
}
