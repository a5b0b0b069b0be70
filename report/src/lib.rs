//! The datasheet of a generated core (`fp8gen report DIR`, docs/report.md): one
//! self-contained HTML page (no script, no external asset) with the core's request, ports and
//! timing, modes, the value table and a plot of each format, and the verify / prove / synth
//! summaries of this core found in `DIR/results/` or given by the caller.
//!
//! A summary is used only when it names this core: its `core_hash` equals the hash of the
//! core's Verilog ([`core_hash`], the hash `fp8gen verify` puts in its summary) and its
//! `request` equals the manifest's canonical request. Other files are listed with the reason
//! they were not used; when no summary of a kind is used the page says so, so a page never
//! suggests a check nobody ran.
//!
//! Pages begin with [`iface::outdir::REPORT_HEAD`]: `fp8gen gen --force` recognises them
//! (and the summaries in `results/`) as fp8gen's own, and [`write_page`] overwrites only such
//! a page.

#![forbid(unsafe_code)]

use golden::{Class, Format};
use iface::outdir::{is_report_page, result_kind, REPORT_HEAD, RESULTS_DIR};
use iface::{Direction, Manifest};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Why a page cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    /// Bad input (a directory without a core, a path that is not ours): what and what to do.
    Usage(String),
    /// The file system failed.
    Failed(String),
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Usage(m) | ReportError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ReportError {}

/// The hash of a core's Verilog text as `fp8gen verify` records it (`meta.core_hash`) for a
/// core without includes, defines or parameters (every generated core).
pub fn core_hash(verilog: &str) -> String {
    sim::Sources::verilog(verilog).content_hash()
}

/// Adds `generator`, `request` and `core_hash` to a prove or synth JSON summary (to each
/// report of a list), so that `fp8gen report` can tell which core it covers.
pub fn stamp(v: &mut Value, request: &str, hash: &str) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(|x| stamp(x, request, hash)),
        Value::Object(o) => {
            o.insert(
                "generator".into(),
                Value::String(format!("fp8gen {}", golden::VERSION)),
            );
            o.insert("request".into(), Value::String(request.into()));
            o.insert("core_hash".into(), Value::String(hash.into()));
        }
        _ => {}
    }
}

/// `&`, `<`, `>`, `"` and `'` as HTML character references.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The core a page describes.
#[derive(Debug, Clone)]
pub struct CoreInfo {
    /// The directory of its manifest.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// The hash of what Verilator reads, as `fp8gen verify` records it (`None` when the core
    /// has include directories).
    pub hash: Option<String>,
}

impl CoreInfo {
    /// Reads the core in `dir` (a `fp8gen gen -o DIR` directory).
    pub fn load(dir: &Path) -> Result<CoreInfo, ReportError> {
        let (manifest, mdir) =
            Manifest::load(dir).map_err(|e| ReportError::Usage(e.to_string()))?;
        // With include directories verify hashes the preprocessed text too; not repeated here.
        let hash = if manifest.include_dirs.is_empty() {
            let src = sim::Sources::from_manifest(&manifest, &mdir)
                .map_err(|e| ReportError::Usage(e.to_string()))?;
            Some(src.content_hash())
        } else {
            None
        };
        Ok(CoreInfo {
            dir: mdir,
            manifest,
            hash,
        })
    }

    /// Where the page goes by default: `DIR/<top>.html`.
    pub fn default_page(&self) -> PathBuf {
        self.dir.join(format!("{}.html", self.manifest.top))
    }
}

/// What one summary file is to the page.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// A summary of this core (`verify`, `prove`, `synth`) and its JSON.
    Used(&'static str, Value),
    /// A summary of another core, or one that does not say which core: why it is not used.
    Other(&'static str, String),
    /// Not an fp8gen summary: why.
    NotResult(String),
}

/// One file read for the page.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultFile {
    /// The file as shown on the page (relative to the core directory when inside it).
    pub shown: String,
    /// Modification time (seconds since the epoch), to order summaries newest first.
    pub mtime: u64,
    /// What it is.
    pub found: Found,
}

