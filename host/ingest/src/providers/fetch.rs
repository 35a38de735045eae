//! The fetch run: every asset of a list fetched from one provider, each
//! merged into its stored series all-or-nothing.
//!
//! Per asset: the provider's symbol (none → failed with the reason, no
//! request), one GET with the run's retries ([`super::http`]), the parse
//! and validation of the whole answer, every row plausible and the history
//! it makes too ([`crate::plausible`]: dates 1800-01-01 ..= tomorrow UTC,
//! closes 1e-6 ..= 1e9, no jump beyond 10x unless
//! [`FetchOptions::allow_jumps`], at most 60,000 rows), then the rows are upserted by date into the stored series exactly as
//! `forecast ingest csv` does ([`PriceSeries::merge`]) — except that a
//! synthetic (generated) history is replaced, never mixed with market
//! data — and written with one
//! [`AssetStore::store_series`] call flagged [`DataSource::Ingested`] —
//! which bumps the asset's data version and drops its cached analyses and
//! grades. When the merge changes nothing the asset is "unchanged" and
//! nothing is written, so its data version and caches stay. A failure at
//! any step leaves the stored prices as they were.
//!
//! Assets are fetched by `concurrency` workers sharing one rate limit. When
//! the provider says its daily quota is spent, the assets not yet asked
//! fail with that reason instead of being requested.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::NaiveDate;

use forecast_domain::series::{from_days, PriceSeries};
use forecast_domain::{Asset, DataSource, SharedClock, SystemClock};
use forecast_store::AssetStore;

use super::http::{Http, HttpPolicy};
use super::{ParseError, PriceProvider};
use crate::plausible::Rules;

/// Bounds of [`FetchOptions::concurrency`].
pub const CONCURRENCY_RANGE: std::ops::RangeInclusive<u32> = 1..=16;
/// Bounds of the rate limit, requests per second.
pub const RATE_RANGE: std::ops::RangeInclusive<u32> = 1..=20;

/// How a run fetches.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Only rows from this date on (the provider's range); all history
    /// when `None`.
    pub since: Option<NaiveDate>,
    /// Assets fetched at the same time (clamped to [`CONCURRENCY_RANGE`]).
    pub concurrency: u32,
    /// Requests, retries, rate limit, time-out and body cap.
    pub http: HttpPolicy,
    /// The operator forces jumps beyond the plausible factor
    /// (`--allow-jumps`); never set by the scheduled refresh.
    pub allow_jumps: bool,
    /// Today (the plausible dates), a `Retry-After` date, the refresh's
    /// day and leases.
    pub clock: SharedClock,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            since: None,
            concurrency: 4,
            http: HttpPolicy::default(),
            allow_jumps: false,
            clock: SystemClock::shared(),
        }
    }
}

/// What happened to one asset.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "outcome", content = "reason", rename_all = "lowercase")]
pub enum FetchOutcome {
    /// New or changed rows were written.
    Loaded,
    /// The fetched rows were all already stored: nothing written.
    Unchanged,
    /// Nothing written; why.
    Failed(String),
}

/// The report of one asset of a [`fetch_assets`] run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FetchReport {
    /// The catalog ticker.
    pub ticker: String,
    /// The provider's symbol, when it has one.
    pub symbol: Option<String>,
    /// Loaded, unchanged or failed.
    pub outcome: FetchOutcome,
    /// Requests sent (retries included).
    pub attempts: u32,
    /// Valid rows in the answer.
    pub rows_fetched: usize,
    /// Rows skipped for a `null` close.
    pub skipped_null: usize,
    /// Rows dropped for a repeated date (the last one is kept).
    pub duplicates: usize,
    /// Unadjusted splits found in the answer and adjusted for.
    pub splits_adjusted: usize,
    /// Rows of the stored series before.
    pub rows_before: usize,
    /// Rows of the stored series after (= before unless loaded).
    pub rows_after: usize,
}

impl FetchReport {
    /// True when the asset failed.
    pub fn failed(&self) -> bool {
        matches!(self.outcome, FetchOutcome::Failed(_))
    }
}

/// Progress of a run, after each finished asset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchProgress {
    /// Assets finished.
    pub done: usize,
    /// Assets in the run.
    pub total: usize,
    /// Of the finished: loaded, unchanged, failed.
    pub loaded: usize,
    /// Unchanged so far.
    pub unchanged: usize,
    /// Failed so far.
    pub failed: usize,
}

