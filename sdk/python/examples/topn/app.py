"""`topn-py`: the built-in `topn` strategy (components/topn) in Python.

Top-N Rotation: at each rebalance date, equal weight `1 / top_n` in the
`top_n` assets with the highest median prediction, provided it is positive;
the rest of the equity stays in cash. Ties go to the lower asset index.
Through the server it gives the built-in's trades and equity
(tests/it/python_strategies.rs).
"""

from typing import List

from forecast_strategy import (
    Asset,
    Context,
    RunParams,
    Strategy,
    Target,
    equal_weights,
    export,
    top_by,
)


class TopN(Strategy):
    NAME = "topn-py"
    VERSION = "0.1.0"
    DESCRIPTION = (
        "Top-N Rotation in Python: equal weight in the top_n assets by median "
        "prediction when it is positive, the rest in cash."
    )

    def __init__(self, top_n: int) -> None:
        self.top_n = top_n

    @classmethod
    def start(cls, universe: List[Asset], params: RunParams) -> "TopN":
        return cls(params.top_n)

    def rebalance(self, ctx: Context) -> List[Target]:
        # The best `top_n`; those with a positive median, at 1 / top_n each.
        top = top_by(ctx.assets, lambda a: a.median_return, self.top_n)
        return equal_weights((a for a in top if a.median_return > 0.0), self.top_n)


Allocation, AllocationColumns = export(TopN)
