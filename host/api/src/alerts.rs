//! `/api/alerts` (issue 30): alerts on an asset or on the whole watchlist,
//! the events they fire, and the webhook endpoints events are sent to —
//! every request and response body, its schema and its validation.

use chrono::{DateTime, NaiveDate, Utc};
use forecast_domain::{defaults, Category, Metric};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::Invalid;

/// Alerts one user may have.
pub const MAX_ALERTS_PER_USER: u32 = 50;
/// Webhook endpoints one user may have.
pub const MAX_WEBHOOKS_PER_USER: u32 = 5;
/// The longest webhook URL, in bytes.
pub const MAX_URL_BYTES: usize = 2048;
/// The largest `top_n`.
pub const MAX_TOP_N: u32 = 100;
/// Events one page holds at most.
pub const MAX_EVENTS_PAGE: u32 = 100;
/// Events one page holds by default.
pub const DEFAULT_EVENTS_PAGE: u32 = 20;
/// The largest events `offset`.
pub const MAX_EVENTS_OFFSET: u32 = 100_000;
/// Event ids one mark-read request names at most.
pub const MAX_MARK_IDS: usize = 100;
/// Deliveries a log shows (the newest).
pub const DELIVERY_LOG: u32 = 50;
/// Events kept per user (the newest); older ones are forgotten.
pub const MAX_EVENTS_PER_USER: u32 = 1000;
/// Days finished deliveries and evaluations are kept.
pub const RETENTION_DAYS: i64 = 30;

/// What an alert watches. `*_changed` conditions fire whenever the value
/// differs from the last evaluation's; the others fire when they become
/// true (edge-triggered), and once on the first evaluation of a new or
/// changed alert whose condition already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// The grade letter changed.
    GradeChanged,
    /// The drawdown moved into another bucket.
    BucketChanged,
    /// The drawdown entered bucket `bucket`.
    BucketEntered,
    /// The drawdown left bucket `bucket`.
    BucketLeft,
    /// The drawdown is at or below `level` (e.g. -0.2: 20 % under the high).
    DrawdownBelow,
    /// The drawdown is at or above `level` (recovered to within it).
    DrawdownAbove,
    /// The verdict's rolling median forward return is at or above `level`.
    MedianReturnAbove,
    /// The verdict's rolling median forward return is at or below `level`.
    MedianReturnBelow,
    /// The asset is among the first `top_n` of the ranking.
    TopNEntered,
    /// The asset is ranked, but not among the first `top_n`.
    TopNLeft,
}

impl Condition {
    /// Every condition.
    pub const ALL: [Condition; 10] = [
        Condition::GradeChanged,
        Condition::BucketChanged,
        Condition::BucketEntered,
        Condition::BucketLeft,
        Condition::DrawdownBelow,
        Condition::DrawdownAbove,
        Condition::MedianReturnAbove,
        Condition::MedianReturnBelow,
        Condition::TopNEntered,
        Condition::TopNLeft,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::GradeChanged => "grade_changed",
            Condition::BucketChanged => "bucket_changed",
            Condition::BucketEntered => "bucket_entered",
            Condition::BucketLeft => "bucket_left",
            Condition::DrawdownBelow => "drawdown_below",
            Condition::DrawdownAbove => "drawdown_above",
            Condition::MedianReturnAbove => "median_return_above",
            Condition::MedianReturnBelow => "median_return_below",
            Condition::TopNEntered => "top_n_entered",
            Condition::TopNLeft => "top_n_left",
        }
    }

    /// Whether it fires on any change of a value (not on becoming true).
    pub fn on_change(self) -> bool {
        matches!(self, Condition::GradeChanged | Condition::BucketChanged)
    }

    /// Which parameter it needs, if any.
    fn needs(self) -> Option<&'static str> {
        match self {
            Condition::GradeChanged | Condition::BucketChanged => None,
            Condition::BucketEntered | Condition::BucketLeft => Some("bucket"),
            Condition::DrawdownBelow
            | Condition::DrawdownAbove
            | Condition::MedianReturnAbove
            | Condition::MedianReturnBelow => Some("level"),
            Condition::TopNEntered | Condition::TopNLeft => Some("top_n"),
        }
    }
}

