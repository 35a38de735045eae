// The asset page: the verdict first (grade, price with its date, source and
// currency), the analysis parameters, then the charts and the segment table.
//
// What it fetches is what it draws: the analysis comes with `max_points`
// (see `maxPoints`), so the per-row series are thinned on the server for
// drawing while every statistic shown (verdict, table, box chart, histogram)
// is the server's, computed on all rows. Nothing here computes a statistic
// from `time_series` or from the `scatter_data` sample.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { ApiError, describe, fieldOf, urlOf, WEB } from "../api/client";
import { api, type Analysis, type AnalysisParams, type AssetInfo, type Segment, type SegmentEvidence, type Verdict } from "../api/endpoints";
import { navigate, withQuery, type Location } from "../router";
import { axis, Chart, dateSeries, dayTs, pctAxis, rule, timeAxis, utcTime, type Opts, type Theme } from "../chart";
import { compact, Card, ErrorNote, GradeBadge, Loading, SourceBadge, int, pct, price, signClass, useData, useTitle, when } from "../lib";
import { DatedPrice } from "../facts";
import { tags } from "../format";
import { ciText, episodesText, recoveryText, ThinNote } from "../evidence";
import { ForecastLead, forecastOf, signedPct } from "../forecast";
import { GradeHistory } from "./grade-history";
import { Help } from "../glossary-link";
import { NotFound } from "../notfound";
import { AlertMeButton, AlertMeForm, useAlertMe } from "../alert-form";

const FIELDS = ["return_period", "num_segments", "decay_factor", "metric", "start_date", "end_date"] as const;
type Field = (typeof FIELDS)[number];

function paramsOf(loc: Location): AnalysisParams {
  const p: AnalysisParams = {};
  for (const f of FIELDS) {
    const v = loc.query.get(f);
    if (v !== null && v !== "") p[f] = v;
  }
  return p;
}

/**
 * Rows of the per-row series to fetch (`max_points`). A line chart needs at
 * most a low and a high per pixel column (the server keeps each stretch's
 * extremes), and the widest chart here (walk-forward, the page's width, at
 * most ~1,190 CSS px of plot at the 1,240 px page) needs ≈ 2 × its plot
 * width; the two-column charts need half of that. So: 2,000 rows on a wide
 * screen, 1,500 on a narrow one (phones: ~320 px of plot, still > 4 rows per
 * pixel). The demo's ^GSPC (16,607 rows, 1950–2015) is drawn from ~1,400
 * rows: ~380 KB on the wire instead of ~4 MB (most of what is left is the
 * segment paths). Zooming in (drag) shows the same rows.
 */
export function maxPoints(viewportWidth: number = typeof window === "undefined" ? 1280 : window.innerWidth): number {
  return viewportWidth >= 900 ? 2000 : 1500;
}

/** The drawn x values of the time charts, built once per answer. */
function useDays(a: Analysis): number[] {
  return useMemo(() => a.time_series.dates.map(dayTs), [a]);
}

// ---------------------------------------------------------------- charts

/** The price chart's range presets: years back from the last row (0: all of it). */
const RANGES: [string, number][] = [
  ["1Y", 1],
  ["5Y", 5],
  ["10Y", 10],
  ["Max", 0],
];
const YEAR_SECONDS = 365.25 * 86400;

/** The x range `years` back from the last day of `days` (all of them for 0). */
function rangeOf(days: number[], years: number): { min: number; max: number } {
  const max = days[days.length - 1];
  return { min: years > 0 ? Math.max(days[0], max - years * YEAR_SECONDS) : days[0], max };
}

/** A UTC day (seconds) as YYYY-MM-DD. */
const isoDay = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 10);

/** The rows of a zoomed window at full resolution, fetched for it. */
type Detail = { min: number; max: number; a: Analysis; days: number[] };

/** Loads the rows of a window; the page's parameters and row budget. */
export type WindowLoader = (from: string, to: string) => Promise<Analysis>;

type Range = { min: number; max: number };

