//! The integration tests of the RTL generator, compiled as one test binary: one link instead of one
//! per file, and one pool of test threads, so a slow test never leaves a core idle while
//! other files wait. Each `tests/<name>.rs` is the module `<name>`; run one file's tests with
//! `cargo test -p fp8gen-rtl --test tests <name>::`. A new test file must be declared below
//! (`every_test_file_is_compiled` fails otherwise).

mod arith_fma;
mod arith_mac;
mod arith_mul;
mod arith_util;
mod common;
mod functional;
mod golden_meaning;
mod lint;
mod mixed_formats;
mod snapshots;
mod testbench;

include!("../../tests/support/every_test_file_is_compiled.rs");
