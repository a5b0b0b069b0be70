//! The per-target delay model behind `--fmax`: how many pipeline stages a core needs for a
//! requested clock.
//!
//! The generator estimates the logic depth `D` of a core's combinational datapath (the
//! pipeliner's measure, `rtl::GeneratedCore::depth`, in tenths of a logic level: one LUT4 and
//! the route into it, `rtl::ast::delay`), and its pipeliner cuts it into `S + 1` stages as
//! evenly as its cut points allow. The model predicts the clock period of such a core as
//!
//! ```text
//!   period(S) = fixed_ns + ns_per_level · D / 10 / (S + 1)
//! ```
//!
//! with two constants per architecture fitted by least squares to the measured QoR table
//! (`docs/qor/qor.csv`: decode, project, mul and fma in E4M3 and E5M2, 0–8 stages, YoWASP
//! nextpnr; the test `constants_are_the_fit_of_the_committed_table` re-fits them and fails
//! when the table and the constants drift apart). Fitted here: ECP5 2.09 ns + 0.538 ns per
//! level, iCE40 UP5K 3.30 ns + 1.87 ns per level; every measured point lies within a factor
//! 2.5 of the prediction (short datapaths run faster than predicted, the FMA's long one
//! slower once pipelined). The linear model would promise ever higher clocks as stages
//! shrink to one level; no prediction exceeds the fastest core measured on the architecture
//! (ECP5 279.6 MHz, iCE40 UP5K 105.6 MHz) nor the fastest measured row of the unit itself
//! ([`BEST_MEASURED`]), and a clock beyond either is refused. `gen --fmax F` picks the fewest stages whose predicted period
//! fits `1000 / F` ns; `synth --fmax F` starts there and confirms by place and route: more
//! stages while the clock is missed, fewer while it is still met.

use crate::{Arch, Target};

/// Two constants of one architecture, and the fastest clock measured on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayModel {
    /// Period of a core with no logic levels: clock-to-out, setup, routing to the I/O
    /// registers (ns).
    pub fixed_ns: f64,
    /// Delay of one estimated logic level, routing included (ns).
    pub ns_per_level: f64,
    /// The highest Fmax (MHz) of an fp8gen core in the measured rows the constants were
    /// fitted to: the linear model says nothing beyond it (a deep pipeline's one-level stages
    /// are limited by routing and I/O, not by the logic), so no prediction exceeds it.
    pub max_measured_mhz: f64,
}

impl DelayModel {
    /// The calibrated model of `target`'s architecture (Gowin has no measured table yet and
    /// uses the ECP5 constants).
    pub fn of(target: Target) -> DelayModel {
        match target.arch() {
            Arch::Ecp5 | Arch::Gowin => DelayModel {
                fixed_ns: ECP5.0,
                ns_per_level: ECP5.1,
                max_measured_mhz: ECP5.2,
            },
            Arch::Ice40 => DelayModel {
                fixed_ns: ICE40.0,
                ns_per_level: ICE40.1,
                max_measured_mhz: ICE40.2,
            },
        }
    }

    /// Logic levels per stage of a core of depth `depth` (tenths of a level, the pipeliner's
    /// unit, `rtl::ast::delay`) cut into `stages + 1` parts, at least a tenth.
    pub fn levels(depth: u32, stages: u32) -> f64 {
        depth.max(1) as f64 / 10.0 / (stages + 1) as f64
    }

    /// Predicted Fmax (MHz) of a core of depth `depth` with `stages` pipeline stages, at most
    /// the fastest measured clock ([`DelayModel::max_measured_mhz`]).
    pub fn predict_mhz(&self, depth: u32, stages: u32) -> f64 {
        let linear =
            1000.0 / (self.fixed_ns + self.ns_per_level * DelayModel::levels(depth, stages));
        linear.min(self.max_measured_mhz)
    }

    /// The fewest stages (at most `max_stages`) whose predicted Fmax reaches `fmax_mhz`, with
    /// that prediction; `None` when even `max_stages` does not.
    pub fn stages_for(&self, depth: u32, fmax_mhz: f64, max_stages: u32) -> Option<(u32, f64)> {
        (0..=max_stages)
            .map(|s| (s, self.predict_mhz(depth, s)))
            .find(|(_, f)| *f >= fmax_mhz)
    }

