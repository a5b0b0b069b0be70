//! Board builds: a core inside the UART [`shell`], placed with the board's
//! pin constraints (`constraints/`, compiled into the crate) and packed to a bitstream.
//!
//! | board | device | clock | constraints | bitstream |
//! |---|---|---|---|---|
//! | `icebreaker` | iCE40UP5K-SG48 | 12 MHz | `icebreaker.pcf` | `fp8gen_board.bin` (icepack) |
//! | `ulx3s-25f` / `ulx3s-85f` | ECP5 25F / 85F CABGA381 | 25 MHz | `ulx3s.lpf` | `fp8gen_board.bit` (ecppack) |
//! | `tangnano9k` | GW1NR-9C | 27 MHz | `tangnano9k.cst` | `fp8gen_board.fs` (gowin_pack) |

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::build_dir::BuildDir;
use crate::flow::{self, write};
use crate::shell::{self, ShellLayout, ShellOptions, SHELL_TOP};
use crate::tools::{self, Tool};
use crate::{Arch, Core, FpgaError, Target};

/// A supported board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Board {
    /// 1BitSquared iCEBreaker (iCE40UP5K).
    #[serde(rename = "icebreaker")]
    IceBreaker,
    /// Radiona ULX3S with an LFE5U-25F.
    #[serde(rename = "ulx3s-25f")]
    Ulx3s25,
    /// Radiona ULX3S with an LFE5U-85F.
    #[serde(rename = "ulx3s-85f")]
    Ulx3s85,
    /// Sipeed Tang Nano 9K (GW1NR-9C).
    #[serde(rename = "tangnano9k")]
    TangNano9k,
}

const ICEBREAKER_PCF: &str = include_str!("../../constraints/icebreaker.pcf");
const ULX3S_LPF: &str = include_str!("../../constraints/ulx3s.lpf");
const TANGNANO9K_CST: &str = include_str!("../../constraints/tangnano9k.cst");

impl Board {
    /// Every board.
    pub const ALL: [Board; 4] = [
        Board::IceBreaker,
        Board::Ulx3s25,
        Board::Ulx3s85,
        Board::TangNano9k,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Board::IceBreaker => "icebreaker",
            Board::Ulx3s25 => "ulx3s-25f",
            Board::Ulx3s85 => "ulx3s-85f",
            Board::TangNano9k => "tangnano9k",
        }
    }

    /// The FPGA on the board.
    pub fn target(self) -> Target {
        match self {
            Board::IceBreaker => Target::Ice40Up5k,
            Board::Ulx3s25 => Target::Ecp5_25k,
            Board::Ulx3s85 => Target::Ecp5_85k,
            Board::TangNano9k => Target::GowinGw1nr9,
        }
    }

    /// Frequency of the board oscillator wired to `clk`, Hz.
    pub fn clk_hz(self) -> u64 {
        match self {
            Board::IceBreaker => 12_000_000,
            Board::Ulx3s25 | Board::Ulx3s85 => 25_000_000,
            Board::TangNano9k => 27_000_000,
        }
    }

    /// Constraint file name and text (from `constraints/`).
    pub fn constraints(self) -> (&'static str, &'static str) {
        match self {
            Board::IceBreaker => ("icebreaker.pcf", ICEBREAKER_PCF),
            Board::Ulx3s25 | Board::Ulx3s85 => ("ulx3s.lpf", ULX3S_LPF),
            Board::TangNano9k => ("tangnano9k.cst", TANGNANO9K_CST),
        }
    }

    /// Shell settings (LED count and polarity).
    pub fn shell_options(self) -> ShellOptions {
        let heartbeat_log2 = (63 - self.clk_hz().leading_zeros()) - 1; // ~0.5 s per toggle
        match self {
            Board::IceBreaker | Board::TangNano9k => ShellOptions {
                leds: 2,
                leds_active_low: true,
                heartbeat_log2,
            },
            Board::Ulx3s25 | Board::Ulx3s85 => ShellOptions {
                leds: 2,
                leds_active_low: false,
                heartbeat_log2,
            },
        }
    }

    /// File name of the bitstream a build produces.
    pub fn bitstream_name(self) -> &'static str {
        match self.target().arch() {
            Arch::Ice40 => "fp8gen_board.bin",
            Arch::Ecp5 => "fp8gen_board.bit",
            Arch::Gowin => "fp8gen_board.fs",
        }
    }

    /// How to load the bitstream (for messages and docs).
    pub fn program_hint(self) -> &'static str {
        match self {
            Board::IceBreaker => "iceprog fp8gen_board.bin",
            Board::Ulx3s25 | Board::Ulx3s85 => {
                "openFPGALoader -b ulx3s fp8gen_board.bit (or fujprog)"
            }
            Board::TangNano9k => "openFPGALoader -b tangnano9k fp8gen_board.fs",
        }
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Board {
    type Err = FpgaError;
    fn from_str(s: &str) -> Result<Board, FpgaError> {
        let l = s.to_ascii_lowercase();
        let alias = match l.as_str() {
            "ulx3s" => "ulx3s-85f",
            "tang-nano-9k" | "tangnano-9k" => "tangnano9k",
            other => other,
        };
        Board::ALL
            .into_iter()
            .find(|b| b.name() == alias)
            .ok_or_else(|| {
                FpgaError::BadRequest(format!(
                    "unknown board `{s}`; choose one of: {}",
                    Board::ALL.map(|b| b.name()).join(", ")
                ))
            })
    }
}

