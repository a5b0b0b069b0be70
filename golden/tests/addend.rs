//! FMA and dot products with any addend format `fz` and result format `fr` (P3109
//! FMA<fx, fy, fz, fr>): known answers for binary16 / bfloat16 / small-format addends and
//! results (overflow, subnormals, NaN, −0), an exact-rational cross-check on random vectors,
//! and the dot product of one element against the FMA.

use golden::{fma, project, DotUnit, Exact, Flags, FmaOptions, Format, Rounding, Saturation, Spec};

const INEXACT: u8 = Flags::INEXACT;
const UNDERFLOW: u8 = Flags::UNDERFLOW;
const OVERFLOW: u8 = Flags::OVERFLOW;
const INVALID: u8 = Flags::INVALID;

fn f(name: &str) -> Format {
    Format::parse(name).unwrap()
}

fn opts(z: Format, r: Format) -> FmaOptions {
    FmaOptions {
        z,
        r,
        ..FmaOptions::default()
    }
}

/// `fma(x, y, z)` of e4m3 operands with addend `fz` and result `fr`.
fn e4(x: u32, y: u32, z: u32, fz: &str, fr: &str, spec: Spec) -> (u32, u8) {
    let e = Format::E4M3;
    let (c, fl) = fma(&e, x, &e, y, z, &spec, opts(f(fz), f(fr)));
    (c, fl.0)
}

#[test]
fn binary16_known_answers() {
    let rne = Spec::ieee(Rounding::Rne);
    let h = "binary16";
    // 1·1 + 1 = 2
    assert_eq!(e4(0x38, 0x38, 0x3c00, h, h, rne), (0x4000, 0));
    // 448·448 = 200704 > 65504: +Inf under satnone, the largest finite under satfinite
    assert_eq!(e4(0x7e, 0x7e, 0, h, h, rne), (0x7c00, OVERFLOW | INEXACT));
    let fin = Spec::new(Rounding::Rne, Saturation::SatFinite);
    assert_eq!(e4(0x7e, 0x7e, 0, h, h, fin), (0x7bff, OVERFLOW | INEXACT));
    // rtz overflows to the largest finite value
    assert_eq!(
        e4(0x7e, 0xfe, 0, h, h, Spec::ieee(Rounding::Rtz)),
        (0xfbff, OVERFLOW | INEXACT)
    );
    // 65504 + 16 (half an ulp of 65504 is 16): ties to even rounds to +Inf
    assert_eq!(
        e4(0x38, 0x58, 0x7bff, h, h, rne),
        (0x7c00, OVERFLOW | INEXACT)
    );
    // 2^-9 · 2^-9 = 2^-18 = 64 · 2^-24, plus the smallest subnormal: 65 · 2^-24 exactly
    assert_eq!(e4(0x01, 0x01, 0x0001, h, h, rne), (0x0041, 0));
    // e5m2 2^-16 · 2^-16 = 2^-32: below half the smallest binary16 subnormal
    let e5 = Format::E5M2;
    let (c, fl) = fma(&e5, 0x01, &e5, 0x01, 0, &rne, opts(f(h), f(h)));
    assert_eq!((c, fl.0), (0, UNDERFLOW | INEXACT));
    let (c, fl) = fma(
        &e5,
        0x01,
        &e5,
        0x01,
        0,
        &Spec::ieee(Rounding::Rtp),
        opts(f(h), f(h)),
    );
    assert_eq!((c, fl.0), (1, UNDERFLOW | INEXACT));
    // NaN: a quiet NaN addend gives the canonical quiet NaN, a signaling one raises invalid
    assert_eq!(e4(0x38, 0x38, 0x7e01, h, h, rne), (0x7e00, 0));
    assert_eq!(e4(0x38, 0x38, 0x7c01, h, h, rne), (0x7e00, INVALID));
    // −Inf addend + a finite product
    assert_eq!(e4(0x38, 0x38, 0xfc00, h, h, rne), (0xfc00, 0));
    // −0: (−0)·1 + (−0) = −0; 1·1 + (−1) = +0, −0 under rtn
    assert_eq!(e4(0x80, 0x38, 0x8000, h, h, rne), (0x8000, 0));
    assert_eq!(e4(0x38, 0x38, 0xbc00, h, h, rne), (0, 0));
    assert_eq!(
        e4(0x38, 0x38, 0xbc00, h, h, Spec::ieee(Rounding::Rtn)),
        (0x8000, 0)
    );
    // P3109 operands: no −0 result
    let p = f("binary8p4se");
    let (c, _) = fma(&p, 0x40, &p, 0x40, 0xbc00, &rne, opts(f(h), f(h)));
    assert_eq!(c, 0);
    // a binary32 addend rounded into a binary16 result: 1 + 2^-11 + 2^-30 rounds up
    assert_eq!(e4(0x38, 0x38, 0x3a00_0001, "binary32", h, rne).0, 0x3c01);
    // a binary16 addend with a binary32 result: exact
    assert_eq!(e4(0x38, 0x38, 0x0100, h, "binary32", rne), (0x3f80_0080, 0));
    // 1 + 2^-24 is a tie in binary32: to even
    assert_eq!(
        e4(0x38, 0x38, 0x0001, h, "binary32", rne),
        (0x3f80_0000, INEXACT)
    );
}