    /// Least-squares fit of `period = fixed + per_level · levels` to measured
    /// `(depth, stages, fmax_mhz)` points.
    pub fn fit(points: &[(u32, u32, f64)]) -> Option<DelayModel> {
        let n = points.len() as f64;
        if points.len() < 2 {
            return None;
        }
        let xs: Vec<f64> = points
            .iter()
            .map(|(d, s, _)| DelayModel::levels(*d, *s))
            .collect();
        let ys: Vec<f64> = points.iter().map(|(_, _, f)| 1000.0 / f).collect();
        let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
        let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        if sxx == 0.0 {
            return None;
        }
        let b = sxy / sxx;
        Some(DelayModel {
            fixed_ns: my - b * mx,
            ns_per_level: b,
            max_measured_mhz: points.iter().map(|p| p.2).fold(0.0, f64::max),
        })
    }
}

/// The fastest Fmax (MHz) measured per QoR unit (the `unit` column of `docs/qor/qor.csv`,
/// e.g. `mul`, `mul-ftz-noflags`, `dot8-e8m0`, `quantize32`) and target, over its formats and
/// stage counts (rows without an error, DSP on). `--fmax` promises no unit more than its own
/// fastest measured row (the test `best_measured_is_the_committed_table` keeps this table
/// equal to the CSV).
pub const BEST_MEASURED: &[(&str, &str, f64)] = &[
    ("decode", "ecp5-25k", 279.64),
    ("decode", "ice40-up5k", 105.61),
    ("dot32", "ecp5-25k", 48.33),
    ("dot32-e8m0", "ecp5-25k", 42.58),
    ("dot4", "ecp5-25k", 87.98),
    ("dot4", "ice40-up5k", 18.74),
    ("dot4-e8m0", "ecp5-25k", 65.48),
    ("dot4-e8m0", "ice40-up5k", 18.7),
    ("dot8", "ecp5-25k", 146.11),
    ("dot8", "ice40-up5k", 18.86),
    ("dot8-e8m0", "ecp5-25k", 113.19),
    ("dot8-e8m0", "ice40-up5k", 16.98),
    ("fma", "ecp5-25k", 146.18),
    ("fma", "ice40-up5k", 23.59),
    ("int-mul8", "ecp5-25k", 146.95),
    ("int-mul8", "ice40-up5k", 228.05),
    ("mac", "ecp5-25k", 99.01),
    ("mac", "ice40-up5k", 31.36),
    ("mac-exact", "ecp5-25k", 149.88),
    ("mac-exact", "ice40-up5k", 23.57),
    ("mac-il4", "ecp5-25k", 91.58),
    ("mac-il4", "ice40-up5k", 28.39),
    ("mul", "ecp5-25k", 214.73),
    ("mul", "ice40-up5k", 47.2),
    ("mul-ftz-noflags", "ecp5-25k", 315.16),
    ("mul-ftz-noflags", "ice40-up5k", 67.97),
    ("project", "ecp5-25k", 245.04),
    ("project", "ice40-up5k", 92.2),
    ("quantize32", "ecp5-25k", 31.6),
];

/// The fastest measured Fmax of QoR unit `unit` on `target` ([`BEST_MEASURED`]), if any row
/// was measured.
pub fn best_measured(unit: &str, target: Target) -> Option<f64> {
    BEST_MEASURED
        .iter()
        .find(|(u, t, _)| *u == unit && *t == target.name())
        .map(|x| x.2)
}

/// ECP5 `(fixed_ns, ns_per_level, max_measured_mhz)`, fitted to `docs/qor/qor.csv`.
const ECP5: (f64, f64, f64) = (2.093, 0.5381, 279.64);
/// iCE40 UP5K `(fixed_ns, ns_per_level, max_measured_mhz)`, fitted to `docs/qor/qor.csv`.
const ICE40: (f64, f64, f64) = (1.799, 2.0802, 105.61);

#[cfg(test)]
mod tests {
    use super::*;
    use golden::{Format, Rounding, Saturation};
    use iface::Unit;
    use rtl::{GenRequest, RoundingSel, SaturationSel};

    /// The request `fp8gen synth -u UNIT -f FMT` makes (rne, satnone).
    fn request(unit: Unit, f: Format) -> GenRequest {
        let mut r = GenRequest::project(
            f,
            RoundingSel::Fixed(Rounding::Rne),
            SaturationSel::Fixed(Saturation::SatNone),
        );
        r.unit = unit;
        match unit {
            Unit::Decode => {
                r.formats.x = f;
                r.formats.r = Format::BINARY32;
            }
            Unit::Mul => {
                r.formats.x = f;
                r.formats.y = Some(f);
                r.formats.r = f;
            }
            Unit::Fma => {
                r.formats.x = f;
                r.formats.y = Some(f);
                r.formats.r = Format::BINARY32;
            }
            _ => {}
        }
        r
    }

