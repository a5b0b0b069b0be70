//! Known-answer tests for decode: every P3109 working-group value table (K = 3..10) and
//! tables of known OCP / FNUZ / MX values.

use crate::common;

use common::{parse_hex_float, reference_dir, same_value};
use golden::{Class, Format, Specials};

#[test]
fn decode_matches_every_p3109_value_table() {
    let dir = reference_dir().join("p3109-value-tables");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("read p3109-value-tables")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    entries.sort();
    assert!(
        entries.len() >= 190,
        "expected the full set of tables, found {}",
        entries.len()
    );
    let mut codes = 0usize;
    for path in &entries {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let f = Format::parse(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(f.name(), name.to_ascii_lowercase());
        let text = std::fs::read_to_string(path).unwrap();
        let mut seen = 0u64;
        for (lineno, line) in text.lines().enumerate().skip(1) {
            let cols: Vec<&str> = line.split(',').collect();
            assert_eq!(cols.len(), 3, "{name}:{}: {line}", lineno + 1);
            let code = u32::from_str_radix(cols[0].trim_start_matches("0x"), 16).unwrap();
            let d = f.decode(code);
            let ctx = format!(
                "{name} code {:#x}: table says {}, model {:?}",
                code, cols[1], d
            );
            match cols[1] {
                "NaN" => assert_eq!(d.class, Class::Nan, "{ctx}"),
                "Inf" => assert!(d.class == Class::Inf && !d.sign, "{ctx}"),
                "-Inf" => assert!(d.class == Class::Inf && d.sign, "{ctx}"),
                v => {
                    let (neg, m, e) =
                        parse_hex_float(v).unwrap_or_else(|| panic!("{ctx}: bad hex float"));
                    assert!(
                        matches!(d.class, Class::Zero | Class::Subnormal | Class::Normal),
                        "{ctx}"
                    );
                    assert!(same_value(d.sig as u128, d.exp, m, e), "{ctx}");
                    if m != 0 {
                        assert_eq!(d.sign, neg, "{ctx}");
                    } else {
                        assert!(!d.sign, "{ctx}: P3109 has no -0");
                    }
                    let sub = cols[2].trim() == "*";
                    assert_eq!(d.class == Class::Subnormal, sub, "{ctx}: subnormal column");
                }
            }
            seen += 1;
        }
        assert_eq!(seen, f.num_codes(), "{name}: table must list every code");
        codes += seen as usize;
    }
    eprintln!("checked {} tables, {codes} code points", entries.len());
}

/// (format, code, expected value as f64 or NaN/inf) — the OCP FP8 spec, OCP MX spec,
/// the FNUZ RFC and ml_dtypes documentation values.
#[test]
fn decode_known_values_of_presets() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let table: &[(&str, u32, f64)] = &[
        ("e4m3", 0x00, 0.0),
        ("e4m3", 0x80, -0.0),
        ("e4m3", 0x01, 2f64.powi(-9)),
        ("e4m3", 0x07, 0.875 * 2f64.powi(-6)),
        ("e4m3", 0x08, 2f64.powi(-6)),
        ("e4m3", 0x38, 1.0),
        ("e4m3", 0x7e, 448.0),
        ("e4m3", 0xfe, -448.0),
        ("e4m3", 0x7f, nan),
        ("e4m3", 0xff, nan),
        ("e4m3", 0x78, 256.0),
        ("e5m2", 0x01, 2f64.powi(-16)),
        ("e5m2", 0x04, 2f64.powi(-14)),
        ("e5m2", 0x3c, 1.0),
        ("e5m2", 0x7b, 57344.0),
        ("e5m2", 0x7c, inf),
        ("e5m2", 0xfc, -inf),
        ("e5m2", 0x7d, nan),
        ("e5m2", 0x7e, nan),
        ("e5m2", 0xff, nan),
        ("e5m2", 0x80, -0.0),
        ("e4m3fnuz", 0x80, nan),
        ("e4m3fnuz", 0x7f, 240.0),
        ("e4m3fnuz", 0xff, -240.0),
        ("e4m3fnuz", 0x01, 2f64.powi(-10)),
        ("e4m3fnuz", 0x40, 1.0),
        ("e5m2fnuz", 0x80, nan),
        ("e5m2fnuz", 0x7f, 57344.0),
        ("e5m2fnuz", 0x01, 2f64.powi(-17)),
        ("e5m2fnuz", 0x40, 1.0),
        ("e4m3b11fnuz", 0x7f, 30.0),
        ("e4m3b11fnuz", 0x01, 2f64.powi(-13)),
        ("e4m3b11fnuz", 0x58, 1.0),
        ("e4m3-ieee", 0x77, 240.0),
        ("e4m3-ieee", 0x78, inf),
        ("e4m3-ieee", 0x79, nan),
        ("e3m4", 0x6f, 15.5),
        ("e3m4", 0x70, inf),
        ("e3m4", 0x30, 1.0),
        ("e3m4", 0x01, 2f64.powi(-6)),
        ("e3m2", 0x1f, 28.0),
        ("e3m2", 0x01, 0.0625),
        ("e3m2", 0x3f, -28.0),
        ("e2m3", 0x1f, 7.5),
        ("e2m3", 0x01, 0.125),
        ("e2m1", 0x1, 0.5),
        ("e2m1", 0x2, 1.0),
        ("e2m1", 0x3, 1.5),
        ("e2m1", 0x4, 2.0),
        ("e2m1", 0x5, 3.0),
        ("e2m1", 0x6, 4.0),
        ("e2m1", 0x7, 6.0),
        ("e2m1", 0xf, -6.0),
        ("e2m1", 0x8, -0.0),
        ("e8m0", 0x00, 2f64.powi(-127)),
        ("e8m0", 0x7f, 1.0),
        ("e8m0", 0xfe, 2f64.powi(127)),
        ("e8m0", 0xff, nan),
        ("binary8p4se", 0x7f, inf),
        ("binary8p4se", 0xff, -inf),
        ("binary8p4se", 0x80, nan),
        ("binary8p4se", 0x7e, 224.0),
        ("binary8p3sf", 0x7f, 57344.0),
        ("binary8p1uf", 0xff, nan),
    ];
    for &(name, code, want) in table {
        let f = Format::parse(name).unwrap();
        let got = f.decode(code).to_f64();
        let ok = if want.is_nan() {
            got.is_nan()
        } else {
            got == want && got.is_sign_negative() == want.is_sign_negative()
        };
        assert!(ok, "{name} {code:#x}: expected {want}, got {got}");
    }
}

#[test]
fn fnuz_and_p3109_aliases_are_bit_identical() {
    let p4sf = Format::parse("binary8p4sf").unwrap();
    let p3sf = Format::parse("binary8p3sf").unwrap();
    for c in 0..256u32 {
        assert_eq!(Format::E4M3FNUZ.decode(c), p4sf.decode(c), "code {c:#x}");
        assert_eq!(Format::E5M2FNUZ.decode(c), p3sf.decode(c), "code {c:#x}");
    }
    assert_eq!(
        Format::parse("BINARY8P4SE").unwrap().specials,
        Specials::P3109Extended
    );
}

#[test]
fn binary32_decode_matches_hardware_f32() {
    // Two independent paths: our decode vs the CPU's f32 → f64 widening.
    let mut x: u32 = 0x1234_5678;
    for i in 0..2_000_000u32 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223) ^ i;
        let d = Format::BINARY32.decode(x);
        let h = f32::from_bits(x) as f64;
        let got = d.to_f64();
        assert!(
            (h.is_nan() && got.is_nan())
                || (h == got && h.is_sign_negative() == got.is_sign_negative()),
            "{x:#010x}"
        );
    }
}
