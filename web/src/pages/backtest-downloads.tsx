// Downloads of a finished run: each table of the answer as CSV, and a
// backtest's tear sheet as one HTML file. Each is the server's own export
// of the same request (`?format=csv&table=…`, `?format=html`); within 15
// minutes of the run the server answers it from the run's own answer and
// charges nothing (decision 0085), later it runs again at the run's cost.
import { useState } from "preact/hooks";
import { WEB } from "../api/client";

type Tab = "result" | "sweep" | "walk-forward" | "monte-carlo";

const PATHS: Record<Tab, string> = {
  result: "/api/backtest",
  sweep: "/api/backtest/sweep",
  "walk-forward": "/api/backtest/walk-forward",
  "monte-carlo": "/api/backtest/monte-carlo",
};

/** What each tab offers: [label, format, table]. */
const OFFERS: Record<Tab, [string, "csv" | "html", string | null][]> = {
  result: [
    ["Equity (CSV)", "csv", "equity"],
    ["Trades (CSV)", "csv", "trades"],
    ["Metrics (CSV)", "csv", "metrics"],
    ["Tear sheet (HTML)", "html", null],
  ],
  sweep: [["Every combination (CSV)", "csv", "rows"]],
  "walk-forward": [
    ["Splits (CSV)", "csv", "splits"],
    ["Out-of-sample equity (CSV)", "csv", "equity"],
  ],
  "monte-carlo": [
    ["Fan chart (CSV)", "csv", "fan"],
    ["Metrics of the run (CSV)", "csv", "metrics"],
  ],
};

/** The file name the server gives, else ours. */
function fileName(res: Response, fallback: string): string {
  const m = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") ?? "");
  return m ? m[1] : fallback;
}

export function Downloads({ tab, body, cost }: { tab: Tab; body: Record<string, unknown>; cost: number }) {
  const [status, setStatus] = useState<string>("");
  const [busy, setBusy] = useState<string | null>(null);
  const fetchOne = async (label: string, format: string, table: string | null) => {
    setBusy(label);
    setStatus(`Preparing ${label}…`);
    const q = new URLSearchParams({ format });
    if (table) q.set("table", table);
    try {
      const res = await fetch(`${WEB}${PATHS[tab]}?${q}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: format === "html" ? "text/html" : "text/csv" },
        body: JSON.stringify(body),
      });
      if (!res.ok) {
        let detail = "";
        try {
          detail = (await res.json()).detail ?? "";
        } catch {
          /* not JSON */
        }
        const retry = res.headers.get("Retry-After");
        setStatus(
          res.status === 429 && retry
            ? `Too many requests — try again in ${retry} s.`
            : detail || "The download failed — try again.",
        );
        return;
      }
      const blob = await res.blob();
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = fileName(res, `${tab}.${format}`);
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setStatus(`Downloaded ${a.download}.`);
    } catch {
      setStatus("Could not reach the server — check your connection and try again.");
    } finally {
      setBusy(null);
    }
  };
  return (
    <section class="card downloads" aria-labelledby="downloads-title">
      <h2 id="downloads-title">Download</h2>
      <p class="muted small">
        Each file is the server's export of this same run. For 15 minutes after the run it is free; later it runs again and costs {cost} quota units, as the run did.
      </p>
      <div class="download-buttons">
        {OFFERS[tab].map(([label, format, table]) => (
          <button type="button" class="btn btn-small" disabled={busy !== null} onClick={() => fetchOne(label, format, table)}>
            {label}
          </button>
        ))}
      </div>
      <p class="small" role="status" id="download-status">
        {status}
      </p>
    </section>
  );
}
