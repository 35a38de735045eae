// The backtest page's research tabs (issue 29): what the Monte Carlo, the
// parameter sweep and the walk-forward answer, drawn. The form they share
// with the Result tab lives in backtest.tsx; this file holds the sweep's
// parameter editor and the three result views.
import type { ComponentChildren } from "preact";
import { useMemo } from "preact/hooks";
import uPlot from "uplot";
import type { Axis, MonteCarloResponse, RankBy, SplitMetrics, SweepParam, SweepResponse, SweepRow, SweepValue, WalkForwardResponse } from "../api/research";
import { RANK_BY, SWEEPABLE } from "../api/research";
import { axis, Chart, dayTs, type Opts, type Theme, useScheme } from "../chart";
import { utcStamp } from "../facts";
import { Card, compact, int, num, pct, price, signClass } from "../lib";

/** Labels of the sweepable parameters, as the form names them. */
export const PARAM_LABEL: Record<SweepParam, string> = {
  top_n: "Positions (top N)",
  return_period: "Horizon (days)",
  rebalance: "Rebalance",
  metric: "Metric",
  decay_factor: "Decay factor",
  num_segments: "Segments",
  zscore_lookback: "Z-score window",
  zscore_entry: "Z-score entry",
  zscore_exit: "Z-score exit",
};
const PARAM_HINT: Record<SweepParam, string> = {
  top_n: "e.g. 3, 5, 10",
  return_period: "7–365, e.g. 30, 90, 180",
  rebalance: "daily, weekly, monthly",
  metric: "return, sharpe, sortino",
  decay_factor: "0.80–0.99, e.g. 0.9, 0.95",
  num_segments: "10–50, e.g. 10, 20",
  zscore_lookback: "20–1260, e.g. 126, 252",
  zscore_entry: "> 0, e.g. 1.5, 2",
  zscore_exit: "e.g. 0, 0.5",
};
export const RANK_LABEL: Record<RankBy, string> = {
  total_return: "Total return",
  cagr: "CAGR",
  sharpe_ratio: "Sharpe ratio",
  sortino_ratio: "Sortino ratio",
  calmar_ratio: "Calmar ratio",
  max_drawdown: "Max drawdown",
};

/** "Positions (top N)" → "positions (top N)". */
const lower = (label: string) => label.charAt(0).toLowerCase() + label.slice(1);
const paramLabel = (name: string) => PARAM_LABEL[name as SweepParam] ?? name;
const isPct = (m: string) => m === "total_return" || m === "cagr" || m === "max_drawdown";
/** A figure as shown: returns and drawdowns as percentages, ratios as numbers. */
export function fmtMetric(m: string, v: number | null | undefined): string {
  return isPct(m) ? pct(v) : num(v);
}
const fmtValue = (v: SweepValue) => String(v);
/** "Positions (top N) 5, Rebalance weekly", in the axes' order (the server's objects list their keys alphabetically). */
export function comboText(params: Record<string, SweepValue>, axes: Axis[]): string {
  const names = [...axes.map((a) => a.name).filter((n) => n in params), ...Object.keys(params).filter((k) => !axes.some((a) => a.name === k))];
  return names.map((k) => `${paramLabel(k)} ${fmtValue(params[k])}`).join(", ");
}

// ---- the sweep's parameters (form) ----

/** One swept parameter of the form: its name and its values as typed. */
export interface SweepField {
  param: SweepParam;
  values: string;
}

