//! The equivalence engine: drive a model with every vector of an indexable space on all
//! cores, compare every output bit with a golden function, count, keep the first
//! counterexamples, and summarise as JSON. Unit-agnostic: vectors are `u64` words per port.
//!
//! Work is split into batches claimed from a shared counter; each thread owns one model
//! instance (Verilated models are not shared). A shard `i/n` restricts the run to the
//! `i`-th of `n` equal index ranges; shard summaries combine with [`Summary::merge`].

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Result, SimError};
use crate::model::{Handshake, Model, ModelLibrary};
use crate::spec::{CoreSpec, Port, Role};

/// An indexable set of input vectors: vector `i` for `i < len()`, each `n_inputs` words.
/// `vector` must be a pure function of `i` so the space can be sharded and split.
pub trait VectorSpace: Sync {
    /// Number of vectors.
    fn len(&self) -> u64;
    /// Writes vector `i` (one word per data input port) into `out`.
    fn vector(&self, i: u64, out: &mut [u64]);
    /// Writes vectors `first`, `first + 1`, … as consecutive rows of `ni` words filling
    /// `out`. The default calls [`VectorSpace::vector`] per row; spaces with a cheaper batch
    /// form (an exhaustive space of one port: the indices themselves) override it.
    fn fill(&self, first: u64, ni: usize, out: &mut [u64]) {
        for (k, row) in out.chunks_exact_mut(ni.max(1)).enumerate() {
            self.vector(first + k as u64, row);
        }
    }
    /// Whether the space is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Every combination of the given input widths; port 0 takes the lowest index bits.
#[derive(Clone, Debug)]
pub struct Exhaustive {
    widths: Vec<u32>,
    len: u64,
}

impl Exhaustive {
    /// The full space of `widths` (total ≤ 63 bits).
    pub fn new(widths: &[u32]) -> Result<Self> {
        let total: u32 = widths.iter().sum();
        if total > 63 {
            return Err(SimError::Usage(format!(
                "an exhaustive space of {total} input bits is too large (at most 63)"
            )));
        }
        Ok(Exhaustive {
            widths: widths.to_vec(),
            len: 1u64 << total,
        })
    }

    /// The full space of a core's data inputs.
    pub fn of(spec: &CoreSpec) -> Result<Self> {
        let widths: Vec<u32> = spec.data_inputs().map(|p| p.width).collect();
        Self::new(&widths)
    }
}

impl VectorSpace for Exhaustive {
    fn len(&self) -> u64 {
        self.len
    }

    fn vector(&self, mut i: u64, out: &mut [u64]) {
        for (o, &w) in out.iter_mut().zip(&self.widths) {
            *o = i & ((1u64 << w) - 1);
            i >>= w;
        }
    }
}

/// A space given by a length and a closure.
pub struct FnSpace<F> {
    len: u64,
    f: F,
}

impl<F: Fn(u64, &mut [u64]) + Sync> FnSpace<F> {
    /// Vectors `f(i)` for `i < len`.
    pub fn new(len: u64, f: F) -> Self {
        FnSpace { len, f }
    }
}

impl<F> fmt::Debug for FnSpace<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnSpace").field("len", &self.len).finish()
    }
}

impl<F: Fn(u64, &mut [u64]) + Sync> VectorSpace for FnSpace<F> {
    fn len(&self) -> u64 {
        self.len
    }

    fn vector(&self, i: u64, out: &mut [u64]) {
        (self.f)(i, out)
    }
}

