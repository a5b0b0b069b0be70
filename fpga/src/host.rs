//! Host side of the board test: frames vectors for the UART shell, sends them over any
//! byte link (a tty opened with [`open_serial`], or the simulated board in the tests) and
//! decodes the answers.
//!
//! `fp8gen board-test --port /dev/ttyUSB0 --dir out/board < vectors` reads `shell.json`
//! from the board build directory, then one vector per line (hex values of the operands,
//! in port order, separated by blanks) and prints one line per vector (hex values of the
//! results), the same format as the batch commands. The handshake (`valid_in`,
//! `valid_out`) is never part of a vector: the shell drives and reports it.

use std::fs::File;
use std::io::{BufRead, ErrorKind, Read, Write};
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::shell::ShellLayout;
use crate::FpgaError;

/// One decoded answer of the shell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// Raw status byte.
    pub status: u8,
    /// `valid_out` of the core at capture (true for cores without one).
    pub valid: bool,
    /// The shell abandoned an incomplete frame since its previous answer.
    pub abandoned_frame: bool,
    /// One value per result port ([`ShellLayout::outputs`]), in port order.
    pub outputs: Vec<u64>,
}

/// Sends one vector (one value per operand, [`ShellLayout::inputs`]) and returns the shell's answer.
pub fn exchange<L: Read + Write>(
    link: &mut L,
    layout: &ShellLayout,
    inputs: &[u64],
) -> Result<Response, FpgaError> {
    let frame = layout.encode_request(inputs)?;
    link.write_all(&frame)
        .and_then(|()| link.flush())
        .map_err(|e| FpgaError::io("writing a request to the board", e))?;
    let mut buf = vec![0u8; layout.response_len()];
    if let Err(e) = link.read_exact(&mut buf) {
        return Err(if e.kind() == ErrorKind::UnexpectedEof {
            FpgaError::Link(format!(
                "no complete answer from the board (expected {} bytes): check the port, \
                 that the bitstream for `{}` is loaded, and the baud rate ({})",
                layout.response_len(),
                layout.core,
                layout.baud
            ))
        } else {
            FpgaError::io("reading the board's answer", e)
        });
    }
    let (status, outputs) = layout.decode_response(&buf)?;
    Ok(Response {
        status,
        valid: status & 1 == 1,
        abandoned_frame: status & 2 == 2,
        outputs,
    })
}

/// Opens a serial port for the shell: sets it raw 8N1 at `baud`, no flow control, reads
/// returning after 2 s of silence (`stty -F`), then opens it for reading and writing.
pub fn open_serial(port: &Path, baud: u32) -> Result<File, FpgaError> {
    let out = Command::new("stty")
        .arg("-F")
        .arg(port)
        .args([
            &baud.to_string(),
            "raw",
            "-echo",
            "cs8",
            "-cstopb",
            "-parenb",
            "-crtscts",
            "-ixon",
            "-ixoff",
            "clocal",
            "min",
            "0",
            "time",
            "20",
        ])
        .output()
        .map_err(|e| FpgaError::io("running stty (is coreutils installed?)", e))?;
    if !out.status.success() {
        return Err(FpgaError::Link(format!(
            "stty could not configure {} at {baud} baud: {}",
            port.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(port)
        .map_err(|e| FpgaError::io(format!("opening {}", port.display()), e))
}

/// Counts of a replay run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// Vectors sent and answered.
    pub vectors: u64,
    /// Answers whose `valid_out` was low.
    pub not_valid: u64,
}

/// Replays vectors from `input` (one per line: hex operands separated by blanks; blank
/// lines and `#` comments skipped) through `link`, writing one line of hex results per
/// vector to `output`.
pub fn board_test_serial<L: Read + Write, R: BufRead, W: Write>(
    link: &mut L,
    layout: &ShellLayout,
    input: R,
    mut output: W,
) -> Result<ReplaySummary, FpgaError> {
    let mut sum = ReplaySummary::default();
    for (n, line) in input.lines().enumerate() {
        let line = line.map_err(|e| FpgaError::io("reading vectors", e))?;
        let text = line.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let values = text
            .split_whitespace()
            .map(|w| {
                let w = w.trim_start_matches("0x").trim_start_matches("0X");
                u64::from_str_radix(w, 16).map_err(|_| {
                    FpgaError::BadRequest(format!("line {}: `{w}` is not a hex number", n + 1))
                })
            })
            .collect::<Result<Vec<u64>, FpgaError>>()?;
        let resp = exchange(link, layout, &values)
            .map_err(|e| FpgaError::Link(format!("line {}: {e}", n + 1)))?;
        sum.vectors += 1;
        if !resp.valid {
            sum.not_valid += 1;
        }
        let words: Vec<String> = layout
            .outputs
            .iter()
            .zip(&resp.outputs)
            .map(|(p, v)| format!("{:0width$x}", v, width = p.width.div_ceil(4) as usize))
            .collect();
        writeln!(output, "{}", words.join(" ")).map_err(|e| FpgaError::io("writing results", e))?;
    }
    output
        .flush()
        .map_err(|e| FpgaError::io("writing results", e))?;
    Ok(sum)
}
