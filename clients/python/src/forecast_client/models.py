# Generated from web/openapi.json by datamodel-code-generator 0.89.0: do not edit.
# Regenerate with `make python-client-types` (clients/python/scripts/generate_models.py).

from __future__ import annotations

from datetime import date as date_aliased
from enum import Enum, IntEnum
from typing import Annotated, Any
from uuid import UUID

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    StringConstraints,
)
from typing_extensions import TypeAliasType


class ActivateRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: str
    """
    The plugin's kind.
    """
    name: str
    """
    Name within the kind.
    """
    version: str
    """
    Semantic version.
    """
    force: bool | None = None
    """
    Activate a scorer or engine even though it forecast significantly
    worse than the active version on real prices (recorded with `reason`).
    """
    reason: str | None = None
    """
    Why, when `force` (required then; at most 500 characters).
    """


class Axis(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: str
    """
    The parameter (a backtest field).
    """
    values: list[Any]
    """
    Its values, as sent.
    """


class Ticker(RootModel[str]):
    root: Annotated[str, Field(examples=["AAPL"], max_length=64, min_length=1)]


class Benchmark(RootModel[str]):
    root: Annotated[str, Field(examples=["^GSPC"], max_length=64, min_length=1)]


WeightsAdditionalProperty = TypeAliasType(
    "WeightsAdditionalProperty", Annotated[float, Field(gt=0.0, le=1.0)]
)


class BenchmarkBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    dates: list[date_aliased]
    """
    Same dates as the equity curve.
    """
    equity: list[float]
    """
    Its equity.
    """


class CalibrationBin(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    mean_predicted: float
    """
    Mean predicted median return of the bin's pairs.
    """
    mean_realised: float
    """
    Mean realised return of the same pairs.
    """
    count: Annotated[int, Field(ge=0)]
    """
    Pairs in the bin.
    """


class Category(Enum):
    US_Stocks = "US Stocks"
    ETFs = "ETFs"
    BMV = "BMV"
    Crypto = "Crypto"
    Commodities = "Commodities"
    Forex = "Forex"
    Indices = "Indices"
    UK_Stocks = "UK Stocks"
    European_Stocks = "European Stocks"
    Japanese_Stocks = "Japanese Stocks"
    Canadian_Stocks = "Canadian Stocks"
    Brazilian_Stocks = "Brazilian Stocks"
    HK_China_Stocks = "HK/China Stocks"
    Indian_Stocks = "Indian Stocks"
    Australian_Stocks = "Australian Stocks"
    Korean_Stocks = "Korean Stocks"
    CS2_Cases = "CS2 Cases"


class CoefficientBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    estimate: float
    """
    Estimate.
    """
    ci: Annotated[list[float], Field(max_length=2, min_length=2)]
    """
    90 % interval (Driscoll–Kraay: months as time, HAC over the overlap).
    """


class CompareRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: str
    """
    `scorer` or `segmentation`.
    """
    name: str
    """
    Name within the kind (`default` for the built-ins).
    """
    a: str
    """
    The first version.
    """
    b: str
    """
    The second version.
    """
    return_period: Annotated[int | None, Field(ge=0)] = None
    """
    Horizon in calendar days, one of the graded ones (default 90).
    """


class Condition(Enum):
    grade_changed = "grade_changed"
    bucket_changed = "bucket_changed"
    bucket_entered = "bucket_entered"
    bucket_left = "bucket_left"
    drawdown_below = "drawdown_below"
    drawdown_above = "drawdown_above"
    median_return_above = "median_return_above"
    median_return_below = "median_return_below"
    top_n_entered = "top_n_entered"
    top_n_left = "top_n_left"


class ReturnPeriod(IntEnum):
    integer_7 = 7
    integer_30 = 30
    integer_90 = 90
    integer_180 = 180
    integer_365 = 365


class CreateKeyRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: Annotated[
        str, Field(examples=["laptop"], max_length=100, min_length=1, pattern="\\S")
    ]
    """
    A name to recognise the key by: 1 to 100 characters, not only
    white space (surrounding white space is dropped).
    """


class CreateWebhookRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    url: Annotated[str, Field(max_length=2048)]
    """
    An `http` or `https` URL, at most 2048 bytes; private, loopback and
    link-local addresses are refused unless the operator allows them.
    """


class CreatedKey(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    key: str
    """
    `svc_` + 64 hex digits; shown once, stored only as SHA-256.
    """
    key_prefix: str
    """
    The first characters of the key.
    """
    name: str
    """
    The name given.
    """
    id: UUID
    """
    Key id (to revoke it).
    """
    created_at: AwareDatetime
    """
    Creation time.
    """


class DataSource(Enum):
    real = "real"
    synthetic = "synthetic"
    ingested = "ingested"


class DataSources(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    real: Annotated[int, Field(ge=0)]
    """
    Shipped real histories.
    """
    ingested: Annotated[int, Field(ge=0)]
    """
    Prices loaded by `forecast ingest`.
    """
    synthetic: Annotated[int, Field(ge=0)]
    """
    Generated prices.
    """


class DateRange(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    oldest: date_aliased
    """
    The earliest.
    """
    newest: date_aliased
    """
    The latest.
    """


class Delivery(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: str
    """
    UUID.
    """
    event_id: str | None = None
    """
    The event sent (null for a test call).
    """
    status: str
    """
    `pending` (waiting for its next attempt), `delivered` or `failed`
    (given up).
    """
    attempts: int
    """
    Attempts made.
    """
    last_status: int | None = None
    """
    HTTP status of the last attempt, if one was answered.
    """
    last_error: str | None = None
    """
    Why the last attempt failed.
    """
    created_at: AwareDatetime
    """
    When it was queued.
    """
    next_attempt_at: AwareDatetime | None = None
    """
    When the next attempt is due (pending only).
    """
    finished_at: AwareDatetime | None = None
    """
    When it was delivered or given up.
    """


class Count(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class DistributionBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    bins: list[float]
    counts: list[Count]


class DrawnWindow(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    from_: Annotated[date_aliased | None, Field(alias="from")] = None
    """
    `draw_from` (null: from the first row).
    """
    to: date_aliased | None = None
    """
    `draw_to` (null: to the last row).
    """
    rows: Annotated[int, Field(ge=0)]
    """
    Rows of the window before thinning.
    """


class EquityPoint(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    date: date_aliased
    """
    Date.
    """
    equity: float
    """
    Portfolio value at that date's close.
    """


class ErrorBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    detail: str
    """
    What went wrong, naming the parameter or resource concerned.
    """


class FanPoint(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    date: date_aliased
    """
    The run's date at this day of the paths.
    """
    p5: float
    """
    5th percentile of equity.
    """
    p25: float
    """
    25th percentile.
    """
    p50: float
    """
    Median.
    """
    p75: float
    """
    75th percentile.
    """
    p95: float
    """
    95th percentile.
    """


class ForecastBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    return_period: Annotated[int, Field(ge=0)]
    """
    Horizon in calendar days.
    """
    central: float
    """
    Central estimate of the forward return (a mean, fraction).
    """
    p10: float
    """
    10th percentile of the forward return.
    """
    p90: float
    """
    90th percentile of the forward return.
    """
    central_se: float
    """
    Standard error of `central`.
    """
    reference: float
    """
    The outcome the grade compares with: the pooled mean of assets of
    the same kind of data (real and ingested, or synthetic), or the
    asset's own mean when `method` is `climatology`.
    """
    method: str
    """
    `calibrated` (fitted out of sample on the pooled history) or
    `climatology` (too little pooled history: the asset's own
    distribution only).
    """
    thin: bool
    """
    Too little evidence for the extreme letters (fewer than 10
    independent episodes in the bucket, or the central estimate's 80 %
    interval contains `reference`): the score is held within [20, 80].
    """


class PitHistogramItem(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class GradeBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    letter: str
    """
    A to F for the default scorer.
    """
    score: float
    """
    0 to 100.
    """


class GradeOutcome(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    grade: str
    """
    The letter.
    """
    count: Annotated[int, Field(ge=0)]
    """
    Month-ends with that grade and a realised return.
    """
    mean_realised_return: float | None = None
    """
    Mean realised return of those month-ends.
    """
    median_realised_return: float | None = None
    """
    Median realised return of those month-ends.
    """
    hit_rate: float | None = None
    """
    Share of them whose realised return was above 0.
    """


class HealthResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    status: Annotated[str, Field(examples=["ok"])]
    """
    `ok`, or `degraded` when the database is unreachable.
    """
    service: Annotated[str, Field(examples=["svc-api"])]
    """
    Always `svc-api`.
    """
    debug: dict[str, Any] | None = None
    """
    With `debug=1` and the admin token: version, uptime, environment,
    database counts, active plugins, the last grading run and the
    plugin limits.
    """


class IcPoint(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    date: date_aliased
    """
    The month-end.
    """
    ic: float
    """
    Spearman correlation of the scores with the realised returns.
    """
    assets: Annotated[int, Field(ge=0)]
    """
    Assets graded that month-end with a realised return.
    """


class KeyRecord(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: UUID
    """
    Key id.
    """
    key_prefix: Annotated[str, Field(examples=["svc_1a2b"])]
    """
    The first characters of the key, to recognise it.
    """
    name: str
    """
    The name given at creation.
    """
    last_used_at: AwareDatetime | None = None
    """
    Last authenticated request (minute precision).
    """
    created_at: AwareDatetime
    """
    Creation time.
    """


class Latency(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    mean: float
    """
    Mean.
    """
    p50: float
    """
    Median.
    """
    p95: float
    """
    95th percentile.
    """


class LoginRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    email: Annotated[
        str,
        Field(
            examples=["demo@forecast.local"],
            max_length=254,
            min_length=3,
            pattern="^[^@\\s\\x00-\\x1f\\x7f-\\x9f]+@[^@.\\s\\x00-\\x1f\\x7f-\\x9f][^@\\s\\x00-\\x1f\\x7f-\\x9f]*\\.[^@\\s\\x00-\\x1f\\x7f-\\x9f]*[^@.\\s\\x00-\\x1f\\x7f-\\x9f]$",
        ),
    ]
    """
    The account's e-mail (case-insensitive): at most 254 characters,
    `local@domain.tld`, without white space or control characters.
    """
    password: Annotated[str, Field(max_length=256, min_length=1)]
    """
    The password: at most 1,024 bytes (JSON Schema counts characters,
    so the documented bound is 256, which always fits; longer ASCII
    passwords up to 1,024 bytes are accepted too).
    """


class MarkReadRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ids: Annotated[list[str] | None, Field(max_length=100)] = None
    """
    Event ids (at most 100).
    """
    all: bool | None = None
    """
    Every event of the user.
    """


class MarkedRead(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    marked: Annotated[int, Field(ge=0)]
    """
    Events marked read now.
    """
    unread: int
    """
    Unread events left.
    """


class MatchRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    text: Annotated[
        str,
        Field(
            examples=["apple and bitcoin"], max_length=500, min_length=1, pattern="\\S"
        ),
    ]
    """
    What the user holds or follows, in their words: 1 to 500
    characters, not only white space.
    """


class MeanWithInterval(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    mean: float | None = None
    """
    Mean over the month-ends.
    """
    ci: Annotated[list[float] | None, Field(max_length=2, min_length=2)] = None
    """
    90 % interval by a moving-block bootstrap over month-ends.
    """
    dates: Annotated[int, Field(ge=0)]
    """
    Month-ends averaged.
    """


class Metric(Enum):
    return_ = "return"
    sharpe = "sharpe"
    sortino = "sortino"


class ObservedEvidence(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    bucket_samples: Annotated[int, Field(ge=0)]
    """
    Past rows that fell in the current bucket.
    """
    episodes: Annotated[int, Field(ge=0)]
    """
    Separate past episodes in the bucket.
    """
    win_rate: float | None = None
    """
    Share of those rows followed by a gain.
    """
    thin: bool
    """
    Whether the evidence is thin (too few samples or episodes to trust).
    """
    data_points: Annotated[int, Field(ge=0)]
    """
    Price rows analysed.
    """


class OkResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ok: bool
    """
    Always true.
    """


class PathSpread(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    p5: float
    """
    5th percentile.
    """
    p50: float
    """
    Median.
    """
    p95: float
    """
    95th percentile.
    """


class PluginKind(Enum):
    segmentation = "segmentation"
    scorer = "scorer"
    strategy = "strategy"
    matcher = "matcher"


class PluginSlot(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: PluginKind
    """
    The plugin's kind.
    """
    name: str
    """
    The active version's name.
    """


class PluginUsage(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    plugin: Annotated[str, Field(examples=["strategy/dip-buyer@0.1.0"])]
    """
    `kind/name@version`.
    """
    calls: Annotated[int, Field(ge=0)]
    """
    Calls made (`start` and one per rebalance).
    """
    fuel: Annotated[int | None, Field(ge=0)] = None
    """
    Fuel (wasmtime's instruction units) used by all calls; null for a
    plugin that is not metered (built-ins). Uploaded strategies are
    metered: each call may use 50,000,000 units plus 1,000,000 per asset
    of its input, else the run stops with 422 naming the plugin and the
    budget; the same request uses the same fuel on every run.
    """
    guest_ms: float
    """
    Time spent in the guest, milliseconds.
    """
    peak_memory_bytes: Annotated[int, Field(ge=0)]
    """
    The most linear memory its instance held, bytes.
    """
    log_lines_dropped: Annotated[int | None, Field(ge=0)] = None
    """
    Lines it wrote through `host-log` beyond the run's log budget (200
    lines, 64 KiB), dropped.
    """


class ProgressBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    phase: Annotated[str, Field(examples=["running"])]
    """
    `waiting` (for the heavy-work budget or plugin slots), `loading`
    (histories, with the signals computed beside them), `running` (the
    strategy over the calendar, `done` of `total` rows), `combinations`
    (a sweep's or walk-forward's, `done` of `total`) or `simulating` (a
    Monte Carlo's paths).
    """
    done: Annotated[int, Field(ge=0)]
    """
    Steps of the phase done.
    """
    total: Annotated[int, Field(ge=0)]
    """
    Steps of the phase (0 when not counted).
    """
    fraction: float | None = None
    """
    `done / total`, null when not counted.
    """
    elapsed_ms: Annotated[int, Field(ge=0)]
    """
    Milliseconds since the run was accepted.
    """


class Quantiles(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    p10: float
    p25: float
    p50: float
    p75: float
    p90: float


class RankBy(Enum):
    total_return = "total_return"
    cagr = "cagr"
    sharpe_ratio = "sharpe_ratio"
    sortino_ratio = "sortino_ratio"
    calmar_ratio = "calmar_ratio"
    max_drawdown = "max_drawdown"


class RankedAsset(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    rank: Annotated[int, Field(ge=0)]
    """
    1-based position in the whole filtered, sorted list (`offset` +
    position in this page + 1).
    """
    ticker: str
    name: str
    category: Category
    expected_return: float
    prediction_error: float
    current_drawdown: float
    current_price: float
    win_rate: float
    median_return: float
    median_error: float
    score: float
    grade: str
    """
    The scorer's letter (A to F for the default scorer).
    """
    data_source: DataSource
    last_price_date: date_aliased
    """
    The date of the last price graded.
    """
    currency: str
    """
    The currency of `current_price`, from the asset catalog (ISO 4217
    such as `USD`; may be empty when the catalog has none).
    """
    forecast: ForecastBody | None = None
    episodes: Annotated[int | None, Field(ge=0)] = None
    """
    Independent episodes of the current bucket (the graded verdict's
    `current_state.evidence.episodes`; absent where the engine reports
    no evidence).
    """


class Rebalance(Enum):
    daily = "daily"
    weekly = "weekly"
    monthly = "monthly"
    never = "never"


class RelativeMetrics(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    beta: float | None = None
    """
    `cov(r, b) / var(b)`; null when the benchmark never moved.
    """
    alpha: float | None = None
    """
    `(mean(r) - beta * mean(b)) * P`.
    """
    tracking_error: float | None = None
    """
    `sd(r - b) * sqrt(P)`.
    """
    information_ratio: float | None = None
    """
    `mean(r - b) / sd(r - b) * sqrt(P)`; null when the two never
    differ.
    """


class ResearchMetadata(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    strategy: str
    """
    Strategy name.
    """
    strategy_version: str
    """
    Its version.
    """
    engine_version: str
    """
    The segmentation engine's version.
    """
    start_date: date_aliased
    """
    First date of the runs.
    """
    end_date: date_aliased
    """
    Last date.
    """
    assets_count: Annotated[int, Field(ge=0)]
    """
    Assets in the runs' universe (the most any combination used).
    """
    combinations: Annotated[int, Field(ge=0)]
    """
    Combinations run.
    """
    signal_passes: Annotated[int, Field(ge=0)]
    """
    Passes of the engine over the universe: one per distinct set of
    engine parameters (`return_period`, `num_segments`, `decay_factor`,
    `metric`); combinations that share one share its signals.
    """
    signals_cached: Annotated[int, Field(ge=0)]
    """
    Assets whose signals came from the cache, over all passes.
    """
    periods_per_year: Annotated[int, Field(ge=0)]
    """
    Returns per year of the runs' calendar.
    """
    include_costs: bool
    """
    Whether trading costs were charged (the base request's).
    """
    calculated_at: AwareDatetime
    """
    When it was computed.
    """


class RevokeKeyRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: UUID
    """
    Id of one of the user's active keys.
    """


class RouteUsage(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    route: str
    """
    Method and route as the service names it (`GET /api/ranking`,
    `POST /web/api/backtest`: the web app's calls are its `/web` twins).
    """
    minute: Annotated[int, Field(ge=0)]
    """
    Units it cost this minute.
    """
    day: Annotated[int, Field(ge=0)]
    """
    Units it cost today (UTC).
    """


class RowForecast(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    central: float
    """
    Central estimate of the forward return.
    """
    p10: float
    """
    10th percentile.
    """
    p90: float
    """
    90th percentile.
    """
    climatology_mean: float
    """
    The asset's own mean forward return up to `date` (climatology).
    """
    climatology_p10: float
    """
    Its 10th percentile.
    """
    climatology_p90: float
    """
    Its 90th percentile.
    """


class ScatterBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    drawdown: float
    future_return: float
    segment: Annotated[int, Field(ge=0)]


class SegmentEvidenceBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    episodes: Annotated[int, Field(ge=0)]
    """
    Independent visits to the bucket whose first day's horizon has
    passed: maximal runs of the bucket's days in which consecutive days
    lie less than `return_period` calendar days apart.
    """
    median_return_ci: Annotated[
        list[float] | None, Field(max_length=2, min_length=2)
    ] = None
    """
    90 % interval `[low, high]` of the bucket's median outcome
    (`static_median_return`), by a bootstrap that draws whole episodes
    with replacement (1,000 resamples, fixed seed: the same input gives
    the same interval). Null with fewer than two episodes.
    """
    fell_further: float | None = None
    """
    Share of episodes whose drawdown went below the bucket's lower
    bound before the horizon. Null without episodes.
    """
    recovery_days_median: float | None = None
    """
    Median calendar days from an episode's first day to the first close
    at or above the peak before it, over the episodes that recovered.
    """
    recovered: Annotated[int, Field(ge=0)]
    """
    Episodes that regained their prior peak by the window's last day.
    """
    unrecovered: Annotated[int, Field(ge=0)]
    """
    Episodes that had not regained it by the window's last day.
    """


class SegmentPathsBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    paths: list[list[float]]
    p10: list[float]
    p25: list[float]
    p50: list[float]
    p75: list[float]
    p90: list[float]
    num_paths_total: Annotated[int, Field(ge=0)]


class SetWatchlistRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    tickers: Annotated[list[str], Field(examples=[["AAPL", "BTC-USD"]], max_length=50)]
    """
    Active tickers, at most 50; a repeated ticker is kept once, where it
    first appears.
    """


class ShadowReport(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: PluginKind
    """
    The kind shadowed.
    """
    candidate: str
    """
    Candidate label, `kind/name@version`.
    """
    sample: float
    """
    Share of requests sampled.
    """
    samples: Annotated[int, Field(ge=0)]
    """
    Comparisons made.
    """
    identical: Annotated[int, Field(ge=0)]
    """
    Comparisons whose answers were identical.
    """
    identical_share: float | None = None
    """
    `identical / samples` (none before the first sample).
    """
    max_differences: dict[str, float]
    """
    Largest absolute difference seen per field (fields that differed).
    """
    active_latency_ms: Latency | None = None
    candidate_latency_ms: Latency | None = None
    errors: Annotated[int, Field(ge=0)]
    """
    Candidate failures.
    """
    error_examples: list[str]
    """
    Up to five of their messages.
    """
    compared_with: list[str]
    """
    Active versions it was compared with.
    """


class ShadowRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: PluginKind
    """
    The candidate's kind (only `segmentation` can be shadowed).
    """
    name: str
    """
    Candidate name.
    """
    version: str
    """
    Candidate version.
    """
    sample: Annotated[float, Field(examples=[0.1], gt=0.0, le=1.0)]
    """
    Share of live requests recomputed by the candidate, in (0, 1].
    """


class ShadowStarted(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    shadow: ShadowRequest
    """
    The run.
    """


class Signals(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    expected_return: float
    prediction_error: float
    median_return: float
    median_error: float
    best_method: str
    best_error: float


class SkillScore(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    forecast: float
    """
    The forecast's mean loss.
    """
    climatology: float
    """
    Climatology's mean loss.
    """
    skill: float
    """
    1 − forecast / climatology: above 0 the forecast did better.
    """
    skill_ci: Annotated[list[float], Field(max_length=2, min_length=2)]
    """
    90 % interval of `skill` (the month-mean loss differential's
    Newey–West interval over climatology's mean loss).
    """
    dm_stat: float
    """
    Diebold–Mariano statistic of the month-mean loss differential
    (climatology minus forecast; HAC variance over the horizon's overlap).
    """
    dm_p: float
    """
    Its two-sided p-value.
    """


class SortKey(Enum):
    median_return = "median_return"
    expected_return = "expected_return"
    win_rate = "win_rate"
    prediction_error = "prediction_error"
    current_drawdown = "current_drawdown"
    current_price = "current_price"
    score = "score"
    ticker = "ticker"
    name = "name"
    category = "category"
    last_price_date = "last_price_date"


class SortOrder(Enum):
    asc = "asc"
    desc = "desc"


class SourceFilter(Enum):
    real = "real"
    synthetic = "synthetic"
    all = "all"


class SplitMetrics(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    total_return: float | None = None
    """
    Compounded return over the span.
    """
    cagr: float | None = None
    """
    Compound annual growth rate.
    """
    sharpe_ratio: float | None = None
    """
    Annualised Sharpe ratio.
    """
    sortino_ratio: float | None = None
    """
    Annualised Sortino ratio.
    """
    max_drawdown: float | None = None
    """
    Worst peak-to-trough fall (<= 0).
    """
    calmar_ratio: float | None = None
    """
    `cagr / abs(max_drawdown)`.
    """


class SplitMode(Enum):
    rolling = "rolling"
    expanding = "expanding"


class Spread(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    min: float
    """
    The least.
    """
    mean: float
    """
    The arithmetic mean.
    """
    max: float
    """
    The most.
    """


class StateEvidenceBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    thin: bool
    """
    True when the current bucket has fewer than 10 episodes or the 90 %
    interval of its median outcome contains the asset's unconditional
    median outcome: the bucket's figures are then hard to tell from
    chance. `insufficient_data` keeps the spec's meaning beside it.
    """
    reasons: list[str]
    """
    Each reason `thin` is true, in words; empty when it is false.
    """
    episodes: Annotated[int, Field(ge=0)]
    """
    Independent episodes of the current bucket (as its
    `segments[].evidence.episodes`).
    """
    unconditional_median_return: float | None = None
    """
    Median of every confirmed outcome of the window, whatever its
    bucket: what the bucket's median is compared with.
    """


class StrategyChange(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    shared: bool | None = None
    """
    Share with every Premium user (true) or keep it to yourself (false).
    """
    current_version: Annotated[str | None, Field(examples=["0.1.0"])] = None
    """
    The stored version that runs when a request names none.
    """


class StrategyManifest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: str
    """
    The strategy's name.
    """
    version: str
    """
    Its version.
    """
    world: str
    """
    The WIT world (`strategy`).
    """
    description: str | None = None
    """
    What it does.
    """
    licence: str | None = None
    """
    Its licence, as its author gave it (bundles only).
    """
    author: str | None = None
    """
    Who wrote it, as its author gave it (bundles only).
    """
    sha256: str
    """
    Hex SHA-256 of the component.
    """


class StrategyState(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    strategy: str
    """
    `@handle/name`.
    """
    current_version: str
    """
    The version that runs when a request names none.
    """
    shared: bool
    """
    Runnable by every Premium user.
    """
    versions: list[str]
    """
    Every stored version, newest first.
    """


class TopNItem(RootModel[int]):
    root: Annotated[int, Field(ge=1, le=500)]


class RebalanceEnum(Enum):
    daily = "daily"
    weekly = "weekly"
    monthly = "monthly"
    never = "never"


class ReturnPeriodItem(RootModel[int]):
    root: Annotated[int, Field(ge=7, le=365)]


class MetricEnum(Enum):
    return_ = "return"
    sharpe = "sharpe"
    sortino = "sortino"


class DecayFactorItem(RootModel[float]):
    root: Annotated[float, Field(ge=0.8, le=0.99)]


class NumSegment(RootModel[int]):
    root: Annotated[int, Field(ge=10, le=50)]


class ZscoreLookbackItem(RootModel[int]):
    root: Annotated[int, Field(ge=20, le=1260)]


class ZscoreEntryItem(RootModel[float]):
    root: Annotated[float, Field(gt=0.0, le=10.0)]


class ZscoreExitItem(RootModel[float]):
    root: Annotated[float, Field(ge=-10.0, le=10.0)]


class Sweep(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    top_n: Annotated[list[TopNItem] | None, Field(max_length=48, min_length=1)] = None
    rebalance: Annotated[
        list[RebalanceEnum] | None, Field(max_length=48, min_length=1)
    ] = None
    return_period: Annotated[
        list[ReturnPeriodItem] | None, Field(max_length=48, min_length=1)
    ] = None
    metric: Annotated[list[MetricEnum] | None, Field(max_length=48, min_length=1)] = (
        None
    )
    decay_factor: Annotated[
        list[DecayFactorItem] | None, Field(max_length=48, min_length=1)
    ] = None
    num_segments: Annotated[
        list[NumSegment] | None, Field(max_length=48, min_length=1)
    ] = None
    zscore_lookback: Annotated[
        list[ZscoreLookbackItem] | None, Field(max_length=48, min_length=1)
    ] = None
    zscore_entry: Annotated[
        list[ZscoreEntryItem] | None, Field(max_length=48, min_length=1)
    ] = None
    zscore_exit: Annotated[
        list[ZscoreExitItem] | None, Field(max_length=48, min_length=1)
    ] = None
    include_costs: Annotated[list[bool] | None, Field(max_length=48, min_length=1)] = (
        None
    )


class SweepRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    strategy: Annotated[str | None, Field(examples=["topn"], min_length=1)] = "topn"
    """
    Strategy plugin name (`GET /api/strategies` lists them).
    """
    tickers: Annotated[list[Ticker] | None, Field(max_length=3000, min_length=1)] = None
    benchmarks: Annotated[list[Benchmark] | None, Field(max_length=3)] = None
    weights: Annotated[
        dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], WeightsAdditionalProperty] | None,
        Field(examples=[{"^GSPC": 0.6, "^IXIC": 0.3}], max_length=3000, min_length=1),
    ] = None
    """
    Portfolio weights by ticker, for a strategy that takes them (`portfolio`, the default strategy when `weights` is given): each a share of equity in (0, 1], together at most 1 (the rest stays in cash). The universe is these tickers unless `tickers` names a wider one. `portfolio` trades back to them at every rebalance date; with `rebalance: "never"` it buys them once and holds. With `weights`, `top_n` defaults to 1.
    """
    category: Category | None = None
    initial_capital: Annotated[float | None, Field(gt=0.0, le=1000000000000.0)] = 100000
    """
    Equity at the start.
    """
    top_n: Annotated[int | None, Field(ge=1, le=500)] = 10
    """
    Positions.
    """
    rebalance: Rebalance | None = "monthly"
    return_period: Annotated[int | None, Field(ge=7, le=365)] = 90
    """
    Engine horizon in calendar days.
    """
    decay_factor: Annotated[float | None, Field(ge=0.8, le=0.99)] = 0.95
    """
    Engine EMA decay, rounded to a multiple of 0.001 before use
    (`metadata.decay_factor` is the value used).
    """
    num_segments: Annotated[int | None, Field(ge=10, le=50)] = 20
    """
    Engine buckets.
    """
    metric: Metric | None = "return"
    start_date: date_aliased | None = None
    """
    First date (default: 10 years before the end); on or before
    `end_date` when both are given.
    """
    end_date: date_aliased | None = None
    """
    Last date (default: the universe's latest date).
    """
    include_costs: bool | None = True
    """
    Charge trading costs.
    """
    zscore_lookback: Annotated[int | None, Field(ge=20, le=1260)] = 252
    """
    z-score window in rows.
    """
    zscore_entry: Annotated[float | None, Field(gt=0.0, le=10.0)] = 2
    """
    z-score entry threshold.
    """
    zscore_exit: Annotated[float | None, Field(ge=-10.0, le=10.0)] = 0
    """
    z-score exit threshold.
    """
    sweep: Annotated[
        Sweep, Field(examples=[{"return_period": [30, 90], "top_n": [5, 10, 20]}])
    ]
    """
    1 to 3 parameters, each with 1 to 48 distinct values of its backtest field's type and bounds; at most 48 combinations (the product of the lists' lengths)
    """
    rank_by: RankBy | None = None


class CellItem(RootModel[int]):
    root: Annotated[int, Field(ge=0)]


class TestDelivery(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    delivery: Delivery
    """
    The call as logged.
    """


class TickerMatch(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: str
    """
    Ticker.
    """
    name: str
    """
    Name.
    """
    category: Category
    """
    Category.
    """
    confidence: float
    """
    Confidence in [0, 1].
    """


class Tier(Enum):
    free = "free"
    lite = "lite"
    pro = "pro"
    premium = "premium"


class TimeSeriesBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    dates: list[date_aliased]
    prices: list[float]
    drawdowns: list[float]
    expected_returns: list[float]
    prediction_errors: list[float | None]
    prediction_error_cumavg: list[float | None]
    actual_returns: list[float | None]
    median_returns: list[float]
    median_errors: list[float | None]
    median_error_cumavg: list[float | None]
    projected_prices: list[float | None]


class TrackRecordRow(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    date: date_aliased
    """
    The month's last trading day: the grade uses rows up to it only.
    """
    grade: str
    """
    The grade `GET /api/analysis/{ticker}/verdict` gives with
    `end_date` = `date` and the same `return_period` and `metric`.
    """
    score: float
    """
    Its score in [0, 100].
    """
    predicted_median_return: float
    """
    The median prediction of that verdict (`current_state.median_return`).
    """
    realised_return: float | None = None
    """
    Close of the first day at least `return_period` calendar days after
    `date` over the close of `date`, minus 1; null while that day has
    not come.
    """
    forecast: RowForecast | None = None


class TradeBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    date: date_aliased
    """
    Fill date.
    """
    ticker: str
    """
    Asset.
    """
    side: str
    """
    `BUY` or `SELL`.
    """
    qty: float
    """
    Quantity, > 0.
    """
    price: float
    """
    Reference close of the fill.
    """
    cost: float
    """
    Trading cost charged on the fill (0 without `include_costs`).
    """
    realised_pnl: float | None = None
    """
    Profit or loss the fill realised, by the average-cost method, before
    costs: `null` for a fill that opens or grows a position; for one that
    shrinks, closes or reverses it, the closed quantity times (this price
    − the position's average entry price), the opposite for a short.
    Over a run without truncated trades, the realised P&L less all
    costs, plus what the open positions gained, is the equity's change.
    """


class UniverseGradeOutcome(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    grade: str
    """
    The letter.
    """
    count: Annotated[int, Field(ge=0)]
    """
    (asset, month-end) pairs with that grade and a realised return.
    """
    mean_realised_return: float | None = None
    """
    Mean realised return of those pairs.
    """
    mean_ci: Annotated[list[float] | None, Field(max_length=2, min_length=2)] = None
    """
    90 % interval of that mean by a moving-block bootstrap over
    month-ends (blocks as long as the horizon's overlap), fixed seed.
    """
    median_realised_return: float | None = None
    """
    Median realised return of those pairs.
    """
    hit_rate: float | None = None
    """
    Share of them with a realised return above 0.
    """
    mean_excess_return: float | None = None
    """
    Mean of (realised return − the equal-weight mean realised return of
    every covered asset at the same month-end).
    """


class UnreadCount(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    unread: int
    """
    Unread events.
    """


class UnusableAsset(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: str
    """
    Its ticker.
    """
    last_price_date: date_aliased | None = None
    """
    The date of its last price (null: no prices stored).
    """
    reason: str
    """
    Why it could not be used.
    """


class UpdateAlertRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    condition: Condition | None = None
    level: float | None = None
    """
    A new level.
    """
    bucket: Annotated[int | None, Field(ge=0, le=19)] = None
    """
    A new bucket.
    """
    top_n: Annotated[int | None, Field(ge=1, le=100)] = None
    """
    A new N.
    """
    return_period: ReturnPeriod | None = 90
    metric: Metric | None = None
    category: Category | None = None
    email: bool | None = None
    """
    E-mail digest on or off.
    """
    enabled: bool | None = None
    """
    Evaluate it or pause it.
    """


class UpdateWebhookRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    enabled: bool
    """
    Re-enable (counting failures from zero) or disable.
    """


class UploadedStrategy(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    strategy: Annotated[str, Field(examples=["@u3f2a91c0d4/dip-buyer"])]
    """
    What `strategy` names in a backtest request: `@handle/name`
    (add `@version` to pin a version).
    """
    version: Annotated[str, Field(examples=["0.1.0"])]
    """
    The version this upload stored (what the component reports).
    """
    sha256: str
    """
    Hex SHA-256 of the component; (owner, name, version) keeps it forever.
    """
    size: int
    """
    Size of the component in bytes.
    """
    description: str
    """
    What it does, in its author's words.
    """
    imports: list[str]
    """
    Every import of the component: the `strategy` world's, and WASI
    interfaces of a Rust standard library, which are linked as traps.
    """
    signer: str | None = None
    """
    Key id of the bundle's signer (`ed25519:…`); null when unsigned.
    """
    current_version: str
    """
    The version that runs when a request names none.
    """
    shared: bool
    """
    Runnable by every Premium user (false: by its owner only).
    """
    created: bool
    """
    False when this exact version was already stored (the same bytes).
    """


class UsageWindow(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    limit: Annotated[int, Field(ge=0)]
    """
    Units allowed in the window.
    """
    used: Annotated[int, Field(ge=0)]
    """
    Units spent in it.
    """
    remaining: Annotated[int, Field(ge=0)]
    """
    Units left.
    """
    reset: int
    """
    Unix seconds when the window ends (as `X-RateLimit-Reset`).
    """


class VerdictMetadata(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    return_period: Annotated[int, Field(ge=0)]
    num_segments: Annotated[int, Field(ge=0)]
    decay_factor: float
    metric: Metric
    calculated_at: AwareDatetime
    from_cache: bool
    data_points: Annotated[int, Field(ge=0)]
    asset_id: int
    engine_version: str
    scorer_version: str
    data_source: DataSource
    periods_per_year: Annotated[int, Field(ge=0)]
    last_price_date: date_aliased
    """
    The date of the asset's last stored price.
    """
    currency: str
    """
    The currency of the prices (`current_state.price`), from the asset
    catalog: ISO 4217 such as `USD` (may be empty when the catalog has
    none).
    """


class Sweep1(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    top_n: Annotated[list[TopNItem] | None, Field(max_length=48, min_length=1)] = None
    rebalance: Annotated[
        list[RebalanceEnum] | None, Field(max_length=48, min_length=1)
    ] = None
    return_period: Annotated[
        list[ReturnPeriodItem] | None, Field(max_length=48, min_length=1)
    ] = None
    metric: Annotated[list[MetricEnum] | None, Field(max_length=48, min_length=1)] = (
        None
    )
    decay_factor: Annotated[
        list[DecayFactorItem] | None, Field(max_length=48, min_length=1)
    ] = None
    num_segments: Annotated[
        list[NumSegment] | None, Field(max_length=48, min_length=1)
    ] = None
    zscore_lookback: Annotated[
        list[ZscoreLookbackItem] | None, Field(max_length=48, min_length=1)
    ] = None
    zscore_entry: Annotated[
        list[ZscoreEntryItem] | None, Field(max_length=48, min_length=1)
    ] = None
    zscore_exit: Annotated[
        list[ZscoreExitItem] | None, Field(max_length=48, min_length=1)
    ] = None
    include_costs: Annotated[list[bool] | None, Field(max_length=48, min_length=1)] = (
        None
    )


class WalkForwardRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    strategy: Annotated[str | None, Field(examples=["topn"], min_length=1)] = "topn"
    """
    Strategy plugin name (`GET /api/strategies` lists them).
    """
    tickers: Annotated[list[Ticker] | None, Field(max_length=3000, min_length=1)] = None
    benchmarks: Annotated[list[Benchmark] | None, Field(max_length=3)] = None
    weights: Annotated[
        dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], WeightsAdditionalProperty] | None,
        Field(examples=[{"^GSPC": 0.6, "^IXIC": 0.3}], max_length=3000, min_length=1),
    ] = None
    """
    Portfolio weights by ticker, for a strategy that takes them (`portfolio`, the default strategy when `weights` is given): each a share of equity in (0, 1], together at most 1 (the rest stays in cash). The universe is these tickers unless `tickers` names a wider one. `portfolio` trades back to them at every rebalance date; with `rebalance: "never"` it buys them once and holds. With `weights`, `top_n` defaults to 1.
    """
    category: Category | None = None
    initial_capital: Annotated[float | None, Field(gt=0.0, le=1000000000000.0)] = 100000
    """
    Equity at the start.
    """
    top_n: Annotated[int | None, Field(ge=1, le=500)] = 10
    """
    Positions.
    """
    rebalance: Rebalance | None = "monthly"
    return_period: Annotated[int | None, Field(ge=7, le=365)] = 90
    """
    Engine horizon in calendar days.
    """
    decay_factor: Annotated[float | None, Field(ge=0.8, le=0.99)] = 0.95
    """
    Engine EMA decay, rounded to a multiple of 0.001 before use
    (`metadata.decay_factor` is the value used).
    """
    num_segments: Annotated[int | None, Field(ge=10, le=50)] = 20
    """
    Engine buckets.
    """
    metric: Metric | None = "return"
    start_date: date_aliased | None = None
    """
    First date (default: 10 years before the end); on or before
    `end_date` when both are given.
    """
    end_date: date_aliased | None = None
    """
    Last date (default: the universe's latest date).
    """
    include_costs: bool | None = True
    """
    Charge trading costs.
    """
    zscore_lookback: Annotated[int | None, Field(ge=20, le=1260)] = 252
    """
    z-score window in rows.
    """
    zscore_entry: Annotated[float | None, Field(gt=0.0, le=10.0)] = 2
    """
    z-score entry threshold.
    """
    zscore_exit: Annotated[float | None, Field(ge=-10.0, le=10.0)] = 0
    """
    z-score exit threshold.
    """
    sweep: Annotated[
        Sweep1, Field(examples=[{"return_period": [30, 90], "top_n": [5, 10, 20]}])
    ]
    """
    1 to 3 parameters, each with 1 to 48 distinct values of its backtest field's type and bounds; at most 48 combinations (the product of the lists' lengths)
    """
    rank_by: RankBy | None = None
    train_years: Annotated[int | None, Field(ge=1, le=20)] = 3
    """
    Years of each train split, 1 to 20 (default 3).
    """
    test_years: Annotated[int | None, Field(ge=1, le=10)] = 1
    """
    Years of each test split, 1 to 10 (default 1); the splits move on by
    this much.
    """
    mode: SplitMode | None = None


class WatchlistItem(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: Annotated[str, Field(examples=["AAPL"])]
    """
    Ticker.
    """
    name: str
    """
    Display name.
    """
    category: Category
    """
    Category.
    """
    data_source: DataSource
    """
    Where its prices come from.
    """
    currency: str
    """
    The currency of its prices, from the asset catalog: ISO 4217 such
    as `USD` (may be empty when the catalog has none).
    """


class Webhook(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: str
    """
    UUID.
    """
    url: str
    """
    Where events are POSTed.
    """
    enabled: bool
    """
    Whether calls are made.
    """
    consecutive_failures: int
    """
    Failed attempts since the last success.
    """
    disabled_reason: str | None = None
    """
    Why the service disabled it, if it did.
    """
    created_at: AwareDatetime
    """
    When it was created.
    """


class ActiveVersion(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: PluginKind
    """
    Kind.
    """
    name: str
    """
    Name.
    """
    version: str
    """
    Version.
    """


class AddedPlugin(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: PluginKind
    """
    Kind.
    """
    name: str
    """
    Name.
    """
    version: str
    """
    Version.
    """
    sha256: str
    """
    Hex SHA-256 of the component.
    """
    size: int
    """
    Size in bytes.
    """


class AlertSpec(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    condition: Condition
    """
    What it watches.
    """
    level: float | None = None
    """
    The level of `drawdown_*` (a fraction in [-1, 0]) and
    `median_return_*` (a fraction in [-1, 10]).
    """
    bucket: Annotated[int | None, Field(ge=0)] = None
    """
    The bucket of `bucket_entered` / `bucket_left`: 0 (nearest the
    high) to 19, of the verdict's 20 equal-width buckets.
    """
    top_n: Annotated[int | None, Field(ge=0)] = None
    """
    N of `top_n_*` (1 to 100).
    """
    return_period: Annotated[int, Field(ge=0)]
    """
    The graded horizon of the verdict or ranking watched.
    """
    metric: Metric
    """
    The graded metric of the verdict or ranking watched.
    """
    category: Category | None = None
    email: bool
    """
    Whether its events go into the owner's e-mail digest.
    """


class AnalysisMetadata(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    return_period: Annotated[int, Field(ge=0)]
    num_segments: Annotated[int, Field(ge=0)]
    decay_factor: float
    calculated_at: AwareDatetime
    from_cache: bool
    data_points: Annotated[int, Field(ge=0)]
    asset_id: int
    metric: Metric
    engine_version: str
    data_source: DataSource
    periods_per_year: Annotated[int, Field(ge=0)]
    start_date: date_aliased
    end_date: date_aliased
    last_price_date: date_aliased
    """
    The date of the asset's last stored price (histories end on
    different days; `end_date` is that of the analysed window).
    """
    time_series_rows: Annotated[int, Field(ge=0)]
    """
    Rows of the analysed window, hence of `time_series` before any
    thinning (`data_points`, whatever `max_points` is).
    """
    max_points: Annotated[int | None, Field(ge=100, le=20000)]
    """
    The `max_points` asked for (null without it): `time_series` then
    holds at most this many of the `time_series_rows` rows.
    """
    drawn: DrawnWindow | None


class AssetInfo(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: str
    name: str
    category: Category
    long_name: str
    sector: str
    industry: str
    summary: str
    logo_url: str
    market_cap: int
    exchange: str
    currency: str
    website: str
    from_cache: bool
    """
    Whether the metadata came from the 7-day cache.
    """
    data_source: DataSource
    last_price_date: date_aliased | None = None
    """
    The date of its last price (null: no prices stored).
    """


class AssetItem(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: int
    """
    Stable id.
    """
    ticker: str
    """
    Ticker symbol.
    """
    name: str
    """
    Display name.
    """
    category: Category
    """
    Category.
    """
    is_active: bool
    """
    Listed (always true here: only active assets are listed).
    """
    is_premium: bool
    """
    Premium-only asset.
    """
    data_source: DataSource
    """
    Provenance of its prices; `synthetic` prices are generated.
    """
    last_price_date: date_aliased | None = None
    """
    The date of its last price (null: no prices stored).
    """


class AssetListResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    assets: list[AssetItem]
    """
    By id.
    """
    total: Annotated[int, Field(ge=0)]
    """
    `assets.len()`.
    """


class BacktestMetadata(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    assets_count: Annotated[int, Field(ge=0)]
    """
    Assets in the universe (300 rows by the end and a row in the window).
    """
    data_points: Annotated[int, Field(ge=0)]
    """
    Price rows of those assets inside the window.
    """
    rebalance_dates: Annotated[int, Field(ge=0)]
    """
    Decisions taken.
    """
    calculated_at: AwareDatetime
    """
    When this answer was computed.
    """
    strategy: str
    """
    Strategy name.
    """
    strategy_version: str
    """
    Strategy version.
    """
    engine_version: str
    """
    Engine version that produced the signals.
    """
    start_date: date_aliased
    """
    First calendar date.
    """
    end_date: date_aliased
    """
    Last calendar date.
    """
    periods_per_year: Annotated[int, Field(ge=0)]
    """
    365 when the calendar has weekend dates, else 252.
    """
    include_costs: bool
    """
    Whether costs were charged.
    """
    cost_bps: dict[str, float]
    """
    Cost per side in basis points, per category of the universe.
    """
    signals_cached: Annotated[int, Field(ge=0)]
    """
    Assets whose signals came from the signal cache.
    """
    decay_factor: float | None = None
    """
    The engine decay used: the request's `decay_factor` rounded to a
    multiple of 0.001.
    """
    trades_total: Annotated[int | None, Field(ge=0)] = None
    """
    Fills the run made (`metrics.total_trades`); `trades` holds at most
    the first 10,000 of them, in date order.
    """
    trades_truncated: bool | None = None
    """
    True when `trades` holds only the first 10,000 fills of
    `trades_total`.
    """
    data_sources: DataSources
    """
    Provenance of the prices of the `assets_count` assets used.
    """
    unusable_assets_count: Annotated[int, Field(ge=0)]
    """
    Assets of the requested universe the run could not use for lack of
    data in its window (all of them, however many).
    """
    unusable_assets: list[UnusableAsset]
    """
    The first 500 of them by ticker, each with the reason.
    """
    plugin_usage: list[PluginUsage] | None = None
    """
    What each plugin of the run used: the strategy's calls (the
    engine's signals are computed once per asset and cached, and are
    not counted here).
    """
    benchmarks_left_out: list[str] | None = None
    """
    Benchmarks asked for by ticker (or the default one) without a price
    on or before the window's first day or without one after it inside
    the window, so they are not in `benchmarks`.
    """


class BacktestRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    strategy: Annotated[str | None, Field(examples=["topn"], min_length=1)] = "topn"
    """
    Strategy plugin name (`GET /api/strategies` lists them).
    """
    tickers: Annotated[list[Ticker] | None, Field(max_length=3000, min_length=1)] = None
    benchmarks: Annotated[list[Benchmark] | None, Field(max_length=3)] = None
    weights: Annotated[
        dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], WeightsAdditionalProperty] | None,
        Field(examples=[{"^GSPC": 0.6, "^IXIC": 0.3}], max_length=3000, min_length=1),
    ] = None
    """
    Portfolio weights by ticker, for a strategy that takes them (`portfolio`, the default strategy when `weights` is given): each a share of equity in (0, 1], together at most 1 (the rest stays in cash). The universe is these tickers unless `tickers` names a wider one. `portfolio` trades back to them at every rebalance date; with `rebalance: "never"` it buys them once and holds. With `weights`, `top_n` defaults to 1.
    """
    category: Category | None = None
    initial_capital: Annotated[float | None, Field(gt=0.0, le=1000000000000.0)] = 100000
    """
    Equity at the start.
    """
    top_n: Annotated[int | None, Field(ge=1, le=500)] = 10
    """
    Positions.
    """
    rebalance: Rebalance | None = "monthly"
    return_period: Annotated[int | None, Field(ge=7, le=365)] = 90
    """
    Engine horizon in calendar days.
    """
    decay_factor: Annotated[float | None, Field(ge=0.8, le=0.99)] = 0.95
    """
    Engine EMA decay, rounded to a multiple of 0.001 before use
    (`metadata.decay_factor` is the value used).
    """
    num_segments: Annotated[int | None, Field(ge=10, le=50)] = 20
    """
    Engine buckets.
    """
    metric: Metric | None = "return"
    start_date: date_aliased | None = None
    """
    First date (default: 10 years before the end); on or before
    `end_date` when both are given.
    """
    end_date: date_aliased | None = None
    """
    Last date (default: the universe's latest date).
    """
    include_costs: bool | None = True
    """
    Charge trading costs.
    """
    zscore_lookback: Annotated[int | None, Field(ge=20, le=1260)] = 252
    """
    z-score window in rows.
    """
    zscore_entry: Annotated[float | None, Field(gt=0.0, le=10.0)] = 2
    """
    z-score entry threshold.
    """
    zscore_exit: Annotated[float | None, Field(ge=-10.0, le=10.0)] = 0
    """
    z-score exit threshold.
    """


class CreateAlertRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: Annotated[str | None, Field(max_length=40)] = None
    """
    The asset watched; give this or `watchlist: true`.
    """
    watchlist: bool | None = None
    """
    Watch every asset of the owner's watchlist (as it is at each
    evaluation) instead of one ticker.
    """
    condition: Condition
    """
    What to watch.
    """
    level: float | None = None
    """
    See [`AlertSpec::level`].
    """
    bucket: Annotated[int | None, Field(ge=0, le=19)] = None
    """
    See [`AlertSpec::bucket`].
    """
    top_n: Annotated[int | None, Field(ge=1, le=100)] = None
    """
    See [`AlertSpec::top_n`].
    """
    return_period: ReturnPeriod | None = 90
    metric: Metric | None = None
    category: Category | None = None
    email: bool | None = None
    """
    Include its events in the e-mail digest (default true).
    """
    enabled: bool | None = None
    """
    Evaluate it (default true).
    """


class CreatedWebhook(Webhook):
    model_config = ConfigDict(
        extra="allow",
    )
    secret: str
    """
    The signing secret: `X-Forecast-Signature: t=<unix seconds>,v1=<hex
    of HMAC-SHA256(secret, "<t>.<body>")>`. Not shown again.
    """


class CurrentStateBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    price: float
    drawdown: float
    segment: Annotated[int, Field(ge=0)]
    expected_return: float
    prediction_error: float
    median_return: float
    median_error: float
    best_method: str
    best_error: float
    insufficient_data: bool
    confirmed_count: Annotated[int, Field(ge=0)]
    evidence: StateEvidenceBody | None


class DeliveryLog(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    webhook: Webhook
    """
    The endpoint.
    """
    deliveries: list[Delivery]
    """
    Its newest deliveries (at most 50), newest first.
    """


class ForecastEvaluation(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    rows: Annotated[int, Field(ge=0)]
    """
    Rows (asset, month-end) with a forecast and a realised return.
    """
    months: Annotated[int, Field(ge=0)]
    """
    Month-ends among them.
    """
    lag: Annotated[int, Field(ge=0)]
    """
    HAC lag in months (the horizon's overlap).
    """
    crps: SkillScore
    """
    CRPS of the forecast as a normal with its p10–p90 spread.
    """
    quantile_loss: SkillScore
    """
    Mean pinball loss of p10 and p90.
    """
    squared_error: SkillScore
    """
    Squared error of the central estimate.
    """
    calibration_intercept: CoefficientBody
    """
    Intercept of realised on central (0 when calibrated).
    """
    calibration_slope: CoefficientBody
    """
    Slope of realised on central (1 when calibrated).
    """
    coverage: float
    """
    Share of realised returns within the 80 % interval.
    """
    climatology_coverage: float
    """
    The same for climatology's p10–p90.
    """
    pit_histogram: list[PitHistogramItem]
    """
    Realised returns' PIT under the forecast, in ten bins of 0.1.
    """
    reliability: list[CalibrationBin]
    """
    Rows by decile of the central forecast: mean predicted against
    mean realised.
    """


class Listed(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: PluginKind
    """
    Kind.
    """
    name: str
    """
    Name.
    """
    version: str
    """
    Version.
    """
    sha256: str
    """
    Hex SHA-256.
    """
    size: int
    """
    Bytes.
    """
    active: bool
    """
    Whether it is the active version of its slot.
    """
    shadow: bool
    """
    Whether it is being shadowed.
    """
    builtin: bool
    """
    Registered from the binary.
    """
    added_by: str
    """
    Who added it.
    """
    added_at: str
    """
    When (RFC 3339).
    """
    activated_by: str | None = None
    """
    Who activated the active version (with `(forced: <reason>)` when
    the evidence gate was overridden); absent for other versions.
    """


class Me(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    email: str
    """
    E-mail, lower-cased.
    """
    tier: Tier
    """
    Subscription tier.
    """
    upgrade_url: str | None
    """
    Where a Free user upgrades to Premium: an absolute http(s) URL set
    by the operator (`FORECAST_UPGRADE_URL`), or null when none is.
    """


class MentionMatches(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    text: Annotated[str, Field(examples=["tesla"])]
    """
    The words of the text that name it, as typed (filler such as "I
    own" or "some" left out).
    """
    matches: list[TickerMatch]
    """
    Its best matches, at most three, best first; empty when the words
    name nothing in the catalog.
    """
    sure: bool
    """
    Whether the first match is sure: its confidence is at least 0.9
    (of the answers reported that confident, at least 90 % were right
    on held-out data).
    """


class MetricsBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    total_return: float | None = None
    """
    `E_N/E_0 - 1`.
    """
    cagr: float | None = None
    """
    Compound annual growth rate.
    """
    sharpe_ratio: float | None = None
    """
    Annualised Sharpe ratio of the curve's returns.
    """
    sortino_ratio: float | None = None
    """
    Annualised Sortino ratio of the curve's returns.
    """
    max_drawdown: float | None = None
    """
    Worst peak-to-trough fall (<= 0).
    """
    final_equity: float
    """
    Equity at the end.
    """
    years: float
    """
    Returns in the curve / periods per year.
    """
    total_costs: float
    """
    Sum of trading costs.
    """
    cost_drag_pct: float
    """
    Costs as a percentage of the initial capital.
    """
    total_trades: Annotated[int, Field(ge=0)]
    """
    Fills.
    """
    calmar_ratio: float | None = None
    """
    `cagr / abs(max_drawdown)`; null without a drawdown.
    """
    ulcer_index: float | None = None
    """
    Root mean square of the daily drawdowns, `sqrt(sum(dd^2) / (N - 1))`.
    """
    longest_drawdown_days: int
    """
    Calendar days of the longest drawdown, from the first close under a
    peak to the last, inclusive (0 without one).
    """
    longest_drawdown_recovery_days: int | None = None
    """
    Calendar days from that drawdown's lowest close to the close back at
    its peak; null while it has not recovered.
    """
    var_95: float | None = None
    """
    95 % value at risk of a daily return, normal: `mean + sd * z(0.05)`
    (negative: a loss).
    """
    cvar_95: float | None = None
    """
    95 % conditional value at risk (expected shortfall), normal:
    `mean - sd * φ(z(0.05)) / 0.05`, the mean of the returns beyond
    `var_95` under the same normal distribution.
    """
    exposure: float | None = None
    """
    Share of days that began with money invested, 0 to 1.
    """
    turnover: float | None = None
    """
    Share of the portfolio traded per year, one-sided: the value of all
    fills / 2 / mean equity / years.
    """
    best_month: float | None = None
    """
    Best calendar month's compounded return.
    """
    worst_month: float | None = None
    """
    Worst calendar month's compounded return.
    """
    winning_months: float | None = None
    """
    Share of calendar months with a positive return among those with a
    non-zero one.
    """
    relative: dict[str, RelativeMetrics]
    """
    Against each benchmark of `benchmarks`, by name.
    """


class ModelCard(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    model: str
    """
    `kind/name@version` of the part the card describes.
    """
    return_period: Annotated[int, Field(ge=0)]
    """
    Horizon in calendar days.
    """
    source: str
    """
    The prices the rows come from (`real`: shipped and ingested).
    """
    first_date: date_aliased | None = None
    """
    First month-end evaluated.
    """
    last_date: date_aliased | None = None
    """
    Last month-end evaluated.
    """
    evaluation: ForecastEvaluation | None = None


class ModelComparison(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    return_period: Annotated[int, Field(ge=0)]
    """
    Horizon in calendar days.
    """
    rows: Annotated[int, Field(ge=0)]
    """
    (asset, month-end) rows both versions forecast.
    """
    months: Annotated[int, Field(ge=0)]
    """
    Month-ends among them.
    """
    a: ModelCard
    """
    The first version (for the gate: the active one).
    """
    b: ModelCard
    """
    The second version (for the gate: the candidate).
    """
    crps_differential: float
    """
    Mean CRPS of `a` minus `b` over the rows (each month's sum over the
    mean rows per month, averaged over months): above 0, `b` forecast
    better.
    """
    crps_differential_se: float
    """
    Its Newey–West standard error (lag: the horizon's overlap in months).
    """
    dm_stat: float
    """
    Diebold–Mariano statistic.
    """
    dm_p: float
    """
    Its two-sided p-value.
    """
    b_significantly_worse: bool
    """
    Whether `b` is significantly worse than `a` at 5 % (the activation
    gate refuses such a candidate without `force`).
    """
    verdict: str
    """
    The result in words.
    """


class ModelsResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    engine: str
    """
    The active engine, `segmentation/name@version`.
    """
    scorer: str
    """
    The active scorer, `scorer/name@version`.
    """
    run_id: str | None = None
    """
    The grading run the cards come from; none before the first run.
    """
    cards: list[ModelCard]
    """
    One card per graded horizon (metric `return`).
    """


class MonteCarloRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    strategy: Annotated[str | None, Field(examples=["topn"], min_length=1)] = "topn"
    """
    Strategy plugin name (`GET /api/strategies` lists them).
    """
    tickers: Annotated[list[Ticker] | None, Field(max_length=3000, min_length=1)] = None
    benchmarks: Annotated[list[Benchmark] | None, Field(max_length=3)] = None
    weights: Annotated[
        dict[Annotated[str, StringConstraints(min_length=1, max_length=64)], WeightsAdditionalProperty] | None,
        Field(examples=[{"^GSPC": 0.6, "^IXIC": 0.3}], max_length=3000, min_length=1),
    ] = None
    """
    Portfolio weights by ticker, for a strategy that takes them (`portfolio`, the default strategy when `weights` is given): each a share of equity in (0, 1], together at most 1 (the rest stays in cash). The universe is these tickers unless `tickers` names a wider one. `portfolio` trades back to them at every rebalance date; with `rebalance: "never"` it buys them once and holds. With `weights`, `top_n` defaults to 1.
    """
    category: Category | None = None
    initial_capital: Annotated[float | None, Field(gt=0.0, le=1000000000000.0)] = 100000
    """
    Equity at the start.
    """
    top_n: Annotated[int | None, Field(ge=1, le=500)] = 10
    """
    Positions.
    """
    rebalance: Rebalance | None = "monthly"
    return_period: Annotated[int | None, Field(ge=7, le=365)] = 90
    """
    Engine horizon in calendar days.
    """
    decay_factor: Annotated[float | None, Field(ge=0.8, le=0.99)] = 0.95
    """
    Engine EMA decay, rounded to a multiple of 0.001 before use
    (`metadata.decay_factor` is the value used).
    """
    num_segments: Annotated[int | None, Field(ge=10, le=50)] = 20
    """
    Engine buckets.
    """
    metric: Metric | None = "return"
    start_date: date_aliased | None = None
    """
    First date (default: 10 years before the end); on or before
    `end_date` when both are given.
    """
    end_date: date_aliased | None = None
    """
    Last date (default: the universe's latest date).
    """
    include_costs: bool | None = True
    """
    Charge trading costs.
    """
    zscore_lookback: Annotated[int | None, Field(ge=20, le=1260)] = 252
    """
    z-score window in rows.
    """
    zscore_entry: Annotated[float | None, Field(gt=0.0, le=10.0)] = 2
    """
    z-score entry threshold.
    """
    zscore_exit: Annotated[float | None, Field(ge=-10.0, le=10.0)] = 0
    """
    z-score exit threshold.
    """
    runs: Annotated[int | None, Field(examples=[1000], ge=1, le=5000)] = None
    """
    Paths to draw, 1 to 5,000 (default 1,000).
    """
    block_days: Annotated[int | None, Field(examples=[20], ge=1, le=250)] = None
    """
    Mean length of the resampled blocks in days, 1 to 250 (default 20;
    1 draws single days).
    """
    seed: Annotated[int | None, Field(examples=[1], ge=0, le=9007199254740992)] = None
    """
    Seed of the draws, 0 to 2^53 (default 1): the same request and
    seed give the same figures.
    """


class MonteCarloResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    runs: Annotated[int, Field(ge=0)]
    """
    Paths drawn.
    """
    block_days: Annotated[int, Field(ge=0)]
    """
    Mean block length used.
    """
    seed: Annotated[int, Field(ge=0)]
    """
    Seed used.
    """
    days: Annotated[int, Field(ge=0)]
    """
    Daily returns of the run (and days of each path).
    """
    cagr: PathSpread
    """
    Compound annual growth rate of the paths.
    """
    max_drawdown: PathSpread
    """
    Maximum drawdown of the paths (<= 0).
    """
    final_equity: PathSpread
    """
    Final equity of the paths.
    """
    probability_of_loss: float
    """
    Share of paths ending below the initial capital.
    """
    probability_of_drawdown_beyond_50: float
    """
    Share of paths whose drawdown went beyond -50 %.
    """
    fan: list[FanPoint]
    """
    Percentiles of equity along the paths, at most 500 dates (every
    k-th day of a longer run, the last always).
    """
    metrics: MetricsBody
    """
    The metrics of the run itself.
    """
    metadata: BacktestMetadata
    """
    About the run.
    """


class Observation(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    letter: str | None = None
    """
    Grade letter (of the alert's horizon and metric).
    """
    score: float | None = None
    """
    The scorer's score.
    """
    bucket: Annotated[int | None, Field(ge=0)] = None
    """
    The drawdown bucket (0 nearest the high).
    """
    bucket_lower: float | None = None
    """
    The bucket's drawdown range, lower bound.
    """
    bucket_upper: float | None = None
    """
    The bucket's drawdown range, upper bound.
    """
    drawdown: float | None = None
    """
    Drawdown from the running high (a fraction ≤ 0).
    """
    median_return: float | None = None
    """
    Rolling median forward return of the current bucket.
    """
    median_error: float | None = None
    """
    How wrong that median was before: its mean absolute error.
    """
    price: float | None = None
    """
    Last close.
    """
    last_price_date: date_aliased | None = None
    """
    Date of the last close.
    """
    rank: Annotated[int | None, Field(ge=0)] = None
    """
    `top_n_*`: the asset's place in the ranking.
    """
    ranked: Annotated[int | None, Field(ge=0)] = None
    """
    `top_n_*`: how many assets the ranking holds.
    """
    evidence: ObservedEvidence | None = None
    forecast: ForecastBody | None = None


class PluginList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    plugins: list[Listed]
    """
    The versions.
    """


class RankingMetadata(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    total_assets: Annotated[int, Field(ge=0)]
    """
    Graded assets of the snapshot for this period and metric.
    """
    filtered_assets: Annotated[int, Field(ge=0)]
    """
    After every filter (`category`/`categories`, `q`, `max_age_days`,
    the screener's),
    before `offset` and `limit`.
    """
    offset: Annotated[int, Field(ge=0)]
    """
    Ranked assets skipped before the first returned (the `offset` asked
    for; 0 without it).
    """
    data_sources: DataSources
    """
    Provenance of the prices of the `filtered_assets`.
    """
    stale_excluded: Annotated[int, Field(ge=0)]
    """
    Assets left out by `max_age_days` (0 without it), among those the
    other filters kept.
    """
    last_price_dates: DateRange | None = None
    calculated_at: AwareDatetime
    """
    When the snapshot's grading run finished.
    """
    return_period: Annotated[int, Field(ge=0)]
    metric: Metric
    sort_by: SortKey
    sort: SortOrder
    engine_version: str
    scorer_version: str


class RankingResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ranked_assets: list[RankedAsset]
    """
    At most `limit`, in the order asked for, from position `offset`.
    """
    metadata: RankingMetadata
    """
    What the ranking is of.
    """


class ResourceFigures(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    runs: Annotated[int, Field(ge=0)]
    """
    Runs the figures cover.
    """
    calls: Spread
    """
    Calls per run (`start` and one per rebalance).
    """
    fuel: Spread | None = None
    guest_ms: Spread
    """
    Time in the guest per run, milliseconds.
    """
    peak_memory_bytes: Spread
    """
    The most linear memory its instance held in a run, bytes.
    """


class SegmentBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    segment_idx: Annotated[int, Field(ge=0)]
    lower_bound: float
    upper_bound: float
    count: Annotated[int, Field(ge=0)]
    expected_return: float | None = None
    avg_return: float | None = None
    median_return: float | None = None
    static_median_return: float | None = None
    max_loss: float | None = None
    win_rate: float | None = None
    outcome_quantiles: Quantiles | None
    evidence: SegmentEvidenceBody | None


class Split(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    train_start: date_aliased
    """
    First date of the train split.
    """
    train_end: date_aliased
    """
    Last date of the train split.
    """
    test_start: date_aliased
    """
    First date of the test split.
    """
    test_end: date_aliased
    """
    Last date of the test split.
    """
    chosen: dict[str, Any]
    """
    The combination with the best `rank_by` on the train split.
    """
    in_sample: SplitMetrics
    """
    Its figures on the train split.
    """
    out_of_sample: SplitMetrics
    """
    Its figures on the test split.
    """


class StrategyItem(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: str
    """
    What `strategy` names in a backtest request.
    """
    version: str
    """
    Its version.
    """
    description: str
    """
    What it does, in its author's words.
    """
    sha256: str
    """
    SHA-256 of the component.
    """
    visibility: Annotated[str | None, Field(examples=["builtin"])] = None
    """
    `builtin` (the server's, the registry's or FORECAST_PLUGIN_DIR's),
    `shared` (an author's, runnable by every Premium user) or `private`
    (yours, runnable by you only).
    """
    owner: str | None = None
    """
    The author's handle (`@u…`) for uploaded strategies; null for built-ins.
    """
    signer: str | None = None
    """
    Key id of the bundle's signer (`ed25519:…`); null when unsigned.
    The signer vouches for the bytes, not for the account: anyone may
    upload a bundle someone else signed, and `owner` is who did.
    """
    versions: list[str] | None = None
    """
    The stored versions of an uploaded strategy you may run, newest
    first (empty for built-ins): all of your own; of another account's,
    only those this server's trust policy admits.
    """
    owned: bool | None = None
    """
    Yours: you may share it, pick its version or delete it.
    """
    resources: ResourceFigures | None = None
    imports: list[str] | None = None
    """
    What the component imports, by name (whatever the `strategy` world
    does not provide is linked as a trap).
    """
    wit_version: Annotated[str | None, Field(examples=["1.6.0"])] = None
    """
    The version of the `forecast:plugins` WIT package the component was
    built against (from its imports); null when it imports none of it.
    """
    manifest: StrategyManifest | None = None


class StrategyList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    strategies: list[StrategyItem]
    """
    By name.
    """


class SweepRow(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    params: dict[str, Any]
    """
    Each swept parameter's value, by name.
    """
    cell: list[CellItem]
    """
    Index of each value on its axis (`axes` order).
    """
    score: float | None = None
    """
    The `rank_by` figure; null where undefined.
    """
    rank: Annotated[int | None, Field(ge=0)] = None
    """
    1 for the best score; null where `score` is.
    """
    metrics: MetricsBody
    """
    The run's metrics, as `POST /api/backtest` answers them.
    """


class TrackRecordResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: str
    """
    The asset.
    """
    return_period: Annotated[int, Field(ge=0)]
    """
    The horizon graded and realised.
    """
    metric: Metric
    """
    The metric graded.
    """
    data_source: DataSource
    """
    Real or synthetic prices: what a grade finds in a synthetic history
    is a property of its generator, not of any market.
    """
    engine_version: str
    """
    Engine that computed the states.
    """
    scorer_version: str
    """
    Scorer that graded them.
    """
    history: list[TrackRecordRow]
    """
    One row per month-end with at least 300 rows up to it, oldest
    first. Months with fewer rows before them are not graded.
    """
    by_grade: list[GradeOutcome]
    """
    Per grade letter (A first), the realised outcomes of the rows
    with one; each month-end's windows overlap the next ones when
    `return_period` is over a month, so these are not independent.
    """


class UniverseTrackRecordResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    return_period: Annotated[int, Field(ge=0)]
    """
    Graded horizon.
    """
    metric: Metric
    """
    Graded metric.
    """
    category: Category | None = None
    source: SourceFilter
    """
    The source filter.
    """
    run_id: str
    """
    The grading run that computed the record.
    """
    run_day: str
    """
    Its UTC day.
    """
    engine_version: str
    """
    Engine version.
    """
    scorer_version: str
    """
    Scorer version.
    """
    assets: Annotated[int, Field(ge=0)]
    """
    Assets covered.
    """
    observations: Annotated[int, Field(ge=0)]
    """
    (asset, month-end) pairs with a realised return.
    """
    first_date: date_aliased | None = None
    """
    First and last month-end with a realised return.
    """
    last_date: date_aliased | None = None
    """
    See `first_date`.
    """
    data_sources: DataSources
    """
    Provenance of the covered assets' prices.
    """
    by_grade: list[UniverseGradeOutcome]
    """
    Per grade letter, A first.
    """
    ic: MeanWithInterval
    """
    Mean information coefficient (Spearman rank correlation of score
    with realised return, per month-end with at least 5 assets).
    """
    ic_series: list[IcPoint]
    """
    The IC month by month.
    """
    quintile_spread: MeanWithInterval
    """
    Mean realised return of the top score quintile minus the bottom
    one, per month-end with at least 5 assets.
    """
    calibration: list[CalibrationBin]
    """
    Pairs binned by predicted median return (deciles): predicted
    against realised.
    """
    block_months: Annotated[int, Field(ge=0)]
    """
    Bootstrap block length in month-ends (the horizon's overlap + 1).
    """
    forecast_evaluation: ForecastEvaluation | None = None
    notes: list[str]
    """
    What the figures can and cannot say, in words.
    """


class UsageResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    minute: UsageWindow
    """
    The current minute's window.
    """
    day: UsageWindow
    """
    Today's window (UTC).
    """
    routes: list[RouteUsage]
    """
    The routes that cost something today, most expensive first (then
    by route). Free routes never appear; units given back (a refused or
    stopped run) are not counted.
    """


class VerdictResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: str
    current_state: CurrentStateBody
    signals: Signals
    active_segment: SegmentBody
    grade: GradeBody
    forecast: ForecastBody | None = None
    typical_max_drawdown: float | None = None
    """
    Median over calendar years of the worst within-year drawdown
    (a negative fraction; null without a year of 20 rows).
    """
    metadata: VerdictMetadata


class WalkForwardResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    mode: SplitMode
    """
    Rolling or expanding.
    """
    train_years: Annotated[int, Field(ge=0)]
    """
    Years of each train split.
    """
    test_years: Annotated[int, Field(ge=0)]
    """
    Years of each test split.
    """
    rank_by: RankBy
    """
    The ranking figure.
    """
    axes: list[Axis]
    """
    The swept parameters and their values.
    """
    splits: list[Split]
    """
    The splits in date order.
    """
    equity_curve: list[EquityPoint]
    """
    The test splits' daily returns chained from the initial capital.
    """
    in_sample: SplitMetrics
    """
    The mean over the splits of the chosen combination's train figures.
    """
    out_of_sample: SplitMetrics
    """
    The figures of `equity_curve`.
    """
    efficiency: float | None = None
    """
    `out_of_sample[rank_by] / in_sample[rank_by]` when both are defined
    and the in-sample figure is positive: near 1 the choice held up out
    of sample, far below 1 the sweep's winners were partly luck.
    """
    metadata: ResearchMetadata
    """
    About the runs.
    """


class Watchlist(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    tickers: list[WatchlistItem]
    """
    The assets (active ones only), in the order chosen.
    """


class ActiveResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    active: ActiveVersion
    """
    The version now active.
    """


class AlertEvent(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: str
    """
    UUID.
    """
    alert_id: str
    """
    The alert (it may have been deleted since).
    """
    ticker: str
    """
    The asset.
    """
    name: str
    """
    Its name.
    """
    alert: AlertSpec
    """
    The alert's condition and parameters when it fired.
    """
    message: str
    """
    What happened, in words.
    """
    before: Observation | None = None
    after: Observation
    """
    What this evaluation saw.
    """
    run_id: str | None = None
    """
    The active grading run behind the numbers (null before the first).
    """
    evaluation: str
    """
    The evaluation that fired it (the store's change counters it saw).
    """
    engine_version: str
    """
    The segmentation engine that computed the numbers.
    """
    scorer_version: str
    """
    The scorer that graded them.
    """
    created_at: AwareDatetime
    """
    When it fired.
    """
    read: bool | None = None
    """
    Whether its owner has read it.
    """


class AlertStateBody(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: str
    """
    The asset.
    """
    holds: bool
    """
    Whether the condition held.
    """
    observed: Observation
    """
    What was seen.
    """
    evaluated_at: AwareDatetime
    """
    When.
    """


class AnalysisResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ticker: str
    name: str
    category: Category
    current_state: CurrentStateBody
    signals: Signals
    time_series: TimeSeriesBody
    segments: list[SegmentBody]
    return_distribution: DistributionBody
    scatter_data: list[ScatterBody]
    segment_paths: dict[str, SegmentPathsBody]
    metadata: AnalysisMetadata
    forecast: ForecastBody | None = None


class BacktestResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    equity_curve: list[EquityPoint]
    """
    Equity at every calendar date.
    """
    trades: list[TradeBody]
    """
    The fills in date order: every one, or the first 10,000 when
    `metadata.trades_truncated` (`metadata.trades_total` counts them
    all).
    """
    metrics: MetricsBody
    """
    Metrics of the equity curve.
    """
    benchmarks: dict[str, BenchmarkBody]
    """
    `equal_weight_buy_hold` and `equal_weight_rebalanced`.
    """
    metadata: BacktestMetadata
    """
    About the run.
    """


class EventPage(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    events: list[AlertEvent]
    """
    Newest first.
    """
    total: int
    """
    Events matching the filter.
    """
    unread: int
    """
    Unread events.
    """
    limit: Annotated[int, Field(ge=0)]
    """
    The page size asked.
    """
    offset: Annotated[int, Field(ge=0)]
    """
    Skipped.
    """


class MatchResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    matches: list[TickerMatch]
    """
    At most three, best first: for a text naming one asset its best
    matches; for a text naming several, the best match of each of the
    first ones, most confident first.
    """
    mentions: list[MentionMatches]
    """
    Every asset the text names, in the order named (at most 12), each
    with its own matches: a sentence naming six assets has six
    mentions. A text naming one asset has one mention, whose matches
    are `matches`.
    """


class SweepResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    rank_by: RankBy
    """
    The ranking figure.
    """
    axes: list[Axis]
    """
    The swept parameters and their values, in the request's order.
    """
    rows: list[SweepRow]
    """
    One per combination, row-major over `axes` (the last varies
    fastest).
    """
    best: Annotated[int | None, Field(ge=0)] = None
    """
    Index into `rows` of the best score; null when no score is defined.
    """
    metadata: ResearchMetadata
    """
    About the runs.
    """


class Alert(AlertSpec):
    model_config = ConfigDict(
        extra="allow",
    )
    id: str
    """
    UUID.
    """
    ticker: str | None = None
    """
    The asset watched, or null for the watchlist.
    """
    watchlist: bool
    """
    Whether it watches the owner's watchlist.
    """
    description: str
    """
    The condition in words.
    """
    enabled: bool
    """
    Evaluated or paused.
    """
    created_at: AwareDatetime
    """
    When it was created.
    """
    updated_at: AwareDatetime
    """
    When it was last changed.
    """
    states: list[AlertStateBody]
    """
    What the last evaluation saw, per asset (empty until evaluated).
    """
