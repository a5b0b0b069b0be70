#!/usr/bin/env python3
"""Generates cores with `fp8gen gen`, simulates them in Icarus Verilog under cocotb, and checks
every result and flag against the Python golden model (test_fp8gen_core.py).

Default: one core of every unit (CORES below): E4M3 decode, multipliers with run-time
rounding and saturation ports (combinational and 2 pipeline stages), a 2-stage binary32 -> E5M2
projection, a 2-stage FMA, an 8-element MX dot product with E8M0 scales and a binary32 addend,
and MACs with the binary32 accumulator (plain and `--interleave 2`) and the exact accumulator.
`--core DIR` runs the testbench on an existing core directory (manifest.json + Verilog)
instead. Exit status: 0 when every test passed, 1 on a failure, 2 on a setup error.

The fp8gen binary (to generate the default cores): `--fp8gen PATH`, else $FP8GEN, else
target/release/fp8gen, target/debug/fp8gen of this repository, else `fp8gen` on PATH;
`--build` runs `cargo build --release` first when none is found.

Usage: examples/cocotb/run.py [--fp8gen PATH] [--build] [--core DIR ...] [--vectors N]
                              [--seed S] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

CORES = [
    ("mul_e4m3_dyn_s0", ["-u", "mul", "-f", "e4m3", "-r", "dyn", "-s", "dyn"]),
    ("mul_e4m3_dyn_s2", ["-u", "mul", "-f", "e4m3", "-r", "dyn", "-s", "dyn", "--stages", "2"]),
    ("project_e5m2_rne_satfinite_s2",
     ["-u", "project", "-f", "e5m2", "-r", "rne", "-s", "satfinite", "--stages", "2"]),
    ("decode_e4m3_s0", ["-u", "decode", "-f", "e4m3"]),
    ("fma_e4m3_dyn_s2", ["-u", "fma", "-f", "e4m3", "-r", "dyn", "-s", "dyn", "--stages", "2"]),
    ("dot8_e4m3_e8m0_z_s0",
     ["-u", "dot", "-f", "e4m3", "--n", "8", "--scale-format", "e8m0", "--addend"]),
    ("mac_e4m3_s1", ["-u", "mac", "-f", "e4m3", "--stages", "1"]),
    ("mac_e4m3_il2_s1", ["-u", "mac", "-f", "e4m3", "--interleave", "2", "--stages", "1"]),
    ("mac_e4m3_accx_s2", ["-u", "mac", "-f", "e4m3", "--acc", "exact", "--stages", "2"]),
]


def find_fp8gen(arg: str | None) -> str | None:
    """The fp8gen binary: --fp8gen, $FP8GEN, target/release, target/debug, PATH."""
    if arg:
        return arg
    if os.environ.get("FP8GEN"):
        return os.environ["FP8GEN"]
    for d in ("release", "debug"):
        p = os.path.join(REPO, "target", d, "fp8gen")
        if os.access(p, os.X_OK):
            return p
    return shutil.which("fp8gen")


def fail(msg: str, code: int = 2) -> int:
    sys.stderr.write(f"cocotb example: {msg}\n")
    return code


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fp8gen", help="fp8gen binary (default: $FP8GEN, target/release, "
                    "target/debug, PATH)")
    ap.add_argument("--build", action="store_true",
                    help="cargo build --release when no fp8gen binary is found")
    ap.add_argument("--core", action="append", help="existing core directory (repeatable)")
    ap.add_argument("--vectors", type=int, default=2000, help="random vectors (mac: steps) per core")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(REPO, "out", "cocotb"))
    a = ap.parse_args()
    try:
        import fp8gen  # noqa: F401
        from cocotb_tools.runner import get_results, get_runner
    except ImportError as e:
        return fail(f"missing Python package ({e}); run `make setup-python`")
    if shutil.which("iverilog") is None or shutil.which("vvp") is None:
        return fail("Icarus Verilog (iverilog, vvp) is not installed; run `make setup-python` "
                    "(apt-get install iverilog)")
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    dirs = []
    if a.core:
        dirs = [os.path.abspath(d) for d in a.core]
    else:
        exe = find_fp8gen(a.fp8gen)
        if exe is None and a.build:
            if subprocess.run(["cargo", "build", "--release", "--bin", "fp8gen"],
                              cwd=REPO).returncode != 0:
                return fail("cargo build --release failed")
            exe = find_fp8gen(None)
        if exe is None:
            return fail("no fp8gen binary: none of --fp8gen, $FP8GEN, target/release/fp8gen, "
                        "target/debug/fp8gen, `fp8gen` on PATH; run `cargo build --release` "
                        "or pass --build")
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            return fail(f"fp8gen binary '{exe}' is not an executable file")
        a.fp8gen = exe
        for name, args in CORES:
            d = os.path.join(a.out, name)
            p = subprocess.run([a.fp8gen, "gen", *args, "-o", d, "--force"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                return fail(f"fp8gen gen {' '.join(args)} failed: {p.stderr.strip()}")
            dirs.append(d)
    failed = passed = 0
    for i, d in enumerate(dirs):
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
        files = m["verilog"] if isinstance(m["verilog"], list) else [m["verilog"]]
        # Outside the core directory: `fp8gen gen --force` replaces only what gen wrote there.
        build = os.path.join(a.out, "sim_build", f"{i}_{os.path.basename(os.path.normpath(d))}")
        runner = get_runner("icarus")
        runner.build(sources=[os.path.join(d, f) for f in files], hdl_toplevel=m["top"],
                     build_dir=build, always=True, timescale=("1ns", "1ps"))
        env = {"FP8GEN_CORE_DIR": d, "FP8GEN_VECTORS": str(a.vectors),
               "FP8GEN_SEED": str(a.seed), "PYTHONPATH": HERE + os.pathsep
               + os.environ.get("PYTHONPATH", "")}
        xml = runner.test(hdl_toplevel=m["top"], test_module="test_fp8gen_core",
                          build_dir=build, test_dir=build, extra_env=env,
                          results_xml=os.path.join(build, "results.xml"))
        n, nfail = get_results(xml)
        print(f"cocotb {m['top']}: {n} test(s), {nfail} failed")
        if n == 0:
            return fail(f"{m['top']}: no test ran", 1)
        failed += nfail
        passed += n - nfail
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
