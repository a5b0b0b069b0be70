//! Output directories and user-named files: no command deletes or overwrites a file it did not
//! write (`gen -o --force`, `board -o`, `synth --keep`, `prove --keep`, `sweep slurm --out`
//! take a directory only when it is new, empty or an earlier run's of the same command,
//! `iface::outdir`); a FIFO or a device named as a manifest or a source file is refused at once
//! (never opened, never read to the end); the model cache removes only its own entries.
//! Everything happens in fresh temporary directories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn fp8gen() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fp8gen"))
}

/// Runs `fp8gen args` in `cwd` (with `env`), killed after `limit`: a hang is a failure.
fn run_env(cwd: &Path, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Output {
    let mut c = fp8gen();
    c.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("run fp8gen");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "fp8gen {args:?} did not finish within {limit:?} (hung); stderr: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run(cwd: &Path, args: &[&str]) -> Output {
    run_env(cwd, args, &[], Duration::from_secs(120))
}

/// Runs and expects exit code `code`; returns stderr.
fn expect(cwd: &Path, args: &[&str], code: i32) -> String {
    let o = run(cwd, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "fp8gen {args:?}:\n{err}");
    err
}

/// The `error: <message>` line of a failed run, without the prefix.
fn message(err: &str) -> &str {
    err.lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or(err.trim_end())
}

const MUL: [&str; 5] = ["-u", "mul", "-f", "e4m3", "--no-flags"];
const PROJECT: [&str; 8] = [
    "-u",
    "project",
    "-f",
    "e4m3",
    "-r",
    "rne",
    "-s",
    "satfinite",
];

fn gen_args<'a>(unit: &[&'a str], out: &'a str, force: bool) -> Vec<&'a str> {
    let mut a = vec!["gen"];
    a.extend_from_slice(unit);
    a.extend(["-o", out]);
    if force {
        a.push("--force");
    }
    a
}

/// Files (relative, sorted) under `dir`.
fn tree(dir: &Path) -> Vec<String> {
    fn go(root: &Path, d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(root).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                go(root, &p, out);
            }
        }
    }
    let mut v = Vec::new();
    go(dir, dir, &mut v);
    v.sort();
    v
}

/// A directory holding one file of the user's, and the check that it is untouched.
fn foreign_dir(parent: &Path, name: &str) -> (PathBuf, impl Fn()) {
    let d = parent.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("notes.txt"), "my notes").unwrap();
    let check = {
        let d = d.clone();
        move || {
            assert_eq!(tree(&d), ["notes.txt"], "{}", d.display());
            assert_eq!(
                std::fs::read_to_string(d.join("notes.txt")).unwrap(),
                "my notes"
            );
        }
    };
    (d, check)
}

