//! Alerts (issue 30), end to end: the API and its refusals and caps, a
//! stranger's path (watchlist → alert → a CSV ingest moves a price →
//! `forecast alerts check` → the event in the inbox, at a signed webhook
//! and in an e-mail received by a real SMTP server), retries after 500s,
//! the disable rule, redirects, and two replicas on PostgreSQL firing each
//! event once. Written with the typed client (`forecast-testkit`).

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::smtp::SmtpSink;
use common::webhook::{verify_signature, Receiver};
use common::{Browser, Server, TEST_EMAIL, TEST_PASSWORD};
use forecast::domain::{Clock as _, ManualClock};
use forecast_api::alerts::{AlertEvent, WebhookPayload};
use forecast_api::assets::AssetListResponse;
use forecast_domain::Metric;
use forecast_testkit::api_alerts::{Alert, CreatedWebhook, DeliveryLog, EventPage};
use forecast_testkit::{Api, Auth, Refused};
use reqwest::Method;
use serde_json::{json, Value};

/// The typed client of `web`'s session, on the `/web/api` routes.
fn session(web: &Browser<'_>) -> Api {
    web.server.api_as(Auth::Cookie(web.cookie.clone()))
}

/// The typed client with another account's key.
fn with_key(s: &Server, key: &str) -> Api {
    s.api_as(Auth::Bearer(key.to_string()))
}

/// `forecast <args>` against `db` with extra settings; its stdout.
fn cli_env(db: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(common::BIN)
        .args(args)
        .env("DATABASE_URL", common::sqlite_url(db))
        .envs(env.iter().copied())
        .output()
        .expect("run forecast");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "forecast {args:?}: {stdout}\n{stderr}"
    );
    stdout
}

/// The verdict's current drawdown of `ticker`.
async fn drawdown(s: &Server, ticker: &str) -> f64 {
    let v = s
        .api()
        .verdict(ticker, "")
        .await
        .unwrap_or_else(|r| panic!("{ticker}'s verdict: {r}"));
    v.current_state.drawdown
}

/// Appends `days` weekdays of closes falling `step` each after AAPL's
/// last shipped row (2013-03-01, 56.137353) through the real CSV ingest.
fn ingest_aapl_fall(db: &Path, days: usize, step: f64) {
    let mut csv = String::from("date,close\n");
    let mut date = chrono::NaiveDate::from_ymd_opt(2013, 3, 1).unwrap();
    let mut close = 56.137353;
    for _ in 0..days {
        date = date.succ_opt().unwrap();
        while matches!(date.format("%a").to_string().as_str(), "Sat" | "Sun") {
            date = date.succ_opt().unwrap();
        }
        close *= 1.0 - step;
        csv.push_str(&format!("{date},{close:.6}\n"));
    }
    let file = db.with_extension("aapl-fall.csv");
    std::fs::write(&file, csv).unwrap();
    common::cli_ok(
        db,
        &["ingest", "csv", "--ticker", "AAPL", file.to_str().unwrap()],
        "",
    );
}

#[tokio::test]
async fn alerts_are_validated_capped_and_owned() {
    let s = Server::app().await;
    let api = s.api();
    // The issue's example, with its defaults filled in and its evidence
    // states empty until evaluated.
    let a = api
        .create_alert(&json!({"ticker": "AAPL", "condition": "drawdown_below", "level": -0.2}))
        .await
        .unwrap_or_else(|r| panic!("the issue's example: {r}"));
    assert_eq!(a.ticker.as_deref(), Some("AAPL"));
    assert!(!a.watchlist);
    assert_eq!(a.spec.return_period, 90);
    assert_eq!(a.spec.metric, Metric::Return);
    assert!(a.spec.email);
    assert_eq!(a.description, "drawdown at or below -20.0 %");
    assert!(a.states.is_empty(), "{a:?}");
    let id = a.id;

    every_bad_alert_is_refused_naming_its_field(&api).await;
    an_update_starts_over_or_is_refused_whole(&api, &id).await;
    fifty_alerts_are_the_cap(&api).await;
    alerts_are_their_owners_only(&s, &id).await;

    // The inbox's bounds.
    for q in ["limit=0", "limit=101", "offset=-1", "unread=maybe"] {
        let got = api.events(q).await;
        got.refused().assert(400, &[q.split('=').next().unwrap()]);
    }
    let ids: Vec<String> = (0..101).map(|i| format!("id-{i}")).collect();
    api.mark_read(&json!({ "ids": ids }))
        .await
        .refused()
        .assert(400, &["at most 100"]);
}

/// Every refusal is a 400 (404 for an unknown ticker) naming the field.
async fn every_bad_alert_is_refused_naming_its_field(api: &Api) {
    let refused = [
        (json!({"condition": "grade_changed"}), 400, "target"),
        (
            json!({"ticker": "AAPL", "condition": "drawdown_below"}),
            400,
            "level is required",
        ),
        (
            json!({"ticker": "AAPL", "condition": "drawdown_below", "level": -1.5}),
            400,
            "level must be",
        ),
        (
            json!({"ticker": "AAPL", "condition": "bucket_entered", "bucket": 99}),
            400,
            "bucket must be",
        ),
        (
            json!({"watchlist": true, "condition": "top_n_entered", "top_n": 1000}),
            400,
            "top_n must be",
        ),
        (
            json!({"ticker": "AAPL", "condition": "sideways"}),
            400,
            "condition",
        ),
        (
            json!({"ticker": "AAPL", "condition": "grade_changed", "colour": "red"}),
            400,
            "colour",
        ),
        (
            json!({"ticker": "NOPE-XYZ", "condition": "grade_changed"}),
            404,
            "NOPE-XYZ",
        ),
    ];
    for (body, code, needle) in refused {
        let got = api.create_alert(&body).await;
        got.refused().assert(code, &[needle]);
    }
}

