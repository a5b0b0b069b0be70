//! Turning Verilog into a loadable shared library: the N-lane wrapper, the C ABI harness,
//! `verilator --cc`, the C++ compile (model files in parallel, Verilator's runtime compiled
//! once per toolchain and cached) and the link, all keyed and cached under the cache dir.
//!
//! The C++ compiler is invoked directly (`$CXX`, else `c++`/`g++`/`clang++`) rather than
//! through the `cc` crate: the flags are fixed, we need a shared object (not a static
//! archive for cargo), and a direct call gives us the exact command for error messages.
//!
//! Wrapper ports are named by position (`l<lane>_i<k>`, `l<lane>_o<k>`, `sim_clk`, `sim_rst`)
//! so user port names never collide with C++ keywords or Verilator's name mangling.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::cache::{
    default_cache_dir, discard_entry, entry_ok, evict, make_temp_dir, max_models_bytes, publish,
    sweep_temp, write_stamp, KeyHasher,
};
use crate::error::{error_excerpt, Result, SimError};
use crate::spec::{CoreSpec, Direction, Role};
use crate::toolchain::Toolchain;
use iface::ParamValue;
use std::collections::BTreeMap;

/// Version of the generated harness and C ABI; part of every cache key.
pub const HARNESS_VERSION: u32 = 3;

/// One source file of a core: on disk (handed to Verilator by its absolute path, so that its
/// relative `` `include``s resolve) or in memory (written into the build directory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// The absolute path of a file on disk, or `None` for generated text.
    pub path: Option<PathBuf>,
    /// File name (its extension selects Verilog or SystemVerilog).
    pub name: String,
    /// The text (part of the cache key).
    pub text: String,
}

/// Everything Verilator reads to elaborate a core: files in order, include directories,
/// defines and top-level parameter overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sources {
    /// Source files in compilation order.
    pub files: Vec<SourceFile>,
    /// Include directories (absolute); their files are part of the cache key.
    pub include_dirs: Vec<PathBuf>,
    /// Preprocessor defines (`""` = bare define).
    pub defines: BTreeMap<String, String>,
    /// Parameter overrides of the top module.
    pub parameters: BTreeMap<String, ParamValue>,
}

impl Sources {
    /// A hash of what Verilator reads (file texts and languages, include files, defines,
    /// parameters): the same core generated or read back from disk has the same hash, so
    /// sweep summaries can refuse to combine runs of different cores.
    pub fn content_hash(&self) -> String {
        let mut key = KeyHasher::new();
        self.hash_into(&mut key);
        key.hex()
    }

    /// [`Sources::content_hash`], and when the preprocessor read included files, their
    /// contents and the preprocessed text too: summaries of one core with different includes
    /// never merge. (Without includes it equals `content_hash`, so a sweep planned from a
    /// generated core agrees with its shards.)
    pub fn content_hash_with(&self, pre: &Preprocessed) -> String {
        let mut key = KeyHasher::new();
        self.hash_into(&mut key);
        if !pre.file_texts.is_empty() {
            pre.hash_into(&mut key);
        }
        key.hex()
    }

    /// One generated Verilog text.
    pub fn verilog(text: impl Into<String>) -> Sources {
        Sources {
            files: vec![SourceFile {
                path: None,
                name: "core.v".into(),
                text: text.into(),
            }],
            ..Sources::default()
        }
    }