#[test]
fn gen_force_replaces_only_an_earlier_gen() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // A directory with a file fp8gen did not write: refused with and without --force.
    let (_, untouched) = foreign_dir(t, "p");
    for force in [false, true] {
        let e = expect(t, &gen_args(&MUL, "p", force), 2);
        assert_eq!(
            message(&e),
            "output directory p holds notes.txt, which fp8gen did not write; --force replaces only the files of an earlier fp8gen gen (its manifest.json lists them): choose another directory or move it away"
        );
        untouched();
    }
    // The same file in a subdirectory, next to an earlier gen's files.
    let g = t.join("g");
    expect(t, &gen_args(&MUL, "g", false), 0);
    let first = tree(&g);
    assert_eq!(first.len(), 5, "{first:?}"); // .v, manifest, .core, _tb.sv, _vectors.hex
    std::fs::create_dir(g.join("sub")).unwrap();
    std::fs::write(g.join("sub/keep.txt"), "mine").unwrap();
    let e = expect(t, &gen_args(&PROJECT, "g", true), 2);
    assert!(
        message(&e).contains("output directory g holds sub, which fp8gen did not write"),
        "{e}"
    );
    assert!(g.join("sub/keep.txt").is_file());
    std::fs::remove_dir_all(g.join("sub")).unwrap();
    // Over an earlier gen: without --force refused; with it, the old core's files go and the
    // new core's come (another top name: nothing of the old one is left).
    let e = expect(t, &gen_args(&PROJECT, "g", false), 2);
    assert!(
        e.contains("holds an earlier fp8gen gen; pass --force to replace it"),
        "{e}"
    );
    assert_eq!(tree(&g), first);
    expect(t, &gen_args(&PROJECT, "g", true), 0);
    let second = tree(&g);
    assert_eq!(second.len(), 5, "{second:?}");
    assert!(first
        .iter()
        .all(|f| f == "manifest.json" || !second.contains(f)));
    // No temporary or moved-aside directories are left next to it.
    let names: Vec<String> = std::fs::read_dir(t)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
    // A manifest.json fp8gen did not write makes the directory foreign.
    let v = t.join("vendor");
    std::fs::create_dir(&v).unwrap();
    std::fs::write(
        v.join("manifest.json"),
        r#"{"generator": "vendor-tool 2.0"}"#,
    )
    .unwrap();
    std::fs::write(v.join("core.v"), "module m; endmodule\n").unwrap();
    let e = expect(t, &gen_args(&MUL, "vendor", true), 2);
    assert_eq!(
        message(&e),
        "output directory vendor holds manifest.json, which fp8gen did not write (generator 'vendor-tool 2.0'); --force replaces only the files of an earlier fp8gen gen (its manifest.json lists them): choose another directory or move it away"
    );
    assert_eq!(tree(&v), ["core.v", "manifest.json"]);
}

#[test]
fn gen_into_the_current_directory_is_refused_and_nothing_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("work");
    std::fs::create_dir(&cwd).unwrap();
    std::fs::write(cwd.join("notes.txt"), "my notes").unwrap();
    for out in [".", "./", ".."] {
        let e = expect(&cwd, &gen_args(&MUL, out, true), 2);
        assert!(
            e.contains("is the current directory or holds it"),
            "{out}: {e}"
        );
    }
    assert_eq!(tree(&cwd), ["notes.txt"]);
    assert_eq!(tree(tmp.path()), ["work", "work/notes.txt"]);
    // Even when it only holds an earlier gen's files: the current directory is not renamed.
    let g = tmp.path().join("g");
    expect(tmp.path(), &gen_args(&MUL, "g", false), 0);
    let before = tree(&g);
    let e = expect(&g, &gen_args(&MUL, ".", true), 2);
    assert!(e.contains("give a new subdirectory (e.g. -o ./out)"), "{e}");
    assert_eq!(tree(&g), before);
    // A trailing slash and a symbolic link name the directory itself.
    expect(tmp.path(), &gen_args(&MUL, "g/", true), 0);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&g, tmp.path().join("link")).unwrap();
        expect(tmp.path(), &gen_args(&PROJECT, "link", true), 0);
        assert!(std::fs::symlink_metadata(tmp.path().join("link"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(
            tree(&g).iter().any(|f| f.contains("project")),
            "{:?}",
            tree(&g)
        );
    }
    // A regular file is not a directory.
    std::fs::write(tmp.path().join("file"), "x").unwrap();
    let e = expect(tmp.path(), &gen_args(&MUL, "file", true), 2);
    assert!(
        e.contains("output path file exists and is not a directory"),
        "{e}"
    );
}

#[test]
fn board_synth_prove_and_sweep_refuse_a_foreign_directory_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let (_, untouched) = foreign_dir(t, "out");
    let want = |cmd: &str| {
        format!(
            "output directory out holds notes.txt, which fp8gen did not write; fp8gen {cmd} replaces only the files of an earlier fp8gen {cmd} (its .fp8gen-files lists them): choose another directory or move it away"
        )
    };
    let mut board = vec!["board"];
    board.extend(MUL);
    board.extend(["-b", "icebreaker", "-o", "out"]);
    let e = expect(t, &board, 2);
    assert_eq!(message(&e), want("board"));
    untouched();
    let mut synth = vec!["synth"];
    synth.extend(MUL);
    synth.extend(["-t", "ice40-up5k", "--keep", "out"]);
    let e = expect(t, &synth, 2);
    assert_eq!(message(&e), want("synth"));
    untouched();
    // --keep with the --fmax search (several builds) is not honoured: an error, not dropped.
    let mut fmax = vec!["synth"];
    fmax.extend(MUL);
    fmax.extend(["-t", "ice40-up5k", "--fmax", "50", "--keep", "fresh"]);
    let e = expect(t, &fmax, 2);
    assert!(
        message(&e).starts_with("--keep applies to synth without --fmax"),
        "{e}"
    );
    assert!(!t.join("fresh").exists());
    let mut prove = vec!["prove"];
    prove.extend(&PROJECT);
    prove.extend(["--keep", "out"]);
    let e = expect(t, &prove, 2);
    assert_eq!(message(&e), want("prove"));
    untouched();
    let e = expect(
        t,
        &[
            "sweep",
            "slurm",
            "prove",
            "--units",
            "mul",
            "--formats",
            "e4m3",
            "--roundings",
            "rne",
            "--out",
            "out",
        ],
        2,
    );
    assert_eq!(
        message(&e),
        "output directory out holds notes.txt, which fp8gen did not write; fp8gen sweep slurm writes only into a directory of an earlier fp8gen sweep slurm (its plan.json names its files): choose another directory or move it away"
    );
    untouched();
}

