"""examples/quickstart.py runs against the fixture's server, and what it
prints is what the server says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "quickstart.py"


def test_quickstart_runs(server, client):
    env = {**os.environ, "FORECAST_URL": server.base, "FORECAST_API_KEY": server.key}
    r = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=300)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not r.stderr, r.stderr
    out = r.stdout
    v = client.verdict("AAPL")
    assert f"AAPL grade {v.grade.letter} (score {v.grade.score:.1f})" in out
    ts = client.analysis("^GSPC").time_series.to_frame()
    assert f"^GSPC: {len(ts)} days, {ts.index[0]:%Y-%m-%d} to {ts.index[-1]:%Y-%m-%d}" in out
    bt = client.backtest(strategy="topn", tickers=["^GSPC", "^IXIC", "AAPL"], top_n=2,
                         rebalance="monthly", start_date="2005-01-01", end_date="2014-12-31")
    assert f"-> {bt.equity.to_frame()['equity'].iloc[-1]:,.0f} (CAGR {bt.metrics.cagr:+.2%})" in out
    top = client.ranking(sort_by="score", limit=20).to_frame().index[0]
    assert top in out
    assert "error 404: " in out and "NOSUCHTICKER" in out
