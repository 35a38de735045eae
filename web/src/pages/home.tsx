// The watchlist: the latest verdict of each asset the user follows. Every
// price carries its date, source and currency (DatedPrice), old and
// synthetic ones are marked, and a Free account is told in a sentence what
// needs Premium. On a phone the rows become cards that keep the ticker,
// grade, dated price and the row's actions. "Alert me on my watchlist"
// creates an alert on every asset of it (Premium; others see the padlock).
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, type Verdict, type WatchItem } from "../api/endpoints";
import { ApiError, describe } from "../api/client";
import { assetUrl, navigate } from "../router";
import { DatedPrice } from "../facts";
import { Help } from "../glossary-link";
import { Card, ErrorNote, GradeBadge, Loading, pct, price, signClass, useData, useTitle } from "../lib";
import { AlertMeButton, AlertMeForm, useAlertMe } from "../alert-form";
import { LockMark } from "../locked";
import { isPremium, useSession } from "../session";
import { ExpectedCell, forecastOf, hasForecastField } from "../forecast";
import { ModelRecord } from "../model-record";
import { skippedOnboarding } from "./onboarding";

/** The currency of a verdict (the backend adds `metadata.currency`), else the item's. */
function currencyOf(v: Verdict | null, a: WatchItem): string | null {
  const m = v?.metadata as { currency?: string | null } | undefined;
  return m?.currency ?? (a as { currency?: string | null }).currency ?? null;
}

function VerdictCells({ item, expected, onForecast }: { item: WatchItem; expected: boolean; onForecast: () => void }) {
  const v = useData<Verdict>(() => api.verdict(item.ticker), [item.ticker]);
  // A verdict with the `forecast` field brings the "Expected" column in.
  const knows = !v.loading && hasForecastField(v.data);
  useEffect(() => {
    if (knows) onForecast();
  }, [knows]);
  const span = expected ? 5 : 4;
  if (v.loading)
    return (
      <td colSpan={span} class="muted wl-wide" data-label="Verdict">
        Loading verdict…
      </td>
    );
  if (v.error) {
    const e = v.error;
    let msg;
    if (e instanceof ApiError && e.status === 402)
      msg = (
        <>
          Verdicts need the Premium tier: <a href="/plans">see what Premium includes</a>.
        </>
      );
    else if (e instanceof ApiError && e.status === 422) msg = "There is not enough price history to grade this asset.";
    else if (e instanceof ApiError && e.status === 401) msg = null;
    else msg = describe(e, "This verdict");
    return (
      <td colSpan={span} class="muted wl-wide" data-label="Verdict">
        {msg}
      </td>
    );
  }
  const d = v.data!;
  return (
    <>
      <td data-label="Grade">
        <GradeBadge letter={d.grade.letter} score={d.grade.score} />
      </td>
      {expected && (
        <td class="num c-expected" data-label="Expected (90 d)">
          <ExpectedCell f={forecastOf(item) ?? forecastOf(d)} />
        </td>
      )}
      <td class="num" data-label="Last price">
        <DatedPrice
          value={d.current_state.price}
          date={d.metadata.last_price_date}
          source={d.metadata.data_source}
          currency={currencyOf(d, item)}
          format={price}
        />
      </td>
      <td class={`num col-opt ${signClass(d.current_state.drawdown)}`} data-label="Drawdown">
        {pct(d.current_state.drawdown)}
      </td>
      <td class={`num col-opt ${signClass(d.current_state.median_return)}`} data-label="Median return (90 d)">
        {pct(d.current_state.median_return)}
      </td>
    </>
  );
}