#[test]
fn a_sweep_directory_is_written_again_and_keeps_what_is_not_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let args = [
        "sweep",
        "slurm",
        "prove",
        "--units",
        "mul",
        "--formats",
        "e4m3",
        "--roundings",
        "rne,rtz",
        "--out",
        "s",
    ];
    expect(t, &args, 0);
    let s = t.join("s");
    // A task's result and log: the same sweep is written again.
    std::fs::write(s.join("logs/1_0.out"), "log").unwrap();
    let job = tree(&s)
        .into_iter()
        .find(|n| n.starts_with("prove-"))
        .map(|n| n.trim_end_matches(".json").to_string());
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.join("plan.json")).unwrap()).unwrap();
    let name = job.unwrap_or_else(|| plan["jobs"][0]["name"].as_str().unwrap().to_string());
    std::fs::write(s.join(format!("{name}.json")), "{}").unwrap();
    let o = run(t, &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("1 finished, 1 to run"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Something of the user's in it: refused, nothing written or removed.
    std::fs::write(s.join("README.txt"), "mine").unwrap();
    let before = tree(&s);
    let e = expect(t, &args, 2);
    assert!(
        message(&e).starts_with("output directory s holds README.txt, which fp8gen did not write"),
        "{e}"
    );
    assert_eq!(tree(&s), before);
}

/// A directory holding a core whose manifest names `file` as its one Verilog source.
fn core_with_source(t: &Path, name: &str) -> PathBuf {
    let d = t.join(name);
    expect(t, &gen_args(&MUL, name, false), 0);
    let p = d.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    m["verilog"] = serde_json::json!("src.v");
    m["generator"] = serde_json::json!("hand");
    std::fs::write(&p, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    d
}

/// The Verilog file `gen` wrote in `dir`.
fn verilog_of(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "v") && !p.ends_with("src.v"))
        .unwrap()
}

