//! Work of the day split across replicas: one run per (kind, day), items
//! claimed once, leases expire, the run finishes when the last item closes.

use super::*;
use forecast_domain::GradingStatus;

pub(crate) async fn jobs_conformance(db: Arc<dyn Database>) {
    let items: Vec<i64> = (1..=10).collect();
    let run = db
        .start_or_join_job("refresh:test", "2026-11-25", &items, 1_000)
        .await
        .unwrap();
    assert_eq!((run.total, run.status), (10, GradingStatus::Running));
    let again = db
        .start_or_join_job("refresh:test", "2026-11-25", &[1], 1_001)
        .await
        .unwrap();
    assert_eq!(again.id, run.id, "a second starter joins the day's run");
    assert_eq!(
        db.job_by_key("refresh:test", "2026-11-25").await.unwrap(),
        Some(run.clone())
    );
    assert_eq!(
        db.job_by_key("refresh:test", "2026-11-26").await.unwrap(),
        None
    );
    let other_kind = db
        .start_or_join_job("refresh:other", "2026-11-25", &[], 1_001)
        .await
        .unwrap();
    assert_ne!(other_kind.id, run.id);
    assert_eq!(
        other_kind.status,
        GradingStatus::Done,
        "nothing to do is done at once"
    );

    // Two workers never get the same item.
    let b = db
        .claim_job_items(&run.id, "b", 4, 1_010, 60)
        .await
        .unwrap();
    let a = db
        .claim_job_items(&run.id, "a", 4, 1_050, 60)
        .await
        .unwrap();
    assert_eq!(b, vec![1, 2, 3, 4]);
    assert_eq!(a, vec![5, 6, 7, 8]);
    // b's lease expires (a's does not): c takes over b's items and the rest.
    let c = db
        .claim_job_items(&run.id, "c", 10, 1_080, 60)
        .await
        .unwrap();
    assert_eq!(c, vec![1, 2, 3, 4, 9, 10]);
    // b closing what it no longer holds counts nothing.
    let r = db
        .close_job_items(&run.id, "b", &[1, 2], &[], 1_090)
        .await
        .unwrap();
    assert_eq!((r.done, r.failures), (0, 0));
    let r = db
        .close_job_items(&run.id, "a", &[5, 6, 7], &[8], 1_090)
        .await
        .unwrap();
    assert_eq!(
        (r.done, r.failures, r.status),
        (3, 1, GradingStatus::Running)
    );
    let r = db
        .close_job_items(&run.id, "c", &[1, 2, 3, 4, 9, 10], &[], 1_100)
        .await
        .unwrap();
    assert_eq!((r.done, r.failures), (9, 1));
    assert_eq!(r.status, GradingStatus::Done);
    assert_eq!(r.finished_at, Some(1_100));
    assert!(db
        .claim_job_items(&run.id, "d", 10, 5_000, 60)
        .await
        .unwrap()
        .is_empty());

    // A week later the old run is dropped when the next one starts.
    let week = 8 * 86_400;
    let next = db
        .start_or_join_job("refresh:test", "2026-12-03", &[1, 2], 1_000 + week)
        .await
        .unwrap();
    assert_ne!(next.id, run.id);
    let back = db
        .start_or_join_job("refresh:test", "2026-11-25", &[1], 1_001 + week)
        .await
        .unwrap();
    assert_ne!(back.id, run.id, "the old run was dropped");
}
