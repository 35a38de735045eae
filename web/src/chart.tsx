// uPlot in Preact: a canvas chart that follows its container's width and
// the colour scheme. Every chart of the app goes through <Chart>.
//
// Dates: the x values of a time chart are calendar dates (the API's
// "YYYY-MM-DD" at 00:00 UTC, see `dayTs`). uPlot would show them in the
// browser's time zone (a close on the 26th drawn at "25 8:00pm" in New York),
// so time charts take `utcTime` (ticks in UTC, labelled YYYY / YYYY-MM /
// YYYY-MM-DD) and `dateSeries` (the legend's date, YYYY-MM-DD): no time, no shift.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";

export interface Theme {
  fg: string;
  muted: string;
  grid: string;
  accent: string;
  accent2: string;
  pos: string;
  neg: string;
  band: string;
  bg: string;
}

/**
 * A horizontal line across the plot area at `value` on `scale`, in the
 * canvas's current stroke style (a draw hook's helper).
 */
export function rule(u: uPlot, value: number, scale: string): void {
  const y = Math.round(u.valToPos(value, scale, true)) + 0.5;
  u.ctx.beginPath();
  u.ctx.moveTo(u.bbox.left, y);
  u.ctx.lineTo(u.bbox.left + u.bbox.width, y);
  u.ctx.stroke();
}

export function theme(): Theme {
  const s = getComputedStyle(document.documentElement);
  const v = (n: string) => s.getPropertyValue(n).trim();
  return {
    fg: v("--fg"),
    muted: v("--muted"),
    grid: v("--grid"),
    accent: v("--accent"),
    accent2: v("--accent-2"),
    pos: v("--pos"),
    neg: v("--neg"),
    band: v("--band"),
    bg: v("--card"),
  };
}

/** Re-renders when the colour scheme changes. */
export function useScheme(): string {
  const q = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
  const [dark, setDark] = useState(q?.matches ?? false);
  useEffect(() => {
    if (!q) return;
    const on = () => setDark(q.matches);
    q.addEventListener("change", on);
    return () => q.removeEventListener("change", on);
  }, []);
  return dark ? "dark" : "light";
}

/** Axis styling shared by every chart. */
export function axis(t: Theme, extra: Partial<uPlot.Axis> = {}): uPlot.Axis {
  return {
    stroke: t.muted,
    grid: { stroke: t.grid, width: 1 },
    ticks: { stroke: t.grid, width: 1 },
    font: "12px system-ui, sans-serif",
    labelFont: "12px system-ui, sans-serif",
    ...extra,
  };
}

/** A calendar date "YYYY-MM-DD" as uPlot's x value: seconds at 00:00 UTC. */
export const dayTs = (d: string) => Date.parse(`${d}T00:00:00Z`) / 1000;

/** An x value (seconds) back to its calendar date, "YYYY-MM-DD", in UTC. */
export function tsDay(v: number | null | undefined): string {
  if (v == null || !Number.isFinite(v)) return "—";
  return new Date(v * 1000).toISOString().slice(0, 10);
}

const DAY = 86_400;

/** Options of a time chart: the scale's calendar in UTC (tick positions at UTC midnights and month starts). */
export const utcTime: Pick<uPlot.Options, "tzDate"> = {
  tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
};

/** The x axis of a time chart: UTC calendar labels, never a time of day. */
export function timeAxis(t: Theme, extra: Partial<uPlot.Axis> = {}): uPlot.Axis {
  return axis(t, {
    values: (_u: uPlot, splits: number[], _i: number, _space: number, incr: number) =>
      splits.map((v) => {
        if (v == null) return "";
        const d = tsDay(v);
        return incr >= 360 * DAY ? d.slice(0, 4) : incr >= 28 * DAY ? d.slice(0, 7) : d;
      }),
    ...extra,
  });
}

/** Series 0 of a time chart: its legend shows the row's calendar date. */
export const dateSeries: uPlot.Series = { label: "Date", value: (_u: uPlot, v: number | null) => tsDay(v) };

export const pctAxis = (_u: uPlot, vals: number[]) => vals.map((v) => (v == null ? "" : `${(v * 100).toFixed(Math.abs(v) < 0.1 ? 1 : 0)} %`));

/** uPlot options without the size, which <Chart> sets. */
export type Opts = Omit<uPlot.Options, "width" | "height">;

interface Props {
  /** Builds the options for a width (the height is fixed). */
  options: (t: Theme, width: number) => Opts;
  data: uPlot.AlignedData;
  height?: number;
  /** Accessible description of what the chart shows. */
  label: string;
  id?: string;
  /** Extra `data-*` attributes on the container (what a test reads: e.g. the medians drawn). */
  dataset?: Record<string, string>;
  /** Called with each new plot (after a change of data, options or scheme), e.g. to set its range again. */
  onPlot?: (u: uPlot) => void;
}

/** The x scale's bounds, written on the container (`data-x-min`, `data-x-max`) for tests and tools. */
function markScale(el: HTMLElement, u: uPlot) {
  const x = u.scales.x;
  if (x?.min != null) el.dataset.xMin = String(x.min);
  if (x?.max != null) el.dataset.xMax = String(x.max);
}

/**
 * With no row under the cursor (before any hover, on a touch screen, after
 * the pointer leaves) the legend shows the last row's values, not dashes.
 */
function lastInLegend(u: uPlot) {
  if (u.cursor.idx != null) return;
  const n = u.data[0]?.length ?? 0;
  if (n > 0) u.setLegend({ idx: n - 1 }, false);
}

export function Chart({ options, data, height = 280, label, id, dataset, onPlot }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const scheme = useScheme();

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // Never wider than its box (phones: no sideways scroll), never unreadably narrow.
    const width = Math.max(240, el.clientWidth);
    const base = options(theme(), width);
    const opts = {
      ...base,
      width,
      height,
      hooks: {
        ...base.hooks,
        setScale: [...(base.hooks?.setScale ?? []), (u: uPlot, key: string) => key === "x" && markScale(el, u)],
        setCursor: [...(base.hooks?.setCursor ?? []), lastInLegend],
      },
    } as uPlot.Options;
    plot.current?.destroy();
    plot.current = new uPlot(opts, data, el);
    markScale(el, plot.current);
    lastInLegend(plot.current);
    onPlot?.(plot.current);
    let last = width;
    const ro = new ResizeObserver(() => {
      const w = Math.max(240, el.clientWidth);
      if (Math.abs(w - last) > 2 && plot.current) {
        last = w;
        plot.current.setSize({ width: w, height });
      }
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data, options, scheme, height]);

  const attrs: Record<string, string> = {};
  for (const [k, v] of Object.entries(dataset ?? {})) attrs[`data-${k}`] = v;
  return <div class="chart" ref={box} role="img" aria-label={label} id={id} {...attrs} />;
}
