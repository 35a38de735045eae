import { useEffect } from "preact/hooks";
import { api, type Verdict, type WatchItem } from "../api/endpoints";
import { ApiError } from "../api/client";
import { assetUrl, navigate } from "../router";
import { Card, ErrorNote, GradeBadge, Loading, pct, price, signClass, useData, useTitle } from "../lib";

function VerdictCells({ ticker }: { ticker: string }) {
  const v = useData<Verdict>(() => api.verdict(ticker), [ticker]);
  if (v.loading) return <td colSpan={4} class="muted">Loading verdict…</td>;
  if (v.error) {
    const e = v.error;
    const msg =
      e instanceof ApiError && e.status === 402
        ? "Verdicts need the Premium tier"
        : e instanceof ApiError && e.status === 422
          ? "Not enough history to grade"
          : e instanceof ApiError && e.status === 429
            ? `Too many requests — try again in ${e.retryAfter ?? "a few"} s`
            : "Verdict unavailable";
    return <td colSpan={4} class="muted">{msg}</td>;
  }
  const d = v.data!;
  return (
    <>
      <td>
        <GradeBadge letter={d.grade.letter} score={d.grade.score} />
      </td>
      <td class="num">{price(d.current_state.price)}</td>
      <td class={`num ${signClass(d.current_state.drawdown)}`}>{pct(d.current_state.drawdown)}</td>
      <td class={`num ${signClass(d.current_state.median_return)}`}>{pct(d.current_state.median_return)}</td>
    </>
  );
}

export function HomePage() {
  useTitle("Watchlist");
  const w = useData(() => api.watchlist(), []);
  const empty = w.data && w.data.tickers.length === 0;
  useEffect(() => {
    if (empty) navigate("/onboarding", { replace: true });
  }, [empty]);

  return (
    <main class="page">
      <div class="page-head">
        <h1>Your watchlist</h1>
        <a class="btn" href="/onboarding">
          Edit watchlist
        </a>
      </div>
      {w.loading && <Loading label="Loading your watchlist…" />}
      <ErrorNote error={w.error} what="The watchlist" />
      {w.data && w.data.tickers.length > 0 && (
        <Card>
          <div class="table-wrap">
            <table class="table">
              <caption class="sr-only">Your watchlist with today's verdicts (90-day horizon)</caption>
              <thead>
                <tr>
                  <th scope="col">Ticker</th>
                  <th scope="col">Name</th>
                  <th scope="col">Category</th>
                  <th scope="col">Grade</th>
                  <th scope="col" class="num">Price</th>
                  <th scope="col" class="num">Drawdown</th>
                  <th scope="col" class="num">Median return (90 d)</th>
                </tr>
              </thead>
              <tbody>
                {w.data.tickers.map((a: WatchItem) => (
                  <tr key={a.ticker}>
                    <td>
                      <a href={assetUrl(a.ticker)} class="ticker">
                        {a.ticker}
                      </a>
                    </td>
                    <td>{a.name}</td>
                    <td class="muted">{a.category}</td>
                    <VerdictCells ticker={a.ticker} />
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
      {empty && (
        <p>
          Your watchlist is empty. <a href="/onboarding">Tell us what you hold or follow</a>.
        </p>
      )}
    </main>
  );
}
