//! Snapshot tests of the emitted Verilog (files under `tests/snapshots/`), determinism, the
//! manifest, `write_core` and request validation.
//!
//! Regenerate the snapshots with `FP8GEN_UPDATE_SNAPSHOTS=1 cargo test -p fp8gen-rtl --test tests snapshots::`.

use golden::{Format, Rounding, Saturation};
use rtl::manifest::{Role, Unit};
use rtl::{generate, write_core, GenError, GenRequest, RoundingSel, SaturationSel};
use std::path::PathBuf;

fn snapshot_cases() -> Vec<(&'static str, GenRequest)> {
    let p = GenRequest::project(
        Format::E4M3,
        RoundingSel::Fixed(Rounding::Rne),
        SaturationSel::Fixed(Saturation::SatFinite),
    );
    let d = GenRequest::decode(Format::parse("binary8p3se").expect("fmt"));
    let dy = GenRequest::project(Format::E5M2, RoundingSel::Dynamic, SaturationSel::Dynamic)
        .with_sr_bits(3)
        .with_stages(2);
    let arith = |unit: Unit, stages: u32| {
        let mut r = GenRequest::project(
            Format::E4M3,
            RoundingSel::Fixed(Rounding::Rne),
            SaturationSel::Fixed(Saturation::SatFinite),
        );
        r.unit = unit;
        r.formats.x = Format::E4M3;
        r.formats.y = Some(Format::E4M3);
        r.formats.r = if unit == Unit::Mul {
            Format::E4M3
        } else {
            Format::BINARY32
        };
        r.with_stages(stages)
    };
    // The OCP MX dot product (4 lanes, E8M0 scales, an addend), the exact-accumulator mac,
    // the MX quantizer and a block-scaled multiplier.
    let mut dot = arith(Unit::Fma, 0);
    dot.unit = Unit::Dot;
    dot.formats.scale = Some(Format::E8M0);
    dot.options.dot = iface::DotShape { n: 4, addend: true };
    let mut mac_exact = arith(Unit::Mac, 2);
    mac_exact.options.acc_guard = 16;
    let mut quantizer = p.clone();
    quantizer.formats.scale = Some(Format::E8M0);
    let mut mul_scaled = arith(Unit::Mul, 0);
    mul_scaled.formats.scale = Some(Format::E8M0);
    let mut convert = p.clone();
    convert.unit = Unit::Convert;
    convert.formats.x = Format::E5M2;
    let mut block_quantizer = p.clone();
    block_quantizer.unit = Unit::Quantize;
    block_quantizer.formats.scale = Some(Format::E8M0);
    block_quantizer.options.block = iface::BlockShape {
        n: 4,
        policy: golden::ScalePolicy::Rceil,
    };
    // The adder: E4M3 + E4M3 → E4M3, and E4M3 ± E5M2 → bfloat16 with a sub_i port, mode
    // ports, 3 random bits and 1 stage.
    let mut add = arith(Unit::Mul, 0);
    add.unit = Unit::Add;
    let mut add_mixed = add.clone().with_stages(1);
    add_mixed.formats.y = Some(Format::E5M2);
    add_mixed.formats.r = Format::BFLOAT16;
    add_mixed.options.add_op = rtl::units::add::AddOp::Dynamic;
    add_mixed.rounding = RoundingSel::Dynamic;
    add_mixed.saturation = SaturationSel::Dynamic;
    add_mixed.sr_bits = 3;
    // An FMA with a binary16 addend and result (P3109 FMA<e4m3, e4m3, binary16, binary16>).
    let mut fma16 = arith(Unit::Fma, 0);
    fma16.formats.r = Format::BINARY16;
    fma16.formats.z = Some(Format::BINARY16);
    vec![
        ("fp8_project_e4m3_rne_satfinite_s0.v", p),
        ("fp8_decode_binary8p3se_s0.v", d),
        ("fp8_project_e5m2_rmdyn_sr3_satdyn_s2.v", dy),
        (
            "fp8_mul_e4m3_to_e4m3_rne_satfinite_s0.v",
            arith(Unit::Mul, 0),
        ),
        ("fp8_fma_e4m3_rne_satfinite_s1.v", arith(Unit::Fma, 1)),
        ("fp8_mac_e4m3_rne_satfinite_s0.v", arith(Unit::Mac, 0)),
        (
            "fp8_dot4_e4m3_sc_e8m0_z_to_binary32_rne_satfinite_s0.v",
            dot,
        ),
        ("fp8_mac_e4m3_rne_satfinite_accx16_s2.v", mac_exact),
        ("fp8_project_e4m3_rne_satfinite_sc_e8m0_s0.v", quantizer),
        (
            "fp8_mul_e4m3_to_e4m3_rne_satfinite_sc_e8m0_s0.v",
            mul_scaled,
        ),
        (
            "fp8_quantize_e4m3_rne_satfinite_n4_rceil_sc_e8m0_s0.v",
            block_quantizer,
        ),
        ("fp8_add_e4m3_to_e4m3_rne_satfinite_s0.v", add),
        (
            "fp8_add_e4m3_and_e5m2_to_bfloat16_subdyn_rmdyn_sr3_satdyn_s1.v",
            add_mixed,
        ),
        ("fp8_convert_e4m3_rne_satfinite_from_e5m2_s0.v", convert),
        (
            "fp8_fma_e4m3_z_binary16_to_binary16_rne_satfinite_s0.v",
            fma16,
        ),
    ]
}

