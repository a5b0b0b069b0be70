//! Users' RTL as it is (docs/byo.md): a third-party-style core with its own port names, a
//! RISC-V `frm` rounding port, a 5-bit RISC-V `fflags` port and a tied operation select,
//! verified with `fp8gen verify --from` and no wrapper; its mutants fail with mismatch counts
//! per mode, per flag bit and per class that the planted bugs fix exactly.

use crate::common;
use common::{edit_manifest, gen, run, run_stdin, stderr, stdout, verilog_of};
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
    // --prove honours the custom map: exactly its four modes.
    let o = run(&["verify", "--from", d.to_str().unwrap(), "--prove"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("frm = rm_i in the core's encoding (rne 0, rtz 1, rtn 2, rtp 3)"),
        "{out}"
    );
    assert!(
        out.contains("modes: rounding rne, rtz, rtn, rtp (every legal value of the rounding port)"),
        "{out}"
    );
}

/// `verify --from acme --prove` (PROVEN/REFUTED and the statement).
fn prove(d: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let vcd = d.join("cx.vcd");
    let mut a = vec!["verify", "--from", d.to_str().unwrap(), "--prove"];
    a.extend_from_slice(&["--vcd", vcd.to_str().unwrap()]);
    a.extend_from_slice(extra);
    let o = run(&a);
    (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
}

/// The walk-through's core proven as it is: the RISC-V rounding encoding mapped for each
/// legal mode, the fflags layout (DZ checked 0), the tied op; each planted bug REFUTED and
/// replayed as a golden-model mismatch, waivers as in simulation.
#[test]
fn prove_honours_the_cores_encodings_flag_layout_and_ties() {
    let t = tempfile::tempdir().unwrap();
    let d = acme(t.path());
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.starts_with("PROVEN: acme_fmul vs ref_fp8_mul_e4m3"),
        "{out}"
    );
    for want in [
        "give identical r_o[8], flags_o[4], fp8gen_zero_o bits 0x8 = 0 for every value",
        "satisfying (rm_i == 3'h0) || (rm_i == 3'h4) || (rm_i == 3'h3) || (rm_i == 3'h2) || (rm_i == 3'h1)",
        "frm = rm_i in the core's encoding (rne 0, rtz 1, rtn 2, rtp 3, rna 4)",
        "op tied to 0x1",
        "flags_o = fflags: invalid = fflags[4], overflow = fflags[2], underflow = fflags[1], inexact = fflags[0]; fflags bits 3 (divzero) never raised: checked 0",
        "valid_o not compared (the core has none)",
        "modes: rounding rne, rtz, rtn, rtp, rna (every legal value of the rounding port), saturation satfinite (fixed)",
        "parameters: none; waived: none",
        "acme_fmul.v (defines: none;",
        "read by yosys-slang (read_slang)",
    ] {
        assert!(out.contains(want), "want {want}\n{out}");
    }
    // The RTZ ulp bug: refuted at a = 1.0 under rtz (rm_i 4 = frm 1).
    edit_manifest(&d, |m| {
        m["defines"] = serde_json::json!({"ACME_ULP_BUG": ""})
    });
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("REFUTED:"), "{out}");
    assert!(
        out.contains("x_i=0x38") && out.contains("rm_i=0x4"),
        "{out}"
    );
    assert!(
        out.contains("differs from the golden model: acme_fmul"),
        "{out}"
    );
    // The underflow bug: refuted; waived, proven, and the statement says what was waived.
    edit_manifest(&d, |m| {
        m["defines"] = serde_json::json!({"ACME_UF_BUG": ""})
    });
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("differs from the golden model: acme_fmul"),
        "{out}"
    );
    let (code, out) = prove(&d, &["--ignore", "flags.underflow"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("flags_o[4] bits 0xd"), "{out}");
    assert!(out.contains("waived: flags.underflow"), "{out}");
    // DZ driven with the overflow bit: refuted on the must-be-zero bit alone.
    edit_manifest(&d, |m| {
        m.as_object_mut().unwrap().remove("defines");
    });
    let v = d.join("acme_fmul.v");
    let text = std::fs::read_to_string(&v).unwrap();
    let text = text.replace("{f_bug[3], 1'b0, f_bug[2]", "{f_bug[3], f_bug[2], f_bug[2]");
    std::fs::write(&v, text).unwrap();
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("fp8gen_zero_o=0x8"), "{out}");
    assert!(
        out.contains("differs from the golden model: acme_fmul"),
        "{out}"
    );
    let (code, out) = prove(&d, &["--ignore", "flags.divzero"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("give identical r_o[8], flags_o[4] for every"),
        "{out}"
    );
}

