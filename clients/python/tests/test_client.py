"""Every method of the client against the real server of the fixture; each
answer is compared with the server's own JSON, fetched with plain HTTP."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from forecast_client import (
    Analysis,
    Backtest,
    Client,
    ForecastAPIError,
    Ranking,
    RateLimitError,
    TrackRecord,
    UniverseTrackRecord,
    Verdict,
    models,
)


def _same(a, b) -> bool:
    """Equal numbers (NaN for null) or equal values."""
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == b


def test_verdict_is_the_servers(client, raw):
    v = client.verdict("AAPL")
    r = raw.get("/api/analysis/AAPL/verdict").json()
    assert isinstance(v, Verdict)
    assert v.ticker == r["ticker"] == "AAPL"
    assert v.grade.letter == r["grade"]["letter"]
    assert v.grade.score == r["grade"]["score"]
    assert v.current_state.drawdown == r["current_state"]["drawdown"]
    assert v.current_state.median_return == r["current_state"]["median_return"]
    # Graded by the fixture, so served from the daily snapshot.
    assert v.metadata.from_cache is True
    assert client.rate_limit is not None and client.rate_limit.limit == 100000


def test_verdict_parameters_reach_the_server(client, raw):
    v = client.verdict("^GSPC", return_period=30, end_date="2010-12-31")
    r = raw.get("/api/analysis/%5EGSPC/verdict", params={"return_period": 30, "end_date": "2010-12-31"}).json()
    assert v.ticker == "^GSPC"
    assert v.grade.letter == r["grade"]["letter"] and v.grade.score == r["grade"]["score"]
    assert v.metadata.return_period == 30
    default = raw.get("/api/analysis/%5EGSPC/verdict").json()
    assert (v.current_state.price, v.grade.score) != (default["current_state"]["price"], default["grade"]["score"])


def test_analysis_time_series_to_frame(client, raw):
    # The first answer is computed live and the later ones come from the
    # server's cache, which may differ in the last digit: compare two
    # answers from the cache.
    raw.get("/api/analysis/%5EGSPC").raise_for_status()
    a = client.analysis("^GSPC")
    r = raw.get("/api/analysis/%5EGSPC").json()
    assert a.metadata.from_cache is True and r["metadata"]["from_cache"] is True
    assert isinstance(a, Analysis)
    df = a.time_series.to_frame()
    ts = r["time_series"]
    assert isinstance(df, pd.DataFrame)
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "date"
    assert df.index.is_monotonic_increasing
    assert len(df) == len(ts["dates"]) > 1000
    assert [d.date().isoformat() for d in df.index[:3]] == ts["dates"][:3]
    assert df.index[-1].date().isoformat() == ts["dates"][-1]
    assert set(df.columns) == set(ts) - {"dates"}
    for col in df.columns:
        assert df[col].dtype == "float64", col
        assert all(_same(a, b) for a, b in zip(df[col].tolist(), ts[col])), col
    # Nulls are NaN: the last return_period days have no realised return yet.
    assert df["actual_returns"].isna().sum() == sum(x is None for x in ts["actual_returns"]) > 0
    assert df["prices"].iloc[-1] == a.current_state.price == r["current_state"]["price"]


def test_analysis_max_points_thins_the_series(client):
    full = client.analysis("^GSPC").time_series.to_frame()
    thin = client.analysis("^GSPC", max_points=500).time_series.to_frame()
    assert len(thin) <= 500 < len(full)
    assert thin.index.isin(full.index).all()


def test_ranking_to_frame(client, raw, server):
    rk = client.ranking(limit=500, sort_by="score", sort="desc")
    r = raw.get("/api/ranking", params={"limit": 500, "sort_by": "score", "sort": "desc"}).json()
    assert isinstance(rk, Ranking)
    df = rk.to_frame()
    assert df.index.name == "ticker"
    assert list(df.index) == [a["ticker"] for a in r["ranked_assets"]]
    # The fixture graded the small universe: every graded asset is ranked.
    assert len(df) == server.active_assets
    assert list(df["rank"]) == list(range(1, len(df) + 1))
    assert df["score"].is_monotonic_decreasing
    assert list(df["grade"]) == [a["grade"] for a in r["ranked_assets"]]
    assert list(df["median_return"]) == [a["median_return"] for a in r["ranked_assets"]]
    assert df["last_price_date"].dtype.kind == "M"
    assert set(df.columns) == set(models.RankedAsset.model_fields) - {"ticker"}


def test_ranking_filters_as_lists(client, raw):
    df = client.ranking(categories=["Indices", models.Category.Crypto], source=["real"], limit=50).to_frame()
    r = raw.get("/api/ranking", params={"categories": "Indices,Crypto", "source": "real", "limit": 50}).json()
    assert list(df.index) == [a["ticker"] for a in r["ranked_assets"]]
    assert len(df) > 0
    assert set(df["category"]) <= {"Indices", "Crypto"}
    assert set(df["data_source"]) == {"real"}
    assert "^GSPC" in df.index


def test_backtest_equity_to_frame(client, raw):
    body = {
        "strategy": "topn",
        "tickers": ["^GSPC", "^IXIC", "AAPL"],
        "top_n": 2,
        "rebalance": "monthly",
        "start_date": "2005-01-01",
        "end_date": "2014-12-31",
    }
    b = client.backtest(**body)
    r = raw.post("/api/backtest", json=body).json()
    assert isinstance(b, Backtest)
    df = b.equity.to_frame()
    assert list(df.columns) == ["equity"]
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "date"
    assert len(df) == len(b.equity) == len(r["equity_curve"]) > 1000
    assert df.index[0].date().isoformat() == r["equity_curve"][0]["date"] >= "2005-01-01"
    assert df.index[-1].date().isoformat() == r["equity_curve"][-1]["date"] <= "2014-12-31"
    assert df["equity"].tolist() == [p["equity"] for p in r["equity_curve"]]
    assert df["equity"].iloc[-1] == pytest.approx(b.metrics.final_equity, rel=1e-12)
    assert b.metrics.total_trades == r["metrics"]["total_trades"] > 0
    trades = b.trades_frame()
    assert len(trades) == len(r["trades"]) and set(trades["ticker"]) <= set(body["tickers"])
    # A request model works as well as keywords.
    again = client.backtest(models.BacktestRequest(**body))
    assert again.equity.to_frame().equals(df)


def test_backtest_refuses_a_field_the_api_does_not_have(client):
    with pytest.raises(TypeError, match="topN"):
        client.backtest(strategy="topn", tickers=["AAPL"], topN=3)


def test_track_record_of_an_asset(client, raw):
    tr = client.track_record("AAPL", return_period=90)
    r = raw.get("/api/track-record/AAPL", params={"return_period": 90}).json()
    assert isinstance(tr, TrackRecord)
    assert tr.ticker == "AAPL" and tr.return_period == 90
    df = tr.to_frame()
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "date"
    assert len(df) == len(r["history"]) > 12
    assert [d.date().isoformat() for d in df.index] == [h["date"] for h in r["history"]]
    assert list(df["grade"]) == [h["grade"] for h in r["history"]]
    assert all(_same(a, h.get("realised_return")) for a, h in zip(df["realised_return"], r["history"]))
    assert [g.grade for g in tr.by_grade] == [g["grade"] for g in r["by_grade"]]


def test_track_record_of_the_universe(client, raw):
    tr = client.track_record(source="all")
    r = raw.get("/api/track-record", params={"source": "all"}).json()
    assert isinstance(tr, UniverseTrackRecord)
    assert tr.assets == r["assets"] > 0
    assert tr.observations == r["observations"] > 0
    df = tr.to_frame()
    assert list(df.index) == [g["grade"] for g in r["by_grade"]]
    assert list(df["count"]) == [g["count"] for g in r["by_grade"]]
    assert df["count"].sum() == tr.observations
    ic = tr.ic_frame()
    assert len(ic) == len(r["ic_series"])
    with pytest.raises(TypeError):
        client.track_record("AAPL", source="all")


def test_unknown_ticker_raises_with_the_servers_detail(client, raw):
    expected = raw.get("/api/analysis/NOSUCHTICKER/verdict")
    assert expected.status_code == 404
    with pytest.raises(ForecastAPIError) as e:
        client.verdict("NOSUCHTICKER")
    assert e.value.status == 404
    assert e.value.detail == expected.json()["detail"]
    assert "NOSUCHTICKER" in e.value.detail
    assert not isinstance(e.value, RateLimitError)


def test_invalid_parameter_raises_400_with_detail(client, raw):
    expected = raw.get("/api/analysis/AAPL", params={"return_period": 3})
    with pytest.raises(ForecastAPIError) as e:
        client.analysis("AAPL", return_period=3)
    assert e.value.status == expected.status_code == 400
    assert e.value.detail == expected.json()["detail"] and "return_period" in e.value.detail


def test_wrong_key_raises_401(server):
    with Client(server.base, "svc_" + "0" * 64) as c, pytest.raises(ForecastAPIError) as e:
        c.ranking()
    assert e.value.status == 401 and e.value.detail


def test_usage(client):
    u = client.usage()
    assert u.minute.limit == 100000 and u.day.limit == 1000000
