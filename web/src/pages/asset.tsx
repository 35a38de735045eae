import { useEffect, useMemo, useState } from "preact/hooks";
import uPlot from "uplot";
import { ApiError, describe, fieldOf } from "../api/client";
import { api, type Analysis, type AnalysisParams, type Verdict } from "../api/endpoints";
import { navigate, withQuery, type Location } from "../router";
import { axis, Chart, pctAxis, type Opts, type Theme } from "../chart";
import { compact, Card, ErrorNote, GradeBadge, Loading, SourceBadge, int, pct, price, signClass, useData, useTitle, when } from "../lib";

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

const ts = (d: string) => Date.parse(`${d}T00:00:00Z`) / 1000;

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

// ---------------------------------------------------------------- charts

function PriceChart({ a }: { a: Analysis }) {
  const data = useMemo<uPlot.AlignedData>(() => {
    const s = a.time_series;
    return [s.dates.map(ts), s.prices, s.projected_prices.map((v) => v ?? null)] as uPlot.AlignedData;
  }, [a]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true } },
        axes: [axis(t), axis(t, { size: 70, values: (_u: uPlot, v: number[]) => v.map((x) => compact(x)) })],
        series: [
          {},
          { label: "Close", stroke: t.accent, width: 1.5, value: (_u: uPlot, v: number | null) => price(v) },
          // Off at first (click its legend entry): it sits on top of the close.
          { label: "Projected", show: false, stroke: t.accent2, width: 1, dash: [4, 4], value: (_u: uPlot, v: number | null) => price(v) },
        ],
      }) as Opts,
    [],
  );
  return <Chart id="chart-price" data={data} options={options} height={260} label={`Daily closing price of ${a.ticker}`} />;
}

function DrawdownChart({ a }: { a: Analysis }) {
  const data = useMemo<uPlot.AlignedData>(() => [a.time_series.dates.map(ts), a.time_series.drawdowns] as uPlot.AlignedData, [a]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true } },
        axes: [axis(t), axis(t, { size: 60, values: pctAxis })],
        series: [{}, { label: "Drawdown", stroke: t.neg, fill: t.band, width: 1, value: (_u: uPlot, v: number | null) => pct(v) }],
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
              for (const s of a.segments) {
                const y = Math.round(u.valToPos(s.lower_bound, "y", true)) + 0.5;
                ctx.beginPath();
                ctx.moveTo(left, y);
                ctx.lineTo(left + width, y);
                ctx.stroke();
              }
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

