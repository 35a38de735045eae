-- Whose run each row is (issue 40, finding 10): `GET /api/strategies`
-- shows each account the figures of its own runs only, so no one reads
-- another account's activity off a built-in or shared strategy. Rows from
-- before this migration belong to no account ('') and are shown to none.
ALTER TABLE plugin_runs ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
CREATE INDEX plugin_runs_user ON plugin_runs (sha256, user_id, id);