/// A clocked core: fp8gen's own 2-stage multiplier proven against the reference by unrolling
/// 3 cycles from an arbitrary register state; a stage-2 register that keeps a stale value
/// for negative products is REFUTED (its output depends on more than the inputs 2 cycles
/// earlier).
#[test]
fn a_pipelined_core_is_proven_unrolled_and_a_stale_register_is_refuted() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p2");
    gen(
        &d,
        &[
            "-u",
            "mul",
            "-f",
            "e4m3",
            "-r",
            "dyn",
            "-s",
            "satfinite",
            "--stages",
            "2",
        ],
    );
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(0), "{out}");
    for want in [
        "PROVEN: fp8_mul_e4m3_to_e4m3_rmdyn_satfinite_s2 vs ref_",
        "(latency 2) equals ref_fp8_mul_e4m3_to_e4m3_rmdyn_satfinite_s0 delayed by 2 cycles: unrolled 3 cycles from an arbitrary register state (every register's initial value free, reset rst_ni held inactive)",
        "in cycle 3, valid_o equals the valid of cycle 1 and, when it is 1, the other outputs equal the outputs of",
        "(compared: r_o[8], flags_o[4], valid_o[1])",
    ] {
        assert!(out.contains(want), "want {want}\n{out}");
    }
    let v = verilog_of(&d);
    let text = std::fs::read_to_string(&v).unwrap();
    let stale = text.replacen(
        "    round_inexact_q2 <= round_inexact;",
        "    if (!p_sign_q1) round_inexact_q2 <= round_inexact;",
        1,
    );
    assert_ne!(stale, text);
    std::fs::write(&v, stale).unwrap();
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("REFUTED:"), "{out}");
    assert!(out.contains("failing cycle: 3"), "{out}");
    assert!(out.contains("golden model: r_o="), "{out}");
}

/// A clocked SystemVerilog core with its own names, an active-high reset, the RISC-V
/// rounding encoding and fflags layout: proven unrolled; the same core with a latency one
/// cycle short in its manifest is REFUTED.
#[test]
fn a_clocked_core_with_its_own_encodings_is_proven_and_a_wrong_latency_refuted() {
    let t = tempfile::tempdir().unwrap();
    let g = t.path().join("gen");
    gen(
        &g,
        &[
            "-u",
            "mul",
            "-f",
            "e4m3",
            "-r",
            "dyn",
            "-s",
            "satfinite",
            "--stages",
            "2",
        ],
    );
    let d = t.path().join("pipe");
    std::fs::create_dir_all(&d).unwrap();
    let src = verilog_of(&g);
    let inner = src.file_stem().unwrap().to_str().unwrap().to_string();
    std::fs::copy(&src, d.join(src.file_name().unwrap())).unwrap();
    std::fs::write(
        d.join("pipe_fmul.sv"),
        format!(
            "module pipe_fmul (\n\
               input logic clk, input logic rst, input logic in_valid,\n\
               input logic [7:0] a, input logic [7:0] b, input logic [2:0] frm,\n\
               output logic out_valid, output logic [7:0] res, output logic [4:0] fflags);\n\
               logic [2:0] rm;\n\
               always_comb case (frm)\n\
                 3'd1: rm = 3'd4; 3'd2: rm = 3'd3; 3'd3: rm = 3'd2; 3'd4: rm = 3'd1; default: rm = 3'd0;\n\
               endcase\n\
               logic [3:0] f;\n\
               {inner} u (.clk_i(clk), .rst_ni(~rst), .valid_i(in_valid), .x_i(a), .y_i(b), .rm_i(rm), .r_o(res), .flags_o(f), .valid_o(out_valid));\n\
               assign fflags = {{f[3], 1'b0, f[2], f[1], f[0]}};\n\
             endmodule\n"
        ),
    )
    .unwrap();
    let manifest = format!(
        r#"{{"unit":"mul","top":"pipe_fmul","verilog":["{}","pipe_fmul.sv"],
          "formats":{{"x":"e4m3","y":"e4m3","r":"e4m3"}},"latency":2,
          "modes":{{"saturation":"satfinite","rounding_encoding":"riscv","flags":"riscv"}},
          "ports":[{{"name":"clk","direction":"input","width":1,"role":"clock"}},
                   {{"name":"rst","direction":"input","width":1,"role":"reset"}},
                   {{"name":"in_valid","direction":"input","width":1,"role":"valid_in"}},
                   {{"name":"a","direction":"input","width":8,"role":"x"}},
                   {{"name":"b","direction":"input","width":8,"role":"y"}},
                   {{"name":"frm","direction":"input","width":3,"role":"rounding"}},
                   {{"name":"out_valid","direction":"output","width":1,"role":"valid_out"}},
                   {{"name":"res","direction":"output","width":8,"role":"result"}},
                   {{"name":"fflags","direction":"output","width":5,"role":"flags"}}]}}"#,
        src.file_name().unwrap().to_str().unwrap()
    );
    std::fs::write(d.join("manifest.json"), manifest).unwrap();
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(0), "{out}");
    for want in [
        "PROVEN: pipe_fmul vs ref_fp8_mul_e4m3_to_e4m3_rmdyn_satfinite_s0",
        "`pipe_fmul` (latency 2) equals",
        "unrolled 3 cycles from an arbitrary register state",
        "(compared: r_o[8], flags_o[4], valid_o[1], fp8gen_zero_o bits 0x8 = 0)",
        "clk = clk_i; rst = ~rst_ni (active high); in_valid = valid_i",
        "frm = rm_i in the core's encoding (rne 0, rtz 1, rtn 2, rtp 3, rna 4)",
    ] {
        assert!(out.contains(want), "want {want}\n{out}");
    }
    edit_manifest(&d, |m| m["latency"] = 1.into());
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("REFUTED: pipe_fmul"), "{out}");
    assert!(out.contains("unrolled 2 cycles"), "{out}");
}