/// An alert's condition and parameters, as stored and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AlertSpec {
    /// What it watches.
    pub condition: Condition,
    /// The level of `drawdown_*` (a fraction in [-1, 0]) and
    /// `median_return_*` (a fraction in [-1, 10]).
    pub level: Option<f64>,
    /// The bucket of `bucket_entered` / `bucket_left`: 0 (nearest the
    /// high) to 19, of the verdict's 20 equal-width buckets.
    pub bucket: Option<u32>,
    /// N of `top_n_*` (1 to 100).
    pub top_n: Option<u32>,
    /// The graded horizon of the verdict or ranking watched.
    pub return_period: u32,
    /// The graded metric of the verdict or ranking watched.
    pub metric: Metric,
    /// `top_n_*`: the ranking within this category only.
    pub category: Option<Category>,
    /// Whether its events go into the owner's e-mail digest.
    pub email: bool,
}

impl AlertSpec {
    /// Checks the parameters against the condition: the one it needs is
    /// there and in bounds, no other is given.
    pub fn validate(&self) -> Result<(), Invalid> {
        let c = self.condition;
        let given = [
            ("level", self.level.is_some()),
            ("bucket", self.bucket.is_some()),
            ("top_n", self.top_n.is_some()),
        ];
        for (name, is_given) in given {
            let needed = c.needs() == Some(name);
            if needed && !is_given {
                return Err(Invalid(format!("{name} is required for {}", c.as_str())));
            }
            if !needed && is_given {
                return Err(Invalid(format!(
                    "{name} does not apply to {} (it takes {})",
                    c.as_str(),
                    c.needs().unwrap_or("no parameter")
                )));
            }
        }
        if let Some(level) = self.level {
            let (lo, hi) = match c {
                Condition::DrawdownBelow | Condition::DrawdownAbove => (-1.0, 0.0),
                _ => (-1.0, 10.0),
            };
            if !level.is_finite() || level < lo || level > hi {
                return Err(Invalid(format!(
                    "level must be a number between {lo} and {hi} for {} (got {level})",
                    c.as_str()
                )));
            }
        }
        if let Some(bucket) = self.bucket {
            if bucket >= defaults::NUM_SEGMENTS {
                return Err(Invalid(format!(
                    "bucket must be between 0 and {} (got {bucket})",
                    defaults::NUM_SEGMENTS - 1
                )));
            }
        }
        if let Some(n) = self.top_n {
            if !(1..=MAX_TOP_N).contains(&n) {
                return Err(Invalid(format!(
                    "top_n must be between 1 and {MAX_TOP_N} (got {n})"
                )));
            }
        }
        if self.category.is_some() && !matches!(c, Condition::TopNEntered | Condition::TopNLeft) {
            return Err(Invalid(format!(
                "category applies to top_n_entered and top_n_left only, not {}",
                c.as_str()
            )));
        }
        if !defaults::GRADED_RETURN_PERIODS.contains(&self.return_period) {
            return Err(Invalid(format!(
                "return_period must be one of the graded horizons {:?} (got {})",
                defaults::GRADED_RETURN_PERIODS,
                self.return_period
            )));
        }
        Ok(())
    }

