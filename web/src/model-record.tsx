// One line, wherever grades appear in bulk (the ranking, the watchlist, the
// alerts): what the active model's track record on real prices says, in
// words and with its numbers, linking to the track record. It reads
// `GET /web/api/track-record?source=real` for the horizon and metric shown
// (the daily grading run computes it) once per session and horizon — no
// polling — and shows nothing while there is no record (a 503 before the
// first grading run, a 404, no month-end with an IC) or for an account
// without the data routes.
import { useEffect, useState } from "preact/hooks";
import { api, type UniverseTrackRecord } from "./api/endpoints";
import { withQuery } from "./router";
import { isPremium, useSession } from "./session";

/** Answers by "return_period/metric"; a failure is forgotten so a later page view asks again. */
const cache = new Map<string, Promise<UniverseTrackRecord | null>>();

function load(returnPeriod: string, metric: string): Promise<UniverseTrackRecord | null> {
  const key = `${returnPeriod}/${metric}`;
  let p = cache.get(key);
  if (!p) {
    p = api.universeTrackRecord({ source: "real", return_period: returnPeriod, metric }).catch(() => {
      cache.delete(key);
      return null;
    });
    cache.set(key, p);
  }
  return p;
}

import { corr as corrText } from "./format";
export { corrText };

export type Verdict = "better" | "worse" | "undecided";

/** What the record says: its IC's 90 % interval above 0, below 0, or neither (or no interval). */
export function verdictOf(ic: UniverseTrackRecord["ic"]): Verdict {
  const ci = ic.ci && ic.ci.length >= 2 ? ic.ci : null;
  if (ci && ci[0] > 0) return "better";
  if (ci && ci[1] < 0) return "worse";
  return "undecided";
}

/** The sentence, without the versions and the link. */
export function recordSentence(tr: UniverseTrackRecord): string {
  const ic = tr.ic;
  const mean = corrText(ic.mean as number);
  const ci = ic.ci && ic.ci.length >= 2 ? ic.ci : null;
  const interval = ci ? `90 % interval ${corrText(ci[0])} to ${corrText(ci[1])}` : "too few month-ends for an interval";
  const figures = `IC ${mean}, ${interval}`;
  switch (verdictOf(ic)) {
    case "better":
      return `On real prices, higher grades have been followed by higher returns: ${figures}.`;
    case "worse":
      return `On real prices, higher grades have been followed by LOWER returns: ${figures}.`;
    default:
      return `On real prices, grades have not yet told better from worse outcomes: ${figures}.`;
  }
}

interface Props {
  /** The horizon of the grades shown, in days (7, 30, 90, 180 or 365). */
  returnPeriod?: string;
  /** Their metric. */
  metric?: string;
  id?: string;
}

/** The line; nothing while loading, without a record, or for an account without the data routes. */
export function ModelRecord({ returnPeriod = "90", metric = "return", id = "model-record" }: Props) {
  const premium = isPremium(useSession().user);
  const [tr, setTr] = useState<{ key: string; data: UniverseTrackRecord | null } | null>(null);
  const key = `${returnPeriod}/${metric}`;
  useEffect(() => {
    if (!premium) return;
    let live = true;
    load(returnPeriod, metric).then((data) => live && setTr({ key, data }));
    return () => {
      live = false;
    };
  }, [premium, key]);
  const data = tr && tr.key === key ? tr.data : null;
  if (!premium || !data || !data.ic || typeof data.ic.mean !== "number" || !Number.isFinite(data.ic.mean) || data.ic.dates === 0) return null;
  const v = verdictOf(data.ic);
  const href = withQuery("/track-record", { return_period: returnPeriod, metric: metric === "return" ? "" : metric });
  return (
    <p class={`model-record model-record-${v}`} id={id} data-verdict={v} data-ic={data.ic.mean}>
      <span class="mr-sentence">{recordSentence(data)}</span>{" "}
      <span class="mr-meta">
        {data.ic.dates} month-ends of {returnPeriod}-day {metric === "return" ? "" : `${metric} `}grades · scorer {data.scorer_version} · engine{" "}
        {data.engine_version} ·{" "}
      </span>
      <a href={href} class="mr-link">
        Track record
      </a>
    </p>
  );
}