fn mkfifo(p: &Path) -> bool {
    Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let quick = Duration::from_secs(20);
    // A FIFO as manifest.json: no writer will ever come; refused without opening it.
    let f = t.join("fifo");
    std::fs::create_dir(&f).unwrap();
    assert!(mkfifo(&f.join("manifest.json")), "mkfifo");
    let o = run_env(
        t,
        &["verify", "--from", "fifo", "--random", "10"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(
        message(&e),
        "--from: fifo/manifest.json is a FIFO, not a regular file"
    );
    // A symbolic link to a FIFO likewise.
    std::os::unix::fs::symlink(f.join("manifest.json"), t.join("m.json")).unwrap();
    let o = run_env(
        t,
        &["verify", "--from", "m.json", "--random", "10"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        message(&e),
        "--from: m.json is a FIFO, not a regular file",
        "{e}"
    );
    // /dev/zero as the manifest and as a source file: refused, not read until memory runs out.
    let o = run_env(
        t,
        &["verify", "--from", "/dev/zero", "--random", "10"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        message(&e),
        "--from: /dev/zero is a character device, not a regular file"
    );
    let d = core_with_source(t, "zero");
    std::os::unix::fs::symlink("/dev/zero", d.join("src.v")).unwrap();
    let o = run_env(
        t,
        &["verify", "--from", "zero", "--random", "10"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("zero/src.v is a character device, not a regular file"),
        "{e}"
    );
    // A FIFO and an oversized (sparse) file as the source.
    let d = core_with_source(t, "fsrc");
    assert!(mkfifo(&d.join("src.v")));
    let o = run_env(
        t,
        &["verify", "--from", "fsrc", "--random", "10"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("fsrc/src.v is a FIFO, not a regular file"),
        "{e}"
    );
    let d = core_with_source(t, "big");
    std::fs::File::create(d.join("src.v"))
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    let o = run_env(
        t,
        &["verify", "--from", "big", "--random", "10"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("big/src.v is 100.0 MiB; source files over 64.0 MiB are refused"),
        "{e}"
    );
    // A FIFO or a link to /dev/zero in an include directory (Verilator would block on it or
    // read it without end).
    let d = core_with_source(t, "inc");
    std::fs::copy(verilog_of(&d), d.join("src.v")).unwrap();
    std::fs::create_dir(d.join("include")).unwrap();
    let p = d.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    m["include_dirs"] = serde_json::json!(["include"]);
    std::fs::write(&p, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.join("include/zero.vh")).unwrap();
    let o = run_env(
        t,
        &["verify", "--from", "inc", "--random", "10"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("inc/include/zero.vh (in include directory inc/include) is a character device, not a regular file"),
        "{e}"
    );
    std::fs::remove_file(d.join("include/zero.vh")).unwrap();
    assert!(mkfifo(&d.join("include/x.vh")));
    let o = run_env(
        t,
        &["verify", "--from", "inc", "--random", "10"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("inc/include/x.vh (in include directory inc/include) is a FIFO"),
        "{e}"
    );
    // board-test's shell.json and merge's inputs.
    let b = t.join("board");
    std::fs::create_dir(&b).unwrap();
    assert!(mkfifo(&b.join("shell.json")));
    let o = run_env(
        t,
        &["board-test", "--port", "/dev/null", "-d", "board"],
        &[],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("board/shell.json is a FIFO, not a regular file"),
        "{e}"
    );
    let o = run_env(t, &["merge", "board/shell.json"], &[], quick);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("board/shell.json is a FIFO, not a regular file"),
        "{e}"
    );
}

#[test]
fn the_cache_removes_only_its_own_entries_and_checks_its_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let quick = Duration::from_secs(20);
    // FP8GEN_CACHE naming a regular file: an error, the file untouched.
    let f = t.join("file");
    std::fs::write(&f, "x").unwrap();
    for action in ["clean", "info"] {
        let o = run_env(t, &["cache", action], &[("FP8GEN_CACHE", "file")], quick);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{action}: {e}");
        // A relative FP8GEN_CACHE is taken against the working directory.
        assert_eq!(
            message(&e),
            format!(
                "the cache {} is not a directory; point FP8GEN_CACHE at a directory (or unset it)",
                f.display()
            )
        );
    }
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "x");
    // A cache pointed at a directory holding other things under models/, runtime/, tmp/.
    let home = t.join("home");
    let theirs = ["models/holiday.jpg", "runtime/notes", "tmp/build-old"];
    for p in theirs {
        let p = home.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "mine").unwrap();
    }
    std::fs::create_dir_all(home.join("tmp/model-4194399-1-0")).unwrap();
    std::fs::create_dir_all(home.join(format!("models/{}", "0".repeat(32)))).unwrap();
    let o = run_env(t, &["cache", "clean"], &[("FP8GEN_CACHE", "home")], quick);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("1 models, 0 runtimes, 1 temporary directories"),
        "{out}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("left 3 entries the cache did not create"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for p in theirs {
        assert!(home.join(p).is_file(), "{p} was deleted");
    }
    // A cache size limit that is not a number: an error naming the variable.
    let o = run_env(
        t,
        &["cache", "info"],
        &[("FP8GEN_CACHE", "home"), ("FP8GEN_CACHE_MAX_MB", "abc")],
        quick,
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(
        message(&e),
        "FP8GEN_CACHE_MAX_MB=abc is not a number of MiB; give e.g. FP8GEN_CACHE_MAX_MB=4096 (the default) or unset it"
    );
    let mut v = vec!["verify"];
    v.extend(MUL);
    v.extend(["--random", "10"]);
    let o = run_env(
        t,
        &v,
        &[("FP8GEN_CACHE", "home"), ("FP8GEN_CACHE_MAX_MB", "abc")],
        Duration::from_secs(120),
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("FP8GEN_CACHE_MAX_MB=abc is not a number of MiB"),
        "{e}"
    );
}

#[test]
fn kept_directories_are_replaced_by_the_same_command_only() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let mut synth = vec!["synth"];
    synth.extend(MUL);
    synth.extend(["-t", "ice40-up5k", "--keep", "k"]);
    let mut board = vec!["board"];
    board.extend(MUL);
    board.extend(["-b", "icebreaker", "-o", "b"]);
    let prove = [
        "prove",
        "-u",
        "mul",
        "-f",
        "e4m3",
        "-r",
        "rne",
        "-s",
        "satfinite",
        "--keep",
        "pk",
    ];
    for (args, dir) in [(&synth[..], "k"), (&board[..], "b"), (&prove[..], "pk")] {
        // Written, then written again over the earlier run's files.
        expect(t, args, 0);
        let d = t.join(dir);
        let listing = std::fs::read_to_string(d.join(".fp8gen-files")).unwrap();
        assert!(listing.contains("\"generator\": \"fp8gen "), "{listing}");
        let first = tree(&d);
        expect(t, args, 0);
        assert_eq!(tree(&d), first, "{dir}");
        // A file of the user's among them: refused, nothing touched.
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        let e = expect(t, args, 2);
        assert!(
            message(&e).starts_with(&format!(
                "output directory {dir} holds notes.txt, which fp8gen did not write"
            )),
            "{e}"
        );
        let mut with_notes = first.clone();
        with_notes.push("notes.txt".into());
        with_notes.sort();
        assert_eq!(tree(&d), with_notes);
        std::fs::remove_file(d.join("notes.txt")).unwrap();
    }
    // The artifacts are where the report says.
    let o = run(t, &prove);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("artifacts: pk/pair"), "{out}");
    // Another command's directory is not this command's.
    let mut other = vec!["synth"];
    other.extend(MUL);
    other.extend(["-t", "ice40-up5k", "--keep", "pk"]);
    let e = expect(t, &other, 2);
    assert!(
        message(&e).starts_with(
            "output directory pk holds .fp8gen-files, which fp8gen did not write (generator 'fp8gen "
        ),
        "{e}"
    );
    assert!(
        message(&e).contains("command 'prove', not fp8gen synth)"),
        "{e}"
    );
    // Nothing left next to them.
    let names: Vec<String> = std::fs::read_dir(t)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}
