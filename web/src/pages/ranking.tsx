// The ranking: every graded asset, sorted, filtered and paged by the server
// (sort_by, q, offset), so that sorting by grade or searching "microsoft"
// acts on the whole ranking, never on the page of rows fetched. Everything
// lives in the URL. Prices carry their date, source and currency.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type RankedAsset } from "../api/endpoints";
import { fieldOf, urlOf, WEB } from "../api/client";
import { assetUrl, navigate, withQuery, type Location } from "../router";
import { DatedPrice } from "../facts";
import { CategoryField, HorizonMetricFields } from "../filters";
import { Help, type TermId } from "../glossary-link";
import { Card, ErrorNote, GradeBadge, Loading, int, num, pct, price, signClass, useData, useTitle, when } from "../lib";
import { ExpectedCell, forecastOf, hasForecastField } from "../forecast";
import { ModelRecord } from "../model-record";

/** What the server sorts by (the whole ranking, before `offset` and `limit`). */
const SORT_KEYS: [string, string][] = [
  ["median_return", "Median return"],
  ["expected_return", "Expected return (EMA)"],
  ["score", "Grade (score)"],
  ["win_rate", "Win rate"],
  ["prediction_error", "Prediction error"],
  ["current_drawdown", "Drawdown"],
  ["current_price", "Price"],
  ["last_price_date", "Last price date"],
  ["ticker", "Ticker"],
  ["name", "Name"],
  ["category", "Category"],
];
const TEXT_KEYS = ["ticker", "name", "category"];
/** Typing in the filter box waits this long before asking the server. */
const DEBOUNCE_MS = 300;

type Row = RankedAsset & { currency?: string | null };

interface Column {
  id: string;
  label: string;
  /** The server's sort key, when the column is sortable. */
  sort?: string;
  num?: boolean;
  /** Hidden on narrow screens (the rest stay: rank, ticker, grade, price). */
  opt?: boolean;
  help?: TermId;
  render: (a: Row) => preact.ComponentChild;
}

const COLUMNS: Column[] = [
  { id: "rank", label: "#", num: true, render: (a) => a.rank },
  {
    id: "ticker",
    label: "Ticker",
    sort: "ticker",
    render: (a) => (
      <a class="ticker" href={assetUrl(a.ticker)}>
        {a.ticker}
      </a>
    ),
  },
  {
    id: "name",
    label: "Name",
    sort: "name",
    opt: true,
    render: (a) => (
      <>
        {a.name}
        <span class="rk-cat muted small">{a.category}</span>
      </>
    ),
  },
  { id: "score", label: "Grade", sort: "score", num: true, help: "grade", render: (a) => <GradeBadge letter={a.grade} score={a.score} /> },
  { id: "episodes", label: "Episodes", num: true, opt: true, help: "episodes", render: (a) => (a.episodes == null ? "—" : int(a.episodes)) },
  // Shown only when the server sends `forecast` on the rows (see `columnsFor`);
  // on a phone the row keeps rank, ticker, grade and the dated price.
  { id: "forecast", label: "Expected", num: true, opt: true, help: "forecast", render: (a) => <ExpectedCell f={forecastOf(a)} /> },
  {
    id: "median_return",
    label: "Median return",
    sort: "median_return",
    num: true,
    opt: true,
    help: "median-return",
    render: (a) => <span class={signClass(a.median_return)}>{pct(a.median_return)}</span>,
  },
  {
    id: "expected_return",
    label: "Expected return (EMA)",
    sort: "expected_return",
    num: true,
    opt: true,
    help: "expected-return",
    render: (a) => <span class={signClass(a.expected_return)}>{pct(a.expected_return)}</span>,
  },
  { id: "win_rate", label: "Win rate", sort: "win_rate", num: true, opt: true, help: "win-rate", render: (a) => pct(a.win_rate, 0) },
  { id: "prediction_error", label: "Prediction error", sort: "prediction_error", num: true, opt: true, help: "prediction-error", render: (a) => num(a.prediction_error) },
  {
    id: "current_drawdown",
    label: "Drawdown",
    sort: "current_drawdown",
    num: true,
    opt: true,
    help: "drawdown",
    render: (a) => <span class={signClass(a.current_drawdown)}>{pct(a.current_drawdown)}</span>,
  },
  {
    id: "current_price",
    label: "Last price",
    sort: "current_price",
    num: true,
    help: "data-sources",
    render: (a) => <DatedPrice value={a.current_price} date={a.last_price_date} source={a.data_source} currency={a.currency} format={price} />,
  },
];