    /// The sources a manifest names, read from disk relative to `dir`. Errors name the file.
    pub fn from_manifest(m: &iface::Manifest, dir: &Path) -> Result<Sources> {
        let abs = |p: PathBuf| -> PathBuf {
            if p.is_absolute() {
                p
            } else {
                std::env::current_dir().map(|c| c.join(&p)).unwrap_or(p)
            }
        };
        let mut files = Vec::new();
        for p in m.source_paths(dir) {
            let text = iface::read_text_bounded(&p, iface::MAX_SOURCE_BYTES, "source files")
                .map_err(|e| {
                    SimError::InvalidSpec(match &e.io {
                        Some(io) => format!(
                            "cannot read the source file {} named by the manifest: {io}",
                            p.display()
                        ),
                        None => format!(
                            "source file named by the manifest: {e}; a manifest names regular Verilog files"
                        ),
                    })
                })?;
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "core.v".into());
            files.push(SourceFile {
                path: Some(abs(p)),
                name,
                text,
            });
        }
        let mut include_dirs = Vec::new();
        for d in m.include_paths(dir) {
            if !d.is_dir() {
                return Err(SimError::InvalidSpec(format!(
                    "include directory {} named by the manifest does not exist",
                    d.display()
                )));
            }
            // Every regular file of an include directory is hashed into the cache key: each
            // must be a readable size; a FIFO or a device there (which Verilator would block
            // on or read without end) is refused, never opened.
            for f in fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = f.path();
                if let Some(t) = fs::metadata(&p)
                    .ok()
                    .map(|m| m.file_type())
                    .filter(|t| !t.is_file() && !t.is_dir())
                {
                    return Err(SimError::InvalidSpec(format!(
                        "{} (in include directory {}) is {}, not a regular file; include directories hold Verilog files",
                        p.display(),
                        d.display(),
                        iface::kind_of(t)
                    )));
                }
                if let Some(meta) = fs::metadata(&p).ok().filter(|m| m.is_file()) {
                    if meta.len() > iface::MAX_SOURCE_BYTES {
                        return Err(SimError::InvalidSpec(format!(
                            "{} (in include directory {}) is {}; source files over {} are refused",
                            p.display(),
                            d.display(),
                            iface::human_size(meta.len()),
                            iface::human_size(iface::MAX_SOURCE_BYTES)
                        )));
                    }
                }
            }
            include_dirs.push(abs(d));
        }
        Ok(Sources {
            files,
            include_dirs,
            defines: m.defines.clone(),
            parameters: m.parameters.clone(),
        })
    }

    /// Whether any file declares `module <name>`.
    fn declares(&self, name: &str) -> bool {
        self.files.iter().any(|f| declares_module(&f.text, name))
    }

    /// The defines as `NAME` / `NAME=VALUE`, for summaries.
    pub fn define_list(&self) -> Vec<String> {
        self.defines
            .iter()
            .map(|(k, v)| {
                if v.is_empty() {
                    k.clone()
                } else {
                    format!("{k}={v}")
                }
            })
            .collect()
    }

    /// Runs Verilator's preprocessor (`verilator -E`) over the files in order with the
    /// include directories and defines the simulation build uses: the one text that
    /// simulation, proof and synthesis compile (see [`Preprocessed`]). In-memory files are
    /// written into a private directory under `cache` first. Errors: the preprocessor's
    /// (a missing include, an unterminated `` `ifdef``), and a module defined twice.
    pub fn preprocess(&self, tc: &Toolchain, cache: &Path) -> Result<Preprocessed> {
        if self.files.is_empty() {
            return Err(SimError::InvalidSpec("no source file given".into()));
        }
        let tmp = make_temp_dir(cache, "pre")?;
        let r = self.preprocess_in(tc, &tmp);
        // A failed run's directory is kept for inspection (the error names it), like a build's.
        if !matches!(r, Err(SimError::Verilator { .. })) {
            let _ = fs::remove_dir_all(&tmp);
        }
        r
    }

    fn preprocess_in(&self, tc: &Toolchain, tmp: &Path) -> Result<Preprocessed> {
        // In-memory files get the names the build gives them; `line markers naming them are
        // mapped back to those names (not the private directory's path).
        let mut args: Vec<String> = Vec::new();
        let mut memory_names: Vec<(String, String)> = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            match &f.path {
                Some(p) => args.push(p.display().to_string()),
                None => {
                    let name = if self.files.len() == 1 {
                        f.name.clone()
                    } else {
                        format!("{i}_{}", f.name)
                    };
                    let path = tmp.join(&name);
                    fs::write(&path, &f.text)
                        .map_err(|e| SimError::io(format!("writing {}", path.display()), e))?;
                    memory_names.push((path.display().to_string(), f.name.clone()));
                    args.push(path.display().to_string());
                }
            }
        }
        let mut cmd = Command::new(&tc.verilator);
        // `--no-timing` as in the build (`--timing` would define VERILATOR_TIMING).
        cmd.current_dir(tmp).arg("-E").arg("--no-timing");
        cmd.args(preprocessor_flags(self));
        cmd.args(&args);
        let line = command_line(&cmd);
        let out = cmd
            .output()
            .map_err(|e| SimError::io(format!("running `{line}`"), e))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            return Err(SimError::Verilator {
                command: line,
                build_dir: tmp.to_path_buf(),
                stderr_tail: error_excerpt(&err, 10, 20),
            });
        }
        let display_name = |file: &str| -> String {
            memory_names
                .iter()
                .find(|(p, _)| p == file)
                .map(|(_, n)| n.clone())
                .unwrap_or_else(|| file.to_string())
        };
        let mut text = String::new();
        let mut files: Vec<String> = Vec::new();
        let mut file_texts: Vec<Vec<u8>> = Vec::new();
        let mut modules: Vec<(String, String)> = Vec::new();
        let mut current = String::new();
        for l in stdout.lines() {
            if let Some(rest) = l.trim_start().strip_prefix("`line ") {
                if let Some(name) = rest.split('"').nth(1) {
                    current = display_name(name);
                    if !files.contains(&current) {
                        files.push(current.clone());
                        // Listed sources are keyed by their text already ([`Sources::hash_into`]).
                        if !args.iter().any(|a| a == name) {
                            file_texts.push(fs::read(name).unwrap_or_default());
                        }
                    }
                }
                continue;
            }
            for m in module_names(l) {
                if let Some((_, first)) = modules.iter().find(|(n, _)| *n == m) {
                    let where_ = if *first == current {
                        format!("twice in {current}")
                    } else {
                        format!("in {first} and in {current}")
                    };
                    return Err(SimError::InvalidSpec(format!(
                        "module `{m}` is defined {where_}; tools disagree on which definition they compile (Verilator takes the first, others the last or refuse): remove one of them or rename it"
                    )));
                }
                modules.push((m, current.clone()));
            }
            text.push_str(l);
            text.push('\n');
        }
        Ok(Preprocessed {
            text,
            files,
            file_texts,
            modules: modules.into_iter().map(|(m, _)| m).collect(),
        })
    }

    /// Cache-key fields: every file's name and text, the include directories' files, defines
    /// and parameters.
    fn hash_into(&self, key: &mut KeyHasher) {
        // A file is keyed by its text and language (extension); its path only matters when
        // it includes other files (relative includes resolve next to it), so the same core
        // generated in memory or read from a directory is the same cache entry.
        for f in &self.files {
            let ext = Path::new(&f.name)
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default();
            key.field("lang", ext.as_bytes());
            if let Some(p) = f.path.as_ref().filter(|_| f.text.contains("`include")) {
                key.field("path", p.to_string_lossy().as_bytes());
            }
            key.field("text", f.text.as_bytes());
        }
        for d in &self.include_dirs {
            key.field("incdir", d.to_string_lossy().as_bytes());
            let mut names: Vec<PathBuf> = fs::read_dir(d)
                .map(|rd| {
                    rd.flatten()
                        .map(|e| e.path())
                        .filter(|p| p.is_file())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            for n in names {
                key.field("inc", n.to_string_lossy().as_bytes());
                match iface::read_bounded(&n, iface::MAX_SOURCE_BYTES, "source files") {
                    Ok(text) => key.field("inc-text", &text),
                    // Changed since it was checked: a key no other build has.
                    Err(e) => key.field(
                        "inc-unreadable",
                        format!(
                            "{e} {} {:?}",
                            std::process::id(),
                            std::time::SystemTime::now()
                        )
                        .as_bytes(),
                    ),
                };
            }
        }
        for (k, v) in &self.defines {
            key.field("define", format!("{k}={v}").as_bytes());
        }
        for (k, v) in &self.parameters {
            key.field("param", format!("{k}={v}").as_bytes());
        }
    }
}

/// The sources after Verilator's preprocessor: the one text simulation, proof and synthesis
/// compile. Includes are inlined, `` `ifdef``s resolved with the manifest's defines plus
/// Verilator's own predefined macros (`VERILATOR`, `SYSTEMVERILOG`, ...), comments removed.
/// Tools that read it later (yosys with `read_verilog -formal`, which defines `FORMAL`) find
/// no conditional left, so every tool compiles the same logic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preprocessed {
    /// The preprocessed text (`` `line`` markers removed).
    pub text: String,
    /// Every file the preprocessor read (sources and included files), first-read order;
    /// in-memory files by name.
    pub files: Vec<String>,
    /// The contents of the files read that are not listed sources (the included files).
    file_texts: Vec<Vec<u8>>,
    /// The modules the text defines, in order.
    pub modules: Vec<String>,
}

impl Preprocessed {
    /// Cache-key fields: the text and the contents of every included file, so an edited
    /// include, at any depth and wherever it was found, changes the key. (Names are not
    /// keyed: the same core generated in memory or read from a directory is one entry.)
    fn hash_into(&self, key: &mut KeyHasher) {
        key.field("pre-text", self.text.as_bytes());
        for t in &self.file_texts {
            key.field("include-text", t);
        }
    }
}

