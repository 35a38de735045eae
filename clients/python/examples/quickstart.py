# %% [markdown]
# # Forecast Engine from Python: a quick start
#
# Run it as a script or cell by cell (`# %%` cells, as in Jupyter or VS Code).
# It reads the server's address and an API key of a Premium account from the
# environment:
#
#     FORECAST_URL=http://127.0.0.1:8080 FORECAST_API_KEY=svc_... python examples/quickstart.py
#
# Output is informational only and is not financial advice; demo assets whose
# `data_source` is `synthetic` carry generated prices, not market data.

# %%
import os

import pandas as pd

from forecast_client import Client, ForecastAPIError

pd.set_option("display.width", 160)
pd.set_option("display.max_columns", 12)

client = Client(
    os.environ.get("FORECAST_URL", "http://127.0.0.1:8080"),
    api_key=os.environ["FORECAST_API_KEY"],
    wait_on_rate_limit=True,  # sleep through a 429's Retry-After, then retry
)

# %% One asset's verdict: its drawdown bucket, the grade, what it predicts.
v = client.verdict("AAPL")
print(f"AAPL grade {v.grade.letter} (score {v.grade.score:.1f}), drawdown {v.current_state.drawdown:.1%}, "
      f"median {v.metadata.return_period}-day return in this bucket {v.current_state.median_return:+.2%} "
      f"({v.metadata.data_source.value} prices to {v.metadata.last_price_date})")

# %% The full analysis as a DataFrame indexed by date.
ts = client.analysis("^GSPC").time_series.to_frame()
print(ts[["prices", "drawdowns", "median_returns", "actual_returns"]].tail())
yearly = ts["prices"].resample("YE").last().pct_change().dropna()
print(f"^GSPC: {len(ts)} days, {ts.index[0]:%Y-%m-%d} to {ts.index[-1]:%Y-%m-%d}; "
      f"best calendar year {yearly.idxmax():%Y} ({yearly.max():+.1%})")

# %% Today's ranking, filtered and sorted like any DataFrame.
ranking = client.ranking(sort_by="score", limit=20).to_frame()
print(ranking[["rank", "name", "grade", "score", "median_return", "data_source"]].head(10))

# %% A backtest: the equity curve, its drawdowns, monthly returns.
bt = client.backtest(strategy="topn", tickers=["^GSPC", "^IXIC", "AAPL"], top_n=2,
                     rebalance="monthly", start_date="2005-01-01", end_date="2014-12-31")
equity = bt.equity.to_frame()["equity"]
drawdown = equity / equity.cummax() - 1
monthly = equity.resample("ME").last().pct_change().dropna()
print(f"topn: {equity.iloc[0]:,.0f} -> {equity.iloc[-1]:,.0f} (CAGR {bt.metrics.cagr:+.2%}), "
      f"worst drawdown {drawdown.min():.1%}, {int((monthly > 0).sum())} of {len(monthly)} months up")

# %% How the grades did: one asset's month-end grades and what followed.
record = client.track_record("AAPL").to_frame()
print(record.dropna(subset=["realised_return"]).groupby("grade")["realised_return"].agg(["count", "mean"]))

# %% Errors carry the HTTP status and the server's detail.
try:
    client.verdict("NOSUCHTICKER")
except ForecastAPIError as e:
    print(f"error {e.status}: {e.detail}")

# %%
print(f"quota left this window: {client.rate_limit.remaining} of {client.rate_limit.limit}")
client.close()
