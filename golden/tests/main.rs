//! The integration tests of the golden model, compiled as one test binary: one link instead of one
//! per file, and one pool of test threads, so a slow test never leaves a core idle while
//! other files wait. Each `tests/<name>.rs` is the module `<name>`; run one file's tests with
//! `cargo test -p fp8gen-golden --test tests <name>::`. A new test file must be declared below
//! (`every_test_file_is_compiled` fails otherwise).

mod add_reference;
mod addend;
mod common;
mod dot_reference;
mod exact_addend;
mod mul_ftz;
mod paths;
mod properties;
mod references;
mod rto_overflow;
mod tables;

include!("../../tests/support/every_test_file_is_compiled.rs");
