"""How much of a decile's calibration gap the data can resolve.

Reads the scored rows `forecast plugin compare ... --rows FILE` writes (one
horizon; `month`, `central`, `realised`) and prints, for each decile of the
central forecast, the gap (mean realised minus mean predicted, in points),
its standard error and 90 % interval by the moving-block bootstrap the
track record uses (blocks of ceil(h/30)+1 consecutive month-ends, 1,000
resamples, fixed seed), and the worst gap a linear recalibration fitted on
every row at once (look-ahead, so no forecast could do it) would leave.

A benchmark, not a check: it never fails. Usage:
    python decile_noise.py ROWS.json HORIZON_DAYS
"""

import json
import math
import sys

import numpy as np


def deciles(pred):
    """Row positions of each decile of `pred` (ten equal-count bins)."""
    return np.array_split(np.argsort(pred, kind="stable"), 10)


def gaps(pred, real):
    return [(real[b].mean() - pred[b].mean()) * 100 for b in deciles(pred)]


def bootstrap(month, pred, real, horizon, resamples=1000, seed=7):
    """Each decile's gap over month-end block resamples (deciles fixed)."""
    decile = np.empty(len(pred), int)
    for k, b in enumerate(deciles(pred)):
        decile[b] = k
    months = np.unique(month)
    rows_of = [np.flatnonzero(month == m) for m in months]
    block = math.ceil(horizon / 30) + 1
    blocks = math.ceil(len(months) / block)
    rng = np.random.default_rng(seed)
    out = np.full((resamples, 10), np.nan)
    for r in range(resamples):
        starts = rng.integers(0, len(months) - block + 1, blocks)
        picked = np.concatenate([rows_of[s + j] for s in starts for j in range(block)])
        for k in range(10):
            rows = picked[decile[picked] == k]
            if len(rows):
                out[r, k] = (real[rows].mean() - pred[rows].mean()) * 100
    return out


def main():
    rows = json.load(open(sys.argv[1]))["rows"]
    horizon = int(sys.argv[2])
    month = np.array([r["month"] for r in rows])
    pred = np.array([r["central"] for r in rows])
    real = np.array([r["realised"] for r in rows])
    point = gaps(pred, real)
    boot = bootstrap(month, pred, real, horizon)
    print(f"{len(rows)} rows at {horizon} days")
    print("| decile | gap (points) | bootstrap se | 90 % interval |")
    print("|---|---|---|---|")
    for k in range(10):
        lo, hi = np.nanpercentile(boot[:, k], [5, 95])
        print(f"| {k + 1} | {point[k]:+.2f} | {np.nanstd(boot[:, k]):.2f} | {lo:+.1f} to {hi:+.1f} |")
    x, y = pred - pred.mean(), real - real.mean()
    slope = float(np.sum(x * y) / np.sum(x * x))
    refit = real.mean() + slope * x
    worst = max(abs(g) for g in gaps(refit, real))
    print(f"worst gap as served: {max(abs(g) for g in point):.2f} points")
    print(f"worst gap after an in-sample linear refit (slope {slope:.2f}, look-ahead): {worst:.2f} points")


if __name__ == "__main__":
    main()