/// Update: a changed level starts over; a bad one is refused whole.
async fn an_update_starts_over_or_is_refused_whole(api: &Api, id: &str) {
    let changed = api
        .change_alert(id, &json!({"level": -0.3, "email": false}))
        .await
        .unwrap_or_else(|r| panic!("the change: {r}"));
    assert_eq!(
        (changed.spec.level, changed.spec.email),
        (Some(-0.3), false)
    );
    api.change_alert(id, &json!({"bucket": 3}))
        .await
        .refused()
        .assert(400, &["bucket does not apply"]);
    api.alert("not-a-uuid")
        .await
        .refused()
        .assert(400, &["UUID"]);
}

/// The cap: 50 alerts per user (the account holds one), the 51st a 409
/// naming it.
async fn fifty_alerts_are_the_cap(api: &Api) {
    for i in 1..50 {
        api.create_alert(
            &json!({"watchlist": true, "condition": "drawdown_below", "level": -0.01 * f64::from(i)}),
        )
        .await
        .unwrap_or_else(|r| panic!("alert {i}: {r}"));
    }
    api.create_alert(&json!({"watchlist": true, "condition": "grade_changed"}))
        .await
        .refused()
        .assert(409, &["50 alerts"]);
    assert_eq!(api.alerts().await.unwrap().len(), 50);
}

/// Another account sees none of the alerts and cannot touch alert `id`;
/// its owner deletes it; without a key there are no alerts.
async fn alerts_are_their_owners_only(s: &Server, id: &str) {
    common::add_user(
        &s.db,
        "other@example.com",
        "premium",
        Some("another password"),
    );
    let other = common::create_key(&s.db, "other@example.com", "k");
    let refused = with_key(s, &other).delete_alert(id).await.refused();
    assert_eq!(refused.status, 404);
    let api = s.api();
    api.delete_alert(id)
        .await
        .unwrap_or_else(|r| panic!("its owner deletes it: {r}"));
    assert_eq!(api.alert(id).await.refused().status, 404);

    // No key, no alerts.
    let anonymous = s.api_as(Auth::Anonymous).alerts().await;
    assert_eq!(anonymous.refused().status, 401);
}

#[tokio::test]
async fn webhook_targets_are_checked_and_capped() {
    // Without the operator's permission, no private or loopback target.
    let s = Server::app().await;
    for (url, needle) in [
        ("http://127.0.0.1/hook", "FORECAST_WEBHOOK_ALLOW_PRIVATE"),
        ("http://10.0.0.8/hook", "FORECAST_WEBHOOK_ALLOW_PRIVATE"),
        (
            "http://169.254.169.254/latest/meta-data",
            "FORECAST_WEBHOOK_ALLOW_PRIVATE",
        ),
        ("http://[::1]/hook", "FORECAST_WEBHOOK_ALLOW_PRIVATE"),
        ("ftp://example.com/hook", "http or https"),
        ("hook", "not a URL"),
    ] {
        let got = s.api().create_webhook(url).await;
        got.refused().assert(400, &[needle]);
    }
    let long = format!("http://127.0.0.1/{}", "a".repeat(2100));
    let got = s.api().create_webhook(&long).await;
    got.refused().assert(400, &["at most 2048"]);

    // With it: five endpoints (a receiver on a port of its own), each
    // secret shown once, the sixth a 409.
    let receiver = Receiver::start(vec![]).await;
    let s = Server::app_with(
        common::fresh_db(),
        &[("FORECAST_WEBHOOK_ALLOW_PRIVATE", "on")],
    )
    .await;
    let api = s.api();
    for i in 0..5 {
        let w = api
            .create_webhook(&receiver.url(&format!("/hook/{i}")))
            .await
            .unwrap_or_else(|r| panic!("endpoint {i}: {r}"));
        assert!(w.secret.starts_with("whsec_"), "{w:?}");
        assert!(w.webhook.enabled);
    }
    api.create_webhook(&receiver.url("/hook/6"))
        .await
        .refused()
        .assert(409, &["5 webhooks"]);
    // The listing, as sent: whether a `secret` key is there at all is
    // the subject.
    let listed: Vec<serde_json::Map<String, Value>> = api.get("/alerts/webhooks").await.unwrap();
    assert_eq!(listed.len(), 5);
    assert!(
        listed.iter().all(|w| !w.contains_key("secret")),
        "{listed:?}"
    );
}

