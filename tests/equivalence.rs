//! Generated cores proven against the golden model in Verilator (default test run):
//! decode exhaustively for every preset and every P3109 format with K ≤ 10 (bundled, many
//! decoders per Verilator model), projection for every family on the structured set with
//! run-time rounding × saturation ports, and a deliberately broken core that must fail.

use golden::Format;
use rtl::manifest::{Direction as MDir, Manifest, Role};
use rtl::GenRequest;
use sim::{
    check_equivalence, BuildOptions, CoreSpec, EquivConfig, Exhaustive, ModelLibrary, Port,
    Toolchain,
};
use std::process::Command;

fn all_decode_formats() -> Vec<Format> {
    let mut v: Vec<Format> = golden::PRESETS.iter().map(|p| p.1).collect();
    for k in 3..=10u32 {
        for signed in [true, false] {
            let pmax = if signed { k - 1 } else { k };
            for p in 1..=pmax {
                for ext in [true, false] {
                    v.push(Format::p3109(k, p, signed, ext).unwrap());
                }
            }
        }
    }
    v
}

/// One Verilog top instantiating a decoder per format, all fed from the low bits of `x_i`.
fn bundle(formats: &[Format]) -> (String, CoreSpec, Vec<Manifest>) {
    let mut text = String::new();
    let mut ports = vec![Port::input("x_i", 16)];
    let mut inst = String::new();
    let mut manifests = Vec::new();
    for (j, f) in formats.iter().enumerate() {
        let core = rtl::generate(&GenRequest::decode(*f)).expect("generate decode");
        text.push_str(&core.verilog);
        let mut conns = Vec::new();
        for p in &core.manifest.ports {
            match (p.direction, p.role) {
                (MDir::Input, Role::X) => conns.push(format!(".{}(x_i[{}:0])", p.name, f.k - 1)),
                (MDir::Input, Role::ValidIn) => conns.push(format!(".{}(1'b1)", p.name)),
                (MDir::Output, Role::ValidOut) => conns.push(format!(".{}()", p.name)),
                (MDir::Output, _) => {
                    let n = format!("f{j}_{}", p.name);
                    conns.push(format!(".{}({n})", p.name));
                    ports.push(Port::output(n, p.width));
                }
                (d, r) => panic!("unexpected decode port {} {d:?} {r:?}", p.name),
            }
        }
        inst.push_str(&format!("  {} u{j} ({});\n", core.top, conns.join(", ")));
        manifests.push(core.manifest);
    }
    let decl: Vec<String> = ports
        .iter()
        .map(|p| match p.direction {
            sim::Direction::Input => format!("input wire [{}:0] {}", p.width - 1, p.name),
            sim::Direction::Output => format!("output wire [{}:0] {}", p.width - 1, p.name),
        })
        .collect();
    text.push_str(&format!(
        "module decode_bundle (\n  {}\n);\n{inst}endmodule\n",
        decl.join(",\n  ")
    ));
    (
        text,
        CoreSpec::combinational("decode_bundle", ports),
        manifests,
    )
}

#[test]
fn decode_is_exact_for_every_preset_and_every_p3109_format_up_to_k10() {
    let tc = Toolchain::detect().expect("Verilator is required: run scripts/setup.sh");
    let formats = all_decode_formats();
    assert_eq!(formats.len(), golden::PRESETS.len() + 192);
    let mut total = 0;
    for chunk in formats.chunks(52) {
        let (text, spec, _) = bundle(chunk);
        let lib = ModelLibrary::build(&tc, &text, &spec, &BuildOptions::default().with_lanes(1))
            .expect("build bundle");
        let space = Exhaustive::new(&[10]).unwrap();
        let golden = |inp: &[u64], out: &mut [u64]| {
            let mut o = 0;
            for f in chunk {
                for v in rtl::units::decode::golden_outputs(f, inp[0] & f.code_mask() as u64) {
                    out[o] = v;
                    o += 1;
                }
            }
        };
        let s =
            check_equivalence(&lib, &space, golden, &EquivConfig::default(), None).expect("run");
        assert!(s.passed(), "decode mismatches: {}", s.to_json());
        total += s.vectors as usize * chunk.len();
    }
    eprintln!(
        "decode: {} formats, {total} (format, code) checks",
        formats.len()
    );
}

