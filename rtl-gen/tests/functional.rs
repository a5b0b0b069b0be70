//! Functional check of generated cores against the golden model with a small Verilator
//! testbench: `decode` exhaustively, `project` on a stratified sample of the input format
//! (every exponent; round/sticky patterns around each rounding boundary of the target format
//! and of the stochastic window; all specials) for every family × mode.
//!
//! Set `FP8GEN_RTL_SWEEP=1` for a larger project sample (more random significands).

use crate::common;
use common::*;
use golden::{Format, Rounding, Saturation, Specials, Tininess};
use rtl::units::{decode, GoldenModel};
use rtl::{GenRequest, RoundingSel, SaturationSel};

fn fmt(name: &str) -> Format {
    Format::parse(name).unwrap_or_else(|e| panic!("{e}"))
}

/// Stratified sample of codes of the IEEE input format `fin` for target `f`.
fn inputs(fin: &Format, f: &Format, sr: u32, rng: &mut Rng) -> Vec<u64> {
    let man_in = fin.man_bits() as i64;
    let eb_in = fin.exp_bits();
    let extra = if std::env::var("FP8GEN_RTL_SWEEP").is_ok() {
        24
    } else {
        3
    };
    let man = f.man_bits() as i64;
    let emin = f.emin() as i64;
    let emax = f.emax() as i64;
    let mmask = (1u64 << man_in) - 1;
    let mut out = Vec::new();
    for sign in [0u64, 1] {
        for ef in 0..(1u64 << eb_in) - 1 {
            let e = if ef == 0 {
                fin.emin() as i64
            } else {
                ef as i64 - fin.bias as i64
            };
            let lsb = e - man_in;
            let q = if f.has_subnormals() { e.max(emin) } else { e } - man;
            let c = q - lsb;
            let interesting = e >= emin - (f.p as i64) - sr as i64 - 4 && e <= emax + 2;
            let mut ms = vec![0u64, mmask, rng.next() & mmask];
            for _ in 0..extra {
                ms.push(rng.next() & mmask);
            }
            if interesting || ef == 0 {
                for cc in [c - 1, c, c + 1, c + sr as i64, c + sr as i64 + 1] {
                    if cc < 1 || cc > man_in {
                        continue;
                    }
                    let cc = cc as u32;
                    let half = 1u64 << (cc - 1);
                    let full = 1u64 << cc;
                    let hb = man_in as u32 - cc;
                    let hmask = if hb == 0 { 0 } else { (1u64 << hb) - 1 };
                    for lo in [0, 1, half - 1, half, half + 1, full - 1, rng.next() % full] {
                        for hi in [0, 1, hmask, hmask.saturating_sub(1), rng.next() & hmask] {
                            ms.push(((hi << cc) | (lo & (full - 1))) & mmask);
                        }
                    }
                }
            }
            ms.sort_unstable();
            ms.dedup();
            for m in ms {
                out.push((sign << (fin.k - 1)) | (ef << man_in) | m);
            }
        }
        // Inf and NaNs (quiet and signaling).
        let top = ((1u64 << eb_in) - 1) << man_in;
        for m in [0, 1, 1 << (man_in - 1), mmask] {
            out.push((sign << (fin.k - 1)) | top | m);
        }
    }
    out
}

/// Vectors for a project core: every input × every mode combination of the dynamic ports.
fn project_vectors(req: &GenRequest, seed: u64) -> Vec<Vec<u64>> {
    let mut rng = Rng(seed | 1);
    let n = req.random_bits();
    let zs = inputs(&req.formats.x, &req.formats.r, n, &mut rng);
    let rms: Vec<u64> = match req.rounding {
        RoundingSel::Fixed(_) => vec![u64::MAX],
        RoundingSel::Dynamic if n > 0 => (0..9).collect(),
        RoundingSel::Dynamic => (0..6).chain([7]).collect(),
    };
    let sats: Vec<u64> = match req.saturation {
        SaturationSel::Fixed(_) => vec![u64::MAX],
        SaturationSel::Dynamic => (0..4).collect(),
    };
    let rmask = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let mut out = Vec::new();
    for z in zs {
        for &rm in &rms {
            for &sat in &sats {
                let mut v = vec![z];
                if rm != u64::MAX {
                    v.push(rm);
                }
                if sat != u64::MAX {
                    v.push(sat);
                }
                if n > 0 {
                    let r = match rng.next() % 8 {
                        0 => 0,
                        1 => rmask,
                        _ => rng.next() & rmask,
                    };
                    v.push(r);
                }
                out.push(v);
            }
        }
    }
    out
}

