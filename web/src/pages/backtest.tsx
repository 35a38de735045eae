// The backtest page. Its URL carries every parameter of the run shown, so a
// shared link reproduces the result: opening a /backtest URL with parameters
// runs it (the backtest is deterministic). The number of positions fits the
// chosen universe unless the user sets it, and a result built mostly from
// synthetic prices says so in a banner.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { ApiError, describe, fieldOf } from "../api/client";
import { api, CATEGORIES, type AssetList, type BacktestRequest, type BacktestResponse } from "../api/endpoints";
import { assetUrl, navigate, withQuery, type Location } from "../router";
import { axis, Chart, pctAxis, type Opts, type Theme } from "../chart";
import { DatedPrice, utcStamp } from "../facts";
import { Help } from "../glossary-link";
import { compact, Card, ErrorNote, Loading, int, num, pct, price, signClass, useData, useTitle } from "../lib";

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
  if (f.universe === "tickers") return tickerList(f.tickers).length;
  if (!list) return null;
  return list.assets.filter((a) => a.last_price_date && (f.universe === "all" || a.category === f.category) && (!f.start_date || a.last_price_date >= f.start_date)).length;
}

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
const LABELS: Record<string, string> = {
  equal_weight_buy_hold: "Equal weight, buy & hold",
  equal_weight_rebalanced: "Equal weight, rebalanced",
};

/** Dates on the time axis and in the legend are calendar dates (UTC), never shifted. */
const utcDate = (ts: number) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC");

