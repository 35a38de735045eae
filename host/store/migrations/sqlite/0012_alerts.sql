-- Alerts (issue 30): a user's conditions on an asset or on their whole
-- watchlist, the last state each (alert, asset) was seen in, the events
-- fired when a condition became true, the webhook endpoints and the
-- outbox of deliveries (webhook calls and e-mail digests).

-- One alert. `asset_id` NULL targets the owner's watchlist. `spec` is the
-- condition and its parameters as JSON (the services' `AlertSpec`).
CREATE TABLE alerts (
    id          TEXT    PRIMARY KEY,
    user_id     TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    asset_id    INTEGER REFERENCES assets (id),
    spec        TEXT    NOT NULL,
    enabled     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX alerts_user ON alerts (user_id, created_at);

-- What the last evaluation saw of one (alert, asset): whether the
-- condition held and the observation, and the evaluation that wrote it
-- (`evaluation`), so a second evaluation of the same key writes nothing.
CREATE TABLE alert_states (
    alert_id    TEXT    NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    asset_id    INTEGER NOT NULL REFERENCES assets (id),
    holds       INTEGER NOT NULL,
    observed    TEXT    NOT NULL,
    evaluation  TEXT    NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (alert_id, asset_id)
);

-- A fired alert. Kept when its alert is deleted (the inbox is history);
-- `body` is the event as the API shows it, JSON.
CREATE TABLE alert_events (
    id          TEXT    PRIMARY KEY,
    user_id     TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    alert_id    TEXT    NOT NULL,
    asset_id    INTEGER NOT NULL,
    evaluation  TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    read_at     INTEGER,
    UNIQUE (alert_id, asset_id, evaluation)
);
CREATE INDEX alert_events_user ON alert_events (user_id, created_at);

-- Evaluations by key (the store's generation counters they saw): the
-- first process to claim a key evaluates it; a claim whose process died
-- is taken over after its lease.
CREATE TABLE alert_evaluations (
    key          TEXT    PRIMARY KEY,
    worker       TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    summary      TEXT
);

-- A user's webhook endpoint. The secret signs every call, so it is kept
-- as given (it is shown to its owner once, at creation).
CREATE TABLE webhooks (
    id                    TEXT    PRIMARY KEY,
    user_id               TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    url                   TEXT    NOT NULL,
    secret                TEXT    NOT NULL,
    enabled               INTEGER NOT NULL,
    consecutive_failures  INTEGER NOT NULL,
    disabled_reason       TEXT,
    created_at            INTEGER NOT NULL
);
CREATE INDEX webhooks_user ON webhooks (user_id, created_at);

-- The outbox: one row per webhook call (an event or a test) or e-mail
-- digest, retried until delivered or given up; `lease_until` keeps two
-- processes from sending the same row at once.
CREATE TABLE deliveries (
    id           TEXT    PRIMARY KEY,
    kind         TEXT    NOT NULL,
    user_id      TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    webhook_id   TEXT    REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id     TEXT,
    evaluation   TEXT,
    payload      TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    attempts     INTEGER NOT NULL,
    next_at      INTEGER NOT NULL,
    lease_until  INTEGER,
    last_status  INTEGER,
    last_error   TEXT,
    created_at   INTEGER NOT NULL,
    finished_at  INTEGER
);
CREATE INDEX deliveries_due ON deliveries (status, next_at);
CREATE INDEX deliveries_webhook ON deliveries (webhook_id, created_at);
-- At most one digest per user and evaluation.
CREATE UNIQUE INDEX deliveries_one_digest ON deliveries (user_id, evaluation) WHERE kind = 'email';

-- alerts: what an evaluation evaluates (the alerts and the watchlists
-- they may follow), so a new or changed alert gets evaluated although no
-- price or grade moved.
INSERT INTO generations (name, value) VALUES ('alerts', 0);
CREATE TRIGGER generations_alert_insert AFTER INSERT ON alerts
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'alerts'; END;
CREATE TRIGGER generations_alert_update AFTER UPDATE ON alerts
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'alerts'; END;
CREATE TRIGGER generations_watchlist_insert AFTER INSERT ON watchlist
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'alerts'; END;
CREATE TRIGGER generations_watchlist_delete AFTER DELETE ON watchlist
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'alerts'; END;