/// Classifies one summary against `core`.
pub fn classify(core: &CoreInfo, v: Value) -> Found {
    let Some(kind) = result_kind(&v) else {
        return Found::NotResult(
            "not a JSON summary of fp8gen verify, prove or synth (--json)".into(),
        );
    };
    let ids: Vec<(Option<&str>, Option<&str>)> = match (&v, kind) {
        (Value::Array(a), _) => a
            .iter()
            .map(|x| (x["request"].as_str(), x["core_hash"].as_str()))
            .collect(),
        (_, "verify") => vec![(
            v["meta"]["request"].as_str(),
            v["meta"]["core_hash"].as_str(),
        )],
        _ => vec![(v["request"].as_str(), v["core_hash"].as_str())],
    };
    let want_req = core.manifest.command.as_str();
    for (req, hash) in ids {
        let (Some(hash), Some(mine)) = (hash, core.hash.as_deref()) else {
            return Found::Other(
                kind,
                if core.hash.is_none() {
                    "this core has include directories: its hash is not computed here, so no summary is matched to it".into()
                } else {
                    "the summary names no core_hash (an older fp8gen wrote it): run it again".into()
                },
            );
        };
        if hash != mine {
            return Found::Other(
                kind,
                format!("of another core (core hash {hash}, this core's is {mine})"),
            );
        }
        if !want_req.is_empty() && req != Some(want_req) {
            return Found::Other(
                kind,
                format!(
                    "of another request ({}), though the same Verilog",
                    req.unwrap_or("none given")
                ),
            );
        }
    }
    Found::Used(kind, v)
}

/// Reads one summary file.
pub fn read_result(core: &CoreInfo, path: &Path) -> ResultFile {
    let shown = path
        .strip_prefix(&core.dir)
        .unwrap_or(path)
        .display()
        .to_string();
    let mtime = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let found = match iface::read_text_bounded(path, iface::MAX_JSON_BYTES, "summaries") {
        Err(e) => Found::NotResult(e.to_string()),
        Ok(t) => match serde_json::from_str::<Value>(&t) {
            Err(e) => Found::NotResult(format!("not JSON: {e}")),
            Ok(v) => classify(core, v),
        },
    };
    ResultFile {
        shown,
        mtime,
        found,
    }
}

/// The summaries of `core`: the `*.json` files of `DIR/results/` (sorted by name), then
/// `extra`. An `extra` file that is not an fp8gen summary is an error (it was asked for).
pub fn gather(core: &CoreInfo, extra: &[PathBuf]) -> Result<Vec<ResultFile>, ReportError> {
    let mut out = Vec::new();
    let res = core.dir.join(RESULTS_DIR);
    if res.is_dir() {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&res)
            .map_err(|e| ReportError::Failed(format!("reading {}: {e}", res.display())))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        names.sort();
        out.extend(names.iter().map(|p| read_result(core, p)));
    }
    for p in extra {
        let r = read_result(core, p);
        if let Found::NotResult(why) = &r.found {
            return Err(ReportError::Usage(format!(
                "--results {}: {why}; give files written by fp8gen verify/prove/synth --json",
                p.display()
            )));
        }
        out.push(r);
    }
    Ok(out)
}

/// The exact decimal value of `sig · 2^exp`.
pub fn exact_decimal(sig: u64, exp: i32) -> String {
    // Little-endian base-10 digits.
    let mut d: Vec<u8> = sig.to_string().bytes().rev().map(|b| b - b'0').collect();
    let mul = |d: &mut Vec<u8>, m: u8| {
        let mut carry = 0u32;
        for x in d.iter_mut() {
            let v = *x as u32 * m as u32 + carry;
            *x = (v % 10) as u8;
            carry = v / 10;
        }
        while carry > 0 {
            d.push((carry % 10) as u8);
            carry /= 10;
        }
    };
    let m = if exp >= 0 { 2 } else { 5 };
    for _ in 0..exp.unsigned_abs() {
        mul(&mut d, m);
    }
    let frac = if exp < 0 {
        exp.unsigned_abs() as usize
    } else {
        0
    };
    while d.len() <= frac {
        d.push(0);
    }
    let s: String = d.iter().rev().map(|x| (b'0' + x) as char).collect();
    if frac == 0 {
        return s;
    }
    let (i, f) = s.split_at(s.len() - frac);
    let f = f.trim_end_matches('0');
    if f.is_empty() {
        i.to_string()
    } else {
        format!("{i}.{f}")
    }
}

