//! Row decoding, written once for both backends.
//!
//! [`Cols`] reads one column of a fixed Rust type from a SQLite or a
//! PostgreSQL row (both drivers decode these types from the columns the
//! two schemas declare); the decoders below build the store's records from
//! it. Every stored string that names an enum is parsed here, and every
//! integer narrowed here, so the backends cannot drift apart on either.

use std::str::FromStr;

use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::{ApiKeyRecord, Asset, Category, DataSource, PluginKind, User};

use crate::{
    ActivationRecord, AuthoredStrategy, CachedMetadata, GradeRow, GradingRun, PluginRecord,
    PluginRun, RankedRow, ShadowConfig, ShadowSample, StoreError, StoreResult, TrackedAsset,
    UploadRecord,
};

/// Typed column access by name.
pub(crate) trait Cols {
    /// A `TEXT` column.
    fn text(&self, col: &str) -> StoreResult<String>;
    /// A nullable `TEXT` column.
    fn opt_text(&self, col: &str) -> StoreResult<Option<String>>;
    /// An integer column.
    fn int(&self, col: &str) -> StoreResult<i64>;
    /// A nullable integer column.
    fn opt_int(&self, col: &str) -> StoreResult<Option<i64>>;
    /// A floating-point column.
    fn real(&self, col: &str) -> StoreResult<f64>;
    /// A boolean column (`INTEGER` 0/1 in SQLite).
    fn flag(&self, col: &str) -> StoreResult<bool>;
    /// A binary column.
    fn bytes(&self, col: &str) -> StoreResult<Vec<u8>>;

    /// A `TEXT` column holding the storage name of `T`.
    fn parsed<T: FromStr>(&self, col: &str) -> StoreResult<T> {
        let s = self.text(col)?;
        s.parse()
            .map_err(|_| StoreError::Corrupt(format!("{col} '{s}'")))
    }

    /// An integer column holding a `u32`.
    fn u32(&self, col: &str) -> StoreResult<u32> {
        to_u32(self.int(col)?, col)
    }

    /// A nullable integer column holding a `u32`.
    fn opt_u32(&self, col: &str) -> StoreResult<Option<u32>> {
        self.opt_int(col)?.map(|v| to_u32(v, col)).transpose()
    }
}

/// `v` as a `u32`, or `Corrupt` naming `col`: the store only writes values
/// that came from a `u32`, so anything else was written by someone else.
fn to_u32(v: i64, col: &str) -> StoreResult<u32> {
    u32::try_from(v).map_err(|_| StoreError::Corrupt(format!("{col} {v}")))
}

/// `Cols` for a driver's row type: each accessor is `try_get` of its type.
macro_rules! impl_cols {
    ($row:ty) => {
        impl Cols for $row {
            fn text(&self, col: &str) -> StoreResult<String> {
                Ok(sqlx::Row::try_get(self, col)?)
            }
            fn opt_text(&self, col: &str) -> StoreResult<Option<String>> {
                Ok(sqlx::Row::try_get(self, col)?)
            }
            fn int(&self, col: &str) -> StoreResult<i64> {
                Ok(sqlx::Row::try_get(self, col)?)
            }
            fn opt_int(&self, col: &str) -> StoreResult<Option<i64>> {
                Ok(sqlx::Row::try_get(self, col)?)
            }
            fn real(&self, col: &str) -> StoreResult<f64> {
                Ok(sqlx::Row::try_get(self, col)?)
            }
            fn flag(&self, col: &str) -> StoreResult<bool> {
                Ok(sqlx::Row::try_get(self, col)?)
            }
            fn bytes(&self, col: &str) -> StoreResult<Vec<u8>> {
                Ok(sqlx::Row::try_get(self, col)?)
            }
        }
    };
}

impl_cols!(sqlx::sqlite::SqliteRow);
impl_cols!(sqlx::postgres::PgRow);

