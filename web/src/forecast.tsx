// The calibrated forecast of the forward return over a horizon: what the
// verdict card leads with, and the "Expected" column of the ranking and the
// watchlist. The server sends an optional `forecast` (ForecastBody in
// src/api/schema.d.ts) on the verdict, the analysis and each ranking row;
// the watchlist reads each row's verdict. `forecastOf` reads it
// defensively: an older server, or a scorer without forecasts, sends
// nothing, and then nothing is shown.
import type { Schemas } from "./api/client";
import { signClass } from "./lib";

/**
 * `forecast` as the server documents it (fractions: 0.05 = +5 %), its
 * `method` narrowed to the two it names: "calibrated" (fitted out of sample
 * on the pooled history) or "climatology" (the asset's own history only).
 */
export type Forecast = Omit<Schemas["ForecastBody"], "method"> & { method: "calibrated" | "climatology" };

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/**
 * The `forecast` of a response or row, or null when it is missing, null or
 * not shaped as documented (an older server, or no forecast for the asset).
 */
export function forecastOf(x: unknown): Forecast | null {
  if (!x || typeof x !== "object") return null;
  const f = (x as { forecast?: unknown }).forecast;
  if (!f || typeof f !== "object") return null;
  const o = f as Record<string, unknown>;
  if (!isNum(o.central) || !isNum(o.p10) || !isNum(o.p90)) return null;
  return {
    return_period: isNum(o.return_period) ? o.return_period : NaN,
    central: o.central,
    p10: o.p10,
    p90: o.p90,
    central_se: isNum(o.central_se) ? o.central_se : NaN,
    reference: isNum(o.reference) ? o.reference : NaN,
    method: o.method === "climatology" ? "climatology" : "calibrated",
    thin: o.thin === true,
  };
}

/** Whether `x` carries the `forecast` field at all (a server that knows about forecasts), null or not. */
export function hasForecastField(x: unknown): boolean {
  return !!x && typeof x === "object" && "forecast" in x;
}

import { signedPct } from "./format";
export { signedPct };

/** What the method means, in words. */
export function methodText(f: Forecast): string {
  return f.method === "climatology"
    ? "the asset's own history only — too little pooled history to calibrate"
    : "calibrated out of sample";
}

/** "80 % of outcomes between −9.8 % and +16.0 %". */
export function rangeText(f: Forecast): string {
  return `80 % of outcomes between ${signedPct(f.p10)} and ${signedPct(f.p90)}`;
}

/** The verdict card's lead: the central forecast, its range, how it was made. */
export function ForecastLead({ f, days }: { f: Forecast; days: number }) {
  const horizon = Number.isFinite(f.return_period) && f.return_period > 0 ? f.return_period : days;
  return (
    <div class="forecast-lead" id="verdict-forecast" data-method={f.method} data-thin={f.thin ? "true" : "false"}>
      <p class="fc-main" id="verdict-forecast-line">
        Expected over {horizon} days: <strong class={`fc-central ${signClass(f.central)}`}>{signedPct(f.central)}</strong>{" "}
        <span class="fc-range">({rangeText(f)})</span>
      </p>
      <p class="fc-meta" id="verdict-forecast-method">
        <span class="fc-method">{methodText(f)}</span>
        {f.thin && (
          <>
            {" · "}
            <span class="fc-thin">thin evidence</span>: the grade cannot be A or F
          </>
        )}
        {" · "}
        <a href="/methodology#forecast">How the forecast is made</a>
      </p>
    </div>
  );
}

/** A table cell's content: the central forecast, its range on a second line (desktop) and in the title. */
export function ExpectedCell({ f }: { f: Forecast | null }) {
  if (!f) return <span class="muted" title="No calibrated forecast for this asset">—</span>;
  const range = rangeText(f);
  return (
    <span class="fc-cell" title={`${methodText(f)}; ${range}${f.thin ? "; thin evidence" : ""}`} data-central={f.central}>
      <span class="fc-cell-central">
        <span class={signClass(f.central)}>{signedPct(f.central)}</span>
        {f.thin && <span class="fc-cell-thin"> (thin)</span>}
      </span>
      <span class="fc-cell-range">
        {signedPct(f.p10)} to {signedPct(f.p90)}
      </span>
    </span>
  );
}