/** The columns for these rows: "Expected" only when the server sends forecasts. */
function columnsFor(rows: Row[]): Column[] {
  const withForecast = rows.some(hasForecastField);
  return COLUMNS.filter((c) => c.id !== "forecast" || withForecast);
}

/** "Grade at least" letters: the grades the server keeps for each choice. */
const MIN_GRADES: [string, string][] = [
  ["", "Any grade"],
  ["A", "A"],
  ["A,B", "B or better"],
  ["A,B,C", "C or better"],
  ["A,B,C,D", "D or better"],
];
/** Which prices: all, market prices only, or the generated ones. */
const SOURCES: [string, string][] = [
  ["", "All prices"],
  ["real,ingested", "Market prices only (real and ingested)"],
  ["synthetic", "Synthetic only"],
];

/** The page's parameters, from its URL (every one lives there). */
export function rankingParams(q: URLSearchParams) {
  return {
    category: q.get("category") ?? "",
    return_period: q.get("return_period") ?? "90",
    metric: q.get("metric") ?? "return",
    limit: q.get("limit") ?? "50",
    sort_by: q.get("sort_by") ?? "median_return",
    sort: q.get("sort") === "asc" ? "asc" : "desc",
    // `filter` was the name of this parameter before the server filtered.
    q: q.get("q") ?? q.get("filter") ?? "",
    offset: q.get("offset") ?? "",
    max_age_days: q.get("max_age_days") ?? "",
    source: q.get("source") ?? "",
    grades: q.get("grades") ?? "",
    min_episodes: q.get("min_episodes") ?? "",
    max_current_drawdown: q.get("max_current_drawdown") ?? "",
    currency: q.get("currency") ?? "",
  };
}

type Params = ReturnType<typeof rankingParams>;

/** The server's query for the page's parameters (the same URL the app's first load prefetches). */
export function rankingQuery(p: Params): Record<string, string | undefined> {
  return {
    category: p.category || undefined,
    return_period: p.return_period,
    metric: p.metric,
    limit: p.limit,
    sort_by: p.sort_by,
    sort: p.sort,
    q: p.q || undefined,
    offset: p.offset && p.offset !== "0" ? p.offset : undefined,
    max_age_days: p.max_age_days || undefined,
    source: p.source || undefined,
    grades: p.grades || undefined,
    min_episodes: p.min_episodes || undefined,
    max_current_drawdown: p.max_current_drawdown || undefined,
    currency: p.currency || undefined,
  };
}

/** The CSV of the whole filtered ranking as sorted (up to 500 rows). */
function csvUrl(p: Params): string {
  return urlOf(`${WEB}/api/ranking`, { ...rankingQuery(p), offset: undefined, limit: "500", format: "csv" });
}

/**
 * Sorting by price compares numbers: across currencies that says nothing
 * (a yen price is not "higher" than a dollar one). When the rows hold more
 * than one currency the page says so and offers one currency at a time.
 */