#[test]
fn snapshots_match() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let update = std::env::var("FP8GEN_UPDATE_SNAPSHOTS").is_ok();
    let mut stale = Vec::new();
    for (file, req) in snapshot_cases() {
        let core = generate(&req).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(format!("{}.v", core.top), file);
        let path = dir.join(file);
        if update {
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(&path, &core.verilog).expect("write snapshot");
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!(
                "missing snapshot {}; run with FP8GEN_UPDATE_SNAPSHOTS=1",
                path.display()
            )
        });
        if want != core.verilog {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "emitted Verilog differs from snapshots {stale:?}; if intended, rerun with FP8GEN_UPDATE_SNAPSHOTS=1 and review the diff"
    );
}

#[test]
fn generation_is_deterministic() {
    for (_, req) in snapshot_cases() {
        let a = generate(&req).expect("a");
        // Interleave another generation to catch hidden global state.
        let _ = generate(&GenRequest::decode(Format::E2M1)).expect("other");
        let b = generate(&req).expect("b");
        assert_eq!(a.verilog, b.verilog);
        assert_eq!(a.manifest.to_json(), b.manifest.to_json());
    }
}

#[test]
fn header_and_names() {
    let (_, req) = snapshot_cases().remove(0);
    let core = generate(&req).expect("gen");
    let first = core.verilog.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!(
            "// Generated by fp8gen {}: fp8gen gen --unit project --format e4m3 --in-format binary32 --rounding rne --saturation satfinite --stages 0. Do not edit.",
            golden::VERSION
        )
    );
    assert_eq!(core.top, "fp8_project_e4m3_rne_satfinite_s0");
    let d = generate(&GenRequest::decode(
        Format::parse("binary8p3se").expect("f"),
    ))
    .expect("d");
    assert_eq!(d.top, "fp8_decode_binary8p3se_s0");
    for p in core.manifest.ports.iter().chain(d.manifest.ports.iter()) {
        assert!(
            p.name.ends_with("_i") || p.name.ends_with("_o") || p.name == "rst_ni",
            "{}",
            p.name
        );
    }
}

#[test]
fn manifest_describes_ports() {
    let req = GenRequest::project(Format::E4M3, RoundingSel::Dynamic, SaturationSel::Dynamic)
        .with_sr_bits(5)
        .with_stages(3);
    let core = generate(&req).expect("gen");
    let m = &core.manifest;
    assert_eq!(m.unit, Unit::Project);
    assert_eq!(m.latency, 3);
    assert_eq!(m.top, core.top);
    assert_eq!(m.verilog.0, vec![format!("{}.v", core.top)]);
    let w = |r: Role| m.port(r).map(|p| p.width);
    assert_eq!(w(Role::Z), Some(32));
    assert_eq!(w(Role::Rounding), Some(4));
    assert_eq!(w(Role::Saturation), Some(2));
    assert_eq!(w(Role::Random), Some(5));
    assert_eq!(w(Role::Result), Some(8));
    assert_eq!(w(Role::Flags), Some(4));
    assert_eq!(w(Role::Clock), Some(1));
    assert_eq!(w(Role::ResetN), Some(1));
    assert_eq!(m.modes.rounding, None);
    assert_eq!(m.modes.sr_bits, 5);
    // Every port in the manifest is declared in the Verilog with its width.
    for p in &m.ports {
        let dir = match p.direction {
            rtl::manifest::Direction::Input => "input ",
            rtl::manifest::Direction::Output => "output",
        };
        let range = if p.width == 1 {
            String::new()
        } else {
            format!("[{}:0]", p.width - 1)
        };
        let found = core.verilog.lines().any(|l| {
            let l = l.trim();
            l.starts_with(dir) && l.contains(&range) && l.trim_end_matches(',').ends_with(&p.name)
        });
        assert!(found, "port {} not declared as in the manifest", p.name);
    }
    let back: rtl::manifest::Manifest = serde_json::from_str(&m.to_json()).expect("json");
    assert_eq!(&back, m);
}

