//! `GET /api/assets` and `GET /api/asset-info/{ticker}`.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::extract::{Path, Query};
use crate::AppState;
use forecast_domain::{Category, DataSource};
use forecast_services::metadata::{self, LookupError};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/assets", get(list))
        .route("/api/asset-info/{ticker}", get(info))
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    category: Option<String>,
}

#[derive(Debug, Serialize)]
struct AssetItem {
    id: i64,
    ticker: String,
    name: String,
    category: Category,
    is_active: bool,
    is_premium: bool,
    data_source: DataSource,
}

#[derive(Debug, Serialize)]
struct AssetList {
    assets: Vec<AssetItem>,
    total: usize,
}

/// Parses a category name, 400 naming the valid ones otherwise.
pub(crate) fn parse_category(raw: &str) -> Result<Category, ApiError> {
    raw.parse().map_err(|_| {
        let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
        ApiError::BadRequest(format!(
            "unknown category '{raw}'; expected one of: {}",
            names.join(", ")
        ))
    })
}

async fn list(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<Json<AssetList>, ApiError> {
    let category = q.category.as_deref().map(parse_category).transpose()?;
    let assets: Vec<AssetItem> = state
        .db
        .list_active_assets(category)
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
        })
        .collect();
    Ok(Json(AssetList {
        total: assets.len(),
        assets,
    }))
}

#[derive(Debug, Serialize)]
struct AssetInfo {
    ticker: String,
    name: String,
    category: Category,
    long_name: String,
    sector: String,
    industry: String,
    summary: String,
    logo_url: String,
    market_cap: i64,
    exchange: String,
    currency: String,
    website: String,
    from_cache: bool,
    data_source: DataSource,
}

async fn info(
    State(state): State<AppState>,
    Path(ticker): Path<String>,
) -> Result<Json<AssetInfo>, ApiError> {
    let asset = forecast_services::analysis::active_asset(state.db.as_ref(), &ticker).await?;
    let found = metadata::lookup(
        state.db.as_ref(),
        state.metadata.as_ref(),
        &asset,
        state.config.metadata_ttl,
        chrono::Utc::now().timestamp(),
    )
    .await
    .map_err(|e| match e {
        LookupError::Store(s) => ApiError::Store(s),
        LookupError::Provider(p) => ApiError::Internal(p.to_string()),
    })?;
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
    }))
}
