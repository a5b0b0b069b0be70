//! Output directories: the one rule of every command that writes a directory (`gen -o`,
//! `board -o`, `synth --keep`, `prove --keep`, `sweep slurm --out`).
//!
//! A command writes into a directory that is new, empty, or holds only what an earlier run of
//! the same command wrote there, as listed by a file that run wrote (`gen`: its
//! `manifest.json` names the Verilog files, `<top>.core` and the testbench `<top>_tb.sv`,
//! `<top>_vectors.hex`; with them go the pages `fp8gen report` wrote (they begin with
//! [`REPORT_HEAD`]) and the fp8gen summaries in [`RESULTS_DIR`], which describe that core;
//! the others: [`LISTING`]). A
//! directory holding anything else is refused naming one foreign entry, and a listing fp8gen
//! did not write makes the directory foreign. Replacing an earlier run's directory moves the
//! new one into place in one rename ([`OutDir::install`]) and then deletes, of the old one,
//! only the entries its listing names: nothing a user put there is ever deleted, and the
//! directory is never half-written. The current directory, or one holding it, is never
//! replaced (it cannot be renamed).

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// The listing every command but `gen` writes into its output directory: JSON with the
/// generator, the command and every file and directory of the run (relative paths).
pub const LISTING: &str = ".fp8gen-files";

/// Why an output directory cannot be used or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutDirError {
    /// The directory is not one the command may write (a usage error): what and what to do.
    Refused(String),
    /// The file system failed.
    Failed(String),
}

impl fmt::Display for OutDirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutDirError::Refused(m) | OutDirError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for OutDirError {}

/// Which entries (relative paths) of a directory an earlier run wrote.
pub type Owns = Box<dyn Fn(&Path) -> bool>;

/// What an earlier run left in a directory, as its listing says.
pub enum Earlier {
    /// No listing: nothing in the directory was written by the command.
    None,
    /// A listing the command did not write (why, e.g. `generator 'vendor-tool 2.0'`).
    Foreign(String),
    /// The entries the listing names.
    Owned(Owns),
}

impl fmt::Debug for Earlier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Earlier::None => f.write_str("None"),
            Earlier::Foreign(w) => write!(f, "Foreign({w:?})"),
            Earlier::Owned(_) => f.write_str("Owned(..)"),
        }
    }
}

/// How a command treats its output directory.
pub struct Rule<'a> {
    /// The command (`gen`, `board`, …), as in messages and in the listing.
    pub command: &'a str,
    /// The option naming the directory, for messages (`-o`, `--keep`, `--out`).
    pub option: &'a str,
    /// Whether an earlier run's directory may be replaced; `Err(hint)` refuses it with the
    /// hint (`gen` without `--force`: "pass --force to replace it").
    pub replace: Result<(), &'a str>,
    /// The listing file, for messages (`manifest.json`, [`LISTING`]).
    pub listing: &'a str,
    /// Reads what an earlier run listed in a directory.
    pub earlier: &'a dyn Fn(&Path) -> Earlier,
    /// The command writes files into the directory (`sweep slurm`) instead of replacing it
    /// as a whole ([`OutDir::install`]); then the directory may be the current one.
    pub in_place: bool,
}

impl fmt::Debug for Rule<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rule({} {})", self.command, self.option)
    }
}

/// What is in the destination now.
enum State {
    Absent,
    Empty,
    Earlier(Owns),
}

/// A checked output directory ([`OutDir::prepare`]); [`OutDir::install`] puts a finished
/// directory in its place.
pub struct OutDir {
    shown: PathBuf,
    dest: PathBuf,
    command: String,
    state: State,
}

impl fmt::Debug for OutDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OutDir({})", self.dest.display())
    }
}

fn failed(what: String) -> impl FnOnce(std::io::Error) -> OutDirError {
    move |e| OutDirError::Failed(format!("{what}: {e}"))
}

