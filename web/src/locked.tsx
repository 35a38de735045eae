// How the Free tier meets Premium things: they look locked before a click.
// `LockMark` goes after a label (a padlock, and "(Premium)" for screen
// readers); `LockedPage` stands in for a Premium page a Free (or Lite, or
// Pro) account opens, saying what the page would show and how to get it;
// `PremiumNote` is the same explanation in a sentence, inline (e.g. the
// watchlist's verdict cells). Every one of them links to /plans.
import type { ComponentChildren } from "preact";
import { useTitle } from "./lib";
import { tierName, upgradeUrl, useSession } from "./session";

/** A padlock and a hidden "(Premium)": append to a link or a label. */
export function LockMark() {
  return (
    <>
      <svg class="lock" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false">
        <rect x="3" y="7" width="10" height="8" rx="1.5" fill="currentColor" />
        <path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" stroke-width="1.8" />
      </svg>
      <span class="sr-only"> (Premium)</span>
    </>
  );
}

/** "Verdicts need the Premium tier. See the plans." — a full sentence with the link. */
export function PremiumNote({ what, verb = "needs" }: { what: string; verb?: "need" | "needs" }) {
  return (
    <span class="premium-note">
      <LockMark /> {what} {verb} the Premium tier. <a href="/plans">See the plans</a>.
    </span>
  );
}

/** The upgrade sentence: the operator's link when there is one, else whom to ask. */
export function UpgradeHow() {
  const { user } = useSession();
  const url = upgradeUrl(user);
  return url ? (
    <p>
      <a class="btn btn-primary" href={url} rel="noopener" target="_blank" id="upgrade-link">
        Upgrade to Premium
      </a>{" "}
      <span class="muted small">(opens the operator's page in a new tab)</span>
    </p>
  ) : (
    <p id="upgrade-ask">
      This server has no upgrade page. Ask its operator, the person who created your account, to move your account to the
      Premium tier.
    </p>
  );
}

/**
 * A Premium page opened on another tier: its heading, what it would show,
 * and the way to the plans page. No data call is made.
 */
export function LockedPage({ title, shows, children }: { title: string; shows: string; children?: ComponentChildren }) {
  const { user } = useSession();
  useTitle(`${title} (Premium)`);
  return (
    <main class="page narrow locked-page">
      <h1>
        {title} <LockMark />
      </h1>
      <div class="card locked-card">
        <p class="lead-in">
          <strong>This page needs the Premium tier.</strong> Your account is on the {tierName(user?.tier)} tier, which
          includes the watchlist and the ticker matcher but not the market data behind this page.
        </p>
        <p>With Premium, this page shows {shows}</p>
        {children}
        <p>
          <a class="btn" href="/plans">
            Compare the plans
          </a>
        </p>
        <UpgradeHow />
      </div>
    </main>
  );
}