/// A row of `sql::asset_columns!`.
pub(crate) fn asset(r: &impl Cols) -> StoreResult<Asset> {
    Ok(Asset {
        id: r.int("id")?,
        ticker: r.text("ticker")?,
        name: r.text("name")?,
        category: category(r)?,
        exchange: r.text("exchange")?,
        currency: r.text("currency")?,
        country: r.text("country")?,
        sector: r.text("sector")?,
        industry: r.text("industry")?,
        website: r.text("website")?,
        summary: r.text("summary")?,
        isin: r.text("isin")?,
        is_active: r.flag("is_active")?,
        is_premium: r.flag("is_premium")?,
        data_source: data_source(r)?,
        data_version: r.int("data_version")?,
        last_price_date: r
            .opt_text("last_price_date")?
            .map(|d| parse_date("last_price_date", &d))
            .transpose()?,
    })
}

/// A `YYYY-MM-DD` column.
fn parse_date(col: &str, s: &str) -> StoreResult<chrono::NaiveDate> {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map_err(|_| StoreError::Corrupt(format!("{col} '{s}'")))
}

fn category(r: &impl Cols) -> StoreResult<Category> {
    let s = r.text("category")?;
    Category::from_str(&s).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn data_source(r: &impl Cols) -> StoreResult<DataSource> {
    let s = r.text("data_source")?;
    DataSource::parse(&s).ok_or_else(|| StoreError::Corrupt(format!("data_source '{s}'")))
}

/// A row of `body, fetched_at`.
pub(crate) fn metadata(r: &impl Cols) -> StoreResult<CachedMetadata> {
    Ok(CachedMetadata {
        body: r.text("body")?,
        fetched_at: r.int("fetched_at")?,
    })
}

/// A row of `sql::user_columns!`.
pub(crate) fn user(r: &impl Cols) -> StoreResult<User> {
    user_with_id(r, r.text("id")?)
}

/// A user from a row whose `id` column may belong to another table (joins).
pub(crate) fn user_with_id(r: &impl Cols, id: String) -> StoreResult<User> {
    let tier = r.text("tier")?;
    Ok(User {
        id,
        email: r.text("email")?,
        tier: tier.parse().map_err(StoreError::Corrupt)?,
        per_minute: r.opt_u32("per_minute")?,
        per_day: r.opt_u32("per_day")?,
        created_at: r.int("created_at")?,
    })
}

/// A row of `sql::key_columns!`.
pub(crate) fn key(r: &impl Cols) -> StoreResult<ApiKeyRecord> {
    Ok(ApiKeyRecord {
        id: r.text("id")?,
        user_id: r.text("user_id")?,
        name: r.text("name")?,
        key_prefix: r.text("key_prefix")?,
        created_at: r.int("created_at")?,
        last_used_at: r.opt_int("last_used_at")?,
    })
}

/// A row of `sql::API_KEY_USER`: the key and its owner.
pub(crate) fn key_and_user(r: &impl Cols) -> StoreResult<(ApiKeyRecord, User)> {
    let key = ApiKeyRecord {
        id: r.text("key_id")?,
        user_id: r.text("user_id")?,
        name: r.text("name")?,
        key_prefix: r.text("key_prefix")?,
        created_at: r.int("key_created_at")?,
        last_used_at: r.opt_int("last_used_at")?,
    };
    let user = user_with_id(r, key.user_id.clone())?;
    Ok((key, user))
}

/// A row of `sql::run_columns!`.
pub(crate) fn run(r: &impl Cols) -> StoreResult<GradingRun> {
    Ok(GradingRun {
        id: r.text("id")?,
        day: r.text("day")?,
        engine: r.text("engine")?,
        scorer: r.text("scorer")?,
        status: r.parsed("status")?,
        started_at: r.int("started_at")?,
        finished_at: r.opt_int("finished_at")?,
        total: r.int("total")?,
        graded: r.int("graded")?,
        failures: r.int("failures")?,
    })
}

/// A row of `sql::grade_columns!`.
pub(crate) fn grade(r: &impl Cols) -> StoreResult<GradeRow> {
    Ok(GradeRow {
        asset_id: r.int("asset_id")?,
        return_period: r.u32("return_period")?,
        metric: r.parsed("metric")?,
        data_version: r.int("data_version")?,
        letter: r.text("letter")?,
        score: r.real("score")?,
        expected_return: r.real("expected_return")?,
        prediction_error: r.real("prediction_error")?,
        median_return: r.real("median_return")?,
        median_error: r.real("median_error")?,
        current_drawdown: r.real("current_drawdown")?,
        current_price: r.real("current_price")?,
        win_rate: r.real("win_rate")?,
        body: r.text("body")?,
    })
}

/// A row of `sql::RANKING_ROWS`.
pub(crate) fn ranked(r: &impl Cols) -> StoreResult<RankedRow> {
    Ok(RankedRow {
        grade: grade(r)?,
        ticker: r.text("ticker")?,
        name: r.text("name")?,
        category: category(r)?,
        data_source: data_source(r)?,
        last_price_date: parse_date("last_price_date", &r.text("last_price_date")?)?,
        currency: r.text("currency")?,
    })
}

/// A row of `sql::TRACK_POINTS`.
pub(crate) fn tracked(r: &impl Cols) -> StoreResult<TrackedAsset> {
    Ok(TrackedAsset {
        asset_id: r.int("asset_id")?,
        category: category(r)?,
        data_source: data_source(r)?,
        body: r.bytes("body")?,
    })
}

/// A row of `sql::ASSET_TRACK_POINTS`.
pub(crate) fn track_points(r: &impl Cols) -> StoreResult<crate::TrackPoints> {
    Ok(crate::TrackPoints {
        asset_id: r.int("asset_id")?,
        return_period: u32::try_from(r.int("return_period")?)
            .map_err(|_| crate::StoreError::Corrupt("return_period out of range".into()))?,
        metric: r.parsed("metric")?,
        body: r.bytes("body")?,
        stored: Some(r.int("body_id")?),
    })
}

fn kind(r: &impl Cols) -> StoreResult<PluginKind> {
    r.parsed("kind")
}

/// A row of `sql::plugin_columns!`.
pub(crate) fn plugin(r: &impl Cols) -> StoreResult<PluginRecord> {
    Ok(PluginRecord {
        kind: kind(r)?,
        name: r.text("name")?,
        version: r.text("version")?,
        sha256: r.text("sha256")?,
        size: r.int("size")?,
        builtin: r.flag("builtin")?,
        added_by: r.text("added_by")?,
        added_at: r.int("added_at")?,
    })
}

/// A row of `sql::activation_columns!`.
pub(crate) fn activation(r: &impl Cols) -> StoreResult<ActivationRecord> {
    Ok(ActivationRecord {
        id: r.int("id")?,
        slot: r.text("slot")?,
        kind: kind(r)?,
        name: r.text("name")?,
        version: r.text("version")?,
        activated_by: r.text("activated_by")?,
        activated_at: r.int("activated_at")?,
        rolled_back: r.flag("rolled_back")?,
    })
}

/// A row of `sql::shadow_columns!`.
pub(crate) fn shadow(r: &impl Cols) -> StoreResult<ShadowConfig> {
    Ok(ShadowConfig {
        kind: kind(r)?,
        name: r.text("name")?,
        version: r.text("version")?,
        sample: r.real("sample")?,
        started_by: r.text("started_by")?,
        started_at: r.int("started_at")?,
    })
}

/// A row of `sql::SHADOW_SAMPLES`.
pub(crate) fn sample(r: &impl Cols) -> StoreResult<ShadowSample> {
    Ok(ShadowSample {
        kind: kind(r)?,
        active: r.text("active")?,
        candidate: r.text("candidate")?,
        identical: r.flag("identical")?,
        active_ms: r.real("active_ms")?,
        candidate_ms: r.real("candidate_ms")?,
        error: r.opt_text("error")?,
        diffs: r.text("diffs")?,
        at: r.int("at")?,
    })
}

/// A row count from the driver (`u64`) as the `i64` the schema counts in.
pub(crate) fn count(rows: u64) -> StoreResult<i64> {
    i64::try_from(rows).map_err(|_| StoreError::Corrupt(format!("row count {rows}")))
}

/// A slice length as the `i64` the schema counts in.
pub(crate) fn len(n: usize) -> StoreResult<i64> {
    i64::try_from(n).map_err(|_| StoreError::Corrupt(format!("length {n}")))
}

/// A row of `sql::COUNTS`.
pub(crate) fn counts(r: &impl Cols) -> StoreResult<crate::StoreCounts> {
    Ok(crate::StoreCounts {
        assets: r.int("assets")?,
        active_assets: r.int("active_assets")?,
        assets_with_prices: r.int("assets_with_prices")?,
        price_rows: r.int("price_rows")?,
        cached_analyses: r.int("cached_analyses")?,
        cached_metadata: r.int("cached_metadata")?,
    })
}

/// A user as `create_user` inserts it (no quota overrides).
pub(crate) fn new_user(id: String, email: &str, tier: forecast_domain::Tier, now: i64) -> User {
    User {
        id,
        email: email.to_string(),
        tier,
        per_minute: None,
        per_day: None,
        created_at: now,
    }
}

/// A key as `create_api_key` inserts it (never used yet).
pub(crate) fn new_key(
    id: String,
    user_id: &str,
    name: &str,
    key_prefix: &str,
    now: i64,
) -> ApiKeyRecord {
    ApiKeyRecord {
        id,
        user_id: user_id.to_string(),
        name: name.to_string(),
        key_prefix: key_prefix.to_string(),
        created_at: now,
        last_used_at: None,
    }
}

/// A row of `sql::LOAD_SERIES`.
pub(crate) fn series(r: &impl Cols) -> StoreResult<PriceSeries> {
    PriceSeries::decode(&r.bytes("series")?).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The first and last dates of a series (`YYYY-MM-DD`), empty when it is.
pub(crate) fn series_bounds(series: &PriceSeries) -> (String, String) {
    match (series.dates.first(), series.dates.last()) {
        (Some(f), Some(l)) => (from_days(*f).to_string(), from_days(*l).to_string()),
        _ => (String::new(), String::new()),
    }
}

/// The plugins generation from its `settings` row (an integer as text).
pub(crate) fn generation(r: &impl Cols) -> StoreResult<i64> {
    r.parsed("value")
}

/// A row of `job_runs`.
pub(crate) fn job(r: &impl Cols) -> StoreResult<crate::JobRun> {
    Ok(crate::JobRun {
        id: r.text("id")?,
        kind: r.text("kind")?,
        day: r.text("day")?,
        status: r.parsed("status")?,
        started_at: r.int("started_at")?,
        finished_at: r.opt_int("finished_at")?,
        total: r.int("total")?,
        done: r.int("done")?,
        failures: r.int("failures")?,
    })
}

/// Rows of `crate::sql::strategy_select!` (grouped by strategy, each strategy's rows
/// together) as strategies with their versions.
pub(crate) fn strategies<R: Cols>(rows: &[R]) -> StoreResult<Vec<AuthoredStrategy>> {
    let mut out: Vec<AuthoredStrategy> = Vec::new();
    for r in rows {
        let owner_id = r.text("owner_id")?;
        let name = r.text("name")?;
        let record = UploadRecord {
            owner_id: owner_id.clone(),
            name: name.clone(),
            version: r.text("version")?,
            sha256: r.text("sha256")?,
            size: r.int("size")?,
            signer: r.opt_text("signer")?,
            manifest: r.opt_text("manifest")?,
            uploaded_at: r.int("uploaded_at")?,
            imports: match r.opt_text("imports")? {
                Some(j) => serde_json::from_str(&j)
                    .map_err(|_| StoreError::Corrupt(format!("imports '{j}'")))?,
                None => Vec::new(),
            },
        };
        match out.last_mut() {
            Some(s) if s.owner_id == owner_id && s.name == name => s.versions.push(record),
            _ => out.push(AuthoredStrategy {
                owner_id,
                handle: r.text("handle")?,
                name,
                current_version: r.text("current_version")?,
                shared: r.flag("shared")?,
                versions: vec![record],
            }),
        }
    }
    Ok(out)
}

/// A row of [`crate::sql::PLUGIN_RUNS`].
pub(crate) fn plugin_run(r: &impl Cols) -> StoreResult<PluginRun> {
    Ok(PluginRun {
        sha256: r.text("sha256")?,
        ran_at: r.int("ran_at")?,
        calls: to_u64(r.int("calls")?, "calls")?,
        fuel: r.opt_int("fuel")?.map(|v| to_u64(v, "fuel")).transpose()?,
        guest_ms: r.real("guest_ms")?,
        peak_memory_bytes: to_u64(r.int("peak_memory_bytes")?, "peak_memory_bytes")?,
        user_id: r.text("user_id")?,
    })
}

fn to_u64(v: i64, col: &str) -> StoreResult<u64> {
    u64::try_from(v).map_err(|_| StoreError::Corrupt(format!("{col} {v}")))
}
