-- What each strategy used in its recent backtests (issue 26), PostgreSQL
-- flavour: one row per run, keyed by the component's SHA-256 (built-in or
-- uploaded), the newest 50 per component kept. `GET /api/strategies`
-- shows min / mean / max.
CREATE TABLE plugin_runs (
    id                 BIGSERIAL        PRIMARY KEY,
    sha256             TEXT             NOT NULL,  -- hex SHA-256 of the component
    ran_at             BIGINT           NOT NULL,  -- Unix seconds
    calls              BIGINT           NOT NULL,  -- start + one per rebalance
    fuel               BIGINT,                     -- NULL: not metered (built-ins)
    guest_ms           DOUBLE PRECISION NOT NULL,  -- time in the guest
    peak_memory_bytes  BIGINT           NOT NULL   -- most linear memory held
);
CREATE INDEX plugin_runs_sha256 ON plugin_runs (sha256, id);

-- What each stored version imports (a JSON array of names), listed with it.
ALTER TABLE strategy_uploads ADD COLUMN imports TEXT;
