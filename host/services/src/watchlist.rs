//! A signed-in user's watchlist (issue 13): the assets chosen at
//! onboarding, shown on the web app's home page. Any tier may keep one;
//! every ticker must be an active asset.

use std::sync::Arc;

use forecast_api::accounts::{SetWatchlistRequest, Watchlist, WatchlistItem};
use forecast_domain::{Asset, SharedClock, User};
use forecast_store::{AccountStore, AssetStore};

use crate::error::Error;

/// Longest piece of a refused ticker quoted back in a message.
const QUOTED_CHARS: usize = 32;

fn item(a: Asset) -> WatchlistItem {
    WatchlistItem {
        ticker: a.ticker,
        name: a.name,
        category: a.category,
        data_source: a.data_source,
        currency: a.currency,
    }
}

/// Watchlists over the account and asset stores.
#[derive(Clone)]
pub struct WatchlistService {
    accounts: Arc<dyn AccountStore>,
    assets: Arc<dyn AssetStore>,
    /// When a watchlist was set.
    clock: SharedClock,
}

impl WatchlistService {
    /// A service over these stores, dating changes by `clock`.
    pub fn new(
        accounts: Arc<dyn AccountStore>,
        assets: Arc<dyn AssetStore>,
        clock: SharedClock,
    ) -> Self {
        WatchlistService {
            accounts,
            assets,
            clock,
        }
    }

    /// The user's watchlist, in the order chosen.
    pub async fn get(&self, user: &User) -> Result<Watchlist, Error> {
        let assets = self.accounts.watchlist(&user.id).await?;
        Ok(Watchlist {
            tickers: assets.into_iter().map(item).collect(),
        })
    }

    /// Replaces the user's watchlist; refused whole (nothing changes) when a
    /// ticker is not an active asset.
    pub async fn set(
        &self,
        user: &User,
        request: &SetWatchlistRequest,
    ) -> Result<Watchlist, Error> {
        let tickers = request.validate()?;
        let mut ids = Vec::with_capacity(tickers.len());
        for ticker in tickers {
            match self.assets.asset_by_ticker(ticker).await? {
                Some(a) if a.is_active => ids.push(a.id),
                _ => {
                    let quoted: String = ticker.chars().take(QUOTED_CHARS).collect();
                    let more = if quoted.len() < ticker.len() {
                        "…"
                    } else {
                        ""
                    };
                    return Err(Error::Invalid(format!(
                        "tickers: '{quoted}{more}' is not an active asset"
                    )));
                }
            }
        }
        let now = self.clock.timestamp();
        self.accounts.set_watchlist(&user.id, &ids, now).await?;
        self.get(user).await
    }
}