/// The module names declared on one preprocessed line (`module`/`macromodule` followed by an
/// optional lifetime and the name; string literals skipped).
fn module_names(line: &str) -> Vec<String> {
    let mut words: Vec<&str> = Vec::new();
    let mut in_str = false;
    let mut start: Option<usize> = None;
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if in_str {
            if c == '\\' {
                i += 1;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            if let Some(s) = start.take() {
                words.push(&line[s..i]);
            }
            in_str = true;
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '\\' {
            if start.is_none() {
                start = Some(i);
            }
            if c == '\\' {
                // An escaped identifier runs to the next white space.
                while i + 1 < b.len() && !(b[i + 1] as char).is_whitespace() {
                    i += 1;
                }
            }
        } else if let Some(s) = start.take() {
            words.push(&line[s..i]);
        }
        i += 1;
    }
    if let Some(s) = start {
        words.push(&line[s..]);
    }
    let mut names = Vec::new();
    let mut it = words.iter().peekable();
    while let Some(w) = it.next() {
        if *w == "module" || *w == "macromodule" {
            if it
                .peek()
                .is_some_and(|n| **n == "automatic" || **n == "static")
            {
                it.next();
            }
            if let Some(n) = it.next() {
                names.push(n.to_string());
            }
        }
    }
    names
}

/// Verilator's own predefined macros that tell the text it is being simulated by Verilator.
/// They are undefined for every compile (the preprocessed text, the model build, the proof),
/// so a core cannot verify one branch of an `` `ifdef VERILATOR `` and be synthesized from the
/// other: the text checked is the one a tool without simulator macros reads, plus the
/// manifest's `defines` (a core that needs one of these defines it there).
pub const SIMULATOR_MACROS: [&str; 3] = ["VERILATOR", "verilator", "verilator3"];

/// Verilator's preprocessor flags of a build: include directories, the simulator's own
/// macros undefined ([`SIMULATOR_MACROS`]), and the manifest's defines.
fn preprocessor_flags(sources: &Sources) -> Vec<String> {
    let mut f = Vec::new();
    for m in SIMULATOR_MACROS {
        f.push(format!("-U{m}"));
    }
    for d in &sources.include_dirs {
        f.push(format!("-I{}", d.display()));
    }
    for (k, v) in &sources.defines {
        f.push(if v.is_empty() {
            format!("+define+{k}")
        } else {
            format!("+define+{k}={v}")
        });
    }
    f
}

/// Name of the generated wrapper module (the Verilator top).
pub const WRAPPER_MODULE: &str = "fp8gen_sim_top";

/// Largest supported lane count.
pub const MAX_LANES: u32 = 256;

/// How to build a model.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Number of copies of the core evaluated by one `eval()` (1..=256). Lanes are
    /// invisible to the Rust API; more lanes amortise Verilator's per-eval overhead.
    pub lanes: u32,
    /// Build with `--trace` (VCD output). Trace builds are for replays, not throughput.
    pub trace: bool,
    /// Cache directory; `None` = [`default_cache_dir`].
    pub cache_dir: Option<PathBuf>,
    /// Optimisation level for the model's hot C++ files (`-O<n>`, 0..=3).
    pub opt_level: u8,
    /// Build for the x/z check: Verilator gives every explicit x and every uninitialised
    /// variable a random value drawn from the seed of [`ModelLibrary::set_seed`]
    /// (`--x-assign unique --x-initial unique`) instead of a fixed one.
    ///
    /// [`ModelLibrary::set_seed`]: crate::ModelLibrary::set_seed
    pub random_x: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            lanes: 16,
            trace: false,
            cache_dir: None,
            opt_level: 2,
            random_x: false,
        }
    }
}

impl BuildOptions {
    /// Options with the given lane count.
    pub fn with_lanes(mut self, lanes: u32) -> Self {
        self.lanes = lanes;
        self
    }

    /// The cache directory these options resolve to.
    pub fn resolved_cache_dir(&self) -> PathBuf {
        absolute(self.cache_dir.clone().unwrap_or_else(default_cache_dir))
    }
}

/// `p` made absolute against the working directory: the tools run in build directories of
/// their own, where a relative cache path (`FP8GEN_CACHE=cache`) would name another place.
fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() {
        return p;
    }
    std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
}

/// A finished build on disk.
#[derive(Clone, Debug)]
pub(crate) struct BuiltModel {
    pub so_path: PathBuf,
    pub dir: PathBuf,
    pub cache_hit: bool,
    pub seconds: f64,
}

/// Per-lane raw port lists of the harness: data inputs then `valid_in`; data outputs then
/// `valid_out`. Each entry is (index into `spec.ports`).
pub(crate) struct RawLayout {
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
}

impl RawLayout {
    pub(crate) fn of(spec: &CoreSpec) -> RawLayout {
        let idx = |pred: &dyn Fn(usize) -> bool| -> Vec<usize> {
            (0..spec.ports.len()).filter(|&i| pred(i)).collect()
        };
        let data =
            |i: usize, d: Direction| spec.is_data(&spec.ports[i]) && spec.ports[i].direction == d;
        let hs = spec.has_valid();
        let mut inputs = idx(&|i| data(i, Direction::Input));
        inputs.extend(idx(&|i| hs && spec.ports[i].role == Role::ValidIn));
        let mut outputs = idx(&|i| data(i, Direction::Output));
        outputs.extend(idx(&|i| hs && spec.ports[i].role == Role::ValidOut));
        RawLayout { inputs, outputs }
    }
}

/// The Verilog wrapper instantiating `lanes` copies of the core.
pub(crate) fn wrapper_verilog(
    spec: &CoreSpec,
    lanes: u32,
    parameters: &BTreeMap<String, ParamValue>,
) -> String {
    let layout = RawLayout::of(spec);
    let clocked = spec.is_clocked();
    let has_reset =
        spec.port_with_role(Role::Reset).is_some() || spec.port_with_role(Role::ResetN).is_some();
    let mut decls: Vec<String> = Vec::new();
    if clocked {
        decls.push("input wire sim_clk".into());
    }
    if has_reset {
        decls.push("input wire sim_rst".into());
    }
    for l in 0..lanes {
        for (k, &pi) in layout.inputs.iter().enumerate() {
            let w = spec.ports[pi].width;
            decls.push(format!("input wire [{}:0] l{l}_i{k}", w - 1));
        }
        for (k, &pi) in layout.outputs.iter().enumerate() {
            let w = spec.ports[pi].width;
            decls.push(format!("output wire [{}:0] l{l}_o{k}", w - 1));
        }
    }
    let mut v = String::new();
    let _ = writeln!(
        v,
        "// fp8gen simulation wrapper (harness v{HARNESS_VERSION}): {lanes} lane(s) of `{}`.",
        spec.top
    );
    let _ = writeln!(v, "module {WRAPPER_MODULE} (");
    let _ = writeln!(v, "  {}", decls.join(",\n  "));
    let _ = writeln!(v, ");");
    for l in 0..lanes {
        let mut conns: Vec<String> = Vec::new();
        for p in &spec.ports {
            let expr = match p.role {
                Role::Clock => "sim_clk".to_string(),
                Role::Reset => "sim_rst".to_string(),
                Role::ResetN => "~sim_rst".to_string(),
                _ => {
                    let pi = spec
                        .ports
                        .iter()
                        .position(|q| q.name == p.name)
                        .unwrap_or(0);
                    if p.direction == Direction::Input {
                        let k = layout.inputs.iter().position(|&x| x == pi).unwrap_or(0);
                        format!("l{l}_i{k}")
                    } else {
                        let k = layout.outputs.iter().position(|&x| x == pi).unwrap_or(0);
                        format!("l{l}_o{k}")
                    }
                }
            };
            conns.push(format!(".{}({expr})", p.name));
        }
        let params = if parameters.is_empty() {
            String::new()
        } else {
            let p: Vec<String> = parameters
                .iter()
                .map(|(k, v)| format!(".{k}({v})"))
                .collect();
            format!(" #({})", p.join(", "))
        };
        let _ = writeln!(
            v,
            "  {}{params} lane{l} (\n    {}\n  );",
            spec.top,
            conns.join(",\n    ")
        );
    }
    let _ = writeln!(v, "endmodule");
    v
}

