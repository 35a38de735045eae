-- The plugin registry (issue 6), PostgreSQL flavour: stored plugin versions
-- and their bytes, the activation history of every slot, shadow runs and
-- their samples. Every activation, rollback and shadow change bumps the
-- setting `plugins_generation` (an integer as text) in the same
-- transaction, first: that row's lock serialises registry changes across
-- processes. Replicas poll it to know when to reload.

-- One row per (kind, name, version); never updated, never deleted.
CREATE TABLE plugins (
    kind      TEXT    NOT NULL,              -- segmentation | scorer | strategy | matcher
    name      TEXT    NOT NULL,
    version   TEXT    NOT NULL,              -- semantic version
    sha256    TEXT    NOT NULL,              -- hex SHA-256 of `wasm`
    size      BIGINT  NOT NULL,              -- bytes of `wasm`
    wasm      BYTEA   NOT NULL,              -- the component
    builtin   BOOLEAN NOT NULL DEFAULT FALSE, -- registered from the binary
    added_by  TEXT    NOT NULL,              -- builtin | cli:<user> | admin-api
    added_at  BIGINT  NOT NULL,
    PRIMARY KEY (kind, name, version)
);

-- The activation history, append-only but for `rolled_back`. A slot's
-- current activation is its newest row not rolled back; a rollback locks
-- the slot's live rows (FOR UPDATE, in id order) and marks the newest, so
-- the one before it is current again.
CREATE TABLE plugin_activations (
    id            BIGSERIAL PRIMARY KEY,
    slot          TEXT    NOT NULL,          -- the kind, or strategy/<name>
    kind          TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    version       TEXT    NOT NULL,
    activated_by  TEXT    NOT NULL,
    activated_at  BIGINT  NOT NULL,
    rolled_back   BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX plugin_activations_slot ON plugin_activations (slot, id);

-- At most one running shadow (candidate version) per kind.
CREATE TABLE plugin_shadows (
    kind        TEXT             PRIMARY KEY,
    name        TEXT             NOT NULL,
    version     TEXT             NOT NULL,
    sample      DOUBLE PRECISION NOT NULL,   -- share of requests, in (0, 1]
    started_by  TEXT             NOT NULL,
    started_at  BIGINT           NOT NULL
);

-- One comparison of a candidate against the active version.
CREATE TABLE shadow_samples (
    id            BIGSERIAL        PRIMARY KEY,
    kind          TEXT             NOT NULL,
    active        TEXT             NOT NULL, -- label of the active version
    candidate     TEXT             NOT NULL, -- label of the candidate
    identical     BOOLEAN          NOT NULL,
    active_ms     DOUBLE PRECISION NOT NULL,
    candidate_ms  DOUBLE PRECISION NOT NULL,
    error         TEXT,                      -- the candidate's error, if it failed
    diffs         TEXT             NOT NULL, -- JSON: field -> largest absolute difference
    at            BIGINT           NOT NULL
);
CREATE INDEX shadow_samples_candidate ON shadow_samples (kind, candidate, id);