/** The rows of `range` at full resolution, loaded when the series shown is thinned (`null`: the whole series). */
function useWindowRows(range: Range | null, thinned: boolean, loadWindow: WindowLoader) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [loading, setLoading] = useState(false);
  // A window narrower than the whole, of a thinned series: load its rows.
  useEffect(() => {
    if (!range) {
      setDetail(null);
      return;
    }
    if (!thinned || (detail && detail.min <= range.min && detail.max >= range.max && detail.a.metadata.drawn?.rows === detail.days.length)) return;
    let live = true;
    const timer = setTimeout(() => {
      setLoading(true);
      loadWindow(isoDay(range.min), isoDay(range.max)).then(
        (w) => {
          if (!live) return;
          setDetail({ min: range.min, max: range.max, a: w, days: w.time_series.dates.map(dayTs) });
          setLoading(false);
        },
        () => live && setLoading(false),
      );
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [range?.min, range?.max, thinned]);
  return { detail, setDetail, loading };
}

/** What a zoomed price chart draws: the window's rows, and how many of them. */
function ZoomNote({ loading, detail, range, drawn }: { loading: boolean; detail: Detail | null; range: Range | null; drawn: number }) {
  const rows = detail?.a.metadata.drawn?.rows ?? drawn;
  return (
    <p class="muted small chart-note" id="price-zoom-note" aria-live="polite">
      {loading
        ? "Loading every row of this window…"
        : detail
          ? `${int(rows)} daily rows from ${isoDay(range?.min ?? detail.min)} to ${isoDay(range?.max ?? detail.max)}${rows > drawn ? `, ${int(drawn)} of them drawn` : ", every one drawn"}.`
          : ""}
    </p>
  );
}

/**
 * The price chart. The page's series is thinned to the row budget (a
 * 65-year history keeps each stretch's highs and lows); zooming in (a
 * preset or a drag) loads the window's own rows, up to the same budget, so
 * a year shows its every day. "Reset zoom" (or Max) goes back to it all.
 */
function PriceChart({ a, days, loadWindow }: { a: Analysis; days: number[]; loadWindow: WindowLoader }) {
  const [years, setYears] = useState(0);
  const [log, setLog] = useState(false);
  const [range, setRange] = useState<Range | null>(null);
  const thinned = (a.metadata.time_series_rows ?? 0) > a.time_series.dates.length;
  const { detail, setDetail, loading } = useWindowRows(range, thinned, loadWindow);
  const plot = useRef<uPlot | null>(null);
  const shown = detail ?? { a, days };
  const data = useMemo<uPlot.AlignedData>(() => {
    const s = shown.a.time_series;
    return [shown.days, s.prices, s.projected_prices.map((v) => v ?? null)] as uPlot.AlignedData;
  }, [shown.a, shown.days]);
  // A drag reports its new x range here (through a ref: the options are made once per scale).
  const onZoom = useRef((_min: number, _max: number) => {});
  onZoom.current = (min, max) => {
    if (range && Math.abs(range.min - min) < 1 && Math.abs(range.max - max) < 1) return;
    const whole = min <= days[0] + 1 && max >= days[days.length - 1] - 1;
    setRange(whole ? null : { min, max });
  };
  const options = useMemo(
    () => (t: Theme) =>
      ({
        ...utcTime,
        cursor: { drag: { x: true, y: false } },
        // Log: equal ratios take equal heights (a 65-year history stays readable).
        scales: { x: { time: true }, y: log ? { distr: 3 } : {} },
        axes: [timeAxis(t), axis(t, { size: 70, values: (_u: uPlot, v: number[]) => v.map((x) => compact(x)) })],
        series: [
          dateSeries,
          { label: "Close", stroke: t.accent, width: 1.5, value: (_u: uPlot, v: number | null) => price(v) },
          // Off at first (click its legend entry): it sits on top of the close.
          { label: "Projected", show: false, stroke: t.accent2, width: 1, dash: [4, 4], value: (_u: uPlot, v: number | null) => price(v) },
        ],
        hooks: {
          setScale: [
            (u: uPlot, key: string) => {
              const x = u.scales.x;
              if (key === "x" && x.min != null && x.max != null) onZoom.current(x.min, x.max);
            },
          ],
        },
      }) as Opts,
    [log],
  );
  const show = (y: number) => {
    const r = y > 0 && days.length > 1 ? rangeOf(days, y) : null;
    setYears(y);
    setRange(r);
    // On the whole series the plot stays and moves at once; a window's own
    // rows give way to the whole series (a new plot, at `r`).
    if (detail) setDetail(null);
    else if (plot.current && days.length > 1) plot.current.setScale("x", r ?? rangeOf(days, 0));
  };
  const reset = () => show(0);
  // A new plot (log toggled, new data) shows the window chosen.
  const onPlot = (u: uPlot) => {
    plot.current = u;
    if (range) u.setScale("x", range);
  };
  const drawn = shown.a.time_series.dates.length;
  return (
    <>
      <div class="chart-tools" role="toolbar" aria-label="Price chart range and scale">
        <div class="range-group" role="group" aria-label="Range">
          {RANGES.map(([label, y]) => (
            <button key={label} type="button" class="btn btn-small" aria-pressed={years === y && (y > 0 || !range)} data-range={label} onClick={() => show(y)}>
              {label}
            </button>
          ))}
        </div>
        <label class="chart-check">
          <input type="checkbox" id="price-log" checked={log} onChange={(e) => setLog((e.target as HTMLInputElement).checked)} /> Log scale
        </label>
        {range ? (
          <button type="button" class="btn btn-small" id="price-reset" onClick={reset}>
            Reset zoom
          </button>
        ) : (
          <span class="muted small">Drag across the chart to zoom.</span>
        )}
        <a class="small" id="price-compare" href={withQuery("/compare", { tickers: a.ticker === "^GSPC" ? "^GSPC,^IXIC" : `${a.ticker},^GSPC` })}>
          Compare with {a.ticker === "^GSPC" ? "the Nasdaq" : "the S&P 500"}
        </a>
      </div>
      <Chart
        id="chart-price"
        data={data}
        options={options}
        height={260}
        label={`Daily closing price of ${a.ticker}${log ? ", log scale" : ""}${range ? `, from ${isoDay(range.min)} to ${isoDay(range.max)}` : ""}`}
        dataset={{ scale: log ? "log" : "linear", rows: String(drawn), detail: detail ? "window" : "all", loading: loading ? "1" : "0" }}
        onPlot={onPlot}
      />
      <ZoomNote loading={loading} detail={detail} range={range} drawn={drawn} />
    </>
  );
}

function DrawdownChart({ a, days }: { a: Analysis; days: number[] }) {
  const data = useMemo<uPlot.AlignedData>(() => [days, a.time_series.drawdowns] as uPlot.AlignedData, [a, days]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        ...utcTime,
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true } },
        axes: [timeAxis(t), axis(t, { size: 60, values: pctAxis })],
        series: [dateSeries, { label: "Drawdown", stroke: t.neg, fill: t.band, width: 1, value: (_u: uPlot, v: number | null) => pct(v) }],
        hooks: {
          // The segment buckets: a line at every boundary, the current bucket shaded.
          drawClear: [
            (u: uPlot) => {
              const ctx = u.ctx;
              const { left, width } = u.bbox;
              ctx.save();
              const cur = a.segments.find((s) => s.segment_idx === a.current_state.segment);
              if (cur) {
                const y1 = u.valToPos(cur.upper_bound, "y", true);
                const y2 = u.valToPos(cur.lower_bound, "y", true);
                ctx.fillStyle = t.band;
                ctx.globalAlpha = 0.9;
                ctx.fillRect(left, Math.min(y1, y2), width, Math.abs(y2 - y1));
                ctx.globalAlpha = 1;
              }
              ctx.strokeStyle = t.grid;
              ctx.setLineDash([2, 3]);
              ctx.lineWidth = 1;
              for (const s of a.segments) rule(u, s.lower_bound, "y");
              ctx.restore();
            },
          ],
        },
      }) as Opts,
    [a],
  );
  return (
    <Chart
      id="chart-drawdown"
      data={data}
      options={options}
      height={200}
      label={`Drawdown from the running peak, with the ${a.segments.length} segment buckets marked; the current bucket is shaded`}
    />
  );
}

/** A box of the box chart: one bucket's outcome quantiles, as the server computed them. */
interface Box {
  idx: number;
  /** Bucket midpoint (drawdown), the x position. */
  x: number;
  /** Bucket width (drawdown). */
  w: number;
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
  /** Independent episodes behind the box (null from an engine without evidence). */
  episodes: number | null;
}

