//! Sending what evaluations queued: webhook calls signed with
//! HMAC-SHA256 and e-mail digests over SMTP, each attempt logged, retried
//! with exponential backoff, and an endpoint disabled after
//! `max_failures` consecutive failed attempts.
//!
//! A webhook target must be `http` or `https`; unless the operator allows
//! it (`FORECAST_WEBHOOK_ALLOW_PRIVATE`), every address its host resolves
//! to must be public (no loopback, private, link-local, shared, multicast
//! or reserved range), checked at creation and again at every attempt, and
//! the call connects to the address that was checked. Redirects are not
//! followed: a 3xx answer is a failed attempt.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use chrono::{DateTime, Utc};
use forecast_api::alerts::{AlertEvent, AlertSpec, Condition, Observation, WebhookPayload};
use forecast_domain::Metric;
use forecast_store::{Attempt, DeliveryRecord, DueDelivery, WebhookRecord};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::task::JoinSet;

use super::AlertService;
use forecast_services::error::Error;

/// A claimed delivery not finished within this long (milliseconds) may be
/// claimed again.
const LEASE_MS: i64 = 120_000;
/// Bytes of an answer's body kept in an error message.
const QUOTED_ANSWER: usize = 200;
/// Deliveries in flight at once in one process, each of another account.
const LANES: usize = 16;

/// A delivery task's outcome, a panic or cancellation as an error.
fn finished(
    joined: Result<Result<Attempt, Error>, tokio::task::JoinError>,
) -> Result<Attempt, Error> {
    joined.map_err(|e| Error::Internal(format!("a delivery task ended: {e}")))?
}

impl DeliverySummary {
    fn count(&mut self, a: &Attempt) {
        match (a.delivered, a.retry_at) {
            (true, _) => self.delivered += 1,
            (false, Some(_)) => self.retrying += 1,
            (false, None) => self.failed += 1,
        }
    }
}

/// The SMTP server of the e-mail digest.
#[derive(Debug, Clone)]
pub struct SmtpSettings {
    /// `smtp://host:port`, `smtps://…` or `smtp://…?tls=required`, with
    /// optional credentials (lettre's URL form).
    pub url: String,
    /// The `From` address.
    pub from: String,
}

/// What one pass over the outbox did.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct DeliverySummary {
    /// Delivered.
    pub delivered: usize,
    /// Failed and scheduled again.
    pub retrying: usize,
    /// Failed and given up.
    pub failed: usize,
}

/// `X-Forecast-Signature` of `body` sent at `t` (Unix seconds):
/// `t=<t>,v1=<hex of HMAC-SHA256(secret, "<t>.<body>")>`.
pub fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// A new signing secret: `whsec_` and 32 random bytes in hex.
pub(super) fn new_secret() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("whsec_{}", hex::encode(bytes))
}

/// The first [`QUOTED_ANSWER`] characters of an answer's body, reading at
/// most their worst case in UTF-8 bytes; the rest is never read (dropping
/// the answer drops its connection), so an endless or huge error body
/// costs nothing.
async fn quoted_body(mut answer: reqwest::Response) -> String {
    let cap = QUOTED_ANSWER * 4;
    let mut bytes = Vec::with_capacity(cap);
    while bytes.len() < cap {
        match answer.chunk().await {
            Ok(Some(chunk)) => {
                let room = cap - bytes.len();
                bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&bytes)
        .chars()
        .take(QUOTED_ANSWER)
        .collect()
}

/// Whether `ip` is an address on the public internet. An IPv6 address
/// that stands for an IPv4 one (IPv4-mapped `::ffff:0:0/96`, IPv4-translated
/// `::ffff:0:0:0/96`) is judged as that IPv4 address; the deprecated and
/// transition ranges that embed one (IPv4-compatible `::/96`, 6to4, Teredo,
/// NAT64) are refused whatever they embed, as are the special-purpose
/// ranges of the IANA registries (docs/ALERTS.md).
fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

/// The IPv4 address an IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-translated
/// (`::ffff:0:a.b.c.d`) IPv6 address stands for.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let v4 = || Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    let mapped = s[..5] == [0; 5] && s[5] == 0xffff;
    let translated = s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0;
    (mapped || translated).then(v4)
}

fn is_public_v6(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    !(s[..6] == [0; 6] // unspecified, loopback, IPv4-compatible (deprecated)
        || v6.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || s[..4] == [0x0100, 0, 0, 0] // discard-only
        || (s[0] == 0x0064 && s[1] == 0xff9b) // NAT64, well-known and local
        || s[0] == 0x2002 // 6to4
        || (s[0] == 0x2001 && s[1] == 0) // Teredo
        || (s[0] == 0x2001 && s[1] == 0x0002 && s[2] == 0) // benchmarking
        || (s[0] == 0x2001 && (s[1] & 0xfff0) == 0x0010) // ORCHID (deprecated)
        || (s[0] == 0x2001 && (s[1] & 0xfff0) == 0x0020) // ORCHIDv2
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || s[0] == 0x3ffe // 6bone (returned)
        || s[0] == 0x5f00) // segment routing
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast (deprecated)
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || a >= 240) // reserved
}

