#!/usr/bin/env python3
"""Our interval-forecast evaluation against reference packages.

`make bench-peer` runs this (step 5 of run.sh) under the pinned venv after
`peer-forecast-eval` (tools/bench/peer/forecast-eval) has evaluated rows with
forecast_domain::evaluation and written them, the lag and every figure of
its `Evaluation` to target/bench-peer/forecast-eval.json. Here every figure
is recomputed from the same rows:

- Gaussian CRPS: properscoring.crps_gaussian, σ = (p90 − p10)/(2·Φ⁻¹(0.9))
  for the forecast and the climatology alike (scipy.stats.norm.ppf);
- pinball loss (τ = 0.1, 0.9), squared error, coverage, reliability: numpy;
- PIT: scipy.stats.norm.cdf, counted by numpy.histogram in [k/10, (k+1)/10);
- Diebold–Mariano on the per-month mean loss differentials:
  statsmodels OLS(D, ones).fit(cov_type='HAC',
  cov_kwds={'maxlags': lag, 'use_correction': True});
- calibration: statsmodels OLS(y, add_constant(central)) on the rows sorted
  by month, cov_type='hac-groupsum' with time = the months' ranks 0..G−1
  and maxlags = lag (its default use_correction='cluster').

A figure passes when it agrees to 1e-9: absolute, or relative for values
above 1 in magnitude; counts must be equal. Exit status 1 otherwise, after
printing every figure with both values.
"""

import json
import math
import os
import sys

import numpy as np
import properscoring
import scipy
import scipy.stats
import statsmodels
import statsmodels.api as sm

TOLERANCE = 1e-9
Z90 = scipy.stats.norm.ppf(0.9)
ALPHA = 0.10  # two-sided 90 % intervals


def columns(rows):
    names = ["month", "central", "p10", "p90", "clim_mean", "clim_p10", "clim_p90", "realised"]
    cols = {k: np.array([r[k] for r in rows], dtype=float) for k in names}
    cols["month"] = np.array([r["month"] for r in rows], dtype=np.int64)
    return cols


def pinball(tau, y, q):
    return (tau - (y < q)) * (y - q)


def skill_test(loss_f, loss_c, month, lag):
    """Mean losses, skill and the DM test on the monthly differentials: each
    month's sum over the mean rows per month (their mean is the row mean)."""
    months = np.unique(month)  # ascending, as ours
    diff = loss_c - loss_f
    per_month = len(diff) / len(months)
    d = np.array([diff[month == m].sum() / per_month for m in months])
    res = sm.OLS(d, np.ones(len(d))).fit(
        cov_type="HAC", cov_kwds={"maxlags": lag, "use_correction": True}
    )
    assert not res.use_t, "HAC inference must be normal, not Student t"
    lo, hi = res.conf_int(alpha=ALPHA)[0]
    f, c = loss_f.mean(), loss_c.mean()
    return {
        "forecast": f,
        "climatology": c,
        "skill": 1.0 - f / c,
        "differential": res.params[0],
        "se": res.bse[0],
        "dm_stat": res.tvalues[0],
        "dm_p": res.pvalues[0],
        "differential_lo": lo,
        "differential_hi": hi,
        "skill_lo": lo / c,
        "skill_hi": hi / c,
    }


def calibration(x, y, month, lag):
    order = np.argsort(month, kind="stable")
    codes = np.unique(month[order], return_inverse=True)[1]
    res = sm.OLS(y[order], sm.add_constant(x[order])).fit(
        cov_type="hac-groupsum", cov_kwds={"time": codes, "maxlags": lag}
    )
    assert not res.use_t
    ci = res.conf_int(alpha=ALPHA)
    coef = lambda k: {"estimate": res.params[k], "se": res.bse[k], "lo": ci[k][0], "hi": ci[k][1]}
    return {"intercept": coef(0), "slope": coef(1)}