/**
 * The boxes drawn: `segments[i].outcome_quantiles` (quantiles of all the
 * bucket's confirmed outcomes; p50 is `static_median_return`, the table's
 * "Median, all outcomes"). A bucket without them (no confirmed outcome) has
 * no box. Never from the `scatter_data` sample.
 */
function boxesOf(a: Analysis): Box[] {
  const rows: Box[] = [];
  for (const s of a.segments) {
    const q = s.outcome_quantiles;
    if (!q) continue;
    rows.push({
      idx: s.segment_idx,
      x: (s.lower_bound + s.upper_bound) / 2,
      w: Math.abs(s.upper_bound - s.lower_bound),
      ...q,
      episodes: s.evidence?.episodes ?? null,
    });
  }
  return rows.sort((p, q) => p.x - q.x);
}

function SegmentBoxChart({ a }: { a: Analysis }) {
  const { data, boxes, medians } = useMemo(() => {
    const boxes = boxesOf(a);
    const data = [
      boxes.map((r) => r.x),
      boxes.map((r) => r.p90),
      boxes.map((r) => r.p75),
      boxes.map((r) => r.p50),
      boxes.map((r) => r.p25),
      boxes.map((r) => r.p10),
      boxes.map((r) => r.episodes),
    ] as uPlot.AlignedData;
    // The very medians drawn, by bucket: what the browser suite compares with the table.
    const medians = JSON.stringify(boxes.map((b) => ({ segment: b.idx, median: b.p50 })));
    return { data, boxes, medians };
  }, [a]);
  const options = useMemo(
    () => (t: Theme) => {
      const hidden = { paths: () => null, points: { show: false } };
      return {
        scales: { x: { time: false }, episodes: { auto: true } },
        axes: [axis(t, { values: pctAxis, label: "Drawdown bucket (midpoint)" }), axis(t, { size: 60, values: pctAxis })],
        series: [
          { label: "Bucket", value: (_u: uPlot, v: number | null) => pct(v, 1) },
          { label: "p90", stroke: t.muted, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "p75", stroke: t.accent, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "Median (all outcomes)", stroke: t.fg, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "p25", stroke: t.accent, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "p10", stroke: t.muted, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          // The box's independent episodes, in the legend only (a scale of its own, no axis).
          { label: "Episodes", scale: "episodes", stroke: t.muted, ...hidden, value: (_u: uPlot, v: number | null) => int(v) },
        ],
        hooks: {
          draw: [
            (u: uPlot) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = t.muted;
              rule(u, 0, "y");
              for (const b of boxes) {
                const cx = u.valToPos(b.x, "x", true);
                const half = Math.max(2, Math.abs(u.valToPos(b.x + b.w / 2, "x", true) - cx) * 0.7);
                const y = (v: number) => u.valToPos(v, "y", true);
                const current = b.idx === a.current_state.segment;
                ctx.strokeStyle = t.muted;
                ctx.lineWidth = 1;
                ctx.beginPath();
                ctx.moveTo(cx, y(b.p90));
                ctx.lineTo(cx, y(b.p75));
                ctx.moveTo(cx, y(b.p25));
                ctx.lineTo(cx, y(b.p10));
                ctx.stroke();
                ctx.fillStyle = current ? t.accent2 : t.accent;
                ctx.globalAlpha = current ? 0.9 : 0.55;
                ctx.fillRect(cx - half, y(b.p75), half * 2, y(b.p25) - y(b.p75));
                ctx.globalAlpha = 1;
                ctx.strokeStyle = t.fg;
                ctx.lineWidth = 2;
                ctx.beginPath();
                ctx.moveTo(cx - half, y(b.p50));
                ctx.lineTo(cx + half, y(b.p50));
                ctx.stroke();
              }
              ctx.restore();
            },
          ],
        },
      } as Opts;
    },
    [boxes, a],
  );
  // null: the server says the bucket has no confirmed outcome (an older server sends no field at all).
  const missing = a.segments.filter((s) => s.outcome_quantiles === null).length;
  return (
    <>
      <Chart
        id="chart-segments"
        data={data}
        options={options}
        height={260}
        dataset={{ medians }}
        label="Forward return per drawdown bucket, over all of each bucket's confirmed outcomes: boxes span the 25th to 75th percentile, whiskers the 10th to 90th, the bar is the median (the table's “Median, all outcomes”); the current bucket is highlighted; the legend gives each bucket's independent episodes"
      />
      <p class="muted small chart-note">
        Each box: all the bucket's confirmed outcomes — 25th to 75th percentile, whiskers 10th to 90th; the bar is their median, the table's
        “Median, all outcomes”. Point at a box for its independent episodes (the table has them too).{missing > 0 && ` ${missing} bucket${missing === 1 ? " has" : "s have"} no confirmed outcome (no box).`}
      </p>
    </>
  );
}

function HistogramChart({ a }: { a: Analysis }) {
  const data = useMemo(() => {
    const { bins, counts } = a.return_distribution;
    // bins may be edges (counts + 1) or centres (counts).
    const xs = bins.length === counts.length + 1 ? counts.map((_, i) => (bins[i] + bins[i + 1]) / 2) : bins.slice(0, counts.length);
    return [xs, counts] as uPlot.AlignedData;
  }, [a]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        scales: { x: { time: false } },
        axes: [axis(t, { values: pctAxis, label: `Forward return over ${a.metadata.return_period} days` }), axis(t, { size: 50 })],
        series: [
          { label: "Return", value: (_u: uPlot, v: number | null) => pct(v, 1) },
          { label: "Count", fill: t.accent, stroke: t.accent, paths: uPlot.paths.bars!({ size: [0.9, 100] }), points: { show: false } },
        ],
      }) as Opts,
    [a],
  );
  return <Chart id="chart-histogram" data={data} options={options} height={220} label="Histogram of all historical forward returns" />;
}

