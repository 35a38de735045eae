// The TypeScript SDK's own tests (sdk/ts/lib/forecast-strategy.ts), under
// Node with the host's log on stderr: `make ts-strategies` bundles this file
// with esbuild (tsconfig.node.json) and runs it with node --test.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ParamRefused,
  equalWeights,
  exportStrategy,
  formatDate,
  parseDate,
  rankBy,
  statesOfColumns,
  topBy,
  weighted,
} from "../lib/forecast-strategy.ts";

const state = (asset, medianReturn) => ({
  asset, price: 1, drawdown: 0, segment: 0, expectedReturn: 0, medianReturn, weight: 0,
});

test("rankBy: highest first, NaN left out, ties to the lower index", () => {
  const assets = [state(3, 0.1), state(1, NaN), state(2, 0.1), state(0, 0.2), state(4, -1)];
  assert.deepEqual(rankBy(assets, (a) => a.medianReturn).map((a) => a.asset), [0, 2, 3, 4]);
  assert.deepEqual(topBy(assets, (a) => a.medianReturn, 2).map((a) => a.asset), [0, 2]);
  assert.deepEqual(topBy(assets, (a) => a.medianReturn, 0), []);
});

test("equalWeights: 1 / slots each for the first slots, fewer leave cash", () => {
  assert.deepEqual(equalWeights([state(5, 0), state(6, 0), state(7, 0)], 2), [
    { asset: 5, weight: 0.5 },
    { asset: 6, weight: 0.5 },
  ]);
  assert.deepEqual(equalWeights([state(5, 0)], 4), [{ asset: 5, weight: 0.25 }]);
  assert.deepEqual(equalWeights([state(5, 0)], 0), []);
  assert.deepEqual(weighted([state(1, 0)], -0.5), [{ asset: 1, weight: -0.5 }]);
});

test("dates: days since 1970-01-01 and back", () => {
  assert.equal(formatDate(0), "1970-01-01");
  assert.equal(formatDate(19_753), "2024-01-31");
  assert.equal(parseDate("2024-01-31"), 19_753);
  assert.equal(parseDate("1969-12-31"), -1);
  assert.throws(() => parseDate("2024-02-30"));
  assert.throws(() => parseDate("31/01/2024"));
});

test("columns: one state per asset, NaN as undefined for the optional fields", () => {
  const c = {
    asset: Uint32Array.of(4, 9), price: Float64Array.of(1, 2), drawdown: Float64Array.of(0, -0.5),
    segment: Uint32Array.of(0, 10), expectedReturn: Float64Array.of(0.1, 0.2),
    medianReturn: Float64Array.of(0.3, 0.4), predictionError: Float64Array.of(NaN, 0.01),
    medianError: Float64Array.of(0.02, NaN), zscore: Float64Array.of(NaN, -2), weight: Float64Array.of(0, 0.5),
  };
  const [a, b] = statesOfColumns(c);
  assert.equal(a.asset, 4);
  assert.equal(a.predictionError, undefined);
  assert.equal(a.medianError, 0.02);
  assert.equal(a.zscore, undefined);
  assert.equal(b.zscore, -2);
  assert.equal(b.medianError, undefined);
  assert.equal(b.weight, 0.5);
});

class Probe {
  static NAME = "probe";
  static VERSION = "1.2.3";
  static DESCRIPTION = "test";
  static start(_universe, params) {
    if (params.topN > 3) throw new ParamRefused("top_n", "at most 3");
    if (params.topN === 0) throw new Error("boom");
    return new Probe();
  }
  rebalance(ctx) {
    if (ctx.equity < 0) throw new TypeError("negative equity");
    if (ctx.equity === 0) throw "plain";
    return ctx.assets.map((a) => ({ asset: a.asset, weight: 0.1, extra: 1 }));
  }
}

const params = (topN) => ({ topN });
const ctx = (equity, assets = []) => ({ date: 0, equity, cash: equity, assets });

test("exports: info, a refused parameter, errors as the world's err", () => {
  const { allocation, allocationColumns } = exportStrategy(Probe);
  assert.deepEqual(allocation.info(), { name: "probe", version: "1.2.3", description: "test" });
  assert.throws(() => allocation.rebalance(ctx(1)), (e) => e === "rebalance before start");
  assert.throws(() => allocation.start([], params(4)), { field: "top_n", message: "at most 3" });
  assert.throws(() => allocation.start([], params(0)), { field: "", message: "Error: boom" });
  allocation.start([], params(1));
  assert.deepEqual(allocation.rebalance(ctx(1, [state(2, 0)])), [{ asset: 2, weight: 0.1 }]);
  assert.throws(() => allocation.rebalance(ctx(-1)), (e) => e === "TypeError: negative equity");
  assert.throws(() => allocation.rebalance(ctx(0)), (e) => e === "plain");
  const columns = {
    asset: Uint32Array.of(7), price: Float64Array.of(1), drawdown: Float64Array.of(0),
    segment: Uint32Array.of(0), expectedReturn: Float64Array.of(0), medianReturn: Float64Array.of(0),
    predictionError: Float64Array.of(NaN), medianError: Float64Array.of(NaN), zscore: Float64Array.of(NaN),
    weight: Float64Array.of(0),
  };
  const answer = allocationColumns.rebalanceColumns({ date: 0, equity: 1, cash: 1, assets: columns });
  assert.deepEqual(answer, [{ asset: 7, weight: 0.1 }]);
});

test("exportStrategy refuses a bad NAME or VERSION", () => {
  assert.throws(() => exportStrategy({ ...Probe, NAME: "Bad Name", VERSION: "1.0.0", start: Probe.start }), /NAME/);
  assert.throws(() => exportStrategy({ NAME: "ok", VERSION: "1.0", DESCRIPTION: "", start: Probe.start }), /VERSION/);
});