/// The issue's stranger's path, through the web app's session and the
/// real CLI: nothing fires while the condition is false; a CSV ingest
/// makes it true; `forecast alerts check` puts one event in the inbox,
/// POSTs it signed to the webhook and mails one digest; a second check
/// of the same data does nothing.
#[tokio::test]
async fn watchlist_alert_fires_once_after_an_ingest_into_inbox_webhook_and_mail() {
    let smtp = SmtpSink::start();
    let receiver = Receiver::start(vec![]).await;
    let smtp_url = smtp.url();
    let env = [
        ("FORECAST_WEBHOOK_ALLOW_PRIVATE", "on"),
        ("FORECAST_SMTP_URL", smtp_url.as_str()),
        ("FORECAST_ALERTS", "off"),
    ];
    let db = common::fresh_db();
    let s = Server::start_with(db.clone(), &env);
    let web = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    let web_api = session(&web);
    let watched = watch_and_alert_below_the_drawdowns(&s, &web, &receiver).await;
    let (before, level, days) = (watched.before, watched.level, watched.days);

    // First evaluation: AAPL and MSFT are above the level; nothing fires,
    // and both states are recorded with their evidence.
    let out = cli_env(&db, &["alerts", "check"], &env);
    assert!(out.contains("0 events fired"), "{out}");
    let listed = web_api.alerts().await.unwrap();
    let states = &listed[0].states;
    assert_eq!(states.len(), 2, "{listed:?}");
    assert!(states.iter().all(|st| !st.holds), "{states:?}");
    let evidence = states[0].observed.evidence.as_ref();
    assert!(
        evidence.expect("the evidence").bucket_samples > 0,
        "{states:?}"
    );

    // AAPL falls 5 % a day: its drawdown crosses the level.
    ingest_aapl_fall(&db, days, 0.05);
    let after = drawdown(&s, "AAPL").await;
    assert!(after < level, "{after} should be below {level}");
    let out = cli_env(&db, &["alerts", "check"], &env);
    assert!(out.contains("1 events fired"), "{out}");
    assert!(
        out.contains("1 webhook calls and 1 e-mails queued"),
        "{out}"
    );
    assert!(out.contains("2 delivered"), "{out}");

    let event = the_inbox_holds_one_unread_event(&web_api, &watched.alert, before, after).await;
    the_webhook_got_the_event_signed(&receiver, &watched.secret, &event).await;

    // The e-mail: one digest to the account, naming AAPL.
    let mails = smtp.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert!(mails[0].to.contains(TEST_EMAIL), "{:?}", mails[0]);
    assert!(mails[0].subject.contains("AAPL"), "{:?}", mails[0]);
    assert!(mails[0].body.contains("drawdown"), "{:?}", mails[0]);

    // The same data again: already evaluated, nothing new anywhere.
    // The check makes its calls itself (the server's senders are off) and
    // has exited: what it sent has been received.
    let out = cli_env(&db, &["alerts", "check"], &env);
    assert!(out.contains("already done"), "{out}");
    assert_eq!(receiver.received().len(), 1);
    assert_eq!(smtp.messages().len(), 1);

    // Another fall keeps the condition true: edge-triggered, no new event.
    ingest_aapl_fall(&db, days + 3, 0.05);
    let out = cli_env(&db, &["alerts", "check"], &env);
    assert!(out.contains("0 events fired"), "{out}");

    // Read.
    let marked = web_api
        .mark_read(&json!({"all": true}))
        .await
        .unwrap_or_else(|r| panic!("mark all read: {r}"));
    assert_eq!((marked.marked, marked.unread), (1, 0));
}

/// A watchlist alert set below both watched drawdowns, and what the
/// stranger's path needs of it.
struct WatchedAlert {
    /// AAPL's drawdown before the fall.
    before: f64,
    /// The alert's level, 5 points under both watched drawdowns.
    level: f64,
    /// Days of a 5 % fall that take AAPL below the level, and two more.
    days: usize,
    /// The alert as created.
    alert: Alert,
    /// The webhook's secret, shown once.
    secret: String,
}

/// Through the web app: a watchlist of AAPL and MSFT, a `drawdown_below`
/// alert on it under both drawdowns, and a webhook at `receiver`.
async fn watch_and_alert_below_the_drawdowns(
    s: &Server,
    web: &Browser<'_>,
    receiver: &Receiver,
) -> WatchedAlert {
    let (status, _) = web
        .send(
            Method::PUT,
            "/web/watchlist",
            Some(json!({"tickers": ["AAPL", "MSFT"]})),
        )
        .await;
    assert_eq!(status, 200);
    let before = drawdown(s, "AAPL").await;
    let level = ((before.min(drawdown(s, "MSFT").await) - 0.05) * 100.0).floor() / 100.0;
    // Days of a 5 % fall that take AAPL's drawdown below the level, and two more.
    let days = (((1.0 + level) / (1.0 + before)).ln() / 0.95f64.ln()).ceil() as usize + 2;
    let web_api = session(web);
    let alert = web_api
        .create_alert(&json!({"watchlist": true, "condition": "drawdown_below", "level": level}))
        .await
        .unwrap_or_else(|r| panic!("the watchlist alert: {r}"));
    let hook = web_api
        .create_webhook(&receiver.url("/forecast"))
        .await
        .unwrap_or_else(|r| panic!("the webhook: {r}"));
    WatchedAlert {
        before,
        level,
        days,
        alert,
        secret: hook.secret,
    }
}

