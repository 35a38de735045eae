#!/usr/bin/env bash
# `make bench-peer`: our backtest accounting against vectorbt on the same
# orders and real histories, and our metrics against quantstats (tools/bench/peer/compare.py says what is
# compared and how the conventions map); and our interval-forecast
# evaluation (forecast_domain::evaluation: Gaussian CRPS, pinball loss and
# squared error with their skills and Diebold–Mariano tests under a
# Newey–West HAC, the calibration regression with Driscoll–Kraay intervals,
# coverage, PIT histogram, reliability) against properscoring, scipy, numpy
# and statsmodels on the same rows built from data/prices, every figure
# within 1e-9 (tools/bench/peer/forecast_eval.py). Needs python3 (3.11: the pinned
# wheels are CPython 3.11 manylinux x86_64) and network access to PyPI the
# first time; the venv is target/bench-peer/venv.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
out=target/bench-peer
venv=$out/venv
req=tools/bench/peer/requirements.txt
mkdir -p "$out"

# 1. vectorbt, quantstats, statsmodels, properscoring and their dependencies, pinned by version and SHA-256;
#    reinstalled when requirements.txt changes.
if ! cmp -s "$req" "$venv/.requirements.txt" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --require-hashes --only-binary=:all: -r "$req"
  cp "$req" "$venv/.requirements.txt"
fi

# 2. Our side: `topn` through the SDK's harness (native engine + the
#    server's accounting), its fills and equity curve as JSON.
(cd tools/bench/peer/orders &&
  CARGO_TARGET_DIR="$root/$out/cargo" ${CARGO:-cargo} run --release --quiet -- \
    "$root/$out/orders.json" "$root/data/prices")

# 3. vectorbt replays the fills; exit status 1 when a curve differs.
"$venv/bin/python" tools/bench/peer/compare.py "$out/orders.json" data/prices

# 4. quantstats computes the metrics it shares with ours on the same three
#    curves and benchmarks; exit status 1 when a figure differs.
"$venv/bin/python" tools/bench/peer/metrics.py "$out/orders.json"

# 5. Our interval-forecast evaluation on rows built from data/prices
#    (h = 90 days, HAC lag 3; tools/bench/peer/forecast-eval), then every
#    figure recomputed on the same rows with properscoring, scipy, numpy and
#    statsmodels; exit status 1 when a figure differs by more than 1e-9.
(cd tools/bench/peer/forecast-eval &&
  CARGO_TARGET_DIR="$root/$out/forecast-eval" ${CARGO:-cargo} run --release --quiet -- \
    "$root/$out/forecast-eval.json" "$root/data/prices")
"$venv/bin/python" tools/bench/peer/forecast_eval.py "$out/forecast-eval.json"

# 6. The same check on the service's own calibrated forecasts: the demo
#    universe in a scratch database, `forecast plugin compare` scores scorer
#    2.0.0 against 1.0.0 on every month-end of the real histories at 90
#    days and writes 2.0.0's scored rows (what the model card and the gate
#    evaluate); our evaluation and the reference packages then agree on
#    them to 1e-9. Needs the components (`make components`).
${CARGO:-cargo} build --release --quiet --bin forecast
db="$out/forecast-rows.db"
rm -f "$db" "$db-wal" "$db-shm"
DATABASE_URL="sqlite://$db" ./target/release/forecast demo load >/dev/null
DATABASE_URL="sqlite://$db" ./target/release/forecast plugin compare scorer default 1.0.0 2.0.0 \
  --rows "$out/forecast-rows.json"
(cd tools/bench/peer/forecast-eval &&
  CARGO_TARGET_DIR="$root/$out/forecast-eval" ${CARGO:-cargo} run --release --quiet -- \
    "$root/$out/forecast-model.json" --rows "$root/$out/forecast-rows.json")
"$venv/bin/python" tools/bench/peer/forecast_eval.py "$out/forecast-model.json"

# 7. How much of each 365-day decile's calibration gap these rows can
#    resolve (docs/decisions/0089): the active scorer's rows at 365 days,
#    each decile's gap with its block-bootstrap error, and what a
#    look-ahead linear refit would leave. Prints; never fails.
DATABASE_URL="sqlite://$db" ./target/release/forecast plugin compare scorer default 1.0.0 2.1.0 \
  --return-period 365 --rows "$out/forecast-rows-365.json" >/dev/null
"$venv/bin/python" tools/bench/peer/decile_noise.py "$out/forecast-rows-365.json" 365