/// Shard `index` of `count` (0-based), written `index/count` on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// Which part, `0..count`.
    pub index: u32,
    /// Into how many equal parts the space is split.
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl Shard {
    /// The index range `[lo, hi)` of this shard in a space of `len` vectors.
    pub fn range(&self, len: u64) -> (u64, u64) {
        let at = |k: u32| ((len as u128 * k as u128) / self.count as u128) as u64;
        (at(self.index), at(self.index + 1))
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = SimError;

    fn from_str(s: &str) -> Result<Shard> {
        let bad = || {
            SimError::Usage(format!(
                "bad shard `{s}`: expected i/n with 0 <= i < n, e.g. `--shard 0/4`"
            ))
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Port name → hex value, in port order; serialises as a JSON object in that order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortValues(pub Vec<(String, String)>);

impl PortValues {
    fn of<'a>(ports: impl Iterator<Item = &'a Port>, words: &[u64]) -> Self {
        PortValues(
            ports
                .zip(words)
                .map(|(p, &w)| {
                    (
                        p.name.clone(),
                        format!("0x{:0width$x}", w & p.mask(), width = p.hex_digits()),
                    )
                })
                .collect(),
        )
    }

    /// The values as words, in port order (fails on a malformed hex string).
    pub fn words(&self) -> Result<Vec<u64>> {
        self.0
            .iter()
            .map(|(name, hex)| {
                u64::from_str_radix(hex.trim_start_matches("0x"), 16).map_err(|_| {
                    SimError::Usage(format!("port `{name}` has a malformed hex value `{hex}`"))
                })
            })
            .collect()
    }

    /// The value of one port, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Serialize for PortValues {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for PortValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PortValues;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of port name to hex value")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<PortValues, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry::<String, String>()? {
                    v.push((k, x));
                }
                Ok(PortValues(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// One failing vector.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counterexample {
    /// Index of the vector in the space.
    pub index: u64,
    /// Data inputs, by port name.
    pub inputs: PortValues,
    /// Golden outputs (masked), by port name.
    pub expected: PortValues,
    /// Simulated outputs (masked), by port name.
    pub got: PortValues,
    /// Output ports that differ.
    pub mismatched_ports: Vec<String>,
}

/// Mismatches sorted without storing them: per mode combination, per flag bit and per
/// class of difference (result off by k ulps, flags only, sign only, NaN …). Counted in the
/// engine's compare step by a [`Classify`] the caller gives ([`EquivConfig::classifier`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Mismatching vectors per mode combination (`rne/satfinite`).
    #[serde(default)]
    pub per_mode: BTreeMap<String, u64>,
    /// Mismatching vectors per flag bit (`underflow`): vectors whose bit differs.
    #[serde(default)]
    pub per_flag: BTreeMap<String, u64>,
    /// Mismatching vectors per class (`result_1ulp`, `flags_only.underflow`, …): one class
    /// per mismatching vector.
    #[serde(default)]
    pub classes: BTreeMap<String, u64>,
}

impl Tally {
    /// Counts one more in `map[key]`.
    pub fn bump(map: &mut BTreeMap<String, u64>, key: &str) {
        match map.get_mut(key) {
            Some(n) => *n += 1,
            None => {
                map.insert(key.to_string(), 1);
            }
        }
    }

    /// Whether nothing is counted.
    pub fn is_empty(&self) -> bool {
        self.per_mode.is_empty() && self.per_flag.is_empty() && self.classes.is_empty()
    }

    /// Adds `o`'s counts.
    pub fn add(&mut self, o: &Tally) {
        for (a, b) in [
            (&mut self.per_mode, &o.per_mode),
            (&mut self.per_flag, &o.per_flag),
            (&mut self.classes, &o.classes),
        ] {
            for (k, v) in b {
                *a.entry(k.clone()).or_default() += v;
            }
        }
    }
}

/// Sorts a mismatching row into a [`Tally`]: `row` is the core's data input row, `got` and
/// `exp` its outputs (the data outputs in [`CoreSpec::data_outputs`] order, then `valid_out`
/// of a clocked core), already masked with the compared bits.
pub trait Classify: Send + Sync {
    /// Counts the mismatch of one row.
    fn classify(&self, row: &[u64], got: &[u64], exp: &[u64], tally: &mut Tally);
}

/// A shared [`Classify`] in an [`EquivConfig`].
#[derive(Clone)]
pub struct Classifier(pub std::sync::Arc<dyn Classify>);

impl fmt::Debug for Classifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Classifier")
    }
}

/// Result of an equivalence run (or of several merged shards).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Unit name (free text, e.g. `mul`).
    pub unit: String,
    /// Format description (free text, e.g. `e4m3`).
    pub format: String,
    /// Top module of the core.
    pub top: String,
    /// Further free-form metadata (modes, seed, generator version, ...).
    pub meta: BTreeMap<String, String>,
    /// Size of the whole vector space (all shards).
    pub space: u64,
    /// Shards covered by this summary.
    pub shards: Vec<Shard>,
    /// Vectors simulated and compared.
    pub vectors: u64,
    /// Vectors whose outputs differ from the golden model in a compared bit.
    pub mismatches: u64,
    /// The first counterexamples by index (at most `counterexample_limit`).
    pub counterexamples: Vec<Counterexample>,
    /// Most counterexamples kept.
    pub counterexample_limit: usize,
    /// Whether every vector of the covered shards was run (false if stopped early).
    pub complete: bool,
    /// Wall-clock seconds (sum over merged shards).
    pub seconds: f64,
    /// `vectors / seconds`.
    pub vectors_per_second: f64,
    /// Worker threads used (max over merged shards).
    pub threads: usize,
    /// Lanes per model evaluation.
    pub lanes: usize,
    /// The outputs compared: `name[width]`, and `name[width] bits 0x..` when only some bits
    /// are compared.
    #[serde(default)]
    pub compared: Vec<String>,
    /// Mismatching vectors per output port.
    #[serde(default)]
    pub mismatches_per_port: BTreeMap<String, u64>,
    /// Where the worker threads spent their time (thread-seconds summed over threads; absent
    /// from runs that do not measure it, e.g. stream runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// Lane-cycles whose `valid_in` was low (bubbles between vectors, idle cycles after a
    /// reset) and whose `valid_out` was checked low; 0 for a core without a handshake.
    #[serde(default)]
    pub bubbles: u64,
    /// Clocked cores: the fewest cycles any lane (core instance) ran, bubbles and reset
    /// cycles included (0 for a combinational core).
    #[serde(default)]
    pub cycles_per_lane: u64,
    /// Clocked cores: resets asserted in the middle of every lane's run (after the one
    /// before the first vector).
    #[serde(default)]
    pub resets_per_lane: u64,
    /// Mismatches per mode combination, per flag bit and per class (empty when the run had
    /// no classifier or no mismatch).
    #[serde(default)]
    pub mismatch_classes: Tally,
}

/// Thread-seconds of an equivalence run by step of the engine's loop, summed over threads:
/// what bounds the rate. `model / vectors` is the Verilator model's cost per vector, so
/// `threads × vectors / model` is the rate the engine could reach if stimulus, golden model
/// and compare were free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Writing the input rows ([`VectorSpace::fill`]).
    pub stimulus: f64,
    /// Evaluating the Verilator model.
    pub model: f64,
    /// Computing the expected outputs.
    pub golden: f64,
    /// Comparing outputs.
    pub compare: f64,
}

impl Phases {
    fn add(self, o: Phases) -> Phases {
        Phases {
            stimulus: self.stimulus + o.stimulus,
            model: self.model + o.model,
            golden: self.golden + o.golden,
            compare: self.compare + o.compare,
        }
    }

    /// Thread-seconds of all four steps.
    pub fn total(&self) -> f64 {
        self.stimulus + self.model + self.golden + self.compare
    }

    /// `stimulus a ns, model b ns, golden c ns, compare d ns per vector (thread time)`.
    pub fn per_vector(&self, vectors: u64) -> String {
        let ns = |t: f64| t * 1e9 / vectors.max(1) as f64;
        format!(
            "stimulus {:.1} ns, model {:.1} ns, golden {:.1} ns, compare {:.1} ns per vector \
             (thread time)",
            ns(self.stimulus),
            ns(self.model),
            ns(self.golden),
            ns(self.compare)
        )
    }
}

impl Summary {
    /// At least one vector compared, no mismatch, and every vector run. A run that compared
    /// nothing never passes.
    pub fn passed(&self) -> bool {
        self.mismatches == 0 && self.complete && self.vectors > 0
    }