    /// The condition in words, e.g. "drawdown at or below -20 %".
    pub fn describe(&self) -> String {
        let pct = |x: f64| match x {
            x if (x * 1000.0).round() == 0.0 => "0.0 %".to_string(),
            x => format!("{:+.1} %", x * 100.0),
        };
        let horizon = format!("{}-day {}", self.return_period, self.metric.as_str());
        match self.condition {
            Condition::GradeChanged => format!("grade ({horizon}) changed"),
            Condition::BucketChanged => "drawdown moved to another bucket".into(),
            Condition::BucketEntered => {
                format!("drawdown entered bucket {}", self.bucket.unwrap_or(0))
            }
            Condition::BucketLeft => format!("drawdown left bucket {}", self.bucket.unwrap_or(0)),
            Condition::DrawdownBelow => {
                format!("drawdown at or below {}", pct(self.level.unwrap_or(0.0)))
            }
            Condition::DrawdownAbove => {
                format!("drawdown at or above {}", pct(self.level.unwrap_or(0.0)))
            }
            Condition::MedianReturnAbove => format!(
                "median {}-day return at or above {}",
                self.return_period,
                pct(self.level.unwrap_or(0.0))
            ),
            Condition::MedianReturnBelow => format!(
                "median {}-day return at or below {}",
                self.return_period,
                pct(self.level.unwrap_or(0.0))
            ),
            Condition::TopNEntered | Condition::TopNLeft => {
                let within = match self.category {
                    Some(c) => format!(" of {}", c.as_str()),
                    None => String::new(),
                };
                let verb = if self.condition == Condition::TopNEntered {
                    "entered"
                } else {
                    "left"
                };
                format!(
                    "{verb} the top {} ({horizon} ranking{within})",
                    self.top_n.unwrap_or(0)
                )
            }
        }
    }
}

/// `POST /api/alerts`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"ticker": "AAPL", "condition": "drawdown_below", "level": -0.2}))]
pub struct CreateAlertRequest {
    /// The asset watched; give this or `watchlist: true`.
    #[schema(max_length = 40)]
    pub ticker: Option<String>,
    /// Watch every asset of the owner's watchlist (as it is at each
    /// evaluation) instead of one ticker.
    pub watchlist: Option<bool>,
    /// What to watch.
    pub condition: Condition,
    /// See [`AlertSpec::level`].
    pub level: Option<f64>,
    /// See [`AlertSpec::bucket`].
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 19)]
    pub bucket: Option<i64>,
    /// See [`AlertSpec::top_n`].
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 100)]
    pub top_n: Option<i64>,
    /// A graded horizon (7, 30, 90, 180 or 365; default 90).
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(schema_with = crate::ranking::graded_period)]
    pub return_period: Option<i64>,
    /// The graded metric (default `return`).
    pub metric: Option<Metric>,
    /// `top_n_*` only: rank within this category.
    pub category: Option<Category>,
    /// Include its events in the e-mail digest (default true).
    pub email: Option<bool>,
    /// Evaluate it (default true).
    pub enabled: Option<bool>,
}

/// What an alert watches: one asset or the owner's watchlist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One ticker (trimmed, as written).
    Ticker(String),
    /// The owner's watchlist.
    Watchlist,
}

/// An integer field as the spec holds it (refused when negative or huge,
/// naming the field; the bounds are the spec's to check).
fn small(name: &str, v: Option<i64>) -> Result<Option<u32>, Invalid> {
    v.map(|v| {
        u32::try_from(v).map_err(|_| Invalid(format!("{name} must not be negative (got {v})")))
    })
    .transpose()
}

fn target(ticker: Option<&str>, watchlist: Option<bool>) -> Result<Target, Invalid> {
    match (ticker.map(str::trim), watchlist.unwrap_or(false)) {
        (Some(_), true) => Err(Invalid::from(
            "give either ticker or watchlist: true, not both",
        )),
        (Some(""), false) => Err(Invalid::from("ticker is empty")),
        (Some(t), false) => Ok(Target::Ticker(t.to_string())),
        (None, true) => Ok(Target::Watchlist),
        (None, false) => Err(Invalid::from(
            "a target is required: ticker (e.g. \"AAPL\") or watchlist: true",
        )),
    }
}

