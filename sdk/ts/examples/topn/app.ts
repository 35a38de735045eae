/**
 * `topn-ts`: the built-in `topn` strategy (components/topn) in TypeScript.
 *
 * Top-N Rotation: at each rebalance date, equal weight `1 / top_n` in the
 * `top_n` assets with the highest median prediction, provided it is
 * positive; the rest of the equity stays in cash. Ties go to the lower
 * asset index. Through the server it gives the built-in's trades and equity
 * (tests/it/ts_strategies.rs).
 */
import {
  type Asset,
  type Context,
  type RunParams,
  type Strategy,
  type Target,
  equalWeights,
  exportStrategy,
  topBy,
} from "forecast-strategy";

class TopN implements Strategy {
  static readonly NAME = "topn-ts";
  static readonly VERSION = "0.1.0";
  static readonly DESCRIPTION =
    "Top-N Rotation in TypeScript: equal weight in the top_n assets by median prediction when it is positive, the rest in cash.";

  constructor(private readonly topN: number) {}

  static start(_universe: Asset[], params: RunParams): TopN {
    return new TopN(params.topN);
  }

  rebalance(ctx: Context): Target[] {
    // The best `top_n`; those with a positive median, at 1 / top_n each.
    const top = topBy(ctx.assets, (a) => a.medianReturn, this.topN);
    return equalWeights(
      top.filter((a) => a.medianReturn > 0),
      this.topN,
    );
  }
}

export const { allocation, allocationColumns } = exportStrategy(TopN);
