//! The integration tests of the prover, compiled as one test binary: one link instead of one
//! per file, and one pool of test threads, so a slow test never leaves a core idle while
//! other files wait. Each `tests/<name>.rs` is the module `<name>`; run one file's tests with
//! `cargo test -p fp8gen-formal --test tests <name>::`. A new test file must be declared below
//! (`every_test_file_is_compiled` fails otherwise).

mod prove;
mod prove_dotmac;
mod reference;

include!("../../tests/support/every_test_file_is_compiled.rs");
