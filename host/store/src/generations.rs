//! Generation counters (migration 0008): one integer per kind of state a
//! replica keeps in memory — `auth` (API keys and their owners), `grading`
//! (the active run and its grades), `assets` (asset rows and their last
//! price date), `alerts` (alerts and the watchlists they follow; migration
//! 0012). Triggers in the database bump them in every writing transaction,
//! whoever writes, so an unchanged counter proves that a copy read after
//! it was read is still current.

use async_trait::async_trait;

use crate::StoreResult;

/// The counters at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Generations {
    /// API keys and users.
    pub auth: i64,
    /// The active grading run and its grades.
    pub grading: i64,
    /// Assets and their price rows.
    pub assets: i64,
    /// Alerts and the watchlists they follow (migration 0012).
    pub alerts: i64,
    /// Uploaded strategies and their versions (migration 0015).
    pub strategies: i64,
}

/// Reading the counters.
#[async_trait]
pub trait GenerationStore: Send + Sync {
    /// The current counters: one indexed read of three rows.
    async fn generations(&self) -> StoreResult<Generations>;
}

macro_rules! impl_generation_store {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl $crate::GenerationStore for $store {
            async fn generations(&self) -> $crate::StoreResult<$crate::Generations> {
                use $crate::rows::Cols;
                let rows = sqlx::query($crate::sql::GENERATIONS)
                    .fetch_all(&self.pool)
                    .await?;
                let mut g = $crate::Generations::default();
                for r in &rows {
                    let value = r.int("value")?;
                    match r.text("name")?.as_str() {
                        "auth" => g.auth = value,
                        "grading" => g.grading = value,
                        "assets" => g.assets = value,
                        "alerts" => g.alerts = value,
                        "strategies" => g.strategies = value,
                        _ => {}
                    }
                }
                Ok(g)
            }
        }
    };
}
pub(crate) use impl_generation_store;
