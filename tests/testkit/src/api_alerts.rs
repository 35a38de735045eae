//! The alert routes (`/api/alerts…`, and their `/web/api` twins), typed.
//! The contract's alert answers (`forecast_api::alerts::Alert`,
//! `EventPage`, `Webhook`, …) are only serialized by the server, so they
//! are mirrored here field for field from `host/api/src/alerts.rs`, built
//! of the contract's own types wherever those can be read (`AlertSpec`,
//! `Observation`, `AlertEvent`): a renamed or retyped field fails the
//! tests that read it when the answer is decoded.

use axum::http::Method;
use chrono::{DateTime, Utc};
use forecast_api::alerts::{AlertEvent, AlertSpec, Observation};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::api::with_query;
use crate::{Api, Refusal};

/// An alert as listed (`forecast_api::alerts::Alert`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    pub id: String,
    /// The asset watched, or null for the watchlist.
    pub ticker: Option<String>,
    pub watchlist: bool,
    /// The condition and parameters.
    #[serde(flatten)]
    pub spec: AlertSpec,
    pub description: String,
    pub enabled: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Empty until evaluated.
    pub states: Vec<AlertState>,
}

/// One asset's state under an alert (`AlertStateBody`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertState {
    pub ticker: String,
    pub holds: bool,
    pub observed: Observation,
    pub evaluated_at: DateTime<Utc>,
}

/// A page of the inbox (`EventPage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventPage {
    pub events: Vec<AlertEvent>,
    pub total: i64,
    pub unread: i64,
    pub limit: u32,
    pub offset: u32,
}

/// `{unread}` (`UnreadCount`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnreadCount {
    pub unread: i64,
}

/// What marking read did (`MarkedRead`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkedRead {
    pub marked: u64,
    pub unread: i64,
}

/// A webhook endpoint (`Webhook`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Webhook {
    pub id: String,
    pub url: String,
    pub enabled: bool,
    pub consecutive_failures: i64,
    pub disabled_reason: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A new endpoint with its secret, shown this once (`CreatedWebhook`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreatedWebhook {
    #[serde(flatten)]
    pub webhook: Webhook,
    pub secret: String,
}

/// One delivery (`Delivery`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub id: String,
    pub event_id: Option<String>,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// An endpoint's delivery log (`DeliveryLog`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliveryLog {
    pub webhook: Webhook,
    /// Newest first.
    pub deliveries: Vec<Delivery>,
}

/// A test call's delivery (`TestDelivery`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestDelivery {
    pub delivery: Delivery,
}

impl Api {
    /// `POST path` with `body`: the created `T`, whose 2xx must be a 201.
    async fn create<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, Refusal> {
        let response = self.send(Method::POST, path, Some(body)).await;
        let status = response.status().as_u16();
        let created = Self::typed(response).await?;
        assert_eq!(status, 201, "POST {path} creates");
        Ok(created)
    }

    /// `DELETE path`, whose 2xx must be a 204.
    async fn delete(&self, path: &str) -> Result<(), Refusal> {
        let response = self.send::<()>(Method::DELETE, path, None).await;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Self::typed::<serde_json::Value>(response).await.map(drop);
        }
        assert_eq!(status, 204, "DELETE {path}");
        Ok(())
    }

    /// `GET /api/alerts`.
    pub async fn alerts(&self) -> Result<Vec<Alert>, Refusal> {
        self.get("/alerts").await
    }

    /// `GET /api/alerts/{id}`.
    pub async fn alert(&self, id: &str) -> Result<Alert, Refusal> {
        self.get(&format!("/alerts/{id}")).await
    }

    /// `POST /api/alerts` of `body` (JSON: a test sends what the contract
    /// refuses too): 201.
    pub async fn create_alert<B: Serialize + ?Sized>(&self, body: &B) -> Result<Alert, Refusal> {
        self.create("/alerts", body).await
    }

    /// `PATCH /api/alerts/{id}` with `body`.
    pub async fn change_alert<B: Serialize + ?Sized>(
        &self,
        id: &str,
        body: &B,
    ) -> Result<Alert, Refusal> {
        let path = format!("/alerts/{id}");
        Self::typed(self.send(Method::PATCH, &path, Some(body)).await).await
    }

    /// `DELETE /api/alerts/{id}`: 204.
    pub async fn delete_alert(&self, id: &str) -> Result<(), Refusal> {
        self.delete(&format!("/alerts/{id}")).await
    }

    /// `GET /api/alerts/events?query`.
    pub async fn events(&self, query: &str) -> Result<EventPage, Refusal> {
        self.get(&with_query("/alerts/events".into(), query)).await
    }

    /// `POST /api/alerts/events/read` with `body` (`{ids}` or `{all}`).
    pub async fn mark_read<B: Serialize + ?Sized>(&self, body: &B) -> Result<MarkedRead, Refusal> {
        self.post("/alerts/events/read", body).await
    }

    /// `GET /api/alerts/unread`.
    pub async fn unread(&self) -> Result<UnreadCount, Refusal> {
        self.get("/alerts/unread").await
    }

    /// `GET /api/alerts/webhooks`.
    pub async fn webhooks(&self) -> Result<Vec<Webhook>, Refusal> {
        self.get("/alerts/webhooks").await
    }

    /// `POST /api/alerts/webhooks` of `{url}`: 201.
    pub async fn create_webhook(&self, url: &str) -> Result<CreatedWebhook, Refusal> {
        self.create("/alerts/webhooks", &serde_json::json!({ "url": url }))
            .await
    }

    /// `PATCH /api/alerts/webhooks/{id}` of `{enabled}`.
    pub async fn enable_webhook(&self, id: &str, enabled: bool) -> Result<Webhook, Refusal> {
        let path = format!("/alerts/webhooks/{id}");
        let body = serde_json::json!({ "enabled": enabled });
        Self::typed(self.send(Method::PATCH, &path, Some(&body)).await).await
    }

    /// `DELETE /api/alerts/webhooks/{id}`: 204.
    pub async fn delete_webhook(&self, id: &str) -> Result<(), Refusal> {
        self.delete(&format!("/alerts/webhooks/{id}")).await
    }

    /// `GET /api/alerts/webhooks/{id}/deliveries`.
    pub async fn deliveries(&self, id: &str) -> Result<DeliveryLog, Refusal> {
        self.get(&format!("/alerts/webhooks/{id}/deliveries")).await
    }

    /// `POST /api/alerts/webhooks/{id}/test`.
    pub async fn test_webhook(&self, id: &str) -> Result<TestDelivery, Refusal> {
        let path = format!("/alerts/webhooks/{id}/test");
        Self::typed(self.send::<()>(Method::POST, &path, None).await).await
    }
}