/** A row's values for the request: numbers for numeric parameters, names for rebalance and metric; a typo travels as typed (the server names it). */
export function sweepValues(f: SweepField): SweepValue[] {
  const parts = f.values
    .split(/[,;\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (f.param === "rebalance" || f.param === "metric") return parts;
  return parts.map((s) => {
    const x = Number(s);
    return Number.isFinite(x) ? x : s;
  });
}

/** Combinations of the form's sweep (the product of the lists' lengths). */
export function combinations(fields: SweepField[]): number {
  return fields.reduce((n, f) => n * Math.max(1, sweepValues(f).length), 1);
}

interface EditorProps {
  fields: SweepField[];
  onChange: (fields: SweepField[]) => void;
  /** The error sentence when the server's refusal names the sweep. */
  error: string | null;
  /** The swept parameter the error names, if it names one. */
  errorParam: string | null;
  /** More fields of the sweep (the figure to rank by). */
  children?: ComponentChildren;
}

/** Up to three parameters to sweep, each with its comma-separated values. */
export function SweepEditor({ fields, onChange, error, errorParam, children }: EditorProps) {
  const update = (i: number, patch: Partial<SweepField>) => onChange(fields.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  const free = SWEEPABLE.filter((p) => !fields.some((f) => f.param === p));
  const rowError = error && errorParam && fields.some((f) => f.param === errorParam) ? errorParam : null;
  return (
    <fieldset class="sweep-fields" id="sweep-fields">
      <legend>Parameters to sweep (up to 3)</legend>
      <p class="hint sweep-help">
        Each combination of these values is backtested once with the fields above; the first two parameters are the map's
        rows and columns. A swept parameter replaces its field above.
      </p>
      {fields.map((f, i) => {
        const bad = rowError === f.param;
        return (
          <div class="sweep-row" key={i}>
            <div class="field">
              <label for={`sw-param-${i}`}>Parameter {i + 1}</label>
              <select id={`sw-param-${i}`} value={f.param} onChange={(e) => update(i, { param: (e.target as HTMLSelectElement).value as SweepParam })}>
                {[f.param, ...free].map((p) => (
                  <option key={p} value={p}>
                    {PARAM_LABEL[p]}
                  </option>
                ))}
              </select>
            </div>
            <div class={`field grow${bad ? " has-error" : ""}`}>
              <label for={`sw-values-${i}`}>Values of {lower(PARAM_LABEL[f.param])}</label>
              <input
                id={`sw-values-${i}`}
                type="text"
                value={f.values}
                placeholder={PARAM_HINT[f.param]}
                onInput={(e) => update(i, { values: (e.target as HTMLInputElement).value })}
                aria-invalid={bad || undefined}
                aria-describedby={bad ? "sweep-err" : `sw-hint-${i}`}
              />
              {bad ? (
                <span class="field-error" id="sweep-err" role="alert">
                  {error}
                </span>
              ) : (
                <span class="hint" id={`sw-hint-${i}`}>
                  {PARAM_HINT[f.param]}
                </span>
              )}
            </div>
            <button type="button" class="btn btn-small btn-ghost sweep-remove" disabled={fields.length === 1} onClick={() => onChange(fields.filter((_, j) => j !== i))} aria-label={`Remove ${lower(PARAM_LABEL[f.param])}`}>
              Remove
            </button>
          </div>
        );
      })}
      {error && !rowError && (
        <p class="field-error sweep-error" id="sweep-err" role="alert">
          {error}
        </p>
      )}
      <div>
        <button type="button" class="btn btn-small" id="sweep-add" disabled={fields.length >= 3 || free.length === 0} onClick={() => onChange([...fields, { param: free[0], values: "" }])}>
          Add a parameter
        </button>
      </div>
      {children}
    </fieldset>
  );
}

export function RankBySelect({ value, onChange, error }: { value: string; onChange: (v: string) => void; error: string | null }) {
  return (
    <div class={`field${error ? " has-error" : ""}`}>
      <label for="b-rank_by">Rank by</label>
      <select id="b-rank_by" value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)} {...(error ? { "aria-invalid": true, "aria-describedby": "b-rank_by-err" } : {})}>
        {RANK_BY.map((r) => (
          <option key={r} value={r}>
            {RANK_LABEL[r]}
            {r === "max_drawdown" ? " (shallowest)" : ""}
          </option>
        ))}
      </select>
      {error ? (
        <span class="field-error" id="b-rank_by-err" role="alert">
          {error}
        </span>
      ) : (
        <span class="hint">higher is better</span>
      )}
    </div>
  );
}

// ---- Monte Carlo ----

const utcDate = (ts: number) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC");
/**
 * A log scale fitted to the data (uPlot's default spans whole powers of ten,
 * flattening a curve that stays within one). Its ticks start at the minimum,
 * which is therefore a round figure: 76,600 → 70,000.
 */
function logRange(_u: uPlot, min: number, max: number): uPlot.Range.MinMax {
  if (!(min > 0) || !(max > 0)) return [min, max];
  const low = min / 1.02;
  const step = 10 ** Math.floor(Math.log10(low));
  return [Math.floor(low / step) * step, max * 1.05];
}

/** "12 %", "0.4 %", "100 %": a share of paths. */
function share(p: number): string {
  const x = p * 100;
  return `${x > 0 && x < 10 ? x.toFixed(1) : x.toFixed(0)} %`;
}

export function MonteCarloView({ r }: { r: MonteCarloResponse }) {
  const data = useMemo(() => {
    const x = r.fan.map((p) => dayTs(p.date));
    return [x, r.fan.map((p) => p.p95), r.fan.map((p) => p.p75), r.fan.map((p) => p.p50), r.fan.map((p) => p.p25), r.fan.map((p) => p.p5)] as uPlot.AlignedData;
  }, [r]);
  const options = useMemo(
    () => (t: Theme) => {
      const v = (_u: uPlot, x: number | null) => price(x);
      return {
        tzDate: utcDate,
        // Log scale, as the backtest's equity curve.
        scales: { x: { time: true }, y: { distr: 3, range: logRange } },
        axes: [axis(t), axis(t, { size: 80, values: (_u: uPlot, vs: number[]) => vs.map((x) => compact(x)) })],
        bands: [
          { series: [1, 5], fill: t.band },
          { series: [2, 4], fill: t.band },
        ],
        series: [
          {},
          { label: "95th pct", stroke: t.muted, width: 1, value: v },
          { label: "75th pct", stroke: t.accent, width: 1, value: v },
          { label: "Median", stroke: t.accent2, width: 2.5, value: v },
          { label: "25th pct", stroke: t.accent, width: 1, value: v },
          { label: "5th pct", stroke: t.muted, width: 1, value: v },
        ],
      } as Opts;
    },
    [r],
  );
  const m = r.metrics;
  const spreads: [string, "cagr" | "max_drawdown" | "final_equity", (v: number | null | undefined) => string][] = [
    ["CAGR", "cagr", pct],
    ["Max drawdown", "max_drawdown", pct],
    ["Final equity", "final_equity", int],
  ];
  const n = int(r.runs);
  const loss = r.probability_of_loss;
  const deep = r.probability_of_drawdown_beyond_50;
  return (
    <>
      <p class="bt-window" id="mc-window">
        {r.metadata.strategy} {r.metadata.strategy_version} from <time dateTime={r.metadata.start_date}>{r.metadata.start_date}</time> to{" "}
        <time dateTime={r.metadata.end_date}>{r.metadata.end_date}</time> · {int(r.metadata.assets_count)} assets · {int(r.days)} daily returns
      </p>
      <Card title="Equity along paths resampled from the run's returns (log scale)" id="mc-fan">
        <p class="muted small" id="mc-explain">
          {n} paths of {int(r.days)} days, each drawn from the run's own {int(r.days)} daily returns by a stationary block
          bootstrap: a path starts on a random day and walks forward, jumping to another random day with probability 1/
          {int(r.block_days)} before each next one, so blocks of consecutive days average {int(r.block_days)} days and are drawn
          with replacement — a new sequence of the run's returns, not a reordering of them (seed {int(r.seed)}: the same seed gives
          the same numbers). Bands: 5th to 95th and 25th to 75th percentiles; the line is the median.{" "}
          <a href="/methodology#monte-carlo">How it works</a>
        </p>
        <Chart id="chart-mc-fan" data={data} options={options} height={300} label={`Fan of equity over ${n} paths resampled from the run's daily returns: 5th to 95th and 25th to 75th percentile bands and the median`} />
      </Card>
      <div class="grid2">
        <Card title="Spread over the paths" id="mc-spreads">
          <div class="table-wrap rs-wrap" tabIndex={0} role="region" aria-label="Percentiles of CAGR, max drawdown and final equity">
            <table class="table small" id="mc-spread-table">
              <caption class="sr-only">5th, 50th and 95th percentiles over {n} resampled paths, and the run itself</caption>
              <thead>
                <tr>
                  <th scope="col">Figure</th>
                  <th scope="col" class="num">5th pct</th>
                  <th scope="col" class="num">Median</th>
                  <th scope="col" class="num">95th pct</th>
                  <th scope="col" class="num">This run</th>
                </tr>
              </thead>
              <tbody>
                {spreads.map(([label, k, f]) => (
                  <tr key={k} data-figure={k}>
                    <th scope="row">{label}</th>
                    <td class={`num ${k === "final_equity" ? "" : signClass(r[k].p5)}`}>{f(r[k].p5)}</td>
                    <td class={`num ${k === "final_equity" ? "" : signClass(r[k].p50)}`}>{f(r[k].p50)}</td>
                    <td class={`num ${k === "final_equity" ? "" : signClass(r[k].p95)}`}>{f(r[k].p95)}</td>
                    <td class={`num ${k === "final_equity" ? "" : signClass(m[k])}`}>{f(m[k])}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
        <Card title="How often it went wrong" id="mc-probabilities">
          <ul class="mc-sentences">
            <li id="mc-loss">
              {loss === 0 ? `None of the ${n} paths lost money.` : loss === 1 ? `All ${n} paths lost money.` : `In ${share(loss)} of ${n} paths the equity ended below the initial capital.`}
            </li>
            <li id="mc-deep">
              {deep === 0
                ? `None of the ${n} paths fell more than 50 % from a peak.`
                : `In ${share(deep)} of ${n} paths the equity fell more than 50 % from a peak.`}
            </li>
          </ul>
          <p class="muted small" id="mc-limits">
            Each path is made of the run's own days, resampled with replacement in blocks that keep their short-range
            dependence: it shows how much of the result was the luck of the sequence — how it could have gone with the same
            kind of days in another order and mix. It cannot show how the strategy would do on markets unlike this window's:
            a window that flattered the strategy flatters every path.
          </p>
          <p class="muted small">
            engine {r.metadata.engine_version} · computed {utcStamp(r.metadata.calculated_at)}
          </p>
        </Card>
      </div>
    </>
  );
}

// ---- sweep ----

/** A scale from pale (worst) to saturated (best), dark text readable on each; another in the dark theme. */
function cellColour(t: number, dark: boolean): string {
  const [a, b] = dark
    ? [
        [0x1b, 0x23, 0x30],
        [0x2f, 0x5a, 0xa8],
      ]
    : [
        [0xf0, 0xf4, 0xfc],
        [0x6e, 0x96, 0xe4],
      ];
  const c = a.map((x, i) => Math.round(x + (b[i] - x) * t));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

interface SweepViewProps {
  r: SweepResponse;
  /** The URL opening a combination in the Result tab. */
  hrefOf: (row: SweepRow) => string;
  /** The view's own state in the URL: the third axis's value, the table's order. */
  view: { slice: string | null; sortBy: string | null; sort: string | null };
  onView: (v: { slice?: string | null; sortBy?: string | null; sort?: string | null }) => void;
}

export function SweepView({ r, hrefOf, view, onView }: SweepViewProps) {
  const rank = r.rank_by;
  return (
    <>
      <p class="bt-window" id="sweep-window">
        {r.metadata.strategy} {r.metadata.strategy_version} from <time dateTime={r.metadata.start_date}>{r.metadata.start_date}</time> to{" "}
        <time dateTime={r.metadata.end_date}>{r.metadata.end_date}</time> · {int(r.metadata.assets_count)} assets ·{" "}
        {int(r.metadata.combinations)} combinations · {int(r.metadata.signal_passes)} engine pass{r.metadata.signal_passes === 1 ? "" : "es"}
      </p>
      <Card title={`${RANK_LABEL[rank]} of each combination`} id="sweep-map">
        <Heatmap r={r} hrefOf={hrefOf} slice={view.slice} onSlice={(slice) => onView({ slice })} />
      </Card>
      <Card title={`Every combination (${int(r.rows.length)})`} id="sweep-all">
        <SweepTable r={r} hrefOf={hrefOf} sortBy={view.sortBy} sort={view.sort} onSort={(sortBy, sort) => onView({ sortBy, sort })} />
        <p class="muted small">
          engine {r.metadata.engine_version} · {r.metadata.include_costs ? "with" : "without"} trading costs · computed{" "}
          {utcStamp(r.metadata.calculated_at)}. The best of many tries looks better than it will do: the walk-forward tab
          measures how much.
        </p>
      </Card>
    </>
  );
}

function Heatmap({ r, hrefOf, slice, onSlice }: { r: SweepResponse; hrefOf: (row: SweepRow) => string; slice: string | null; onSlice: (v: string) => void }) {
  const dark = useScheme() === "dark";
  const axes = r.axes;
  const rowAxis = axes.length >= 2 ? axes[0] : null;
  const colAxis = axes.length >= 2 ? axes[1] : axes[0];
  const third = axes[2] ?? null;
  const k = third ? Math.max(0, third.values.map(fmtValue).indexOf(slice ?? "")) : 0;
  const byCell = useMemo(() => new Map(r.rows.map((row, i) => [row.cell.join(","), i])), [r]);
  const scores = r.rows.map((row) => row.score).filter((s): s is number => s != null && Number.isFinite(s));
  const lo = Math.min(...scores);
  const hi = Math.max(...scores);
  const rank = r.rank_by;
  const scored = scores.length;
  const cellOf = (i: number, j: number): number | undefined => {
    const cell = axes.length === 1 ? [j] : axes.length === 2 ? [i, j] : [i, j, k];
    return byCell.get(cell.join(","));
  };
  const rowIdx = rowAxis ? rowAxis.values.map((_, i) => i) : [0];
  const best = r.best != null ? r.rows[r.best] : null;
  return (
    <>
      <p class="muted small" id="sweep-map-help">
        The stronger the blue, the better{rank === "max_drawdown" ? " (the shallowest drawdown)" : ""}; ★ marks the best. Open a cell to see that
        combination's backtest in the Result tab.
        {best ? ` Best: ${comboText(best.params, r.axes)}, ${RANK_LABEL[rank]} ${fmtMetric(rank, best.score)}.` : " No combination has a defined score."}
      </p>
      {third && (
        <div class="field inline">
          <label for="sweep-slice">{PARAM_LABEL[third.name as SweepParam] ?? third.name}</label>
          <select id="sweep-slice" value={fmtValue(third.values[k])} onChange={(e) => onSlice((e.target as HTMLSelectElement).value)}>
            {third.values.map((v) => (
              <option key={fmtValue(v)} value={fmtValue(v)}>
                {fmtValue(v)}
                {best && best.cell[2] === third.values.indexOf(v) ? " (best)" : ""}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class="table-wrap rs-wrap" tabIndex={0} role="region" aria-label={`Map of ${RANK_LABEL[rank]} by combination`}>
        <table class="heatmap" id="sweep-heatmap" data-rank-by={rank}>
          <caption class="sr-only">
            {RANK_LABEL[rank]} by {rowAxis ? `${paramLabel(rowAxis.name)} (rows) and ` : ""}
            {paramLabel(colAxis.name)} (columns){third ? `, ${paramLabel(third.name)} ${fmtValue(third.values[k])}` : ""}
          </caption>
          <thead>
            <tr>
              <td />
              <th scope="colgroup" colSpan={colAxis.values.length} class="hm-axis">
                {paramLabel(colAxis.name)}
              </th>
            </tr>
            <tr>
              <th scope="col" class="hm-axis hm-corner">
                {rowAxis ? paramLabel(rowAxis.name) : <span class="sr-only">Figure</span>}
              </th>
              {colAxis.values.map((v) => (
                <th scope="col" key={fmtValue(v)}>
                  {fmtValue(v)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rowIdx.map((i) => (
              <tr key={i}>
                <th scope="row">{rowAxis ? fmtValue(rowAxis.values[i]) : RANK_LABEL[rank]}</th>
                {colAxis.values.map((_, j) => {
                  const at = cellOf(i, j);
                  const row = at !== undefined ? r.rows[at] : undefined;
                  if (!row) return <td key={j} class="hm-cell hm-empty">—</td>;
                  const s = row.score;
                  const isBest = at === r.best;
                  const t = s == null || !Number.isFinite(s) ? null : hi > lo ? (s - lo) / (hi - lo) : 1;
                  const label = `${comboText(row.params, r.axes)}: ${RANK_LABEL[rank]} ${fmtMetric(rank, s)}${row.rank != null ? `, rank ${row.rank} of ${scored}` : ""}${isBest ? " (the best)" : ""}. Open in the Result tab`;
                  return (
                    <td key={j} class={`hm-cell${isBest ? " hm-best" : ""}${t === null ? " hm-null" : ""}`} style={t === null ? undefined : { background: cellColour(t, dark) }} data-score={s ?? ""} data-rank={row.rank ?? ""}>
                      <a href={hrefOf(row)} title={label}>
                        <span class="hm-value">{fmtMetric(rank, s)}</span>
                        <span class="sr-only"> {RANK_LABEL[rank]} with {comboText(row.params, r.axes)}</span>
                        {isBest && (
                          <>
                            <span class="hm-star" aria-hidden="true">
                              ★
                            </span>
                            <span class="sr-only">, the best</span>
                          </>
                        )}
                        {row.rank != null && (
                          <span class="hm-rank">
                            <span class="sr-only">, rank </span>#{row.rank}
                            <span class="sr-only"> of {scored}</span>
                          </span>
                        )}
                        <span class="sr-only">. Open in the Result tab</span>
                      </a>
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

const TABLE_METRICS = ["total_return", "cagr", "sharpe_ratio", "max_drawdown", "calmar_ratio"] as const;

function SweepTable({ r, hrefOf, sortBy, sort, onSort }: { r: SweepResponse; hrefOf: (row: SweepRow) => string; sortBy: string | null; sort: string | null; onSort: (col: string, dir: string) => void }) {
  const metrics: string[] = [...TABLE_METRICS];
  if (!metrics.includes(r.rank_by)) metrics.push(r.rank_by);
  const cols = [...r.axes.map((a) => a.name), ...metrics, "rank"];
  const col = sortBy && cols.includes(sortBy) ? sortBy : "rank";
  const dir = sort === "desc" || sort === "asc" ? sort : col === "rank" || r.axes.some((a) => a.name === col) ? "asc" : "desc";
  const valueOf = (row: SweepRow, c: string): number | string | null => {
    if (c === "rank") return row.rank ?? null;
    if (r.axes.some((a) => a.name === c)) return row.params[c] ?? null;
    const v = (row.metrics as Record<string, unknown>)[c];
    return typeof v === "number" ? v : null;
  };
  const order = r.rows
    .map((row, i) => ({ row, i }))
    .sort((a, b) => {
      // Axis values sort by their place on the axis (daily, weekly, monthly as written).
      const ax = r.axes.findIndex((x) => x.name === col);
      if (ax >= 0) return (dir === "asc" ? 1 : -1) * (a.row.cell[ax] - b.row.cell[ax]) || a.i - b.i;
      const va = valueOf(a.row, col);
      const vb = valueOf(b.row, col);
      // Undefined figures last, whichever the direction.
      if (va == null || vb == null) return va == null && vb == null ? a.i - b.i : va == null ? 1 : -1;
      const d = (va as number) - (vb as number);
      return (dir === "asc" ? d : -d) || a.i - b.i;
    });
  const label = (c: string) => (c === "rank" ? "Rank" : RANK_LABEL[c as RankBy] ?? paramLabel(c));
  return (
    <div class="table-wrap rs-wrap" tabIndex={0} role="region" aria-label="Every combination's figures">
      <table class="table compact sortable" id="sweep-table">
        <caption class="sr-only">Every combination, sorted by {label(col)} ({dir === "asc" ? "ascending" : "descending"})</caption>
        <thead>
          <tr>
            {cols.map((c) => {
              const on = c === col;
              const numeric = !r.axes.some((a) => a.name === c) || typeof r.axes.find((a) => a.name === c)?.values[0] === "number";
              return (
                <th key={c} scope="col" class={numeric ? "num" : undefined} aria-sort={on ? (dir === "asc" ? "ascending" : "descending") : "none"}>
                  <span class="th-inner">
                    <button type="button" class="sort-btn" data-col={c} onClick={() => onSort(c, on ? (dir === "asc" ? "desc" : "asc") : c === "rank" || r.axes.some((a) => a.name === c) ? "asc" : "desc")}>
                      {label(c)}
                      {on && (
                        <span class="sort-ind" aria-hidden="true">
                          {dir === "asc" ? "▲" : "▼"}
                        </span>
                      )}
                    </button>
                  </span>
                </th>
              );
            })}
            <th scope="col">
              <span class="sr-only">Open</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {order.map(({ row, i }) => (
            <tr key={i} class={i === r.best ? "best-row" : undefined} data-row={i}>
              {r.axes.map((a) => (
                <td key={a.name} class={typeof row.params[a.name] === "number" ? "num" : undefined}>
                  {fmtValue(row.params[a.name])}
                </td>
              ))}
              {metrics.map((m) => {
                const v = (row.metrics as Record<string, unknown>)[m] as number | null | undefined;
                return (
                  <td key={m} class={`num ${m === "total_return" || m === "cagr" ? signClass(v) : ""}`}>
                    {fmtMetric(m, v)}
                  </td>
                );
              })}
              <td class="num">
                {row.rank ?? "—"}
                {i === r.best && (
                  <>
                    <span class="hm-star" aria-hidden="true">
                      ★
                    </span>
                    <span class="sr-only"> (the best)</span>
                  </>
                )}
              </td>
              <td>
                <a href={hrefOf(row)} aria-label={`Open ${comboText(row.params, r.axes)} in the Result tab`}>
                  Open
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// ---- walk-forward ----

/** What an efficiency means, in one sentence. */
function efficiencySentence(e: number | null, rank: RankBy): string {
  if (e == null || !Number.isFinite(e))
    return `Efficiency is not defined here: the in-sample ${RANK_LABEL[rank]} is not positive or a figure is missing, so the comparison says nothing.`;
  if (e >= 0.8) return `Near 1: the choice held up out of sample — the winners kept most of what they showed in sample.`;
  if (e >= 0.4) return `Below 1: the choice kept only part of its in-sample ${RANK_LABEL[rank]} — the sweep's winner was partly luck.`;
  return `Far below 1: out of sample the choice lost most of its in-sample ${RANK_LABEL[rank]} — the sweep's winner was largely luck.`;
}

const SPLIT_FIGURES: [keyof SplitMetrics, string][] = [
  ["total_return", "Total return"],
  ["cagr", "CAGR"],
  ["sharpe_ratio", "Sharpe ratio"],
  ["sortino_ratio", "Sortino ratio"],
  ["max_drawdown", "Max drawdown"],
  ["calmar_ratio", "Calmar ratio"],
];

const years = (n: number) => `${int(n)} year${n === 1 ? "" : "s"}`;

export function WalkForwardView({ r }: { r: WalkForwardResponse }) {
  const rank = r.rank_by;
  const data = useMemo(() => [r.equity_curve.map((p) => dayTs(p.date)), r.equity_curve.map((p) => p.equity)] as uPlot.AlignedData, [r]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        cursor: { drag: { x: true, y: false } },
        tzDate: utcDate,
        scales: { x: { time: true }, y: { distr: 3, range: logRange } },
        axes: [axis(t), axis(t, { size: 80, values: (_u: uPlot, v: number[]) => v.map((x) => compact(x)) })],
        series: [{}, { label: "Out of sample", stroke: t.accent2, width: 2, value: (_u: uPlot, v: number | null) => price(v) }],
      }) as Opts,
    [r],
  );
  const oos = r.out_of_sample[rank];
  const ins = r.in_sample[rank];
  return (
    <>
      <p class="bt-window" id="wf-window">
        {r.metadata.strategy} {r.metadata.strategy_version} from <time dateTime={r.metadata.start_date}>{r.metadata.start_date}</time> to{" "}
        <time dateTime={r.metadata.end_date}>{r.metadata.end_date}</time> · {int(r.splits.length)} split{r.splits.length === 1 ? "" : "s"} · train{" "}
        {years(r.train_years)} ({r.mode}) · test {years(r.test_years)} · {int(r.metadata.combinations)} combinations
      </p>
      <Card title={`${RANK_LABEL[rank]} out of sample against in sample`} id="wf-headline">
        <dl class="stats stats-2">
          <div>
            <dt>Out of sample</dt>
            <dd id="wf-oos" class={isPct(rank) ? signClass(oos) : undefined}>{fmtMetric(rank, oos)}</dd>
          </div>
          <div>
            <dt>Mean in sample</dt>
            <dd id="wf-is" class={isPct(rank) ? signClass(ins) : undefined}>{fmtMetric(rank, ins)}</dd>
          </div>
          <div>
            <dt>Efficiency</dt>
            <dd id="wf-efficiency">{r.efficiency == null ? "—" : num(r.efficiency)}</dd>
          </div>
        </dl>
        <p id="wf-meaning">
          <strong>{efficiencySentence(r.efficiency ?? null, rank)}</strong>
        </p>
        <p class="muted small">
          Efficiency is the out-of-sample {RANK_LABEL[rank]} (the test splits chained) divided by the mean in-sample one (each
          split's winner on its train years). On each split the sweep picks its best combination on the train years and then
          runs it, unchanged, on the test years that follow.
        </p>
      </Card>
      <Card title="Out-of-sample equity, the test splits chained (log scale)" id="wf-equity">
        <Chart id="chart-wf-equity" data={data} options={options} height={280} label="Equity of the walk-forward's test splits, each run with the combination chosen on the years before it, chained from the initial capital" />
      </Card>
      <Card title={`Splits (${int(r.splits.length)})`} id="wf-splits">
        <div class="table-wrap rs-wrap" tabIndex={0} role="region" aria-label="The walk-forward's splits">
          <table class="table compact" id="wf-splits-table">
            <caption class="sr-only">Each split's train and test windows, the combination chosen on the train window and its {RANK_LABEL[rank]} in and out of sample</caption>
            <thead>
              <tr>
                <th scope="col">Train</th>
                <th scope="col">Test</th>
                <th scope="col">Chosen</th>
                <th scope="col" class="num">In sample</th>
                <th scope="col" class="num">Out of sample</th>
              </tr>
            </thead>
            <tbody>
              {r.splits.map((s) => (
                <tr key={s.test_start}>
                  <td class="wf-dates">
                    <time dateTime={s.train_start}>{s.train_start}</time> to <time dateTime={s.train_end}>{s.train_end}</time>
                  </td>
                  <td class="wf-dates">
                    <time dateTime={s.test_start}>{s.test_start}</time> to <time dateTime={s.test_end}>{s.test_end}</time>
                  </td>
                  <td>{comboText(s.chosen, r.axes)}</td>
                  <td class={`num ${isPct(rank) ? signClass(s.in_sample[rank]) : ""}`}>{fmtMetric(rank, s.in_sample[rank])}</td>
                  <td class={`num ${isPct(rank) ? signClass(s.out_of_sample[rank]) : ""}`}>{fmtMetric(rank, s.out_of_sample[rank])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p class="muted small">{RANK_LABEL[rank]} of the chosen combination on its train and its test window.</p>
      </Card>
      <Card title="All figures" id="wf-figures">
        <div class="table-wrap rs-wrap" tabIndex={0} role="region" aria-label="Figures in and out of sample">
          <table class="table small" id="wf-figures-table">
            <thead>
              <tr>
                <th scope="col">Figure</th>
                <th scope="col" class="num">Mean in sample</th>
                <th scope="col" class="num">Out of sample</th>
              </tr>
            </thead>
            <tbody>
              {SPLIT_FIGURES.map(([k, label]) => (
                <tr key={k} class={k === rank ? "current" : undefined}>
                  <th scope="row">{label}</th>
                  <td class="num">{fmtMetric(k, r.in_sample[k])}</td>
                  <td class="num">{fmtMetric(k, r.out_of_sample[k])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p class="muted small">
          engine {r.metadata.engine_version} · computed {utcStamp(r.metadata.calculated_at)}
        </p>
      </Card>
    </>
  );
}
