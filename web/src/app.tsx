// The app's shell: the session, the header (navigation, asset search,
// account), the routes, the footer, and where the focus goes.
//
// Tiers: the pages whose data comes from `/web/api/*` (the same data as
// the HTTP API) are Premium. Their navigation entries carry a padlock and
// "(Premium)" for every other tier, and opening one shows a LockedPage
// (what it would show, a link to /plans) instead of failing on a 402.
//
// Focus: the skip link moves the focus to the page's h1; after each in-app
// navigation to another path the focus moves to the new page's h1 (or to
// the element the URL's #fragment names), unless the page put it in one of
// its fields itself (the sign-in page's e-mail).
//
// Alerts: a Premium account's header has a bell linking to /alerts with the
// inbox's unread count (src/unread.ts), asked on load, after each navigation
// to another page and every minute.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, loginUrl, setUnauthorizedHandler } from "./api/client";
import { api, type Me } from "./api/endpoints";
import { navigate, useLocation, type Location } from "./router";
import { Loading } from "./lib";
import { LockedPage, LockMark } from "./locked";
import { NotFound } from "./notfound";
import { AssetSearch } from "./search";
import { isPremium, rememberTier, SessionContext, useSession } from "./session";
import { LoginPage } from "./pages/login";
import { HomePage } from "./pages/home";
import { OnboardingPage } from "./pages/onboarding";
import { KeysPage } from "./pages/keys";
import { ExplorePage } from "./pages/explore";
import { AssetPage } from "./pages/asset";
import { RankingPage } from "./pages/ranking";
import { BacktestPage } from "./pages/backtest";
import { StrategiesPage } from "./pages/strategies";
import { PlansPage } from "./pages/plans";
import { GlossaryPage } from "./pages/glossary";
import { MethodologyPage } from "./pages/methodology";
import { TrackRecordPage } from "./pages/track-record";
import { ComparePage } from "./pages/compare";
import { AlertsPage } from "./pages/alerts";
import { refreshUnread, setUnread, useUnread } from "./unread";
import { UsageMeter } from "./usage";

export { useSession };

interface NavItem {
  href: string;
  label: string;
  /** Only Premium accounts can use it. */
  premium?: boolean;
}
const NAV: NavItem[] = [
  { href: "/", label: "Watchlist" },
  { href: "/explore", label: "Explore", premium: true },
  { href: "/ranking", label: "Ranking", premium: true },
  { href: "/track-record", label: "Track record", premium: true },
  { href: "/backtest", label: "Backtest", premium: true },
  { href: "/strategies", label: "Strategies", premium: true },
  { href: "/alerts", label: "Alerts", premium: true },
  { href: "/keys", label: "API keys", premium: true },
  { href: "/glossary", label: "Glossary" },
];

/** How often the header asks for the unread count while a page stays open. */
const UNREAD_EVERY_MS = 60_000;

/** The bell: a link to the inbox with its unread count (no badge at 0). */
function AlertsBell({ active }: { active: boolean }) {
  const n = useUnread();
  const label = n === null ? "Alerts" : n > 0 ? `Alerts, ${n} unread` : "Alerts, none unread";
  return (
    <a class="btn btn-ghost alerts-bell" href="/alerts" id="alerts-bell" aria-label={label} title={label} aria-current={active ? "page" : undefined}>
      <svg viewBox="0 0 16 16" width="18" height="18" aria-hidden="true" focusable="false">
        <path d="M8 1.5a4 4 0 0 0-4 4V9l-1.5 2.5h11L12 9V5.5a4 4 0 0 0-4-4ZM6.3 13a1.8 1.8 0 0 0 3.4 0" fill="none" stroke="currentColor" stroke-width="1.5" />
      </svg>
      {n ? (
        <span class="bell-badge" aria-hidden="true">
          {n > 99 ? "99+" : n}
        </span>
      ) : null}
    </a>
  );
}

