// Pieces the backtest page's tabs share: the synthetic-data banner (the
// Result tab's, also on Sweep, Walk-forward and Monte Carlo) and the table
// of the strategy's figures beside each benchmark's.
import type { BacktestResponse } from "../api/endpoints";
import { Help } from "../glossary-link";
import { int, num, pct, signClass } from "../lib";
import { signedPct } from "../forecast";

/** How many assets of a run had real, ingested and synthetic prices. */
export interface Sources {
  real: number;
  ingested: number;
  synthetic: number;
}

/** The Result tab's condition: more than half of the assets used have synthetic prices. */
export function mostlySynthetic(ds: Sources | null | undefined): boolean {
  if (!ds) return false;
  const used = ds.real + ds.ingested + ds.synthetic;
  return used > 0 && ds.synthetic * 2 > used;
}

/** `metadata.data_sources` of an answer, when it carries one (the sweep's and walk-forward's may not). */
export function sourcesOf(x: unknown): Sources | null {
  const m = (x as { metadata?: { data_sources?: unknown } } | null)?.metadata;
  const d = m?.data_sources as Record<string, unknown> | undefined;
  if (!d || typeof d !== "object") return null;
  const n = (k: string) => (typeof d[k] === "number" && Number.isFinite(d[k]) ? (d[k] as number) : 0);
  return { real: n("real"), ingested: n("ingested"), synthetic: n("synthetic") };
}

/**
 * The banner of a result built mostly from synthetic prices (shown when
 * `mostlySynthetic`). `scope` says what was counted: the assets the run
 * traded (the server's count), or the assets of the universe asked for
 * (the catalog's count, for answers that do not say which were used).
 */
export function SyntheticBanner({ ds, scope = "traded", subject = "this result" }: { ds: Sources; scope?: "traded" | "universe"; subject?: string }) {
  if (!mostlySynthetic(ds)) return null;
  const used = ds.real + ds.ingested + ds.synthetic;
  return (
    <div class="note note-warn bt-synthetic" id="bt-synthetic" role="note" data-scope={scope}>
      <strong>Most of these prices are synthetic: {subject} says nothing about real markets.</strong> {int(ds.synthetic)} of
      the {int(used)} assets {scope === "traded" ? "traded" : "of this universe in the catalog"} have generated demo prices, not
      market data. <Help term="synthetic" label="a synthetic price" />
    </div>
  );
}

/** The four figures the benchmarks table compares. */
export interface CurveFigures {
  total_return: number | null;
  cagr: number | null;
  sharpe_ratio: number | null;
  max_drawdown: number | null;
}

const fin = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * The figures of an equity curve E_0..E_N with `periods` returns a year, by
 * the server's formulas (crates/backtest/src/metrics.rs): total return
 * E_N/E_0 − 1; CAGR (E_N/E_0)^(1/years) − 1 with years = N/periods; Sharpe
 * mean(r)/sd(r, N−1)·√periods of the daily simple returns; max drawdown
 * min(E/cummax(E) − 1).
 */
export function curveFigures(equity: readonly number[], periods: number): CurveFigures {
  const none = { total_return: null, cagr: null, sharpe_ratio: null, max_drawdown: null };
  if (!equity || equity.length === 0 || !(periods > 0)) return none;
  const e0 = equity[0];
  const en = equity[equity.length - 1];
  const r: number[] = [];
  for (let i = 1; i < equity.length; i++) r.push(equity[i] / equity[i - 1] - 1);
  const n = r.length;
  const years = n / periods;
  const total_return = fin(en / e0 - 1);
  const cagr = n > 0 && e0 > 0 && en >= 0 ? fin(Math.pow(en / e0, 1 / years) - 1) : null;
  let sharpe_ratio: number | null = null;
  if (n >= 2) {
    const mean = r.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
    sharpe_ratio = sd > 0 ? fin((mean / sd) * Math.sqrt(periods)) : null;
  }
  let peak = -Infinity;
  let max_drawdown: number | null = null;
  for (const e of equity) {
    peak = Math.max(peak, e);
    const dd = e / peak - 1;
    if (Number.isFinite(dd)) max_drawdown = max_drawdown === null ? dd : Math.min(max_drawdown, dd);
  }
  return { total_return, cagr, sharpe_ratio, max_drawdown };
}

/** Display names of the server's benchmarks. */
export const BENCHMARK_LABELS: Record<string, string> = {
  equal_weight_buy_hold: "Equal weight, buy & hold",
  equal_weight_rebalanced: "Equal weight, rebalanced",
};
export const benchmarkLabel = (name: string) => BENCHMARK_LABELS[name] ?? name.replace(/_/g, " ");
/** Benchmark names in the order shown: the two baskets, then the chosen tickers. */
export const benchmarkOrder = (names: string[]) =>
  [...names].sort((a, b) => Number(!(a in BENCHMARK_LABELS)) - Number(!(b in BENCHMARK_LABELS)) || (a < b ? -1 : a > b ? 1 : 0));

/** "the equal-weight, buy & hold benchmark". */
function benchmarkPhrase(name: string): string {
  const l = BENCHMARK_LABELS[name];
  return l ? `the ${l.replace(/^Equal weight/, "equal-weight")} benchmark` : `the benchmark ${name.replace(/_/g, " ")}`;
}

