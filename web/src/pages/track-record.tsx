// /track-record: how the grades of the whole catalog turned out
// (`GET /web/api/track-record`, computed by the daily grading run). At each
// past month-end every asset is graded from its data up to that date only;
// the page shows the realised outcomes per grade with their 90 % intervals,
// the rank correlation of score with outcome (IC) over time, the spread
// between the top and bottom fifth, and calibration. Every figure is the
// server's; the filters live in the URL. A 503 means no grading run has
// computed it yet and says so.
import { useMemo } from "preact/hooks";
import uPlot from "uplot";
import { ApiError, fieldOf, urlOf, WEB } from "../api/client";
import { api, type Estimate, type UniverseTrackRecord } from "../api/endpoints";
import { axis, Chart, dateSeries, dayTs, pctAxis, rule, timeAxis, utcTime, type Opts, type Theme } from "../chart";
import { ciText } from "../evidence";
import { CategoryField, HorizonMetricFields } from "../filters";
import { Help } from "../glossary-link";
import { navigate, withQuery, type Location } from "../router";
import { Card, ErrorNote, GradeBadge, Loading, int, pct, signClass, useData, useTitle } from "../lib";

const SOURCES: [string, string][] = [
  ["real", "Real (shipped and ingested)"],
  ["synthetic", "Synthetic prices only"],
  ["all", "All prices"],
];

type Grade = UniverseTrackRecord["by_grade"][number];

/** "0.042 (90 %: 0.010 to 0.071)" for a correlation; percentages for returns. */
function estimateText(e: Estimate, fmt: (v: number | null | undefined) => string): string {
  const ci = e.ci && e.ci.length >= 2 ? ` (90 % interval ${fmt(e.ci[0])} to ${fmt(e.ci[1])})` : " (no interval)";
  return `${fmt(e.mean)}${ci}`;
}
const corr = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? "—" : v.toFixed(3));

function GradeChart({ rows, rp }: { rows: Grade[]; rp: number }) {
  const data = useMemo(
    () =>
      [
        rows.map((_, i) => i),
        rows.map((g) => g.mean_realised_return ?? null),
        rows.map((g) => (g.mean_ci ? g.mean_ci[0] : null)),
        rows.map((g) => (g.mean_ci ? g.mean_ci[1] : null)),
      ] as uPlot.AlignedData,
    [rows],
  );
  const options = useMemo(
    () => (t: Theme) => {
      const hidden = { paths: () => null, points: { show: false } };
      return {
        scales: {
          x: { time: false, range: [-0.6, rows.length - 0.4] as uPlot.Range.MinMax },
          y: {
            range: (_u: uPlot, lo: number, hi: number) => [Math.min(0, lo) - 0.005, Math.max(0, hi) + 0.005] as uPlot.Range.MinMax,
          },
        },
        axes: [
          axis(t, {
            label: "Grade at the month-end",
            splits: () => rows.map((_, i) => i),
            values: (_u: uPlot, v: number[]) => v.map((i) => rows[i]?.grade ?? ""),
          }),
          axis(t, { size: 60, values: pctAxis, label: `Mean realised ${rp}-day return` }),
        ],
        series: [
          { label: "Grade", value: (_u: uPlot, i: number | null) => (i == null ? "—" : rows[i]?.grade ?? "—") },
          { label: "Mean realised", stroke: t.accent, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "90 % low", stroke: t.muted, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
          { label: "90 % high", stroke: t.muted, ...hidden, value: (_u: uPlot, v: number | null) => pct(v) },
        ],
        hooks: {
          draw: [
            (u: uPlot) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = t.muted;
              rule(u, 0, "y");
              const zero = u.valToPos(0, "y", true);
              const half = Math.max(6, (u.bbox.width / Math.max(1, rows.length)) * 0.3);
              rows.forEach((g, i) => {
                const cx = u.valToPos(i, "x", true);
                if (g.mean_realised_return != null) {
                  const y = u.valToPos(g.mean_realised_return, "y", true);
                  ctx.fillStyle = g.mean_realised_return >= 0 ? t.pos : t.neg;
                  ctx.globalAlpha = 0.7;
                  ctx.fillRect(cx - half, Math.min(y, zero), half * 2, Math.abs(zero - y));
                  ctx.globalAlpha = 1;
                }
                if (g.mean_ci && g.mean_ci.length >= 2) {
                  const lo = u.valToPos(g.mean_ci[0], "y", true);
                  const hi = u.valToPos(g.mean_ci[1], "y", true);
                  ctx.strokeStyle = t.fg;
                  ctx.lineWidth = 1.5;
                  ctx.beginPath();
                  ctx.moveTo(cx, lo);
                  ctx.lineTo(cx, hi);
                  ctx.moveTo(cx - half / 2, lo);
                  ctx.lineTo(cx + half / 2, lo);
                  ctx.moveTo(cx - half / 2, hi);
                  ctx.lineTo(cx + half / 2, hi);
                  ctx.stroke();
                }
              });
              ctx.restore();
            },
          ],
        },
      } as Opts;
    },
    [rows, rp],
  );
  return (
    <Chart
      id="chart-tr-grades"
      data={data}
      options={options}
      height={240}
      label={`Mean realised ${rp}-day return of the month-ends given each grade, bars, with its 90 % interval as whiskers (the table below has the figures)`}
    />
  );
}

