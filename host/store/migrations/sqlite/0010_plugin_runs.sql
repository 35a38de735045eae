-- What each strategy used in its recent backtests (issue 26): one row per
-- run, keyed by the component's SHA-256 (built-in or uploaded), the newest
-- 50 per component kept. `GET /api/strategies` shows min / mean / max.
CREATE TABLE plugin_runs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    sha256             TEXT    NOT NULL,  -- hex SHA-256 of the component
    ran_at             INTEGER NOT NULL,  -- Unix seconds
    calls              INTEGER NOT NULL,  -- start + one per rebalance
    fuel               INTEGER,           -- NULL: not metered (built-ins)
    guest_ms           REAL    NOT NULL,  -- time in the guest
    peak_memory_bytes  INTEGER NOT NULL   -- most linear memory held
);
CREATE INDEX plugin_runs_sha256 ON plugin_runs (sha256, id);

-- What each stored version imports (a JSON array of names), listed with it.
ALTER TABLE strategy_uploads ADD COLUMN imports TEXT;
