// The alerts inbox's unread count, shared by the header's badge and the
// Alerts page: the header asks the server (`refreshUnread`) on load, after
// each navigation to another page and every minute; the Alerts page sets it
// from what it knows (`setUnread`), so reading events clears the badge at
// once. null: not known (signed out, not Premium, or not asked yet).
import { useEffect, useState } from "preact/hooks";
import { alerts } from "./api/alerts";

let count: number | null = null;
/** Bumped by every `setUnread`, so that a slower answer does not undo a newer count. */
let version = 0;
const listeners = new Set<(n: number | null) => void>();

export function setUnread(n: number | null) {
  version++;
  if (n === count) return;
  count = n;
  for (const l of listeners) l(n);
}

/** Asks the server; a failure keeps the last count (the badge is a hint, the inbox is the truth). */
export async function refreshUnread(): Promise<void> {
  const asked = version;
  try {
    const r = await alerts.unread();
    if (asked === version) setUnread(r.unread);
  } catch {
    /* keep the last count */
  }
}

export function useUnread(): number | null {
  const [n, setN] = useState(count);
  useEffect(() => {
    listeners.add(setN);
    setN(count);
    return () => {
      listeners.delete(setN);
    };
  }, []);
  return n;
}
