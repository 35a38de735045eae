-- Generation counters (issue 17): a replica keeps keys, the active grading
-- run and assets in memory and re-reads them only when the counter of
-- their kind has moved. Triggers bump them, so every writer (any replica,
-- the CLI, a hand-written statement) invalidates every replica's copy,
-- in the writing transaction. The triggers are deferred to commit, so a
-- transaction takes the counter's row lock last, after every row it
-- writes: two writers cannot deadlock over it.

CREATE TABLE generations (
    name   TEXT    PRIMARY KEY,
    value  BIGINT  NOT NULL
);
INSERT INTO generations (name, value) VALUES ('auth', 0), ('grading', 0), ('assets', 0);

CREATE FUNCTION bump_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE generations SET value = value + 1 WHERE name = TG_ARGV[0];
    RETURN NULL;
END
$$;

-- The grading generation moves with the active run's grades only.
CREATE FUNCTION bump_grading_for_active_grades() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    active TEXT := (SELECT value FROM settings WHERE key = 'active_grading_run');
BEGIN
    IF (TG_OP <> 'DELETE' AND NEW.run_id = active) OR (TG_OP <> 'INSERT' AND OLD.run_id = active) THEN
        UPDATE generations SET value = value + 1 WHERE name = 'grading';
    END IF;
    RETURN NULL;
END
$$;

-- auth: what a Bearer request reads of a key and its owner.
CREATE CONSTRAINT TRIGGER generations_key_update AFTER UPDATE OF revoked_at, key_hash, user_id ON api_keys
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('auth');
CREATE CONSTRAINT TRIGGER generations_key_delete AFTER DELETE ON api_keys
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('auth');
CREATE CONSTRAINT TRIGGER generations_user_update AFTER UPDATE OF email, tier, per_minute, per_day ON users
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('auth');
CREATE CONSTRAINT TRIGGER generations_user_delete AFTER DELETE ON users
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('auth');

-- grading: which run is active, and the grades of the active run.
CREATE CONSTRAINT TRIGGER generations_run_insert AFTER INSERT ON settings
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.key = 'active_grading_run')
    EXECUTE FUNCTION bump_generation('grading');
CREATE CONSTRAINT TRIGGER generations_run_update AFTER UPDATE ON settings
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.key = 'active_grading_run' OR OLD.key = 'active_grading_run')
    EXECUTE FUNCTION bump_generation('grading');
CREATE CONSTRAINT TRIGGER generations_run_delete AFTER DELETE ON settings
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.key = 'active_grading_run')
    EXECUTE FUNCTION bump_generation('grading');
CREATE CONSTRAINT TRIGGER generations_runs_delete AFTER DELETE ON grading_runs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('grading');
CREATE CONSTRAINT TRIGGER generations_grades AFTER INSERT OR UPDATE OR DELETE ON grades
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_grading_for_active_grades();

-- assets: an asset's row (ticker, activity, data version) and its last
-- price date.
CREATE CONSTRAINT TRIGGER generations_assets AFTER INSERT OR UPDATE OR DELETE ON assets
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('assets');
CREATE CONSTRAINT TRIGGER generations_prices AFTER INSERT OR UPDATE OR DELETE ON daily_prices
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('assets');
