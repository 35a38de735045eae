import { useState } from "preact/hooks";
import { ApiError, describe } from "../api/client";
import { api, type CreatedKey, type KeyRecord } from "../api/endpoints";
import { Card, ErrorNote, Loading, ShownOnce, useData, useTitle } from "../lib";
import { utcStamp } from "../facts";
import { LockMark, UpgradeHow } from "../locked";
import { isPremium, useSession } from "../session";

function keyError(e: unknown): string {
  if (e instanceof ApiError && e.status === 409)
    return "You already have 5 active keys, the most an account may hold. Revoke one you no longer use, then create a new one.";
  if (e instanceof ApiError && e.status === 402)
    return "API keys need the Premium tier: the HTTP API is available to Premium accounts only. See the plans page to upgrade.";
  return describe(e, "API keys");
}

export function KeysPage() {
  useTitle("API keys");
  const { user } = useSession();
  const premium = isPremium(user);
  const list = useData<KeyRecord[]>(() => api.keys(), []);
  const [name, setName] = useState("");
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<unknown>(null);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [revokeError, setRevokeError] = useState<{ id: string; e: unknown } | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    if (!name.trim()) {
      setCreateError(new ApiError(400, "Give the key a name, e.g. the machine or script that will use it."));
      return;
    }
    setCreating(true);
    setCreateError(null);
    try {
      const k = await api.createKey(name.trim());
      setCreated(k);
      setName("");
      list.reload();
    } catch (err) {
      setCreateError(err);
    } finally {
      setCreating(false);
    }
  };

  const revoke = async (id: string) => {
    setRevokeError(null);
    try {
      await api.revokeKey(id);
      setConfirming(null);
      if (created?.id === id) setCreated(null);
      list.reload();
    } catch (err) {
      setRevokeError({ id, e: err });
    }
  };

  const listPremium = list.error instanceof ApiError && list.error.status === 402;

  return (
    <main class="page narrow">
      <h1>API keys</h1>
      <p class="lead">
        A key lets a script call the HTTP API (<code>Authorization: Bearer svc_…</code>). Only its first characters are
        stored in readable form; the key itself is shown once, when you create it. An account may hold 5 active keys.
      </p>

      {created && (
        <section class="card key-once" aria-labelledby="new-key-h">
          <h2 id="new-key-h">Your new key “{created.name}”</h2>
          <ShownOnce
            id="new-key"
            label="New API key"
            value={created.key}
            why="We store only a hash of it; if you lose it, revoke it and create another."
            onDone={() => setCreated(null)}
          />
        </section>
      )}

      {!premium && (
        <section class="card locked-card" aria-labelledby="keys-locked-h">
          <h2 id="keys-locked-h">
            Creating keys needs Premium <LockMark />
          </h2>
          <p>
            The HTTP API is available to Premium accounts only, so a key is created on the Premium tier. Keys you created
            before are listed below, and you can still revoke them. <a href="/plans">Compare the plans</a>.
          </p>
          <UpgradeHow />
        </section>
      )}

      {premium && (
      <Card title="Create a key" id="create">
        <form class="search-form" onSubmit={create}>
          <div class="field grow">
            <label for="key-name">Name</label>
            <input
              id="key-name"
              type="text"
              maxLength={100}
              placeholder="e.g. laptop, nightly-report"
              value={name}
              aria-invalid={createError instanceof ApiError && createError.status === 400 ? true : undefined}
              aria-describedby={createError ? "create-error" : undefined}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </div>
          <button type="submit" class="btn btn-primary" disabled={creating}>
            {creating ? "Creating…" : "Create key"}
          </button>
        </form>
        {createError ? (
          <p class={createError instanceof ApiError && createError.status === 402 ? "note note-premium" : "note note-error"} role="alert" id="create-error">
            {keyError(createError)}
          </p>
        ) : null}
      </Card>
      )}

      <Card title="Active keys" id="active">
        {list.loading && !list.data && <Loading label="Loading keys…" />}
        {listPremium ? (
          <p class="note note-premium" role="alert">
            {keyError(list.error)}
          </p>
        ) : (
          <ErrorNote error={list.error} what="The list of keys" />
        )}
        {list.data && list.data.length === 0 && <p class="muted">No active keys.</p>}
        {list.data && list.data.length > 0 && (
          <div class="table-wrap">
            <table class="table table-cards keys-table">
              <caption class="sr-only">Your active API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Created (UTC)</th>
                  <th scope="col">Last used (UTC)</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((k) => (
                  <tr key={k.id} data-key-id={k.id}>
                    <td class="card-title">{k.name}</td>
                    <td class="mono" data-label="Key">
                      {k.key_prefix}…
                    </td>
                    <td data-label="Created">
                      <time dateTime={k.created_at}>{utcStamp(k.created_at)}</time>
                    </td>
                    <td data-label="Last used">
                      {k.last_used_at ? <time dateTime={k.last_used_at}>{utcStamp(k.last_used_at)}</time> : "never"}
                    </td>
                    <td class="actions-cell">
                      {confirming === k.id ? (
                        <span class="confirm" role="group" aria-label={`Confirm revoking ${k.name}`}>
                          <span>Revoke “{k.name}”? Scripts using it stop working at once.</span>
                          <button type="button" class="btn btn-small btn-danger" onClick={() => revoke(k.id)}>
                            Yes, revoke
                          </button>
                          <button type="button" class="btn btn-small btn-ghost" onClick={() => setConfirming(null)}>
                            Keep
                          </button>
                        </span>
                      ) : (
                        <button type="button" class="btn btn-small" onClick={() => setConfirming(k.id)} aria-label={`Revoke ${k.name}`}>
                          Revoke
                        </button>
                      )}
                      {revokeError && revokeError.id === k.id && <ErrorNote error={revokeError.e} what="Revoking a key" />}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </main>
  );
}
