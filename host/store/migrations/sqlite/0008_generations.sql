-- Generation counters (issue 17): a replica keeps keys, the active grading
-- run and assets in memory and re-reads them only when the counter of
-- their kind has moved. Triggers bump them, so every writer (any replica,
-- the CLI, a hand-written statement) invalidates every replica's copy,
-- in the writing transaction.

CREATE TABLE generations (
    name   TEXT    PRIMARY KEY,
    value  INTEGER NOT NULL
);
INSERT INTO generations (name, value) VALUES ('auth', 0), ('grading', 0), ('assets', 0);

-- auth: what a Bearer request reads of a key and its owner.
CREATE TRIGGER generations_key_update AFTER UPDATE OF revoked_at, key_hash, user_id ON api_keys
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'auth'; END;
CREATE TRIGGER generations_key_delete AFTER DELETE ON api_keys
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'auth'; END;
CREATE TRIGGER generations_user_update AFTER UPDATE OF email, tier, per_minute, per_day ON users
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'auth'; END;
CREATE TRIGGER generations_user_delete AFTER DELETE ON users
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'auth'; END;

-- grading: which run is active, and the grades of the active run.
CREATE TRIGGER generations_run_insert AFTER INSERT ON settings
WHEN NEW.key = 'active_grading_run'
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'grading'; END;
CREATE TRIGGER generations_run_update AFTER UPDATE ON settings
WHEN NEW.key = 'active_grading_run' OR OLD.key = 'active_grading_run'
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'grading'; END;
CREATE TRIGGER generations_run_delete AFTER DELETE ON settings
WHEN OLD.key = 'active_grading_run'
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'grading'; END;
CREATE TRIGGER generations_runs_delete AFTER DELETE ON grading_runs
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'grading'; END;
CREATE TRIGGER generations_grade_insert AFTER INSERT ON grades
WHEN NEW.run_id = (SELECT value FROM settings WHERE key = 'active_grading_run')
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'grading'; END;
CREATE TRIGGER generations_grade_update AFTER UPDATE ON grades
WHEN NEW.run_id = (SELECT value FROM settings WHERE key = 'active_grading_run')
  OR OLD.run_id = (SELECT value FROM settings WHERE key = 'active_grading_run')
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'grading'; END;
CREATE TRIGGER generations_grade_delete AFTER DELETE ON grades
WHEN OLD.run_id = (SELECT value FROM settings WHERE key = 'active_grading_run')
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'grading'; END;

-- assets: an asset's row (ticker, activity, data version) and its last
-- price date.
CREATE TRIGGER generations_asset_insert AFTER INSERT ON assets
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'assets'; END;
CREATE TRIGGER generations_asset_update AFTER UPDATE ON assets
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'assets'; END;
CREATE TRIGGER generations_asset_delete AFTER DELETE ON assets
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'assets'; END;
CREATE TRIGGER generations_prices_insert AFTER INSERT ON daily_prices
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'assets'; END;
CREATE TRIGGER generations_prices_update AFTER UPDATE OF last_date ON daily_prices
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'assets'; END;
CREATE TRIGGER generations_prices_delete AFTER DELETE ON daily_prices
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'assets'; END;