function PriceCurrencies({ rows, current, onPick }: { rows: Row[]; current: string; onPick: (c: string) => void }) {
  const seen = [...new Set(rows.map((r) => r.currency || "").filter(Boolean))].sort();
  if (!current && seen.length < 2) return null;
  return (
    <p class="note" id="ranking-currencies" role="note">
      {current ? (
        <>Prices compared in {current} only. </>
      ) : (
        <>
          These prices are in {seen.length} currencies ({seen.join(", ")}): sorted by price, they are compared as plain numbers, not converted.{" "}
        </>
      )}
      <label for="r-currency">Compare prices in </label>
      <select id="r-currency" value={current} onChange={(e) => onPick((e.target as HTMLSelectElement).value)}>
        <option value="">every currency</option>
        {(current && !seen.includes(current) ? [...seen, current] : seen).map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
    </p>
  );
}

/** A drawdown fraction (−0.2) as the percent the box shows (20), and back. */
const ddPercent = (v: string) => (v === "" || !Number.isFinite(Number(v)) ? "" : String(Math.round(-Number(v) * 1000) / 10));
const ddFraction = (v: string) => (v.trim() === "" ? "" : String(-Number(v) / 100));

export function RankingPage({ loc }: { loc: Location }) {
  useTitle("Ranking");
  const p = rankingParams(loc.query);
  const [limit, setLimit] = useState(p.limit);
  useEffect(() => setLimit(p.limit), [p.limit]);
  const [maxAge, setMaxAge] = useState(p.max_age_days);
  useEffect(() => setMaxAge(p.max_age_days), [p.max_age_days]);
  const [episodes, setEpisodes] = useState(p.min_episodes);
  useEffect(() => setEpisodes(p.min_episodes), [p.min_episodes]);
  const [depth, setDepth] = useState(ddPercent(p.max_current_drawdown));
  useEffect(() => setDepth(ddPercent(p.max_current_drawdown)), [p.max_current_drawdown]);
  const [text, setText] = useState(p.q);
  // Follow the URL (back/forward) without fighting the typing: a `q` this
  // box sent itself is not written back into it.
  const sent = useRef(p.q);
  useEffect(() => {
    if (p.q !== sent.current) {
      sent.current = p.q;
      setText(p.q);
    }
  }, [p.q]);

  const query = rankingQuery(p);
  const r = useData(() => api.ranking(query), [JSON.stringify(query)]);
  const go = (next: Partial<typeof p>) => {
    // Anything but paging starts again from the first row.
    const merged = { ...p, offset: "", ...next };
    navigate(withQuery("/ranking", { ...merged, offset: merged.offset === "0" ? "" : merged.offset }), { replace: true });
  };

  // The filter asks the server once typing pauses (with the URL of that moment).
  const latest = useRef(go);
  latest.current = go;
  useEffect(() => {
    const v = text.trim();
    if (v === p.q) return;
    const t = setTimeout(() => {
      sent.current = v;
      latest.current({ q: v });
    }, DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [text, p.q]);

  const sortBy = (key: string) => {
    const dir = p.sort_by === key ? (p.sort === "desc" ? "asc" : "desc") : TEXT_KEYS.includes(key) ? "asc" : "desc";
    go({ sort_by: key, sort: dir });
  };

  const rows = (r.data?.ranked_assets ?? []) as Row[];
  const columns = columnsFor(rows);
  const badField = fieldOf(r.error, ["categories", "category", "return_period", "metric", "limit", "sort_by", "sort", "max_age_days", "offset", "q", "source", "grades", "min_episodes", "max_current_drawdown", "currency"]);
  const invalid = (k: string) => (badField === k ? { "aria-invalid": true, "aria-describedby": "ranking-error" } : {});
  const meta = r.data?.metadata as (NonNullable<typeof r.data>["metadata"] & { offset?: number }) | undefined;
  const sources = meta?.data_sources;
  const dates = meta?.last_price_dates;
  const total = meta?.filtered_assets ?? 0;
  const offset = meta?.offset ?? (Number(p.offset) || 0);
  const perPage = Math.max(1, Number(p.limit) || 50);
  const sourceTotal = sources ? sources.real + sources.ingested + sources.synthetic : 0;
  const mostlySynthetic = sources !== undefined && sourceTotal > 0 && sources.synthetic * 2 > sourceTotal;
  const sortLabel = SORT_KEYS.find(([k]) => k === p.sort_by)?.[1] ?? p.sort_by.replace(/_/g, " ");

  return (
    <main class="page ranking-page">
      <h1>Ranking</h1>
      <p class="lead">
        Every graded asset of the latest grading run. Click a column's name to sort by it; sorting, the filter and the
        pages act on the whole ranking.
      </p>
      <Card>
        <form
          class="filters"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            sent.current = text.trim();
            go({ limit, max_age_days: maxAge, q: text.trim(), min_episodes: episodes, max_current_drawdown: ddFraction(depth) });
          }}
        >
          <div class="field grow">
            <label for="r-filter">Filter by ticker or name</label>
            <input id="r-filter" type="search" value={text} maxLength={100} onInput={(e) => setText((e.target as HTMLInputElement).value)} {...invalid("q")} />
          </div>
          <CategoryField id="r-category" value={p.category} onChange={go} invalid={invalid} />
          <div class="field">
            <label for="r-sort">Sort by</label>
            <select id="r-sort" value={p.sort_by} onChange={(e) => go({ sort_by: (e.target as HTMLSelectElement).value })} {...invalid("sort_by")}>
              {SORT_KEYS.map(([k, label]) => (
                <option key={k} value={k}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          <div class="field small-field">
            <label for="r-order">Order</label>
            <select id="r-order" value={p.sort} onChange={(e) => go({ sort: (e.target as HTMLSelectElement).value })}>
              <option value="desc">Descending</option>
              <option value="asc">Ascending</option>
            </select>
          </div>
          <HorizonMetricFields id="r" period={p.return_period} metric={p.metric} onChange={go} invalid={invalid} />
          <div class="field small-field">
            <label for="r-limit">Rows per page (1–500)</label>
            <input
              id="r-limit"
              type="number"
              min={1}
              max={500}
              value={limit}
              {...invalid("limit")}
              onInput={(e) => setLimit((e.target as HTMLInputElement).value)}
              onChange={(e) => go({ limit: (e.target as HTMLInputElement).value })}
            />
          </div>
          <div class="field small-field">
            <label for="r-age">Last price within (days)</label>
            <input
              id="r-age"
              type="number"
              min={0}
              max={36500}
              placeholder="any"
              value={maxAge}
              {...invalid("max_age_days")}
              onInput={(e) => setMaxAge((e.target as HTMLInputElement).value)}
              onChange={(e) => go({ max_age_days: (e.target as HTMLInputElement).value })}
            />
          </div>
          <div class="field">
            <label for="r-source">Prices</label>
            <select id="r-source" value={p.source} onChange={(e) => go({ source: (e.target as HTMLSelectElement).value })} {...invalid("source")}>
              {SOURCES.map(([v, label]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ))}
              {p.source && !SOURCES.some(([v]) => v === p.source) && <option value={p.source}>{p.source}</option>}
            </select>
          </div>
          <div class="field small-field">
            <label for="r-grades">Grade at least</label>
            <select id="r-grades" value={p.grades} onChange={(e) => go({ grades: (e.target as HTMLSelectElement).value })} {...invalid("grades")}>
              {MIN_GRADES.map(([v, label]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ))}
              {p.grades && !MIN_GRADES.some(([v]) => v === p.grades) && <option value={p.grades}>{p.grades}</option>}
            </select>
          </div>
          <div class="field small-field">
            <label for="r-episodes">Episodes at least</label>
            <input
              id="r-episodes"
              type="number"
              min={0}
              max={100000}
              placeholder="any"
              value={episodes}
              {...invalid("min_episodes")}
              onInput={(e) => setEpisodes((e.target as HTMLInputElement).value)}
              onChange={(e) => go({ min_episodes: (e.target as HTMLInputElement).value })}
            />
          </div>
          <div class="field small-field">
            <label for="r-depth">Drawdown at least (%)</label>
            <input
              id="r-depth"
              type="number"
              min={0}
              max={100}
              step="any"
              placeholder="any"
              value={depth}
              {...invalid("max_current_drawdown")}
              onInput={(e) => setDepth((e.target as HTMLInputElement).value)}
              onChange={(e) => go({ max_current_drawdown: ddFraction((e.target as HTMLInputElement).value) })}
            />
          </div>
        </form>
      </Card>
      {r.loading && <Loading label="Loading the ranking…" />}
      <ErrorNote error={r.error} what="The ranking" id="ranking-error" />
      {r.data && meta && (
        <Card>
          {mostlySynthetic && (
            <p class="note note-warn" id="ranking-synthetic" role="note">
              <strong>Most of these prices are synthetic.</strong> {int(sources!.synthetic)} of the {int(sourceTotal)} assets
              {p.q || p.category ? " matching this filter" : " ranked"} have generated demo prices, not market data: their grades
              say nothing about real markets. <Help term="synthetic" label="a synthetic price" />
            </p>
          )}
          <p class="muted small" id="ranking-count">
            {rows.length > 0 ? (
              <>
                {int(offset + 1)}–{int(offset + rows.length)} of {int(total)} assets
              </>
            ) : (
              <>No rows here: {int(total)} assets match</>
            )}
            {p.category ? ` in ${p.category}` : ""}
            {p.q ? ` matching “${p.q}”` : ""}
            {p.source || p.grades || p.min_episodes || p.max_current_drawdown ? " passing the screen" : ""}
            {p.currency ? ` priced in ${p.currency}` : ""} ({int(meta.total_assets)} graded) · sorted by {sortLabel.toLowerCase()},{" "}
            {p.sort === "asc" ? "ascending" : "descending"} · graded {when(meta.calculated_at)}
            {meta.stale_excluded > 0 && <> · {int(meta.stale_excluded)} left out for an older last price</>}
          </p>
          {sources && (
            <p class="muted small" id="ranking-sources">
              Prices: {sources.real} real · {sources.ingested} ingested · {sources.synthetic} synthetic (generated, not market data)
              {dates && <> · last prices from {dates.oldest} to {dates.newest}</>} <Help term="data-sources" />
            </p>
          )}
          <p class="small" id="ranking-download">
            <a class="btn btn-small" href={csvUrl(p)} download>
              Download CSV
            </a>{" "}
            <span class="muted">these filters and this order, up to 500 rows</span>
          </p>
          {p.sort_by === "current_price" && (
            <PriceCurrencies rows={rows} current={p.currency} onPick={(c) => go({ currency: c })} />
          )}
          <ModelRecord returnPeriod={p.return_period} metric={p.metric} />
          <div class="table-wrap">
            <table class="table sortable rk-table" id="ranking-table" aria-busy={r.loading ? "true" : "false"}>
              <caption class="sr-only">
                Ranked assets {int(offset + 1)} to {int(offset + rows.length)} of {int(total)}, sorted by {sortLabel.toLowerCase()}{" "}
                {p.sort === "asc" ? "ascending" : "descending"}
              </caption>
              <thead>
                <tr>
                  {columns.map((c) => {
                    const on = c.sort !== undefined && p.sort_by === c.sort;
                    const cls = [c.num ? "num" : "", c.opt ? "col-opt" : "", c.sort ? "" : "plain"].filter(Boolean).join(" ") || undefined;
                    return (
                      <th key={c.id} scope="col" class={cls} aria-sort={c.sort ? (on ? (p.sort === "asc" ? "ascending" : "descending") : "none") : undefined}>
                        {c.sort ? (
                          <span class="th-inner">
                            <button type="button" class="sort-btn" data-col={c.sort} onClick={() => sortBy(c.sort!)}>
                              {c.label}
                              {on && (
                                <span class="sort-ind" aria-hidden="true">
                                  {p.sort === "asc" ? "▲" : "▼"}
                                </span>
                              )}
                            </button>
                            {c.help && <Help term={c.help} label={c.help === "forecast" ? "the expected return (calibrated forecast)" : c.label.toLowerCase()} />}
                          </span>
                        ) : (
                          <span class="th-inner th-plain">
                            {c.id === "rank" ? <abbr title="Rank in the whole sorted, filtered ranking">#</abbr> : c.label}
                            {c.help && <Help term={c.help} label={c.help === "forecast" ? "the expected return (calibrated forecast)" : c.label.toLowerCase()} />}
                          </span>
                        )}
                      </th>
                    );
                  })}
                </tr>
              </thead>
              <tbody>
                {rows.map((a) => (
                  <tr key={a.ticker} data-ticker={a.ticker}>
                    {columns.map((c) => (
                      <td key={c.id} class={[c.num ? "num" : "", c.opt ? "col-opt" : "", `c-${c.id}`].filter(Boolean).join(" ")} data-label={c.label}>
                        {c.render(a)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {(offset > 0 || offset + rows.length < total) && (
            <nav class="pager rk-pager" aria-label="Ranking pages">
              <button
                type="button"
                class="btn btn-small"
                id="ranking-prev"
                disabled={offset === 0 || r.loading}
                onClick={() => go({ offset: String(Math.max(0, offset - perPage)) })}
              >
                Previous {int(perPage)}
              </button>
              <span aria-live="polite">
                {int(offset + 1)}–{int(offset + rows.length)} of {int(total)}
              </span>
              <button
                type="button"
                class="btn btn-small"
                id="ranking-next"
                disabled={offset + rows.length >= total || r.loading}
                onClick={() => go({ offset: String(offset + perPage) })}
              >
                Next {int(perPage)}
              </button>
            </nav>
          )}
        </Card>
      )}
    </main>
  );
}
