# fp8gen — the two commands of the README:
#   make demo   generate + exhaustively verify E4M3 cores, synthesize one, build a bitstream
#   make test   the test suite (what CI runs)
# Both install what is missing first (Verilator, g++, cmake from Debian packages; YoWASP
# yosys/nextpnr in a project-local .venv).

CARGO ?= cargo
FP8GEN := target/release/fp8gen
OUT ?= out

.PHONY: all setup setup-fpga build demo test lint bench sweep-project sweep-fma qor clean-out

all: build

setup:
	bash scripts/setup.sh

setup-fpga:
	bash scripts/setup-fpga.sh

build: setup
	$(CARGO) build --release

# Main job: the path from nothing to "Verilog + proof of equivalence + LUT/Fmax + bitstream".
demo: setup setup-fpga build
	bash scripts/demo.sh

# Default test run (CI): unit, integration, equivalence and one small synthesis test; the
# doctests (docs/rtl.md's example included) and the API docs, which must build without a warning.
test: setup setup-fpga
	$(CARGO) test --workspace --no-fail-fast
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps
	$(MAKE) --no-print-directory setup-python
	$(MAKE) --no-print-directory test-python FP8GEN_BIN=$${CARGO_TARGET_DIR:-target}/debug/fp8gen

# Python module `fp8gen` (python/, maturin + PyO3), FuseSoC cores and the cocotb example
# (docs/python.md). `make test` passes the fp8gen binary its cargo test just built.
.PHONY: setup-python test-python
FP8GEN_BIN ?= $(FP8GEN)
setup-python: setup
	bash scripts/setup-python.sh

test-python: setup-python
	@if [ "$(FP8GEN_BIN)" = "$(FP8GEN)" ]; then $(CARGO) build --release; fi
	bash scripts/test-python.sh $(FP8GEN_BIN)

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

bench: build
	bash scripts/bench.sh

# Long sweeps (not in the default test run): every binary32 input, every mode.
sweep-project: build
	bash scripts/sweep_project.sh

# FMA: >= 1e9 vectors per rounding mode (random pairs, structured addends) + the structured set.
sweep-fma: build
	mkdir -p $(OUT)
	for r in rne rna rtp rtn rtz rto; do for f in e4m3 e5m2; do \
	  $(FP8GEN) verify -u fma -f $$f -r $$r --random 1000000000 --json > $(OUT)/fma_$${f}_$$r.json || exit 1; \
	  $(FP8GEN) verify -u fma -f $$f -r $$r --json > $(OUT)/fma_$${f}_$${r}_structured.json || exit 1; done; done

# QoR table (docs/qor/): `dot` = dot4 dot8 dot32 dot4-e8m0 dot8-e8m0 dot32-e8m0 (N-element dot
# products, block scales E8M0 or none, result binary32); dot32 points take minutes each and do
# not fit the iCE40 UP5K (error rows). `quantize32`: the MX block quantizer, 32 binary32 elements
# → E4M3 + an E8M0 scale (floor, satfinite; ~16 minutes per ECP5 point, does not fit the UP5K).
# Narrower runs: scripts/fpga/qor_sweep.py --merge.
qor: build setup-fpga
	.venv/bin/python scripts/fpga/qor_sweep.py --units int-mul8 decode project convert-binary8p3se mul mul-ftz-noflags add \
	  fma mac mac-exact --formats e4m3 e5m2 --stages 0 1 2 3 --targets ecp5-25k ice40-up5k \
	  --dsp on --seeds 3 --out docs/qor
	.venv/bin/python scripts/fpga/qor_sweep.py --units dot --formats e4m3 e5m2 --stages 0 1 2 3 \
	  --targets ecp5-25k ice40-up5k --dsp on --out docs/qor --merge
	.venv/bin/python scripts/fpga/qor_sweep.py --units quantize32 --formats e4m3 --stages 0 1 2 3 \
	  --targets ecp5-25k ice40-up5k --dsp on --out docs/qor --merge

clean-out:
	rm -rf $(OUT)

# Formal equivalence (docs/prove.md): fma, mul and project for E4M3, E5M2, E4M3FNUZ,
# Binary8p3se × rne/rna/rtp/rtn/rtz/rto (satfinite), each optimized core proven equal to the
# independent reference (CaDiCaL on the miter's CNF; fma in 16 parallel cubes); the table of
# proof times goes to docs/prove-table.md.
# Then one row per unit and option beyond it (--set options: decode, convert, add, quantize,
# every saturation, run-time modes, stochastic rounding, block scales, --ftz, --no-flags, ...).
# PROVE_ARGS narrows the first, e.g. PROVE_ARGS="--units fma --formats e4m3 --timeout 600";
# PROVE_OPTION_ARGS the second (e.g. "--units decode,mul", or "--slow" for the FMA's rows).
.PHONY: prove
PROVE_ARGS ?=
PROVE_OPTION_ARGS ?=
prove: setup setup-fpga
	$(CARGO) run --release -p fp8gen-formal --example prove_matrix -- --out docs/prove-table.md --merge $(PROVE_ARGS)
	$(CARGO) run --release -p fp8gen-formal --example prove_matrix -- --out docs/prove-table.md --merge --set options $(PROVE_OPTION_ARGS)