impl CreateAlertRequest {
    /// The target, the spec with defaults filled in, and the switch.
    pub fn validate(&self) -> Result<(Target, AlertSpec, bool), Invalid> {
        let target = target(self.ticker.as_deref(), self.watchlist)?;
        let spec = AlertSpec {
            condition: self.condition,
            level: self.level,
            bucket: small("bucket", self.bucket)?,
            top_n: small("top_n", self.top_n)?,
            return_period: small("return_period", self.return_period)?
                .unwrap_or(defaults::RETURN_PERIOD),
            metric: self.metric.unwrap_or(Metric::Return),
            category: self.category,
            email: self.email.unwrap_or(true),
        };
        spec.validate()?;
        Ok((target, spec, self.enabled.unwrap_or(true)))
    }
}

/// `PATCH /api/alerts/{id}`: the fields to change (absent: unchanged). A
/// changed condition, parameter, horizon, metric or category starts the
/// alert over: its next evaluation is a first one.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAlertRequest {
    /// A new condition (its parameter must come with it).
    pub condition: Option<Condition>,
    /// A new level.
    pub level: Option<f64>,
    /// A new bucket.
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 19)]
    pub bucket: Option<i64>,
    /// A new N.
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 100)]
    pub top_n: Option<i64>,
    /// A new horizon.
    #[serde(default, deserialize_with = "crate::optional_integer")]
    #[schema(schema_with = crate::ranking::graded_period)]
    pub return_period: Option<i64>,
    /// A new metric.
    pub metric: Option<Metric>,
    /// A new category (`top_n_*`).
    pub category: Option<Category>,
    /// E-mail digest on or off.
    pub email: Option<bool>,
    /// Evaluate it or pause it.
    pub enabled: Option<bool>,
}

impl UpdateAlertRequest {
    /// The new spec and switch, and whether the condition changed.
    pub fn apply(
        &self,
        spec: &AlertSpec,
        enabled: bool,
    ) -> Result<(AlertSpec, bool, bool), Invalid> {
        let mut next = spec.clone();
        if let Some(c) = self.condition {
            if c != spec.condition {
                // Another condition: parameters of the old one go.
                next.level = None;
                next.bucket = None;
                next.top_n = None;
                if !matches!(c, Condition::TopNEntered | Condition::TopNLeft) {
                    next.category = None;
                }
            }
            next.condition = c;
        }
        next.level = self.level.or(next.level);
        next.bucket = small("bucket", self.bucket)?.or(next.bucket);
        next.top_n = small("top_n", self.top_n)?.or(next.top_n);
        next.return_period =
            small("return_period", self.return_period)?.unwrap_or(next.return_period);
        next.metric = self.metric.unwrap_or(next.metric);
        next.category = self.category.or(next.category);
        next.email = self.email.unwrap_or(next.email);
        next.validate()?;
        let mut same = next.clone();
        same.email = spec.email;
        let reset = &same != spec;
        Ok((next, self.enabled.unwrap_or(enabled), reset))
    }
}

/// What an evaluation saw of an asset.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct Observation {
    /// Grade letter (of the alert's horizon and metric).
    pub letter: Option<String>,
    /// The scorer's score.
    pub score: Option<f64>,
    /// The drawdown bucket (0 nearest the high).
    pub bucket: Option<u32>,
    /// The bucket's drawdown range, lower bound.
    pub bucket_lower: Option<f64>,
    /// The bucket's drawdown range, upper bound.
    pub bucket_upper: Option<f64>,
    /// Drawdown from the running high (a fraction ≤ 0).
    pub drawdown: Option<f64>,
    /// Rolling median forward return of the current bucket.
    pub median_return: Option<f64>,
    /// How wrong that median was before: its mean absolute error.
    pub median_error: Option<f64>,
    /// Last close.
    pub price: Option<f64>,
    /// Date of the last close.
    pub last_price_date: Option<NaiveDate>,
    /// `top_n_*`: the asset's place in the ranking.
    pub rank: Option<u32>,
    /// `top_n_*`: how many assets the ranking holds.
    pub ranked: Option<u32>,
    /// The evidence behind the numbers.
    pub evidence: Option<ObservedEvidence>,
    /// The calibrated forecast the grade came from (absent where the scorer
    /// makes none, and in states recorded before scorer 2.0.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<crate::analysis::ForecastBody>,
}

