// A figure's link to its glossary entry: every grade, metric and data
// source the app shows links to /glossary#<id>. The entries live in
// pages/glossary.tsx (GLOSSARY); an id used here must exist there (the
// browser suite checks every link on every page resolves). A plain click
// opens the entry in a popover on the page (the browser's top layer, so a
// scrolling table cannot clip it; Escape or a click outside closes it); a
// click with a modifier key, or without JavaScript, follows the link.
import { useEffect, useRef, useState } from "preact/hooks";
import { GLOSSARY } from "./pages/glossary";
import { navigate } from "./router";

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
  | "realised-pnl"
  | "costs"
  | "benchmarks"
  | "strategies";

let popovers = 0;

/** A small "?" link after a label: the term's glossary entry in a popover, or its page. */
export function Help({ term, label }: { term: TermId; label?: string }) {
  const pop = useRef<HTMLDivElement>(null);
  const id = useRef(`help-pop-${++popovers}`);
  // The entry is drawn only while open: closed, the popover is empty (no
  // text of its own in the figure's label, no component of the entry at work).
  const [shown, setShown] = useState(false);
  useEffect(() => {
    const el = pop.current;
    const on = (e: Event) => setShown((e as ToggleEvent).newState === "open");
    el?.addEventListener("toggle", on);
    return () => el?.removeEventListener("toggle", on);
  }, []);
  const what = `What is ${label ?? term.replace(/-/g, " ")}?`;
  const open = (e: MouseEvent) => {
    const el = pop.current;
    if (!el || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || !("showPopover" in el)) return;
    e.preventDefault();
    setShown(true);
    el.showPopover();
    // The entry is drawn on the next frame; then the focus goes to its Close.
    requestAnimationFrame(() => el.querySelector<HTMLElement>(".help-pop-close")?.focus());
  };
  // The entry's own links point within the glossary page: follow them there.
  const within = (e: MouseEvent) => {
    const a = (e.target as HTMLElement).closest("a");
    const href = a?.getAttribute("href");
    if (!href || e.button !== 0 || e.metaKey || e.ctrlKey) return;
    e.preventDefault();
    pop.current?.hidePopover();
    navigate(href.startsWith("#") ? `/glossary${href}` : href);
  };
  const entry = GLOSSARY[term];
  return (
    <>
      <a class="help" href={`/glossary#${term}`} aria-label={what} title={`${what} (glossary)`} aria-haspopup="dialog" aria-controls={id.current} onClick={open}>
        ?
      </a>
      <div ref={pop} id={id.current} class="help-pop" role="dialog" aria-label={entry.term} {...{ popover: "auto" }} onClick={within}>
        {shown && (
          <>
            <div class="help-pop-head">
              <strong>{entry.term}</strong>
              <button type="button" class="help-pop-close" aria-label="Close" onClick={() => pop.current?.hidePopover()}>
                ×
              </button>
            </div>
            <div class="help-pop-body">{entry.body}</div>
            <a class="help-pop-more" href={`/glossary#${term}`}>
              More in the glossary
            </a>
          </>
        )}
      </div>
    </>
  );
}
