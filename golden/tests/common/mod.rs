//! Helpers shared by the golden model's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The reference data vendored with the tests: `golden/tests/data/` (see its README for the
/// source of each file).
pub fn reference_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    assert!(
        dir.is_dir(),
        "reference data not found at {}; it is part of the repository (golden/tests/data)",
        dir.display()
    );
    dir
}

/// An exact rational value `sign · m · 2^e` parsed from a C99 hex float such as
/// `-0x1.8p+2` or `0x0.8p-16`; returns (negative, mantissa integer, exponent).
pub fn parse_hex_float(s: &str) -> Option<(bool, u128, i32)> {
    let (neg, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let rest = rest
        .strip_prefix("0x")
        .or_else(|| rest.strip_prefix("0X"))?;
    let (mant, exp) = rest.split_once(['p', 'P'])?;
    let mut e: i32 = exp.parse().ok()?;
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut m: u128 = 0;
    for c in int.chars().chain(frac.chars()) {
        m = m.checked_mul(16)? + c.to_digit(16)? as u128;
    }
    e -= 4 * frac.len() as i32;
    Some((neg, m, e))
}

/// Compares `sig·2^exp` with `m·2^e` exactly.
pub fn same_value(sig: u128, exp: i32, m: u128, e: i32) -> bool {
    if sig == 0 || m == 0 {
        return sig == m;
    }
    let (a, ea) = (
        sig >> sig.trailing_zeros(),
        exp + sig.trailing_zeros() as i32,
    );
    let (b, eb) = (m >> m.trailing_zeros(), e + m.trailing_zeros() as i32);
    a == b && ea == eb
}
