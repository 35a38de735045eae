/**
 * forecast-strategy: write a Forecast Engine backtest strategy in TypeScript.
 *
 * The TypeScript twin of the Rust `forecast-sdk` and the Python
 * `forecast_strategy` (sdk/README.md): a strategy is a class with a static
 * `start` (once per run) and `rebalance` (once per rebalance date), typed
 * with the records `jco types` generates from the `strategy` world of
 * wit/forecast.wit (into lib/world/, by `make ts-sdk`). `exportStrategy(MyStrategy)`
 * gives the two exported interfaces the host calls, `allocation` and
 * `allocation-columns`; the app module exports them by those names:
 *
 *     export const { allocation, allocationColumns } = exportStrategy(MyStrategy);
 *
 * The helpers (`rankBy`, `topBy`, `equalWeights`, `weighted`, `formatDate`,
 * `parseDate`) decide exactly as the Rust SDK's do, so a strategy ported
 * from Rust gives the same targets to the bit.
 */
import { log as hostLog } from "forecast:plugins/host-log@1.11.0";
import type {
  Asset,
  AssetState,
  Context,
  ParamError,
  RunParams,
  Schedule,
  StrategyInfo,
  Target,
} from "./world/interfaces/forecast-plugins-allocation.js";
import type {
  AssetColumns,
  ColumnsContext,
} from "./world/interfaces/forecast-plugins-allocation-columns.js";
import type { Level } from "./world/interfaces/forecast-plugins-host-log.js";
import type { Metric } from "./world/interfaces/forecast-plugins-types.js";

export type {
  Asset,
  AssetColumns,
  AssetState,
  ColumnsContext,
  Context,
  Metric,
  ParamError,
  RunParams,
  Schedule,
  StrategyInfo,
  Target,
};

/** Thrown by `start` for a parameter the strategy cannot use: the client
 * gets a 400 naming `field`. */
export class ParamRefused extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/** One run of a strategy: what `start` returns. */
export interface Strategy {
  /** The target weights at `ctx.date`; a thrown error ends the run. */
  rebalance(ctx: Context): Target[];
}

/** A strategy class: its identity and its `start`. */
export interface StrategyClass {
  /** What `"strategy"` selects: 1 to 64 lower-case letters, digits, `-`, `_`. */
  readonly NAME: string;
  /** Semver, e.g. `0.1.0`. */
  readonly VERSION: string;
  readonly DESCRIPTION: string;
  /** Begins a run over `universe` (later referred to by index); throw
   * `new ParamRefused(field, why)` to refuse a parameter. */
  start(universe: Asset[], params: RunParams): Strategy;
}

/** Lines to the server's log, tagged with the plugin's name and version
 * (stderr under Node). At most 200 lines and 64 KiB per run. */
export const log = {
  debug: (message: string) => write("debug", message),
  info: (message: string) => write("info", message),
  warn: (message: string) => write("warn", message),
  error: (message: string) => write("error", message),
};

function write(level: Level, message: string): void {
  hostLog(level, message);
}

/** The assets by `key`, highest first; a NaN key leaves the asset out; ties
 * go to the lower asset index (the Rust SDK's `rank_by`). */
export function rankBy(assets: Iterable<AssetState>, key: (a: AssetState) => number): AssetState[] {
  const keyed: [number, AssetState][] = [];
  for (const a of assets) {
    const k = Number(key(a));
    if (!Number.isNaN(k)) keyed.push([k, a]);
  }
  keyed.sort((x, y) => (x[0] !== y[0] ? (x[0] > y[0] ? -1 : 1) : x[1].asset - y[1].asset));
  return keyed.map(([, a]) => a);
}

/** The first `n` of `rankBy`'s order. */
export function topBy(
  assets: Iterable<AssetState>,
  key: (a: AssetState) => number,
  n: number,
): AssetState[] {
  return n <= 0 ? [] : rankBy(assets, key).slice(0, n);
}