fn class_name(c: Class) -> &'static str {
    match c {
        Class::Zero => "zero",
        Class::Subnormal => "subnormal",
        Class::Normal => "normal",
        Class::Inf => "inf",
        Class::Nan => "nan",
    }
}

fn value_text(f: &Format, code: u32) -> (String, String) {
    let d = f.decode(code);
    let dec = match d.class {
        Class::Nan => "NaN".to_string(),
        Class::Inf => format!("{}∞", if d.sign { "−" } else { "+" }),
        Class::Zero => format!("{}0", if d.sign { "−" } else { "+" }),
        _ => format!(
            "{}{}",
            if d.sign { "−" } else { "" },
            exact_decimal(d.sig as u64, d.exp)
        ),
    };
    (d.to_hex_float(), dec)
}

/// Largest format (bits) whose every code is listed.
const FULL_TABLE_BITS: u32 = 8;
/// Most positive values drawn one tick each.
const MAX_TICKS: usize = 4096;

fn code_cell(f: &Format, c: u32) -> String {
    let w = f.k.div_ceil(4) as usize;
    format!(
        "0x{c:0w$x} <span class=\"bits\">{c:0b$b}</span>",
        b = f.k as usize
    )
}

/// The value table of a format: every code for ≤ 8 bits, else counts and the special codes.
fn value_table(h: &mut String, f: &Format) {
    let n = f.num_codes() as u32;
    let row = |h: &mut String, c: u32| {
        let d = f.decode(c);
        let (hex, dec) = value_text(f, c);
        let _ = writeln!(
            h,
            "<tr class=\"{cl}\"><td>{}</td><td>{cl}</td><td>{}</td><td>{}</td></tr>",
            code_cell(f, c),
            escape(&hex),
            escape(&dec),
            cl = class_name(d.class)
        );
    };
    let head = "<table class=\"values\"><tr><th>code</th><th>class</th><th>value (hex float)</th><th>value (exact decimal)</th></tr>";
    if f.k <= FULL_TABLE_BITS {
        let _ = writeln!(h, "<p>Every code and its exact value:</p>{head}");
        for c in 0..n {
            row(h, c);
        }
        h.push_str("</table>\n");
        return;
    }
    let mut count = [0u64; 5];
    let mut special = Vec::new();
    let (mut min_sub, mut min_norm, mut max_fin) = (None, None, None);
    // The sign bit of the code (a NaN decodes without a sign).
    let negative = |c: u32| f.signed && (c >> (f.k - 1)) & 1 == 1;
    for c in 0..n {
        let d = f.decode(c);
        count[d.class as usize] += 1;
        if negative(c) {
            continue;
        }
        match d.class {
            Class::Zero | Class::Inf | Class::Nan => special.push(c),
            Class::Subnormal => {
                min_sub.get_or_insert(c);
            }
            Class::Normal => {
                min_norm.get_or_insert(c);
                max_fin = Some(c);
            }
        }
    }
    let _ = writeln!(
        h,
        "<p>{n} codes: {} zero, {} subnormal, {} normal, {} infinite, {} NaN. The smallest subnormal, the smallest normal, the largest finite value and the special codes (with the sign bit clear; the negative values mirror them), −0 and −∞:</p>{head}",
        count[0], count[1], count[2], count[3], count[4]
    );
    let mut shown: Vec<u32> = [min_sub, min_norm, max_fin].into_iter().flatten().collect();
    let nans: Vec<u32> = special
        .iter()
        .copied()
        .filter(|&c| f.decode(c).class == Class::Nan)
        .collect();
    shown.extend(
        special
            .iter()
            .copied()
            .filter(|&c| f.decode(c).class != Class::Nan),
    );
    shown.extend(nans.iter().take(4));
    // Negative specials (−0, −∞, NaNs with the sign bit).
    for c in
        (0..n).filter(|&c| negative(c) && matches!(f.decode(c).class, Class::Zero | Class::Inf))
    {
        shown.push(c);
    }
    shown.sort_unstable();
    shown.dedup();
    for c in shown {
        row(h, c);
    }
    h.push_str("</table>\n");
    if nans.len() > 4 {
        let _ = writeln!(
            h,
            "<p>{} NaN codes in all ({} with the sign bit clear); the first four with the sign bit clear are listed.</p>",
            count[4],
            nans.len()
        );
    }
}

