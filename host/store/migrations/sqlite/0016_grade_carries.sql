-- What each run's grade of an asset leaves for the next run of the same
-- engine and scorer (decision 0084): the month-ends it graded, digests of
-- the prices up to the last of them and of the pooled history before it,
-- and the forecast inputs at them, encoded by the services
-- (`forecast_services::carry`). Written with the run's grade histories,
-- dropped with them.
CREATE TABLE grade_carries (
    run_id    TEXT    NOT NULL REFERENCES grading_runs (id) ON DELETE CASCADE,
    asset_id  INTEGER NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    body      BLOB    NOT NULL,
    PRIMARY KEY (run_id, asset_id)
);

-- The next run reads one asset's histories at a time.
CREATE INDEX track_points_by_asset ON track_points (run_id, asset_id);
