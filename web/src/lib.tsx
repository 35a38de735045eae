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

/**
 * A secret shown once, just after it was made: the warning (`why` says what
 * to do if it is lost), the value in a read-only input `id` to select or
 * copy, and the button that puts it away (`onDone`).
 */
export function ShownOnce({ id, label, value, why, onDone }: { id: string; label: string; value: string; why: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => setCopied(false), [value]);
  return (
    <>
      <p class="note note-warn">
        <strong>Copy it now — it will not be shown again.</strong> {why}
      </p>
      <div class="copy-row">
        <label for={id} class="sr-only">
          {label}
        </label>
        <input id={id} class="mono" readOnly value={value} onFocus={(e) => (e.target as HTMLInputElement).select()} />
        <button type="button" class="btn btn-primary" onClick={async () => setCopied(await copyText(value, id))}>
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      <button type="button" class="btn btn-ghost" onClick={onDone}>
        I have saved it
      </button>
    </>
  );
}

/**
 * A Delete button that asks first: `question` with "Yes, delete" (disabled
 * while `busy`) and "Keep"; `label` names the group for screen readers.
 */
export function ConfirmDelete({ label, question, busy, describedBy, onDelete }: { label: string; question: string; busy: boolean; describedBy: string; onDelete: () => void }) {
  const [confirming, setConfirming] = useState(false);
  return confirming ? (
    <span class="confirm" role="group" aria-label={label}>
      <span>{question}</span>
      <button type="button" class="btn btn-small btn-danger" disabled={busy} onClick={onDelete}>
        Yes, delete
      </button>
      <button type="button" class="btn btn-small btn-ghost" onClick={() => setConfirming(false)}>
        Keep
      </button>
    </span>
  ) : (
    <button type="button" class="btn btn-small" aria-describedby={describedBy} onClick={() => setConfirming(true)}>
      Delete
    </button>
  );
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