/// The inbox: one unread event of `alert` on AAPL with the drawdown
/// before and after and the evidence; the event.
async fn the_inbox_holds_one_unread_event(
    web_api: &Api,
    alert: &Alert,
    before: f64,
    after: f64,
) -> AlertEvent {
    assert_eq!(web_api.unread().await.unwrap().unread, 1);
    // Read exactly as its type: `read` must be on the wire (the contract's
    // type would default it to false).
    let (page, _) = web_api
        .get_exactly::<EventPage>("/alerts/events")
        .await
        .unwrap();
    assert_eq!(page.total, 1, "{page:?}");
    let event = &page.events[0];
    assert_eq!(event.ticker, "AAPL");
    assert_eq!(event.alert_id, alert.id);
    assert!(!event.read);
    let was = event.before.as_ref().and_then(|o| o.drawdown);
    assert!((was.expect("before") - before).abs() < 1e-9, "{event:?}");
    let is = event.after.drawdown.expect("after");
    assert!((is - after).abs() < 1e-9, "{event:?}");
    assert!(!event.engine_version.is_empty(), "{event:?}");
    assert!(event.evaluation.starts_with('g'), "{event:?}");
    assert!(
        event.message.contains("past days in this bucket"),
        "{event:?}"
    );
    event.clone()
}

/// The webhook: one call, signed with the secret shown once, carrying
/// the same event.
async fn the_webhook_got_the_event_signed(receiver: &Receiver, secret: &str, event: &AlertEvent) {
    let calls = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(calls.len(), 1);
    let call = &calls[0];
    let header = call
        .headers
        .iter()
        .find(|(k, _)| k == "x-forecast-signature")
        .map(|(_, v)| v.clone())
        .expect("a signature header");
    let t = verify_signature(secret, &header, &call.body).expect("a valid signature");
    assert!((chrono::Utc::now().timestamp() - t).abs() < 120);
    assert!(verify_signature("whsec_wrong", &header, &call.body).is_err());
    let sent: WebhookPayload = serde_json::from_slice(&call.body).unwrap();
    assert_eq!(sent.kind, "alert.fired");
    assert_eq!(sent.event.id, event.id);
}

/// Retries after 500s with backoff, the delivery log, the disable rule
/// and its re-enabling, redirects not followed, and test calls.
#[tokio::test]
async fn webhooks_retry_log_and_disable() {
    let flaky = Receiver::start(vec![500, 500]).await;
    let broken = Receiver::start(vec![500; 20]).await;
    let target = Receiver::start(vec![]).await;
    let redirect = Receiver::redirecting(target.url("/elsewhere")).await;
    let env = [
        ("FORECAST_WEBHOOK_ALLOW_PRIVATE", "on"),
        ("FORECAST_ALERTS", "on"),
        ("FORECAST_ALERTS_INTERVAL_MS", "100"),
        ("FORECAST_WEBHOOK_RETRY_BASE_SECONDS", "1"),
        ("FORECAST_WEBHOOK_MAX_ATTEMPTS", "4"),
        ("FORECAST_WEBHOOK_MAX_FAILURES", "3"),
    ];
    // The backoff passes on the app's clock, moved by the test.
    let (s, clock) = Server::app_with_clock(common::fresh_db(), &env).await;
    let api = s.api();
    let mut hooks = Vec::new();
    for r in [&flaky, &broken, &redirect] {
        let w = api
            .create_webhook(&r.url("/hook"))
            .await
            .unwrap_or_else(|e| panic!("an endpoint: {e}"));
        hooks.push(w);
    }
    a_redirect_is_a_failed_test_call(&api, &hooks[2], &target).await;

    // An alert that holds at once (every drawdown is ≤ 0) fires on its
    // first evaluation, which the server makes within its interval.
    api.create_alert(&json!({"ticker": "MSFT", "condition": "drawdown_below", "level": 0.0}))
        .await
        .unwrap_or_else(|r| panic!("the alert: {r}"));

    let id_of = |i: usize| hooks[i].webhook.id.as_str();
    let secret = hooks[0].secret.as_str();
    the_flaky_endpoint_gets_three_signed_attempts(&api, &flaky, secret, id_of(0), &clock).await;
    let log = poll_log(&api, id_of(0), 50, |log| {
        log.deliveries
            .first()
            .is_some_and(|d| d.status == "delivered")
    })
    .await;
    let first = log.deliveries.first().expect("a delivery");
    assert_eq!(first.status, "delivered", "{log:?}");
    assert_eq!(first.attempts, 3, "{log:?}");
    assert_eq!(log.webhook.consecutive_failures, 0, "{log:?}");

    the_broken_endpoint_is_disabled_after_three_failures(&api, &broken, id_of(1)).await;

    // Enabled again by its owner: failures counted from zero.
    let w = api
        .enable_webhook(id_of(1), true)
        .await
        .unwrap_or_else(|r| panic!("enabled again: {r}"));
    assert_eq!((w.enabled, w.consecutive_failures), (true, 0));
}

/// A redirect is a failed test call; its target is never called. The
/// webhook is deleted after.
async fn a_redirect_is_a_failed_test_call(api: &Api, hook: &CreatedWebhook, target: &Receiver) {
    let t = api
        .test_webhook(&hook.webhook.id)
        .await
        .unwrap_or_else(|r| panic!("the test call: {r}"));
    assert_eq!(t.delivery.status, "failed", "{t:?}");
    assert_eq!(t.delivery.last_status, Some(302), "{t:?}");
    let error = t.delivery.last_error.as_deref().expect("an error");
    assert!(error.contains("not followed"), "{t:?}");
    assert!(target.received().is_empty());
    api.delete_webhook(&hook.webhook.id)
        .await
        .unwrap_or_else(|r| panic!("deleted: {r}"));
}

