//! End-to-end tests of the Verilator harness and the equivalence engine on small hand-written
//! cores. They need Verilator: without it they fail with the toolchain's install hint.

use std::path::Path;

use sim::{
    check_equivalence, BuildOptions, CoreSpec, EquivConfig, Exhaustive, FnSpace, ModelLibrary,
    Port, Role, SimError, Sources, Summary, Toolchain, VectorSpace,
};

fn toolchain() -> Toolchain {
    match Toolchain::detect() {
        Ok(tc) => tc,
        Err(e) => panic!("{e}"),
    }
}

const ADD8: &str = r#"
module add8 (input [7:0] a, input [7:0] b, input cin, output [7:0] s, output cout);
  assign {cout, s} = a + b + {7'd0, cin};
endmodule
"#;

fn add8_spec() -> CoreSpec {
    CoreSpec::combinational(
        "add8",
        vec![
            Port::input("a", 8),
            Port::input("b", 8),
            Port::input("cin", 1),
            Port::output("s", 8),
            Port::output("cout", 1),
        ],
    )
}

fn add8_golden(i: &[u64], o: &mut [u64]) {
    let t = i[0] + i[1] + i[2];
    o[0] = t & 0xff;
    o[1] = t >> 8;
}

pub const DEC8: &str = r#"
module dec8 (input [7:0] a, output [31:0] y);
  wire [15:0] sq = a * a;
  assign y = {sq, ~a, a ^ (a >> 1)};
endmodule
"#;

fn dec8_spec() -> CoreSpec {
    CoreSpec::combinational("dec8", vec![Port::input("a", 8), Port::output("y", 32)])
}

fn dec8_ref(a: u64) -> u64 {
    ((a * a) << 16) | ((!a & 0xff) << 8) | (a ^ (a >> 1))
}

const PIPE2: &str = r#"
module pipe2 (input clk, input rst, input valid_i, input [15:0] a, input [15:0] b,
              output reg [31:0] y, output reg valid_o);
  reg [15:0] a1, b1;
  reg v1;
  always @(posedge clk) begin
    if (rst) begin
      v1 <= 1'b0;
      valid_o <= 1'b0;
    end else begin
      v1 <= valid_i;
      valid_o <= v1;
    end
    a1 <= a;
    b1 <= b;
    y <= a1 * b1 + {16'd0, a1 ^ b1};
  end
endmodule
"#;

fn pipe2_spec(latency: u32) -> CoreSpec {
    CoreSpec::pipelined(
        "pipe2",
        vec![
            Port::control("clk", Role::Clock),
            Port::control("rst", Role::Reset),
            Port::control("valid_i", Role::ValidIn),
            Port::input("a", 16),
            Port::input("b", 16),
            Port::output("y", 32),
            Port::control("valid_o", Role::ValidOut),
        ],
        latency,
    )
}

fn pipe2_ref(a: u64, b: u64) -> u64 {
    (a * b + (a ^ b)) & 0xffff_ffff
}

fn opts(lanes: u32) -> BuildOptions {
    BuildOptions::default().with_lanes(lanes)
}

#[test]
fn adder_is_equivalent_exhaustively_with_1_and_16_lanes() {
    let tc = toolchain();
    for lanes in [1, 16] {
        let lib = ModelLibrary::build(&tc, ADD8, &add8_spec(), &opts(lanes)).unwrap();
        assert_eq!(lib.lanes(), lanes as usize);
        let space = Exhaustive::of(lib.spec()).unwrap();
        assert_eq!(space.len(), 1 << 17);
        let cfg = EquivConfig {
            unit: "add".into(),
            format: "u8".into(),
            batch: 1000, // not a multiple of 16: exercises padding
            ..EquivConfig::default()
        };
        let s = check_equivalence(&lib, &space, add8_golden, &cfg, None).unwrap();
        assert_eq!(s.vectors, 1 << 17);
        assert_eq!(s.mismatches, 0, "{}", s.to_json());
        assert!(s.passed() && s.complete);
        assert!(s.counterexamples.is_empty());
        assert!(s.vectors_per_second > 0.0);
        // The engine says where its threads spent their time, and the model took some.
        let p = s.phases.expect("a batched run measures its phases");
        assert!(p.model > 0.0 && p.golden > 0.0 && p.total() <= s.seconds * 64.0);
        assert!(p.per_vector(s.vectors).starts_with("stimulus "));
    }
}

fn wrong_add8(i: &[u64], o: &mut [u64]) {
    add8_golden(i, o);
    if i[0] == 0x42 {
        o[0] ^= 0x10;
    }
}

#[test]
fn wrong_golden_yields_mismatches_with_counterexamples_and_shards_merge() {
    let tc = toolchain();
    let lib = ModelLibrary::build(&tc, ADD8, &add8_spec(), &opts(16)).unwrap();
    let space = Exhaustive::of(lib.spec()).unwrap();
    let cfg = EquivConfig {
        max_counterexamples: 3,
        unit: "add".into(),
        format: "u8".into(),
        ..EquivConfig::default()
    };
    let progress_calls = std::sync::atomic::AtomicU64::new(0);
    let cb = |p: &sim::Progress| {
        assert!(p.done <= p.total);
        progress_calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let s = check_equivalence(&lib, &space, wrong_add8, &cfg, Some(&cb)).unwrap();
    assert!(progress_calls.load(std::sync::atomic::Ordering::Relaxed) >= 1);
    // a = 0x42 for every b (256) and cin (2).
    assert_eq!(s.mismatches, 512);
    assert!(!s.passed());
    assert_eq!(s.counterexamples.len(), 3);
    let c = &s.counterexamples[0];
    assert_eq!(c.index, 0x42); // a is the lowest field: b = 0, cin = 0
    assert_eq!(c.inputs.get("a"), Some("0x42"));
    assert_eq!(c.inputs.get("b"), Some("0x00"));
    assert_eq!(c.inputs.get("cin"), Some("0x0"));
    assert_eq!(c.got.get("s"), Some("0x42"));
    assert_eq!(c.expected.get("s"), Some("0x52"));
    assert_eq!(c.mismatched_ports, vec!["s".to_string()]);
    assert_eq!(s.counterexamples[1].index, 0x142);

    // JSON round trip keeps port order.
    let json = s.to_json();
    assert!(json.find("\"a\"").unwrap() < json.find("\"cin\"").unwrap());
    let back: Summary = serde_json::from_str(&json).unwrap();
    assert_eq!(back.counterexamples, s.counterexamples);

    // Output masks: ignoring bit 4 of `s` hides the bug.
    let masked = EquivConfig {
        output_masks: Some(vec![0xef, 1]),
        ..cfg.clone()
    };
    let m = check_equivalence(&lib, &space, wrong_add8, &masked, None).unwrap();
    assert_eq!(m.mismatches, 0);

    // Four shards merged equal the unsharded run.
    let mut merged: Option<Summary> = None;
    for i in (0..4).rev() {
        let c = EquivConfig {
            shard: format!("{i}/4").parse().unwrap(),
            threads: 1,
            ..cfg.clone()
        };
        let part = check_equivalence(&lib, &space, wrong_add8, &c, None).unwrap();
        assert_eq!(part.vectors, 1 << 15);
        merged = Some(match merged {
            None => part,
            Some(m) => m.merge(&part).unwrap(),
        });
    }
    let merged = merged.unwrap();
    assert!(merged.covers_all_shards());
    assert_eq!(merged.vectors, s.vectors);
    assert_eq!(merged.mismatches, s.mismatches);
    assert_eq!(merged.counterexamples, s.counterexamples);
    // Thread time adds up over shards.
    let (pm, ps) = (merged.phases.unwrap(), s.phases.unwrap());
    assert!(pm.model > 0.0 && ps.model > 0.0);
    assert!(
        merged.merge(&merged).is_err(),
        "a shard cannot be merged twice"
    );

    // Early stop.
    let stop = EquivConfig {
        stop_after_mismatches: Some(1),
        threads: 1,
        ..cfg
    };
    let e = check_equivalence(&lib, &space, wrong_add8, &stop, None).unwrap();
    assert!(!e.complete && e.mismatches >= 1 && e.vectors < 1 << 17);
}

#[test]
fn lanes_are_transparent_and_match_reference() {
    let tc = toolchain();
    let one = ModelLibrary::build(&tc, DEC8, &dec8_spec(), &opts(1)).unwrap();
    let many = ModelLibrary::build(&tc, DEC8, &dec8_spec(), &opts(16)).unwrap();
    let (mut m1, mut m16) = (one.instantiate().unwrap(), many.instantiate().unwrap());
    for n in [256usize, 37, 1, 16, 0] {
        let inputs: Vec<u64> = (0..n as u64).map(|i| (i * 73 + 5) & 0xff).collect();
        let mut o1 = vec![0u64; n];
        let mut o16 = vec![7u64; n];
        m1.eval_comb(&inputs, &mut o1).unwrap();
        m16.eval(&inputs, &mut o16).unwrap();
        assert_eq!(o1, o16, "n = {n}");
        for (a, y) in inputs.iter().zip(&o1) {
            assert_eq!(*y, dec8_ref(*a), "a = {a:#x}");
        }
    }
    // High bits beyond the port width are ignored.
    let mut y = [0u64];
    m16.eval(&[0x1_23], &mut y).unwrap();
    assert_eq!(y[0], dec8_ref(0x23));
    // Wrong buffer sizes are rejected, not read out of bounds.
    let err = m16.eval(&[1, 2], &mut [0u64; 1]).unwrap_err();
    assert!(matches!(err, SimError::Usage(_)), "{err}");
}

#[test]
fn second_build_is_a_cache_hit() {
    let tc = toolchain();
    let dir = tempfile::tempdir().unwrap();
    let o = BuildOptions {
        cache_dir: Some(dir.path().to_path_buf()),
        ..opts(4)
    };
    let a = ModelLibrary::build(&tc, DEC8, &dec8_spec(), &o).unwrap();
    assert!(!a.cache_hit());
    let mtime = |p: &std::path::Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let built_at = mtime(a.so_path());
    let b = ModelLibrary::build(&tc, DEC8, &dec8_spec(), &o).unwrap();
    assert!(b.cache_hit());
    assert_eq!(a.so_path(), b.so_path());
    // Nothing was rebuilt: the library file is the first build's, untouched (a structural
    // check; how long a hit takes is measured by `make bench`, not asserted here).
    assert_eq!(mtime(b.so_path()), built_at);
    assert!(a.so_path().starts_with(dir.path()));
    // No leftovers of the build in the temp area.
    let leftovers = std::fs::read_dir(dir.path().join("tmp")).unwrap().count();
    assert_eq!(leftovers, 0);
    // A different source is a different entry.
    let other = DEC8.replace("~a", "a");
    let c = ModelLibrary::build(&tc, &other, &dec8_spec(), &o).unwrap();
    assert!(!c.cache_hit());
    assert_ne!(c.so_path(), a.so_path());
}

#[test]
fn pipelined_core_streams_with_declared_latency() {
    let tc = toolchain();
    for lanes in [1, 4] {
        let lib = ModelLibrary::build(&tc, PIPE2, &pipe2_spec(2), &opts(lanes)).unwrap();
        let mut m = lib.instantiate().unwrap();
        for n in [1000usize, 3, 0] {
            let mut inputs = Vec::with_capacity(2 * n);
            let mut x = 0x1234_5678u64;
            for _ in 0..n {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                inputs.push(x >> 48);
                inputs.push((x >> 32) & 0xffff);
            }
            let mut out = vec![0u64; n];
            m.eval_stream(&inputs, &mut out).unwrap();
            for k in 0..n {
                assert_eq!(
                    out[k],
                    pipe2_ref(inputs[2 * k], inputs[2 * k + 1]),
                    "k = {k}"
                );
            }
        }
        // The engine drives clocked cores the same way.
        let space = FnSpace::new(5000, |i, v: &mut [u64]| {
            v[0] = (i * 7919) & 0xffff;
            v[1] = (i * 104729 + 3) & 0xffff;
        });
        let s = check_equivalence(
            &lib,
            &space,
            |i: &[u64], o: &mut [u64]| o[0] = pipe2_ref(i[0], i[1]),
            &EquivConfig::default(),
            None,
        )
        .unwrap();
        // A clocked core runs a small space over and over: every lane for more than twice
        // as many cycles as the space has vectors, on either side of a reset.
        assert!(s.passed(), "{s:?}");
        assert_eq!((s.space, s.mismatches), (5000, 0));
        assert!(s.vectors >= 5000 && s.vectors % 5000 == 0, "{}", s.vectors);
        assert!(s.cycles_per_lane > 4 * 5000, "{}", s.cycles_per_lane);
        assert_eq!(s.resets_per_lane, 1);
        assert!(s.bubbles > 0);
    }
    // A wrong declared latency is a handshake violation, reported as such.
    let lib = ModelLibrary::build(&tc, PIPE2, &pipe2_spec(1), &opts(1)).unwrap();
    let mut m = lib.instantiate().unwrap();
    let err = m.eval_stream(&[1, 2, 3, 4], &mut [0u64; 2]).unwrap_err();
    assert!(matches!(err, SimError::Protocol(_)), "{err}");
    assert!(err.to_string().contains("latency 1"), "{err}");
}

#[test]
fn vcd_replay_writes_a_waveform() {
    let tc = toolchain();
    let dir = tempfile::tempdir().unwrap();
    let lib = ModelLibrary::build(&tc, ADD8, &add8_spec(), &opts(16)).unwrap();
    let path = lib
        .replay_vcd(&[0x42, 0x01, 1, 0xff, 0xff, 0], &dir.path().join("cex.vcd"))
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("$enddefinitions"), "not a VCD:\n{text}");
    assert!(text.contains(" cout ") && text.contains(" cin "), "{text}");
    assert!(
        text.contains("b01000100"),
        "sum 0x44 not in the VCD:\n{text}"
    );

    let plib = ModelLibrary::build(&tc, PIPE2, &pipe2_spec(2), &opts(2)).unwrap();
    let p = plib
        .replay_vcd(&[3, 5], &dir.path().join("sub").join("pipe.vcd"))
        .unwrap();
    let text = std::fs::read_to_string(p).unwrap();
    assert!(
        text.contains(" valid_o ") && text.contains(" clk "),
        "{text}"
    );
    // A non-trace model refuses to trace.
    let mut m = plib.instantiate().unwrap();
    assert!(m.replay_vcd(&[1, 2], &dir.path().join("x.vcd")).is_err());
}

#[test]
fn errors_name_the_problem() {
    let tc = toolchain();
    let err = Toolchain::detect_at(Path::new("/nonexistent/verilator")).unwrap_err();
    assert!(
        err.to_string().contains("apt-get install verilator"),
        "{err}"
    );

    let bad = "module add8(input [7:0] a, output [7:0] s); assign s = a +; endmodule";
    let spec = CoreSpec::combinational("add8", vec![Port::input("a", 8), Port::output("s", 8)]);
    let err = ModelLibrary::build(&tc, bad, &spec, &opts(1)).unwrap_err();
    match &err {
        SimError::Verilator {
            build_dir,
            stderr_tail,
            ..
        } => {
            assert!(build_dir.is_dir());
            assert!(stderr_tail.contains("core.v"), "{stderr_tail}");
            let _ = std::fs::remove_dir_all(build_dir);
        }
        other => panic!("expected a Verilator error, got {other}"),
    }

    let err = ModelLibrary::build(&tc, ADD8, &dec8_spec(), &opts(1)).unwrap_err();
    assert!(err.to_string().contains("declares module `dec8`"), "{err}");
}

#[test]
fn builds_from_a_manifest_with_files_includes_defines_and_parameters() {
    let tc = toolchain();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("rtl/inc")).unwrap();
    std::fs::write(d.join("rtl/inc/consts.svh"), "`define BUMP 8'd3\n").unwrap();
    std::fs::write(
        d.join("rtl/add_k.sv"),
        "`include \"consts.svh\"\nmodule add_k #(parameter int K = 0) (input logic [7:0] a, output logic [7:0] y);\n\
         `ifdef WITH_BUMP\n  assign y = a + 8'(K) + `BUMP;\n`else\n  assign y = a + 8'(K);\n`endif\nendmodule\n",
    )
    .unwrap();
    std::fs::write(
        d.join("rtl/top.sv"),
        "module top #(parameter int K = 1) (input logic [7:0] a, output logic [7:0] y);\n  add_k #(.K(K)) u (.a(a), .y(y));\nendmodule\n",
    )
    .unwrap();
    let manifest = r#"{"unit":"mul","top":"top","verilog":["rtl/add_k.sv","rtl/top.sv"],
      "include_dirs":["rtl/inc"],"defines":{"WITH_BUMP":""},"parameters":{"K":5},
      "formats":{"x":"e4m3","y":"e4m3","r":"e4m3"},
      "ports":[{"name":"a","direction":"input","width":8},
               {"name":"y","direction":"output","width":8}]}"#;
    let m = iface::Manifest::from_json(manifest).unwrap();
    let sources = Sources::from_manifest(&m, d).unwrap();
    let spec = CoreSpec::from_manifest(&m);
    let lib = ModelLibrary::build_sources(&tc, &sources, &spec, &opts(2)).unwrap();
    let mut model = lib.instantiate().unwrap();
    let mut y = [0u64; 2];
    model.eval(&[1, 250], &mut y).unwrap();
    assert_eq!(y, [1 + 5 + 3, (250 + 8) & 0xff]);

    // A description narrower than the Verilog port is an error, not a silent partial compare.
    let mut narrow = spec.clone();
    narrow.ports[1].width = 4;
    let err = ModelLibrary::build_sources(&tc, &sources, &narrow, &opts(2)).unwrap_err();
    assert!(
        err.to_string()
            .contains("the ports of `top` in the Verilog differ from its description"),
        "{err}"
    );
    // So is a Verilog port the description leaves out.
    let missing = CoreSpec::combinational("top", vec![Port::output("y", 8)]);
    let err = ModelLibrary::build_sources(&tc, &sources, &missing, &opts(2)).unwrap_err();
    assert!(
        err.to_string().contains("differ from its description")
            || err.to_string().contains("no data input"),
        "{err}"
    );
}

#[test]
fn verilator_errors_show_the_first_error() {
    let tc = toolchain();
    let bad = "module add8(input [7:0] a, input [7:0] b, input cin, output [7:0] s, output cout);\n  assign {cout, s} = a + b + cin\n  wire oops = ;\nendmodule\n";
    let err = ModelLibrary::build(&tc, bad, &add8_spec(), &opts(1))
        .unwrap_err()
        .to_string();
    let first = err
        .lines()
        .find(|l| l.starts_with("%Error"))
        .unwrap_or_default();
    assert!(first.contains(":3:") || first.contains(":2:"), "{err}");
}
