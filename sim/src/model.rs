//! Loaded models: [`ModelLibrary`] (a built, cached shared library plus its interface) and
//! [`Model`] (one simulated instance; not shareable between threads, create one per thread).
//!
//! Lanes are invisible here: callers pass any number of vectors; full groups of `lanes`
//! vectors go to one `eval()`, the tail is padded. Combinational cores are evaluated in place
//! (no copy); clocked cores are streamed one group per cycle, the pipe is flushed, outputs
//! are realigned by the declared latency and `valid_o` is checked against `valid_i`.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Arc;

use libloading::Library;

use crate::builder::{build_model, BuildOptions, RawLayout, Sources, HARNESS_VERSION};
use crate::error::{Result, SimError};
use crate::spec::CoreSpec;
use crate::toolchain::Toolchain;

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type SeedFn = unsafe extern "C" fn(u32);
type EvalFn = unsafe extern "C" fn(*mut c_void, *const u64, *mut u64, usize) -> c_int;
type ResetFn = unsafe extern "C" fn(*mut c_void, u32) -> c_int;
type ErrFn = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type TraceOpenFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type TraceCloseFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type U32Fn = unsafe extern "C" fn() -> u32;

/// Entry points of the harness (function pointers valid while `Inner::lib` is loaded).
struct Api {
    new: NewFn,
    set_seed: SeedFn,
    free: FreeFn,
    eval: EvalFn,
    cycle: Option<EvalFn>,
    reset: Option<ResetFn>,
    last_error: ErrFn,
    trace_open: TraceOpenFn,
    trace_close: TraceCloseFn,
}

struct Inner {
    api: Api,
    spec: CoreSpec,
    sources: Sources,
    toolchain: Toolchain,
    options: BuildOptions,
    lanes: usize,
    raw_in: usize,
    raw_out: usize,
    so_path: PathBuf,
    dir: PathBuf,
    cache_hit: bool,
    build_seconds: f64,
    // Declared last: dropped after everything that may point into it.
    _lib: Library,
}

/// A built and loaded simulation model of one core; cheap to clone, shareable between
/// threads. Create one [`Model`] per thread with [`ModelLibrary::instantiate`].
#[derive(Clone)]
pub struct ModelLibrary {
    inner: Arc<Inner>,
}

impl fmt::Debug for ModelLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelLibrary")
            .field("top", &self.inner.spec.top)
            .field("lanes", &self.inner.lanes)
            .field("trace", &self.inner.options.trace)
            .field("so_path", &self.inner.so_path)
            .field("cache_hit", &self.inner.cache_hit)
            .finish()
    }
}

impl ModelLibrary {
    /// Builds (or fetches from the cache) and loads the model of `verilog` whose top module
    /// and ports are described by `spec`.
    pub fn build(
        tc: &Toolchain,
        verilog: &str,
        spec: &CoreSpec,
        options: &BuildOptions,
    ) -> Result<ModelLibrary> {
        Self::build_sources(tc, &Sources::verilog(verilog), spec, options)
    }

    /// Builds (or fetches from the cache) and loads the model of a core made of several
    /// files, include directories, defines and parameters (see [`Sources`]). A cached model
    /// that the loader rejects is discarded and rebuilt once.
    pub fn build_sources(
        tc: &Toolchain,
        sources: &Sources,
        spec: &CoreSpec,
        options: &BuildOptions,
    ) -> Result<ModelLibrary> {
        match Self::build_once(tc, sources, spec, options) {
            Err(SimError::Load { path, .. }) if path.is_file() => {
                if let Some(dir) = path.parent() {
                    crate::cache::discard_entry(&options.resolved_cache_dir(), dir);
                }
                Self::build_once(tc, sources, spec, options)
            }
            r => r,
        }
    }