impl FetchProgress {
    /// Nothing finished yet of `total`.
    fn none_of(total: usize) -> Self {
        FetchProgress {
            done: 0,
            total,
            loaded: 0,
            unchanged: 0,
            failed: 0,
        }
    }
}

/// The progress callback.
pub type ProgressFn = Arc<dyn Fn(FetchProgress) + Send + Sync>;

/// Fetches every asset of `assets` from `provider` into `store` (see the
/// module docs); one report per asset, in the order of `assets`. Never
/// fails as a whole: a store failure fails the asset it happened on.
pub async fn fetch_assets(
    store: Arc<dyn AssetStore>,
    provider: Arc<dyn PriceProvider>,
    assets: &[Asset],
    options: &FetchOptions,
    progress: ProgressFn,
) -> Vec<FetchReport> {
    let total = assets.len();
    let mut policy = options.http.clone();
    policy.rate_per_second = policy
        .rate_per_second
        .clamp(*RATE_RANGE.start(), *RATE_RANGE.end());
    let http = match Http::new(policy, options.clock.clone()) {
        Ok(h) => Arc::new(h),
        Err(e) => {
            return assets
                .iter()
                .map(|a| failed_report(a, None, e.clone()))
                .collect()
        }
    };
    let today = options.clock.today();
    let shared = Arc::new(Shared {
        assets: assets.to_vec(),
        next: AtomicUsize::new(0),
        quota_spent: AtomicBool::new(false),
        quota_reason: Mutex::new(String::new()),
        reports: Mutex::new(vec![None; total]),
        counts: Mutex::new(FetchProgress::none_of(total)),
    });
    progress(FetchProgress::none_of(total));
    let workers = options
        .concurrency
        .clamp(*CONCURRENCY_RANGE.start(), *CONCURRENCY_RANGE.end()) as usize;
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..workers.min(total.max(1)) {
        let worker = Worker {
            shared: shared.clone(),
            store: store.clone(),
            provider: provider.clone(),
            http: http.clone(),
            progress: progress.clone(),
            since: options.since,
            rules: Rules::new(today, options.allow_jumps),
        };
        set.spawn(worker.run());
    }
    while let Some(joined) = set.join_next().await {
        if let Err(e) = joined {
            tracing::error!(error = %e, "fetch: a worker ended abnormally");
        }
    }
    let reports = std::mem::take(&mut *shared.reports.lock().expect("reports lock"));
    reports
        .into_iter()
        .zip(assets)
        .map(|(r, a)| {
            r.unwrap_or_else(|| failed_report(a, None, "not fetched: a worker failed".into()))
        })
        .collect()
}

/// One of a run's workers: it fetches the next asset of the run until
/// none is left, counting and reporting each.
struct Worker {
    shared: Arc<Shared>,
    store: Arc<dyn AssetStore>,
    provider: Arc<dyn PriceProvider>,
    http: Arc<Http>,
    progress: ProgressFn,
    since: Option<NaiveDate>,
    rules: Rules,
}

impl Worker {
    async fn run(self) {
        let shared = &self.shared;
        loop {
            let i = shared.next.fetch_add(1, Ordering::SeqCst);
            let Some(asset) = shared.assets.get(i) else {
                break;
            };
            let started = Instant::now();
            let report = fetch_one(
                shared,
                self.store.as_ref(),
                self.provider.as_ref(),
                &self.http,
                asset,
                self.since,
                self.rules,
            )
            .await;
            log(&report, self.provider.name(), started.elapsed());
            let p = {
                let mut c = shared.counts.lock().expect("counts lock");
                c.done += 1;
                match report.outcome {
                    FetchOutcome::Loaded => c.loaded += 1,
                    FetchOutcome::Unchanged => c.unchanged += 1,
                    FetchOutcome::Failed(_) => c.failed += 1,
                }
                *c
            };
            shared.reports.lock().expect("reports lock")[i] = Some(report);
            (self.progress)(p);
        }
    }
}

struct Shared {
    assets: Vec<Asset>,
    next: AtomicUsize,
    quota_spent: AtomicBool,
    quota_reason: Mutex<String>,
    reports: Mutex<Vec<Option<FetchReport>>>,
    counts: Mutex<FetchProgress>,
}