fn run_project(req: &GenRequest) -> (usize, usize) {
    let core = rtl::generate(req).unwrap_or_else(|e| panic!("{e}"));
    let model = GoldenModel::new(req).expect("model");
    let vecs = project_vectors(req, 0x9E37_79B9_7F4A_7C15);
    let (n, bad) = check(&core, &vecs, &|v| model.eval(v));
    eprintln!("{}: {n} vectors, {bad} mismatches", core.top);
    (n, bad)
}

fn run_decode(f: &Format, stages: u32) -> (usize, usize) {
    let req = GenRequest::decode(*f).with_stages(stages);
    let core = rtl::generate(&req).unwrap_or_else(|e| panic!("{e}"));
    let vecs: Vec<Vec<u64>> = (0..f.num_codes()).map(|c| vec![c]).collect();
    let (n, bad) = check(&core, &vecs, &|v| decode::golden_outputs(f, v[0]));
    eprintln!("{}: {n} codes, {bad} mismatches", core.top);
    (n, bad)
}

fn dynamic(f: Format, sr: u32) -> GenRequest {
    GenRequest::project(f, RoundingSel::Dynamic, SaturationSel::Dynamic).with_sr_bits(sr)
}

fn fixed(f: Format, r: Rounding, s: Saturation) -> GenRequest {
    GenRequest::project(f, RoundingSel::Fixed(r), SaturationSel::Fixed(s))
}

fn assert_all(results: Vec<(usize, usize)>) {
    let total: usize = results.iter().map(|r| r.0).sum();
    let bad: usize = results.iter().map(|r| r.1).sum();
    eprintln!("total {total} vectors, {bad} mismatches");
    assert_eq!(bad, 0, "{bad} mismatches in {total} vectors");
}

/// Formats covering every family, signedness, p = 1, k = 2..16, custom biases and ranges
/// beyond binary32.
fn family_formats() -> Vec<Format> {
    let mut v: Vec<Format> = [
        "e4m3",
        "e5m2",
        "e4m3fnuz",
        "e5m2fnuz",
        "e4m3b11fnuz",
        "e4m3-ieee",
        "e3m4",
        "e3m2",
        "e2m3",
        "e2m1",
        "e8m0",
        "binary8p3se",
        "binary8p4sf",
        "binary8p1se",
        "binary8p1uf",
        "binary8p3ue",
        "binary8p5uf",
        "binary10p1se",
        "binary16p8se",
        "binary2p1sf",
        "binary3p1se",
        "binary3p2ue",
        "binary16",
    ]
    .iter()
    .map(|n| fmt(n))
    .collect();
    v.push(Format::new(8, 4, 3, true, Specials::Fn).expect("custom"));
    v.push(Format::new(6, 3, -2, true, Specials::P3109Extended).expect("custom"));
    v.push(Format::new(16, 16, 40000, false, Specials::P3109Finite).expect("custom"));
    v.push(Format::new(7, 3, 20, true, Specials::NoNan).expect("custom"));
    v
}

#[test]
fn decode_exhaustive_families() {
    let mut r = Vec::new();
    for f in family_formats() {
        r.push(run_decode(&f, 0));
    }
    r.push(run_decode(&fmt("e5m2"), 2));
    r.push(run_decode(&fmt("e2m1"), 6));
    assert_all(r);
}

