import { useEffect, useState } from "preact/hooks";
import { api, CATEGORIES, type RankedAsset } from "../api/endpoints";
import { fieldOf } from "../api/client";
import { assetUrl, navigate, withQuery, type Location } from "../router";
import { Card, ErrorNote, GradeBadge, Loading, SourceBadge, num, pct, price, signClass, useData, useTitle, when } from "../lib";

/** Keys the server sorts by (before `limit` applies). */
const SERVER_KEYS = ["median_return", "expected_return", "win_rate", "prediction_error", "current_drawdown", "current_price"];

interface Column {
  key: keyof RankedAsset;
  label: string;
  num?: boolean;
  render: (a: RankedAsset) => preact.ComponentChild;
}

const COLUMNS: Column[] = [
  { key: "rank", label: "#", num: true, render: (a) => a.rank },
  {
    key: "ticker",
    label: "Ticker",
    render: (a) => (
      <a class="ticker" href={assetUrl(a.ticker)}>
        {a.ticker}
      </a>
    ),
  },
  { key: "name", label: "Name", render: (a) => a.name },
  { key: "category", label: "Category", render: (a) => <span class="muted">{a.category}</span> },
  { key: "score", label: "Grade", num: true, render: (a) => <GradeBadge letter={a.grade} score={a.score} /> },
  { key: "median_return", label: "Median return", num: true, render: (a) => <span class={signClass(a.median_return)}>{pct(a.median_return)}</span> },
  { key: "expected_return", label: "Expected return", num: true, render: (a) => <span class={signClass(a.expected_return)}>{pct(a.expected_return)}</span> },
  { key: "win_rate", label: "Win rate", num: true, render: (a) => pct(a.win_rate, 0) },
  { key: "prediction_error", label: "Prediction error", num: true, render: (a) => num(a.prediction_error) },
  { key: "current_drawdown", label: "Drawdown", num: true, render: (a) => <span class={signClass(a.current_drawdown)}>{pct(a.current_drawdown)}</span> },
  { key: "current_price", label: "Price", num: true, render: (a) => price(a.current_price) },
  { key: "data_source", label: "Data", render: (a) => <SourceBadge source={a.data_source} /> },
  { key: "last_price_date", label: "Last price", render: (a) => <span class="muted nowrap">{a.last_price_date}</span> },
];

