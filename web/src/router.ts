// A tiny History-API router: every page has its own URL, its parameters
// live in the query string, and in-app links navigate without a reload.
import { useEffect, useState } from "preact/hooks";

type Listener = () => void;
const listeners = new Set<Listener>();

export interface Location {
  path: string;
  query: URLSearchParams;
  /** path + search, e.g. for `?next=`. */
  href: string;
  /** The #fragment, "" without one (e.g. a glossary entry). */
  hash: string;
}

function current(): Location {
  return {
    path: location.pathname,
    query: new URLSearchParams(location.search),
    href: location.pathname + location.search,
    hash: location.hash,
  };
}

function notify() {
  for (const l of listeners) l();
}

/** Goes to `url` (same origin, may end with a #fragment); `replace` keeps the history entry. */
export function navigate(url: string, opts: { replace?: boolean } = {}) {
  if (url === location.pathname + location.search + location.hash) {
    if (!opts.replace) return;
  }
  if (opts.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  window.scrollTo(0, 0);
  notify();
}

/** Builds `path?query`, leaving out empty values. */
export function withQuery(path: string, params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** The URL of an asset's page (the ticker is URL-encoded: ^GSPC → %5EGSPC). */
export function assetUrl(ticker: string, query = ""): string {
  return `/assets/${encodeURIComponent(ticker)}${query}`;
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return loc;
}

/** In-app links: a plain click on a same-origin <a href> navigates in place. */
export function interceptLinks() {
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.("a");
    if (!a || a.target || a.hasAttribute("download")) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin) return;
    if (url.pathname.startsWith("/api/") || url.pathname.startsWith("/static/")) return;
    // A #fragment on this very page: the browser scrolls to it (and focuses it).
    if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
    e.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  });
}
