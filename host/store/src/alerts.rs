//! Alerts (issue 30): users' conditions, the state each (alert, asset) was
//! last seen in, the events fired, webhook endpoints and the outbox of
//! deliveries (webhook calls and e-mail digests).
//!
//! Exactly once across replicas rests on two rules. An evaluation is keyed
//! by what it saw (the store's generation counters) and claimed once
//! ([`AlertStore::claim_evaluation`]). And a user's results are recorded in
//! one transaction under the user's lock that first checks every state it
//! replaces is still the one the evaluation read: if another process wrote
//! any of them in between, nothing is written and the caller reads again
//! ([`Recorded::Stale`]). Events are unique per (alert, asset, evaluation).

use async_trait::async_trait;

use crate::StoreResult;

/// One alert as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRecord {
    /// UUID.
    pub id: String,
    /// Owner.
    pub user_id: String,
    /// The asset, or `None` for the owner's watchlist.
    pub asset_id: Option<i64>,
    /// The asset's ticker (with `asset_id`).
    pub ticker: Option<String>,
    /// The condition and its parameters, JSON (the services' type).
    pub spec: String,
    /// Evaluated or paused.
    pub enabled: bool,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
}

/// What the last evaluation saw of one (alert, asset).
#[derive(Debug, Clone, PartialEq)]
pub struct AlertState {
    /// Alert.
    pub alert_id: String,
    /// Asset.
    pub asset_id: i64,
    /// Its ticker.
    pub ticker: String,
    /// Whether the condition held.
    pub holds: bool,
    /// The observation, JSON.
    pub observed: String,
    /// The key of the evaluation that wrote it.
    pub evaluation: String,
    /// Unix seconds.
    pub updated_at: i64,
}

/// A fired alert.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// UUID.
    pub id: String,
    /// Owner.
    pub user_id: String,
    /// The alert (it may have been deleted since).
    pub alert_id: String,
    /// Asset.
    pub asset_id: i64,
    /// Evaluation key.
    pub evaluation: String,
    /// The event as the API shows it, JSON.
    pub body: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds, once read.
    pub read_at: Option<i64>,
}

/// A webhook endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookRecord {
    /// UUID.
    pub id: String,
    /// Owner.
    pub user_id: String,
    /// Where events are POSTed.
    pub url: String,
    /// The signing secret.
    pub secret: String,
    /// Whether calls are made.
    pub enabled: bool,
    /// Failed attempts since the last success.
    pub consecutive_failures: i64,
    /// Why it was disabled, when it was by the service.
    pub disabled_reason: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
}

/// One row of the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRecord {
    /// UUID.
    pub id: String,
    /// `webhook` or `email`.
    pub kind: String,
    /// Owner.
    pub user_id: String,
    /// The endpoint (webhook calls).
    pub webhook_id: Option<String>,
    /// The event (webhook calls of an event; `None` for a test call).
    pub event_id: Option<String>,
    /// The evaluation (digests and event calls).
    pub evaluation: Option<String>,
    /// The body to send (JSON for a webhook; the digest as JSON).
    pub payload: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    /// Attempts made.
    pub attempts: i64,
    /// Unix milliseconds of the next attempt (pending rows).
    pub next_at: i64,
    /// HTTP status of the last attempt, if it got one.
    pub last_status: Option<i64>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds, once delivered or given up.
    pub finished_at: Option<i64>,
}

/// A claimed delivery with what sending it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct DueDelivery {
    /// The row.
    pub delivery: DeliveryRecord,
    /// Its endpoint (webhook calls).
    pub webhook: Option<WebhookRecord>,
    /// The owner's e-mail address.
    pub email: String,
}

/// A new (alert, asset) state of an evaluation, and the one it replaces.
#[derive(Debug, Clone, PartialEq)]
pub struct StateWrite {
    /// Alert.
    pub alert_id: String,
    /// Asset.
    pub asset_id: i64,
    /// Whether the condition holds.
    pub holds: bool,
    /// The observation, JSON.
    pub observed: String,
    /// The evaluation key of the state read before (`None`: there was none).
    pub replaces: Option<String>,
}

/// A new event of an evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// UUID.
    pub id: String,
    /// Alert.
    pub alert_id: String,
    /// Asset.
    pub asset_id: i64,
    /// The event, JSON.
    pub body: String,
    /// What each of the owner's enabled endpoints is sent.
    pub webhook_payload: String,
}

/// One user's results of one evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct UserEvaluation {
    /// Owner.
    pub user_id: String,
    /// Evaluation key.
    pub evaluation: String,
    /// New states.
    pub states: Vec<StateWrite>,
    /// New events.
    pub events: Vec<NewEvent>,
    /// The e-mail digest to queue when any event is recorded (`None`:
    /// none is sent).
    pub digest: Option<String>,
    /// Unix seconds.
    pub now: i64,
}

/// What [`AlertStore::claim_evaluation`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// This caller evaluates it.
    Claimed,
    /// It was evaluated.
    Finished,
    /// Another process holds it and its lease has not ended.
    Held,
}

