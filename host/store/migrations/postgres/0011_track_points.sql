-- Each graded asset's grade history (issue 27): for every (return period,
-- metric) a run grades, the grade at each past month-end from the rows up
-- to it only and the return realised after it, encoded by the services
-- (`forecast_services::track_record`). Kept with the run's grades and
-- dropped with them; `GET /api/track-record` aggregates them.
CREATE TABLE track_points (
    run_id         TEXT    NOT NULL REFERENCES grading_runs (id) ON DELETE CASCADE,
    asset_id       BIGINT  NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    return_period  INTEGER NOT NULL,
    metric         TEXT    NOT NULL,
    body           BYTEA   NOT NULL,
    PRIMARY KEY (run_id, return_period, metric, asset_id)
);
