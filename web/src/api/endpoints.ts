// Typed calls, one per route the app uses. Shapes come from the generated
// OpenAPI types (schema.d.ts, `npm run gen:types`).
import { request, WEB, type Schemas } from "./client";

export type Me = Schemas["Me"];
export type AssetItem = Schemas["AssetItem"];
export type AssetList = Schemas["AssetListResponse"];
export type AssetInfo = Schemas["AssetInfo"];
/** Quantiles of all of a bucket's confirmed outcomes (p50 = `static_median_return`). */
export interface OutcomeQuantiles {
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
}
// The intersections below name fields the server adds in issue 24
// (`outcome_quantiles`, `time_series_rows`, `max_points`, `currency`); they
// stay correct once schema.d.ts documents them (`make web-types`).
export type Segment = Schemas["SegmentBody"] & { outcome_quantiles?: OutcomeQuantiles | null };
export type AnalysisMetadata = Schemas["AnalysisMetadata"] & {
  /** Rows of `time_series` before thinning for drawing. */
  time_series_rows?: number;
  /** The `max_points` asked for (null without it). */
  max_points?: number | null;
};
export type Analysis = Omit<Schemas["AnalysisResponse"], "segments" | "metadata"> & { segments: Segment[]; metadata: AnalysisMetadata };
export type Verdict = Omit<Schemas["VerdictResponse"], "metadata"> & { metadata: Schemas["VerdictMetadata"] & { currency?: string | null } };
export type Ranking = Schemas["RankingResponse"];
/** A bucket's independent evidence (`segments[].evidence`; null from an engine without it). */
export type SegmentEvidence = Schemas["SegmentEvidenceBody"];
/** How much stands behind the current bucket (`current_state.evidence`). */
export type StateEvidence = Schemas["StateEvidenceBody"];
/** `GET /web/api/track-record/{ticker}`: the grade the engine would have given at each past month-end. */
export type TrackRecord = Schemas["TrackRecordResponse"];
export type TrackRecordRow = Schemas["TrackRecordRow"];
export type GradeOutcome = Schemas["GradeOutcome"];

/** A mean over month-ends with its 90 % interval (moving-block bootstrap; null with too little data). */
export type Estimate = Schemas["MeanWithInterval"];
/**
 * `GET /web/api/track-record`: how the grades of the whole universe turned
 * out, computed by the daily grading run (503 with a `detail` until one has).
 */
export type UniverseTrackRecord = Schemas["UniverseTrackRecordResponse"];
export type RankedAsset = Schemas["RankedAsset"];
export type BacktestRequest = Schemas["BacktestRequest"];
export type BacktestResponse = Schemas["BacktestResponse"];
export type StrategyList = Schemas["StrategyList"];
export type KeyRecord = Schemas["KeyRecord"];
export type CreatedKey = Schemas["CreatedKey"];
export type TickerMatch = Schemas["TickerMatch"];
export type MatchResponse = Schemas["MatchResponse"];
export type MentionMatches = Schemas["MentionMatches"];

export type WatchItem = Schemas["WatchlistItem"];
export type Watchlist = Schemas["Watchlist"];

/** Analysis parameters as they travel in a query string. */
export interface AnalysisParams {
  return_period?: string;
  num_segments?: string;
  decay_factor?: string;
  metric?: string;
  start_date?: string;
  end_date?: string;
}

const t = (ticker: string) => encodeURIComponent(ticker);

/** A long run's progress, as GET /api/progress/{id} answers it. */
export type RunProgress = Schemas["ProgressBody"];

/** What a long run's request carries so that it can be followed and cancelled. */
export interface RunOptions {
  /** Sent as `Progress-Id`. */
  progressId: string;
  signal: AbortSignal;
}

/** The request options of `run`. */
export function runOpts(run?: RunOptions) {
  return run ? { headers: { "Progress-Id": run.progressId }, signal: run.signal } : {};
}

export const api = {
  me: () => request<Me>("GET", "/auth/me", { redirectOn401: false }),
  login: (email: string, password: string) =>
    request<Me>("POST", "/auth/login", { body: { email, password }, redirectOn401: false }),
  logout: () => request<{ ok: boolean }>("POST", "/auth/logout", { redirectOn401: false }),

  assets: (category?: string) => request<AssetList>("GET", `${WEB}/api/assets`, { query: { category } }),
  assetInfo: (ticker: string) => request<AssetInfo>("GET", `${WEB}/api/asset-info/${t(ticker)}`),
  /**
   * `maxPoints`: thin the per-row series for drawing (100..=20000); `window`: send only the rows
   * between these days (YYYY-MM-DD), thinned to `maxPoints`. The statistics are the same.
   */
  analysis: (ticker: string, q: AnalysisParams, maxPoints?: number, window?: { from: string; to: string }) =>
    request<Analysis>("GET", `${WEB}/api/analysis/${t(ticker)}`, {
      query: { ...q, max_points: maxPoints, draw_from: window?.from, draw_to: window?.to },
    }),
  verdict: (ticker: string, q: AnalysisParams = {}) =>
    request<Verdict>("GET", `${WEB}/api/analysis/${t(ticker)}/verdict`, { query: { ...q } }),
  ranking: (q: Record<string, string | undefined>) => request<Ranking>("GET", `${WEB}/api/ranking`, { query: q }),
  /** One asset's grade at every past month-end and what followed (1 quota unit). */
  trackRecord: (ticker: string, q: { return_period?: string; metric?: string }) =>
    request<TrackRecord>("GET", `${WEB}/api/track-record/${t(ticker)}`, { query: { ...q } }),
  /** The whole universe's track record, from the latest grading run. */
  universeTrackRecord: (q: Record<string, string | undefined>) => request<UniverseTrackRecord>("GET", `${WEB}/api/track-record`, { query: q }),
  strategies: () => request<StrategyList>("GET", `${WEB}/api/strategies`),
  backtest: (body: BacktestRequest, run?: RunOptions) => request<BacktestResponse>("POST", `${WEB}/api/backtest`, { body, ...runOpts(run) }),
  /** How far a run started with `Progress-Id: id` has come (free; 404 once it has ended). */
  progress: (id: string) => request<RunProgress>("GET", `${WEB}/api/progress/${encodeURIComponent(id)}`, { redirectOn401: false }),

  watchlist: () => request<Watchlist>("GET", `${WEB}/watchlist`),
  saveWatchlist: (tickers: string[]) => request<Watchlist>("PUT", `${WEB}/watchlist`, { body: { tickers } }),

  keys: () => request<KeyRecord[]>("GET", "/api/keys"),
  createKey: (name: string) => request<CreatedKey>("POST", "/api/keys", { body: { name } }),
  revokeKey: (id: string) => request<{ ok: boolean }>("DELETE", "/api/keys", { body: { id } }),

  matchTickers: (text: string) => request<MatchResponse>("POST", "/api/match-tickers", { body: { text } }),
};

export const CATEGORIES = [
  "US Stocks",
  "ETFs",
  "BMV",
  "Crypto",
  "Commodities",
  "Forex",
  "Indices",
  "UK Stocks",
  "European Stocks",
  "Japanese Stocks",
  "Canadian Stocks",
  "Brazilian Stocks",
  "HK/China Stocks",
  "Indian Stocks",
  "Australian Stocks",
  "Korean Stocks",
  "CS2 Cases",
] as const;
