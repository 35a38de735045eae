"""`{{name}}`: a Forecast Engine backtest strategy in Python.

A strategy only answers target weights at each rebalance date; the server
does the fills (next row's close), costs, cash, shorts and metrics. This one
starts as the classic top-N rotation: equal weight in the `top_n` assets with
the best positive median prediction. Change `rebalance` (and `start`, if it
needs parameters checked or state set up) to make it yours.

* `make test` runs the unit tests in CPython and backtests the built
  component through the `forecast` server over the shipped real histories;
* `make build` builds the plugin, `build/{{module}}.wasm`.

See `sdk/README.md` in the repository for the whole cycle.
"""

from typing import List

from forecast_strategy import (
    Asset,
    Context,
    ParamRefused,
    RunParams,
    Strategy,
    Target,
    equal_weights,
    export,
    log,
    rank_by,
)


class MyStrategy(Strategy):
    """The strategy of one backtest run. The server creates it with `start`
    and calls `rebalance` at each rebalance date, in date order; attributes
    keep whatever it needs to remember between those calls."""

    # What `"strategy": "..."` in a backtest request selects: lower-case
    # letters, digits, `-` and `_`. Unique among the server's strategies.
    NAME = "{{name}}"
    # Semantic version; a published version never changes: raise it.
    VERSION = "0.1.0"
    # One sentence for listings.
    DESCRIPTION = "Equal weight in the top_n assets by positive median prediction."

    def __init__(self, top_n: int) -> None:
        # Positions to hold, from the request's `top_n`.
        self.top_n = top_n

    @classmethod
    def start(cls, universe: List[Asset], params: RunParams) -> "MyStrategy":
        """Begins a run. `universe` lists the assets (`rebalance` refers to
        them by index); `params` are the request's, defaults filled in.
        Raise `ParamRefused` for what the strategy cannot use: the client
        gets a 400 naming the field."""
        if params.top_n > 20:
            raise ParamRefused(
                "top_n", f"{cls.NAME} holds at most 20 positions (got {params.top_n})"
            )
        log.debug(f"{len(universe)} assets, top_n {params.top_n}")
        return cls(params.top_n)

    def rebalance(self, ctx: Context) -> List[Target]:
        """The target portfolio at `ctx.date`, from data up to that date only.
        `ctx.assets` holds the tradeable assets with the engine's signals and
        their current weights. Answer weights for assets of `ctx.assets`
        only, each at most once, absolute weights adding up to at most 1;
        assets not named are sold. An exception ends the run (a 422)."""
        ranked = rank_by(ctx.assets, lambda a: a.median_return)
        positive = (a for a in ranked if a.median_return > 0.0)
        return equal_weights(positive, self.top_n)


# The component's exports (`allocation`, `allocation-columns`) over MyStrategy.
Allocation, AllocationColumns = export(MyStrategy)