/// The flaky endpoint: 500, 500, then 200 — three attempts of one body,
/// each signed with `secret`. Each retry is due after the backoff (1 s,
/// then 2 s) on the app's `clock`, as its delivery log (of webhook `id`)
/// says, and is made once the test moves the clock there.
async fn the_flaky_endpoint_gets_three_signed_attempts(
    api: &Api,
    flaky: &Receiver,
    secret: &str,
    id: &str,
    clock: &ManualClock,
) {
    for (attempts, backoff) in [(1, 1), (2, 2)] {
        let due = clock.now() + chrono::Duration::seconds(backoff);
        let log = poll_log(api, id, 100, |log| {
            log.deliveries
                .first()
                .is_some_and(|d| d.attempts == attempts)
        })
        .await;
        let next = log.deliveries.first().and_then(|d| d.next_attempt_at);
        assert_eq!(next, Some(due), "{log:?}");
        assert_eq!(flaky.received().len(), attempts as usize, "{log:?}");
        clock.advance_secs(backoff);
    }
    let calls = flaky.wait_for(3, Duration::from_secs(20)).await;
    assert_eq!(calls.len(), 3, "{} calls", calls.len());
    assert!(calls.iter().all(|c| c.body == calls[0].body));
    for c in &calls {
        let header = c
            .headers
            .iter()
            .find(|(k, _)| k == "x-forecast-signature")
            .unwrap();
        verify_signature(secret, &header.1, &c.body).unwrap();
    }
}

/// The delivery log of webhook `id`, read every 100 ms until `done`
/// holds, at most `tries` times; the last one read.
async fn poll_log(
    api: &Api,
    id: &str,
    tries: usize,
    done: impl Fn(&DeliveryLog) -> bool,
) -> DeliveryLog {
    let mut log = None;
    for _ in 0..tries {
        let read = api
            .deliveries(id)
            .await
            .unwrap_or_else(|r| panic!("the delivery log: {r}"));
        let finished = done(&read);
        log = Some(read);
        if finished {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    log.expect("read at least once")
}

/// The broken endpoint (delivery log of webhook `id`): disabled after 3
/// consecutive failures, and not called after.
async fn the_broken_endpoint_is_disabled_after_three_failures(
    api: &Api,
    broken: &Receiver,
    id: &str,
) {
    let log = poll_log(api, id, 100, |log| !log.webhook.enabled).await;
    assert!(!log.webhook.enabled, "{log:?}");
    let reason = log.webhook.disabled_reason.as_deref().expect("a reason");
    assert!(reason.contains("3 consecutive"), "{log:?}");
    let last = log.deliveries.first().expect("a delivery");
    assert_eq!(last.status, "failed", "{log:?}");
    assert_eq!(broken.received().len(), 3);
    // Nothing of it is pending (a sender calls only a pending delivery),
    // so it is not called again.
    let pending = |log: &DeliveryLog| log.deliveries.iter().any(|d| d.status == "pending");
    assert!(
        !pending(&log),
        "a disabled endpoint's calls are given up: {log:?}"
    );
}

/// Issue 41: the unread count the web app polls every minute costs
/// nothing (an open tab would otherwise spend ~1,440 units a day against
/// the 1,000-a-day default) and is answered even when the day's quota is
/// used up; it still needs the key and the tier.
#[tokio::test]
async fn the_unread_count_a_page_polls_is_free() {
    // The clock stands at the start of a day's window, so the count of
    // this test never straddles two.
    let (s, _clock) = Server::app_with_clock(common::fresh_db(), &[]).await;
    let email = "poller@example.com";
    common::add_user(&s.db, email, "premium", None);
    common::set_limits(&s.db, email, 1000, Some(3));
    let key = common::create_key(&s.db, email, "poller");
    let api = with_key(&s, &key);
    let get = |path: &'static str| {
        let api = api.clone();
        async move {
            let r = api.send::<()>(Method::GET, path, None).await;
            let left = r
                .headers()
                .get("x-ratelimit-remaining")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            (r.status().as_u16(), left)
        }
    };
    for _ in 0..10 {
        assert_eq!(get("/alerts/unread").await, (200, Some(3)), "free");
    }
    for left in [2, 1, 0] {
        assert_eq!(get("/assets?category=Indices").await, (200, Some(left)));
    }
    assert_eq!(get("/assets?category=Indices").await.0, 429);
    assert_eq!(
        get("/alerts/unread").await,
        (200, Some(0)),
        "answered with the day used up"
    );
    let anonymous = s.api_as(Auth::Anonymous).unread().await;
    assert_eq!(anonymous.refused().status, 401, "still needs a key");
}

/// Issue 40, finding 9, against the real server without the operator's
/// permission for private targets: every way of writing a loopback,
/// private or special-purpose address inside an IPv6 one (IPv4-mapped,
/// -translated, -compatible, 6to4, Teredo, NAT64), the deprecated IPv6
/// ranges and the 6to4 relay anycast are refused (400 naming the
/// setting); a listener on loopback sees no connection; the server's
/// health answers throughout.
#[tokio::test]
async fn webhook_addresses_are_judged_by_what_they_embed() {
    let s = Server::start_with(common::fresh_db(), &[]);
    let api = s.api();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let forms = [
        "[::127.0.0.1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:0:127.0.0.1]",
        "[2002:7f00:1::]",
        "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
        "[64:ff9b::127.0.0.1]",
        "[fec0::1]",
        "[100::1]",
        "192.88.99.1",
        "2130706433",
        "0x7f.1",
        "0177.0.0.1",
    ];
    let (answers, health) = common::with_health(&s, async {
        let mut answers = Vec::new();
        for host in forms {
            let url = format!("http://{host}:{port}/hook");
            let got = api.create_webhook(&url).await;
            answers.push((url, got));
        }
        answers
    })
    .await;
    eprintln!("during {} refused webhook addresses: {health}", forms.len());
    for (url, got) in answers {
        let refused = match got {
            Ok(w) => panic!("{url} was stored: {w:?}"),
            Err(r) => r,
        };
        assert_eq!(refused.status, 400, "{url}: {refused}");
        let detail = refused.detail.unwrap_or_default();
        assert!(
            detail.contains("FORECAST_WEBHOOK_ALLOW_PRIVATE"),
            "{url}: {detail}"
        );
    }
    let list = api.webhooks().await.unwrap();
    assert_eq!(list.len(), 0, "nothing stored: {list:?}");
    let touched = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
    assert!(touched.is_err(), "the loopback listener was reached");
}

/// An endpoint that answers 200 `delay` after each request it reads, and
/// counts the requests; its URL.
async fn slow_endpoint(
    delay: Duration,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut buf).await;
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    (url, count)
}

