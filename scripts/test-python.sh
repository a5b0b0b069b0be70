#!/usr/bin/env bash
# The Python side of `make test` (make test-python): the pytest suite of the `fp8gen` module
# (python/tests: API, fast paths, ml_dtypes, gfloat, ONNX interop, the Python examples of
# docs/python.md and the README), the FuseSoC check of
# generated cores (scripts/fusesoc_check.sh), the cocotb example (examples/cocotb/run.py, Icarus
# Verilog) and the packaging checks (manylinux2014 wheel tag and glibc symbols, sdist contents,
# pip install of the sdist into a fresh venv; FP8GEN_SDIST_BUILD=0 skips that build).
# Every missing tool is an error, never a skip. Run scripts/setup-python.sh first.
# Usage: scripts/test-python.sh [FP8GEN_BINARY]     (default target/release/fp8gen)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/fp8gen}
py=.venv/bin/python
die() { echo "test-python: $*" >&2; exit 1; }
[ -x "$py" ] || die ".venv is missing: run make setup-python"
[ -x "$bin" ] || die "fp8gen binary '$bin' not found (cargo build --release)"
"$py" -c "import fp8gen" 2>/dev/null || die "the fp8gen module is not installed in .venv: run make setup-python"
command -v iverilog >/dev/null || die "iverilog is missing: run make setup-python"

mkdir -p out
t0=$(date +%s)
echo "== pytest python/tests"
# exit 5 (no test collected) is a failure too: set -e stops on any non-zero status
"$py" -m pytest python/tests -q -p no:cacheprovider
t1=$(date +%s)
echo "== FuseSoC: core list / core-info / default, lint and sim (self-checking testbench) targets of generated cores"
bash scripts/fusesoc_check.sh "$bin"
t2=$(date +%s)
echo "== cocotb example: generated cores in Icarus Verilog against fp8gen (Python) as scoreboard"
PATH="$PWD/.venv/bin:$PATH" "$py" examples/cocotb/run.py --fp8gen "$bin" --out out/cocotb > out/cocotb.log 2>&1 \
    || { tail -n 40 out/cocotb.log; die "cocotb example failed (log: out/cocotb.log)"; }
grep -E "^cocotb |passed, " out/cocotb.log
t3=$(date +%s)
echo "== packaging: the manylinux2014 wheel of make setup-python, and the sdist"
# The wheel scripts/setup-python.sh built and installed (maturin --zig --compatibility
# manylinux2014): its file name and WHEEL tags say manylinux_2_17, and no symbol of its
# extension needs a glibc newer than 2.17 (the version names it references, read from the file).
whl=$(ls python/target/wheels/fp8gen-*.whl 2>/dev/null | head -n1)
[ -n "$whl" ] || die "no fp8gen wheel in python/target/wheels: run make setup-python"
"$py" - "$whl" <<'PY' || die "the fp8gen wheel is not a manylinux2014 wheel (rebuild: scripts/setup-python.sh --force)"
import re, sys, zipfile
whl = sys.argv[1]
name = whl.rsplit("/", 1)[-1]
plat = name[:-4].split("-")[-1].split(".")
ok = "manylinux_2_17_x86_64" in plat or any(p.startswith("manylinux_2_17_") for p in plat)
z = zipfile.ZipFile(whl)
tags = [l.split(": ", 1)[1] for l in z.read(next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))).decode().splitlines() if l.startswith("Tag: ")]
ok &= bool(tags) and all(re.search(r"-abi3-manylinux(2014|_2_17)_", t) for t in tags)
sos = [n for n in z.namelist() if n.endswith(".so")]
worst = (0, 0)
for so in sos:
    for m in re.findall(rb"GLIBC_(\d+)\.(\d+)", z.read(so)):
        worst = max(worst, (int(m[0]), int(m[1])))
ok &= bool(sos) and worst <= (2, 17)
print(f"wheel {name}: tags {', '.join(tags)}; {len(sos)} extension(s), newest glibc symbol version 2.{worst[1]}" + ("" if ok else "  <- not manylinux2014"))
sys.exit(0 if ok else 1)
PY
# The sdist: built by maturin, it must carry every Rust and Python source of the module (the
# package's and golden/'s, a path dependency) and the lock file; then `pip install` of it into
# a fresh venv must build (a Rust toolchain is needed; pip fetches maturin as the PEP 517
# backend) and import. It builds with Cargo's dev profile (`MATURIN_PEP517_ARGS=--profile dev`):
# the check is that the sdist builds and imports; the wheel above is the optimised build, and a
# second optimised compile of PyO3 and the golden model would double the cost of the check.
# The build's Cargo target directory is kept in python/target/sdist, so only the first run
# compiles the dependencies; set FP8GEN_SDIST_BUILD=0 to skip that step (it is then reported as
# skipped).
sd=$(mktemp -d)
trap 'rm -rf "$sd"' EXIT
maturin="$PWD/.venv/bin/maturin"
(cd python && "$maturin" sdist --out "$sd" >/dev/null 2>&1) || die "maturin sdist failed"
sdist=$(ls "$sd"/fp8gen-*.tar.gz 2>/dev/null | head -n1)
[ -n "$sdist" ] || die "maturin sdist produced no fp8gen-*.tar.gz"
"$py" - "$sdist" <<'PY' || die "the sdist lacks sources (see above)"
import subprocess, sys, tarfile
names = {n.split("/", 1)[1] for n in tarfile.open(sys.argv[1]).getnames() if "/" in n}
tracked = subprocess.run(["git", "ls-files", "python/src", "python/pysrc", "golden/src"],
                         capture_output=True, text=True, check=True).stdout.split()
want = ["pyproject.toml", "Cargo.toml", "python/Cargo.toml", "python/Cargo.lock", "golden/Cargo.toml"]
# maturin puts the python-source directory (pysrc) at the sdist root
want += [t[len("python/"):] if t.startswith("python/pysrc/") else t for t in tracked]
missing = [w for w in want if w not in names]
rs = sum(n.endswith(".rs") for n in names)
print(f"sdist {sys.argv[1].rsplit('/', 1)[-1]}: {len(names)} files, {rs} Rust sources; "
      f"{len(want)} required files " + ("all present" if not missing else f"missing: {missing}"))
sys.exit(1 if missing or not tracked else 0)
PY
if [ "${FP8GEN_SDIST_BUILD:-1}" = 0 ]; then
    echo "sdist build: SKIPPED (FP8GEN_SDIST_BUILD=0): pip install of the sdist not checked"
else
    ts=$(date +%s)
    python3 -m venv "$sd/venv"
    CARGO_TARGET_DIR="$PWD/python/target/sdist" MATURIN_PEP517_ARGS="--profile dev" \
        "$sd/venv/bin/pip" install \
        --disable-pip-version-check -q "$sdist" > "$sd/pip.log" 2>&1 \
        || { tail -n 30 "$sd/pip.log"; die "pip install of the sdist into a fresh venv failed"; }
    "$sd/venv/bin/python" -c "import fp8gen; assert fp8gen.fma([0x38], [0x40], [0.5], 'e4m3', as_values=True)[0] == 2.5" \
        || die "fp8gen built from the sdist does not work"
    echo "sdist build: pip install into a fresh venv built and imported it ($(( $(date +%s) - ts )) s)"
fi
t4=$(date +%s)
echo "test-python: pytest $((t1 - t0)) s, fusesoc $((t2 - t1)) s, cocotb $((t3 - t2)) s, packaging $((t4 - t3)) s"
