// One decision of `{{name}}` under Node (the app bundled by esbuild with
// the host's log on stderr): `make test` runs it with node --test.
import assert from "node:assert/strict";
import { test } from "node:test";

import { MyStrategy, allocation } from "../src/app.ts";

/** The server's defaults, `topN` aside. */
const params = (topN) => ({
  topN, rebalance: "monthly", returnPeriod: 90, numSegments: 20, decayFactor: 0.95,
  metric: "total-return", initialCapital: 100_000, includeCosts: true,
  zscoreLookback: 252, zscoreEntry: 2, zscoreExit: 0,
});

const state = (asset, medianReturn) => ({
  asset, price: 1, drawdown: 0, segment: 0, expectedReturn: 0, medianReturn, weight: 0,
});

test("holds the best positive predictions", () => {
  const universe = ["A", "B", "C"].map((t) => ({ ticker: t, name: t, category: "Crypto" }));
  const s = MyStrategy.start(universe, params(2));
  const ctx = { date: 19_000, equity: 1, cash: 1, assets: [state(0, 0.02), state(1, -0.01), state(2, 0.05)] };
  assert.deepEqual(s.rebalance(ctx), [{ asset: 2, weight: 0.5 }, { asset: 0, weight: 0.5 }]);
});

test("a refused parameter is the world's param-error", () => {
  assert.throws(() => allocation.start([], params(51)), { field: "top_n", message: "at most 50" });
});