/// The C++ harness exposing the C ABI (see `docs/verification.md`).
pub(crate) fn harness_cpp(spec: &CoreSpec, lanes: u32) -> String {
    let layout = RawLayout::of(spec);
    let n_in = layout.inputs.len();
    let n_out = layout.outputs.len();
    let clocked = spec.is_clocked();
    let has_reset =
        spec.port_with_role(Role::Reset).is_some() || spec.port_with_role(Role::ResetN).is_some();
    let top = format!("V{WRAPPER_MODULE}");
    let mut set = String::new();
    let mut zero = String::new();
    let mut get = String::new();
    for l in 0..lanes as usize {
        for (k, &pi) in layout.inputs.iter().enumerate() {
            let mask = spec.ports[pi].mask();
            let _ = writeln!(
                set,
                "    t->l{l}_i{k} = in[{}] & 0x{mask:x}ULL;",
                l * n_in + k
            );
            let _ = writeln!(zero, "    t->l{l}_i{k} = 0;");
        }
        for k in 0..n_out {
            let _ = writeln!(get, "    out[{}] = (uint64_t)t->l{l}_o{k};", l * n_out + k);
        }
    }
    let clk_low = if clocked { "t->sim_clk = 0;" } else { "" };
    let rst_set = |v: u8| {
        if has_reset {
            format!("t->sim_rst = {v};")
        } else {
            String::new()
        }
    };
    let mut c = String::new();
    let _ = write!(
        c,
        r#"// fp8gen C ABI harness v{HARNESS_VERSION} for `{core}` ({lanes} lane(s)). Generated; do not edit.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include "verilated.h"
#include "{top}.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

#define FP8_API extern "C" __attribute__((visibility("default")))

namespace {{
struct SimFatal {{
    std::string msg;
}};

struct Handle {{
    VerilatedContext* ctx = nullptr;
    {top}* top = nullptr;
#if VM_TRACE
    VerilatedVcdC* vcd = nullptr;
#endif
    uint64_t time = 0;
    std::string error;
}};

constexpr size_t LANES = {lanes};
constexpr size_t RAW_IN = {n_in};   // per lane
constexpr size_t RAW_OUT = {n_out}; // per lane

inline void set_inputs({top}* t, const uint64_t* in) {{
{set}}}

inline void zero_inputs({top}* t) {{
{zero}}}

inline void get_outputs(const {top}* t, uint64_t* out) {{
{get}}}

inline void dump(Handle* h) {{
#if VM_TRACE
    if (h->vcd) h->vcd->dump(h->time);
#endif
    h->time += 1;
}}

std::string where(const char* filename, int linenum) {{
    return std::string(filename ? filename : "?") + ":" + std::to_string(linenum);
}}
}}  // namespace

// Verilator's fatal hooks (VL_USER_*): report to the caller instead of aborting the process.
void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) {{
    (void)hier;
    throw SimFatal{{where(filename, linenum) + ": " + (msg ? msg : "fatal error")}};
}}
void vl_stop(const char* filename, int linenum, const char* hier) {{
    (void)hier;
    throw SimFatal{{where(filename, linenum) + ": Verilog $stop"}};
}}
void vl_finish(const char* filename, int linenum, const char* hier) {{
    (void)filename; (void)linenum; (void)hier;
    Verilated::threadContextp()->gotFinish(true);
}}

#define FP8_TRY try {{
#define FP8_CATCH                                                   \
    }} catch (const SimFatal& e) {{                                   \
        h->error = e.msg;                                           \
        return 1;                                                   \
    }} catch (const std::exception& e) {{                             \
        h->error = e.what();                                        \
        return 2;                                                   \
    }} catch (...) {{                                                 \
        h->error = "unknown C++ exception";                         \
        return 3;                                                   \
    }}                                                              \
    return 0;

FP8_API uint32_t fp8_abi_version(void) {{ return {HARNESS_VERSION}; }}
FP8_API uint32_t fp8_lanes(void) {{ return LANES; }}
FP8_API uint32_t fp8_raw_inputs(void) {{ return RAW_IN; }}
FP8_API uint32_t fp8_raw_outputs(void) {{ return RAW_OUT; }}
FP8_API uint32_t fp8_has_trace(void) {{ return VM_TRACE ? 1 : 0; }}

// Seed of Verilator's random values (x/z-check builds: `--x-assign unique --x-initial unique`);
// 0 = Verilator's default (zeros).
uint32_t g_seed = 0;
FP8_API void fp8_set_seed(uint32_t seed) {{ g_seed = seed; }}

FP8_API void* fp8_new(void) {{
    Handle* h = nullptr;
    try {{
        h = new Handle();
        h->ctx = new VerilatedContext;
        h->ctx->fatalOnError(true);
        if (g_seed) {{
            h->ctx->randReset(2);
            h->ctx->randSeed((int)g_seed);
            Verilated::threadContextp(h->ctx);
        }}
#if VM_TRACE
        h->ctx->traceEverOn(true);
#endif
        h->top = new {top}(h->ctx, "sim");
        {top}* t = h->top;
        zero_inputs(t);
        {clk_low}
        {rst_low}
        t->eval();
        return h;
    }} catch (...) {{
        if (h) {{
            delete h->top;
            delete h->ctx;
            delete h;
        }}
        return nullptr;
    }}
}}

FP8_API void fp8_free(void* p) {{
    Handle* h = static_cast<Handle*>(p);
    if (!h) return;
    try {{
#if VM_TRACE
        if (h->vcd) {{
            h->vcd->close();
            delete h->vcd;
        }}
#endif
        h->top->final();
    }} catch (...) {{
    }}
    delete h->top;
    delete h->ctx;
    delete h;
}}

FP8_API const char* fp8_last_error(void* p) {{
    return static_cast<Handle*>(p)->error.c_str();
}}