function ScatterChart({ a }: { a: Analysis }) {
  const data = useMemo(() => {
    const pts = [...a.scatter_data].sort((p, q) => p.drawdown - q.drawdown);
    const cur = a.current_state.segment;
    return [
      pts.map((p) => p.drawdown),
      pts.map((p) => (p.segment === cur ? null : p.future_return)),
      pts.map((p) => (p.segment === cur ? p.future_return : null)),
    ] as uPlot.AlignedData;
  }, [a]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        scales: { x: { time: false } },
        cursor: { points: { show: false } },
        axes: [axis(t, { values: pctAxis, label: "Drawdown on the day" }), axis(t, { size: 60, values: pctAxis })],
        series: [
          { label: "Drawdown", value: (_u: uPlot, v: number | null) => pct(v) },
          {
            label: "Forward return",
            stroke: t.accent,
            paths: () => null,
            points: { show: true, size: 3, space: 0, width: 0, fill: t.accent },
            value: (_u: uPlot, v: number | null) => pct(v),
          },
          {
            label: "Current bucket",
            stroke: t.accent2,
            paths: () => null,
            points: { show: true, size: 4, space: 0, width: 0, fill: t.accent2 },
            value: (_u: uPlot, v: number | null) => pct(v),
          },
        ],
      }) as Opts,
    [a],
  );
  return (
    <Chart
      id="chart-scatter"
      data={data}
      options={options}
      height={280}
      label="Scatter of each day's drawdown against the forward return that followed; the current bucket's days are highlighted"
    />
  );
}

function FanChart({ a }: { a: Analysis }) {
  const keys = Object.keys(a.segment_paths).sort((x, y) => Number(x) - Number(y));
  const curKey = keys.find((k) => Number(k) === a.current_state.segment) ?? keys[0];
  const [key, setKey] = useState(curKey);
  useEffect(() => setKey(curKey), [a]);
  const sp = key !== undefined ? a.segment_paths[key] : undefined;
  const samples = 30;
  // The paths are rows, not calendar days: `return_period` calendar days are
  // round(return_period × periods_per_year / 365) rows after entry (the
  // engine's path_len: 62 trading days for 90 days of a stock, 90 for a
  // coin trading every day), and each path holds rows 0..=len.
  const len = sp ? sp.p50.length - 1 : 0;
  const rp = a.metadata.return_period;
  const trading = a.metadata.periods_per_year !== 365;
  const xLabel = (narrow: boolean) =>
    trading
      ? narrow
        ? `Trading days (${len} ≈ ${rp} calendar days)`
        : `Trading days after entry (${len} ≈ the ${rp}-calendar-day horizon)`
      : `Days after entry (the ${rp}-day horizon)`;
  const data = useMemo(() => {
    if (!sp) return null;
    const n = sp.p50.length;
    const xs = Array.from({ length: n }, (_, i) => i);
    const paths = sp.paths.slice(0, samples).map((p) => xs.map((i) => p[i] ?? null));
    return [xs, sp.p90, sp.p75, sp.p50, sp.p25, sp.p10, ...paths] as uPlot.AlignedData;
  }, [sp]);
  const options = useMemo(
    () => (t: Theme, width: number) => {
      const nPaths = sp ? Math.min(samples, sp.paths.length) : 0;
      const v = (_u: uPlot, x: number | null) => pct(x);
      return {
        // The whole horizon, however the paths are drawn.
        scales: { x: { time: false, range: [0, Math.max(1, len)] as uPlot.Range.MinMax } },
        axes: [axis(t, { label: xLabel(width < 480) }), axis(t, { size: 60, values: pctAxis })],
        bands: [
          { series: [1, 5], fill: t.band },
          { series: [2, 4], fill: t.band },
        ],
        series: [
          { label: trading ? "Trading day" : "Day" },
          { label: "p90", stroke: t.muted, width: 1, value: v },
          { label: "p75", stroke: t.accent, width: 1, value: v },
          { label: "Median", stroke: t.accent2, width: 2.5, value: v },
          { label: "p25", stroke: t.accent, width: 1, value: v },
          { label: "p10", stroke: t.muted, width: 1, value: v },
          ...Array.from({ length: nPaths }, () => ({ stroke: t.grid, width: 1, label: "Sample paths", show: true, value: v })),
        ],
        legend: { show: true },
      } as Opts;
    },
    [sp, len, trading, rp],
  );
  if (!sp || !data) return <p class="muted">No segment paths in this answer.</p>;
  const seg = a.segments.find((s) => String(s.segment_idx) === key);
  return (
    <>
      <div class="field inline">
        <label for="fan-seg">Bucket</label>
        <select id="fan-seg" value={key} onChange={(e) => setKey((e.target as HTMLSelectElement).value)}>
          {keys.map((k) => {
            const s = a.segments.find((x) => String(x.segment_idx) === k);
            return (
              <option key={k} value={k}>
                {s ? `${pct(s.upper_bound, 1)} to ${pct(s.lower_bound, 1)}` : k}
                {Number(k) === a.current_state.segment ? " (current)" : ""}
              </option>
            );
          })}
        </select>
        <span class="muted small">
          {int(sp.num_paths_total)} paths{seg ? `, ${int(seg.count)} days in bucket` : ""}
          {seg?.evidence ? ` (${episodesText(seg.evidence.episodes)})` : ""}; {Math.min(samples, sp.paths.length)} drawn
        </span>
      </div>
      <Chart
        id="chart-fan"
        data={data}
        options={options}
        height={280}
        dataset={{ "path-length": String(len), "horizon-days": String(rp) }}
        label={`Fan of the paths the price took over the ${len} ${trading ? "trading " : ""}days (the ${rp}-day horizon) after being in the selected drawdown bucket: 10th to 90th and 25th to 75th percentile bands and the median`}
      />
    </>
  );
}

/**
 * The rows drawn by the walk-forward chart: the last row of each month, or
 * of each quarter over 20 years. Daily predictions of a long history drawn
 * together read as a band; one per period reads as lines.
 */
export function periodEnds(dates: string[]): { rows: number[]; months: number } {
  const years = dates.length > 1 ? (Date.parse(dates[dates.length - 1]) - Date.parse(dates[0])) / (365.25 * 86_400_000) : 0;
  const months = years > 20 ? 3 : 1;
  const key = (d: string) => {
    const m = Number(d.slice(5, 7)) - 1;
    return `${d.slice(0, 4)}-${Math.floor(m / months)}`;
  };
  const rows: number[] = [];
  for (let i = 0; i < dates.length; i++) if (i === dates.length - 1 || key(dates[i]) !== key(dates[i + 1])) rows.push(i);
  return { rows, months };
}

