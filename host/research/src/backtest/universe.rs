//! The universe: its assets by name, then their histories (from the cache
//! or the store), handed to the signal workers as they load.

use std::sync::Arc;

use forecast_api::backtest::UniverseSpec;
use forecast_domain::series::PriceSeries;
use forecast_domain::Asset;
use forecast_store::AssetStore;
use tokio::sync::mpsc::Sender;

use super::cache::{HistoryKey, SignalCache};
use super::signals::Cancel;
use super::timed_out;
use forecast_services::error::Error;

/// One loaded history for the signal workers.
pub(super) struct Work {
    /// Index in the universe.
    pub(super) index: usize,
    pub(super) asset: Asset,
    pub(super) series: Arc<PriceSeries>,
}

/// Histories loaded ahead of the signal workers at most.
pub(super) const FEED_AHEAD: usize = 64;

/// The universe's assets (no histories yet: those are loaded once the run
/// holds its plugin slots), ticker order.
pub(super) async fn universe_assets(
    db: &dyn AssetStore,
    spec: &UniverseSpec,
) -> Result<Vec<Asset>, Error> {
    let mut assets: Vec<Asset> = match spec {
        UniverseSpec::Tickers(tickers) => active_tickers(db, tickers).await?,
        UniverseSpec::Category(c) => db.list_active_assets(Some(*c)).await?,
        UniverseSpec::All => db.list_active_assets(None).await?,
    };
    assets.sort_by(|a, b| a.ticker.cmp(&b.ticker));
    Ok(assets)
}

/// The assets of `tickers`, in their order; the first unknown or inactive
/// one is a 400.
async fn active_tickers(db: &dyn AssetStore, tickers: &[String]) -> Result<Vec<Asset>, Error> {
    let mut out = Vec::with_capacity(tickers.len());
    for t in tickers {
        match db.asset_by_ticker(t).await? {
            Some(a) if a.is_active => out.push(a),
            _ => {
                return Err(Error::Invalid(format!(
                    "tickers: unknown or inactive ticker '{t}'"
                )))
            }
        }
    }
    Ok(out)
}

/// `asset`'s history (and whether it came from the cache): from the cache when it holds its data version, else
/// from the store (and then kept): as an analysis, at most the last
/// MAX_HISTORY_ROWS rows, so no stored history is too long for the engine.
pub(super) async fn history(
    db: &dyn AssetStore,
    cache: &SignalCache,
    asset: &Asset,
) -> Result<(Arc<PriceSeries>, bool), Error> {
    let key = HistoryKey {
        asset_id: asset.id,
        data_version: asset.data_version,
    };
    if let Some(series) = cache.history(key) {
        return Ok((series, true));
    }
    let series = db
        .load_series(asset.id)
        .await?
        .unwrap_or_default()
        .last_rows(forecast_domain::defaults::MAX_HISTORY_ROWS);
    let series = Arc::new(series);
    cache.put_history(key, series.clone());
    Ok((series, false))
}

/// The histories of `assets`, in their order: from the cache when it holds
/// the asset's data version, else from the store (and then kept); stops
/// early when `cancel` is raised (the request was dropped or its deadline
/// passed). Each history is also handed to the signal workers through
/// `feed` as soon as it is loaded, so the engine runs while the store reads.
/// Returns how many came from the cache.
pub(super) async fn load_histories(
    db: &dyn AssetStore,
    cache: &SignalCache,
    assets: Vec<Asset>,
    cancel: &Cancel,
    feed: Sender<Work>,
) -> Result<(Vec<(Asset, Arc<PriceSeries>)>, usize), Error> {
    let mut out = Vec::with_capacity(assets.len());
    let mut hits = 0;
    for (index, a) in assets.into_iter().enumerate() {
        if cancel.is_raised() {
            return Err(timed_out());
        }
        let (series, cached) = history(db, cache, &a).await?;
        hits += usize::from(cached);
        let work = Work {
            index,
            asset: a.clone(),
            series: series.clone(),
        };
        // The workers stop only on a failure, which the caller reports.
        if feed.send(work).await.is_err() {
            break;
        }
        out.push((a, series));
        crate::progress::step_in(crate::progress::Phase::Loading);
    }
    Ok((out, hits))
}