export function HomePage() {
  useTitle("Watchlist");
  const premium = isPremium(useSession().user);
  const alertMe = useAlertMe("alert-me");
  const w = useData(() => api.watchlist(), []);
  const [items, setItems] = useState<WatchItem[] | null>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const [removeError, setRemoveError] = useState<unknown>(null);
  useEffect(() => setItems(w.data?.tickers ?? null), [w.data]);
  const empty = items !== null && items.length === 0;
  useEffect(() => {
    if (empty && !skippedOnboarding()) navigate("/onboarding", { replace: true });
  }, [empty]);

  const remove = async (ticker: string) => {
    if (!items) return;
    setRemoving(ticker);
    setRemoveError(null);
    try {
      const saved = await api.saveWatchlist(items.filter((a) => a.ticker !== ticker).map((a) => a.ticker));
      setItems(saved.tickers);
    } catch (e) {
      setRemoveError(e);
    } finally {
      setRemoving(null);
    }
  };

  const [verdictForecast, setVerdictForecast] = useState(false);
  const onForecast = useCallback(() => setVerdictForecast(true), []);
  const expected = verdictForecast || (items ?? []).some(hasForecastField);
  const synthetic = items ? items.filter((a) => a.data_source === "synthetic").length : 0;
  const mostlySynthetic = items !== null && items.length > 0 && synthetic * 2 > items.length;

  return (
    <main class="page watchlist-page">
      <div class="page-head">
        <h1>Your watchlist</h1>
        <span class="row-actions">
          {items && items.length > 0 &&
            (premium ? (
              <AlertMeButton label="Alert me on my watchlist" state={alertMe} />
            ) : (
              <a class="btn locked" href="/plans" title="Alerts need the Premium tier.">
                Alert me on my watchlist
                <LockMark />
              </a>
            ))}
          {items && items.length > 0 && (
            <a class="btn" id="watchlist-download" href="/web/watchlist?format=csv" download title={premium ? "Each asset with its latest graded figures" : "The assets; the graded figures need Premium"}>
              Download CSV
            </a>
          )}
          <a class="btn" href="/onboarding">
            Edit watchlist
          </a>
        </span>
      </div>
      <p class="lead">
        The latest grade of each asset you follow, computed from its last stored price (90-day horizon). Each price shows
        its date and source; prices older than a week and synthetic ones are marked.
      </p>
      {premium && alertMe.open && <AlertMeForm id={alertMe.id} target={{ watchlist: true }} level={-20} onClose={alertMe.close} />}
      {w.loading && <Loading label="Loading your watchlist…" />}
      <ErrorNote error={w.error} what="The watchlist" />
      <ErrorNote error={removeError} what="Changing the watchlist" />
      {mostlySynthetic && (
        <p class="note note-warn" id="watchlist-synthetic" role="note">
          <strong>Most of these prices are synthetic.</strong> {synthetic} of your {items!.length} assets have generated
          demo prices, not market data: their grades say nothing about real markets. <Help term="synthetic" label="a synthetic price" />
        </p>
      )}
      {items && items.length > 0 && (
        <Card>
          <ModelRecord returnPeriod="90" metric="return" />
          <div class="table-wrap">
            <table class="table table-cards wl-table" id="watchlist-table">
              <caption class="sr-only">
                Your watchlist: each asset's latest grade, its last price with the date and source of that price, and the
                90-day figures
              </caption>
              <thead>
                <tr>
                  <th scope="col">Ticker</th>
                  <th scope="col">Name</th>
                  <th scope="col" class="col-opt">
                    Category
                  </th>
                  <th scope="col">
                    Grade <Help term="grade" />
                  </th>
                  {expected && (
                    <th scope="col" class="num">
                      Expected (90 d) <Help term="forecast" label="the expected return (calibrated forecast)" />
                    </th>
                  )}
                  <th scope="col" class="num">
                    Last price <Help term="data-sources" label="a price's date and source" />
                  </th>
                  <th scope="col" class="num col-opt">
                    Drawdown <Help term="drawdown" />
                  </th>
                  <th scope="col" class="num col-opt">
                    Median return (90 d) <Help term="median-return" label="the median return" />
                  </th>
                  <th scope="col" class="actions-cell">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((a: WatchItem) => (
                  <tr key={a.ticker} data-ticker={a.ticker}>
                    <td class="card-title">
                      <a href={assetUrl(a.ticker)} class="ticker">
                        {a.ticker}
                      </a>
                    </td>
                    <td class="card-sub">{a.name}</td>
                    <td class="muted col-opt" data-label="Category">
                      {a.category}
                    </td>
                    <VerdictCells item={a} expected={expected} onForecast={onForecast} />
                    <td class="actions-cell">
                      <span class="row-actions">
                        <a class="btn btn-small" href={assetUrl(a.ticker)} aria-label={`Open ${a.ticker}`}>
                          Open
                        </a>
                        <button
                          type="button"
                          class="btn btn-small"
                          disabled={removing !== null}
                          aria-label={`Remove ${a.ticker} from the watchlist`}
                          onClick={() => remove(a.ticker)}
                        >
                          {removing === a.ticker ? "Removing…" : "Remove"}
                        </button>
                      </span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
      {empty && (
        <p>
          Your watchlist is empty. <a href="/onboarding">Tell us what you hold or follow</a>, or look around first:{" "}
          {premium ? <a href="/ranking">the ranking</a> : <a href="/plans">what each plan includes</a>}.
        </p>
      )}
    </main>
  );
}
