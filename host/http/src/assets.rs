//! `GET /api/assets` and `GET /api/asset-info/{ticker}`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::{Extension, Json};
use forecast_api::assets::{parse_category, AssetInfo, AssetListQuery, AssetListResponse};
use forecast_api::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::ApiError;
use super::extract::{Path, Query};
use super::guard::Fresh;
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
    fresh: Option<Extension<Fresh>>,
    headers: HeaderMap,
    Query(q): Query<AssetListQuery>,
) -> Result<Response, ApiError> {
    let category = q.category.as_deref().map(parse_category).transpose()?;
    let generations = fresh.map(|Extension(Fresh(g))| g);
    // The body serialised once per change of the catalog, and compressed
    // once for clients that accept brotli.
    let body = state.assets.list_body(category, generations).await?;
    Ok(crate::kept_json(&headers, &body))
}

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
    fresh: Option<Extension<Fresh>>,
    Path(ticker): Path<String>,
) -> Result<Json<AssetInfo>, ApiError> {
    let generations = fresh.map(|Extension(Fresh(g))| g);
    let found = state.assets.metadata(&ticker, generations).await?;
    let (asset, found) = (&found.0, &found.1);
    let m = found.metadata.clone();
    Ok(Json(AssetInfo {
        ticker: asset.ticker.clone(),
        name: asset.name.clone(),
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
