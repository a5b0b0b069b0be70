//! Reading a user-named file: regular files only, bounded in size.
//!
//! Every file fp8gen reads because a user named it (a manifest, its source and include files,
//! a sweep plan or job result, a board's `shell.json`) goes through [`read_bounded`]: a FIFO
//! is never opened (opening one blocks until a writer appears), a device such as `/dev/zero`
//! is refused (it never ends), and a regular file larger than the caller's limit is refused
//! before it is read, so one input can neither hang a run nor exhaust its memory.

use std::fmt;
use std::io::Read as _;
use std::path::Path;

/// Largest `manifest.json` (or other JSON description) read: 16 MiB.
pub const MAX_JSON_BYTES: u64 = 16 << 20;

/// Largest Verilog source or include file read: 64 MiB.
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// A file that was not read, with the reason.
#[derive(Debug)]
pub struct ReadError {
    /// The message: the path, what is wrong, the limit.
    pub message: String,
    /// The I/O error underneath, if the file system refused.
    pub io: Option<std::io::Error>,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ReadError {}

/// A size for messages: `812 bytes`, `3.4 KiB`, `1.2 GiB`.
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// What a file type is, for messages: `a FIFO`, `a character device`, `a directory`, …
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Opens `path` without blocking on a FIFO (that a check of the path raced with).
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // O_NONBLOCK: an open of a FIFO returns at once; a regular file ignores the flag.
        o.custom_flags(0o4000);
    }
    #[cfg(target_os = "macos")]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        o.custom_flags(0x0004);
    }
    o.open(path)
}

/// Reads the regular file `path` (a symbolic link is followed) of at most `max_bytes` bytes.
/// `what` names such files in the plural for the size message, e.g. `source files`: a FIFO,
/// device, socket or directory gives `<path> is a FIFO, not a regular file`; a larger file
/// `<path> is 1.2 GiB; source files over 64.0 MiB are refused`.
pub fn read_bounded(path: &Path, max_bytes: u64, what: &str) -> Result<Vec<u8>, ReadError> {
    let fail = |message: String, io: Option<std::io::Error>| ReadError { message, io };
    let not_regular = |t: std::fs::FileType| {
        fail(
            format!("{} is {}, not a regular file", path.display(), kind_of(t)),
            None,
        )
    };
    let meta = std::fs::metadata(path)
        .map_err(|e| fail(format!("cannot read {}: {e}", path.display()), Some(e)))?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    let too_big = |n: u64, more: bool| {
        fail(
            format!(
                "{} is {}{}; {what} over {} are refused",
                path.display(),
                if more { "over " } else { "" },
                human_size(n),
                human_size(max_bytes)
            ),
            None,
        )
    };
    if meta.len() > max_bytes {
        return Err(too_big(meta.len(), false));
    }
    let file = open_nonblocking(path)
        .map_err(|e| fail(format!("cannot read {}: {e}", path.display()), Some(e)))?;
    // The path may have been replaced between the check and the open: check what was opened.
    let meta = file
        .metadata()
        .map_err(|e| fail(format!("cannot read {}: {e}", path.display()), Some(e)))?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    let mut data = Vec::with_capacity(meta.len().min(max_bytes) as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| fail(format!("cannot read {}: {e}", path.display()), Some(e)))?;
    if data.len() as u64 > max_bytes {
        return Err(too_big(max_bytes, true));
    }
    Ok(data)
}

/// [`read_bounded`] of a UTF-8 text file.
pub fn read_text_bounded(path: &Path, max_bytes: u64, what: &str) -> Result<String, ReadError> {
    let data = read_bounded(path, max_bytes, what)?;
    String::from_utf8(data).map_err(|e| ReadError {
        message: format!(
            "{} is not UTF-8 text (byte {} is not)",
            path.display(),
            e.utf8_error().valid_up_to()
        ),
        io: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_sizes() {
        assert_eq!(human_size(812), "812 bytes");
        assert_eq!(human_size(64 << 20), "64.0 MiB");
        assert_eq!(human_size(1288490189), "1.2 GiB");
    }

    #[test]
    fn devices_and_directories_are_refused() {
        let e = read_bounded(Path::new("/dev/zero"), 1024, "source files").unwrap_err();
        assert_eq!(
            e.message,
            "/dev/zero is a character device, not a regular file"
        );
        let e = read_bounded(Path::new("/"), 1024, "manifests").unwrap_err();
        assert_eq!(e.message, "/ is a directory, not a regular file");
    }

    #[test]
    fn large_files_are_refused_and_small_ones_read() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("x.v");
        std::fs::write(&p, vec![b'a'; 2048]).unwrap();
        let e = read_bounded(&p, 1024, "source files").unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "{} is 2.0 KiB; source files over 1.0 KiB are refused",
                p.display()
            )
        );
        assert_eq!(read_bounded(&p, 4096, "source files").unwrap().len(), 2048);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("manifest.json");
        let ok = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let e = read_bounded(&p, 1024, "manifests").unwrap_err();
            assert_eq!(
                e.message,
                format!("{} is a FIFO, not a regular file", p.display())
            );
        }
    }
}
