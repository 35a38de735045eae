#!/usr/bin/env python3
"""Our backtest metrics against quantstats (issue 29, deliverable 1).

`make bench-peer` runs this after compare.py, under the same venv (quantstats
0.0.86 is pinned in requirements.txt with vectorbt). For each run of
target/bench-peer/orders.json (`topn` monthly, weekly and daily over real
histories: three equity curves) it feeds quantstats the daily simple returns
of our equity curve, indexed by their dates, and of each benchmark's curve,
and compares every figure quantstats also computes with ours. A figure
passes at 1e-9 relative difference; the exceptions, each with its reason,
are in DIFFERENT below. Exit status 1 when a figure differs.

docs/METHODOLOGY.md ("A backtest's metrics") gives our formulas.
"""

import json
import math
import sys

import numpy as np
import pandas as pd
from quantstats import stats as qs

TOLERANCE = 1e-9

# Figures whose definitions differ on purpose: compared after converting
# quantstats' value, or reported only.
DIFFERENT = {
    "information_ratio": "quantstats does not annualise it; compared as quantstats * sqrt(P)",
    "exposure": "quantstats counts non-zero returns and rounds up to a percent; ours counts days "
    "that began invested (a day invested in an asset whose close did not move has a zero return). "
    "Reported, not compared",
    "tracking_error": "quantstats has no tracking error; compared with sd(r - b, ddof 1) * sqrt(P) "
    "computed here with numpy",
}


def rel(ours, theirs):
    if ours is None or theirs is None:
        return math.inf if (ours is None) != (theirs is None) else 0.0
    a, b = float(ours), float(theirs)
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def main(path):
    runs = json.load(open(path))["runs"]
    failures = []
    rows = []
    for run in runs:
        name = run["rebalance"]
        dates = pd.to_datetime(run["dates"][1:])
        eq = np.array(run["equity"], dtype=float)
        r = pd.Series(eq[1:] / eq[:-1] - 1.0, index=dates)
        p = run["periods_per_year"]
        m = run["metrics"]
        dd = qs.to_drawdown_series(r)
        details = qs.drawdown_details(dd)
        theirs = {
            "cagr": qs.cagr(r, periods=p),
            "max_drawdown": qs.max_drawdown(r),
            "calmar_ratio": qs.calmar(r, periods=p),
            "ulcer_index": qs.ulcer_index(r),
            "longest_drawdown_days": int(details["days"].max()) if len(details) else 0,
            "var_95": qs.value_at_risk(r),
            "cvar_95": qs.conditional_value_at_risk(r),
            "best_month": qs.best(r, aggregate="ME"),
            "worst_month": qs.worst(r, aggregate="ME"),
            "winning_months": qs.win_rate(r, aggregate="ME"),
        }
        for key, value in theirs.items():
            d = rel(m[key], value)
            rows.append((name, key, m[key], value, d))
            if d > TOLERANCE:
                failures.append(f"{name} {key}: ours {m[key]!r}, quantstats {value!r}")
        rows.append((name, "exposure", m["exposure"], qs.exposure(r), None))
        for bench, b in run["benchmarks"].items():
            bq = np.array(b["equity"], dtype=float)
            br = pd.Series(bq[1:] / bq[:-1] - 1.0, index=dates)
            greeks = qs.greeks(r, br, periods=p)
            active = (r - br).to_numpy()
            theirs = {
                "beta": greeks["beta"],
                "alpha": greeks["alpha"],
                "information_ratio": qs.information_ratio(r, br) * math.sqrt(p),
                "tracking_error": float(np.std(active, ddof=1)) * math.sqrt(p),
            }
            for key, value in theirs.items():
                d = rel(b[key], value)
                rows.append((name, f"{bench}.{key}", b[key], value, d))
                if d > TOLERANCE:
                    failures.append(f"{name} {bench}.{key}: ours {b[key]!r}, quantstats {value!r}")
    print("| run | figure | ours | quantstats | relative difference |")
    print("|---|---|---|---|---|")
    for name, key, ours, theirs, d in rows:
        shown = "not compared" if d is None else f"{d:.1e}"
        print(f"| {name} | {key} | {ours!r} | {float(theirs)!r} | {shown} |")
    for key, why in DIFFERENT.items():
        print(f"- {key}: {why}")
    if failures:
        print("\n".join(["DIFFERENT:"] + failures), file=sys.stderr)
        sys.exit(1)
    print(f"metrics: every compared figure within {TOLERANCE:g} relative of quantstats")


if __name__ == "__main__":
    main(sys.argv[1])
