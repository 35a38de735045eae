// The backtest's research routes: Monte Carlo (documented in schema.d.ts),
// the parameter sweep and the walk-forward. The sweep's and walk-forward's
// shapes are written by hand from the server's contract until
// schema.d.ts documents them (`make web-types`); they then can become
// `Schemas["SweepResponse"]` etc. without changing the pages.
import { request, WEB, type Schemas } from "./client";
import type { BacktestRequest } from "./endpoints";

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

export interface Axis {
  name: string;
  values: SweepValue[];
}

export interface SweepRow {
  /** Each swept parameter's value, by name. */
  params: Record<string, SweepValue>;
  /** Index of the row's value on each axis. */
  cell: number[];
  /** The rank_by figure; null where undefined. */
  score: number | null;
  /** 1 for the best score; null where the score is. */
  rank: number | null;
  metrics: Metrics;
}

export interface ResearchMetadata {
  strategy: string;
  strategy_version: string;
  engine_version: string;
  start_date: string;
  end_date: string;
  assets_count: number;
  combinations: number;
  signal_passes: number;
  periods_per_year: number;
  include_costs: boolean;
  calculated_at: string;
}

export interface SweepResponse {
  rank_by: RankBy;
  axes: Axis[];
  /** Row-major over the axes (the last varies fastest). */
  rows: SweepRow[];
  /** Index into rows of the best score. */
  best: number | null;
  metadata: ResearchMetadata;
}

/** The figures a walk-forward compares in and out of sample. */
export type SplitMetrics = Record<"total_return" | "cagr" | "sharpe_ratio" | "sortino_ratio" | "max_drawdown" | "calmar_ratio", number | null>;

export type SplitMode = "rolling" | "expanding";

export type WalkForwardRequest = SweepRequest & {
  /** 1 to 20 (default 3). */
  train_years?: number;
  /** 1 to 10 (default 1). */
  test_years?: number;
  mode?: SplitMode;
};

export interface Split {
  train_start: string;
  train_end: string;
  test_start: string;
  test_end: string;
  /** The combination with the best rank_by on the train split. */
  chosen: Record<string, SweepValue>;
  in_sample: SplitMetrics;
  out_of_sample: SplitMetrics;
}

export interface WalkForwardResponse {
  mode: SplitMode;
  train_years: number;
  test_years: number;
  rank_by: RankBy;
  axes: Axis[];
  splits: Split[];
  /** The test splits' returns chained from the initial capital. */
  equity_curve: { date: string; equity: number }[];
  /** Mean over the splits of the chosen combination's train figures. */
  in_sample: SplitMetrics;
  /** The figures of the stitched curve. */
  out_of_sample: SplitMetrics;
  /** out_of_sample[rank_by] / in_sample[rank_by]. */
  efficiency: number | null;
  metadata: ResearchMetadata;
}

/** Quota units of a sweep or walk-forward: 1 a combination, at least 5. */
export const researchCost = (combinations: number) => Math.max(5, combinations);
/** Quota units of a Monte Carlo. */
export const MONTE_CARLO_COST = 10;

export const research = {
  monteCarlo: (body: MonteCarloRequest) => request<MonteCarloResponse>("POST", `${WEB}/api/backtest/monte-carlo`, { body }),
  sweep: (body: SweepRequest) => request<SweepResponse>("POST", `${WEB}/api/backtest/sweep`, { body }),
  walkForward: (body: WalkForwardRequest) => request<WalkForwardResponse>("POST", `${WEB}/api/backtest/walk-forward`, { body }),
};
