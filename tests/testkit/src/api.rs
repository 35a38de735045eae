//! The typed client: the service's routes as methods answering the
//! `forecast-api` types, so a test reads `verdict.grade.letter`, not
//! `body["grade"]["letter"]`, and a change of the wire contract breaks the
//! tests at compile time. A refusal is a [`Refusal`] with the status and
//! the `detail` every error carries.

use std::fmt;

use axum::http::{HeaderMap, Method};
use forecast_api::analysis::{AnalysisResponse, VerdictResponse};
use forecast_api::assets::AssetListResponse;
use forecast_api::backtest::{BacktestRequest, BacktestResponse, StrategyList};
use forecast_api::matcher::MatchResponse;
use forecast_api::ranking::RankingResponse;
use forecast_api::track_record::{TrackRecordResponse, UniverseTrackRecordResponse};
use forecast_api::usage::UsageResponse;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::client::{Client, RequestBuilder, Response};

/// How requests are authenticated.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `Authorization: Bearer <key>` (the `/api` routes).
    Bearer(String),
    /// `Cookie: <cookie>` (the web app's `/web/api` twins).
    Cookie(String),
    /// Nothing.
    Anonymous,
}

/// A non-2xx answer: its status, the `detail` of its JSON body (`None`
/// when it has none), the body and the headers.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub status: u16,
    pub detail: Option<String>,
    pub body: String,
    pub headers: HeaderMap,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.body)
    }
}

impl Refusal {
    /// Panics unless the status is `status` and the body is `{detail}`
    /// holding every needle: a refusal must say what was wrong.
    pub fn assert(&self, status: u16, needles: &[&str]) {
        assert_eq!(self.status, status, "status of: {self}");
        let detail = self
            .detail
            .as_deref()
            .unwrap_or_else(|| panic!("no detail string in {self}"));
        for needle in needles {
            assert!(
                detail.contains(needle),
                "detail {detail:?} lacks {needle:?}"
            );
        }
    }
}

/// The typed client of one server (`base`, e.g. `http://127.0.0.1:8080`)
/// for one identity.
#[derive(Clone)]
pub struct Api {
    client: Client,
    base: String,
    auth: Auth,
    /// `/api` or `/web/api`.
    prefix: &'static str,
}

/// Signs `email` in (`POST /auth/login`): the session cookie
/// (`name=value`), or the refusal.
pub async fn login(
    client: &Client,
    base: &str,
    email: &str,
    password: &str,
) -> Result<String, Refusal> {
    let response = client
        .post(format!("{base}/auth/login"))
        .json(&serde_json::json!({ "email": email, "password": password }))
        .send()
        .await
        .expect("the server answers");
    let cookie = response
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::to_string);
    Api::typed::<serde_json::Value>(response).await?;
    Ok(cookie.expect("a session cookie with the 200"))
}

