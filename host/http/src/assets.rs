//! `GET /api/assets` and `GET /api/asset-info/{ticker}`.

use axum::extract::State;
use axum::Json;
use forecast_api::assets::{
    parse_category, AssetInfo, AssetItem, AssetListQuery, AssetListResponse,
};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::{Path, Query};
use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(info))
}

/// Active assets.
#[utoipa::path(
    get,
    path = "/api/assets",
    operation_id = "listAssets",
    summary = "Active assets, optionally of one category",
    params(AssetListQuery),
    responses(
        (status = 200, description = "OK", body = AssetListResponse),
        (status = 400, description = "Unknown category", body = ErrorBody),
    )
)]
async fn list(
    State(state): State<AppState>,
    Query(q): Query<AssetListQuery>,
) -> Result<Json<AssetListResponse>, ApiError> {
    let category = q.category.as_deref().map(parse_category).transpose()?;
    let assets: Vec<AssetItem> = state
        .assets
        .list(category)
        .await?
        .into_iter()
        .map(|a| AssetItem {
            id: a.id,
            ticker: a.ticker,
            name: a.name,
            category: a.category,
            is_active: a.is_active,
            is_premium: a.is_premium,
            data_source: a.data_source,
            last_price_date: a.last_price_date,
        })
        .collect();
    Ok(Json(AssetListResponse {
        total: assets.len(),
        assets,
    }))
}

/// Asset metadata.
#[utoipa::path(
    get,
    path = "/api/asset-info/{ticker}",
    operation_id = "assetInfo",
    summary = "Asset metadata, cached for 7 days",
    params(("ticker" = String, Path, description = "An active ticker, URL-encoded", example = "AAPL")),
    responses(
        (status = 200, description = "OK", body = AssetInfo),
        (status = 404, description = "Unknown or inactive ticker", body = ErrorBody),
    )
)]
async fn info(
    State(state): State<AppState>,
    Path(ticker): Path<String>,
) -> Result<Json<AssetInfo>, ApiError> {
    let (asset, found) = state.assets.metadata(&ticker).await?;
    let m = found.metadata;
    Ok(Json(AssetInfo {
        ticker: asset.ticker,
        name: asset.name,
        category: asset.category,
        long_name: m.long_name,
        sector: m.sector,
        industry: m.industry,
        summary: m.summary,
        logo_url: m.logo_url,
        market_cap: m.market_cap,
        exchange: m.exchange,
        currency: m.currency,
        website: m.website,
        from_cache: found.from_cache,
        data_source: asset.data_source,
        last_price_date: asset.last_price_date,
    }))
}
