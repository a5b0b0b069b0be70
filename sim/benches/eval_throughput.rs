//! Eval throughput of the harness: a small decoder (8 → 32 bits) and a projection-like core
//! (binary32 → 8 bits) at several lane counts, single-threaded `eval` and the full
//! equivalence engine on all cores (model + golden + compare).
//!
//! Run: `cargo bench -p fp8gen-sim --bench eval_throughput` (needs Verilator).

use std::time::Instant;

use sim::{
    check_equivalence, BuildOptions, CoreSpec, EquivConfig, FnSpace, ModelLibrary, Port, Toolchain,
};

const DEC8: &str = r#"
module dec8 (input [7:0] a, output [31:0] y);
  wire [15:0] sq = a * a;
  assign y = {sq, ~a, a ^ (a >> 1)};
endmodule
"#;

fn dec8_ref(a: u64) -> u64 {
    ((a * a) << 16) | ((!a & 0xff) << 8) | (a ^ (a >> 1))
}

/// binary32 → E4M3-like code, truncating, saturating, flushing small values (a stand-in for
/// a projection unit of similar size; not the real projection semantics).
const PROJ: &str = r#"
module proj (input [31:0] x, output reg [7:0] y);
  wire s = x[31];
  wire [7:0] e = x[30:23];
  always @* begin
    if (e == 8'hff && x[22:0] != 23'd0) y = {s, 7'h7f};
    else if (e >= 8'd136) y = {s, 7'h7e};
    else if (e < 8'd121) y = {s, 7'h00};
    else y = {s, e[3:0] - 4'd8, x[22:20]};
  end
endmodule
"#;

fn proj_ref(x: u64) -> u64 {
    let s = (x >> 31) & 1;
    let e = (x >> 23) & 0xff;
    let m = x & 0x7f_ffff;
    let body = if e == 0xff && m != 0 {
        0x7f
    } else if e >= 136 {
        0x7e
    } else if e < 121 {
        0
    } else {
        (((e + 8) & 0xf) << 3) | (m >> 20)
    };
    (s << 7) | body
}

/// (name, Verilog, interface, reference function, input mask).
type BenchCore = (&'static str, &'static str, CoreSpec, fn(u64) -> u64, u64);

fn main() {
    let tc = match Toolchain::detect() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("{} / {}", tc.verilator_version, tc.cxx_version);
    println!("core   lanes  build_s  eval_1thread_vec/s  engine_{threads}threads_vec/s");
    let cores: [BenchCore; 2] = [
        (
            "dec8",
            DEC8,
            CoreSpec::combinational("dec8", vec![Port::input("a", 8), Port::output("y", 32)]),
            dec8_ref,
            0xff,
        ),
        (
            "proj",
            PROJ,
            CoreSpec::combinational("proj", vec![Port::input("x", 32), Port::output("y", 8)]),
            proj_ref,
            0xffff_ffff,
        ),
    ];
    for (name, src, spec, reference, in_mask) in cores {
        for lanes in [1u32, 8, 16, 32, 64] {
            let opts = BuildOptions::default().with_lanes(lanes);
            let lib = match ModelLibrary::build(&tc, src, &spec, &opts) {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("error: {e}");
                    std::process::exit(1);
                }
            };
            let mut m = lib.instantiate().expect("instance");
            let n = 1usize << 20;
            let inputs: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 17 & in_mask)
                .collect();
            let mut out = vec![0u64; n];
            m.eval(&inputs, &mut out).expect("eval");
            let reps = 8;
            let t = Instant::now();
            for _ in 0..reps {
                m.eval(&inputs, &mut out).expect("eval");
            }
            let single = (reps * n) as f64 / t.elapsed().as_secs_f64();
            for (a, y) in inputs.iter().zip(&out) {
                assert_eq!(*y, reference(*a), "{name}: input {a:#x}");
            }
            let total = 1u64 << 26;
            let space = FnSpace::new(total, move |i, v: &mut [u64]| {
                v[0] = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 17 & in_mask;
            });
            let s = check_equivalence(
                &lib,
                &space,
                move |i: &[u64], o: &mut [u64]| o[0] = reference(i[0]),
                &EquivConfig::default(),
                None,
            )
            .expect("engine");
            assert_eq!(s.mismatches, 0, "{}", s.to_json());
            println!(
                "{name:<6} {lanes:>5}  {:>7.2}  {:>18.3e}  {:>22.3e}",
                lib.build_seconds(),
                single,
                s.vectors_per_second
            );
        }
    }
}
