//! The build cache: where compiled models and the Verilator runtime live, how they are keyed,
//! how a finished build is published atomically (build in a private temp dir, `rename`), and
//! how the cache heals and bounds itself:
//!
//! * every entry carries a stamp (`stamp.txt`: size and hash of each artifact) written last;
//!   an entry whose stamp is missing or does not match its files (a truncated `model.so`, a
//!   corrupt runtime object) is removed and rebuilt;
//! * temporary build directories of processes that are gone (or older than a day) are
//!   removed whenever a build starts;
//! * after a build, the least recently used models are evicted while the cache holds more
//!   than `FP8GEN_CACHE_MAX_MB` (default 4096) MiB of models;
//! * [`clean`] (`fp8gen cache clean`) empties it: only the entries and temporary directories
//!   it created (named by a cache key, or `<model|runtime|discard>-<pid>-<nanos>-<n>`), so a
//!   cache pointed at a directory holding other files never loses them.
//!
//! Location, first match wins: `$FP8GEN_CACHE`; `<cargo target dir>/fp8gen-cache` when the
//! running executable lives under a directory named `target` (a workspace build);
//! `$XDG_CACHE_HOME/fp8gen`; `$HOME/.cache/fp8gen`; `<tmp>/fp8gen-cache`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Result, SimError};

/// The default cache directory (see the module documentation for the search order).
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = env::var_os("FP8GEN_CACHE").filter(|d| !d.is_empty()) {
        // Absolute: the tools run in build directories of their own, where a relative path
        // would name another place.
        let d = PathBuf::from(d);
        return match env::current_dir() {
            Ok(cwd) if d.is_relative() => cwd.join(d),
            _ => d,
        };
    }
    if let Ok(exe) = env::current_exe() {
        if let Some(target) = exe
            .ancestors()
            .skip(1)
            .find(|a| a.file_name().is_some_and(|n| n == "target"))
        {
            return target.join("fp8gen-cache");
        }
    }
    if let Some(d) = env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("fp8gen");
    }
    if let Some(d) = env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join(".cache").join("fp8gen");
    }
    env::temp_dir().join("fp8gen-cache")
}

/// A 128-bit FNV-1a hash of length-prefixed fields: the cache key.
#[derive(Clone, Debug)]
pub(crate) struct KeyHasher(u128);

impl KeyHasher {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;

    pub(crate) fn new() -> Self {
        KeyHasher(Self::OFFSET)
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u128;
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// Adds one named field; names and lengths are hashed too so fields cannot run together.
    pub(crate) fn field(&mut self, name: &str, value: &[u8]) -> &mut Self {
        self.bytes(&(name.len() as u64).to_le_bytes());
        self.bytes(name.as_bytes());
        self.bytes(&(value.len() as u64).to_le_bytes());
        self.bytes(value);
        self
    }

    pub(crate) fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a fresh private directory `<root>/tmp/<prefix>-<pid>-<nanos>-<n>`.
pub(crate) fn make_temp_dir(root: &Path, prefix: &str) -> Result<PathBuf> {
    let tmp_root = root.join("tmp");
    fs::create_dir_all(&tmp_root)
        .map_err(|e| SimError::io(format!("creating cache dir {}", tmp_root.display()), e))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = tmp_root.join(format!("{prefix}-{}-{nanos}-{n}", std::process::id()));
    fs::create_dir(&dir)
        .map_err(|e| SimError::io(format!("creating build dir {}", dir.display()), e))?;
    Ok(dir)
}

/// Publishes a finished build: renames `tmp` to `dest`. If another process published the
/// same key first, `tmp` is discarded and the existing entry is used. Returns `dest`.
pub(crate) fn publish(tmp: &Path, dest: &Path) -> Result<PathBuf> {
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| SimError::io(format!("creating cache dir {}", parent.display()), e))?;
    }
    match fs::rename(tmp, dest) {
        Ok(()) => Ok(dest.to_path_buf()),
        Err(e) => {
            if dest.is_dir() {
                // Lost a race with an identical build: keep the winner's files.
                let _ = fs::remove_dir_all(tmp);
                Ok(dest.to_path_buf())
            } else {
                Err(SimError::io(
                    format!("moving {} to {}", tmp.display(), dest.display()),
                    e,
                ))
            }
        }
    }
}

/// Name of the stamp file of a cache entry.
pub(crate) const STAMP: &str = "stamp.txt";