function WalkForwardChart({ a, days }: { a: Analysis; days: number[] }) {
  const ends = useMemo(() => periodEnds(a.time_series.dates), [a]);
  const data = useMemo(() => {
    const s = a.time_series;
    const at = <T,>(v: T[]) => ends.rows.map((i) => v[i] ?? null);
    // Actual first, so it is drawn underneath the predictions.
    return [at(days), at(s.actual_returns), at(s.median_returns), at(s.expected_returns)] as uPlot.AlignedData;
  }, [a, days, ends]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        ...utcTime,
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true } },
        axes: [timeAxis(t), axis(t, { size: 60, values: pctAxis })],
        series: [
          dateSeries,
          { label: "Actual", stroke: t.muted, width: 1.5, alpha: 0.7, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "Predicted (median)", stroke: t.accent2, width: 2, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "Predicted (EMA)", stroke: t.accent, width: 1, dash: [5, 3], value: (_u: uPlot, v: number | null) => pct(v) },
        ] as uPlot.Series[],
      }) as Opts,
    [a],
  );
  return (
    <>
      <Chart
        id="chart-walk"
        data={data}
        options={options}
        height={260}
        label={`Walk-forward: the ${a.metadata.return_period}-day return predicted at each ${ends.months === 3 ? "quarter" : "month"}-end against the return that actually followed`}
        dataset={{ points: String(ends.rows.length), period: ends.months === 3 ? "quarter" : "month" }}
      />
      <p class="muted small chart-note" id="walk-note">
        One point per {ends.months === 3 ? "quarter" : "month"}-end ({int(ends.rows.length)} points): what was predicted that day and what followed over
        the next {a.metadata.return_period} days. Every figure on the page counts every day.
      </p>
    </>
  );
}

// ---------------------------------------------------------------- form

function ParamsForm({ params, error, onSubmit }: { params: AnalysisParams; error: unknown; onSubmit: (p: AnalysisParams) => void }) {
  const [v, setV] = useState<AnalysisParams>(params);
  useEffect(() => setV(params), [JSON.stringify(params)]);
  const bad = fieldOf(error, [...FIELDS]);
  const msg = bad ? describe(error) : null;
  const input = (f: Field, label: string, attrs: Record<string, unknown>, hint: string) => (
    <div class={`field${bad === f ? " has-error" : ""}`}>
      <label for={`p-${f}`}>{label}</label>
      <input
        id={`p-${f}`}
        name={f}
        value={v[f] ?? ""}
        aria-invalid={bad === f ? true : undefined}
        aria-describedby={bad === f ? `p-${f}-err` : `p-${f}-hint`}
        onInput={(e) => setV({ ...v, [f]: (e.target as HTMLInputElement).value })}
        {...attrs}
      />
      {bad === f ? (
        <span class="field-error" id={`p-${f}-err`} role="alert">
          {msg}
        </span>
      ) : (
        <span class="hint" id={`p-${f}-hint`}>
          {hint}
        </span>
      )}
    </div>
  );
  return (
    <form
      class="params"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(v);
      }}
    >
      {input("return_period", "Horizon (days)", { type: "number", inputMode: "numeric", step: 1, placeholder: "90" }, "7–365, default 90")}
      {input("num_segments", "Segments", { type: "number", inputMode: "numeric", step: 1, placeholder: "20" }, "10–50, default 20")}
      {input("decay_factor", "Decay factor", { type: "number", inputMode: "decimal", step: 0.01, placeholder: "0.95" }, "0.80–0.99, default 0.95")}
      <div class={`field${bad === "metric" ? " has-error" : ""}`}>
        <label for="p-metric">Metric</label>
        <select id="p-metric" name="metric" value={v.metric ?? "return"} onChange={(e) => setV({ ...v, metric: (e.target as HTMLSelectElement).value })}>
          <option value="return">Return</option>
          <option value="sharpe">Sharpe</option>
          <option value="sortino">Sortino</option>
        </select>
        {bad === "metric" ? <span class="field-error" role="alert">{msg}</span> : <span class="hint">forward metric</span>}
      </div>
      {input("start_date", "From", { type: "date" }, "first date (optional)")}
      {input("end_date", "To", { type: "date" }, "last date (optional)")}
      <div class="field submit">
        <button type="submit" class="btn btn-primary">
          Update
        </button>
        <button type="button" class="btn btn-ghost" onClick={() => onSubmit({})}>
          Defaults
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------- page

/**
 * The verdict: grade and price (with its date, source and currency) on top,
 * where a phone shows them without scrolling; every figure links to the glossary.
 */
