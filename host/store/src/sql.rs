//! The statements both dialects agree on, written once.
//!
//! Placeholders are `$1`, `$2`, …: PostgreSQL's syntax, which SQLite reads
//! as numbered parameters too (sqlx binds them by number), so a parameter
//! can be used twice. Other shared spellings: booleans are tested as
//! `is_active` / `NOT rolled_back` (SQLite's 0/1 are false/true), casts are
//! `CAST(x AS T)`, upserts are `ON CONFLICT … DO UPDATE SET … = excluded.…`,
//! and text sorts `COLLATE "C"` (byte order; the SQLite backend registers a
//! collation of that name, so both order text alike whatever PostgreSQL's
//! locale). Statements that differ — row locks, `SKIP LOCKED`, multi-row
//! upserts through `UNNEST`, `BEGIN IMMEDIATE` — stay in the backend files.

/// The column list of [`crate::rows::asset`].
macro_rules! asset_columns {
    () => {
        "id, ticker, name, category, exchange, currency, country, sector, industry, website, \
         summary, isin, is_active, is_premium, data_source, data_version, \
         (SELECT p.last_date FROM daily_prices p WHERE p.asset_id = assets.id) AS last_price_date"
    };
}

/// The column list of [`crate::rows::user`], on `users u`.
macro_rules! user_columns {
    () => {
        "u.id, u.email, u.tier, u.per_minute, u.per_day, u.created_at"
    };
}

/// The column list of [`crate::rows::key`], on `api_keys k`.
macro_rules! key_columns {
    () => {
        "k.id, k.user_id, k.name, k.key_prefix, k.created_at, k.last_used_at"
    };
}

/// The column list of [`crate::rows::run`].
macro_rules! run_columns {
    () => {
        "id, day, engine, scorer, status, started_at, finished_at, total, graded, failures"
    };
}

/// The column list of [`crate::rows::grade`], on `grades g`.
macro_rules! grade_columns {
    () => {
        "g.asset_id, g.return_period, g.metric, g.data_version, g.letter, g.score, \
         g.expected_return, g.prediction_error, g.median_return, g.median_error, \
         g.current_drawdown, g.current_price, g.win_rate, g.body"
    };
}

/// The column list of [`crate::rows::plugin`].
macro_rules! plugin_columns {
    () => {
        "kind, name, version, sha256, size, builtin, added_by, added_at"
    };
}

/// The column list of [`crate::rows::activation`].
macro_rules! activation_columns {
    () => {
        "id, slot, kind, name, version, activated_by, activated_at, rolled_back"
    };
}
pub(crate) use activation_columns;

/// The column list of [`crate::rows::shadow`].
macro_rules! shadow_columns {
    () => {
        "kind, name, version, sample, started_by, started_at"
    };
}

/// The price upsert of `store_series` (PostgreSQL prefixes it with the
/// purges as a data-modifying CTE).
macro_rules! upsert_prices {
    () => {
        "INSERT INTO daily_prices
            (asset_id, row_count, first_date, last_date, has_weekends, series, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (asset_id) DO UPDATE SET
            row_count = excluded.row_count, first_date = excluded.first_date,
            last_date = excluded.last_date, has_weekends = excluded.has_weekends,
            series = excluded.series, updated_at = excluded.updated_at"
    };
}
pub(crate) use upsert_prices;

// ---- Admin ----------------------------------------------------------------

pub(crate) const PING: &str = "SELECT 1";

/// `SUM` of a `BIGINT` is `NUMERIC` in PostgreSQL: cast back (a no-op in
/// SQLite).
pub(crate) const COUNTS: &str = "SELECT (SELECT COUNT(*) FROM assets) AS assets,
        (SELECT COUNT(*) FROM assets WHERE is_active) AS active_assets,
        (SELECT COUNT(*) FROM daily_prices) AS assets_with_prices,
        (SELECT CAST(COALESCE(SUM(row_count), 0) AS BIGINT) FROM daily_prices) AS price_rows,
        (SELECT COUNT(*) FROM analysis_cache) AS cached_analyses,
        (SELECT COUNT(*) FROM asset_metadata) AS cached_metadata";

// ---- Assets and prices ----------------------------------------------------

/// The conflict clause of the catalog upsert: existing rows keep their
/// prices, data source and data version.
macro_rules! upsert_asset_conflict {
    () => {
        "ON CONFLICT (id) DO UPDATE SET
            ticker = excluded.ticker, name = excluded.name, category = excluded.category,
            exchange = excluded.exchange, currency = excluded.currency,
            country = excluded.country, sector = excluded.sector,
            industry = excluded.industry, website = excluded.website,
            summary = excluded.summary, isin = excluded.isin,
            is_active = excluded.is_active, is_premium = excluded.is_premium"
    };
}
pub(crate) use upsert_asset_conflict;

/// One catalog row (SQLite writes them one by one; PostgreSQL in chunks
/// through `UNNEST`, with the same conflict clause).
pub(crate) const UPSERT_ASSET: &str = concat!(
    "INSERT INTO assets (id, ticker, name, category, exchange, currency, country, sector,
                         industry, website, summary, isin, is_active, is_premium)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ",
    upsert_asset_conflict!()
);

