#!/usr/bin/env bash
# FuseSoC check of generated cores (make test-python): `fp8gen gen` writes <top>.core next to
# the Verilog, with the self-checking testbench <top>_tb.sv + <top>_vectors.hex; a FuseSoC
# library pointing at the generated directory must list the core, show its info (described
# targets default, lint, sim), and `fusesoc run` of the targets default and lint (Verilator
# --lint-only -Wall) and sim (Icarus; one core also with Verilator) must pass, sim printing
# PASS. Negative controls: the same core with an unused signal injected must FAIL the lint
# target, and with one flag bit of its RTL inverted must FAIL the sim target.
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

# A new directory per run (mktemp): nothing existing under out/ is touched. It is deleted
# when the check passes and kept (its logs) when it fails.
mkdir -p "$root/out"
work=$(mktemp -d "$root/out/fusesoc.XXXXXX")
trap 'st=$?; [ "$st" = 0 ] && rm -rf "$work"' EXIT
mkdir -p "$work/lib" "$work/bad" "$work/ws" "$work/ws-bad"
"$bin" gen -u mul -f e4m3 -r dyn -s dyn -o "$work/lib/mul" >/dev/null
"$bin" gen -u project -f binary8p3se -r rne -s satfinite --stages 2 -o "$work/lib/project" >/dev/null
"$bin" gen -u mac -f e4m3 --acc exact --stages 2 -o "$work/lib/mac" >/dev/null
"$bin" gen -u dot -f e4m3 --n 8 --scale-format e8m0 --addend --stages 1 -o "$work/lib/dot" >/dev/null
version=$("$bin" --version | awk '{print $2}')
for d in "$work"/lib/*/; do
    top=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["top"])' "$d/manifest.json")
    for f in "$top.core" "${top}_tb.sv" "${top}_vectors.hex"; do
        [ -f "$d/$f" ] || die "$d has no $f"
    done
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
    for t in default lint sim; do
        grep -q "^$t " <<<"$info" || die "core-info of $vlnv lists no $t target"
    done
    if grep -q "No description" <<<"$info"; then die "core-info of $vlnv: a target without description:
$info"; fi
    for t in default lint; do
        "$fusesoc" run --target $t "$vlnv" > "$work/${t}_$top.log" 2>&1 \
            || die "fusesoc run --target $t $vlnv failed (log: $work/${t}_$top.log)"
    done
    tools=icarus
    [ "$n" = 0 ] && tools="icarus verilator"
    for tool in $tools; do
        log=$work/sim_${tool}_$top.log
        "$fusesoc" run --target sim --tool $tool "$vlnv" > "$log" 2>&1 \
            || die "fusesoc run --target sim --tool $tool $vlnv failed (log: $log)"
        grep -q "^PASS: [1-9][0-9]* results of $top match" "$log" \
            || die "sim target of $vlnv ($tool) printed no PASS (log: $log)"
    done
    echo "fusesoc: $vlnv listed, core-info ok, default + lint (verilator -Wall) clean, sim ($tools) $(grep -o '^PASS: [0-9]* results' "$work/sim_icarus_$top.log" | cut -d' ' -f2) results checked"
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

# Negative control: the inexact flag inverted in the RTL must make the sim target fail.
mkdir -p "$work/bad-sim" "$work/ws-bad-sim"
cp -r "$work/lib/mul" "$work/bad-sim/mul"
v=$(ls "$work"/bad-sim/mul/*.v)
sed -i 's/^\(  assign flags_o = \)/\14'"'"'b0001 ^ /' "$v"
grep -q "assign flags_o = 4'b0001 ^ " "$v" || die "could not inject the sim negative control"
cd "$work/ws-bad-sim"
"$fusesoc" library add bad "$work/bad-sim" >/dev/null 2>&1
if "$fusesoc" run --target sim "fp8gen:cores:$top:$version" > "$work/sim_bad.log" 2>&1; then
    die "sim target passed on a core with an inverted flag: the testbench does not check"
fi
grep -q "^MISMATCH" "$work/sim_bad.log" || die "sim negative control failed for another reason (see $work/sim_bad.log)"
echo "fusesoc: negative control (inverted inexact flag) fails the sim target as it must"
echo "$n passed, 0 failed"
