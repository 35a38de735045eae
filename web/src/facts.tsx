// How every price and date is shown: a price never travels without its
// date, its data source and its currency, and an old or synthetic price is
// marked so that nobody takes it for today's market. Dates are calendar
// dates (YYYY-MM-DD strings from the API) and are never converted to the
// browser's time zone.

/** Today's calendar date in UTC, "YYYY-MM-DD" (the server grades in UTC). */
export function todayUtc(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** Whole days from calendar date `date` to today (UTC); NaN for a bad date. */
export function ageDays(date: string, now: Date = new Date()): number {
  const d = Date.parse(`${date}T00:00:00Z`);
  const t = Date.parse(`${todayUtc(now)}T00:00:00Z`);
  return Number.isFinite(d) ? Math.round((t - d) / 86_400_000) : NaN;
}

/** A price older than this many days is marked as old. */
export const STALE_DAYS = 7;

export function isStale(date: string | null | undefined, now: Date = new Date()): boolean {
  if (!date) return false;
  const a = ageDays(date, now);
  return Number.isFinite(a) && a > STALE_DAYS;
}

/** "3 days", "5 months", "13 years": how old a date is, roughly. */
export function ageText(date: string, now: Date = new Date()): string {
  const a = ageDays(date, now);
  if (!Number.isFinite(a)) return date;
  if (a < 1) return "today";
  if (a < 60) return `${a} day${a === 1 ? "" : "s"}`;
  if (a < 730) return `${Math.round(a / 30.44)} months`;
  return `${Math.floor(a / 365.25)} years`;
}

/** A timestamp (RFC 3339) as "2026-11-26 14:03 UTC": a moment, shown in UTC, never shifted. */
export function utcStamp(v: string | null | undefined): string {
  if (!v) return "never";
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return v;
  return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;
}

const SOURCE_HELP: Record<string, string> = {
  real: "Real daily closes shipped with the demo, from open data sets (see data/PROVENANCE.md)",
  ingested: "Daily closes loaded by the operator (forecast ingest csv or forecast ingest fetch)",
  synthetic: "Generated prices for the demo: not market data",
};

/** The marks a price carries: synthetic, and old (with its age). */
export function PriceMarks({ date, source, historical = false }: { date: string; source: string; historical?: boolean }) {
  const stale = !historical && isStale(date);
  return (
    <>
      {source === "synthetic" && (
        <span class="mark mark-synthetic" title={SOURCE_HELP.synthetic}>
          synthetic
        </span>
      )}
      {stale && (
        <span class="mark mark-stale" title={`The last price is from ${date}, ${ageText(date)} ago`}>
          {ageText(date)} old
        </span>
      )}
    </>
  );
}

/**
 * A price with its date, source and currency where it is shown:
 * "56.1374 USD" over "2013-03-01 · real", plus the marks. `compact` puts it
 * on one line (table cells).
 */
export function DatedPrice({
  value,
  date,
  source,
  currency,
  format,
  compact = false,
  historical = false,
}: {
  value: number;
  date: string;
  source: string;
  currency?: string | null;
  format: (v: number) => string;
  compact?: boolean;
  /** A price shown as of a past date on purpose (a trade's fill): not marked old. */
  historical?: boolean;
}) {
  return (
    <span class={`dated-price${compact ? " compact" : ""}`} data-date={date} data-source={source}>
      <span class="dp-value">
        {format(value)}
        {currency ? <span class="dp-currency"> {currency}</span> : null}
      </span>{" "}
      <span class="dp-meta">
        <time dateTime={date}>{date}</time>
        {/* A synthetic price says so in its mark; the source is not repeated beside it. */}
        {source !== "synthetic" && <span title={SOURCE_HELP[source] ?? source}> · {source}</span>}{" "}
        <PriceMarks date={date} source={source} historical={historical} />
      </span>
    </span>
  );
}