function VerdictCard({ v, currency, priceDate, asOf, fallback }: { v: Verdict; currency: string | null; priceDate: string | null; asOf: string | null; fallback?: unknown }) {
  const s = v.current_state;
  // The current bucket's independent evidence (null from an engine without it).
  const ev = v.active_segment.evidence ?? null;
  // The calibrated forecast leads when the server sends one (the verdict's,
  // else the analysis's); the bucket's raw median then stays below it,
  // labelled as the bucket's history.
  const fc = forecastOf(v) ?? forecastOf(fallback);
  const rp = v.metadata.return_period;
  return (
    <div class="verdict" id="verdict">
      <div class="verdict-top">
        <span class="verdict-grade">
          <GradeBadge letter={v.grade.letter} />
          <Help term="grade" label="a grade" />
        </span>
        <div class="verdict-price" id="verdict-price">
          <span class="verdict-label">Last close</span>
          {priceDate ? (
            <DatedPrice value={s.price} date={priceDate} source={v.metadata.data_source} currency={currency} format={price} />
          ) : (
            <span class="dated-price">
              <span class="dp-value">{price(s.price)}</span>
            </span>
          )}
        </div>
      </div>
      {asOf && (
        <p class="note note-info small">
          The analysis window ends on {asOf}: this verdict and price are as of then, not the latest ({v.metadata.last_price_date}).
        </p>
      )}
      {fc && (
        <>
          <ForecastLead f={fc} days={rp} />
          <p class="fc-bucket" id="verdict-bucket" data-forecast="true">
            Bucket's history: median <span class={signClass(s.median_return)}>{signedPct(s.median_return)}</span>
            {ev ? ` over ${episodesText(ev.episodes)}` : ""}
            <span class="muted"> — what followed past drawdowns like this one, not the forecast</span>
          </p>
        </>
      )}
      <dl class="stats">
        <div>
          <dt>
            Score <Help term="score" />
          </dt>
          <dd>{v.grade.score.toFixed(0)} / 100</dd>
        </div>
        <div>
          <dt>
            Drawdown <Help term="drawdown" />
          </dt>
          <dd class={signClass(s.drawdown)}>{pct(s.drawdown)}</dd>
        </div>
        <div>
          <dt>
            Median return ({v.metadata.return_period} d) <Help term="median-return" label="the median return" />
          </dt>
          <dd class={signClass(s.median_return)}>
            {pct(s.median_return)}
            {fc ? (
              <span class="dd-sub">bucket's history{ev && ` · ${episodesText(ev.episodes)}`}</span>
            ) : (
              <>
                <span class="dd-sub dd-raw" id="verdict-raw-label">
                  raw statistic of the bucket's history, not a calibrated forecast
                </span>
                {ev && <span class="dd-sub">{episodesText(ev.episodes)}</span>}
              </>
            )}
          </dd>
        </div>
        <div>
          <dt>
            Expected return (EMA) <Help term="expected-return" label="the expected return" />
          </dt>
          <dd class={signClass(s.expected_return)}>
            {pct(s.expected_return)}
            {ev && <span class="dd-sub">{fc ? "bucket's history · " : ""}{episodesText(ev.episodes)}</span>}
          </dd>
        </div>
        <div>
          <dt>
            Win rate in bucket <Help term="win-rate" label="the win rate" />
          </dt>
          <dd>
            {pct(v.active_segment.win_rate, 0)}
            {ev && <span class="dd-sub">{episodesText(ev.episodes)}</span>}
          </dd>
        </div>
        <div>
          <dt>
            Typical yearly drawdown <Help term="max-drawdown" label="the typical yearly drawdown" />
          </dt>
          <dd>{pct(v.typical_max_drawdown)}</dd>
        </div>
        <div>
          <dt>
            Bucket <Help term="segment" label="a bucket" />
          </dt>
          <dd>
            {pct(v.active_segment.upper_bound, 1)} to {pct(v.active_segment.lower_bound, 1)}
          </dd>
        </div>
      </dl>
      {ev && <BucketEvidence ev={ev} seg={v.active_segment} />}
      {s.insufficient_data && <p class="note note-warn">Few confirmed outcomes in this bucket ({s.confirmed_count}); treat the numbers with care.</p>}
      <ThinNote ev={s.evidence} />
    </div>
  );
}

/** The current bucket's evidence, beside its figures: episodes, the median's interval, falls, recoveries. */
function BucketEvidence({ ev, seg }: { ev: SegmentEvidence; seg: Segment }) {
  return (
    <dl class="stats evidence" id="verdict-evidence" aria-label="Evidence behind the current bucket">
      <div>
        <dt>
          Evidence <Help term="episodes" label="an episode" />
        </dt>
        <dd id="verdict-episodes" data-episodes={ev.episodes} data-days={seg.count}>
          {episodesText(ev.episodes, seg.count)}
        </dd>
      </div>
      <div>
        <dt>Median, all outcomes (90 % interval)</dt>
        <dd id="verdict-ci">
          <span class={signClass(seg.static_median_return)}>{pct(seg.static_median_return)}</span>{" "}
          <span class="dd-sub">{ev.median_return_ci ? `interval ${ciText(ev.median_return_ci)}` : "no interval (fewer than 2 episodes)"}</span>
        </dd>
      </div>
      <div>
        <dt>Fell further before the horizon</dt>
        <dd id="verdict-fell">
          {pct(ev.fell_further, 0)}
          <span class="dd-sub">{ev.episodes === 1 ? "of the one episode" : `of the ${int(ev.episodes)} episodes`}</span>
        </dd>
      </div>
      <div>
        <dt>Recovery to the prior peak</dt>
        <dd id="verdict-recovery">
          {ev.recovery_days_median === null || ev.recovery_days_median === undefined ? "—" : `${int(ev.recovery_days_median)} days`}
          <span class="dd-sub">
            median over the {int(ev.recovered)} that recovered; {int(ev.unrecovered)} not yet
          </span>
        </dd>
      </div>
    </dl>
  );
}

/** Most assets a watchlist holds (the server refuses more). */
const WATCHLIST_MAX = 50;

