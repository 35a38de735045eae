//! The scheduled price refresh (issue 16): off unless `FORECAST_REFRESH_AT`
//! is set; then, every day at that time (UTC), the active universe is
//! fetched from the configured provider into the store, split across
//! replicas through the store like grading: today's run of kind
//! `refresh:{provider}` holds one item per active asset, each replica
//! claims batches under a lease, fetches them with
//! [`crate::providers::fetch_assets`] (all-or-nothing per asset, so the
//! prices that changed drop exactly their caches and grades) and closes
//! them. A replica that dies leaves its batch to another once the lease
//! expires. The daily grade waits for a refresh still running that day
//! (its job kind is [`job_kind`]), so it grades the refreshed prices.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::NaiveTime;
use forecast_store::{Database, JobRun, StoreError};

use crate::providers::{fetch_assets, FetchOptions, FetchOutcome, PriceProvider};

/// Assets a replica claims at once.
const BATCH: u32 = 16;
/// A claimed batch not closed for this long is claimed again by another
/// replica (a batch of 16 at the default 2 requests a second, with its
/// retries, takes well under a minute).
const LEASE_SECONDS: i64 = 600;

/// The job kind of a provider's refresh.
pub fn job_kind(provider: &dyn PriceProvider) -> String {
    format!("refresh:{}", provider.name())
}

/// What one replica did in a refresh.
#[derive(Debug, Clone)]
pub struct RefreshSummary {
    /// The run as this replica last saw it.
    pub run: JobRun,
    /// Assets fetched here with new rows.
    pub loaded: usize,
    /// Assets fetched here with nothing new.
    pub unchanged: usize,
    /// Assets that failed here (their prices are kept).
    pub failed: usize,
    /// Wall time of this replica's part.
    pub elapsed: Duration,
}

/// Starts or joins today's refresh and works on it until no item is left
/// (the day and the leases are `options.clock`'s).
pub async fn run(
    db: Arc<dyn Database>,
    provider: Arc<dyn PriceProvider>,
    options: &FetchOptions,
) -> Result<RefreshSummary, StoreError> {
    let started = Instant::now();
    let kind = job_kind(provider.as_ref());
    let clock = options.clock.clone();
    let day = clock.today().to_string();
    let assets = db.list_active_assets(None).await?;
    let ids: Vec<i64> = assets.iter().map(|a| a.id).collect();
    let by_id: HashMap<i64, _> = assets.into_iter().map(|a| (a.id, a)).collect();
    let mut run = db
        .start_or_join_job(&kind, &day, &ids, clock.timestamp())
        .await?;
    let worker = forecast_domain::schedule::worker_prefix();
    let (mut loaded, mut unchanged, mut failed) = (0, 0, 0);
    let quiet: crate::providers::fetch::ProgressFn = Arc::new(|_| {});
    loop {
        let claimed = db
            .claim_job_items(&run.id, &worker, BATCH, clock.timestamp(), LEASE_SECONDS)
            .await?;
        if claimed.is_empty() {
            break;
        }
        // An item of a run another replica started may name an asset this
        // one does not list as active any more: nothing to fetch.
        let batch: Vec<_> = claimed
            .iter()
            .filter_map(|id| by_id.get(id).cloned())
            .collect();
        let store: Arc<dyn forecast_store::AssetStore> = db.clone();
        let reports = fetch_assets(store, provider.clone(), &batch, options, quiet.clone()).await;
        let mut done: Vec<i64> = claimed
            .iter()
            .copied()
            .filter(|id| !by_id.contains_key(id))
            .collect();
        let mut bad = Vec::new();
        for (asset, report) in batch.iter().zip(&reports) {
            match &report.outcome {
                FetchOutcome::Loaded => {
                    loaded += 1;
                    done.push(asset.id);
                }
                FetchOutcome::Unchanged => {
                    unchanged += 1;
                    done.push(asset.id);
                }
                FetchOutcome::Failed(reason) => {
                    failed += 1;
                    bad.push(asset.id);
                    tracing::warn!(ticker = %asset.ticker, reason = %reason, "refresh: asset failed; its prices are kept");
                }
            }
        }
        run = db
            .close_job_items(&run.id, &worker, &done, &bad, clock.timestamp())
            .await?;
    }
    Ok(RefreshSummary {
        run,
        loaded,
        unchanged,
        failed,
        elapsed: started.elapsed(),
    })
}

/// The server's refresh scheduler: every day at `at` UTC, [`run`]. Errors
/// are logged; the stored prices stay.
pub async fn schedule(
    db: Arc<dyn Database>,
    provider: Arc<dyn PriceProvider>,
    options: FetchOptions,
    at: NaiveTime,
) {
    loop {
        tokio::time::sleep(Duration::from_secs(
            forecast_domain::schedule::seconds_until(options.clock.now(), at),
        ))
        .await;
        tracing::info!(
            provider = provider.name(),
            "refresh: fetching the active universe"
        );
        match run(db.clone(), provider.clone(), &options).await {
            Ok(s) => tracing::info!(
                run = %s.run.id,
                loaded = s.loaded,
                unchanged = s.unchanged,
                failed = s.failed,
                run_done = s.run.done,
                run_failures = s.run.failures,
                run_total = s.run.total,
                seconds = s.elapsed.as_secs_f64(),
                "refresh finished here"
            ),
            Err(e) => tracing::error!(error = %e, "refresh failed; the stored prices stay"),
        }
    }
}
