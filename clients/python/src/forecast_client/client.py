"""`Client`: the API's read routes and backtests, answers as typed models
(generated from the OpenAPI document) with pandas `to_frame()`s.

Parameter names are the API's (web/openapi.json); `None` leaves a
parameter out, so the server's default applies.
"""

from __future__ import annotations

import datetime as _dt
import enum
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from . import models
from .errors import ForecastAPIError, RateLimit, RateLimitError
from .frames import Analysis, Backtest, Ranking, TrackRecord, UniverseTrackRecord, Verdict

try:
    from importlib.metadata import version as _version

    __version__ = _version("forecast-client")
except Exception:  # pragma: no cover - running from a source tree
    __version__ = "0"

M = TypeVar("M", bound=BaseModel)
DateLike = _dt.date | str


def _param(value: Any) -> str:
    """One query value as the server reads it: enums by value, dates in ISO
    form, booleans in lower case, lists comma-separated (the document's
    `style: form, explode: false`)."""
    if isinstance(value, enum.Enum):
        return _param(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(_param(v) for v in value)
    return str(value)


def _query(params: Mapping[str, Any]) -> dict[str, str]:
    return {k: _param(v) for k, v in params.items() if v is not None}


def _path_segment(ticker: str) -> str:
    # `^GSPC` and `CL=F` are tickers: escape everything but unreserved characters.
    return quote(ticker, safe="")


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class Client:
    """A client of one Forecast Engine server.

    >>> client = Client("http://127.0.0.1:8080", api_key="svc_...")
    >>> client.verdict("AAPL").grade.letter

    `api_key` is a Premium account's key (`svc_` + 64 hex). With
    `wait_on_rate_limit=True`, an answer 429 (quota used up) or 503 (the
    server's heavy-work budget is busy) that carries `Retry-After` is waited
    out and the request sent again, at most `max_retries` times and only when
    the wait is at most `max_wait` seconds; otherwise it raises
    `RateLimitError` / `ForecastAPIError` at once. `rate_limit` holds the
    `X-RateLimit-*` headers of the last answer.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 120.0,
        wait_on_rate_limit: bool = False,
        max_retries: int = 3,
        max_wait: float = 65.0,
        sleep: Callable[[float], None] = time.sleep,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.wait_on_rate_limit = wait_on_rate_limit
        self.max_retries = max_retries
        self.max_wait = max_wait
        self.rate_limit: RateLimit | None = None
        self.waited: float = 0.0
        """Seconds spent waiting out rate limits so far."""
        self._sleep = sleep
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Accept": "application/json",
            "User-Agent": f"forecast-client/{__version__} (python)",
        }

    # -- plumbing ---------------------------------------------------------

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None, json: Any = None) -> Any:
        """Sends one request to `path` (e.g. `/api/assets`) and returns the
        decoded JSON body (None for an empty one); raises `ForecastAPIError`
        on an error answer."""
        url = self.base_url + path
        query = _query(params or {})
        attempt = 0
        while True:
            response = self._http.request(method, url, params=query, json=json, headers=self._headers)
            limit = RateLimit.from_headers(response.headers)
            if limit is not None:
                self.rate_limit = limit
            if response.is_success:
                return response.json() if response.content else None
            wait = _retry_after(response)
            if (
                self.wait_on_rate_limit
                and response.status_code in (429, 503)
                and wait is not None
                and wait <= self.max_wait
                and attempt < self.max_retries
            ):
                attempt += 1
                self._sleep(wait)
                self.waited += wait
                continue
            raise self._error(response, method, url, wait, limit)

    @staticmethod
    def _error(response: httpx.Response, method: str, url: str, wait: float | None, limit: RateLimit | None) -> ForecastAPIError:
        try:
            body = response.json()
            detail = body["detail"] if isinstance(body, dict) and isinstance(body.get("detail"), str) else response.text
        except ValueError:
            detail = response.text
        cls = RateLimitError if response.status_code == 429 else ForecastAPIError
        return cls(response.status_code, detail, method=method, url=url, retry_after=wait, rate_limit=limit)

    def _get(self, model: type[M], path: str, params: Mapping[str, Any]) -> M:
        return model.model_validate(self.request("GET", path, params=params))

    # -- the API ----------------------------------------------------------

    def verdict(
        self,
        ticker: str,
        *,
        return_period: int | None = None,
        num_segments: int | None = None,
        decay_factor: float | None = None,
        metric: str | models.Metric | None = None,
        start_date: DateLike | None = None,
        end_date: DateLike | None = None,
    ) -> Verdict:
        """`GET /api/analysis/{ticker}/verdict`: the current state, signals,
        active segment and grade of one asset."""
        params = dict(
            return_period=return_period,
            num_segments=num_segments,
            decay_factor=decay_factor,
            metric=metric,
            start_date=start_date,
            end_date=end_date,
        )
        return self._get(Verdict, f"/api/analysis/{_path_segment(ticker)}/verdict", params)

    def analysis(
        self,
        ticker: str,
        *,
        return_period: int | None = None,
        num_segments: int | None = None,
        decay_factor: float | None = None,
        metric: str | models.Metric | None = None,
        start_date: DateLike | None = None,
        end_date: DateLike | None = None,
        max_points: int | None = None,
    ) -> Analysis:
        """`GET /api/analysis/{ticker}`: the full analysis;
        `.time_series.to_frame()` is a DataFrame indexed by date."""
        params = dict(
            return_period=return_period,
            num_segments=num_segments,
            decay_factor=decay_factor,
            metric=metric,
            start_date=start_date,
            end_date=end_date,
            max_points=max_points,
        )
        return self._get(Analysis, f"/api/analysis/{_path_segment(ticker)}", params)

    def ranking(
        self,
        *,
        category: str | models.Category | None = None,
        categories: Iterable[str | models.Category] | None = None,
        sort_by: str | models.SortKey | None = None,
        sort: str | models.SortOrder | None = None,
        limit: int | None = None,
        offset: int | None = None,
        q: str | None = None,
        return_period: int | None = None,
        metric: str | models.Metric | None = None,
        max_age_days: int | None = None,
        source: Iterable[str | models.DataSource] | None = None,
        grades: str | Iterable[str] | None = None,
        min_score: float | None = None,
        max_score: float | None = None,
        min_current_drawdown: float | None = None,
        max_current_drawdown: float | None = None,
        min_median_return: float | None = None,
        max_median_return: float | None = None,
        min_expected_return: float | None = None,
        max_expected_return: float | None = None,
        min_win_rate: float | None = None,
        max_win_rate: float | None = None,
        min_episodes: int | None = None,
        currency: str | None = None,
    ) -> Ranking:
        """`GET /api/ranking`: the graded assets, ranked; `.to_frame()` is a
        DataFrame indexed by ticker. Lists (`categories`, `source`, `grades`)
        may be given as Python lists."""
        params = dict(
            category=category,
            categories=list(categories) if categories is not None else None,
            sort_by=sort_by,
            sort=sort,
            limit=limit,
            offset=offset,
            q=q,
            return_period=return_period,
            metric=metric,
            max_age_days=max_age_days,
            source=list(source) if source is not None else None,
            grades=grades if isinstance(grades, str) or grades is None else list(grades),
            min_score=min_score,
            max_score=max_score,
            min_current_drawdown=min_current_drawdown,
            max_current_drawdown=max_current_drawdown,
            min_median_return=min_median_return,
            max_median_return=max_median_return,
            min_expected_return=min_expected_return,
            max_expected_return=max_expected_return,
            min_win_rate=min_win_rate,
            max_win_rate=max_win_rate,
            min_episodes=min_episodes,
            currency=currency,
        )
        return self._get(Ranking, "/api/ranking", params)

    def backtest(self, request: models.BacktestRequest | Mapping[str, Any] | None = None, **fields: Any) -> Backtest:
        """`POST /api/backtest`: a portfolio backtest. The body's fields as
        keywords (`strategy`, `tickers`, `category`, `top_n`, `rebalance`,
        `start_date`, ...) or a `models.BacktestRequest`; fields not given
        take the server's defaults. `.equity.to_frame()` is the equity curve
        indexed by date."""
        if request is None:
            body = models.BacktestRequest.model_validate(fields)
        elif fields:
            raise TypeError("give the backtest either as a request or as keywords, not both")
        elif isinstance(request, models.BacktestRequest):
            body = request
        else:
            body = models.BacktestRequest.model_validate(dict(request))
        if body.model_extra:
            raise TypeError(f"not a field of BacktestRequest: {', '.join(sorted(body.model_extra))}")
        payload = body.model_dump(mode="json", exclude_unset=True)
        return Backtest.model_validate(self.request("POST", "/api/backtest", json=payload))

    def track_record(
        self,
        ticker: str | None = None,
        *,
        return_period: int | None = None,
        metric: str | models.Metric | None = None,
        category: str | models.Category | None = None,
        source: str | models.SourceFilter | None = None,
    ) -> TrackRecord | UniverseTrackRecord:
        """With a ticker, `GET /api/track-record/{ticker}` (`TrackRecord`:
        the grade at each past month-end and the return realised after it;
        `.to_frame()` indexed by date). Without, `GET /api/track-record`
        (`UniverseTrackRecord`: the grades' record across the universe,
        filtered by `category` and `source`; `.to_frame()` per grade)."""
        if ticker is None:
            params = dict(return_period=return_period, metric=metric, category=category, source=source)
            return self._get(UniverseTrackRecord, "/api/track-record", params)
        if category is not None or source is not None:
            raise TypeError("category and source filter the universe's track record, not one asset's")
        params = dict(return_period=return_period, metric=metric)
        return self._get(TrackRecord, f"/api/track-record/{_path_segment(ticker)}", params)

    def usage(self) -> models.UsageResponse:
        """`GET /api/usage`: the account's quota windows (costs nothing)."""
        return self._get(models.UsageResponse, "/api/usage", {})
