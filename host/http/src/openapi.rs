//! `GET /api/openapi.json`: the OpenAPI 3.1 description of every endpoint
//! that exists. A test walks the router's routes and fails when one is
//! missing here, so this document cannot drift from the code.

use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::AppState;
use forecast_domain::Category;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/openapi.json", get(|| async { Json(document()) }))
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
    })
}

fn ok(schema: &str) -> Value {
    json!({
        "description": "OK",
        "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{schema}") } } }
    })
}

fn num() -> Value {
    json!({ "type": "number" })
}

fn nullable_num() -> Value {
    json!({ "type": ["number", "null"] })
}

fn int() -> Value {
    json!({ "type": "integer" })
}

fn string() -> Value {
    json!({ "type": "string" })
}

fn array_of(item: Value) -> Value {
    json!({ "type": "array", "items": item })
}

fn object(required: &[&str], properties: Value) -> Value {
    json!({ "type": "object", "required": required, "properties": properties })
}

fn analysis_parameters() -> Value {
    json!([
        { "name": "ticker", "in": "path", "required": true, "schema": { "type": "string" }, "example": "^GSPC" },
        { "name": "return_period", "in": "query", "description": "Forecast horizon in calendar days.",
          "schema": { "type": "integer", "minimum": 7, "maximum": 365, "default": 90 } },
        { "name": "num_segments", "in": "query", "description": "Number of equal-width drawdown buckets.",
          "schema": { "type": "integer", "minimum": 10, "maximum": 50, "default": 20 } },
        { "name": "decay_factor", "in": "query", "description": "EMA decay factor (a secondary reference).",
          "schema": { "type": "number", "minimum": 0.80, "maximum": 0.99, "default": 0.95 } },
        { "name": "metric", "in": "query",
          "schema": { "type": "string", "enum": ["return", "sharpe", "sortino"], "default": "return" } },
        { "name": "start_date", "in": "query", "description": "Inclusive lower bound of the window.",
          "schema": { "type": "string", "format": "date" } },
        { "name": "end_date", "in": "query", "description": "Inclusive upper bound of the window.",
          "schema": { "type": "string", "format": "date" } }
    ])
}

