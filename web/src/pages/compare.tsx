// Compare: two to five assets on one chart, their prices rebased to 100 at
// the first date they share, their drawdowns beside them, and their verdicts
// side by side. Everything lives in the URL (`/compare?tickers=AAPL,MSFT`),
// so a comparison can be shared by its link.
import { useMemo, useState } from "preact/hooks";
import uPlot from "uplot";
import { api, type Analysis, type Verdict } from "../api/endpoints";
import { assetUrl, navigate, withQuery, type Location } from "../router";
import { axis, Chart, dateSeries, dayTs, pctAxis, timeAxis, utcTime, type Opts, type Theme } from "../chart";
import { Card, ErrorNote, GradeBadge, Loading, pct, price, signClass, useData, useTitle } from "../lib";
import { DatedPrice } from "../facts";
import { ExpectedCell, forecastOf } from "../forecast";
import { maxPoints } from "./asset";

/** Most assets one comparison holds. */
export const MAX_COMPARED = 5;

/** The tickers of `raw` (comma-separated), each once, at most MAX_COMPARED. */
export function comparedTickers(raw: string | null): string[] {
  const out: string[] = [];
  for (const t of (raw ?? "").split(",").map((s) => s.trim())) {
    if (t && !out.includes(t) && out.length < MAX_COMPARED) out.push(t);
  }
  return out;
}

/** A colour per asset, readable on both schemes. */
const COLOURS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed"];

interface Rebased {
  days: number[];
  /** Per asset: its price rebased to 100 at the first shared day, null where it has no row. */
  prices: (number | null)[][];
  /** Per asset: its drawdown from its own running peak, null where it has no row. */
  drawdowns: (number | null)[][];
  /** The first shared day (YYYY-MM-DD), or null when the histories do not overlap. */
  from: string | null;
}

/** The assets' rows on the days they share, prices rebased to 100 at the first one. */
export function rebase(list: Analysis[]): Rebased {
  const first = Math.max(...list.map((a) => dayTs(a.time_series.dates[0])));
  const last = Math.min(...list.map((a) => dayTs(a.time_series.dates[a.time_series.dates.length - 1])));
  if (!(first <= last)) return { days: [], prices: list.map(() => []), drawdowns: list.map(() => []), from: null };
  const all = new Set<number>();
  const rows = list.map((a) => {
    const m = new Map<number, [number, number]>();
    a.time_series.dates.forEach((d, i) => {
      const x = dayTs(d);
      if (x >= first && x <= last) {
        m.set(x, [a.time_series.prices[i], a.time_series.drawdowns[i]]);
        all.add(x);
      }
    });
    return m;
  });
  const days = [...all].sort((a, b) => a - b);
  // On a day an asset has no row (the series are thinned each on its own
  // days), its last known figure holds: a close stays the close until the next.
  const held = (m: Map<number, [number, number]>, k: 0 | 1) => {
    let last: number | null = null;
    return days.map((x) => {
      const v = m.get(x)?.[k];
      if (v !== undefined) last = v;
      return last;
    });
  };
  const prices = rows.map((m) => {
    const closes = held(m, 0);
    const base = closes.find((v) => v !== null && v > 0);
    return closes.map((v) => (v === null || !base ? null : (v / base) * 100));
  });
  const drawdowns = rows.map((m) => held(m, 1));
  return { days, prices, drawdowns, from: new Date(first * 1000).toISOString().slice(0, 10) };
}

/** One chart of every compared asset: rebased prices on a log scale (equal ratios, equal heights), or drawdowns. */
function CompareChart({ id, label, tickers, days, series, percent }: { id: string; label: string; tickers: string[]; days: number[]; series: (number | null)[][]; percent: boolean }) {
  const data = useMemo(() => [days, ...series] as uPlot.AlignedData, [days, series]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        ...utcTime,
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true }, y: percent ? {} : { distr: 3 } },
        axes: [timeAxis(t), axis(t, { size: 64, values: percent ? pctAxis : (_u: uPlot, v: number[]) => v.map((x) => (x == null ? "" : x.toFixed(0))) })],
        series: [
          dateSeries,
          ...tickers.map((tk, i) => ({
            label: tk,
            stroke: COLOURS[i % COLOURS.length],
            width: 1.5,
            spanGaps: true,
            value: (_u: uPlot, v: number | null) => (v == null ? "—" : percent ? pct(v) : v.toFixed(1)),
          })),
        ],
      }) as Opts,
    [tickers.join(","), percent],
  );
  return <Chart id={id} data={data} options={options} height={300} label={label} />;
}

