//! The `quantize` unit: the MX block quantizer. N inputs `z0_i … z{N-1}_i` (binary32,
//! bfloat16 or binary16) → one shared power-of-two scale `s_o` (E8M0 or Binary8p1uf)
//! computed from the block's largest finite magnitude by the scale policy, and N elements
//! `r0_o … r{N-1}_o` (each input divided by the scale, rounded once), `flags_o` = OR of the
//! elements' {invalid, overflow, underflow, inexact}.
//!
//! Golden meaning: `golden::quantize_block` (the policies, their sources and the special
//! blocks are documented in `golden/src/quantize.rs`); element i is
//! `golden::convert_scaled(in, z_i, s_o, format, spec, rnd<i>_i)` (P3109 §5.1.2
//! ωBlockProject). Data input ports, in order: `z0_i … z{N-1}_i`, `rm_i` (dynamic
//! rounding), `sat_i` (dynamic saturation), `rnd0_i … rnd{N-1}_i` (one random word per
//! element when a stochastic mode is possible). Data outputs: `r0_o … r{N-1}_o`, `s_o`,
//! `flags_o`.
//!
//! Datapath: a maximum tree over the elements' magnitude fields (infinities and NaNs count
//! as 0), the scale exponent of the maximum by the policy, clamped to the scale format, then
//! the `project --scaled` datapath (`project::scaled_by` + [`crate::blocks::round`])
//! once per element with the shared scale.

use super::{describe, finish_core, input, layout, output, FLAGS_WIDTH};
use crate::ast::{concat, sbits, Expr, ModuleBuilder};
use crate::blocks::{rm_port_width, round, unpack, Modes};
use crate::{GenError, GenRequest, GeneratedCore, RoundingSel, SaturationSel};
use golden::{Format, ScalePolicy, Tininess};
use iface::{Direction, Port, Role};

/// The `quantize` unit in the registry ([`super::def`]).
#[derive(Debug)]
pub struct Quantize;

const IEEE_IN: [Format; 3] = [Format::BINARY32, Format::BINARY16, Format::BFLOAT16];

/// The scale format of a quantizer request (validated: present).
fn scale_format(req: &GenRequest) -> Format {
    req.formats.scale.unwrap_or(Format::E8M0)
}

impl super::UnitDef for Quantize {
    fn validate(&self, req: &GenRequest) -> Result<(), GenError> {
        let x = req.formats.x;
        if !IEEE_IN.contains(&x) {
            return Err(GenError::Unsupported(format!(
                "quantize reads binary32, binary16 or bfloat16; --in-format {} is not supported",
                x.name()
            )));
        }
        super::project::validate_result(req)?;
        if IEEE_IN.contains(&req.formats.r) {
            return Err(GenError::Unsupported(format!(
                "quantize writes a small element format (e4m3, e5m2, e2m1, …), not {}",
                req.formats.r.name()
            )));
        }
        let n = req.options.block.n;
        if !(1..=golden::MAX_BLOCK as u32).contains(&n) {
            return Err(GenError::BadRequest(format!(
                "--n {n} is out of range; a block has 1..={} elements",
                golden::MAX_BLOCK
            )));
        }
        let sf = req.formats.scale.ok_or_else(|| {
            GenError::BadRequest(
                "quantize needs a scale format (--scale-format e8m0 or binary8p1uf)".into(),
            )
        })?;
        crate::check_format(&sf, "scale")?;
        golden::quantize::check_scale_format(&sf).map_err(GenError::Unsupported)
    }

