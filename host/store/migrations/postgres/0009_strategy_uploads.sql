-- Strategies uploaded by their authors (issue 26), PostgreSQL flavour: each
-- author's strategies under the author's handle (`@handle/name`) and their
-- versions. A version's (owner, name, version) -> sha256 is immutable
-- forever: its row is never deleted, not even when its strategy is (then
-- only its bytes are dropped). No foreign key to `users`: a cascade would
-- break that promise. Every write takes a transaction-scoped advisory lock
-- keyed by the owner first, so the per-owner limits hold across processes.

-- One row per (owner, name), kept (marked `deleted`) after a delete; adding
-- a version to a deleted strategy revives it.
CREATE TABLE authored_strategies (
    owner_id         TEXT    NOT NULL,       -- users.id
    handle           TEXT    NOT NULL,       -- the owner's handle, without `@`
    name             TEXT    NOT NULL,       -- bare name (what the component reports)
    current_version  TEXT    NOT NULL,       -- runs when a request names no version
    shared           BOOLEAN NOT NULL DEFAULT FALSE, -- listed for every Premium user, else owner only
    deleted          BOOLEAN NOT NULL DEFAULT FALSE, -- hidden; its versions' bytes are gone
    created_at       BIGINT  NOT NULL,
    PRIMARY KEY (owner_id, name)
);
CREATE INDEX authored_strategies_handle ON authored_strategies (handle, name);

-- One row per (owner, name, version); never deleted, never changed but for
-- `wasm` (NULL once its strategy is deleted; the same bytes uploaded again
-- restore it).
CREATE TABLE strategy_uploads (
    owner_id     TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    version      TEXT    NOT NULL,           -- semantic version
    seq          BIGINT  NOT NULL,           -- 1, 2, ... per strategy, in upload order
    sha256       TEXT    NOT NULL,           -- hex SHA-256 of the component
    size         BIGINT  NOT NULL,           -- bytes of the component
    signer       TEXT,                       -- key id of the bundle's signer
    manifest     TEXT,                       -- the bundle's manifest, JSON
    wasm         BYTEA,                      -- the component; NULL once deleted
    uploaded_at  BIGINT  NOT NULL,
    PRIMARY KEY (owner_id, name, version)
);