/// Issue 40, finding 3: an account makes one test call at a time (a
/// second while the first waits for a slow endpoint is a 409, and after
/// the answer the next one runs), and a disabled endpoint is not called
/// (409 naming the way to enable it).
#[tokio::test]
async fn test_calls_run_one_at_a_time_and_never_reach_a_disabled_endpoint() {
    let mut s = Server::start_with(
        common::fresh_db(),
        &[("FORECAST_WEBHOOK_ALLOW_PRIVATE", "on")],
    );
    let (url, count) = slow_endpoint(Duration::from_millis(1500)).await;
    let api = s.api();
    let w = api
        .create_webhook(&url)
        .await
        .unwrap_or_else(|r| panic!("the endpoint: {r}"));
    let id = w.webhook.id;
    // The finding's attack: twenty test calls at once. One runs; the 19
    // sent while it waits are refused at once.
    let pid = s.process().id();
    let before = common::rss(pid);
    let first = api.test_webhook(&id);
    let rest = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..19 {
            let (api, id) = (api.clone(), id.clone());
            calls.spawn(async move { api.test_webhook(&id).await });
        }
        calls.join_all().await
    };
    let watch = async {
        let mut most = 0;
        for _ in 0..100 {
            most = most.max(common::rss(pid));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        most
    };
    let ((first, refused, most), health) =
        common::with_health(&s, async { tokio::join!(first, rest, watch) }).await;
    let grew = most.saturating_sub(before);
    eprintln!(
        "during 20 test calls at once: {health}; resident +{} KB",
        grew / 1_000
    );
    let first = first.unwrap_or_else(|r| panic!("the first test call: {r}"));
    assert_eq!(first.delivery.status, "delivered", "{first:?}");
    for got in refused {
        got.refused().assert(409, &["one runs at a time"]);
    }
    assert!(grew < 10_000_000, "resident memory grew by {grew} bytes");
    api.test_webhook(&id)
        .await
        .unwrap_or_else(|r| panic!("the turn is given back: {r}"));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 2);

    api.enable_webhook(&id, false)
        .await
        .unwrap_or_else(|r| panic!("disabled: {r}"));
    api.test_webhook(&id)
        .await
        .refused()
        .assert(409, &["disabled", "\"enabled\": true"]);
    // The refusal is the answer to the call itself: nothing was queued.
    let log = api
        .deliveries(&id)
        .await
        .unwrap_or_else(|r| panic!("the delivery log: {r}"));
    assert_eq!(log.deliveries.len(), 2, "{log:?}");
    assert_eq!(
        count.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "not called"
    );
}

/// An endpoint that answers 500 with a body declared as 1 GiB and streams
/// zeros for as long as the client reads; its URL and the bytes it wrote.
async fn huge_error_endpoint() -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = sent.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut buf).await;
                let head =
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 1073741824\r\n\r\n";
                if socket.write_all(head).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 64 * 1024];
                for _ in 0..(1 << 14) {
                    if socket.write_all(&chunk).await.is_err() {
                        return;
                    }
                    counter.fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    (url, sent)
}

