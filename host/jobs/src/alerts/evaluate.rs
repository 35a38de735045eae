//! Evaluating every enabled alert against the data as it is now.
//!
//! An evaluation is named by what it reads: the store's generation
//! counters of the active grading run, of assets and prices, and of alerts
//! and watchlists (`g<grading>-a<assets>-l<alerts>`). Whoever notices a new
//! name first (a server's follower, `forecast alerts check`, the end of
//! `forecast grade`) claims it in the store; nobody evaluates it again.
//!
//! For each (alert, asset) the condition is computed from the asset's
//! verdict (the active run's grade when it still describes the asset's
//! prices, else computed live) or, for `top_n_*`, from the active run's
//! ranking. An asset with no verdict or no place in the ranking is left
//! as it was (no state, no event). Conditions are edge-triggered: an event
//! fires when a condition becomes true, and on the first evaluation of an
//! alert whose condition already holds; `*_changed` conditions fire when
//! the value differs from the one last seen.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use forecast_api::alerts::{
    AlertEvent, AlertSpec, Condition, Observation, ObservedEvidence, WebhookPayload,
    MAX_EVENTS_PER_USER, RETENTION_DAYS,
};
use forecast_api::analysis::{AnalysisQuery, VerdictResponse};
use forecast_domain::{Asset, Category, Metric};
use forecast_store::{
    AlertRecord, AlertState, Claim, GradingRun, NewEvent, RankedRow, Recorded, StateWrite,
    UserEvaluation,
};

use super::{parse_spec, AlertService};
use forecast_services::error::Error;

