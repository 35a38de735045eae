// A long run's progress bar and its Cancel button. The page starts the run
// with a fresh Progress-Id and an AbortController (`startRun`); this polls
// GET /web/api/progress/{id} (free) every 300 ms while the run lasts and
// says what is being done. Cancel aborts the request: the server stops the
// run and frees its slot at once.
import { useEffect, useState } from "preact/hooks";
import { api, type RunOptions, type RunProgress } from "./api/endpoints";
import { int } from "./format";

/** A run the page can follow and cancel. */
export interface Run extends RunOptions {
  cancel: () => void;
}

let runs = 0;

/** A new run's id and abort handle. */
export function startRun(): Run {
  const c = new AbortController();
  const progressId = `run-${Date.now().toString(36)}-${++runs}`;
  return { progressId, signal: c.signal, cancel: () => c.abort() };
}

/** What the phase means, in words. */
function said(p: RunProgress | null): string {
  if (!p) return "Starting…";
  const of = `${int(p.done)} of ${int(p.total)}`;
  switch (p.phase) {
    case "waiting":
      return "Waiting for a turn of the server's heavy-work budget…";
    case "loading":
      return p.total ? `Loading histories and computing signals: ${of} assets` : "Loading histories…";
    case "running":
      return p.total ? `Running the strategy: day ${of}` : "Running the strategy…";
    case "combinations":
      return p.total ? `Combinations done: ${of}` : "Running the combinations…";
    case "simulating":
      return "Simulating the paths…";
    default:
      return "Working…";
  }
}

export function RunProgressBar({ run, label }: { run: Run; label: string }) {
  const [p, setP] = useState<RunProgress | null>(null);
  useEffect(() => {
    let live = true;
    const poll = () =>
      api.progress(run.progressId).then(
        (x) => live && setP(x),
        () => {},
      );
    const timer = setInterval(poll, 300);
    poll();
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [run.progressId]);
  const fraction = p?.fraction ?? null;
  return (
    <div class="run-progress card" id="run-progress" role="status" aria-live="polite" data-phase={p?.phase ?? "starting"}>
      <p class="run-progress-label">{label}</p>
      <progress max={1} value={fraction ?? undefined} aria-label={said(p)} />
      <p class="small">
        <span id="run-progress-said">{said(p)}</span>
        {p && <span class="muted"> · {(p.elapsed_ms / 1000).toFixed(1)} s</span>}
      </p>
      <button type="button" class="btn" id="run-cancel" onClick={run.cancel}>
        Cancel
      </button>
    </div>
  );
}
