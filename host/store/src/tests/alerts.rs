//! Alerts: the evaluation claim, the compare-and-write of a user's results,
//! the outbox's claims and the disable rule, and the alerts counter.

use super::*;
use crate::{
    AlertRecord, Attempt, Claim, NewEvent, Recorded, StateWrite, UserEvaluation, WebhookRecord,
};

fn alert(id: &str, user: &str, asset: Option<i64>) -> AlertRecord {
    AlertRecord {
        id: id.into(),
        user_id: user.into(),
        asset_id: asset,
        ticker: None,
        spec: "{}".into(),
        enabled: true,
        created_at: 1,
        updated_at: 1,
    }
}

fn state(alert: &str, asset: i64, holds: bool, replaces: Option<&str>) -> StateWrite {
    StateWrite {
        alert_id: alert.into(),
        asset_id: asset,
        holds,
        observed: format!("{{\"holds\":{holds}}}"),
        replaces: replaces.map(str::to_string),
    }
}

fn event(id: &str, alert: &str, asset: i64) -> NewEvent {
    NewEvent {
        id: id.into(),
        alert_id: alert.into(),
        asset_id: asset,
        body: format!("{{\"id\":\"{id}\"}}"),
        webhook_payload: format!("{{\"event\":\"{id}\"}}"),
    }
}

pub(crate) async fn alerts_conformance(db: Arc<dyn Database>) {
    catalog(
        &*db,
        &[
            entry(1, "AAA", Category::UsStocks, true),
            entry(2, "BBB", Category::Crypto, true),
        ],
    )
    .await;
    let ann = user(&*db, "ann@example.com", "h", Tier::Premium).await.id;
    let bob = user(&*db, "bob@example.com", "h", Tier::Premium).await.id;
    alerts_are_capped_per_user_and_owned(&db, &ann, &bob).await;

    // One claim per evaluation key; a stale unfinished claim is taken over.
    let claim = |w: &'static str, at: i64| {
        let db = db.clone();
        async move { db.claim_evaluation("k1", w, at, 300).await.unwrap() }
    };
    assert_eq!(claim("w1", 100).await, Claim::Claimed);
    assert_eq!(claim("w2", 101).await, Claim::Held);
    assert_eq!(claim("w2", 500).await, Claim::Claimed, "taken over");
    db.finish_evaluation("k1", "{}", 501).await.unwrap();
    assert_eq!(claim("w3", 10_000).await, Claim::Finished);

    // An endpoint gets one call per event recorded.
    let hook = WebhookRecord {
        id: "00000000-0000-0000-0000-00000000000a".into(),
        user_id: ann.clone(),
        url: "http://example.com/h".into(),
        secret: "whsec_x".into(),
        enabled: true,
        consecutive_failures: 0,
        disabled_reason: None,
        created_at: 1,
    };
    assert!(db.create_webhook(&hook, 1).await.unwrap().is_some());
    let mut second = hook.clone();
    second.id = "00000000-0000-0000-0000-00000000000b".into();
    assert!(
        db.create_webhook(&second, 1).await.unwrap().is_none(),
        "capped"
    );

    evaluations_are_recorded_once_and_read(&db, &ann, &bob).await;
    let due = the_outbox_claims_one_delivery_per_account(&db, &ann, &bob).await;
    failures_disable_the_endpoint_and_give_up_its_calls(&db, &ann, &hook.id, due).await;
    // Enabled again: failures from zero.
    assert!(db.set_webhook_enabled(&ann, &hook.id, true).await.unwrap());
    let w = db.webhook(&ann, &hook.id).await.unwrap().unwrap();
    assert_eq!((w.enabled, w.consecutive_failures), (true, 0));

    // Deleting an alert keeps its events.
    assert!(db.delete_alert(&ann, A1).await.unwrap());
    assert!(!db.delete_alert(&ann, A1).await.unwrap());
    assert_eq!(db.events(&ann, false, 10, 0).await.unwrap().total, 2);
    // Retention: the newest event per user kept; finished rows before the
    // cut forgotten, pending ones never.
    assert!(db.purge_alerts(1, 2_000).await.unwrap() >= 1);
    assert_eq!(db.events(&ann, false, 10, 0).await.unwrap().total, 1);
    assert!(db.delete_webhook(&ann, &hook.id).await.unwrap());
    assert!(db.deliveries_of(&hook.id, 10).await.unwrap().is_empty());
}