    fn ports(&self, req: &GenRequest, v: &mut Vec<Port>) {
        let f = &req.formats;
        let n = req.options.block.n;
        for i in 0..n {
            v.push(Port::element(
                format!("z{i}_i"),
                Direction::Input,
                f.x.k,
                Role::Z,
                i,
            ));
        }
        let bits = req.random_bits();
        if req.rounding == RoundingSel::Dynamic {
            v.push(input("rm_i", rm_port_width(bits), Role::Rounding));
        }
        if req.saturation == SaturationSel::Dynamic {
            v.push(input("sat_i", super::SAT_PORT_WIDTH, Role::Saturation));
        }
        if bits > 0 {
            for i in 0..n {
                v.push(Port::element(
                    format!("rnd{i}_i"),
                    Direction::Input,
                    bits,
                    Role::Random,
                    i,
                ));
            }
        }
        for i in 0..n {
            v.push(Port::element(
                format!("r{i}_o"),
                Direction::Output,
                f.r.k,
                Role::Result,
                i,
            ));
        }
        v.push(output("s_o", scale_format(req).k, Role::ScaleOut));
        v.push(output("flags_o", FLAGS_WIDTH, Role::Flags));
    }

    fn generate(&self, req: &GenRequest) -> Result<GeneratedCore, GenError> {
        generate(req)
    }

    fn model(&self, req: &GenRequest) -> Result<super::GoldenModel, GenError> {
        Ok(super::GoldenModel::of(QuantizeModel::new(req)?))
    }
}

/// The golden model of a generated quantizer.
#[derive(Clone, Debug)]
pub struct QuantizeModel {
    input: Format,
    format: Format,
    scale: Format,
    policy: ScalePolicy,
    n: usize,
    rounding: RoundingSel,
    saturation: SaturationSel,
    sr_bits: u32,
    tininess: Tininess,
    nonan_code: u32,
    rto_overflow: golden::RtoOverflow,
}

impl QuantizeModel {
    /// The model of the core `req` generates (`req.unit` must be `quantize`).
    pub fn new(req: &GenRequest) -> Result<QuantizeModel, GenError> {
        crate::validate(req)?;
        Ok(QuantizeModel {
            input: req.formats.x,
            format: req.formats.r,
            scale: scale_format(req),
            policy: req.options.block.policy,
            n: req.options.block.n as usize,
            rounding: req.rounding,
            saturation: req.saturation,
            sr_bits: req.random_bits(),
            tininess: req.options.tininess,
            nonan_code: req.options.nonan_code,
            rto_overflow: req.options.rto_overflow,
        })
    }
}

impl super::Eval for QuantizeModel {
    fn eval(&self, inputs: &[u64]) -> Vec<u64> {
        let mask = self.input.code_mask();
        let z: Vec<u32> = (0..self.n)
            .map(|i| inputs.get(i).copied().unwrap_or(0) as u32 & mask)
            .collect();
        let mut it = inputs.iter().copied().skip(self.n);
        let (spec, rnd0) = super::modes::spec_from_ports(
            &mut it,
            self.rounding,
            self.saturation,
            self.sr_bits,
            self.tininess,
            self.nonan_code,
            self.rto_overflow,
        );
        let rnd: Vec<u32> = if self.sr_bits > 0 {
            let m = if self.sr_bits >= 32 {
                u32::MAX
            } else {
                (1u32 << self.sr_bits) - 1
            };
            std::iter::once(rnd0)
                .chain((1..self.n).map(|_| it.next().unwrap_or(0) as u32 & m))
                .collect()
        } else {
            Vec::new()
        };
        let (s, r, fl) = golden::quantize_block(
            &z,
            &self.input,
            &self.format,
            &self.scale,
            self.policy,
            &spec,
            &rnd,
        );
        let mut out: Vec<u64> = r.into_iter().map(u64::from).collect();
        out.push(s as u64);
        out.push(fl.0 as u64);
        out
    }
}