/// How much history stands behind an observation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct ObservedEvidence {
    /// Past rows that fell in the current bucket.
    pub bucket_samples: u32,
    /// Separate past episodes in the bucket.
    pub episodes: u32,
    /// Share of those rows followed by a gain.
    pub win_rate: Option<f64>,
    /// Whether the evidence is thin (too few samples or episodes to trust).
    pub thin: bool,
    /// Price rows analysed.
    pub data_points: u32,
}

/// An alert as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Alert {
    /// UUID.
    pub id: String,
    /// The asset watched, or null for the watchlist.
    pub ticker: Option<String>,
    /// Whether it watches the owner's watchlist.
    pub watchlist: bool,
    /// The condition and parameters.
    #[serde(flatten)]
    pub spec: AlertSpec,
    /// The condition in words.
    pub description: String,
    /// Evaluated or paused.
    pub enabled: bool,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was last changed.
    pub updated_at: DateTime<Utc>,
    /// What the last evaluation saw, per asset (empty until evaluated).
    pub states: Vec<AlertStateBody>,
}

/// One asset's state under an alert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AlertStateBody {
    /// The asset.
    pub ticker: String,
    /// Whether the condition held.
    pub holds: bool,
    /// What was seen.
    pub observed: Observation,
    /// When.
    pub evaluated_at: DateTime<Utc>,
}

/// A fired alert: what changed, from what to what, and the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AlertEvent {
    /// UUID.
    pub id: String,
    /// The alert (it may have been deleted since).
    pub alert_id: String,
    /// The asset.
    pub ticker: String,
    /// Its name.
    pub name: String,
    /// The alert's condition and parameters when it fired.
    pub alert: AlertSpec,
    /// What happened, in words.
    pub message: String,
    /// What the evaluation before saw (null on a first evaluation).
    pub before: Option<Observation>,
    /// What this evaluation saw.
    pub after: Observation,
    /// The active grading run behind the numbers (null before the first).
    pub run_id: Option<String>,
    /// The evaluation that fired it (the store's change counters it saw).
    pub evaluation: String,
    /// The segmentation engine that computed the numbers.
    pub engine_version: String,
    /// The scorer that graded them.
    pub scorer_version: String,
    /// When it fired.
    pub created_at: DateTime<Utc>,
    /// Whether its owner has read it.
    #[serde(default)]
    pub read: bool,
}

/// `GET /api/alerts/events` query.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RawEventsQuery {
    /// Events per page.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100, default = 20)]
    pub limit: Option<String>,
    /// Events to skip (newest first).
    #[param(value_type = Option<i64>, minimum = 0, maximum = 100000, default = 0)]
    pub offset: Option<String>,
    /// Only unread events.
    #[param(value_type = Option<bool>, default = false)]
    pub unread: Option<String>,
}

/// A validated events query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventsQuery {
    /// Page size.
    pub limit: u32,
    /// Skipped.
    pub offset: u32,
    /// Unread only.
    pub unread: bool,
}

fn bounded(name: &str, raw: Option<&str>, lo: u32, hi: u32, default: u32) -> Result<u32, Invalid> {
    match raw {
        None => Ok(default),
        Some(raw) => match crate::integer(raw.trim()) {
            Some(n) if (i64::from(lo)..=i64::from(hi)).contains(&n) => Ok(n as u32),
            _ => Err(Invalid(format!(
                "{name} must be an integer between {lo} and {hi} inclusive (got '{}')",
                crate::quote(raw)
            ))),
        },
    }
}

impl RawEventsQuery {
    /// The query, or which parameter is wrong.
    pub fn validate(&self) -> Result<EventsQuery, Invalid> {
        let unread = match self.unread.as_deref().map(str::trim) {
            None | Some("false") | Some("0") => false,
            Some("true") | Some("1") => true,
            Some(other) => {
                return Err(Invalid(format!(
                    "unread must be true or false (got '{}')",
                    crate::quote(other)
                )))
            }
        };
        Ok(EventsQuery {
            limit: bounded(
                "limit",
                self.limit.as_deref(),
                1,
                MAX_EVENTS_PAGE,
                DEFAULT_EVENTS_PAGE,
            )?,
            offset: bounded("offset", self.offset.as_deref(), 0, MAX_EVENTS_OFFSET, 0)?,
            unread,
        })
    }
}

