-- Work of the day split across replicas (the scheduled price refresh):
-- one run per (kind, day), one item per asset; replicas claim pending (or
-- lease-expired) items, as grading's tasks (0003_grading.sql).

CREATE TABLE job_runs (
    id           TEXT    PRIMARY KEY,            -- UUID
    kind         TEXT    NOT NULL,               -- e.g. refresh:yahoo
    day          TEXT    NOT NULL,               -- UTC date
    status       TEXT    NOT NULL CHECK (status IN ('running', 'done')),
    started_at   INTEGER  NOT NULL,
    finished_at  INTEGER,
    total        INTEGER  NOT NULL,
    done         INTEGER  NOT NULL DEFAULT 0,
    failures     INTEGER  NOT NULL DEFAULT 0,
    UNIQUE (kind, day)
);

CREATE TABLE job_items (
    run_id      TEXT    NOT NULL REFERENCES job_runs (id) ON DELETE CASCADE,
    item_id     INTEGER  NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'claimed', 'done', 'failed')),
    claimed_by  TEXT,
    claimed_at  INTEGER,
    PRIMARY KEY (run_id, item_id)
);
CREATE INDEX job_items_status ON job_items (run_id, status);
