//! The alert routes (`/api/alerts…`, and their `/web/api` twins), typed
//! by the contract's own answers (`forecast_api::alerts`): a renamed or
//! retyped field breaks the tests at compile time.

use axum::http::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::api::with_query;
use crate::{Api, Refusal};

/// The contract's answers, read by the same types the server writes.
pub use forecast_api::alerts::{
    Alert, AlertStateBody as AlertState, CreatedWebhook, Delivery, DeliveryLog, EventPage,
    MarkedRead, TestDelivery, UnreadCount, Webhook,
};

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
