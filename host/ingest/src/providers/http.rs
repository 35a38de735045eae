//! The network side of a fetch: one shared client, a polite rate limit
//! over every request of a run (retries included), bounded retries with
//! exponential backoff and jitter on 429, 5xx and transport errors that
//! honour `Retry-After` (seconds or an HTTP date, capped), a per-request
//! time-out and a cap on the body size.

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::DefaultClock;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use rand::Rng;

use super::PriceProvider;

/// The User-Agent of every request: the project and its version.
pub const USER_AGENT: &str = concat!(
    "forecast-engine/",
    env!("CARGO_PKG_VERSION"),
    " (Forecast Engine daily price fetch)"
);

/// How the requests of a run behave.
#[derive(Debug, Clone)]
pub struct HttpPolicy {
    /// Requests per second over the whole run (≥ 1), without bursts.
    pub rate_per_second: u32,
    /// Attempts per asset, the first included (≥ 1).
    pub max_attempts: u32,
    /// The first retry's backoff; each later one doubles it.
    pub backoff_base: Duration,
    /// The longest backoff between two attempts.
    pub backoff_max: Duration,
    /// The longest `Retry-After` honoured (a longer one waits this long).
    pub retry_after_cap: Duration,
    /// Time-out of one request, from sending to the whole body.
    pub request_timeout: Duration,
    /// The largest body accepted; a bigger one fails the asset.
    pub max_body_bytes: usize,
}

impl Default for HttpPolicy {
    fn default() -> Self {
        HttpPolicy {
            rate_per_second: 2,
            max_attempts: 4,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            retry_after_cap: Duration::from_secs(60),
            request_timeout: Duration::from_secs(30),
            max_body_bytes: 20 * 1024 * 1024,
        }
    }
}

/// A body fetched, or why not.
#[derive(Debug)]
pub struct Fetched {
    /// The body of the successful answer, or the failure's message.
    pub body: Result<Vec<u8>, String>,
    /// Requests sent for it.
    pub attempts: u32,
}

/// The client, the limiter and the shared pause of one run.
pub struct Http {
    client: reqwest::Client,
    limiter: RateLimiter<NotKeyed, InMemoryState, DefaultClock>,
    /// No request starts before this instant: a 429's `Retry-After`
    /// pauses the whole run, not only the asset that got it.
    paused_until: Mutex<Option<Instant>>,
    policy: HttpPolicy,
    /// What a `Retry-After` date is counted from.
    clock: forecast_domain::SharedClock,
}

/// One attempt's failure: its message, whether to retry, and the wait
/// the server asked for.
struct AttemptError {
    message: String,
    retry: bool,
    retry_after: Option<Duration>,
}

impl Http {
    /// A client for one run.
    pub fn new(policy: HttpPolicy, clock: forecast_domain::SharedClock) -> Result<Http, String> {
        let client = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .timeout(policy.request_timeout)
            .connect_timeout(policy.request_timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let rate = NonZeroU32::new(policy.rate_per_second.max(1)).expect("at least 1");
        let limiter = RateLimiter::direct(Quota::per_second(rate).allow_burst(NonZeroU32::MIN));
        Ok(Http {
            client,
            limiter,
            paused_until: Mutex::new(None),
            policy,
            clock,
        })
    }

    /// GETs `url` with the run's retries; the body of a 2xx answer, or the
    /// message of the last failure (`provider` words non-retried errors).
    pub async fn get(&self, provider: &dyn PriceProvider, url: &str) -> Fetched {
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.wait_turn().await;
            let err = match self.attempt(provider, url).await {
                Ok(body) => {
                    return Fetched {
                        body: Ok(body),
                        attempts: attempt,
                    }
                }
                Err(e) => e,
            };
            if !err.retry || attempt >= self.policy.max_attempts {
                let message = if attempt > 1 {
                    format!("{} (after {attempt} attempts)", err.message)
                } else {
                    err.message
                };
                return Fetched {
                    body: Err(message),
                    attempts: attempt,
                };
            }
            let backoff = jittered(backoff(&self.policy, attempt));
            let wait = match err.retry_after {
                Some(ra) => {
                    let ra = ra.min(self.policy.retry_after_cap);
                    self.pause_until(Instant::now() + ra);
                    ra.max(backoff)
                }
                None => backoff,
            };
            tracing::debug!(url, attempt, error = %err.message, wait_ms = wait.as_millis() as u64, "fetch: retrying");
            tokio::time::sleep(wait).await;
        }
    }

