//! Simulation layer of fp8gen: builds generated Verilog with Verilator into a cached shared
//! library behind a tiny C ABI, loads it, drives it (combinational or pipelined, many lanes
//! per `eval()`), replays vectors into VCD files, and checks equivalence against a golden
//! function on all cores with a JSON [`Summary`].
//!
//! ```no_run
//! use sim::{BuildOptions, CoreSpec, ModelLibrary, Port, Toolchain};
//! let tc = Toolchain::detect()?;
//! let spec = CoreSpec::combinational("inc", vec![Port::input("a", 8), Port::output("y", 8)]);
//! let verilog = "module inc(input [7:0] a, output [7:0] y); assign y = a + 8'd1; endmodule";
//! let lib = ModelLibrary::build(&tc, verilog, &spec, &BuildOptions::default())?;
//! let mut m = lib.instantiate()?;
//! let mut y = [0u64; 2];
//! m.eval(&[1, 255], &mut y)?;
//! assert_eq!(y, [2, 0]);
//! # Ok::<(), sim::SimError>(())
//! ```

mod builder;
mod cache;
mod equiv;
mod error;
mod model;
mod spec;
mod toolchain;

pub use builder::{
    BuildOptions, Preprocessed, SourceFile, Sources, HARNESS_VERSION, MAX_LANES, SIMULATOR_MACROS,
    WRAPPER_MODULE,
};
pub use cache::{
    clean as clean_cache, default_cache_dir, max_models_bytes as cache_limit_bytes,
    usage as cache_usage, CleanReport,
};
pub use equiv::{
    check_equivalence, check_equivalence_batched, check_streams, default_watchdog, Classifier,
    Classify, Counterexample, EquivConfig, Exhaustive, FnSpace, Phases, PortValues, Progress,
    ProgressFn, Shard, StreamSpace, Summary, Tally, VectorSpace, SOAK_MAX_VECTORS,
};
pub use error::{Result, SimError};
pub use model::{bubbles_before, check_vcd_target, Handshake, Model, ModelLibrary, Spurious};
pub use spec::{width_mask, CoreSpec, Direction, Port, Role};
pub use toolchain::Toolchain;
