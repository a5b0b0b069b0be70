#!/usr/bin/env bash
# The Python side of `make test` (make test-python): the pytest suite of the `fp8gen` module
# (python/tests: API, ml_dtypes, gfloat, ONNX interop), the FuseSoC check of generated cores
# (scripts/fusesoc_check.sh) and the cocotb example (examples/cocotb/run.py, Icarus Verilog).
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
echo "test-python: pytest $((t1 - t0)) s, fusesoc $((t2 - t1)) s, cocotb $((t3 - t2)) s"