    fn build_once(
        tc: &Toolchain,
        sources: &Sources,
        spec: &CoreSpec,
        options: &BuildOptions,
    ) -> Result<ModelLibrary> {
        let built = build_model(tc, sources, spec, options)?;
        let path = &built.so_path;
        let load_err = |m: String| SimError::Load {
            path: path.clone(),
            message: m,
        };
        // SAFETY: the library is one we generated and linked ourselves; its initialisers are
        // the C++ runtime's and Verilator's, which have no preconditions.
        let lib = unsafe { Library::new(path) }.map_err(|e| load_err(e.to_string()))?;
        macro_rules! sym {
            ($t:ty, $name:literal) => {{
                // SAFETY: the symbol is exported by our harness with exactly this signature.
                let s = unsafe { lib.get::<$t>($name) };
                s.map(|s| *s)
                    .map_err(|e| load_err(format!("missing harness symbol {}: {e}", $name)))?
            }};
        }
        let abi: U32Fn = sym!(U32Fn, "fp8_abi_version");
        let lanes_fn: U32Fn = sym!(U32Fn, "fp8_lanes");
        let raw_in_fn: U32Fn = sym!(U32Fn, "fp8_raw_inputs");
        let raw_out_fn: U32Fn = sym!(U32Fn, "fp8_raw_outputs");
        // SAFETY: plain functions without arguments returning constants.
        let (abi, lanes, raw_in, raw_out) =
            unsafe { (abi(), lanes_fn(), raw_in_fn(), raw_out_fn()) };
        let layout = RawLayout::of(spec);
        let want_lanes = if options.trace { 1 } else { options.lanes };
        if abi != HARNESS_VERSION
            || lanes != want_lanes
            || raw_in as usize != layout.inputs.len()
            || raw_out as usize != layout.outputs.len()
        {
            return Err(load_err(format!(
                "harness mismatch (abi {abi}, lanes {lanes}, {raw_in} in / {raw_out} out words)"
            )));
        }
        let clocked = spec.is_clocked();
        let api = Api {
            new: sym!(NewFn, "fp8_new"),
            set_seed: sym!(SeedFn, "fp8_set_seed"),
            free: sym!(FreeFn, "fp8_free"),
            eval: sym!(EvalFn, "fp8_eval"),
            cycle: if clocked {
                Some(sym!(EvalFn, "fp8_cycle"))
            } else {
                None
            },
            reset: if clocked {
                Some(sym!(ResetFn, "fp8_reset"))
            } else {
                None
            },
            last_error: sym!(ErrFn, "fp8_last_error"),
            trace_open: sym!(TraceOpenFn, "fp8_trace_open"),
            trace_close: sym!(TraceCloseFn, "fp8_trace_close"),
        };
        Ok(ModelLibrary {
            inner: Arc::new(Inner {
                api,
                spec: spec.clone(),
                sources: sources.clone(),
                toolchain: tc.clone(),
                options: options.clone(),
                lanes: lanes as usize,
                raw_in: raw_in as usize,
                raw_out: raw_out as usize,
                so_path: built.so_path.clone(),
                dir: built.dir,
                cache_hit: built.cache_hit,
                build_seconds: built.seconds,
                _lib: lib,
            }),
        })
    }

    /// [`ModelLibrary::build`] from a Verilog file.
    pub fn build_file(
        tc: &Toolchain,
        verilog_path: &Path,
        spec: &CoreSpec,
        options: &BuildOptions,
    ) -> Result<ModelLibrary> {
        let text = iface::read_text_bounded(verilog_path, iface::MAX_SOURCE_BYTES, "source files")
            .map_err(|e| match e.io {
                Some(io) => SimError::io(format!("reading {}", verilog_path.display()), io),
                None => SimError::InvalidSpec(e.message),
            })?;
        Self::build(tc, &text, spec, options)
    }

    /// The same core built with `--trace` and one lane, for VCD replays.
    pub fn trace_variant(&self) -> Result<ModelLibrary> {
        if self.inner.options.trace {
            return Ok(self.clone());
        }
        let mut opts = self.inner.options.clone();
        opts.trace = true;
        opts.lanes = 1;
        Self::build_sources(
            &self.inner.toolchain,
            &self.inner.sources,
            &self.inner.spec,
            &opts,
        )
    }

    /// Seeds the random values of the instances created from now on (models built with
    /// [`BuildOptions::random_x`]: every explicit x and every uninitialised variable gets a
    /// value drawn from the seed; 0 = Verilator's default). The seed is the loaded library's:
    /// set it before a run, not during one.
    pub fn set_seed(&self, seed: u32) {
        // SAFETY: stores an integer read by later `fp8_new` calls.
        unsafe { (self.inner.api.set_seed)(seed) }
    }

