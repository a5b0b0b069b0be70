#!/usr/bin/env bash
# Install what the Python side of fp8gen needs, into the project-local virtualenv `.venv`:
#   * Icarus Verilog (Debian package `iverilog`) for the cocotb example, if missing;
#   * the pinned packages of python/requirements.txt (maturin, pytest, fusesoc, cocotb, numpy,
#     ml_dtypes, gfloat, onnx), skipped when all are installed at their pinned versions;
#   * the `fp8gen` module itself: an abi3 manylinux2014 (manylinux_2_17) wheel built from
#     python/ with maturin (PyO3), linked by zig (`maturin build --zig`, ziglang from
#     requirements.txt) so it runs on glibc >= 2.17 whatever the build machine's glibc, into
#     python/target/wheels (scripts/test-python.sh checks its tag), then pip-installed; skipped
#     when the sources (python/, golden/) are unchanged since the last install (a hash kept in
#     .venv/.fp8gen-python.stamp) and `import fp8gen` works.
#
# Idempotent. Usage: scripts/setup-python.sh [--force]   (--force rebuilds the wheel)
# Env:   FP8GEN_VENV   venv location (default: <repo>/.venv)
#        PYTHON        interpreter used to create the venv (default: python3)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${FP8GEN_VENV:-$repo/.venv}"
python="${PYTHON:-python3}"
req="$repo/python/requirements.txt"
force=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "setup-python.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done
log() { echo "setup-python.sh: $*"; }
die() { echo "setup-python.sh: $*" >&2; exit 1; }

# --- Icarus Verilog (cocotb needs Verilator >= 5.036; Debian 12 has 5.006, so Icarus) -------
if command -v iverilog >/dev/null 2>&1 && command -v vvp >/dev/null 2>&1; then
    log "iverilog present: $(iverilog -V 2>&1 | head -n1)"
else
    command -v apt-get >/dev/null 2>&1 || die "iverilog is missing and there is no apt-get; install Icarus Verilog"
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "iverilog is missing; run as root: apt-get install -y iverilog"
        sudo="sudo"
    fi
    log "installing iverilog (apt-get)"
    if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q iverilog >/dev/null 2>&1; then
        $sudo apt-get update -q >/dev/null
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q iverilog >/dev/null
    fi
    command -v iverilog >/dev/null 2>&1 || die "apt-get could not install iverilog"
fi

# --- virtualenv and pinned packages ---------------------------------------------------------
command -v "$python" >/dev/null 2>&1 || die "'$python' not found; install Python 3.9+ (apt-get install python3 python3-venv)"
if [ ! -x "$venv/bin/python" ]; then
    log "creating virtualenv $venv"
    "$python" -m venv "$venv"
fi
if "$venv/bin/python" "$repo/scripts/pins_satisfied.py" "$req" 2>/dev/null
then
    log "all pinned packages of python/requirements.txt already installed"
else
    log "installing $(grep -c '==' "$req") pinned packages into $venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req"
fi

# --- the fp8gen wheel -----------------------------------------------------------------------
command -v cargo >/dev/null 2>&1 || die "cargo not found: the fp8gen wheel is built from Rust (rustup.rs)"
stamp="$venv/.fp8gen-python.stamp"
hash=$(cd "$repo" && find scripts/setup-python.sh python/Cargo.toml python/Cargo.lock python/pyproject.toml python/src \
        python/pysrc golden/Cargo.toml golden/src -type f ! -name '*.pyc' 2>/dev/null \
        | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] \
        && "$venv/bin/python" -c "import fp8gen, sys; sys.exit(0 if fp8gen.Format('e4m3').k == 8 else 1)" 2>/dev/null; then
    log "fp8gen wheel up to date ($("$venv/bin/python" -c 'import fp8gen; print(fp8gen.__version__)'))"
    exit 0
fi
wheels="$repo/python/target/wheels"
# Only earlier fp8gen wheels go (test-python.sh takes the one fp8gen wheel there).
rm -f "$wheels"/fp8gen-*.whl
log "building the fp8gen wheel (maturin, release, manylinux2014 via zig)"
# maturin finds zig as `python -m ziglang` of the venv's python (first on PATH).
(cd "$repo/python" && PATH="$venv/bin:$PATH" "$venv/bin/maturin" build --release --quiet \
        --zig --compatibility manylinux2014 -i "$venv/bin/python" -o "$wheels") \
    || die "maturin build failed"
whl=$(ls "$wheels"/fp8gen-*.whl 2>/dev/null | head -n1)
[ -n "$whl" ] || die "maturin produced no wheel in $wheels"
"$venv/bin/python" -m pip install --disable-pip-version-check -q --force-reinstall --no-deps "$whl"
"$venv/bin/python" -c "import fp8gen; fp8gen.Format('e4m3')" || die "fp8gen does not import after install"
echo "$hash" > "$stamp"
log "installed $(basename "$whl")"