#[test]
fn bfloat16_and_small_results() {
    let rne = Spec::ieee(Rounding::Rne);
    // 448·448 = 200704 = 0x4844_0000 in binary32: exact in bfloat16
    assert_eq!(e4(0x7e, 0x7e, 0, "bfloat16", "bfloat16", rne), (0x4844, 0));
    // 1 + 2^-8 in bfloat16 (8 bits of precision): a tie, to even
    assert_eq!(
        e4(0x38, 0x38, 0x3b80, "bfloat16", "bfloat16", rne),
        (0x3f80, INEXACT)
    );
    // e4m3 addend and result: 448·448 overflows; satnone gives NaN (no Inf in e4m3)
    let (c, fl) = e4(0x7e, 0x7e, 0, "e4m3", "e4m3", rne);
    assert_eq!(c, 0x7f);
    assert_eq!(fl & (OVERFLOW | INVALID), OVERFLOW | INVALID);
    let fin = Spec::new(Rounding::Rne, Saturation::SatFinite);
    assert_eq!(
        e4(0x7e, 0x7e, 0, "e4m3", "e4m3", fin),
        (0x7e, OVERFLOW | INEXACT)
    );
    // 1·1 + 1 = 2 in e4m3
    assert_eq!(e4(0x38, 0x38, 0x38, "e4m3", "e4m3", rne), (0x40, 0));
    // the e4m3 NaN addend
    assert_eq!(e4(0x38, 0x38, 0x7f, "e4m3", "e4m3", rne), (0x7f, 0));
    // a NaN into a format without NaN: invalid and --nan-code
    let (c, fl) = e4(0x38, 0x38, 0x7f, "e4m3", "e2m1", rne);
    assert_eq!((c, fl), (0, INVALID));
}

/// The exact value of `x·y + z` as `(n, e)` with value `n · 2^e`, in i128 arithmetic, for
/// finite codes whose range fits.
fn exact_sum(fx: &Format, x: u32, fy: &Format, y: u32, fz: &Format, z: u32) -> (i128, i32) {
    let dx = fx.decode(x);
    let dy = fy.decode(y);
    let dz = fz.decode(z);
    let sgn = |s: bool| if s { -1i128 } else { 1 };
    let pe = dx.exp + dy.exp;
    let lo = pe.min(dz.exp);
    let p = (sgn(dx.sign ^ dy.sign) * (dx.sig as i128 * dy.sig as i128)) << (pe - lo);
    let zz = (sgn(dz.sign) * (dz.sig as i128)) << (dz.exp - lo);
    (p + zz, lo)
}

/// An i128 value `n · 2^e` as an [`Exact`]: 64 significant bits and a sticky bit below.
fn to_exact(n: i128, e: i32) -> Exact {
    let (sign, mut m) = (n < 0, n.unsigned_abs());
    let mut e = e;
    let mut sticky = false;
    while m >> 64 != 0 {
        sticky |= m & 1 != 0;
        m >>= 1;
        e += 1;
    }
    let mut x = Exact::finite(sign, e, m as u64);
    x.sticky = sticky;
    x
}