/// Every entry under `dir` (relative, sorted, directories before their contents); symbolic
/// links are entries, never followed.
fn walk(dir: &Path) -> std::io::Result<Vec<(PathBuf, bool)>> {
    let mut out = Vec::new();
    fn go(root: &Path, rel: &Path, out: &mut Vec<(PathBuf, bool)>) -> std::io::Result<()> {
        let mut v: Vec<_> = std::fs::read_dir(root.join(rel))?.collect::<Result<_, _>>()?;
        v.sort_by_key(|e| e.file_name());
        for e in v {
            let r = rel.join(e.file_name());
            let is_dir = e.file_type()?.is_dir();
            out.push((r.clone(), is_dir));
            if is_dir {
                go(root, &r, out)?;
            }
        }
        Ok(())
    }
    go(dir, Path::new(""), &mut out)?;
    Ok(out)
}

/// The first entry under `dir` that `owns` does not claim.
fn first_foreign(dir: &Path, owns: &dyn Fn(&Path) -> bool) -> std::io::Result<Option<PathBuf>> {
    Ok(walk(dir)?.into_iter().map(|e| e.0).find(|r| !owns(r)))
}

/// A fresh name next to `dest` (`.<name>.<tag>-<pid>-<n>`); with `create` the directory is
/// created (atomically, so concurrent writers never share it).
fn sibling(dest: &Path, tag: &str, create: bool) -> std::io::Result<PathBuf> {
    let name = dest
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let parent = dest.parent().unwrap_or_else(|| Path::new("."));
    if create {
        return FreshDir::create_in(parent, &format!(".{name}.{tag}")).map(FreshDir::into_path);
    }
    loop {
        let p = parent.join(unique_name(&format!(".{name}.{tag}")));
        if std::fs::symlink_metadata(&p).is_err() {
            return Ok(p);
        }
    }
}

/// `<stem>-<pid>-<n>`, a name no other call of this process returns.
fn unique_name(stem: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let i = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{stem}-{}-{i}", std::process::id())
}

/// A directory this run created with `create_dir`, which fails on any existing path (that
/// name is then skipped, never touched): the only kind of directory the tool deletes
/// recursively ([`FreshDir::remove`]), so a delete can never reach a user's directory, `/`
/// or the system temp directory itself. Build and proof work directories and the staging
/// directories of [`OutDir::stage`] are `FreshDir`s.
#[derive(Debug)]
pub struct FreshDir(PathBuf);

impl FreshDir {
    /// Creates `<parent>/<stem>-<pid>-<n>` for the first `n` whose path does not exist.
    pub fn create_in(parent: &Path, stem: &str) -> std::io::Result<FreshDir> {
        loop {
            let p = parent.join(unique_name(stem));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(FreshDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Deletes the directory and everything in it (all of which this run wrote).
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }

    /// The path, for a caller that hands the directory on (and with it the duty to delete).
    pub fn into_path(self) -> PathBuf {
        self.0
    }
}

impl std::ops::Deref for FreshDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for FreshDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

/// Reads a [`LISTING`] of `command` in `dir`.
pub fn read_listing(dir: &Path, command: &str) -> Earlier {
    let p = dir.join(LISTING);
    if std::fs::symlink_metadata(&p).is_err() {
        return Earlier::None;
    }
    let text = match crate::read_text_bounded(&p, crate::MAX_JSON_BYTES, "listings") {
        Ok(t) => t,
        Err(e) => return Earlier::Foreign(e.to_string()),
    };
    let v: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return Earlier::Foreign(format!("not an fp8gen listing: {e}"));
        }
    };
    let generator = v.get("generator").and_then(|g| g.as_str()).unwrap_or("");
    let cmd = v.get("command").and_then(|g| g.as_str()).unwrap_or("");
    if !generator.starts_with("fp8gen ") || cmd != command {
        return Earlier::Foreign(format!(
            "generator '{generator}', command '{cmd}', not fp8gen {command}"
        ));
    }
    let mut set: BTreeSet<PathBuf> = v
        .get("files")
        .and_then(|f| f.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    set.insert(PathBuf::from(LISTING));
    Earlier::Owned(Box::new(move |r| set.contains(r)))
}

/// What an earlier `fp8gen gen` wrote in `dir`: `manifest.json` (generator `fp8gen …`), the
/// files it names, `<top>.core` and the testbench `<top>_tb.sv`, `<top>_vectors.hex`.
pub fn read_gen_manifest(dir: &Path) -> Earlier {
    let p = dir.join("manifest.json");
    if std::fs::symlink_metadata(&p).is_err() {
        return Earlier::None;
    }
    let text = match crate::read_text_bounded(&p, crate::MAX_JSON_BYTES, "manifests") {
        Ok(t) => t,
        Err(e) => return Earlier::Foreign(e.to_string()),
    };
    let v: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return Earlier::Foreign(format!("not a manifest fp8gen wrote: {e}"));
        }
    };
    let generator = v.get("generator").and_then(|g| g.as_str()).unwrap_or("");
    if !generator.starts_with("fp8gen ") {
        return Earlier::Foreign(format!("generator '{generator}'"));
    }
    let mut set = BTreeSet::from([PathBuf::from("manifest.json")]);
    match v.get("verilog") {
        Some(serde_json::Value::String(s)) => {
            set.insert(PathBuf::from(s));
        }
        Some(serde_json::Value::Array(a)) => {
            set.extend(a.iter().filter_map(|x| x.as_str()).map(PathBuf::from));
        }
        _ => {}
    }
    if let Some(top) = v.get("top").and_then(|t| t.as_str()) {
        if crate::is_identifier(top) {
            set.insert(PathBuf::from(format!("{top}.core")));
            // The self-checking testbench of the FuseSoC `sim` target.
            set.insert(PathBuf::from(format!("{top}_tb.sv")));
            set.insert(PathBuf::from(format!("{top}_vectors.hex")));
        }
    }
    // Only plain names: a listed `../x` or `sub/x` never matches an entry of the directory.
    set.retain(|p| p.components().count() == 1 && p.file_name().is_some());
    set.extend(report_files(dir));
    Earlier::Owned(Box::new(move |r| set.contains(r)))
}