/// The positive finite values of a format on a log2 axis, one tick each (subnormals marked).
fn plot(h: &mut String, f: &Format, name: &str) {
    let vals: Vec<(f64, bool)> = (0..f.num_codes() as u32)
        .map(|c| f.decode(c))
        .filter(|d| !d.sign && matches!(d.class, Class::Normal | Class::Subnormal))
        .map(|d| {
            let l = (d.sig as f64).log2() + d.exp as f64;
            (l, d.class == Class::Subnormal)
        })
        .collect();
    if vals.is_empty() {
        return;
    }
    let (lo, hi) = vals
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v.0), b.max(v.0)));
    let (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
    let (w, x0, x1) = (900.0, 30.0, 870.0);
    let x = |l: f64| x0 + (l - lo) / (hi - lo) * (x1 - x0);
    let _ = writeln!(
        h,
        "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"90\" viewBox=\"0 0 {w} 90\" role=\"img\" aria-label=\"{}\">",
        escape(&format!("positive finite values of {name} on a log2 axis"))
    );
    let _ = writeln!(
        h,
        "<line x1=\"{x0}\" y1=\"50\" x2=\"{x1}\" y2=\"50\" stroke=\"#333\"/>"
    );
    let span = (hi - lo) as i64;
    let step = (span / 12).max(1);
    let mut e = lo as i64;
    while e <= hi as i64 {
        let xe = x(e as f64);
        let _ = writeln!(
            h,
            "<line x1=\"{xe:.2}\" y1=\"50\" x2=\"{xe:.2}\" y2=\"56\" stroke=\"#333\"/><text x=\"{xe:.2}\" y=\"70\" font-size=\"11\" text-anchor=\"middle\">2^{e}</text>"
        );
        e += step;
    }
    if vals.len() <= MAX_TICKS {
        for (l, sub) in &vals {
            let xv = x(*l);
            let (col, top) = if *sub {
                ("#c0392b", 30)
            } else {
                ("#1f5fa8", 20)
            };
            let _ = writeln!(
                h,
                "<line x1=\"{xv:.2}\" y1=\"{top}\" x2=\"{xv:.2}\" y2=\"50\" stroke=\"{col}\" stroke-width=\"1\"/>"
            );
        }
    }
    h.push_str("<text x=\"30\" y=\"86\" font-size=\"11\" fill=\"#1f5fa8\">normal</text><text x=\"90\" y=\"86\" font-size=\"11\" fill=\"#c0392b\">subnormal (shorter ticks)</text>\n</svg>\n");
    let subs = vals.iter().filter(|v| v.1).count();
    let _ = writeln!(
        h,
        "<p class=\"note\">{} positive finite values ({} subnormal) from 2^{:.3} to 2^{:.3}{}.</p>",
        vals.len(),
        subs,
        vals.iter().map(|v| v.0).fold(f64::MAX, f64::min),
        vals.iter().map(|v| v.0).fold(f64::MIN, f64::max),
        if vals.len() > MAX_TICKS {
            "; too many to draw one tick each, only the axis is drawn"
        } else {
            ", one tick each"
        }
    );
}