// n evaluations; each reads LANES*RAW_IN words and writes LANES*RAW_OUT words.
FP8_API int fp8_eval(void* p, const uint64_t* in, uint64_t* out, size_t n) {{
    Handle* h = static_cast<Handle*>(p);
    {top}* t = h->top;
    FP8_TRY
    for (size_t i = 0; i < n; ++i) {{
        set_inputs(t, in + i * (LANES * RAW_IN));
        t->eval();
        dump(h);
        get_outputs(t, out + i * (LANES * RAW_OUT));
    }}
    FP8_CATCH
}}
"#,
        core = spec.top,
        rst_low = rst_set(0),
    );
    if clocked {
        let _ = write!(
            c,
            r#"
// n clock cycles: set inputs, clock low + eval, read outputs, rising edge + eval.
FP8_API int fp8_cycle(void* p, const uint64_t* in, uint64_t* out, size_t n) {{
    Handle* h = static_cast<Handle*>(p);
    {top}* t = h->top;
    FP8_TRY
    for (size_t i = 0; i < n; ++i) {{
        set_inputs(t, in + i * (LANES * RAW_IN));
        t->sim_clk = 0;
        t->eval();
        dump(h);
        get_outputs(t, out + i * (LANES * RAW_OUT));
        t->sim_clk = 1;
        t->eval();
        dump(h);
    }}
    FP8_CATCH
}}

// Zero inputs, hold reset (if the core has one) for `cycles` rising edges, release it.
FP8_API int fp8_reset(void* p, uint32_t cycles) {{
    Handle* h = static_cast<Handle*>(p);
    {top}* t = h->top;
    FP8_TRY
    zero_inputs(t);
    {rst_high}
    for (uint32_t i = 0; i < cycles; ++i) {{
        t->sim_clk = 0;
        t->eval();
        dump(h);
        t->sim_clk = 1;
        t->eval();
        dump(h);
    }}
    t->sim_clk = 0;
    {rst_low}
    t->eval();
    dump(h);
    FP8_CATCH
}}
"#,
            rst_high = rst_set(1),
            rst_low = rst_set(0),
        );
    }
    let _ = write!(
        c,
        r#"
FP8_API int fp8_trace_open(void* p, const char* path) {{
    Handle* h = static_cast<Handle*>(p);
#if VM_TRACE
    FP8_TRY
    if (h->vcd) {{
        h->vcd->close();
        delete h->vcd;
    }}
    h->vcd = new VerilatedVcdC;
    h->top->trace(h->vcd, 99);
    h->vcd->open(path);
    if (!h->vcd->isOpen()) {{
        h->error = std::string("cannot open VCD file ") + path;
        return 4;
    }}
    h->time = 0;
    h->vcd->dump(h->time);
    h->time += 1;
    FP8_CATCH
#else
    (void)path;
    h->error = "model was built without --trace";
    return 5;
#endif
}}

FP8_API int fp8_trace_close(void* p) {{
    Handle* h = static_cast<Handle*>(p);
#if VM_TRACE
    FP8_TRY
    if (h->vcd) {{
        h->vcd->close();
        delete h->vcd;
        h->vcd = nullptr;
    }}
    FP8_CATCH
#else
    h->error = "model was built without --trace";
    return 5;
#endif
}}
"#
    );
    c
}

/// Common C++ flags of the model, the harness and the runtime.
fn cxx_flags(tc: &Toolchain, trace: bool) -> Vec<String> {
    let inc = tc.include_dir();
    let t = if trace { "1" } else { "0" };
    let mut f: Vec<String> = [
        "-std=gnu++17",
        "-fPIC",
        "-fvisibility=hidden",
        "-fvisibility-inlines-hidden",
        "-faligned-new",
        "-fno-plt",
        "-w",
        "-DVM_COVERAGE=0",
        "-DVM_SC=0",
        "-DVM_TRACE_FST=0",
        "-DVL_USER_FATAL",
        "-DVL_USER_STOP",
        "-DVL_USER_FINISH",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    f.push(format!("-DVM_TRACE={t}"));
    f.push(format!("-DVM_TRACE_VCD={t}"));
    f.push(format!("-I{}", inc.display()));
    f.push(format!("-I{}", inc.join("vltstd").display()));
    f
}

fn verilator_flags(trace: bool, random_x: bool) -> Vec<String> {
    let x = if random_x { "unique" } else { "fast" };
    let mut f: Vec<String> = [
        "--cc",
        "-O3",
        "--x-assign",
        x,
        "--x-initial",
        x,
        "--no-timing",
        "-Wno-fatal",
        "-Wwarn-WIDTH",
        "-Wwarn-PINMISSING",
        "--top-module",
        WRAPPER_MODULE,
        "--prefix",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    f.push(format!("V{WRAPPER_MODULE}"));
    if trace {
        f.push("--trace".into());
    }
    f
}

fn command_line(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Runs one compiler/linker command; on failure returns a `Compile` error with its output tail.
fn run_cxx(mut cmd: Command, build_dir: &Path, log: &Mutex<String>) -> Result<()> {
    let line = command_line(&cmd);
    let out = cmd
        .output()
        .map_err(|e| SimError::io(format!("running `{line}`"), e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if let Ok(mut l) = log.lock() {
        let _ = writeln!(l, "$ {line}\n{text}");
    }
    if out.status.success() {
        Ok(())
    } else {
        Err(SimError::Compile {
            command: line,
            build_dir: build_dir.to_path_buf(),
            stderr_tail: error_excerpt(&text, 10, 20),
        })
    }
}

/// Compiles the model's `(source, opt)` list into objects in `obj`, grouped into a few
/// translation units ([`unity_jobs`]); if a group fails, each file on its own. Returns the jobs
/// whose objects were built.
fn compile_model_sources(
    tc: &Toolchain,
    cflags: &[String],
    sources: &[(PathBuf, String)],
    obj: &Path,
    build_dir: &Path,
    log: &Mutex<String>,
    workers: usize,
) -> Result<Vec<(PathBuf, PathBuf, String)>> {
    let grouped = unity_jobs(sources, obj, workers)?;
    let include = [obj.to_path_buf()];
    if compile_parallel(tc, cflags, &grouped, &include, build_dir, log).is_ok() {
        return Ok(grouped);
    }
    // A translation unit of several generated files can fail where the files compile one by
    // one (two files defining the same file-local name): build them one by one.
    if let Ok(mut l) = log.lock() {
        let _ = writeln!(
            l,
            "# grouped compile failed: compiling each file on its own"
        );
    }
    for (_, o, _) in &grouped {
        let _ = fs::remove_file(o);
    }
    let per_file = per_file_jobs(sources, obj);
    compile_parallel(tc, cflags, &per_file, &include, build_dir, log)?;
    Ok(per_file)
}

/// One compile job per source: `(source, object, opt)`, largest source first so the longest
/// compile starts early.
fn per_file_jobs(sources: &[(PathBuf, String)], obj: &Path) -> Vec<(PathBuf, PathBuf, String)> {
    let mut jobs: Vec<(PathBuf, PathBuf, String)> = sources
        .iter()
        .map(|(src, opt)| {
            let stem = src.file_stem().unwrap_or_default().to_string_lossy();
            (src.clone(), obj.join(format!("{stem}.o")), opt.clone())
        })
        .collect();
    jobs.sort_by_key(|(src, _, _)| std::cmp::Reverse(file_len(src)));
    jobs
}

fn file_len(p: &Path) -> u64 {
    fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Verilator's slow sources of at least this many bytes are a unit of their own at `-O0`.
const SLOW_SEPARATE_BYTES: u64 = 64 * 1024;

/// Source bytes above which one optimisation level's sources are split into more than one
/// unit: below it, a second unit would cost more in header parsing than it gains in
/// parallelism.
const UNITY_SPLIT_BYTES: u64 = 512 * 1024;

/// The sources grouped into a few translation units (`unity_<opt>_<k>.cpp`, each a list of
/// `#include`s written into `obj`): per optimisation level, at most `workers` groups (one per
/// [`UNITY_SPLIT_BYTES`] of source) balanced by size (largest first onto the lightest group).
/// Every generated file includes Verilator's headers, whose parsing costs more than a small
/// file's own code, so compiling a model's 8–20 files as 2–3 units takes about a third of the
/// compiler time.
fn unity_jobs(
    sources: &[(PathBuf, String)],
    obj: &Path,
    workers: usize,
) -> Result<Vec<(PathBuf, PathBuf, String)>> {
    let mut opts: Vec<&String> = Vec::new();
    for (_, o) in sources {
        if !opts.contains(&o) {
            opts.push(o);
        }
    }
    let mut jobs = Vec::new();
    for opt in opts {
        let mut files: Vec<(&PathBuf, u64)> = sources
            .iter()
            .filter(|(_, o)| o == opt)
            .map(|(p, _)| (p, file_len(p)))
            .collect();
        files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        // A small model is one unit (its headers parsed once); a large one is split so the
        // cores share its compile.
        let total: u64 = files.iter().map(|f| f.1).sum();
        let by_size = total.div_ceil(UNITY_SPLIT_BYTES).max(1) as usize;
        let n = workers.min(by_size).clamp(1, files.len().max(1));
        let mut groups: Vec<(u64, Vec<&PathBuf>)> = vec![(0, Vec::new()); n];
        for (p, len) in files {
            let lightest = groups
                .iter_mut()
                .min_by_key(|(total, _)| *total)
                .expect("at least one group");
            lightest.0 += len;
            lightest.1.push(p);
        }
        let level = opt.trim_start_matches('-');
        for (k, (total, members)) in groups.into_iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let name = format!("unity_{level}_{k}");
            let mut text = String::from(
                "// Generated by fp8gen: one translation unit of several model sources.\n",
            );
            for m in &members {
                let _ = writeln!(text, "#include \"{}\"", m.display());
            }
            let src = obj.join(format!("{name}.cpp"));
            fs::write(&src, text)
                .map_err(|e| SimError::io(format!("writing {}", src.display()), e))?;
            jobs.push((src, obj.join(format!("{name}.o")), opt.clone(), total));
        }
    }
    jobs.sort_by_key(|j| std::cmp::Reverse(j.3));
    Ok(jobs.into_iter().map(|(s, o, opt, _)| (s, o, opt)).collect())
}

/// Compiles `(source, object, opt)` jobs on all cores; stops at the first failure.
fn compile_parallel(
    tc: &Toolchain,
    flags: &[String],
    jobs: &[(PathBuf, PathBuf, String)],
    include: &[PathBuf],
    build_dir: &Path,
    log: &Mutex<String>,
) -> Result<()> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let first_err: Mutex<Option<SimError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs.len() || first_err.lock().map(|e| e.is_some()).unwrap_or(true) {
                    break;
                }
                let (src, obj, opt) = &jobs[i];
                let mut cmd = tc.cxx_command();
                cmd.args(flags).arg(opt);
                for d in include {
                    cmd.arg(format!("-I{}", d.display()));
                }
                cmd.arg("-c").arg(src).arg("-o").arg(obj);
                if let Err(e) = run_cxx(cmd, build_dir, log) {
                    if let Ok(mut slot) = first_err.lock() {
                        slot.get_or_insert(e);
                    }
                    break;
                }
            });
        }
    });
    match first_err.into_inner() {
        Ok(Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// Parses a Verilator `*_classes.mk` into (fast sources, slow sources, runtime sources).
fn parse_classes_mk(text: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut fast, mut slow, mut global) = (Vec::new(), Vec::new(), Vec::new());
    let mut current: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some((var, _)) = trimmed.split_once("+=") {
            current = Some(var.trim()).filter(|_| trimmed.ends_with('\\'));
            continue;
        }
        let Some(var) = current else { continue };
        let name = trimmed.trim_end_matches('\\').trim();
        if !trimmed.ends_with('\\') {
            current = None;
        }
        if name.is_empty() {
            continue;
        }
        let name = name.to_string();
        match var {
            "VM_CLASSES_FAST" | "VM_SUPPORT_FAST" => fast.push(name),
            "VM_CLASSES_SLOW" | "VM_SUPPORT_SLOW" => slow.push(name),
            "VM_GLOBAL_FAST" | "VM_GLOBAL_SLOW" => global.push(name),
            _ => {}
        }
    }
    (fast, slow, global)
}