/// How every page `fp8gen report` writes begins; a file that does not begin so is not one
/// (`report` never overwrites it, `gen --force` never deletes it).
pub const REPORT_HEAD: &str = "<!DOCTYPE html>\n<!-- written by fp8gen report";

/// The folder of a core directory where verify/prove/synth JSON summaries of the core go
/// (docs/report.md): `fp8gen report` reads them.
pub const RESULTS_DIR: &str = "results";

/// Whether `p` is a regular file (not a link) that begins with [`REPORT_HEAD`].
pub fn is_report_page(p: &Path) -> bool {
    use std::io::Read;
    let regular = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file());
    let mut head = Vec::new();
    regular
        && std::fs::File::open(p)
            .and_then(|f| f.take(REPORT_HEAD.len() as u64).read_to_end(&mut head))
            .is_ok()
        && head == REPORT_HEAD.as_bytes()
}

/// Which fp8gen summary a JSON value is: `verify` (`fp8gen verify --json`, its `meta`
/// names the generator), `prove` (one proof report of `verify --prove --json`, or the list of
/// `prove --json`) or `synth` (`synth --json`); both carry `generator`.
pub fn result_kind(v: &serde_json::Value) -> Option<&'static str> {
    let ours = |o: &serde_json::Value| {
        o.get("generator")
            .and_then(|g| g.as_str())
            .is_some_and(|g| g.starts_with("fp8gen "))
    };
    let proof = |o: &serde_json::Value| ours(o) && o.get("verdict").is_some();
    match v {
        serde_json::Value::Array(a) if !a.is_empty() && a.iter().all(proof) => Some("prove"),
        serde_json::Value::Object(_) if proof(v) => Some("prove"),
        serde_json::Value::Object(_) if ours(v) && v.get("fmax_mhz").is_some() => Some("synth"),
        serde_json::Value::Object(_)
            if v.get("meta").is_some_and(ours) && v.get("vectors").is_some() =>
        {
            Some("verify")
        }
        _ => None,
    }
}

/// Whether `p` is a regular file (not a link) named `*.json` holding an fp8gen summary
/// ([`result_kind`]).
pub fn is_result_file(p: &Path) -> bool {
    let regular = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file());
    regular
        && p.extension().is_some_and(|e| e == "json")
        && crate::read_text_bounded(p, crate::MAX_JSON_BYTES, "summaries")
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| result_kind(&v).is_some())
}

