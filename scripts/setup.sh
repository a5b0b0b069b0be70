#!/usr/bin/env bash
# Install what fp8gen's verification and tests need: Verilator (>= 5.0), a C++ compiler,
# cmake (for Berkeley SoftFloat in the tests), CaDiCaL (the prover's SAT solver) and Chromium
# (headless, renders the `fp8gen report` page in tests/report.rs), from the distribution's
# packages (Debian/Ubuntu: `apt-get install verilator g++ cmake cadical chromium`).
#
# Idempotent: does nothing when all are present. Runs apt-get update at most once, only if
# something is missing. Non-interactive. Works as root, or through sudo when not root.
#
# Usage: scripts/setup.sh        (also called by `make setup`)
# Env:   FP8GEN_VERILATOR        a verilator executable to use instead of the one on PATH
set -euo pipefail

log() { echo "setup.sh: $*"; }

missing=()
verilator_bin="${FP8GEN_VERILATOR:-verilator}"
if command -v "$verilator_bin" >/dev/null 2>&1; then
    log "verilator present: $("$verilator_bin" --version 2>/dev/null | head -n1)"
else
    missing+=(verilator)
fi
if command -v "${CXX:-c++}" >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 \
    || command -v clang++ >/dev/null 2>&1; then
    log "C++ compiler present: $("${CXX:-c++}" --version 2>/dev/null | head -n1 || true)"
else
    missing+=(g++)
fi

# cmake builds Berkeley SoftFloat (softfloat-sys), the golden model's FMA reference in tests.
if command -v cmake >/dev/null 2>&1; then
    log "cmake present"
else
    missing+=(cmake)
fi
# make is needed for the README commands themselves on minimal systems.
command -v make >/dev/null 2>&1 || missing+=(make)
# CaDiCaL: the SAT solver of `fp8gen prove`'s default engine (docs/prove.md).
if command -v "${FP8GEN_CADICAL:-cadical}" >/dev/null 2>&1; then
    log "cadical present"
else
    missing+=(cadical)
fi

# Chromium (headless) renders the `fp8gen report` page in its test (tests/report.rs).
if command -v chromium >/dev/null 2>&1; then
    log "chromium present"
else
    missing+=(chromium)
fi

if [ "${#missing[@]}" -eq 0 ]; then
    log "nothing to install"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "missing: ${missing[*]}; no apt-get on this system — install them with your package manager" >&2
    exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
    sudo_cmd=()
elif command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo -n)
else
    log "missing: ${missing[*]}; not root and no sudo — run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log "installing: ${missing[*]}"
log "running apt-get update"
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

if ! command -v verilator >/dev/null 2>&1; then
    log "verilator still not on PATH after installation" >&2
    exit 1
fi
log "installed: $(verilator --version | head -n1)"