fn file_hash(path: &Path) -> std::io::Result<String> {
    let data = fs::read(path)?;
    // FNV-1a 64 over 8-byte words: fast enough for tens of MB, and any truncation or
    // corruption changes it.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in data.chunks(8) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        h ^= u64::from_le_bytes(w);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    Ok(format!("{h:016x}"))
}

/// Writes `dir/stamp.txt` describing `files` (relative to `dir`): one `name size hash` line each.
pub(crate) fn write_stamp(dir: &Path, files: &[String]) -> Result<()> {
    let mut text = String::new();
    for f in files {
        let p = dir.join(f);
        let len = fs::metadata(&p)
            .map_err(|e| SimError::io(format!("stamping {}", p.display()), e))?
            .len();
        let h = file_hash(&p).map_err(|e| SimError::io(format!("hashing {}", p.display()), e))?;
        text.push_str(&format!("{f} {len} {h}\n"));
    }
    fs::write(dir.join(STAMP), text)
        .map_err(|e| SimError::io(format!("writing {}", dir.join(STAMP).display()), e))
}

/// Whether the entry `dir` is complete and intact: its stamp exists and every file it lists
/// has the recorded size and hash. Marks the entry as used (for eviction).
pub(crate) fn entry_ok(dir: &Path) -> bool {
    let Ok(text) = fs::read_to_string(dir.join(STAMP)) else {
        return false;
    };
    let mut any = false;
    for line in text.lines() {
        let mut it = line.split(' ');
        let (Some(name), Some(len), Some(h)) = (it.next(), it.next(), it.next()) else {
            return false;
        };
        let p = dir.join(name);
        let ok = fs::metadata(&p).is_ok_and(|m| m.len().to_string() == len)
            && file_hash(&p).is_ok_and(|x| x == h);
        if !ok {
            return false;
        }
        any = true;
    }
    if any {
        let _ = fs::File::options()
            .append(true)
            .open(dir.join(STAMP))
            .and_then(|f| f.set_modified(SystemTime::now()));
    }
    any
}

/// Removes a damaged entry so that it is rebuilt (renamed aside first, so a concurrent
/// reader never sees half a directory).
pub(crate) fn discard_entry(root: &Path, dir: &Path) {
    if let Ok(aside) = make_temp_dir(root, "discard") {
        let target = aside.join("entry");
        if fs::rename(dir, &target).is_ok() {
            let _ = fs::remove_dir_all(&aside);
            return;
        }
        let _ = fs::remove_dir_all(&aside);
    }
    let _ = fs::remove_dir_all(dir);
}

fn pid_alive(pid: u32) -> bool {
    Path::new("/proc").is_dir() && Path::new(&format!("/proc/{pid}")).exists()
        || !Path::new("/proc").is_dir()
}

/// Prefixes of the temporary directories [`make_temp_dir`] creates.
const TEMP_PREFIXES: [&str; 3] = ["model", "runtime", "discard"];

/// Whether `name` is a temporary directory name of this cache: `<prefix>-<pid>-<nanos>-<n>`.
fn is_temp_name(name: &str) -> bool {
    let parts: Vec<&str> = name.rsplitn(4, '-').collect();
    parts.len() == 4
        && TEMP_PREFIXES.contains(&parts[3])
        && parts[..3]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `name` is a model or runtime entry name: a cache key ([`KeyHasher::hex`]).
fn is_entry_name(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Removes temporary build directories left by processes that are gone, or older than a day
/// (only directories named like the ones [`make_temp_dir`] creates).
pub(crate) fn sweep_temp(root: &Path) -> u64 {
    let mut removed = 0;
    let Ok(rd) = fs::read_dir(root.join("tmp")) else {
        return 0;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !is_temp_name(&name) || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        // <prefix>-<pid>-<nanos>-<n>
        let parts: Vec<&str> = name.rsplitn(4, '-').collect();
        let pid: Option<u32> = parts.get(2).and_then(|p| p.parse().ok());
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|d| d > Duration::from_secs(24 * 3600));
        let dead = pid.is_some_and(|p| p != std::process::id() && !pid_alive(p));
        if (dead || old) && fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn dir_size(p: &Path) -> u64 {
    let mut n = 0;
    if let Ok(rd) = fs::read_dir(p) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => n += dir_size(&e.path()),
                Ok(m) => n += m.len(),
                Err(_) => {}
            }
        }
    }
    n
}

