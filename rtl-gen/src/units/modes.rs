//! What every unit shares about modes and scales: the mode ports (`rm_i`, `sat_i`, `rnd_i`)
//! and their decoding into [`Modes`], the golden [`Spec`] selected by fixed modes or by
//! those ports, the block-scale inputs, and the mode parts of module names and headers.
//! The encodings themselves are defined once, in [`crate::manifest`]
//! (`ROUNDING_ENCODING`, `SATURATION_ENCODING`) and [`crate::blocks`].

use crate::ast::ModuleBuilder;
use crate::blocks::{rm_port_width, rounding_from_port, saturation_from_port, Modes};
use crate::manifest::{ROUNDING_ENCODING, SATURATION_ENCODING};
use crate::{GenRequest, RoundingSel, SaturationSel};
use golden::{Format, Spec, Tininess};

/// Format of `y` (defaults to the format of `x`).
pub fn y_format(req: &GenRequest) -> Format {
    req.formats.y.unwrap_or(req.formats.x)
}

/// The addend format of an `fma` or `dot` core (`formats.z`, else the unit's default:
/// fma the result format, dot binary32; binary32 for units without a selectable one).
pub fn z_format(req: &GenRequest) -> Format {
    req.unit
        .spec()
        .formats
        .addend(&req.formats)
        .unwrap_or(Format::BINARY32)
}

/// The scale codes `sx`, `sy` read from `it` when the core has block scales of format `f`.
pub fn read_scales(
    it: &mut impl Iterator<Item = u64>,
    f: Option<Format>,
) -> Option<(golden::Scale, golden::Scale)> {
    f.map(|format| {
        let mut one = || golden::Scale {
            format,
            code: it.next().unwrap_or(0) as u32 & format.code_mask(),
        };
        let sx = one();
        (sx, one())
    })
}

/// The spec (and random bits) selected by fixed modes or by the mode ports read from `it`,
/// with the request's round-to-odd overflow convention.
pub fn spec_from_ports(
    it: &mut impl Iterator<Item = u64>,
    rounding: RoundingSel,
    saturation: SaturationSel,
    sr_bits: u32,
    tininess: Tininess,
    nonan_code: u32,
    rto_overflow: golden::RtoOverflow,
) -> (Spec, u32) {
    let rounding = match rounding {
        RoundingSel::Fixed(r) => r,
        RoundingSel::Dynamic => rounding_from_port(it.next().unwrap_or(0), sr_bits),
    };
    let saturation = match saturation {
        SaturationSel::Fixed(s) => s,
        SaturationSel::Dynamic => saturation_from_port(it.next().unwrap_or(0)),
    };
    let rnd = if sr_bits > 0 {
        let m = if sr_bits >= 32 {
            u32::MAX
        } else {
            (1u32 << sr_bits) - 1
        };
        (it.next().unwrap_or(0) as u32) & m
    } else {
        0
    };
    (
        Spec {
            rounding,
            saturation,
            tininess,
            nonan_code,
            rto_overflow,
        },
        rnd,
    )
}

/// `rm`/`sat` parts of a top module name, with the tininess tag ([`tininess_tag`]).
pub fn mode_tag(req: &GenRequest) -> String {
    format!(
        "{}{}{}",
        rm_sat_tag(req),
        tininess_tag(req),
        rto_overflow_tag(req)
    )
}

/// `_rtoieee` in a top module name when round-to-odd overflows to the largest finite value
/// (`--rto-overflow ieee`), else empty.
pub fn rto_overflow_tag(req: &GenRequest) -> &'static str {
    if req.options.rto_overflow == golden::RtoOverflow::Ieee {
        "_rtoieee"
    } else {
        ""
    }
}

/// `<rounding>_<saturation>` of a top module name (`rmdyn[_srN]`, `satdyn` for mode ports).
pub fn rm_sat_tag(req: &GenRequest) -> String {
    let rm = match req.rounding {
        RoundingSel::Fixed(r) => r.to_string(),
        RoundingSel::Dynamic if req.sr_bits > 0 => format!("rmdyn_sr{}", req.sr_bits),
        RoundingSel::Dynamic => "rmdyn".into(),
    };
    let sat = match req.saturation {
        SaturationSel::Fixed(s) => s.name().replace('-', "_"),
        SaturationSel::Dynamic => "satdyn".into(),
    };
    format!("{rm}_{sat}")
}

/// `_tb` in a top module name when tininess is detected before rounding, else empty.
pub fn tininess_tag(req: &GenRequest) -> &'static str {
    if req.options.tininess == Tininess::BeforeRounding {
        "_tb"
    } else {
        ""
    }
}

/// `_sc_<scale format>` in the top name of a core with block scales, else empty.
pub fn scale_tag(req: &GenRequest) -> String {
    req.formats
        .scale
        .map(|f| format!("_sc_{}", f.ident()))
        .unwrap_or_default()
}

/// Header lines describing the rounding and saturation selection.
pub fn mode_lines(req: &GenRequest) -> Vec<String> {
    let n = req.random_bits();
    let rm_desc = match req.rounding {
        RoundingSel::Fixed(r) => format!("{r} (fixed at generation)"),
        RoundingSel::Dynamic => format!(
            "rm_i: {}; other values = rne",
            ROUNDING_ENCODING
                .iter()
                .enumerate()
                .take(if n > 0 { 9 } else { 6 })
                .map(|(i, s)| format!("{i}={s}"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    };
    let sat_desc = match req.saturation {
        SaturationSel::Fixed(s) => format!("{s} (fixed at generation)"),
        SaturationSel::Dynamic => format!(
            "sat_i: {}",
            SATURATION_ENCODING
                .iter()
                .enumerate()
                .map(|(i, s)| format!("{i}={s}"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    };
    vec![
        format!("Rounding:    {rm_desc}"),
        format!("Saturation:  {sat_desc}"),
    ]
}

/// Declares the mode ports (`rm_i`, `sat_i`, `rnd_i` as the request needs) and decodes them.
pub fn mode_ports(b: &mut ModuleBuilder, req: &GenRequest) -> Modes {
    let n = req.random_bits();
    let rm = (req.rounding == RoundingSel::Dynamic).then(|| b.input("rm_i", rm_port_width(n)));
    let sat = (req.saturation == SaturationSel::Dynamic).then(|| b.input("sat_i", 2));
    let rnd = (n > 0).then(|| b.input("rnd_i", n));
    let mut m = Modes::new(
        b,
        req.rounding,
        req.saturation,
        n,
        rm,
        sat,
        rnd,
        req.options.tininess,
        req.options.nonan_code,
    );
    m.rto_overflow = req.options.rto_overflow;
    m
}