/// A page of events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventPage {
    /// Newest first.
    pub events: Vec<AlertEvent>,
    /// Events matching the filter.
    pub total: i64,
    /// Unread events.
    pub unread: i64,
    /// The page size asked.
    pub limit: u32,
    /// Skipped.
    pub offset: u32,
}

/// `GET /api/alerts/unread`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UnreadCount {
    /// Unread events.
    pub unread: i64,
}

/// `POST /api/alerts/events/read`: some events, or all.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkReadRequest {
    /// Event ids (at most 100).
    #[schema(max_items = 100)]
    pub ids: Option<Vec<String>>,
    /// Every event of the user.
    pub all: Option<bool>,
}

impl MarkReadRequest {
    /// The ids, or `None` for all.
    pub fn validate(&self) -> Result<Option<&[String]>, Invalid> {
        match (&self.ids, self.all.unwrap_or(false)) {
            (Some(_), true) => Err(Invalid::from("give either ids or all: true, not both")),
            (Some(ids), false) if ids.len() > MAX_MARK_IDS => Err(Invalid(format!(
                "ids: at most {MAX_MARK_IDS} per request ({} sent)",
                ids.len()
            ))),
            (Some(ids), false) => Ok(Some(ids)),
            (None, true) => Ok(None),
            (None, false) => Err(Invalid::from("give ids (a list) or all: true")),
        }
    }
}

/// `POST /api/alerts/events/read`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MarkedRead {
    /// Events marked read now.
    pub marked: u64,
    /// Unread events left.
    pub unread: i64,
}

/// `POST /api/alerts/webhooks`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"url": "https://example.com/hooks/forecast"}))]
pub struct CreateWebhookRequest {
    /// An `http` or `https` URL, at most 2048 bytes; private, loopback and
    /// link-local addresses are refused unless the operator allows them.
    #[schema(max_length = 2048)]
    pub url: String,
}

/// `PATCH /api/alerts/webhooks/{id}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateWebhookRequest {
    /// Re-enable (counting failures from zero) or disable.
    pub enabled: bool,
}

/// A webhook endpoint (never its secret, which is shown once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Webhook {
    /// UUID.
    pub id: String,
    /// Where events are POSTed.
    pub url: String,
    /// Whether calls are made.
    pub enabled: bool,
    /// Failed attempts since the last success.
    pub consecutive_failures: i64,
    /// Why the service disabled it, if it did.
    pub disabled_reason: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// A new endpoint with its secret, shown this once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CreatedWebhook {
    /// The endpoint.
    #[serde(flatten)]
    pub webhook: Webhook,
    /// The signing secret: `X-Forecast-Signature: t=<unix seconds>,v1=<hex
    /// of HMAC-SHA256(secret, "<t>.<body>")>`. Not shown again.
    pub secret: String,
}

/// One call (an event's or a test's) or digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Delivery {
    /// UUID.
    pub id: String,
    /// The event sent (null for a test call).
    pub event_id: Option<String>,
    /// `pending` (waiting for its next attempt), `delivered` or `failed`
    /// (given up).
    pub status: String,
    /// Attempts made.
    pub attempts: i64,
    /// HTTP status of the last attempt, if one was answered.
    pub last_status: Option<i64>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When the next attempt is due (pending only).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When it was delivered or given up.
    pub finished_at: Option<DateTime<Utc>>,
}

/// `GET /api/alerts/webhooks/{id}/deliveries`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DeliveryLog {
    /// The endpoint.
    pub webhook: Webhook,
    /// Its newest deliveries (at most 50), newest first.
    pub deliveries: Vec<Delivery>,
}

