// Small shared pieces: data loading, formatting, messages.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, describe } from "./api/client";
import { utcStamp } from "./facts";

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `fn` whenever `deps` change; the latest call wins. `loading` is true from the
 * render in which `deps` change, so the data shown never passes for the new request's.
 */
export function useData<T>(fn: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean; key: string | null }>({
    data: null,
    error: null,
    loading: true,
    key: null,
  });
  const seq = useRef(0);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const n = ++seq.current;
    setState((s) => ({ data: s.data, error: null, loading: true, key }));
    fn().then(
      (data) => n === seq.current && setState({ data, error: null, loading: false, key }),
      (error) => n === seq.current && setState({ data: null, error, loading: false, key }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, tick]);
  const reload = useCallback(() => setTick((x) => x + 1), []);
  return { data: state.data, error: state.error, loading: state.loading || state.key !== key, reload };
}

/**
 * Copies `text` to the clipboard; where the browser refuses, selects the
 * input `inputId` (when given) so the user can copy it by hand. True when copied.
 */
export async function copyText(text: string, inputId?: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (inputId) (document.getElementById(inputId) as HTMLInputElement | null)?.select();
    return false;
  }
}

export function useTitle(title: string) {
  useEffect(() => {
    document.title = title ? `${title} · Forecast Engine` : "Forecast Engine";
  }, [title]);
}

/** An error sentence; a 401 is handled by the redirect to /login. */
export function ErrorNote({ error, what, id }: { error: unknown; what?: string; id?: string }) {
  if (!error) return null;
  if (error instanceof ApiError && error.status === 401) return null;
  const premium = error instanceof ApiError && error.status === 402;
  return (
    <div class={premium ? "note note-premium" : "note note-error"} role="alert" id={id}>
      {premium && <strong>Premium feature. </strong>}
      {describe(error, what)}
    </div>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Card({ title, children, id }: { title?: string; children: ComponentChildren; id?: string }) {
  return (
    <section class="card" id={id} aria-labelledby={title && id ? `${id}-h` : undefined}>
      {title && <h2 id={id ? `${id}-h` : undefined}>{title}</h2>}
      {children}
    </section>
  );
}

import { compact, int, num, pct, price } from "./format";
export { compact, int, num, pct, price };

/** A timestamp as "2026-11-26 14:03 UTC" (never shifted to the browser's time zone). */
export function when(v: string | null | undefined): string {
  return utcStamp(v);
}

export function GradeBadge({ letter, score }: { letter: string; score?: number }) {
  return (
    <span class={`grade grade-${letter.toLowerCase()}`} title={score !== undefined ? `Score ${score.toFixed(0)} of 100` : undefined}>
      {letter}
      {score !== undefined && <span class="grade-score">{score.toFixed(0)}</span>}
    </span>
  );
}

export function SourceBadge({ source }: { source: string }) {
  const label: Record<string, string> = { real: "real", ingested: "ingested", synthetic: "synthetic" };
  const help: Record<string, string> = {
    real: "Real daily prices shipped with the demo",
    ingested: "Prices loaded with the CLI",
    synthetic: "Deterministic synthetic prices, not market data",
  };
  return (
    <span class={`badge badge-${source}`} title={help[source] ?? source}>
      {label[source] ?? source}
    </span>
  );
}

export function signClass(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v) || v === 0) return "";
  return v > 0 ? "pos" : "neg";
}