function GradeTable({ rows, rp }: { rows: Grade[]; rp: number }) {
  return (
    <div class="table-wrap">
      <table class="table compact tr-table table-cards" id="tr-grades">
        <caption class="sr-only">Realised {rp}-day outcomes of the month-ends by the grade given at each, over the catalog</caption>
        <thead>
          <tr>
            <th scope="col">Grade</th>
            <th scope="col" class="num" title="Asset-month-ends with this grade and a realised return">
              Observations
            </th>
            <th scope="col" class="num">
              Mean realised
            </th>
            <th scope="col" class="num">
              90 % interval of the mean
            </th>
            <th scope="col" class="num">
              Median realised
            </th>
            <th scope="col" class="num">
              Hit rate
            </th>
            <th scope="col" class="num" title="Mean realised return in excess of the catalog's at the same month-ends">
              Mean excess
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((g) => (
            <tr key={g.grade} data-grade={g.grade}>
              <td class="card-title">
                <GradeBadge letter={g.grade} />
                <span class="sr-only"> grade {g.grade}</span>
              </td>
              <td class="num tr-count" data-label="Observations">
                {int(g.count)}
              </td>
              <td class={`num ${signClass(g.mean_realised_return)}`} data-label="Mean realised">
                {pct(g.mean_realised_return)}
              </td>
              <td class="num nowrap tr-ci" data-label="90 % interval of the mean">
                {g.mean_ci && g.mean_ci.length >= 2 ? `${pct(g.mean_ci[0])} – ${pct(g.mean_ci[1])}` : "—"}
              </td>
              <td class={`num ${signClass(g.median_realised_return)}`} data-label="Median realised">
                {pct(g.median_realised_return)}
              </td>
              <td class="num" data-label="Hit rate">
                {pct(g.hit_rate, 0)}
              </td>
              <td class={`num ${signClass(g.mean_excess_return)}`} data-label="Mean excess">
                {pct(g.mean_excess_return)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function IcChart({ tr }: { tr: UniverseTrackRecord }) {
  const data = useMemo(() => {
    const s = tr.ic_series;
    return [s.map((r) => dayTs(r.date)), s.map((r) => r.ic), s.map(() => tr.ic.mean)] as uPlot.AlignedData;
  }, [tr]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        ...utcTime,
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true }, y: { range: [-1, 1] as uPlot.Range.MinMax } },
        axes: [timeAxis(t), axis(t, { size: 50, label: "Rank correlation" })],
        series: [
          dateSeries,
          { label: "IC at the month-end", stroke: t.accent, width: 1, value: (_u: uPlot, v: number | null) => corr(v) },
          { label: "Mean IC", stroke: t.accent2, width: 2, dash: [5, 3], value: (_u: uPlot, v: number | null) => corr(v) },
        ],
        hooks: {
          drawClear: [
            (u: uPlot) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = t.muted;
              rule(u, 0, "y");
              ctx.restore();
            },
          ],
        },
      }) as Opts,
    [tr],
  );
  return (
    <Chart
      id="chart-tr-ic"
      data={data}
      options={options}
      height={240}
      label={`Spearman rank correlation of score with realised ${tr.return_period}-day return at each month-end, with its mean (dashed)`}
    />
  );
}