/// What a webhook receives: the body signed by `X-Forecast-Signature`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WebhookPayload {
    /// `alert.fired`, or `alert.test` for a test call.
    #[serde(rename = "type")]
    pub kind: String,
    /// The event (a sample one for a test call).
    pub event: AlertEvent,
}

/// `POST /api/alerts/webhooks/{id}/test`: the attempt's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TestDelivery {
    /// The call as logged.
    pub delivery: Delivery,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(body: serde_json::Value) -> Result<(Target, AlertSpec, bool), Invalid> {
        serde_json::from_value::<CreateAlertRequest>(body)
            .expect("parses")
            .validate()
    }

    #[test]
    fn the_issue_example_is_accepted_with_defaults() {
        let (target, spec, enabled) = create(serde_json::json!(
            {"ticker": " AAPL ", "condition": "drawdown_below", "level": -0.2}
        ))
        .unwrap();
        assert_eq!(target, Target::Ticker("AAPL".into()));
        assert_eq!(spec.return_period, 90);
        assert_eq!(spec.metric, Metric::Return);
        assert!(spec.email && enabled);
    }

    #[test]
    fn each_refusal_names_the_field() {
        let cases = [
            (serde_json::json!({"condition": "grade_changed"}), "target"),
            (
                serde_json::json!({"ticker": "A", "watchlist": true, "condition": "grade_changed"}),
                "not both",
            ),
            (
                serde_json::json!({"ticker": "A", "condition": "drawdown_below"}),
                "level is required",
            ),
            (
                serde_json::json!({"ticker": "A", "condition": "drawdown_below", "level": 0.5}),
                "level must be",
            ),
            (
                serde_json::json!({"ticker": "A", "condition": "grade_changed", "level": -0.1}),
                "level does not apply",
            ),
            (
                serde_json::json!({"ticker": "A", "condition": "bucket_entered", "bucket": 20}),
                "bucket must be",
            ),
            (
                serde_json::json!({"watchlist": true, "condition": "top_n_entered", "top_n": 0}),
                "top_n must be",
            ),
            (
                serde_json::json!({"ticker": "A", "condition": "grade_changed", "return_period": 10}),
                "return_period",
            ),
            (
                serde_json::json!({"ticker": "A", "condition": "grade_changed", "category": "Crypto"}),
                "category applies",
            ),
        ];
        for (body, needle) in cases {
            let e = create(body.clone()).expect_err(&body.to_string());
            assert!(e.0.contains(needle), "{body}: {e}");
        }
    }

    #[test]
    fn a_changed_condition_starts_over_and_email_alone_does_not() {
        let (_, spec, _) = create(serde_json::json!(
            {"ticker": "A", "condition": "drawdown_below", "level": -0.2}
        ))
        .unwrap();
        let email = UpdateAlertRequest {
            email: Some(false),
            ..Default::default()
        };
        let (next, enabled, reset) = email.apply(&spec, true).unwrap();
        assert!(!next.email && enabled && !reset);
        let level = UpdateAlertRequest {
            level: Some(-0.3),
            ..Default::default()
        };
        assert!(level.apply(&spec, true).unwrap().2);
        let other = UpdateAlertRequest {
            condition: Some(Condition::GradeChanged),
            ..Default::default()
        };
        let (next, _, reset) = other.apply(&spec, true).unwrap();
        assert!(reset && next.level.is_none());
    }

    #[test]
    fn events_query_bounds() {
        let q = RawEventsQuery::default().validate().unwrap();
        assert_eq!((q.limit, q.offset, q.unread), (20, 0, false));
        for (limit, offset, unread) in [("0", "0", "true"), ("101", "0", "1"), ("5", "-1", "x")] {
            let raw = RawEventsQuery {
                limit: Some(limit.into()),
                offset: Some(offset.into()),
                unread: Some(unread.into()),
            };
            assert!(raw.validate().is_err(), "{limit} {offset} {unread}");
        }
    }
}