fn schemas() -> Value {
    let categories: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    let current_state = object(
        &[
            "price",
            "drawdown",
            "segment",
            "expected_return",
            "prediction_error",
            "median_return",
            "median_error",
            "best_method",
            "best_error",
            "insufficient_data",
            "confirmed_count",
        ],
        json!({
            "price": num(), "drawdown": { "type": "number", "minimum": -1, "maximum": 0 },
            "segment": int(), "expected_return": num(), "prediction_error": num(),
            "median_return": num(), "median_error": num(),
            "best_method": { "type": "string", "enum": ["ema", "median"] },
            "best_error": num(), "insufficient_data": { "type": "boolean" }, "confirmed_count": int()
        }),
    );
    let signals = object(
        &[
            "expected_return",
            "prediction_error",
            "median_return",
            "median_error",
            "best_method",
            "best_error",
        ],
        json!({
            "expected_return": num(), "prediction_error": num(), "median_return": num(),
            "median_error": num(), "best_method": { "type": "string", "enum": ["ema", "median"] },
            "best_error": num()
        }),
    );
    let time_series = object(
        &[
            "dates",
            "prices",
            "drawdowns",
            "expected_returns",
            "prediction_errors",
            "prediction_error_cumavg",
            "actual_returns",
            "median_returns",
            "median_errors",
            "median_error_cumavg",
            "projected_prices",
        ],
        json!({
            "dates": array_of(json!({ "type": "string", "format": "date" })),
            "prices": array_of(num()), "drawdowns": array_of(num()),
            "expected_returns": array_of(num()), "prediction_errors": array_of(nullable_num()),
            "prediction_error_cumavg": array_of(nullable_num()), "actual_returns": array_of(nullable_num()),
            "median_returns": array_of(num()), "median_errors": array_of(nullable_num()),
            "median_error_cumavg": array_of(nullable_num()), "projected_prices": array_of(nullable_num())
        }),
    );
    let segment = object(
        &[
            "segment_idx",
            "lower_bound",
            "upper_bound",
            "count",
            "expected_return",
            "avg_return",
            "median_return",
            "static_median_return",
            "max_loss",
            "win_rate",
        ],
        json!({
            "segment_idx": int(), "lower_bound": num(), "upper_bound": num(), "count": int(),
            "expected_return": nullable_num(), "avg_return": nullable_num(),
            "median_return": nullable_num(), "static_median_return": nullable_num(),
            "max_loss": nullable_num(), "win_rate": nullable_num()
        }),
    );
    let paths = object(
        &[
            "paths",
            "p10",
            "p25",
            "p50",
            "p75",
            "p90",
            "num_paths_total",
        ],
        json!({
            "paths": array_of(array_of(num())), "p10": array_of(num()), "p25": array_of(num()),
            "p50": array_of(num()), "p75": array_of(num()), "p90": array_of(num()),
            "num_paths_total": int()
        }),
    );
    let metadata = object(
        &[
            "return_period",
            "num_segments",
            "decay_factor",
            "calculated_at",
            "from_cache",
            "data_points",
            "asset_id",
            "metric",
            "engine_version",
            "data_source",
            "periods_per_year",
        ],
        json!({
            "return_period": int(), "num_segments": int(), "decay_factor": num(),
            "calculated_at": { "type": "string", "format": "date-time" },
            "from_cache": { "type": "boolean" }, "data_points": int(), "asset_id": int(),
            "metric": { "type": "string", "enum": ["return", "sharpe", "sortino"] },
            "engine_version": string(),
            "data_source": { "$ref": "#/components/schemas/DataSource" },
            "periods_per_year": { "type": "integer", "enum": [252, 365] },
            "start_date": { "type": "string", "format": "date" },
            "end_date": { "type": "string", "format": "date" }
        }),
    );
    let mut all = json!({
        "Error": object(&["detail"], json!({ "detail": { "type": "string" } })),
        "Category": { "type": "string", "enum": categories },
        "DataSource": {
            "type": "string", "enum": ["real", "synthetic", "ingested"],
            "description": "Provenance of the price history; `synthetic` marks the generated demo universe."
        },
        "Asset": object(&["id", "ticker", "name", "category"], json!({
            "id": int(), "ticker": string(), "name": string(),
            "category": { "$ref": "#/components/schemas/Category" },
            "is_active": { "type": "boolean" }, "is_premium": { "type": "boolean" },
            "data_source": { "$ref": "#/components/schemas/DataSource" }
        })),
        "AssetListResponse": object(&["assets", "total"], json!({
            "assets": array_of(json!({ "$ref": "#/components/schemas/Asset" })),
            "total": { "type": "integer", "description": "Count of assets returned." }
        })),
        "AssetInfo": object(
            &["ticker", "name", "category", "long_name", "sector", "industry", "summary", "logo_url",
              "market_cap", "exchange", "currency", "website", "from_cache"],
            json!({
                "ticker": string(), "name": string(),
                "category": { "$ref": "#/components/schemas/Category" },
                "long_name": string(), "sector": string(), "industry": string(), "summary": string(),
                "logo_url": string(),
                "market_cap": { "type": "integer", "description": "0 when the provider does not know it." },
                "exchange": string(), "currency": string(), "website": string(),
                "from_cache": { "type": "boolean" },
                "data_source": { "$ref": "#/components/schemas/DataSource" }
            }),
        ),
        "CurrentState": current_state,
        "Signals": signals,
        "TimeSeries": time_series,
        "Segment": segment,
        "SegmentPaths": paths,
        "AnalysisMetadata": metadata,
        "AnalysisResponse": object(
            &["ticker", "name", "category", "current_state", "signals", "time_series", "segments",
              "return_distribution", "scatter_data", "segment_paths", "metadata"],
            json!({
                "ticker": string(), "name": string(),
                "category": { "$ref": "#/components/schemas/Category" },
                "current_state": { "$ref": "#/components/schemas/CurrentState" },
                "signals": { "$ref": "#/components/schemas/Signals" },
                "time_series": { "$ref": "#/components/schemas/TimeSeries" },
                "segments": array_of(json!({ "$ref": "#/components/schemas/Segment" })),
                "return_distribution": object(&["bins", "counts"], json!({
                    "bins": array_of(num()), "counts": array_of(int())
                })),
                "scatter_data": array_of(object(&["drawdown", "future_return", "segment"], json!({
                    "drawdown": num(), "future_return": num(), "segment": int()
                }))),
                "segment_paths": {
                    "type": "object",
                    "description": "Keyed by segment index as a string.",
                    "additionalProperties": { "$ref": "#/components/schemas/SegmentPaths" }
                },
                "metadata": { "$ref": "#/components/schemas/AnalysisMetadata" }
            }),
        ),
        "Grade": object(&["letter", "score"], json!({
            "letter": { "type": "string", "enum": ["A", "B", "C", "D", "F"] },
            "score": { "type": "number", "minimum": 0, "maximum": 100 }
        })),
        "VerdictResponse": object(
            &["ticker", "current_state", "signals", "active_segment", "grade", "typical_max_drawdown", "metadata"],
            json!({
                "ticker": string(),
                "current_state": { "$ref": "#/components/schemas/CurrentState" },
                "signals": { "$ref": "#/components/schemas/Signals" },
                "active_segment": { "$ref": "#/components/schemas/Segment" },
                "grade": { "$ref": "#/components/schemas/Grade" },
                "typical_max_drawdown": { "type": ["number", "null"], "description": "Median over calendar years of the worst within-year drawdown (a negative fraction)." },
                "metadata": object(&["return_period", "num_segments", "decay_factor", "metric", "calculated_at", "from_cache", "data_points", "asset_id", "engine_version", "scorer_version", "data_source", "periods_per_year"], json!({
                    "return_period": int(), "num_segments": int(), "decay_factor": num(),
                    "metric": { "type": "string", "enum": ["return", "sharpe", "sortino"] },
                    "calculated_at": { "type": "string", "format": "date-time" },
                    "from_cache": { "type": "boolean" }, "data_points": int(), "asset_id": int(),
                    "engine_version": string(), "scorer_version": string(),
                    "data_source": { "$ref": "#/components/schemas/DataSource" },
                    "periods_per_year": int()
                }))
            }),
        ),
        "RankedAsset": object(
            &["rank", "ticker", "name", "category", "expected_return", "prediction_error", "current_drawdown",
              "current_price", "win_rate", "median_return", "median_error", "score"],
            json!({
                "rank": int(), "ticker": string(), "name": string(),
                "category": { "$ref": "#/components/schemas/Category" },
                "expected_return": num(), "prediction_error": num(), "current_drawdown": num(),
                "current_price": num(), "win_rate": num(), "median_return": num(), "median_error": num(),
                "score": num(), "grade": string(),
                "data_source": { "$ref": "#/components/schemas/DataSource" }
            }),
        ),
        "RankingResponse": object(&["ranked_assets", "metadata"], json!({
            "ranked_assets": array_of(json!({ "$ref": "#/components/schemas/RankedAsset" })),
            "metadata": object(&["total_assets", "filtered_assets", "calculated_at"], json!({
                "total_assets": { "type": "integer", "description": "Assets graded for this return_period and metric." },
                "filtered_assets": { "type": "integer", "description": "After the category filter, before limit." },
                "calculated_at": { "type": "string", "format": "date-time" },
                "return_period": int(), "metric": string(), "sort_by": string(), "sort": string(),
                "engine_version": string(), "scorer_version": string()
            }))
        })),
        "HealthResponse": object(&["status", "service"], json!({
            "status": { "type": "string", "examples": ["ok"] },
            "service": { "type": "string", "examples": ["svc-api"] },
            "debug": { "type": "object", "description": "Present with debug=1: version, uptime, environment, database reachability and counts, active plugins and their limits." }
        }))
    });
    let more = backtest_schemas();
    for (name, schema) in more.as_object().expect("an object") {
        all[name] = schema.clone();
    }
    all
}

