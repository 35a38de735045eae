// The backtest page. Its URL carries every parameter of the run shown, so a
// shared link reproduces the result: opening a /backtest URL with parameters
// runs it (the backtest is deterministic). The number of positions fits the
// chosen universe unless the user sets it, and a result built mostly from
// synthetic prices says so in a banner.
//
// Tabs (issue 29): Result (that backtest), Sweep, Walk-forward and Monte
// Carlo share the form; `?tab=` names the tab (Result without it) and each
// tab's own fields travel in the URL next to the backtest's, so a copied
// URL reproduces the view. The research views are in backtest-research.tsx.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { ApiError, describe, fieldOf } from "../api/client";
import { api, CATEGORIES, type AssetList, type BacktestRequest, type BacktestResponse } from "../api/endpoints";
import {
  MONTE_CARLO_COST,
  research,
  researchCost,
  SWEEPABLE,
  type MonteCarloRequest,
  type MonteCarloResponse,
  type SweepParam,
  type SweepRequest,
  type SweepResponse,
  type SweepRow,
  type WalkForwardRequest,
  type WalkForwardResponse,
} from "../api/research";
import { assetUrl, withQuery, type Location } from "../router";
import { axis, Chart, pctAxis, type Opts, type Theme } from "../chart";
import { DatedPrice, utcStamp } from "../facts";
import { Help } from "../glossary-link";
import { compact, Card, ErrorNote, Loading, int, num, pct, price, signClass, useData, useTitle } from "../lib";
import { signedNum } from "../format";
import { Downloads } from "./backtest-downloads";
import { RunProgressBar, startRun, type Run } from "../run-progress";
import { allBenchmarkFigures, BenchmarksTable, benchmarkLabel, benchmarkOrder, sourcesOf, SyntheticBanner, type Sources } from "./backtest-figures";
import { combinations, MonteCarloView, RankBySelect, SweepEditor, sweepValues, SweepView, WalkForwardView, type SweepField } from "./backtest-research";

/** The server's default number of positions (BacktestRequest.top_n). */
const TOP_N = 10;

/**
 * Form fields, as strings, with the server's defaults (BacktestRequest);
 * an empty `top_n` is "what fits the universe" (at most TOP_N).
 */
const DEFAULTS = {
  strategy: "topn",
  universe: "category",
  category: "Crypto",
  tickers: "",
  benchmarks: "",
  weights: "",
  start_date: "",
  end_date: "",
  rebalance: "monthly",
  top_n: "",
  initial_capital: "100000",
  include_costs: "true",
  metric: "return",
  return_period: "90",
  num_segments: "20",
  decay_factor: "0.95",
  zscore_lookback: "252",
  zscore_entry: "2",
  zscore_exit: "0",
};
type Form = typeof DEFAULTS;
type Key = keyof Form;
const FIELDS = Object.keys(DEFAULTS) as Key[];
const SERVER_FIELDS = [...FIELDS.filter((f) => f !== "universe"), "initial_capital"];
const PAGE = 50;
const ADVANCED = ["metric", "return_period", "num_segments", "decay_factor", "zscore_lookback", "zscore_entry", "zscore_exit"];

/** Whether a URL asks for a run (it carries at least one parameter). */
function hasParams(q: URLSearchParams): boolean {
  return FIELDS.some((k) => q.has(k));
}

function tickerList(text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).map((t) => t.trim()).filter(Boolean))];
}

/** The strategy that takes `weights` (the universe is then their tickers). */
const weighted = (f: { strategy?: string }) => f.strategy === "portfolio";

/**
 * "SPY 60, TLT 40%" or "SPY: 60" as `weights`: ticker → share of equity. An
 * entry whose percentage does not parse goes as typed, for the server to
 * name it.
 */
export function parseWeights(text: string): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  for (const entry of text.split(/[,;\n]+/).map((e) => e.trim()).filter(Boolean)) {
    const m = /^(\S+?)\s*[:=]?\s+([^\s%]+)\s*%?$|^(\S+?)[:=]([^\s%]+)\s*%?$/.exec(entry);
    const ticker = m ? (m[1] ?? m[3]) : entry.split(/[\s:=]/)[0];
    const raw = m ? (m[2] ?? m[4]) : entry.slice(ticker.length).trim();
    const x = Number(raw);
    out[ticker] = raw !== "" && Number.isFinite(x) ? x / 100 : raw;
  }
  return out;
}

/**
 * The default `top_n` for a universe of `n` tradeable assets: the server
 * refuses more positions than tradeable assets, and longshort holds top_n
 * long and top_n short (2·top_n).
 */
export function fittedTopN(n: number | null, strategy: string): number {
  if (n === null) return TOP_N;
  const room = strategy === "longshort" ? Math.floor(n / 2) : n;
  return Math.max(1, Math.min(TOP_N, room));
}

/** The count of tradeable assets a `top_n` refusal names, if it names one. */
function tradeableIn(e: unknown): number | null {
  if (!(e instanceof ApiError) || e.status !== 400) return null;
  const m = /top_n must be between 1 and (\d+)/.exec(e.detail) ?? /the universe has (\d+)/.exec(e.detail);
  return m ? Number(m[1]) : null;
}

/** How many assets of the catalog `list` a universe can hold (those with prices). */
function universeSize(f: Form, list: AssetList | null): number | null {
  if (weighted(f)) return Object.keys(parseWeights(f.weights)).length;
  if (byTickers(f.universe)) return tickerList(f.tickers).length;
  if (!list) return null;
  return list.assets.filter((a) => a.last_price_date && (f.universe === "all" || a.category === f.category) && (!f.start_date || a.last_price_date >= f.start_date)).length;
}

/**
 * The data sources of the catalog's assets in the universe that `base`
 * (a run's fields) names, counted as `universeSize` counts them: for the
 * answers that do not say which assets they used (sweep, walk-forward).
 */
function universeSources(base: Record<string, string>, list: AssetList | null): Sources | null {
  if (!list) return null;
  const universe = base.universe ?? DEFAULTS.universe;
  const listed = weighted(base) ? Object.keys(parseWeights(base.weights ?? "")) : byTickers(universe) ? tickerList(base.tickers ?? "") : null;
  const wanted = listed ? new Set(listed.map((t) => t.toUpperCase())) : null;
  const ds: Sources = { real: 0, ingested: 0, synthetic: 0 };
  for (const a of list.assets) {
    if (!a.last_price_date) continue;
    if (wanted ? !wanted.has(a.ticker.toUpperCase()) : universe !== "all" && a.category !== (base.category ?? DEFAULTS.category)) continue;
    if (!wanted && base.start_date && a.last_price_date < base.start_date) continue;
    const src = a.data_source as string;
    if (src === "real" || src === "ingested" || src === "synthetic") ds[src]++;
  }
  return ds.real + ds.ingested + ds.synthetic > 0 ? ds : null;
}

