//! `GET /api/usage`: what a user has spent of their quota this minute and
//! today, in all and by route.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One quota window: its limit, what is used, what is left, when it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UsageWindow {
    /// Units allowed in the window.
    pub limit: u32,
    /// Units spent in it.
    pub used: u32,
    /// Units left.
    pub remaining: u32,
    /// Unix seconds when the window ends (as `X-RateLimit-Reset`).
    pub reset: i64,
}

/// What one route cost in the current windows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RouteUsage {
    /// Method and route as the service names it (`GET /api/ranking`,
    /// `POST /web/api/backtest`: the web app's calls are its `/web` twins).
    pub route: String,
    /// Units it cost this minute.
    pub minute: u32,
    /// Units it cost today (UTC).
    pub day: u32,
}

/// `GET /api/usage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UsageResponse {
    /// The current minute's window.
    pub minute: UsageWindow,
    /// Today's window (UTC).
    pub day: UsageWindow,
    /// The routes that cost something today, most expensive first (then
    /// by route). Free routes never appear; units given back (a refused or
    /// stopped run) are not counted.
    pub routes: Vec<RouteUsage>,
}
