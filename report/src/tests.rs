use super::*;

const MANIFEST: &str = r#"{
  "schema": 1, "generator": "fp8gen 0.1.0",
  "command": "fp8gen gen --unit mul --format e2m1 --format-y e2m1 --out-format e2m1 --rounding rne --saturation satnone --stages 0",
  "unit": "mul", "top": "t", "verilog": "t.v",
  "formats": {"x": {"k": 4, "p": 2, "bias": 1, "signed": true, "specials": "no-nan"},
              "y": {"k": 4, "p": 2, "bias": 1, "signed": true, "specials": "no-nan"},
              "r": {"k": 4, "p": 2, "bias": 1, "signed": true, "specials": "no-nan"}},
  "modes": {"rounding": "rne", "saturation": "satnone"},
  "ports": [{"name": "x_i", "direction": "input", "width": 4, "role": "x"},
            {"name": "y_i", "direction": "input", "width": 4, "role": "y"},
            {"name": "r_o", "direction": "output", "width": 4, "role": "result"}]
}"#;

fn core() -> (tempfile::TempDir, CoreInfo) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("core");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("manifest.json"), MANIFEST).unwrap();
    std::fs::write(d.join("t.v"), "module t(); endmodule\n").unwrap();
    let c = CoreInfo::load(&d).unwrap();
    (t, c)
}

fn verify_summary(c: &CoreInfo, hash: &str, space: &str) -> Value {
    serde_json::json!({
        "vectors": 256, "mismatches": 0, "complete": true, "compared": ["r_o[4]"],
        "shards": [{"index": 0, "count": 1}], "seconds": 0.01,
        "meta": {"generator": "fp8gen 0.1.0", "request": c.manifest.command,
                 "core_hash": hash, "space": space, "modes": "rne/satnone"}
    })
}

fn put(c: &CoreInfo, name: &str, v: &Value) {
    let r = c.dir.join(RESULTS_DIR);
    std::fs::create_dir_all(&r).unwrap();
    std::fs::write(r.join(name), v.to_string()).unwrap();
}