/// What [`AlertStore::record_evaluation`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Written: events recorded, webhook calls and digests queued.
    Done {
        /// Events recorded.
        events: usize,
        /// Webhook calls queued.
        calls: usize,
        /// Digests queued (0 or 1).
        digests: usize,
    },
    /// A state changed since it was read: nothing written.
    Stale,
}

/// The end of one delivery attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// The row.
    pub id: String,
    /// Whether it was delivered.
    pub delivered: bool,
    /// HTTP status, if any.
    pub status: Option<i64>,
    /// Why it failed.
    pub error: Option<String>,
    /// When to try again after a failure, Unix milliseconds (`None`: give
    /// up).
    pub retry_at: Option<i64>,
    /// Consecutive failures after which an endpoint is disabled.
    pub max_failures: i64,
    /// Unix seconds.
    pub now: i64,
}

/// A page of a user's events.
#[derive(Debug, Clone, PartialEq)]
pub struct EventPage {
    /// Newest first.
    pub events: Vec<EventRecord>,
    /// Events matching the filter.
    pub total: i64,
    /// Unread events of the user.
    pub unread: i64,
}

/// Alerts, their states, evaluations and events; endpoints and the outbox
/// through [`WebhookStore`].
#[async_trait]
pub trait AlertStore: WebhookStore {
    /// Stores an alert unless its owner already has `max` (`None` then).
    async fn create_alert(&self, alert: &AlertRecord, max: u32)
        -> StoreResult<Option<AlertRecord>>;
    /// A user's alerts, oldest first.
    async fn alerts_of(&self, user_id: &str) -> StoreResult<Vec<AlertRecord>>;
    /// One of a user's alerts.
    async fn alert(&self, user_id: &str, id: &str) -> StoreResult<Option<AlertRecord>>;
    /// Replaces an alert's target, spec and switch; its states are dropped
    /// when `reset` (a changed condition starts over). False when the user
    /// has no such alert.
    async fn update_alert(&self, alert: &AlertRecord, reset: bool) -> StoreResult<bool>;
    /// Deletes one of a user's alerts (its events stay). False when none.
    async fn delete_alert(&self, user_id: &str, id: &str) -> StoreResult<bool>;
    /// Every enabled alert, by owner.
    async fn enabled_alerts(&self) -> StoreResult<Vec<AlertRecord>>;
    /// The states of a user's alerts.
    async fn alert_states(&self, user_id: &str) -> StoreResult<Vec<AlertState>>;

    /// Claims evaluation `key` for `worker`: [`Claim::Claimed`] when it was
    /// not claimed, or its claimant has not finished within `lease`
    /// seconds (a takeover).
    async fn claim_evaluation(
        &self,
        key: &str,
        worker: &str,
        now: i64,
        lease: i64,
    ) -> StoreResult<Claim>;
    /// Marks an evaluation finished with its summary (JSON).
    async fn finish_evaluation(&self, key: &str, summary: &str, now: i64) -> StoreResult<()>;
    /// The most recently started evaluation: key, start, end, summary.
    async fn latest_evaluation(
        &self,
    ) -> StoreResult<Option<(String, i64, Option<i64>, Option<String>)>>;
    /// Records one user's results of an evaluation (see the module).
    async fn record_evaluation(&self, write: &UserEvaluation) -> StoreResult<Recorded>;

    /// A page of a user's events, newest first.
    async fn events(
        &self,
        user_id: &str,
        unread_only: bool,
        limit: u32,
        offset: u32,
    ) -> StoreResult<EventPage>;
    /// Marks a user's events read (`ids`, or all when `None`); how many
    /// changed.
    async fn mark_read(&self, user_id: &str, ids: Option<&[String]>, now: i64) -> StoreResult<u64>;

    /// Forgets what no one needs any more: each user's events beyond their
    /// newest `keep_events`, deliveries and evaluations finished before
    /// `before` (Unix seconds). Rows deleted.
    async fn purge_alerts(&self, keep_events: u32, before: i64) -> StoreResult<u64>;
}

/// Users' webhook endpoints and the delivery outbox: what the alerts
/// deliver through ([`AlertStore`] has them as its supertrait).
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Stores an endpoint unless its owner already has `max` (`None` then).
    async fn create_webhook(
        &self,
        webhook: &WebhookRecord,
        max: u32,
    ) -> StoreResult<Option<WebhookRecord>>;
    /// A user's endpoints, oldest first.
    async fn webhooks_of(&self, user_id: &str) -> StoreResult<Vec<WebhookRecord>>;
    /// One of a user's endpoints.
    async fn webhook(&self, user_id: &str, id: &str) -> StoreResult<Option<WebhookRecord>>;
    /// Enables (counting failures from zero) or disables an endpoint.
    /// False when the user has no such endpoint.
    async fn set_webhook_enabled(
        &self,
        user_id: &str,
        id: &str,
        enabled: bool,
    ) -> StoreResult<bool>;
    /// Deletes an endpoint and its delivery log. False when none.
    async fn delete_webhook(&self, user_id: &str, id: &str) -> StoreResult<bool>;
    /// An endpoint's deliveries, newest first, at most `limit`.
    async fn deliveries_of(&self, webhook_id: &str, limit: u32)
        -> StoreResult<Vec<DeliveryRecord>>;
    /// Queues one delivery (a test call).
    async fn enqueue_delivery(&self, delivery: &DeliveryRecord) -> StoreResult<()>;
    /// Claims up to `limit` pending deliveries due at `now_ms` for
    /// `lease_ms` (Unix milliseconds; never one another process holds):
    /// at most one per account, and none of an account with a delivery
    /// in flight (leased).
    async fn claim_deliveries(
        &self,
        now_ms: i64,
        limit: u32,
        lease_ms: i64,
    ) -> StoreResult<Vec<DueDelivery>>;
    /// Records an attempt: delivered, to be retried, or given up; an
    /// endpoint's failures counted, and the endpoint disabled (its pending
    /// calls given up) at `max_failures`.
    async fn finish_delivery(&self, attempt: &Attempt) -> StoreResult<()>;
    /// Pending deliveries (for diagnostics and tests).
    async fn pending_deliveries(&self) -> StoreResult<i64>;
}