pub(crate) const LIST_ACTIVE_ASSETS: &str = concat!(
    "SELECT ",
    asset_columns!(),
    " FROM assets WHERE is_active AND (CAST($1 AS TEXT) IS NULL OR category = $1) ORDER BY id"
);

pub(crate) const ASSET_BY_TICKER: &str = concat!(
    "SELECT ",
    asset_columns!(),
    " FROM assets WHERE ticker = $1"
);

pub(crate) const GRADABLE_ASSETS: &str = "SELECT a.id FROM assets a
     JOIN daily_prices p ON p.asset_id = a.id
     WHERE a.is_active AND p.row_count >= $1 ORDER BY a.id";

pub(crate) const LOAD_SERIES: &str = "SELECT series FROM daily_prices WHERE asset_id = $1";

pub(crate) const BUMP_DATA_VERSION: &str =
    "UPDATE assets SET data_source = $1, data_version = data_version + 1 WHERE id = $2";

pub(crate) const UPSERT_PRICES: &str = upsert_prices!();

pub(crate) const DELETE_ANALYSES_OF_ASSET: &str = "DELETE FROM analysis_cache WHERE asset_id = $1";

pub(crate) const DELETE_GRADES_OF_ASSET: &str = "DELETE FROM grades WHERE asset_id = $1";

pub(crate) const CACHED_METADATA: &str =
    "SELECT body, fetched_at FROM asset_metadata WHERE asset_id = $1";

pub(crate) const PUT_METADATA: &str = "INSERT INTO asset_metadata (asset_id, body, fetched_at)
     VALUES ($1, $2, $3)
     ON CONFLICT (asset_id) DO UPDATE SET body = excluded.body, fetched_at = excluded.fetched_at";

// ---- Caches and settings --------------------------------------------------

pub(crate) const CACHED_ANALYSIS: &str = "SELECT body FROM analysis_cache WHERE cache_key = $1";

pub(crate) const PUT_ANALYSIS: &str =
    "INSERT INTO analysis_cache (cache_key, asset_id, body, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (cache_key) DO UPDATE SET body = excluded.body, created_at = excluded.created_at";

pub(crate) const SETTING: &str = "SELECT value FROM settings WHERE key = $1";

pub(crate) const SET_SETTING: &str = "INSERT INTO settings (key, value) VALUES ($1, $2)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";

// ---- Accounts, keys and sessions ------------------------------------------

pub(crate) const CREATE_USER: &str =
    "INSERT INTO users (id, email, password_hash, tier, created_at) VALUES ($1, $2, $3, $4, $5)";

pub(crate) const USER_BY_EMAIL: &str = concat!(
    "SELECT ",
    user_columns!(),
    ", u.password_hash FROM users u WHERE u.email = $1"
);

pub(crate) const SET_USER_TIER: &str = "UPDATE users SET tier = $1 WHERE email = $2";

pub(crate) const SET_USER_PASSWORD: &str = "UPDATE users SET password_hash = $1 WHERE email = $2";

/// Signs a user out everywhere (after a password change).
pub(crate) const DELETE_USER_SESSIONS: &str =
    "DELETE FROM sessions WHERE user_id IN (SELECT id FROM users WHERE email = $1)";

