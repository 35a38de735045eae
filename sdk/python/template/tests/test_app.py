"""Tests of `{{name}}`: one decision in CPython, then a whole backtest of the
built component on a server over real histories: the running server that
FORECAST_URL and FORECAST_API_KEY name, else target/release/forecast on the
demo universe (sdk/python/harness/forecast_harness.py)."""

import math
import unittest
from pathlib import Path

from app import MyStrategy
from forecast_harness import REAL_TICKERS, Harness, HarnessError, summary
from forecast_strategy import Asset, AssetState, Context, Metric, RunParams, Schedule, Target

WASM = Path(__file__).resolve().parents[1] / "build" / "{{module}}.wasm"


def params(top_n: int) -> RunParams:
    """The server's defaults, `top_n` aside."""
    return RunParams(
        top_n=top_n, rebalance=Schedule.MONTHLY, return_period=90, num_segments=20,
        decay_factor=0.95, metric=Metric.TOTAL_RETURN, initial_capital=100_000.0,
        include_costs=True, zscore_lookback=252, zscore_entry=2.0, zscore_exit=0.0,
    )


def state(asset: int, median_return: float) -> AssetState:
    return AssetState(
        asset=asset, price=1.0, drawdown=0.0, segment=0, expected_return=0.0,
        median_return=median_return, prediction_error=None, median_error=None,
        zscore=None, weight=0.0,
    )


class Decisions(unittest.TestCase):
    def test_holds_the_best_positive_predictions(self):
        universe = [Asset(ticker=t, name=t, category="Crypto") for t in "ABC"]
        s = MyStrategy.start(universe, params(2))
        ctx = Context(date=19_000, equity=1.0, cash=1.0,
                      assets=[state(0, 0.02), state(1, -0.01), state(2, 0.05)])
        self.assertEqual(s.rebalance(ctx), [Target(asset=2, weight=0.5), Target(asset=0, weight=0.5)])


class Backtest(unittest.TestCase):
    """The built component behind the real server."""

    @classmethod
    def setUpClass(cls):
        cls.harness = Harness().__enter__()
        cls.name = cls.harness.upload(WASM)

    @classmethod
    def tearDownClass(cls):
        cls.harness.close()

    def test_backtest_over_real_histories(self):
        report = self.harness.backtest(
            {"strategy": self.name, "tickers": REAL_TICKERS, "top_n": 3,
             "start_date": "2010-01-01"})
        print(summary(report))
        self.assertEqual(report["equity_curve"][0]["equity"], 100_000.0)
        self.assertTrue(all(math.isfinite(p["equity"]) for p in report["equity_curve"]))
        self.assertTrue(report["trades"])

    def test_a_refused_parameter_is_a_400(self):
        with self.assertRaises(HarnessError) as e:
            self.harness.backtest({"strategy": self.name, "tickers": REAL_TICKERS, "top_n": 21})
        self.assertEqual(e.exception.status, 400)


if __name__ == "__main__":
    unittest.main()