/// The alerts of the suite: A1 on asset 1 and A2 on the watchlist are
/// ann's; A3 is refused to ann (over the cap) and is bob's.
const A1: &str = "00000000-0000-0000-0000-000000000001";
const A2: &str = "00000000-0000-0000-0000-000000000002";
const A3: &str = "00000000-0000-0000-0000-000000000003";

/// The cap (2), per user; a new alert moves the alerts counter; an alert
/// is its owner's only.
async fn alerts_are_capped_per_user_and_owned(db: &Arc<dyn Database>, ann: &str, bob: &str) {
    let before = db.generations().await.unwrap().alerts;
    assert!(db
        .create_alert(&alert(A1, ann, Some(1)), 2)
        .await
        .unwrap()
        .is_some());
    assert!(db.generations().await.unwrap().alerts > before);
    assert!(db
        .create_alert(&alert(A2, ann, None), 2)
        .await
        .unwrap()
        .is_some());
    assert!(db
        .create_alert(&alert(A3, ann, None), 2)
        .await
        .unwrap()
        .is_none());
    assert!(db
        .create_alert(&alert(A3, bob, None), 2)
        .await
        .unwrap()
        .is_some());
    assert_eq!(db.alerts_of(ann).await.unwrap().len(), 2);
    assert_eq!(
        db.alert(ann, A1).await.unwrap().unwrap().ticker.as_deref(),
        Some("AAA")
    );
    assert!(db.alert(bob, A1).await.unwrap().is_none(), "not bob's");
}

/// Ann's evaluation k1 records its states, event and digest once; k2,
/// which read them, writes its own event; the events are ann's, read or
/// unread.
async fn evaluations_are_recorded_once_and_read(db: &Arc<dyn Database>, ann: &str, bob: &str) {
    let first = UserEvaluation {
        user_id: ann.to_string(),
        evaluation: "k1".into(),
        states: vec![state(A1, 1, true, None), state(A2, 2, false, None)],
        events: vec![event("e1", A1, 1)],
        digest: Some("{\"subject\":\"s\",\"text\":\"t\"}".into()),
        now: 1_000,
    };
    assert_eq!(
        db.record_evaluation(&first).await.unwrap(),
        Recorded::Done {
            events: 1,
            calls: 1,
            digests: 1
        }
    );
    // The same write again replaces states that have moved on: nothing.
    assert_eq!(db.record_evaluation(&first).await.unwrap(), Recorded::Stale);
    // A later evaluation that read them writes; its event is its own, and
    // a second digest of the same evaluation is never queued.
    let mut next = first.clone();
    next.evaluation = "k2".into();
    next.states = vec![state(A1, 1, true, Some("k1"))];
    next.events = vec![event("e2", A1, 1)];
    assert!(matches!(
        db.record_evaluation(&next).await.unwrap(),
        Recorded::Done { events: 1, .. }
    ));
    let states = db.alert_states(ann).await.unwrap();
    assert_eq!(states.len(), 2);
    assert!(states
        .iter()
        .any(|s| s.alert_id == A1 && s.evaluation == "k2"));

    let page = db.events(ann, false, 10, 0).await.unwrap();
    assert_eq!((page.total, page.unread, page.events.len()), (2, 2, 2));
    assert_eq!(db.events(bob, false, 10, 0).await.unwrap().total, 0);
    assert_eq!(
        db.mark_read(ann, Some(&["e1".to_string()]), 2_000)
            .await
            .unwrap(),
        1
    );
    assert_eq!(db.events(ann, true, 10, 0).await.unwrap().total, 1);
    assert_eq!(db.mark_read(bob, None, 2_000).await.unwrap(), 0);
}