    /// Creates a fresh simulated instance (reset and with an empty pipeline).
    pub fn instantiate(&self) -> Result<Model> {
        // SAFETY: fp8_new has no preconditions; it returns null on failure.
        let raw = unsafe { (self.inner.api.new)() };
        let handle = NonNull::new(raw).ok_or_else(|| {
            SimError::Runtime(format!(
                "cannot create an instance of {}",
                self.inner.so_path.display()
            ))
        })?;
        let mut m = Model {
            inner: Arc::clone(&self.inner),
            handle,
            raw_in: Vec::new(),
            raw_out: Vec::new(),
        };
        m.reset()?;
        Ok(m)
    }

    /// Builds the trace variant, replays `inputs` (one vector after the other, reset first
    /// for clocked cores) and writes the waveform to `vcd_path`. Returns the path written.
    pub fn replay_vcd(&self, inputs: &[u64], vcd_path: &Path) -> Result<PathBuf> {
        let traced = self.trace_variant()?;
        let mut m = traced.instantiate()?;
        m.replay_vcd(inputs, vcd_path)
    }

    /// The interface this model was built for.
    pub fn spec(&self) -> &CoreSpec {
        &self.inner.spec
    }

    /// Number of lanes (core copies evaluated per `eval()`).
    pub fn lanes(&self) -> usize {
        self.inner.lanes
    }

    /// Whether this is a `--trace` build.
    pub fn is_trace(&self) -> bool {
        self.inner.options.trace
    }

    /// Path of the loaded shared library.
    pub fn so_path(&self) -> &Path {
        &self.inner.so_path
    }

    /// Cache directory entry of this model (sources, build log, library).
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Whether the build was found in the cache.
    pub fn cache_hit(&self) -> bool {
        self.inner.cache_hit
    }

    /// Seconds spent building (or looking up) the model.
    pub fn build_seconds(&self) -> f64 {
        self.inner.build_seconds
    }
}

/// One simulated instance of a core. `Send` but not `Sync`: use one per thread.
pub struct Model {
    inner: Arc<Inner>,
    handle: NonNull<c_void>,
    raw_in: Vec<u64>,
    raw_out: Vec<u64>,
}

// SAFETY: a Verilated model with its own VerilatedContext may be driven from any thread, as
// long as one thread at a time does so; `Model` is only used through `&mut self`.
unsafe impl Send for Model {}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("top", &self.inner.spec.top)
            .field("lanes", &self.inner.lanes)
            .finish()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: the handle came from fp8_new of the same (still loaded) library and is
        // freed exactly once.
        unsafe { (self.inner.api.free)(self.handle.as_ptr()) }
    }
}

impl Model {
    /// Interface of the core.
    pub fn spec(&self) -> &CoreSpec {
        &self.inner.spec
    }

    /// Words per input vector (data input ports).
    pub fn n_inputs(&self) -> usize {
        self.inner.spec.n_inputs()
    }

    /// Words per output vector (data output ports).
    pub fn n_outputs(&self) -> usize {
        self.inner.spec.n_outputs()
    }

    /// Number of lanes of the underlying build.
    pub fn lanes(&self) -> usize {
        self.inner.lanes
    }

