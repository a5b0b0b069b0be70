//! The documentation's command lines are tested, so that they cannot rot.
//!
//! Every `fp8gen …` command in a fenced `sh` block of README.md and docs/*.md is extracted
//! (continuation lines joined, `# comments` dropped, pipelines and `&&` chains split) and
//! checked with the binary cargo built, each page's commands in order in a fresh temporary
//! directory (so `-o out/p` and later `--from out/p` work as written, and nothing outside that
//! directory is touched):
//!
//! * **Run for real**: the cheap commands — `formats`, `decode`, the batch commands
//!   (`project`, `mul`, `fma`, `dot`; stdin from the `echo` before them in the pipeline, else
//!   the `< file` if an earlier line wrote it, else empty), `gen`, `report`, `--help`, and
//!   `verify` of small cores (`decode`, `mul`, `project` without `--exhaustive`, and `--from` a
//!   directory the page generated). They must exit 0; `> file` redirections are honoured
//!   inside the temporary directory, and a batch command fed by `echo` must print something.
//! * **Checked, not run**: the costly ones (`synth`, `board`, `board-test`, `prove`, `sweep`,
//!   `merge`, `verify` of `fma`/`mac`/`dot`, exhaustive projections, `--from` a directory the
//!   page does not create) run with `FP8GEN_PARSE_ONLY` set: the binary parses the command
//!   line with the same clap definitions as a real run and then stops, saying so; for
//!   `verify -u`, `prove` and `synth` without `--fmax` it also builds the request the way a
//!   planned sweep job is checked (formats, modes, options). A subcommand that no longer
//!   exists, a renamed option or an invalid value exits 2 and fails this test.
//!
//! The other commands of those blocks (`cargo`, `alias`, `iceprog`, `pip`, …) are not
//! checked here, except `mkdir -p DIR`, which is carried out in the temporary directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One `fp8gen` command of a page: its arguments, its stdin text, its redirections.
#[derive(Debug)]
struct Example {
    /// `file:line` for messages.
    place: String,
    args: Vec<String>,
    /// The text of an `echo` piped into it.
    echo: Option<String>,
    /// `< file`.
    stdin_file: Option<String>,
    /// `> file`.
    stdout_file: Option<String>,
}

/// A step of a page: an `fp8gen` command, or a `mkdir -p` it relies on.
#[derive(Debug)]
enum Step {
    Fp8gen(Example),
    Mkdir(String),
}

