// The Alerts page (issue 30): the inbox of fired alerts, the user's alerts
// with what their last evaluation saw per asset, the form for a new one,
// and the webhook endpoints events are POSTed to.
//
// The inbox's offset lives in the URL (`?offset=`); `?ticker=AAPL` or
// `?watchlist=1` fill in the new alert's target and bring the form into
// view (the asset page and the watchlist link here). Reading events
// updates the header's unread badge at once (src/unread.ts).
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, describe, fieldOf } from "../api/client";
import {
  alerts,
  type Alert,
  type AlertChange,
  type AlertEvent,
  type Condition,
  type CreatedWebhook,
  type Delivery,
  type Metric,
  type NewAlert,
  type Observation,
  type Webhook,
} from "../api/alerts";
import {
  alertError,
  ConditionFields,
  conditionBody,
  conditionDraft,
  fieldError,
  HorizonField,
  type ConditionDraft,
} from "../alert-form";
import { episodesText } from "../evidence";
import { utcStamp } from "../facts";
import { Help } from "../glossary-link";
import { Card, ConfirmDelete, ErrorNote, int, Loading, pct, ShownOnce, useData, useTitle, type Loaded } from "../lib";
import { plural } from "../format";
import { assetUrl, navigate, withQuery, type Location } from "../router";
import { setUnread, useUnread } from "../unread";
import { ModelRecord } from "../model-record";

/** Events per inbox page. */
const PAGE = 10;

// ---------------------------------------------------------------- what is watched

/** The value a condition watches, by name, and how to show it from an observation. */
function watched(c: Condition): { label: string; show: (o: Observation) => string } {
  if (c.startsWith("drawdown_")) return { label: "Drawdown", show: (o) => pct(o.drawdown, 1) };
  if (c.startsWith("bucket_"))
    return {
      label: "Bucket",
      show: (o) => (o.bucket == null ? "—" : `${o.bucket} (${pct(o.bucket_upper, 1)} to ${pct(o.bucket_lower, 1)})`),
    };
  if (c === "grade_changed") return { label: "Grade", show: (o) => o.letter ?? "—" };
  if (c.startsWith("median_return_")) return { label: "Median return", show: (o) => pct(o.median_return, 1) };
  return { label: "Rank", show: (o) => (o.rank == null ? "not ranked" : `${int(o.rank)} of ${int(o.ranked)}`) };
}

/** "95 past days in the bucket, 6 independent episodes", or null without evidence. */
function evidenceText(o: Observation): string | null {
  const ev = o.evidence;
  if (!ev) return null;
  return `${plural(ev.bucket_samples, "past day")} in the bucket, ${episodesText(ev.episodes)}`;
}

const METRIC_NAMES: Record<Metric, string> = { return: "return", sharpe: "Sharpe", sortino: "Sortino" };

// ---------------------------------------------------------------- inbox

function EventItem({ ev, onRead, busy }: { ev: AlertEvent; onRead: (id: string) => void; busy: boolean }) {
  const w = watched(ev.alert.condition);
  const evidence = evidenceText(ev.after);
  const unread = !ev.read;
  return (
    <li class={`event${unread ? " unread" : ""}`} id={`event-${ev.id}`} data-event-id={ev.id} tabIndex={-1}>
      <h3 class="event-head">
        {unread && <span class="tag tag-unread">Unread</span>}
        <span class="ticker">{ev.ticker}</span> <span class="event-name">{ev.name}</span>
        <time class="muted small event-time" dateTime={ev.created_at}>
          {utcStamp(ev.created_at)}
        </time>
      </h3>
      <p class="event-msg">{ev.message}</p>
      <dl class="event-facts">
        <div>
          <dt>{w.label}</dt>
          <dd class="event-change">
            {ev.before ? w.show(ev.before) : <span class="muted">first check</span>} <span aria-hidden="true">→</span>
            <span class="sr-only"> became </span> <strong>{w.show(ev.after)}</strong>
          </dd>
        </div>
        {evidence && (
          <div>
            <dt>
              Evidence <Help term="episodes" label="an episode" />
            </dt>
            <dd class="event-evidence">
              {evidence}
              {ev.after.evidence?.thin && (
                <>
                  {" "}
                  <span class="mark mark-thin">thin evidence</span>
                </>
              )}
            </dd>
          </div>
        )}
      </dl>
      <p class="muted small event-run">
        engine {ev.engine_version} · scorer {ev.scorer_version}
      </p>
      {/* The identifiers support needs; folded away from the person reading. */}
      <details class="muted small event-ids">
        <summary>Identifiers</summary>
        run <span class="mono">{ev.run_id ?? "none yet"}</span> · evaluation <span class="mono">{ev.evaluation}</span>
      </details>
      <div class="row-actions event-actions">
        {unread && (
          <button type="button" class="btn btn-small" disabled={busy} onClick={() => onRead(ev.id)}>
            Mark read<span class="sr-only"> ({ev.ticker}, {utcStamp(ev.created_at)})</span>
          </button>
        )}
        <a class="btn btn-small" href={assetUrl(ev.ticker)}>
          Open {ev.ticker}
        </a>
      </div>
    </li>
  );
}