/// Schemas of the backtest endpoints (a second `json!` keeps each macro
/// under the recursion limit).
fn backtest_schemas() -> Value {
    json!({
        "BacktestRequest": {
            "type": "object",
            "additionalProperties": false,
            "description": "Every field is optional. Universe: `tickers` (unknown or inactive → 400 naming it), else `category`, else every active asset; assets enter once they have 300 rows of history. Unknown fields are refused (400) so a misspelt parameter never silently takes its default.",
            "properties": {
                "strategy": { "type": "string", "default": "topn", "description": "`topn`, `zscore`, `longshort` or any loaded strategy plugin (GET /api/strategies)." },
                "tickers": { "type": "array", "items": string(), "minItems": 1, "maxItems": 3000, "uniqueItems": true },
                "category": { "$ref": "#/components/schemas/Category" },
                "initial_capital": { "type": "number", "exclusiveMinimum": 0, "maximum": 1e12, "default": 100000 },
                "top_n": { "type": "integer", "minimum": 1, "maximum": 500, "default": 10, "description": "At most the universe's size; `longshort` needs 2·top_n assets." },
                "rebalance": { "type": "string", "enum": ["daily", "weekly", "monthly"], "default": "monthly", "description": "daily: every row; weekly/monthly: the first row of each ISO week/month." },
                "return_period": { "type": "integer", "minimum": 7, "maximum": 365, "default": 90 },
                "decay_factor": { "type": "number", "minimum": 0.80, "maximum": 0.99, "default": 0.95 },
                "num_segments": { "type": "integer", "minimum": 10, "maximum": 50, "default": 20 },
                "metric": { "type": "string", "enum": ["return", "sharpe", "sortino"], "default": "return" },
                "start_date": { "type": "string", "format": "date", "description": "Default: 10 years before the end date." },
                "end_date": { "type": "string", "format": "date", "description": "Default: the universe's latest date." },
                "include_costs": { "type": "boolean", "default": true, "description": "Per side on traded notional: equities/ETFs 6 bps, Crypto and CS2 15, Forex 2, others 5 (echoed in metadata.cost_bps)." },
                "zscore_lookback": { "type": "integer", "minimum": 20, "maximum": 1260, "default": 252, "description": "Rows of the drawdown z-score every strategy sees." },
                "zscore_entry": { "type": "number", "exclusiveMinimum": 0, "maximum": 10, "default": 2, "description": "zscore: enter at z <= -zscore_entry." },
                "zscore_exit": { "type": "number", "minimum": -10, "maximum": 10, "default": 0, "description": "zscore: exit at z >= -zscore_exit; must be below zscore_entry." }
            }
        },
        "BacktestResponse": object(&["equity_curve", "trades", "metrics", "benchmarks", "metadata"], json!({
            "equity_curve": array_of(object(&["date", "equity"], json!({ "date": { "type": "string", "format": "date" }, "equity": num() }))),
            "trades": array_of(object(&["date", "ticker", "side", "qty", "price"], json!({
                "date": { "type": "string", "format": "date", "description": "Fill date: the calendar row after the decision." },
                "ticker": string(),
                "side": { "type": "string", "enum": ["BUY", "SELL"] },
                "qty": { "type": "number", "description": "Fractional quantity, > 0." },
                "price": { "type": "number", "description": "The fill's reference close." }
            }))),
            "metrics": object(&["total_return", "cagr", "sharpe_ratio", "sortino_ratio", "max_drawdown", "final_equity", "years", "total_costs", "cost_drag_pct", "total_trades"], json!({
                "total_return": nullable_num(), "cagr": nullable_num(), "sharpe_ratio": nullable_num(),
                "sortino_ratio": nullable_num(), "max_drawdown": nullable_num(),
                "final_equity": num(), "years": num(), "total_costs": num(), "cost_drag_pct": num(),
                "total_trades": int()
            })),
            "benchmarks": {
                "type": "object",
                "description": "`equal_weight_buy_hold` and `equal_weight_rebalanced`: same schedule, no costs, same dates as the equity curve.",
                "additionalProperties": object(&["dates", "equity"], json!({
                    "dates": array_of(json!({ "type": "string", "format": "date" })),
                    "equity": array_of(num())
                }))
            },
            "metadata": object(&["assets_count", "data_points", "rebalance_dates", "calculated_at"], json!({
                "assets_count": { "type": "integer", "description": "Assets with 300 rows by the end and a price in the window." },
                "data_points": { "type": "integer", "description": "Price rows of those assets inside the window." },
                "rebalance_dates": { "type": "integer", "description": "Decisions taken." },
                "calculated_at": { "type": "string", "format": "date-time" },
                "strategy": string(), "strategy_version": string(), "engine_version": string(),
                "start_date": { "type": "string", "format": "date" }, "end_date": { "type": "string", "format": "date" },
                "periods_per_year": { "type": "integer", "enum": [252, 365] },
                "include_costs": { "type": "boolean" },
                "cost_bps": { "type": "object", "additionalProperties": num(), "description": "Cost per side in basis points, per category of the universe." },
                "signals_cached": { "type": "integer", "description": "Assets whose engine signals came from the cache." }
            }))
        })),
        "StrategyList": object(&["strategies"], json!({
            "strategies": array_of(object(&["name", "version", "description", "sha256"], json!({
                "name": string(), "version": string(), "description": string(), "sha256": string()
            })))
        }))
    })
}