function CalibrationChart({ tr }: { tr: UniverseTrackRecord }) {
  const { data, lo, hi } = useMemo(() => {
    const pts = [...tr.calibration].sort((p, q) => p.mean_predicted - q.mean_predicted);
    const all = pts.flatMap((p) => [p.mean_predicted, p.mean_realised]);
    const lo = Math.min(0, ...all);
    const hi = Math.max(0, ...all);
    return { data: [pts.map((p) => p.mean_predicted), pts.map((p) => p.mean_realised)] as uPlot.AlignedData, lo, hi };
  }, [tr]);
  const options = useMemo(
    () => (t: Theme) => {
      const pad = (hi - lo) * 0.08 || 0.01;
      const range = [lo - pad, hi + pad] as uPlot.Range.MinMax;
      return {
        scales: { x: { time: false, range }, y: { range } },
        axes: [axis(t, { values: pctAxis, label: "Mean predicted median return" }), axis(t, { size: 60, values: pctAxis, label: "Mean realised" })],
        series: [
          { label: "Predicted", value: (_u: uPlot, v: number | null) => pct(v) },
          {
            label: "Realised",
            stroke: t.accent,
            width: 1.5,
            points: { show: true, size: 7, fill: t.accent },
            value: (_u: uPlot, v: number | null) => pct(v),
          },
        ],
        hooks: {
          // The diagonal: where predictions were right on average.
          drawClear: [
            (u: uPlot) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = t.muted;
              ctx.setLineDash([4, 4]);
              ctx.beginPath();
              ctx.moveTo(u.valToPos(range[0]!, "x", true), u.valToPos(range[0]!, "y", true));
              ctx.lineTo(u.valToPos(range[1]!, "x", true), u.valToPos(range[1]!, "y", true));
              ctx.stroke();
              ctx.restore();
            },
          ],
        },
      } as Opts;
    },
    [lo, hi],
  );
  return (
    <Chart
      id="chart-tr-calibration"
      data={data}
      options={options}
      height={260}
      label={`Calibration: mean predicted median return against mean realised ${tr.return_period}-day return per group; the dashed diagonal is where they would be equal (the table below has the figures)`}
    />
  );
}

function Unavailable({ error }: { error: ApiError }) {
  return (
    <div class="note note-info" role="status" id="tr-unavailable">
      <strong>Not available yet.</strong> The track record is computed by the daily grading run; no run has computed it for these
      filters yet. {error.detail && <span class="muted">({error.detail})</span>}
    </div>
  );
}

/** One table of the universe track record with these filters, as CSV. */
function csvOf(query: Record<string, string | undefined>, table: string): string {
  return urlOf(`${WEB}/api/track-record`, { ...query, format: "csv", table });
}

