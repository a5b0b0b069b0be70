#!/usr/bin/env bash
# Throughput benchmarks, side by side with references measured in the same run:
#   golden model (1 thread) vs Python ml_dtypes (1 thread), verification throughput of the
#   Verilator equivalence engine (all cores) for decode, project, mul, fma and dot, and the
#   Python module against numpy / ml_dtypes / gfloat (python/bench.py: project, fma, dot, SR vs RNE,
#   the MX block quantizer).
# Usage: scripts/bench.sh            (make bench)
#   FP8GEN=path/to/fp8gen scripts/bench.sh    another binary (default target/release/fp8gen)
#   BENCH_ONLY=dot scripts/bench.sh           only the verification rows whose label contains
#                                             this (grep -E pattern); skips the other sections
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${FP8GEN:-target/release/fp8gen}
[ -x "$bin" ] || [ -n "${FP8GEN:-}" ] || cargo build --release
py=.venv/bin/python
only=${BENCH_ONLY:-}

if [ -z "$only" ]; then
echo "== golden model, single thread (fp8gen bench)"
$bin bench --n 100000000

if [ -x "$py" ] && $py -c "import ml_dtypes" 2>/dev/null; then
    echo "== reference: ml_dtypes / gfloat, single thread (scripts/xcheck/bench_ml_dtypes.py)"
    $py scripts/xcheck/bench_ml_dtypes.py
else
    echo "(ml_dtypes not installed: run make setup-fpga for the reference numbers)"
fi
fi

echo "== verification throughput ($(nproc) cores; vectors/s of the whole engine: stimulus + Verilator + golden + compare)"
echo "   targets per node (docs/qor.md): project >= 1e8/s, mul and fma >= 5e7/s; dot: no target set"
# run LABEL TARGET ARGS...: TARGET 0 prints no verdict, "-" prints "no target set".
run() {
    local label=$1 target=$2; shift 2
    local j
    if [ -n "$only" ] && ! grep -qE -- "$only" <<<"$label"; then return 0; fi
    local log
    log=$(mktemp)
    j=$($bin verify "$@" 2>"$log")  # the JSON summary on stdout, the human report on stderr
    # verify's own account of the thread time per vector ("time: stimulus … per vector").
    local split
    split=$(sed -n 's/^time: *//p' "$log")
    rm -f "$log"
    python3 -c "
import json, sys
j = json.loads(sys.argv[1]); tgt = sys.argv[3]; t = 0.0 if tgt == '-' else float(tgt); r = j['vectors_per_second']
verdict = '  no target set' if tgt == '-' else '' if t == 0 else ('  target %.0e: met' % t if r >= t else '  target %.0e: missed, x%.2f short' % (t, t / r))
print(f\"{sys.argv[2]:<44} {j['vectors']:>12} vectors {j['mismatches']:>3} mismatches {r:>10.3e}/s{verdict}\")
p = j.get('phases')
if p and p['model'] > 0:
    bound = j['threads'] * j['vectors'] / p['model']
    print(f\"{'':<6}{sys.argv[4]}; the Verilator model alone bounds this run at {bound:.2e}/s\")" "$j" "$label" "$target" "$split"
}
run "decode e4m3 (exhaustive)"                  0    -u decode -f e4m3 --exhaustive
run "project binary32->e4m3 rne (2^28 inputs)"  1e8  -u project -f e4m3 -r rne -s satfinite --exhaustive --shard 0/16
run "project binary32->e5m2 rne (2^28 inputs)"  1e8  -u project -f e5m2 -r rne -s satnone --exhaustive --shard 0/16
run "project e4m3 dyn modes (structured)"       1e8  -u project -f e4m3 -r dyn -s dyn
run "mul e4m3 dyn modes (exhaustive, 1.6M)"     5e7  -u mul -f e4m3 -r dyn -s dyn --exhaustive
run "mul e4m3 dyn modes (random 4.8e7)"         5e7  -u mul -f e4m3 -r dyn -s dyn --random 2000000
run "fma e4m3 rne (structured, 8.4M)"           5e7  -u fma -f e4m3 -r rne
run "fma e4m3 rne (random 5e7)"                 5e7  -u fma -f e4m3 -r rne --random 50000000
run "dot e4m3 N=8 -> binary32 (random 2e6)"     -    -u dot -f e4m3 --n 8 --random 2000000
run "dot e4m3 N=8 e8m0 scales + addend (2e6)"   -    -u dot -f e4m3 --n 8 --scale-format e8m0 --addend --random 2000000

[ -z "$only" ] || exit 0
echo "== Python (python/bench.py; ratios from one run, best of 5 interleaved calls each):"
echo "   project vs ml_dtypes astype (fp8gen on 1 thread and on every core), fma vs numpy float32"
echo "   a*b+z, dot N=32 vs numpy einsum over float32, stochastic vs RNE project, quantize (MX, N=32)"
echo "   vs gfloat (round_ndarray; quantize_block) and a numpy torchao-style quantizer"
if [ -x "$py" ] && $py -c "import fp8gen, ml_dtypes" 2>/dev/null; then
    $py python/bench.py
else
    echo "(the fp8gen Python module is not installed: run make setup-python for this step)"
fi