    /// Pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Combines the summaries of disjoint shards of the same run.
    pub fn merge(&self, other: &Summary) -> Result<Summary> {
        let same = self.unit == other.unit
            && self.format == other.format
            && self.top == other.top
            && self.space == other.space
            && self.meta == other.meta;
        if !same {
            return Err(SimError::Usage(format!(
                "cannot merge summaries of different runs ({} {} {} over {} vectors vs \
                 {} {} {} over {})",
                self.unit,
                self.format,
                self.top,
                self.space,
                other.unit,
                other.format,
                other.top,
                other.space
            )));
        }
        let mut shards = self.shards.clone();
        for s in &other.shards {
            if shards.iter().any(|t| t.count != s.count) {
                return Err(SimError::Usage(format!(
                    "cannot merge shard {s} into shards of a different split"
                )));
            }
            if shards.contains(s) {
                return Err(SimError::Usage(format!("shard {s} is present twice")));
            }
            shards.push(*s);
        }
        shards.sort();
        let limit = self.counterexample_limit.max(other.counterexample_limit);
        let mut cex = self.counterexamples.clone();
        cex.extend(other.counterexamples.iter().cloned());
        cex.sort_by_key(|c| c.index);
        cex.truncate(limit);
        let vectors = self.vectors + other.vectors;
        let seconds = self.seconds + other.seconds;
        Ok(Summary {
            unit: self.unit.clone(),
            format: self.format.clone(),
            top: self.top.clone(),
            meta: self.meta.clone(),
            space: self.space,
            shards,
            vectors,
            mismatches: self.mismatches + other.mismatches,
            counterexamples: cex,
            counterexample_limit: limit,
            complete: self.complete && other.complete,
            seconds,
            vectors_per_second: rate(vectors, seconds),
            threads: self.threads.max(other.threads),
            lanes: self.lanes.max(other.lanes),
            compared: self.compared.clone(),
            mismatches_per_port: {
                let mut m = self.mismatches_per_port.clone();
                for (k, v) in &other.mismatches_per_port {
                    *m.entry(k.clone()).or_default() += v;
                }
                m
            },
            phases: match (self.phases, other.phases) {
                (Some(a), Some(b)) => Some(a.add(b)),
                _ => None,
            },
            bubbles: self.bubbles + other.bubbles,
            cycles_per_lane: self.cycles_per_lane.min(other.cycles_per_lane),
            resets_per_lane: self.resets_per_lane.min(other.resets_per_lane),
            mismatch_classes: {
                let mut t = self.mismatch_classes.clone();
                t.add(&other.mismatch_classes);
                t
            },
        })
    }

    /// What the clocking of the run covered, for a clocked core: `N cycles per lane (R
    /// reset(s) mid-run, B bubble cycles checked)`; `None` for a combinational core.
    pub fn clocking(&self) -> Option<String> {
        (self.cycles_per_lane > 0).then(|| {
            format!(
                "{} cycles per lane ({} reset(s) mid-run, {} bubble cycles checked)",
                self.cycles_per_lane, self.resets_per_lane, self.bubbles
            )
        })
    }

    /// Whether the merged shards cover the whole space.
    pub fn covers_all_shards(&self) -> bool {
        match self.shards.first() {
            Some(s) => {
                self.shards.len() == s.count as usize
                    && self
                        .shards
                        .iter()
                        .enumerate()
                        .all(|(i, t)| t.index as usize == i)
            }
            None => false,
        }
    }
}

fn rate(vectors: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        vectors as f64 / seconds
    } else {
        0.0
    }
}

/// Progress of a running check, reported about every 100 ms and once at the end.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Vectors done so far.
    pub done: u64,
    /// Vectors in this shard.
    pub total: u64,
    /// Mismatches so far.
    pub mismatches: u64,
    /// Seconds since the start.
    pub seconds: f64,
}

/// Options of an equivalence run.
#[derive(Clone, Debug)]
pub struct EquivConfig {
    /// Worker threads (0 = all available cores).
    pub threads: usize,
    /// Vectors per batch handed to a thread.
    pub batch: usize,
    /// Counterexamples to keep.
    pub max_counterexamples: usize,
    /// Stop once this many mismatches are seen (`None` = run everything).
    pub stop_after_mismatches: Option<u64>,
    /// Which part of the space to run.
    pub shard: Shard,
    /// Per data output, the bits to compare (`None` = all bits of every port).
    pub output_masks: Option<Vec<u64>>,
    /// Unit name for the summary.
    pub unit: String,
    /// Format description for the summary.
    pub format: String,
    /// Extra metadata for the summary.
    pub meta: BTreeMap<String, String>,
    /// A worker that finishes no piece of work for this long is hung (a runaway loop in the
    /// core never returns from the model's evaluation): the process prints an error naming
    /// the core and exits with status 1 (`None`: wait forever). Default: 60 s, or
    /// `FP8GEN_SIM_WATCHDOG_SECS` ([`default_watchdog`]).
    pub watchdog: Option<Duration>,
    /// Sorts mismatches into per-mode, per-flag-bit and per-class counts (`None`: only the
    /// per-port counts).
    pub classifier: Option<Classifier>,
}

impl Default for EquivConfig {
    fn default() -> Self {
        EquivConfig {
            threads: 0,
            batch: 1 << 14,
            max_counterexamples: 8,
            stop_after_mismatches: None,
            shard: Shard::default(),
            output_masks: None,
            unit: String::new(),
            format: String::new(),
            meta: BTreeMap::new(),
            watchdog: default_watchdog(),
            classifier: None,
        }
    }
}

/// Callback receiving [`Progress`] reports from worker threads.
pub type ProgressFn<'a> = &'a (dyn Fn(&Progress) + Sync);

struct Local {
    mismatches: u64,
    cex: Vec<Counterexample>,
    per_port: Vec<u64>,
    phases: Phases,
    /// Lane-cycles (rows) with `valid_in` low checked.
    bubbles: u64,
    /// Cycles this thread's lanes ran (clocked cores).
    cycles: u64,
    /// Resets in the middle of this thread's run.
    resets: u64,
    /// Mismatches sorted by the classifier.
    tally: Tally,
}

fn compared_list(out_ports: &[&Port], masks: &[u64]) -> Vec<String> {
    out_ports
        .iter()
        .zip(masks)
        .filter(|(_, m)| **m != 0)
        .map(|(p, m)| {
            if *m == p.mask() {
                format!("{}[{}]", p.name, p.width)
            } else {
                format!("{}[{}] bits {m:#x}", p.name, p.width)
            }
        })
        .collect()
}

fn per_port_map(out_ports: &[&Port], locals: &[Local]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (k, p) in out_ports.iter().enumerate() {
        let n: u64 = locals
            .iter()
            .map(|l| l.per_port.get(k).copied().unwrap_or(0))
            .sum();
        if n > 0 {
            m.insert(p.name.clone(), n);
        }
    }
    m
}

