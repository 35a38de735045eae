// The account menu's quota meter (Premium accounts): today's units used of
// the day's limit, and on opening, this minute's window and what each route
// cost today. `GET /web/api/usage` is free, so asking after each navigation
// and on opening spends nothing; a failure hides the meter (it is a hint).
import { useEffect, useState } from "preact/hooks";
import { request, WEB, type Schemas } from "./api/client";

type Usage = Schemas["UsageResponse"];

const fmt = (n: number) => n.toLocaleString("en-US");

/** "GET /web/api/ranking" → "GET /api/ranking (web app)". */
function routeLabel(route: string): string {
  const m = /^(\S+) \/web(\/.*)$/.exec(route);
  return m ? `${m[1]} ${m[2]} (web app)` : route;
}

function resetIn(reset: number): string {
  const s = Math.max(0, reset - Math.floor(Date.now() / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

export function UsageMeter({ path }: { path: string }) {
  const [usage, setUsage] = useState<Usage | null>(null);
  const [open, setOpen] = useState(false);
  // The panel opens toward the middle of the screen from wherever the
  // header has put the meter (right-aligned on a wide screen, left when the
  // account row has wrapped), so it never leaves the viewport.
  const [toRight, setToRight] = useState(false);
  const ask = () =>
    request<Usage>("GET", `${WEB}/api/usage`, { redirectOn401: false }).then(setUsage, () => setUsage(null));
  useEffect(() => void ask(), [path]);
  if (!usage) return null;
  const { day, minute } = usage;
  return (
    <details
      class="usage"
      open={open}
      onToggle={(e) => {
        const el = e.currentTarget as HTMLDetailsElement;
        const now = el.open;
        const r = el.getBoundingClientRect();
        setToRight(r.left + r.width / 2 < window.innerWidth / 2);
        setOpen(now);
        if (now) void ask();
      }}
    >
      <summary title="Your quota today (UTC): units used of the day's limit">
        <span class="usage-label">Quota</span>
        <meter min={0} max={day.limit} value={day.used} low={day.limit * 0.8} high={day.limit * 0.95} optimum={0} aria-hidden="true" />
        <span class="usage-figure">
          {fmt(day.used)}/{fmt(day.limit)}
          <span class="sr-only"> quota units used today</span>
        </span>
      </summary>
      {open && (
        <div class={toRight ? "usage-panel to-right" : "usage-panel"} role="group" aria-label="Quota used">
          <p>
            <strong>Today:</strong> {fmt(day.used)} of {fmt(day.limit)} units, {fmt(day.remaining)} left (resets in {resetIn(day.reset)}).
          </p>
          <p>
            <strong>This minute:</strong> {fmt(minute.used)} of {fmt(minute.limit)}, {fmt(minute.remaining)} left.
          </p>
          {usage.routes.length === 0 ? (
            <p class="muted">Nothing spent today. Status checks such as this one and the alerts count are free.</p>
          ) : (
            <table class="usage-routes">
              <caption class="sr-only">Units by route</caption>
              <thead>
                <tr>
                  <th scope="col">Route</th>
                  <th scope="col" class="num">Minute</th>
                  <th scope="col" class="num">Today</th>
                </tr>
              </thead>
              <tbody>
                {usage.routes.slice(0, 8).map((r) => (
                  <tr key={r.route}>
                    <td>{routeLabel(r.route)}</td>
                    <td class="num">{fmt(r.minute)}</td>
                    <td class="num">{fmt(r.day)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </details>
  );
}
