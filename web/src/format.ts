// The app's one way to write numbers, so a figure reads the same on every
// page: thousands separators everywhere (en-US), decimals by kind, a
// missing value as "—". Pure functions: web/test/format.test.mjs checks
// them in Node, and the browser tests compute expected text with them.

const formats = new Map<string, Intl.NumberFormat>();
function nf(key: string, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  let f = formats.get(key);
  if (!f) {
    f = new Intl.NumberFormat("en-US", options);
    formats.set(key, f);
  }
  return f;
}
const fixed = (digits: number) => nf(`f${digits}`, { minimumFractionDigits: digits, maximumFractionDigits: digits });
const missing = (v: number | null | undefined): v is null | undefined => v === null || v === undefined || !Number.isFinite(v);

/** A fraction as a percentage: 0.1234 → "12.34 %", 25.261 → "2,526.10 %"; rates take 0 digits: "68 %". */
export function pct(v: number | null | undefined, digits = 2): string {
  if (missing(v)) return "—";
  return `${fixed(digits).format(v * 100)} %`;
}

/** A fraction as a signed percentage with a true minus: 0.031 → "+3.1 %", -0.098 → "−9.8 %" (no-break space before "%"). */
export function signedPct(v: number | null | undefined, digits = 1): string {
  if (missing(v)) return "—";
  const s = fixed(digits).format(Math.abs(v) * 100);
  if (Number(s.replace(/,/g, "")) === 0) return `${s}\u00a0%`;
  return `${v > 0 ? "+" : "−"}${s}\u00a0%`;
}

/** A plain figure with two decimals: 1234.5 → "1,234.50". */
export function num(v: number | null | undefined): string {
  if (missing(v)) return "—";
  return fixed(2).format(v);
}

/** An amount with its sign and two decimals: 1234.5 → "+1,234.50", -3 → "−3.00" (true minus), none at zero. */
export function signedNum(v: number | null | undefined): string {
  if (missing(v)) return "—";
  const s = fixed(2).format(Math.abs(v));
  if (Number(s.replace(/,/g, "")) === 0) return s;
  return `${v > 0 ? "+" : "−"}${s}`;
}

/** A price: two decimals from 1 up ("187.23", "104,523.45"), four significant digits below ("0.01234"). */
export function price(v: number | null | undefined): string {
  if (missing(v)) return "—";
  if (Math.abs(v) >= 1) return fixed(2).format(v);
  return nf("p4", { maximumSignificantDigits: 4 }).format(v);
}

/** Axis labels: 1,250,000 → "1.25M", 2,500 → "2.5K", 3.14159 → "3.142". */
export function compact(v: number | null | undefined): string {
  if (missing(v)) return "";
  if (Math.abs(v) >= 1000) return nf("c3", { notation: "compact", maximumSignificantDigits: 3 }).format(v);
  return nf("s6", { maximumSignificantDigits: 6 }).format(Number(v.toPrecision(4)));
}

/** A count: 12345 → "12,345". */
export function int(v: number | null | undefined): string {
  if (missing(v)) return "—";
  return fixed(0).format(v);
}

/** A correlation with a true minus and two decimals (three when two would read 0.00): −0.01, 0.05, 0.004. */
export function corr(v: number): string {
  const digits = v !== 0 && Math.abs(v) < 0.005 ? 3 : 2;
  const s = Math.abs(v).toFixed(digits);
  return v < 0 && Number(s) !== 0 ? `−${s}` : s;
}

/** "1 episode", "2 episodes", "1,024 episodes" (`many` for an irregular plural). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${int(n)} ${n === 1 ? one : many}`;
}

/**
 * The catalog's industry tags, which its source ran together with spaces:
 * "Enterprise software Business software Consulting" → ["Enterprise
 * software", "Business software", "Consulting"]. A tag starts at a
 * capital after a lower-case word; title-case names stay whole
 * ("Consumer Electronics"); commas and semicolons separate too.
 */
export function tags(industry: string | null | undefined): string[] {
  if (!industry) return [];
  const out: string[] = [];
  for (const part of industry.split(/[;,]/)) {
    let cur: string[] = [];
    for (const word of part.trim().split(/\s+/).filter(Boolean)) {
      const prev = cur[cur.length - 1];
      if (prev && /^[a-z]/.test(prev) && /^[A-Z]/.test(word)) {
        out.push(cur.join(" "));
        cur = [];
      }
      cur.push(word);
    }
    if (cur.length) out.push(cur.join(" "));
  }
  return out;
}
