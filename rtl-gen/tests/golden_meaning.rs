//! The golden meaning of the decode outputs is self-consistent and agrees with the golden
//! model: `exact_in_binary32` holds exactly when every code converts to binary32 without any
//! flag (NaN codes aside: a signaling binary16 NaN raises invalid), `r_o` is that conversion, and `sig_o · 2^(exp_o − (P−1))` is the exact value.

use golden::{convert, Class, Format, Rounding, Saturation, Spec, Specials};
use rtl::units::decode::{exact_in_binary32, exp_width, golden_outputs};

fn formats() -> Vec<Format> {
    let mut v: Vec<Format> = golden::PRESETS.iter().map(|p| p.1).collect();
    for k in 2..=16u32 {
        for p in 1..=k {
            for signed in [true, false] {
                for ext in [true, false] {
                    if let Ok(f) = Format::p3109(k, p, signed, ext) {
                        v.push(f);
                    }
                }
            }
        }
    }
    for bias in [-3, 0, 3, 20, 120, 130, 140, 200] {
        for sp in Specials::ALL {
            if let Ok(f) = Format::new(8, 3, bias, sp != Specials::E8m0, sp) {
                v.push(f);
            }
        }
    }
    v.push(Format::BINARY16);
    v.push(Format::BFLOAT16);
    v
}

#[test]
fn exact_in_binary32_matches_golden() {
    let spec = Spec::new(Rounding::Rne, Saturation::SatNone);
    let mut n_exact = 0;
    let fs = formats();
    for f in &fs {
        let all_exact = (0..f.num_codes() as u32)
            .all(|c| f.is_nan_code(c) || convert(f, c, &Format::BINARY32, &spec, 0).1 .0 == 0);
        assert_eq!(exact_in_binary32(f), all_exact, "{}", f.name());
        n_exact += all_exact as usize;
    }
    eprintln!("{} formats, {n_exact} exact in binary32", fs.len());
}

#[test]
fn decode_fields_are_the_exact_value() {
    for f in formats() {
        let ew = exp_width(&f);
        for c in 0..f.num_codes() {
            let o = golden_outputs(&f, c);
            let d = f.decode(c as u32);
            let (sign, exp, sig) = (o[o.len() - 3], o[o.len() - 2], o[o.len() - 1]);
            let class = o[0];
            let want_class = match d.class {
                Class::Nan => 8,
                Class::Inf => 4,
                Class::Zero => 2,
                Class::Subnormal => 1,
                Class::Normal => 0,
            };
            assert_eq!(class, want_class);
            if !matches!(d.class, Class::Normal | Class::Subnormal) {
                assert_eq!((exp, sig), (0, 0));
                continue;
            }
            // Sign-extend exp_o and rebuild the value.
            let e = ((exp << (64 - ew)) as i64) >> (64 - ew);
            assert!(
                sig >> (f.p - 1) == 1 && sig >> f.p == 0,
                "{} {c:#x}",
                f.name()
            );
            let v = sig as f64 * golden::pow2(e as i32 - (f.p as i32 - 1));
            let s = if sign == 1 { -v } else { v };
            assert_eq!(s, d.to_f64(), "{} code {c:#x}", f.name());
            if exact_in_binary32(&f) {
                assert_eq!(f32::from_bits(o[1] as u32) as f64, d.to_f64());
            }
        }
    }
}