/// A claimed evaluation whose process has not finished it for this long
/// may be taken over.
const LEASE_SECONDS: i64 = 300;
/// Times a user's results are recomputed when another process wrote a
/// state in between.
const STALE_RETRIES: usize = 3;
/// Waits for a ticket of the heavy-work budget per live verdict.
const BUSY_RETRIES: usize = 10;
/// How often a follower forgets old events, deliveries and evaluations.
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// What one evaluation did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct EvaluationSummary {
    /// Its name.
    pub key: String,
    /// False when another process (or an earlier call) had evaluated it.
    pub evaluated: bool,
    /// Another process is evaluating it now (its claim's lease has not
    /// ended): a follower tries again at its next look.
    pub held_elsewhere: bool,
    /// The active grading run it read.
    pub run_id: Option<String>,
    /// Enabled alerts.
    pub alerts: usize,
    /// (alert, asset) pairs observed.
    pub observed: usize,
    /// Pairs left as they were: no verdict or ranking place.
    pub unknown: usize,
    /// Events fired.
    pub events: usize,
    /// Webhook calls queued.
    pub calls: usize,
    /// E-mail digests queued.
    pub digests: usize,
    /// Wall time.
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct VerdictKey {
    ticker: String,
    period: u32,
    metric: Metric,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct RankKey {
    period: u32,
    metric: Metric,
    category: Option<Category>,
}

impl VerdictKey {
    fn of(spec: &AlertSpec, asset: &Asset) -> Self {
        VerdictKey {
            ticker: asset.ticker.clone(),
            period: spec.return_period,
            metric: spec.metric,
        }
    }
}

impl RankKey {
    /// The ranking a `top_n_*` alert reads (`None` for other conditions).
    fn of(spec: &AlertSpec) -> Option<Self> {
        matches!(spec.condition, Condition::TopNEntered | Condition::TopNLeft).then_some(RankKey {
            period: spec.return_period,
            metric: spec.metric,
            category: spec.category,
        })
    }
}

/// An enabled alert and the assets it watches at this evaluation.
struct Watch {
    alert: AlertRecord,
    spec: AlertSpec,
    targets: Vec<Asset>,
}

/// The answers of one evaluation: verdicts by question, rankings by
/// question (ticker → place).
#[derive(Default)]
struct Observed {
    verdicts: HashMap<VerdictKey, Option<Seen>>,
    rankings: HashMap<RankKey, HashMap<String, Seen>>,
}

impl Observed {
    /// What was seen of `asset` for `spec`, if anything.
    fn seen(&self, spec: &AlertSpec, asset: &Asset) -> Option<&Seen> {
        match RankKey::of(spec) {
            Some(k) => self.rankings.get(&k)?.get(&asset.ticker),
            None => self.verdicts.get(&VerdictKey::of(spec, asset))?.as_ref(),
        }
    }
}

/// One user's results before they are written.
#[derive(Default)]
struct UserResults {
    states: Vec<StateWrite>,
    events: Vec<NewEvent>,
    /// The digest's lines (events of alerts with e-mail on).
    digest: Vec<String>,
    observed: usize,
    unknown: usize,
}

/// An observation and the plugins behind it.
#[derive(Debug, Clone)]
struct Seen {
    observed: Observation,
    engine: String,
    scorer: String,
}

fn from_verdict(v: &VerdictResponse) -> Seen {
    let s = &v.current_state;
    Seen {
        observed: Observation {
            letter: Some(v.grade.letter.clone()),
            score: Some(v.grade.score),
            bucket: Some(s.segment),
            bucket_lower: Some(v.active_segment.lower_bound),
            bucket_upper: Some(v.active_segment.upper_bound),
            drawdown: Some(s.drawdown),
            median_return: Some(s.median_return),
            median_error: Some(s.median_error),
            price: Some(s.price),
            last_price_date: Some(v.metadata.last_price_date),
            rank: None,
            ranked: None,
            evidence: Some(ObservedEvidence {
                bucket_samples: v.active_segment.count,
                episodes: s.evidence.as_ref().map_or(0, |e| e.episodes),
                win_rate: v.active_segment.win_rate,
                thin: s.evidence.as_ref().is_some_and(|e| e.thin),
                data_points: v.metadata.data_points,
            }),
            forecast: v.forecast.clone(),
        },
        engine: v.metadata.engine_version.clone(),
        scorer: v.metadata.scorer_version.clone(),
    }
}

fn from_ranking(row: &RankedRow, rank: usize, ranked: usize, run: &GradingRun) -> Seen {
    let g = &row.grade;
    Seen {
        observed: Observation {
            letter: Some(g.letter.clone()),
            score: Some(g.score),
            drawdown: Some(g.current_drawdown),
            median_return: Some(g.median_return),
            median_error: Some(g.median_error),
            price: Some(g.current_price),
            last_price_date: Some(row.last_price_date),
            rank: Some(rank as u32),
            ranked: Some(ranked as u32),
            forecast: forecast_services::ranking::forecast_of(&g.body),
            ..Observation::default()
        },
        engine: run.engine.clone(),
        scorer: run.scorer.clone(),
    }
}

/// Whether `spec` holds for `o` (`None`: unknown). `*_changed` conditions
/// always "hold"; they fire on a change of [`tracked`] instead.
fn holds(spec: &AlertSpec, o: &Observation) -> Option<bool> {
    let level = spec.level.unwrap_or(0.0);
    let bucket = spec.bucket.unwrap_or(0);
    let n = spec.top_n.unwrap_or(0);
    match spec.condition {
        Condition::GradeChanged => o.letter.as_ref().map(|_| true),
        Condition::BucketChanged => o.bucket.map(|_| true),
        Condition::BucketEntered => o.bucket.map(|b| b == bucket),
        Condition::BucketLeft => o.bucket.map(|b| b != bucket),
        Condition::DrawdownBelow => o.drawdown.map(|d| d <= level),
        Condition::DrawdownAbove => o.drawdown.map(|d| d >= level),
        Condition::MedianReturnAbove => o.median_return.map(|m| m >= level),
        Condition::MedianReturnBelow => o.median_return.map(|m| m <= level),
        Condition::TopNEntered => o.rank.map(|r| r <= n),
        Condition::TopNLeft => o.rank.map(|r| r > n),
    }
}

/// The value a `*_changed` condition follows.
fn tracked(spec: &AlertSpec, o: &Observation) -> Option<String> {
    match spec.condition {
        Condition::GradeChanged => o.letter.clone(),
        Condition::BucketChanged => o.bucket.map(|b| b.to_string()),
        _ => None,
    }
}

/// Whether the move from `before` (the last state, if any) to `now` fires.
fn fires(spec: &AlertSpec, before: Option<(&AlertState, &Observation)>, now: &Observation) -> bool {
    if spec.condition.on_change() {
        return match before {
            Some((_, b)) => {
                let (was, is) = (tracked(spec, b), tracked(spec, now));
                was.is_some() && is.is_some() && was != is
            }
            None => false,
        };
    }
    let is = holds(spec, now) == Some(true);
    match before {
        Some((state, _)) => is && !state.holds,
        None => is,
    }
}

fn pct(x: Option<f64>) -> String {
    match x {
        None => "?".into(),
        Some(x) if (x * 1000.0).round() == 0.0 => "0.0 %".into(),
        Some(x) => format!("{:+.1} %", x * 100.0),
    }
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// What happened, in words, with the evidence behind the numbers.
fn message(
    ticker: &str,
    spec: &AlertSpec,
    before: Option<&Observation>,
    now: &Observation,
) -> String {
    let bucket_range = |o: &Observation| match (o.bucket, o.bucket_lower, o.bucket_upper) {
        (Some(b), Some(lo), Some(hi)) => {
            format!("bucket {b}, {} to {}", pct(Some(lo)), pct(Some(hi)))
        }
        (Some(b), _, _) => format!("bucket {b}"),
        _ => "bucket ?".into(),
    };
    let what = match spec.condition {
        Condition::GradeChanged => format!(
            "grade {} → {} ({}-day {})",
            before
                .and_then(|b| b.letter.clone())
                .unwrap_or_else(|| "?".into()),
            now.letter.clone().unwrap_or_else(|| "?".into()),
            spec.return_period,
            spec.metric.as_str()
        ),
        Condition::BucketChanged | Condition::BucketEntered | Condition::BucketLeft => {
            let from = before
                .map(|b| format!(" from {}", bucket_range(b)))
                .unwrap_or_default();
            format!(
                "drawdown {} moved{from} to {}",
                pct(now.drawdown),
                bucket_range(now)
            )
        }
        Condition::DrawdownBelow | Condition::DrawdownAbove => format!(
            "drawdown {} is {} ({})",
            pct(now.drawdown),
            spec.describe().trim_start_matches("drawdown "),
            bucket_range(now)
        ),
        Condition::MedianReturnAbove | Condition::MedianReturnBelow => format!(
            "median {}-day return {} (past error ±{}) is {}",
            spec.return_period,
            pct(now.median_return),
            pct(now.median_error).trim_start_matches('+'),
            spec.describe()
                .split(" at ")
                .nth(1)
                .map(|s| format!("at {s}"))
                .unwrap_or_default()
        ),
        Condition::TopNEntered | Condition::TopNLeft => format!(
            "ranked {} of {}: {}",
            now.rank.map_or("?".into(), ordinal),
            now.ranked.unwrap_or(0),
            spec.describe()
        ),
    };
    let evidence = match &now.evidence {
        Some(e) => format!(
            " — {} past days in this bucket over {} episode{}{}",
            e.bucket_samples,
            e.episodes,
            if e.episodes == 1 { "" } else { "s" },
            if e.thin { " (thin evidence)" } else { "" }
        ),
        None => String::new(),
    };
    format!("{ticker}: {what}{evidence}")
}

impl AlertService {
    /// The name of an evaluation of the data as it is now.
    pub async fn current_key(&self) -> Result<String, Error> {
        let g = self.generations.generations().await?;
        Ok(format!("g{}-a{}-l{}", g.grading, g.assets, g.alerts))
    }

    /// A verdict for an alert, waiting for the heavy-work budget when it
    /// is busy; `None` when the asset has none (unknown, too short).
    async fn observe(&self, key: &VerdictKey) -> Option<Seen> {
        let q = AnalysisQuery {
            return_period: key.period,
            metric: key.metric,
            ..AnalysisQuery::default()
        };
        for _ in 0..BUSY_RETRIES {
            match self.verdicts.verdict(&key.ticker, &q, "alerts").await {
                Ok(v) => return Some(from_verdict(&v)),
                Err(Error::Busy { retry_after, .. }) => {
                    tokio::time::sleep(Duration::from_secs(retry_after.clamp(1, 5))).await;
                }
                Err(Error::NotFound(_)) | Err(Error::InsufficientData(_)) => return None,
                Err(e) => {
                    tracing::warn!(ticker = %key.ticker, error = %e, "alerts: no verdict");
                    return None;
                }
            }
        }
        tracing::warn!(ticker = %key.ticker, "alerts: the heavy-work budget stayed busy");
        None
    }

    /// Ranks the active run for `key` as `GET /api/ranking` does by default
    /// (median return, descending; ties by ticker): ticker → place.
    async fn rank(&self, run: &GradingRun, key: RankKey) -> Result<HashMap<String, Seen>, Error> {
        let mut rows = self
            .grading
            .ranking_rows(&run.id, key.period, key.metric)
            .await?;
        if let Some(c) = key.category {
            rows.retain(|r| r.category == c);
        }
        rows.sort_by(|a, b| {
            b.grade
                .median_return
                .total_cmp(&a.grade.median_return)
                .then_with(|| a.ticker.cmp(&b.ticker))
        });
        let ranked = rows.len();
        Ok(rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.ticker.clone(), from_ranking(r, i + 1, ranked, run)))
            .collect())
    }

    /// Each user's enabled alerts with the assets they watch now (the
    /// ticker, or the owner's watchlist as it is), by owner.
    async fn watches(&self, alerts: Vec<AlertRecord>) -> Result<Vec<(String, Vec<Watch>)>, Error> {
        let mut by_user: Vec<(String, Vec<Watch>)> = Vec::new();
        let mut watchlists: HashMap<String, Vec<Asset>> = HashMap::new();
        let mut assets: HashMap<i64, Option<Asset>> = HashMap::new();
        for alert in alerts {
            let spec = match parse_spec(&alert) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(alert = %alert.id, error = %e, "alerts: skipped");
                    continue;
                }
            };
            let targets: Vec<Asset> = match (alert.asset_id, &alert.ticker) {
                (Some(id), Some(ticker)) => {
                    if let std::collections::hash_map::Entry::Vacant(e) = assets.entry(id) {
                        e.insert(self.assets.asset_by_ticker(ticker).await?);
                    }
                    assets[&id]
                        .iter()
                        .filter(|a| a.is_active)
                        .cloned()
                        .collect()
                }
                _ => {
                    if let std::collections::hash_map::Entry::Vacant(e) =
                        watchlists.entry(alert.user_id.clone())
                    {
                        e.insert(self.accounts.watchlist(&alert.user_id).await?);
                    }
                    watchlists[&alert.user_id].clone()
                }
            };
            let watch = Watch {
                alert,
                spec,
                targets,
            };
            match by_user.last_mut() {
                Some((user, list)) if *user == watch.alert.user_id => list.push(watch),
                _ => by_user.push((watch.alert.user_id.clone(), vec![watch])),
            }
        }
        Ok(by_user)
    }

    /// Every distinct question the watches ask, answered once.
    async fn observe_all(
        &self,
        by_user: &[(String, Vec<Watch>)],
        run: Option<&GradingRun>,
    ) -> Result<Observed, Error> {
        let mut verdict_keys = HashSet::new();
        let mut rank_keys = HashSet::new();
        for w in by_user.iter().flat_map(|(_, list)| list) {
            match RankKey::of(&w.spec) {
                Some(k) => {
                    rank_keys.insert(k);
                }
                None => verdict_keys.extend(w.targets.iter().map(|t| VerdictKey::of(&w.spec, t))),
            }
        }
        let mut observed = Observed::default();
        for k in verdict_keys {
            let seen = self.observe(&k).await;
            observed.verdicts.insert(k, seen);
        }
        if let Some(run) = run {
            for k in rank_keys {
                observed.rankings.insert(k, self.rank(run, k).await?);
            }
        }
        Ok(observed)
    }

    /// One user's new states and events for evaluation `key`, given the
    /// states last recorded.
    fn user_results(
        &self,
        key: &str,
        run_id: Option<&String>,
        watches: &[Watch],
        observed: &Observed,
        states: &HashMap<(String, i64), AlertState>,
    ) -> Result<UserResults, Error> {
        let mut out = UserResults::default();
        for w in watches {
            for asset in &w.targets {
                let Some(seen) = observed.seen(&w.spec, asset) else {
                    out.unknown += 1;
                    continue;
                };
                let Some(is) = holds(&w.spec, &seen.observed) else {
                    out.unknown += 1;
                    continue;
                };
                out.observed += 1;
                let state = states.get(&(w.alert.id.clone(), asset.id));
                if state.is_some_and(|s| s.evaluation == key) {
                    continue;
                }
                let before: Option<Observation> =
                    state.and_then(|s| serde_json::from_str(&s.observed).ok());
                if fires(&w.spec, state.zip(before.as_ref()), &seen.observed) {
                    let text = message(&asset.ticker, &w.spec, before.as_ref(), &seen.observed);
                    let event = AlertEvent {
                        id: uuid::Uuid::new_v4().to_string(),
                        alert_id: w.alert.id.clone(),
                        ticker: asset.ticker.clone(),
                        name: asset.name.clone(),
                        alert: w.spec.clone(),
                        message: text.clone(),
                        before: before.clone(),
                        after: seen.observed.clone(),
                        run_id: run_id.cloned(),
                        evaluation: key.to_string(),
                        engine_version: seen.engine.clone(),
                        scorer_version: seen.scorer.clone(),
                        created_at: self.clock.now(),
                        read: false,
                    };
                    let payload = WebhookPayload {
                        kind: "alert.fired".into(),
                        event: event.clone(),
                    };
                    if w.spec.email {
                        out.digest.push(text);
                    }
                    out.events.push(NewEvent {
                        id: event.id.clone(),
                        alert_id: w.alert.id.clone(),
                        asset_id: asset.id,
                        body: json(&event)?,
                        webhook_payload: json(&payload)?,
                    });
                }
                out.states.push(StateWrite {
                    alert_id: w.alert.id.clone(),
                    asset_id: asset.id,
                    holds: is,
                    observed: json(&seen.observed)?,
                    replaces: state.map(|s| s.evaluation.clone()),
                });
            }
        }
        Ok(out)
    }

    /// Records one user's results, reading the states again when another
    /// process wrote one in between; what was recorded is added to `summary`.
    async fn record_user(
        &self,
        key: &str,
        summary: &mut EvaluationSummary,
        user_id: &str,
        watches: &[Watch],
        observed: &Observed,
        now: i64,
    ) -> Result<(), Error> {
        for _ in 0..STALE_RETRIES {
            let states: HashMap<(String, i64), AlertState> = self
                .store
                .alert_states(user_id)
                .await?
                .into_iter()
                .map(|s| ((s.alert_id.clone(), s.asset_id), s))
                .collect();
            let r = self.user_results(key, summary.run_id.as_ref(), watches, observed, &states)?;
            let digest = (self.settings.smtp.is_some() && !r.digest.is_empty())
                .then(|| self.digest(&r.digest))
                .transpose()?;
            let write = UserEvaluation {
                user_id: user_id.to_string(),
                evaluation: key.to_string(),
                states: r.states,
                events: r.events,
                digest,
                now,
            };
            if let Recorded::Done {
                events,
                calls,
                digests,
            } = self.store.record_evaluation(&write).await?
            {
                summary.observed += r.observed;
                summary.unknown += r.unknown;
                summary.events += events;
                summary.calls += calls;
                summary.digests += digests;
                return Ok(());
            }
        }
        tracing::warn!(
            user = %user_id,
            "alerts: another process kept changing this user's states; left to it"
        );
        Ok(())
    }

    /// Evaluates every enabled alert once for the data as it is now,
    /// unless this evaluation was already claimed; records states and
    /// events and queues their deliveries (see the module).
    #[tracing::instrument(name = "alerts.evaluate", skip_all)]
    pub async fn evaluate(&self) -> Result<EvaluationSummary, Error> {
        let started = Instant::now();
        let key = self.current_key().await?;
        let now = self.clock.timestamp();
        let mut summary = EvaluationSummary {
            key: key.clone(),
            ..Default::default()
        };
        match self
            .store
            .claim_evaluation(&key, &self.worker, now, LEASE_SECONDS)
            .await?
        {
            Claim::Claimed => {}
            Claim::Finished => return Ok(summary),
            Claim::Held => {
                summary.held_elsewhere = true;
                return Ok(summary);
            }
        }
        summary.evaluated = true;
        let run = self.grading.active_grading_run().await?;
        summary.run_id = run.as_ref().map(|r| r.id.clone());
        let alerts = self.store.enabled_alerts().await?;
        summary.alerts = alerts.len();
        let by_user = self.watches(alerts).await?;
        let observed = self.observe_all(&by_user, run.as_ref()).await?;
        for (user_id, watches) in &by_user {
            self.record_user(&key, &mut summary, user_id, watches, &observed, now)
                .await?;
        }
        summary.seconds = started.elapsed().as_secs_f64();
        self.store
            .finish_evaluation(&key, &json(&summary)?, self.clock.timestamp())
            .await?;
        if summary.events > 0 {
            tracing::info!(
                key = %summary.key,
                events = summary.events,
                calls = summary.calls,
                digests = summary.digests,
                "alerts fired"
            );
        }
        Ok(summary)
    }

    /// Forgets each user's events beyond the newest
    /// [`MAX_EVENTS_PER_USER`], and deliveries and evaluations finished
    /// more than [`RETENTION_DAYS`] ago; rows deleted.
    pub async fn purge(&self) -> Result<u64, Error> {
        let before = self.clock.timestamp() - RETENTION_DAYS * 86_400;
        Ok(self.store.purge_alerts(MAX_EVENTS_PER_USER, before).await?)
    }

    /// A digest's subject and text (JSON, the outbox's payload).
    fn digest(&self, lines: &[String]) -> Result<String, Error> {
        let subject = match lines.len() {
            1 => format!(
                "Forecast alert: {}",
                lines[0].split(':').next().unwrap_or("")
            ),
            n => format!("Forecast alerts: {n} events"),
        };
        let mut text = String::from("Your alerts fired:\n\n");
        for l in lines {
            text.push_str("- ");
            text.push_str(l);
            text.push('\n');
        }
        if !self.settings.origin.is_empty() {
            text.push_str(&format!(
                "\nThe inbox: {}/alerts\n",
                self.settings.origin.trim_end_matches('/')
            ));
        }
        text.push_str(
            "\nEach line says how much history stands behind its numbers. \
             Turn e-mail off per alert on the Alerts page.\n",
        );
        json(&serde_json::json!({ "subject": subject, "text": text }))
    }

    /// Follows the store: evaluates whenever the data alerts read changed,
    /// every `interval`, and sends deliveries as they fall due, side by
    /// side (an evaluation never waits for a delivery), until the task is
    /// dropped. Every replica runs one; claims keep their work apart.
    pub async fn follow(self) {
        let wake = tokio::sync::Notify::new();
        tokio::join!(self.evaluate_forever(&wake), self.deliver_forever(&wake));
    }

    /// Evaluates whenever the data alerts read changed and purges old rows,
    /// every `interval`; wakes the deliveries after each evaluation.
    async fn evaluate_forever(&self, wake: &tokio::sync::Notify) {
        let mut last: Option<String> = None;
        let mut purged: Option<Instant> = None;
        loop {
            if purged.is_none_or(|at| at.elapsed() >= PURGE_EVERY) {
                purged = Some(Instant::now());
                match self.purge().await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(rows = n, "alerts: purged old events and deliveries"),
                    Err(e) => tracing::warn!(error = %e, "alerts: purge failed"),
                }
            }
            match self.current_key().await {
                Ok(k) if last.as_ref() != Some(&k) => match self.evaluate().await {
                    // Held by a process that may die: look again next time
                    // (the claim is taken over once its lease ends).
                    Ok(s) if s.held_elsewhere => {}
                    Ok(s) => {
                        last = Some(s.key);
                        wake.notify_one();
                    }
                    Err(e) => tracing::warn!(error = %e, "alerts: evaluation failed"),
                },
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "alerts: cannot read the change counters"),
            }
            tokio::time::sleep(self.settings.interval).await;
        }
    }
}