/// The URL's host and the addresses a call may connect to, or why the
/// URL is refused.
async fn resolve(
    url: &str,
    allow_private: bool,
) -> Result<(reqwest::Url, Vec<SocketAddr>), String> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| format!("url '{}' is not a URL: {e}", forecast_api::quote(url)))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "url must be http or https (got '{}')",
            forecast_api::quote(parsed.scheme())
        ));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| "url has no host".to_string())?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| "url has no port".to_string())?;
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::lookup_host((host.as_str(), port)),
        )
        .await
        .map_err(|_| {
            format!(
                "the host '{}' did not resolve within 5 s",
                forecast_api::quote(&host)
            )
        })?
        .map_err(|e| {
            format!(
                "the host '{}' does not resolve: {e}",
                forecast_api::quote(&host)
            )
        })?
        .collect(),
    };
    if addrs.is_empty() {
        return Err(format!(
            "the host '{}' has no address",
            forecast_api::quote(&host)
        ));
    }
    if !allow_private {
        if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
            return Err(format!(
                "url points at {} (private, loopback, link-local or reserved), which webhooks \
                 may not call; the operator may allow it with FORECAST_WEBHOOK_ALLOW_PRIVATE",
                bad.ip()
            ));
        }
    }
    Ok((parsed, addrs))
}

/// Refuses a webhook URL a call could not or may not be made to.
pub(super) async fn check_target(url: &str, allow_private: bool) -> Result<(), Error> {
    resolve(url, allow_private)
        .await
        .map(|_| ())
        .map_err(Error::Invalid)
}

/// A sample event for test calls, created at `now`.
fn sample_event(now: DateTime<Utc>) -> AlertEvent {
    let observed = Observation {
        letter: Some("B".into()),
        drawdown: Some(-0.214),
        bucket: Some(4),
        ..Observation::default()
    };
    AlertEvent {
        id: uuid::Uuid::new_v4().to_string(),
        alert_id: "00000000-0000-0000-0000-000000000000".into(),
        ticker: "EXAMPLE".into(),
        name: "A test call: no alert fired".into(),
        alert: AlertSpec {
            condition: Condition::DrawdownBelow,
            level: Some(-0.2),
            bucket: None,
            top_n: None,
            return_period: 90,
            metric: Metric::Return,
            category: None,
            email: false,
        },
        message: "EXAMPLE: a test call from Forecast Engine".into(),
        before: None,
        after: observed,
        run_id: None,
        evaluation: "test".into(),
        engine_version: String::new(),
        scorer_version: String::new(),
        created_at: now,
        read: false,
    }
}

