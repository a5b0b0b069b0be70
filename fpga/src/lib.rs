//! # fp8gen FPGA flow
//!
//! Open-toolchain synthesis of a core for QoR numbers ([`synth`]), board builds that wrap a
//! core in a UART test shell and produce a bitstream ([`board_build`]), and the host side
//! that replays vectors over the serial line ([`board_test_serial`], [`exchange`]).
//!
//! The tools are YoWASP yosys / nextpnr (installed by `scripts/setup-fpga.sh` into the
//! project's `.venv`), native yosys / nextpnr on `PATH`, or explicit overrides (see
//! [`tools`]). Every tool runs with its working directory set to a private build directory
//! and is handed relative paths only (YoWASP tools run in a WASI sandbox); results are read
//! from the files they write (`-l`, `--report`, `stat -json`), never from their stdout.
//!
//! This crate owns: the core as the flow sees it ([`Core`], built from a `manifest.json` by
//! [`Core::from_manifest`]; its ports are the shared [`iface::Port`]s), the devices
//! ([`Target`]), the synthesis wrapper ([`wrapper`]), the yosys script and nextpnr
//! arguments ([`flow`]), report parsing ([`report`]), tool discovery ([`tools`]), private
//! build directories ([`build_dir`]), the board UART shell ([`shell`]), boards and their
//! pin constraints ([`board`]), the serial host ([`host`]) and the reference cores
//! ([`refcores`]). The `fp8gen synth` / `board` / `board-test` commands only parse
//! arguments and print what this crate returns.

#![forbid(unsafe_code)]

pub mod board;
pub mod build_dir;
pub mod delay;
pub mod flow;
pub mod host;
pub mod refcores;
pub mod report;
pub mod shell;
pub mod tools;
pub mod wrapper;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use board::{board_build, Board, BoardBuildReport, BoardRequest};
pub use flow::{synth, SynthReport, SynthRequest};
pub use host::{board_test_serial, exchange, open_serial, ReplaySummary, Response};
pub use iface::{Direction, Manifest, Port, Role};
pub use shell::ShellLayout;

/// A Verilog core as the FPGA flow sees it: source text, top module, ports, latency.
///
/// Ports use the shared interface vocabulary ([`iface::Port`]). Which ports are data and
/// which are driven by the wrappers follows the simulator ([`Core::is_data`]): clock and
/// resets are always control; `valid_in` / `valid_out` are the handshake of a clocked core
/// and plain wires of a combinational one (the board shell ties such a `valid_in` to 1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Core {
    /// Complete Verilog-2005 source of the core (may hold several modules).
    pub verilog: String,
    /// Name of the core's top module.
    pub top: String,
    /// Every port of the top module.
    pub ports: Vec<Port>,
    /// Pipeline latency in clock cycles (0 for a combinational core).
    #[serde(default)]
    pub latency: u32,
}

/// Names the wrappers use for themselves; a core must not use them as module names.
pub(crate) const RESERVED_MODULES: [&str; 3] = [
    wrapper::WRAPPER_TOP,
    shell::SHELL_TOP,
    shell::SHELL_UART_MODULE,
];

impl Core {
    /// The core described by a manifest (`fp8gen gen`'s, or a hand-written one), with
    /// `verilog` the text of its source files (the manifest's `verilog` list, read and
    /// concatenated by the caller). Ports, roles, top module and latency are the manifest's.
    pub fn from_manifest(verilog: impl Into<String>, m: &Manifest) -> Core {
        Core {
            verilog: verilog.into(),
            top: m.top.clone(),
            ports: m.ports.clone(),
            latency: m.latency,
        }
    }