fn json<T: serde::Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string(v).map_err(|e| Error::Internal(format!("cannot encode: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(condition: Condition, level: Option<f64>, bucket: Option<u32>) -> AlertSpec {
        AlertSpec {
            condition,
            level,
            bucket,
            top_n: None,
            return_period: 90,
            metric: Metric::Return,
            category: None,
            email: true,
        }
    }

    fn obs(drawdown: f64, bucket: u32, letter: &str) -> Observation {
        Observation {
            drawdown: Some(drawdown),
            bucket: Some(bucket),
            letter: Some(letter.into()),
            ..Observation::default()
        }
    }

    fn state(holds: bool) -> AlertState {
        AlertState {
            alert_id: "a".into(),
            asset_id: 1,
            ticker: "X".into(),
            holds,
            observed: String::new(),
            evaluation: "k0".into(),
            updated_at: 0,
        }
    }

    #[test]
    fn a_level_fires_when_crossed_and_again_only_after_it_was_false() {
        let s = spec(Condition::DrawdownBelow, Some(-0.2), None);
        let (deep, shallow) = (obs(-0.25, 5, "B"), obs(-0.1, 2, "B"));
        // First evaluation: fires once if it already holds, not otherwise.
        assert!(fires(&s, None, &deep));
        assert!(!fires(&s, None, &shallow));
        // Still true: no second event.
        assert!(!fires(&s, Some((&state(true), &deep)), &deep));
        // Became true again after being false: fires.
        assert!(fires(&s, Some((&state(false), &shallow)), &deep));
        // Became false: nothing (the state records it).
        assert!(!fires(&s, Some((&state(true), &deep)), &shallow));
    }

    #[test]
    fn a_change_condition_fires_on_a_different_value_never_on_the_first() {
        let s = spec(Condition::GradeChanged, None, None);
        let (b, c) = (obs(-0.1, 2, "B"), obs(-0.1, 2, "C"));
        assert!(!fires(&s, None, &b));
        assert!(!fires(&s, Some((&state(true), &b)), &b));
        assert!(fires(&s, Some((&state(true), &b)), &c));
        let s = spec(Condition::BucketChanged, None, None);
        assert!(fires(
            &s,
            Some((&state(true), &obs(-0.1, 2, "B"))),
            &obs(-0.3, 6, "B")
        ));
    }

    #[test]
    fn buckets_and_ranks() {
        let entered = spec(Condition::BucketEntered, None, Some(5));
        assert_eq!(holds(&entered, &obs(-0.25, 5, "B")), Some(true));
        assert_eq!(holds(&entered, &obs(-0.25, 4, "B")), Some(false));
        let left = spec(Condition::BucketLeft, None, Some(5));
        assert_eq!(holds(&left, &obs(-0.25, 4, "B")), Some(true));
        let mut top = spec(Condition::TopNEntered, None, None);
        top.top_n = Some(10);
        let ranked = |r| Observation {
            rank: Some(r),
            ..Observation::default()
        };
        assert_eq!(holds(&top, &ranked(10)), Some(true));
        assert_eq!(holds(&top, &ranked(11)), Some(false));
        assert_eq!(holds(&top, &Observation::default()), None);
        assert_eq!(ordinal(1), "1st");
        assert_eq!(ordinal(12), "12th");
        assert_eq!(ordinal(23), "23rd");
    }

    #[test]
    fn the_message_names_the_change_and_its_evidence() {
        let s = spec(Condition::DrawdownBelow, Some(-0.2), None);
        let mut o = obs(-0.234, 5, "B");
        o.bucket_lower = Some(-0.25);
        o.bucket_upper = Some(-0.2);
        o.evidence = Some(ObservedEvidence {
            bucket_samples: 312,
            episodes: 9,
            win_rate: Some(0.6),
            thin: false,
            data_points: 5000,
        });
        let m = message("AAPL", &s, None, &o);
        assert!(m.starts_with("AAPL: drawdown -23.4 %"), "{m}");
        assert!(m.contains("at or below -20.0 %"), "{m}");
        assert!(
            m.contains("312 past days in this bucket over 9 episodes"),
            "{m}"
        );
    }
}
