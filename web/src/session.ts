// The signed-in user, for any page: `useSession().user` (null while signed
// out). `isPremium` says whether the account may read the data routes
// (`/web/api/*`, the same data as the HTTP API, which only Premium has).
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Me } from "./api/endpoints";

export interface Session {
  user: Me | null;
  setUser: (u: Me | null) => void;
}
export const SessionContext = createContext<Session>({ user: null, setUser: () => {} });
export const useSession = () => useContext(SessionContext);

/** Only the Premium tier reads the data routes; Free, Lite and Pro do not. */
export function isPremium(user: Me | null | undefined): boolean {
  return user?.tier === "premium";
}

/** Where the operator says a user upgrades (FORECAST_UPGRADE_URL), if it is a web address. */
export function upgradeUrl(user: Me | null | undefined): string | null {
  const u = (user as { upgrade_url?: string | null } | null | undefined)?.upgrade_url;
  return typeof u === "string" && /^https?:\/\//i.test(u.trim()) ? u.trim() : null;
}

/** "Free", "Lite", "Pro", "Premium". */
export function tierName(tier: string | null | undefined): string {
  const t = tier ?? "free";
  return t.charAt(0).toUpperCase() + t.slice(1);
}

/** Where the app remembers whether the last session it saw was Premium. */
const PREMIUM_HINT = "forecast.premium";

/** Remembers the tier the server said, for the next first load. */
export function rememberTier(premium: boolean) {
  try {
    localStorage.setItem(PREMIUM_HINT, premium ? "1" : "0");
  } catch {
    /* storage off: no hint, no prefetch */
  }
}

/**
 * Whether the last session this browser saw was Premium: a hint only, so
 * the first page may ask for its data before the session is checked (a
 * Free account's page would be locked and make no data call).
 */
export function wasPremium(): boolean {
  try {
    return localStorage.getItem(PREMIUM_HINT) === "1";
  } catch {
    return false;
  }
}