/// `segment` percent-encoded for a URL path (`^GSPC` → `%5EGSPC`).
pub fn path_segment(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `?query` when `query` is not empty.
pub(crate) fn with_query(path: String, query: &str) -> String {
    if query.is_empty() {
        path
    } else {
        format!("{path}?{}", query.trim_start_matches('?'))
    }
}

/// The units left that an answer's (or a refusal's) rate headers announce.
pub fn units_left(headers: &HeaderMap) -> u64 {
    headers
        .get("x-ratelimit-remaining")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("x-ratelimit-remaining")
}

impl Api {
    /// The same client on the routes under `prefix` (`/api`, `/web/api`).
    pub fn at(mut self, prefix: &'static str) -> Api {
        self.prefix = prefix;
        self
    }

    /// The `/api` routes with `auth` (the `/web/api` twins for a cookie).
    pub fn new(client: Client, base: impl Into<String>, auth: Auth) -> Api {
        let prefix = match auth {
            Auth::Cookie(_) => "/web/api",
            _ => "/api",
        };
        Api {
            client,
            base: base.into(),
            auth,
            prefix,
        }
    }

    /// `method path` (after the prefix) with this client's authentication,
    /// to add a body to and send.
    pub(crate) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let url = format!("{}{}{path}", self.base, self.prefix);
        let request = self.client.request(method, url);
        match &self.auth {
            Auth::Bearer(key) => request.bearer_auth(key),
            // A browser's same-origin request (the session guard checks
            // the Origin of state changes).
            Auth::Cookie(cookie) => request
                .header("cookie", cookie.as_str())
                .header("origin", self.base.as_str()),
            Auth::Anonymous => request,
        }
    }

    /// `method path` (after the prefix, e.g. `/ranking?limit=5`) with an
    /// optional JSON body: the response, whatever its status.
    pub async fn send<B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Response {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(body);
        }
        request.send().await.expect("the server answers")
    }

    /// The 2xx answer as `T`, else the refusal.
    pub async fn typed<T: DeserializeOwned>(response: Response) -> Result<T, Refusal> {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("a UTF-8 body");
        if !(200..300).contains(&status) {
            let detail = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("detail")?.as_str().map(str::to_string));
            return Err(Refusal {
                status,
                detail,
                body: text,
                headers,
            });
        }
        Ok(serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!("a {status} answer that is not the documented type: {e}: {text}")
        }))
    }

    /// `GET path` as `T`.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, Refusal> {
        Self::typed(self.send::<()>(Method::GET, path, None).await).await
    }

    /// `POST path` with a JSON body, as `T`.
    pub async fn post<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, Refusal> {
        Self::typed(self.send(Method::POST, path, Some(body)).await).await
    }

    /// `POST path`, which must be answered: the answer and the units left
    /// after it, as its rate headers announce.
    pub async fn post_metered<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> (T, u64) {
        let response = self.send(Method::POST, path, Some(body)).await;
        let units = units_left(response.headers());
        let answer = Self::typed(response).await;
        (
            answer.unwrap_or_else(|r| panic!("POST {path} → {r}")),
            units,
        )
    }

    /// `POST path`, which must be refused: the refusal.
    pub async fn post_refused<B: Serialize + ?Sized>(&self, path: &str, body: &B) -> Refusal {
        match self.post::<B, serde_json::Value>(path, body).await {
            Ok(answer) => panic!("POST {path} was answered, not refused: {answer}"),
            Err(r) => r,
        }
    }

    /// `GET /api/analysis/{ticker}/verdict?query`.
    pub async fn verdict(&self, ticker: &str, query: &str) -> Result<VerdictResponse, Refusal> {
        let path = format!("/analysis/{}/verdict", path_segment(ticker));
        self.get(&with_query(path, query)).await
    }

    /// `GET /api/analysis/{ticker}?query`.
    pub async fn analysis(&self, ticker: &str, query: &str) -> Result<AnalysisResponse, Refusal> {
        let path = format!("/analysis/{}", path_segment(ticker));
        self.get(&with_query(path, query)).await
    }

    /// `GET /api/ranking?query`.
    pub async fn ranking(&self, query: &str) -> Result<RankingResponse, Refusal> {
        self.get(&with_query("/ranking".into(), query)).await
    }

    /// `GET /api/assets?query`.
    pub async fn assets(&self, query: &str) -> Result<AssetListResponse, Refusal> {
        self.get(&with_query("/assets".into(), query)).await
    }

    /// `GET /api/strategies`.
    pub async fn strategies(&self) -> Result<StrategyList, Refusal> {
        self.get("/strategies").await
    }

    /// `POST /api/backtest`.
    pub async fn backtest(&self, request: &BacktestRequest) -> Result<BacktestResponse, Refusal> {
        self.post("/backtest", request).await
    }

    /// `GET /api/track-record/{ticker}?query`.
    pub async fn track_record(
        &self,
        ticker: &str,
        query: &str,
    ) -> Result<TrackRecordResponse, Refusal> {
        let path = format!("/track-record/{}", path_segment(ticker));
        self.get(&with_query(path, query)).await
    }

    /// `GET /api/track-record?query` (the universe's).
    pub async fn universe_track_record(
        &self,
        query: &str,
    ) -> Result<UniverseTrackRecordResponse, Refusal> {
        self.get(&with_query("/track-record".into(), query)).await
    }

    /// `POST /api/match-tickers` (a session's, under `/api`).
    pub async fn match_tickers(&self, text: &str) -> Result<MatchResponse, Refusal> {
        self.post("/match-tickers", &serde_json::json!({ "text": text }))
            .await
    }

    /// `GET /api/usage`.
    pub async fn usage(&self) -> Result<UsageResponse, Refusal> {
        self.get("/usage").await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(path_segment("^GSPC"), "%5EGSPC");
        assert_eq!(path_segment("BTC-USD"), "BTC-USD");
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn queries_join_with_one_question_mark() {
        assert_eq!(with_query("/r".into(), ""), "/r");
        assert_eq!(with_query("/r".into(), "limit=5"), "/r?limit=5");
        assert_eq!(with_query("/r".into(), "?limit=5"), "/r?limit=5");
    }
}
