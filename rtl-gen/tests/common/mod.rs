//! Test helpers: Verilator lint and a tiny C++ testbench (built with `verilator --cc --exe
//! --build`) that reads hex vectors from a file and prints the outputs, so the generated
//! cores can be checked against the golden model before the `sim` crate exists.
#![allow(dead_code)]

use rtl::manifest::Direction;
use rtl::GeneratedCore;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

/// Path of the verilator binary, or a panic with instructions.
pub fn verilator() -> String {
    let v = std::env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
    match Command::new(&v).arg("--version").output() {
        Ok(o) if o.status.success() => v,
        _ => panic!("verilator not found (set VERILATOR or `apt-get install -y verilator`)"),
    }
}

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("rtl-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("create scratch dir");
    base
}

/// Runs `verilator --lint-only -Wall` on a core; returns the diagnostics (empty = clean).
pub fn lint(core: &GeneratedCore) -> String {
    let dir = scratch(&format!("lint-{}", core.top));
    let v = dir.join(format!("{}.v", core.top));
    std::fs::write(&v, &core.verilog).expect("write verilog");
    let out = Command::new(verilator())
        .args(["--lint-only", "-Wall", "--top-module", &core.top])
        .arg(&v)
        .output()
        .expect("run verilator");
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() && s.trim().is_empty() {
        s = format!("verilator exited with {}", out.status);
    }
    s
}

fn ctype(w: u32) -> &'static str {
    if w <= 8 {
        "CData"
    } else if w <= 16 {
        "SData"
    } else if w <= 32 {
        "IData"
    } else {
        "QData"
    }
}

/// Verilator runtime objects, compiled once per test process.
pub struct Runtime {
    pub include: PathBuf,
    pub objects: Vec<PathBuf>,
}

fn include_dir() -> PathBuf {
    let out = Command::new(verilator())
        .args(["--getenv", "VERILATOR_ROOT"])
        .output()
        .expect("verilator --getenv");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("include")
}

fn cxx_flags() -> Vec<String> {
    let inc = include_dir();
    vec![
        "-O1".into(),
        "-faligned-new".into(),
        "-DVM_COVERAGE=0".into(),
        "-DVM_SC=0".into(),
        "-DVM_TRACE=0".into(),
        "-DVM_TRACE_FST=0".into(),
        "-DVM_TRACE_VCD=0".into(),
        format!("-I{}", inc.display()),
        format!("-I{}", inc.join("vltstd").display()),
    ]
}

pub fn runtime() -> &'static Runtime {
    static RT: std::sync::OnceLock<Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        let inc = include_dir();
        let dir = scratch("verilator-runtime");
        let mut objects = Vec::new();
        for src in ["verilated.cpp", "verilated_threads.cpp"] {
            let obj = dir.join(src.replace(".cpp", ".o"));
            let st = Command::new("g++")
                .args(cxx_flags())
                .arg("-c")
                .arg(inc.join(src))
                .arg("-o")
                .arg(&obj)
                .output()
                .expect("g++ runtime");
            assert!(
                st.status.success(),
                "compiling the Verilator runtime failed:\n{}",
                String::from_utf8_lossy(&st.stderr)
            );
            objects.push(obj);
        }
        Runtime {
            include: inc,
            objects,
        }
    })
}

/// A built testbench.
pub struct Bench {
    pub exe: PathBuf,
    pub dir: PathBuf,
    pub n_in: usize,
    pub n_out: usize,
}

