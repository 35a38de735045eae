import { useEffect, useState } from "preact/hooks";
import { api } from "../api/endpoints";
import { CategoryField } from "../filters";
import { assetUrl, navigate, withQuery, type Location } from "../router";
import { Card, ErrorNote, Loading, SourceBadge, useData, useTitle } from "../lib";
import { isStale, ageText } from "../facts";
import { Help } from "../glossary-link";

const SHOWN = 200;

export function ExplorePage({ loc }: { loc: Location }) {
  useTitle("Explore");
  const category = loc.query.get("category") ?? "";
  const q = loc.query.get("q") ?? "";
  const [text, setText] = useState(q);
  const [more, setMore] = useState(1);
  // Follow the URL (back/forward) without fighting the typing (trailing spaces).
  useEffect(() => {
    if (text.trim() !== q) setText(q);
  }, [q]);
  useEffect(() => setMore(1), [category, q]);

  const list = useData(() => api.assets(category || undefined), [category]);

  const set = (next: { category?: string; q?: string }) =>
    navigate(withQuery("/explore", { category, q, ...next }), { replace: true });

  // The search box filters as you type; the URL follows so the view can be shared.
  const onSearch = (v: string) => {
    setText(v);
    set({ q: v.trim() });
  };

  const needle = q.toLowerCase();
  const rows = (list.data?.assets ?? []).filter(
    (a) => !needle || a.ticker.toLowerCase().includes(needle) || a.name.toLowerCase().includes(needle),
  );
  const shown = rows.slice(0, SHOWN * more);

  return (
    <main class="page">
      <h1>Explore the catalog</h1>
      <Card>
        <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
          <CategoryField id="category" value={category} onChange={set} />
          <div class="field grow">
            <label for="search">Search ticker or name</label>
            <input id="search" type="search" value={text} placeholder="e.g. AAPL or gold" onInput={(e) => onSearch((e.target as HTMLInputElement).value)} />
          </div>
        </form>
        <p class="muted small legend">
          Data source: <SourceBadge source="real" /> real daily prices · <SourceBadge source="ingested" /> loaded by the operator ·{" "}
          <SourceBadge source="synthetic" /> generated, not market data.
        </p>
      </Card>
      {list.loading && <Loading label="Loading the catalog…" />}
      <ErrorNote error={list.error} what="The catalog" />
      {list.data && (
        <Card>
          <p class="muted small" aria-live="polite">
            {rows.length === list.data.total
              ? `${list.data.total} assets`
              : `${rows.length} of ${list.data.total} assets match “${q}”`}
          </p>
          {rows.length > 0 && (
            <div class="table-wrap">
              <table class="table table-cards explore-table">
                <caption class="sr-only">Assets{category ? ` in ${category}` : ""}</caption>
                <thead>
                  <tr>
                    <th scope="col">Ticker</th>
                    <th scope="col">Name</th>
                    <th scope="col">Category</th>
                    <th scope="col">
                      Data source <Help term="data-sources" label="a data source" />
                    </th>
                    <th scope="col">
                      Last price on <Help term="stale" label="an old price" />
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {shown.map((a) => (
                    <tr key={a.ticker}>
                      <td class="card-title">
                        <a class="ticker" href={assetUrl(a.ticker)}>
                          {a.ticker}
                        </a>
                      </td>
                      <td class="card-sub">{a.name}</td>
                      <td class="muted" data-label="Category">
                        {a.category}
                      </td>
                      <td data-label="Data source">
                        <SourceBadge source={a.data_source} />
                      </td>
                      <td class="muted" data-label="Last price on">
                        {a.last_price_date ? (
                          <>
                            <time dateTime={a.last_price_date}>{a.last_price_date}</time>
                            {isStale(a.last_price_date) && (
                              <span class="mark mark-stale" title={`The last price is from ${a.last_price_date}, ${ageText(a.last_price_date)} ago`}>
                                {ageText(a.last_price_date)} old
                              </span>
                            )}
                          </>
                        ) : (
                          "none"
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {rows.length > shown.length && (
            <button type="button" class="btn" onClick={() => setMore((m) => m + 1)}>
              Show {Math.min(SHOWN, rows.length - shown.length)} more
            </button>
          )}
        </Card>
      )}
    </main>
  );
}