export function RankingPage({ loc }: { loc: Location }) {
  useTitle("Ranking");
  const p = {
    category: loc.query.get("category") ?? "",
    return_period: loc.query.get("return_period") ?? "90",
    metric: loc.query.get("metric") ?? "return",
    limit: loc.query.get("limit") ?? "50",
    sort_by: loc.query.get("sort_by") ?? "median_return",
    sort: loc.query.get("sort") === "asc" ? "asc" : "desc",
    filter: loc.query.get("filter") ?? "",
    max_age_days: loc.query.get("max_age_days") ?? "",
  };
  const [limit, setLimit] = useState(p.limit);
  useEffect(() => setLimit(p.limit), [p.limit]);
  const [maxAge, setMaxAge] = useState(p.max_age_days);
  useEffect(() => setMaxAge(p.max_age_days), [p.max_age_days]);
  const serverSort = SERVER_KEYS.includes(p.sort_by);
  const query = {
    category: p.category || undefined,
    return_period: p.return_period,
    metric: p.metric,
    limit: p.limit,
    sort_by: serverSort ? p.sort_by : undefined,
    sort: serverSort ? p.sort : undefined,
    max_age_days: p.max_age_days || undefined,
  };
  const r = useData(() => api.ranking(query), [JSON.stringify(query)]);
  const go = (next: Partial<typeof p>) => navigate(withQuery("/ranking", { ...p, ...next }), { replace: true });

  const sortBy = (key: string) => {
    const dir = p.sort_by === key ? (p.sort === "desc" ? "asc" : "desc") : ["ticker", "name", "category", "rank", "data_source", "last_price_date"].includes(key) ? "asc" : "desc";
    go({ sort_by: key, sort: dir });
  };

  const needle = p.filter.toLowerCase();
  let rows = (r.data?.ranked_assets ?? []).filter(
    (a) => !needle || a.ticker.toLowerCase().includes(needle) || a.name.toLowerCase().includes(needle),
  );
  if (!serverSort) {
    const k = p.sort_by as keyof RankedAsset;
    const dir = p.sort === "asc" ? 1 : -1;
    rows = [...rows].sort((a, b) => {
      const x = a[k] as unknown, y = b[k] as unknown;
      if (typeof x === "number" && typeof y === "number") return (x - y) * dir;
      return String(x).localeCompare(String(y)) * dir;
    });
  }
  const badField = fieldOf(r.error, ["category", "return_period", "metric", "limit", "sort_by", "sort", "max_age_days"]);
  const sources = r.data?.metadata.data_sources;
  const dates = r.data?.metadata.last_price_dates;

  return (
    <main class="page">
      <h1>Ranking</h1>
      <p class="lead">Every graded asset ranked from today's snapshot. Click a column header to sort; click again to reverse.</p>
      <Card>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            go({ limit, max_age_days: maxAge });
          }}
        >
          <div class="field">
            <label for="r-category">Category</label>
            <select id="r-category" value={p.category} onChange={(e) => go({ category: (e.target as HTMLSelectElement).value })}>
              <option value="">All categories</option>
              {CATEGORIES.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="r-period">Horizon</label>
            <select id="r-period" value={p.return_period} onChange={(e) => go({ return_period: (e.target as HTMLSelectElement).value })}>
              {["7", "30", "90", "180", "365"].map((d) => (
                <option key={d} value={d}>
                  {d} days
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="r-metric">Metric</label>
            <select id="r-metric" value={p.metric} onChange={(e) => go({ metric: (e.target as HTMLSelectElement).value })}>
              <option value="return">Return</option>
              <option value="sharpe">Sharpe</option>
              <option value="sortino">Sortino</option>
            </select>
          </div>
          <div class="field small-field">
            <label for="r-limit">Rows (1–500)</label>
            <input
              id="r-limit"
              type="number"
              min={1}
              max={500}
              value={limit}
              aria-invalid={badField === "limit" ? true : undefined}
              aria-describedby={badField === "limit" ? "ranking-error" : undefined}
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
              aria-invalid={badField === "max_age_days" ? true : undefined}
              aria-describedby={badField === "max_age_days" ? "ranking-error" : undefined}
              onInput={(e) => setMaxAge((e.target as HTMLInputElement).value)}
              onChange={(e) => go({ max_age_days: (e.target as HTMLInputElement).value })}
            />
          </div>
          <div class="field grow">
            <label for="r-filter">Filter by ticker or name</label>
            <input id="r-filter" type="search" value={p.filter} onInput={(e) => go({ filter: (e.target as HTMLInputElement).value })} />
          </div>
        </form>
      </Card>
      {r.loading && <Loading label="Loading the ranking…" />}
      <ErrorNote error={r.error} what="The ranking" id="ranking-error" />
      {r.data && (
        <Card>
          <p class="muted small">
            {rows.length} of {r.data.metadata.filtered_assets} assets{p.category ? ` in ${p.category}` : ""} ({r.data.metadata.total_assets} graded) ·
            graded {when(r.data.metadata.calculated_at)}
            {r.data.metadata.stale_excluded > 0 && <> · {r.data.metadata.stale_excluded} left out for an older last price</>}
          </p>
          {sources && (
            <p class="muted small" id="ranking-sources">
              Prices: {sources.real} real · {sources.ingested} ingested · {sources.synthetic} synthetic (generated, not market data)
              {dates && <> · last prices from {dates.oldest} to {dates.newest}</>}
            </p>
          )}
          <div class="table-wrap">
            <table class="table sortable" id="ranking-table" aria-busy={r.loading ? "true" : "false"}>
              <caption class="sr-only">Ranked assets, sorted by {p.sort_by.replace(/_/g, " ")} {p.sort === "asc" ? "ascending" : "descending"}</caption>
              <thead>
                <tr>
                  {COLUMNS.map((c) => {
                    const on = p.sort_by === c.key;
                    return (
                      <th key={String(c.key)} scope="col" class={c.num ? "num" : undefined} aria-sort={on ? (p.sort === "asc" ? "ascending" : "descending") : "none"}>
                        <button type="button" class="sort-btn" data-col={c.key} onClick={() => sortBy(String(c.key))}>
                          {c.label}
                          <span class="sort-ind" aria-hidden="true">
                            {on ? (p.sort === "asc" ? "▲" : "▼") : "↕"}
                          </span>
                        </button>
                      </th>
                    );
                  })}
                </tr>
              </thead>
              <tbody>
                {rows.map((a) => (
                  <tr key={a.ticker}>
                    {COLUMNS.map((c) => (
                      <td key={String(c.key)} class={c.num ? "num" : undefined}>
                        {c.render(a)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
    </main>
  );
}