/// A multi-file SystemVerilog core (an include directory, a define, a parameter that
/// changes its function) proven from Verilator's preprocessed text read by yosys-slang; the
/// manifest's parameter reaches the proof (without it the core is REFUTED).
#[test]
fn a_multi_file_sv_core_with_a_parameter_is_proven() {
    let t = tempfile::tempdir().unwrap();
    let g = t.path().join("gen");
    gen(
        &g,
        &["-u", "mul", "-f", "e4m3", "-r", "rne", "-s", "satfinite"],
    );
    let d = t.path().join("sv");
    std::fs::create_dir_all(d.join("rtl/include")).unwrap();
    let src = verilog_of(&g);
    let inner = src.file_stem().unwrap().to_str().unwrap().to_string();
    std::fs::copy(&src, d.join("rtl").join(src.file_name().unwrap())).unwrap();
    std::fs::write(
        d.join("rtl/include/fp8_defs.svh"),
        "`define FP8_W 8\n`define FP8_FLAGS_W 4\n",
    )
    .unwrap();
    std::fs::write(
        d.join("rtl/my_mul_top.sv"),
        format!(
            "`include \"fp8_defs.svh\"\n\
             module my_mul_top #(parameter int SWAP = 1) (\n\
               input  logic [`FP8_W-1:0] a_in,\n  input  logic [`FP8_W-1:0] b_in,\n\
               output logic [`FP8_W-1:0] res,\n  output logic [`FP8_FLAGS_W-1:0] status);\n\
               logic [`FP8_W-1:0] x, y;\n\
               always_comb begin\n    x = a_in; y = b_in;\n\
                 if (SWAP == 0 && a_in == 8'h38) y = 8'h40;\n  end\n\
             `ifdef USE_INNER\n\
               logic v;\n\
               {inner} u_core (.valid_i(1'b1), .x_i(x), .y_i(y), .r_o(res), .flags_o(status), .valid_o(v));\n\
             `endif\n\
             endmodule\n"
        ),
    )
    .unwrap();
    let manifest = format!(
        r#"{{"unit":"mul","top":"my_mul_top","generator":"hand-written",
          "verilog":["rtl/{}","rtl/my_mul_top.sv"],
          "include_dirs":["rtl/include"],"defines":{{"USE_INNER":""}},"parameters":{{"SWAP":1}},
          "formats":{{"x":"e4m3","y":"e4m3","r":"e4m3"}},
          "modes":{{"rounding":"rne","saturation":"satfinite"}},
          "ports":[{{"name":"a_in","direction":"input","width":8,"role":"x"}},
                   {{"name":"b_in","direction":"input","width":8,"role":"y"}},
                   {{"name":"res","direction":"output","width":8,"role":"result"}},
                   {{"name":"status","direction":"output","width":4,"role":"flags"}}]}}"#,
        src.file_name().unwrap().to_str().unwrap()
    );
    std::fs::write(d.join("manifest.json"), manifest).unwrap();
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(0), "{out}");
    for want in [
        "PROVEN: my_mul_top vs ref_fp8_mul_e4m3_to_e4m3_rne_satfinite_s0",
        "a_in = x_i; b_in = y_i; r_o = res; flags_o = status",
        "parameters: SWAP=1",
        "rtl/my_mul_top.sv, ",
        "rtl/include/fp8_defs.svh (defines: USE_INNER;",
        "read by yosys-slang (read_slang)",
    ] {
        assert!(out.contains(want), "want {want}\n{out}");
    }
    // The parameter's default (0) swaps y for a = 1.0: refuted, so the manifest's value is
    // what was proven.
    edit_manifest(&d, |m| m["parameters"] = serde_json::json!({"SWAP": 0}));
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("x_i=0x38"), "{out}");
    assert!(
        out.contains("differs from the golden model: my_mul_top"),
        "{out}"
    );
}