fn verify_cli(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .arg("verify")
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn projection_is_exact_for_every_family_and_mode_on_the_structured_set() {
    // Run-time rm_i × sat_i ports: one core per format covers all 6 × 4 mode pairs.
    for f in [
        "e4m3",
        "e5m2",
        "e4m3fnuz",
        "binary8p3se",
        "e2m1",
        "e8m0",
        "binary8p1uf",
        "binary10p4ue",
        "k7p3b5s-ieee",
        "e4m3b11fnuz",
        "e3m4",
    ] {
        let (ok, out, err) =
            verify_cli(&["-u", "project", "-f", f, "-r", "dyn", "-s", "dyn", "--json"]);
        assert!(ok, "{f}: {err}\n{out}");
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(j["mismatches"], 0);
        // Every distinct structured binary32 value (> 100k) in each of the 24 mode pairs.
        assert!(j["vectors"].as_u64().unwrap() >= 100_000 * 24, "{f}: {out}");
        assert_eq!(
            j["vectors"].as_u64().unwrap(),
            j["meta"]["vectors_per_mode"]
                .as_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
                * 24
        );
    }
    // Pipelined and stochastic cores.
    for args in [
        &[
            "-u", "project", "-f", "e4m3", "-r", "dyn", "-s", "dyn", "--stages", "3", "--json",
        ][..],
        &[
            "-u",
            "project",
            "-f",
            "binary8p4se",
            "-r",
            "src",
            "--sr-bits",
            "6",
            "-s",
            "satfinite",
            "--json",
        ][..],
        &[
            "-u",
            "project",
            "-f",
            "e5m2",
            "-r",
            "dyn",
            "--sr-bits",
            "4",
            "-s",
            "satnone",
            "--random",
            "300000",
            "--json",
        ][..],
        &[
            "-u",
            "project",
            "-f",
            "e4m3",
            "--in-format",
            "bfloat16",
            "-r",
            "dyn",
            "-s",
            "dyn",
            "--exhaustive",
            "--json",
        ][..],
    ] {
        let (ok, out, err) = verify_cli(args);
        assert!(ok, "{args:?}: {err}\n{out}");
    }
}

#[test]
fn a_deliberately_broken_core_fails_with_a_counterexample_and_a_vcd() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("core");
    let o = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args([
            "gen",
            "-u",
            "project",
            "-f",
            "e4m3",
            "-r",
            "rne",
            "-s",
            "satfinite",
            "-o",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success());
    let vfile = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "v"))
        .unwrap();
    let text = std::fs::read_to_string(&vfile).unwrap();
    // The correct core passes.
    let (ok, _, err) = verify_cli(&["--from", dir.to_str().unwrap()]);
    assert!(ok, "{err}");
    // Break ties-to-even: the round-away condition loses its "odd" term.
    let line = text
        .lines()
        .find(|l| l.contains("wire round_away ="))
        .expect("rounder line");
    let broken = text.replace(line, &line.replace("round_mag_t[0]", "1'b0"));
    assert_ne!(broken, text, "the alteration must change the core");
    std::fs::write(&vfile, broken).unwrap();
    let vcd = tmp.path().join("cx.vcd");
    let (ok, out, err) = verify_cli(&[
        "--from",
        dir.to_str().unwrap(),
        "--vcd",
        vcd.to_str().unwrap(),
    ]);
    assert!(!ok, "a broken core must fail verification");
    assert!(err.contains("MISMATCH"), "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(j["mismatches"].as_u64().unwrap() > 0);
    assert!(!j["counterexamples"].as_array().unwrap().is_empty());
    assert!(
        std::fs::metadata(&vcd)
            .map(|m| m.len() > 100)
            .unwrap_or(false),
        "VCD of the first counterexample"
    );
    // Also a flipped constant: the largest finite code (saturated overflow), a named
    // localparam of the core.
    let flipped = text.replace(
        "localparam [6:0] E4M3_MAX_MAG = 7'h7e;",
        "localparam [6:0] E4M3_MAX_MAG = 7'h7d;",
    );
    assert_ne!(flipped, text, "the alteration must change the core");
    std::fs::write(&vfile, flipped).unwrap();
    let (ok, _, _) = verify_cli(&["--from", dir.to_str().unwrap()]);
    assert!(!ok);
}