/// Output masks from a config (validated against the outputs).
fn resolve_masks(spec: &CoreSpec, cfg: &EquivConfig) -> Result<Vec<u64>> {
    let out_ports: Vec<&Port> = spec.data_outputs().collect();
    let no = out_ports.len();
    let masks: Vec<u64> = match &cfg.output_masks {
        Some(m) if m.len() != no => {
            return Err(SimError::Usage(format!(
                "{} output masks given for {no} data outputs of `{}`",
                m.len(),
                spec.top
            )))
        }
        Some(m) => m
            .iter()
            .zip(&out_ports)
            .map(|(m, p)| m & p.mask())
            .collect(),
        None => out_ports.iter().map(|p| p.mask()).collect(),
    };
    if masks.iter().all(|m| *m == 0) {
        return Err(SimError::Usage(format!(
            "no output bit of `{}` is compared; a run that compares nothing proves nothing",
            spec.top
        )));
    }
    Ok(masks)
}

fn resolve_threads(cfg: &EquivConfig) -> usize {
    if cfg.threads == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        cfg.threads
    }
}

/// Compares one output row with the golden row; on a mismatch counts it and keeps a
/// counterexample. Returns whether it matched.
#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
fn compare_row(
    local: &mut Local,
    cfg: &EquivConfig,
    spec: &CoreSpec,
    out_ports: &[&Port],
    masks: &[u64],
    index: u64,
    row: &[u64],
    got: &[u64],
    exp: &[u64],
) -> bool {
    let mut bad = false;
    for (k, ((a, b), m)) in got.iter().zip(exp).zip(masks).enumerate() {
        if (a ^ b) & m != 0 {
            bad = true;
            local.per_port[k] += 1;
        }
    }
    if !bad {
        return true;
    }
    local.mismatches += 1;
    if let Some(c) = &cfg.classifier {
        let exp_m: Vec<u64> = exp.iter().zip(masks).map(|(e, m)| e & m).collect();
        let got_m: Vec<u64> = got.iter().zip(masks).map(|(e, m)| e & m).collect();
        c.0.classify(row, &got_m, &exp_m, &mut local.tally);
    }
    if local.cex.len() < cfg.max_counterexamples {
        let exp_m: Vec<u64> = exp.iter().zip(masks).map(|(e, m)| e & m).collect();
        let got_m: Vec<u64> = got.iter().zip(masks).map(|(e, m)| e & m).collect();
        local.cex.push(Counterexample {
            index,
            inputs: PortValues::of(spec.data_inputs(), row),
            expected: PortValues::of(out_ports.iter().copied(), &exp_m),
            got: PortValues::of(out_ports.iter().copied(), &got_m),
            mismatched_ports: out_ports
                .iter()
                .zip(exp_m.iter().zip(&got_m))
                .filter(|(_, (e, g))| e != g)
                .map(|(p, _)| p.name.clone())
                .collect(),
        });
    }
    false
}

/// What every worker of a run shares: the interface, the compare masks, the work counter and
/// the totals; [`Pool::run`] starts the threads, [`Pool::summary`] assembles the result.
struct Pool<'a> {
    lib: &'a ModelLibrary,
    cfg: &'a EquivConfig,
    /// The compared outputs: the data outputs, then `valid_out` of a clocked core with a
    /// handshake.
    out_ports: Vec<&'a Port>,
    masks: Vec<u64>,
    /// Column of `valid_out` in `out_ports`, if the core has a handshake.
    valid_col: Option<usize>,
    threads: usize,
    /// Units (vectors or streams) of the shard: `[lo, hi)`.
    lo: u64,
    hi: u64,
    /// Distinct units of the shard (`hi - lo` unless the run repeats them).
    span: u64,
    next: AtomicU64,
    /// Claims handed out round-robin (thread `t` takes claims `t`, `t + threads`, …), so
    /// every thread's model runs a known share: `Some(number of claims)`.
    statics: Option<u64>,
    /// Vectors (cycles) to compare in the shard.
    total: u64,
    done: AtomicU64,
    mism: AtomicU64,
    stop: AtomicBool,
    start: Instant,
    last_report: Mutex<Instant>,
    /// Per thread: milliseconds since `start` of its last progress (`u64::MAX`: finished).
    beats: Vec<AtomicU64>,
    /// Workers finished, and the watchdog's wake-up.
    finished: (Mutex<usize>, Condvar),
}

/// One claimed piece of work: units `[first, first + n)`, the `seq`-th claim of its thread,
/// of `count` (known when claims are handed out round-robin, else 0).
struct Claim {
    first: u64,
    n: usize,
    seq: u64,
    count: u64,
}

/// A worker's buffers, allocated once per thread (never per batch or per vector).
#[derive(Default)]
struct Scratch {
    input: Vec<u64>,
    got: Vec<u64>,
    exp: Vec<u64>,
    /// The bubble rows of a combinational batch.
    ext: Vec<u64>,
}

impl Scratch {
    /// Sizes the buffers (growing only; contents are overwritten by the caller).
    fn size(&mut self, input: usize, got: usize, exp: usize) {
        for (v, n) in [
            (&mut self.input, input),
            (&mut self.got, got),
            (&mut self.exp, exp),
        ] {
            if v.len() < n {
                v.resize(n, 0);
            }
        }
    }
}

