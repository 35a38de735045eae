# Forecast Engine — every entry point a newcomer or CI needs.
#   make run    build everything, load the demo universe, serve on $(FORECAST_ADDR)
#   make test   every test (unit, component, integration; PostgreSQL when TEST_DATABASE_URL is set)
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

CARGO          ?= cargo
WASM_TARGET    := wasm32-wasip2
COMPONENTS_DIR := components/target/$(WASM_TARGET)/release
COMPONENTS     := $(COMPONENTS_DIR)/segmentation.wasm $(COMPONENTS_DIR)/scorer.wasm $(COMPONENTS_DIR)/misbehave.wasm
FORECAST_ADDR  ?= 127.0.0.1:8080
DATABASE_URL   ?= sqlite://data/forecast.db
export FORECAST_ADDR DATABASE_URL

.PHONY: all run build test bench lint fmt components toolchain clean-data

all: build

## toolchain: the Wasm target (and nothing else: no Debian packages are needed)
toolchain:
	@rustup target list --installed | grep -qx '$(WASM_TARGET)' || rustup target add $(WASM_TARGET)

## components: the guest Wasm components, in their own workspace
components: toolchain
	cd components && $(CARGO) build --release --target $(WASM_TARGET)

## build: components + the `forecast` binary at target/release/forecast
build: components
	$(CARGO) build --release --bin forecast

## run: build, load the demo universe on first start, serve
run: build
	./target/release/forecast serve

## test: every test, natively and through the components
# The log feeds the one-line total printed last (cargo ends on doc-test
# summaries that count 0, which would hide how many tests ran).
test: components
	@mkdir -p target
	{ (cd components && $(CARGO) test --release -p forecast-engine -p scorer) && $(CARGO) test --release --workspace; } 2>&1 | tee target/test.log
	@awk '/^test result:/ { p += $$4; f += $$6 } END { printf "tests: %d passed, %d failed\n", p, f }' target/test.log

## bench: engine natively vs as a component, instantiation + call overhead,
## cached verdict latency/throughput, and the full daily grade
bench: components
	$(CARGO) bench -p forecast-host --bench engine
	$(CARGO) bench -p forecast-host --bench verdict
	$(CARGO) build --release --bin forecast
	rm -f target/bench-grade.db*
	DATABASE_URL=sqlite://target/bench-grade.db ./target/release/forecast demo load
	time DATABASE_URL=sqlite://target/bench-grade.db ./target/release/forecast grade

## lint: formatting and clippy, host and components
lint: components
	$(CARGO) fmt --all -- --check
	cd components && $(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	cd components && $(CARGO) clippy --release --target $(WASM_TARGET) -- -D warnings
	cd components && $(CARGO) clippy --release -p forecast-engine --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all
	cd components && $(CARGO) fmt --all

## clean-data: forget the local SQLite database (the demo universe reloads on next run)
clean-data:
	rm -f data/forecast.db data/forecast.db-wal data/forecast.db-shm