/// The outbox: 2 webhook calls and 2 digests (k1, k2) due, all ann's,
/// and a call of bob's. A claim takes the oldest due delivery of each
/// account without one in flight: ann's first and bob's; nothing of
/// either while those are leased, not even for a second claimant. Ann's
/// claimed deliveries.
async fn the_outbox_claims_one_delivery_per_account(
    db: &Arc<dyn Database>,
    ann: &str,
    bob: &str,
) -> Vec<crate::DueDelivery> {
    db.enqueue_delivery(&crate::DeliveryRecord {
        id: "bob-call".into(),
        kind: "webhook".into(),
        user_id: bob.to_string(),
        webhook_id: None,
        event_id: None,
        evaluation: None,
        payload: "{}".into(),
        status: "pending".into(),
        attempts: 0,
        next_at: 0,
        last_status: None,
        last_error: None,
        created_at: 1,
        finished_at: None,
    })
    .await
    .unwrap();
    assert_eq!(db.pending_deliveries().await.unwrap(), 5);
    let first = db.claim_deliveries(1_000_000, 10, 60_000).await.unwrap();
    let mut owners: Vec<&str> = first.iter().map(|d| d.delivery.user_id.as_str()).collect();
    owners.sort();
    let mut want = vec![ann, bob];
    want.sort();
    assert_eq!(owners, want, "one per account");
    assert!(db
        .claim_deliveries(1_000_001, 10, 60_000)
        .await
        .unwrap()
        .is_empty());
    let bobs = first.iter().find(|d| d.delivery.user_id == bob).unwrap();
    assert_eq!(bobs.delivery.id, "bob-call");
    first
        .into_iter()
        .filter(|d| d.delivery.user_id == ann)
        .collect()
}

/// Failures count per endpoint (`hook`); the second consecutive one
/// disables it and gives up its pending calls. Each of ann's deliveries
/// (`due` first) is claimed once the one before it is finished (a failure
/// retries at 1,001,000, after these claims); a digest is delivered.
async fn failures_disable_the_endpoint_and_give_up_its_calls(
    db: &Arc<dyn Database>,
    ann: &str,
    hook: &str,
    mut due: Vec<crate::DueDelivery>,
) {
    let fail = |id: &str| Attempt {
        id: id.into(),
        delivered: false,
        status: Some(500),
        error: Some("answered 500".into()),
        retry_at: Some(1_001_000),
        max_failures: 2,
        now: 1_000,
    };
    let deliver = |id: &str| Attempt {
        id: id.into(),
        delivered: true,
        status: None,
        error: None,
        retry_at: None,
        max_failures: 2,
        now: 1_000,
    };
    let mut failures = 0;
    let mut now = 1_000_002;
    while let Some(d) = due.pop() {
        if d.delivery.kind == "webhook" {
            assert_eq!(d.webhook.as_ref().unwrap().secret, "whsec_x");
            db.finish_delivery(&fail(&d.delivery.id)).await.unwrap();
            failures += 1;
            if failures == 1 {
                let w = db.webhook(ann, hook).await.unwrap().unwrap();
                assert_eq!((w.enabled, w.consecutive_failures), (true, 1));
            }
        } else {
            assert_eq!(d.email, "ann@example.com");
            db.finish_delivery(&deliver(&d.delivery.id)).await.unwrap();
        }
        let next = db.claim_deliveries(now, 10, 60_000).await.unwrap();
        assert!(next.len() <= 1, "one of ann's at a time: {next:?}");
        due.extend(next);
        now += 1;
    }
    let w = db.webhook(ann, hook).await.unwrap().unwrap();
    assert!(!w.enabled);
    assert!(w.disabled_reason.unwrap().contains("2 consecutive"));
    let log = db.deliveries_of(hook, 10).await.unwrap();
    assert!(
        log.iter().all(|d| d.status == "failed" && d.attempts <= 1),
        "{log:?}"
    );
    assert_eq!(
        db.pending_deliveries().await.unwrap(),
        1,
        "bob's, still leased"
    );
}