fn failed_report(asset: &Asset, symbol: Option<String>, reason: String) -> FetchReport {
    FetchReport {
        ticker: asset.ticker.clone(),
        symbol,
        outcome: FetchOutcome::Failed(reason),
        attempts: 0,
        rows_fetched: 0,
        skipped_null: 0,
        duplicates: 0,
        splits_adjusted: 0,
        rows_before: 0,
        rows_after: 0,
    }
}

async fn fetch_one(
    shared: &Shared,
    store: &dyn AssetStore,
    provider: &dyn PriceProvider,
    http: &Http,
    asset: &Asset,
    since: Option<NaiveDate>,
    rules: Rules,
) -> FetchReport {
    let symbol = match provider.symbol(asset) {
        Ok(s) => s,
        Err(reason) => return failed_report(asset, None, reason),
    };
    let mut report = failed_report(asset, Some(symbol.clone()), String::new());
    let fail = |mut report: FetchReport, reason: String| {
        report.outcome = FetchOutcome::Failed(reason);
        report
    };
    if shared.quota_spent.load(Ordering::SeqCst) {
        let why = shared.quota_reason.lock().expect("quota lock").clone();
        return fail(report, format!("not fetched: {why}"));
    }
    let url = provider.request_url(&symbol, since, rules.today);
    let fetched = http.get(provider, &url).await;
    report.attempts = fetched.attempts;
    let body = match fetched.body {
        Ok(b) => b,
        Err(reason) => return fail(report, reason),
    };
    let parsed = match provider.parse(&body) {
        Ok(p) => p,
        Err(e) => {
            if let ParseError::QuotaExceeded(why) = &e {
                *shared.quota_reason.lock().expect("quota lock") = why.clone();
                shared.quota_spent.store(true, Ordering::SeqCst);
            }
            return fail(report, e.to_string());
        }
    };
    report.rows_fetched = parsed.rows.len();
    report.skipped_null = parsed.skipped_null;
    report.duplicates = parsed.duplicates;
    report.splits_adjusted = parsed.splits_adjusted;
    if let Err(why) = parsed
        .rows
        .iter()
        .try_for_each(|&(d, c)| rules.check_row(d, c))
    {
        return fail(
            report,
            format!("{} answered an implausible row: {why}", provider.name()),
        );
    }
    let stored = match store.load_series(asset.id).await {
        Ok(s) => s.unwrap_or_default(),
        Err(e) => return fail(report, format!("store failure: {e}")),
    };
    report.rows_before = stored.len();
    report.rows_after = stored.len();
    // Generated prices never mix with market data: a synthetic history is
    // replaced by what was fetched; a real or ingested one is merged into.
    let merged = if asset.data_source == DataSource::Synthetic {
        let mut fresh = PriceSeries::default();
        fresh.merge(&parsed.rows);
        fresh
    } else {
        let mut merged = stored.clone();
        merged.merge(&parsed.rows);
        merged
    };
    if merged == stored {
        report.outcome = FetchOutcome::Unchanged;
        return report;
    }
    let days: Vec<i32> = parsed.rows.iter().map(|&(d, _)| d).collect();
    if let Err(refusal) = rules.check_history(&merged, &days) {
        let at = refusal
            .day
            .map(|d| format!(" (row {})", from_days(d)))
            .unwrap_or_default();
        return fail(
            report,
            format!(
                "{} answer refused{at}: {}",
                provider.name(),
                refusal.message
            ),
        );
    }
    if let Err(e) = store
        .store_series(&[(asset.id, &merged, DataSource::Ingested)])
        .await
    {
        return fail(report, format!("store failure: {e}"));
    }
    report.rows_after = merged.len();
    report.outcome = FetchOutcome::Loaded;
    report
}

fn log(r: &FetchReport, provider: &str, took: Duration) {
    let ms = took.as_millis() as u64;
    match &r.outcome {
        FetchOutcome::Failed(reason) => tracing::debug!(
            provider, ticker = %r.ticker, attempts = r.attempts, ms, reason = %reason, "fetch: failed"
        ),
        outcome => tracing::debug!(
            provider,
            ticker = %r.ticker,
            outcome = ?outcome,
            attempts = r.attempts,
            rows_fetched = r.rows_fetched,
            skipped_null = r.skipped_null,
            duplicates = r.duplicates,
            splits_adjusted = r.splits_adjusted,
            rows_before = r.rows_before,
            rows_after = r.rows_after,
            ms,
            "fetch: done"
        ),
    }
}
