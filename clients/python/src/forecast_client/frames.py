"""The answers as pandas DataFrames.

Each class extends a model generated from the OpenAPI document
(`forecast_client.models`) with `to_frame()`; the columns are the model's
own fields, so a field the server adds or renames shows up here after
`make python-client-types`, never by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd

from . import models


def _dates(values: Sequence[Any]) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(pd.to_datetime(list(values)), name="date")


def _records(items: Sequence[Any]) -> list[dict[str, Any]]:
    # mode="json": enums as their values, dates as ISO strings (converted below).
    return [i.model_dump(mode="json") for i in items]


class TimeSeries(models.TimeSeriesBody):
    """`time_series` of an analysis: parallel arrays, one entry per date."""

    def to_frame(self) -> pd.DataFrame:
        """One row per date (a `DatetimeIndex` named `date`), one float
        column per array of the answer (`prices`, `drawdowns`, ...); nulls
        become NaN."""
        columns = {
            name: pd.Series(getattr(self, name), dtype="float64").to_numpy()
            for name in type(self).model_fields
            if name != "dates"
        }
        return pd.DataFrame(columns, index=_dates(self.dates))


class Analysis(models.AnalysisResponse):
    """`GET /api/analysis/{ticker}`."""

    time_series: TimeSeries

    def segments_frame(self) -> pd.DataFrame:
        """The drawdown buckets, one row each."""
        return pd.DataFrame(_records(self.segments))


class Verdict(models.VerdictResponse):
    """`GET /api/analysis/{ticker}/verdict`."""


class Ranking(models.RankingResponse):
    """`GET /api/ranking`."""

    def to_frame(self) -> pd.DataFrame:
        """One row per ranked asset, indexed by `ticker`, in the order of
        the answer; `last_price_date` as datetime64, `forecast` (an object)
        as dicts."""
        columns = list(models.RankedAsset.model_fields)
        df = pd.DataFrame(_records(self.ranked_assets), columns=columns)
        df["last_price_date"] = pd.to_datetime(df["last_price_date"])
        return df.set_index("ticker")


class EquityCurve(Sequence[models.EquityPoint]):
    """A backtest's `equity_curve`: its points, and `to_frame()`."""

    def __init__(self, points: Sequence[models.EquityPoint]) -> None:
        self._points = list(points)

    def __len__(self) -> int:
        return len(self._points)

    def __getitem__(self, i):  # type: ignore[override]
        return self._points[i]

    def __iter__(self) -> Iterator[models.EquityPoint]:
        return iter(self._points)

    def to_frame(self) -> pd.DataFrame:
        """One row per calendar date (`DatetimeIndex` named `date`), column
        `equity`: the portfolio's value at that date's close."""
        return pd.DataFrame(
            {"equity": [p.equity for p in self._points]},
            index=_dates([p.date for p in self._points]),
        )

    def to_series(self) -> pd.Series:
        """The equity as a Series indexed by date."""
        return self.to_frame()["equity"]


class Backtest(models.BacktestResponse):
    """`POST /api/backtest`."""

    @property
    def equity(self) -> EquityCurve:
        """The equity curve (`equity_curve`) with `to_frame()`."""
        return EquityCurve(self.equity_curve)

    def trades_frame(self) -> pd.DataFrame:
        """The fills (`trades`), one row each, `date` as datetime64."""
        df = pd.DataFrame(_records(self.trades), columns=list(models.TradeBody.model_fields))
        df["date"] = pd.to_datetime(df["date"])
        return df


class TrackRecord(models.TrackRecordResponse):
    """`GET /api/track-record/{ticker}`: one asset's grade history."""

    def to_frame(self) -> pd.DataFrame:
        """`history`: one row per graded month-end (`DatetimeIndex` named
        `date`) with `grade`, `score`, `predicted_median_return`,
        `realised_return` (NaN while not yet realised) and `forecast`."""
        columns = [c for c in models.TrackRecordRow.model_fields if c != "date"]
        records = _records(self.history)
        df = pd.DataFrame(records, columns=columns, index=_dates([r.date for r in self.history]))
        df["realised_return"] = df["realised_return"].astype("float64")
        return df


class UniverseTrackRecord(models.UniverseTrackRecordResponse):
    """`GET /api/track-record`: the grades' record across the universe."""

    def to_frame(self) -> pd.DataFrame:
        """`by_grade`: one row per grade letter (the index), A first."""
        columns = list(models.UniverseGradeOutcome.model_fields)
        return pd.DataFrame(_records(self.by_grade), columns=columns).set_index("grade")

    def ic_frame(self) -> pd.DataFrame:
        """`ic_series`: the information coefficient month by month."""
        columns = [c for c in models.IcPoint.model_fields if c != "date"]
        return pd.DataFrame(_records(self.ic_series), columns=columns, index=_dates([p.date for p in self.ic_series]))