fn rate_headers() -> Value {
    let int_header = |d: &str| json!({ "description": d, "schema": { "type": "integer" } });
    json!({
        "X-RateLimit-Limit": int_header("Units allowed in the binding window (the one with the least remaining; the violated one on 429)."),
        "X-RateLimit-Remaining": int_header("Units left in that window."),
        "X-RateLimit-Reset": int_header("Unix epoch seconds (UTC) when that window ends.")
    })
}

/// Adds Bearer security, the auth/quota error responses and the rate
/// headers to an operation of a metered route.
fn bearer(mut op: Value, cost: u32) -> Value {
    op["security"] = json!([{ "bearerKey": [] }]);
    op["x-quota-cost"] = json!(cost);
    let responses = op["responses"].as_object_mut().expect("responses");
    for (_, r) in responses.iter_mut() {
        r["headers"] = rate_headers();
    }
    responses.insert(
        "401".into(),
        error_response("Missing, malformed, unknown or revoked API key (not counted)"),
    );
    responses.insert(
        "402".into(),
        error_response("Valid key of a user not on the Premium tier (not counted)"),
    );
    let mut limited = error_response("Quota exhausted");
    let mut headers = rate_headers();
    headers["Retry-After"] =
        json!({ "description": "Seconds to wait.", "schema": { "type": "integer" } });
    limited["headers"] = headers;
    responses.insert("429".into(), limited);
    responses.insert(
        "503".into(),
        error_response("The quota store is unavailable: the request is refused"),
    );
    op
}