/// Splits a shell line into words: quotes and backslashes as the shell does, `#` starting a
/// comment at a word boundary; operators (`|`, `&&`, `;`, `<`, `>`, `2>&1`) are words.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        _ => cur.push(d),
                    }
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '|' | ';' | '<' | '>' | '&' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
                let mut op = c.to_string();
                while let Some(&d) = chars.peek() {
                    if matches!(d, '|' | '&' | '>') {
                        op.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                if op.ends_with('&') {
                    if let Some(d) = chars.next_if(char::is_ascii_digit) {
                        op.push(d);
                    }
                }
                // `2>&1`: the `2` was taken as a word.
                if op.starts_with('>') && out.last().is_some_and(|w| w == "2") {
                    out.pop();
                    op.insert(0, '2');
                }
                out.push(op);
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// The `sh` blocks' logical lines of a markdown page: `(line number, text)`.
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_sh = None::<bool>;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(info) = t.strip_prefix("```") {
            in_sh = match in_sh {
                None => Some(matches!(info.trim(), "sh" | "bash" | "shell" | "console")),
                Some(_) => None,
            };
            continue;
        }
        if in_sh != Some(true) {
            continue;
        }
        let (n, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        match line.strip_suffix('\\') {
            Some(head) => {
                acc.push_str(head);
                acc.push(' ');
                pending = Some((n, acc));
            }
            None => {
                acc.push_str(line);
                out.push((n, acc));
            }
        }
    }
    out
}

/// The steps of one logical shell line.
fn steps(place: &str, line: &str) -> Vec<Step> {
    let w = words(line);
    let mut out = Vec::new();
    let mut echo: Option<String> = None;
    for seg in w.split(|x| x == "&&" || x == ";" || x == "||") {
        for (k, piece) in seg.split(|x| x == "|").enumerate() {
            let Some(first) = piece.first() else { continue };
            let first = first.rsplit('/').next().unwrap_or(first);
            if k == 0 {
                echo = None;
            }
            match first {
                "echo" => echo = Some(piece[1..].join(" ")),
                "mkdir" if piece.get(1).is_some_and(|a| a == "-p") => {
                    out.extend(piece[2..].iter().map(|d| Step::Mkdir(d.clone())))
                }
                "fp8gen" => {
                    let mut ex = Example {
                        place: place.to_string(),
                        args: Vec::new(),
                        echo: echo.take(),
                        stdin_file: None,
                        stdout_file: None,
                    };
                    let mut it = piece[1..].iter();
                    while let Some(a) = it.next() {
                        match a.as_str() {
                            "<" => ex.stdin_file = it.next().cloned(),
                            ">" => ex.stdout_file = it.next().cloned(),
                            "2>&1" => {}
                            _ => ex.args.push(a.clone()),
                        }
                    }
                    out.push(Step::Fp8gen(ex));
                }
                _ => echo = None,
            }
        }
    }
    out
}

/// The value of option `long` (or `short`) in `args`.
fn opt<'a>(args: &'a [String], long: &str, short: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == long || a == short)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// Why an example is only checked for its arguments, or None when it is run for real.
fn costly(ex: &Example, dir: &Path) -> Option<&'static str> {
    let a = &ex.args;
    if a.iter().any(|x| x == "--help" || x == "-h") {
        return None;
    }
    match a.first().map(String::as_str) {
        Some("formats" | "decode" | "project" | "mul" | "fma" | "dot" | "gen" | "cache") => {
            if a.first().is_some_and(|c| c == "cache") && a.get(1).is_some_and(|c| c == "clean") {
                Some("cache clean removes the shared model cache")
            } else {
                None
            }
        }
        Some("report") => match a.get(1) {
            Some(d) if dir.join(d).join("manifest.json").is_file() => None,
            _ => Some("report of a directory this page does not generate"),
        },
        Some("verify") => {
            if let Some(from) = opt(a, "--from", "") {
                if !dir.join(from).join("manifest.json").is_file() {
                    return Some("verify --from a directory this page does not generate");
                }
                if a.iter().any(|x| x == "--prove") {
                    return Some("a proof");
                }
                let unit = std::fs::read_to_string(dir.join(from).join("manifest.json"))
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                    .and_then(|m| m["unit"].as_str().map(str::to_string));
                return match unit.as_deref() {
                    Some("decode" | "mul" | "project") => None,
                    _ => Some("a long verification"),
                };
            }
            let unit = opt(a, "--unit", "-u");
            let exhaustive = a.iter().any(|x| x == "--exhaustive");
            match unit {
                Some("decode" | "mul") => None,
                Some("project") if !exhaustive => None,
                _ => Some("a long verification"),
            }
        }
        Some("synth" | "board") => Some("synthesis and place and route"),
        Some("board-test") => Some("needs a board on a serial port"),
        Some("prove") => Some("a SAT proof"),
        Some("sweep") => Some("measures rates and writes or submits job arrays"),
        Some("merge") => Some("merges the results of a sweep that is not there"),
        Some("bench") => Some("a throughput measurement"),
        _ => Some("a subcommand this test does not run"),
    }
}

fn docs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut d: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    d.sort();
    pages.extend(d);
    pages
}