fn verify_rows(v: &Value) -> (String, Vec<(String, String)>) {
    let m = &v["meta"];
    let passed = v["mismatches"].as_u64() == Some(0)
        && v["complete"].as_bool() == Some(true)
        && v["vectors"].as_u64().is_some_and(|n| n > 0);
    let verdict = if passed {
        "PASS"
    } else if v["mismatches"].as_u64().is_some_and(|n| n > 0) {
        "FAIL"
    } else {
        "INCOMPLETE (nothing to conclude)"
    };
    let s = |x: &Value| match x {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        x => x.to_string(),
    };
    let shards: Vec<String> = v["shards"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| format!("{}/{}", s(&x["index"]), s(&x["count"])))
                .collect()
        })
        .unwrap_or_default();
    let compared: Vec<String> = v["compared"]
        .as_array()
        .map(|a| a.iter().map(s).collect())
        .unwrap_or_default();
    let rows = vec![
        ("vectors".into(), s(&v["vectors"])),
        ("mismatches".into(), s(&v["mismatches"])),
        ("space".into(), s(&m["space"])),
        ("modes".into(), s(&m["modes"])),
        ("compared outputs".into(), compared.join(" ")),
        (
            "shards run (index/count)".into(),
            if shards.iter().all(|x| x.ends_with("/1")) {
                format!("{} (the whole space)", shards.join(", "))
            } else {
                format!("{} (part of the space only)", shards.join(", "))
            },
        ),
        ("complete".into(), s(&v["complete"])),
        ("seconds".into(), s(&v["seconds"])),
    ];
    (verdict.into(), rows)
}

fn prove_rows(v: &Value) -> (String, Vec<(String, String)>) {
    let list: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        v => vec![v],
    };
    let all = list.iter().all(|r| r["verdict"] == "proven");
    let mut rows = Vec::new();
    for r in &list {
        rows.push((
            format!(
                "{} vs {}",
                r["gold"].as_str().unwrap_or("?"),
                r["gate"].as_str().unwrap_or("?")
            ),
            format!(
                "{}: {} ({}, {} s)",
                r["verdict"].as_str().unwrap_or("?").to_uppercase(),
                r["statement"].as_str().unwrap_or(""),
                r["solver"].as_str().unwrap_or(""),
                r["seconds"]
            ),
        ));
    }
    (if all { "PROVEN" } else { "NOT PROVEN" }.into(), rows)
}

fn synth_rows(v: &Value) -> (String, Vec<(String, String)>) {
    let mut rows = Vec::new();
    if let Value::Object(o) = v {
        for (k, x) in o {
            if ["generator", "request", "core_hash"].contains(&k.as_str()) {
                continue;
            }
            if matches!(x, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
                let t = x.as_str().map_or_else(|| x.to_string(), str::to_string);
                rows.push((k.clone(), t));
            }
        }
    }
    let verdict = format!(
        "{} MHz Fmax on {}",
        v["fmax_mhz"]
            .as_f64()
            .map_or("?".into(), |f| format!("{f:.1}")),
        v["target"].as_str().unwrap_or("?")
    );
    (verdict, rows)
}

fn kv_table(h: &mut String, rows: &[(String, String)]) {
    h.push_str("<table class=\"kv\">");
    for (k, v) in rows {
        let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    }
    h.push_str("</table>\n");
}