impl AlertService {
    /// One attempt at a webhook call: `Ok(status)` for a 2xx, else why not.
    async fn call(
        &self,
        w: &WebhookRecord,
        d: &DeliveryRecord,
    ) -> Result<i64, (Option<i64>, String)> {
        let (url, addrs) = resolve(&w.url, self.settings.allow_private)
            .await
            .map_err(|e| (None, e))?;
        let host = url.host_str().unwrap_or_default().to_string();
        let mut client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.settings.attempt_timeout)
            .connect_timeout(self.settings.attempt_timeout)
            .user_agent(concat!(
                "forecast-engine-webhooks/",
                env!("CARGO_PKG_VERSION")
            ));
        if host.parse::<IpAddr>().is_err() {
            // Connect to the addresses that were checked, not to whatever
            // the name resolves to a moment later.
            client = client.resolve_to_addrs(&host, &addrs);
        }
        let client = client
            .build()
            .map_err(|e| (None, format!("cannot build the client: {e}")))?;
        let t = self.clock.timestamp();
        let kind = if d.event_id.is_some() {
            "alert.fired"
        } else {
            "alert.test"
        };
        let answer = client
            .post(url)
            .header("content-type", "application/json")
            .header(
                "x-forecast-signature",
                sign(&w.secret, t, d.payload.as_bytes()),
            )
            .header("x-forecast-delivery", &d.id)
            .header("x-forecast-event", kind)
            .body(d.payload.clone())
            .send()
            .await
            .map_err(|e| {
                let why = if e.is_timeout() {
                    format!(
                        "no answer within {} s",
                        self.settings.attempt_timeout.as_secs()
                    )
                } else if e.is_connect() {
                    "could not connect".to_string()
                } else {
                    format!("the call failed: {e}")
                };
                (None, why)
            })?;
        let status = i64::from(answer.status().as_u16());
        if answer.status().is_success() {
            return Ok(status);
        }
        if answer.status().is_redirection() {
            let to = answer
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            return Err((
                Some(status),
                format!(
                    "answered {status} (a redirect to '{}'), which is not followed",
                    forecast_api::quote(&to)
                ),
            ));
        }
        let body = quoted_body(answer).await;
        Err((Some(status), format!("answered {status}: {body}")))
    }

    /// One attempt at a digest.
    async fn mail(&self, to: &str, d: &DeliveryRecord) -> Result<(), String> {
        use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
        let Some(smtp) = &self.settings.smtp else {
            return Err("no SMTP server is configured (FORECAST_SMTP_URL)".into());
        };
        let payload: serde_json::Value =
            serde_json::from_str(&d.payload).map_err(|e| format!("unreadable digest: {e}"))?;
        let text = |k: &str| {
            payload
                .get(k)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        let message = Message::builder()
            .from(
                smtp.from
                    .parse()
                    .map_err(|e| format!("FORECAST_SMTP_FROM: {e}"))?,
            )
            .to(to.parse().map_err(|e| format!("the address '{to}': {e}"))?)
            .subject(text("subject"))
            .header(lettre::message::header::ContentType::TEXT_PLAIN)
            .body(text("text"))
            .map_err(|e| format!("cannot build the message: {e}"))?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&smtp.url)
            .map_err(|e| format!("FORECAST_SMTP_URL: {e}"))?
            .timeout(Some(self.settings.attempt_timeout))
            .build();
        transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| format!("the SMTP server refused or failed: {e}"))
    }

    /// When (Unix milliseconds) a failed attempt is retried, if it is: the
    /// base delay doubled per attempt made, up to `max_attempts`.
    fn retry_at(&self, d: &DeliveryRecord, now_ms: i64) -> Option<i64> {
        let made = d.attempts + 1;
        if d.kind == "webhook" && d.event_id.is_none() {
            return None; // a test call is tried once
        }
        if made >= i64::from(self.settings.max_attempts) {
            return None;
        }
        let base = self.settings.retry_base.as_millis().max(1) as i64;
        Some(now_ms + base.saturating_mul(1 << (made - 1).min(20)))
    }

    async fn attempt(&self, due: &DueDelivery) -> Result<Attempt, Error> {
        let d = &due.delivery;
        let outcome = match (&d.kind[..], &due.webhook) {
            ("webhook", Some(w)) => self.call(w, d).await.map(Some),
            ("webhook", None) => Err((None, "the endpoint was deleted".into())),
            _ => self
                .mail(&due.email, d)
                .await
                .map(|_| None)
                .map_err(|e| (None, e)),
        };
        let (now, now_ms) = (self.clock.timestamp(), self.clock.timestamp_millis());
        Ok(match outcome {
            Ok(status) => Attempt {
                id: d.id.clone(),
                delivered: true,
                status,
                error: None,
                retry_at: None,
                max_failures: i64::from(self.settings.max_failures),
                now,
            },
            Err((status, error)) => Attempt {
                id: d.id.clone(),
                delivered: false,
                status,
                error: Some(error),
                retry_at: self.retry_at(d, now_ms),
                max_failures: i64::from(self.settings.max_failures),
                now,
            },
        })
    }

    /// Claims what fits in the free lanes (at most one delivery per
    /// account, none of an account with one in flight) and starts each on
    /// a task of its own; how many it started.
    async fn fill(&self, running: &mut JoinSet<Result<Attempt, Error>>) -> Result<usize, Error> {
        let room = LANES.saturating_sub(running.len());
        if room == 0 {
            return Ok(0);
        }
        let now_ms = self.clock.timestamp_millis();
        let due = self
            .store
            .claim_deliveries(now_ms, room as u32, LEASE_MS)
            .await?;
        let started = due.len();
        for d in due {
            let this = self.clone();
            running.spawn(async move {
                let a = this.attempt(&d).await?;
                if !a.delivered {
                    tracing::warn!(
                        delivery = %d.delivery.id,
                        kind = %d.delivery.kind,
                        error = a.error.as_deref().unwrap_or(""),
                        retry = a.retry_at.is_some(),
                        "alerts: a delivery attempt failed"
                    );
                }
                this.store.finish_delivery(&a).await?;
                Ok(a)
            });
        }
        Ok(started)
    }

    /// Sends every delivery due now, each account's one at a time and
    /// different accounts' side by side, until none is due and none is in
    /// flight; what it did.
    pub async fn deliver_due(&self) -> Result<DeliverySummary, Error> {
        let mut summary = DeliverySummary::default();
        let mut running = JoinSet::new();
        loop {
            if self.fill(&mut running).await? > 0 {
                continue;
            }
            match running.join_next().await {
                None => return Ok(summary),
                Some(joined) => summary.count(&finished(joined)?),
            }
        }
    }

    /// Sends deliveries as they fall due, as [`AlertService::deliver_due`]
    /// does, until the future is dropped (which stops the calls in flight;
    /// their leases end and another pass takes them again). Looks again
    /// whenever a delivery finishes, `wake` is notified (an evaluation
    /// queued calls) or `interval` passes.
    pub(super) async fn deliver_forever(&self, wake: &tokio::sync::Notify) {
        let mut running = JoinSet::new();
        loop {
            match self.fill(&mut running).await {
                Ok(0) => {}
                Ok(_) => continue,
                Err(e) => tracing::warn!(error = %e, "alerts: claiming deliveries failed"),
            }
            tokio::select! {
                Some(joined) = running.join_next(), if !running.is_empty() => {
                    if let Err(e) = finished(joined) {
                        tracing::warn!(error = %e, "alerts: delivery failed");
                    }
                }
                _ = wake.notified() => {}
                _ = tokio::time::sleep(self.settings.interval) => {}
            }
        }
    }

    /// Sends a sample event to `w` now, once, logged like any call.
    pub(super) async fn send_test(&self, w: &WebhookRecord) -> Result<DeliveryRecord, Error> {
        let payload = WebhookPayload {
            kind: "alert.test".into(),
            event: sample_event(self.clock.now()),
        };
        let now = self.clock.timestamp();
        let record = DeliveryRecord {
            id: uuid::Uuid::new_v4().to_string(),
            kind: "webhook".into(),
            user_id: w.user_id.clone(),
            webhook_id: Some(w.id.clone()),
            event_id: None,
            evaluation: None,
            payload: serde_json::to_string(&payload).map_err(|e| Error::Internal(e.to_string()))?,
            status: "pending".into(),
            attempts: 0,
            // Not due for the outbox: this call is made here and now.
            next_at: (now + 86_400) * 1000,
            last_status: None,
            last_error: None,
            created_at: now,
            finished_at: None,
        };
        self.store.enqueue_delivery(&record).await?;
        let due = DueDelivery {
            delivery: record.clone(),
            webhook: Some(w.clone()),
            email: String::new(),
        };
        let a = self.attempt(&due).await?;
        self.store.finish_delivery(&a).await?;
        let log = self
            .store
            .deliveries_of(&w.id, forecast_api::alerts::DELIVERY_LOG)
            .await?;
        Ok(log
            .into_iter()
            .find(|d| d.id == record.id)
            .unwrap_or(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_time_dot_body() {
        // RFC 4231 test case 2's key and data, framed as "<t>.<body>".
        let header = sign("Jefe", 1, b"what do ya want for nothing?");
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"1.what do ya want for nothing?");
        let want = hex::encode(mac.finalize().into_bytes());
        assert_eq!(header, format!("t=1,v1={want}"));
        assert_ne!(sign("Jefe", 2, b"what do ya want for nothing?"), header);
    }

    /// Every form of a non-public address, IPv4 embedded in IPv6 included
    /// (issue 40's list first), and public ones of each family.
    #[test]
    fn private_and_reserved_addresses_are_not_public() {
        let refused = [
            // IPv4
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "203.0.113.9",
            "224.0.0.1",
            "240.0.0.1",
            "192.88.99.1",
            // IPv6 native
            "::",
            "::1",
            "fd00::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "100::1",
            "2001:db8::1",
            "2001:2::1",
            "2001:10::1",
            "2001:20::1",
            "3ffe::1",
            "5f00::1",
            // IPv4 inside IPv6: mapped, translated, compatible, 6to4, Teredo, NAT64
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:0:127.0.0.1",
            "::ffff:0:169.254.169.254",
            "::127.0.0.1",
            "::10.0.0.1",
            "::8.8.8.8",
            "2002:7f00:1::",
            "2002:808:808::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001::1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::8.8.8.8",
            "64:ff9b:1::a00:1",
        ];
        for ip in refused {
            assert!(!is_public(ip.parse().unwrap()), "{ip} passed");
        }
        let public = [
            "93.184.216.34",
            "1.1.1.1",
            "8.8.8.8",
            "::ffff:8.8.8.8",
            "::ffff:0:8.8.8.8",
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "2a00:1450:4001::200e",
        ];
        for ip in public {
            assert!(is_public(ip.parse().unwrap()), "{ip} refused");
        }
    }

    /// An error answer of 1 GiB (announced, and sent as fast as the socket
    /// takes it) is quoted from its first 200 characters; the rest is never
    /// read: the sender gets only what the socket buffers held before the
    /// connection was dropped.
    #[tokio::test]
    async fn a_huge_error_body_is_quoted_without_reading_it() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sender = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = [0u8; 4096];
            let _ = socket.read(&mut head).await.unwrap();
            socket
                .write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 1073741824\r\n\r\n",
                )
                .await
                .unwrap();
            let chunk = vec![b'x'; 64 << 10];
            let mut sent = 0usize;
            while sent < 1 << 30 {
                match socket.write_all(&chunk).await {
                    Ok(()) => sent += chunk.len(),
                    Err(_) => break,
                }
            }
            sent
        });
        let answer = reqwest::get(format!("http://{addr}/")).await.unwrap();
        assert_eq!(answer.status().as_u16(), 500);
        let quoted = quoted_body(answer).await;
        assert_eq!(quoted, "x".repeat(QUOTED_ANSWER));
        let sent = tokio::time::timeout(Duration::from_secs(10), sender)
            .await
            .expect("the sender stops once the connection is dropped")
            .unwrap();
        assert!(sent < 64 << 20, "{sent} bytes were taken of 1 GiB");
    }

    #[tokio::test]
    async fn targets_are_checked_before_any_call() {
        for (url, needle) in [
            ("ftp://example.com/x", "http or https"),
            ("not a url", "not a URL"),
            ("http://127.0.0.1/x", "FORECAST_WEBHOOK_ALLOW_PRIVATE"),
            ("http://[::1]:9/x", "FORECAST_WEBHOOK_ALLOW_PRIVATE"),
            (
                "http://169.254.169.254/latest",
                "FORECAST_WEBHOOK_ALLOW_PRIVATE",
            ),
        ] {
            let e = resolve(url, false).await.expect_err(url);
            assert!(e.contains(needle), "{url}: {e}");
        }
        assert!(resolve("http://127.0.0.1/x", true).await.is_ok());
    }
}
