import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, describe } from "../api/client";
import { api, type Me } from "../api/endpoints";
import { navigate, type Location } from "../router";
import { useTitle } from "../lib";

/** Only same-origin paths are followed after signing in. */
function safeNext(raw: string | null): string {
  if (!raw || !raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/login")) return "/";
  return raw;
}

export function LoginPage({ loc, onSignedIn, signedIn }: { loc: Location; onSignedIn: (me: Me) => void; signedIn: Me | null }) {
  useTitle("Sign in");
  const next = safeNext(loc.query.get("next"));
  const expired = loc.query.get("expired") === "1";
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const emailRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (signedIn && !expired) navigate(next, { replace: true });
  }, [signedIn]);
  useEffect(() => emailRef.current?.focus(), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await api.login(email.trim(), password);
      onSignedIn(me);
      navigate(next, { replace: true });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setError("Wrong e-mail or password.");
      else if (err instanceof ApiError && err.status === 400) setError("Enter your e-mail and password.");
      else setError(describe(err));
      setBusy(false);
    }
  };

  return (
    <main class="page login">
      <form class="card login-card" onSubmit={submit} aria-describedby={error ? "login-error" : undefined} noValidate={false}>
        <h1>Sign in</h1>
        {expired && (
          <p class="note note-info" role="status">
            Your session expired, sign in again.
          </p>
        )}
        <div class="field">
          <label for="email">E-mail</label>
          <input
            id="email"
            ref={emailRef}
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input
            id="password"
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
        </div>
        {error && (
          <p class="note note-error" role="alert" id="login-error">
            {error}
          </p>
        )}
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="muted small">
          Accounts are created by the operator (<code>forecast user add</code>). The demo account is printed when the server
          first starts.
        </p>
      </form>
    </main>
  );
}
