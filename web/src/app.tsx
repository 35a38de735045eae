import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { ApiError, loginUrl, setUnauthorizedHandler } from "./api/client";
import { api, type Me } from "./api/endpoints";
import { navigate, useLocation, type Location } from "./router";
import { Loading } from "./lib";
import { LoginPage } from "./pages/login";
import { HomePage } from "./pages/home";
import { OnboardingPage } from "./pages/onboarding";
import { KeysPage } from "./pages/keys";
import { ExplorePage } from "./pages/explore";
import { AssetPage } from "./pages/asset";
import { RankingPage } from "./pages/ranking";
import { BacktestPage } from "./pages/backtest";

interface Session {
  user: Me | null;
  setUser: (u: Me | null) => void;
}
const SessionContext = createContext<Session>({ user: null, setUser: () => {} });
export const useSession = () => useContext(SessionContext);

const NAV: [string, string][] = [
  ["/", "Watchlist"],
  ["/explore", "Explore"],
  ["/ranking", "Ranking"],
  ["/backtest", "Backtest"],
  ["/keys", "API keys"],
];

function Header({ loc, user, onSignOut }: { loc: Location; user: Me | null; onSignOut: () => void }) {
  const active = (p: string) => (p === "/" ? loc.path === "/" : loc.path.startsWith(p));
  return (
    <header class="topbar">
      <a class="brand" href="/">
        <svg viewBox="0 0 16 16" width="20" height="20" aria-hidden="true">
          <path d="M1 12 L5 7 L9 9 L15 2" fill="none" stroke="currentColor" stroke-width="2" />
        </svg>
        Forecast Engine
      </a>
      {user && (
        <nav aria-label="Main">
          <ul>
            {NAV.map(([href, label]) => (
              <li key={href}>
                <a href={href} aria-current={active(href) ? "page" : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      {user && (
        <div class="account">
          <span class="who" title={user.email}>
            {user.email}
            <span class={`tier tier-${user.tier}`}>{user.tier}</span>
          </span>
          <button type="button" class="btn btn-ghost" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      )}
    </header>
  );
}

function NotFound() {
  return (
    <main class="page narrow">
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. Go to <a href="/">your watchlist</a> or <a href="/explore">explore the catalog</a>.
      </p>
    </main>
  );
}

function route(loc: Location) {
  const p = loc.path;
  if (p === "/") return <HomePage />;
  if (p === "/onboarding") return <OnboardingPage />;
  if (p === "/keys") return <KeysPage />;
  if (p === "/explore") return <ExplorePage loc={loc} />;
  if (p === "/ranking") return <RankingPage loc={loc} />;
  if (p === "/backtest") return <BacktestPage loc={loc} />;
  if (p.startsWith("/assets/") && p.length > "/assets/".length) {
    return <AssetPage ticker={p.slice("/assets/".length)} loc={loc} />;
  }
  return <NotFound />;
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

  const onLogin = loc.path === "/login";
  useEffect(() => {
    if (user === null && !onLogin) navigate(loginUrl(loc.href, false), { replace: true });
  }, [user, onLogin, loc.href]);

  const signOut = async () => {
    try {
      await api.logout();
    } catch {
      /* the session is gone either way */
    }
    setUser(null);
    navigate("/login", { replace: true });
  };

  let body;
  if (onLogin) body = <LoginPage loc={loc} onSignedIn={(me) => setUser(me)} signedIn={user ?? null} />;
  else if (user === undefined || user === null)
    body = (
      <main class="page">
        <Loading />
      </main>
    );
  else body = route(loc);

  return (
    <SessionContext.Provider value={{ user: user ?? null, setUser }}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header loc={loc} user={onLogin ? null : user ?? null} onSignOut={signOut} />
      <div id="main" tabIndex={-1}>
        {body}
      </div>
      <footer class="footer">
        Output is informational only and is not financial advice. Most demo prices are synthetic — see each asset's data
        source.
      </footer>
    </SessionContext.Provider>
  );
}
