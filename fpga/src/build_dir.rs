//! Private build directories: created fresh, removed when dropped, or — when the caller
//! asked to keep the artifacts — renamed into place in one step at the end, so that a
//! failed run never leaves a half-written output directory behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::FpgaError;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A build directory that is deleted on drop unless [`BuildDir::finish`] moved it.
#[derive(Debug)]
pub struct BuildDir {
    path: PathBuf,
    dest: Option<PathBuf>,
    done: bool,
}

impl BuildDir {
    /// Creates a fresh directory in the system temp directory. With `keep = Some(dest)`,
    /// `dest` must not exist yet or be an empty directory; [`BuildDir::finish`] moves the
    /// build there.
    pub fn new(prefix: &str, keep: Option<&Path>) -> Result<BuildDir, FpgaError> {
        let unique = format!(
            "{}-{}-{}-{}",
            prefix,
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let dest = match keep {
            Some(dest) => {
                if dest.exists() {
                    let empty = std::fs::read_dir(dest)
                        .map(|mut d| d.next().is_none())
                        .unwrap_or(false);
                    if !empty {
                        return Err(FpgaError::BadRequest(format!(
                            "output directory {} already exists and is not empty; \
                             remove it or choose another",
                            dest.display()
                        )));
                    }
                }
                Some(dest.to_path_buf())
            }
            None => None,
        };
        let path = std::env::temp_dir().join(unique);
        std::fs::create_dir(&path)
            .map_err(|e| FpgaError::io(format!("creating {}", path.display()), e))?;
        Ok(BuildDir {
            path,
            dest,
            done: false,
        })
    }

    /// The directory to build in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the directory to its destination (if one was given) and returns the final
    /// location; without a destination the directory is deleted and `None` returned.
    pub fn finish(mut self) -> Result<Option<PathBuf>, FpgaError> {
        self.done = true;
        match self.dest.take() {
            Some(dest) => {
                if dest.is_dir() {
                    // Checked empty at creation; remove so the rename can take its place.
                    std::fs::remove_dir(&dest).map_err(|e| {
                        FpgaError::io(format!("replacing empty {}", dest.display()), e)
                    })?;
                }
                if let Some(parent) = dest.parent() {
                    if !parent.as_os_str().is_empty() {
                        std::fs::create_dir_all(parent).map_err(|e| {
                            FpgaError::io(format!("creating {}", parent.display()), e)
                        })?;
                    }
                }
                if std::fs::rename(&self.path, &dest).is_err() {
                    // Different file system: copy into a hidden sibling, then rename it.
                    let name = dest
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| "out".into());
                    let staging = dest.with_file_name(format!(".{name}.partial"));
                    let _ = std::fs::remove_dir_all(&staging);
                    let copied = copy_dir(&self.path, &staging).and_then(|()| {
                        std::fs::rename(&staging, &dest)
                            .map_err(|e| FpgaError::io(format!("moving to {}", dest.display()), e))
                    });
                    if let Err(e) = copied {
                        let _ = std::fs::remove_dir_all(&staging);
                        let _ = std::fs::remove_dir_all(&self.path);
                        return Err(e);
                    }
                    let _ = std::fs::remove_dir_all(&self.path);
                }
                Ok(Some(dest))
            }
            None => {
                let _ = std::fs::remove_dir_all(&self.path);
                Ok(None)
            }
        }
    }
}

impl BuildDir {
    /// Leaves the directory in place after a failure so that the logs named in the error
    /// message stay readable.
    pub fn keep_for_debugging(&mut self) {
        self.done = true;
    }
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), FpgaError> {
    std::fs::create_dir(to).map_err(|e| FpgaError::io(format!("creating {}", to.display()), e))?;
    let entries = std::fs::read_dir(from)
        .map_err(|e| FpgaError::io(format!("reading {}", from.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| FpgaError::io(format!("reading {}", from.display()), e))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        if src.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .map_err(|e| FpgaError::io(format!("copying {}", src.display()), e))?;
        }
    }
    Ok(())
}

impl Drop for BuildDir {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