/// One board build.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardRequest {
    /// The board.
    pub board: Board,
    /// The core to put on it.
    pub core: Core,
    /// Serial baud rate (115200 is safe on all three boards).
    pub baud: u32,
    /// Output directory (new, empty, or an earlier `board` build's, which is replaced; see
    /// [`iface::outdir`]): bitstream, `shell.json`, Verilog, logs and reports are written there.
    pub out_dir: PathBuf,
    /// Allow DSP blocks.
    pub use_dsp: bool,
    /// nextpnr seed.
    pub seed: u32,
}

impl BoardRequest {
    /// A request with 115200 baud, DSP allowed, seed 1.
    pub fn new(board: Board, core: Core, out_dir: impl Into<PathBuf>) -> BoardRequest {
        BoardRequest {
            board,
            core,
            baud: 115_200,
            out_dir: out_dir.into(),
            use_dsp: true,
            seed: 1,
        }
    }
}

/// Result of [`board_build`] (also written as `build.json` in the output directory).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardBuildReport {
    /// The board.
    pub board: Board,
    /// Its FPGA.
    pub target: Target,
    /// The bitstream.
    pub bitstream: PathBuf,
    /// Host-side description of the shell (also in `shell.json`).
    pub layout: ShellLayout,
    /// Fmax of the whole board design, MHz.
    pub fmax_mhz: f64,
    /// Whether the board clock is met. For a combinational core the shell waits 16 cycles,
    /// so a slower core still works (multicycle path) even when this is false.
    pub timing_met: bool,
    /// Used resources of the whole design.
    pub pnr_utilization: std::collections::BTreeMap<String, (u64, u64)>,
    /// How to load the bitstream.
    pub program: String,
}

/// The bitstream packer of a target.
fn pack_tool(target: Target) -> Tool {
    match target.arch() {
        Arch::Ice40 => Tool::Icepack,
        Arch::Ecp5 => Tool::Ecppack,
        Arch::Gowin => Tool::GowinPack,
    }
}

/// Builds a bitstream of `req.core` inside the UART shell for `req.board`.
pub fn board_build(req: &BoardRequest) -> Result<BoardBuildReport, FpgaError> {
    req.core.validate(64)?;
    let out = crate::build_dir::prepare_output(&req.out_dir, "board", "-o")?;
    let board = req.board;
    let target = board.target();
    let layout = ShellLayout::new(&req.core, board.clk_hz(), req.baud)?;
    let yosys = tools::find(Tool::Yosys)?;
    let pnr_tool = flow::nextpnr_tool(target);
    let nextpnr = tools::find(pnr_tool)?;
    let pack = tools::find(pack_tool(target))?;

    let mut bd = BuildDir::new("fp8gen-board", Some(out))?;
    match build_in(req, &layout, &yosys, &nextpnr, &pack, bd.path()) {
        Ok(mut rep) => {
            let dest = bd.finish()?.unwrap_or_else(|| req.out_dir.clone());
            rep.bitstream = dest.join(board.bitstream_name());
            Ok(rep)
        }
        Err(e) => {
            if matches!(e, FpgaError::ToolFailed { .. }) {
                bd.keep_for_debugging();
            }
            Err(e)
        }
    }
}

fn build_in(
    req: &BoardRequest,
    layout: &ShellLayout,
    yosys: &Path,
    nextpnr: &Path,
    pack: &Path,
    dir: &Path,
) -> Result<BoardBuildReport, FpgaError> {
    let board = req.board;
    let target = board.target();
    let shell_v = shell::shell_verilog(&req.core, layout, &board.shell_options());
    write(dir, "core.v", &req.core.verilog)?;
    write(dir, "shell.v", &shell_v)?;
    let layout_json = serde_json::to_string_pretty(layout)
        .map_err(|e| FpgaError::Parse(format!("serialising shell layout: {e}")))?;
    write(dir, "shell.json", &(layout_json + "\n"))?;
    let (cname, ctext) = board.constraints();
    write(dir, cname, ctext)?;

    let script = flow::yosys_script(target, &["core.v", "shell.v"], SHELL_TOP, req.use_dsp);
    flow::run_yosys(yosys, dir, &script)?;

    let mhz = board.clk_hz() as f64 / 1e6;
    let args = flow::nextpnr_args(target, Some(cname), true, mhz, req.seed);
    flow::run_nextpnr(target, nextpnr, &args, dir)?;
    let bit = board.bitstream_name();
    let placed = flow::placed_file(target.arch());
    let pack_args: Vec<String> = match target.arch() {
        Arch::Ice40 => vec![placed.into(), bit.into()],
        Arch::Ecp5 => vec!["--compress".into(), placed.into(), bit.into()],
        Arch::Gowin => vec![
            "-d".into(),
            target.gowin_pack_device().unwrap_or("GW1N-9C").into(),
            "-o".into(),
            bit.into(),
            placed.into(),
        ],
    };
    let packer = pack_tool(target);
    tools::run(packer, pack, &pack_args, dir, "pack.log", None)?;
    let meta = std::fs::metadata(dir.join(bit))
        .map_err(|e| FpgaError::io(format!("{} did not write {bit}", packer.role()), e))?;
    if meta.len() == 0 {
        return Err(FpgaError::Parse(format!(
            "{} wrote an empty {bit}",
            packer.role()
        )));
    }
    let pnr = flow::read_pnr(dir)?;
    let rep = BoardBuildReport {
        board,
        target,
        bitstream: PathBuf::from(bit),
        layout: layout.clone(),
        fmax_mhz: pnr
            .fmax()
            .map(|f| (f * 100.0).round() / 100.0)
            .unwrap_or(0.0),
        timing_met: pnr.met(),
        pnr_utilization: pnr.utilization,
        program: board.program_hint().to_string(),
    };
    let json = serde_json::to_string_pretty(&rep)
        .map_err(|e| FpgaError::Parse(format!("serialising build report: {e}")))?;
    write(dir, "build.json", &(json + "\n"))?;
    Ok(rep)
}
