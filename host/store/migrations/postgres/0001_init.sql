-- Forecast Engine store, PostgreSQL flavour (same tables and semantics as
-- migrations/sqlite). Never edit an applied migration: add a new numbered
-- file instead.

CREATE TABLE assets (
    -- Stable id: the asset's row number in data/catalog.csv.
    id           BIGINT  PRIMARY KEY,
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
    is_active    BOOLEAN NOT NULL DEFAULT TRUE,
    is_premium   BOOLEAN NOT NULL DEFAULT FALSE,
    -- Where the price history came from: real | synthetic | ingested.
    data_source  TEXT    NOT NULL DEFAULT 'synthetic'
                 CHECK (data_source IN ('real', 'synthetic', 'ingested')),
    -- Bumped on every write of the asset's prices; part of every cache key.
    data_version BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX assets_category ON assets (category);

-- One row per asset holding its whole daily close series in a compact
-- columnar blob (see host/src/series.rs): an analysis reads one row, and
-- ingest merges by date in memory and rewrites the row in one transaction.
CREATE TABLE daily_prices (
    asset_id     BIGINT  PRIMARY KEY REFERENCES assets (id) ON DELETE CASCADE,
    row_count    BIGINT  NOT NULL,
    first_date   TEXT    NOT NULL,
    last_date    TEXT    NOT NULL,
    has_weekends BOOLEAN NOT NULL,
    series       BYTEA   NOT NULL,
    updated_at   BIGINT  NOT NULL
);

-- Asset metadata (AssetInfo) as fetched from the metadata provider; served
-- for 7 days, and past that whenever the provider fails.
CREATE TABLE asset_metadata (
    asset_id   BIGINT PRIMARY KEY REFERENCES assets (id) ON DELETE CASCADE,
    body       TEXT   NOT NULL,
    fetched_at BIGINT NOT NULL
);

-- Default-parameter analyses, keyed by everything that produced them
-- (asset, data version, engine version, parameters).
CREATE TABLE analysis_cache (
    cache_key  TEXT   PRIMARY KEY,
    asset_id   BIGINT NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    body       TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX analysis_cache_asset ON analysis_cache (asset_id);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