    fn check(&self, rc: c_int) -> Result<()> {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: the handle is live; the returned string lives until the next harness call.
        let msg = unsafe {
            let p = (self.inner.api.last_error)(self.handle.as_ptr());
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(SimError::Runtime(format!("{} (code {rc})", msg)))
    }

    /// Puts a clocked core into a known state: reset held for 4 cycles (if it has a reset
    /// port), then `latency + 1` idle cycles with `valid_in` low. No-op for combinational cores.
    pub fn reset(&mut self) -> Result<()> {
        let Some(reset) = self.inner.api.reset else {
            return Ok(());
        };
        // SAFETY: live handle.
        let rc = unsafe { reset(self.handle.as_ptr(), 4) };
        self.check(rc)?;
        let idle = self.inner.spec.latency as usize + 1;
        let lanes = self.inner.lanes;
        let zeros = vec![0u64; idle * lanes * self.inner.raw_in];
        let mut out = vec![0u64; idle * lanes * self.inner.raw_out];
        self.cycle_raw(&zeros, &mut out, idle)
    }

    fn cycle_raw(&mut self, input: &[u64], output: &mut [u64], cycles: usize) -> Result<()> {
        let cycle = self
            .inner
            .api
            .cycle
            .ok_or_else(|| SimError::Usage("core has no clock".into()))?;
        debug_assert!(input.len() >= cycles * self.inner.lanes * self.inner.raw_in);
        debug_assert!(output.len() >= cycles * self.inner.lanes * self.inner.raw_out);
        // SAFETY: buffers hold `cycles` rows of lanes*raw words, as the harness reads/writes.
        let rc = unsafe {
            cycle(
                self.handle.as_ptr(),
                input.as_ptr(),
                output.as_mut_ptr(),
                cycles,
            )
        };
        self.check(rc)
    }

    fn sizes(&self, inputs: &[u64], outputs: &[u64]) -> Result<usize> {
        let (ni, no) = (self.n_inputs(), self.n_outputs());
        // A validated spec has at least one data input and output.
        let n = inputs.len() / ni.max(1);
        if inputs.len() != n * ni || outputs.len() != n * no {
            return Err(SimError::Usage(format!(
                "buffer sizes do not match the core: {} input words for {ni} per vector, \
                 {} output words for {no} per vector",
                inputs.len(),
                outputs.len()
            )));
        }
        Ok(n)
    }

    /// Evaluates vectors: `inputs` holds `n * n_inputs()` words, `outputs` receives
    /// `n * n_outputs()` words. Streams through the pipeline for clocked cores.
    pub fn eval(&mut self, inputs: &[u64], outputs: &mut [u64]) -> Result<()> {
        if self.inner.spec.is_clocked() {
            self.eval_stream(inputs, outputs)
        } else {
            self.eval_comb(inputs, outputs)
        }
    }

    /// Evaluates vectors of a combinational core (one `eval()` per group of `lanes`).
    pub fn eval_comb(&mut self, inputs: &[u64], outputs: &mut [u64]) -> Result<()> {
        if self.inner.spec.is_clocked() {
            return Err(SimError::Usage(format!(
                "`{}` is clocked; use eval_stream",
                self.inner.spec.top
            )));
        }
        let n = self.sizes(inputs, outputs)?;
        let (ni, no, lanes) = (self.n_inputs(), self.n_outputs(), self.inner.lanes);
        let groups = n / lanes;
        if groups > 0 {
            // SAFETY: without valid ports the raw row of a lane is exactly one vector, so
            // `groups` evaluations read groups*lanes*ni and write groups*lanes*no words.
            let rc = unsafe {
                (self.inner.api.eval)(
                    self.handle.as_ptr(),
                    inputs.as_ptr(),
                    outputs.as_mut_ptr(),
                    groups,
                )
            };
            self.check(rc)?;
        }
        let done = groups * lanes;
        let rest = n - done;
        if rest > 0 {
            self.raw_in.clear();
            self.raw_in.extend_from_slice(&inputs[done * ni..]);
            self.raw_in.resize(lanes * ni, 0);
            self.raw_out.clear();
            self.raw_out.resize(lanes * no, 0);
            // SAFETY: one evaluation over padded buffers of exactly lanes rows.
            let rc = unsafe {
                (self.inner.api.eval)(
                    self.handle.as_ptr(),
                    self.raw_in.as_ptr(),
                    self.raw_out.as_mut_ptr(),
                    1,
                )
            };
            self.check(rc)?;
            outputs[done * no..].copy_from_slice(&self.raw_out[..rest * no]);
        }
        Ok(())
    }

    /// Streams vectors through a clocked core, one group of `lanes` vectors per cycle with
    /// `valid_in` high, with bubble cycles between them ([`bubbles_before`]), then `latency`
    /// flush cycles; returns outputs aligned to inputs. Fails with [`SimError::Protocol`] if
    /// `valid_out` does not follow `valid_in` after exactly the declared latency.
    pub fn eval_stream(&mut self, inputs: &[u64], outputs: &mut [u64]) -> Result<()> {
        let n = self.sizes(inputs, outputs)?;
        let no = self.n_outputs();
        let mut with_valid = vec![0u64; n * (no + 1)];
        let mut log = Handshake::default();
        self.eval_handshake(inputs, &mut with_valid, 0, &mut log)?;
        let lat = self.inner.spec.latency;
        let top = &self.inner.spec.top;
        if let Some(b) = log.spurious.first() {
            return Err(SimError::Protocol(format!(
                "`{top}` lane {}: valid_out is 1 on a cycle whose valid_in was 0 {lat} cycle(s) \
                 earlier (declared latency {lat})",
                b.lane
            )));
        }
        for (i, row) in with_valid.chunks_exact(no + 1).enumerate() {
            if self.inner.spec.has_valid() && row[no] & 1 == 0 {
                return Err(SimError::Protocol(format!(
                    "`{top}` lane {}, vector {i}: valid_out is 0 but valid_in was 1 {lat} \
                     cycle(s) earlier (declared latency {lat})",
                    i % self.inner.lanes
                )));
            }
            outputs[i * no..(i + 1) * no].copy_from_slice(&row[..no]);
        }
        Ok(())
    }

    /// Streams vectors through a clocked core like [`Model::eval_stream`], and reports the
    /// valid handshake instead of failing on it: `outputs` gets `n_outputs() + 1` words per
    /// vector, the last one `valid_out` as seen `latency` cycles after the vector (1 without
    /// a handshake). Bubble cycles (`valid_in` low, the data ports driven with the next
    /// vector's bits inverted) are inserted before group `g` of `lanes` vectors as
    /// [`bubbles_before`]`(first / lanes + g)` says; every cycle whose `valid_in` was low
    /// (bubbles, padding lanes, the idle cycles left in the pipe by the previous call) is
    /// checked for `valid_out` low and counted in `log`.
    pub fn eval_handshake(
        &mut self,
        inputs: &[u64],
        outputs: &mut [u64],
        first: u64,
        log: &mut Handshake,
    ) -> Result<()> {
        if !self.inner.spec.is_clocked() {
            return Err(SimError::Usage(format!(
                "`{}` has no clock; use eval_comb",
                self.inner.spec.top
            )));
        }
        let (ni, no, lanes) = (self.n_inputs(), self.n_outputs(), self.inner.lanes);
        let n = inputs.len() / ni.max(1);
        if inputs.len() != n * ni || outputs.len() != n * (no + 1) {
            return Err(SimError::Usage(format!(
                "buffer sizes do not match the core: {} input words for {ni} per vector, \
                 {} output words for {no} + 1 (valid) per vector",
                inputs.len(),
                outputs.len()
            )));
        }
        let (ri, ro) = (self.inner.raw_in, self.inner.raw_out);
        let has_valid = self.inner.spec.has_valid();
        let lat = self.inner.spec.latency as usize;
        let groups = n.div_ceil(lanes);
        let g0 = first / lanes.max(1) as u64;
        // Input slots: `Some(g)` a group of vectors, `None` a bubble before the next group.
        let mut slots: Vec<Option<usize>> = Vec::with_capacity(groups + groups / 4 + 4);
        for g in 0..groups {
            if has_valid {
                slots.extend(std::iter::repeat_n(None, bubbles_before(g0 + g as u64)));
            }
            slots.push(Some(g));
        }
        let cycles = slots.len() + lat;
        let masks: Vec<u64> = self.inner.spec.data_inputs().map(|p| p.mask()).collect();
        let mut raw_in = std::mem::take(&mut self.raw_in);
        let mut raw_out = std::mem::take(&mut self.raw_out);
        raw_in.clear();
        raw_in.resize(cycles * lanes * ri, 0);
        raw_out.clear();
        raw_out.resize(cycles * lanes * ro, 0);
        // The group a bubble's data comes from: the next group (inverted).
        let mut next_group = vec![0usize; slots.len()];
        let mut nxt = groups.saturating_sub(1);
        for (c, s) in slots.iter().enumerate().rev() {
            if let Some(g) = s {
                nxt = *g;
            }
            next_group[c] = nxt;
        }
        for (c, s) in slots.iter().enumerate() {
            for l in 0..lanes {
                let row = &mut raw_in[(c * lanes + l) * ri..(c * lanes + l + 1) * ri];
                match s {
                    Some(g) => {
                        let idx = g * lanes + l;
                        if idx < n {
                            row[..ni].copy_from_slice(&inputs[idx * ni..(idx + 1) * ni]);
                            if has_valid {
                                row[ni] = 1;
                            }
                        }
                    }
                    None => {
                        let idx = (next_group[c] * lanes + l).min(n - 1);
                        for ((o, v), m) in row[..ni]
                            .iter_mut()
                            .zip(&inputs[idx * ni..(idx + 1) * ni])
                            .zip(&masks)
                        {
                            *o = !v & m;
                        }
                    }
                }
            }
        }
        let result = self.cycle_raw(&raw_in, &mut raw_out, cycles);
        log.cycles += cycles as u64;
        if result.is_ok() {
            for c in 0..cycles {
                let src = c
                    .checked_sub(lat)
                    .and_then(|k| slots.get(k).map(|s| (k, *s)));
                for l in 0..lanes {
                    let row = &raw_out[(c * lanes + l) * ro..(c * lanes + l + 1) * ro];
                    let valid = if has_valid { row[no] & 1 } else { 1 };
                    let vector = match src {
                        Some((_, Some(g))) => Some(g * lanes + l).filter(|&i| i < n),
                        _ => None,
                    };
                    match vector {
                        Some(i) => {
                            let o = &mut outputs[i * (no + 1)..(i + 1) * (no + 1)];
                            o[..no].copy_from_slice(&row[..no]);
                            o[no] = valid;
                        }
                        None if has_valid => {
                            log.bubbles += 1;
                            if valid == 1 {
                                // The vector after the bubble, and what the bubble drove.
                                let (idx, data) = match src {
                                    Some((k, _)) => {
                                        let at = (k * lanes + l) * ri;
                                        (
                                            (next_group[k] * lanes + l).min(n - 1),
                                            raw_in[at..at + ni].to_vec(),
                                        )
                                    }
                                    None => (0, vec![0; ni]),
                                };
                                log.spurious.push(Spurious {
                                    vector: idx,
                                    lane: l,
                                    inputs: data,
                                });
                            }
                        }
                        None => {}
                    }
                }
            }
        }
        self.raw_in = raw_in;
        self.raw_out = raw_out;
        result
    }

    /// Resets a clocked core in the middle of a run ([`Model::reset`]) and checks what the
    /// core shows after the reset: `valid_out` low on each of the `latency + 1` idle cycles
    /// (counted as bubbles in `log`; a high one is recorded as spurious, vector `vector`).
    pub fn reset_checked(&mut self, vector: usize, log: &mut Handshake) -> Result<()> {
        let Some(reset) = self.inner.api.reset else {
            return Ok(());
        };
        // SAFETY: live handle.
        let rc = unsafe { reset(self.handle.as_ptr(), 4) };
        self.check(rc)?;
        let idle = self.inner.spec.latency as usize + 1;
        let (lanes, ri, ro) = (self.inner.lanes, self.inner.raw_in, self.inner.raw_out);
        let zeros = vec![0u64; idle * lanes * ri];
        let mut out = vec![0u64; idle * lanes * ro];
        self.cycle_raw(&zeros, &mut out, idle)?;
        log.cycles += 4 + idle as u64;
        log.resets += 1;
        if self.inner.spec.has_valid() {
            let no = self.n_outputs();
            for (k, row) in out.chunks_exact(ro).enumerate() {
                log.bubbles += 1;
                if row[no] & 1 == 1 {
                    log.spurious.push(Spurious {
                        vector,
                        lane: k % lanes,
                        inputs: vec![0; self.n_inputs()],
                    });
                }
            }
        }
        Ok(())
    }

    /// Writes a VCD of these vectors (requires a trace build, see
    /// [`ModelLibrary::trace_variant`]); clocked cores are reset first. Returns the path.
    pub fn replay_vcd(&mut self, inputs: &[u64], vcd_path: &Path) -> Result<PathBuf> {
        if !self.inner.options.trace {
            return Err(SimError::Usage(
                "VCD replay needs a trace build; use ModelLibrary::trace_variant".into(),
            ));
        }
        check_vcd_target(vcd_path)?;
        if let Some(parent) = vcd_path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| SimError::io(format!("creating {}", parent.display()), e))?;
        }
        let cpath = CString::new(vcd_path.to_string_lossy().as_bytes()).map_err(|_| {
            SimError::Usage(format!(
                "VCD path {} contains a NUL byte",
                vcd_path.display()
            ))
        })?;
        // SAFETY: live handle, NUL-terminated path.
        let rc = unsafe { (self.inner.api.trace_open)(self.handle.as_ptr(), cpath.as_ptr()) };
        self.check(rc)?;
        // Whole vectors only (a counterexample of a bubble also lists `valid_in`).
        let ni = self.n_inputs().max(1);
        let n = inputs.len() / ni;
        let inputs = &inputs[..n * ni];
        let clocked = self.inner.spec.is_clocked();
        // A clocked core is replayed whatever its handshake shows (that may be the bug).
        let mut outputs = vec![0u64; n * (self.n_outputs() + usize::from(clocked))];
        let run = self.reset().and_then(|()| {
            if clocked {
                self.eval_handshake(inputs, &mut outputs, 0, &mut Handshake::default())
            } else {
                self.eval(inputs, &mut outputs)
            }
        });
        // SAFETY: live handle.
        let rc = unsafe { (self.inner.api.trace_close)(self.handle.as_ptr()) };
        run?;
        self.check(rc)?;
        Ok(vcd_path.to_path_buf())
    }
}

