// What an alert watches, as a person chooses it: the condition (in words)
// and the one parameter it needs, shared by the Alerts page's "New alert"
// form and the "Alert me" forms of the asset page and the watchlist.
//
// Levels are typed as percentages (−20 for 20 % under the high) and sent as
// fractions (−0.2); the server checks every field and its `detail` is shown
// under the field it names. docs/ALERTS.md describes each condition.
import type { Ref } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, describe, fieldOf } from "./api/client";
import { alerts, HORIZONS, type Alert, type Condition, type NewAlert } from "./api/alerts";
import { CATEGORIES } from "./api/endpoints";

/** The parameter a condition needs (null: none). */
type Param = "level" | "bucket" | "top_n" | null;

const CONDITIONS: { value: Condition; label: string; param: Param }[] = [
  { value: "drawdown_below", label: "Drawdown falls to or below a level", param: "level" },
  { value: "drawdown_above", label: "Drawdown recovers to or above a level", param: "level" },
  { value: "grade_changed", label: "Grade changes", param: null },
  { value: "bucket_changed", label: "Drawdown moves to another bucket", param: null },
  { value: "bucket_entered", label: "Drawdown enters a bucket", param: "bucket" },
  { value: "bucket_left", label: "Drawdown leaves a bucket", param: "bucket" },
  { value: "median_return_above", label: "Median return is at or above a level", param: "level" },
  { value: "median_return_below", label: "Median return is at or below a level", param: "level" },
  { value: "top_n_entered", label: "Enters the top N of the ranking", param: "top_n" },
  { value: "top_n_left", label: "Leaves the top N of the ranking", param: "top_n" },
];

const paramOf = (c: Condition): Param => CONDITIONS.find((x) => x.value === c)?.param ?? null;

/** The fields of a request the server may name in a 400's detail. */
const ALERT_FIELDS = ["ticker", "watchlist", "condition", "level", "bucket", "top_n", "return_period", "metric", "category", "email"];

/** The condition part of a form, as typed. */
export interface ConditionDraft {
  condition: Condition;
  /** Percent, e.g. "-20". */
  level: string;
  bucket: string;
  top_n: string;
  /** "" for the whole ranking. */
  category: string;
}

export function conditionDraft(condition: Condition = "drawdown_below", level = "-20"): ConditionDraft {
  return { condition, level, bucket: "", top_n: "10", category: "" };
}

/** A typed number, or undefined when the field is empty (the server then says it is required). */
function numberOf(s: string): number | undefined {
  const t = s.trim();
  return t === "" ? undefined : Number(t);
}

/** The request's condition fields: only the parameter the condition takes, a level as a fraction. */
export function conditionBody(d: ConditionDraft): Pick<NewAlert, "condition" | "level" | "bucket" | "top_n" | "category"> {
  const param = paramOf(d.condition);
  const level = numberOf(d.level);
  return {
    condition: d.condition,
    level: param === "level" && level !== undefined ? Number((level / 100).toFixed(6)) : undefined,
    bucket: param === "bucket" ? numberOf(d.bucket) : undefined,
    top_n: param === "top_n" ? numberOf(d.top_n) : undefined,
    category: param === "top_n" && d.category ? (d.category as NewAlert["category"]) : undefined,
  };
}

/** The detail of a refused request, under the field it names (a 404 is about the ticker). */
export function fieldError(e: unknown): string | null {
  if (e instanceof ApiError && e.status === 404) return "ticker";
  return fieldOf(e, ALERT_FIELDS);
}

/** The sentence for a refused alert. */
export function alertError(e: unknown): string {
  if (e instanceof ApiError && e.status === 409)
    return e.detail || "You already have 50 alerts, the most an account may hold: delete one you no longer need first.";
  return describe(e, "Alerts");
}

/** A field's message when the server named it, else its hint. */
function Under({ id, hint, error }: { id: string; hint: string; error: string | null }) {
  return error ? (
    <span class="field-error" id={`${id}-err`} role="alert">
      {error}
    </span>
  ) : (
    <span class="hint" id={`${id}-hint`}>
      {hint}
    </span>
  );
}