pub(crate) const SET_USER_LIMITS: &str =
    "UPDATE users SET per_minute = $1, per_day = $2 WHERE email = $3";

pub(crate) const LIST_USERS: &str = concat!(
    "SELECT ",
    user_columns!(),
    " FROM users u ORDER BY u.email COLLATE \"C\""
);

pub(crate) const CREATE_SESSION: &str =
    "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)";

pub(crate) const SESSION_USER: &str = concat!(
    "SELECT ",
    user_columns!(),
    " FROM sessions s JOIN users u ON u.id = s.user_id
     WHERE s.token_hash = $1 AND s.expires_at > $2"
);

pub(crate) const DELETE_SESSION: &str = "DELETE FROM sessions WHERE token_hash = $1";

/// Slides a session's expiry to `$2` (now + idle timeout), never past its
/// creation + `$3` (the absolute lifetime); only sessions that have not
/// expired and were not slid in the last `$4` seconds are written.
pub(crate) const SLIDE_SESSION: &str = "UPDATE sessions
     SET expires_at = CASE WHEN created_at + $3 < $2 THEN created_at + $3 ELSE $2 END
     WHERE token_hash = $1 AND expires_at > $5 AND expires_at < $2 - $4";

pub(crate) const PURGE_SESSIONS: &str = "DELETE FROM sessions WHERE expires_at <= $1";

/// Counters whose window ended: login counters (5-minute windows) after
/// `$2`, every other counter (the longest window is a day) after `$3`.
pub(crate) const PURGE_COUNTERS: &str = "DELETE FROM counters
     WHERE (kind LIKE 'login%' AND window_start < $1) OR window_start < $2";

/// A subject's counters whose kind starts with `$2`.
pub(crate) const COUNTERS_OF: &str = "SELECT kind, window_start, used FROM counters
     WHERE subject = $1 AND substr(kind, 1, length($2)) = $2 ORDER BY kind";

pub(crate) const RESET_COUNTERS: &str = "DELETE FROM counters WHERE subject = $1";

pub(crate) const COUNT_ACTIVE_KEYS: &str =
    "SELECT COUNT(*) AS n FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL";

pub(crate) const INSERT_API_KEY: &str =
    "INSERT INTO api_keys (id, user_id, name, key_hash, key_prefix, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)";

pub(crate) const LIST_API_KEYS: &str = concat!(
    "SELECT ",
    key_columns!(),
    " FROM api_keys k WHERE k.user_id = $1 AND k.revoked_at IS NULL
     ORDER BY k.created_at DESC, k.id COLLATE \"C\""
);

pub(crate) const REVOKE_API_KEY: &str = "UPDATE api_keys SET revoked_at = $1
     WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL";

pub(crate) const API_KEY_USER: &str =
    "SELECT k.id AS key_id, k.user_id, k.name, k.key_prefix, k.created_at AS key_created_at,
            k.last_used_at, u.email, u.tier, u.per_minute, u.per_day, u.created_at
     FROM api_keys k JOIN users u ON u.id = k.user_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL";

pub(crate) const WATCHLIST: &str = concat!(
    "SELECT ",
    asset_columns!(),
    " FROM watchlist w JOIN assets ON assets.id = w.asset_id
     WHERE w.user_id = $1 AND is_active ORDER BY w.position"
);

pub(crate) const CLEAR_WATCHLIST: &str = "DELETE FROM watchlist WHERE user_id = $1";

pub(crate) const ADD_TO_WATCHLIST: &str =
    "INSERT INTO watchlist (user_id, position, asset_id, added_at) VALUES ($1, $2, $3, $4)";

pub(crate) const TOUCH_API_KEY: &str = "UPDATE api_keys SET last_used_at = $1
     WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)";

// ---- Grading --------------------------------------------------------------

pub(crate) const RUN_BY_KEY: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM grading_runs WHERE day = $1 AND engine = $2 AND scorer = $3"
);