/** The same `weight` for every asset (negative to go short). */
export function weighted(assets: Iterable<AssetState>, weight: number): Target[] {
  return Array.from(assets, (a) => ({ asset: a.asset, weight }));
}

/** `1 / slots` each for the first `slots` assets (fewer leave cash). */
export function equalWeights(assets: Iterable<AssetState>, slots: number): Target[] {
  if (slots <= 0) return [];
  const chosen: AssetState[] = [];
  for (const a of assets) {
    if (chosen.length === slots) break;
    chosen.push(a);
  }
  return weighted(chosen, 1 / slots);
}

const DAY_MS = 86_400_000;

/** Days since 1970-01-01 to `YYYY-MM-DD`. */
export function formatDate(days: number): string {
  return new Date(days * DAY_MS).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` to days since 1970-01-01. */
export function parseDate(text: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) throw new Error(`not a date: ${text}`);
  const ms = Date.parse(`${text}T00:00:00Z`);
  if (Number.isNaN(ms) || formatDate(ms / DAY_MS) !== text) throw new Error(`not a date: ${text}`);
  return ms / DAY_MS;
}

const optional = (x: number): number | undefined => (Number.isNaN(x) ? undefined : x);

/** `allocation-columns`' lists back to one `AssetState` per asset (NaN is
 * none for the optional fields), as the Rust SDK does. */
export function statesOfColumns(c: AssetColumns): AssetState[] {
  const states: AssetState[] = [];
  for (let i = 0; i < c.asset.length; i++) {
    states.push({
      asset: c.asset[i],
      price: c.price[i],
      drawdown: c.drawdown[i],
      segment: c.segment[i],
      expectedReturn: c.expectedReturn[i],
      medianReturn: c.medianReturn[i],
      predictionError: optional(c.predictionError[i]),
      medianError: optional(c.medianError[i]),
      zscore: optional(c.zscore[i]),
      weight: c.weight[i],
    });
  }
  return states;
}

/** An error's message for the host (a string thrown from an export is its
 * `err`; an `Error` thrown would trap). */
function message(e: unknown): string {
  if (e instanceof Error) return e.message ? `${e.name}: ${e.message}` : e.name;
  return String(e);
}

/** The `allocation` and `allocation-columns` exports over one run of
 * `cls` (the host instantiates the component for each run). */
export function exportStrategy(cls: StrategyClass) {
  checkIdentity(cls);
  let run: Strategy | undefined;
  const rebalance = (ctx: Context): Target[] => {
    if (run === undefined) throw "rebalance before start";
    let targets: Target[];
    try {
      targets = run.rebalance(ctx);
    } catch (e) {
      throw message(e); // an error, not a trap: a 422 naming it
    }
    return Array.from(targets, (t) => ({ asset: t.asset, weight: t.weight }));
  };
  const allocation = {
    info: (): StrategyInfo => ({ name: cls.NAME, version: cls.VERSION, description: cls.DESCRIPTION }),
    start(universe: Asset[], params: RunParams): void {
      try {
        run = cls.start(universe, params);
      } catch (e) {
        if (e instanceof ParamRefused) throw { field: e.field, message: e.reason } satisfies ParamError;
        throw { field: "", message: message(e) } satisfies ParamError;
      }
    },
    rebalance,
  };
  const allocationColumns = {
    rebalanceColumns: (ctx: ColumnsContext): Target[] =>
      rebalance({ date: ctx.date, equity: ctx.equity, cash: ctx.cash, assets: statesOfColumns(ctx.assets) }),
  };
  return { allocation, allocationColumns };
}

function checkIdentity(cls: StrategyClass): void {
  if (!/^[a-z0-9_-]{1,64}$/.test(cls.NAME)) {
    throw new Error(`NAME ${JSON.stringify(cls.NAME)}: 1 to 64 lower-case letters, digits, '-' and '_'`);
  }
  if (!/^\d+\.\d+\.\d+([-+].*)?$/.test(cls.VERSION)) {
    throw new Error(`VERSION ${JSON.stringify(cls.VERSION)} is not semver (e.g. 0.1.0)`);
  }
}
