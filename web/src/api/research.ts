// The backtest's research routes: Monte Carlo, the parameter sweep and the
// walk-forward, with the generated shapes (schema.d.ts, `make web-types`);
// the values a sweep echoes (its axes, a row's params, a split's choice)
// are typed as the page sent them.
import { request, WEB, type Schemas } from "./client";
import { runOpts, type BacktestRequest, type RunOptions } from "./endpoints";

export type MonteCarloRequest = Schemas["MonteCarloRequest"];
export type MonteCarloResponse = Schemas["MonteCarloResponse"];
export type Metrics = Schemas["MetricsBody"];

/** The parameters a sweep may vary (each a backtest field). */
export const SWEEPABLE = [
  "top_n",
  "return_period",
  "rebalance",
  "metric",
  "decay_factor",
  "num_segments",
  "zscore_lookback",
  "zscore_entry",
  "zscore_exit",
] as const;
export type SweepParam = (typeof SWEEPABLE)[number];

/** The figures a sweep can rank by; higher is better for each (a drawdown is ≤ 0). */
export const RANK_BY = ["total_return", "cagr", "sharpe_ratio", "sortino_ratio", "calmar_ratio", "max_drawdown"] as const;
export type RankBy = (typeof RANK_BY)[number];

/** A swept value: a number, or a name for `rebalance` and `metric`. */
export type SweepValue = number | string;

/** Body of the sweep: a backtest request (without the swept fields) plus the values to try. */
export type SweepRequest = BacktestRequest & {
  /** 1 to 3 parameters, each 1 to 48 distinct values; at most 48 combinations. The order written is the axes' order. */
  sweep: Partial<Record<SweepParam, SweepValue[]>>;
  rank_by?: RankBy;
};

/** The generated shapes, with the values the server echoes typed as sent. */
type Echoed<T> = Omit<T, "params" | "chosen" | "values">;
export type Axis = Echoed<Schemas["Axis"]> & { values: SweepValue[] };
export type SweepRow = Echoed<Schemas["SweepRow"]> & { params: Record<string, SweepValue> };
export type ResearchMetadata = Schemas["ResearchMetadata"];
export type SweepResponse = Omit<Schemas["SweepResponse"], "axes" | "rows"> & { axes: Axis[]; rows: SweepRow[] };
export type SplitMetrics = Schemas["SplitMetrics"];
export type SplitMode = Schemas["SplitMode"];
export type Split = Echoed<Schemas["Split"]> & { chosen: Record<string, SweepValue> };
export type WalkForwardRequest = SweepRequest & {
  /** 1 to 20 (default 3). */
  train_years?: number;
  /** 1 to 10 (default 1). */
  test_years?: number;
  mode?: SplitMode;
};
export type WalkForwardResponse = Omit<Schemas["WalkForwardResponse"], "axes" | "splits"> & { axes: Axis[]; splits: Split[] };

/** Quota units of a sweep or walk-forward: 1 a combination, at least 5. */
export const researchCost = (combinations: number) => Math.max(5, combinations);
/** Quota units of a Monte Carlo. */
export const MONTE_CARLO_COST = 10;

export const research = {
  monteCarlo: (body: MonteCarloRequest, run?: RunOptions) =>
    request<MonteCarloResponse>("POST", `${WEB}/api/backtest/monte-carlo`, { body, ...runOpts(run) }),
  sweep: (body: SweepRequest, run?: RunOptions) => request<SweepResponse>("POST", `${WEB}/api/backtest/sweep`, { body, ...runOpts(run) }),
  walkForward: (body: WalkForwardRequest, run?: RunOptions) =>
    request<WalkForwardResponse>("POST", `${WEB}/api/backtest/walk-forward`, { body, ...runOpts(run) }),
};