function Inbox({ offset, onOffset }: { offset: number; onOffset: (o: number) => void }) {
  const page = useData(() => alerts.events({ limit: PAGE, offset }), [offset]);
  // Read on this page since it loaded (all: "Mark all read").
  const [read, setRead] = useState<Set<string> | "all">(new Set());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [unread, setUnreadHere] = useState<number | null>(null);
  // The header's count, asked every minute: more than this page knows means new events.
  const live = useUnread();
  const arrived = live !== null && unread !== null && live > unread;
  useEffect(() => {
    setRead(new Set());
    if (page.data) {
      setUnreadHere(page.data.unread);
      setUnread(page.data.unread);
    }
  }, [page.data]);

  const mark = async (body: { ids: string[] } | { all: true }) => {
    setBusy(true);
    setError(null);
    try {
      const r = await alerts.markRead(body);
      setUnreadHere(r.unread);
      setUnread(r.unread);
      if ("all" in body) setRead("all");
      else setRead((s) => (s === "all" ? s : new Set([...s, ...body.ids])));
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const markOne = async (id: string) => {
    // The button goes away: the focus stays on its event.
    if (await mark({ ids: [id] })) document.getElementById(`event-${id}`)?.focus();
  };

  const d = page.loading ? null : page.data;
  const events = d ? d.events.map((e) => (read === "all" || read.has(e.id) ? { ...e, read: true } : e)) : [];
  return (
    <Card title="Inbox" id="inbox">
      <div class="inbox-bar">
        <p class="muted" id="inbox-count" aria-live="polite">
          {d && (d.total === 0 ? "No events yet." : `${int(unread ?? d.unread)} unread of ${int(d.total)} event${d.total === 1 ? "" : "s"}.`)}
        </p>
        <button type="button" class="btn btn-small" id="mark-all-read" disabled={busy || !d || (unread ?? d.unread) === 0} onClick={() => void mark({ all: true })}>
          Mark all read
        </button>
      </div>
      {arrived && !page.loading && (
        <p class="note note-info inbox-new" role="status">
          New events arrived.{" "}
          <button type="button" class="btn btn-small" onClick={offset === 0 ? page.reload : () => onOffset(0)}>
            Show the newest
          </button>
        </p>
      )}
      {page.loading && <Loading label="Loading the inbox…" />}
      <ErrorNote error={page.error} what="The inbox" />
      <ErrorNote error={error} what="Marking events read" />
      {d && d.total === 0 && (
        <p class="muted">When one of your alerts fires, its event appears here: what changed, from what to what, and the evidence behind it.</p>
      )}
      {events.length > 0 && (
        <ol class="events" aria-label="Events, newest first">
          {events.map((e) => (
            <EventItem key={e.id} ev={e} onRead={markOne} busy={busy} />
          ))}
        </ol>
      )}
      {d && d.total > PAGE && (
        <nav class="pager" aria-label="Inbox pages">
          <button type="button" class="btn btn-small" id="inbox-newer" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - PAGE))}>
            Newer
          </button>
          <span aria-live="polite">
            {int(offset + 1)}–{int(offset + d.events.length)} of {int(d.total)}
          </span>
          <button type="button" class="btn btn-small" id="inbox-older" disabled={offset + d.events.length >= d.total} onClick={() => onOffset(offset + PAGE)}>
            Older
          </button>
        </nav>
      )}
    </Card>
  );
}

