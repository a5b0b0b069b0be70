#!/usr/bin/env bash
# Throughput benchmarks, side by side with references measured in the same run:
#   golden model (1 thread) vs Python ml_dtypes (1 thread), and verification throughput of
#   the Verilator equivalence engine (all cores) for decode, project, mul and fma.
# Usage: scripts/bench.sh            (make bench)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/fp8gen
[ -x "$bin" ] || cargo build --release
py=.venv/bin/python

echo "== golden model, single thread (fp8gen bench)"
$bin bench --n 100000000

if [ -x "$py" ] && $py -c "import ml_dtypes" 2>/dev/null; then
    echo "== reference: ml_dtypes / gfloat, single thread (scripts/xcheck/bench_ml_dtypes.py)"
    $py scripts/xcheck/bench_ml_dtypes.py
else
    echo "(ml_dtypes not installed: run make setup-fpga for the reference numbers)"
fi

echo "== verification throughput ($(nproc) cores; vectors/s of the whole engine: stimulus + Verilator + golden + compare)"
echo "   targets per node (README \"Measured here\"): project >= 1e8/s, mul and fma >= 5e7/s"
run() {
    local label=$1 target=$2; shift 2
    local j
    j=$($bin verify "$@" --json 2>/dev/null)
    python3 -c "
import json, sys
j = json.loads(sys.argv[1]); t = float(sys.argv[3]); r = j['vectors_per_second']
verdict = '' if t == 0 else ('  target %.0e: met' % t if r >= t else '  target %.0e: missed, x%.2f short' % (t, t / r))
print(f\"{sys.argv[2]:<44} {j['vectors']:>12} vectors {j['mismatches']:>3} mismatches {r:>10.3e}/s{verdict}\")" "$j" "$label" "$target"
}
run "decode e4m3 (exhaustive)"                  0    -u decode -f e4m3 --exhaustive
run "project binary32->e4m3 rne (2^28 inputs)"  1e8  -u project -f e4m3 -r rne -s satfinite --exhaustive --shard 0/16
run "project binary32->e5m2 rne (2^28 inputs)"  1e8  -u project -f e5m2 -r rne -s satnone --exhaustive --shard 0/16
run "project e4m3 dyn modes (structured)"       1e8  -u project -f e4m3 -r dyn -s dyn
run "mul e4m3 dyn modes (exhaustive)"           5e7  -u mul -f e4m3 -r dyn -s dyn --exhaustive
run "fma e4m3 rne (structured, 8.4M)"           5e7  -u fma -f e4m3 -r rne
run "fma e4m3 rne (random 5e7)"                 5e7  -u fma -f e4m3 -r rne --random 50000000

echo "== Python: fp8gen.project vs ml_dtypes astype, binary32 -> E4M3, 1 thread (python/bench.py)"
if [ -x "$py" ] && $py -c "import fp8gen, ml_dtypes" 2>/dev/null; then
    $py python/bench.py
else
    echo "(the fp8gen Python module is not installed: run make setup-python for this step)"
fi