fn session(mut op: Value, state_changing: bool) -> Value {
    op["security"] = json!([{ "sessionCookie": [] }]);
    let responses = op["responses"].as_object_mut().expect("responses");
    responses.insert(
        "401".into(),
        error_response("No valid session, or a Bearer key was sent"),
    );
    if state_changing {
        responses.insert(
            "403".into(),
            error_response("Origin missing or not the configured web origin (CSRF)"),
        );
    }
    op
}

fn json_body(schema: Value) -> Value {
    json!({ "required": true, "content": { "application/json": { "schema": schema } } })
}

/// The OpenAPI 3.1 document (version 1.0.0).
pub fn document() -> Value {
    let key_record = object(
        &["id", "key_prefix", "name", "created_at"],
        json!({
            "id": { "type": "string", "format": "uuid" },
            "key_prefix": { "type": "string", "examples": ["svc_1a2b"] },
            "name": string(),
            "last_used_at": { "type": ["string", "null"], "format": "date-time" },
            "created_at": { "type": "string", "format": "date-time" }
        }),
    );
    let me = object(
        &["email", "tier"],
        json!({
            "email": string(),
            "tier": { "type": "string", "enum": ["free", "lite", "pro", "premium"] }
        }),
    );
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Forecast Engine API",
            "version": "1.0.0",
            "description": "Drawdown-segmented forecasts of listed assets. All return-like fields are fractions (0.05 = +5 %). Every error is JSON {detail}. API routes need `Authorization: Bearer svc_…` of a Premium user and are metered per user: 60 units a UTC minute and 1,000 a UTC day (a call costs `x-quota-cost` units); every metered response carries X-RateLimit-* headers. Key management uses the web session cookie from POST /auth/login. Output is informational only and is not financial advice. Demo assets whose data_source is `synthetic` carry generated prices, not market data."
        },
        "servers": [{ "url": "/" }],
        "paths": {
            "/api/health": { "get": {
                "summary": "Health probe",
                "operationId": "health",
                "parameters": [{ "name": "debug", "in": "query", "schema": { "type": "integer", "enum": [0, 1] },
                                  "description": "1 adds environment and database diagnostics." }],
                "responses": { "200": ok("HealthResponse"), "400": error_response("debug is not 0 or 1") }
            }},
            "/api/openapi.json": { "get": {
                "summary": "This document",
                "operationId": "openapi",
                "responses": { "200": { "description": "OpenAPI 3.1 document", "content": { "application/json": {} } } }
            }},
            "/api/assets": { "get": bearer(json!({
                "summary": "Active assets, optionally of one category",
                "operationId": "listAssets",
                "parameters": [{ "name": "category", "in": "query", "schema": { "$ref": "#/components/schemas/Category" } }],
                "responses": { "200": ok("AssetListResponse"), "400": error_response("Unknown category") }
            }), 1)},
            "/api/asset-info/{ticker}": { "get": bearer(json!({
                "summary": "Asset metadata, cached for 7 days",
                "operationId": "assetInfo",
                "parameters": [{ "name": "ticker", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": { "200": ok("AssetInfo"), "404": error_response("Unknown or inactive ticker") }
            }), 1)},
            "/api/analysis/{ticker}": { "get": bearer(json!({
                "summary": "Full drawdown-segmented analysis",
                "description": "Default segments and decay over the whole history for return_period 7, 30, 90, 180 or 365 are served from the analysis cache (metadata.from_cache); other parameters are computed live by the segmentation component.",
                "operationId": "analysis",
                "parameters": analysis_parameters(),
                "responses": {
                    "200": ok("AnalysisResponse"),
                    "400": error_response("A parameter is out of bounds; detail names it"),
                    "404": error_response("Unknown or inactive ticker"),
                    "422": error_response("Fewer than 300 price rows in the window"),
                    "500": error_response("The segmentation plugin failed; detail names plugin and version"),
                    "504": error_response("The segmentation plugin ran past its time limit")
                }
            }), 1)},
            "/api/analysis/{ticker}/verdict": { "get": bearer(json!({
                "summary": "Verdict-only projection: state, signals, active segment, grade",
                "description": "The graded defaults (20 segments, decay 0.95, no dates, return_period 7/30/90/180/365, any metric) come from the daily grading snapshot (metadata.from_cache) as long as it describes the asset's current data and the active engine and scorer; anything else is computed live.",
                "operationId": "verdict",
                "parameters": analysis_parameters(),
                "responses": {
                    "200": ok("VerdictResponse"),
                    "400": error_response("A parameter is out of bounds; detail names it"),
                    "404": error_response("Unknown or inactive ticker"),
                    "422": error_response("Fewer than 300 price rows in the window"),
                    "500": error_response("A plugin failed; detail names plugin and version"),
                    "504": error_response("A plugin ran past its time limit")
                }
            }), 1)},
            "/api/ranking": { "get": bearer(json!({
                "summary": "Assets ranked from the daily grading snapshot",
                "operationId": "ranking",
                "parameters": [
                    { "name": "category", "in": "query", "schema": { "$ref": "#/components/schemas/Category" } },
                    { "name": "categories", "in": "query", "description": "Comma-separated categories; takes priority over category.", "schema": { "type": "string" } },
                    { "name": "sort_by", "in": "query", "schema": { "type": "string", "enum": ["median_return", "expected_return", "win_rate", "prediction_error", "current_drawdown", "current_price"], "default": "median_return" } },
                    { "name": "sort", "in": "query", "schema": { "type": "string", "enum": ["asc", "desc"], "default": "desc" } },
                    { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": 500, "default": 50 } },
                    { "name": "return_period", "in": "query", "schema": { "type": "integer", "enum": [7, 30, 90, 180, 365], "default": 90 } },
                    { "name": "metric", "in": "query", "schema": { "type": "string", "enum": ["return", "sharpe", "sortino"], "default": "return" } }
                ],
                "responses": {
                    "200": ok("RankingResponse"),
                    "400": error_response("A parameter is invalid; detail names it"),
                    "503": error_response("No grading run has completed yet")
                }
            }), 1)},
            "/api/backtest": { "post": bearer(json!({
                "summary": "Portfolio backtest of a strategy plugin over a universe",
                "description": "Signals at a rebalance date come from data up to that date only (the engine's walk-forward series); decisions fill at the next calendar row's close. The strategy decides target weights; the host does all accounting. The whole request is bounded by FORECAST_BACKTEST_TIMEOUT_MS (default 30 s).",
                "operationId": "backtest",
                "requestBody": json_body(json!({ "$ref": "#/components/schemas/BacktestRequest" })),
                "responses": {
                    "200": ok("BacktestResponse"),
                    "400": error_response("A field is invalid (unknown strategy or ticker, bad dates, non-positive capital, top_n beyond the universe, unknown rebalance, out-of-bounds engine or z-score parameters); detail names it"),
                    "500": error_response("The strategy plugin failed (trap, memory cap, contract violation); detail names the plugin and version"),
                    "504": error_response("The backtest passed its time limit; reduce its scope")
                }
            }), 5)},
            "/api/strategies": { "get": bearer(json!({
                "summary": "The strategies POST /api/backtest can name (built-in and FORECAST_PLUGIN_DIR plugins)",
                "operationId": "strategies",
                "responses": { "200": ok("StrategyList") }
            }), 1)},
            "/auth/login": { "post": {
                "summary": "Sign in: sets the HttpOnly session cookie `fe_session`",
                "description": "A wrong e-mail and a wrong password give the same 401. At most 10 attempts per e-mail per 5 minutes. A request carrying a foreign Origin is refused (403).",
                "operationId": "login",
                "requestBody": json_body(object(&["email", "password"], json!({ "email": string(), "password": string() }))),
                "responses": {
                    "200": { "description": "Signed in", "content": { "application/json": { "schema": me.clone() } },
                             "headers": { "Set-Cookie": { "description": "fe_session=…; HttpOnly; SameSite=Lax; Path=/", "schema": { "type": "string" } } } },
                    "400": error_response("Malformed body"),
                    "401": error_response("Invalid email or password"),
                    "403": error_response("Foreign Origin"),
                    "429": error_response("Too many attempts; Retry-After says when to retry")
                }
            }},
            "/auth/logout": { "post": session(json!({
                "summary": "Sign out: ends the session and clears the cookie",
                "operationId": "logout",
                "responses": { "200": { "description": "Signed out", "content": { "application/json": { "schema": object(&["ok"], json!({ "ok": { "type": "boolean" } })) } } } }
            }), true)},
            "/auth/me": { "get": session(json!({
                "summary": "The signed-in user",
                "operationId": "me",
                "responses": { "200": { "description": "OK", "content": { "application/json": { "schema": me } } } }
            }), false)},
            "/api/keys": {
                "get": session(json!({
                    "summary": "The signed-in user's active API keys (never the keys themselves)",
                    "operationId": "listKeys",
                    "responses": { "200": { "description": "OK", "content": { "application/json": { "schema": array_of(key_record) } } } }
                }), false),
                "post": session(json!({
                    "summary": "Create an API key; the full key is returned once",
                    "operationId": "createKey",
                    "requestBody": json_body(object(&["name"], json!({ "name": { "type": "string", "minLength": 1, "maxLength": 100 } }))),
                    "responses": {
                        "200": { "description": "Created", "content": { "application/json": { "schema": object(&["key", "key_prefix", "name"], json!({
                            "key": { "type": "string", "description": "svc_ + 64 hex digits; shown once, stored only as SHA-256" },
                            "key_prefix": string(), "name": string(),
                            "id": { "type": "string", "format": "uuid" },
                            "created_at": { "type": "string", "format": "date-time" }
                        })) } } },
                        "400": error_response("Missing or invalid name"),
                        "402": error_response("The user is not on the Premium tier"),
                        "409": error_response("The user already has 5 active keys")
                    }
                }), true),
                "delete": session(json!({
                    "summary": "Revoke an API key (soft); effective on the next request",
                    "operationId": "revokeKey",
                    "requestBody": json_body(object(&["id"], json!({ "id": { "type": "string", "format": "uuid" } }))),
                    "responses": {
                        "200": { "description": "Revoked", "content": { "application/json": { "schema": object(&["ok"], json!({ "ok": { "type": "boolean" } })) } } },
                        "400": error_response("id is not a UUID"),
                        "404": error_response("No active key with that id belongs to the user")
                    }
                }), true)
            }
        },
        "components": {
            "schemas": schemas(),
            "securitySchemes": {
                "bearerKey": { "type": "http", "scheme": "bearer", "description": "svc_ + 64 hex digits, of a Premium user" },
                "sessionCookie": { "type": "apiKey", "in": "cookie", "name": "fe_session" },
                "adminToken": { "type": "http", "scheme": "bearer", "description": "FORECAST_ADMIN_TOKEN of the server (never a user's key); the admin API answers 403 when it is unset" }
            }
        }
    });
    doc["info"]["x-quota"] = json!({ "per_minute": 60, "per_day": 1000 });
    let paths = doc["paths"].as_object_mut().expect("paths");
    for (path, item) in admin_paths()
        .as_object()
        .expect("an object")
        .iter()
        .chain(matcher_paths().as_object().expect("an object"))
    {
        paths.insert(path.clone(), item.clone());
    }
    doc
}