#[test]
fn project_dynamic_families_a() {
    let fs = family_formats();
    let half = fs.len() / 2;
    assert_all(
        fs[..half]
            .iter()
            .map(|f| run_project(&dynamic(*f, 3)))
            .collect(),
    );
}

#[test]
fn project_dynamic_families_b() {
    let fs = family_formats();
    let half = fs.len() / 2;
    assert_all(
        fs[half..]
            .iter()
            .map(|f| run_project(&dynamic(*f, 3)))
            .collect(),
    );
}

#[test]
fn project_fixed_modes() {
    use Rounding::*;
    use Saturation::*;
    let cases = [
        fixed(Format::E4M3, Rne, SatFinite),
        fixed(Format::E4M3, Rtz, SatNone),
        fixed(Format::E5M2, Rne, SatNone),
        fixed(Format::E5M2, Rtp, SatPropagate),
        fixed(Format::E4M3FNUZ, Rna, SatNoneV4),
        fixed(Format::E2M1, Rtn, SatFinite),
        fixed(Format::E8M0, Rtp, SatFinite),
        fixed(fmt("binary8p3se"), Rto, SatNone),
        fixed(fmt("binary8p1uf"), Rne, SatNone),
        fixed(fmt("binary8p3ue"), Rto, SatNone),
        fixed(fmt("binary10p1se"), Rne, SatFinite),
        fixed(Format::E4M3, Sra(4), SatFinite),
        fixed(Format::E5M2, Srb(2), SatNone),
        fixed(fmt("binary8p3se"), Src(8), SatPropagate),
        dynamic(Format::E4M3, 0),
        dynamic(fmt("e3m2"), 0),
    ];
    assert_all(cases.iter().map(run_project).collect());
}

#[test]
fn project_options_and_pipelines() {
    let mut tb = dynamic(Format::E4M3, 2);
    tb.options.tininess = Tininess::BeforeRounding;
    let mut nc = dynamic(Format::E2M1, 0);
    nc.options.nonan_code = 0x7;
    let mut from16 = dynamic(Format::E4M3, 2);
    from16.formats.x = Format::BINARY16;
    let mut from_bf = dynamic(fmt("binary8p3se"), 0);
    from_bf.formats.x = Format::BFLOAT16;
    let mut from16b = dynamic(fmt("binary10p1se"), 1);
    from16b.formats.x = Format::BINARY16;
    let cases = [
        tb,
        nc,
        from16,
        from_bf,
        from16b,
        dynamic(Format::E4M3, 3).with_stages(2),
        fixed(Format::E5M2, Rounding::Rne, Saturation::SatFinite).with_stages(1),
        dynamic(Format::E8M0, 0).with_stages(3),
        fixed(Format::E4M3, Rounding::Sra(32), Saturation::SatFinite),
        fixed(fmt("binary16p15sf"), Rounding::Src(32), Saturation::SatNone),
        dynamic(fmt("binary16p16uf"), 32).with_stages(4),
    ];
    assert_all(cases.iter().map(run_project).collect());
}

/// Every preset, every P3109 format with k ≤ `kmax`, and custom biases of every family.
fn many_formats(kmax: u32) -> Vec<Format> {
    let mut v: Vec<Format> = golden::PRESETS.iter().map(|p| p.1).collect();
    for k in 2..=kmax {
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
    v
}

/// Broad sweep (not in the default run): decode exhaustively and project (dynamic modes,
/// 2 random bits) on the stratified sample for every preset, every P3109 format with
/// k ≤ 8 and custom biases of every family. `cargo test -p fp8gen-rtl --test tests functional:: -- --ignored`.
#[test]
#[ignore]
fn sweep_many_formats() {
    let mut r = Vec::new();
    for f in many_formats(8) {
        r.push(run_decode(&f, 0));
        r.push(run_project(&dynamic(f, 2)));
    }
    assert_all(r);
}
