#!/usr/bin/env python3
"""Hostile-input sweep of the fp8gen command line: every subcommand with malformed, extreme
and contradictory arguments and inputs, in a private temporary directory. Counts outcomes by
class and exits 1 on any panic (exit 101 or "panicked at"), hang (no exit within the time
limit) or success where an error is required.

Usage: scripts/hostile_cli.py [FP8GEN_BINARY]   (default target/release/fp8gen)
Each case is (arguments, stdin, expectation): "error" (exit 2 or 1 with a message on stderr),
"ok" (exit 0) or "any" (any clean exit: no panic, no hang).
"""
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/fp8gen")
TIMEOUT = 60

LONG = "x" * 100_000
CASES = [
    # gen: bad units, formats, options, paths
    (["gen", "-u", "nope", "-f", "e4m3", "-o", "o1"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e9m9", "-o", "o2"], b"", "error"),
    (["gen", "-u", "mul", "-f", LONG, "-o", "o3"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "--stages", "99", "-o", "o4"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "--stages", "-1", "-o", "o5"], b"", "error"),
    (["gen", "-u", "mac", "-f", "e4m3", "--acc", "exact", "--guard-bits", "0", "-o", "o6"], b"", "error"),
    (["gen", "-u", "mac", "-f", "e4m3", "--acc", "exact", "--guard-bits", "4000000000", "-o", "o7"], b"", "error"),
    (["gen", "-u", "dot", "-f", "e4m3", "--n", "0", "-o", "o8"], b"", "error"),
    (["gen", "-u", "dot", "-f", "e4m3", "--n", "100000", "-o", "o9"], b"", "error"),
    (["gen", "-u", "dot", "-f", "e4m3", "--n", "4", "--scale-format", "e4m3", "-o", "o10"], b"", "error"),
    (["gen", "-u", "project", "-f", "e4m3", "--in-format", "e5m2", "-o", "o11"], b"", "error"),
    (["gen", "-u", "decode", "-f", "e4m3", "--ftz", "-o", "o12"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "--fmax", "600", "-t", "ecp5-25k", "-o", "o13"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "--fmax", "nan", "-t", "ecp5-25k", "-o", "o14"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "-o", "."], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "-o", ".", "--force"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "-o", "/", "--force"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "-o", "user", "--force"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "-o", "afile"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "-r", "sra", "--sr-bits", "0", "-o", "o15"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "-r", "dyn", "--sr-bits", "99", "-o", "o16"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "--nan-code", "zz", "-o", "o17"], b"", "error"),
    (["gen", "-u", "project", "-f", "e4m3", "--nan-code", "1ff", "-o", "o18"], b"", "any"),
    (["gen", "-u", "mul", "--k", "17", "--p", "3", "--specials", "ieee", "-o", "o19"], b"", "error"),
    (["gen", "-u", "mul", "--k", "8", "--p", "9", "--specials", "ieee", "-o", "o20"], b"", "error"),
    (["gen", "-u", "mul", "-f", "e4m3", "--bias", "-2147483648", "-o", "o21"], b"", "error"),
    # verify: bad spaces and options
    (["verify", "-u", "mul", "-f", "e4m3", "--random", "0"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--random", "1e99"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--shard", "5/4"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--shard", "0/0"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--max-hours", "nan"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--max-hours", "-1"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--threads", "100000"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--lanes", "0"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--ignore", "result,flags"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--ignore", "nonsense"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "-r", "dyn", "--run-rounding", "rne,rne"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--timeout", "5"], b"", "error"),
    (["verify", "-u", "mul", "-f", "e4m3", "--vcd", "/proc/nope/x.vcd"], b"", "error"),
    (["verify", "--from", "fifo"], b"", "error"),
    (["verify", "--from", "/dev/zero"], b"", "error"),
    (["verify", "--from", "nothere"], b"", "error"),
    (["verify", "--from", "arr"], b"", "error"),
    (["verify", "--from", "bom"], b"", "any"),
    (["verify", "--from", "classport"], b"", "error"),
    (["verify", "--from", "unknownkey"], b"", "error"),
    (["verify", "--from", "stagesnoclk"], b"", "error"),
    (["verify", "--from", "user", "--in-format", "binary16"], b"", "error"),
    # prove
    (["prove", "-u", "mul", "-f", "e4m3", "--timeout", "0"], b"", "error"),
    (["prove", "-u", "nope", "-f", "e4m3"], b"", "error"),
    # batch commands: malformed lines
    (["project", "-f", "e4m3"], b"zz\n", "error"),
    (["project", "-f", "e4m3"], b"\x1b[31m\x07\n", "error"),
    (["project", "-f", "e4m3"], b"1" * 2_000_000, "error"),
    (["project", "-f", "e4m3"], b"", "ok"),
    (["project", "-f", "e4m3"], b"\xef\xbb\xbf3f800000\n", "any"),
    (["project", "-f", "e4m3", "--scale-format", "e4m3"], b"3f800000 7f\n", "error"),
    (["project", "-f", "e4m3", "-r", "sra", "--sr-bits", "0"], b"3f800000 0\n", "error"),
    (["mul", "-f", "e4m3"], b"38\n", "error"),
    (["mul", "-f", "e4m3"], b"38 38 38\n", "error"),
    (["mul", "-f", "e4m3"], b"1ff 38\n", "error"),
    (["mul", "-f", "e4m3"], b"38 38\n", "ok"),
    (["add", "-f", "e4m3"], b"38\n", "error"),
    (["add", "-f", "e4m3", "--format-y", "e5m2"], b"38 1ff\n", "error"),
    (["add", "-f", "e4m3", "--sub", "dyn"], b"38 38\n", "error"),
    (["add", "-f", "e4m3", "--sub", "--out-format", "binary32"], b"38 38\n", "ok"),
    (["gen", "-u", "add", "-f", "e4m3", "--sub", "zz", "-o", "oa1"], b"", "error"),
    (["gen", "-u", "add", "-f", "binary32", "-o", "oa2"], b"", "error"),
    (["gen", "-u", "add", "-f", "e4m3", "--scaled", "-o", "oa3"], b"", "error"),
    (["gen", "-u", "fma", "-f", "e4m3", "--sub", "-o", "oa4"], b"", "error"),
    (["fma", "-f", "e4m3", "-r", "sra"], b"38 38 0\n", "error"),
    (["fma", "-f", "e4m3"], b"38 38 100000000\n", "error"),
    (["dot", "-f", "e4m3", "--n", "0"], b"\n", "error"),
    (["dot", "-f", "e4m3", "--n", "2"], b"38 38 38\n", "error"),
    (["dot", "-f", "e4m3", "--n", "2", "--scale-format", "e4m3"], b"38 38 38 38 7f 7f\n", "error"),
    (["decode", "-f", "binary32"], b"", "error"),
    (["decode", "--k", "2", "--p", "1", "--specials", "nonan"], b"", "any"),
    # sweeps, merge, cache, synth, board
    (["sweep", "plan", "verify", "--units", "nope"], b"", "error"),
    (["merge", "nothere"], b"", "error"),
    (["merge", "fifo"], b"", "error"),
    (["merge", "arr"], b"", "error"),
    (["cache", "explode"], b"", "error"),
    (["synth", "-u", "mul", "-f", "e4m3", "-t", "nope"], b"", "error"),
    (["synth", "-u", "mul", "-f", "e4m3", "-t", "ecp5-25k", "--keep", "user"], b"", "error"),
    (["board", "-u", "mul", "-f", "e4m3", "-b", "nope", "-o", "b1"], b"", "error"),
    (["board", "-u", "mul", "-f", "e4m3", "-b", "icebreaker", "-o", "user"], b"", "error"),
    (["board-test", "--port", "/dev/null", "-d", "nothere"], b"", "error"),
    (["formats", "--json"], b"", "ok"),
    ([LONG], b"", "error"),
    (["verify", "--" + LONG], b"", "error"),
]


def setup(d):
    os.mkdir(os.path.join(d, "user"))
    with open(os.path.join(d, "user", "notes.txt"), "w") as f:
        f.write("mine\n")
    with open(os.path.join(d, "afile"), "w") as f:
        f.write("mine\n")
    os.mkfifo(os.path.join(d, "fifo"))
    mul = ('{"unit":"mul","top":"m","verilog":"m.v","formats":{"x":"e4m3","y":"e4m3","r":"e4m3"},'
           '"modes":{"rounding":"rne","saturation":"satfinite"},"ports":[%s]}')
    ports = ('{"name":"x_i","direction":"input","width":8,"role":"x"},'
             '{"name":"y_i","direction":"input","width":8,"role":"y"},'
             '{"name":"%s","direction":"output","width":8,"role":"result"%s}')
    manifests = {
        "arr": "[1,2,3]",
        "bom": "\ufeff" + mul % (ports % ("r_o", "")),
        "classport": mul % (ports % ("class", "")),
        "unknownkey": mul % (ports % ("r_o", ',"colour":"red"')),
        "stagesnoclk": (mul % (ports % ("r_o", ""))).replace('"top"', '"stages":2,"top"'),
    }
    for name, text in manifests.items():
        os.mkdir(os.path.join(d, name))
        with open(os.path.join(d, name, "manifest.json"), "w", encoding="utf-8") as f:
            f.write(text)
        with open(os.path.join(d, name, "m.v"), "w") as f:
            f.write("module m(input [7:0] x_i, input [7:0] y_i, output [7:0] r_o);\n"
                    "assign r_o = 8'h00;\nendmodule\n")
    with open(os.path.join(d, "arr.json"), "w") as f:
        f.write("[1,2,3]")


def main():
    if not os.access(BIN, os.X_OK):
        sys.exit(f"hostile_cli: {BIN} is not an executable; build it (cargo build --release)")
    counts = {"ok": 0, "panic": 0, "hang": 0, "wrong success": 0, "wrong failure": 0,
              "unclear": 0, "data lost": 0}
    with tempfile.TemporaryDirectory() as d:
        setup(d)
        for args, stdin, want in CASES:
            env = dict(os.environ, FP8GEN_SIM_WATCHDOG_SECS="20")
            try:
                p = subprocess.run([BIN, *args], input=stdin, cwd=d, capture_output=True,
                                   timeout=TIMEOUT, env=env)
            except subprocess.TimeoutExpired:
                counts["hang"] += 1
                print(f"HANG     {args[:6]}")
                continue
            err = p.stderr.decode("utf-8", "replace")
            name = " ".join(a if len(a) < 40 else a[:20] + "…" for a in args[:8])
            if p.returncode == 101 or "panicked at" in err:
                counts["panic"] += 1
                print(f"PANIC    {name}: {err[:300]}")
            elif want == "error" and p.returncode == 0:
                counts["wrong success"] += 1
                print(f"SUCCESS  {name} (an error was required)")
            elif want == "ok" and p.returncode != 0:
                counts["wrong failure"] += 1
                print(f"FAILED   {name}: {err[:300]}")
            elif p.returncode != 0 and (len(err) > 4000 or not err.strip()):
                counts["unclear"] += 1
                print(f"UNCLEAR  {name}: {len(err)} bytes of stderr")
            else:
                counts["ok"] += 1
        for mine in (os.path.join(d, "user", "notes.txt"), os.path.join(d, "afile")):
            try:
                with open(mine) as f:
                    kept = f.read() == "mine\n"
            except OSError:
                kept = False
            if not kept:
                counts["data lost"] += 1
                print(f"LOST     {os.path.relpath(mine, d)}")
    print(f"hostile_cli: {len(CASES)} cases: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    bad = sum(v for k, v in counts.items() if k != "ok")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
