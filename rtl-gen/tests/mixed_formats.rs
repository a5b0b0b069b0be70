//! Generation never fails with an internal error for mixed operand formats: every pair of a
//! grid of P3109 formats (K = 3 … 16 bits, precisions 1 … K-1, signed and unsigned, finite and
//! extended) for `fma`, and against the presets for `mac` (an exponent-difference wire once came out narrower than the
//! exponent wires it subtracts: "al_dz: sext of 11 bits to 10", e.g. Binary10p1se x E4M3).

use golden::{Format, Rounding, Saturation};
use rtl::manifest::{Formats, Unit};
use rtl::{generate, GenOptions, GenRequest, RoundingSel, SaturationSel};

fn grid() -> Vec<Format> {
    let mut v = Vec::new();
    for k in [3u32, 4, 5, 6, 8, 10, 12, 16] {
        for p in [1u32, 2, 3, k / 2, k - 1] {
            for sign in ["s", "u"] {
                for dom in ["e", "f"] {
                    if let Ok(f) = Format::parse(&format!("binary{k}p{p}{sign}{dom}")) {
                        if !v.contains(&f) {
                            v.push(f);
                        }
                    }
                }
            }
        }
    }
    v.extend([Format::E4M3, Format::E5M2, Format::E4M3FNUZ]);
    v
}

#[test]
fn fma_and_mac_generate_for_every_pair_of_mixed_formats() {
    let g = grid();
    assert!(g.len() > 60, "{}", g.len());
    let mut failures = Vec::new();
    let mut n = 0;
    for unit in [Unit::Fma, Unit::Mac] {
        for x in &g {
            for y in &g {
                // mac shares fma's datapath: its pairs are checked against the presets only.
                if unit == Unit::Mac
                    && !matches!(*y, Format::E4M3 | Format::E5M2 | Format::E4M3FNUZ)
                {
                    continue;
                }
                let req = GenRequest {
                    unit,
                    formats: Formats {
                        x: *x,
                        y: Some(*y),
                        r: Format::BINARY32,
                        scale: None,
                        z: None,
                    },
                    rounding: RoundingSel::Fixed(Rounding::Rne),
                    saturation: SaturationSel::Fixed(Saturation::SatNone),
                    sr_bits: 0,
                    stages: 0,
                    options: GenOptions::default(),
                };
                n += 1;
                if let Err(e) = generate(&req) {
                    failures.push(format!("{} {} x {}: {e}", unit.name(), x.name(), y.name()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} requests failed, e.g.:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}