/** Universes sent as `tickers`: typed ones, or the watchlist's (copied into the form when chosen, so a run's URL reproduces it). */
const byTickers = (universe: string) => universe === "tickers" || universe === "watchlist";

const SUBJECT: Record<Tab, string> = { result: "this result", sweep: "this sweep", "walk-forward": "this walk-forward", "monte-carlo": "this simulation" };

function fromQuery(q: URLSearchParams): Form {
  const f = { ...DEFAULTS };
  for (const k of FIELDS) {
    const v = q.get(k);
    if (v !== null) f[k] = v;
  }
  return f;
}

function toRequest(f: Form): BacktestRequest {
  // A number box with a typo goes to the server as the text typed, so that
  // its 400 names the field; empty boxes are left out (server defaults).
  const n = (k: Key) => {
    const v = f[k].trim();
    if (v === "") return undefined;
    const x = Number(v);
    return Number.isFinite(x) ? x : v;
  };
  const body: Record<string, unknown> = {
    strategy: f.strategy,
    rebalance: f.rebalance,
    metric: f.metric,
    include_costs: f.include_costs === "true",
    top_n: n("top_n"),
    initial_capital: n("initial_capital"),
    return_period: n("return_period"),
    num_segments: n("num_segments"),
    decay_factor: n("decay_factor"),
    zscore_lookback: n("zscore_lookback"),
    zscore_entry: n("zscore_entry"),
    zscore_exit: n("zscore_exit"),
    start_date: f.start_date || undefined,
    end_date: f.end_date || undefined,
  };
  const bench = f.benchmarks.trim();
  if (bench) body.benchmarks = bench.toLowerCase() === "none" ? [] : tickerList(bench);
  if (weighted(f)) {
    // The weighted tickers are the universe; `portfolio` uses no top_n.
    body.weights = parseWeights(f.weights);
    delete body.top_n;
  } else if (byTickers(f.universe)) {
    body.tickers = tickerList(f.tickers);
  } else if (f.universe === "category") body.category = f.category;
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return body as BacktestRequest;
}

function drawdowns(eq: number[]): number[] {
  let peak = -Infinity;
  return eq.map((v) => {
    peak = Math.max(peak, v);
    return peak > 0 ? v / peak - 1 : 0;
  });
}

const ts = (d: string) => Date.parse(`${d}T00:00:00Z`) / 1000;

/** Dates on the time axis and in the legend are calendar dates (UTC), never shifted. */
const utcDate = (ts: number) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC");