/// The grade upsert's conflict clause (SQLite writes rows one by one,
/// PostgreSQL in chunks through `UNNEST`).
macro_rules! upsert_grade_conflict {
    () => {
        "ON CONFLICT (run_id, asset_id, return_period, metric) DO UPDATE SET
            data_version = excluded.data_version, letter = excluded.letter,
            score = excluded.score, expected_return = excluded.expected_return,
            prediction_error = excluded.prediction_error,
            median_return = excluded.median_return, median_error = excluded.median_error,
            current_drawdown = excluded.current_drawdown,
            current_price = excluded.current_price, win_rate = excluded.win_rate,
            body = excluded.body"
    };
}
pub(crate) use upsert_grade_conflict;

/// The columns of a grade row as written.
macro_rules! grade_insert {
    () => {
        "INSERT INTO grades (run_id, asset_id, return_period, metric, data_version, letter,
            score, expected_return, prediction_error, median_return, median_error,
            current_drawdown, current_price, win_rate, body) "
    };
}
pub(crate) use grade_insert;

pub(crate) const COUNT_CLOSED_TASKS: &str =
    "UPDATE grading_runs SET graded = graded + $1, failures = failures + $2 WHERE id = $3";

pub(crate) const COUNT_OPEN_TASKS: &str = "SELECT COUNT(*) AS n FROM grading_tasks
     WHERE run_id = $1 AND status IN ('pending', 'claimed')";

/// Flips a running run to done (no-op on a done one).
pub(crate) const MARK_RUN_DONE: &str = "UPDATE grading_runs SET status = 'done', finished_at = $1
     WHERE id = $2 AND status = 'running'";

/// The three steps of completing a run (each binds the run id): it
/// becomes the active run, and the other runs' grades and tasks go.
pub(crate) const SET_ACTIVE_RUN: &str =
    "INSERT INTO settings (key, value) VALUES ('active_grading_run', $1)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/// Grades of earlier days' runs go; today's other runs keep theirs, so a
/// rollback can re-activate the snapshot the restored versions graded.
pub(crate) const DELETE_OTHER_GRADES: &str = "DELETE FROM grades WHERE run_id IN
     (SELECT id FROM grading_runs WHERE day < (SELECT day FROM grading_runs WHERE id = $1))";

/// Grade histories go with their run's grades.
pub(crate) const DELETE_OTHER_TRACK_POINTS: &str = "DELETE FROM track_points WHERE run_id IN
     (SELECT id FROM grading_runs WHERE day < (SELECT day FROM grading_runs WHERE id = $1))";

/// Carries go with their run's grade histories.
pub(crate) const DELETE_OTHER_CARRIES: &str = "DELETE FROM grade_carries WHERE run_id IN
     (SELECT id FROM grading_runs WHERE day < (SELECT day FROM grading_runs WHERE id = $1))";

/// Some assets' carries in a run; `{ids}` is how the backend unpacks the
/// JSON array of asset ids bound as `$2`.
macro_rules! batch_carries {
    ($ids:literal) => {
        concat!(
            "SELECT asset_id, body FROM grade_carries WHERE run_id = $1 AND asset_id IN (",
            $ids,
            ")"
        )
    };
}
pub(crate) use batch_carries;

