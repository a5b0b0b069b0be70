//! Shared helpers of the arithmetic-unit tests (`arith_*.rs`): Verilator lint, building a
//! generated core into a `sim` model, and equivalence runs against a golden function.
#![allow(dead_code)]

use rtl::GeneratedCore;
use sim::{
    check_equivalence, BuildOptions, CoreSpec, EquivConfig, FnSpace, ModelLibrary, Summary,
    Toolchain,
};
use std::path::PathBuf;
use std::process::Command;

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("arith-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("create scratch dir");
    base
}

/// `verilator --lint-only -Wall` on a core; returns the diagnostics (empty = clean).
pub fn lint(core: &GeneratedCore) -> String {
    let dir = scratch(&format!("lint-{}", core.top));
    let v = dir.join(format!("{}.v", core.top));
    std::fs::write(&v, &core.verilog).expect("write verilog");
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", &core.top])
        .arg(&v)
        .output()
        .expect("run verilator (apt-get install -y verilator)");
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() && s.trim().is_empty() {
        s = format!("verilator exited with {}", out.status);
    }
    s
}

/// The simulation interface of a generated core. Combinational cores keep `valid_i` /
/// `valid_o` as data ports (first input, last output) because the harness only drives a
/// valid handshake on clocked cores; `raw_valid` makes the same choice for clocked cores
/// (used by the mac driver, which needs idle cycles between steps).
pub fn core_spec(core: &GeneratedCore, raw_valid: bool) -> CoreSpec {
    let mut spec = CoreSpec::from_manifest(&core.manifest);
    spec.stream = raw_valid;
    spec
}

/// Builds (or takes from the cache) the model of a core.
pub fn build(core: &GeneratedCore, lanes: u32, raw_valid: bool) -> ModelLibrary {
    let tc = Toolchain::detect().expect("verilator + C++ compiler");
    let spec = core_spec(core, raw_valid);
    ModelLibrary::build(
        &tc,
        &core.verilog,
        &spec,
        &BuildOptions::default().with_lanes(lanes),
    )
    .unwrap_or_else(|e| panic!("building {}: {e}", core.top))
}

/// Runs `len` vectors (`gen(i, data_inputs)`, data inputs without `valid_i`) through the
/// core and compares with `golden(data_inputs) -> data outputs` (without `valid_o`).
pub fn verify<G, F>(core: &GeneratedCore, lanes: u32, len: u64, gen: G, golden: F) -> Summary
where
    G: Fn(u64, &mut [u64]) + Sync,
    F: Fn(&[u64], &mut [u64]) + Sync,
{
    let lib = build(core, lanes, false);
    verify_with(&lib, core, len, gen, golden)
}

/// [`verify`] on an already built model.
pub fn verify_with<G, F>(
    lib: &ModelLibrary,
    core: &GeneratedCore,
    len: u64,
    gen: G,
    golden: F,
) -> Summary
where
    G: Fn(u64, &mut [u64]) + Sync,
    F: Fn(&[u64], &mut [u64]) + Sync,
{
    let comb = core.manifest.latency == 0;
    let cfg = EquivConfig {
        unit: core.manifest.unit.name().into(),
        format: core.manifest.formats.x.name(),
        ..EquivConfig::default()
    };
    let summary = if comb {
        let space = FnSpace::new(len, |i, out: &mut [u64]| {
            out[0] = 1;
            gen(i, &mut out[1..]);
        });
        check_equivalence(
            lib,
            &space,
            |inp: &[u64], out: &mut [u64]| {
                let n = out.len();
                golden(&inp[1..], &mut out[..n - 1]);
                out[n - 1] = 1;
            },
            &cfg,
            None,
        )
    } else {
        let space = FnSpace::new(len, |i, out: &mut [u64]| gen(i, out));
        check_equivalence(lib, &space, golden, &cfg, None)
    };
    let s = summary.unwrap_or_else(|e| panic!("simulating {}: {e}", core.top));
    eprintln!(
        "{}: {} vectors, {} mismatches, {:.3} s, {:.3e} vectors/s",
        core.top, s.vectors, s.mismatches, s.seconds, s.vectors_per_second
    );
    for c in s.counterexamples.iter().take(4) {
        eprintln!(
            "  counterexample #{}: inputs {:?} expected {:?} got {:?}",
            c.index, c.inputs.0, c.expected.0, c.got.0
        );
    }
    s
}

/// SplitMix64 hash (deterministic structured-random choices as a pure function of an index).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