#[test]
fn write_core_is_atomic_and_refuses_overwrite() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rtl-write-core");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("mkdir");
    let core = generate(&GenRequest::decode(Format::E4M3)).expect("gen");
    let out = base.join("out");
    write_core(&out, &core, false).expect("write");
    assert_eq!(
        std::fs::read_to_string(out.join(format!("{}.v", core.top))).expect("v"),
        core.verilog
    );
    assert!(out.join("manifest.json").exists());
    assert_eq!(
        std::fs::read_to_string(out.join(format!("{}.core", core.top))).expect("core"),
        rtl::fusesoc::core_file(&core.manifest)
    );
    // Non-empty: refused without force, nothing changed.
    let other = generate(&GenRequest::decode(Format::E5M2)).expect("gen2");
    let e = write_core(&out, &other, false).expect_err("must refuse");
    assert!(e.to_string().contains("--force"), "{e}");
    assert!(out.join(format!("{}.v", core.top)).exists());
    // With force: replaced entirely.
    write_core(&out, &other, true).expect("force");
    assert!(!out.join(format!("{}.v", core.top)).exists());
    assert!(out.join(format!("{}.v", other.top)).exists());
    // No temporary directories left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&base)
        .expect("ls")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty());
    // An empty existing directory is fine.
    let empty = base.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    write_core(&empty, &core, false).expect("empty dir");
}

#[test]
fn bad_requests_are_clear_errors() {
    let mut r = GenRequest::project(
        Format::E4M3,
        RoundingSel::Fixed(Rounding::Rne),
        SaturationSel::Fixed(Saturation::SatFinite),
    );
    r.formats.x = Format::E5M2;
    let e = generate(&r).expect_err("bad input format");
    assert!(matches!(e, GenError::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("binary32"), "{e}");

    let mut r = GenRequest::decode(Format::E4M3);
    r.formats.x = Format::raw(8, 8, 7, true, golden::Specials::Fn);
    let e = generate(&r).expect_err("bad format");
    assert!(e.to_string().contains("`p`"), "{e}");

    let r = GenRequest::decode(Format::E4M3).with_stages(1000);
    assert!(generate(&r)
        .expect_err("stages")
        .to_string()
        .contains("stages"));

    let r = GenRequest::project(
        Format::E4M3,
        RoundingSel::Fixed(Rounding::Sra(4)),
        SaturationSel::Fixed(Saturation::SatFinite),
    )
    .with_sr_bits(3);
    assert!(generate(&r)
        .expect_err("sr")
        .to_string()
        .contains("sr-bits"));

    let mut r = GenRequest::project(Format::E2M1, RoundingSel::Dynamic, SaturationSel::Dynamic);
    r.options.nonan_code = 0x10;
    assert!(generate(&r)
        .expect_err("nan code")
        .to_string()
        .contains("nan-code"));
}

#[test]
fn header_and_manifest_record_the_canonical_request() {
    let mut req = GenRequest::project(
        Format::E4M3,
        RoundingSel::Dynamic,
        SaturationSel::Fixed(Saturation::SatFinite),
    )
    .with_stages(2);
    req.unit = Unit::Mul;
    req.formats.x = Format::E4M3;
    req.formats.y = Some(Format::E5M2);
    req.formats.r = Format::BINARY32;
    let core = generate(&req).expect("gen");
    let want = "fp8gen gen --unit mul --format e4m3 --format-y e5m2 --out-format binary32 \
                --rounding dyn --saturation satfinite --stages 2";
    assert_eq!(req.canonical_command(), want);
    assert_eq!(core.manifest.command, want);
    assert_eq!(
        core.verilog.lines().next().unwrap(),
        format!(
            "// Generated by fp8gen {}: {want}. Do not edit.",
            golden::VERSION
        )
    );
    // The interface is the manifest's port list for every unit.
    for unit in [Unit::Decode, Unit::Project, Unit::Mul, Unit::Fma, Unit::Mac] {
        let mut r = req.clone();
        r.unit = unit;
        if unit == Unit::Project {
            r.formats.x = Format::BINARY32;
            r.formats.r = Format::E4M3;
        }
        if matches!(unit, Unit::Fma | Unit::Mac | Unit::Decode) {
            r.formats.r = Format::BINARY32;
        }
        if unit == Unit::Decode {
            // decode does not round: no mode.
            r.rounding = RoundingSel::Fixed(Rounding::Rne);
            r.saturation = SaturationSel::Fixed(Saturation::SatNone);
        }
        let c = generate(&r).unwrap_or_else(|e| panic!("{unit:?}: {e}"));
        assert_eq!(c.manifest.ports, rtl::interface(&r), "{unit:?}");
    }
}