/// Ensures Verilator's runtime (`verilated.cpp`, ...) is compiled for this toolchain and
/// returns the object files. Compiled once per (toolchain, file set, trace) and cached.
fn ensure_runtime(
    tc: &Toolchain,
    cache: &Path,
    names: &[String],
    trace: bool,
) -> Result<Vec<PathBuf>> {
    let flags = cxx_flags(tc, trace);
    let mut key = KeyHasher::new();
    key.field("harness", &HARNESS_VERSION.to_le_bytes())
        .field("verilator", tc.verilator_version.as_bytes())
        .field("root", tc.verilator_root.to_string_lossy().as_bytes())
        .field("cxx", tc.cxx.to_string_lossy().as_bytes())
        .field("cxx-prefix", tc.cxx_prefix_args.join(" ").as_bytes())
        .field("cxx-version", tc.cxx_version.as_bytes())
        .field("flags", flags.join(" ").as_bytes())
        .field("files", names.join(" ").as_bytes());
    let dest = cache.join("runtime").join(key.hex());
    let objects: Vec<PathBuf> = names.iter().map(|n| dest.join(format!("{n}.o"))).collect();
    if dest.is_dir() {
        if entry_ok(&dest) && objects.iter().all(|o| o.is_file()) {
            return Ok(objects);
        }
        // Incomplete or corrupt (e.g. a truncated object): rebuild it.
        discard_entry(cache, &dest);
    }
    let tmp = make_temp_dir(cache, "runtime")?;
    let jobs: Vec<(PathBuf, PathBuf, String)> = names
        .iter()
        .map(|n| {
            (
                tc.include_dir().join(format!("{n}.cpp")),
                tmp.join(format!("{n}.o")),
                "-O2".to_string(),
            )
        })
        .collect();
    let log = Mutex::new(String::new());
    compile_parallel(tc, &flags, &jobs, &[], &tmp, &log)?;
    let _ = fs::write(tmp.join("build.log"), log.into_inner().unwrap_or_default());
    let stamped: Vec<String> = names.iter().map(|n| format!("{n}.o")).collect();
    write_stamp(&tmp, &stamped)?;
    publish(&tmp, &dest)?;
    Ok(objects)
}

