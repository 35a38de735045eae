// /plans: what each tier may do, with the limits the service documents
// (docs/API-GUIDE.md "Quotas", docs/forecast-api-v1.md "Limits",
// docs/CONFIG.md), and how to upgrade: the operator's link
// (`me.upgrade_url`, set with FORECAST_UPGRADE_URL) when there is one, else
// whom to ask.
import { useTitle } from "../lib";
import { LockMark, UpgradeHow } from "../locked";
import { isPremium, tierName, useSession } from "../session";

export function PlansPage() {
  useTitle("Plans");
  const { user } = useSession();
  const premium = isPremium(user);
  return (
    <main class="page narrow plans">
      <h1>Plans</h1>
      <p class="lead">
        Your account is on the <strong>{tierName(user?.tier)}</strong> tier.{" "}
        {premium
          ? "It includes everything below."
          : "The market data (grades, prices, analyses, the ranking and backtests) and the HTTP API need the Premium tier."}
      </p>
      <div class="plans-grid">
        <section class={`card plan${premium ? "" : " plan-current"}`} aria-labelledby="plan-free">
          <h2 id="plan-free">Free {premium ? "" : <span class="tag-current">your tier</span>}</h2>
          <p class="muted small">The Lite and Pro tiers give the same access as Free on this server.</p>
          <ul>
            <li>An account on this server, created by its operator.</li>
            <li>
              A watchlist: the assets you hold or follow (<a href="/onboarding">edit it</a>). Their grades and prices need
              Premium.
            </li>
            <li>
              The ticker matcher: find assets by ticker, name, brand or a whole sentence ("I own apple and some bitcoin"), a
              limited number of times a minute (30 unless the operator set another limit).
            </li>
            <li>
              The <a href="/glossary">glossary</a> of every grade, metric and data source.
            </li>
          </ul>
        </section>
        <section class={`card plan${premium ? " plan-current" : ""}`} aria-labelledby="plan-premium">
          <h2 id="plan-premium">
            Premium {premium ? <span class="tag-current">your tier</span> : <LockMark />}
          </h2>
          <ul>
            <li>Everything in Free.</li>
            <li>
              The market data in the web app: grades and last prices on the watchlist, each asset's page with its analysis and
              charts, the catalog, the ranking of every graded asset, and backtests of trading strategies.
            </li>
            <li>
              API keys (up to 5 active at once) for the HTTP API, which answers the same data to scripts (
              <code>Authorization: Bearer svc_…</code>, described by <a href="/api/openapi.json">the OpenAPI document</a>).
            </li>
            <li>
              A quota shared by the web app and the API, counted in cost units: every data request costs 1 and a backtest 5.
              The default is <strong>60 units per minute and 1,000 per day</strong> (UTC); the operator may set other limits
              for an account. Every API response reports the limit it counts against (<code>X-RateLimit-Limit</code>,{" "}
              <code>X-RateLimit-Remaining</code>, <code>X-RateLimit-Reset</code>).
            </li>
          </ul>
        </section>
      </div>
      {!premium && (
        <section class="card" aria-labelledby="upgrade-h">
          <h2 id="upgrade-h">Upgrade to Premium</h2>
          <UpgradeHow />
        </section>
      )}
    </main>
  );
}
