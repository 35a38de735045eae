//! Alerts (issue 30): a user's conditions on an asset or on the whole
//! watchlist, evaluated after every change of the data they read
//! ([`evaluate`]), and their events delivered to the in-app inbox, signed
//! webhooks and an e-mail digest ([`deliver`]).
//!
//! This module holds the service and what users manage through the API:
//! alerts, the inbox, webhook endpoints and their delivery logs.

mod deliver;
mod evaluate;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use forecast_api::alerts::{
    Alert, AlertEvent, AlertSpec, AlertStateBody, CreateAlertRequest, CreateWebhookRequest,
    CreatedWebhook, Delivery, DeliveryLog, EventPage, EventsQuery, MarkReadRequest, MarkedRead,
    Observation, Target, TestDelivery, UnreadCount, UpdateAlertRequest, UpdateWebhookRequest,
    Webhook, MAX_ALERTS_PER_USER, MAX_URL_BYTES, MAX_WEBHOOKS_PER_USER,
};
use forecast_domain::{SharedClock, User};
use forecast_store::{
    AccountStore, AlertRecord, AlertStore, AssetStore, DeliveryRecord, GenerationStore,
    GradingStore, WebhookRecord,
};

use forecast_services::error::Error;
use forecast_services::verdict::VerdictService;

pub use deliver::{sign, DeliverySummary, SmtpSettings};
pub use evaluate::EvaluationSummary;

/// How alerts are evaluated and delivered (the operator's settings).
#[derive(Debug, Clone)]
pub struct AlertSettings {
    /// The e-mail digest's server and sender; `None`: no e-mail is sent.
    pub smtp: Option<SmtpSettings>,
    /// Whether webhook URLs may point at private, loopback or link-local
    /// addresses (`FORECAST_WEBHOOK_ALLOW_PRIVATE`).
    pub allow_private: bool,
    /// The first retry's delay; each next one doubles it.
    pub retry_base: Duration,
    /// Attempts per delivery before it is given up.
    pub max_attempts: u32,
    /// Consecutive failed attempts after which an endpoint is disabled.
    pub max_failures: u32,
    /// How often a server looks for changes and due deliveries.
    pub interval: Duration,
    /// Each attempt's time limit.
    pub attempt_timeout: Duration,
    /// The web app's address, for links in e-mails.
    pub origin: String,
}

impl Default for AlertSettings {
    fn default() -> Self {
        AlertSettings {
            smtp: None,
            allow_private: false,
            retry_base: Duration::from_secs(30),
            max_attempts: 6,
            max_failures: 10,
            interval: Duration::from_secs(5),
            attempt_timeout: Duration::from_secs(10),
            origin: String::new(),
        }
    }
}

/// Alerts, their evaluation and delivery.
#[derive(Clone)]
pub struct AlertService {
    store: Arc<dyn AlertStore>,
    accounts: Arc<dyn AccountStore>,
    assets: Arc<dyn AssetStore>,
    generations: Arc<dyn GenerationStore>,
    grading: Arc<dyn GradingStore>,
    verdicts: VerdictService,
    settings: Arc<AlertSettings>,
    /// This process's name in evaluation claims.
    worker: Arc<str>,
    /// Accounts with a test call in flight in this process (one each).
    testing: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    /// When events happen, deliveries are due and leases expire.
    clock: SharedClock,
}

/// An account's turn at a test call, given back when dropped.
struct TestTurn {
    testing: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    user_id: String,
}

impl Drop for TestTurn {
    fn drop(&mut self) {
        self.testing
            .lock()
            .expect("testing poisoned")
            .remove(&self.user_id);
    }
}

fn time(unix: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(unix, 0).unwrap_or_default()
}

fn parse_spec(a: &AlertRecord) -> Result<AlertSpec, Error> {
    serde_json::from_str(&a.spec)
        .map_err(|e| Error::Internal(format!("alert {} has an unreadable spec: {e}", a.id)))
}

