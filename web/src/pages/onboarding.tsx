import { useEffect, useState } from "preact/hooks";
import { describe } from "../api/client";
import { api, type TickerMatch, type WatchItem } from "../api/endpoints";

type Chosen = Pick<WatchItem, "ticker" | "name" | "category">;
import { navigate } from "../router";
import { Card, ErrorNote, Loading, useTitle } from "../lib";

interface Found {
  query: string;
  matches: TickerMatch[];
}

/** Whether `q` reads as a list of holdings ("I own apple, tesla and some
 * bitcoin"): the matcher then answers one asset per mention. */
function readsAsList(q: string): boolean {
  return /[,;:+&]|\band\b|\bplus\b/i.test(q);
}

/** Confidence from which an asset of a sentence goes straight into the
 * selection. */
const SURE = 0.8;

export function OnboardingPage() {
  useTitle("What do you follow?");
  const [text, setText] = useState("");
  const [searching, setSearching] = useState(false);
  const [searchError, setSearchError] = useState<unknown>(null);
  const [found, setFound] = useState<Found[]>([]);
  const [selected, setSelected] = useState<Chosen[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<unknown>(null);

  useEffect(() => {
    api.watchlist().then(
      (w) => {
        setSelected(w.tickers);
        setLoaded(true);
      },
      (e) => {
        setLoadError(e);
        setLoaded(true);
      },
    );
  }, []);

  const isSelected = (t: string) => selected.some((s) => s.ticker === t);

  const search = async (e: Event) => {
    e.preventDefault();
    const q = text.trim();
    if (!q) {
      setSearchError(new Error("empty"));
      return;
    }
    setSearching(true);
    setSearchError(null);
    try {
      const r = await api.matchTickers(q);
      setFound((f) => [{ query: q, matches: r.matches }, ...f.filter((x) => x.query !== q)]);
      // A whole sentence naming several assets fills the chips at once
      // (each can still be removed below).
      const sure = r.matches.filter((m) => m.confidence >= SURE);
      if (readsAsList(q) && sure.length >= 2) {
        setSelected((s) => [
          ...s,
          ...sure
            .filter((m) => !s.some((x) => x.ticker === m.ticker))
            .map((m) => ({ ticker: m.ticker, name: m.name, category: m.category })),
        ]);
      }
      setText("");
    } catch (err) {
      setSearchError(err);
    } finally {
      setSearching(false);
    }
  };

  const add = (m: TickerMatch) => {
    if (!isSelected(m.ticker)) setSelected((s) => [...s, { ticker: m.ticker, name: m.name, category: m.category }]);
  };
  const remove = (t: string) => setSelected((s) => s.filter((x) => x.ticker !== t));
  const dismiss = (q: string, t: string) =>
    setFound((f) => f.map((x) => (x.query === q ? { ...x, matches: x.matches.filter((m) => m.ticker !== t) } : x)));

  const save = async () => {
    setSaving(true);
    setSaveError(null);
    try {
      await api.saveWatchlist(selected.map((s) => s.ticker));
      navigate("/");
    } catch (err) {
      setSaveError(err);
      setSaving(false);
    }
  };

  const searchMsg =
    searchError instanceof Error && searchError.message === "empty"
      ? "Type a company, coin, index or ticker first."
      : searchError
        ? describe(searchError, "Matching")
        : null;

  return (
    <main class="page narrow">
      <h1>What do you hold or follow?</h1>
      <p class="lead">
        Describe it in your own words — a company, a brand, a coin, an index, or a whole sentence such as “I own apple, tesla
        and some bitcoin”. We suggest up to three matching assets for each search; confirm the ones you mean (a sentence naming
        several fills the selection at once). Search as often as you like.
      </p>
      <Card>
        <form class="search-form" onSubmit={search}>
          <div class="field grow">
            <label for="match-text">Company, coin, index or ticker</label>
            <input
              id="match-text"
              type="text"
              maxLength={500}
              placeholder="e.g. apple, bitcoin, the S&P 500"
              value={text}
              aria-describedby={searchMsg ? "match-error" : undefined}
              aria-invalid={searchMsg ? true : undefined}
              onInput={(e) => setText((e.target as HTMLInputElement).value)}
            />
          </div>
          <button type="submit" class="btn btn-primary" disabled={searching}>
            {searching ? "Searching…" : "Find"}
          </button>
        </form>
        {searchMsg && (
          <p class="note note-error" role="alert" id="match-error">
            {searchMsg}
          </p>
        )}
        <div aria-live="polite">
          {found.map((f) => (
            <div class="suggestions" key={f.query}>
              <h2 class="h3">
                Suggestions for “{f.query}”
              </h2>
              {f.matches.length === 0 && <p class="muted">Nothing matched. Try another wording or the ticker.</p>}
              <ul class="chips">
                {f.matches.map((m) => (
                  <li key={m.ticker} class={`chip chip-suggest${isSelected(m.ticker) ? " chip-done" : ""}`}>
                    <span class="chip-text">
                      <strong>{m.ticker}</strong> {m.name}
                      <span class="muted small"> · {m.category} · {Math.round(m.confidence * 100)} % match</span>
                    </span>
                    {isSelected(m.ticker) ? (
                      <span class="chip-state">Added</span>
                    ) : (
                      <>
                        <button type="button" class="btn btn-small btn-primary" onClick={() => add(m)} aria-label={`Add ${m.ticker} (${m.name})`}>
                          Add
                        </button>
                        <button type="button" class="btn btn-small btn-ghost" onClick={() => dismiss(f.query, m.ticker)} aria-label={`Dismiss ${m.ticker}`}>
                          Dismiss
                        </button>
                      </>
                    )}
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </div>
      </Card>

      <Card title="Your selection" id="selection">
        {!loaded && <Loading label="Loading your watchlist…" />}
        <ErrorNote error={loadError} what="The watchlist" />
        {loaded && selected.length === 0 && <p class="muted">Nothing selected yet.</p>}
        <ul class="chips" aria-label="Selected assets">
          {selected.map((s) => (
            <li key={s.ticker} class="chip chip-selected">
              <span class="chip-text">
                <strong>{s.ticker}</strong> {s.name}
              </span>
              <button type="button" class="chip-remove" onClick={() => remove(s.ticker)} aria-label={`Remove ${s.ticker}`}>
                ×
              </button>
            </li>
          ))}
        </ul>
        <ErrorNote error={saveError} what="The watchlist" />
        <div class="actions">
          <button type="button" class="btn btn-primary" onClick={save} disabled={saving || !loaded}>
            {saving ? "Saving…" : `Save watchlist (${selected.length})`}
          </button>
          <a href="/" class="btn btn-ghost">
            Cancel
          </a>
        </div>
      </Card>
    </main>
  );
}