/// The fixture directory `tests/fixtures/byo/<name>` copied into `to` (files and folders).
fn copy_fixture(name: &str, to: &Path) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), target).unwrap();
            }
        }
    }
    copy(&Path::new(FIXTURE).join(name), to);
}

/// Everything at once (tests/fixtures/byo/pipe_sv): a clocked, multi-file SystemVerilog core
/// (a register module and a top in rtl/, an `include` file from the separate include/ folder,
/// a define that instantiates fp8gen's combinational multiplier, a parameter DEPTH = 2 from
/// the manifest making the latency 2 the manifest declares) proven through `verify --from
/// --prove` by unrolling; the same core with the manifest's DEPTH dropped (the source default
/// 1: latency 1) is REFUTED, and so is a mutant wrong on one input pair only (1.0 x 2.0),
/// whose counterexample names that pair.
#[test]
fn a_pipelined_multi_file_sv_core_with_include_define_and_parameter_is_proven() {
    let t = tempfile::tempdir().unwrap();
    let g = t.path().join("gen");
    gen(
        &g,
        &["-u", "mul", "-f", "e4m3", "-r", "rne", "-s", "satfinite"],
    );
    let d = t.path().join("pipe_sv");
    copy_fixture("pipe_sv", &d);
    let core = verilog_of(&g);
    std::fs::copy(&core, d.join("rtl").join(core.file_name().unwrap())).unwrap();
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(0), "{out}");
    for want in [
        "PROVEN: pipe_mul_top vs ref_fp8_mul_e4m3_to_e4m3_rne_satfinite_s0",
        "`pipe_mul_top` (latency 2) equals ref_fp8_mul_e4m3_to_e4m3_rne_satfinite_s0 delayed by 2 cycles: unrolled 3 cycles from an arbitrary register state",
        "(compared: r_o[8], flags_o[4], valid_o[1])",
        "clk = clk_i; rst_n = rst_ni; in_valid = valid_i; a = x_i; b = y_i; valid_o = out_valid; r_o = res; flags_o = status",
        "parameters: DEPTH=2",
        "rtl/pipe_regs.sv, ",
        "include/pipe_defs.svh, ",
        "rtl/pipe_mul_top.sv (defines: PIPE_USE_CORE;",
        "read by yosys-slang (read_slang)",
    ] {
        assert!(out.contains(want), "want {want}\n{out}");
    }
    // Without the manifest's parameter the source's DEPTH = 1 makes the latency 1, not the
    // declared 2: refuted, so the parameter is what reached the proof.
    edit_manifest(&d, |m| {
        m.as_object_mut().unwrap().remove("parameters");
    });
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("REFUTED: pipe_mul_top"), "{out}");
    // The one-input-pair mutant (a define): refuted at exactly that pair, in cycle 1 of the
    // unrolling, and replayed as a golden-model mismatch.
    edit_manifest(&d, |m| {
        m["parameters"] = serde_json::json!({"DEPTH": 2});
        m["defines"] = serde_json::json!({"PIPE_USE_CORE": "", "PIPE_ONE_WRONG": ""});
    });
    let (code, out) = prove(&d, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("REFUTED: pipe_mul_top"), "{out}");
    for want in [
        "counterexample inputs: ",
        "cycle 1: x_i=0x38",
        "cycle 1: y_i=0x40",
        "cycle 1: valid_i=0x1",
        "golden model: r_o=0x40",
        "defines: PIPE_ONE_WRONG PIPE_USE_CORE;",
    ] {
        assert!(out.contains(want), "want {want}\n{out}");
    }
}

