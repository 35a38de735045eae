import { useEffect, useRef, useState } from "preact/hooks";
import { describe } from "../api/client";
import { api, type MentionMatches, type TickerMatch, type WatchItem } from "../api/endpoints";

type Chosen = Pick<WatchItem, "ticker" | "name" | "category">;
import { navigate } from "../router";
import { Card, ErrorNote, Loading, useTitle } from "../lib";

interface Found {
  query: string;
  /** One entry per asset the text names, in order (the server's `mentions`). */
  mentions: MentionMatches[];
  /** What the search did, e.g. "Added 2: AAPL, TSLA. Choose for “appel”." */
  status: string;
}

const NOTHING = "Nothing matched. Try another wording or the ticker.";

const quoted = (xs: string[]) => xs.map((x) => `“${x}”`).join(", ");

/** The status line of one search: what went into the selection at once and
 * which mentions wait for a choice. */
function statusText(added: string[], already: string[], choose: string[], unmatched: string[]): string {
  if (added.length + already.length + choose.length === 0) return NOTHING;
  const parts: string[] = [];
  if (added.length) parts.push(`Added ${added.length}: ${added.join(", ")}.`);
  if (already.length) parts.push(`Already selected: ${already.join(", ")}.`);
  if (choose.length) parts.push(`Choose for ${quoted(choose)}.`);
  if (unmatched.length) parts.push(`Nothing matched ${quoted(unmatched)}.`);
  return parts.join(" ");
}

/** The calibrated confidence in words: of past answers this confident, about
 * this share were right. */
function Likely({ confidence }: { confidence: number }) {
  const p = Math.round(confidence * 100);
  return <span title={`Of past answers this confident, about ${p} % were right.`}>{p} % likely</span>;
}

const SKIPPED = "fe-onboarding-skipped";

/** Whether the user left onboarding without choosing assets in this tab (the watchlist then stays empty, not a loop back). */
export function skippedOnboarding(): boolean {
  try {
    return sessionStorage.getItem(SKIPPED) === "1";
  } catch {
    return false;
  }
}

function skipOnboarding() {
  try {
    sessionStorage.setItem(SKIPPED, "1");
  } catch {
    /* storage refused: the watchlist page may send the user back once more */
  }
}

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
  const [savedCount, setSavedCount] = useState(0);

  useEffect(() => {
    api.watchlist().then(
      (w) => {
        setSelected(w.tickers);
        setSavedCount(w.tickers.length);
        setLoaded(true);
      },
      (e) => {
        setLoadError(e);
        setLoaded(true);
      },
    );
  }, []);

  // The selection as it is when a search answers (the closure's may be older).
  const selectedNow = useRef(selected);
  selectedNow.current = selected;

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
      // Each asset the text names, with its own matches.
      const mentions: MentionMatches[] = r.mentions;
      // A mention the server is sure of goes straight into the selection (it
      // can still be removed below); the others wait for a choice.
      const have = new Set(selectedNow.current.map((s) => s.ticker));
      const toAdd: Chosen[] = [];
      const already: string[] = [];
      const choose: string[] = [];
      const unmatched: string[] = [];
      for (const m of mentions) {
        const best = m.matches[0];
        if (!best) unmatched.push(m.text);
        else if (!m.sure) choose.push(m.text);
        else if (have.has(best.ticker)) {
          if (!already.includes(best.ticker) && !toAdd.some((c) => c.ticker === best.ticker)) already.push(best.ticker);
        } else {
          have.add(best.ticker);
          toAdd.push({ ticker: best.ticker, name: best.name, category: best.category });
        }
      }
      const status = statusText(toAdd.map((c) => c.ticker), already, choose, unmatched);
      setFound((f) => [{ query: q, mentions, status }, ...f.filter((x) => x.query !== q)]);
      if (toAdd.length) setSelected((s) => [...s, ...toAdd.filter((c) => !s.some((x) => x.ticker === c.ticker))]);
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
  const dismiss = (q: string, mention: number, t: string) =>
    setFound((f) =>
      f.map((x) =>
        x.query === q
          ? { ...x, mentions: x.mentions.map((m, i) => (i === mention ? { ...m, matches: m.matches.filter((y) => y.ticker !== t) } : m)) }
          : x,
      ),
    );

  const save = async () => {
    setSaving(true);
    setSaveError(null);
    try {
      await api.saveWatchlist(selected.map((s) => s.ticker));
      if (selected.length === 0) skipOnboarding();
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
        Describe it in your own words — a company, a brand, a coin, an index, a whole sentence such as “I own apple, tesla
        and some bitcoin”, or a list such as “bitcoin ethereum solana”. Each asset we are sure of goes into your selection at
        once; for the others we suggest up to three matches to confirm or dismiss. Remove anything you don’t want below, and
        search as often as you like.
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
              <p class={`match-status${f.status === NOTHING ? " muted" : ""}`}>{f.status}</p>
              {f.mentions.map((mt, i) =>
                mt.matches.length === 0 ? null : (
                  <div class="mention" key={i}>
                    {f.mentions.length > 1 && <h3 class="mention-text">“{mt.text}”</h3>}
                    <ul class="chips">
                      {mt.matches.map((m) => (
                        <li key={m.ticker} class={`chip chip-suggest${isSelected(m.ticker) ? " chip-done" : ""}`}>
                          <span class="chip-text">
                            <strong>{m.ticker}</strong> {m.name}
                            <span class="muted small">
                              {" "}
                              · {m.category} · <Likely confidence={m.confidence} />
                            </span>
                          </span>
                          {isSelected(m.ticker) ? (
                            <span class="chip-state">Added</span>
                          ) : (
                            <>
                              <button type="button" class="btn btn-small btn-primary" onClick={() => add(m)} aria-label={`Add ${m.ticker} (${m.name})`}>
                                Add
                              </button>
                              <button
                                type="button"
                                class="btn btn-small btn-ghost"
                                onClick={() => dismiss(f.query, i, m.ticker)}
                                aria-label={`Dismiss ${m.ticker}`}
                              >
                                Dismiss
                              </button>
                            </>
                          )}
                        </li>
                      ))}
                    </ul>
                  </div>
                ),
              )}
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
          <button type="button" class="btn btn-primary" onClick={save} disabled={saving || !loaded || (selected.length === 0 && savedCount === 0)}>
            {saving ? "Saving…" : selected.length === 0 && savedCount > 0 ? "Save an empty watchlist" : `Save watchlist (${selected.length})`}
          </button>
          <button
            type="button"
            class="btn btn-ghost"
            onClick={() => {
              if (savedCount === 0) skipOnboarding();
              navigate("/");
            }}
          >
            {savedCount === 0 ? "Skip for now" : "Cancel"}
          </button>
        </div>
        {loaded && selected.length === 0 && savedCount === 0 && (
          <p class="muted small" id="onboarding-hint">
            Pick at least one asset to save a watchlist, or skip: you can add assets later with the Watch button of any asset page.
          </p>
        )}
      </Card>
    </main>
  );
}