/// Runs or checks one example in `dir`; returns whether it ran for real.
fn check(ex: &Example, dir: &Path) -> Result<bool, String> {
    let why = costly(ex, dir);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fp8gen"));
    cmd.args(&ex.args).current_dir(dir);
    if why.is_some() {
        cmd.env("FP8GEN_PARSE_ONLY", "1");
    }
    let stdin = match (&ex.echo, &ex.stdin_file) {
        (Some(text), _) => Some(format!("{text}\n")),
        (None, Some(f)) if why.is_none() => std::fs::read_to_string(dir.join(f)).ok(),
        _ => None,
    };
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = std::time::Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("cannot run fp8gen: {e}"))?;
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        if let Some(s) = &stdin {
            let _ = input.write_all(s.as_bytes());
        }
    }
    let o = child.wait_with_output().map_err(|e| e.to_string())?;
    if t0.elapsed().as_secs() >= 5 {
        eprintln!(
            "{}: fp8gen {}: {:.1} s",
            ex.place,
            ex.args.join(" "),
            t0.elapsed().as_secs_f64()
        );
    }
    let shown = format!(
        "{}: fp8gen {} ({})\nexit {:?}\nstderr: {}",
        ex.place,
        ex.args.join(" "),
        why.map_or("run".to_string(), |w| format!(
            "arguments checked only: {w}"
        )),
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    if !o.status.success() {
        return Err(shown);
    }
    match why {
        Some(_) => {
            if !String::from_utf8_lossy(&o.stdout).contains("nothing run") {
                return Err(format!(
                    "{shown}\nthe parse-only run did not say it ran nothing"
                ));
            }
        }
        None => {
            if ex.echo.is_some() && o.stdout.is_empty() {
                return Err(format!("{shown}\nno output for the echoed input"));
            }
            if let Some(f) = &ex.stdout_file {
                std::fs::write(dir.join(f), &o.stdout).map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(why.is_none())
}

/// Checks one page's commands in order in a fresh temporary directory:
/// `(page, commands, run, parsed, failures)`.
fn check_page(page: &Path) -> (String, usize, usize, usize, Vec<String>) {
    let text = std::fs::read_to_string(page).unwrap();
    let name = page.file_name().unwrap().to_string_lossy().into_owned();
    let tmp = tempfile::tempdir().unwrap();
    let (mut n, mut ran, mut parsed, mut failures) = (0, 0, 0, Vec::new());
    for (line, l) in shell_lines(&text) {
        for step in steps(&format!("{name}:{line}"), &l) {
            match step {
                Step::Mkdir(d) => std::fs::create_dir_all(tmp.path().join(d)).unwrap(),
                Step::Fp8gen(ex) => {
                    n += 1;
                    match check(&ex, tmp.path()) {
                        Ok(true) => ran += 1,
                        Ok(false) => parsed += 1,
                        Err(e) => failures.push(e),
                    }
                }
            }
        }
    }
    (name, n, ran, parsed, failures)
}

#[test]
fn every_documented_fp8gen_command_runs_or_parses() {
    let t0 = std::time::Instant::now();
    let pages = docs();
    // Pages are independent (each has its own directory): two threads, the README and
    // docs/tour.md in one of them, since the README's tour builds the same cores (the second
    // page finds their models in the cache instead of building them at the same time).
    let (tours, rest): (Vec<&PathBuf>, Vec<&PathBuf>) = pages.iter().partition(|p| {
        p.file_name()
            .is_some_and(|n| n == "README.md" || n == "tour.md")
    });
    let results: Vec<_> = std::thread::scope(|s| {
        let h: Vec<_> = [tours, rest]
            .into_iter()
            .map(|part| {
                s.spawn(move || part.into_iter().map(|p| check_page(p)).collect::<Vec<_>>())
            })
            .collect();
        h.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let ran: usize = results.iter().map(|r| r.2).sum();
    let parsed: usize = results.iter().map(|r| r.3).sum();
    let failures: Vec<&String> = results.iter().flat_map(|r| &r.4).collect();
    let per_page: Vec<(&str, usize)> = results.iter().map(|r| (r.0.as_str(), r.1)).collect();
    eprintln!(
        "documented fp8gen commands: {ran} run, {parsed} checked for their arguments only, \
         in {:.1} s; per page: {per_page:?}",
        t0.elapsed().as_secs_f64()
    );
    let failures: Vec<&str> = failures.iter().map(|s| s.as_str()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The extraction itself must find the README's tour.
    let readme = per_page.iter().find(|(n, _)| *n == "README.md").unwrap().1;
    assert!(
        readme >= 8,
        "only {readme} fp8gen commands found in README.md"
    );
    assert!(ran >= 10 && parsed >= 10, "ran {ran}, parsed {parsed}");
}

#[test]
fn the_extractor_reads_pipes_redirections_and_continuations() {
    let text = "```sh\necho \"38 38\" | fp8gen mul -f e4m3 --flags  # 3c 0\n\
                mkdir -p o && fp8gen verify --from o \\\n    --json > o/r.json 2>&1\n```\n\
                ```text\nfp8gen not-a-command\n```\n";
    let lines = shell_lines(text);
    assert_eq!(lines.len(), 2);
    let s: Vec<Step> = lines
        .iter()
        .flat_map(|(n, l)| steps(&n.to_string(), l))
        .collect();
    let Step::Fp8gen(mul) = &s[0] else {
        panic!("{s:?}")
    };
    assert_eq!(mul.args, ["mul", "-f", "e4m3", "--flags"]);
    assert_eq!(mul.echo.as_deref(), Some("38 38"));
    assert!(matches!(&s[1], Step::Mkdir(d) if d == "o"));
    let Step::Fp8gen(v) = &s[2] else {
        panic!("{s:?}")
    };
    assert_eq!(v.args, ["verify", "--from", "o", "--json"]);
    assert_eq!(v.stdout_file.as_deref(), Some("o/r.json"));
}

#[test]
fn a_renamed_option_or_a_removed_subcommand_fails_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    for line in [
        "fp8gen synth -u mul -f e4m3 -t ecp5-25k --fmax-mhz 120",
        "fp8gen prove -u mul -f e4m9",
        "fp8gen no-such-subcommand",
        "fp8gen decode --format-name e4m3",
    ] {
        let s = steps("t", line);
        let Step::Fp8gen(ex) = &s[0] else { panic!() };
        assert!(check(ex, tmp.path()).is_err(), "{line} was accepted");
    }
}