/// What `fp8gen report` and the documented result files add to a core directory, read now
/// (the decision is taken when the directory is checked): the top-level pages that begin
/// with [`REPORT_HEAD`], the folder [`RESULTS_DIR`] (not a link) and the fp8gen summaries
/// in it.
fn report_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "html") && is_report_page(&p) {
            out.push(PathBuf::from(e.file_name()));
        }
    }
    let res = dir.join(RESULTS_DIR);
    if std::fs::symlink_metadata(&res).is_ok_and(|m| m.is_dir()) {
        out.push(PathBuf::from(RESULTS_DIR));
        for e in std::fs::read_dir(&res).into_iter().flatten().flatten() {
            if is_result_file(&e.path()) {
                out.push(Path::new(RESULTS_DIR).join(e.file_name()));
            }
        }
    }
    out
}

/// Writes the [`LISTING`] of `command` into `dir`, naming everything in it.
pub fn write_listing(dir: &Path, command: &str) -> Result<(), OutDirError> {
    let mut files: Vec<String> = walk(dir)
        .map_err(failed(format!("listing {}", dir.display())))?
        .into_iter()
        .map(|(r, _)| r.to_string_lossy().into_owned())
        .filter(|r| r != LISTING)
        .collect();
    files.sort();
    let v = serde_json::json!({
        "generator": format!("fp8gen {}", golden::VERSION),
        "command": command,
        "note": "the files and directories this run wrote; a later run of the same command replaces only these",
        "files": files,
    });
    let p = dir.join(LISTING);
    let text = serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
    std::fs::write(&p, text).map_err(failed(format!("writing {}", p.display())))
}

/// Copies the tree `from` into the existing empty directory `to` (files and directories;
/// symbolic links are copied as links).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for (r, is_dir) in walk(from)? {
        let (s, d) = (from.join(&r), to.join(&r));
        if is_dir {
            std::fs::create_dir(&d)?;
        } else if std::fs::symlink_metadata(&s)?.file_type().is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(&s)?, &d)?;
        } else {
            std::fs::copy(&s, &d)?;
        }
    }
    Ok(())
}

/// Deletes, under `old`, the entries `owns` claims (deepest first), then `old` itself;
/// returns the first entry left (one that appeared after the check).
fn remove_owned(old: &Path, owns: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    let mut entries = walk(old).unwrap_or_default();
    entries.reverse();
    let mut left = None;
    for (r, is_dir) in entries {
        let p = old.join(&r);
        let gone = owns(&r)
            && if is_dir {
                std::fs::remove_dir(&p).is_ok()
            } else {
                std::fs::remove_file(&p).is_ok()
            };
        if !gone {
            left = Some(r);
        }
    }
    if std::fs::remove_dir(old).is_err() && left.is_none() {
        left = Some(PathBuf::from("."));
    }
    left
}