/// Issue 40, finding 3, black-box: an endpoint that answers a test call
/// with a 1 GiB error body is quoted by its first 200 characters; the
/// server reads a few hundred bytes and drops the connection, its resident
/// memory moves by under 10 MB, and it answers health meanwhile.
#[tokio::test]
async fn a_gigabyte_error_body_costs_the_server_nothing() {
    let mut s = Server::start_with(
        common::fresh_db(),
        &[("FORECAST_WEBHOOK_ALLOW_PRIVATE", "on")],
    );
    let (url, sent) = huge_error_endpoint().await;
    let api = s.api();
    let w = api
        .create_webhook(&url)
        .await
        .unwrap_or_else(|r| panic!("the endpoint: {r}"));
    let pid = s.process().id();
    let before = common::rss(pid);
    let watch = async {
        let mut most = 0;
        for _ in 0..30 {
            most = most.max(common::rss(pid));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        most
    };
    let ((t, most), health) = common::with_health(&s, async {
        tokio::join!(api.test_webhook(&w.webhook.id), watch)
    })
    .await;
    eprintln!("during the 1 GiB error body: {health}");
    let t = t.unwrap_or_else(|r| panic!("the test call: {r}"));
    assert_eq!(t.delivery.status, "failed", "{t:?}");
    assert_eq!(t.delivery.last_status, Some(500), "{t:?}");
    let quoted = t.delivery.last_error.as_deref().expect("the error quoted");
    assert!(quoted.contains("xxxx") && quoted.len() < 400, "{quoted}");
    let most = most.max(common::rss(pid));
    let grew = most.saturating_sub(before);
    eprintln!(
        "1 GiB error body: {} KB written before the server hung up, resident +{} KB",
        sent.load(std::sync::atomic::Ordering::SeqCst) / 1_000,
        grew / 1_000
    );
    assert!(grew < 10_000_000, "resident memory grew by {grew} bytes");
    assert!(
        sent.load(std::sync::atomic::Ordering::SeqCst) < 64 << 20,
        "the server read far more than it quotes"
    );
    let (health, _) = s.get_as("/api/health", None).await;
    assert_eq!(health, 200);
}

/// Issue 40, finding 5: one account's five slow-but-successful endpoints
/// (each answers after 3 s; its 5 alerts queue 25 calls, 75 s of them)
/// delay only that account. While they crawl, another account's alert is
/// evaluated and delivered within seconds, and the slow account has at
/// most one call in flight at a time.
#[tokio::test]
async fn one_accounts_slow_endpoints_delay_only_that_account() {
    let s = Server::start_with(
        common::fresh_db(),
        &[
            ("FORECAST_WEBHOOK_ALLOW_PRIVATE", "on"),
            ("FORECAST_ALERTS", "on"),
            ("FORECAST_ALERTS_INTERVAL_MS", "100"),
        ],
    );
    common::add_user(&s.db, "slow@example.com", "premium", None);
    let slow = with_key(&s, &common::create_key(&s.db, "slow@example.com", "slow"));
    let (slow_url, slow_calls) = slow_endpoint(Duration::from_secs(3)).await;
    for i in 0..5 {
        slow.create_webhook(&format!("{slow_url}?{i}"))
            .await
            .unwrap_or_else(|r| panic!("slow endpoint {i}: {r}"));
    }
    let tickers = first_tickers(&slow.assets("").await.unwrap(), 5);
    for t in &tickers {
        slow.create_alert(&json!({ "ticker": t, "condition": "drawdown_below", "level": 0.0 }))
            .await
            .unwrap_or_else(|r| panic!("the alert on {t}: {r}"));
    }
    // The slow account's calls have started.
    let started = std::time::Instant::now();
    while slow_calls.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no slow call began"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Another account's alert, created now, reaches its endpoint at once.
    let fast = Receiver::start(vec![]).await;
    let api = s.api();
    api.create_webhook(&fast.url("/hook"))
        .await
        .unwrap_or_else(|r| panic!("the fast endpoint: {r}"));
    let created = std::time::Instant::now();
    api.create_alert(&json!({ "ticker": tickers[0], "condition": "drawdown_below", "level": 0.0 }))
        .await
        .unwrap_or_else(|r| panic!("the other account's alert: {r}"));
    let (got, health) = common::with_health(&s, fast.wait_for(1, Duration::from_secs(30))).await;
    let waited = created.elapsed();
    eprintln!("while the slow account's calls crawled: {health}");
    assert_eq!(got.len(), 1);
    let in_slow = slow_calls.load(std::sync::atomic::Ordering::SeqCst);
    eprintln!("the other account's call arrived after {waited:?}; {in_slow} slow calls begun");
    assert!(
        waited < Duration::from_secs(5),
        "waited {waited:?} behind the slow account's calls"
    );
    // One of the slow account's calls at a time: begun calls ≤ 1 + elapsed / 3 s.
    let elapsed = started.elapsed().as_secs_f64();
    assert!(
        (in_slow as f64) <= 1.0 + elapsed / 3.0 + 0.5,
        "{in_slow} slow calls begun in {elapsed:.1} s"
    );
}

/// Two replicas on one PostgreSQL database, both following it: every
/// event is recorded and delivered once.
#[tokio::test]
async fn two_replicas_fire_each_event_once() {
    let db = common::postgres::ScratchPg::create("alerts").await;
    common::cli_ok_url(&db.url, &["demo", "load", "--small"], "");
    let key = premium_key_on(&db.url, "alerts@example.com");
    let receiver = Receiver::start(vec![]).await;
    let env = [
        ("FORECAST_WEBHOOK_ALLOW_PRIVATE", "on"),
        ("FORECAST_ALERTS", "on"),
        ("FORECAST_ALERTS_INTERVAL_MS", "50"),
    ];
    let a = Server::start_url(&db.url, &env);
    let b = Server::start_url(&db.url, &env);
    let (api_a, api_b) = (with_key(&a, &key), with_key(&b, &key));
    let hook = api_a
        .create_webhook(&receiver.url("/r"))
        .await
        .unwrap_or_else(|r| panic!("the endpoint: {r}"));
    // Alerts created through both replicas, each true at once.
    let tickers = first_tickers(&api_a.assets("category=Indices").await.unwrap(), 4);
    for (i, t) in tickers.iter().enumerate() {
        let api = if i % 2 == 0 { &api_a } else { &api_b };
        api.create_alert(&json!({"ticker": t, "condition": "drawdown_below", "level": 0.0}))
            .await
            .unwrap_or_else(|r| panic!("the alert on {t}: {r}"));
    }
    each_event_is_called_once(&receiver, &api_b, &hook.webhook.id, 4).await;
    let page = api_b.events("").await.unwrap();
    assert_eq!(page.total, 4, "{page:?}");
    let mut tickers_fired: Vec<&str> = page.events.iter().map(|e| e.ticker.as_str()).collect();
    tickers_fired.sort();
    let mut want: Vec<&str> = tickers.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(tickers_fired, want);
}

/// A Premium user with a password added to the database at `url`, and an
/// API key of theirs.
fn premium_key_on(url: &str, email: &str) -> String {
    common::add_user_url(url, email, "premium", Some("alerts password"));
    common::create_key_url(url, email, "k")
}

/// The first `n` tickers of an `/api/assets` answer (which has that many).
fn first_tickers(assets: &AssetListResponse, n: usize) -> Vec<String> {
    let tickers: Vec<String> = assets
        .assets
        .iter()
        .take(n)
        .map(|x| x.ticker.clone())
        .collect();
    assert_eq!(tickers.len(), n, "{assets:?}");
    tickers
}

/// `events` events reach `receiver` (webhook `id`, its log read through
/// `api`), each called once (not once per replica), each a different event:
/// once the log holds nothing pending, no replica calls again.
async fn each_event_is_called_once(receiver: &Receiver, api: &Api, id: &str, events: usize) {
    let calls = receiver.wait_for(events, Duration::from_secs(30)).await;
    let log = poll_log(api, id, 300, |log| {
        log.deliveries.len() >= events && log.deliveries.iter().all(|d| d.status != "pending")
    })
    .await;
    assert_eq!(
        log.deliveries.len(),
        events,
        "one delivery an event: {log:?}"
    );
    assert!(
        log.deliveries.iter().all(|d| d.status == "delivered"),
        "{log:?}"
    );
    let calls_now = receiver.received();
    assert_eq!(
        calls_now.len(),
        events,
        "each event is called once, not once per replica"
    );
    let mut ids: Vec<String> = calls
        .iter()
        .map(|c| {
            let payload: WebhookPayload = serde_json::from_slice(&c.body).unwrap();
            payload.event.id
        })
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), events);
}