/**
 * The condition select and the field its parameter needs (a level in
 * percent, a bucket 0–19, or N 1–100 with an optional category). `idp`
 * prefixes the ids; `bad` is the field the server named, `msg` its detail.
 */
export function ConditionFields({
  idp,
  value,
  onChange,
  bad,
  msg,
  selectRef,
}: {
  idp: string;
  value: ConditionDraft;
  onChange: (d: ConditionDraft) => void;
  bad: string | null;
  msg: string | null;
  /** The condition select, for a form that focuses it when it opens. */
  selectRef?: Ref<HTMLSelectElement>;
}) {
  const param = paramOf(value.condition);
  const drawdown = value.condition.startsWith("drawdown_");
  const err = (f: string) => (bad === f ? msg : null);
  const described = (f: string) => `${idp}-${f}-${bad === f ? "err" : "hint"}`;
  const set = (patch: Partial<ConditionDraft>) => onChange({ ...value, ...patch });
  const numberInput = (f: "level" | "bucket" | "top_n", label: string, attrs: Record<string, unknown>, hint: string) => (
    <div class={`field${bad === f ? " has-error" : ""}`}>
      <label for={`${idp}-${f}`}>{label}</label>
      <input
        id={`${idp}-${f}`}
        name={f}
        type="number"
        value={value[f]}
        aria-invalid={bad === f ? true : undefined}
        aria-describedby={described(f)}
        onInput={(e) => set({ [f]: (e.target as HTMLInputElement).value })}
        {...attrs}
      />
      <Under id={`${idp}-${f}`} hint={hint} error={err(f)} />
    </div>
  );
  return (
    <>
      <div class={`field field-condition${bad === "condition" ? " has-error" : ""}`}>
        <label for={`${idp}-condition`}>Alert me when</label>
        <select
          id={`${idp}-condition`}
          name="condition"
          ref={selectRef}
          value={value.condition}
          aria-invalid={bad === "condition" ? true : undefined}
          aria-describedby={described("condition")}
          onChange={(e) => set({ condition: (e.target as HTMLSelectElement).value as Condition })}
        >
          {CONDITIONS.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
        <Under
          id={`${idp}-condition`}
          hint={param === null ? "fires on a change from the value last seen, never on the first check" : "fires when it becomes true, again only after it was false"}
          error={err("condition")}
        />
      </div>
      {param === "level" &&
        numberInput(
          "level",
          "Level (%)",
          { inputMode: "decimal", step: 1, min: -100, max: drawdown ? 0 : 1000 },
          drawdown ? "−100 to 0; −20 is 20 % under the high" : "−100 to 1000; 5 is a 5 % median return",
        )}
      {param === "bucket" &&
        numberInput("bucket", "Bucket", { inputMode: "numeric", step: 1, min: 0, max: 19 }, "0 (nearest the high) to 19, of 20 drawdown buckets")}
      {param === "top_n" && (
        <>
          {numberInput("top_n", "Top N", { inputMode: "numeric", step: 1, min: 1, max: 100 }, "1 to 100")}
          <div class={`field${bad === "category" ? " has-error" : ""}`}>
            <label for={`${idp}-category`}>Ranking</label>
            <select
              id={`${idp}-category`}
              name="category"
              value={value.category}
              aria-invalid={bad === "category" ? true : undefined}
              aria-describedby={described("category")}
              onChange={(e) => set({ category: (e.target as HTMLSelectElement).value })}
            >
              <option value="">Every category</option>
              {CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
            <Under id={`${idp}-category`} hint="rank among every asset, or within a category" error={err("category")} />
          </div>
        </>
      )}
    </>
  );
}

/** The horizon select (7 to 365 days, 90 by default). */
export function HorizonField({ idp, value, onChange, error }: { idp: string; value: string; onChange: (v: string) => void; error: string | null }) {
  return (
    <div class={`field${error ? " has-error" : ""}`}>
      <label for={`${idp}-return_period`}>Horizon</label>
      <select
        id={`${idp}-return_period`}
        name="return_period"
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${idp}-return_period-${error ? "err" : "hint"}`}
        onChange={(e) => onChange((e.target as HTMLSelectElement).value)}
      >
        {HORIZONS.map((h) => (
          <option key={h} value={String(h)}>
            {h} days
          </option>
        ))}
      </select>
      <Under id={`${idp}-return_period`} hint="of the grade, median and ranking read" error={error} />
    </div>
  );
}

/**
 * The state of an "Alert me" control whose form has the id `id`: open or
 * not; closing it puts the focus back on its button.
 */
export function useAlertMe(id: string) {
  const [open, setOpen] = useState(false);
  return {
    id,
    open,
    toggle: () => setOpen((o) => !o),
    close: () => {
      setOpen(false);
      document.getElementById(`${id}-btn`)?.focus();
    },
  };
}

/** "Alert me" (or "Alert me on my watchlist"): opens the inline form (`AlertMeForm`) placed near it. */
export function AlertMeButton({ label, state, small = false }: { label: string; state: ReturnType<typeof useAlertMe>; small?: boolean }) {
  return (
    <button
      type="button"
      class={small ? "btn btn-small alert-me-btn" : "btn alert-me-btn"}
      id={`${state.id}-btn`}
      aria-expanded={state.open}
      aria-controls={state.id}
      onClick={state.toggle}
    >
      <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
        <path d="M8 1.5a4 4 0 0 0-4 4V9l-1.5 2.5h11L12 9V5.5a4 4 0 0 0-4-4ZM6.3 13a1.8 1.8 0 0 0 3.4 0" fill="none" stroke="currentColor" stroke-width="1.5" />
      </svg>
      {label}
    </button>
  );
}

/**
 * The small inline form behind "Alert me": a condition (drawdown at or
 * below `level` percent by default), its parameter and the horizon; creates
 * the alert and confirms with a link to the Alerts page.
 */
export function AlertMeForm({
  id,
  target,
  level,
  onClose,
}: {
  id: string;
  /** One ticker, or the watchlist. */
  target: { ticker: string } | { watchlist: true };
  /** The level to start from, in percent. */
  level: number;
  onClose: () => void;
}) {
  const idp = `${id}-f`;
  const [draft, setDraft] = useState<ConditionDraft>(() => conditionDraft("drawdown_below", String(level)));
  const [horizon, setHorizon] = useState("90");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Alert | null>(null);
  const first = useRef<HTMLSelectElement>(null);
  const done = useRef<HTMLParagraphElement>(null);
  useEffect(() => first.current?.focus(), []);
  useEffect(() => {
    if (created) done.current?.focus();
  }, [created]);

  const bad = fieldError(error);
  const msg = error ? alertError(error) : null;
  const what = "ticker" in target ? target.ticker : "your watchlist";

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: NewAlert = { ...target, ...conditionBody(draft), return_period: Number(horizon) as NewAlert["return_period"] };
      setCreated(await alerts.create(body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (created)
    return (
      <div class="card alert-me" id={id}>
        <p class="note note-info alert-me-done" role="status" tabIndex={-1} ref={done}>
          <strong>Alert created:</strong> {created.description} ({what}, {created.return_period}-day horizon). Its events
          appear on the <a href="/alerts">Alerts page</a>, where you can pause or delete it.
        </p>
        <button type="button" class="btn btn-small btn-ghost" onClick={onClose}>
          Close
        </button>
      </div>
    );

  return (
    <form class="card alert-me" id={id} noValidate onSubmit={submit} aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>New alert on {what}</h2>
      <div class="alert-form-row">
        <ConditionFields idp={idp} value={draft} onChange={setDraft} bad={bad} msg={msg} selectRef={first} />
        <HorizonField idp={idp} value={horizon} onChange={setHorizon} error={bad === "return_period" ? msg : null} />
      </div>
      {error && (!bad || bad === "ticker" || bad === "watchlist") ? (
        <p class={error instanceof ApiError && error.status === 402 ? "note note-premium" : "note note-error"} role="alert">
          {msg}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {busy ? "Creating…" : "Create alert"}
        </button>
        <button type="button" class="btn btn-ghost" onClick={onClose}>
          Cancel
        </button>
        <span class="muted small">Checked after every change of the data; events go to your inbox and e-mail digest.</span>
      </div>
    </form>
  );
}
