"""forecast_strategy: write a Forecast Engine backtest strategy in Python.

The Python twin of the Rust `forecast-sdk` (sdk/README.md): a strategy is a
class with `start` (once per run) and `rebalance` (once per rebalance date),
typed with the records componentize-py generates from the `strategy` world
of wit/forecast.wit (`wit_world.exports.allocation`). `export(MyStrategy)`
turns it into the two exported interfaces, `allocation` and
`allocation-columns`, the host calls:

    Allocation, AllocationColumns = export(MyStrategy)

The helpers (`rank_by`, `top_by`, `equal_weights`, `weighted`,
`format_date`, `parse_date`) decide exactly as the Rust SDK's do, so a
strategy ported from Rust gives the same targets to the bit.
"""

from __future__ import annotations

import datetime
import math
import sys
from typing import Callable, Iterable, List, Optional, Sequence

from componentize_py_types import Err
from wit_world.exports import allocation as _allocation
from wit_world.exports import allocation_columns as _columns
from wit_world.imports import host_log as _host_log
from wit_world.imports import types as _types

# The strategy world's records, as componentize-py generates them.
Asset = _allocation.Asset
AssetState = _allocation.AssetState
Context = _allocation.Context
Metric = _types.Metric
RunParams = _allocation.RunParams
Schedule = _allocation.Schedule
StrategyInfo = _allocation.StrategyInfo
Target = _allocation.Target

__all__ = [
    "Asset",
    "AssetState",
    "Context",
    "Metric",
    "ParamRefused",
    "RunParams",
    "Schedule",
    "Strategy",
    "StrategyInfo",
    "Target",
    "equal_weights",
    "export",
    "format_date",
    "log",
    "parse_date",
    "rank_by",
    "top_by",
    "weighted",
]


