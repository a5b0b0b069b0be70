//! Sorting mismatches without storing them: per mode combination, per flag bit, and per class
//! of difference of the result code (off by k ulps, sign only, NaN payload, NaN vs number,
//! Inf vs finite) or of the flags alone. The engine calls [`Classes`] on every mismatching
//! row (`sim::Classify`); the counts land in the summary's `mismatch_classes`.

use golden::Format;
use iface::FlagBits;
use sim::{Classify, Tally};

/// The columns and meanings a classification needs, in the core's own column order.
pub(crate) struct Classes {
    /// Data input columns of the rounding and saturation ports, if the core has them.
    pub rm_col: Option<usize>,
    pub sat_col: Option<usize>,
    /// `(rounding port value, saturation port value, "rne/satfinite")` of every mode
    /// combination run (0 for a port the core does not have).
    pub modes: Vec<(u64, u64, String)>,
    /// Data output column of the result and its format.
    pub result: Option<(usize, Format)>,
    /// Data output column of the flags and the bit layout.
    pub flags: Option<(usize, FlagBits)>,
}

impl Classes {
    fn mode(&self, row: &[u64]) -> String {
        let at = |c: Option<usize>| c.and_then(|c| row.get(c).copied()).unwrap_or(0);
        let (rm, sat) = (at(self.rm_col), at(self.sat_col));
        self.modes
            .iter()
            .find(|(r, s, _)| *r == rm && *s == sat)
            .map_or_else(|| format!("rm={rm:#x}/sat={sat:#x}"), |(_, _, n)| n.clone())
    }
}

/// The class of two different result codes `got`, `exp` of format `f`.
pub(crate) fn result_class(f: &Format, got: u64, exp: u64) -> &'static str {
    let (g, e) = (got as u32, exp as u32);
    let (gn, en) = (f.is_nan_code(g), f.is_nan_code(e));
    if gn && en {
        return "result_nan_payload";
    }
    if gn || en {
        return "result_nan_vs_number";
    }
    let sign = f.sign_bit();
    if sign != 0 && g ^ e == sign {
        return "result_sign_only";
    }
    let inf = |c: u32| Some(c) == f.pos_inf_code() || Some(c) == f.neg_inf_code();
    if inf(g) || inf(e) {
        return "result_inf_vs_finite";
    }
    if g & sign != e & sign {
        return "result_sign_and_value";
    }
    let mag = |c: u32| u64::from(c & !sign);
    match mag(g).abs_diff(mag(e)) {
        1 => "result_1ulp",
        2 => "result_2ulp",
        _ => "result_gt2ulp",
    }
}

impl Classify for Classes {
    fn classify(&self, row: &[u64], got: &[u64], exp: &[u64], tally: &mut Tally) {
        Tally::bump(&mut tally.per_mode, &self.mode(row));
        let mut flag_bits = Vec::new();
        if let Some((c, fb)) = &self.flags {
            let d = got[*c] ^ exp[*c];
            for b in 0..fb.width {
                if d >> b & 1 != 0 {
                    let n = fb.name(b);
                    Tally::bump(&mut tally.per_flag, &n);
                    flag_bits.push(n);
                }
            }
        }
        let result_differs = self.result.as_ref().filter(|(c, _)| got[*c] != exp[*c]);
        let class = match result_differs {
            Some((c, f)) => result_class(f, got[*c], exp[*c]).to_string(),
            None => {
                let others = got
                    .iter()
                    .zip(exp)
                    .enumerate()
                    .any(|(k, (a, b))| a != b && Some(k) != self.flags.as_ref().map(|f| f.0));
                if flag_bits.is_empty() || others {
                    "other_outputs".to_string()
                } else {
                    format!("flags_only.{}", flag_bits.join("+"))
                }
            }
        };
        Tally::bump(&mut tally.classes, &class);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_classes() {
        let f = Format::E5M2;
        assert_eq!(result_class(&f, 0x3c, 0x3d), "result_1ulp");
        assert_eq!(result_class(&f, 0xbc, 0xbe), "result_2ulp");
        assert_eq!(result_class(&f, 0x3c, 0x30), "result_gt2ulp");
        assert_eq!(result_class(&f, 0x3c, 0xbc), "result_sign_only");
        assert_eq!(result_class(&f, 0x7e, 0x7f), "result_nan_payload");
        assert_eq!(result_class(&f, 0x7e, 0x10), "result_nan_vs_number");
        assert_eq!(result_class(&f, 0x7c, 0x7b), "result_inf_vs_finite");
        assert_eq!(result_class(&f, 0x01, 0x82), "result_sign_and_value");
        // P3109: NaN is 0x80, not −0.
        let p = Format::parse("binary8p3se").unwrap();
        assert_eq!(result_class(&p, 0x80, 0x00), "result_nan_vs_number");
    }
}
