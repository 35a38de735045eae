#!/usr/bin/env python3
"""Peer comparison of the backtest accounting (issue 17, deliverable 5).

`make bench-peer` runs, in order:
  1. a venv under target/bench-peer/venv with vectorbt 1.2.0 and its whole
     dependency closure from PyPI, pinned by version and SHA-256
     (tools/bench/peer/requirements.txt, `pip install --require-hashes
     --only-binary=:all:`);
  2. tools/bench/peer/orders (Rust): `topn` run natively through the SDK's
     harness, i.e. the native engine plus `forecast-backtest`, the very
     accounting `POST /api/backtest` uses, on real histories of
     data/prices/; it writes the calendar, our equity and cash curves and
     every fill to target/bench-peer/orders.json;
  3. this script, under the venv: replays exactly those fills with
     `vectorbt.Portfolio.from_orders` on the same histories and checks that
     vectorbt's portfolio value equals our equity curve (and its cash our
     cash) within 1e-9 relative at every row, printing each side's time.
     Exit status 1 when a curve differs.

How our conventions (DESIGN §6, docs/decisions/0060-accounting-checked-against-vectorbt.md) map onto vectorbt's:

  ours                                         vectorbt
  -------------------------------------------  -----------------------------------------
  one book, cash shared by every asset         group_by=True, cash_sharing=True
  calendar = union of the universe's dates     the index of `close` is our calendar
  in the window; a close is carried forward    `close` = each history forward-filled onto
  on dates an asset did not trade (never       it (rows before the window included, never
  backward)                                    back-filled)
  a decision at row t fills at row t+1's       the fills are given as they happened: size
  (carried-forward) close                      at the fill row, price = that row's close
  fractional quantities                        size_type="amount", float sizes (no
                                               granularity)
  cost per side = |qty| * price * bps / 1e4,   fees = bps / 1e4 per column (2 for Forex,
  charged in cash, no fixed fee, no slippage   6 for US Stocks), fixed_fees=0, slippage=0
  cash may end a fully invested rebalance      vectorbt refuses a buy beyond its cash
  slightly below 0 (the costs of the buys)     (it fills partially), so it starts with
                                               BUFFER more cash and BUFFER is subtracted
                                               from its value and cash before comparing
  shorts are allowed (negative quantities)     direction="both"
  equity = cash + sum(qty * close) at every    Portfolio.value() (cash + positions at the
  row's close; equity[0] = initial capital     forward-filled close); init_cash = capital

Weights-to-quantities (our `target = w * equity / price` at the fill's prices,
before that row's costs) is not compared: vectorbt's `targetpercent` revalues
the group after each order, costs included, which is a different convention.
We hand it our quantities instead, so what is checked is the accounting of
fills, costs, cash, carried-forward prices and marking to market.
"""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import vectorbt as vbt

# More cash than any run's costs; subtracted again before comparing. Its
# rounding (about 1e-10 of the equity per operation) stays far below 1e-9.
BUFFER = 1_000_000.0
TOLERANCE = 1e-9


def closes_on(calendar: pd.DatetimeIndex, path: Path) -> pd.Series:
    """The CSV's closes forward-filled onto `calendar` (history before the
    calendar's first date counts, as in our accounting)."""
    frame = pd.read_csv(path, usecols=["date", "close"], parse_dates=["date"])
    series = frame.set_index("date")["close"].sort_index()
    union = series.index.union(calendar)
    return series.reindex(union).ffill().reindex(calendar)


def compare(run: dict, prices_dir: Path) -> bool:
    calendar = pd.DatetimeIndex(pd.to_datetime(run["dates"]))
    tickers = run["tickers"]
    close = pd.DataFrame(
        {t: closes_on(calendar, prices_dir / f) for t, f in zip(tickers, run["files"])},
        index=calendar,
    )
    size = np.full(close.shape, np.nan)
    row_of = {d: i for i, d in enumerate(run["dates"])}
    for t in run["trades"]:
        i, a = row_of[t["date"]], t["asset"]
        assert np.isnan(size[i, a]), "one fill per asset and row"
        size[i, a] = t["qty"]
        # Our fill price is the carried-forward close vectorbt sees too.
        assert abs(close.iat[i, a] - t["price"]) <= 1e-12 * t["price"], (t, close.iat[i, a])
    size = pd.DataFrame(size, index=calendar, columns=tickers)
    fees = np.asarray(run["fee_rates"], dtype=float)

    def simulate():
        return vbt.Portfolio.from_orders(
            close,
            size,
            size_type="amount",
            direction="both",
            price=close,
            fees=fees,
            fixed_fees=0.0,
            slippage=0.0,
            init_cash=run["initial_capital"] + BUFFER,
            cash_sharing=True,
            group_by=True,
            freq="1D",
        )

    started = time.perf_counter()
    pf = simulate()
    value = pf.value().to_numpy() - BUFFER
    first = time.perf_counter() - started
    started = time.perf_counter()
    pf = simulate()
    value = pf.value().to_numpy() - BUFFER
    cash = pf.cash().to_numpy() - BUFFER
    warm = time.perf_counter() - started

    ours = np.asarray(run["equity"])
    our_cash = np.asarray(run["cash"])
    rel = np.abs(value - ours) / np.abs(ours)
    # Cash is compared relative to the equity (it is near 0 when invested).
    cash_rel = np.abs(cash - our_cash) / np.abs(ours)
    filled = int(pf.orders.count())
    ok = rel.max() <= TOLERANCE and cash_rel.max() <= TOLERANCE and filled == len(run["trades"])
    print(
        f"| {run['rebalance']} | {len(tickers)} | {len(calendar)} | {len(run['trades'])} "
        f"| {filled} | {rel.max():.1e} | {cash_rel.max():.1e} | {run['seconds'] * 1e3:.1f} ms "
        f"| {warm * 1e3:.1f} ms ({first:.2f} s with numba's compilation) "
        f"| {'yes' if ok else '**NO**'} |"
    )
    summary = os.environ.get("BENCH_SUMMARY")
    if summary:
        # `make bench` collects every bench's headline figures in one table.
        with open(summary, "a", encoding="utf-8") as f:
            f.write(
                f"| peer: {run['rebalance']} `topn` fills replayed by vectorbt "
                f"({len(tickers)} real histories): max rel. diff of equity "
                f"| {rel.max():.1e} (ours {run['seconds'] * 1e3:.1f} ms, vectorbt {warm * 1e3:.1f} ms) "
                f"| ≤ {TOLERANCE:g} | {'met' if ok else '**missed**'} |\n"
            )
    if not ok:
        worst = int(rel.argmax())
        print(
            f"  worst row {run['dates'][worst]}: ours {ours[worst]!r} vectorbt {value[worst]!r}",
            file=sys.stderr,
        )
    return ok


def main() -> int:
    orders = Path(sys.argv[1] if len(sys.argv) > 1 else "target/bench-peer/orders.json")
    prices_dir = Path(sys.argv[2] if len(sys.argv) > 2 else "data/prices")
    runs = json.loads(orders.read_text())["runs"]
    print(f"vectorbt {vbt.__version__}, numpy {np.__version__}, pandas {pd.__version__}")
    print(
        "`topn` (top 3, costs on), 2012-12-28 to 2022-12-28, our fills replayed by vectorbt; "
        f"equal within {TOLERANCE:g} relative at every row"
    )
    print()
    print(
        "| rebalance | assets | rows | our fills | vectorbt fills | max rel. diff equity "
        "| max diff cash / equity | ours (engine + strategy + accounting) "
        "| vectorbt (replay of the fills) | equal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    ok = all([compare(run, prices_dir) for run in runs])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