/** "Add to watchlist", or "On your watchlist ✓" with "Remove": `GET/PUT /web/watchlist`. */
function WatchButton({ ticker }: { ticker: string }) {
  const list = useData(() => api.watchlist(), [ticker]);
  const [saved, setSaved] = useState<string[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [msg, setMsg] = useState<string | null>(null);
  useEffect(() => setSaved(null), [list.data]);
  const tickers = saved ?? list.data?.tickers.map((x) => x.ticker) ?? null;
  if (list.error) return null; // the page still works without it
  if (!tickers) return null;
  const on = tickers.includes(ticker);
  const save = async (next: string[], done: string) => {
    setBusy(true);
    setMsg(null);
    try {
      const r = await api.saveWatchlist(next);
      setSaved(r.tickers.map((x) => x.ticker));
      setMsg(done);
    } catch (e) {
      setMsg(describe(e, "Saving the watchlist"));
    } finally {
      setBusy(false);
    }
  };
  const add = () => {
    if (tickers.length >= WATCHLIST_MAX) {
      setMsg(`Your watchlist is full (${WATCHLIST_MAX} assets): remove one from it before adding ${ticker}.`);
      return;
    }
    void save([...tickers, ticker], `${ticker} is on your watchlist.`);
  };
  return (
    <div class="watch" id="watch">
      {on ? (
        <>
          <span class="watch-on">On your watchlist ✓</span>
          <button type="button" class="btn btn-small" disabled={busy} onClick={() => void save(tickers.filter((x) => x !== ticker), `${ticker} is no longer on your watchlist.`)}>
            Remove<span class="sr-only"> {ticker} from your watchlist</span>
          </button>
        </>
      ) : (
        <button type="button" class="btn btn-small btn-primary" disabled={busy} onClick={add}>
          Add to watchlist
        </button>
      )}
      <span class="watch-msg small muted" role="status" aria-live="polite">
        {msg}
      </span>
    </div>
  );
}

const isNotFound = (e: unknown) => e instanceof ApiError && e.status === 404;

/**
 * The level "Alert me" starts from: 10 percentage points under the current
 * drawdown, in whole percent (−20 before the verdict is known).
 */
function alertLevel(drawdown: number | null | undefined): number {
  if (drawdown === null || drawdown === undefined || !Number.isFinite(drawdown)) return -20;
  return Math.max(-100, Math.min(0, Math.round(drawdown * 100 - 10)));
}

function SegmentTable({ a }: { a: Analysis }) {
  return (
    <div class="table-wrap">
      <table class="table compact seg-table">
        <caption class="sr-only">Statistics per drawdown bucket</caption>
        <thead>
          <tr>
            <th scope="col">
              Bucket <Help term="segment" label="a bucket" />
            </th>
            <th scope="col" class="num">
              Days
            </th>
            <th scope="col" class="num" title="Median of all the bucket's confirmed outcomes (the box chart's bar)">
              Median, all outcomes <Help term="median-return" label="the median return" />
            </th>
            <th scope="col" class="num" title="Median of the bucket's last 252 confirmed outcomes (what the verdict uses)">
              Median, last 252
            </th>
            <th scope="col" class="num col-opt" title="Independent visits to the bucket (its days overlap, its episodes do not)">
              Episodes <Help term="episodes" label="an episode" />
            </th>
            <th scope="col" class="num col-opt" title="90 % bootstrap interval of “Median, all outcomes”, resampling whole episodes">
              90 % interval
            </th>
            <th scope="col" class="num col-opt">
              Average
            </th>
            <th scope="col" class="num col-opt">
              Win rate <Help term="win-rate" label="the win rate" />
            </th>
            <th scope="col" class="num col-opt">
              Max loss <Help term="max-loss" label="the max loss" />
            </th>
            <th scope="col" class="num col-opt" title="Share of episodes that fell into a deeper bucket before the horizon">
              Fell further
            </th>
            <th scope="col" class="num col-opt" title="Median calendar days to regain the prior peak; recovered / not yet">
              Recovery
            </th>
          </tr>
        </thead>
        <tbody>
          {a.segments.map((s) => (
            <tr key={s.segment_idx} data-segment={s.segment_idx} class={s.segment_idx === a.current_state.segment ? "current" : undefined}>
              <td>
                <span class="nowrap">{pct(s.upper_bound, 1)}</span> to <span class="nowrap">{pct(s.lower_bound, 1)}</span>
                {s.segment_idx === a.current_state.segment && <span class="tag">current</span>}
              </td>
              <td class="num">
                {int(s.count)}
                {/* Phones: the episodes column is hidden, so they go under the days. */}
                {s.evidence && <span class="seg-ep-phone">{int(s.evidence.episodes)} ep.</span>}
              </td>
              <td class={`num med-all ${signClass(s.static_median_return)}`}>{pct(s.static_median_return)}</td>
              <td class={`num med-rolling ${signClass(s.median_return)}`}>{pct(s.median_return)}</td>
              <td class="num col-opt episodes">{s.evidence ? int(s.evidence.episodes) : "—"}</td>
              <td class="num col-opt ci">{s.evidence ? ciText(s.evidence.median_return_ci, 1) : "—"}</td>
              <td class={`num col-opt ${signClass(s.avg_return)}`}>{pct(s.avg_return)}</td>
              <td class="num col-opt">{pct(s.win_rate, 0)}</td>
              <td class="num col-opt neg">{pct(s.max_loss)}</td>
              <td class="num col-opt">{s.evidence ? pct(s.evidence.fell_further, 0) : "—"}</td>
              <td class="num col-opt" title={s.evidence ? recoveryText(s.evidence) : undefined}>
                {s.evidence && s.evidence.recovery_days_median != null ? `${int(s.evidence.recovery_days_median)} d` : "—"}
                {s.evidence && s.evidence.recovered + s.evidence.unrecovered > 0 && (
                  <span class="muted small nowrap">
                    {" "}
                    ({int(s.evidence.recovered)}/{int(s.evidence.unrecovered)})
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted small">
        “Days” overlap (each day's horizon runs into the next days'); “Episodes” are the independent visits to the bucket, the figure to judge
        the evidence by. “Median, all outcomes”: every confirmed outcome of the bucket (the box chart draws these), with its 90 % interval
        (bootstrap over whole episodes). “Median, last 252”: its last 252 confirmed outcomes, the rolling median the verdict uses. Recovery:
        median calendar days from entering the bucket to regaining the prior peak (recovered / not yet).{" "}
        <a href="/methodology#evidence">How these are computed</a>.
        <span class="seg-phone-note"> “ep.”: the bucket's independent episodes. The interval, average, win rate, max loss, falls and recoveries are shown on wider screens.</span>
      </p>
    </div>
  );
}

export function AssetPage({ ticker: raw, loc }: { ticker: string; loc: Location }) {
  let ticker = raw;
  try {
    ticker = decodeURIComponent(raw);
  } catch {
    /* keep raw */
  }
  const params = paramsOf(loc);
  const key = JSON.stringify(params);
  const points = useMemo(() => maxPoints(), []);
  const analysis = useData(() => api.analysis(ticker, params, points), [ticker, key, points]);
  const verdict = useData(() => api.verdict(ticker, params), [ticker, key]);
  const info = useData(() => api.assetInfo(ticker), [ticker]);
  const alertMe = useAlertMe("alert-me");
  const a = analysis.loading ? null : analysis.data;
  const premium = analysis.error instanceof ApiError && analysis.error.status === 402;
  const formError = fieldOf(analysis.error, [...FIELDS]) ? analysis.error : null;
  const unknown = isNotFound(info.error) || isNotFound(analysis.error) || isNotFound(verdict.error);
  useTitle(unknown ? `${ticker} not found` : ticker);

  const submit = (p: AnalysisParams) => {
    const clean: Record<string, string> = {};
    for (const f of FIELDS) if (p[f] !== undefined && String(p[f]).trim() !== "") clean[f] = String(p[f]).trim();
    navigate(withQuery(`/assets/${encodeURIComponent(ticker)}`, clean));
  };

  // An unknown ticker: one not-found page (with search), not the raw error per request.
  if (unknown) return <NotFound ticker={ticker} />;

  const canonical = a?.ticker ?? info.data?.ticker ?? verdict.data?.ticker ?? null;
  const v = verdict.loading ? null : verdict.data;
  // The verdict's price is the analysed window's last close: the last stored
  // price, unless an end_date cuts the window earlier (then the analysis says which day).
  const priceDate = v ? (params.end_date ? (a?.metadata.end_date ?? null) : v.metadata.last_price_date) : null;
  const asOf = v && params.end_date && priceDate && priceDate !== v.metadata.last_price_date ? priceDate : null;
  const currency = info.data?.currency || v?.metadata.currency || null;

  return (
    <main class="page asset-page">
      <div class="asset-head">
        <div class="asset-title">
          <p class="crumbs">
            <a href="/explore">Explore</a> / {a?.category ?? info.data?.category ?? "Asset"}
          </p>
          <h1>
            <span class="ticker">{ticker}</span> <span class="asset-name">{a?.name ?? info.data?.name ?? ""}</span>
          </h1>
          {info.data && <AssetFacts info={info.data} />}
        </div>
        {canonical && (
          <div class="asset-actions">
            <WatchButton ticker={canonical} />
            {/* Alerts are Premium data too: not offered when the analysis was refused with a 402. */}
            {!premium && <AlertMeButton label="Alert me" state={alertMe} small />}
          </div>
        )}
      </div>
      {canonical && alertMe.open && (
        <AlertMeForm key={canonical} id={alertMe.id} target={{ ticker: canonical }} level={alertLevel(v?.current_state.drawdown)} onClose={alertMe.close} />
      )}

      {premium ? (
        <ErrorNote error={analysis.error} what="The analysis" />
      ) : (
        !formError && (
          <Card title="Verdict" id="verdict-card">
            {verdict.loading && <Loading label="Grading…" />}
            {!fieldOf(verdict.error, [...FIELDS]) && <ErrorNote error={verdict.error} what="The verdict" />}
            {v && <VerdictCard v={v} currency={currency} priceDate={priceDate} asOf={asOf} fallback={a} />}
          </Card>
        )
      )}

      {info.data?.summary && (
        <details class="summary">
          <summary>About {info.data.name || ticker}</summary>
          <p>{info.data.summary}</p>
        </details>
      )}

      <Card title="Analysis parameters" id="params">
        <ParamsForm params={params} error={formError} onSubmit={submit} />
      </Card>

      {!premium && (
        <>
          {analysis.loading && <Loading label="Running the analysis…" />}
          {!formError && <ErrorNote error={analysis.error} what="The analysis" />}
          {a && <AnalysisView a={a} segmentsCsv={segmentsCsv(ticker, params)} loadWindow={(from, to) => api.analysis(ticker, params, points, { from, to })} />}
          {!formError && <GradeHistory ticker={ticker} returnPeriod={params.return_period} metric={params.metric} />}
        </>
      )}
    </main>
  );
}

function AssetFacts({ info }: { info: AssetInfo }) {
  return (
    <p class="muted small asset-facts">
      {[info.exchange, info.currency, info.sector, ...tags(info.industry)].filter(Boolean).join(" · ")} <SourceBadge source={info.data_source} />
      <Help term="data-sources" label="a data source" />
    </p>
  );
}

/** The segment table of the analysis shown, as CSV (the session's route, the same parameters). */
function segmentsCsv(ticker: string, params: AnalysisParams): string {
  return urlOf(`${WEB}/api/analysis/${encodeURIComponent(ticker)}`, { ...params, format: "csv", table: "segments" });
}

function AnalysisView({ a, segmentsCsv, loadWindow }: { a: Analysis; segmentsCsv: string; loadWindow: WindowLoader }) {
  const days = useDays(a);
  const rows = a.metadata.time_series_rows;
  const drawn = a.time_series.dates.length;
  return (
    <>
      <p class="muted small meta" id="analysis-meta">
        {int(a.metadata.data_points)} daily rows from <time dateTime={a.metadata.start_date}>{a.metadata.start_date}</time> to{" "}
        <time dateTime={a.metadata.end_date}>{a.metadata.end_date}</time> · <SourceBadge source={a.metadata.data_source} /> ·{" "}
        {a.metadata.from_cache ? "from cache" : "computed live"} · engine {a.metadata.engine_version} · {when(a.metadata.calculated_at)}
        {rows !== undefined && rows > drawn && (
          <>
            {" "}
            · the line charts draw {int(drawn)} of the {int(rows)} rows (each stretch's highs and lows kept); every figure is computed on all rows
          </>
        )}
      </p>
      <div class="grid2">
        <Card title="Price" id="price">
          <PriceChart a={a} days={days} loadWindow={loadWindow} />
        </Card>
        <Card title="Drawdown and segment buckets" id="drawdown">
          <DrawdownChart a={a} days={days} />
        </Card>
        <Card title={`Forward return by drawdown bucket (${a.metadata.return_period} days)`} id="segments">
          <SegmentBoxChart a={a} />
        </Card>
        <Card title={`Distribution of forward returns (${a.metadata.return_period} days)`} id="distribution">
          <HistogramChart a={a} />
        </Card>
        <Card title="Drawdown vs forward return" id="scatter">
          <ScatterChart a={a} />
          <p class="muted small chart-note">A sample of the days, for drawing; the figures above count every day.</p>
        </Card>
        <Card title="Segment paths" id="fan">
          <FanChart a={a} />
        </Card>
      </div>
      <Card title="Walk-forward: prediction vs what happened" id="walk">
        <WalkForwardChart a={a} days={days} />
      </Card>
      <Card title="Segment table" id="segment-table">
        <SegmentTable a={a} />
        <p class="small" id="segments-download">
          <a class="btn btn-small" href={segmentsCsv} download>
            Download CSV
          </a>{" "}
          <span class="muted">every bucket's figures, unrounded (counts as an analysis against your quota)</span>
        </p>
      </Card>
    </>
  );
}