function Header({ loc, user, onSignOut }: { loc: Location; user: Me | null; onSignOut: () => void }) {
  const active = (p: string) => (p === "/" ? loc.path === "/" : loc.path.startsWith(p));
  const premium = isPremium(user);
  // Phones: the navigation folds into a menu button.
  const [menu, setMenu] = useState(false);
  useEffect(() => setMenu(false), [loc.href]);
  return (
    <header class="topbar">
      <a class="brand" href="/">
        <svg viewBox="0 0 16 16" width="20" height="20" aria-hidden="true">
          <path d="M1 12 L5 7 L9 9 L15 2" fill="none" stroke="currentColor" stroke-width="2" />
        </svg>
        Forecast Engine
      </a>
      {user && (
        <button
          type="button"
          class="btn btn-ghost menu-btn"
          aria-expanded={menu}
          aria-controls="main-nav"
          onClick={() => setMenu((m) => !m)}
        >
          <svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
            <path d="M2 4h12M2 8h12M2 12h12" stroke="currentColor" stroke-width="1.8" />
          </svg>
          Menu
        </button>
      )}
      {user && (
        <nav aria-label="Main" id="main-nav" class={menu ? "open" : undefined}>
          <ul>
            {NAV.map(({ href, label, premium: locked }) => (
              <li key={href}>
                <a
                  href={href}
                  aria-current={active(href) ? "page" : undefined}
                  class={locked && !premium ? "locked" : undefined}
                  title={locked && !premium ? `${label} needs the Premium tier.` : undefined}
                >
                  {label}
                  {locked && !premium && <LockMark />}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      {user && (
        <div class="header-search">
          <AssetSearch id="header-search" premium={premium} label="Find an asset" />
        </div>
      )}
      {user && premium && <AlertsBell active={loc.path === "/alerts"} />}
      {user && (
        <div class="account">
          <span class="who" title={user.email}>
            <span class="who-email">{user.email}</span>
            {premium ? (
              <span class={`tier tier-${user.tier}`}>{user.tier}</span>
            ) : (
              <a class={`tier tier-${user.tier} tier-link`} href="/plans" title="Your tier: see the plans">
                {user.tier}
                <span class="sr-only"> tier: see the plans</span>
              </a>
            )}
          </span>
          {premium && <UsageMeter path={loc.path} />}
          <button type="button" class="btn btn-ghost" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      )}
    </header>
  );
}

/** What each Premium page would show, for its LockedPage. */
function locked(p: string): { title: string; shows: string } | null {
  if (p === "/explore")
    return {
      title: "Explore the catalog",
      shows:
        "every asset of the catalog by category, with where its prices come from (real, ingested or synthetic) and the date of its last price, and a search by ticker or name.",
    };
  if (p === "/ranking")
    return {
      title: "Ranking",
      shows:
        "every graded asset ranked by its grade for a horizon (7 to 365 days) and a metric, with its score, its price and that price's date, sortable and filterable over the whole ranking.",
    };
  if (p === "/track-record")
    return {
      title: "Track record",
      shows:
        "how past grades turned out: at every month-end each asset graded from its data up to then, and the return that followed — outcomes per grade with their 90 % intervals, the rank correlation of score with outcome over time, the spread between the top and bottom fifth, and calibration.",
    };
  if (p === "/compare")
    return {
      title: "Compare",
      shows: "two to five assets on one chart — their prices rebased to 100 on the first day they share and their drawdowns — and their verdicts side by side.",
    };
  if (p === "/backtest")
    return {
      title: "Backtest a strategy",
      shows:
        "how a trading strategy (top N, z-score or long/short) would have done on past prices of the assets you choose, with trading costs: its equity curve against equal-weight baskets and benchmarks you pick (the S&P 500 by default), its metrics and its trades.",
    };
  if (p === "/strategies")
    return {
      title: "Strategies",
      shows:
        "the built-in trading strategies, those other users share and your own: upload a strategy component (WebAssembly), share it or keep it private, choose the version that runs, and backtest it.",
    };
  if (p === "/alerts")
    return {
      title: "Alerts",
      shows:
        "alerts on an asset or on your whole watchlist — a grade that changes, a drawdown past a level, a move into the top N of the ranking — with an inbox of what fired and the evidence behind it, an e-mail digest and signed webhooks.",
    };
  if (p === "/keys")
    return null; // the keys page explains itself (a Free account may still list and revoke old keys)
  if (p.startsWith("/assets/") && p.length > "/assets/".length) {
    let t = p.slice("/assets/".length);
    try {
      t = decodeURIComponent(t);
    } catch {
      /* keep it */
    }
    return {
      title: t,
      shows: `the grade and score of ${t} for the horizon you choose, its last price with that price's date and data source, and the analysis behind the grade: the drawdown segments, their past outcomes and the charts of both.`,
    };
  }
  return null;
}

function route(loc: Location, user: Me) {
  const p = loc.path;
  if (p === "/") return <HomePage />;
  if (p === "/onboarding") return <OnboardingPage />;
  if (p === "/plans") return <PlansPage />;
  if (p === "/glossary") return <GlossaryPage />;
  if (p === "/methodology") return <MethodologyPage />;
  if (!isPremium(user)) {
    const l = locked(p);
    if (l) return <LockedPage title={l.title} shows={l.shows} />;
  }
  if (p === "/keys") return <KeysPage />;
  if (p === "/explore") return <ExplorePage loc={loc} />;
  if (p === "/ranking") return <RankingPage loc={loc} />;
  if (p === "/track-record") return <TrackRecordPage loc={loc} />;
  if (p === "/compare") return <ComparePage loc={loc} />;
  if (p === "/backtest") return <BacktestPage loc={loc} />;
  if (p === "/strategies") return <StrategiesPage />;
  if (p === "/alerts") return <AlertsPage loc={loc} />;
  if (p.startsWith("/assets/") && p.length > "/assets/".length) {
    return <AssetPage ticker={p.slice("/assets/".length)} loc={loc} />;
  }
  return <NotFound />;
}

/** Makes `el` focusable by script only (no tab stop) and focuses it. */
function focusQuietly(el: HTMLElement) {
  if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
  el.focus({ preventScroll: true });
}

/** The page's heading, or the element the URL's #fragment names. */
function target(main: HTMLElement): HTMLElement | null {
  const id = location.hash ? decodeURIComponent(location.hash.slice(1)) : "";
  const byId = id ? document.getElementById(id) : null;
  if (byId && main.contains(byId)) return byId;
  return main.querySelector("h1");
}

/**
 * After a navigation: focuses the new page's h1 (or #fragment) as soon as it
 * is rendered (pages that load first render it a little later), unless
 * focus has meanwhile gone somewhere on purpose. Returns the cleanup.
 */
function focusNewPage(): () => void {
  const main = document.getElementById("main");
  if (!main) return () => {};
  const before = document.activeElement;
  let done = false;
  const attempt = () => {
    if (done) return;
    const now = document.activeElement;
    const field = now instanceof HTMLElement && main.contains(now) && now.matches("input, select, textarea");
    // Text in a field outside the page (the header's search, cleared when
    // it navigates) was typed after the navigation, perhaps before this
    // effect listened for it: the focus is the user's.
    const typed = (now instanceof HTMLInputElement || now instanceof HTMLTextAreaElement) && now.value !== "";
    if (field || typed || (now && now !== before && now !== document.body && now !== main)) {
      done = true; // the page or the user placed the focus
      return;
    }
    const el = target(main);
    if (!el) return;
    done = true;
    focusQuietly(el);
    if (el.tagName !== "H1") el.scrollIntoView({ block: "start" });
  };
  const obs = new MutationObserver(attempt);
  obs.observe(main, { childList: true, subtree: true });
  // Once the user acts (types, clicks, focuses something), the focus is theirs.
  const stop = () => (done = true);
  const events = ["keydown", "pointerdown", "input", "focusin"] as const;
  for (const ev of events) document.addEventListener(ev, stop, true);
  const first = setTimeout(attempt, 0);
  const give = setTimeout(stop, 10_000);
  return () => {
    obs.disconnect();
    for (const ev of events) document.removeEventListener(ev, stop, true);
    clearTimeout(first);
    clearTimeout(give);
  };
}

export function App() {
  const loc = useLocation();
  // undefined: not known yet; null: signed out.
  const [user, setUser] = useState<Me | null | undefined>(undefined);

  useEffect(() => {
    setUnauthorizedHandler(() => setUser(null));
    api.me().then(
      (me) => setUser(me),
      (e) => {
        setUser(null);
        if (!(e instanceof ApiError && e.status === 401)) console.warn("could not check the session", e);
      },
    );
  }, []);

  // Whether this browser's session is Premium, for the next first load's
  // prefetch (main.tsx); signed out counts as not.
  useEffect(() => {
    if (user !== undefined) rememberTier(isPremium(user));
  }, [user]);

  // The header's unread count: a Premium account's, asked on load, after each
  // navigation to another page and every minute.
  const premium = isPremium(user);
  useEffect(() => {
    if (!premium) {
      setUnread(null);
      return;
    }
    void refreshUnread();
  }, [premium, loc.path]);
  useEffect(() => {
    if (!premium) return;
    const t = setInterval(() => void refreshUnread(), UNREAD_EVERY_MS);
    return () => clearInterval(t);
  }, [premium]);

  const onLogin = loc.path === "/login";
  useEffect(() => {
    if (user === null && !onLogin) navigate(loginUrl(loc.href, false), { replace: true });
  }, [user, onLogin, loc.href]);

  // Focus follows navigation to another path (not the first load, not a
  // filter changing the query string).
  const lastPath = useRef<string | null>(null);
  useEffect(() => {
    const prev = lastPath.current;
    lastPath.current = loc.path;
    if (prev === null || prev === loc.path) return;
    return focusNewPage();
  }, [loc.path]);

  const signOut = async () => {
    try {
      await api.logout();
    } catch {
      /* the session is gone either way */
    }
    setUser(null);
    navigate("/login", { replace: true });
  };

  const skip = (e: Event) => {
    e.preventDefault();
    const main = document.getElementById("main");
    if (!main) return;
    const h1 = main.querySelector("h1");
    const el = (h1 as HTMLElement | null) ?? main;
    focusQuietly(el);
    el.scrollIntoView({ block: "start" });
  };

  let body;
  if (onLogin) body = <LoginPage loc={loc} onSignedIn={(me) => setUser(me)} signedIn={user ?? null} />;
  else if (user === undefined || user === null)
    body = (
      <main class="page">
        <Loading />
      </main>
    );
  else body = route(loc, user);

  const shownUser = onLogin ? null : user ?? null;
  return (
    <SessionContext.Provider value={{ user: user ?? null, setUser }}>
      <a class="skip" href="#main" onClick={skip}>
        Skip to content
      </a>
      <Header loc={loc} user={shownUser} onSignOut={signOut} />
      <div id="main" tabIndex={-1}>
        {body}
      </div>
      <footer class="footer">
        <p>
          Output is informational only and is not financial advice. Most demo prices are synthetic: each price shows its
          date and data source.
        </p>
        {shownUser && (
          <p class="footer-links">
            <a href="/glossary">Glossary</a> · <a href="/methodology">Methodology</a> · <a href="/glossary#data-sources">Data sources</a> · <a href="/plans">Plans</a>
          </p>
        )}
      </footer>
    </SessionContext.Provider>
  );
}