function VerdictColumn({ ticker, v }: { ticker: string; v: Verdict }) {
  const f = forecastOf(v);
  return (
    <div class="cmp-verdict" data-ticker={ticker}>
      <h3 class="h3">
        <a class="ticker" href={assetUrl(ticker)}>
          {ticker}
        </a>
      </h3>
      <dl class="stats">
        <div>
          <dt>Grade</dt>
          <dd>
            <GradeBadge letter={v.grade.letter} score={v.grade.score} />
          </dd>
        </div>
        {f && (
          <div>
            <dt>Expected ({f.return_period} d)</dt>
            <dd>
              <ExpectedCell f={f} />
            </dd>
          </div>
        )}
        <div>
          <dt>Last price</dt>
          <dd>
            <DatedPrice value={v.current_state.price} date={v.metadata.last_price_date} source={v.metadata.data_source} currency={(v.metadata as { currency?: string | null }).currency ?? null} format={price} />
          </dd>
        </div>
        <div>
          <dt>Drawdown</dt>
          <dd class={signClass(v.current_state.drawdown)}>{pct(v.current_state.drawdown)}</dd>
        </div>
        <div>
          <dt>Median return (bucket's history)</dt>
          <dd class={signClass(v.current_state.median_return)}>{pct(v.current_state.median_return)}</dd>
        </div>
      </dl>
    </div>
  );
}

export function ComparePage({ loc }: { loc: Location }) {
  useTitle("Compare");
  const tickers = comparedTickers(loc.query.get("tickers"));
  const key = tickers.join(",");
  const [text, setText] = useState(tickers.join(", "));
  const points = useMemo(() => maxPoints(), []);
  const enough = tickers.length >= 2;
  const analyses = useData(() => (enough ? Promise.all(tickers.map((t) => api.analysis(t, {}, points))) : Promise.resolve(null)), [key]);
  const verdicts = useData(() => (enough ? Promise.all(tickers.map((t) => api.verdict(t))) : Promise.resolve(null)), [key]);
  const r = useMemo(() => (analyses.data ? rebase(analyses.data) : null), [analyses.data]);
  const go = (e: Event) => {
    e.preventDefault();
    navigate(withQuery("/compare", { tickers: comparedTickers(text.replace(/\s+/g, ",")).join(",") }));
  };
  return (
    <main class="page compare-page">
      <h1>Compare</h1>
      <p class="lead">
        Two to five assets: their prices rebased to 100 on the first day they all have, their drawdowns, and their verdicts side by
        side.
      </p>
      <Card>
        <form class="filters" role="search" onSubmit={go}>
          <div class="field grow">
            <label for="cmp-tickers">Tickers, separated by commas (2 to {MAX_COMPARED})</label>
            <input id="cmp-tickers" value={text} maxLength={200} placeholder="AAPL, MSFT, ^GSPC" onInput={(e) => setText((e.target as HTMLInputElement).value)} />
          </div>
          <div class="field">
            <button class="btn btn-primary" type="submit">
              Compare
            </button>
          </div>
        </form>
        {!enough && <p class="muted">Name at least two assets to compare.</p>}
      </Card>
      {enough && (analyses.loading || verdicts.loading) && <Loading label="Loading the assets…" />}
      <ErrorNote error={analyses.error ?? verdicts.error} what="The comparison" id="compare-error" />
      {r && r.from === null && <p class="note note-warn">These histories share no day: there is nothing to rebase.</p>}
      {r && r.from !== null && (
        <div class="grid2">
          <Card title="Price, rebased to 100" id="compare-prices">
            <p class="muted small" id="compare-from">
              100 = each asset's close on {r.from}, the first day all of them have; each in its own currency; log scale.
            </p>
            <CompareChart id="chart-compare" label={`Prices of ${tickers.join(", ")} rebased to 100 on ${r.from}`} tickers={tickers} days={r.days} series={r.prices} percent={false} />
          </Card>
          <Card title="Drawdown" id="compare-drawdowns">
            <p class="muted small">Each asset's fall from its own running peak (over its whole history).</p>
            <CompareChart id="chart-compare-drawdown" label={`Drawdowns of ${tickers.join(", ")}`} tickers={tickers} days={r.days} series={r.drawdowns} percent />
          </Card>
        </div>
      )}
      {verdicts.data && (
        <Card title="Verdicts" id="compare-verdicts">
          <div class="cmp-grid">
            {verdicts.data.map((v, i) => (
              <VerdictColumn key={tickers[i]} ticker={tickers[i]} v={v} />
            ))}
          </div>
        </Card>
      )}
    </main>
  );
}
