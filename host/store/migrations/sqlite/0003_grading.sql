-- The daily grading job (issue 4): runs, their per-asset tasks, and the
-- grades they produce. Readers use only the run named by the setting
-- `active_grading_run`, flipped in the transaction that completes a run, so
-- a half-graded day is never visible.

CREATE TABLE grading_runs (
    id           TEXT    PRIMARY KEY,            -- UUID
    day          TEXT    NOT NULL,               -- UTC date the run grades
    engine       TEXT    NOT NULL,               -- plugin label kind/name@version
    scorer       TEXT    NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('running', 'done')),
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    total        INTEGER NOT NULL,               -- assets to grade
    graded       INTEGER NOT NULL DEFAULT 0,     -- assets graded
    failures     INTEGER NOT NULL DEFAULT 0,     -- assets that failed
    UNIQUE (day, engine, scorer)
);

-- One task per asset of a run; replicas claim pending (or lease-expired)
-- tasks, so a killed replica's tasks are picked up by another.
CREATE TABLE grading_tasks (
    run_id      TEXT    NOT NULL REFERENCES grading_runs (id) ON DELETE CASCADE,
    asset_id    INTEGER NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
    claimed_by  TEXT,
    claimed_at  INTEGER,
    PRIMARY KEY (run_id, asset_id)
);
CREATE INDEX grading_tasks_status ON grading_tasks (run_id, status);

CREATE TABLE grades (
    run_id           TEXT    NOT NULL REFERENCES grading_runs (id) ON DELETE CASCADE,
    asset_id         INTEGER NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    return_period    INTEGER NOT NULL,
    metric           TEXT    NOT NULL,
    data_version     INTEGER NOT NULL,           -- the asset's data version graded
    letter           TEXT    NOT NULL,
    score            REAL    NOT NULL,
    expected_return  REAL    NOT NULL,
    prediction_error REAL    NOT NULL,
    median_return    REAL    NOT NULL,
    median_error     REAL    NOT NULL,
    current_drawdown REAL    NOT NULL,
    current_price    REAL    NOT NULL,
    win_rate         REAL    NOT NULL,           -- active segment's, 0 when none
    body             TEXT    NOT NULL,           -- the cached verdict, JSON
    PRIMARY KEY (run_id, asset_id, return_period, metric)
);
CREATE INDEX grades_asset ON grades (asset_id);
