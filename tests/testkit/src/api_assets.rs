//! The catalog's other route: `GET /api/asset-info/{ticker}`.

use forecast_api::assets::AssetInfo;

use crate::api::path_segment;
use crate::{Api, Refusal};

impl Api {
    /// `GET /api/asset-info/{ticker}`.
    pub async fn asset_info(&self, ticker: &str) -> Result<AssetInfo, Refusal> {
        self.get(&format!("/asset-info/{}", path_segment(ticker)))
            .await
    }
}