function SegmentBoxChart({ a }: { a: Analysis }) {
  const { data, boxes } = useMemo(() => {
    const by = new Map<number, number[]>();
    for (const p of a.scatter_data) {
      if (!by.has(p.segment)) by.set(p.segment, []);
      by.get(p.segment)!.push(p.future_return);
    }
    const rows = [...a.segments]
      .map((s) => {
        const v = (by.get(s.segment_idx) ?? []).sort((x, y) => x - y);
        return {
          idx: s.segment_idx,
          x: (s.lower_bound + s.upper_bound) / 2,
          w: Math.abs(s.upper_bound - s.lower_bound),
          p10: quantile(v, 0.1),
          p25: quantile(v, 0.25),
          p50: quantile(v, 0.5),
          p75: quantile(v, 0.75),
          p90: quantile(v, 0.9),
          n: v.length,
        };
      })
      .sort((p, q) => p.x - q.x);
    const nz = (v: number) => (Number.isFinite(v) ? v : null);
    const data = [
      rows.map((r) => r.x),
      rows.map((r) => nz(r.p90)),
      rows.map((r) => nz(r.p75)),
      rows.map((r) => nz(r.p50)),
      rows.map((r) => nz(r.p25)),
      rows.map((r) => nz(r.p10)),
    ] as uPlot.AlignedData;
    return { data, boxes: rows };
  }, [a]);
  const options = useMemo(
    () => (t: Theme) => {
      const hidden = { paths: () => null, points: { show: false } };
      return {
        scales: { x: { time: false } },
        axes: [axis(t, { values: pctAxis, label: "Drawdown bucket (midpoint)" }), axis(t, { size: 60, values: pctAxis })],
        series: [
          { label: "Bucket", value: (_u: uPlot, v: number | null) => pct(v, 1) },
          { label: "p90", stroke: t.muted, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "p75", stroke: t.accent, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "Median", stroke: t.fg, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "p25", stroke: t.accent, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "p10", stroke: t.muted, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
        ],
        hooks: {
          draw: [
            (u: uPlot) => {
              const ctx = u.ctx;
              ctx.save();
              const zero = u.valToPos(0, "y", true);
              ctx.strokeStyle = t.muted;
              ctx.beginPath();
              ctx.moveTo(u.bbox.left, zero);
              ctx.lineTo(u.bbox.left + u.bbox.width, zero);
              ctx.stroke();
              for (const b of boxes) {
                if (!b.n) continue;
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
  return (
    <Chart
      id="chart-segments"
      data={data}
      options={options}
      height={260}
      label="Forward return per drawdown bucket: boxes span the 25th to 75th percentile, whiskers the 10th to 90th, the bar is the median; the current bucket is highlighted"
    />
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
  const data = useMemo(() => {
    if (!sp) return null;
    const n = sp.p50.length;
    const xs = Array.from({ length: n }, (_, i) => i);
    const paths = sp.paths.slice(0, samples).map((p) => xs.map((i) => p[i] ?? null));
    return [xs, sp.p90, sp.p75, sp.p50, sp.p25, sp.p10, ...paths] as uPlot.AlignedData;
  }, [sp]);
  const options = useMemo(
    () => (t: Theme) => {
      const nPaths = sp ? Math.min(samples, sp.paths.length) : 0;
      const v = (_u: uPlot, x: number | null) => pct(x);
      return {
        scales: { x: { time: false } },
        axes: [axis(t, { label: "Days after entering the bucket" }), axis(t, { size: 60, values: pctAxis })],
        bands: [
          { series: [1, 5], fill: t.band },
          { series: [2, 4], fill: t.band },
        ],
        series: [
          { label: "Day" },
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
    [sp],
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
          {int(sp.num_paths_total)} paths{seg ? `, ${int(seg.count)} days in bucket` : ""}; {Math.min(samples, sp.paths.length)} drawn
        </span>
      </div>
      <Chart
        id="chart-fan"
        data={data}
        options={options}
        height={280}
        label="Fan of the paths the price took after being in the selected drawdown bucket: 10th to 90th and 25th to 75th percentile bands and the median"
      />
    </>
  );
}

function WalkForwardChart({ a }: { a: Analysis }) {
  const data = useMemo(() => {
    const s = a.time_series;
    // Actual first, so it is drawn underneath the predictions.
    return [s.dates.map(ts), s.actual_returns.map((v) => v ?? null), s.median_returns, s.expected_returns] as uPlot.AlignedData;
  }, [a]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true } },
        axes: [axis(t), axis(t, { size: 60, values: pctAxis })],
        series: [
          {},
          { label: "Actual", stroke: t.muted, width: 1, alpha: 0.45, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "Predicted (median)", stroke: t.accent2, width: 2, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "Predicted (EMA)", stroke: t.accent, width: 1, dash: [5, 3], value: (_u: uPlot, v: number | null) => pct(v) },
        ] as uPlot.Series[],
      }) as Opts,
    [a],
  );
  return (
    <Chart
      id="chart-walk"
      data={data}
      options={options}
      height={260}
      label={`Walk-forward: the ${a.metadata.return_period}-day return predicted on each day against the return that actually followed`}
    />
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

function VerdictCard({ v }: { v: Verdict }) {
  const s = v.current_state;
  return (
    <div class="verdict" id="verdict">
      <GradeBadge letter={v.grade.letter} />
      <dl class="stats">
        <div>
          <dt>Score</dt>
          <dd>{v.grade.score.toFixed(0)} / 100</dd>
        </div>
        <div>
          <dt>Price</dt>
          <dd>{price(s.price)}</dd>
        </div>
        <div>
          <dt>Drawdown</dt>
          <dd class={signClass(s.drawdown)}>{pct(s.drawdown)}</dd>
        </div>
        <div>
          <dt>Median return ({v.metadata.return_period} d)</dt>
          <dd class={signClass(s.median_return)}>{pct(s.median_return)}</dd>
        </div>
        <div>
          <dt>Expected return (EMA)</dt>
          <dd class={signClass(s.expected_return)}>{pct(s.expected_return)}</dd>
        </div>
        <div>
          <dt>Win rate in bucket</dt>
          <dd>{pct(v.active_segment.win_rate, 0)}</dd>
        </div>
        <div>
          <dt>Typical yearly drawdown</dt>
          <dd>{pct(v.typical_max_drawdown)}</dd>
        </div>
        <div>
          <dt>Bucket</dt>
          <dd>
            {pct(v.active_segment.upper_bound, 1)} to {pct(v.active_segment.lower_bound, 1)}
          </dd>
        </div>
      </dl>
      {s.insufficient_data && <p class="note note-warn">Few confirmed outcomes in this bucket ({s.confirmed_count}); treat the numbers with care.</p>}
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
  useTitle(ticker);
  const params = paramsOf(loc);
  const key = JSON.stringify(params);
  const analysis = useData(() => api.analysis(ticker, params), [ticker, key]);
  const verdict = useData(() => api.verdict(ticker, params), [ticker, key]);
  const info = useData(() => api.assetInfo(ticker), [ticker]);
  const a = analysis.data;
  const premium = analysis.error instanceof ApiError && analysis.error.status === 402;
  const formError = fieldOf(analysis.error, [...FIELDS]) ? analysis.error : null;

  const submit = (p: AnalysisParams) => {
    const clean: Record<string, string> = {};
    for (const f of FIELDS) if (p[f] !== undefined && String(p[f]).trim() !== "") clean[f] = String(p[f]).trim();
    navigate(withQuery(`/assets/${encodeURIComponent(ticker)}`, clean));
  };

  return (
    <main class="page">
      <div class="asset-head">
        <div>
          <p class="crumbs">
            <a href="/explore">Explore</a> / {a?.category ?? info.data?.category ?? "Asset"}
          </p>
          <h1>
            <span class="ticker">{ticker}</span> {a?.name ?? info.data?.name ?? ""}
          </h1>
          {info.data && (
            <p class="muted small">
              {[info.data.exchange, info.data.currency, info.data.sector, info.data.industry].filter(Boolean).join(" · ")}{" "}
              <SourceBadge source={info.data.data_source} />
              {info.data.last_price_date && <> · last price {info.data.last_price_date}</>}
            </p>
          )}
        </div>
      </div>
      {info.data?.summary && <p class="summary">{info.data.summary}</p>}

      <Card title="Analysis parameters" id="params">
        <ParamsForm params={params} error={formError} onSubmit={submit} />
      </Card>

      {premium ? (
        <ErrorNote error={analysis.error} what="The analysis" />
      ) : (
        <>
          {!formError && (
            <Card title="Verdict" id="verdict-card">
              {verdict.loading && <Loading label="Grading…" />}
              {!fieldOf(verdict.error, [...FIELDS]) && <ErrorNote error={verdict.error} what="The verdict" />}
              {verdict.data && <VerdictCard v={verdict.data} />}
            </Card>
          )}
          {analysis.loading && <Loading label="Running the analysis…" />}
          {!formError && <ErrorNote error={analysis.error} what="The analysis" />}
          {a && !analysis.loading && (
            <>
              <p class="muted small meta">
                {int(a.metadata.data_points)} daily rows from {a.metadata.start_date} to {a.metadata.end_date} · <SourceBadge source={a.metadata.data_source} /> ·{" "}
                {a.metadata.from_cache ? "from cache" : "computed live"} · engine {a.metadata.engine_version} · {when(a.metadata.calculated_at)}
              </p>
              <div class="grid2">
                <Card title="Price" id="price">
                  <PriceChart a={a} />
                </Card>
                <Card title="Drawdown and segment buckets" id="drawdown">
                  <DrawdownChart a={a} />
                </Card>
                <Card title={`Forward return by drawdown bucket (${a.metadata.return_period} days)`} id="segments">
                  <SegmentBoxChart a={a} />
                </Card>
                <Card title={`Distribution of forward returns (${a.metadata.return_period} days)`} id="distribution">
                  <HistogramChart a={a} />
                </Card>
                <Card title="Drawdown vs forward return" id="scatter">
                  <ScatterChart a={a} />
                </Card>
                <Card title="Segment paths" id="fan">
                  <FanChart a={a} />
                </Card>
              </div>
              <Card title="Walk-forward: prediction vs what happened" id="walk">
                <WalkForwardChart a={a} />
              </Card>
              <Card title="Segment table" id="segment-table">
                <div class="table-wrap">
                  <table class="table compact">
                    <caption class="sr-only">Statistics per drawdown bucket</caption>
                    <thead>
                      <tr>
                        <th scope="col">Bucket</th>
                        <th scope="col" class="num">Days</th>
                        <th scope="col" class="num">Median</th>
                        <th scope="col" class="num">Average</th>
                        <th scope="col" class="num">Win rate</th>
                        <th scope="col" class="num">Max loss</th>
                      </tr>
                    </thead>
                    <tbody>
                      {a.segments.map((s) => (
                        <tr key={s.segment_idx} class={s.segment_idx === a.current_state.segment ? "current" : undefined}>
                          <td>
                            {pct(s.upper_bound, 1)} to {pct(s.lower_bound, 1)}
                            {s.segment_idx === a.current_state.segment && <span class="tag">current</span>}
                          </td>
                          <td class="num">{int(s.count)}</td>
                          <td class={`num ${signClass(s.median_return)}`}>{pct(s.median_return)}</td>
                          <td class={`num ${signClass(s.avg_return)}`}>{pct(s.avg_return)}</td>
                          <td class="num">{pct(s.win_rate, 0)}</td>
                          <td class="num neg">{pct(s.max_loss)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </Card>
            </>
          )}
        </>
      )}
    </main>
  );
}
