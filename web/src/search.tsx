// Finding an asset by ticker or name: the header's search field and the
// not-found page's. A combobox (ARIA 1.2: an input that owns a listbox of
// suggestions): type, ↓/↑ to move through the suggestions, Enter to open
// one. Enter on an exact ticker goes straight to its page; otherwise the
// first suggestion's, or the catalog filtered by the text.
//
// Premium accounts search the catalog (`GET /web/api/assets`, loaded once
// on first use and kept for the session). The catalog is Premium data, so
// other tiers ask the ticker matcher (`POST /api/match-tickers`, which any
// signed-in user may call, a few times a minute) when they press Enter.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, describe } from "./api/client";
import { api, type AssetItem } from "./api/endpoints";
import { assetUrl, navigate, withQuery } from "./router";

export interface Found {
  ticker: string;
  name: string;
  category: string;
  /** Where its prices come from, when known (the catalog says). */
  data_source?: string;
}

let catalog: Promise<AssetItem[]> | null = null;
/** The catalog, fetched once per page load (a failure is retried on the next use). */
function loadCatalog(): Promise<AssetItem[]> {
  if (!catalog) {
    catalog = api.assets().then(
      (r) => r.assets,
      (e) => {
        catalog = null;
        throw e;
      },
    );
  }
  return catalog;
}

/**
 * Up to `n` assets whose ticker or name contains `text`, best first: exact
 * ticker, ticker prefix, a name starting with the text as a whole word
 * ("Gold" before "Goldman Sachs"), a name prefix, a word inside the name,
 * the rest. Within a class, market prices before generated ones, then the
 * shorter name ("Bitcoin USD" before "Bitcoin Cash USD"), then the ticker.
 */
export function findAssets(all: Found[], text: string, n = 8): Found[] {
  const q = text.trim().toLowerCase();
  if (!q) return [];
  const scored: [number, Found][] = [];
  for (const a of all) {
    const t = a.ticker.toLowerCase();
    const name = a.name.toLowerCase();
    let s: number;
    if (t === q) s = 0;
    else if (t.startsWith(q)) s = 1;
    else if (name.startsWith(q) && !/[a-z0-9]/.test(name.charAt(q.length))) s = 2;
    else if (name.startsWith(q)) s = 3;
    else if (name.includes(` ${q}`)) s = 4;
    else if (t.includes(q)) s = 5;
    else if (name.includes(q)) s = 6;
    else continue;
    scored.push([s, a]);
  }
  const generated = (a: Found) => (a.data_source === "synthetic" ? 1 : 0);
  scored.sort(
    (x, y) =>
      x[0] - y[0] ||
      generated(x[1]) - generated(y[1]) ||
      x[1].name.length - y[1].name.length ||
      x[1].ticker.length - y[1].ticker.length ||
      x[1].ticker.localeCompare(y[1].ticker),
  );
  return scored.slice(0, n).map((x) => x[1]);
}

/**
 * The search field. `premium` chooses the catalog (suggestions as you type)
 * or the matcher (on Enter). `onGo` runs after it navigates (e.g. to clear).
 */
