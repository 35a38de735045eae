-- Accounts, web sessions, API keys and quotas (issue 3), PostgreSQL flavour.

CREATE TABLE users (
    id              TEXT    PRIMARY KEY,             -- UUID
    email           TEXT    NOT NULL UNIQUE,         -- stored lower-cased
    password_hash   TEXT    NOT NULL,                -- argon2id PHC string
    tier            TEXT    NOT NULL CHECK (tier IN ('free', 'lite', 'pro', 'premium')),
    -- Per-user quota overrides; NULL means the configured default.
    per_minute      BIGINT,
    per_day         BIGINT,
    created_at      BIGINT  NOT NULL
);

-- Web sessions; only the SHA-256 of the cookie token is stored.
CREATE TABLE sessions (
    token_hash  TEXT    PRIMARY KEY,
    user_id     TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  BIGINT  NOT NULL,
    expires_at  BIGINT  NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

-- API keys; only the SHA-256 of the key is stored. Revocation is soft.
CREATE TABLE api_keys (
    id            TEXT    PRIMARY KEY,               -- UUID
    user_id       TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    key_hash      TEXT    NOT NULL UNIQUE,
    key_prefix    TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    last_used_at  BIGINT,
    revoked_at    BIGINT
);
CREATE INDEX api_keys_user ON api_keys (user_id);

-- Fixed-window counters: quota windows per user ('minute', 'day') and the
-- login-attempt limiter. One row per (subject, window kind); a new window
-- start resets `used`. `consume` locks a subject's rows (in kind order)
-- with SELECT ... FOR UPDATE, so the check-and-count is atomic across
-- processes.
CREATE TABLE counters (
    subject       TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    window_start  BIGINT  NOT NULL,
    used          BIGINT  NOT NULL,
    PRIMARY KEY (subject, kind)
);