/// Some assets' grade histories in a run, whatever the assets' state, in
/// (asset, period, metric) order; `$ids` as in [`batch_carries`].
macro_rules! batch_track_points {
    ($ids:literal) => {
        concat!(
            "SELECT t.asset_id, CAST(t.return_period AS BIGINT) AS return_period, t.metric,
            b.body, t.body_id
     FROM track_points t JOIN track_bodies b ON b.id = t.body_id
     WHERE t.run_id = $1 AND t.asset_id IN (",
            $ids,
            ") ORDER BY t.asset_id, t.return_period, t.metric"
        )
    };
}
pub(crate) use batch_track_points;

/// Rows per multi-row statement of a batch of grades, grade histories,
/// bodies or carries (at most 15 parameters a row, 7,500 a statement: far
/// below both backends' limits, 32,766 and 65,535).
pub(crate) const ROWS_PER_STATEMENT: usize = 500;

/// Ids for `$1` new grade-history bodies on SQLite: after the largest
/// one (the writer lock is held, so nobody else takes them).
pub(crate) const SQLITE_NEW_BODY_IDS: &str = "WITH RECURSIVE s(i) AS
     (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $1)
     SELECT (SELECT coalesce(max(id), 0) FROM track_bodies) + i AS id FROM s";

/// Ids for `$1` new grade-history bodies on PostgreSQL: from the column's
/// sequence, so replicas writing at once never take the same one.
pub(crate) const PG_NEW_BODY_IDS: &str =
    "SELECT nextval(pg_get_serial_sequence('track_bodies', 'id')) AS id
     FROM generate_series(1, $1::bigint)";

/// Bodies no run's history points at any more (their runs' rows gone, or
/// replaced); run when a run finishes.
pub(crate) const DELETE_UNUSED_TRACK_BODIES: &str = "DELETE FROM track_bodies WHERE NOT EXISTS
     (SELECT 1 FROM track_points t WHERE t.body_id = track_bodies.id)";

/// A run's grade histories of one (period, metric), of active assets.
pub(crate) const TRACK_POINTS: &str = "SELECT t.asset_id, b.body, a.category, a.data_source
     FROM track_points t JOIN assets a ON a.id = t.asset_id
     JOIN track_bodies b ON b.id = t.body_id
     WHERE t.run_id = $1 AND t.return_period = $2 AND t.metric = $3 AND a.is_active
     ORDER BY t.asset_id";

pub(crate) const DELETE_OTHER_TASKS: &str = "DELETE FROM grading_tasks WHERE run_id IN
     (SELECT id FROM grading_runs WHERE day < (SELECT day FROM grading_runs WHERE id = $1))";

/// The completed run of (day, engine, scorer), if any.
pub(crate) const DONE_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM grading_runs WHERE day = $1 AND engine = $2 AND scorer = $3 AND status = 'done'"
);

pub(crate) const ACTIVE_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM grading_runs
     WHERE id = (SELECT value FROM settings WHERE key = 'active_grading_run')"
);

/// Ties broken by id in byte order.
pub(crate) const LATEST_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM grading_runs ORDER BY started_at DESC, id COLLATE \"C\" LIMIT 1"
);

pub(crate) const GRADE: &str = concat!(
    "SELECT ",
    grade_columns!(),
    " FROM grades g
     WHERE g.run_id = $1 AND g.asset_id = $2 AND g.return_period = $3 AND g.metric = $4"
);

pub(crate) const RANKING_ROWS: &str = concat!(
    "SELECT ",
    grade_columns!(),
    ", a.ticker, a.name, a.category, a.data_source, a.currency, p.last_date AS last_price_date
     FROM grades g JOIN assets a ON a.id = g.asset_id
     JOIN daily_prices p ON p.asset_id = g.asset_id
     WHERE g.run_id = $1 AND g.return_period = $2 AND g.metric = $3 AND a.is_active
     ORDER BY g.asset_id"
);

// ---- Plugin registry ------------------------------------------------------

/// The `settings` key of the plugins generation (an integer as text).
pub(crate) const GENERATION_KEY: &str = "plugins_generation";

/// Adds one to the generation (creating it at 1). The qualified
/// `settings.value` is the stored row in both dialects.
pub(crate) const BUMP_GENERATION: &str = "INSERT INTO settings (key, value) VALUES ($1, '1')
     ON CONFLICT (key) DO UPDATE
     SET value = CAST(CAST(settings.value AS BIGINT) + 1 AS TEXT)";

