//! The build cache: where compiled models and the Verilator runtime live, how they are keyed,
//! and how a finished build is published atomically (build in a private temp dir, `rename`).
//!
//! Location, first match wins: `$FP8GEN_CACHE`; `<cargo target dir>/fp8gen-cache` when the
//! running executable lives under a directory named `target` (a workspace build);
//! `$XDG_CACHE_HOME/fp8gen`; `$HOME/.cache/fp8gen`; `<tmp>/fp8gen-cache`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Result, SimError};

/// The default cache directory (see the module documentation for the search order).
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = env::var_os("FP8GEN_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
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
}
