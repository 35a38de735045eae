-- The daily grading job (issue 4), PostgreSQL flavour: runs, their per-asset
-- tasks, and the grades they produce. Readers use only the run named by the
-- setting `active_grading_run`, flipped in the transaction that completes a
-- run, so a half-graded day is never visible.

CREATE TABLE grading_runs (
    id           TEXT    PRIMARY KEY,            -- UUID
    day          TEXT    NOT NULL,               -- UTC date the run grades
    engine       TEXT    NOT NULL,               -- plugin label kind/name@version
    scorer       TEXT    NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('running', 'done')),
    started_at   BIGINT  NOT NULL,
    finished_at  BIGINT,
    total        BIGINT  NOT NULL,               -- assets to grade
    graded       BIGINT  NOT NULL DEFAULT 0,     -- assets graded
    failures     BIGINT  NOT NULL DEFAULT 0,     -- assets that failed
    -- Concurrent replicas starting the same day's run meet on this index
    -- (INSERT ... ON CONFLICT DO NOTHING), so they all join one run.
    UNIQUE (day, engine, scorer)
);

-- One task per asset of a run; replicas claim pending (or lease-expired)
-- tasks with FOR UPDATE SKIP LOCKED, so a killed replica's tasks are picked
-- up by another and no task is claimed twice.
CREATE TABLE grading_tasks (
    run_id      TEXT    NOT NULL REFERENCES grading_runs (id) ON DELETE CASCADE,
    asset_id    BIGINT  NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
    claimed_by  TEXT,
    claimed_at  BIGINT,
    PRIMARY KEY (run_id, asset_id)
);
CREATE INDEX grading_tasks_status ON grading_tasks (run_id, status);

CREATE TABLE grades (
    run_id           TEXT             NOT NULL REFERENCES grading_runs (id) ON DELETE CASCADE,
    asset_id         BIGINT           NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    return_period    BIGINT           NOT NULL,
    metric           TEXT             NOT NULL,
    data_version     BIGINT           NOT NULL,  -- the asset's data version graded
    letter           TEXT             NOT NULL,
    score            DOUBLE PRECISION NOT NULL,
    expected_return  DOUBLE PRECISION NOT NULL,
    prediction_error DOUBLE PRECISION NOT NULL,
    median_return    DOUBLE PRECISION NOT NULL,
    median_error     DOUBLE PRECISION NOT NULL,
    current_drawdown DOUBLE PRECISION NOT NULL,
    current_price    DOUBLE PRECISION NOT NULL,
    win_rate         DOUBLE PRECISION NOT NULL,  -- active segment's, 0 when none
    body             TEXT             NOT NULL,  -- the cached verdict, JSON
    PRIMARY KEY (run_id, asset_id, return_period, metric)
);
CREATE INDEX grades_asset ON grades (asset_id);
