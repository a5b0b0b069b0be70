//! `fp8gen report DIR` (docs/report.md): the datasheet page of a generated core, rendered by
//! headless Chromium (installed by scripts/setup.sh) and checked as a reader sees it: ports,
//! latency, values, the verdict and vector count of this core's verification, "no proof
//! result found" when there is none, a summary of another core not taken as this one's.
//! And the ownership rule: `gen --force` replaces the page and the summaries in `results/`
//! with the core, never a file fp8gen did not write; `report` overwrites only its own page.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` with stdout to `stdout` (or piped), killed after `limit`: a hang is a failure.
fn run_to(mut cmd: Command, stdout: Option<std::fs::File>, limit: Duration) -> Output {
    cmd.stdin(Stdio::null()).stderr(Stdio::piped());
    match stdout {
        Some(f) => cmd.stdout(f),
        None => cmd.stdout(Stdio::piped()),
    };
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{shown}: {e}"));
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn fp8gen(args: &[&str], code: i32) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fp8gen"));
    c.args(args);
    let o = run_to(c, None, Duration::from_secs(300));
    assert_eq!(
        o.status.code(),
        Some(code),
        "fp8gen {args:?}: stderr {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The text headless Chromium renders from `page` (tags replaced by spaces, white space
/// collapsed), and the DOM it dumped.
fn rendered(page: &Path) -> (String, String) {
    let chromium = std::env::var("FP8GEN_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let profile = tempfile::tempdir().unwrap();
    let mut c = Command::new(&chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg("--dump-dom")
    .arg(format!("file://{}", page.canonicalize().unwrap().display()));
    if Command::new(&chromium)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        panic!(
            "'{chromium}' is not installed: the report test renders the page in headless Chromium; run scripts/setup.sh (or make setup) to install it, or set FP8GEN_CHROMIUM"
        );
    }
    let o = run_to(c, None, Duration::from_secs(120));
    let dom = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        dom.contains("</html>"),
        "chromium rendered nothing: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut text = String::new();
    let mut in_tag = false;
    for ch in dom.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (text, dom)
}

fn page_of(dir: &Path) -> PathBuf {
    let top = "fp8_mul_e2m1_to_e2m1_rne_satnone_s0";
    dir.join(format!("{top}.html"))
}

#[test]
fn a_verified_core_reads_as_verified_in_the_browser() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("core");
    fp8gen(&["gen", "-u", "mul", "-f", "e2m1", "-o", s(&dir)], 0);
    // Before any verification the page says so.
    fp8gen(&["report", s(&dir)], 0);
    let (text, _) = rendered(&page_of(&dir));
    assert!(
        text.contains(
            "No verification result found: nothing on this page says that this core was verified"
        ),
        "{text}"
    );
    assert!(!text.contains("PASS"), "{text}");

    std::fs::create_dir(dir.join("results")).unwrap();
    let f = std::fs::File::create(dir.join("results/verify.json")).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_fp8gen"));
    c.args(["verify", "--from", s(&dir), "--json"]);
    let o = run_to(c, Some(f), Duration::from_secs(300));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = fp8gen(&["report", s(&dir)], 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 of this core used"));
    let (text, dom) = rendered(&page_of(&dir));
    for want in [
        "fp8_mul_e2m1_to_e2m1_rne_satnone_s0",
        "fp8gen gen --unit mul --format e2m1",
        "latency 0 cycles (combinational)",
        "x_i input 4 x",
        "y_i input 4 y",
        "r_o output 4 result",
        "flags_o output 4 flags",
        // e2m1: code 0x7 is 6 exactly, 0x1 the subnormal 0.5.
        "0x7 0111 normal 0x1.8p+2 6",
        "0x1 0001 subnormal 0x1p-1 0.5",
        "PASS — verify results/verify.json (latest)",
        "vectors 256",
        "mismatches 0",
        "No proof result found",
        "No synthesis result found",
        "results/verify.json verify summary of this core: used (256 vectors, exhaustive: every operand bit pattern; modes rne/satnone)",
    ] {
        assert!(
            text.contains(want),
            "missing '{want}' in the rendered page: {text}"
        );
    }
    assert!(dom.contains("<svg"), "no plot");
    assert!(!dom.contains("<script"), "a page without script");

    // The same summary next to another core is that core's no result.
    let other = t.path().join("other");
    fp8gen(
        &[
            "gen",
            "-u",
            "mul",
            "-f",
            "e2m1",
            "-r",
            "rtz",
            "-o",
            s(&other),
        ],
        0,
    );
    let page = t.path().join("other.html");
    fp8gen(
        &[
            "report",
            s(&other),
            "-o",
            s(&page),
            "--results",
            s(&dir.join("results/verify.json")),
        ],
        0,
    );
    let (text, _) = rendered(&page);
    assert!(text.contains("No verification result found"), "{text}");
    assert!(
        text.contains("verify summary not used: of another core"),
        "{text}"
    );
    assert!(!text.contains("PASS"), "{text}");
}

#[test]
fn gen_force_replaces_the_report_with_the_core_and_nothing_else() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("core");
    fp8gen(&["gen", "-u", "mul", "-f", "e2m1", "-o", s(&dir)], 0);
    std::fs::create_dir(dir.join("results")).unwrap();
    // A summary fp8gen writes (this core's shape; only its generator matters to ownership).
    std::fs::write(
        dir.join("results/verify.json"),
        r#"{"vectors": 1, "meta": {"generator": "fp8gen 0.1.0"}}"#,
    )
    .unwrap();
    fp8gen(&["report", s(&dir)], 0);
    assert!(page_of(&dir).is_file());
    // Bad input: no core there, a --results file that is no summary (exit 2, nothing written).
    let e = fp8gen(&["report", s(&t.path().join("nothing"))], 2);
    assert!(
        String::from_utf8_lossy(&e.stderr).contains("point at a directory written by `fp8gen gen`")
    );
    let e = fp8gen(
        &[
            "report",
            s(&dir),
            "-o",
            s(&t.path().join("x.html")),
            "--results",
            s(&dir.join("manifest.json")),
        ],
        2,
    );
    assert!(
        String::from_utf8_lossy(&e.stderr)
            .contains("not a JSON summary of fp8gen verify, prove or synth"),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );
    assert!(!t.path().join("x.html").exists());
    // The report overwrites its own page only.
    fp8gen(&["report", s(&dir)], 0);
    let mine = dir.join("notes.html");
    std::fs::write(&mine, "<html>my notes</html>").unwrap();
    let e = fp8gen(&["report", s(&dir), "-o", s(&mine)], 2);
    assert!(
        String::from_utf8_lossy(&e.stderr).contains("fp8gen report did not write it"),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "<html>my notes</html>"
    );
    // A page and a file of the user's: gen --force refuses, naming the user's file.
    let e = fp8gen(
        &["gen", "-u", "mul", "-f", "e2m1", "-o", s(&dir), "--force"],
        2,
    );
    assert!(
        String::from_utf8_lossy(&e.stderr).contains("holds notes.html, which fp8gen did not write"),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );
    std::fs::remove_file(&mine).unwrap();
    // A file of the user's in results/ too.
    std::fs::write(dir.join("results/notes.txt"), "mine").unwrap();
    let e = fp8gen(
        &["gen", "-u", "mul", "-f", "e2m1", "-o", s(&dir), "--force"],
        2,
    );
    assert!(
        String::from_utf8_lossy(&e.stderr).contains("holds results/notes.txt, which fp8gen"),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );
    assert!(page_of(&dir).is_file() && dir.join("results/verify.json").is_file());
    std::fs::remove_file(dir.join("results/notes.txt")).unwrap();
    // Only fp8gen's files: replaced with the core.
    fp8gen(
        &["gen", "-u", "mul", "-f", "e2m1", "-o", s(&dir), "--force"],
        0,
    );
    assert!(!page_of(&dir).exists() && !dir.join("results").exists());
    assert!(dir.join("manifest.json").is_file());
}