/// `POST /api/match-tickers` (a second `json!` keeps each macro under the
/// recursion limit).
fn matcher_paths() -> Value {
    json!({
            "/api/match-tickers": { "post": session(json!({
                "summary": "Free text (a ticker, a name, a misspelling, a brand or product) to at most 3 active assets",
                "description": "The matcher component searches the active catalog (tickers with and without exchange suffixes, names, fuzzy spelling, websites, products in summaries); when a language model is configured (FORECAST_LLM_URL) it may ask it to choose among its top candidates, and keeps its own answer when the model is unavailable. Gibberish gives an empty list. At most FORECAST_MATCH_PER_MINUTE (30) requests per user per minute.",
                "operationId": "matchTickers",
                "requestBody": json_body(object(&["text"], json!({ "text": { "type": "string", "minLength": 1, "maxLength": 500 } }))),
                "responses": {
                    "200": { "description": "OK", "content": { "application/json": { "schema": object(&["matches"], json!({
                        "matches": { "type": "array", "maxItems": 3, "items": object(&["ticker", "name", "category", "confidence"], json!({
                            "ticker": string(), "name": string(),
                            "category": { "$ref": "#/components/schemas/Category" },
                            "confidence": { "type": "number", "minimum": 0, "maximum": 1, "description": "Near 1 for an exact ticker, low for a weak fuzzy guess; sorted descending." }
                        })) }
                    })) } } },
                    "400": error_response("text missing, blank or longer than 500 characters"),
                    "429": error_response("Too many matcher requests; Retry-After says when to retry"),
                    "500": error_response("The matcher plugin failed (the detail names it)")
                }
            }), true)}
    })
}