pub(crate) fn alert_row(r: &impl crate::rows::Cols) -> StoreResult<AlertRecord> {
    Ok(AlertRecord {
        id: r.text("id")?,
        user_id: r.text("user_id")?,
        asset_id: r.opt_int("asset_id")?,
        ticker: r.opt_text("ticker")?,
        spec: r.text("spec")?,
        enabled: r.flag("enabled")?,
        created_at: r.int("created_at")?,
        updated_at: r.int("updated_at")?,
    })
}

pub(crate) fn webhook_row(r: &impl crate::rows::Cols) -> StoreResult<WebhookRecord> {
    Ok(WebhookRecord {
        id: r.text("id")?,
        user_id: r.text("user_id")?,
        url: r.text("url")?,
        secret: r.text("secret")?,
        enabled: r.flag("enabled")?,
        consecutive_failures: r.int("consecutive_failures")?,
        disabled_reason: r.opt_text("disabled_reason")?,
        created_at: r.int("created_at")?,
    })
}

pub(crate) fn delivery_row(r: &impl crate::rows::Cols) -> StoreResult<DeliveryRecord> {
    Ok(DeliveryRecord {
        id: r.text("id")?,
        kind: r.text("kind")?,
        user_id: r.text("user_id")?,
        webhook_id: r.opt_text("webhook_id")?,
        event_id: r.opt_text("event_id")?,
        evaluation: r.opt_text("evaluation")?,
        payload: r.text("payload")?,
        status: r.text("status")?,
        attempts: r.int("attempts")?,
        next_at: r.int("next_at")?,
        last_status: r.opt_int("last_status")?,
        last_error: r.opt_text("last_error")?,
        created_at: r.int("created_at")?,
        finished_at: r.opt_int("finished_at")?,
    })
}

pub(crate) fn event_row(r: &impl crate::rows::Cols) -> StoreResult<EventRecord> {
    Ok(EventRecord {
        id: r.text("id")?,
        user_id: r.text("user_id")?,
        alert_id: r.text("alert_id")?,
        asset_id: r.int("asset_id")?,
        evaluation: r.text("evaluation")?,
        body: r.text("body")?,
        created_at: r.int("created_at")?,
        read_at: r.opt_int("read_at")?,
    })
}

/// The select of [`alert_row`]'s columns, its ticker joined; a `WHERE`
/// follows.
macro_rules! select_alerts {
    () => {
        "SELECT a.id, a.user_id, a.asset_id, s.ticker, a.spec, a.enabled, a.created_at, \
         a.updated_at FROM alerts a LEFT JOIN assets s ON s.id = a.asset_id "
    };
}

pub(crate) const SELECT_ALERTS_OF: &str = concat!(
    select_alerts!(),
    "WHERE a.user_id = $1 ORDER BY a.created_at, a.id"
);
pub(crate) const SELECT_ALERT: &str =
    concat!(select_alerts!(), "WHERE a.user_id = $1 AND a.id = $2");
pub(crate) const SELECT_ENABLED: &str = concat!(
    select_alerts!(),
    "WHERE a.enabled ORDER BY a.user_id, a.created_at, a.id"
);
pub(crate) const COUNT_ALERTS: &str = "SELECT COUNT(*) AS n FROM alerts WHERE user_id = $1";
pub(crate) const INSERT_ALERT: &str = "INSERT INTO alerts \
     (id, user_id, asset_id, spec, enabled, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
pub(crate) const COUNT_WEBHOOKS: &str = "SELECT COUNT(*) AS n FROM webhooks WHERE user_id = $1";
pub(crate) const INSERT_WEBHOOK: &str = "INSERT INTO webhooks \
     (id, user_id, url, secret, enabled, consecutive_failures, disabled_reason, created_at) \
     VALUES ($1, $2, $3, $4, $5, 0, NULL, $6)";
pub(crate) const WEBHOOK_COLUMNS: &str =
    "id, user_id, url, secret, enabled, consecutive_failures, disabled_reason, created_at";
