#!/usr/bin/env bash
# The main job (`make demo`): generate E4M3 cores, prove them bit-exact against the golden
# model in Verilator (exhaustively: every code, every binary32 input, every mode pair),
# synthesize one with yosys + nextpnr and build a bitstream for a board.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/fp8gen
out=${OUT:-out}
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Formats"
$bin formats | head -12

step "decode: E4M3 code -> binary32 + class flags, every code"
$bin gen --unit decode --format e4m3 -o "$out/decode_e4m3" --force
$bin verify --from "$out/decode_e4m3" --exhaustive > "$out/decode_e4m3.verify.json"

step "project: binary32 -> E4M3 (RNE, satfinite), all 2^32 binary32 inputs"
$bin gen --unit project --format e4m3 --rounding rne --saturation satfinite -o "$out/project_e4m3" --force
$bin verify --from "$out/project_e4m3" --exhaustive > "$out/project_e4m3.verify.json"

step "project: binary32 -> E4M3, run-time rounding x saturation ports, structured inputs"
$bin gen --unit project --format e4m3 --rounding dyn --saturation dyn --stages 2 -o "$out/project_e4m3_dyn" --force
$bin verify --from "$out/project_e4m3_dyn" > "$out/project_e4m3_dyn.verify.json"

if $bin gen --unit mul --format e4m3 --rounding dyn --saturation dyn -o "$out/mul_e4m3" --force 2>/dev/null; then
    step "mul: E4M3 x E4M3 -> E4M3, every (x, y) pair x every rounding x saturation mode"
    $bin verify --from "$out/mul_e4m3" --exhaustive > "$out/mul_e4m3.verify.json"
    unit=mul
else
    unit=project
fi

step "synth: E4M3 $unit on ECP5-25k (yosys + nextpnr)"
$bin synth --unit $unit --format e4m3 --stages 2 --target ecp5-25k

step "board: E4M3 $unit behind a UART shell on the iCEBreaker -> bitstream"
$bin board --unit $unit --format e4m3 --stages 1 --board icebreaker -o "$out/board_icebreaker"

step "Done. Cores, manifests and verification summaries are in $out/"