#[test]
fn random_vectors_match_the_exact_rational_value() {
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        h ^= h << 13;
        h ^= h >> 7;
        h ^= h << 17;
        h
    };
    let ops = ["e4m3", "e5m2", "binary8p3se", "e2m1"];
    let zs = ["binary16", "e4m3", "e5m2", "binary8p4se"];
    let rs = [
        "binary16",
        "bfloat16",
        "binary32",
        "e4m3",
        "e5m2",
        "binary8p4se",
    ];
    let mut checked = 0u64;
    for xo in ops {
        let fx = f(xo);
        for zn in zs {
            let fz = f(zn);
            for rn in rs {
                let fr = f(rn);
                for r in Rounding::DETERMINISTIC {
                    for sat in [Saturation::SatNone, Saturation::SatFinite] {
                        let spec = Spec::new(r, sat);
                        for _ in 0..400 {
                            let x = next() as u32 & fx.code_mask();
                            let y = next() as u32 & fx.code_mask();
                            let z = next() as u32 & fz.code_mask();
                            let finite = |g: &Format, c: u32| {
                                !matches!(
                                    g.decode(c).class,
                                    golden::Class::Nan | golden::Class::Inf
                                )
                            };
                            if !(finite(&fx, x) && finite(&fx, y) && finite(&fz, z)) {
                                continue;
                            }
                            let (n, e) = exact_sum(&fx, x, &fx, y, &fz, z);
                            let want = if n == 0 {
                                // IEEE 754 §6.3 zero signs; +0 for operands without −0
                                let ps = fx.decode(x).sign ^ fx.decode(y).sign;
                                let zs = fz.decode(z).sign;
                                let pz = fx.decode(x).class == golden::Class::Zero
                                    || fx.decode(y).class == golden::Class::Zero;
                                let zz = fz.decode(z).class == golden::Class::Zero;
                                let s = if pz && zz && ps == zs {
                                    ps
                                } else {
                                    r == Rounding::Rtn
                                };
                                let s = s && fx.has_neg_zero();
                                project(&Exact::zero(s), &fr, &spec, 0)
                            } else {
                                let (mut c, fl) = project(&to_exact(n, e), &fr, &spec, 0);
                                if !fx.has_neg_zero() && fr.has_neg_zero() && c == fr.sign_bit() {
                                    c = 0;
                                }
                                (c, fl)
                            };
                            let got = fma(&fx, x, &fx, y, z, &spec, opts(fz, fr));
                            assert_eq!(
                                got, want,
                                "{xo} x={x:#x} y={y:#x} + {zn} z={z:#x} -> {rn} {r} {sat}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 100_000, "only {checked} finite vectors");
}

#[test]
fn one_element_dot_is_the_fma_for_any_addend_and_result() {
    let e4 = Format::E4M3;
    for (zn, rn) in [
        ("binary16", "binary16"),
        ("bfloat16", "bfloat16"),
        ("e4m3", "e4m3"),
        ("binary16", "binary32"),
        ("binary32", "binary16"),
    ] {
        let (fz, fr) = (f(zn), f(rn));
        let u = DotUnit::new(e4, e4, 1, None, Some(fz), fr).unwrap();
        for r in [Rounding::Rne, Rounding::Rtn, Rounding::Rto] {
            for sat in [Saturation::SatNone, Saturation::SatFinite] {
                let spec = Spec::new(r, sat);
                for x in (0..256).step_by(3) {
                    for y in (0..256).step_by(7) {
                        for z in
                            (0..fz.num_codes() as u32).step_by(fz.num_codes() as usize / 61 + 1)
                        {
                            assert_eq!(
                                u.eval(&[x], &[y], 0, 0, z, &spec),
                                fma(&e4, x, &e4, y, z, &spec, opts(fz, fr)),
                                "{zn} -> {rn} x {x:#x} y {y:#x} z {z:#x} {r} {sat}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn dot_binary16_addend_known_answers() {
    let e4 = Format::E4M3;
    let b16 = Format::BINARY16;
    let u = DotUnit::new(e4, e4, 8, None, Some(b16), b16).unwrap();
    let rne = Spec::ieee(Rounding::Rne);
    let ones = [0x38u32; 8];
    // 8 · 1 + 1 = 9
    assert_eq!(u.eval(&ones, &ones, 0, 0, 0x3c00, &rne), (0x4880, Flags(0)));
    // 8 · 448² overflows binary16
    let big = [0x7eu32; 8];
    assert_eq!(
        u.eval(&big, &big, 0, 0, 0, &rne),
        (0x7c00, Flags(OVERFLOW | INEXACT))
    );
    // signaling NaN addend
    assert_eq!(
        u.eval(&ones, &ones, 0, 0, 0x7c01, &rne),
        (0x7e00, Flags(INVALID))
    );
    // the accumulator spans the binary16 addend's subnormals: 2^-24 survives beside 2^-18
    let mut xs = [0u32; 8];
    xs[0] = 0x01;
    let mut ys = [0u32; 8];
    ys[0] = 0x01;
    assert_eq!(u.eval(&xs, &ys, 0, 0, 0x0001, &rne), (0x0041, Flags(0)));
    // E8M0 scales with a binary16 addend: 2^-30 · (1·1) + 1 = 1 + 2^-30 → 1, inexact
    let us = DotUnit::new(e4, e4, 8, Some(Format::E8M0), Some(b16), b16).unwrap();
    let mut x1 = [0u32; 8];
    x1[0] = 0x38;
    assert_eq!(
        us.eval(&x1, &x1, 127 - 15, 127 - 15, 0x3c00, &rne),
        (0x3c00, Flags(INEXACT))
    );
    // the accumulator is sized from the addend's format: narrower for binary16 than binary32
    let wide = DotUnit::new(e4, e4, 8, None, Some(Format::BINARY32), b16).unwrap();
    assert!(u.acc_bits() < wide.acc_bits());
}
