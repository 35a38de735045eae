-- Grade-history bodies stored once and shared by every run whose history
-- of an (asset, period, metric) is the same (decision 0099): the next
-- day's run points at yesterday's body instead of writing it again. A
-- body no run points at any more goes when a run finishes.
CREATE TABLE track_bodies (
    id    INTEGER PRIMARY KEY,
    body  BLOB    NOT NULL
);
INSERT INTO track_bodies (id, body) SELECT rowid, body FROM track_points;

CREATE TABLE track_refs (
    run_id         TEXT    NOT NULL REFERENCES grading_runs (id) ON DELETE CASCADE,
    asset_id       INTEGER NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    return_period  INTEGER NOT NULL,
    metric         TEXT    NOT NULL,
    body_id        INTEGER NOT NULL REFERENCES track_bodies (id),
    PRIMARY KEY (run_id, return_period, metric, asset_id)
);
INSERT INTO track_refs (run_id, asset_id, return_period, metric, body_id)
    SELECT run_id, asset_id, return_period, metric, rowid FROM track_points;
DROP TABLE track_points;
ALTER TABLE track_refs RENAME TO track_points;

CREATE INDEX track_points_by_asset ON track_points (run_id, asset_id);
CREATE INDEX track_points_by_body ON track_points (body_id);