function Results({ r, sources }: { r: BacktestResponse; sources: Map<string, string> }) {
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
        tzDate: utcDate,
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
        tzDate: utcDate,
        scales: { x: { time: true } },
        axes: [axis(t), axis(t, { size: 60, values: pctAxis })],
        series: [{}, { label: "Drawdown", stroke: t.neg, fill: t.band, width: 1, value: (_u: uPlot, v: number | null) => pct(v) }],
      }) as Opts,
    [],
  );
  const m = r.metrics;
  const ds = r.metadata.data_sources;
  const used = ds.real + ds.ingested + ds.synthetic;
  const mostlySynthetic = used > 0 && ds.synthetic * 2 > used;
  const pages = Math.max(1, Math.ceil(r.trades.length / PAGE));
  const trades = r.trades.slice(page * PAGE, page * PAGE + PAGE);
  return (
    <>
      {mostlySynthetic && (
        <div class="note note-warn bt-synthetic" id="bt-synthetic" role="note">
          <strong>Most of these prices are synthetic: this result says nothing about real markets.</strong> {int(ds.synthetic)} of
          the {int(used)} assets traded have generated demo prices, not market data. <Help term="synthetic" label="a synthetic price" />
        </div>
      )}
      <p class="bt-window" id="bt-window">
        {r.metadata.strategy} {r.metadata.strategy_version} from <time dateTime={r.metadata.start_date}>{r.metadata.start_date}</time> to{" "}
        <time dateTime={r.metadata.end_date}>{r.metadata.end_date}</time> · {int(r.metadata.assets_count)} assets
      </p>
      <Card title="Equity curve against the benchmarks (log scale)" id="equity">
        <Chart id="chart-equity" data={data} options={eqOptions} height={300} label="Equity of the strategy and of the two equal-weight benchmarks over time" />
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
            <caption class="muted">Against each benchmark (daily returns, annualised)</caption>
            <thead>
              <tr><th scope="col">Benchmark</th><th scope="col">Beta</th><th scope="col">Alpha</th><th scope="col">Tracking error</th><th scope="col">Information ratio</th></tr>
            </thead>
            <tbody>
              {Object.entries(m.relative).map(([name, rel]) => (
                <tr key={name}>
                  <th scope="row">{name.replace(/_/g, " ")}</th>
                  <td>{num(rel.beta)}</td>
                  <td class={signClass(rel.alpha)}>{pct(rel.alpha)}</td>
                  <td>{pct(rel.tracking_error)}</td>
                  <td>{num(rel.information_ratio)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
                        <td>{t.ticker}</td>
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

export function BacktestPage({ loc }: { loc: Location }) {
  useTitle("Backtest");
  const [f, setF] = useState<Form>(() => fromQuery(loc.query));
  const strategies = useData(() => api.strategies(), []);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<BacktestResponse | null>(null);
  const [note, setNote] = useState<string | null>(null);
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
  const bad = fieldOf(error, SERVER_FIELDS);
  const msg = error ? describe(error, "Backtests") : null;
  const autoTop = fittedTopN(universeSize(f, catalog), f.strategy);

  const execute = async (form: Form) => {
    setRunning(true);
    setError(null);
    setNote(null);
    const auto = form.top_n.trim() === "";
    const req = toRequest(form);
    let top = auto ? fittedTopN(universeSize(form, await loadCatalog()), form.strategy) : null;
    if (top !== null) req.top_n = top;
    try {
      let res: BacktestResponse;
      try {
        res = await api.backtest(req);
      } catch (e) {
        // A default the server refuses (fewer assets have enough history
        // than the catalog lists) is fitted to the count it names, once.
        const n = auto && top !== null ? tradeableIn(e) : null;
        const refit = n !== null ? fittedTopN(n, form.strategy) : null;
        if (n === null || refit === null || refit >= top! || refit * (form.strategy === "longshort" ? 2 : 1) > n) throw e;
        top = refit;
        res = await api.backtest({ ...req, top_n: refit });
        setNote(`Positions set to ${refit}: only ${n} assets of this universe have enough history (300 price rows) by the end date.`);
      }
      setResult(res);
      // The URL carries every parameter of this run, with the positions
      // used and the window run, so that opening it reproduces the result.
      const url: Record<string, string> = { ...form };
      if (top !== null) url.top_n = String(top);
      if (!form.start_date) url.start_date = res.metadata.start_date;
      if (!form.end_date) url.end_date = res.metadata.end_date;
      if (form.universe !== "tickers") delete url.tickers;
      if (form.universe !== "category") delete url.category;
      navigate(withQuery("/backtest", url), { replace: true });
    } catch (err) {
      setError(err);
      setResult(null);
      const changed: Record<string, string> = {};
      for (const k of FIELDS) if (form[k] !== DEFAULTS[k]) changed[k] = form[k];
      navigate(withQuery("/backtest", changed), { replace: true });
    } finally {
      setRunning(false);
    }
  };

  const run = (e: Event) => {
    e.preventDefault();
    void execute(f);
  };

  // The catalog once; a shared link (a URL with parameters) runs at once.
  useEffect(() => {
    loadCatalog().then(setCatalog);
    if (hasParams(loc.query)) void execute(f);
  }, []);

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
    <main class="page backtest-page">
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
            <div class={`field${bad === "top_n" ? " has-error" : ""}`}>
              <label for="b-top_n">Positions (top N)</label>
              <input
                id="b-top_n"
                type="number"
                min={1}
                max={500}
                value={f.top_n}
                placeholder={`${autoTop} (fits the universe)`}
                onInput={set("top_n")}
                {...aria("top_n")}
                {...(bad === "top_n" ? {} : { "aria-describedby": "b-top_n-hint" })}
              />
              {err("top_n") ?? (
                <span class="hint" id="b-top_n-hint">
                  {f.strategy === "longshort"
                    ? `Empty: ${autoTop}, the default ${TOP_N} capped at half the universe (top N long and top N short).`
                    : `Empty: ${autoTop}, the default ${TOP_N} capped at the size of the universe.`}
                </span>
              )}
            </div>
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
          {note && (
            <p class="note note-info" id="bt-note" role="status">
              {note}
            </p>
          )}
          {error && !bad ? (
            <p class={error instanceof ApiError && error.status === 402 ? "note note-premium" : "note note-error"} role="alert" id="bt-error">
              {msg}
            </p>
          ) : null}
        </form>
      </Card>
      {running && <Loading label="Running the backtest… this can take a few seconds." />}
      {result && !running && <Results r={result} sources={sources} />}
    </main>
  );
}