export function TrackRecordPage({ loc }: { loc: Location }) {
  useTitle("Track record");
  const p = {
    return_period: loc.query.get("return_period") || "90",
    metric: loc.query.get("metric") || "return",
    category: loc.query.get("category") ?? "",
    source: loc.query.get("source") || "real",
  };
  const query = { return_period: p.return_period, metric: p.metric, category: p.category || undefined, source: p.source };
  const r = useData(() => api.universeTrackRecord(query), [JSON.stringify(query)]);
  const go = (next: Partial<typeof p>) => {
    const m = { ...p, ...next };
    navigate(withQuery("/track-record", { ...m, source: m.source === "real" ? "" : m.source, category: m.category }), { replace: true });
  };
  const badField = fieldOf(r.error, ["return_period", "metric", "category", "source"]);
  const invalid = (k: string) => (badField === k ? { "aria-invalid": true, "aria-describedby": "tr-error" } : {});
  const unavailable = r.error instanceof ApiError && r.error.status === 503 ? r.error : null;
  const tr = r.loading ? null : r.data;
  const ds = tr?.data_sources;
  const dsTotal = ds ? ds.real + ds.ingested + ds.synthetic : 0;

  return (
    <main class="page track-record-page">
      <h1>Track record</h1>
      <p class="lead">
        How past grades turned out. At every month-end each asset is graded from its data up to that date only, and the return
        that followed over the horizon is set beside the grade. <a href="/methodology#track-record">How it is computed</a> and{" "}
        <a href="/methodology#limits">what it cannot tell you</a>.
      </p>
      <Card>
        <form class="filters" aria-label="Track record filters" onSubmit={(e) => e.preventDefault()}>
          <HorizonMetricFields id="tr" period={p.return_period} metric={p.metric} onChange={go} invalid={invalid} />
          <CategoryField id="tr-category" value={p.category} onChange={go} invalid={invalid} />
          <div class="field">
            <label for="tr-source">Prices</label>
            <select id="tr-source" value={p.source} onChange={(e) => go({ source: (e.target as HTMLSelectElement).value })} {...invalid("source")}>
              {SOURCES.map(([v, label]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ))}
            </select>
          </div>
        </form>
      </Card>
      {r.loading && <Loading label="Loading the track record…" />}
      {unavailable ? <Unavailable error={unavailable} /> : <ErrorNote error={r.error} what="The track record" id="tr-error" />}
      {tr && tr.observations === 0 && (
        <p class="note note-info" role="status" id="tr-empty">
          No graded month-end with a realised return matches these filters
          {tr.category ? ` (${tr.category}, ${SOURCES.find(([v]) => v === tr.source)?.[1].toLowerCase() ?? tr.source} prices)` : ""}: try
          another category or “All prices”.
        </p>
      )}
      {tr && tr.observations > 0 && (
        <>
          <Card title="What it covers" id="tr-summary">
            <p class="muted small" id="tr-meta">
              {int(tr.assets)} assets · {int(tr.observations)} asset-month-ends
              {tr.first_date && tr.last_date && (
                <>
                  {" "}
                  from <time dateTime={tr.first_date}>{tr.first_date}</time> to <time dateTime={tr.last_date}>{tr.last_date}</time>
                </>
              )}{" "}
              · {tr.return_period}-day horizon · metric {tr.metric}
              {tr.category ? ` · ${tr.category}` : ""} · computed by the grading run of {tr.run_day ?? "—"} · engine {tr.engine_version},
              scorer {tr.scorer_version} · intervals by a moving-block bootstrap over month-ends, blocks of {int(tr.block_months)} months
            </p>
            {ds && (
              <p class="muted small" id="tr-sources">
                Prices: {int(ds.real)} real · {int(ds.ingested)} ingested · {int(ds.synthetic)} synthetic (generated, not market data){" "}
                <Help term="data-sources" />
              </p>
            )}
            {ds && ds.synthetic > 0 && (
              <p class="note note-warn" role="note" id="tr-synthetic">
                {ds.synthetic === dsTotal ? (
                  <>
                    <strong>All {int(dsTotal)} assets here have synthetic prices.</strong> Their histories are generated, not observed:
                    whatever the grades find here is a property of the generator, not of any market.
                  </>
                ) : (
                  <>
                    <strong>
                      {int(ds.synthetic)} of these {int(dsTotal)} assets have synthetic prices.
                    </strong>{" "}
                    Their histories are generated, not observed: what the grades find in them says nothing about any market, and it mixes with what the others show.
                  </>
                )}
              </p>
            )}
            {tr.notes.length > 0 && (
              <ul class="tr-notes" id="tr-notes">
                {tr.notes.map((n, i) => (
                  <li key={i}>{n}</li>
                ))}
              </ul>
            )}
          </Card>
          <Card title={`Realised ${tr.return_period}-day return by grade`} id="tr-by-grade">
            {tr.by_grade.length > 0 ? (
              <>
                <GradeChart rows={tr.by_grade} rp={tr.return_period} />
                <GradeTable rows={tr.by_grade} rp={tr.return_period} />
                <p class="muted small">
                  Bars: mean realised return of the asset-month-ends given each grade; whiskers: its 90 % interval. Hit rate: the share
                  above 0. Observations overlap in time when the horizon is over a month, so they are not independent.
                </p>
                <p class="small" id="tr-download">
                  <a class="btn btn-small" href={csvOf(query, "by_grade")} download>
                    Download CSV
                  </a>{" "}
                  <span class="muted">
                    this table; also the <a href={csvOf(query, "ic")} download>IC by month-end</a> and the{" "}
                    <a href={csvOf(query, "calibration")} download>calibration bins</a>
                  </span>
                </p>
              </>
            ) : (
              <p class="muted">No graded month-end has a realised return yet.</p>
            )}
          </Card>
          <div class="grid2">
            <Card title="Score vs outcome: IC" id="tr-ic">
              <dl class="stats stats-2">
                <div>
                  <dt>Mean IC</dt>
                  <dd id="tr-ic-mean" data-value={tr.ic.mean ?? ""}>
                    {corr(tr.ic.mean)}
                  </dd>
                </div>
                <div>
                  <dt>90 % interval</dt>
                  <dd id="tr-ic-ci">{tr.ic.ci && tr.ic.ci.length >= 2 ? `${corr(tr.ic.ci[0])} to ${corr(tr.ic.ci[1])}` : "—"}</dd>
                </div>
                <div>
                  <dt>Month-ends</dt>
                  <dd>{int(tr.ic.dates)}</dd>
                </div>
              </dl>
              {tr.ic_series.length > 0 && <IcChart tr={tr} />}
              <p class="muted small">
                At each month-end, the Spearman rank correlation between the assets' scores and the returns that followed; 0: the
                ranking by score said nothing about the ranking of outcomes. {estimateText(tr.ic, corr)}.
              </p>
            </Card>
            <Card title="Top minus bottom fifth" id="tr-spread">
              <dl class="stats stats-2">
                <div>
                  <dt>Mean spread</dt>
                  <dd id="tr-spread-mean" class={signClass(tr.quintile_spread.mean)}>
                    {pct(tr.quintile_spread.mean)}
                  </dd>
                </div>
                <div>
                  <dt>90 % interval</dt>
                  <dd id="tr-spread-ci">{ciText(tr.quintile_spread.ci)}</dd>
                </div>
                <div>
                  <dt>Month-ends</dt>
                  <dd>{int(tr.quintile_spread.dates)}</dd>
                </div>
              </dl>
              <p class="muted small">
                At each month-end, the mean realised return of the fifth of assets with the highest scores minus that of the fifth
                with the lowest, averaged over month-ends. An interval that contains 0 means the top and bottom fifth cannot be told
                apart.
              </p>
              <h3 class="h3">Calibration</h3>
              {tr.calibration.length > 0 ? (
                <>
                  <CalibrationChart tr={tr} />
                  <div class="table-wrap">
                    <table class="table compact" id="tr-calibration">
                      <caption class="sr-only">Calibration: mean predicted and mean realised return per group</caption>
                      <thead>
                        <tr>
                          <th scope="col" class="num">
                            Mean predicted
                          </th>
                          <th scope="col" class="num">
                            Mean realised
                          </th>
                          <th scope="col" class="num">
                            Observations
                          </th>
                        </tr>
                      </thead>
                      <tbody>
                        {tr.calibration.map((c, i) => (
                          <tr key={i}>
                            <td class={`num ${signClass(c.mean_predicted)}`}>{pct(c.mean_predicted)}</td>
                            <td class={`num ${signClass(c.mean_realised)}`}>{pct(c.mean_realised)}</td>
                            <td class="num">{int(c.count)}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                  <p class="muted small">
                    Ten groups (deciles) of the asset-month-ends by predicted median return; on the dashed diagonal the predictions were
                    right on average.
                  </p>
                </>
              ) : (
                <p class="muted">No calibration groups for these filters.</p>
              )}
            </Card>
          </div>
        </>
      )}
    </main>
  );
}
