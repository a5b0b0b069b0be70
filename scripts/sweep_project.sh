#!/usr/bin/env bash
# Exhaustive projection sweep, every binary32 input for every deterministic rounding mode and
# saturation mode: for each format, one core with run-time
# rm_i / sat_i ports is checked on every binary32 input × 6 rounding × 4 saturation modes
# (1.03e11 vectors per format), in shards whose JSON summaries are kept and merged.
#
# Usage: scripts/sweep_project.sh [format ...]      (default: e4m3 e5m2 e4m3fnuz binary8p3se)
# Env:   SHARDS (default 24: one per mode pair), OUT (default out/sweep)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/fp8gen
[ -x "$bin" ] || cargo build --release
out=${OUT:-out/sweep}
shards=${SHARDS:-24}
formats=("$@")
[ ${#formats[@]} -gt 0 ] || formats=(e4m3 e5m2 e4m3fnuz binary8p3se)
mkdir -p "$out"
for f in "${formats[@]}"; do
    echo "== project binary32 -> $f: 2^32 inputs x 24 mode pairs, $shards shards"
    for ((i = 0; i < shards; i++)); do
        s="$out/project_${f}_shard_${i}_of_${shards}.json"
        if [ -s "$s" ] && grep -q '"mismatches": 0' "$s"; then continue; fi
        $bin verify --unit project --format "$f" --rounding dyn --saturation dyn \
            --exhaustive --shard "$i/$shards" --json > "$s"
        python3 -c "import json,sys; j=json.load(open('$s')); print(f\"  shard $i/$shards: {j['vectors']} vectors, {j['mismatches']} mismatches, {j['vectors_per_second']:.3e}/s\")"
    done
    python3 - "$out" "$f" "$shards" <<'PY'
import glob, json, sys
out, f, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
js = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/project_{f}_shard_*_of_{n}.json"))]
v = sum(j["vectors"] for j in js); m = sum(j["mismatches"] for j in js); t = sum(j["seconds"] for j in js)
ok = len(js) == n and m == 0 and all(j["complete"] for j in js)
print(f"{f}: {len(js)}/{n} shards, {v} vectors, {m} mismatches, {t:.0f} s, {v/t:.3e} vectors/s -> {'PASS' if ok else 'FAIL'}")
json.dump({"format": f, "shards": len(js), "vectors": v, "mismatches": m, "seconds": t, "passed": ok}, open(f"{out}/project_{f}_total.json", "w"), indent=1)
sys.exit(0 if ok else 1)
PY
done
