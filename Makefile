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

# Default test run (CI): unit, integration, equivalence and one small synthesis test.
test: setup setup-fpga
	$(CARGO) test --workspace --no-fail-fast

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

bench: build
	$(FP8GEN) bench
	$(CARGO) bench -p fp8gen-sim --bench eval_throughput

# Long sweeps (not in the default test run): every binary32 input, every mode.
sweep-project: build
	bash scripts/sweep_project.sh

qor: build setup-fpga
	.venv/bin/python scripts/fpga/qor_sweep.py

clean-out:
	rm -rf $(OUT)