/// Bubble cycles (`valid_in` low) inserted before vector group `g` of a clocked core, or
/// before vector `g` of a combinational core with a valid handshake: runs of 1, 1 and 1 to 3
/// bubbles in every 32 groups (one cycle in eight), a pure function of `g`.
pub fn bubbles_before(g: u64) -> usize {
    match g % 32 {
        5 | 21 => 1,
        13 => 1 + ((g / 32) % 3) as usize,
        _ => 0,
    }
}

/// What the valid handshake showed on the cycles whose `valid_in` was low
/// ([`Model::eval_handshake`], [`Model::reset_checked`]).
#[derive(Clone, Debug, Default)]
pub struct Handshake {
    /// Lane-cycles checked for `valid_out` low.
    pub bubbles: u64,
    /// Cycles run per lane (reset cycles included).
    pub cycles: u64,
    /// Resets asserted by [`Model::reset_checked`].
    pub resets: u64,
    /// Those whose `valid_out` was high.
    pub spurious: Vec<Spurious>,
}

/// A cycle with `valid_in` low whose `valid_out` was high `latency` cycles later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spurious {
    /// The vector (of the call) that followed the bubble.
    pub vector: usize,
    /// The lane.
    pub lane: usize,
    /// The data inputs driven on the bubble cycle.
    pub inputs: Vec<u64>,
}

