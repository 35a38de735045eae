-- Forecast Engine store, SQLite flavour. Never edit an applied migration:
-- add a new numbered file instead.

CREATE TABLE assets (
    -- Stable id: the asset's row number in data/catalog.csv.
    id           INTEGER PRIMARY KEY,
    ticker       TEXT    NOT NULL UNIQUE,
    name         TEXT    NOT NULL,
    category     TEXT    NOT NULL,
    exchange     TEXT    NOT NULL DEFAULT '',
    currency     TEXT    NOT NULL DEFAULT '',
    country      TEXT    NOT NULL DEFAULT '',
    sector       TEXT    NOT NULL DEFAULT '',
    industry     TEXT    NOT NULL DEFAULT '',
    website      TEXT    NOT NULL DEFAULT '',
    summary      TEXT    NOT NULL DEFAULT '',
    isin         TEXT    NOT NULL DEFAULT '',
    is_active    INTEGER NOT NULL DEFAULT 1,
    is_premium   INTEGER NOT NULL DEFAULT 0,
    -- Where the price history came from: real | synthetic | ingested.
    data_source  TEXT    NOT NULL DEFAULT 'synthetic'
                 CHECK (data_source IN ('real', 'synthetic', 'ingested')),
    -- Bumped on every write of the asset's prices; part of every cache key.
    data_version INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX assets_category ON assets (category);

-- One row per asset holding its whole daily close series in a compact
-- columnar blob (see host/src/series.rs): an analysis reads one row, and
-- ingest merges by date in memory and rewrites the row in one transaction.
CREATE TABLE daily_prices (
    asset_id     INTEGER PRIMARY KEY REFERENCES assets (id) ON DELETE CASCADE,
    row_count    INTEGER NOT NULL,
    first_date   TEXT    NOT NULL,
    last_date    TEXT    NOT NULL,
    has_weekends INTEGER NOT NULL,
    series       BLOB    NOT NULL,
    updated_at   INTEGER NOT NULL
);

-- Asset metadata (AssetInfo) as fetched from the metadata provider; served
-- for 7 days, and past that whenever the provider fails.
CREATE TABLE asset_metadata (
    asset_id   INTEGER PRIMARY KEY REFERENCES assets (id) ON DELETE CASCADE,
    body       TEXT    NOT NULL,
    fetched_at INTEGER NOT NULL
);

-- Default-parameter analyses, keyed by everything that produced them
-- (asset, data version, engine version, parameters).
CREATE TABLE analysis_cache (
    cache_key  TEXT    PRIMARY KEY,
    asset_id   INTEGER NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    body       TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX analysis_cache_asset ON analysis_cache (asset_id);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
