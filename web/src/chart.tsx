// uPlot in Preact: a canvas chart that follows its container's width and
// the colour scheme. Every chart of the app goes through <Chart>.
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
}

export function Chart({ options, data, height = 280, label, id }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const scheme = useScheme();

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = Math.max(280, el.clientWidth);
    const opts = { ...options(theme(), width), width, height } as uPlot.Options;
    plot.current?.destroy();
    plot.current = new uPlot(opts, data, el);
    let last = width;
    const ro = new ResizeObserver(() => {
      const w = Math.max(280, el.clientWidth);
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
  }, [data, options, scheme, height]);

  return <div class="chart" ref={box} role="img" aria-label={label} id={id} />;
}