/// Everything that keeps a core from a proof is said at once, one reason a line.
#[test]
fn every_reason_a_core_cannot_be_proven_is_reported_at_once() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("e8m0");
    gen(
        &d,
        &[
            "-u",
            "mul",
            "-f",
            "e5m2",
            "--out-format",
            "e8m0",
            "--stages",
            "2",
            "--no-flags",
        ],
    );
    let o = run(&[
        "verify",
        "--from",
        d.to_str().unwrap(),
        "--prove",
        "--ignore",
        "class,flags.inexact",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim_end(),
        "error: --prove cannot prove `fp8_mul_e5m2_to_e8m0_rne_satnone_nf_s2`; every reason:\n  \
         - the reference rounder does not cover the e8m0 family (result format e8m0): e8m0 has no zero and no subnormal range, so the plain rounder's quantum max(e, emin) - (P-1) does not apply; verify such cores by simulation (fp8gen verify)\n  \
         - --ignore class: `fp8_mul_e5m2_to_e8m0_rne_satnone_nf_s2` has no output with role class; waive an output the core has\n  \
         - --ignore flags.inexact: `fp8_mul_e5m2_to_e8m0_rne_satnone_nf_s2` has no flags port"
    );
    let m = t.path().join("mac");
    gen(
        &m,
        &["-u", "mac", "-f", "e4m3", "-r", "rne", "-s", "satfinite"],
    );
    let o = run(&["verify", "--from", m.to_str().unwrap(), "--prove"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("  - a mac core keeps state across inputs (an accumulator): a proof of a user's mac core is out of reach; verify it by simulation (streams from reset)\n"),
        "{e}"
    );
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
    // Refusals: a unit without the option, a core that never rounds to odd.
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
    // The formal reference implements both conventions: the proof takes the manifest's.
    let o = run(&["verify", "--from", d.to_str().unwrap(), "--prove"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        format!("{}{}", stdout(&o), stderr(&o)).contains("PROVEN"),
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

/// The ExSdotp-shaped core of docs/byo.md (`tests/fixtures/byo/acme_sdotp.v`): two E4M3
/// products and a binary16 addend rounded once to binary16, behind a RISC-V `frm` port, a
/// 5-bit RISC-V `fflags` port and an operation select the manifest ties. It verifies with no
/// wrapper; a planted bug (inexact dropped for subnormal addends) fails as flag-only
/// mismatches counted per mode, per bit and per class.
#[test]
fn an_exsdotp_style_core_with_a_binary16_addend_verifies_with_no_wrapper() {
    let t = tempfile::tempdir().unwrap();
    let gen_dir = t.path().join("datapath");
    gen(
        &gen_dir,
        &[
            "-u",
            "dot",
            "-f",
            "e4m3",
            "--n",
            "2",
            "--addend-format",
            "binary16",
            "--out-format",
            "binary16",
            "-r",
            "dyn",
            "-s",
            "satfinite",
        ],
    );
    let d = t.path().join("acme");
    std::fs::create_dir_all(&d).unwrap();
    let core = "fp8_dot2_e4m3_z_binary16_to_binary16_rmdyn_satfinite_s0.v";
    std::fs::copy(gen_dir.join(core), d.join(core)).unwrap();
    std::fs::copy(
        Path::new(FIXTURE).join("acme_sdotp.v"),
        d.join("acme_sdotp.v"),
    )
    .unwrap();
    std::fs::copy(
        Path::new(FIXTURE).join("sdotp_manifest.json"),
        d.join("manifest.json"),
    )
    .unwrap();
    let (code, s, e) = verify(&d, &["--random", "100000"]);
    assert_eq!(code, Some(0), "{e}");
    assert_eq!(s["vectors"], 5 * 100000);
    assert_eq!(s["meta"]["tied"], "op = 0x2");
    assert_eq!(s["meta"]["inputs"], "a0[8] a1[8] b0[8] b1[8] c[16] frm[3]");
    assert!(
        s["meta"]["space"]
            .as_str()
            .unwrap()
            .contains("binary16 addends"),
        "{}",
        s["meta"]["space"]
    );
    assert_eq!(s["compared"], serde_json::json!(["res[16]", "fflags[5]"]));
    edit_manifest(&d, |m| {
        m["defines"] = serde_json::json!({"ACME_STICKY_BUG": ""});
    });
    let (code, s, e) = verify(&d, &["--random", "100000"]);
    assert_eq!(code, Some(1), "{e}");
    let n = s["mismatches"].as_u64().unwrap();
    assert!(n > 0);
    let c = counts(&s);
    assert_eq!(c["classes"], serde_json::json!({"flags_only.inexact": n}));
    assert_eq!(c["per_flag"], serde_json::json!({"inexact": n}));
    assert_eq!(c["per_mode"].as_object().unwrap().len(), 5, "{c}");
}