/// What a used summary covers, in a few words.
fn covers(kind: &str, v: &Value) -> String {
    let t = |x: &Value| x.as_str().map_or_else(|| x.to_string(), str::to_string);
    match (kind, v) {
        ("verify", v) => format!(
            "{} vectors, {}; modes {}",
            t(&v["vectors"]),
            t(&v["meta"]["space"]),
            t(&v["meta"]["modes"])
        ),
        (_, Value::Array(a)) => format!(
            "{} proof(s): {}",
            a.len(),
            a.iter()
                .map(|r| t(&r["statement"]))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        ("prove", v) => format!("1 proof: {}", t(&v["statement"])),
        (_, v) => format!("place and route on {}", t(&v["target"])),
    }
}

/// The results section.
fn results(h: &mut String, files: &[ResultFile]) {
    h.push_str("<h2 id=\"results\">Verification, proof and synthesis results</h2>\n");
    let _ = writeln!(
        h,
        "<p>Read from <code>{RESULTS_DIR}/*.json</code> in the core directory and the files given with <code>--results</code>. A summary is used only when its core hash and request are this core's.</p>"
    );
    let mut used: Vec<&ResultFile> = files
        .iter()
        .filter(|f| matches!(f.found, Found::Used(..)))
        .collect();
    used.sort_by(|a, b| b.mtime.cmp(&a.mtime).then(a.shown.cmp(&b.shown)));
    for (kind, none) in [
        (
            "verify",
            "No verification result found: nothing on this page says that this core was verified.",
        ),
        (
            "prove",
            "No proof result found: no proof of this core is recorded here.",
        ),
        ("synth", "No synthesis result found."),
    ] {
        let _ = writeln!(h, "<h3>{kind}</h3>");
        let mine: Vec<&&ResultFile> = used
            .iter()
            .filter(|f| matches!(&f.found, Found::Used(k, _) if *k == kind))
            .collect();
        if mine.is_empty() {
            let _ = writeln!(h, "<p class=\"none\">{none}</p>");
            continue;
        }
        for (i, f) in mine.iter().enumerate() {
            let Found::Used(_, v) = &f.found else {
                continue;
            };
            let (verdict, rows) = match kind {
                "verify" => verify_rows(v),
                "prove" => prove_rows(v),
                _ => synth_rows(v),
            };
            let _ = writeln!(
                h,
                "<p class=\"verdict\"><b>{}</b> — {} <code>{}</code>{}</p>",
                escape(&verdict),
                kind,
                escape(&f.shown),
                if i == 0 { " (latest)" } else { " (older)" }
            );
            kv_table(h, &rows);
        }
    }
    h.push_str("<h3>Files read</h3>\n");
    if files.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"none\">No result file was found (none in <code>{RESULTS_DIR}/</code>, none given).</p>"
        );
        return;
    }
    h.push_str("<table class=\"files\"><tr><th>file</th><th>what</th></tr>");
    for f in files {
        let what = match &f.found {
            Found::Used(k, v) => format!("{k} summary of this core: used ({})", covers(k, v)),
            Found::Other(k, why) => format!("{k} summary not used: {why}"),
            Found::NotResult(why) => format!("ignored: {why}"),
        };
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td></tr>",
            escape(&f.shown),
            escape(&what)
        );
    }
    h.push_str("</table>\n");
}

const STYLE: &str = "body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}\
th{background:#eee}.bits{color:#777;font-family:monospace}code,pre{background:#f4f4f4}pre{white-space:pre-wrap}\
tr.nan td,tr.inf td{background:#fdecea}tr.subnormal td{background:#fff6e0}.none{color:#a00;font-weight:bold}\
.note{color:#555;font-size:90%}";

