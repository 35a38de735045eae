// A whole backtest of the built component (build/{{module}}.wasm) on a
// server over real histories: the running server that FORECAST_URL and
// FORECAST_API_KEY name, else target/release/forecast on the demo universe
// (sdk/ts/harness/forecast-harness.mjs).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Harness, REAL_TICKERS, summary } from "../../../sdk/ts/harness/forecast-harness.mjs";

const WASM = new URL("../build/{{module}}.wasm", import.meta.url).pathname;
let harness;
let name;

before(async () => {
  harness = await Harness.start();
  name = await harness.upload(WASM);
});

after(async () => harness?.close());

test("backtest over real histories", async () => {
  const report = await harness.backtest({
    strategy: name, tickers: REAL_TICKERS, top_n: 3, start_date: "2010-01-01",
  });
  console.log(summary(report));
  assert.equal(report.equity_curve[0].equity, 100_000);
  assert.ok(report.equity_curve.every((p) => Number.isFinite(p.equity)));
});