    /// Checks the port list ([`iface::check_ports`]: identifiers, widths, roles, latency)
    /// and the top module (not a wrapper's name, present in the source); the error names what
    /// is wrong.
    pub fn validate(&self, max_width: u32) -> Result<(), FpgaError> {
        let bad = |m: String| Err(FpgaError::BadCore(m));
        iface::check_ports(&self.top, &self.ports, self.latency, max_width)
            .map_err(FpgaError::BadCore)?;
        if RESERVED_MODULES.contains(&self.top.as_str()) {
            return bad(format!(
                "top module name `{}` is reserved for fp8gen's wrappers; rename the core",
                self.top
            ));
        }
        if !self.verilog.contains(&format!("module {}", self.top)) {
            return bad(format!(
                "the Verilog source has no `module {}`; pass the core's real top module name",
                self.top
            ));
        }
        Ok(())
    }

    /// Whether the core has a clock port (and is driven cycle by cycle).
    pub fn is_clocked(&self) -> bool {
        self.with_role(Role::Clock).is_some()
    }

    /// The first port with the given role.
    pub fn with_role(&self, role: Role) -> Option<&Port> {
        self.ports.iter().find(|p| p.role == role)
    }

    /// Whether `p` is data rather than control, as `sim::CoreSpec::is_data` decides: clock
    /// and resets are control; `valid_in` / `valid_out` are control on a clocked core (the
    /// handshake) and data on a combinational one; every other role is data.
    pub fn is_data(&self, p: &Port) -> bool {
        p.role.is_data(self.is_clocked(), false)
    }

    /// The inputs a test vector carries, in port order: the data inputs except `valid_in`,
    /// which the board shell drives itself (a one-cycle pulse per vector on a clocked core,
    /// constant 1 on a combinational one).
    pub fn operands(&self) -> impl Iterator<Item = &Port> {
        // The data of a clocked core ([`Role::is_data`]): never the handshake.
        self.ports
            .iter()
            .filter(|p| p.direction == Direction::Input && p.role.is_data(true, false))
    }

    /// The outputs a result carries, in port order: the data outputs except `valid_out`,
    /// which the board shell reports in its status byte.
    pub fn results(&self) -> impl Iterator<Item = &Port> {
        self.ports
            .iter()
            .filter(|p| p.direction == Direction::Output && p.role.is_data(true, false))
    }
}

/// An FPGA device the flow can place and route for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Target {
    /// Lattice iCE40 UP5K, SG48 package (iCEBreaker).
    #[serde(rename = "ice40-up5k")]
    Ice40Up5k,
    /// Lattice ECP5 LFE5U-25F, CABGA381.
    #[serde(rename = "ecp5-25k")]
    Ecp5_25k,
    /// Lattice ECP5 LFE5U-85F, CABGA381 (ULX3S 85F).
    #[serde(rename = "ecp5-85k")]
    Ecp5_85k,
    /// Gowin GW1NR-LV9QN88PC6/I5 (GW1NR-9C, Tang Nano 9K).
    #[serde(rename = "gowin-gw1nr9")]
    GowinGw1nr9,
}

/// The architecture family of a [`Target`]: which yosys `synth_*` and nextpnr to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// `synth_ice40` + `nextpnr-ice40` + `icepack`.
    Ice40,
    /// `synth_ecp5` + `nextpnr-ecp5` + `ecppack`.
    Ecp5,
    /// `synth_gowin` + `nextpnr-himbaechel` (gowin) + apycula `gowin_pack`.
    Gowin,
}

impl Target {
    /// Every target, in a fixed order.
    pub const ALL: [Target; 4] = [
        Target::Ice40Up5k,
        Target::Ecp5_25k,
        Target::Ecp5_85k,
        Target::GowinGw1nr9,
    ];