#[test]
fn mul_is_exact_for_the_issue_formats_in_every_mode() {
    // Every (x, y) pair × 6 roundings × 4 saturations through run-time ports.
    for args in [
        &["-f", "e4m3"][..],
        &["-f", "e5m2"][..],
        &["-f", "e4m3fnuz"][..],
        &["-f", "e5m2fnuz"][..],
        &["-f", "binary8p4se"][..],
        &["-f", "e2m1"][..],
        &[
            "-f",
            "e4m3",
            "--format-y",
            "e5m2",
            "--out-format",
            "binary32",
        ][..],
    ] {
        let mut a = vec![
            "-u",
            "mul",
            "-r",
            "dyn",
            "-s",
            "dyn",
            "--exhaustive",
            "--json",
        ];
        a.extend_from_slice(args);
        let (ok, out, err) = verify_cli(&a);
        assert!(ok, "{args:?}: {err}\n{out}");
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(j["mismatches"], 0);
    }
}

/// The same vectors through a combinational and a 3-stage pipelined core give identical
/// outputs (compared with each other directly, not only each with the golden model).
#[test]
fn stages_0_and_3_give_identical_results() {
    use rtl::manifest::Unit;
    let tc = Toolchain::detect().expect("Verilator is required: run scripts/setup.sh");
    for unit in [Unit::Mul, Unit::Fma] {
        let mut outs = Vec::new();
        for stages in [0u32, 3] {
            let mut req = GenRequest::project(
                Format::E4M3,
                rtl::RoundingSel::Dynamic,
                rtl::SaturationSel::Dynamic,
            );
            req.unit = unit;
            req.formats = rtl::manifest::Formats {
                x: Format::E4M3,
                y: Some(Format::E4M3),
                r: if unit == Unit::Fma {
                    Format::BINARY32
                } else {
                    Format::E4M3
                },
                scale: None,
                z: None,
            };
            req.stages = stages;
            let core = rtl::generate(&req).unwrap();
            let spec = CoreSpec::from_manifest(&core.manifest);
            let clocked = spec.is_clocked();
            let lib = ModelLibrary::build(
                &tc,
                &core.verilog,
                &spec,
                &BuildOptions::default().with_lanes(4),
            )
            .unwrap();
            let mut m = lib.instantiate().unwrap();
            let (ni, no) = (m.n_inputs(), m.n_outputs());
            // Data inputs in port order (valid first on combinational cores): x, y, [z], rm, sat.
            let roles: Vec<Role> = core
                .manifest
                .ports
                .iter()
                .filter(|p| p.direction == MDir::Input && p.role.is_data(clocked, false))
                .map(|p| p.role)
                .collect();
            assert_eq!(roles.len(), ni);
            let n = 200_000usize;
            let mut inp = vec![0u64; n * ni];
            let mut s: u64 = 0x1234_5678_9abc_def1;
            for i in 0..n {
                for (k, r) in roles.iter().enumerate() {
                    if *r == Role::ValidIn {
                        inp[i * ni + k] = 1;
                        continue;
                    }
                    s = s
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let h = s >> 11;
                    inp[i * ni + k] = match r {
                        Role::X | Role::Y => h & 0xff,
                        Role::Z => (h as u32 & 0x8fff_ffff | 0x3000_0000) as u64,
                        Role::Rounding => h % 6,
                        Role::Saturation => h % 4,
                        _ => 1,
                    };
                }
            }
            let mut out = vec![0u64; n * no];
            m.eval(&inp, &mut out).unwrap();
            // Compare result and flags only (the valid port is data on the combinational core).
            let data_out: Vec<usize> = core
                .manifest
                .ports
                .iter()
                .filter(|p| p.direction == MDir::Output && !(clocked && p.role == Role::ValidOut))
                .enumerate()
                .filter(|(_, p)| matches!(p.role, Role::Result | Role::Flags))
                .map(|(i, _)| i)
                .collect();
            outs.push(
                (0..n)
                    .flat_map(|i| {
                        data_out
                            .iter()
                            .map(|&k| out[i * no + k])
                            .collect::<Vec<_>>()
                    })
                    .collect::<Vec<u64>>(),
            );
        }
        assert_eq!(outs[0].len(), outs[1].len());
        for (i, (a, b)) in outs[0]
            .iter()
            .zip(&outs[1])
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(4)
        {
            eprintln!("{unit:?} output word {i}: stages 0 {a:#x}, stages 3 {b:#x}");
        }
        let diff = outs[0].iter().zip(&outs[1]).filter(|(a, b)| a != b).count();
        assert_eq!(diff, 0, "{unit:?}: stages 0 and 3 differ on {diff} outputs");
    }
}