// ---------------------------------------------------------------- your alerts

/** States shown without a click; a longer watchlist's are folded under their summary. */
const STATES_OPEN = 5;

function States({ alert }: { alert: Alert }) {
  const n = alert.states.length;
  if (n === 0)
    return <p class="muted small alert-pending">Not checked yet: alerts are checked after every change of the data (a grading run, new prices, a new alert).</p>;
  const w = watched(alert.condition);
  const grade = alert.condition !== "grade_changed";
  const target = alert.ticker ?? "your watchlist";
  const holding = alert.states.filter((s) => s.holds).length;
  return (
    <details class="alert-states-box" open={n <= STATES_OPEN}>
      <summary>
        Last check: {int(n)} asset{n === 1 ? "" : "s"}, the condition holds for {int(holding)}
      </summary>
      <div class="table-wrap">
        <table class="table compact alert-states">
          <caption class="sr-only">What the last check saw for {target}</caption>
          <thead>
            <tr>
              <th scope="col">Ticker</th>
              <th scope="col">Condition holds</th>
              <th scope="col" class="num">
                {w.label}
              </th>
              {grade && <th scope="col">Grade</th>}
              <th scope="col" class="col-opt">
                Checked (UTC)
              </th>
            </tr>
          </thead>
          <tbody>
            {alert.states.map((s) => (
              <tr key={s.ticker} data-ticker={s.ticker}>
                <td>
                  <a class="ticker" href={assetUrl(s.ticker)}>
                    {s.ticker}
                  </a>
                </td>
                <td class="holds">
                  {s.holds ? <strong class="holds-yes">yes</strong> : "no"}
                </td>
                <td class="num watched">
                  {w.show(s.observed)}
                </td>
                {grade && (
                  <td class="grade-cell">
                    {s.observed.letter ?? "—"}
                  </td>
                )}
                <td class="col-opt">
                  <time dateTime={s.evaluated_at}>{utcStamp(s.evaluated_at)}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

function AlertItem({ alert, onChanged, onDeleted }: { alert: Alert; onChanged: (a: Alert) => void; onDeleted: (id: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // A switch shows its new position while the server is asked; a refusal puts it back.
  const [pending, setPending] = useState<AlertChange>({});
  const enabled = pending.enabled ?? alert.enabled;
  const email = pending.email ?? alert.email;
  const h = `alert-${alert.id}-h`;
  const change = async (body: AlertChange) => {
    setBusy(true);
    setError(null);
    setPending(body);
    try {
      onChanged(await alerts.update(alert.id, body));
    } catch (e) {
      setError(e);
    } finally {
      setPending({});
      setBusy(false);
    }
  };
  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      await alerts.remove(alert.id);
      onDeleted(alert.id);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  const target = alert.ticker ? (
    <a class="ticker" href={assetUrl(alert.ticker)}>
      {alert.ticker}
    </a>
  ) : (
    <span>Your watchlist</span>
  );
  return (
    <li class={`alert-item${alert.enabled ? "" : " paused"}`} id={`alert-${alert.id}`} data-alert-id={alert.id}>
      <h3 class="h3 alert-title" id={h}>
        {target} <span class="alert-desc">{alert.description}</span>
        {!alert.enabled && <span class="tag tag-paused">paused</span>}
      </h3>
      <p class="muted small alert-meta">
        {alert.return_period}-day horizon · {METRIC_NAMES[alert.metric]} · created <time dateTime={alert.created_at}>{utcStamp(alert.created_at)}</time>
      </p>
      <div class="alert-controls">
        <label class="field check">
          <input type="checkbox" checked={enabled} disabled={busy} aria-describedby={h} onChange={() => void change({ enabled: !enabled })} />
          Enabled
        </label>
        <label class="field check">
          <input type="checkbox" checked={email} disabled={busy} aria-describedby={h} onChange={() => void change({ email: !email })} />
          In the e-mail digest
        </label>
        <ConfirmDelete
          label={`Confirm deleting the alert on ${alert.ticker ?? "your watchlist"}`}
          question="Delete this alert? Its events stay in the inbox."
          busy={busy}
          describedBy={h}
          onDelete={() => void remove()}
        />
      </div>
      <ErrorNote error={error} what="Changing the alert" />
      <States alert={alert} />
    </li>
  );
}

function YourAlerts({ list, items, setItems }: { list: Loaded<Alert[]>; items: Alert[] | null; setItems: (a: Alert[]) => void }) {
  return (
    <Card title="Your alerts" id="your-alerts">
      {list.loading && !items && <Loading label="Loading your alerts…" />}
      <ErrorNote error={list.error} what="Your alerts" />
      {items && items.length === 0 && <p class="muted">You have no alerts yet: create one below, or with “Alert me” on an asset's page or your watchlist.</p>}
      {items && items.length > 0 && (
        <ul class="alert-list">
          {items.map((a) => (
            <AlertItem
              key={a.id}
              alert={a}
              onChanged={(n) => setItems(items.map((x) => (x.id === n.id ? n : x)))}
              onDeleted={(id) => setItems(items.filter((x) => x.id !== id))}
            />
          ))}
        </ul>
      )}
    </Card>
  );
}

// ---------------------------------------------------------------- new alert

interface Prefill {
  ticker: string;
  watchlist: boolean;
}

function NewAlertForm({ prefill, onCreated }: { prefill: Prefill | null; onCreated: (a: Alert) => void }) {
  const [watchlist, setWatchlist] = useState(prefill?.watchlist ?? false);
  const [ticker, setTicker] = useState(prefill?.ticker ?? "");
  const [draft, setDraft] = useState<ConditionDraft>(() => conditionDraft());
  const [horizon, setHorizon] = useState("90");
  const [metric, setMetric] = useState<Metric>("return");
  const [email, setEmail] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Alert | null>(null);
  const condition = useRef<HTMLSelectElement>(null);

  // A link with ?ticker= or ?watchlist=1: that target, and the form in view with the condition to choose next.
  const key = prefill ? `${prefill.watchlist}:${prefill.ticker}` : "";
  useEffect(() => {
    if (!prefill) return;
    setWatchlist(prefill.watchlist);
    if (prefill.ticker) setTicker(prefill.ticker);
    document.getElementById("new-alert")?.scrollIntoView({ block: "start" });
    condition.current?.focus({ preventScroll: true });
  }, [key]);

  const bad = fieldError(error);
  const msg = error ? alertError(error) : null;
  const tickerError = bad === "ticker" || bad === "watchlist" ? msg : null;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setCreated(null);
    const target = watchlist ? { watchlist: true } : { ticker: ticker.trim() || undefined };
    const body: NewAlert = { ...target, ...conditionBody(draft), return_period: Number(horizon) as NewAlert["return_period"], metric, email };
    try {
      const a = await alerts.create(body);
      setCreated(a);
      onCreated(a);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title="New alert" id="new-alert">
      <form id="new-alert-form" class="new-alert" noValidate onSubmit={submit}>
        <fieldset class="alert-target">
          <legend>Watch</legend>
          <div class="target-choice">
            <label class="field check">
              <input type="radio" name="target" value="ticker" checked={!watchlist} onChange={() => setWatchlist(false)} />
              One asset
            </label>
            <div class={`field target-ticker${tickerError ? " has-error" : ""}`}>
              <label for="na-ticker" class="sr-only">
                Ticker
              </label>
              <input
                id="na-ticker"
                name="ticker"
                type="text"
                autoComplete="off"
                spellcheck={false}
                placeholder="Ticker, e.g. AAPL"
                value={ticker}
                disabled={watchlist}
                aria-invalid={tickerError ? true : undefined}
                aria-describedby={tickerError ? "na-ticker-err" : undefined}
                onInput={(e) => setTicker((e.target as HTMLInputElement).value)}
              />
            </div>
          </div>
          <label class="field check">
            <input type="radio" name="target" value="watchlist" checked={watchlist} onChange={() => setWatchlist(true)} />
            <span>
              My watchlist <span class="target-note">(every asset on it at each check)</span>
            </span>
          </label>
          {tickerError && (
            <span class="field-error" id="na-ticker-err" role="alert">
              {tickerError}
            </span>
          )}
        </fieldset>
        <div class="alert-form-row">
          <ConditionFields idp="na" value={draft} onChange={setDraft} bad={bad} msg={msg} selectRef={condition} />
          <HorizonField idp="na" value={horizon} onChange={setHorizon} error={bad === "return_period" ? msg : null} />
          <div class={`field${bad === "metric" ? " has-error" : ""}`}>
            <label for="na-metric">Metric</label>
            <select id="na-metric" name="metric" value={metric} onChange={(e) => setMetric((e.target as HTMLSelectElement).value as Metric)}>
              <option value="return">Return</option>
              <option value="sharpe">Sharpe</option>
              <option value="sortino">Sortino</option>
            </select>
            {bad === "metric" ? (
              <span class="field-error" role="alert">
                {msg}
              </span>
            ) : (
              <span class="hint">of the grade and ranking read</span>
            )}
          </div>
        </div>
        <label class="field check">
          <input type="checkbox" id="na-email" checked={email} onChange={() => setEmail(!email)} />
          Include its events in my e-mail digest
        </label>
        {error && !bad ? (
          <p class={error instanceof ApiError && error.status === 402 ? "note note-premium" : "note note-error"} role="alert" id="new-alert-error">
            {msg}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" class="btn btn-primary" disabled={busy}>
            {busy ? "Creating…" : "Create alert"}
          </button>
          <span class="muted small" role="status">
            {created && `Created: ${created.description} (${created.ticker ?? "your watchlist"}). It is listed above.`}
          </span>
        </div>
      </form>
    </Card>
  );
}

// ---------------------------------------------------------------- webhooks

/** What the endpoint answered, in words: "HTTP 500 — answered 500: …" ("" without an answer or error). */
function answer(d: Delivery): string {
  return [d.last_status != null ? `HTTP ${d.last_status}` : null, d.last_error].filter(Boolean).join(" — ");
}

function DeliveryTable({ hook, tick }: { hook: Webhook; tick: number }) {
  const log = useData(() => alerts.deliveries(hook.id), [hook.id, tick]);
  const rows = log.data?.deliveries ?? null;
  return (
    <div class="delivery-log" id={`log-${hook.id}`}>
      {log.loading && !rows && <Loading label="Loading the delivery log…" />}
      <ErrorNote error={log.error} what="The delivery log" />
      {rows && rows.length === 0 && <p class="muted small">No calls yet.</p>}
      {rows && rows.length > 0 && (
        <div class="table-wrap">
          <table class="table compact table-cards deliveries">
            <caption class="sr-only">Newest calls to {hook.url}</caption>
            <thead>
              <tr>
                <th scope="col">Queued (UTC)</th>
                <th scope="col">Call</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col" class="num">
                  HTTP
                </th>
                <th scope="col">Error</th>
                <th scope="col">Finished or next attempt (UTC)</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id} data-delivery-id={d.id} data-status={d.status}>
                  <td class="card-title">
                    <time dateTime={d.created_at}>{utcStamp(d.created_at)}</time>
                  </td>
                  <td data-label="Call">{d.event_id ? "event" : "test"}</td>
                  <td data-label="Status" class={`status status-${d.status}`}>
                    {d.status}
                  </td>
                  <td data-label="Attempts" class="num">
                    {int(d.attempts)}
                  </td>
                  <td data-label="HTTP" class="num">
                    {d.last_status ?? "—"}
                  </td>
                  <td data-label="Error" class="delivery-error">
                    {d.last_error ?? "—"}
                  </td>
                  <td data-label={d.status === "pending" ? "Next attempt" : "Finished"}>
                    {d.status === "pending" ? utcStamp(d.next_attempt_at) : d.finished_at ? utcStamp(d.finished_at) : "—"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function HookItem({ hook, onChanged, onDeleted }: { hook: Webhook; onChanged: (w: Webhook) => void; onDeleted: (id: string) => void }) {
  const [busy, setBusy] = useState<"test" | "enable" | "delete" | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tested, setTested] = useState<Delivery | null>(null);
  const [logOpen, setLogOpen] = useState(false);
  const [logTick, setLogTick] = useState(0);
  const h = `hook-${hook.id}-h`;

  const act = async (kind: "test" | "enable" | "delete", fn: () => Promise<void>) => {
    setBusy(kind);
    setError(null);
    try {
      await fn();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  const test = () =>
    act("test", async () => {
      setTested(null);
      const r = await alerts.testWebhook(hook.id);
      setTested(r.delivery);
      setLogTick((t) => t + 1);
      // A failed test counts towards disabling the endpoint: show its state as the server has it.
      onChanged((await alerts.deliveries(hook.id)).webhook);
    });
  const setEnabled = (enabled: boolean) => act("enable", async () => onChanged(await alerts.setWebhookEnabled(hook.id, enabled)));
  const remove = () =>
    act("delete", async () => {
      await alerts.deleteWebhook(hook.id);
      onDeleted(hook.id);
    });

  return (
    <li class="hook" id={`hook-${hook.id}`} data-hook-id={hook.id}>
      <h3 class="h3 hook-url" id={h}>
        <span class="mono">{hook.url}</span>
      </h3>
      <p class="small hook-state">
        {hook.enabled ? (
          <span class="badge badge-on">enabled</span>
        ) : (
          <span class="badge badge-off">disabled</span>
        )}{" "}
        {!hook.enabled && hook.disabled_reason && <span class="hook-reason">{hook.disabled_reason} </span>}
        <span class="muted">
          {hook.consecutive_failures > 0 &&
            `· ${int(hook.consecutive_failures)} failed attempt${hook.consecutive_failures === 1 ? "" : "s"} since the last success `}
          · added <time dateTime={hook.created_at}>{utcStamp(hook.created_at)}</time>
        </span>
      </p>
      <div class="row-actions hook-actions">
        <button
          type="button"
          class="btn btn-small"
          disabled={busy !== null || !hook.enabled}
          title={hook.enabled ? undefined : "A disabled endpoint is not called: enable it first"}
          aria-describedby={h}
          onClick={() => void test()}
        >
          {busy === "test" ? "Sending…" : "Send test"}
        </button>
        <button type="button" class="btn btn-small" aria-expanded={logOpen} aria-controls={`log-${hook.id}`} aria-describedby={h} onClick={() => setLogOpen(!logOpen)}>
          Delivery log
        </button>
        {hook.enabled ? (
          <button type="button" class="btn btn-small" disabled={busy !== null} aria-describedby={h} onClick={() => void setEnabled(false)}>
            Disable
          </button>
        ) : (
          <button type="button" class="btn btn-small btn-primary" disabled={busy !== null} aria-describedby={h} onClick={() => void setEnabled(true)}>
            Enable again
          </button>
        )}
        <ConfirmDelete
          label={`Confirm deleting the endpoint ${hook.url}`}
          question="Delete this endpoint and its log?"
          busy={busy !== null}
          describedBy={h}
          onDelete={() => void remove()}
        />
      </div>
      <div aria-live="polite">
        {tested &&
          (tested.status === "delivered" ? (
            <p class="note note-info hook-test" data-status={tested.status}>
              <strong>Test call delivered</strong>
              {answer(tested) && ` (${answer(tested)})`}.
            </p>
          ) : (
            <p class="note note-error hook-test" data-status={tested.status}>
              <strong>Test call failed{answer(tested) ? ":" : "."}</strong> {answer(tested)}
            </p>
          ))}
      </div>
      <ErrorNote error={error} what="The endpoint" />
      {logOpen && <DeliveryTable hook={hook} tick={logTick} />}
    </li>
  );
}

function Webhooks() {
  const list = useData(() => alerts.webhooks(), []);
  const [items, setItems] = useState<Webhook[] | null>(null);
  useEffect(() => setItems(list.data), [list.data]);
  const [url, setUrl] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);

  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const w = await alerts.createWebhook(url.trim());
      setCreated(w);
      setUrl("");
      setItems([...(items ?? []), w]);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  // The URL refused (its detail names `url`) or one endpoint too many: said under the field.
  const urlError = fieldOf(error, ["url"]) !== null || (error instanceof ApiError && error.status === 409) ? describe(error) : null;

  return (
    <Card title="Webhooks" id="webhooks">
      <p class="muted">
        Every event of your alerts is POSTed as JSON to each enabled endpoint, signed with that endpoint's secret: the header{" "}
        <code>X-Forecast-Signature: t=…,v1=…</code> carries the time and the HMAC-SHA256 of <code>t.</code> followed by the body. A
        failed call is tried again later; after repeated failures the endpoint is disabled until you enable it again. At most 5
        endpoints.
      </p>

      {created && (
        <section class="card key-once secret-once" aria-labelledby="new-secret-h">
          <h3 class="h3" id="new-secret-h">
            Signing secret of <span class="mono">{created.url}</span>
          </h3>
          <ShownOnce
            id="new-secret"
            label="Signing secret"
            value={created.secret}
            why="Your endpoint needs it to check that calls come from this server; if you lose it, delete the endpoint and add it again."
            onDone={() => setCreated(null)}
          />
        </section>
      )}

      <form class="search-form" noValidate onSubmit={add}>
        <div class={`field grow${urlError ? " has-error" : ""}`}>
          <label for="hook-url">Endpoint URL</label>
          <input
            id="hook-url"
            type="text"
            inputMode="url"
            maxLength={2048}
            placeholder="https://example.com/hooks/forecast"
            value={url}
            aria-invalid={urlError ? true : undefined}
            aria-describedby={urlError ? "hook-url-err" : undefined}
            onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {busy ? "Adding…" : "Add endpoint"}
        </button>
      </form>
      {urlError ? (
        <p class="note note-error" role="alert" id="hook-url-err">
          {urlError}
        </p>
      ) : (
        <ErrorNote error={error} what="Webhooks" />
      )}

      {list.loading && !items && <Loading label="Loading your endpoints…" />}
      <ErrorNote error={list.error} what="Your endpoints" />
      {items && items.length === 0 && <p class="muted">No endpoints.</p>}
      {items && items.length > 0 && (
        <ul class="hook-list">
          {items.map((w) => (
            <HookItem
              key={w.id}
              hook={w}
              onChanged={(n) => setItems(items.map((x) => (x.id === n.id ? n : x)))}
              onDeleted={(id) => {
                setItems(items.filter((x) => x.id !== id));
                if (created?.id === id) setCreated(null);
              }}
            />
          ))}
        </ul>
      )}
    </Card>
  );
}

// ---------------------------------------------------------------- page

export function AlertsPage({ loc }: { loc: Location }) {
  useTitle("Alerts");
  const offset = Math.max(0, Math.floor(Number(loc.query.get("offset")) || 0));
  const qTicker = (loc.query.get("ticker") ?? "").trim();
  const qWatchlist = loc.query.get("watchlist") === "1";
  const prefill = qTicker || qWatchlist ? { ticker: qTicker, watchlist: qWatchlist && !qTicker } : null;

  const list = useData(() => alerts.list(), []);
  const [items, setItems] = useState<Alert[] | null>(null);
  useEffect(() => setItems(list.data), [list.data]);

  const goOffset = (o: number) => {
    navigate(withQuery("/alerts", { ticker: qTicker, watchlist: qWatchlist ? "1" : "", offset: o || "" }), { replace: true });
    document.getElementById("inbox")?.scrollIntoView({ block: "start" });
  };

  return (
    <main class="page narrow alerts-page">
      <h1>Alerts</h1>
      <p class="lead">
        An alert watches one asset, or every asset of your watchlist, and fires when its condition becomes true — again only after
        it was false. It is checked after every change of the data (a grading run, new prices). Its events arrive here, in your
        e-mail digest and at your webhooks.
      </p>
      <ModelRecord returnPeriod="90" metric="return" />
      <Inbox offset={offset} onOffset={goOffset} />
      <YourAlerts list={list} items={items} setItems={setItems} />
      <NewAlertForm prefill={prefill} onCreated={(a) => setItems([...(items ?? []), a])} />
      <Webhooks />
    </main>
  );
}