#[test]
fn text_is_escaped() {
    assert_eq!(
        escape(r#"<a href="x">&'"#),
        "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
    );
    let (_t, c) = core();
    let h = c.hash.clone().unwrap();
    put(
        &c,
        "<b>x.json",
        &verify_summary(&c, &h, "<script>alert(1)</script>"),
    );
    let files = gather(&c, &[]).unwrap();
    let page = render(&c, &files);
    assert!(!page.contains("<script>") && !page.contains("<b>x.json"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("&lt;b&gt;x.json"));
}

#[test]
fn no_result_is_said_plainly() {
    let (_t, c) = core();
    let page = render(&c, &gather(&c, &[]).unwrap());
    assert!(page.starts_with(REPORT_HEAD));
    assert!(page.contains("No verification result found"), "{page}");
    assert!(page.contains("No proof result found"));
    assert!(page.contains("No result file was found"));
    assert!(!page.contains("PASS") && !page.contains("PROVEN"));
    // The e2m1 value table: every code, exact values.
    assert!(page.contains("<td>0x1p-1</td><td>0.5</td>"), "{page}");
    assert!(page.contains("<td>0x1.8p+2</td><td>6</td>"));
}

#[test]
fn a_result_of_another_core_is_not_this_cores() {
    let (_t, c) = core();
    put(
        &c,
        "other.json",
        &verify_summary(&c, "0123abcd", "exhaustive"),
    );
    let mut other_req = verify_summary(&c, c.hash.as_deref().unwrap(), "exhaustive");
    other_req["meta"]["request"] = "fp8gen gen --unit mul --format e4m3".into();
    put(&c, "other-request.json", &other_req);
    let mut old = verify_summary(&c, "", "exhaustive");
    old["meta"].as_object_mut().unwrap().remove("core_hash");
    put(&c, "old.json", &old);
    put(&c, "notes.json", &serde_json::json!({"mine": 1}));
    let files = gather(&c, &[]).unwrap();
    assert_eq!(files.len(), 4);
    assert!(
        files.iter().all(|f| !matches!(f.found, Found::Used(..))),
        "{files:?}"
    );
    let page = render(&c, &files);
    assert!(page.contains("No verification result found"));
    assert!(!page.contains("PASS"));
    assert!(page.contains("of another core (core hash 0123abcd"));
    assert!(page.contains("of another request"));
    assert!(page.contains("names no core_hash"));
    assert!(page.contains("ignored: not a JSON summary of fp8gen"));
    // Asked for by name, a file that is no summary is an error.
    let e = gather(&c, &[c.dir.join("t.v")]).unwrap_err();
    assert!(matches!(e, ReportError::Usage(_)), "{e}");
    // This core's summary is used.
    put(
        &c,
        "verify.json",
        &verify_summary(&c, c.hash.as_deref().unwrap(), "exhaustive"),
    );
    let page = render(&c, &gather(&c, &[]).unwrap());
    assert!(
        page.contains("<b>PASS</b> — verify <code>results/verify.json</code> (latest)"),
        "{page}"
    );
    assert!(page.contains("<th>vectors</th><td>256</td>"));
    assert!(page.contains("No proof result found"));
}

#[test]
fn a_failed_or_partial_run_is_no_pass() {
    let (_t, c) = core();
    let h = c.hash.clone().unwrap();
    let mut v = verify_summary(&c, &h, "random");
    v["complete"] = false.into();
    put(&c, "partial.json", &v);
    let page = render(&c, &gather(&c, &[]).unwrap());
    assert!(
        page.contains("INCOMPLETE") && !page.contains("PASS"),
        "{page}"
    );
    let mut v = verify_summary(&c, &h, "random");
    v["mismatches"] = 3.into();
    v["shards"] = serde_json::json!([{"index": 2, "count": 8}]);
    put(&c, "partial.json", &v);
    let page = render(&c, &gather(&c, &[]).unwrap());
    assert!(page.contains("<b>FAIL</b>") && page.contains("part of the space only"));
}

#[test]
fn stamped_prove_and_synth_summaries_are_matched() {
    let (_t, c) = core();
    let h = c.hash.clone().unwrap();
    let mut p = serde_json::json!([{"verdict": "proven", "statement": "equal", "gold": "t", "gate": "ref", "solver": "cadical", "seconds": 1.0}]);
    stamp(&mut p, &c.manifest.command, &h);
    put(&c, "prove.json", &p);
    let mut s = serde_json::json!({"target": "ice40-up5k", "fmax_mhz": 123.45, "luts": 17});
    stamp(&mut s, &c.manifest.command, &h);
    put(&c, "synth.json", &s);
    let page = render(&c, &gather(&c, &[]).unwrap());
    assert!(page.contains("<b>PROVEN</b>"), "{page}");
    assert!(page.contains("123.5 MHz Fmax on ice40-up5k"));
    assert!(page.contains("No verification result found"));
    // Unstamped, a proof names no core.
    put(
        &c,
        "prove.json",
        &serde_json::json!([{"verdict": "proven"}]),
    );
    let page = render(&c, &gather(&c, &[]).unwrap());
    assert!(page.contains("No proof result found"));
}

#[test]
fn exact_decimals() {
    assert_eq!(exact_decimal(3, -1), "1.5");
    assert_eq!(exact_decimal(1, -9), "0.001953125");
    assert_eq!(exact_decimal(7, 4), "112");
    assert_eq!(exact_decimal(0, 0), "0");
    assert_eq!(
        exact_decimal(1, -127).len(),
        "0.".len() + 127,
        "2^-127 has 127 decimals"
    );
}

#[test]
fn only_a_report_page_is_overwritten() {
    let (_t, c) = core();
    let p = c.dir.join("t.html");
    std::fs::write(&p, "<html>mine</html>").unwrap();
    let e = write_page(&p, &render(&c, &[])).unwrap_err();
    assert!(
        e.to_string().contains("fp8gen report did not write it"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "<html>mine</html>");
    std::fs::remove_file(&p).unwrap();
    write_page(&p, &render(&c, &[])).unwrap();
    write_page(&p, &render(&c, &[])).unwrap();
    assert!(is_report_page(&p));
    let names: Vec<_> = std::fs::read_dir(&c.dir).unwrap().collect();
    assert_eq!(names.len(), 3, "no temporary file left");
}

#[test]
fn a_wide_format_gets_a_summary() {
    let mut h = String::new();
    value_table(&mut h, &Format::BINARY16);
    assert!(h.contains("65536 codes: 2 zero, 2046 subnormal"), "{h}");
    assert!(h.contains("0x7c00") && h.contains("+∞"));
    assert!(
        h.contains("2046 NaN codes in all (1023 with the sign bit clear)"),
        "{h}"
    );
    assert!(h.contains("65504"));
}