pub(crate) const ADD_PLUGIN: &str = "INSERT INTO plugins
        (kind, name, version, sha256, size, wasm, builtin, added_by, added_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (kind, name, version) DO NOTHING";

pub(crate) const PLUGIN_SHA256: &str =
    "SELECT sha256 FROM plugins WHERE kind = $1 AND name = $2 AND version = $3";

pub(crate) const LIST_PLUGINS: &str = concat!(
    "SELECT ",
    plugin_columns!(),
    " FROM plugins
     ORDER BY kind COLLATE \"C\", name COLLATE \"C\", added_at, version COLLATE \"C\""
);

pub(crate) const PLUGIN: &str = concat!(
    "SELECT ",
    plugin_columns!(),
    " FROM plugins WHERE kind = $1 AND name = $2 AND version = $3"
);

pub(crate) const PLUGIN_WASM: &str =
    "SELECT wasm FROM plugins WHERE kind = $1 AND name = $2 AND version = $3";

pub(crate) const INSERT_ACTIVATION: &str = "INSERT INTO plugin_activations
        (slot, kind, name, version, activated_by, activated_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING id";

pub(crate) const MARK_ROLLED_BACK: &str =
    "UPDATE plugin_activations SET rolled_back = TRUE WHERE id = $1";

pub(crate) const ACTIVE_PLUGINS: &str = concat!(
    "SELECT ",
    activation_columns!(),
    " FROM plugin_activations
     WHERE id IN (SELECT MAX(id) FROM plugin_activations WHERE NOT rolled_back GROUP BY slot)
     ORDER BY slot COLLATE \"C\""
);

/// The live activations of a slot; each backend adds its order and lock.
macro_rules! live_activations {
    () => {
        concat!(
            "SELECT ",
            $crate::sql::activation_columns!(),
            " FROM plugin_activations WHERE slot = $1 AND NOT rolled_back"
        )
    };
}
pub(crate) use live_activations;

pub(crate) const SET_SHADOW: &str = "INSERT INTO plugin_shadows
        (kind, name, version, sample, started_by, started_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (kind) DO UPDATE SET
        name = excluded.name, version = excluded.version, sample = excluded.sample,
        started_by = excluded.started_by, started_at = excluded.started_at";

pub(crate) const CLEAR_SHADOW: &str = "DELETE FROM plugin_shadows WHERE kind = $1";

pub(crate) const SHADOWS: &str = concat!(
    "SELECT ",
    shadow_columns!(),
    " FROM plugin_shadows ORDER BY kind COLLATE \"C\""
);

pub(crate) const RECORD_SHADOW_SAMPLE: &str = "INSERT INTO shadow_samples
        (kind, active, candidate, identical, active_ms, candidate_ms, error, diffs, at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

pub(crate) const SHADOW_SAMPLES: &str =
    "SELECT kind, active, candidate, identical, active_ms, candidate_ms, error, diffs, at
     FROM shadow_samples WHERE kind = $1 AND candidate = $2 ORDER BY id";

// ---- Generations (migration 0008) ------------------------------------------

pub(crate) const GENERATIONS: &str = "SELECT name, value FROM generations";

// ---- Authors' strategies (migrations 0009, 0010) ---------------------------

/// The columns [`crate::rows::strategies`] decodes: a strategy joined with each of
/// its versions, newest upload first within a strategy.
macro_rules! strategy_select {
    () => {
        "SELECT s.owner_id, s.handle, s.name, s.current_version, s.shared,
                u.version, u.sha256, u.size, u.signer, u.manifest, u.uploaded_at, u.imports
         FROM authored_strategies s
         JOIN strategy_uploads u ON u.owner_id = s.owner_id AND u.name = s.name
         WHERE NOT s.deleted AND "
    };
}

pub(crate) const AUTHORED: &str = concat!(
    strategy_select!(),
    "s.handle = $1 AND s.name = $2
     ORDER BY s.owner_id COLLATE \"C\", u.seq DESC"
);

pub(crate) const VISIBLE: &str = concat!(
    strategy_select!(),
    "(s.owner_id = $1 OR s.shared)
     ORDER BY s.handle COLLATE \"C\", s.name COLLATE \"C\", s.owner_id COLLATE \"C\", u.seq DESC"
);

pub(crate) const UPLOAD_WASM: &str = "SELECT u.wasm FROM strategy_uploads u
     JOIN authored_strategies s ON s.owner_id = u.owner_id AND s.name = u.name
     WHERE u.owner_id = $1 AND u.name = $2 AND u.version = $3
       AND NOT s.deleted AND u.wasm IS NOT NULL";

pub(crate) const STRATEGY_DELETED: &str =
    "SELECT deleted FROM authored_strategies WHERE owner_id = $1 AND name = $2";

pub(crate) const UPLOAD_SHA256: &str =
    "SELECT sha256 FROM strategy_uploads WHERE owner_id = $1 AND name = $2 AND version = $3";

pub(crate) const COUNT_LIVE_STRATEGIES: &str =
    "SELECT COUNT(*) AS n FROM authored_strategies WHERE owner_id = $1 AND NOT deleted";

pub(crate) const COUNT_VERSIONS: &str =
    "SELECT COUNT(*) AS n FROM strategy_uploads WHERE owner_id = $1 AND name = $2";

pub(crate) const INSERT_UPLOAD: &str = "INSERT INTO strategy_uploads
        (owner_id, name, version, seq, sha256, size, signer, manifest, wasm, uploaded_at, imports)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

/// Puts back the bytes of a version whose strategy was deleted (its sha256
/// was checked to match).
pub(crate) const RESTORE_WASM: &str = "UPDATE strategy_uploads SET wasm = $4
     WHERE owner_id = $1 AND name = $2 AND version = $3 AND wasm IS NULL";

/// Creates the strategy, or revives a deleted one: `$4` current, private.
pub(crate) const CREATE_OR_REVIVE: &str = "INSERT INTO authored_strategies
        (owner_id, handle, name, current_version, shared, deleted, created_at)
     VALUES ($1, $2, $3, $4, FALSE, FALSE, $5)
     ON CONFLICT (owner_id, name) DO UPDATE SET
        handle = excluded.handle, current_version = excluded.current_version,
        shared = FALSE, deleted = FALSE";

pub(crate) const VERSION_HAS_BYTES: &str = "SELECT 1 AS one FROM strategy_uploads
     WHERE owner_id = $1 AND name = $2 AND version = $3 AND wasm IS NOT NULL";

pub(crate) const UPDATE_STRATEGY: &str = "UPDATE authored_strategies
     SET shared = COALESCE($3, shared), current_version = COALESCE($4, current_version)
     WHERE owner_id = $1 AND name = $2";

pub(crate) const MARK_DELETED: &str = "UPDATE authored_strategies SET deleted = TRUE
     WHERE owner_id = $1 AND name = $2 AND NOT deleted";

pub(crate) const DROP_WASM: &str =
    "UPDATE strategy_uploads SET wasm = NULL WHERE owner_id = $1 AND name = $2";

/// Records one backtest's use of a strategy component (migration 0010).
pub(crate) const RECORD_PLUGIN_RUN: &str = "INSERT INTO plugin_runs
        (sha256, ran_at, calls, fuel, guest_ms, peak_memory_bytes, user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Drops an account's runs of a component older than its newest `$2` (none
/// when it has fewer: the subquery is then NULL).
pub(crate) const PRUNE_PLUGIN_RUNS: &str = "DELETE FROM plugin_runs
     WHERE sha256 = $1 AND user_id = $3 AND id <=
     (SELECT id FROM plugin_runs WHERE sha256 = $1 AND user_id = $3
      ORDER BY id DESC LIMIT 1 OFFSET $2)";

/// The kept runs of every component by one account (`$2`), newest first.
pub(crate) const PLUGIN_RUNS: &str =
    "SELECT sha256, ran_at, calls, fuel, guest_ms, peak_memory_bytes, user_id
     FROM plugin_runs WHERE user_id = $2 ORDER BY id DESC LIMIT $1";

/// Records a run and prunes its component's older runs inside the
/// transaction `$tx` (either backend's), with [`RECORD_PLUGIN_RUN`] and
/// [`PRUNE_PLUGIN_RUNS`].
macro_rules! record_plugin_run {
    ($tx:expr, $run:expr, $keep:expr) => {{
        let run: &$crate::PluginRun = $run;
        let big = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        sqlx::query($crate::sql::RECORD_PLUGIN_RUN)
            .bind(&run.sha256)
            .bind(run.ran_at)
            .bind(big(run.calls))
            .bind(run.fuel.map(big))
            .bind(run.guest_ms)
            .bind(big(run.peak_memory_bytes))
            .bind(&run.user_id)
            .execute(&mut *$tx)
            .await?;
        sqlx::query($crate::sql::PRUNE_PLUGIN_RUNS)
            .bind(&run.sha256)
            .bind(i64::from($keep))
            .bind(&run.user_id)
            .execute(&mut *$tx)
            .await?;
    }};
}
pub(crate) use record_plugin_run;