/// Top module name:
/// `fp8_quantize_<format>_<rounding>_<saturation>_n<N>_<policy>[_from_<in>]_sc_<scale>[_tb][_rtoieee][_nc<code>]_s<S>`.
pub fn top_name(req: &GenRequest) -> String {
    let f = req.formats.r;
    let mut name = format!(
        "fp8_quantize_{}_{}_n{}_{}",
        f.ident(),
        super::modes::rm_sat_tag(req),
        req.options.block.n,
        req.options.block.policy
    );
    if req.formats.x != Format::BINARY32 {
        name.push_str(&format!("_from_{}", req.formats.x.ident()));
    }
    name.push_str(&super::modes::scale_tag(req));
    name.push_str(super::modes::tininess_tag(req));
    name.push_str(super::modes::rto_overflow_tag(req));
    if !f.has_nan() && req.options.nonan_code != 0 {
        name.push_str(&format!("_nc{:x}", req.options.nonan_code));
    }
    name.push_str(&format!("_s{}", req.stages));
    name
}

/// The scale exponent's increment over `⌊log2 amax⌋ − emax_r` for the policy, from the
/// maximum's normalized trailing significand `frac` (`fw` bits, MSB first): the exact
/// integer forms of `golden::quantize::scale_exponent`.
fn policy_increment(b: &mut ModuleBuilder, policy: ScalePolicy, r: &Format, frac: &Expr) -> Expr {
    let fw = frac.width;
    let e = match policy {
        ScalePolicy::Floor => Expr::bit_c(false),
        // ⌈log2 amax⌉ = ⌊log2 amax⌋ + 1 unless amax is a power of two.
        ScalePolicy::Ceil => frac.ne(&Expr::c(0, fw)),
        // amax rounded to m_r + 1 significant bits (ties away) carries into the next binade
        // iff frac + 2^(fw − m_r − 1) ≥ 2^fw; without bits below m_r + 1 there is no carry.
        ScalePolicy::Even => {
            let m = r.man_bits();
            if m + 1 > fw {
                Expr::bit_c(false)
            } else {
                let t = (1u128 << fw) - (1u128 << (fw - m - 1));
                frac.ge(&Expr::named(
                    &format!("{}_EVEN_LIMIT", r.ident().to_ascii_uppercase()),
                    t,
                    fw,
                ))
            }
        }
        // amax ≤ MaxFinite_r · 2^(⌊log2 amax⌋ − emax_r) iff amax's significand ≤ MaxFinite_r's
        // (both normalized to [1, 2)): compare the trailing significands, left-aligned.
        ScalePolicy::Rceil => {
            let d = r.decode(r.max_finite_mag());
            let s = d.sig as u64;
            let lead = 63 - s.leading_zeros(); // position of the leading 1
            let mr = lead; // trailing bits of MaxFinite_r's normalized significand
            let fmax = (s as u128) & ((1u128 << mr) - 1);
            let w = fw.max(mr).max(1);
            let a = if w > fw {
                concat(&[frac.clone(), Expr::c(0, w - fw)])
            } else {
                frac.clone()
            };
            let c = fmax << (w - mr);
            a.gt(&Expr::named(
                &format!("{}_MAX_FRAC", r.ident().to_ascii_uppercase()),
                c,
                w,
            ))
        }
    };
    b.wire_note(
        "amax_up",
        e,
        &format!("{policy}: scale exponent one binade up"),
    )
}