    /// Command-line name (`ice40-up5k`, `ecp5-25k`, `ecp5-85k`, `gowin-gw1nr9`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Ice40Up5k => "ice40-up5k",
            Target::Ecp5_25k => "ecp5-25k",
            Target::Ecp5_85k => "ecp5-85k",
            Target::GowinGw1nr9 => "gowin-gw1nr9",
        }
    }

    /// Architecture family.
    pub fn arch(self) -> Arch {
        match self {
            Target::Ice40Up5k => Arch::Ice40,
            Target::Ecp5_25k | Target::Ecp5_85k => Arch::Ecp5,
            Target::GowinGw1nr9 => Arch::Gowin,
        }
    }

    /// Device-selection arguments for nextpnr.
    pub fn nextpnr_device_args(self) -> Vec<String> {
        let v: &[&str] = match self {
            Target::Ice40Up5k => &["--up5k", "--package", "sg48"],
            Target::Ecp5_25k => &["--25k", "--package", "CABGA381"],
            Target::Ecp5_85k => &["--85k", "--package", "CABGA381"],
            Target::GowinGw1nr9 => &[
                "--device",
                "GW1NR-LV9QN88PC6/I5",
                "--vopt",
                "family=GW1N-9C",
            ],
        };
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Device name as `gowin_pack -d` wants it (Gowin only).
    pub fn gowin_pack_device(self) -> Option<&'static str> {
        match self {
            Target::GowinGw1nr9 => Some("GW1N-9C"),
            _ => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Target {
    type Err = FpgaError;
    fn from_str(s: &str) -> Result<Target, FpgaError> {
        let l = s.to_ascii_lowercase();
        Target::ALL
            .into_iter()
            .find(|t| t.name() == l)
            .ok_or_else(|| {
                FpgaError::BadRequest(format!(
                    "unknown target `{s}`; choose one of: {}",
                    Target::ALL.map(|t| t.name()).join(", ")
                ))
            })
    }
}

/// Everything that can go wrong in the FPGA flow. Messages say what failed and what to do.
#[derive(Debug)]
pub enum FpgaError {
    /// A required tool was not found anywhere.
    ToolMissing {
        /// The tool's role (e.g. `yosys`, `nextpnr-ice40`).
        tool: String,
        /// Where it was looked for.
        searched: Vec<String>,
    },
    /// A tool ran and failed.
    ToolFailed {
        /// The tool's role.
        tool: String,
        /// Exit status as text.
        status: String,
        /// Log file holding the full output (inside the build directory).
        log: PathBuf,
        /// The last lines of its log / stderr.
        tail: String,
    },
    /// The core description is inconsistent.
    BadCore(String),
    /// The request is inconsistent (unknown target, bad frequency, output exists …).
    BadRequest(String),
    /// A tool's report could not be understood.
    Parse(String),
    /// File-system or serial I/O failed.
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The board (or the simulated board) answered wrongly or not at all.
    Link(String),
    /// The output directory cannot be used ([`iface::outdir`]): what and what to do.
    Output(String),
}

impl FpgaError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> FpgaError {
        FpgaError::Io {
            context: context.into(),
            source,
        }
    }
}

impl fmt::Display for FpgaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FpgaError::ToolMissing { tool, searched } => write!(
                f,
                "FPGA tool `{tool}` not found (looked for: {}); run `scripts/setup-fpga.sh` \
                 in the fp8gen checkout to install the pinned YoWASP toolchain into .venv, \
                 or set FP8GEN_VENV / {} to an existing installation",
                searched.join(", "),
                tools::env_var_for(tool)
            ),
            FpgaError::ToolFailed {
                tool,
                status,
                log,
                tail,
            } => write!(
                f,
                "{tool} failed ({status}); full log: {}\n{tail}",
                log.display()
            ),
            FpgaError::BadCore(m) => write!(f, "invalid core: {m}"),
            FpgaError::BadRequest(m) => write!(f, "invalid request: {m}"),
            FpgaError::Parse(m) => write!(f, "could not read tool report: {m}"),
            FpgaError::Io { context, source } => write!(f, "{context}: {source}"),
            FpgaError::Link(m) => write!(f, "board link: {m}"),
            FpgaError::Output(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FpgaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FpgaError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
