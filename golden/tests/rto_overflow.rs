//! Round-to-odd on overflow under satnone: ±∞ by P3109 §4.7.5's table (the default), the
//! largest finite value with `RtoOverflow::Ieee` (SoftFloat `round_odd` hardware); the other
//! saturation modes and rounding modes do not change.

use golden::{project, Exact, Format, Rounding, RtoOverflow, Saturation, Spec};

fn big(sign: bool) -> Exact {
    // 3 · 2^20: above E5M2's range (max 57344).
    Exact::finite(sign, 20, 3)
}

#[test]
fn rto_overflow_conventions() {
    let f = Format::E5M2;
    for sign in [false, true] {
        let s = if sign { 0x80 } else { 0 };
        let p3109 = Spec::new(Rounding::Rto, Saturation::SatNone);
        let ieee = Spec {
            rto_overflow: RtoOverflow::Ieee,
            ..p3109
        };
        let (c, fl) = project(&big(sign), &f, &p3109, 0);
        assert_eq!(c, 0x7c | s, "P3109: ±Inf");
        let (c2, fl2) = project(&big(sign), &f, &ieee, 0);
        assert_eq!(c2, 0x7b | s, "ieee: ±max finite");
        assert_eq!(fl, fl2, "the same flags (overflow, inexact)");
        // satfinite clamps either way; rne overflows to ±Inf either way.
        for sat in [Saturation::SatFinite, Saturation::SatPropagate] {
            let a = Spec::new(Rounding::Rto, sat);
            let b = Spec {
                rto_overflow: RtoOverflow::Ieee,
                ..a
            };
            assert_eq!(
                project(&big(sign), &f, &a, 0),
                project(&big(sign), &f, &b, 0)
            );
        }
        let rne = Spec {
            rto_overflow: RtoOverflow::Ieee,
            ..Spec::new(Rounding::Rne, Saturation::SatNone)
        };
        assert_eq!(project(&big(sign), &f, &rne, 0).0, 0x7c | s);
    }
    assert_eq!(RtoOverflow::parse("IEEE"), Ok(RtoOverflow::Ieee));
    assert!(RtoOverflow::parse("x").is_err());
}