pub(crate) const DELIVERY_COLUMNS: &str = "id, kind, user_id, webhook_id, event_id, evaluation, \
     payload, status, attempts, next_at, last_status, last_error, created_at, finished_at";
/// The due rows a claim takes, before its backend's locking clause.
/// The due deliveries to claim: of each account without a delivery in
/// flight (one whose lease runs), its oldest due one, so one account's
/// slow endpoints hold one of its own deliveries at a time and never
/// another account's (issue 40, finding 5).
pub(crate) const DUE: &str =
    "SELECT id FROM deliveries d WHERE status = 'pending' AND next_at <= $1 \
     AND (lease_until IS NULL OR lease_until <= $1) \
     AND NOT EXISTS (SELECT 1 FROM deliveries f WHERE f.user_id = d.user_id \
         AND f.status = 'pending' AND f.lease_until > $1) \
     AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.user_id = d.user_id \
         AND o.status = 'pending' AND o.next_at <= $1 \
         AND (o.lease_until IS NULL OR o.lease_until <= $1) \
         AND (o.next_at < d.next_at OR (o.next_at = d.next_at AND o.id < d.id))) \
     ORDER BY next_at, id LIMIT $2";

// The claim-sensitive methods (count then insert, the user's lock, the
// outbox claim) need each backend's own transaction: `$store` provides
// `user_tx(user_id)` (a transaction holding the user's lock, with its
// guard) and `write_tx()` (a write transaction, with its guard);
// `$due_lock` is the locking clause of `DUE`.
macro_rules! impl_alert_store {
    ($store:ty, $db:ty, due_lock: $due_lock:expr) => {

        impl $store {
            /// Inserts an evaluation's events (each once) and queues a
            /// webhook call per enabled hook of the user for each new one:
            /// (events, calls).
            async fn insert_events(
                tx: &mut sqlx::Transaction<'static, $db>,
                write: &$crate::UserEvaluation,
                gone: &std::collections::HashSet<String>,
            ) -> $crate::StoreResult<(usize, usize)> {
                use $crate::rows::Cols;
                let (mut events, mut calls) = (0, 0);
                for e in write.events.iter().filter(|e| !gone.contains(&e.alert_id)) {
                    let n = sqlx::query(
                        "INSERT INTO alert_events \
                         (id, user_id, alert_id, asset_id, evaluation, body, created_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7) \
                         ON CONFLICT (alert_id, asset_id, evaluation) DO NOTHING",
                    )
                    .bind(&e.id)
                    .bind(&write.user_id)
                    .bind(&e.alert_id)
                    .bind(e.asset_id)
                    .bind(&write.evaluation)
                    .bind(&e.body)
                    .bind(write.now)
                    .execute(&mut **tx)
                    .await?
                    .rows_affected();
                    if n == 0 {
                        continue;
                    }
                    events += 1;
                    let hooks = sqlx::query(
                        "SELECT id FROM webhooks WHERE user_id = $1 AND enabled ORDER BY id",
                    )
                    .bind(&write.user_id)
                    .fetch_all(&mut **tx)
                    .await?;
                    for h in &hooks {
                        sqlx::query($crate::alerts::INSERT_DELIVERY)
                            .bind(uuid::Uuid::new_v4().to_string())
                            .bind("webhook")
                            .bind(&write.user_id)
                            .bind(h.text("id")?)
                            .bind(&e.id)
                            .bind(&write.evaluation)
                            .bind(&e.webhook_payload)
                            .bind(write.now * 1000)
                            .bind(write.now)
                            .execute(&mut **tx)
                            .await?;
                        calls += 1;
                    }
                }
                Ok((events, calls))
            }

            /// Queues the evaluation's e-mail digest unless one is queued
            /// already: how many were queued (0 or 1).
            async fn queue_digest(
                tx: &mut sqlx::Transaction<'static, $db>,
                write: &$crate::UserEvaluation,
                digest: &str,
            ) -> $crate::StoreResult<usize> {
                use $crate::rows::Cols;
                let queued = sqlx::query(
                    "SELECT COUNT(*) AS n FROM deliveries \
                     WHERE kind = 'email' AND user_id = $1 AND evaluation = $2",
                )
                .bind(&write.user_id)
                .bind(&write.evaluation)
                .fetch_one(&mut **tx)
                .await?
                .int("n")?;
                if queued != 0 {
                    return Ok(0);
                }
                sqlx::query($crate::alerts::INSERT_DELIVERY)
                    .bind(uuid::Uuid::new_v4().to_string())
                    .bind("email")
                    .bind(&write.user_id)
                    .bind(None::<String>)
                    .bind(None::<String>)
                    .bind(&write.evaluation)
                    .bind(digest)
                    .bind(write.now * 1000)
                    .bind(write.now)
                    .execute(&mut **tx)
                    .await?;
                Ok(1)
            }
        }

        #[async_trait::async_trait]
        impl $crate::AlertStore for $store {
            async fn create_alert(
                &self,
                alert: &$crate::AlertRecord,
                max: u32,
            ) -> $crate::StoreResult<Option<$crate::AlertRecord>> {
                use $crate::rows::Cols;
                let (_guard, mut tx) = self.user_tx(&alert.user_id).await?;
                let n = sqlx::query($crate::alerts::COUNT_ALERTS)
                    .bind(&alert.user_id)
                    .fetch_one(&mut *tx)
                    .await?
                    .int("n")?;
                if n >= i64::from(max) {
                    tx.rollback().await?;
                    return Ok(None);
                }
                sqlx::query($crate::alerts::INSERT_ALERT)
                    .bind(&alert.id)
                    .bind(&alert.user_id)
                    .bind(alert.asset_id)
                    .bind(&alert.spec)
                    .bind(alert.enabled)
                    .bind(alert.created_at)
                    .bind(alert.updated_at)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(Some(alert.clone()))
            }

            async fn alerts_of(
                &self,
                user_id: &str,
            ) -> $crate::StoreResult<Vec<$crate::AlertRecord>> {
                let rows = sqlx::query($crate::alerts::SELECT_ALERTS_OF)
                    .bind(user_id)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::alerts::alert_row).collect()
            }

            async fn alert(
                &self,
                user_id: &str,
                id: &str,
            ) -> $crate::StoreResult<Option<$crate::AlertRecord>> {
                sqlx::query($crate::alerts::SELECT_ALERT)
                    .bind(user_id)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map($crate::alerts::alert_row)
                    .transpose()
            }

            async fn update_alert(
                &self,
                alert: &$crate::AlertRecord,
                reset: bool,
            ) -> $crate::StoreResult<bool> {
                let mut tx = self.pool.begin().await?;
                let changed = sqlx::query(
                    "UPDATE alerts SET asset_id = $3, spec = $4, enabled = $5, updated_at = $6 \
                     WHERE user_id = $1 AND id = $2",
                )
                .bind(&alert.user_id)
                .bind(&alert.id)
                .bind(alert.asset_id)
                .bind(&alert.spec)
                .bind(alert.enabled)
                .bind(alert.updated_at)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if changed == 1 && reset {
                    sqlx::query("DELETE FROM alert_states WHERE alert_id = $1")
                        .bind(&alert.id)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(changed == 1)
            }

            async fn delete_alert(&self, user_id: &str, id: &str) -> $crate::StoreResult<bool> {
                let n = sqlx::query("DELETE FROM alerts WHERE user_id = $1 AND id = $2")
                    .bind(user_id)
                    .bind(id)
                    .execute(&self.pool)
                    .await?
                    .rows_affected();
                Ok(n == 1)
            }

            async fn enabled_alerts(&self) -> $crate::StoreResult<Vec<$crate::AlertRecord>> {
                let rows = sqlx::query($crate::alerts::SELECT_ENABLED)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map($crate::alerts::alert_row).collect()
            }

            async fn alert_states(
                &self,
                user_id: &str,
            ) -> $crate::StoreResult<Vec<$crate::AlertState>> {
                use $crate::rows::Cols;
                let rows = sqlx::query(
                    "SELECT st.alert_id, st.asset_id, s.ticker, st.holds, st.observed, \
                     st.evaluation, st.updated_at FROM alert_states st \
                     JOIN alerts a ON a.id = st.alert_id JOIN assets s ON s.id = st.asset_id \
                     WHERE a.user_id = $1 ORDER BY st.alert_id, s.ticker COLLATE \"C\"",
                )
                .bind(user_id)
                .fetch_all(&self.pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        Ok($crate::AlertState {
                            alert_id: r.text("alert_id")?,
                            asset_id: r.int("asset_id")?,
                            ticker: r.text("ticker")?,
                            holds: r.flag("holds")?,
                            observed: r.text("observed")?,
                            evaluation: r.text("evaluation")?,
                            updated_at: r.int("updated_at")?,
                        })
                    })
                    .collect()
            }

            async fn claim_evaluation(
                &self,
                key: &str,
                worker: &str,
                now: i64,
                lease: i64,
            ) -> $crate::StoreResult<$crate::Claim> {
                use $crate::rows::Cols;
                let n = sqlx::query(
                    "INSERT INTO alert_evaluations (key, worker, started_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (key) DO UPDATE SET worker = excluded.worker, \
                     started_at = excluded.started_at \
                     WHERE alert_evaluations.finished_at IS NULL \
                     AND alert_evaluations.started_at <= $4",
                )
                .bind(key)
                .bind(worker)
                .bind(now)
                .bind(now - lease)
                .execute(&self.pool)
                .await?
                .rows_affected();
                if n == 1 {
                    return Ok($crate::Claim::Claimed);
                }
                let finished = sqlx::query(
                    "SELECT finished_at FROM alert_evaluations WHERE key = $1",
                )
                .bind(key)
                .fetch_optional(&self.pool)
                .await?
                .map(|r| r.opt_int("finished_at"))
                .transpose()?
                .flatten();
                Ok(match finished {
                    Some(_) => $crate::Claim::Finished,
                    None => $crate::Claim::Held,
                })
            }

            async fn finish_evaluation(
                &self,
                key: &str,
                summary: &str,
                now: i64,
            ) -> $crate::StoreResult<()> {
                sqlx::query(
                    "UPDATE alert_evaluations SET finished_at = $2, summary = $3 WHERE key = $1",
                )
                .bind(key)
                .bind(now)
                .bind(summary)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn latest_evaluation(
                &self,
            ) -> $crate::StoreResult<Option<(String, i64, Option<i64>, Option<String>)>> {
                use $crate::rows::Cols;
                let row = sqlx::query(
                    "SELECT key, started_at, finished_at, summary FROM alert_evaluations \
                     ORDER BY started_at DESC, key DESC LIMIT 1",
                )
                .fetch_optional(&self.pool)
                .await?;
                row.map(|r| {
                    Ok((
                        r.text("key")?,
                        r.int("started_at")?,
                        r.opt_int("finished_at")?,
                        r.opt_text("summary")?,
                    ))
                })
                .transpose()
            }

            async fn record_evaluation(
                &self,
                write: &$crate::UserEvaluation,
            ) -> $crate::StoreResult<$crate::Recorded> {
                use $crate::rows::Cols;
                let (_guard, mut tx) = self.user_tx(&write.user_id).await?;
                // Every state replaced must still be the one read; an alert
                // deleted meanwhile drops its writes.
                let mut gone = std::collections::HashSet::new();
                for s in &write.states {
                    let row = sqlx::query(
                        "SELECT st.evaluation FROM alerts a LEFT JOIN alert_states st \
                         ON st.alert_id = a.id AND st.asset_id = $2 WHERE a.id = $1",
                    )
                    .bind(&s.alert_id)
                    .bind(s.asset_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    let Some(row) = row else {
                        gone.insert(s.alert_id.clone());
                        continue;
                    };
                    if row.opt_text("evaluation")? != s.replaces {
                        tx.rollback().await?;
                        return Ok($crate::Recorded::Stale);
                    }
                }
                for s in write.states.iter().filter(|s| !gone.contains(&s.alert_id)) {
                    sqlx::query(
                        "INSERT INTO alert_states \
                         (alert_id, asset_id, holds, observed, evaluation, updated_at) \
                         VALUES ($1, $2, $3, $4, $5, $6) \
                         ON CONFLICT (alert_id, asset_id) DO UPDATE SET holds = excluded.holds, \
                         observed = excluded.observed, evaluation = excluded.evaluation, \
                         updated_at = excluded.updated_at",
                    )
                    .bind(&s.alert_id)
                    .bind(s.asset_id)
                    .bind(s.holds)
                    .bind(&s.observed)
                    .bind(&write.evaluation)
                    .bind(write.now)
                    .execute(&mut *tx)
                    .await?;
                }
                let (events, calls) = Self::insert_events(&mut tx, write, &gone).await?;
                let digests = match write.digest.as_ref().filter(|_| events > 0) {
                    Some(digest) => Self::queue_digest(&mut tx, write, digest).await?,
                    None => 0,
                };
                tx.commit().await?;
                Ok($crate::Recorded::Done {
                    events,
                    calls,
                    digests,
                })
            }

            async fn events(
                &self,
                user_id: &str,
                unread_only: bool,
                limit: u32,
                offset: u32,
            ) -> $crate::StoreResult<$crate::EventPage> {
                use $crate::rows::Cols;
                let filter = if unread_only {
                    " AND read_at IS NULL"
                } else {
                    ""
                };
                let rows = sqlx::query(&format!(
                    "SELECT id, user_id, alert_id, asset_id, evaluation, body, created_at, \
                     read_at FROM alert_events WHERE user_id = $1{filter} \
                     ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
                ))
                .bind(user_id)
                .bind(i64::from(limit))
                .bind(i64::from(offset))
                .fetch_all(&self.pool)
                .await?;
                let counts = sqlx::query(
                    "SELECT COUNT(*) AS total, \
                     COALESCE(SUM(CASE WHEN read_at IS NULL THEN 1 ELSE 0 END), 0) AS unread \
                     FROM alert_events WHERE user_id = $1",
                )
                .bind(user_id)
                .fetch_one(&self.pool)
                .await?;
                let unread = counts.int("unread")?;
                Ok($crate::EventPage {
                    events: rows
                        .iter()
                        .map($crate::alerts::event_row)
                        .collect::<Result<_, _>>()?,
                    total: if unread_only {
                        unread
                    } else {
                        counts.int("total")?
                    },
                    unread,
                })
            }

            async fn mark_read(
                &self,
                user_id: &str,
                ids: Option<&[String]>,
                now: i64,
            ) -> $crate::StoreResult<u64> {
                let Some(ids) = ids else {
                    let n = sqlx::query(
                        "UPDATE alert_events SET read_at = $2 \
                         WHERE user_id = $1 AND read_at IS NULL",
                    )
                    .bind(user_id)
                    .bind(now)
                    .execute(&self.pool)
                    .await?
                    .rows_affected();
                    return Ok(n);
                };
                let mut tx = self.pool.begin().await?;
                let mut n = 0;
                for id in ids {
                    n += sqlx::query(
                        "UPDATE alert_events SET read_at = $3 \
                         WHERE user_id = $1 AND id = $2 AND read_at IS NULL",
                    )
                    .bind(user_id)
                    .bind(id)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                }
                tx.commit().await?;
                Ok(n)
            }

            async fn purge_alerts(
                &self,
                keep_events: u32,
                before: i64,
            ) -> $crate::StoreResult<u64> {
                let mut tx = self.pool.begin().await?;
                let mut n = sqlx::query(
                    "DELETE FROM alert_events WHERE id IN (SELECT id FROM (SELECT id, \
                     ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY created_at DESC, id DESC) \
                     AS position FROM alert_events) ranked WHERE position > $1)",
                )
                .bind(i64::from(keep_events))
                .execute(&mut *tx)
                .await?
                .rows_affected();
                n += sqlx::query(
                    "DELETE FROM deliveries WHERE status <> 'pending' AND finished_at < $1",
                )
                .bind(before)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                // Keys are counters that only grow: an old one never recurs.
                n += sqlx::query(
                    "DELETE FROM alert_evaluations WHERE finished_at < $1",
                )
                .bind(before)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                tx.commit().await?;
                Ok(n)
            }
        }

        #[async_trait::async_trait]
        impl $crate::WebhookStore for $store {
            async fn create_webhook(
                &self,
                webhook: &$crate::WebhookRecord,
                max: u32,
            ) -> $crate::StoreResult<Option<$crate::WebhookRecord>> {
                use $crate::rows::Cols;
                let (_guard, mut tx) = self.user_tx(&webhook.user_id).await?;
                let n = sqlx::query($crate::alerts::COUNT_WEBHOOKS)
                    .bind(&webhook.user_id)
                    .fetch_one(&mut *tx)
                    .await?
                    .int("n")?;
                if n >= i64::from(max) {
                    tx.rollback().await?;
                    return Ok(None);
                }
                sqlx::query($crate::alerts::INSERT_WEBHOOK)
                    .bind(&webhook.id)
                    .bind(&webhook.user_id)
                    .bind(&webhook.url)
                    .bind(&webhook.secret)
                    .bind(webhook.enabled)
                    .bind(webhook.created_at)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(Some(webhook.clone()))
            }

            async fn webhooks_of(
                &self,
                user_id: &str,
            ) -> $crate::StoreResult<Vec<$crate::WebhookRecord>> {
                let rows = sqlx::query(&format!(
                    "SELECT {} FROM webhooks WHERE user_id = $1 ORDER BY created_at, id",
                    $crate::alerts::WEBHOOK_COLUMNS
                ))
                .bind(user_id)
                .fetch_all(&self.pool)
                .await?;
                rows.iter().map($crate::alerts::webhook_row).collect()
            }

            async fn webhook(
                &self,
                user_id: &str,
                id: &str,
            ) -> $crate::StoreResult<Option<$crate::WebhookRecord>> {
                sqlx::query(&format!(
                    "SELECT {} FROM webhooks WHERE user_id = $1 AND id = $2",
                    $crate::alerts::WEBHOOK_COLUMNS
                ))
                .bind(user_id)
                .bind(id)
                .fetch_optional(&self.pool)
                .await?
                .as_ref()
                .map($crate::alerts::webhook_row)
                .transpose()
            }

            async fn set_webhook_enabled(
                &self,
                user_id: &str,
                id: &str,
                enabled: bool,
            ) -> $crate::StoreResult<bool> {
                let n = sqlx::query(
                    "UPDATE webhooks SET enabled = $3, consecutive_failures = CASE WHEN $3 \
                     THEN 0 ELSE consecutive_failures END, disabled_reason = NULL \
                     WHERE user_id = $1 AND id = $2",
                )
                .bind(user_id)
                .bind(id)
                .bind(enabled)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(n == 1)
            }

            async fn delete_webhook(&self, user_id: &str, id: &str) -> $crate::StoreResult<bool> {
                let n = sqlx::query("DELETE FROM webhooks WHERE user_id = $1 AND id = $2")
                    .bind(user_id)
                    .bind(id)
                    .execute(&self.pool)
                    .await?
                    .rows_affected();
                Ok(n == 1)
            }

            async fn deliveries_of(
                &self,
                webhook_id: &str,
                limit: u32,
            ) -> $crate::StoreResult<Vec<$crate::DeliveryRecord>> {
                let rows = sqlx::query(&format!(
                    "SELECT {} FROM deliveries WHERE webhook_id = $1 \
                     ORDER BY created_at DESC, id DESC LIMIT $2",
                    $crate::alerts::DELIVERY_COLUMNS
                ))
                .bind(webhook_id)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
                rows.iter().map($crate::alerts::delivery_row).collect()
            }

            async fn enqueue_delivery(
                &self,
                d: &$crate::DeliveryRecord,
            ) -> $crate::StoreResult<()> {
                sqlx::query($crate::alerts::INSERT_DELIVERY)
                    .bind(&d.id)
                    .bind(&d.kind)
                    .bind(&d.user_id)
                    .bind(&d.webhook_id)
                    .bind(&d.event_id)
                    .bind(&d.evaluation)
                    .bind(&d.payload)
                    .bind(d.next_at)
                    .bind(d.created_at)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn claim_deliveries(
                &self,
                now_ms: i64,
                limit: u32,
                lease_ms: i64,
            ) -> $crate::StoreResult<Vec<$crate::DueDelivery>> {
                use $crate::rows::Cols;
                let (_guard, mut tx) = self.write_tx().await?;
                let ids = sqlx::query(&format!("{}{}", $crate::alerts::DUE, $due_lock))
                    .bind(now_ms)
                    .bind(i64::from(limit))
                    .fetch_all(&mut *tx)
                    .await?;
                let mut due = Vec::with_capacity(ids.len());
                for id in &ids {
                    let id = id.text("id")?;
                    sqlx::query("UPDATE deliveries SET lease_until = $2 WHERE id = $1")
                        .bind(&id)
                        .bind(now_ms + lease_ms)
                        .execute(&mut *tx)
                        .await?;
                    let row = sqlx::query(&format!(
                        "SELECT {}, (SELECT email FROM users u WHERE u.id = d.user_id) AS email \
                         FROM deliveries d WHERE id = $1",
                        $crate::alerts::DELIVERY_COLUMNS
                    ))
                    .bind(&id)
                    .fetch_one(&mut *tx)
                    .await?;
                    let delivery = $crate::alerts::delivery_row(&row)?;
                    let webhook = match &delivery.webhook_id {
                        Some(w) => sqlx::query(&format!(
                            "SELECT {} FROM webhooks WHERE id = $1",
                            $crate::alerts::WEBHOOK_COLUMNS
                        ))
                        .bind(w)
                        .fetch_optional(&mut *tx)
                        .await?
                        .as_ref()
                        .map($crate::alerts::webhook_row)
                        .transpose()?,
                        None => None,
                    };
                    due.push($crate::DueDelivery {
                        delivery,
                        webhook,
                        email: row.text("email")?,
                    });
                }
                tx.commit().await?;
                Ok(due)
            }

            async fn finish_delivery(&self, a: &$crate::Attempt) -> $crate::StoreResult<()> {
                use $crate::rows::Cols;
                let (_guard, mut tx) = self.write_tx().await?;
                let row = sqlx::query(
                    "UPDATE deliveries SET attempts = attempts + 1, lease_until = NULL, \
                     last_status = $2, last_error = $3, \
                     status = CASE WHEN $4 THEN 'delivered' WHEN $5 THEN 'pending' \
                     ELSE 'failed' END, next_at = COALESCE($6, next_at), \
                     finished_at = CASE WHEN $4 OR NOT $5 THEN $7 ELSE NULL END \
                     WHERE id = $1 RETURNING webhook_id",
                )
                .bind(&a.id)
                .bind(a.status)
                .bind(&a.error)
                .bind(a.delivered)
                .bind(a.retry_at.is_some())
                .bind(a.retry_at)
                .bind(a.now)
                .fetch_optional(&mut *tx)
                .await?;
                let webhook = match row {
                    Some(r) => r.opt_text("webhook_id")?,
                    None => None,
                };
                if let Some(webhook) = webhook {
                    if a.delivered {
                        sqlx::query("UPDATE webhooks SET consecutive_failures = 0 WHERE id = $1")
                            .bind(&webhook)
                            .execute(&mut *tx)
                            .await?;
                    } else {
                        let failures = sqlx::query(
                            "UPDATE webhooks SET consecutive_failures = consecutive_failures + 1 \
                             WHERE id = $1 RETURNING consecutive_failures, enabled",
                        )
                        .bind(&webhook)
                        .fetch_one(&mut *tx)
                        .await?;
                        if failures.flag("enabled")?
                            && failures.int("consecutive_failures")? >= a.max_failures
                        {
                            let reason = format!(
                                "disabled after {} consecutive failed attempts",
                                a.max_failures
                            );
                            sqlx::query(
                                "UPDATE webhooks SET enabled = $2, disabled_reason = $3 \
                                 WHERE id = $1",
                            )
                            .bind(&webhook)
                            .bind(false)
                            .bind(&reason)
                            .execute(&mut *tx)
                            .await?;
                            sqlx::query(
                                "UPDATE deliveries SET status = 'failed', finished_at = $2, \
                                 last_error = $3, lease_until = NULL \
                                 WHERE webhook_id = $1 AND status = 'pending'",
                            )
                            .bind(&webhook)
                            .bind(a.now)
                            .bind(format!("not sent: the endpoint was {reason}"))
                            .execute(&mut *tx)
                            .await?;
                        }
                    }
                }
                tx.commit().await?;
                Ok(())
            }

            async fn pending_deliveries(&self) -> $crate::StoreResult<i64> {
                use $crate::rows::Cols;
                Ok(sqlx::query(
                    "SELECT COUNT(*) AS n FROM deliveries WHERE status = 'pending'",
                )
                .fetch_one(&self.pool)
                .await?
                .int("n")?)
            }
        }
    };
}
pub(crate) use impl_alert_store;

pub(crate) const INSERT_DELIVERY: &str = "INSERT INTO deliveries \
     (id, kind, user_id, webhook_id, event_id, evaluation, payload, status, attempts, next_at, \
     created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $8, $9)";