    /// Measured `(depth, stages, fmax)` points of `target` from the committed QoR table.
    fn points(target: &str) -> Vec<(u32, u32, f64)> {
        let csv = include_str!("../../docs/qor/qor.csv");
        let mut v = Vec::new();
        for line in csv.lines().skip(1) {
            let c: Vec<&str> = line.split(',').collect();
            if c.len() < 15 || c[3] != target || c[4] != "on" || !c[14].is_empty() {
                continue;
            }
            let Some(unit) = Unit::parse(c[0]) else {
                continue;
            };
            if !matches!(unit, Unit::Decode | Unit::Project | Unit::Mul | Unit::Fma) {
                continue;
            }
            let (Ok(f), Ok(stages), Ok(fmax)) = (
                Format::parse(c[1]),
                c[2].parse::<u32>(),
                c[10].parse::<f64>(),
            ) else {
                continue;
            };
            let core = rtl::generate(&request(unit, f)).expect("generate");
            v.push((core.depth, stages, fmax));
        }
        v
    }

    #[test]
    fn best_measured_is_the_committed_table() {
        let csv = include_str!("../../docs/qor/qor.csv");
        let mut best: Vec<(String, String, f64)> = Vec::new();
        for line in csv.lines().skip(1) {
            let c: Vec<&str> = line.split(',').collect();
            // rows with an error (quoted text, maybe with commas) have no fmax_mhz
            let Some(f) = c.get(10).and_then(|x| x.parse::<f64>().ok()) else {
                continue;
            };
            if c[4] != "on" || !c[14].is_empty() {
                continue;
            }
            match best.iter_mut().find(|b| b.0 == c[0] && b.1 == c[3]) {
                Some(b) => b.2 = b.2.max(f),
                None => best.push((c[0].to_string(), c[3].to_string(), f)),
            }
        }
        best.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let table: Vec<(String, String, f64)> = BEST_MEASURED
            .iter()
            .map(|(u, t, f)| (u.to_string(), t.to_string(), *f))
            .collect();
        assert_eq!(table, best, "BEST_MEASURED differs from docs/qor/qor.csv");
    }

    #[test]
    fn constants_are_the_fit_of_the_committed_table() {
        for (target, (fixed, per, best)) in [("ecp5-25k", ECP5), ("ice40-up5k", ICE40)] {
            let p = points(target);
            assert!(p.len() >= 16, "{target}: {} measured points", p.len());
            let m = DelayModel::fit(&p).expect("fit");
            assert_eq!(
                m.max_measured_mhz, best,
                "{target}: the fastest measured core runs at {} MHz; the cap says {best}",
                m.max_measured_mhz
            );
            assert!(
                (m.fixed_ns - fixed).abs() < 0.15 * fixed.max(1.0)
                    && (m.ns_per_level - per).abs() < 0.15 * per,
                "{target}: the table fits fixed {:.3} ns + {:.4} ns/level; the constants say {fixed} + {per}",
                m.fixed_ns,
                m.ns_per_level
            );
            // The model is rough (the depth estimate is not a delay): within a factor 2.5 of
            // every measured point (a 2-stage decode runs slower than predicted, the table-driven
            // project faster); `synth --fmax` therefore confirms its choice by synthesis.
            for (d, s, f) in &p {
                let pred = m.predict_mhz(*d, *s);
                assert!(
                    pred / f < 2.5 && f / pred < 2.5,
                    "{target}: depth {d}, {s} stages: measured {f} MHz, predicted {pred:.0}"
                );
            }
        }
    }

    #[test]
    fn stage_choice_is_the_fewest_that_fit() {
        let m = DelayModel {
            fixed_ns: 4.0,
            ns_per_level: 0.2,
            max_measured_mhz: 1000.0,
        };
        // depth 60 levels (600 tenths): 0 stages -> 16 ns (62.5 MHz), 1 -> 10 ns, 2 -> 8 ns, 3 -> 7 ns
        assert_eq!(m.stages_for(600, 60.0, 8).map(|x| x.0), Some(0));
        assert_eq!(m.stages_for(600, 100.0, 8).map(|x| x.0), Some(1));
        assert_eq!(m.stages_for(600, 125.0, 8).map(|x| x.0), Some(2));
        assert_eq!(m.stages_for(600, 300.0, 8), None);
        assert_eq!(DelayModel::levels(600, 2), 20.0);
        assert!(DelayModel::levels(0, 3) > 0.0);
        // Nothing beyond the fastest measured clock is promised, however many stages.
        let capped = DelayModel {
            max_measured_mhz: 120.0,
            ..m
        };
        assert_eq!(capped.predict_mhz(600, 8), 120.0);
        assert_eq!(capped.stages_for(600, 125.0, 8), None);
        assert_eq!(capped.stages_for(600, 100.0, 8).map(|x| x.0), Some(1));
    }
}