/// Seconds a worker may go without finishing a piece of work before the run is declared
/// hung: `FP8GEN_SIM_WATCHDOG_SECS` if set (0 = no watchdog), else 60.
pub fn default_watchdog() -> Option<Duration> {
    let secs = std::env::var("FP8GEN_SIM_WATCHDOG_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(60.0);
    (secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

/// Marks a worker finished when it ends, however it ends, and wakes the watchdog.
struct Finish<'p> {
    beat: &'p AtomicU64,
    finished: &'p (Mutex<usize>, Condvar),
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.beat.store(u64::MAX, Ordering::Relaxed);
        let (n, cv) = self.finished;
        if let Ok(mut n) = n.lock() {
            *n += 1;
        }
        cv.notify_all();
    }
}

impl<'a> Pool<'a> {
    fn new(lib: &'a ModelLibrary, cfg: &'a EquivConfig, units: u64, per_unit: u64) -> Result<Self> {
        let spec = lib.spec();
        let mut masks = resolve_masks(spec, cfg)?;
        if cfg.shard.count == 0 || cfg.shard.index >= cfg.shard.count {
            return Err(SimError::Usage(format!("bad shard {}", cfg.shard)));
        }
        let (lo, hi) = cfg.shard.range(units);
        let mut out_ports: Vec<&Port> = spec.data_outputs().collect();
        let valid_col = if spec.has_valid() {
            // Harness-driven handshake: `valid_out` is compared as one more column.
            out_ports.extend(spec.port_with_role(Role::ValidOut));
            masks.push(1);
            Some(out_ports.len() - 1)
        } else if !spec.is_clocked() && spec.port_with_role(Role::ValidIn).is_some() {
            out_ports.iter().position(|p| p.role == Role::ValidOut)
        } else {
            None
        };
        let threads = resolve_threads(cfg).max(1);
        Ok(Pool {
            lib,
            cfg,
            out_ports,
            masks,
            valid_col,
            threads,
            lo,
            hi,
            span: hi - lo,
            next: AtomicU64::new(lo),
            statics: None,
            total: (hi - lo) * per_unit,
            done: AtomicU64::new(0),
            mism: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            start: Instant::now(),
            last_report: Mutex::new(Instant::now()),
            beats: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            finished: (Mutex::new(0), Condvar::new()),
        })
    }

    /// Runs the shard's units `passes` times over (unit `u` is unit `lo + (u - lo) % span`).
    fn repeat(&mut self, passes: u64) {
        self.hi = self.lo + self.span * passes;
        self.total = self.span * passes;
    }

    /// The shard's unit that run unit `u` stands for.
    fn unit(&self, u: u64) -> u64 {
        self.lo + (u - self.lo) % self.span.max(1)
    }

    fn beat(&self, t: usize) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.beats[t].store(ms, Ordering::Relaxed);
    }

    /// Watches the workers' progress until all have finished; a worker stuck in one piece
    /// of work for longer than `limit` ends the process (see [`EquivConfig::watchdog`]).
    fn watch(&self, limit: Duration) {
        let tick = (limit / 10).clamp(Duration::from_millis(10), Duration::from_millis(200));
        let (n, cv) = &self.finished;
        let Ok(mut done) = n.lock() else { return };
        while *done < self.threads {
            done = match cv.wait_timeout(done, tick) {
                Ok((d, _)) => d,
                Err(_) => return,
            };
            let now = self.start.elapsed().as_millis() as u64;
            for b in &self.beats {
                let last = b.load(Ordering::Relaxed);
                if last != u64::MAX && now.saturating_sub(last) as u128 > limit.as_millis() {
                    self.stalled(limit);
                }
            }
        }
    }

    /// A worker made no progress for `limit`: it is inside the Verilated model's evaluation,
    /// which cannot be interrupted from outside (a thread cannot be cancelled, and the
    /// evaluation never returns). The only way to end the run within a bounded time is to
    /// end the process: the error is printed and the process exits with status 1.
    fn stalled(&self, limit: Duration) -> ! {
        eprintln!(
            "error: simulation of `{}` made no progress for {} s: a combinational loop or a \
             runaway loop (while/for) in the core? The Verilated model's evaluation did not \
             return; the run is abandoned and fp8gen exits (status 1), since a thread inside \
             the model cannot be stopped. Set FP8GEN_SIM_WATCHDOG_SECS to change the limit \
             (0 = none).",
            self.lib.spec().top,
            limit.as_secs_f64()
        );
        std::process::exit(1)
    }

    fn report(&self, progress: Option<ProgressFn<'_>>, force: bool) {
        let Some(cb) = progress else { return };
        let due = match self.last_report.try_lock() {
            Ok(mut t) if force || t.elapsed() >= Duration::from_millis(100) => {
                *t = Instant::now();
                true
            }
            _ => false,
        };
        if due {
            cb(&Progress {
                done: self.done.load(Ordering::Relaxed),
                total: self.total,
                mismatches: self.mism.load(Ordering::Relaxed),
                seconds: self.start.elapsed().as_secs_f64(),
            });
        }
    }

    /// Compares one row (inline, the common case) and on a difference counts it and keeps
    /// the counterexample ([`compare_row`], out of line).
    #[inline]
    fn compare(
        &self,
        local: &mut Local,
        index: u64,
        row: &[u64],
        got: &[u64],
        exp: &[u64],
    ) -> bool {
        let same = got
            .iter()
            .zip(exp)
            .zip(&self.masks)
            .all(|((a, b), m)| (a ^ b) & m == 0);
        same || compare_row(
            local,
            self.cfg,
            self.lib.spec(),
            &self.out_ports,
            &self.masks,
            index,
            row,
            got,
            exp,
        )
    }

    /// A cycle (or combinational row) with `valid_in` low whose `valid_out` was high: a
    /// mismatch on the `valid_out` port, with the data driven on that cycle.
    #[cold]
    #[inline(never)]
    fn bubble_mismatch(&self, local: &mut Local, index: u64, row: &[u64]) {
        let Some(vo) = self.valid_col else { return };
        let spec = self.lib.spec();
        let name = self.out_ports[vo].name.clone();
        local.per_port[vo] += 1;
        local.mismatches += 1;
        if self.cfg.classifier.is_some() {
            Tally::bump(&mut local.tally.classes, "valid_out_in_bubble");
        }
        if local.cex.len() < self.cfg.max_counterexamples {
            let mut inputs = PortValues::of(spec.data_inputs(), row);
            if let (true, Some(vi)) = (spec.has_valid(), spec.port_with_role(Role::ValidIn)) {
                inputs.0.push((vi.name.clone(), "0x0".into()));
            }
            local.cex.push(Counterexample {
                index,
                inputs,
                expected: PortValues(vec![(name.clone(), "0x0".into())]),
                got: PortValues(vec![(name.clone(), "0x1".into())]),
                mismatched_ports: vec![name],
            });
        }
    }

    /// Runs `work` on every thread, each with its own model instance, over claims of `step`
    /// units until the shard is done; `work` returns (vectors compared, mismatches).
    fn run<W>(&self, step: usize, progress: Option<ProgressFn<'_>>, work: W) -> Result<Vec<Local>>
    where
        W: Fn(&mut Model, &mut Local, &mut Scratch, Claim) -> Result<(u64, u64)> + Sync,
    {
        let first_err: Mutex<Option<SimError>> = Mutex::new(None);
        let locals: Mutex<Vec<Local>> = Mutex::new(Vec::new());
        let no = self.out_ports.len();
        let nt = self.threads as u64;
        std::thread::scope(|s| {
            if let Some(limit) = self.cfg.watchdog {
                s.spawn(move || self.watch(limit));
            }
            for t in 0..self.threads {
                let (first_err, locals, work) = (&first_err, &locals, &work);
                s.spawn(move || {
                    let _finish = Finish {
                        beat: &self.beats[t],
                        finished: &self.finished,
                    };
                    self.beat(t);
                    let mut local = Local {
                        mismatches: 0,
                        cex: Vec::new(),
                        per_port: vec![0; no],
                        phases: Phases::default(),
                        bubbles: 0,
                        cycles: 0,
                        resets: 0,
                        tally: Tally::default(),
                    };
                    let result = (|| -> Result<()> {
                        let mut model = self.lib.instantiate()?;
                        let mut scratch = Scratch::default();
                        self.beat(t);
                        let count = self
                            .statics
                            .map_or(0, |nb| nb.saturating_sub(t as u64).div_ceil(nt));
                        let mut seq = 0u64;
                        while !self.stop.load(Ordering::Relaxed) {
                            let first = match self.statics {
                                Some(nb) => {
                                    let b = t as u64 + seq * nt;
                                    if b >= nb {
                                        break;
                                    }
                                    self.lo + b * step as u64
                                }
                                None => self.next.fetch_add(step as u64, Ordering::Relaxed),
                            };
                            if first >= self.hi {
                                break;
                            }
                            let n = (self.hi - first).min(step as u64) as usize;
                            let claim = Claim {
                                first,
                                n,
                                seq,
                                count,
                            };
                            let (d, m) = work(&mut model, &mut local, &mut scratch, claim)?;
                            seq += 1;
                            self.beat(t);
                            self.done.fetch_add(d, Ordering::Relaxed);
                            let tm = self.mism.fetch_add(m, Ordering::Relaxed) + m;
                            if self.cfg.stop_after_mismatches.is_some_and(|lim| tm >= lim) {
                                self.stop.store(true, Ordering::Relaxed);
                            }
                            self.report(progress, false);
                        }
                        Ok(())
                    })();
                    if let Err(e) = result {
                        self.stop.store(true, Ordering::Relaxed);
                        if let Ok(mut slot) = first_err.lock() {
                            slot.get_or_insert(e);
                        }
                    }
                    if let Ok(mut l) = locals.lock() {
                        l.push(local);
                    }
                });
            }
        });
        if let Ok(Some(e)) = first_err.into_inner() {
            return Err(e);
        }
        self.report(progress, true);
        Ok(locals.into_inner().unwrap_or_default())
    }

    fn summary(&self, locals: Vec<Local>, space: u64, timed: bool) -> Summary {
        let cfg = self.cfg;
        let seconds = self.start.elapsed().as_secs_f64();
        let mut cex: Vec<Counterexample> =
            locals.iter().flat_map(|l| l.cex.iter().cloned()).collect();
        cex.sort_by_key(|c| c.index);
        cex.truncate(cfg.max_counterexamples);
        let vectors = self.done.load(Ordering::Relaxed);
        // The lanes of threads that ran something: the shortest run and fewest resets.
        let ran: Vec<&Local> = locals.iter().filter(|l| l.cycles > 0).collect();
        Summary {
            compared: compared_list(&self.out_ports, &self.masks),
            mismatches_per_port: per_port_map(&self.out_ports, &locals),
            unit: cfg.unit.clone(),
            format: cfg.format.clone(),
            top: self.lib.spec().top.clone(),
            meta: cfg.meta.clone(),
            space,
            shards: vec![cfg.shard],
            vectors,
            mismatches: locals.iter().map(|l| l.mismatches).sum(),
            counterexamples: cex,
            counterexample_limit: cfg.max_counterexamples,
            complete: vectors == self.total,
            seconds,
            vectors_per_second: rate(vectors, seconds),
            threads: self.threads,
            lanes: self.lib.lanes(),
            phases: timed.then(|| {
                locals
                    .iter()
                    .fold(Phases::default(), |a, l| a.add(l.phases))
            }),
            bubbles: locals.iter().map(|l| l.bubbles).sum(),
            cycles_per_lane: ran.iter().map(|l| l.cycles).min().unwrap_or(0),
            resets_per_lane: ran.iter().map(|l| l.resets).min().unwrap_or(0),
            mismatch_classes: locals.iter().fold(Tally::default(), |mut t, l| {
                t.add(&l.tally);
                t
            }),
        }
    }
}

/// Runs the shard of `space` selected by `cfg` through models of `lib` and compares every
/// vector with `golden(inputs, expected_outputs)`.
pub fn check_equivalence<S, G>(
    lib: &ModelLibrary,
    space: &S,
    golden: G,
    cfg: &EquivConfig,
    progress: Option<ProgressFn<'_>>,
) -> Result<Summary>
where
    S: VectorSpace + ?Sized,
    G: Fn(&[u64], &mut [u64]) + Sync,
{
    let (ni, no) = (lib.spec().n_inputs(), lib.spec().n_outputs());
    check_equivalence_batched(
        lib,
        space,
        |inp: &[u64], exp: &mut [u64]| {
            for (row, e) in inp
                .chunks_exact(ni.max(1))
                .zip(exp.chunks_exact_mut(no.max(1)))
            {
                golden(row, e);
            }
        },
        cfg,
        progress,
    )
}

/// Spaces of at most this many vectors are run on a clocked core for more cycles per lane
/// than they have vectors (see [`check_equivalence_batched`]).
pub const SOAK_MAX_VECTORS: u64 = 1 << 18;

/// [`check_equivalence`] with a golden function over a whole batch: `golden(inputs,
/// expected)` gets the batch's input rows (`n × inputs` words, from [`VectorSpace::fill`])
/// and writes `n × outputs` expected words. The engine's hot loop is then three tight loops
/// (stimulus, golden, compare) around one model evaluation per batch, with no per-vector
/// call through the interface glue.
///
/// The valid handshake is checked wherever a core has one, with bubbles: on a combinational
/// core whose `valid_in`/`valid_out` are data columns, rows with `valid_in` low are inserted
/// between the vectors ([`crate::model::bubbles_before`], about one row in eight, in runs of
/// one to three) and must show `valid_out` low (their data outputs are not compared); every
/// vector of the space is still applied with the `valid_in` the space gives it. Clocked cores
/// are run by [`Model::eval_handshake`] (bubble cycles, `valid_out` compared as one more
/// column), each thread's lanes for a known share of the work with one reset in the middle
/// (`valid_out` checked low after it); a space of at most [`SOAK_MAX_VECTORS`] vectors is
/// repeated until every lane has run more than twice as many cycles as the space has vectors
/// on either side of that reset, so that state that breaks after more inputs than the space
/// holds (a counter) shows. The summary gives the bubbles, the cycles per lane and resets.
pub fn check_equivalence_batched<S, G>(
    lib: &ModelLibrary,
    space: &S,
    golden: G,
    cfg: &EquivConfig,
    progress: Option<ProgressFn<'_>>,
) -> Result<Summary>
where
    S: VectorSpace + ?Sized,
    G: Fn(&[u64], &mut [u64]) + Sync,
{
    if lib.spec().is_clocked() && !lib.spec().stream {
        return check_clocked(lib, space, golden, cfg, progress);
    }
    let spec = lib.spec();
    let (ni, no) = (spec.n_inputs(), spec.n_outputs());
    let pool = Pool::new(lib, cfg, space.len(), 1)?;
    // A combinational handshake: the columns of valid_in and valid_out.
    let vi = spec.data_inputs().position(|p| p.role == Role::ValidIn);
    let hand = vi.zip(pool.valid_col);
    // A multiple of the lane count, so only the last batch pads.
    let lanes = lib.lanes();
    let batch = cfg.batch.max(1).div_ceil(lanes) * lanes;
    let locals = pool.run(batch, progress, |model, local, sc, c| {
        sc.size(c.n * ni, c.n * no, c.n * no);
        // One clock read per step and batch (16 Ki vectors): a few ns per batch.
        let t0 = Instant::now();
        space.fill(c.first, ni, &mut sc.input[..c.n * ni]);
        let (input, got, exp) = (
            &mut sc.input[..c.n * ni],
            &mut sc.got[..c.n * no],
            &mut sc.exp[..c.n * no],
        );
        let t1 = Instant::now();
        model.eval(input, got)?;
        let t2 = Instant::now();
        golden(input, exp);
        let t3 = Instant::now();
        let mut m = 0;
        for k in 0..c.n {
            if !pool.compare(
                local,
                c.first + k as u64,
                &input[k * ni..(k + 1) * ni],
                &got[k * no..(k + 1) * no],
                &exp[k * no..(k + 1) * no],
            ) {
                m += 1;
            }
        }
        if let Some((vi, vo)) = hand {
            // Bubble rows (the vector's data with valid_in low) before the vectors
            // `bubbles_before` picks; a combinational core evaluates them on their own.
            let Scratch { input, ext, .. } = &mut *sc;
            ext.clear();
            let mut at = Vec::new();
            for k in 0..c.n {
                for _ in 0..crate::model::bubbles_before(c.first + k as u64) {
                    ext.extend_from_slice(&input[k * ni..(k + 1) * ni]);
                    let r = ext.len() - ni;
                    ext[r + vi] = 0;
                    at.push(k);
                }
            }
            if !at.is_empty() {
                let mut out = vec![0u64; at.len() * no];
                model.eval(&sc.ext, &mut out)?;
                for (r, &k) in at.iter().enumerate() {
                    local.bubbles += 1;
                    if out[r * no + vo] & 1 != 0 {
                        pool.bubble_mismatch(
                            local,
                            c.first + k as u64,
                            &sc.ext[r * ni..(r + 1) * ni],
                        );
                        m += 1;
                    }
                }
            }
        }
        let t4 = Instant::now();
        local.phases = local.phases.add(Phases {
            stimulus: (t1 - t0).as_secs_f64(),
            model: (t2 - t1).as_secs_f64(),
            golden: (t3 - t2).as_secs_f64(),
            compare: (t4 - t3).as_secs_f64(),
        });
        Ok((c.n as u64, m))
    })?;
    Ok(pool.summary(locals, space.len(), true))
}

/// The clocked part of [`check_equivalence_batched`].
fn check_clocked<S, G>(
    lib: &ModelLibrary,
    space: &S,
    golden: G,
    cfg: &EquivConfig,
    progress: Option<ProgressFn<'_>>,
) -> Result<Summary>
where
    S: VectorSpace + ?Sized,
    G: Fn(&[u64], &mut [u64]) + Sync,
{
    let spec = lib.spec();
    let (ni, no) = (spec.n_inputs(), spec.n_outputs());
    let nv = no + 1;
    let lanes = lib.lanes();
    let len = space.len();
    let mut pool = Pool::new(lib, cfg, len, 1)?;
    let span = pool.span;
    // Every lane runs its share on either side of the mid-run reset: for a small space, more
    // than 2 * len data cycles each.
    let instances = (pool.threads * lanes) as u64;
    let passes = if len <= SOAK_MAX_VECTORS && span > 0 {
        (instances * (4 * len + 4)).div_ceil(span).max(1)
    } else {
        1
    };
    pool.repeat(passes);
    let units = pool.hi - pool.lo;
    // About 16 claims per thread (so the reset falls near the middle), whole lane groups.
    let batch = (units / (pool.threads as u64 * 16))
        .clamp(1, cfg.batch.max(1) as u64)
        .div_ceil(lanes as u64)
        * lanes as u64;
    pool.statics = Some(units.div_ceil(batch));
    let locals = pool.run(batch as usize, progress, |model, local, sc, c| {
        sc.size(c.n * ni, c.n * nv, c.n * nv);
        let mut hs = Handshake::default();
        if c.count >= 2 && c.seq == c.count / 2 {
            model.reset_checked(0, &mut hs)?;
        }
        let (input, got, exp) = (
            &mut sc.input[..c.n * ni],
            &mut sc.got[..c.n * nv],
            &mut sc.exp[..c.n * nv],
        );
        let t0 = Instant::now();
        let rel = c.first - pool.lo;
        let mut k = 0usize;
        while k < c.n {
            let off = (rel + k as u64) % span;
            let run = ((span - off) as usize).min(c.n - k);
            space.fill(pool.lo + off, ni, &mut input[k * ni..(k + run) * ni]);
            k += run;
        }
        let t1 = Instant::now();
        model.eval_handshake(input, got, rel, &mut hs)?;
        let t2 = Instant::now();
        golden(input, &mut exp[..c.n * no]);
        for k in (0..c.n).rev() {
            exp.copy_within(k * no..(k + 1) * no, k * nv);
            exp[k * nv + no] = 1;
        }
        let t3 = Instant::now();
        let mut m = 0;
        for k in 0..c.n {
            if !pool.compare(
                local,
                pool.unit(c.first + k as u64),
                &input[k * ni..(k + 1) * ni],
                &got[k * nv..(k + 1) * nv],
                &exp[k * nv..(k + 1) * nv],
            ) {
                m += 1;
            }
        }
        for b in &hs.spurious {
            pool.bubble_mismatch(local, pool.unit(c.first + b.vector as u64), &b.inputs);
            m += 1;
        }
        local.bubbles += hs.bubbles;
        local.cycles += hs.cycles;
        local.resets += hs.resets;
        let t4 = Instant::now();
        local.phases = local.phases.add(Phases {
            stimulus: (t1 - t0).as_secs_f64(),
            model: (t2 - t1).as_secs_f64(),
            golden: (t3 - t2).as_secs_f64(),
            compare: (t4 - t3).as_secs_f64(),
        });
        Ok((c.n as u64, m))
    })?;
    Ok(pool.summary(locals, len, true))
}

/// A set of input streams for a stateful core in stream mode (see [`CoreSpec::stream`]):
/// stream `s` is `cycles()` rows, row `c` one word per data input. Pure in `(s, c)`.
pub trait StreamSpace: Sync {
    /// Number of streams.
    fn streams(&self) -> u64;
    /// Cycles per stream.
    fn cycles(&self) -> usize;
    /// Writes row `c` of stream `s`.
    fn row(&self, s: u64, c: usize, out: &mut [u64]);
}

/// Runs the shard of `space`'s streams selected by `cfg`: each stream starts from reset in
/// its own lane, and every cycle's outputs are compared with a fresh golden stream model
/// (`new_model()`, called once per stream, stepped once per row). Vectors are cycles;
/// counterexample `index` is `stream * cycles + cycle`. Threads, shards, counterexamples and
/// the summary are those of [`check_equivalence`].
pub fn check_streams<S, M, G>(
    lib: &ModelLibrary,
    space: &S,
    new_model: M,
    cfg: &EquivConfig,
    progress: Option<ProgressFn<'_>>,
) -> Result<Summary>
where
    S: StreamSpace + ?Sized,
    M: Fn() -> G + Sync,
    G: FnMut(&[u64], &mut [u64]),
{
    let spec = lib.spec();
    if !spec.stream {
        return Err(SimError::Usage(format!(
            "`{}` is not described in stream mode; use check_equivalence",
            spec.top
        )));
    }
    let (ni, no) = (spec.n_inputs(), spec.n_outputs());
    let lanes = lib.lanes();
    let cycles = space.cycles();
    let pool = Pool::new(lib, cfg, space.streams(), cycles as u64)?;
    let vi = spec.data_inputs().position(|p| p.role == Role::ValidIn);
    let locals = pool.run(lanes, progress, |model, local, sc, c| {
        sc.size(cycles * lanes * ni, cycles * lanes * no, no);
        let (input, got, exp) = (
            &mut sc.input[..cycles * lanes * ni],
            &mut sc.got[..cycles * lanes * no],
            &mut sc.exp[..no],
        );
        // Lanes beyond the claim replay zeros (their outputs are not compared).
        input.iter_mut().for_each(|w| *w = 0);
        for cy in 0..cycles {
            for l in 0..c.n {
                let at = (cy * lanes + l) * ni;
                space.row(c.first + l as u64, cy, &mut input[at..at + ni]);
            }
        }
        model.reset()?;
        model.eval(input, got)?;
        // Cycles with valid_in low: their valid_out is compared with the golden model's.
        if let Some(vi) = vi {
            local.bubbles += (0..cycles)
                .flat_map(|cy| (0..c.n).map(move |l| (cy * lanes + l) * ni + vi))
                .filter(|&at| input[at] & 1 == 0)
                .count() as u64;
        }
        let mut m = 0;
        for l in 0..c.n {
            let mut g = new_model();
            for cy in 0..cycles {
                let at = cy * lanes + l;
                let row = &input[at * ni..(at + 1) * ni];
                g(row, exp);
                let idx = (c.first + l as u64) * cycles as u64 + cy as u64;
                if !pool.compare(local, idx, row, &got[at * no..(at + 1) * no], exp) {
                    m += 1;
                }
            }
        }
        Ok(((c.n * cycles) as u64, m))
    })?;
    let mut summary = pool.summary(locals, space.streams() * cycles as u64, false);
    // Every lane runs each of its streams from a reset.
    summary.cycles_per_lane = cycles as u64;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_space() {
        for len in [0u64, 1, 7, 1000, u64::MAX] {
            let n = 7;
            let mut prev = 0;
            for i in 0..n {
                let (lo, hi) = Shard { index: i, count: n }.range(len);
                assert_eq!(lo, prev);
                assert!(hi >= lo);
                prev = hi;
            }
            assert_eq!(prev, len);
        }
        assert_eq!(
            "2/5".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 5 }
        );
        for bad in ["5/5", "1", "a/b", "0/0"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("i/n"), "{e}");
        }
    }

    #[test]
    fn exhaustive_space_enumerates_fields() {
        let s = Exhaustive::new(&[2, 3]).unwrap();
        assert_eq!(s.len(), 32);
        let mut v = [0u64; 2];
        s.vector(0b1_0111, &mut v);
        assert_eq!(v, [0b11, 0b101]);
        assert!(Exhaustive::new(&[32, 32]).is_err());
    }

    #[test]
    fn port_values_keep_port_order_in_json() {
        let pv = PortValues(vec![("z".into(), "0x1".into()), ("a".into(), "0x2".into())]);
        let j = serde_json::to_string(&pv).unwrap();
        assert_eq!(j, r#"{"z":"0x1","a":"0x2"}"#);
        let back: PortValues = serde_json::from_str(&j).unwrap();
        assert_eq!(back, pv);
        assert_eq!(back.words().unwrap(), vec![1, 2]);
    }
}