/// An admin operation: the admin token's security and its errors.
fn admin(mut op: Value) -> Value {
    op["security"] = json!([{ "adminToken": [] }]);
    op["tags"] = json!(["admin"]);
    let responses = op["responses"].as_object_mut().expect("responses");
    responses.insert(
        "401".into(),
        error_response("Missing or invalid admin token"),
    );
    responses.insert(
        "403".into(),
        error_response("The admin API is disabled (FORECAST_ADMIN_TOKEN unset)"),
    );
    op
}

/// The plugin registry's admin API (a second `json!` keeps each macro under
/// the recursion limit).
fn admin_paths() -> Value {
    let version = object(
        &["kind", "name", "version"],
        json!({
            "kind": { "type": "string", "enum": ["segmentation", "scorer", "strategy"] },
            "name": string(), "version": string()
        }),
    );
    let active = object(&["active"], json!({ "active": version.clone() }));
    let ok_with = |schema: Value| json!({ "description": "OK", "content": { "application/json": { "schema": schema } } });
    json!({
        "/api/admin/plugins": {
            "get": admin(json!({
                "summary": "Every registered plugin version and whether it is active or shadowed",
                "operationId": "adminListPlugins",
                "responses": { "200": ok_with(object(&["plugins"], json!({ "plugins": array_of(object(
                    &["kind", "name", "version", "sha256", "size", "active", "shadow", "builtin", "added_by", "added_at"],
                    json!({ "kind": string(), "name": string(), "version": string(), "sha256": string(),
                            "size": int(), "active": { "type": "boolean" }, "shadow": { "type": "boolean" },
                            "builtin": { "type": "boolean" }, "added_by": string(),
                            "added_at": { "type": "string", "format": "date-time" } }))) }))) }
            })),
            "post": admin(json!({
                "summary": "Register a component (type-checked against its kind's world; the version it reports must match)",
                "operationId": "adminAddPlugin",
                "parameters": [
                    { "name": "kind", "in": "query", "required": true, "schema": { "type": "string", "enum": ["segmentation", "scorer", "strategy"] } },
                    { "name": "name", "in": "query", "required": true, "schema": { "type": "string" } },
                    { "name": "version", "in": "query", "required": true, "schema": { "type": "string" } }
                ],
                "requestBody": { "required": true, "content": { "application/wasm": { "schema": { "type": "string", "contentMediaType": "application/wasm" } } } },
                "responses": {
                    "200": ok_with(object(&["kind", "name", "version", "sha256", "size"], json!({
                        "kind": string(), "name": string(), "version": string(), "sha256": string(), "size": int() }))),
                    "400": error_response("Bad kind, name, version or empty body"),
                    "409": error_response("The version is registered with other bytes"),
                    "413": error_response("Component over 64 MiB"),
                    "422": error_response("Not a component of that kind, or it reports another version")
                }
            }))
        },
        "/api/admin/plugins/activate": { "post": admin(json!({
            "summary": "Activate a registered version after its self-tests pass; every replica follows within FORECAST_PLUGIN_POLL_MS",
            "operationId": "adminActivatePlugin",
            "requestBody": json_body(version.clone()),
            "responses": {
                "200": ok_with(active.clone()),
                "404": error_response("Not registered"),
                "422": error_response("The candidate failed its checks; nothing changed")
            }
        }))},
        "/api/admin/plugins/rollback": { "post": admin(json!({
            "summary": "Return a slot to the version active before the current one",
            "operationId": "adminRollbackPlugin",
            "requestBody": json_body(object(&["kind", "name"], json!({ "kind": string(), "name": string() }))),
            "responses": {
                "200": ok_with(active),
                "400": error_response("name is not the active version's"),
                "409": error_response("Nothing to roll back to")
            }
        }))},
        "/api/admin/shadow": { "post": admin(json!({
            "summary": "Run a candidate beside the active version on a sampled share of live requests (its answers are compared, never returned)",
            "operationId": "adminStartShadow",
            "requestBody": json_body(object(&["kind", "name", "version", "sample"], json!({
                "kind": { "type": "string", "enum": ["segmentation"] }, "name": string(), "version": string(),
                "sample": { "type": "number", "exclusiveMinimum": 0, "maximum": 1 } }))),
            "responses": {
                "200": ok_with(object(&["shadow"], json!({ "shadow": object(&[], json!({})) }))),
                "400": error_response("Unsupported kind or sample outside (0, 1]"),
                "404": error_response("Not registered"),
                "409": error_response("The candidate is the active version"),
                "422": error_response("The candidate failed its checks")
            }
        }))},
        "/api/admin/shadow/{kind}": {
            "get": admin(json!({
                "summary": "Agreement report of a kind's shadow run: identical share, largest difference per field, latency of both, errors",
                "operationId": "adminShadowReport",
                "parameters": [{ "name": "kind", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": {
                    "200": ok_with(object(&["kind", "candidate", "sample", "samples", "identical", "max_differences", "errors"], json!({
                        "kind": string(), "candidate": string(), "sample": num(), "samples": int(), "identical": int(),
                        "identical_share": nullable_num(),
                        "max_differences": { "type": "object", "additionalProperties": num(), "description": "Field path (array positions as []) → largest absolute difference; 1.7976931348623157e308 marks a structural change" },
                        "active_latency_ms": { "type": ["object", "null"] }, "candidate_latency_ms": { "type": ["object", "null"] },
                        "errors": int(), "error_examples": array_of(string()), "compared_with": array_of(string())
                    }))),
                    "404": error_response("No shadow run for the kind")
                }
            })),
            "delete": admin(json!({
                "summary": "Stop a kind's shadow run",
                "operationId": "adminStopShadow",
                "parameters": [{ "name": "kind", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": { "200": ok_with(object(&["ok"], json!({ "ok": { "type": "boolean" } }))), "404": error_response("No shadow run for the kind") }
            }))
        }
    })
}
