// The one way the app talks to the server: same-origin fetch with the
// session cookie, JSON in and out, and every failure turned into an
// ApiError carrying a message a person can act on.
import type { components } from "./schema";
import { navigate } from "../router";

export type Schemas = components["schemas"];

/** Prefix of the session-authenticated data routes (`/web/api/...`). */
export const WEB = "/web";

export class ApiError extends Error {
  constructor(
    /** HTTP status; 0 for a network failure. */
    readonly status: number,
    /** The server's `detail`, or our own explanation. */
    readonly detail: string,
    /** Seconds from Retry-After on a 429. */
    readonly retryAfter?: number,
  ) {
    super(detail);
  }
}

export type Query = Record<string, string | number | boolean | undefined | null>;

interface Options {
  query?: Query;
  body?: unknown;
  /** A 401 sends the user to /login?next=… (default true). */
  redirectOn401?: boolean;
  /** Extra request headers (e.g. `Progress-Id` of a long run). */
  headers?: Record<string, string>;
  /** Aborting it closes the request: the server stops the run and frees its slot. */
  signal?: AbortSignal;
}

/** The message of a request the user cancelled. */
export const CANCELLED = "Cancelled: the server stopped the run and freed its slot.";

let onUnauthorized: (() => void) | null = null;
/** Called when a data call meets a 401 (the app forgets the signed-in user). */
export function setUnauthorizedHandler(fn: () => void) {
  onUnauthorized = fn;
}

export function loginUrl(next: string, expired: boolean): string {
  const q = new URLSearchParams();
  if (next && next !== "/" && !next.startsWith("/login")) q.set("next", next);
  if (expired) q.set("expired", "1");
  const s = q.toString();
  return s ? `/login?${s}` : "/login";
}

/** `path` with the query's non-empty values (the data calls' and the download links' one encoding). */
export function urlOf(path: string, query?: Query): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** A prefetched answer is used only this soon after it was asked for. */
const EARLY_MS = 10_000;
/** GETs started before the page that needs them is drawn, by URL; each is used once. */
const early = new Map<string, { res: Promise<Response>; at: number }>();

/**
 * Starts a GET the first page will make, while the app still checks the
 * session: one round trip fewer before the page has its data. The answer
 * waits unread until `request` asks for the same URL (its errors are
 * handled then, or never if it is not asked for).
 */
export function prefetch(path: string, query?: Query) {
  const url = urlOf(path, query);
  const res = fetch(url, { method: "GET", credentials: "same-origin", headers: { Accept: "application/json" } });
  res.catch(() => {});
  early.set(url, { res, at: Date.now() });
}

/**
 * The prefetched answer of a GET of `url`, when one was asked for within
 * EARLY_MS and came back OK. Anything else (a 401 of a session that had
 * ended, a failure) is dropped and the caller asks again.
 */
async function earlyAnswer(method: string, url: string): Promise<Response | undefined> {
  const pre = method === "GET" ? early.get(url) : undefined;
  if (!pre) return undefined;
  early.delete(url);
  if (Date.now() - pre.at >= EARLY_MS) return undefined;
  const res = await pre.res.catch(() => undefined);
  return res?.ok ? res : undefined;
}

export async function request<T>(method: string, path: string, opts: Options = {}): Promise<T> {
  const url = urlOf(path, opts.query);
  const init: RequestInit = {
    method,
    credentials: "same-origin",
    headers: { Accept: "application/json", ...opts.headers },
    signal: opts.signal,
  };
  if (opts.body !== undefined) {
    init.body = JSON.stringify(opts.body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  let res: Response;
  try {
    res = (await earlyAnswer(method, url)) ?? (await fetch(url, init));
  } catch {
    if (opts.signal?.aborted) throw new ApiError(0, CANCELLED);
    throw new ApiError(0, "Could not reach the server — check your connection and try again.");
  }
  return answer<T>(res, opts.redirectOn401 !== false, onUnauthorized);
}

/**
 * What a fetched response means: its JSON (undefined for a 204: the
 * caller's type says `void`), or an ApiError with the server's detail and
 * Retry-After. A 401 with `redirect` calls `notify` and sends the user to
 * sign in, back here after.
 */
export async function answer<T>(res: Response, redirect: boolean, notify?: (() => void) | null): Promise<T> {
  if (res.status === 204) return undefined as T;
  if (res.ok) {
    try {
      return (await res.json()) as T;
    } catch {
      throw new ApiError(500, "Something went wrong on our side — try again.");
    }
  }
  let detail = "";
  try {
    const body = await res.json();
    if (body && typeof body.detail === "string") detail = body.detail;
  } catch {
    /* not JSON */
  }
  const retry = Number(res.headers.get("Retry-After"));
  const err = new ApiError(res.status, detail, Number.isFinite(retry) && retry > 0 ? retry : undefined);
  if (res.status === 401 && redirect) {
    notify?.();
    navigate(loginUrl(location.pathname + location.search, true), { replace: true });
  }
  throw err;
}

/** The sentence to show for an error (the caller places it by its cause). */
export function describe(e: unknown, what = "This"): string {
  if (!(e instanceof ApiError)) return "Something went wrong on our side — try again.";
  switch (e.status) {
    case 0:
      return e.detail;
    case 400:
    case 404:
    case 409:
    case 422:
      return e.detail || "The request was refused.";
    case 401:
      return "Your session expired, sign in again.";
    case 402:
      return `${what} needs the Premium tier. Your account has no API or data access on its current tier — upgrade to Premium to use it.`;
    case 403:
      return e.detail || "The server refused this request.";
    case 429:
      return e.retryAfter
        ? `Too many requests — try again in ${e.retryAfter} s.`
        : "Too many requests — wait a moment and try again.";
    case 504:
      return e.detail || "That took too long — reduce the scope and try again.";
    default:
      return "Something went wrong on our side — try again.";
  }
}

/**
 * Which of `fields` a 400's detail names (the server's messages start with
 * the parameter name); the earliest mention wins.
 */
export function fieldOf(e: unknown, fields: string[]): string | null {
  if (!(e instanceof ApiError) || e.status !== 400) return null;
  let best: string | null = null;
  let at = Infinity;
  for (const f of fields) {
    const m = new RegExp(`(^|[^a-z_])${f}([^a-z_]|$)`).exec(e.detail);
    if (m && m.index < at) {
      at = m.index;
      best = f;
    }
  }
  return best;
}
