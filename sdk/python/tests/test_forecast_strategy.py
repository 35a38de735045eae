"""The Python SDK's helpers and exports in CPython, against componentize-py's
bindings of the strategy world (`make python-strategies` runs this): the
Rust SDK's ranking rules, the columns' NaN as none, and what the exports
answer for a refused parameter, an exception and a call out of order."""

import math
import unittest

from componentize_py_types import Err
from forecast_strategy import (
    AssetState,
    Context,
    ParamRefused,
    Strategy,
    Target,
    equal_weights,
    export,
    format_date,
    parse_date,
    rank_by,
    states_of_columns,
    top_by,
    weighted,
)
from wit_world.exports import allocation_columns


def state(asset, median_return):
    return AssetState(asset=asset, price=1.0, drawdown=0.0, segment=0, expected_return=0.0,
                      median_return=median_return, prediction_error=None, median_error=None,
                      zscore=None, weight=0.0)


class Helpers(unittest.TestCase):
    def test_rank_by_is_highest_first_ties_to_the_lower_index_nan_left_out(self):
        assets = [state(4, 0.02), state(2, 0.02), state(3, math.nan), state(1, 0.05)]
        self.assertEqual([a.asset for a in rank_by(assets, lambda a: a.median_return)], [1, 2, 4])
        self.assertEqual([a.asset for a in top_by(assets, lambda a: a.median_return, 2)], [1, 2])
        self.assertEqual(top_by(assets, lambda a: a.median_return, 0), [])

    def test_equal_weights_are_one_over_the_slots(self):
        assets = [state(0, 0.01), state(1, 0.03)]
        self.assertEqual(equal_weights(assets, 4), [Target(asset=0, weight=0.25), Target(asset=1, weight=0.25)])
        self.assertEqual(equal_weights(assets, 1), [Target(asset=0, weight=1.0)])
        self.assertEqual(equal_weights(assets, 0), [])
        self.assertEqual(weighted(assets, -0.5), [Target(asset=0, weight=-0.5), Target(asset=1, weight=-0.5)])

    def test_dates(self):
        self.assertEqual(format_date(0), "1970-01-01")
        self.assertEqual(parse_date("2024-01-31"), 19753)
        self.assertEqual(format_date(parse_date("2024-01-31")), "2024-01-31")

    def test_columns_become_states_with_nan_as_none(self):
        c = allocation_columns.AssetColumns(
            asset=[3, 7], price=[1.0, 2.0], drawdown=[0.0, -0.5], segment=[0, 4],
            expected_return=[0.1, 0.2], median_return=[0.3, 0.4],
            prediction_error=[math.nan, 0.01], median_error=[0.02, math.nan],
            zscore=[math.nan, -2.5], weight=[0.0, 0.5])
        s = states_of_columns(c)
        self.assertEqual([x.asset for x in s], [3, 7])
        self.assertEqual((s[0].prediction_error, s[0].median_error, s[0].zscore), (None, 0.02, None))
        self.assertEqual((s[1].prediction_error, s[1].median_error, s[1].zscore), (0.01, None, -2.5))
        self.assertEqual((s[1].segment, s[1].weight), (4, 0.5))


class Picky(Strategy):
    NAME = "picky"
    VERSION = "1.2.3"
    DESCRIPTION = "Refuses top_n 9; fails on an empty context."

    @classmethod
    def start(cls, universe, params):
        if params == 9:
            raise ParamRefused("top_n", "not 9")
        return cls()

    def rebalance(self, ctx):
        weight = 1.0 / len(ctx.assets)
        return [Target(asset=a.asset, weight=weight) for a in ctx.assets]


class Exports(unittest.TestCase):
    def test_the_exports_answer_as_the_world_says(self):
        allocation, columns = (cls() for cls in export(Picky))
        info = allocation.info()
        self.assertEqual((info.name, info.version), ("picky", "1.2.3"))
        with self.assertRaises(Err) as e:
            allocation.rebalance(Context(date=0, equity=1.0, cash=1.0, assets=[]))
        self.assertEqual(e.exception.value, "rebalance before start")
        with self.assertRaises(Err) as e:
            allocation.start([], 9)
        self.assertEqual((e.exception.value.field, e.exception.value.message), ("top_n", "not 9"))
        allocation.start([], 2)
        ctx = Context(date=0, equity=1.0, cash=1.0, assets=[state(0, 0.1), state(5, 0.2)])
        self.assertEqual(allocation.rebalance(ctx), [Target(asset=0, weight=0.5), Target(asset=5, weight=0.5)])
        with self.assertRaises(Err) as e:
            allocation.rebalance(Context(date=0, equity=1.0, cash=1.0, assets=[]))
        self.assertEqual(e.exception.value, "ZeroDivisionError: float division by zero")
        cols = allocation_columns.ColumnsContext(date=0, equity=1.0, cash=1.0, assets=allocation_columns.AssetColumns(
            asset=[5], price=[1.0], drawdown=[0.0], segment=[0], expected_return=[0.0],
            median_return=[0.1], prediction_error=[math.nan], median_error=[math.nan],
            zscore=[math.nan], weight=[0.0]))
        self.assertEqual(columns.rebalance_columns(cols), [Target(asset=5, weight=1.0)])

    def test_a_bad_name_or_version_is_refused_at_export(self):
        class BadName(Picky):
            NAME = "Bad Name"

        class BadVersion(Picky):
            VERSION = "1.2"

        for cls in (BadName, BadVersion):
            with self.assertRaises(ValueError):
                export(cls)


if __name__ == "__main__":
    unittest.main()
