#!/usr/bin/env bash
# FuseSoC check of generated cores (make test-python): `fp8gen gen` writes <top>.core next to
# the Verilog; a FuseSoC library pointing at the generated directory must list the core, show
# its info, and `fusesoc run --target lint` (Verilator --lint-only -Wall) must pass. The same
# core with an unused signal injected must FAIL the lint target (the check can fail).
# Usage: scripts/fusesoc_check.sh [FP8GEN_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin=${1:-target/release/fp8gen}
fusesoc=$root/.venv/bin/fusesoc
die() { echo "fusesoc check: $*" >&2; exit 1; }
[ -x "$bin" ] || die "fp8gen binary '$bin' not found (cargo build --release)"
[ -x "$fusesoc" ] || die "fusesoc is not installed in .venv: run make setup-python"
command -v verilator >/dev/null || die "verilator is not installed: run make setup"
export PATH=$root/.venv/bin:$PATH

work=$root/out/fusesoc
rm -rf "$work" && mkdir -p "$work/lib" "$work/bad" "$work/ws" "$work/ws-bad"
"$bin" gen -u mul -f e4m3 -r dyn -s dyn -o "$work/lib/mul" >/dev/null
"$bin" gen -u project -f binary8p3se -r rne -s satfinite --stages 2 -o "$work/lib/project" >/dev/null
version=$("$bin" --version | awk '{print $2}')
for d in "$work"/lib/*/; do
    top=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["top"])' "$d/manifest.json")
    [ -f "$d/$top.core" ] || die "$d has no $top.core"
done

cd "$work/ws"
"$fusesoc" library add fp8gen_cores "$work/lib" >/dev/null 2>&1
list=$("$fusesoc" core list 2>&1)
n=0
for d in "$work"/lib/*/; do
    top=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["top"])' "$d/manifest.json")
    vlnv="fp8gen:cores:$top:$version"
    grep -q "^$vlnv " <<<"$list" || die "fusesoc core list does not show $vlnv:
$list"
    info=$("$fusesoc" core-info "$vlnv" 2>&1) || die "fusesoc core-info $vlnv failed:
$info"
    grep -q "Core root: *${d%/}" <<<"$info" || die "core-info of $vlnv has the wrong root:
$info"
    grep -q "^lint " <<<"$info" || die "core-info of $vlnv lists no lint target"
    "$fusesoc" run --target lint "$vlnv" > "$work/lint_$top.log" 2>&1 \
        || die "fusesoc run --target lint $vlnv failed (log: $work/lint_$top.log)"
    echo "fusesoc: $vlnv listed, core-info ok, lint (verilator -Wall) clean"
    n=$((n + 1))
done

# Negative control: an unused signal must make the -Wall lint target fail.
cp -r "$work/lib/mul" "$work/bad/mul"
v=$(ls "$work"/bad/mul/*.v)
sed -i '0,/^endmodule/s//  wire fp8gen_lint_probe = 1'"'"'b0;\nendmodule/' "$v"
grep -q fp8gen_lint_probe "$v" || die "could not inject the negative control"
cd "$work/ws-bad"
"$fusesoc" library add bad "$work/bad" >/dev/null 2>&1
top=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["top"])' "$work/bad/mul/manifest.json")
if "$fusesoc" run --target lint "fp8gen:cores:$top:$version" > "$work/lint_bad.log" 2>&1; then
    die "lint target passed on a core with an unused signal: -Wall is not in effect"
fi
grep -q UNUSED "$work/lint_bad.log" || die "negative control failed for another reason (see $work/lint_bad.log)"
echo "fusesoc: negative control (unused signal) fails the lint target as it must"
echo "$n passed, 0 failed"