/// A completed grading run is evaluated by `forecast grade` itself: a
/// `top_n_entered` alert on a watchlist fires for exactly the watched
/// assets the new ranking puts in its top N, naming the run.
#[tokio::test]
async fn a_grading_run_evaluates_ranking_alerts() {
    let db = common::empty_db();
    common::cli_ok(&db, &["demo", "load", "--small"], "");
    common::add_user(&db, "rank@example.com", "premium", Some("ranking password"));
    let s = Server::app_with(db.clone(), &[]).await;
    let web = Browser::login(&s, "rank@example.com", "ranking password").await;
    let web_api = session(&web);
    let assets = web_api.assets("").await.unwrap();
    let watched: Vec<String> = assets
        .assets
        .iter()
        .map(|a| a.ticker.clone())
        .take(50)
        .collect();
    let (status, _) = web
        .send(
            Method::PUT,
            "/web/watchlist",
            Some(json!({ "tickers": watched })),
        )
        .await;
    assert_eq!(status, 200);
    web_api
        .create_alert(&json!({"watchlist": true, "condition": "top_n_entered", "top_n": 5}))
        .await
        .unwrap_or_else(|r| panic!("the ranking alert: {r}"));

    let out = common::cli_ok(&db, &["grade"], "");
    let line = out
        .lines()
        .find(|l| l.starts_with("alerts: evaluation"))
        .unwrap_or_else(|| panic!("no alerts line in {out}"));
    let ranking = web_api.ranking("return_period=90&limit=5").await.unwrap();
    let top: Vec<&str> = ranking
        .ranked_assets
        .iter()
        .map(|r| r.ticker.as_str())
        .filter(|t| watched.iter().any(|w| w == t))
        .collect();
    assert!(!top.is_empty(), "{ranking:?}");
    assert!(
        line.contains(&format!("{} events fired", top.len())),
        "{line} (watched in the top 5: {top:?})"
    );
    let page = web_api.events("").await.unwrap();
    let mut fired: Vec<&str> = page.events.iter().map(|e| e.ticker.as_str()).collect();
    fired.sort();
    let mut want = top.clone();
    want.sort();
    assert_eq!(fired, want);
    let event = &page.events[0];
    assert!(event.after.rank.expect("a rank") <= 5, "{event:?}");
    let run = event.run_id.as_deref().expect("the grading run");
    assert!(line.contains(run), "{line} {event:?}");
}