impl OutDir {
    /// Checks `dir` for `rule`'s command before anything is built: it must not exist, be an
    /// empty directory, or hold only entries an earlier run listed (and then `rule.replace`
    /// must allow replacing it). A symbolic link to a directory stands for that directory.
    pub fn prepare(dir: &Path, rule: &Rule) -> Result<OutDir, OutDirError> {
        let refuse = |m: String| Err(OutDirError::Refused(m));
        let shown = dir.to_path_buf();
        let d = dir.display();
        let opt = rule.option;
        if dir.as_os_str().is_empty() {
            return refuse(format!("{opt}: give a directory"));
        }
        let (dest, exists) = match std::fs::symlink_metadata(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let (Some(name), parent) = (dir.file_name(), dir.parent()) else {
                    return refuse(format!("{opt} {d}: not a name of a directory to create"));
                };
                let parent = parent.filter(|p| !p.as_os_str().is_empty());
                (parent.unwrap_or_else(|| Path::new(".")).join(name), false)
            }
            Err(e) => return Err(failed(format!("reading {d}"))(e)),
            Ok(m) => {
                let target = if m.file_type().is_symlink() {
                    match std::fs::metadata(dir) {
                        Ok(t) => t,
                        Err(_) => {
                            return refuse(format!(
                                "output path {d} is a symbolic link to nothing; remove it or choose another directory"
                            ))
                        }
                    }
                } else {
                    m
                };
                if !target.is_dir() {
                    return refuse(format!(
                        "output path {d} exists and is not a directory; choose another directory"
                    ));
                }
                let real = dir
                    .canonicalize()
                    .map_err(failed(format!("resolving {d}")))?;
                (real, true)
            }
        };
        let holds_cwd = std::env::current_dir()
            .and_then(|c| c.canonicalize())
            .is_ok_and(|c| exists && c.starts_with(&dest));
        if !rule.in_place && (holds_cwd || (exists && dest.parent().is_none())) {
            return refuse(format!(
                "output directory {d} is the current directory or holds it; fp8gen {} writes its output directory as a whole and cannot replace that one: give a new subdirectory (e.g. {opt} {})",
                rule.command,
                Path::new(dir).join("out").display()
            ));
        }
        let mut state = State::Absent;
        if exists {
            let empty = std::fs::read_dir(&dest)
                .map_err(failed(format!("reading {d}")))?
                .next()
                .is_none();
            state = if empty {
                State::Empty
            } else {
                let c = rule.command;
                let l = rule.listing;
                let why = if c == "gen" {
                    format!("--force replaces only the files of an earlier fp8gen gen (its {l} lists them)")
                } else if rule.in_place {
                    format!("fp8gen {c} writes only into a directory of an earlier fp8gen {c} (its {l} names its files)")
                } else {
                    format!("fp8gen {c} replaces only the files of an earlier fp8gen {c} (its {l} lists them)")
                };
                let foreign = |name: &Path, detail: &str| {
                    format!(
                        "output directory {d} holds {}, which fp8gen did not write{detail}; {why}: choose another directory or move it away",
                        name.display()
                    )
                };
                match (rule.earlier)(&dest) {
                    Earlier::None => {
                        let first = first_foreign(&dest, &|_| false)
                            .map_err(failed(format!("reading {d}")))?
                            .unwrap_or_default();
                        return refuse(foreign(&first, ""));
                    }
                    Earlier::Foreign(detail) => {
                        return refuse(foreign(Path::new(rule.listing), &format!(" ({detail})")));
                    }
                    Earlier::Owned(owns) => {
                        if let Some(f) =
                            first_foreign(&dest, &*owns).map_err(failed(format!("reading {d}")))?
                        {
                            return refuse(foreign(&f, ""));
                        }
                        if let Err(hint) = rule.replace {
                            return refuse(format!(
                                "output directory {d} holds an earlier fp8gen {}; {hint}, or choose another directory",
                                rule.command
                            ));
                        }
                        State::Earlier(owns)
                    }
                }
            };
        }
        Ok(OutDir {
            shown,
            dest,
            command: rule.command.to_string(),
            state,
        })
    }

    /// The directory as the user named it.
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// A fresh directory next to the destination to write the output into (same file
    /// system: [`OutDir::install`] renames it into place).
    pub fn stage(&self) -> Result<FreshDir, OutDirError> {
        let d = self.shown.display();
        if let Some(parent) = self.dest.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(failed(format!("creating {}", parent.display())))?;
        }
        let name = self
            .dest
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        let parent = self.dest.parent().unwrap_or_else(|| Path::new("."));
        FreshDir::create_in(parent, &format!(".{name}.tmp")).map_err(failed(format!(
            "creating a temporary directory next to {d}"
        )))
    }

    /// Puts the finished directory `built` (from [`OutDir::stage`], or any directory of this
    /// run, e.g. under the system temp directory) in place of the destination, with a
    /// [`LISTING`] when `listing` (the `gen` manifest is its own listing). An earlier run's
    /// directory is moved aside and only the entries its listing names are deleted. Returns
    /// the directory as the user named it. On failure `built` is deleted.
    pub fn install(self, built: &FreshDir, listing: bool) -> Result<PathBuf, OutDirError> {
        let result = self.install_inner(built, listing);
        if result.is_err() {
            built.remove();
        }
        result
    }

    fn install_inner(&self, built: &FreshDir, listing: bool) -> Result<PathBuf, OutDirError> {
        let d = self.shown.display();
        if listing {
            write_listing(built, &self.command)?;
        }
        let next_to_dest = built
            .parent()
            .is_some_and(|p| Some(p) == self.dest.parent())
            || built.parent() == Some(Path::new("")) && self.dest.parent() == Some(Path::new("."));
        let moved;
        let staged: &FreshDir = if next_to_dest {
            built
        } else {
            let s = self.stage()?;
            // Renaming onto the fresh empty directory works on one file system; else copy.
            if std::fs::rename(built, &s).is_err() {
                if let Err(e) = copy_tree(built, &s) {
                    s.remove();
                    return Err(failed(format!("copying {} to {}", built.display(), d))(e));
                }
                built.remove();
            }
            moved = s;
            &moved
        };
        let undo = |e: std::io::Error, what: String| {
            staged.remove();
            OutDirError::Failed(format!("{what}: {e}"))
        };
        match &self.state {
            State::Absent | State::Empty => {
                // Replaces an empty directory; fails if something appeared meanwhile.
                std::fs::rename(staged, &self.dest)
                    .map_err(|e| undo(e, format!("moving the output into {d}")))?;
            }
            State::Earlier(owns) => {
                let old = sibling(&self.dest, "old", false)
                    .map_err(|e| undo(e, format!("choosing a name next to {d}")))?;
                std::fs::rename(&self.dest, &old)
                    .map_err(|e| undo(e, format!("moving the earlier {d} aside")))?;
                if let Err(e) = std::fs::rename(staged, &self.dest) {
                    let _ = std::fs::rename(&old, &self.dest);
                    return Err(undo(e, format!("moving the output into {d}")));
                }
                if let Some(left) = remove_owned(&old, &**owns) {
                    return Err(OutDirError::Failed(format!(
                        "wrote {d}; the earlier {d}, moved to {}, still holds {} (it appeared during the run), so it was left there",
                        old.display(),
                        left.display()
                    )));
                }
            }
        }
        Ok(self.shown.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh temporary directory (removed when the returned guard drops).
    fn scratch() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().to_path_buf();
        (t, p)
    }

    fn rule<'a>(earlier: &'a dyn Fn(&Path) -> Earlier) -> Rule<'a> {
        Rule {
            command: "board",
            option: "-o",
            replace: Ok(()),
            listing: LISTING,
            earlier,
            in_place: false,
        }
    }

    fn build(out: &OutDir, files: &[&str]) -> FreshDir {
        let s = out.stage().unwrap();
        for f in files {
            let p = s.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, f).unwrap();
        }
        s
    }

    fn listed(d: &Path) -> Earlier {
        read_listing(d, "board")
    }

    #[test]
    fn new_empty_and_earlier_directories_are_written() {
        let (_t, root) = scratch();
        let dest = root.join("a/b");
        let out = OutDir::prepare(&dest, &rule(&listed)).unwrap();
        let s = build(&out, &["x.v", "logs/y.log"]);
        out.install(&s, true).unwrap();
        assert!(dest.join("x.v").is_file() && dest.join(LISTING).is_file());
        // Again: the earlier run's files only are replaced; z.v is the new run's.
        let out = OutDir::prepare(&dest, &rule(&listed)).unwrap();
        let s = build(&out, &["z.v"]);
        out.install(&s, true).unwrap();
        assert!(!dest.join("x.v").exists() && dest.join("z.v").is_file());
        // No leftovers next to it.
        let names: Vec<_> = std::fs::read_dir(root.join("a")).unwrap().collect();
        assert_eq!(names.len(), 1);
        // An empty directory.
        let e = root.join("empty");
        std::fs::create_dir(&e).unwrap();
        let out = OutDir::prepare(&e, &rule(&listed)).unwrap();
        let s = build(&out, &["x.v"]);
        out.install(&s, true).unwrap();
        assert!(e.join("x.v").is_file());
    }

    #[test]
    fn foreign_entries_are_refused_and_kept() {
        let (_t, root) = scratch();
        let dest = root.join("p");
        std::fs::create_dir(&dest).unwrap();
        std::fs::write(dest.join("notes.txt"), "mine").unwrap();
        let e = OutDir::prepare(&dest, &rule(&listed)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "output directory {} holds notes.txt, which fp8gen did not write; fp8gen board replaces only the files of an earlier fp8gen board (its .fp8gen-files lists them): choose another directory or move it away",
                dest.display()
            )
        );
        // An earlier run's listing plus a file added after it: the added file is named.
        std::fs::remove_file(dest.join("notes.txt")).unwrap();
        std::fs::remove_dir(&dest).unwrap();
        let out = OutDir::prepare(&dest, &rule(&listed)).unwrap();
        let s = build(&out, &["x.v", "logs/a.log"]);
        out.install(&s, true).unwrap();
        std::fs::write(dest.join("logs/mine.txt"), "mine").unwrap();
        let e = OutDir::prepare(&dest, &rule(&listed))
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds logs/mine.txt, which"), "{e}");
        // A listing of another command is not ours.
        let e = OutDir::prepare(
            &dest,
            &Rule {
                command: "synth",
                ..rule(&|d: &Path| read_listing(d, "synth"))
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("holds .fp8gen-files, which fp8gen did not write (generator 'fp8gen "),
            "{e}"
        );
        assert!(e.contains("command 'board', not fp8gen synth)"), "{e}");
        assert!(dest.join("logs/mine.txt").is_file());
    }

    #[test]
    fn unusable_paths_are_refused() {
        let (_t, root) = scratch();
        let r = rule(&listed);
        for p in [Path::new("/"), Path::new("."), Path::new("..")] {
            let e = OutDir::prepare(p, &r).unwrap_err().to_string();
            assert!(
                e.contains("is the current directory or holds it"),
                "{p:?}: {e}"
            );
        }
        let f = root.join("file");
        std::fs::write(&f, "x").unwrap();
        let e = OutDir::prepare(&f, &r).unwrap_err().to_string();
        assert!(e.ends_with("exists and is not a directory; choose another directory"));
        #[cfg(unix)]
        {
            let l = root.join("dangling");
            std::os::unix::fs::symlink(root.join("nothing"), &l).unwrap();
            let e = OutDir::prepare(&l, &r).unwrap_err().to_string();
            assert!(e.contains("is a symbolic link to nothing"), "{e}");
            // A link to a directory writes the directory and keeps the link.
            let real = root.join("real");
            let l = root.join("link");
            std::os::unix::fs::symlink(&real, &l).unwrap();
            std::fs::create_dir(&real).unwrap();
            let out = OutDir::prepare(&l, &r).unwrap();
            let s = build(&out, &["x.v"]);
            out.install(&s, true).unwrap();
            assert!(real.join("x.v").is_file());
            assert!(std::fs::symlink_metadata(&l)
                .unwrap()
                .file_type()
                .is_symlink());
        }
        // A trailing slash names the same directory.
        let t = root.join("t");
        let out = OutDir::prepare(Path::new(&format!("{}/", t.display())), &r).unwrap();
        let s = build(&out, &["x.v"]);
        out.install(&s, true).unwrap();
        assert!(t.join("x.v").is_file());
    }

    #[test]
    fn a_file_added_during_the_run_is_never_deleted() {
        let (_t, root) = scratch();
        let dest = root.join("p");
        let out = OutDir::prepare(&dest, &rule(&listed)).unwrap();
        let s = build(&out, &["x.v"]);
        out.install(&s, true).unwrap();
        let out = OutDir::prepare(&dest, &rule(&listed)).unwrap();
        let s = build(&out, &["y.v"]);
        // Checked, then the user adds a file before the new output is moved in.
        std::fs::write(dest.join("late.txt"), "mine").unwrap();
        let e = out.install(&s, true).unwrap_err().to_string();
        assert!(
            e.contains("still holds late.txt (it appeared during the run)"),
            "{e}"
        );
        assert!(dest.join("y.v").is_file());
        let aside: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p != &dest)
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
        assert_eq!(
            std::fs::read_to_string(aside[0].join("late.txt")).unwrap(),
            "mine"
        );
        assert!(!aside[0].join("x.v").exists());
    }

    #[test]
    fn a_tree_is_copied_whole() {
        // The fallback of install when the build is on another file system.
        let (_t, root) = scratch();
        let from = root.join("from");
        std::fs::create_dir_all(from.join("logs/deep")).unwrap();
        std::fs::write(from.join("a.v"), "a").unwrap();
        std::fs::write(from.join("logs/deep/b.log"), "b").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.v", from.join("link")).unwrap();
        let to = root.join("to");
        std::fs::create_dir(&to).unwrap();
        copy_tree(&from, &to).unwrap();
        assert_eq!(walk(&from).unwrap(), walk(&to).unwrap());
        assert_eq!(
            std::fs::read_to_string(to.join("logs/deep/b.log")).unwrap(),
            "b"
        );
        #[cfg(unix)]
        assert_eq!(
            std::fs::read_link(to.join("link")).unwrap(),
            Path::new("a.v")
        );
    }

    #[test]
    fn a_gen_manifest_owns_its_files_only() {
        let (_t, root) = scratch();
        let d = root.join("core");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(
            d.join("manifest.json"),
            r#"{"generator": "fp8gen 0.1.0", "top": "t", "verilog": ["t.v", "../../x", "sub/y"]}"#,
        )
        .unwrap();
        let Earlier::Owned(owns) = read_gen_manifest(&d) else {
            panic!("not owned")
        };
        for (p, want) in [
            ("t.v", true),
            ("t.core", true),
            ("t_tb.sv", true),
            ("t_vectors.hex", true),
            ("u_tb.sv", false),
            ("t_tb.v", false),
            ("t_vectors.hex.bak", false),
            ("manifest.json", true),
            ("../../x", false),
            ("sub/y", false),
            ("notes.txt", false),
        ] {
            assert_eq!(owns(Path::new(p)), want, "{p}");
        }
        std::fs::write(
            d.join("manifest.json"),
            r#"{"generator": "vendor", "top": "t"}"#,
        )
        .unwrap();
        assert!(matches!(read_gen_manifest(&d), Earlier::Foreign(_)));
        std::fs::write(d.join("manifest.json"), "{").unwrap();
        assert!(matches!(read_gen_manifest(&d), Earlier::Foreign(_)));
    }

    #[test]
    fn report_pages_and_result_summaries_belong_to_the_core() {
        let (_t, root) = scratch();
        let d = root.join("core");
        std::fs::create_dir_all(d.join(RESULTS_DIR)).unwrap();
        std::fs::write(
            d.join("manifest.json"),
            r#"{"generator": "fp8gen 0.1.0", "top": "t", "verilog": "t.v"}"#,
        )
        .unwrap();
        let page = format!("{REPORT_HEAD} 0.1.0 -->\n<html></html>\n");
        std::fs::write(d.join("t.html"), &page).unwrap();
        std::fs::write(d.join("other.html"), &page).unwrap();
        std::fs::write(d.join("mine.html"), "<!DOCTYPE html>\n<html>mine</html>").unwrap();
        std::fs::write(d.join("short.html"), "<!DOCTYPE").unwrap();
        let r = |n: &str| d.join(RESULTS_DIR).join(n);
        std::fs::write(
            r("verify.json"),
            r#"{"vectors": 1, "meta": {"generator": "fp8gen 0.1.0"}}"#,
        )
        .unwrap();
        std::fs::write(
            r("prove.json"),
            r#"[{"verdict": "proven", "generator": "fp8gen 0.1.0"}]"#,
        )
        .unwrap();
        std::fs::write(
            r("synth.json"),
            r#"{"fmax_mhz": 1.0, "generator": "fp8gen 0.1.0"}"#,
        )
        .unwrap();
        std::fs::write(
            r("vendor.json"),
            r#"{"vectors": 1, "meta": {"generator": "x"}}"#,
        )
        .unwrap();
        std::fs::write(r("unstamped.json"), r#"[{"verdict": "proven"}]"#).unwrap();
        std::fs::write(r("notes.txt"), "mine").unwrap();
        std::fs::write(r("page.html"), &page).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(d.join("t.html"), d.join("link.html")).unwrap();
        let Earlier::Owned(owns) = read_gen_manifest(&d) else {
            panic!("not owned")
        };
        for (p, want) in [
            ("t.html", true),
            ("other.html", true),
            ("mine.html", false),
            ("short.html", false),
            ("link.html", false),
            ("results", true),
            ("results/verify.json", true),
            ("results/prove.json", true),
            ("results/synth.json", true),
            ("results/vendor.json", false),
            ("results/unstamped.json", false),
            ("results/notes.txt", false),
            ("results/page.html", false),
        ] {
            assert_eq!(owns(Path::new(p)), want, "{p}");
        }
        // A linked results folder is not ours, nor what is in it.
        #[cfg(unix)]
        {
            let d2 = root.join("core2");
            std::fs::create_dir(&d2).unwrap();
            std::fs::copy(d.join("manifest.json"), d2.join("manifest.json")).unwrap();
            std::os::unix::fs::symlink(d.join(RESULTS_DIR), d2.join(RESULTS_DIR)).unwrap();
            let Earlier::Owned(owns) = read_gen_manifest(&d2) else {
                panic!("not owned")
            };
            assert!(!owns(Path::new("results")));
            assert!(!owns(Path::new("results/verify.json")));
        }
    }
}