    /// Waits for the run's pause (if any) and the rate limiter.
    async fn wait_turn(&self) {
        loop {
            let until = *self.paused_until.lock().expect("pause lock");
            match until {
                Some(t) if t > Instant::now() => tokio::time::sleep_until(t.into()).await,
                _ => break,
            }
        }
        self.limiter.until_ready().await;
    }

    fn pause_until(&self, t: Instant) {
        let mut p = self.paused_until.lock().expect("pause lock");
        if p.is_none_or(|old| old < t) {
            *p = Some(t);
        }
    }

    async fn attempt(
        &self,
        provider: &dyn PriceProvider,
        url: &str,
    ) -> Result<Vec<u8>, AttemptError> {
        let transport = |e: reqwest::Error| AttemptError {
            message: describe_transport(&e),
            retry: true,
            retry_after: None,
        };
        let mut resp = self.client.get(url).send().await.map_err(transport)?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, self.clock.now()));
        let cap = self.policy.max_body_bytes;
        if status.is_success() {
            if let Some(len) = resp.content_length() {
                if len > cap as u64 {
                    return Err(too_big(cap));
                }
            }
        }
        // Error bodies are read only for their message.
        let limit = if status.is_success() { cap } else { 64 * 1024 };
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > limit {
                        if status.is_success() {
                            return Err(too_big(cap));
                        }
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) if status.is_success() => return Err(transport(e)),
                Err(_) => break,
            }
        }
        if status.is_success() {
            return Ok(body);
        }
        let code = status.as_u16();
        let retry = code == 429 || status.is_server_error();
        let message = if retry {
            let reason = status.canonical_reason().unwrap_or("error");
            format!("HTTP {code} {reason}")
        } else {
            provider.describe_error(code, &body)
        };
        Err(AttemptError {
            message,
            retry,
            retry_after,
        })
    }
}

fn too_big(cap: usize) -> AttemptError {
    AttemptError {
        message: format!("answer larger than {} MiB", cap / (1024 * 1024)),
        retry: false,
        retry_after: None,
    }
}

fn describe_transport(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "answer cut off"
    } else {
        "request failed"
    };
    // The source chain says why (refused, reset, …) without the URL.
    let mut cause = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    if cause.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {cause}")
    }
}

/// The backoff before attempt `failed + 1`: base × 2^(failed − 1), capped.
pub fn backoff(policy: &HttpPolicy, failed: u32) -> Duration {
    let factor = 1u32 << failed.saturating_sub(1).min(16);
    policy
        .backoff_base
        .saturating_mul(factor)
        .min(policy.backoff_max)
}

/// A delay drawn uniformly from `[d/2, d]` ("equal jitter"), so workers
/// that failed together do not retry together.
pub fn jittered(d: Duration) -> Duration {
    if d.is_zero() {
        return d;
    }
    let half = d / 2;
    half + rand::thread_rng().gen_range(Duration::ZERO..=d - half)
}

/// A `Retry-After` value: delay seconds or an HTTP date (RFC 9110), as a
/// wait from `now`; a date in the past is no wait, garbage is `None`.
pub fn parse_retry_after(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = (when.with_timezone(&chrono::Utc) - now)
        .to_std()
        .unwrap_or(Duration::ZERO);
    Some(wait)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let now = chrono::Utc.with_ymd_and_hms(2024, 6, 3, 12, 0, 0).unwrap();
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Mon, 03 Jun 2024 12:00:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Mon, 03 Jun 2024 11:00:00 GMT", now),
            Some(Duration::ZERO),
            "a date in the past: no wait"
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter() {
        let p = HttpPolicy::default();
        assert_eq!(backoff(&p, 1), Duration::from_millis(500));
        assert_eq!(backoff(&p, 2), Duration::from_secs(1));
        assert_eq!(backoff(&p, 3), Duration::from_secs(2));
        assert_eq!(backoff(&p, 40), Duration::from_secs(30));
        for _ in 0..200 {
            let j = jittered(Duration::from_secs(2));
            assert!(
                j >= Duration::from_secs(1) && j <= Duration::from_secs(2),
                "{j:?}"
            );
        }
        let spread: std::collections::HashSet<_> =
            (0..50).map(|_| jittered(Duration::from_secs(2))).collect();
        assert!(spread.len() > 10, "jitter varies");
    }

    #[test]
    fn user_agent_names_the_project() {
        assert!(USER_AGENT.starts_with("forecast-engine/"));
    }
}