fn webhook_body(w: &WebhookRecord) -> Webhook {
    Webhook {
        id: w.id.clone(),
        url: w.url.clone(),
        enabled: w.enabled,
        consecutive_failures: w.consecutive_failures,
        disabled_reason: w.disabled_reason.clone(),
        created_at: time(w.created_at),
    }
}

fn delivery_body(d: &DeliveryRecord) -> Delivery {
    Delivery {
        id: d.id.clone(),
        event_id: d.event_id.clone(),
        status: d.status.clone(),
        attempts: d.attempts,
        last_status: d.last_status,
        last_error: d.last_error.clone(),
        created_at: time(d.created_at),
        next_attempt_at: (d.status == "pending")
            .then(|| DateTime::from_timestamp_millis(d.next_at).unwrap_or_default()),
        finished_at: d.finished_at.map(time),
    }
}

/// An id from a path, checked before it reaches the store.
fn uuid(kind: &str, raw: &str) -> Result<String, Error> {
    uuid::Uuid::parse_str(raw.trim())
        .map(|u| u.to_string())
        .map_err(|_| {
            Error::Invalid(format!(
                "{kind} id '{}' is not a UUID",
                forecast_api::quote(raw)
            ))
        })
}

impl AlertService {
    /// A service over these stores, reading verdicts through `verdicts`
    /// and the time from `clock`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Arc<dyn AlertStore>,
        accounts: Arc<dyn AccountStore>,
        assets: Arc<dyn AssetStore>,
        generations: Arc<dyn GenerationStore>,
        grading: Arc<dyn GradingStore>,
        verdicts: VerdictService,
        settings: AlertSettings,
        clock: SharedClock,
    ) -> Self {
        AlertService {
            store,
            accounts,
            assets,
            generations,
            grading,
            verdicts,
            settings: Arc::new(settings),
            worker: Arc::from(forecast_domain::schedule::worker_prefix()),
            testing: Arc::default(),
            clock,
        }
    }

    /// The settings.
    pub fn settings(&self) -> &AlertSettings {
        &self.settings
    }

    fn body(&self, a: &AlertRecord, states: &[forecast_store::AlertState]) -> Result<Alert, Error> {
        let spec = parse_spec(a)?;
        Ok(Alert {
            id: a.id.clone(),
            ticker: a.ticker.clone(),
            watchlist: a.asset_id.is_none(),
            description: spec.describe(),
            spec,
            enabled: a.enabled,
            created_at: time(a.created_at),
            updated_at: time(a.updated_at),
            states: states
                .iter()
                .filter(|s| s.alert_id == a.id)
                .map(|s| AlertStateBody {
                    ticker: s.ticker.clone(),
                    holds: s.holds,
                    observed: serde_json::from_str::<Observation>(&s.observed).unwrap_or_default(),
                    evaluated_at: time(s.updated_at),
                })
                .collect(),
        })
    }

    /// The user's alerts, oldest first, with what was last seen.
    pub async fn list(&self, user: &User) -> Result<Vec<Alert>, Error> {
        let alerts = self.store.alerts_of(&user.id).await?;
        let states = self.store.alert_states(&user.id).await?;
        let mut out = Vec::with_capacity(alerts.len());
        for a in &alerts {
            out.push(self.body(a, &states)?);
        }
        Ok(out)
    }

    async fn record(&self, user: &User, id: &str) -> Result<AlertRecord, Error> {
        let id = uuid("alert", id)?;
        self.store
            .alert(&user.id, &id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no alert {id} belongs to you")))
    }

    /// One of the user's alerts.
    pub async fn get(&self, user: &User, id: &str) -> Result<Alert, Error> {
        let a = self.record(user, id).await?;
        let states = self.store.alert_states(&user.id).await?;
        self.body(&a, &states)
    }

    /// Creates an alert (409 past the per-user cap).
    pub async fn create(&self, user: &User, req: &CreateAlertRequest) -> Result<Alert, Error> {
        let (target, spec, enabled) = req.validate()?;
        let (asset_id, ticker) = match target {
            Target::Ticker(t) => match self.assets.asset_by_ticker(&t).await? {
                Some(a) if a.is_active => (Some(a.id), Some(a.ticker)),
                _ => {
                    return Err(Error::NotFound(format!(
                        "ticker '{}' is not an active asset",
                        forecast_api::quote(&t)
                    )))
                }
            },
            Target::Watchlist => (None, None),
        };
        let now = self.clock.timestamp();
        let record = AlertRecord {
            id: uuid::Uuid::new_v4().to_string(),
            user_id: user.id.clone(),
            asset_id,
            ticker,
            spec: serde_json::to_string(&spec).map_err(|e| Error::Internal(e.to_string()))?,
            enabled,
            created_at: now,
            updated_at: now,
        };
        match self
            .store
            .create_alert(&record, MAX_ALERTS_PER_USER)
            .await?
        {
            Some(a) => self.body(&a, &[]),
            None => Err(Error::Conflict(format!(
                "you already have {MAX_ALERTS_PER_USER} alerts, the most one user may have: \
                 delete one first"
            ))),
        }
    }

    /// Changes an alert; a changed condition starts it over.
    pub async fn update(
        &self,
        user: &User,
        id: &str,
        req: &UpdateAlertRequest,
    ) -> Result<Alert, Error> {
        let mut a = self.record(user, id).await?;
        let spec = parse_spec(&a)?;
        let (next, enabled, reset) = req.apply(&spec, a.enabled)?;
        a.spec = serde_json::to_string(&next).map_err(|e| Error::Internal(e.to_string()))?;
        a.enabled = enabled;
        a.updated_at = self.clock.timestamp();
        if !self.store.update_alert(&a, reset).await? {
            return Err(Error::NotFound(format!("no alert {} belongs to you", a.id)));
        }
        self.get(user, &a.id).await
    }

    /// Deletes an alert; its events stay in the inbox.
    pub async fn delete(&self, user: &User, id: &str) -> Result<(), Error> {
        let id = uuid("alert", id)?;
        if self.store.delete_alert(&user.id, &id).await? {
            Ok(())
        } else {
            Err(Error::NotFound(format!("no alert {id} belongs to you")))
        }
    }

    /// A page of the user's events, newest first.
    pub async fn events(&self, user: &User, q: EventsQuery) -> Result<EventPage, Error> {
        let page = self
            .store
            .events(&user.id, q.unread, q.limit, q.offset)
            .await?;
        let mut events = Vec::with_capacity(page.events.len());
        for e in &page.events {
            let mut body: AlertEvent = serde_json::from_str(&e.body)
                .map_err(|err| Error::Internal(format!("event {} is unreadable: {err}", e.id)))?;
            body.read = e.read_at.is_some();
            events.push(body);
        }
        Ok(EventPage {
            events,
            total: page.total,
            unread: page.unread,
            limit: q.limit,
            offset: q.offset,
        })
    }

    /// The user's unread events.
    pub async fn unread(&self, user: &User) -> Result<UnreadCount, Error> {
        let page = self.store.events(&user.id, true, 0, 0).await?;
        Ok(UnreadCount {
            unread: page.unread,
        })
    }

    /// Marks events read.
    pub async fn mark_read(&self, user: &User, req: &MarkReadRequest) -> Result<MarkedRead, Error> {
        let ids = req.validate()?;
        let now = self.clock.timestamp();
        let marked = self.store.mark_read(&user.id, ids, now).await?;
        Ok(MarkedRead {
            marked,
            unread: self.unread(user).await?.unread,
        })
    }

    /// The user's endpoints.
    pub async fn webhooks(&self, user: &User) -> Result<Vec<Webhook>, Error> {
        Ok(self
            .store
            .webhooks_of(&user.id)
            .await?
            .iter()
            .map(webhook_body)
            .collect())
    }

    async fn webhook_record(&self, user: &User, id: &str) -> Result<WebhookRecord, Error> {
        let id = uuid("webhook", id)?;
        self.store
            .webhook(&user.id, &id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no webhook {id} belongs to you")))
    }

    /// Adds an endpoint: its URL checked (scheme, size, address), its
    /// secret generated and returned this once.
    pub async fn create_webhook(
        &self,
        user: &User,
        req: &CreateWebhookRequest,
    ) -> Result<CreatedWebhook, Error> {
        let url = req.url.trim();
        if url.len() > MAX_URL_BYTES {
            return Err(Error::Invalid(format!(
                "url is {} bytes; at most {MAX_URL_BYTES}",
                url.len()
            )));
        }
        deliver::check_target(url, self.settings.allow_private).await?;
        let secret = deliver::new_secret();
        let record = WebhookRecord {
            id: uuid::Uuid::new_v4().to_string(),
            user_id: user.id.clone(),
            url: url.to_string(),
            secret: secret.clone(),
            enabled: true,
            consecutive_failures: 0,
            disabled_reason: None,
            created_at: self.clock.timestamp(),
        };
        match self
            .store
            .create_webhook(&record, MAX_WEBHOOKS_PER_USER)
            .await?
        {
            Some(w) => Ok(CreatedWebhook {
                webhook: webhook_body(&w),
                secret,
            }),
            None => Err(Error::Conflict(format!(
                "you already have {MAX_WEBHOOKS_PER_USER} webhooks, the most one user may \
                 have: delete one first"
            ))),
        }
    }

    /// Enables (failures counted from zero) or disables an endpoint.
    pub async fn update_webhook(
        &self,
        user: &User,
        id: &str,
        req: &UpdateWebhookRequest,
    ) -> Result<Webhook, Error> {
        let w = self.webhook_record(user, id).await?;
        self.store
            .set_webhook_enabled(&user.id, &w.id, req.enabled)
            .await?;
        Ok(webhook_body(&self.webhook_record(user, &w.id).await?))
    }

    /// Deletes an endpoint and its log.
    pub async fn delete_webhook(&self, user: &User, id: &str) -> Result<(), Error> {
        let w = self.webhook_record(user, id).await?;
        self.store.delete_webhook(&user.id, &w.id).await?;
        Ok(())
    }

    /// An endpoint's newest deliveries.
    pub async fn deliveries(&self, user: &User, id: &str) -> Result<DeliveryLog, Error> {
        let w = self.webhook_record(user, id).await?;
        let rows = self
            .store
            .deliveries_of(&w.id, forecast_api::alerts::DELIVERY_LOG)
            .await?;
        Ok(DeliveryLog {
            webhook: webhook_body(&w),
            deliveries: rows.iter().map(delivery_body).collect(),
        })
    }

    /// `user_id`'s turn at a test call, or a 409 while another is in flight.
    fn test_turn(&self, user_id: &str) -> Result<TestTurn, Error> {
        let mut testing = self.testing.lock().expect("testing poisoned");
        if !testing.insert(user_id.to_string()) {
            return Err(Error::Conflict(
                "a test call of this account is still waiting for its endpoint's answer; \
                 one runs at a time: retry when it has answered"
                    .into(),
            ));
        }
        Ok(TestTurn {
            testing: self.testing.clone(),
            user_id: user_id.to_string(),
        })
    }

    /// Sends a sample event to an enabled endpoint now, once (no retry),
    /// and logs it like any call; a failure counts towards disabling it.
    /// One test call at a time per account (in this process); a disabled
    /// endpoint is not called.
    pub async fn test_webhook(&self, user: &User, id: &str) -> Result<TestDelivery, Error> {
        let w = self.webhook_record(user, id).await?;
        if !w.enabled {
            return Err(Error::Conflict(format!(
                "webhook {id} is disabled{}; enable it first \
                 (PATCH /api/alerts/webhooks/{id} {{\"enabled\": true}})",
                w.disabled_reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            )));
        }
        let _turn = self.test_turn(&user.id)?;
        let d = self.send_test(&w).await?;
        Ok(TestDelivery {
            delivery: delivery_body(&d),
        })
    }
}
