// The asset page's "Grade history": the grade the engine and scorer would
// have given at every past month-end, from the data up to that date only
// (`GET /web/api/track-record/{ticker}`, 1 quota unit), against the return
// that followed over the horizon, and how each grade's months turned out.
// Every figure is the server's; nothing here recomputes one.
import { useMemo } from "preact/hooks";
import uPlot from "uplot";
import { api, type TrackRecord } from "../api/endpoints";
import { urlOf, WEB } from "../api/client";
import { axis, Chart, dateSeries, dayTs, pctAxis, rule, timeAxis, utcTime, type Opts, type Theme } from "../chart";
import { Help } from "../glossary-link";
import { Card, ErrorNote, GradeBadge, Loading, int, pct, signClass, useData } from "../lib";

/** The score where each letter starts (the scorer's: A 80, B 65, C 50, D 35). */
const CUTS = [80, 65, 50, 35];

function HistoryChart({ tr }: { tr: TrackRecord }) {
  const data = useMemo(() => {
    const h = tr.history;
    // The trailing 12-month mean of the score: month to month the score
    // jumps, and 60 years of jumps read as a band.
    const mean: (number | null)[] = h.map((_, i) => {
      if (i < 11) return null;
      let sum = 0;
      for (let j = i - 11; j <= i; j++) sum += h[j].score;
      return sum / 12;
    });
    return [h.map((r) => dayTs(r.date)), h.map((r) => r.score), mean, h.map((r) => r.realised_return ?? null)] as uPlot.AlignedData;
  }, [tr]);
  const options = useMemo(
    () => (t: Theme) =>
      ({
        ...utcTime,
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true }, score: { range: [0, 100] as uPlot.Range.MinMax }, ret: { auto: true } },
        axes: [
          timeAxis(t),
          axis(t, { scale: "score", size: 44, label: "Score", values: (_u: uPlot, v: number[]) => v.map((x) => (x == null ? "" : String(x))) }),
          axis(t, { scale: "ret", side: 1, size: 60, label: `Realised return (${tr.return_period} d)`, values: pctAxis, grid: { show: false } }),
        ],
        series: [
          dateSeries,
          { label: "Score (0–100)", scale: "score", stroke: t.accent, width: 1, alpha: 0.35, value: (_u: uPlot, v: number | null) => (v == null ? "—" : v.toFixed(0)) },
          { label: "Score, 12-month mean", scale: "score", stroke: t.accent, width: 2.25, value: (_u: uPlot, v: number | null) => (v == null ? "—" : v.toFixed(0)) },
          {
            // Dots, not a line: each is one month-end's own outcome.
            label: `Realised ${tr.return_period}-day return`,
            scale: "ret",
            stroke: t.accent2,
            width: 1,
            paths: () => null,
            points: { show: true, size: 4, width: 1, fill: t.accent2 },
            value: (_u: uPlot, v: number | null) => pct(v),
          },
        ],
        hooks: {
          // Where each letter starts, as faint lines on the score's scale.
          drawClear: [
            (u: uPlot) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = t.grid;
              ctx.setLineDash([2, 3]);
              for (const c of CUTS) rule(u, c, "score");
              ctx.restore();
            },
          ],
        },
      }) as Opts,
    [tr],
  );
  return (
    <Chart
      id="chart-grade-history"
      data={data}
      options={options}
      height={240}
      dataset={{ months: String(tr.history.length) }}
      label={`Score from 0 to 100 that ${tr.ticker} would have been given at each month-end from ${tr.history[0]?.date ?? "—"} to ${tr.history[tr.history.length - 1]?.date ?? "—"}, using data up to that date only, with the ${tr.return_period}-day return that followed (right axis, percent); dashed lines mark where the letters A, B, C and D start`}
    />
  );
}