/// Generates the quantizer core.
pub fn generate(req: &GenRequest) -> Result<GeneratedCore, GenError> {
    let fin = req.formats.x;
    let f = req.formats.r;
    let sf = scale_format(req);
    let n = req.options.block.n;
    let policy = req.options.block.policy;
    let top = top_name(req);
    let mut b = ModuleBuilder::new();
    let z: Vec<Expr> = (0..n).map(|i| b.input(&format!("z{i}_i"), fin.k)).collect();
    let bits = req.random_bits();
    let rm = (req.rounding == RoundingSel::Dynamic).then(|| b.input("rm_i", rm_port_width(bits)));
    let sat =
        (req.saturation == SaturationSel::Dynamic).then(|| b.input("sat_i", super::SAT_PORT_WIDTH));
    let rnd: Vec<Expr> = if bits > 0 {
        (0..n)
            .map(|i| b.input(&format!("rnd{i}_i"), bits))
            .collect()
    } else {
        Vec::new()
    };
    let mut modes = Modes::new(
        &mut b,
        req.rounding,
        req.saturation,
        bits,
        rm,
        sat,
        rnd.first().cloned(),
        req.options.tininess,
        req.options.nonan_code,
    );
    modes.rto_overflow = req.options.rto_overflow;

    // 1. The block maximum.
    let mb = fin.mag_bits();
    let (man, eb) = (fin.man_bits(), fin.exp_bits());
    b.comment_owned(vec![
        format!(
            "Block maximum over the finite elements ({}: {}).",
            fin.name(),
            layout(&fin)
        ),
        "An IEEE magnitude field {exponent, trailing significand} orders like the value it"
            .to_string(),
        "encodes (biased exponent above the significand; subnormals have exponent field 0), so"
            .to_string(),
        "comparing whole magnitude fields as integers compares exponents, then significands,"
            .to_string(),
        "exactly. Infinities and NaNs enter the tree as 0 (P3109 §5.2.3: the maximum is over"
            .to_string(),
        "the finite elements); a NaN anywhere makes the scale NaN.".to_string(),
    ]);
    let mut mags = Vec::new();
    let mut nans = Vec::new();
    let mut finites = Vec::new();
    for (i, zi) in z.iter().enumerate() {
        let ones = zi.slice(mb - 1, man).red_and();
        let t_nz = zi.slice(man - 1, 0).ne(&Expr::c(0, man));
        let fin_i = b.wire(&format!("z{i}_finite"), ones.not());
        nans.push(b.wire(&format!("z{i}_nan"), ones.and(&t_nz)));
        mags.push(b.wire(
            &format!("z{i}_mag"),
            Expr::mux(&fin_i, &zi.slice(mb - 1, 0), &Expr::c(0, mb)),
        ));
        finites.push(fin_i);
    }
    let mut level = 0;
    while mags.len() > 1 {
        let mut next = Vec::new();
        for (j, pair) in mags.chunks(2).enumerate() {
            next.push(match pair {
                [a, c] => b.wire(&format!("amax_l{level}_{j}"), Expr::mux(&a.lt(c), c, a)),
                [a] => a.clone(),
                _ => unreachable!(),
            });
        }
        mags = next;
        level += 1;
    }
    let amax = b.wire_note("amax", mags[0].clone(), "largest finite magnitude field");
    let any_nan = b.wire("any_nan", crate::ast::any(&nans));
    let any_finite = b.wire("any_finite", crate::ast::any(&finites));
    let _ = eb;

    // 2. The scale exponent.
    let emax_r = f.emax() as i64;
    let (slo, shi) = (sf.emin() as i64, sf.emax() as i64);
    b.comment_owned(vec![
        format!(
            "Scale exponent ({policy}): floor(log2 amax) + amax_up - {emax_r} (the exponent of MaxFinite of {}), clamped to",
            f.name()
        ),
        format!(
            "[{slo}, {shi}] of {}; amax = 0 -> 2^{slo}, no finite element -> 2^{shi}, NaN -> NaN",
            describe(&sf)
        ),
    ]);
    let ua = unpack(
        &mut b,
        &fin,
        &concat(&[Expr::c(0, 1), amax.clone()]),
        true,
        "amax",
    );
    let fw = fin.p - 1;
    let frac = b.wire("amax_frac", ua.sig.slice(fw - 1, 0));
    let up = policy_increment(&mut b, policy, &f, &frac);
    let (elo, ehi) = ua.exp_range;
    let (lo, hi) = (elo - emax_r, ehi + 1 - emax_r);
    let w = sbits(lo.min(slo), hi.max(shi)) + 1;
    let e = b.wire_note(
        "scale_exp_raw",
        ua.exp.sext(w).add(&up.zext(w)).sub(&Expr::ci(emax_r, w)),
        "policy exponent before clamping",
    );
    let lo_c = Expr::ci(slo, w);
    let hi_c = Expr::ci(shi, w);
    let clamped = Expr::mux(&e.slt(&lo_c), &lo_c, &Expr::mux(&hi_c.slt(&e), &hi_c, &e));
    let ec = b.wire("scale_exp", clamped);
    let bias_s = sf.bias as i64;
    let biased = b.wire("scale_biased", ec.add(&Expr::ci(bias_s, w)));
    let code_fin = biased.slice(sf.k - 1, 0);
    let nan_s = Expr::named(
        &crate::blocks::const_name(&sf, "NAN"),
        sf.nan_code().unwrap_or(0) as u128,
        sf.k,
    );
    let min_s = Expr::named(
        &crate::blocks::const_name(&sf, "MIN_SCALE"),
        (slo + bias_s) as u128,
        sf.k,
    );
    let max_s = Expr::named(
        &crate::blocks::const_name(&sf, "MAX_SCALE"),
        (shi + bias_s) as u128,
        sf.k,
    );
    let s_code = b.wire(
        "scale_code",
        Expr::mux(
            &any_nan,
            &nan_s,
            &Expr::mux(
                &any_finite.not(),
                &max_s,
                &Expr::mux(&ua.zero, &min_s, &code_fin),
            ),
        ),
    );

    // 3. The elements: the `project --scaled` datapath with the shared scale.
    b.comment_owned(vec![format!(
        "Elements: z_i / scale rounded to {} (P3109 §5.1.2 ωBlockProject), one rounder each",
        describe(&f)
    )]);
    let us = unpack(&mut b, &sf, &s_code, true, "sc");
    let mut codes = Vec::new();
    let mut flags = Vec::new();
    for (i, zi) in z.iter().enumerate() {
        let u = unpack(&mut b, &fin, zi, true, &format!("z{i}"));
        let x = super::project::scaled_by(&mut b, &u, &us);
        let mut m = modes.clone();
        if let Some(r) = rnd.get(i) {
            m.rnd = Some(r.clone());
        }
        let out = round(&mut b, &f, &m, &x);
        codes.push(out.code);
        // A named wire per element: the compositional proof (formal/src/compose/quantize.rs) cuts
        // the OR of the elements' flags here.
        flags.push(b.wire(&format!("z{i}_flags"), out.flags));
    }
    for (i, c) in codes.into_iter().enumerate() {
        b.output(&format!("r{i}_o"), c);
    }
    b.output("s_o", s_code);
    let fl = flags
        .iter()
        .skip(1)
        .fold(flags[0].clone(), |acc, x| acc.or(x));
    b.output("flags_o", fl);

    let mut header = vec![
        format!(
            "Unit:        quantize {n} x {} -> {} elements + {} scale",
            fin.name(),
            describe(&f),
            sf.name()
        ),
        layout(&f),
        format!(
            "Scale:       policy {policy} (golden/src/quantize.rs): floor = floor(log2 amax) - emax, ceil = ceil(log2 amax) - emax,"
        ),
        "             even = floor(log2 round(amax)) - emax, rceil = smallest e with amax <= MaxFinite * 2^e"
            .to_string(),
    ];
    header.extend(super::modes::mode_lines(req));
    header.push(format!(
        "Outputs:     r<i>_o = element codes, s_o = scale code, flags_o = OR of the elements' {{invalid, overflow, underflow, inexact}}{}",
        if f.has_nan() {
            String::new()
        } else {
            format!(
                "; NaN -> code {:#x} with invalid",
                req.options.nonan_code
            )
        }
    ));
    if bits > 0 {
        header.push(format!(
            "Random:      rnd<i>_i = {bits} random bits per element for stochastic rounding"
        ));
    }
    finish_core(req, b, &top, header)
}