/// The whole page.
pub fn render(core: &CoreInfo, files: &[ResultFile]) -> String {
    let m = &core.manifest;
    let top = escape(&m.top);
    let mut h = String::new();
    let _ = writeln!(
        h,
        "{REPORT_HEAD} {}: fp8gen gen --force replaces this page with the core -->",
        golden::VERSION
    );
    let _ = writeln!(
        h,
        "<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{top} — fp8gen datasheet</title><style>{STYLE}</style></head><body>"
    );
    let _ = writeln!(h, "<h1>{top}</h1>");
    let _ = writeln!(
        h,
        "<p>Unit <b>{}</b>, generated by {}. Verilog: <code>{}</code>.</p>",
        escape(m.unit.name()),
        escape(if m.generator.is_empty() {
            "an unnamed tool"
        } else {
            &m.generator
        }),
        escape(&m.verilog.0.join(" "))
    );
    h.push_str("<h2>Canonical request</h2>\n");
    if m.command.is_empty() {
        h.push_str("<p>The manifest records no request (not written by fp8gen gen).</p>\n");
    } else {
        let _ = writeln!(h, "<pre>{}</pre>", escape(&m.command));
    }
    if let Some(hash) = &core.hash {
        let _ = writeln!(h, "<p>Core hash <code>{}</code>.</p>", escape(hash));
    }
    h.push_str("<h2>Timing</h2>\n");
    kv_table(
        &mut h,
        &[
            (
                "latency".into(),
                format!(
                    "{} cycles{}",
                    m.latency,
                    if m.latency == 0 {
                        " (combinational)"
                    } else {
                        ""
                    }
                ),
            ),
            (
                "initiation interval".into(),
                format!("{} cycle(s) between accepted inputs", m.initiation_interval),
            ),
            ("pipeline stages".into(), m.stages.to_string()),
            (
                "clock".into(),
                if m.is_clocked() {
                    "clocked".into()
                } else {
                    "none".into()
                },
            ),
        ],
    );
    h.push_str("<h2>Ports</h2>\n<table class=\"ports\"><tr><th>name</th><th>direction</th><th>width</th><th>role</th></tr>");
    for p in &m.ports {
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&p.name),
            match p.direction {
                Direction::Input => "input",
                Direction::Output => "output",
            },
            p.width,
            escape(&p.role_name())
        );
    }
    h.push_str("</table>\n<h2>Modes</h2>\n");
    let md = &m.modes;
    let port = |what: &str| format!("selected at run time (port of role {what})");
    kv_table(
        &mut h,
        &[
            (
                "rounding".into(),
                md.rounding.clone().unwrap_or_else(|| port("rounding")),
            ),
            (
                "saturation".into(),
                md.saturation.clone().unwrap_or_else(|| port("saturation")),
            ),
            ("stochastic rounding bits".into(), md.sr_bits.to_string()),
            ("flush to zero".into(), md.ftz.to_string()),
            (
                "tininess".into(),
                if md.tininess_before {
                    "before rounding"
                } else {
                    "after rounding"
                }
                .into(),
            ),
            (
                "NaN code of NaN-less formats".into(),
                md.nonan_code.to_string(),
            ),
        ],
    );
    h.push_str("<h2>Formats</h2>\n");
    let f = &m.formats;
    let mut fmts: Vec<(String, Format)> = vec![("x".into(), f.x)];
    if let Some(y) = f.y {
        fmts.push(("y".into(), y));
    }
    fmts.push(("r (result)".into(), f.r));
    if let Some(s) = f.scale {
        fmts.push(("block scale".into(), s));
    }
    let mut done: Vec<Format> = Vec::new();
    for (role, fm) in &fmts {
        let others: Vec<&str> = fmts
            .iter()
            .filter(|(_, g)| g == fm)
            .map(|(r, _)| r.as_str())
            .collect();
        if done.contains(fm) {
            continue;
        }
        done.push(*fm);
        let name = fm.name();
        let _ = writeln!(
            h,
            "<h3>{} — {}</h3><p>k = {}, p = {}, bias = {}, {}, {} (used as: {}).</p>",
            escape(&name),
            escape(role),
            fm.k,
            fm.p,
            fm.bias,
            if fm.signed { "signed" } else { "unsigned" },
            escape(fm.specials.name()),
            escape(&others.join(", "))
        );
        if fm.k > 16 {
            h.push_str("<p>A format wider than 16 bits: no value table.</p>\n");
            continue;
        }
        plot(&mut h, fm, &name);
        value_table(&mut h, fm);
    }
    results(&mut h, files);
    h.push_str("</body></html>\n");
    h
}

/// Writes `page` to `path`, replacing only a page `fp8gen report` wrote (one that begins
/// with [`REPORT_HEAD`]); via a temporary file and a rename, so it is never half-written.
pub fn write_page(path: &Path, page: &str) -> Result<(), ReportError> {
    let d = path.display();
    if let Ok(md) = std::fs::symlink_metadata(path) {
        if md.file_type().is_symlink() || !md.is_file() {
            return Err(ReportError::Usage(format!(
                "-o {d}: exists and is not a regular file; choose another file"
            )));
        }
        if !is_report_page(path) {
            return Err(ReportError::Usage(format!(
                "{d} exists and fp8gen report did not write it; it is left as it is: choose another file with -o, or move it away"
            )));
        }
    }
    let name = path
        .file_name()
        .ok_or_else(|| ReportError::Usage(format!("-o {d}: not a file name")))?;
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, page)
        .map_err(|e| ReportError::Failed(format!("writing {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        ReportError::Failed(format!("writing {d}: {e}"))
    })
}

#[cfg(test)]
mod tests;
