import { useMemo, useState } from "preact/hooks";
import uPlot from "uplot";
import { ApiError, describe, fieldOf } from "../api/client";
import { api, CATEGORIES, type BacktestRequest, type BacktestResponse } from "../api/endpoints";
import { assetUrl, navigate, withQuery, type Location } from "../router";
import { axis, Chart, pctAxis, type Opts, type Theme } from "../chart";
import { compact, Card, ErrorNote, Loading, int, num, pct, price, signClass, useData, useTitle } from "../lib";

/** Form fields, as strings, with the server's defaults (BacktestRequest). */
const DEFAULTS = {
  strategy: "topn",
  universe: "category",
  category: "Crypto",
  tickers: "",
  start_date: "",
  end_date: "",
  rebalance: "monthly",
  top_n: "10",
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
  if (f.universe === "tickers") {
    body.tickers = f.tickers
      .split(/[\s,;]+/)
      .map((t) => t.trim())
      .filter(Boolean);
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
const LABELS: Record<string, string> = {
  equal_weight_buy_hold: "Equal weight, buy & hold",
  equal_weight_rebalanced: "Equal weight, rebalanced",
};

function Results({ r }: { r: BacktestResponse }) {
  const [page, setPage] = useState(0);
  const names = Object.keys(r.benchmarks);
  const data = useMemo(() => {
    const x = r.equity_curve.map((p) => ts(p.date));
    return [x, r.equity_curve.map((p) => p.equity), ...names.map((n) => r.benchmarks[n].equity)] as uPlot.AlignedData;
  }, [r]);
  const eqOptions = useMemo(
    () => (t: Theme) =>
      ({
        cursor: { drag: { x: true, y: false } },
        // Log scale: a curve that grew 50-fold and one that doubled both stay readable.
        scales: { x: { time: true }, y: { distr: 3 } },
        axes: [axis(t), axis(t, { size: 80, values: (_u: uPlot, v: number[]) => v.map((x) => compact(x)) })],
        series: [
          {},
          { label: "Strategy", stroke: t.accent2, width: 2, value: (_u: uPlot, v: number | null) => price(v) },
          ...names.map((n, i) => ({ label: LABELS[n] ?? n, stroke: i === 0 ? t.muted : t.accent, width: 1, dash: i === 0 ? [5, 3] : undefined, value: (_u: uPlot, v: number | null) => price(v) })),
        ],
      }) as Opts,
    [r],
  );
  const dd = useMemo(() => [data[0], drawdowns(r.equity_curve.map((p) => p.equity))] as uPlot.AlignedData, [data]);
  const ddOptions = useMemo(
    () => (t: Theme) =>
      ({
        scales: { x: { time: true } },
        axes: [axis(t), axis(t, { size: 60, values: pctAxis })],
        series: [{}, { label: "Drawdown", stroke: t.neg, fill: t.band, width: 1, value: (_u: uPlot, v: number | null) => pct(v) }],
      }) as Opts,
    [],
  );
  const m = r.metrics;
  const pages = Math.max(1, Math.ceil(r.trades.length / PAGE));
  const trades = r.trades.slice(page * PAGE, page * PAGE + PAGE);
  return (
    <>
      <Card title="Equity curve against the benchmarks (log scale)" id="equity">
        <Chart id="chart-equity" data={data} options={eqOptions} height={300} label="Equity of the strategy and of the two equal-weight benchmarks over time" />
      </Card>
      <div class="grid2">
        <Card title="Drawdown" id="bt-drawdown">
          <Chart id="chart-bt-drawdown" data={dd} options={ddOptions} height={200} label="Drawdown of the strategy's equity from its running peak" />
        </Card>
        <Card title="Metrics" id="metrics">
          <dl class="stats stats-2">
            <div><dt>Total return</dt><dd class={signClass(m.total_return)}>{pct(m.total_return)}</dd></div>
            <div><dt>CAGR</dt><dd class={signClass(m.cagr)}>{pct(m.cagr)}</dd></div>
            <div><dt>Sharpe ratio</dt><dd>{num(m.sharpe_ratio)}</dd></div>
            <div><dt>Sortino ratio</dt><dd>{num(m.sortino_ratio)}</dd></div>
            <div><dt>Max drawdown</dt><dd class="neg">{pct(m.max_drawdown)}</dd></div>
            <div><dt>Final equity</dt><dd>{price(m.final_equity)}</dd></div>
            <div><dt>Years</dt><dd>{num(m.years)}</dd></div>
            <div><dt>Trades</dt><dd>{int(m.total_trades)}</dd></div>
            <div><dt>Trading costs</dt><dd>{price(m.total_costs)} ({num(m.cost_drag_pct)} %)</dd></div>
            <div><dt>Assets · rebalances</dt><dd>{int(r.metadata.assets_count)} · {int(r.metadata.rebalance_dates)}</dd></div>
          </dl>
          <p class="muted small">
            {r.metadata.strategy} {r.metadata.strategy_version} · {r.metadata.start_date} to {r.metadata.end_date} · engine {r.metadata.engine_version}
          </p>
          <p class="muted small" id="bt-sources">
            Prices of the {int(r.metadata.assets_count)} assets used: {int(r.metadata.data_sources.real)} real · {int(r.metadata.data_sources.ingested)} ingested ·{" "}
            {int(r.metadata.data_sources.synthetic)} synthetic (generated, not market data)
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
                    <th scope="col" class="num">Quantity</th>
                    <th scope="col" class="num">Price</th>
                  </tr>
                </thead>
                <tbody>
                  {trades.map((t, i) => (
                    <tr key={page * PAGE + i}>
                      <td>{t.date}</td>
                      <td>{t.ticker}</td>
                      <td class={t.side === "BUY" ? "pos" : "neg"}>{t.side}</td>
                      <td class="num">{num(t.qty)}</td>
                      <td class="num">{price(t.price)}</td>
                    </tr>
                  ))}
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

export function BacktestPage({ loc }: { loc: Location }) {
  useTitle("Backtest");
  const [f, setF] = useState<Form>(() => fromQuery(loc.query));
  const strategies = useData(() => api.strategies(), []);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<BacktestResponse | null>(null);
  const set = (k: Key) => (e: Event) => {
    const el = e.target as HTMLInputElement;
    setF({ ...f, [k]: el.type === "checkbox" ? String(el.checked) : el.value });
  };
  const bad = fieldOf(error, SERVER_FIELDS);
  const msg = error ? describe(error, "Backtests") : null;

  const run = async (e: Event) => {
    e.preventDefault();
    const changed: Record<string, string> = {};
    for (const k of FIELDS) if (f[k] !== DEFAULTS[k]) changed[k] = f[k];
    navigate(withQuery("/backtest", changed), { replace: true });
    setRunning(true);
    setError(null);
    try {
      setResult(await api.backtest(toRequest(f)));
    } catch (err) {
      setError(err);
      setResult(null);
    } finally {
      setRunning(false);
    }
  };

  const err = (k: string) =>
    bad === k ? (
      <span class="field-error" id={`b-${k}-err`} role="alert">
        {msg}
      </span>
    ) : null;
  const aria = (k: string) => (bad === k ? { "aria-invalid": true, "aria-describedby": `b-${k}-err` } : {});
  const numField = (k: Key, label: string, attrs: Record<string, unknown> = {}) => (
    <div class={`field${bad === k ? " has-error" : ""}`}>
      <label for={`b-${k}`}>{label}</label>
      <input id={`b-${k}`} type="number" value={f[k]} onInput={set(k)} {...aria(k)} {...attrs} />
      {err(k)}
    </div>
  );
  const strat = strategies.data?.strategies.find((s) => s.name === f.strategy);

  return (
    <main class="page">
      <h1>Backtest a strategy</h1>
      <p class="lead">
        Replays a strategy over history using only what the engine knew on each day, with trading costs, against two
        equal-weight benchmarks.
      </p>
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
            {numField("top_n", "Positions (top N)", { min: 1, max: 500 })}
            <div class="field">
              <label for="b-rebalance">Rebalance</label>
              <select id="b-rebalance" value={f.rebalance} onChange={set("rebalance")}>
                <option value="daily">Daily</option>
                <option value="weekly">Weekly</option>
                <option value="monthly">Monthly</option>
              </select>
              {err("rebalance")}
            </div>
          </fieldset>
          <fieldset>
            <legend>Universe and window</legend>
            <div class="field">
              <label for="b-universe">Trade</label>
              <select id="b-universe" value={f.universe} onChange={set("universe")}>
                <option value="category">One category</option>
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
            {f.universe === "tickers" && (
              <div class={`field grow${bad === "tickers" ? " has-error" : ""}`}>
                <label for="b-tickers">Tickers (comma-separated)</label>
                <input id="b-tickers" type="text" value={f.tickers} placeholder="AAPL, MSFT, BTC-USD" onInput={set("tickers")} {...aria("tickers")} />
                {err("tickers")}
              </div>
            )}
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
          <details class="advanced" open={ADVANCED.includes(bad ?? "") || undefined}>
            <summary>Engine and z-score parameters</summary>
            <div class="params">
              <div class="field">
                <label for="b-metric">Metric</label>
                <select id="b-metric" value={f.metric} onChange={set("metric")}>
                  <option value="return">Return</option>
                  <option value="sharpe">Sharpe</option>
                  <option value="sortino">Sortino</option>
                </select>
                {err("metric")}
              </div>
              {numField("return_period", "Horizon (days, 7–365)", { min: 7, max: 365 })}
              {numField("num_segments", "Segments (10–50)", { min: 10, max: 50 })}
              {numField("decay_factor", "Decay factor (0.80–0.99)", { min: 0.8, max: 0.99, step: 0.01 })}
              {numField("zscore_lookback", "Z-score window (rows, 20–1260)", { min: 20, max: 1260 })}
              {numField("zscore_entry", "Z-score entry (> 0)", { step: 0.1 })}
              {numField("zscore_exit", "Z-score exit", { step: 0.1 })}
            </div>
          </details>
          <div class="run-row">
            <button type="submit" class="btn btn-primary" disabled={running}>
              {running ? "Running…" : "Run backtest"}
            </button>
            <span class="cost" id="bt-cost">
              This costs 5 quota units (a normal request costs 1).
            </span>
          </div>
          {error && !bad ? (
            <p class={error instanceof ApiError && error.status === 402 ? "note note-premium" : "note note-error"} role="alert" id="bt-error">
              {msg}
            </p>
          ) : null}
        </form>
      </Card>
      {running && <Loading label="Running the backtest… this can take a few seconds." />}
      {result && !running && <Results r={result} />}
    </main>
  );
}