/// Builds the C++ testbench of a core.
pub fn build_bench(core: &GeneratedCore) -> Bench {
    let m = &core.manifest;
    let dir = scratch(&format!("tb-{}", core.top));
    std::fs::write(dir.join(format!("{}.v", core.top)), &core.verilog).expect("write v");
    let ins: Vec<_> = m
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Input && !p.role.is_control())
        .collect();
    let outs: Vec<_> = m
        .ports
        .iter()
        .filter(|p| p.direction == Direction::Output && !p.role.is_control())
        .collect();
    let clocked = m.latency > 0;
    let top = &core.top;
    let mut c = String::new();
    c.push_str(&format!(
        "#include \"V{top}.h\"\n#include \"verilated.h\"\n#include <cstdio>\n#include <cstdint>\n"
    ));
    c.push_str("static void out(V");
    c.push_str(top);
    c.push_str("* m) {\n  printf(\"");
    c.push_str(&vec!["%llx"; outs.len()].join(" "));
    c.push_str("\\n\"");
    for p in &outs {
        c.push_str(&format!(", (unsigned long long)m->{}", p.name));
    }
    c.push_str(");\n}\n");
    c.push_str(&format!(
        "int main(int argc, char** argv) {{\n  VerilatedContext* ctx = new VerilatedContext;\n  ctx->commandArgs(argc, argv);\n  V{top}* m = new V{top}{{ctx}};\n  FILE* f = fopen(argv[1], \"r\");\n  if (!f) return 2;\n  unsigned long long v[{}];\n",
        ins.len().max(1)
    ));
    if clocked {
        c.push_str("  m->valid_i = 0; m->rst_ni = 0;\n  for (int i = 0; i < 4; i++) { m->clk_i = 0; m->eval(); m->clk_i = 1; m->eval(); }\n  m->rst_ni = 1;\n  if (m->valid_o) return 3;\n");
    }
    c.push_str("  int flush = 0;\n  for (;;) {\n    int got = 1;\n");
    for i in 0..ins.len() {
        c.push_str(&format!(
            "    if (got && fscanf(f, \"%llx\", &v[{i}]) != 1) got = 0;\n"
        ));
    }
    if clocked {
        c.push_str(&format!(
            "    if (!got) {{ if (flush++ >= {}) break; }}\n",
            m.latency + 1
        ));
        c.push_str("    m->valid_i = got;\n");
    } else {
        c.push_str("    if (!got) break;\n    (void)flush;\n    m->valid_i = 1;\n");
    }
    for (i, p) in ins.iter().enumerate() {
        c.push_str(&format!(
            "    m->{} = got ? ({})v[{i}] : 0;\n",
            p.name,
            ctype(p.width)
        ));
    }
    if clocked {
        c.push_str(
            "    m->clk_i = 0; m->eval(); m->clk_i = 1; m->eval();\n    if (m->valid_o) out(m);\n",
        );
    } else {
        c.push_str("    m->eval();\n    if (!m->valid_o) return 4;\n    out(m);\n");
    }
    c.push_str("  }\n  m->final();\n  delete m;\n  delete ctx;\n  return 0;\n}\n");
    std::fs::write(dir.join("tb.cpp"), c).expect("write tb");
    // Verilate, then compile the model with the runtime objects built once per process
    // (much faster than `--build`, which recompiles the runtime for every core).
    let st = Command::new(verilator())
        .current_dir(&dir)
        .args([
            "--cc",
            "-O3",
            "--x-assign",
            "fast",
            "--x-initial",
            "fast",
            "-Wno-fatal",
            "--top-module",
            top,
            &format!("{top}.v"),
            "--Mdir",
            "obj",
        ])
        .output()
        .expect("run verilator");
    assert!(
        st.status.success(),
        "verilator --cc of {top} failed:\n{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let rt = runtime();
    let mut srcs: Vec<PathBuf> = std::fs::read_dir(dir.join("obj"))
        .expect("obj dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().map(|x| x == "cpp").unwrap_or(false))
        .collect();
    srcs.sort();
    // One translation unit: the Verilator headers are parsed once.
    let mut all = String::new();
    for s in &srcs {
        all.push_str(&format!("#include \"{}\"\n", s.display()));
    }
    all.push_str("#include \"tb.cpp\"\n");
    std::fs::write(dir.join("all.cpp"), all).expect("write all.cpp");
    let mut cmd = Command::new("g++");
    cmd.current_dir(&dir)
        .args(cxx_flags())
        .arg("-Iobj")
        .arg("all.cpp")
        .args(&rt.objects)
        .args(["-o", "obj/tb", "-pthread", "-latomic"]);
    let st = cmd.output().expect("run g++");
    assert!(
        st.status.success(),
        "g++ of {top} failed:\n{}",
        String::from_utf8_lossy(&st.stderr)
    );
    Bench {
        exe: dir.join("obj").join("tb"),
        dir,
        n_in: ins.len(),
        n_out: outs.len(),
    }
}

/// Runs vectors through a testbench; returns one output row per vector.
pub fn run_bench(b: &Bench, vectors: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let path = b.dir.join("vectors.txt");
    {
        let f = std::fs::File::create(&path).expect("create vectors");
        let mut w = std::io::BufWriter::new(f);
        for v in vectors {
            assert_eq!(v.len(), b.n_in);
            let s: Vec<String> = v.iter().map(|x| format!("{x:x}")).collect();
            writeln!(w, "{}", s.join(" ")).expect("write vector");
        }
    }
    let out = Command::new(&b.exe).arg(&path).output().expect("run tb");
    assert!(out.status.success(), "testbench failed: {}", out.status);
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<u64>> = text
        .lines()
        .map(|l| {
            l.split_whitespace()
                .map(|t| u64::from_str_radix(t, 16).expect("hex output"))
                .collect()
        })
        .collect();
    assert_eq!(
        rows.len(),
        vectors.len(),
        "testbench printed the wrong number of rows"
    );
    rows
}

/// Compares a core against a golden function on vectors; returns (checked, mismatches) and
/// prints the first few counterexamples.
pub fn check(
    core: &GeneratedCore,
    vectors: &[Vec<u64>],
    golden: &dyn Fn(&[u64]) -> Vec<u64>,
) -> (usize, usize) {
    let b = build_bench(core);
    let got = run_bench(&b, vectors);
    let mut bad = 0;
    for (v, g) in vectors.iter().zip(&got) {
        let e = golden(v);
        if &e != g {
            if bad < 8 {
                eprintln!(
                    "{}: MISMATCH inputs {:x?} expected {:x?} got {:x?}",
                    core.top, v, e, g
                );
            }
            bad += 1;
        }
    }
    (vectors.len(), bad)
}

/// Deterministic xorshift generator.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}
