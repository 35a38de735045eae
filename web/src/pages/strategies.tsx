// The strategies page: the built-in strategies, the ones other users share,
// and yours — upload a strategy component (.wasm, by file picker or by
// dropping it), share it or keep it private, pick the version that runs,
// delete it, or open a backtest with it.
//
// Which uploads are yours: the server marks them (`owned`).
import { useRef, useState } from "preact/hooks";
import { answer, ApiError, describe, request, WEB, type Schemas } from "../api/client";
import { api, type StrategyList } from "../api/endpoints";
import { withQuery } from "../router";
import { Card, compact, copyText, ErrorNote, int, Loading, useData, useTitle } from "../lib";
import { useSession } from "../session";

type Item = Schemas["StrategyItem"];
type Uploaded = Schemas["UploadedStrategy"];
type State = Schemas["StrategyState"];

/** The server's limit on a component (32 MiB: a Python strategy carries its interpreter). */
const MAX_BYTES = 32 * 1024 * 1024;

/**
 * A call with a raw body (the upload) or no JSON answer (a 204), which
 * `request` does not make; failures become ApiError with the server's detail.
 */
async function send<T>(method: string, path: string, body?: Blob, type?: string, onUnauthorized?: () => void): Promise<T | null> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (type) headers["Content-Type"] = type;
  let res: Response;
  try {
    res = await fetch(path, { method, credentials: "same-origin", headers, body });
  } catch {
    throw new ApiError(0, "Could not reach the server — check your connection and try again.");
  }
  if (res.status === 204) return null;
  return answer<T>(res, true, onUnauthorized);
}

/** The sentence for a failed upload or change: the server's detail when it gives one. */
function explain(e: unknown, what: string): string {
  if (e instanceof ApiError) {
    if (e.status === 0 || e.status === 402 || e.status === 429) return describe(e, what);
    if (e.status === 413) return e.detail || "The file is larger than 32 MiB, the most a strategy component may weigh.";
    if (e.status === 503)
      return (e.detail || "The server is busy checking other uploads.") + (e.retryAfter ? ` Try again in ${e.retryAfter} s.` : " Try again in a moment.");
    if (e.detail) return e.detail;
  }
  return describe(e, what);
}

/** `@handle/name` → [handle, name]; a built-in → [null, name]. */
function split(item: { name: string; owner?: string | null }): [string | null, string] {
  const m = /^(@[^/]+)\/(.+)$/.exec(item.name);
  if (m) return [item.owner ?? m[1], m[2]];
  return [null, item.name];
}

const itemPath = (handle: string, name: string) => `${WEB}/api/strategies/${handle}/${encodeURIComponent(name)}`;
const backtestUrl = (name: string) => withQuery("/backtest", { strategy: name });


function ShortHash({ sha, name }: { sha: string; name: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    const done = await copyText(sha);
    setCopied(done);
    if (done) setTimeout(() => setCopied(false), 2000);
  };
  return (
    <span class="sha">
      <code title={sha} class="sha-short">
        {sha.slice(0, 12)}…
      </code>
      <button type="button" class="btn btn-small btn-ghost" onClick={copy} title={sha}>
        {copied ? "Copied" : "Copy"}
        <span class="sr-only"> the SHA-256 of {name}</span>
      </button>
    </span>
  );
}

function Imports({ imports }: { imports: string[] }) {
  if (imports.length === 0) return null;
  return (
    <details class="imports">
      <summary>Imports ({imports.length})</summary>
      <ul>
        {imports.map((i) => (
          <li key={i}>
            <code>{i}</code>
          </li>
        ))}
      </ul>
    </details>
  );
}

type Figures = Schemas["ResourceFigures"];
type Spread = Schemas["Spread"];

/** "12–40 ms, mean 20": a figure's spread over the recent runs. */
function spread(s: Spread, unit: (v: number) => string): string {
  const [lo, hi] = [unit(s.min), unit(s.max)];
  if (lo === hi) return lo;
  return `${lo}–${hi}, mean ${unit(s.mean)}`;
}
const ms = (v: number) => `${v < 10 ? v.toFixed(1) : int(v)} ms`;
const mib = (v: number) => `${(v / (1024 * 1024)).toFixed(1)} MiB`;

/** What a strategy used in its recent backtests (min, max and mean per run). */
function Resources({ r }: { r: Figures | null | undefined }) {
  if (!r) return <span class="muted">Not run yet</span>;
  return (
    <dl class="resources">
      <dt>Runs</dt>
      <dd>{int(r.runs)}</dd>
      <dt>Guest time</dt>
      <dd>{spread(r.guest_ms, ms)}</dd>
      <dt>Memory</dt>
      <dd>{spread(r.peak_memory_bytes, mib)}</dd>
      <dt>Fuel</dt>
      <dd>{r.fuel ? spread(r.fuel, compact) : <span class="muted">not metered</span>}</dd>
    </dl>
  );
}

