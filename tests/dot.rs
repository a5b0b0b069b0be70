//! The accelerator units end to end, as a user runs them: `fp8gen gen/verify --unit dot` for
//! every format family (structured vectors, exhaustive where the space allows, pipelined), a
//! mutated core rejected with a counterexample, `verify --from` on the manifest's N-element
//! ports, the batch command `fp8gen dot` with known answers and exact error messages; the
//! exact-accumulator and interleaved `mac` streaming at their initiation intervals; the
//! block-scaled `mul`, `fma` and `project` (the MX quantizer).

use std::io::Write;
use std::process::{Command, Stdio};

fn fp8gen(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `verify --unit dot ARGS --json`: the summary, asserted to pass with `min` vectors.
fn verify_passes(args: &[&str], min: u64) -> serde_json::Value {
    let mut a = vec!["verify", "--unit", "dot", "--json"];
    a.extend_from_slice(args);
    let (ok, out, err) = fp8gen(&a);
    assert!(ok, "{args:?}: {err}\n{out}");
    let j = json(&out);
    assert_eq!(j["mismatches"], 0, "{args:?}");
    assert!(j["vectors"].as_u64().unwrap() >= min, "{args:?}: {out}");
    j
}

#[test]
fn dot_is_exact_for_every_family_with_scales_addend_and_runtime_modes() {
    for args in [
        // OCP FP8 with MX scales and an addend, every rounding and saturation mode.
        "-f e4m3 --n 8 --scale-format e8m0 --addend -r dyn -s dyn --random 3000",
        // IEEE-like E5M2 (infinities): the widest window, the masked-sticky alignment.
        "-f e5m2 --n 4 --addend -r dyn --random 5000",
        // P3109 with its own unsigned power-of-two scale format.
        "-f binary8p3se --n 2 --scale-format binary8p1uf --addend -r dyn -s dyn --random 3000",
        // An OCP MX block: 32 FP4 elements with E8M0 scales.
        "-f e2m1 --n 32 --scale-format e8m0 -r dyn --random 3000",
        // FNUZ x IEEE-like elements, E8M0 scales, a small-float result.
        "-f e4m3fnuz --format-y e5m2 --n 3 --scale-format e8m0 --out-format e4m3 -r dyn -s dyn --random 3000",
    ] {
        let a: Vec<&str> = args.split_whitespace().collect();
        let j = verify_passes(&a, 3000);
        let space = j["meta"]["space"].as_str().unwrap_or_default().to_string();
        assert!(space.starts_with("structured dot"), "{args}: {space}");
    }
}

#[test]
fn small_dot_spaces_are_exhaustive_and_pipelines_stream() {
    // 2 lanes of 4-bit elements: every operand bit pattern (2^16) by default.
    let j = verify_passes(&["-f", "e2m1", "--n", "2", "-r", "dyn"], 6 << 16);
    assert_eq!(j["vectors"], 6u64 << 16);
    let space = j["meta"]["space"].as_str().unwrap().to_string();
    assert!(space.starts_with("exhaustive"), "{space}");
    // P3109 4-bit elements, a small-float result, pipelined: one vector per cycle through
    // 3 stages.
    let j = verify_passes(
        &[
            "-f",
            "binary4p2se",
            "--n",
            "2",
            "--out-format",
            "e4m3",
            "-s",
            "dyn",
            "--stages",
            "3",
        ],
        4 << 16,
    );
    assert_eq!(j["meta"]["latency"], "3");
}

#[test]
fn a_mutated_dot_core_is_rejected_with_a_counterexample() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dot");
    let d = dir.to_str().unwrap();
    let (ok, _, err) = fp8gen(&[
        "gen", "-u", "dot", "-f", "e4m3", "--n", "4", "--addend", "-r", "dyn", "-o", d,
    ]);
    assert!(ok, "{err}");
    let vfile = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "v"))
        .unwrap();
    let text = std::fs::read_to_string(&vfile).unwrap();
    let (ok, out, err) = fp8gen(&["verify", "--from", d, "--random", "20000", "--json"]);
    assert!(ok, "{err}");
    assert_eq!(json(&out)["mismatches"], 0);
    // Three mutations: a lane's sign ignored (a condition), the window exponent off by one
    // (a constant), the zero-sum sign rule dropped (a decision).
    // A definition may wrap over several lines: take the text up to its `;`.
    let statement = |lhs: &str| -> String {
        let start = text
            .lines()
            .position(|l| l.contains("wire") && l.contains(lhs))
            .unwrap_or_else(|| panic!("no definition of {lhs}"));
        let mut out = Vec::new();
        for l in text.lines().skip(start) {
            out.push(l);
            if l.split("//").next().unwrap_or("").contains(';') {
                break;
            }
        }
        out.join("\n")
    };
    // The lane's multiplier rows take the product's sign (x ^ sign) before the placement.
    let sign_line = statement("l2_sprod_xs =");
    let exp_line = statement("snrm_exp =");
    assert!(exp_line.contains("SUM_TOP_EXP"), "{exp_line}");
    // The window exponent's constant is a named localparam: its declaration, value plus one.
    let exp_param = text
        .lines()
        .find(|l| l.contains("localparam") && l.contains(" SUM_TOP_EXP_P1 ="))
        .expect("the SUM_TOP_EXP_P1 localparam")
        .to_string();
    let zero_line = statement("s_sign =");
    let const_re = |l: &str| -> String {
        // the sized hex constant of the declaration, plus one
        let i = l.find("'h").expect("a hex constant");
        let j = i
            + 2
            + l[i + 2..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(0);
        let v = i64::from_str_radix(&l[i + 2..j], 16).unwrap();
        format!("{}{:x}{}", &l[..i + 2], v + 1, &l[j..])
    };
    for (what, broken) in [
        (
            "lane sign",
            text.replace(&sign_line, &sign_line.replace("l2_sign", "1'b0")),
        ),
        (
            "window exponent",
            text.replace(&exp_param, &const_re(&exp_param)),
        ),
        (
            "zero sign",
            text.replace(&zero_line, &zero_line.replace("rm_is_rtn", "1'b0")),
        ),
    ] {
        assert_ne!(broken, text, "{what}: the alteration must change the core");
        std::fs::write(&vfile, &broken).unwrap();
        let (ok, out, err) = fp8gen(&["verify", "--from", d, "--random", "20000", "--json"]);
        assert!(!ok, "{what}: a broken core must fail verification");
        assert!(
            err.contains("differ from the golden model"),
            "{what}: {err}"
        );
        let j = json(&out);
        assert!(j["mismatches"].as_u64().unwrap() > 0, "{what}");
        let cx = &j["counterexamples"][0];
        assert!(cx["inputs"]["x3_i"].is_string(), "{what}: {cx}");
    }
}