function ByGradeTable({ tr }: { tr: TrackRecord }) {
  return (
    <div class="table-wrap">
      <table class="table compact gh-table" id="grade-history-table">
        <caption class="sr-only">
          Realised {tr.return_period}-day returns of the month-ends by the grade given at each
        </caption>
        <thead>
          <tr>
            <th scope="col">
              Grade <Help term="grade" label="a grade" />
            </th>
            <th scope="col" class="num" title="Month-ends with this grade and a realised return">
              Months
            </th>
            <th scope="col" class="num">
              Mean realised
            </th>
            <th scope="col" class="num">
              Median realised
            </th>
            <th scope="col" class="num" title="Share of those month-ends whose realised return was above 0">
              Hit rate
            </th>
          </tr>
        </thead>
        <tbody>
          {tr.by_grade.map((g) => (
            <tr key={g.grade} data-grade={g.grade}>
              <th scope="row">
                <GradeBadge letter={g.grade} />
              </th>
              <td class="num gh-count">{int(g.count)}</td>
              <td class={`num nowrap ${signClass(g.mean_realised_return)}`}>{pct(g.mean_realised_return)}</td>
              <td class={`num nowrap ${signClass(g.median_realised_return)}`}>{pct(g.median_realised_return)}</td>
              <td class="num nowrap">{pct(g.hit_rate, 0)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The grade history of `ticker` as CSV (the session's route, the same query). */
function csvOf(ticker: string, q: Record<string, string | undefined>): string {
  return urlOf(`${WEB}/api/track-record/${encodeURIComponent(ticker)}`, { format: "csv", ...q });
}

export function GradeHistory({ ticker, returnPeriod, metric }: { ticker: string; returnPeriod?: string; metric?: string }) {
  const q = { return_period: returnPeriod || undefined, metric: metric || undefined };
  const r = useData(() => api.trackRecord(ticker, q), [ticker, q.return_period, q.metric]);
  const tr = r.loading ? null : r.data;
  const pending = tr ? tr.history.filter((h) => h.realised_return === null || h.realised_return === undefined).length : 0;
  return (
    <Card title="Grade history" id="grade-history">
      {r.loading && <Loading label="Grading every past month-end…" />}
      <ErrorNote error={r.error} what="The grade history" />
      {tr && tr.history.length === 0 && (
        <p class="muted">No month-end of {tr.ticker} has the 300 rows of history before it that a grade needs.</p>
      )}
      {tr && tr.history.length > 0 && (
        <>
          <p class="muted small" id="grade-history-meta">
            {int(tr.history.length)} month-ends from <time dateTime={tr.history[0].date}>{tr.history[0].date}</time> to{" "}
            <time dateTime={tr.history[tr.history.length - 1].date}>{tr.history[tr.history.length - 1].date}</time> · {tr.return_period}-day horizon · metric{" "}
            {tr.metric} · engine {tr.engine_version}, scorer {tr.scorer_version}
            {pending > 0 && <> · the last {int(pending)} have no realised return yet (their horizon has not passed)</>}
          </p>
          {tr.data_source === "synthetic" && (
            <p class="note note-warn" role="note" id="grade-history-synthetic">
              <strong>Synthetic prices.</strong> This history is generated, not observed: any pattern below is a property of
              the generator, not of any market. <Help term="synthetic" label="a synthetic price" />
            </p>
          )}
          <HistoryChart tr={tr} />
          <h3 class="h3">Outcomes by grade</h3>
          <ByGradeTable tr={tr} />
          <p class="muted small gh-notes">
            Each grade uses the prices up to its month-end only, as the engine and scorer would have given it then; the realised return
            is the close at least {tr.return_period} calendar days later over the month-end's close, minus 1. When the horizon is longer
            than a month, consecutive month-ends overlap: neighbouring rows share most of their outcome, so the months counted above are
            not independent{tr.return_period > 31 ? ` (here each ${tr.return_period}-day window spans about ${Math.round(tr.return_period / 30.4)} month-ends)` : ""}.
            On synthetic data the grades describe the generator, not a market{tr.data_source === "synthetic" ? " — and these prices are synthetic" : ""}.
            Past outcomes do not promise future ones. <a href="/methodology#track-record">How the track record is computed</a>.
          </p>
          <p class="small" id="grade-history-download">
            <a class="btn btn-small" href={csvOf(tr.ticker, q)} download>
              Download CSV
            </a>{" "}
            <span class="muted">every month-end: grade, score, forecast and what followed</span>
          </p>
        </>
      )}
    </Card>
  );
}