/// Builds (or finds in the cache) the shared library of `verilog` wrapped per `spec`/`opts`.
pub(crate) fn build_model(
    tc: &Toolchain,
    sources: &Sources,
    spec: &CoreSpec,
    opts: &BuildOptions,
) -> Result<BuiltModel> {
    let start = Instant::now();
    spec.validate()?;
    if opts.lanes == 0 || opts.lanes > MAX_LANES {
        return Err(SimError::Usage(format!(
            "lane count {} is out of range; use 1..={MAX_LANES}",
            opts.lanes
        )));
    }
    if opts.opt_level > 3 {
        return Err(SimError::Usage(format!(
            "opt_level {} is out of range; use 0..=3",
            opts.opt_level
        )));
    }
    let lanes = if opts.trace { 1 } else { opts.lanes };
    if sources.files.is_empty() {
        return Err(SimError::InvalidSpec("no source file given".into()));
    }
    if let Some(f) = sources
        .files
        .iter()
        .find(|f| f.text.contains(WRAPPER_MODULE))
    {
        return Err(SimError::InvalidSpec(format!(
            "{} uses the name `{WRAPPER_MODULE}`, reserved for the simulation wrapper",
            f.name
        )));
    }
    if !sources.declares(&spec.top) {
        let names: Vec<&str> = sources.files.iter().map(|f| f.name.as_str()).collect();
        return Err(SimError::InvalidSpec(format!(
            "no source file ({}) declares module `{}`; check the top module name",
            names.join(", "),
            spec.top
        )));
    }
    let cache = opts.resolved_cache_dir();
    let max_cache_bytes = max_models_bytes()?;
    sweep_temp(&cache);
    let wrapper = wrapper_verilog(spec, lanes, &sources.parameters);
    let harness = harness_cpp(spec, lanes);
    // The text every tool compiles, and every file it was read from: part of the key, so a
    // cached model is never reused after an included file changed.
    let pre = sources.preprocess(tc, &cache)?;
    let mut vflags = verilator_flags(opts.trace, opts.random_x);
    vflags.extend(preprocessor_flags(sources));
    let cflags = cxx_flags(tc, opts.trace);
    let fast_opt = format!("-O{}", opts.opt_level);
    let spec_json = serde_json::to_string_pretty(spec).unwrap_or_default();

    let mut key = KeyHasher::new();
    key.field("harness", &HARNESS_VERSION.to_le_bytes())
        .field("verilator", tc.verilator_version.as_bytes())
        .field("root", tc.verilator_root.to_string_lossy().as_bytes())
        .field("cxx", tc.cxx.to_string_lossy().as_bytes())
        .field("cxx-prefix", tc.cxx_prefix_args.join(" ").as_bytes())
        .field("cxx-version", tc.cxx_version.as_bytes())
        .field("vflags", vflags.join(" ").as_bytes())
        .field("cflags", cflags.join(" ").as_bytes())
        .field("opt", fast_opt.as_bytes())
        .field("spec", spec_json.as_bytes())
        .field("wrapper", wrapper.as_bytes())
        .field("harness-src", harness.as_bytes());
    sources.hash_into(&mut key);
    pre.hash_into(&mut key);
    let dest = cache.join("models").join(key.hex());
    let so_name = "model.so";
    if dest.is_dir() {
        if entry_ok(&dest) {
            return Ok(BuiltModel {
                so_path: dest.join(so_name),
                dir: dest,
                cache_hit: true,
                seconds: start.elapsed().as_secs_f64(),
            });
        }
        // Incomplete or corrupt (a truncated model.so, an interrupted publish): rebuild.
        discard_entry(&cache, &dest);
    }

    let tmp = make_temp_dir(&cache, "model")?;
    let wr = |name: &str, text: &str| {
        fs::write(tmp.join(name), text)
            .map_err(|e| SimError::io(format!("writing {}", tmp.join(name).display()), e))
    };
    let mut file_args: Vec<String> = Vec::new();
    for (i, f) in sources.files.iter().enumerate() {
        match &f.path {
            Some(p) => file_args.push(p.display().to_string()),
            None => {
                let name = if sources.files.len() == 1 {
                    f.name.clone()
                } else {
                    format!("{i}_{}", f.name)
                };
                wr(&name, &f.text)?;
                file_args.push(name);
            }
        }
    }
    wr("wrapper.v", &wrapper)?;
    wr("harness.cpp", &harness)?;
    wr("spec.json", &spec_json)?;
    wr("exports.map", "{\n  global: fp8_*;\n  local: *;\n};\n")?;
    let obj = tmp.join("obj");

    let mut log = String::new();
    let mut cmd = Command::new(&tc.verilator);
    cmd.current_dir(&tmp)
        .args(&vflags)
        .arg("--Mdir")
        .arg("obj")
        .args(&file_args)
        .arg("wrapper.v");
    let line = command_line(&cmd);
    let out = cmd
        .output()
        .map_err(|e| SimError::io(format!("running `{line}`"), e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = writeln!(log, "$ (cd {}) {line}\n{text}", tmp.display());
    if !out.status.success() {
        let _ = fs::write(tmp.join("build.log"), &log);
        return Err(SimError::Verilator {
            command: line,
            build_dir: tmp,
            stderr_tail: error_excerpt(&text, 10, 20),
        });
    }
    // The wrapper connects each port with the width the description declares: a width or pin
    // warning on wrapper.v means the description and the Verilog disagree (a narrower result
    // port would leave bits unchecked), which is an error, never a warning.
    let mismatches: Vec<&str> = text
        .lines()
        .filter(|l| {
            (l.contains("%Warning-WIDTH") || l.contains("%Warning-PINMISSING"))
                && l.contains("wrapper.v")
        })
        .collect();
    if !mismatches.is_empty() {
        let _ = fs::write(tmp.join("build.log"), &log);
        let _ = fs::remove_dir_all(&tmp);
        return Err(SimError::InvalidSpec(format!(
            "the ports of `{}` in the Verilog differ from its description (manifest): fix the widths or add the missing ports\n{}",
            spec.top,
            mismatches.join("\n")
        )));
    }
    let mk_path = obj.join(format!("V{WRAPPER_MODULE}_classes.mk"));
    let mk = fs::read_to_string(&mk_path)
        .map_err(|e| SimError::io(format!("reading {}", mk_path.display()), e))?;
    let (fast, slow, global) = parse_classes_mk(&mk);
    if fast.is_empty() {
        return Err(SimError::Verilator {
            command: line,
            build_dir: tmp,
            stderr_tail: format!("{} lists no model sources", mk_path.display()),
        });
    }
    let runtime = ensure_runtime(tc, &cache, &global, opts.trace)?;

    let mut sources: Vec<(PathBuf, String)> = vec![(tmp.join("harness.cpp"), fast_opt.clone())];
    sources.extend(
        fast.iter()
            .map(|n| (obj.join(format!("{n}.cpp")), fast_opt.clone())),
    );
    // Verilator's "slow" sources (construction, initial values) are compiled without
    // optimisation when they are big; small ones join the fast unit, so the model's headers
    // are parsed once.
    let slow_paths: Vec<PathBuf> = slow.iter().map(|n| obj.join(format!("{n}.cpp"))).collect();
    let slow_bytes: u64 = slow_paths.iter().map(|p| file_len(p)).sum();
    let slow_opt = if slow_bytes < SLOW_SEPARATE_BYTES {
        fast_opt.clone()
    } else {
        "-O0".to_string()
    };
    sources.extend(slow_paths.into_iter().map(|p| (p, slow_opt.clone())));
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let log = Mutex::new(log);
    let jobs = compile_model_sources(tc, &cflags, &sources, &obj, &tmp, &log, workers)?;

    let mut cmd = tc.cxx_command();
    cmd.arg("-shared")
        .arg("-o")
        .arg(tmp.join(so_name))
        .args(jobs.iter().map(|(_, o, _)| o))
        .args(&runtime)
        .arg(format!(
            "-Wl,--version-script={}",
            tmp.join("exports.map").display()
        ))
        .arg("-Wl,-Bsymbolic")
        .arg("-pthread");
    run_cxx(cmd, &tmp, &log)?;
    let _ = fs::write(tmp.join("build.log"), log.into_inner().unwrap_or_default());
    // Objects are not needed once linked; keep the generated sources for inspection.
    for (_, o, _) in &jobs {
        let _ = fs::remove_file(o);
    }
    write_stamp(&tmp, &[so_name.to_string()])?;
    let dir = publish(&tmp, &dest)?;
    evict(&cache, max_cache_bytes, &dir);
    Ok(BuiltModel {
        so_path: dir.join(so_name),
        dir,
        cache_hit: false,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Whether `verilog` contains `module <name>` followed by a non-identifier character.
fn declares_module(verilog: &str, name: &str) -> bool {
    let words: Vec<&str> = verilog
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .any(|w| (w[0] == "module" || w[0] == "macromodule") && w[1] == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Port;

    #[test]
    fn unity_groups_include_every_source_once_per_opt_level() {
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().to_path_buf();
        let mut sources = Vec::new();
        for (i, kib) in [900usize, 500, 400, 300, 100].iter().enumerate() {
            let p = obj.join(format!("V__{i}.cpp"));
            fs::write(&p, "x".repeat(kib * 1024)).unwrap();
            sources.push((p, "-O2".to_string()));
        }
        let slow = obj.join("V__Slow.cpp");
        fs::write(&slow, "y").unwrap();
        sources.push((slow.clone(), "-O0".to_string()));
        let jobs = unity_jobs(&sources, &obj, 2).unwrap();
        // Two -O2 units (900+100 against 500+400+300 by largest-first), one -O0 unit.
        assert_eq!(jobs.len(), 3, "{jobs:?}");
        let mut seen: Vec<String> = Vec::new();
        for (src, o, opt) in &jobs {
            assert_eq!(o.extension().unwrap(), "o");
            let text = fs::read_to_string(src).unwrap();
            for line in text.lines().filter(|l| l.starts_with("#include")) {
                let name = line.split('"').nth(1).unwrap().to_string();
                let want = sources
                    .iter()
                    .find(|(p, _)| p.display().to_string() == name);
                assert_eq!(want.map(|w| &w.1), Some(opt), "{name} compiled at {opt}");
                seen.push(name);
            }
        }
        seen.sort();
        let mut all: Vec<String> = sources
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        all.sort();
        assert_eq!(seen, all);
        // One worker: one unit per level; more workers than files: one file per unit.
        assert_eq!(unity_jobs(&sources, &obj, 1).unwrap().len(), 2);
        assert_eq!(unity_jobs(&sources, &obj, 64).unwrap().len(), 6);
        // Small sources are one unit per level whatever the workers.
        for (p, _) in &sources[..5] {
            fs::write(p, "x").unwrap();
        }
        assert_eq!(unity_jobs(&sources, &obj, 2).unwrap().len(), 2);
    }

    #[test]
    fn a_group_that_does_not_compile_falls_back_to_one_file_at_a_time() {
        let Ok(tc) = Toolchain::detect() else {
            eprintln!("skipped: no Verilator/C++ toolchain");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().to_path_buf();
        // Each file compiles alone; together they define `helper` twice.
        let mut sources = Vec::new();
        for (i, body) in [
            "static int helper() { return 1; }\nint f1() { return helper(); }\n",
            "static int helper() { return 2; }\nint f2() { return helper(); }\n",
        ]
        .iter()
        .enumerate()
        {
            let p = obj.join(format!("part{i}.cpp"));
            fs::write(&p, body).unwrap();
            sources.push((p, "-O0".to_string()));
        }
        let log = Mutex::new(String::new());
        let flags = vec!["-fPIC".to_string()];
        let jobs = compile_model_sources(&tc, &flags, &sources, &obj, &obj, &log, 1).unwrap();
        assert_eq!(jobs.len(), 2, "{jobs:?}");
        assert!(jobs.iter().all(|(_, o, _)| o.is_file()));
        assert!(!obj.join("unity_O0_0.o").exists());
        let log = log.into_inner().unwrap();
        assert!(log.contains("grouped compile failed"), "{log}");
        // Sources that fit in one unit are built as one.
        let ok = vec![sources[0].clone()];
        let log = Mutex::new(String::new());
        let jobs = compile_model_sources(&tc, &flags, &ok, &obj, &obj, &log, 1).unwrap();
        assert_eq!(jobs.len(), 1);
        assert!(jobs[0].0.ends_with("unity_O0_0.cpp"), "{jobs:?}");
    }

    #[test]
    fn classes_mk_is_split_into_fast_slow_and_runtime() {
        let mk = "VM_CLASSES_FAST += \\\n\tVtop \\\n\tVtop__A \\\n\nVM_CLASSES_SLOW += \\\n\tVtop__Slow \\\n\nVM_SUPPORT_SLOW += \\\n\tVtop__Syms \\\n\nVM_GLOBAL_FAST += \\\n\tverilated \\\n\tverilated_threads \\\n\nVM_GLOBAL_SLOW += \\\n\n";
        let (f, s, g) = parse_classes_mk(mk);
        assert_eq!(f, ["Vtop", "Vtop__A"]);
        assert_eq!(s, ["Vtop__Slow", "Vtop__Syms"]);
        assert_eq!(g, ["verilated", "verilated_threads"]);
    }

    #[test]
    fn wrapper_connects_every_port_of_every_lane() {
        let spec = CoreSpec::pipelined(
            "core",
            vec![
                Port::control("clk", Role::Clock),
                Port::control("rst_n", Role::ResetN),
                Port::control("valid_i", Role::ValidIn),
                Port::input("a", 8),
                Port::output("y", 32),
                Port::control("valid_o", Role::ValidOut),
            ],
            2,
        );
        let v = wrapper_verilog(&spec, 2, &BTreeMap::new());
        assert!(v.contains(".rst_n(~sim_rst)"), "{v}");
        assert!(
            v.contains(".a(l1_i0)") && v.contains(".valid_i(l1_i1)"),
            "{v}"
        );
        assert!(
            v.contains(".y(l0_o0)") && v.contains(".valid_o(l0_o1)"),
            "{v}"
        );
        assert!(v.contains("output wire [31:0] l1_o0"), "{v}");
        assert!(declares_module("module core(a);", "core"));
        assert!(!declares_module("module core2(a);", "core"));
    }

    #[test]
    fn module_names_are_read_from_preprocessed_lines() {
        assert_eq!(module_names("module core(a); endmodule"), ["core"]);
        assert_eq!(
            module_names("module automatic m1 #(1) (a); macromodule \\m2 (b);"),
            ["m1", "\\m2"]
        );
        assert!(module_names("$display(\"module fake\"); wire module_x;").is_empty());
    }
}
