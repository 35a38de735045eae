// How much stands behind a drawdown bucket's figures: its independent
// episodes (not its overlapping days), the 90 % interval of its median, how
// often it fell further, how long it took to recover, and the thin-evidence
// warning. The server computes every figure (`segments[].evidence`,
// `current_state.evidence`); null comes from an engine without them, and
// then nothing is shown. /methodology explains each one.
import type { SegmentEvidence, StateEvidence } from "./api/endpoints";
import { int, pct } from "./lib";
import { plural } from "./format";

/** "45 independent episodes (2,523 days)". */
export function episodesText(episodes: number, days?: number | null): string {
  const e = `${plural(episodes, "independent episode")}`;
  return days === undefined || days === null ? e : `${e} (${int(days)} day${days === 1 ? "" : "s"})`;
}

/** "1.84 % to 4.30 %", or "—" without an interval. */
export function ciText(ci: readonly number[] | null | undefined, digits = 2): string {
  if (!ci || ci.length < 2) return "—";
  return `${pct(ci[0], digits)} to ${pct(ci[1], digits)}`;
}

/** "median 67 days; 44 recovered, 1 not yet". */
export function recoveryText(ev: SegmentEvidence): string {
  const done = ev.recovered + ev.unrecovered;
  if (done === 0) return "—";
  const med = ev.recovery_days_median;
  const head = med === null || med === undefined ? "no recovery yet" : `median ${int(med)} day${med === 1 ? "" : "s"}`;
  return `${head}; ${int(ev.recovered)} recovered, ${int(ev.unrecovered)} not yet`;
}

/** The thin-evidence line: shown exactly when the server says `thin`. */
export function ThinNote({ ev, id = "thin-evidence" }: { ev: StateEvidence | null | undefined; id?: string }) {
  if (!ev || !ev.thin) return null;
  return (
    <p class="note note-warn thin-note" role="note" id={id}>
      <strong>Thin evidence:</strong> {ev.reasons.join("; ")}. <a href="/methodology#thin">What this means</a>
    </p>
  );
}