/**
 * A benchmark's figures: those the server sends for it (a `metrics` object
 * beside its curve, when it has one), the rest computed from its equity
 * curve; all null without a curve.
 */
export function benchmarkFigures(b: unknown, periods: number): CurveFigures {
  const body = (b ?? {}) as { equity?: unknown; metrics?: Record<string, unknown> };
  const eq = Array.isArray(body.equity) && body.equity.every((x) => typeof x === "number") ? (body.equity as number[]) : null;
  const computed = eq ? curveFigures(eq, periods) : { total_return: null, cagr: null, sharpe_ratio: null, max_drawdown: null };
  const sent = body.metrics && typeof body.metrics === "object" ? body.metrics : {};
  const pick = (k: keyof CurveFigures) => (typeof sent[k] === "number" && Number.isFinite(sent[k]) ? (sent[k] as number) : computed[k]);
  return { total_return: pick("total_return"), cagr: pick("cagr"), sharpe_ratio: pick("sharpe_ratio"), max_drawdown: pick("max_drawdown") };
}

/** Every benchmark's figures, by name, in the response's order. */
export function allBenchmarkFigures(r: BacktestResponse): [string, CurveFigures][] {
  return benchmarkOrder(Object.keys(r.benchmarks ?? {})).map((name) => [name, benchmarkFigures(r.benchmarks[name], r.metadata.periods_per_year)]);
}

/** The strategy's row and one per benchmark: total return, CAGR, Sharpe, max drawdown; and who made more. */
export function BenchmarksTable({ r }: { r: BacktestResponse }) {
  const m = r.metrics;
  const mine: CurveFigures = { total_return: m.total_return ?? null, cagr: m.cagr ?? null, sharpe_ratio: m.sharpe_ratio ?? null, max_drawdown: m.max_drawdown ?? null };
  const rows = allBenchmarkFigures(r);
  const known = rows.filter(([, f]) => f.total_return !== null);
  const beat = mine.total_return === null ? [] : known.filter(([, f]) => (f.total_return as number) > (mine.total_return as number));
  const cells = (f: CurveFigures) => (
    <>
      <td class={`num ${signClass(f.total_return)}`} data-figure="total_return" data-value={f.total_return ?? ""}>
        {pct(f.total_return)}
      </td>
      <td class={`num ${signClass(f.cagr)}`} data-figure="cagr" data-value={f.cagr ?? ""}>
        {pct(f.cagr)}
      </td>
      <td class="num" data-figure="sharpe_ratio" data-value={f.sharpe_ratio ?? ""}>
        {num(f.sharpe_ratio)}
      </td>
      <td class={`num ${signClass(f.max_drawdown)}`} data-figure="max_drawdown" data-value={f.max_drawdown ?? ""}>
        {pct(f.max_drawdown)}
      </td>
    </>
  );
  return (
    <>
      <div class="table-wrap" tabIndex={0} role="region" aria-label="The strategy's figures beside each benchmark's">
        <table class="table small bt-benchmarks" id="bt-benchmarks">
          <caption class="sr-only">Total return, CAGR, Sharpe ratio and maximum drawdown of the strategy and of each benchmark over the same dates</caption>
          <thead>
            <tr>
              <th scope="col">Curve</th>
              <th scope="col" class="num">
                Total return <Help term="total-return" />
              </th>
              <th scope="col" class="num">
                CAGR <Help term="cagr" label="CAGR" />
              </th>
              <th scope="col" class="num">
                Sharpe <Help term="sharpe" label="the Sharpe ratio" />
              </th>
              <th scope="col" class="num">
                Max drawdown <Help term="max-drawdown" />
              </th>
            </tr>
          </thead>
          <tbody>
            <tr class="current" data-row="strategy">
              <th scope="row">Strategy</th>
              {cells(mine)}
            </tr>
            {rows.map(([name, f]) => (
              <tr key={name} data-row={name}>
                <th scope="row">{benchmarkLabel(name)}</th>
                {cells(f)}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {mine.total_return !== null && known.length > 0 && (
        <p class="bt-beat" id="bt-beat" data-beaten={beat.length > 0 ? "true" : "false"}>
          {beat.length > 0 ? (
            beat.map(([name, f]) => (
              <strong key={name} class="bt-beaten">
                {capitalise(benchmarkPhrase(name))} made more than the strategy: {signedPct(f.total_return, 2)} against{" "}
                {signedPct(mine.total_return, 2)}.{" "}
              </strong>
            ))
          ) : (
            <>
              The strategy made more than {known.length === 1 ? benchmarkPhrase(known[0][0]) : `each of the ${known.length} benchmarks`}:{" "}
              {signedPct(mine.total_return, 2)} against {known.map(([, f]) => signedPct(f.total_return, 2)).join(" and ")}.
            </>
          )}
        </p>
      )}
      <p class="muted small" id="bt-benchmarks-note">
        The benchmarks are equal-weight baskets of the run's assets over the same dates from the same capital, without trading
        costs: bought once and held, or brought back to equal weights on the strategy's rebalancing schedule. Their figures
        are computed here from their equity curves with the server's formulas ({int(r.metadata.periods_per_year)} returns a
        year) where the server does not send them.
      </p>
    </>
  );
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
