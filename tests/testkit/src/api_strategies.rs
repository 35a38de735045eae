//! The typed client's strategy routes: uploads of components and signed
//! bundles (`POST /api/strategies`), an owner's changes (`PATCH
//! /api/strategies/{handle}/{name}`), and the operator's registry (`POST
//! /api/admin/plugins`, with the admin token as the Bearer key).

use axum::http::Method;
use forecast_api::admin::AddedPlugin;
use forecast_api::authored::{StrategyChange, StrategyState, UploadedStrategy};

use crate::api::with_query;
use crate::client::Response;
use crate::{Api, Refusal};

/// The media type of a signed bundle (`forecast plugin sign`).
pub const BUNDLE: &str = "application/vnd.forecast.bundle";
/// The media type of a bare component.
pub const WASM: &str = "application/wasm";

impl Api {
    /// `method path` with the raw `body` as `media`: the response, whatever
    /// its status.
    pub async fn send_bytes(
        &self,
        method: Method,
        path: &str,
        media: &str,
        body: Vec<u8>,
    ) -> Response {
        self.request(method, path)
            .header("content-type", media)
            .body(body)
            .send()
            .await
            .expect("the server answers")
    }

    /// `POST /api/strategies` of `body` as `media` ([`WASM`] or
    /// [`BUNDLE`]): the status (201 stored, 200 already stored) and the
    /// stored version, or the refusal.
    pub async fn upload_strategy(
        &self,
        media: &str,
        body: Vec<u8>,
    ) -> Result<(u16, UploadedStrategy), Refusal> {
        let response = self
            .send_bytes(Method::POST, "/strategies", media, body)
            .await;
        let status = response.status().as_u16();
        Ok((status, Self::typed(response).await?))
    }

    /// `PATCH /api/strategies/{strategy}` (`@handle/name`).
    pub async fn change_strategy(
        &self,
        strategy: &str,
        change: &StrategyChange,
    ) -> Result<StrategyState, Refusal> {
        let path = format!("/strategies/{strategy}");
        Self::typed(self.send(Method::PATCH, &path, Some(change)).await).await
    }

    /// `POST /api/admin/plugins?query` (`kind=…&name=…&version=…`) of a
    /// component's or a bundle's bytes (the admin token's client).
    pub async fn add_plugin(&self, query: &str, body: Vec<u8>) -> Result<AddedPlugin, Refusal> {
        let path = with_query("/admin/plugins".into(), query);
        Self::typed(self.send_bytes(Method::POST, &path, WASM, body).await).await
    }
}