class ParamRefused(Exception):
    """Raised by `start` for a parameter the strategy cannot use: the client
    gets a 400 naming `field`."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class Strategy:
    """Base class of a strategy. Set NAME (what `"strategy"` selects: 1 to
    64 lower-case letters, digits, `-`, `_`), VERSION (semver) and
    DESCRIPTION; implement `start` and `rebalance`."""

    NAME: str = ""
    VERSION: str = ""
    DESCRIPTION: str = ""

    @classmethod
    def start(cls, universe: List[Asset], params: RunParams) -> "Strategy":
        """Begins a run over `universe` (later referred to by index); raise
        `ParamRefused(field, why)` to refuse a parameter."""
        raise NotImplementedError

    def rebalance(self, ctx: Context) -> List[Target]:
        """The target weights at `ctx.date`; an exception ends the run."""
        raise NotImplementedError


class log:
    """Lines to the server's log, tagged with the plugin's name and version
    (stderr when run natively). At most 200 lines and 64 KiB per run."""

    @staticmethod
    def _write(level: "_host_log.Level", message: str) -> None:
        try:
            _host_log.log(level, message)
        except NotImplementedError:  # natively: the bindings' stub
            print(f"[{level.name.lower()}] {message}", file=sys.stderr)

    @staticmethod
    def debug(message: str) -> None:
        log._write(_host_log.Level.DEBUG, message)

    @staticmethod
    def info(message: str) -> None:
        log._write(_host_log.Level.INFO, message)

    @staticmethod
    def warn(message: str) -> None:
        log._write(_host_log.Level.WARN, message)

    @staticmethod
    def error(message: str) -> None:
        log._write(_host_log.Level.ERROR, message)


def _keyed(assets: Iterable[AssetState], key: Callable[[AssetState], float]):
    keyed = []
    for a in assets:
        k = float(key(a))
        if not math.isnan(k):
            keyed.append((-k, a.asset, a))
    return keyed


def rank_by(
    assets: Iterable[AssetState], key: Callable[[AssetState], float]
) -> List[AssetState]:
    """The assets by `key`, highest first; a NaN key leaves the asset out;
    ties go to the lower asset index (the Rust SDK's `rank_by`)."""
    keyed = _keyed(assets, key)
    keyed.sort(key=lambda t: (t[0], t[1]))
    return [a for _, _, a in keyed]


def top_by(
    assets: Iterable[AssetState], key: Callable[[AssetState], float], n: int
) -> List[AssetState]:
    """The first `n` of `rank_by`'s order."""
    if n <= 0:
        return []
    return rank_by(assets, key)[:n]


def weighted(assets: Iterable[AssetState], weight: float) -> List[Target]:
    """The same `weight` for every asset (negative to go short)."""
    return [Target(asset=a.asset, weight=weight) for a in assets]


def equal_weights(assets: Iterable[AssetState], slots: int) -> List[Target]:
    """`1 / slots` each for the first `slots` assets (fewer leave cash)."""
    if slots <= 0:
        return []
    chosen = []
    for a in assets:
        if len(chosen) == slots:
            break
        chosen.append(a)
    return weighted(chosen, 1.0 / float(slots))


_EPOCH = datetime.date(1970, 1, 1)


def format_date(days: int) -> str:
    """Days since 1970-01-01 to `YYYY-MM-DD`."""
    return (_EPOCH + datetime.timedelta(days=days)).isoformat()


def parse_date(text: str) -> int:
    """`YYYY-MM-DD` to days since 1970-01-01."""
    return (datetime.date.fromisoformat(text) - _EPOCH).days


def _none_if_nan(x: float) -> Optional[float]:
    return None if math.isnan(x) else x


def states_of_columns(c: "_columns.AssetColumns") -> List[AssetState]:
    """`allocation-columns`' lists back to one `AssetState` per asset (NaN
    is none for the optional fields), as the Rust SDK does."""
    return [
        AssetState(
            asset=c.asset[i],
            price=c.price[i],
            drawdown=c.drawdown[i],
            segment=c.segment[i],
            expected_return=c.expected_return[i],
            median_return=c.median_return[i],
            prediction_error=_none_if_nan(c.prediction_error[i]),
            median_error=_none_if_nan(c.median_error[i]),
            zscore=_none_if_nan(c.zscore[i]),
            weight=c.weight[i],
        )
        for i in range(len(c.asset))
    ]


def _message(e: BaseException) -> str:
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def export(cls: type) -> tuple:
    """The `Allocation` and `AllocationColumns` classes componentize-py
    exports, over one run of `cls` (the host instantiates the component for
    each run)."""
    _check_identity(cls)
    run: List[Strategy] = []

    def rebalance(ctx: Context) -> List[Target]:
        if not run:
            raise Err("rebalance before start")
        try:
            return list(run[0].rebalance(ctx))
        except Err:
            raise
        except Exception as e:  # an error, not a trap: a 422 naming it
            raise Err(_message(e))

    class Allocation:
        def info(self) -> StrategyInfo:
            return StrategyInfo(name=cls.NAME, version=cls.VERSION, description=cls.DESCRIPTION)

        def start(self, universe: List[Asset], params: RunParams) -> None:
            try:
                strategy = cls.start(universe, params)
            except ParamRefused as e:
                raise Err(_allocation.ParamError(field=e.field, message=e.message))
            run.clear()
            run.append(strategy)

        def rebalance(self, ctx: Context) -> List[Target]:
            return rebalance(ctx)

    class AllocationColumns:
        def rebalance_columns(self, ctx: "_columns.ColumnsContext") -> List[Target]:
            states = states_of_columns(ctx.assets)
            return rebalance(Context(date=ctx.date, equity=ctx.equity, cash=ctx.cash, assets=states))

    return Allocation, AllocationColumns


def _check_identity(cls: type) -> None:
    name, version = cls.NAME, cls.VERSION
    ok = 1 <= len(name) <= 64 and all(ch in "abcdefghijklmnopqrstuvwxyz0123456789-_" for ch in name)
    if not ok:
        raise ValueError(f"NAME {name!r}: 1 to 64 lower-case letters, digits, '-' and '_'")
    parts = version.split("-", 1)[0].split("+", 1)[0].split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"VERSION {version!r} is not semver (e.g. 0.1.0)")