/// Cache size limit for models in bytes (`FP8GEN_CACHE_MAX_MB`, default 4096 MiB); a value
/// that is not a number of MiB is an error naming the variable.
pub fn max_models_bytes() -> Result<u64> {
    match env::var("FP8GEN_CACHE_MAX_MB") {
        Err(env::VarError::NotPresent) => Ok(4096 << 20),
        Ok(v) if v.trim().parse::<u64>().is_ok() => {
            Ok(v.trim().parse::<u64>().unwrap_or(4096).saturating_mul(1 << 20))
        }
        Ok(v) => Err(SimError::Usage(format!(
            "FP8GEN_CACHE_MAX_MB={v} is not a number of MiB; give e.g. FP8GEN_CACHE_MAX_MB=4096 (the default) or unset it"
        ))),
        Err(env::VarError::NotUnicode(v)) => Err(SimError::Usage(format!(
            "FP8GEN_CACHE_MAX_MB={} is not a number of MiB; give e.g. FP8GEN_CACHE_MAX_MB=4096 (the default) or unset it",
            v.to_string_lossy()
        ))),
    }
}

/// Evicts the least recently used models (by stamp time) until the models take at most
/// `max_bytes`; never evicts `keep`. Returns the number of entries removed.
pub(crate) fn evict(root: &Path, max_bytes: u64, keep: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(root.join("models")) else {
        return 0;
    };
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = rd
        .flatten()
        .filter(|e| {
            is_entry_name(&e.file_name().to_string_lossy())
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|e| {
            let p = e.path();
            let t = fs::metadata(p.join(STAMP))
                .and_then(|m| m.modified())
                .unwrap_or(UNIX_EPOCH);
            (t, dir_size(&p), p)
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    entries.sort();
    let mut removed = 0;
    for (_, size, p) in entries {
        if total <= max_bytes {
            break;
        }
        if p == keep {
            continue;
        }
        discard_entry(root, &p);
        total = total.saturating_sub(size);
        removed += 1;
    }
    removed
}

/// What [`clean`] removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CleanReport {
    /// The cache directory.
    pub dir: PathBuf,
    /// Model entries removed.
    pub models: u64,
    /// Runtime entries removed.
    pub runtimes: u64,
    /// Temporary and discarded build directories removed.
    pub temporaries: u64,
    /// Bytes freed.
    pub bytes: u64,
    /// Entries of `models/`, `runtime/` and `tmp/` the cache did not create, left in place.
    pub left: Vec<PathBuf>,
}

/// The cache directory must be a directory (or not exist yet).
fn check_root(root: &Path) -> Result<()> {
    match fs::metadata(root) {
        Ok(m) if !m.is_dir() => Err(SimError::Usage(format!(
            "the cache {} is not a directory; point FP8GEN_CACHE at a directory (or unset it)",
            root.display()
        ))),
        _ => Ok(()),
    }
}

/// Empties the cache at `root`: the model and Verilator runtime entries (directories named by
/// a cache key) and the temporary build directories. Anything else (a cache pointed at a
/// directory holding other files) is left and reported in [`CleanReport::left`].
pub fn clean(root: &Path) -> Result<CleanReport> {
    check_root(root)?;
    let mut r = CleanReport {
        dir: root.to_path_buf(),
        ..CleanReport::default()
    };
    for (sub, count) in [
        ("models", &mut r.models),
        ("runtime", &mut r.runtimes),
        ("tmp", &mut r.temporaries),
    ] {
        let Ok(rd) = fs::read_dir(root.join(sub)) else {
            continue;
        };
        let mut v: Vec<_> = rd.flatten().collect();
        v.sort_by_key(|e| e.file_name());
        for e in v {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = e.file_type().is_ok_and(|t| t.is_dir())
                && if sub == "tmp" {
                    is_temp_name(&name)
                } else {
                    is_entry_name(&name)
                };
            if !ours {
                r.left.push(e.path());
                continue;
            }
            let size = dir_size(&e.path());
            fs::remove_dir_all(e.path())
                .map_err(|err| SimError::io(format!("removing {}", e.path().display()), err))?;
            *count += 1;
            r.bytes += size;
        }
    }
    Ok(r)
}

/// Number of model entries and their total size in bytes.
pub fn usage(root: &Path) -> Result<(u64, u64)> {
    check_root(root)?;
    let Ok(rd) = fs::read_dir(root.join("models")) else {
        return Ok((0, 0));
    };
    let v: Vec<u64> = rd
        .flatten()
        .filter(|e| {
            is_entry_name(&e.file_name().to_string_lossy())
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|e| dir_size(&e.path()))
        .collect();
    Ok((v.len() as u64, v.iter().sum()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_depends_on_every_field_and_its_boundaries() {
        let k = |a: &str, b: &str| {
            KeyHasher::new()
                .field("a", a.as_bytes())
                .field("b", b.as_bytes())
                .hex()
        };
        assert_eq!(k("x", "y"), k("x", "y"));
        assert_ne!(k("x", "y"), k("x", "z"));
        assert_ne!(k("xy", ""), k("x", "y"));
        assert_eq!(k("x", "y").len(), 32);
    }

    #[test]
    fn publish_keeps_the_first_winner() {
        let root = tempfile::tempdir().unwrap();
        let a = make_temp_dir(root.path(), "t").unwrap();
        fs::write(a.join("f"), "first").unwrap();
        let dest = root.path().join("models").join("k");
        publish(&a, &dest).unwrap();
        let b = make_temp_dir(root.path(), "t").unwrap();
        fs::write(b.join("f"), "second").unwrap();
        publish(&b, &dest).unwrap();
        assert_eq!(fs::read_to_string(dest.join("f")).unwrap(), "first");
        assert!(!b.exists());
    }

    #[test]
    fn stamps_detect_truncation_and_corruption() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("models").join("k");
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("model.so"), vec![7u8; 1000]).unwrap();
        assert!(!entry_ok(&d), "no stamp yet");
        write_stamp(&d, &["model.so".to_string()]).unwrap();
        assert!(entry_ok(&d));
        fs::write(d.join("model.so"), vec![7u8; 999]).unwrap();
        assert!(!entry_ok(&d), "truncated");
        let mut v = vec![7u8; 1000];
        v[500] = 8;
        fs::write(d.join("model.so"), v).unwrap();
        assert!(!entry_ok(&d), "corrupt");
        discard_entry(root.path(), &d);
        assert!(!d.exists());
    }

    #[test]
    fn sweep_removes_dead_builds_and_clean_empties() {
        let root = tempfile::tempdir().unwrap();
        let mine = make_temp_dir(root.path(), "model").unwrap();
        // A pid that cannot exist (above the kernel's pid_max).
        let dead = root.path().join("tmp").join("model-4194399-1-0");
        fs::create_dir_all(&dead).unwrap();
        assert_eq!(sweep_temp(root.path()), 1);
        assert!(mine.exists() && !dead.exists());
        let m = root.path().join("models").join(KeyHasher::new().hex());
        fs::create_dir_all(&m).unwrap();
        fs::write(m.join("model.so"), [1u8; 10]).unwrap();
        // Not the cache's: a user's directories and files under the same names.
        let theirs = [
            root.path().join("models").join("photos"),
            root.path().join("tmp").join("notes-1-2-3"),
            root.path().join("runtime").join("x.txt"),
        ];
        for t in &theirs[..2] {
            fs::create_dir_all(t).unwrap();
        }
        fs::create_dir_all(theirs[2].parent().unwrap()).unwrap();
        fs::write(&theirs[2], "mine").unwrap();
        assert_eq!(usage(root.path()).unwrap(), (1, 10));
        let r = clean(root.path()).unwrap();
        assert_eq!((r.models, r.temporaries, r.bytes), (1, 1, 10));
        assert_eq!(usage(root.path()).unwrap(), (0, 0));
        assert!(theirs.iter().all(|t| t.exists()), "{:?}", r.left);
        assert_eq!(r.left.len(), 3);
        // Older than a day or not, a directory not named like a build is never swept.
        assert_eq!(sweep_temp(root.path()), 0);
        assert!(theirs[1].exists());
    }

    #[test]
    fn a_cache_that_is_a_file_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let f = root.path().join("file");
        fs::write(&f, "x").unwrap();
        let e = clean(&f).unwrap_err().to_string();
        assert!(
            e.contains("is not a directory; point FP8GEN_CACHE at a directory"),
            "{e}"
        );
        assert!(usage(&f).is_err());
        assert_eq!(fs::read_to_string(&f).unwrap(), "x");
    }

    #[test]
    fn eviction_drops_the_least_recently_used() {
        let root = tempfile::tempdir().unwrap();
        let mk = |n: &str| {
            let d = root.path().join("models").join(n);
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("model.so"), vec![0u8; 100]).unwrap();
            write_stamp(&d, &["model.so".to_string()]).unwrap();
            d
        };
        let a = mk(&"a".repeat(32));
        std::thread::sleep(Duration::from_millis(20));
        let b = mk(&"b".repeat(32));
        std::thread::sleep(Duration::from_millis(20));
        let c = mk(&"c".repeat(32));
        assert!(entry_ok(&a)); // touch a: now b is the oldest
        assert_eq!(evict(root.path(), 300, &c), 1);
        assert!(a.exists() && !b.exists() && c.exists());
    }
}