def reference(rows, lag):
    c = columns(rows)
    y, x, month = c["realised"], c["central"], c["month"]
    sig = (c["p90"] - c["p10"]) / (2 * Z90)
    sig_c = (c["clim_p90"] - c["clim_p10"]) / (2 * Z90)
    crps_f = properscoring.crps_gaussian(y, x, sig)
    crps_c = properscoring.crps_gaussian(y, c["clim_mean"], sig_c)
    pin_f = 0.5 * (pinball(0.1, y, c["p10"]) + pinball(0.9, y, c["p90"]))
    pin_c = 0.5 * (pinball(0.1, y, c["clim_p10"]) + pinball(0.9, y, c["clim_p90"]))
    pit = scipy.stats.norm.cdf(y, loc=x, scale=sig)
    n = len(y)
    order = np.argsort(x, kind="stable")
    bins = [order[b * n // 10 : (b + 1) * n // 10] for b in range(10)]
    return {
        "rows": n,
        "months": len(np.unique(month)),
        "lag": lag,
        "crps": skill_test(crps_f, crps_c, month, lag),
        "pinball": skill_test(pin_f, pin_c, month, lag),
        "mse": skill_test((y - x) ** 2, (y - c["clim_mean"]) ** 2, month, lag),
        "calibration": calibration(x, y, month, lag),
        "coverage": np.mean((c["p10"] <= y) & (y <= c["p90"])),
        "climatology_coverage": np.mean((c["clim_p10"] <= y) & (y <= c["clim_p90"])),
        "pit_histogram": np.histogram(pit, bins=np.arange(11) / 10.0)[0].tolist(),
        "reliability": [
            {
                "mean_predicted": x[b].mean() if len(b) else math.nan,
                "mean_realised": y[b].mean() if len(b) else math.nan,
                "count": len(b),
            }
            for b in bins
        ],
    }


def flatten(prefix, v, out):
    if isinstance(v, dict):
        for k, w in v.items():
            flatten(f"{prefix}.{k}" if prefix else k, w, out)
    elif isinstance(v, (list, tuple)):
        for i, w in enumerate(v):
            flatten(f"{prefix}[{i}]", w, out)
    else:
        out[prefix] = v
    return out


def plain(v):
    """numpy scalars as Python numbers, for printing."""
    return v.item() if isinstance(v, np.generic) else v


def difference(ours, theirs):
    """(absolute difference, passes)."""
    if isinstance(theirs, (int, np.integer)) and not isinstance(theirs, bool):
        return abs(float(ours) - float(theirs)), ours == theirs
    a = math.nan if ours is None else float(ours)
    b = float(theirs)
    if math.isnan(a) or math.isnan(b):
        return (0.0, True) if math.isnan(a) and math.isnan(b) else (math.inf, False)
    diff = abs(a - b)
    return diff, diff <= TOLERANCE * max(1.0, abs(b))


def main(path):
    data = json.load(open(path))
    rows, lag = data["rows"], data["lag"]
    print(
        f"properscoring {properscoring.__version__ if hasattr(properscoring, '__version__') else '0.1'}, "
        f"statsmodels {statsmodels.__version__}, scipy {scipy.__version__}, numpy {np.__version__}"
    )
    print(
        f"{len(rows)} rows ({data['source']}, h = {data['horizon_days']} days), HAC lag {lag}; "
        f"every figure equal within {TOLERANCE:g} (absolute, relative above 1)"
    )
    print()
    ours = flatten("", data["evaluation"], {})
    theirs = flatten("", reference(rows, lag), {})
    assert ours.keys() == theirs.keys(), sorted(set(ours) ^ set(theirs))
    print("| figure | ours | reference | abs. diff | equal |")
    print("|---|---|---|---|---|")
    failed, worst = [], 0.0
    for key in ours:
        diff, ok = difference(ours[key], theirs[key])
        worst = max(worst, diff)
        print(f"| {key} | {ours[key]!r} | {plain(theirs[key])!r} | {diff:.1e} | {'yes' if ok else '**NO**'} |")
        if not ok:
            failed.append(key)
    print()
    print(f"largest absolute difference over {len(ours)} figures: {worst:.1e}")
    summary = os.environ.get("BENCH_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(
                f"| peer: forecast evaluation ({len(rows)} rows of real histories) vs "
                f"properscoring/statsmodels: max abs. diff over {len(ours)} figures "
                f"| {worst:.1e} | ≤ {TOLERANCE:g} | {'met' if not failed else '**missed**'} |\n"
            )
    if failed:
        print(f"{len(failed)} figure(s) differ: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "target/bench-peer/forecast-eval.json"))
