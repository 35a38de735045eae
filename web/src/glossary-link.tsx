// A figure's link to its glossary entry: every grade, metric and data
// source the app shows links to /glossary#<id>. The entries live in
// pages/glossary.tsx (GLOSSARY); an id used here must exist there (the
// browser suite checks every link on every page resolves).

/** Ids of the glossary's entries. */
export type TermId =
  | "grade"
  | "score"
  | "forecast"
  | "drawdown"
  | "segment"
  | "median-return"
  | "expected-return"
  | "prediction-error"
  | "median-error"
  | "win-rate"
  | "max-loss"
  | "episodes"
  | "track-record"
  | "horizon"
  | "metric"
  | "data-sources"
  | "synthetic"
  | "stale"
  | "total-return"
  | "cagr"
  | "sharpe"
  | "sortino"
  | "max-drawdown"
  | "volatility"
  | "trades"
  | "costs"
  | "strategies";

/** A small "?" link after a label, to the term's glossary entry. */
export function Help({ term, label }: { term: TermId; label?: string }) {
  return (
    <a class="help" href={`/glossary#${term}`} aria-label={`What is ${label ?? term.replace(/-/g, " ")}?`} title={`What is ${label ?? term.replace(/-/g, " ")}? (glossary)`}>
      ?
    </a>
  );
}