#[test]
fn verify_from_reads_the_dot_shape_from_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dot");
    let d = dir.to_str().unwrap();
    let (ok, _, err) = fp8gen(&[
        "gen",
        "-u",
        "dot",
        "-f",
        "e5m2",
        "--n",
        "2",
        "--scale-format",
        "e8m0",
        "-o",
        d,
    ]);
    assert!(ok, "{err}");
    let mpath = dir.join("manifest.json");
    let m = std::fs::read_to_string(&mpath).unwrap();
    let j = json(&m);
    assert_eq!(j["dot"]["n"], 2);
    assert_eq!(j["formats"]["scale"]["k"], 8);
    assert_eq!(j["ports"][2]["name"], "x1_i");
    assert_eq!(j["ports"][2]["index"], 1);
    let (ok, out, err) = fp8gen(&["verify", "--from", d, "--random", "2000"]);
    assert!(ok, "{err}{out}");
    assert!(err.contains("x1_i[8]") && err.contains("sx_i[8]"), "{err}");
    // Options that describe a core to generate are refused next to --from.
    let (ok, _, err) = fp8gen(&["verify", "--from", d, "--n", "3"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: --n, --scale-format, --scaled, --addend, --addend-format and --scale-policy describe a core to generate; with --from DIR the manifest gives them (\"dot\", \"block\", formats.scale, formats.z)"
    );
    // A manifest without the shape is refused with the fix.
    let mut v = j.clone();
    v.as_object_mut().unwrap().remove("dot");
    std::fs::write(&mpath, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (ok, _, err) = fp8gen(&["verify", "--from", d]);
    assert!(!ok);
    assert!(
        err.contains("a dot core needs \"dot\": {\"n\": <elements>"),
        "{err}"
    );
    // Two ports with the same role and index.
    let mut v = j.clone();
    v["ports"][2]["index"] = serde_json::json!(0);
    std::fs::write(&mpath, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (ok, _, err) = fp8gen(&["verify", "--from", d]);
    assert!(!ok);
    assert!(err.contains("ports x0_i, x1_i all have role x"), "{err}");
}

fn batch(args: &[&str], input: &str) -> (bool, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .arg("dot")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn batch_dot_signaling_nan_raises_invalid() {
    // E5M2 0x7d: a NaN with the top trailing bit clear (signaling under IEEE 754 §6.2),
    // 0x7e quiet. Default: every small-format NaN is quiet (no flag).
    let input = "7d 3c 3c 3c\n7e 3c 3c 3c\n3c 3c 3c 3c\n";
    let (ok, out, err) = batch(&["-f", "e5m2", "--n", "2", "--flags"], input);
    assert!(ok, "{err}");
    assert_eq!(out, "7fc00000 0\n7fc00000 0\n40000000 0\n");
    let (ok, out, err) = batch(
        &["-f", "e5m2", "--n", "2", "--flags", "--signaling-nan"],
        input,
    );
    assert!(ok, "{err}");
    assert_eq!(out, "7fc00000 8\n7fc00000 0\n40000000 0\n");
    // the same rule as verify's golden model: a core that raises invalid passes only with it
    let (_, out, _) = batch(
        &[
            "-f",
            "e5m2",
            "--format-y",
            "e4m3",
            "--n",
            "1",
            "--flags",
            "--signaling-nan",
        ],
        "3c 7f\n",
    );
    assert_eq!(out, "7fc00000 0\n", "E4M3 has no signaling NaN");
}

#[test]
fn verify_dot_space_uniform_or_structured() {
    let j = verify_passes(
        &[
            "-f", "e4m3", "--n", "4", "--random", "3000", "--space", "uniform",
        ],
        3000,
    );
    assert_eq!(
        j["meta"]["space"].as_str().unwrap_or_default(),
        "random: 3000 uniform vectors per mode, seed 1"
    );
    let j = verify_passes(
        &[
            "-f",
            "e4m3",
            "--n",
            "4",
            "--random",
            "3000",
            "--space",
            "structured",
        ],
        3000,
    );
    let space = j["meta"]["space"].as_str().unwrap_or_default().to_string();
    assert!(
        space.starts_with("structured dot: 3000 vectors per mode"),
        "{space}"
    );
    // errors (exit 2), before anything is built
    for (args, want) in [
        (
            vec!["verify", "-u", "dot", "-f", "e4m3", "--n", "4", "--space", "gaussian"],
            "error: --space 'gaussian': expected uniform or structured\n",
        ),
        (
            vec!["verify", "-u", "mul", "-f", "e4m3", "--space", "uniform"],
            "error: --space chooses between the dot product's random spaces; mul has one (--random N: uniform random vectors)\n",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_fp8gen")).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), want, "{args:?}");
    }
    let (ok, _, err) = fp8gen(&[
        "verify",
        "-u",
        "dot",
        "-f",
        "e4m3",
        "--n",
        "4",
        "--space",
        "uniform",
        "--exhaustive",
    ]);
    assert!(
        !ok && err.contains("'--space <uniform|structured>' cannot be used with '--exhaustive'"),
        "{err}"
    );
}

#[test]
fn batch_dot_known_answers_and_errors() {
    // E4M3: 1.0 = 0x38, 2.0 = 0x40, 448 = 0x7e, 2^-9 = 0x01.
    let (ok, out, err) = batch(
        &["-f", "e4m3", "--n", "4", "--flags"],
        "38 38 38 38 40 40 40 40\n\
         b8 38 38 38 40 40 40 40\n\
         7e fe 01 00 7e 7e 01 00\n\
         38 b8 00 00 38 38 00 00\n\
         7f 38 38 38 38 38 38 38\n",
    );
    assert!(ok, "{err}");
    assert_eq!(
        out, "41000000 0\n40800000 0\n36800000 0\n00000000 0\n7fc00000 0\n",
        "8, 4, 2^-18 (exact cancellation of 448^2), +0, NaN"
    );
    // Rounding toward negative: an exact zero sum is -0.
    let (_, out, _) = batch(&["-f", "e4m3", "--n", "2", "-r", "rtn"], "38 b8 38 38\n");
    assert_eq!(out, "80000000\n");
    // E5M2 +Inf + -Inf: NaN and invalid; with a quiet NaN addend: NaN, no invalid.
    let (_, out, _) = batch(
        &["-f", "e5m2", "--n", "2", "--addend", "--flags"],
        "7c fc 3c 3c 00000000\n7c fc 3c 3c 7fc00000\n",
    );
    assert_eq!(out, "7fc00000 8\n7fc00000 0\n");
    // MX: E8M0 scales 2^1 · 2^2 and an addend; a small-float result.
    let (_, out, _) = batch(
        &[
            "-f",
            "e2m1",
            "--n",
            "2",
            "--scale-format",
            "e8m0",
            "--addend",
        ],
        "2 2 2 2 80 81 3f800000\n",
    );
    assert_eq!(out, "41880000\n", "(1·1 + 1·1)·2^3 + 1 = 17");
    let (_, out, _) = batch(
        &[
            "-f",
            "e4m3",
            "--n",
            "2",
            "--out-format",
            "e4m3",
            "-s",
            "satfinite",
        ],
        "7e 7e 7e 7e\n",
    );
    assert_eq!(out, "7e\n", "448·448·2 saturates to 448");
    // Errors name the field and the fix.
    let (ok, _, err) = batch(&["-f", "e4m3", "--n", "2"], "38 38\n");
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: line 1: expected 4 hex field(s) 'x0 x1 y0 y1', got '38 38'"
    );
    let (ok, _, err) = batch(&["-f", "e4m3", "--n", "2", "--addend"], "38 38 38 1ff 0\n");
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: line 1: field y1 = 1ff does not fit in the 8-bit e4m3 (8 bits)"
    );
    let (ok, _, err) = batch(&["-f", "e4m3", "--n", "65"], "");
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: dot: a dot product has 1..=64 elements, not 65"
    );
    let (ok, _, err) = fp8gen(&["gen", "-u", "dot", "-f", "e4m3", "-o", "/nonexistent/x"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: --unit dot needs --n N, the number of elements (1..=64)"
    );
    let (ok, _, err) = fp8gen(&["gen", "-u", "mul", "-f", "e4m3", "--n", "2", "-o", "/tmp/x"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: --n applies to --unit dot or quantize only, not to mul"
    );
}

/// `verify --unit mac --acc exact ARGS --json`: the summary, asserted to pass.
fn verify_mac_exact(args: &[&str]) -> serde_json::Value {
    let mut a = vec!["verify", "--unit", "mac", "--acc", "exact", "--json"];
    a.extend_from_slice(args);
    let (ok, out, err) = fp8gen(&a);
    assert!(ok, "{args:?}: {err}\n{out}");
    let j = json(&out);
    assert_eq!(j["mismatches"], 0, "{args:?}");
    j
}

#[test]
fn exact_mac_streams_one_product_per_cycle_at_every_depth() {
    // Initiation interval 1 at 3 stages (and at 1 stage below): the stream drives valid_i in
    // consecutive cycles and is compared cycle by cycle.
    let stages = "3";
    let j = verify_mac_exact(&[
        "-f", "e4m3", "-r", "dyn", "-s", "dyn", "--stages", stages, "--random", "100000",
    ]);
    let space = j["meta"]["space"].as_str().unwrap().to_string();
    assert!(space.contains("valid every 1 cycle(s)"), "{space}");
    let lat: u32 = stages.parse::<u32>().unwrap() + 1;
    assert_eq!(j["meta"]["latency"], lat.to_string());
    // Mixed formats with infinities, and a 1-bit guard: streams of large products overflow
    // the accumulator, which the output reports as NaN with invalid | overflow.
    verify_mac_exact(&[
        "-f",
        "e4m3",
        "--format-y",
        "e5m2",
        "--guard-bits",
        "1",
        "-r",
        "dyn",
        "--stages",
        "1",
        "--random",
        "100000",
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mac");
    let d = dir.to_str().unwrap();
    let (ok, out, err) = fp8gen(&[
        "gen",
        "-u",
        "mac",
        "-f",
        "e5m2",
        "--acc",
        "exact",
        "--guard-bits",
        "1",
        "-o",
        d,
        "--json",
    ]);
    assert!(ok, "{err}");
    let m = json(&out);
    assert_eq!(m["initiation_interval"], 1);
    assert_eq!(m["modes"]["acc_guard_bits"], 1);
    let vfile = dir.join(format!("{}.v", m["top"].as_str().unwrap()));
    let text = std::fs::read_to_string(&vfile).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("wire a_ovf ="))
        .expect("overflow detection")
        .to_string();
    std::fs::write(&vfile, text.replace(&line, "  wire a_ovf = 1'b0;")).unwrap();
    let (ok, _, err) = fp8gen(&["verify", "--from", d, "--random", "100000"]);
    assert!(!ok, "a silent guard overflow must fail verification");
    assert!(err.contains("differ from the golden model"), "{err}");
    let (ok, _, err) = fp8gen(&["gen", "-u", "mac", "-f", "e4m3", "--acc", "wide", "-o", d]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: --acc: unknown accumulator 'wide'; expected binary32 or exact"
    );
    let (ok, _, err) = fp8gen(&["gen", "-u", "fma", "-f", "e4m3", "--acc", "exact", "-o", d]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: --acc and --guard-bits apply to --unit mac only, not to fma"
    );
    let (ok, _, err) = fp8gen(&[
        "gen",
        "-u",
        "mac",
        "-f",
        "e4m3",
        "--acc",
        "exact",
        "--guard-bits",
        "40",
        "-o",
        d,
    ]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: unsupported request: --guard-bits 40 is out of range; use 1..=32 (2^N products of any magnitude sum without overflow)"
    );
}

#[test]
fn block_scaled_mul_fma_and_project_cores_match_the_golden_model() {
    for args in [
        // The MX quantizer: binary32 divided by an E8M0 block scale, rounded to E4M3.
        "-u project -f e4m3 --scaled -r dyn -s dyn --random 20000",
        "-u mul -f e5m2 --out-format binary32 --scale-format binary8p1uf -r dyn --random 20000",
        "-u fma -f e4m3 --scaled -r dyn --random 20000",
    ] {
        let mut a = vec!["verify", "--json"];
        a.extend(args.split_whitespace());
        let (ok, out, err) = fp8gen(&a);
        assert!(ok, "{args}: {err}\n{out}");
        let j = json(&out);
        assert_eq!(j["mismatches"], 0, "{args}");
        let inputs = j["meta"]["inputs"].as_str().unwrap_or_default().to_string();
        assert!(
            inputs.contains("sx_i[8] sy_i[8]") || inputs.contains(" s_i[8]"),
            "{args}: {inputs}"
        );
    }
    // The batch quantizer: 3.0 / 2^1 = 1.5, 3.0 / 2^0 = 3, a NaN scale gives NaN.
    let mut c = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(["project", "-f", "e4m3", "--scaled", "--flags"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin
        .take()
        .unwrap()
        .write_all(b"40400000 80\n40400000 7f\nc0400000 ff\n")
        .unwrap();
    let o = c.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "3c 0\n44 0\n7f 0\n");
    let (ok, _, err) = fp8gen(&[
        "gen", "-u", "decode", "-f", "e4m3", "--scaled", "-o", "/tmp/x",
    ]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: --scaled and --scale-format apply to --unit project, mul, fma, dot or quantize only, not to decode"
    );
    let (ok, _, err) = fp8gen(&[
        "gen",
        "-u",
        "mul",
        "-f",
        "e4m3",
        "--scale-format",
        "e4m3",
        "-o",
        "/tmp/x",
    ]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: --scale-format: scale format e4m3 is not a power-of-two scale of at most 8 bits (precision 1: e8m0, binary8p1uf, …)"
    );
}

#[test]
fn interleaved_mac_accumulators_take_a_step_per_initiation_interval() {
    // 3 stages and 2 accumulators: II = 2 (4 accumulators give II = 1: the mutant's core
    // below); checked cycle by cycle with lane_o.
    let (lanes, ii) = ("2", 2);
    let (ok, out, err) = fp8gen(&[
        "verify",
        "-u",
        "mac",
        "-f",
        "e4m3",
        "--interleave",
        lanes,
        "-r",
        "dyn",
        "--stages",
        "3",
        "--random",
        "100000",
        "--json",
    ]);
    assert!(ok, "{lanes}: {err}\n{out}");
    let j = json(&out);
    assert_eq!(j["mismatches"], 0);
    assert!(j["compared"].to_string().contains("lane_o"), "{out}");
    let space = j["meta"]["space"].as_str().unwrap().to_string();
    assert!(
        space.contains(&format!("valid every {ii} cycle(s)")),
        "{space}"
    );
    // A mutant whose accumulators never leave the fresh state after a clear is rejected.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mac");
    let d = dir.to_str().unwrap();
    let (ok, out, err) = fp8gen(&[
        "gen",
        "-u",
        "mac",
        "-f",
        "e4m3",
        "--interleave",
        "4",
        "--stages",
        "3",
        "-o",
        d,
        "--json",
    ]);
    assert!(ok, "{err}");
    let m = json(&out);
    assert_eq!(m["modes"]["interleave"], 4);
    let vfile = dir.join(format!("{}.v", m["top"].as_str().unwrap()));
    let text = std::fs::read_to_string(&vfile).unwrap();
    let broken = text.replace(
        "fresh_q <= clear_i ? 4'd14 : (fresh_q & ~lane_onehot);",
        "fresh_q <= clear_i ? 4'd14 : fresh_q;",
    );
    assert_ne!(broken, text);
    std::fs::write(&vfile, broken).unwrap();
    let (ok, _, err) = fp8gen(&["verify", "--from", d, "--random", "50000"]);
    assert!(!ok && err.contains("differ from the golden model"), "{err}");
    let (ok, _, err) = fp8gen(&[
        "gen",
        "-u",
        "mac",
        "-f",
        "e4m3",
        "--acc",
        "exact",
        "--interleave",
        "2",
        "-o",
        d,
    ]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: invalid request: --interleave applies to mac with the binary32 accumulator (the exact accumulator already takes a product every cycle)"
    );
}