/// A VCD replay overwrites only a VCD: a file that exists at `path` must be empty or begin
/// with the header of a VCD file (`$date`, `$version`, `$timescale`, `$comment` or `$scope`),
/// so that a user's other file of the same name is never lost.
pub fn check_vcd_target(path: &Path) -> Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(SimError::io(format!("reading {}", path.display()), e)),
    };
    let refuse = |why: &str| {
        Err(SimError::Usage(format!(
            "{} {why}; a counterexample VCD overwrites only an earlier VCD: give another path with --vcd",
            path.display()
        )))
    };
    if !meta.is_file() {
        return refuse("exists and is not a regular file");
    }
    let mut head = [0u8; 64];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path)
            .map_err(|e| SimError::io(format!("reading {}", path.display()), e))?;
        f.read(&mut head)
            .map_err(|e| SimError::io(format!("reading {}", path.display()), e))?
    };
    let text = String::from_utf8_lossy(&head[..n]);
    let t = text.trim_start();
    let vcd = ["$date", "$version", "$timescale", "$comment", "$scope"]
        .iter()
        .any(|k| t.starts_with(k));
    if n == 0 || vcd {
        Ok(())
    } else {
        refuse("exists and is not a VCD file")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bubbles_are_one_cycle_in_eight_in_runs_of_one_to_three() {
        let groups = 32 * 300;
        let total: usize = (0..groups).map(bubbles_before).sum();
        assert_eq!(total, groups as usize / 8);
        let runs: Vec<usize> = (0..groups).map(bubbles_before).filter(|&b| b > 0).collect();
        assert!(runs.contains(&1) && runs.contains(&2) && runs.contains(&3));
        assert!(runs.iter().all(|&b| b <= 3));
    }
}