export function AssetSearch({
  id,
  premium,
  label = "Find an asset",
  showLabel = false,
  placeholder,
  initial = "",
}: {
  id: string;
  premium: boolean;
  label?: string;
  showLabel?: boolean;
  placeholder?: string;
  initial?: string;
}) {
  const [text, setText] = useState(initial);
  const [all, setAll] = useState<Found[] | null>(null);
  const [options, setOptions] = useState<Found[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [status, setStatus] = useState("");
  // A message worth seeing (no match, an error) is also shown under the field.
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const seq = useRef(0);
  const listId = `${id}-list`;

  const ensureCatalog = () => {
    if (!premium || all) return;
    loadCatalog().then(
      (a) => setAll(a),
      (e) => {
        if (e instanceof ApiError && e.status === 402) return;
        setStatus(describe(e, "The catalog"));
        setNote(describe(e, "The catalog"));
      },
    );
  };

  // Suggestions follow the text (Premium: from the catalog).
  useEffect(() => {
    if (!premium) return;
    if (!all) return;
    const found = findAssets(all, text);
    setOptions(found);
    setActive(-1);
    setOpen(found.length > 0 && text.trim() !== "" && document.activeElement?.id === id);
    const none = text.trim() !== "" && found.length === 0 ? `No asset matches “${text.trim()}”.` : "";
    setNote(document.activeElement?.id === id ? none : "");
    setStatus(
      text.trim() === ""
        ? ""
        : none ||
            `${found.length === 8 ? "8 or more" : found.length} suggestion${found.length === 1 ? "" : "s"}; use the arrow keys to choose, Enter to open.`,
    );
  }, [text, all, premium]);

  const reset = () => {
    setText("");
    setOptions([]);
    setOpen(false);
    setActive(-1);
    setStatus("");
    setNote("");
  };

  const go = (ticker: string) => {
    reset();
    navigate(assetUrl(ticker));
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const q = text.trim();
    if (active >= 0 && options[active]) return go(options[active].ticker);
    if (!q) return;
    const exact = (list: Found[]) => list.find((a) => a.ticker.toLowerCase() === q.toLowerCase());
    if (premium) {
      const list = all ?? (await loadCatalog().catch(() => null));
      const hit = list && exact(list);
      if (hit) return go(hit.ticker);
      reset();
      navigate(withQuery("/explore", { q }));
      return;
    }
    // Other tiers: the matcher.
    const n = ++seq.current;
    setBusy(true);
    setStatus("Searching…");
    try {
      const r = await api.matchTickers(q);
      if (n !== seq.current) return;
      const hit = exact(r.matches);
      if (hit) return go(hit.ticker);
      setOptions(r.matches);
      setActive(r.matches.length > 0 ? 0 : -1);
      setOpen(r.matches.length > 0);
      setNote(r.matches.length === 0 ? `No asset matches “${q}”.` : "");
      setStatus(
        r.matches.length === 0
          ? `No asset matches “${q}”.`
          : `${r.matches.length} match${r.matches.length === 1 ? "" : "es"} for “${q}”; press Enter to open the first, or use the arrow keys.`,
      );
    } catch (err) {
      if (n === seq.current) {
        setStatus(describe(err, "The ticker matcher"));
        setNote(describe(err, "The ticker matcher"));
      }
    } finally {
      if (n === seq.current) setBusy(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (options.length === 0) return;
      e.preventDefault();
      setOpen(true);
      const d = e.key === "ArrowDown" ? 1 : -1;
      setActive((a) => {
        // -1 (the text itself) → 0 … n−1 → -1, and back.
        const next = a + d;
        if (next < -1) return options.length - 1;
        if (next >= options.length) return -1;
        return next;
      });
    } else if (e.key === "Escape") {
      if (open || note) {
        e.preventDefault();
        setOpen(false);
        setActive(-1);
        setNote("");
      } else if (text) {
        e.preventDefault();
        reset();
      }
    }
  };

  const optId = (i: number) => `${id}-opt-${i}`;
  const shown = open && options.length > 0;

  return (
    <form class="asset-search" role="search" aria-label={label} onSubmit={submit}>
      <label for={id} class={showLabel ? "search-label" : "sr-only"}>
        {label}
      </label>
      <div class="search-box">
        <input
          id={id}
          type="search"
          role="combobox"
          autoComplete="off"
          spellcheck={false}
          aria-autocomplete="list"
          aria-expanded={shown}
          aria-controls={listId}
          aria-activedescendant={shown && active >= 0 ? optId(active) : undefined}
          aria-describedby={`${id}-status`}
          placeholder={placeholder ?? "Ticker or name"}
          value={text}
          onFocus={() => {
            ensureCatalog();
            if (options.length > 0 && text.trim()) setOpen(true);
          }}
          onBlur={() => {
            setOpen(false);
            setNote("");
          }}
          onInput={(e) => {
            setText((e.target as HTMLInputElement).value);
            if (!premium) {
              // No suggestions as you type: the matcher answers on Enter.
              const v = (e.target as HTMLInputElement).value.trim();
              setOptions([]);
              setOpen(false);
              setActive(-1);
              setStatus("");
              setNote(v ? "Press Enter to search." : "");
            }
          }}
          onKeyDown={onKeyDown}
        />
        <ul id={listId} role="listbox" aria-label="Matching assets" class="search-list" hidden={!shown}>
          {options.map((a, i) => (
            <li
              key={a.ticker}
              id={optId(i)}
              role="option"
              aria-selected={i === active}
              class={i === active ? "active" : undefined}
              // Keep the focus in the field; the click opens the asset.
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => go(a.ticker)}
            >
              <span class="ticker">{a.ticker}</span> <span class="search-name">{a.name}</span>{" "}
              <span class="search-cat">{a.category}</span>
            </li>
          ))}
        </ul>
        {note && !shown && <p class="search-note">{note}</p>}
      </div>
      <button type="submit" class="btn btn-small search-go" disabled={busy}>
        Go
      </button>
      <span id={`${id}-status`} class="sr-only" role="status" aria-live="polite">
        {status}
      </span>
    </form>
  );
}