function Results({ r, sources }: { r: BacktestResponse; sources: Map<string, string> }) {
  const [page, setPage] = useState(0);
  const names = benchmarkOrder(Object.keys(r.benchmarks));
  const data = useMemo(() => {
    const x = r.equity_curve.map((p) => ts(p.date));
    return [x, r.equity_curve.map((p) => p.equity), ...names.map((n) => r.benchmarks[n].equity)] as uPlot.AlignedData;
  }, [r]);
  const eqOptions = useMemo(
    () => (t: Theme) =>
      ({
        cursor: { drag: { x: true, y: false } },
        tzDate: utcDate,
        // Log scale: a curve that grew 50-fold and one that doubled both stay readable.
        scales: { x: { time: true }, y: { distr: 3 } },
        axes: [axis(t), axis(t, { size: 80, values: (_u: uPlot, v: number[]) => v.map((x) => compact(x)) })],
        series: [
          {},
          { label: "Strategy", stroke: t.accent2, width: 2, value: (_u: uPlot, v: number | null) => price(v) },
          ...names.map((n, i) => ({ label: benchmarkLabel(n), stroke: i === 0 ? t.muted : t.accent, width: 1, dash: i === 0 ? [5, 3] : undefined, value: (_u: uPlot, v: number | null) => price(v) })),
        ],
      }) as Opts,
    [r],
  );
  const dd = useMemo(() => [data[0], drawdowns(r.equity_curve.map((p) => p.equity))] as uPlot.AlignedData, [data]);
  const ddOptions = useMemo(
    () => (t: Theme) =>
      ({
        tzDate: utcDate,
        scales: { x: { time: true } },
        axes: [axis(t), axis(t, { size: 60, values: pctAxis })],
        series: [{}, { label: "Drawdown", stroke: t.neg, fill: t.band, width: 1, value: (_u: uPlot, v: number | null) => pct(v) }],
      }) as Opts,
    [],
  );
  const m = r.metrics;
  const ds = r.metadata.data_sources;
  const benchmarkReturns = new Map(allBenchmarkFigures(r).map(([n, f]) => [n, f.total_return]));
  const pages = Math.max(1, Math.ceil(r.trades.length / PAGE));
  const trades = r.trades.slice(page * PAGE, page * PAGE + PAGE);
  return (
    <>
      <SyntheticBanner ds={ds} />
      <p class="bt-window" id="bt-window">
        {r.metadata.strategy} {r.metadata.strategy_version} from <time dateTime={r.metadata.start_date}>{r.metadata.start_date}</time> to{" "}
        <time dateTime={r.metadata.end_date}>{r.metadata.end_date}</time> · {int(r.metadata.assets_count)} assets
      </p>
      <Card title="Equity curve against the benchmarks (log scale)" id="equity">
        <Chart id="chart-equity" data={data} options={eqOptions} height={300} label="Equity of the strategy and of its benchmarks over time" />
      </Card>
      <Card title="The strategy against the benchmarks" id="bt-vs">
        <BenchmarksTable r={r} />
      </Card>
      <div class="grid2">
        <Card title="Drawdown" id="bt-drawdown">
          <Chart id="chart-bt-drawdown" data={dd} options={ddOptions} height={200} label="Drawdown of the strategy's equity from its running peak" />
        </Card>
        <Card title="Metrics" id="metrics">
          <dl class="stats stats-2">
            <div><dt>Total return <Help term="total-return" /></dt><dd class={signClass(m.total_return)} id="bt-total-return">{pct(m.total_return)}</dd></div>
            <div><dt>CAGR <Help term="cagr" label="CAGR" /></dt><dd class={signClass(m.cagr)}>{pct(m.cagr)}</dd></div>
            <div><dt>Sharpe ratio <Help term="sharpe" label="the Sharpe ratio" /></dt><dd>{num(m.sharpe_ratio)}</dd></div>
            <div><dt>Sortino ratio <Help term="sortino" label="the Sortino ratio" /></dt><dd>{num(m.sortino_ratio)}</dd></div>
            <div><dt>Max drawdown <Help term="max-drawdown" /></dt><dd class="neg">{pct(m.max_drawdown)}</dd></div>
            <div><dt>Final equity</dt><dd>{price(m.final_equity)}</dd></div>
            <div><dt>Years</dt><dd>{num(m.years)}</dd></div>
            <div><dt>Trades <Help term="trades" /></dt><dd>{int(m.total_trades)}</dd></div>
            <div><dt>Trading costs <Help term="costs" label="trading costs" /></dt><dd>{price(m.total_costs)} ({num(m.cost_drag_pct)} %)</dd></div>
            <div><dt>Assets · rebalances</dt><dd>{int(r.metadata.assets_count)} · {int(r.metadata.rebalance_dates)}</dd></div>
          </dl>
          <p class="muted small">
            {r.metadata.strategy} {r.metadata.strategy_version} · <time dateTime={r.metadata.start_date}>{r.metadata.start_date}</time> to{" "}
            <time dateTime={r.metadata.end_date}>{r.metadata.end_date}</time> · engine {r.metadata.engine_version} · computed{" "}
            {utcStamp(r.metadata.calculated_at)}
          </p>
          <p class="muted small" id="bt-sources">
            Prices of the {int(r.metadata.assets_count)} assets used: {int(ds.real)} real · {int(ds.ingested)} ingested ·{" "}
            {int(ds.synthetic)} synthetic (generated, not market data) <Help term="data-sources" />
          </p>
          {r.metadata.unusable_assets_count > 0 && (
            <details class="small" id="bt-unusable">
              <summary>
                {int(r.metadata.unusable_assets_count)} assets of the universe could not be used for lack of data in the window
              </summary>
              <ul>
                {r.metadata.unusable_assets.map((u) => (
                  <li key={u.ticker}>
                    <a class="ticker" href={assetUrl(u.ticker)}>{u.ticker}</a>: {u.reason}
                  </li>
                ))}
                {r.metadata.unusable_assets_count > r.metadata.unusable_assets.length && <li class="muted">…and {int(r.metadata.unusable_assets_count - r.metadata.unusable_assets.length)} more</li>}
              </ul>
            </details>
          )}
        </Card>
      </div>
      <Card title="Risk and the benchmarks" id="bt-risk">
        <dl class="stats stats-2">
          <div><dt>Calmar ratio</dt><dd>{num(m.calmar_ratio)}</dd></div>
          <div><dt>Ulcer index</dt><dd>{num(m.ulcer_index)}</dd></div>
          <div>
            <dt>Longest drawdown</dt>
            <dd>
              {int(m.longest_drawdown_days)} days
              {m.longest_drawdown_days > 0 &&
                (m.longest_drawdown_recovery_days == null
                  ? " · not recovered"
                  : ` · recovered ${int(m.longest_drawdown_recovery_days)} days after its low`)}
            </dd>
          </div>
          <div><dt>Daily 95 % VaR · CVaR</dt><dd class="neg">{pct(m.var_95)} · {pct(m.cvar_95)}</dd></div>
          <div><dt>Exposure</dt><dd>{pct(m.exposure)} of days invested</dd></div>
          <div><dt>Turnover</dt><dd>{num(m.turnover)}× a year</dd></div>
          <div><dt>Best · worst month</dt><dd>{pct(m.best_month)} · {pct(m.worst_month)}</dd></div>
          <div><dt>Winning months</dt><dd>{pct(m.winning_months)}</dd></div>
        </dl>
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Figures against each benchmark">
          <table class="table small" id="bt-relative">
            <caption class="muted">Against each benchmark (daily returns, annualised), beside the benchmark's own total return (the strategy's: {pct(m.total_return)})</caption>
            <thead>
              <tr><th scope="col">Benchmark</th><th scope="col">Its total return</th><th scope="col">Beta</th><th scope="col">Alpha</th><th scope="col">Tracking error</th><th scope="col">Information ratio</th></tr>
            </thead>
            <tbody>
              {benchmarkOrder(Object.keys(m.relative)).map((name) => [name, m.relative[name]] as const).map(([name, rel]) => (
                <tr key={name} data-row={name}>
                  <th scope="row">{benchmarkLabel(name)}</th>
                  <td class={`rel-return ${signClass(benchmarkReturns.get(name))}`}>{pct(benchmarkReturns.get(name) ?? null)}</td>
                  <td>{num(rel.beta)}</td>
                  <td class={signClass(rel.alpha)}>{pct(rel.alpha)}</td>
                  <td>{pct(rel.tracking_error)}</td>
                  <td>{num(rel.information_ratio)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {(r.metadata.benchmarks_left_out ?? []).length > 0 && (
          <p class="muted small" id="bt-left-out" role="note">
            Left out: {r.metadata.benchmarks_left_out!.join(", ")}, whose stored prices do not cover this window (none on or before its first
            day, or none after it).
          </p>
        )}
        <p class="muted small">
          How each figure is computed: <a href="/methodology#backtest-metrics">Methodology</a>.
        </p>
      </Card>
      <Card title={`Trades (${int(r.trades.length)})`} id="trades">
        {r.trades.length === 0 ? (
          <p class="muted">The strategy made no trades in this window.</p>
        ) : (
          <>
            <div class="table-wrap">
              <table class="table compact">
                <caption class="sr-only">Trades, page {page + 1} of {pages}</caption>
                <thead>
                  <tr>
                    <th scope="col">Date</th>
                    <th scope="col">Ticker</th>
                    <th scope="col">Side</th>
                    <th scope="col" class="num col-opt">Quantity</th>
                    <th scope="col" class="num">
                      Fill price <Help term="data-sources" label="a price's date and source" />
                    </th>
                    <th scope="col" class="num col-opt">Cost</th>
                    <th scope="col" class="num">
                      Realised P&amp;L <Help term="realised-pnl" />
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {trades.map((t, i) => {
                    const src = sources.get(t.ticker);
                    return (
                      <tr key={page * PAGE + i}>
                        <td class="nowrap">
                          <time dateTime={t.date}>{t.date}</time>
                        </td>
                        <td>
                          <a href={assetUrl(t.ticker)}>{t.ticker}</a>
                        </td>
                        <td class={t.side === "BUY" ? "pos" : "neg"}>{t.side}</td>
                        <td class="num col-opt">{num(t.qty)}</td>
                        <td class="num">
                          {src ? (
                            <DatedPrice value={t.price} date={t.date} source={src} format={price} compact historical />
                          ) : (
                            <span class="dated-price compact" data-date={t.date}>
                              <span class="dp-value">{price(t.price)}</span>{" "}
                              <span class="dp-meta">
                                <time dateTime={t.date}>{t.date}</time>
                              </span>
                            </span>
                          )}
                        </td>
                        <td class="num col-opt">{num(t.cost)}</td>
                        <td class={`num ${signClass(t.realised_pnl)}`}>{t.realised_pnl === null ? "" : signedNum(t.realised_pnl)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            <nav class="pager" aria-label="Trades pages">
              <button type="button" class="btn btn-small" disabled={page === 0} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <span aria-live="polite">
                Page {page + 1} of {pages}
              </span>
              <button type="button" class="btn btn-small" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
                Next
              </button>
            </nav>
          </>
        )}
      </Card>
    </>
  );
}

/**
 * The Result tab's synthetic-data banner on a research tab, under the same
 * condition: from the answer's own `metadata.data_sources` (Monte Carlo),
 * else from the catalog's assets of the run's universe (sweep, walk-forward).
 */
function ResearchBanner({ tab, data, base, catalog }: { tab: Tab; data: unknown; base: Record<string, string>; catalog: AssetList | null }) {
  const own = sourcesOf(data);
  const ds = own ?? universeSources(base, catalog);
  return ds ? <SyntheticBanner ds={ds} scope={own ? "traded" : "universe"} subject={SUBJECT[tab]} /> : null;
}

/** The page's tabs: today's backtest and three ways of questioning it (issue 29). */
export type Tab = "result" | "sweep" | "walk-forward" | "monte-carlo";
const TABS: { id: Tab; label: string }[] = [
  { id: "result", label: "Result" },
  { id: "sweep", label: "Sweep" },
  { id: "walk-forward", label: "Walk-forward" },
  { id: "monte-carlo", label: "Monte Carlo" },
];
const tabOf = (q: URLSearchParams): Tab => TABS.find((t) => t.id === q.get("tab"))?.id ?? "result";
const sweeps = (t: Tab) => t === "sweep" || t === "walk-forward";

/** The research tabs' own fields, as strings, with the server's defaults. */
const EXTRA = { runs: "1000", block_days: "20", seed: "1", rank_by: "sharpe_ratio", train_years: "3", test_years: "1", mode: "rolling" };
type Extra = typeof EXTRA;
type XKey = keyof Extra;
const OWN: Record<Tab, XKey[]> = {
  result: [],
  "monte-carlo": ["runs", "block_days", "seed"],
  sweep: ["rank_by"],
  "walk-forward": ["rank_by", "train_years", "test_years", "mode"],
};
/** What the Sweep and Walk-forward tabs start with: 2 × 2 combinations. */
const SWEEP_DEFAULT: SweepField[] = [
  { param: "top_n", values: "3, 5" },
  { param: "rebalance", values: "weekly, monthly" },
];
const SWEEP_PREFIX = "sweep_";
const MAX_COMBINATIONS = 48;

function extraFromQuery(q: URLSearchParams): Extra {
  const x = { ...EXTRA };
  for (const k of Object.keys(EXTRA) as XKey[]) {
    const v = q.get(k);
    if (v !== null) x[k] = v;
  }
  return x;
}

/** `sweep_top_n=3,5&sweep_rebalance=weekly,monthly`: the parameters in the URL's order (the axes' order). */
function sweepFromQuery(q: URLSearchParams): SweepField[] {
  const out: SweepField[] = [];
  for (const [k, v] of q) {
    const p = k.startsWith(SWEEP_PREFIX) ? (k.slice(SWEEP_PREFIX.length) as SweepParam) : null;
    if (p && SWEEPABLE.includes(p) && !out.some((f) => f.param === p) && out.length < 3) out.push({ param: p, values: v });
  }
  return out.length ? out : SWEEP_DEFAULT;
}

/** The sweep view's own state: the third axis's value shown and the table's order. */
const viewFromQuery = (q: URLSearchParams) => ({ slice: q.get("slice"), sortBy: q.get("sort_by"), sort: q.get("sort") });

/** Whether a URL asks the tab it names for a run (it carries that tab's parameters). */
function wantsRun(t: Tab, q: URLSearchParams): boolean {
  if (t === "result") return hasParams(q);
  return OWN[t].some((k) => q.has(k)) || (sweeps(t) && [...q.keys()].some((k) => k.startsWith(SWEEP_PREFIX)));
}

/** The tab's own parameters in its URL (the base fields go first). */
function ownParams(t: Tab, x: Extra, sw: SweepField[]): Record<string, string> {
  const u: Record<string, string> = {};
  for (const k of OWN[t]) u[k] = x[k];
  if (sweeps(t)) for (const f of sw) u[SWEEP_PREFIX + f.param] = sweepValues(f).join(",");
  return u;
}

/** Rewrites the address bar without a navigation (no scroll, no history entry, the page keeps its state). */
function replaceUrl(url: string) {
  if (url !== location.pathname + location.search) history.replaceState(null, "", url);
}

type Answer = BacktestResponse | MonteCarloResponse | SweepResponse | WalkForwardResponse;
/** A tab's last run: its URL, the base fields it ran with, and the answer or the error. */
/** Quota units of the run `body` on tab `t` (what a download of it costs again). */
function runCost(t: Tab, body: Record<string, unknown>): number {
  if (t === "result") return 5;
  if (t === "monte-carlo") return MONTE_CARLO_COST;
  const sweep = (body.sweep ?? {}) as Record<string, unknown[]>;
  return researchCost(Object.values(sweep).reduce((n, v) => n * Math.max(1, v.length), 1));
}

interface Outcome {
  url: string;
  base: Record<string, string>;
  /** The body of the run answered, for its downloads. */
  body?: Record<string, unknown>;
  data: Answer | null;
  error: unknown;
  note: string | null;
}

const LEADS: Record<Tab, string> = {
  result: "",
  sweep: "Runs the backtest once for each combination of the values you list and maps the figure you rank by over them.",
  "walk-forward":
    "Cuts the window into train and test years: on each train split the sweep picks its best combination, which then runs unchanged on the test years that follow. Chained, the test splits show what choosing by backtest was worth.",
  "monte-carlo":
    "Draws new paths from the run's own daily returns by a stationary block bootstrap: blocks of consecutive days, about the block length on average, resampled with replacement — so each path is a new sequence of the run's own returns (some days twice, some not at all), not a reordering of them. It shows how much the result owed to the luck of the sequence; it cannot show how the strategy would do on days unlike the window's. The same seed gives the same numbers.",
};
const RUN_LABEL: Record<Tab, string> = { result: "Run backtest", sweep: "Run sweep", "walk-forward": "Run walk-forward", "monte-carlo": "Run Monte Carlo" };
const LOADING: Record<Tab, string> = {
  result: "Running the backtest… this can take a few seconds.",
  sweep: "Running every combination… this can take a while.",
  "walk-forward": "Running the sweep on every split… this can take a while.",
  "monte-carlo": "Running the backtest and resampling its returns…",
};

export function BacktestPage({ loc }: { loc: Location }) {
  useTitle("Backtest");
  const [tab, setTab] = useState<Tab>(() => tabOf(loc.query));
  const tabNow = useRef(tab);
  const [f, setF] = useState<Form>(() => fromQuery(loc.query));
  const [x, setX] = useState<Extra>(() => extraFromQuery(loc.query));
  const [sweep, setSweep] = useState<SweepField[]>(() => sweepFromQuery(loc.query));
  const [view, setViewState] = useState(() => viewFromQuery(loc.query));
  const viewNow = useRef(view);
  const setView = (v: typeof view) => {
    viewNow.current = v;
    setViewState(v);
  };
  const strategies = useData(() => api.strategies(), []);
  const [running, setRunning] = useState<Tab | null>(null);
  // The run under way: its Progress-Id and its Cancel.
  const [live, setLive] = useState<Run | null>(null);
  const [outcomes, setOutcomes] = useState<Partial<Record<Tab, Outcome>>>({});
  const outcomesNow = useRef(outcomes);
  outcomesNow.current = outcomes;
  // The catalog: how many assets a category holds (the default positions)
  // and each traded asset's data source. A Free account gets a 402: then
  // the defaults follow the tickers typed, or the server's 10.
  const catalogP = useRef<Promise<AssetList | null> | null>(null);
  const loadCatalog = () => (catalogP.current ??= api.assets().catch(() => null));
  const [catalog, setCatalog] = useState<AssetList | null>(null);
  const sources = useMemo(() => new Map((catalog?.assets ?? []).map((a) => [a.ticker, a.data_source as string])), [catalog]);
  const set = (k: Key) => (e: Event) => {
    const el = e.target as HTMLInputElement;
    setF({ ...f, [k]: el.type === "checkbox" ? String(el.checked) : el.value });
  };
  const [watchError, setWatchError] = useState<unknown>(null);
  // "My watchlist": its tickers go into the form, as typed ones would.
  const pickUniverse = (e: Event) => {
    const universe = (e.target as HTMLSelectElement).value;
    setF({ ...f, universe });
    setWatchError(null);
    if (universe !== "watchlist") return;
    api.watchlist().then(
      (w) => setF((g) => (g.universe === "watchlist" ? { ...g, tickers: w.tickers.map((i) => i.ticker).join(", ") } : g)),
      (err) => setWatchError(err),
    );
  };
  const setExtra = (k: XKey) => (e: Event) => setX({ ...x, [k]: (e.target as HTMLInputElement).value });
  const outcome = outcomes[tab];
  const error = outcome?.error ?? null;
  const fields = [...SERVER_FIELDS, ...OWN[tab], ...(sweeps(tab) ? ["sweep"] : [])];
  const bad = fieldOf(error, fields);
  const msg = error ? describe(error, "Backtests") : null;
  const autoTop = fittedTopN(universeSize(f, catalog), f.strategy);
  // A swept parameter replaces its base field (the server refuses both).
  const swept = new Set<string>(sweeps(tab) ? sweep.map((s) => s.param) : []);
  const combos = combinations(sweep);

  const execute = async (t: Tab, form: Form, ex: Extra, sw: SweepField[]) => {
    setRunning(t);
    const run = startRun();
    setLive(run);
    const names = new Set<string>(sweeps(t) ? sw.map((s) => s.param) : []);
    const auto = form.top_n.trim() === "" && !names.has("top_n") && !weighted(form);
    const req = toRequest(form) as Record<string, unknown>;
    for (const p of names) delete req[p];
    let top = auto ? fittedTopN(universeSize(form, await loadCatalog()), form.strategy) : null;
    if (top !== null) req.top_n = top;
    // The tab's own fields; a number box with a typo goes as typed, for the server to name it.
    const n = (v: string) => {
      const s = v.trim();
      if (s === "") return undefined;
      const y = Number(s);
      return Number.isFinite(y) ? y : s;
    };
    const own: Record<string, unknown> = {};
    if (t === "monte-carlo") Object.assign(own, { runs: n(ex.runs), block_days: n(ex.block_days), seed: n(ex.seed) });
    if (sweeps(t)) Object.assign(own, { sweep: Object.fromEntries(sw.map((s) => [s.param, sweepValues(s)])), rank_by: ex.rank_by });
    if (t === "walk-forward") Object.assign(own, { train_years: n(ex.train_years), test_years: n(ex.test_years), mode: ex.mode });
    for (const k of Object.keys(own)) if (own[k] === undefined) delete own[k];
    let sent: Record<string, unknown> = {};
    const call = (body: Record<string, unknown>): Promise<Answer> => {
      const b = { ...body, ...own };
      sent = b;
      if (t === "monte-carlo") return research.monteCarlo(b as MonteCarloRequest, run);
      if (t === "sweep") return research.sweep(b as SweepRequest, run);
      if (t === "walk-forward") return research.walkForward(b as WalkForwardRequest, run);
      return api.backtest(b as BacktestRequest, run);
    };
    const tabParam = t === "result" ? {} : { tab: t };
    try {
      let res: Answer;
      let note: string | null = null;
      try {
        res = await call(req);
      } catch (e) {
        // A default the server refuses (fewer assets have enough history
        // than the catalog lists) is fitted to the count it names, once.
        const c = auto && top !== null ? tradeableIn(e) : null;
        const refit = c !== null ? fittedTopN(c, form.strategy) : null;
        if (c === null || refit === null || refit >= top! || refit * (form.strategy === "longshort" ? 2 : 1) > c) throw e;
        top = refit;
        res = await call({ ...req, top_n: refit });
        note = `Positions set to ${refit}: only ${c} assets of this universe have enough history (300 price rows) by the end date.`;
      }
      // The URL carries every parameter of this run, with the positions
      // used and the window run, so that opening it reproduces the result.
      const base: Record<string, string> = { ...form };
      if (top !== null) base.top_n = String(top);
      if (!form.start_date) base.start_date = res.metadata.start_date;
      if (!form.end_date) base.end_date = res.metadata.end_date;
      if (!byTickers(form.universe) || weighted(form)) delete base.tickers;
      if (form.universe !== "category" || weighted(form)) delete base.category;
      if (weighted(form)) delete base.top_n;
      else delete base.weights;
      for (const p of names) delete base[p];
      // A new sweep keeps the view's slice and order.
      const v = viewNow.current;
      const kept = t === "sweep" ? { slice: v.slice, sort_by: v.sortBy, sort: v.sort } : {};
      const url = withQuery("/backtest", { ...tabParam, ...base, ...ownParams(t, ex, sw), ...kept });
      setOutcomes((o) => ({ ...o, [t]: { url, base, body: sent, data: res, error: null, note } }));
      if (tabNow.current === t) replaceUrl(url);
    } catch (err) {
      const changed: Record<string, string> = {};
      for (const k of FIELDS) if (form[k] !== DEFAULTS[k] && !names.has(k)) changed[k] = form[k];
      const url = withQuery("/backtest", { ...tabParam, ...changed, ...ownParams(t, ex, sw) });
      setOutcomes((o) => ({ ...o, [t]: { url, base: changed, data: null, error: err, note: null } }));
      if (tabNow.current === t) replaceUrl(url);
    } finally {
      setLive(null);
      setRunning(null);
    }
  };

  const run = (e: Event) => {
    e.preventDefault();
    void execute(tab, f, x, sweep);
  };

  // The catalog once; a shared link (a URL with the tab's parameters) runs at once.
  useEffect(() => {
    loadCatalog().then(setCatalog);
    const t = tabOf(loc.query);
    if (wantsRun(t, loc.query)) void execute(t, f, x, sweep);
  }, []);

  // A navigation to another /backtest URL (a sweep cell's link, Back, the
  // header's link) shows what that URL says: its tab, its fields, its run.
  const mounted = useRef(false);
  useEffect(() => {
    if (!mounted.current) {
      mounted.current = true;
      return;
    }
    const q = loc.query;
    const t = tabOf(q);
    const form = fromQuery(q);
    const ex = extraFromQuery(q);
    const sw = sweepFromQuery(q);
    tabNow.current = t;
    setTab(t);
    setF(form);
    setX(ex);
    setSweep(sw);
    setView(viewFromQuery(q));
    if (outcomesNow.current[t]?.url === loc.href) return; // already shown
    if (wantsRun(t, q)) void execute(t, form, ex, sw);
    else
      setOutcomes((o) => {
        const rest = { ...o };
        delete rest[t];
        return rest;
      });
  }, [loc]);

  /** Shows tab `t`: its last run's URL, else the base fields of the address bar (no run). */
  const selectTab = (t: Tab, focus = false) => {
    if (focus) document.getElementById(`tab-${t}`)?.focus();
    if (t === tabNow.current) return;
    tabNow.current = t;
    setTab(t);
    const o = outcomes[t];
    if (o) {
      replaceUrl(o.url);
      return;
    }
    const q = new URLSearchParams(location.search);
    const keep: Record<string, string> = t === "result" ? {} : { tab: t };
    for (const k of FIELDS) {
      const v = q.get(k);
      if (v !== null) keep[k] = v;
    }
    replaceUrl(withQuery("/backtest", keep));
  };
  const onTabKey = (e: KeyboardEvent) => {
    const i = TABS.findIndex((t) => t.id === tab);
    const last = TABS.length - 1;
    const j = e.key === "ArrowRight" ? (i === last ? 0 : i + 1) : e.key === "ArrowLeft" ? (i === 0 ? last : i - 1) : e.key === "Home" ? 0 : e.key === "End" ? last : -1;
    if (j < 0) return;
    e.preventDefault();
    selectTab(TABS[j].id, true);
  };
  /** The sweep view's state in the URL (the run's URL follows, so that switching tabs keeps it). */
  const onView = (patch: { slice?: string | null; sortBy?: string | null; sort?: string | null }) => {
    const v = { ...view, ...patch };
    setView(v);
    const q = new URLSearchParams(location.search);
    for (const [k, val] of [
      ["slice", v.slice],
      ["sort_by", v.sortBy],
      ["sort", v.sort],
    ] as const) {
      if (val) q.set(k, val);
      else q.delete(k);
    }
    const url = `/backtest?${q}`;
    replaceUrl(url);
    setOutcomes((o) => (o.sweep ? { ...o, sweep: { ...o.sweep, url } } : o));
  };
  /** A sweep combination's own backtest: the sweep's base fields with its values, in the Result tab. */
  const comboHref = (row: SweepRow) => {
    const base = outcomes.sweep?.base ?? {};
    const vals: Record<string, string> = {};
    for (const [k, v] of Object.entries(row.params)) vals[k] = String(v);
    return withQuery("/backtest", { tab: "result", ...base, ...vals });
  };

  const err = (k: string) =>
    bad === k ? (
      <span class="field-error" id={`b-${k}-err`} role="alert">
        {msg}
      </span>
    ) : null;
  const aria = (k: string) => (bad === k ? { "aria-invalid": true, "aria-describedby": `b-${k}-err` } : {});
  const sweptHint = (k: string) => (
    <span class="hint" id={`b-${k}-hint`}>
      Swept below
    </span>
  );
  const numField = (k: Key, label: string, attrs: Record<string, unknown> = {}) => (
    <div class={`field${bad === k ? " has-error" : ""}`}>
      <label for={`b-${k}`}>{label}</label>
      <input id={`b-${k}`} type="number" value={swept.has(k) ? "" : f[k]} onInput={set(k)} disabled={swept.has(k)} {...aria(k)} {...(swept.has(k) ? { "aria-describedby": `b-${k}-hint` } : {})} {...attrs} />
      {err(k) ?? (swept.has(k) ? sweptHint(k) : null)}
    </div>
  );
  const extraField = (k: XKey, label: string, attrs: Record<string, unknown> = {}, hint?: string) => (
    <div class={`field${bad === k ? " has-error" : ""}`}>
      <label for={`b-${k}`}>{label}</label>
      <input id={`b-${k}`} type="number" value={x[k]} onInput={setExtra(k)} {...aria(k)} {...(bad !== k && hint ? { "aria-describedby": `b-${k}-hint` } : {})} {...attrs} />
      {err(k) ??
        (hint ? (
          <span class="hint" id={`b-${k}-hint`}>
            {hint}
          </span>
        ) : null)}
    </div>
  );
  const strat = strategies.data?.strategies.find((s) => s.name === f.strategy);
  const sweepErrorParam = bad === "sweep" && error instanceof ApiError ? (/sweep\.(\w+)/.exec(error.detail)?.[1] ?? /sweep names '(\w+)'/.exec(error.detail)?.[1] ?? null) : null;
  const cost =
    tab === "result"
      ? "This costs 5 quota units (a normal request costs 1)."
      : tab === "monte-carlo"
        ? `This costs ${MONTE_CARLO_COST} quota units (a normal request costs 1).`
        : `${int(combos)} combination${combos === 1 ? "" : "s"} · ${int(researchCost(combos))} quota units (1 a combination, at least 5)${combos > MAX_COMBINATIONS ? ` — at most ${MAX_COMBINATIONS} combinations` : ""}`;
  const data = running === tab ? null : (outcome?.data ?? null);

  return (
    <main class="page backtest-page">
      <h1>Backtest a strategy</h1>
      <p class="lead">
        Replays a strategy over history using only what the engine knew on each day, with trading costs, against two
        equal-weight baskets and the benchmarks you pick (the S&amp;P 500 by default).
      </p>
      <div class="tabs" role="tablist" aria-label="Backtest views" onKeyDown={onTabKey}>
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            class="tab"
            id={`tab-${t.id}`}
            aria-selected={t.id === tab}
            aria-controls="bt-panel"
            tabIndex={t.id === tab ? 0 : -1}
            onClick={() => selectTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="bt-panel" class="tab-panel" aria-labelledby={`tab-${tab}`} data-tab={tab}>
        {LEADS[tab] && (
          <p class="tab-lead" id="tab-lead">
            {tab === "monte-carlo" ? LEADS[tab].replace("about the block length", `about ${x.block_days.trim() || EXTRA.block_days} days`) : LEADS[tab]}
          </p>
        )}
        <Card>
          <form class="params bt-form" noValidate onSubmit={run}>
            <fieldset>
              <legend>Strategy</legend>
              <div class={`field${bad === "strategy" ? " has-error" : ""}`}>
                <label for="b-strategy">Strategy</label>
                <select id="b-strategy" value={f.strategy} onChange={set("strategy")} {...aria("strategy")}>
                  {(strategies.data?.strategies ?? [{ name: f.strategy, version: "", description: "", sha256: "" }]).map((s) => (
                    <option key={s.name} value={s.name}>
                      {s.name}
                      {s.version ? ` ${s.version}` : ""}
                    </option>
                  ))}
                </select>
                {err("strategy")}
              </div>
              <p class="hint strategy-desc">{strategies.loading ? "Loading strategies…" : strat?.description}</p>
              {!strategies.loading && strategies.error && !(strategies.error instanceof ApiError && strategies.error.status === 402) ? (
                <ErrorNote error={strategies.error} what="Strategies" />
              ) : null}
              {!weighted(f) && <div class={`field${bad === "top_n" ? " has-error" : ""}`}>
                <label for="b-top_n">Positions (top N)</label>
                <input
                  id="b-top_n"
                  type="number"
                  min={1}
                  max={500}
                  value={swept.has("top_n") ? "" : f.top_n}
                  disabled={swept.has("top_n")}
                  placeholder={swept.has("top_n") ? "swept" : `${autoTop} (fits the universe)`}
                  onInput={set("top_n")}
                  {...aria("top_n")}
                  {...(bad === "top_n" ? {} : { "aria-describedby": "b-top_n-hint" })}
                />
                {err("top_n") ??
                  (swept.has("top_n") ? (
                    sweptHint("top_n")
                  ) : (
                    <span class="hint" id="b-top_n-hint">
                      {f.strategy === "longshort"
                        ? `Empty: ${autoTop}, the default ${TOP_N} capped at half the universe (top N long and top N short).`
                        : `Empty: ${autoTop}, the default ${TOP_N} capped at the size of the universe.`}
                    </span>
                  ))}
              </div>}
              <div class="field">
                <label for="b-rebalance">Rebalance</label>
                <select id="b-rebalance" value={f.rebalance} onChange={set("rebalance")} disabled={swept.has("rebalance")} {...(swept.has("rebalance") ? { "aria-describedby": "b-rebalance-hint" } : {})}>
                  <option value="daily">Daily</option>
                  <option value="weekly">Weekly</option>
                  <option value="monthly">Monthly</option>
                  <option value="never">Never (buy and hold)</option>
                </select>
                {err("rebalance") ?? (swept.has("rebalance") ? sweptHint("rebalance") : null)}
              </div>
            </fieldset>
            <fieldset>
              <legend>Universe and window</legend>
              {weighted(f) ? (
                <div class={`field grow${bad === "weights" ? " has-error" : ""}`}>
                  <label for="b-weights">Weights (ticker and % of equity)</label>
                  <input id="b-weights" type="text" value={f.weights} placeholder="^GSPC 60, ^IXIC 30" onInput={set("weights")} {...aria("weights")} {...(bad === "weights" ? {} : { "aria-describedby": "b-weights-hint" })} />
                  {err("weights") ?? (
                    <span class="hint" id="b-weights-hint">
                      at most 100 % together; the rest stays in cash. These assets are the universe.
                    </span>
                  )}
                </div>
              ) : (
              <>
              <div class="field">
                <label for="b-universe">Trade</label>
                <select id="b-universe" value={f.universe} onChange={pickUniverse}>
                  <option value="category">One category</option>
                  <option value="watchlist">My watchlist</option>
                  <option value="tickers">These tickers</option>
                  <option value="all">Every active asset</option>
                </select>
              </div>
              {f.universe === "category" && (
                <div class={`field${bad === "category" ? " has-error" : ""}`}>
                  <label for="b-category">Category</label>
                  <select id="b-category" value={f.category} onChange={set("category")} {...aria("category")}>
                    {CATEGORIES.map((c) => (
                      <option key={c}>{c}</option>
                    ))}
                  </select>
                  {err("category")}
                </div>
              )}
              {f.universe === "watchlist" && (
                <div class="field grow" id="b-watchlist">
                  <span class="label">From your watchlist</span>
                  <p class="small">
                    {watchError ? (
                      describe(watchError, "The watchlist")
                    ) : f.tickers ? (
                      <>
                        {tickerList(f.tickers).join(", ")} · <a href="/onboarding">edit the watchlist</a>
                      </>
                    ) : (
                      <>
                        Your watchlist is empty: <a href="/onboarding">add the assets you hold</a>.
                      </>
                    )}
                  </p>
                </div>
              )}
              {f.universe === "tickers" && (
                <div class={`field grow${bad === "tickers" ? " has-error" : ""}`}>
                  <label for="b-tickers">Tickers (comma-separated)</label>
                  <input id="b-tickers" type="text" value={f.tickers} placeholder="AAPL, MSFT, BTC-USD" onInput={set("tickers")} {...aria("tickers")} />
                  {err("tickers")}
                </div>
              )}
              </>
              )}
              <div class={`field${bad === "benchmarks" ? " has-error" : ""}`}>
                <label for="b-benchmarks">
                  Benchmarks <Help term="benchmarks" label="a benchmark" />
                </label>
                <input id="b-benchmarks" type="text" value={f.benchmarks} placeholder="^GSPC" onInput={set("benchmarks")} {...aria("benchmarks")} />
                {err("benchmarks") ?? <span class="hint">up to 3 tickers held from the start; empty: ^GSPC; none: only the baskets</span>}
              </div>
              <div class={`field${bad === "start_date" ? " has-error" : ""}`}>
                <label for="b-start_date">From</label>
                <input id="b-start_date" type="date" value={f.start_date} onInput={set("start_date")} {...aria("start_date")} />
                {err("start_date") ?? <span class="hint">default: 10 years before the end</span>}
              </div>
              <div class={`field${bad === "end_date" ? " has-error" : ""}`}>
                <label for="b-end_date">To</label>
                <input id="b-end_date" type="date" value={f.end_date} onInput={set("end_date")} {...aria("end_date")} />
                {err("end_date") ?? <span class="hint">default: latest data</span>}
              </div>
              {numField("initial_capital", "Initial capital", { min: 1, step: 1000 })}
              <div class="field check">
                <input id="b-include_costs" type="checkbox" checked={f.include_costs === "true"} onChange={set("include_costs")} />
                <label for="b-include_costs">Charge trading costs</label>
              </div>
            </fieldset>
            <details class="advanced" open={ADVANCED.includes(bad ?? "") || ADVANCED.some((k) => swept.has(k)) || undefined}>
              <summary>Engine and z-score parameters</summary>
              <div class="params">
                <div class="field">
                  <label for="b-metric">Metric</label>
                  <select id="b-metric" value={f.metric} onChange={set("metric")} disabled={swept.has("metric")} {...(swept.has("metric") ? { "aria-describedby": "b-metric-hint" } : {})}>
                    <option value="return">Return</option>
                    <option value="sharpe">Sharpe</option>
                    <option value="sortino">Sortino</option>
                  </select>
                  {err("metric") ?? (swept.has("metric") ? sweptHint("metric") : null)}
                </div>
                {numField("return_period", "Horizon (days, 7–365)", { min: 7, max: 365 })}
                {numField("num_segments", "Segments (10–50)", { min: 10, max: 50 })}
                {numField("decay_factor", "Decay factor (0.80–0.99)", { min: 0.8, max: 0.99, step: 0.01 })}
                {numField("zscore_lookback", "Z-score window (rows, 20–1260)", { min: 20, max: 1260 })}
                {numField("zscore_entry", "Z-score entry (> 0)", { step: 0.1 })}
                {numField("zscore_exit", "Z-score exit", { step: 0.1 })}
              </div>
            </details>
            {tab === "monte-carlo" && (
              <fieldset id="mc-fields">
                <legend>Monte Carlo</legend>
                {extraField("runs", "Paths (1–5,000)", { min: 1, max: 5000 }, "default 1,000")}
                {extraField("block_days", "Mean block length (days, 1–250)", { min: 1, max: 250 }, "consecutive days stay together for this many on average")}
                {extraField("seed", "Seed", { min: 0 }, "same seed, same numbers")}
              </fieldset>
            )}
            {tab === "walk-forward" && (
              <fieldset id="wf-fields">
                <legend>Splits</legend>
                {extraField("train_years", "Train years (1–20)", { min: 1, max: 20 })}
                {extraField("test_years", "Test years (1–10)", { min: 1, max: 10 }, "the splits move on by this much")}
                <div class={`field${bad === "mode" ? " has-error" : ""}`}>
                  <label for="b-mode">Train splits</label>
                  <select id="b-mode" value={x.mode} onChange={setExtra("mode")} {...aria("mode")} {...(bad === "mode" ? {} : { "aria-describedby": "b-mode-hint" })}>
                    <option value="rolling">Rolling</option>
                    <option value="expanding">Expanding</option>
                  </select>
                  {err("mode") ?? (
                    <span class="hint" id="b-mode-hint">
                      {x.mode === "expanding" ? "each from the window's start" : "the train years just before each test"}
                    </span>
                  )}
                </div>
              </fieldset>
            )}
            {sweeps(tab) && (
                <SweepEditor fields={sweep} onChange={setSweep} error={bad === "sweep" ? msg : null} errorParam={sweepErrorParam}>
                  <div class="sweep-rank">
                    <RankBySelect value={x.rank_by} onChange={(v) => setX({ ...x, rank_by: v })} error={bad === "rank_by" ? msg : null} />
                  </div>
                </SweepEditor>
            )}
            <div class="run-row">
              <button type="submit" class="btn btn-primary" disabled={running !== null}>
                {running === tab ? "Running…" : RUN_LABEL[tab]}
              </button>
              <span class="cost" id="bt-cost">
                {cost}
              </span>
            </div>
            {outcome?.note && (
              <p class="note note-info" id="bt-note" role="status">
                {outcome.note}
              </p>
            )}
            {error && !bad ? (
              <p class={error instanceof ApiError && error.status === 402 ? "note note-premium" : "note note-error"} role="alert" id="bt-error">
                {msg}
              </p>
            ) : null}
          </form>
        </Card>
        {running === tab && (live ? <RunProgressBar run={live} label={LOADING[tab]} /> : <Loading label={LOADING[tab]} />)}
        {data && tab !== "result" && <ResearchBanner tab={tab} data={data} base={outcome?.base ?? {}} catalog={catalog} />}
        {data && tab === "result" && <Results r={data as BacktestResponse} sources={sources} />}
        {data && tab === "monte-carlo" && <MonteCarloView r={data as MonteCarloResponse} />}
        {data && tab === "sweep" && <SweepView r={data as SweepResponse} hrefOf={comboHref} view={view} onView={onView} />}
        {data && tab === "walk-forward" && <WalkForwardView r={data as WalkForwardResponse} />}
        {data && outcome?.body && <Downloads tab={tab} body={outcome.body} cost={runCost(tab, outcome.body)} />}
      </div>
    </main>
  );
}
