//! Uploading a bundle or a bare component to a server's
//! `POST /api/strategies` (feature `publish`; the CLI's `forecast plugin
//! publish`).

use std::time::Duration;

use crate::{is_bundle, BUNDLE_CONTENT_TYPE, WASM_CONTENT_TYPE};

/// The content type a file is sent with: a bundle's, or a bare component's.
pub fn content_type(bytes: &[u8]) -> &'static str {
    if is_bundle(bytes) {
        BUNDLE_CONTENT_TYPE
    } else {
        WASM_CONTENT_TYPE
    }
}

/// The upload URL for a server's base URL (`https://host[/prefix]`).
pub fn endpoint(base_url: &str) -> String {
    format!("{}/api/strategies", base_url.trim_end_matches('/'))
}

/// POSTs `bytes` to `<base_url>/api/strategies` with the API key as Bearer
/// token. Returns the server's JSON answer on a 2xx status; otherwise an
/// error naming the status and the answer's `detail` (or its body), or
/// the connection failure.
pub async fn publish(
    base_url: &str,
    api_key: &str,
    bytes: Vec<u8>,
) -> Result<serde_json::Value, String> {
    let url = endpoint(base_url);
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(300))
        .build()
        .map_err(|e| format!("build the HTTP client: {e}"))?;
    let response = client
        .post(&url)
        .header(reqwest::header::CONTENT_TYPE, content_type(&bytes))
        .header(reqwest::header::AUTHORIZATION, format!("Bearer {api_key}"))
        .header(reqwest::header::ACCEPT, "application/json")
        .body(bytes)
        .send()
        .await
        .map_err(|e| format!("POST {url}: {}", describe(&e)))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| format!("POST {url}: {status}, reading the answer: {}", describe(&e)))?;
    let json: Option<serde_json::Value> = serde_json::from_str(&body).ok();
    if !status.is_success() {
        let detail = json
            .as_ref()
            .and_then(|j| j.get("detail"))
            .and_then(|d| d.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| {
                let text: String = body.chars().take(500).collect();
                if text.trim().is_empty() {
                    "(empty answer)".to_string()
                } else {
                    text
                }
            });
        return Err(format!("POST {url}: {status}: {detail}"));
    }
    json.ok_or_else(|| format!("POST {url}: {status}, but the answer is not JSON"))
}

/// A transport error with its causes (reqwest's own message is often just
/// "error sending request").
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