interface RowActions {
  busy: string | null;
  confirming: string | null;
  setConfirming: (n: string | null) => void;
  error: { name: string; e: unknown } | null;
  change: (it: Item, c: Schemas["StrategyChange"]) => void;
  remove: (it: Item) => void;
}

function StrategyTable({
  id,
  items,
  caption,
  manage,
  actions,
  lastUpload,
}: {
  id: string;
  items: Item[];
  caption: string;
  manage: boolean;
  actions: RowActions;
  lastUpload: Uploaded | null;
}) {
  return (
    <div class="table-wrap">
      <table class="table table-cards strategies-table" id={id}>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Strategy</th>
            <th scope="col">Description</th>
            <th scope="col">Version</th>
            <th scope="col">SHA-256</th>
            <th scope="col">Signer</th>
            <th scope="col" class="col-opt">
              Versions
            </th>
            <th scope="col">Your recent runs</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((it) => {
            const [handle, short] = split(it);
            const versions = it.versions ?? [];
            const justUploaded = lastUpload?.strategy === it.name ? lastUpload : null;
            const description = it.description || justUploaded?.description || "";
            const shared = it.visibility === "shared";
            const busy = actions.busy === it.name;
            const vid = `ver-${id}-${short}`;
            return (
              <tr key={it.name} data-strategy={it.name}>
                <td class="card-title">
                  <span class="strategy-name">
                    {handle && (
                      <>
                        <span class="muted">{handle}/</span>
                        <wbr />
                      </>
                    )}
                    <span>{short}</span>
                  </span>
                  {it.visibility && it.visibility !== "builtin" && (
                    <span class={`badge badge-${it.visibility}`}>{it.visibility === "shared" ? "shared" : "private"}</span>
                  )}
                </td>
                <td class="card-sub strategy-desc-cell">
                  {description || <span class="muted">No description</span>}
                  {it.manifest && (it.manifest.licence || it.manifest.author) && (
                    <p class="small muted manifest">
                      {[it.manifest.licence && `Licence ${it.manifest.licence}`, it.manifest.author && `by ${it.manifest.author}`].filter(Boolean).join(" · ")}
                    </p>
                  )}
                  <Imports imports={it.imports?.length ? it.imports : justUploaded?.imports ?? []} />
                </td>
                <td data-label="Version">
                  {manage && versions.length > 0 ? (
                    <>
                      <label class="sr-only" for={vid}>
                        Version of {it.name} that runs
                      </label>
                      <select
                        id={vid}
                        class="version-select"
                        value={it.version}
                        disabled={busy}
                        onChange={(e) => {
                          const v = (e.target as HTMLSelectElement).value;
                          if (v !== it.version) actions.change(it, { current_version: v });
                        }}
                      >
                        {versions.map((v) => (
                          <option key={v} value={v}>
                            {v}
                          </option>
                        ))}
                      </select>
                    </>
                  ) : (
                    it.version
                  )}
                  {it.wit_version && (
                    <span class="small muted wit-version" title="The forecast:plugins WIT package it was built against">
                      <br />
                      WIT {it.wit_version}
                    </span>
                  )}
                </td>
                <td data-label="SHA-256">
                  <ShortHash sha={it.sha256} name={it.name} />
                </td>
                <td data-label="Signer">
                  {it.signer ? (
                    <code
                      class="signer"
                      title={`${it.signer}: the key that signed these bytes${it.owner ? `; uploaded by ${it.owner}` : ""}`}
                    >
                      {it.signer.length > 22 ? `${it.signer.slice(0, 20)}…` : it.signer}
                    </code>
                  ) : (
                    <span class="muted">unsigned</span>
                  )}
                </td>
                <td data-label="Versions" class="col-opt">
                  {versions.length > 0 ? versions.join(", ") : <span class="muted">—</span>}
                </td>
                <td data-label="Your recent runs" class="resources-cell">
                  <Resources r={it.resources} />
                </td>
                <td class="actions-cell">
                  <span class="strategy-actions">
                    <a class="btn btn-small" href={backtestUrl(it.name)}>
                      Run a backtest with it<span class="sr-only"> ({it.name})</span>
                    </a>
                    {manage && (
                      <button
                        type="button"
                        class="btn btn-small"
                        disabled={busy}
                        onClick={() => actions.change(it, { shared: !shared })}
                      >
                        {shared ? "Make private" : "Share"}
                        <span class="sr-only">{shared ? ` (${it.name})` : ` ${it.name} with every Premium user`}</span>
                      </button>
                    )}
                    {manage &&
                      (actions.confirming === it.name ? (
                        <span class="confirm" role="group" aria-label={`Confirm deleting ${it.name}`}>
                          <span>
                            Delete “{it.name}” and all its versions?{shared ? " Users it is shared with can no longer run it." : ""}
                          </span>
                          <button type="button" class="btn btn-small btn-danger" disabled={busy} onClick={() => actions.remove(it)}>
                            Yes, delete
                          </button>
                          <button type="button" class="btn btn-small btn-ghost" onClick={() => actions.setConfirming(null)}>
                            Keep
                          </button>
                        </span>
                      ) : (
                        <button type="button" class="btn btn-small" disabled={busy} onClick={() => actions.setConfirming(it.name)}>
                          Delete<span class="sr-only"> {it.name}</span>
                        </button>
                      ))}
                  </span>
                  {actions.error && actions.error.name === it.name && (
                    <p class="note note-error" role="alert">
                      {explain(actions.error.e, "Changing a strategy")}
                    </p>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Upload({ onUploaded, onUnauthorized }: { onUploaded: (u: Uploaded) => void; onUnauthorized: () => void }) {
  const [over, setOver] = useState(false);
  const [checking, setChecking] = useState<string | null>(null);
  const [result, setResult] = useState<Uploaded | null>(null);
  const [error, setError] = useState<unknown>(null);
  const input = useRef<HTMLInputElement>(null);

  const upload = async (file: File | null | undefined) => {
    if (!file) return;
    setError(null);
    setResult(null);
    if (!/\.wasm$/i.test(file.name) && file.type !== "application/wasm") {
      setError(new ApiError(415, `“${file.name}” is not a .wasm file: choose a WebAssembly component of the strategy world.`));
      return;
    }
    if (file.size > MAX_BYTES) {
      setError(new ApiError(413, `“${file.name}” is ${int(file.size)} bytes: a strategy component may weigh at most 32 MiB.`));
      return;
    }
    if (file.size === 0) {
      setError(new ApiError(400, `“${file.name}” is empty.`));
      return;
    }
    setChecking(file.name);
    try {
      const u = await send<Uploaded>("POST", `${WEB}/api/strategies`, file, "application/wasm", onUnauthorized);
      if (u) {
        setResult(u);
        onUploaded(u);
      }
    } catch (e) {
      setError(e);
    } finally {
      setChecking(null);
      if (input.current) input.current.value = "";
    }
  };

  return (
    <Card title="Upload a strategy" id="upload">
      <p class="muted small">
        A WebAssembly component of the <code>strategy</code> world (<code>.wasm</code>, at most 32 MiB). The server compiles it
        and runs its self-tests before storing it as <code>@your-handle/name</code>; it starts private, runnable by you only.
      </p>
      <p class="muted small" id="upload-howto">
        To make one, from a clone of the repository: <code>make plugin NAME=my-strategy</code> writes a Rust template to{" "}
        <code>plugins/my-strategy</code>; put your rule in <code>rebalance</code>, run <code>cargo test</code> there (a backtest
        over the shipped prices), then <code>cargo build --release --target wasm32-wasip2</code>. The file to upload is{" "}
        <code>target/wasm32-wasip2/release/my_strategy.wasm</code>. In Python: <code>make plugin NAME=my-strategy LANG=python</code>{" "}
        builds <code>plugins/my-strategy/build/my_strategy.wasm</code> with componentize-py. <code>sdk/README.md</code> explains the
        rest.
      </p>
      <div
        class={`dropzone${over ? " over" : ""}${checking ? " busy" : ""}`}
        id="dropzone"
        onDragEnter={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragOver={(e) => {
          e.preventDefault();
          if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (!checking) void upload(e.dataTransfer?.files?.[0]);
        }}
      >
        <p class="dropzone-text" aria-hidden="true">
          Drop a <code>.wasm</code> file here, or choose one:
        </p>
        <div class="field">
          <label for="strategy-file">Strategy component (.wasm)</label>
          <input
            id="strategy-file"
            ref={input}
            type="file"
            accept=".wasm,application/wasm"
            disabled={!!checking}
            aria-describedby={error ? "upload-error" : undefined}
            onChange={(e) => void upload((e.target as HTMLInputElement).files?.[0])}
          />
        </div>
      </div>
      {checking && <Loading label={`Checking ${checking}… the server compiles it and runs its self-tests, which can take a few seconds.`} />}
      {error ? (
        <p class={error instanceof ApiError && error.status === 402 ? "note note-premium upload-error" : "note note-error upload-error"} role="alert" id="upload-error">
          {explain(error, "Uploading strategies")}
        </p>
      ) : null}
      {result && (
        <div class="note note-info upload-result" id="upload-result" role="status">
          <p>
            <strong>
              {result.created ? "Stored" : "Already stored (the same bytes)"}: <code>{result.strategy}</code> {result.version}
            </strong>{" "}
            · {int(result.size)} bytes · {result.shared ? "shared" : "private"} · runs version {result.current_version} ·{" "}
            {result.signer ? <code>{result.signer}</code> : "unsigned"}
          </p>
          {result.description && <p>{result.description}</p>}
          <p class="mono small sha-full">sha256 {result.sha256}</p>
          <Imports imports={result.imports} />
          <p>
            <a href={backtestUrl(result.strategy)}>Run a backtest with it</a>
          </p>
        </div>
      )}
    </Card>
  );
}

export function StrategiesPage() {
  useTitle("Strategies");
  const { setUser } = useSession();
  const list = useData<StrategyList>(() => api.strategies(), []);
  const [lastUpload, setLastUpload] = useState<Uploaded | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [rowError, setRowError] = useState<{ name: string; e: unknown } | null>(null);
  const [notice, setNotice] = useState("");
  const unauthorized = () => setUser(null);

  const items = list.data?.strategies ?? [];
  const isMine = (s: Item) => !!s.owned;
  const builtin = items.filter((s) => !s.owner && (s.visibility ?? "builtin") === "builtin");
  const mine = items.filter(isMine);
  const shared = items.filter((s) => s.owner && !isMine(s));

  const change = async (it: Item, c: Schemas["StrategyChange"]) => {
    const [handle, name] = split(it);
    if (!handle) return;
    setBusy(it.name);
    setRowError(null);
    setNotice("");
    try {
      const st = await request<State>("PATCH", itemPath(handle, name), { body: c });
      setNotice(
        c.shared !== undefined
          ? `${st.strategy} is now ${st.shared ? "shared with every Premium user" : "private"}.`
          : `${st.strategy} now runs version ${st.current_version}.`,
      );
      list.reload();
    } catch (e) {
      setRowError({ name: it.name, e });
    } finally {
      setBusy(null);
    }
  };

  const remove = async (it: Item) => {
    const [handle, name] = split(it);
    if (!handle) return;
    setBusy(it.name);
    setRowError(null);
    setNotice("");
    try {
      await send<null>("DELETE", itemPath(handle, name), undefined, undefined, unauthorized);
      setConfirming(null);
      if (lastUpload?.strategy === it.name) setLastUpload(null);
      setNotice(`Deleted ${it.name}.`);
      // The row (and its focused button) is gone: the focus goes to the section.
      const h = document.getElementById("mine-h");
      if (h) {
        h.setAttribute("tabindex", "-1");
        h.focus();
      }
      list.reload();
    } catch (e) {
      setRowError({ name: it.name, e });
    } finally {
      setBusy(null);
    }
  };

  const actions: RowActions = { busy, confirming, setConfirming, error: rowError, change, remove };
  const myHandle = mine[0]?.owner ?? null;

  return (
    <main class="page strategies-page">
      <h1>Strategies</h1>
      <p class="lead">
        The trading strategies a <a href="/backtest">backtest</a> can run: the built-in ones, those other users share, and
        your own uploads. Each is a WebAssembly component identified by its SHA-256.
      </p>

      <Upload
        onUnauthorized={unauthorized}
        onUploaded={(u) => {
          setLastUpload(u);
          list.reload();
        }}
      />

      {list.loading && !list.data && <Loading label="Loading strategies…" />}
      <ErrorNote error={list.error} what="Strategies" />

      <p class="sr-only" role="status" aria-live="polite">
        {notice}
      </p>

      {list.data && (
        <>
          <Card title="Built-in" id="builtin">
            <StrategyTable id="builtin-table" items={builtin} caption="Built-in strategies" manage={false} actions={actions} lastUpload={null} />
          </Card>
          <Card title="Shared with you" id="shared">
            {shared.length === 0 ? (
              <p class="muted">No other user shares a strategy yet.</p>
            ) : (
              <StrategyTable id="shared-table" items={shared} caption="Strategies other users share" manage={false} actions={actions} lastUpload={null} />
            )}
          </Card>
          <Card title="Mine" id="mine">
            {notice && (
              <p class="muted small" aria-hidden="true">
                {notice}
              </p>
            )}
            {myHandle && (
              <p class="muted small">
                Your handle: <code>{myHandle}</code>. Backtests name your strategies <code>{myHandle}/name</code>.
              </p>
            )}
            {mine.length === 0 ? (
              <p class="muted">You have not uploaded a strategy yet.</p>
            ) : (
              <StrategyTable id="mine-table" items={mine} caption="Your strategies" manage actions={actions} lastUpload={lastUpload} />
            )}
          </Card>
        </>
      )}
    </main>
  );
}
