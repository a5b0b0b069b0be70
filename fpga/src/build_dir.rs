//! Private build directories: created fresh, removed when dropped, or — when the caller
//! asked to keep the artifacts — put in place of the output directory in one step at the end
//! ([`iface::outdir`]: a new or empty directory, or an earlier run's of the same command), so
//! that a failed run never leaves a half-written output directory behind and a directory
//! holding files fp8gen did not write is refused before anything runs.

use std::path::{Path, PathBuf};

use iface::outdir::{FreshDir, OutDir, OutDirError, Rule, LISTING};

use crate::FpgaError;

/// A build directory that is deleted on drop unless [`BuildDir::finish`] moved it. Its path is
/// always one [`BuildDir::new`] created with `create_dir` (which fails on an existing path), so
/// the removals below only ever delete this build's own directory.
#[derive(Debug)]
pub struct BuildDir {
    path: FreshDir,
    dest: Option<OutDir>,
    done: bool,
}

fn out_err(e: OutDirError) -> FpgaError {
    match e {
        OutDirError::Refused(m) => FpgaError::Output(m),
        OutDirError::Failed(m) => {
            FpgaError::io("writing the output directory", std::io::Error::other(m))
        }
    }
}

/// Checks an output directory of `command` (`board`, `synth`) named by `option` before
/// anything is built: new, empty, or an earlier run's of the same command (which is then
/// replaced); a directory holding anything else is refused.
pub fn prepare_output(dir: &Path, command: &str, option: &str) -> Result<OutDir, FpgaError> {
    let read = |d: &Path| iface::outdir::read_listing(d, command);
    OutDir::prepare(
        dir,
        &Rule {
            command,
            option,
            replace: Ok(()),
            listing: LISTING,
            earlier: &read,
            in_place: false,
        },
    )
    .map_err(out_err)
}

impl BuildDir {
    /// Creates a fresh directory in the system temp directory. With `keep = Some(dest)`
    /// (checked by [`prepare_output`]), [`BuildDir::finish`] moves the build there.
    pub fn new(prefix: &str, keep: Option<OutDir>) -> Result<BuildDir, FpgaError> {
        let tmp = std::env::temp_dir();
        let path = FreshDir::create_in(&tmp, prefix)
            .map_err(|e| FpgaError::io(format!("creating a directory in {}", tmp.display()), e))?;
        Ok(BuildDir {
            path,
            dest: keep,
            done: false,
        })
    }

    /// The directory to build in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the directory to its destination (if one was given, with a listing of what it
    /// holds) and returns the final location; without a destination the directory is
    /// deleted and `None` returned.
    pub fn finish(mut self) -> Result<Option<PathBuf>, FpgaError> {
        self.done = true;
        match self.dest.take() {
            Some(dest) => dest.install(&self.path, true).map(Some).map_err(out_err),
            None => {
                self.path.remove();
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

impl Drop for BuildDir {
    fn drop(&mut self) {
        if !self.done {
            self.path.remove();
        }
    }
}
