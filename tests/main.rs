//! The integration tests of the fp8gen command line, compiled as one test binary: one link instead of one
//! per file, and one pool of test threads, so a slow test never leaves a core idle while
//! other files wait. Each `tests/<name>.rs` is the module `<name>`; run one file's tests with
//! `cargo test -p fp8gen --test tests <name>::`. A new test file must be declared below
//! (`every_test_file_is_compiled` fails otherwise).

mod add;
mod addend;
mod byo;
mod cli;
mod common;
mod docs_examples;
mod dot;
mod equivalence;
mod outdir;
mod prove_dotmac;
mod python_refs;
mod quantize;
mod report;
mod slurm;
mod trust_text;
mod units;
mod verify_clocked;
mod verify_trust;

include!("support/every_test_file_is_compiled.rs");
