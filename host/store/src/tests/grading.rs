//! Grading runs, tasks, grades and rankings.

use super::*;
use crate::{AssetHistory, GradeCarry};

fn grade_row(asset_id: i64, period: u32, score: f64) -> GradeRow {
    GradeRow {
        asset_id,
        return_period: period,
        metric: Metric::Return,
        data_version: 1,
        letter: "C".into(),
        score,
        expected_return: 0.01,
        prediction_error: 0.02,
        median_return: 0.03,
        median_error: 0.04,
        current_drawdown: -0.1,
        current_price: 10.0,
        win_rate: 0.5,
        body: format!("{{\"score\":{score}}}"),
    }
}

/// Grading runs: tasks claimed once, leases expire, the snapshot flips
/// atomically, new prices drop an asset's grades.
pub(crate) async fn grading_conformance(db: Arc<dyn Database>) {
    let cat = |id, t: &str| entry(id, t, Category::UsStocks, true);
    catalog(
        &*db,
        &[
            cat(1, "A1"),
            cat(2, "A2"),
            cat(3, "A3"),
            entry(4, "A4", Category::Crypto, false),
        ],
    )
    .await;
    let long = PriceSeries {
        dates: (0..400).collect(),
        closes: vec![1.0; 400],
    };
    let short = PriceSeries {
        dates: (0..10).collect(),
        closes: vec![1.0; 10],
    };
    db.store_series(&[
        (1, &long, DataSource::Synthetic),
        (2, &long, DataSource::Synthetic),
        (3, &short, DataSource::Synthetic),
        (4, &long, DataSource::Synthetic),
    ])
    .await
    .unwrap();
    assert_eq!(
        db.gradable_assets(300).await.unwrap(),
        vec![1, 2],
        "active, with enough rows"
    );
    assert!(db.active_grading_run().await.unwrap().is_none());

    let (run, first_claimed) = tasks_are_claimed_once_and_leases_expire(&db).await;
    the_snapshot_ranks_and_grades_the_run(&db, &run, first_claimed).await;
    grade_histories_are_stored_replaced_and_read(&db, &run).await;
    a_large_batch_is_written_whole(&db, &run).await;
    let next = a_new_days_run_replaces_the_snapshot_once_complete(&db, &run).await;

    // New prices drop the asset's grades (its verdicts are then computed live).
    db.store_series(&[(1, &long, DataSource::Ingested)])
        .await
        .unwrap();
    assert!(db
        .grade(&next, 1, 90, Metric::Return)
        .await
        .unwrap()
        .is_none());
}

/// The day's run of assets 1 and 2, joined by a second replica: each task
/// claimed once, a dead worker's lease taken over, the late write counting
/// nothing, the run completed once and only then active. The run's id and
/// the asset the first worker claimed (graded 70; the other 40).
async fn tasks_are_claimed_once_and_leases_expire(db: &Arc<dyn Database>) -> (String, i64) {
    let run = db
        .start_or_join_run("2026-11-22", "e@1", "s@1", &[1, 2], 100)
        .await
        .unwrap();
    let same = db
        .start_or_join_run("2026-11-22", "e@1", "s@1", &[1, 2], 101)
        .await
        .unwrap();
    assert_eq!(run.id, same.id, "a second replica joins the day's run");
    assert_eq!((run.total, run.status.as_str()), (2, "running"));

    let a = db
        .claim_grading_tasks(&run.id, "w1", 1, 200, 60)
        .await
        .unwrap();
    let b = db
        .claim_grading_tasks(&run.id, "w2", 5, 200, 60)
        .await
        .unwrap();
    assert_eq!((a.len(), b.len()), (1, 1));
    assert_ne!(a, b);
    assert!(db
        .claim_grading_tasks(&run.id, "w3", 5, 210, 60)
        .await
        .unwrap()
        .is_empty());
    db.record_grades(&run.id, "w1", &[grade_row(a[0], 90, 70.0)], &a, &[])
        .await
        .unwrap();
    assert!(
        !db.finish_run_if_complete(&run.id, 220).await.unwrap(),
        "w2 still holds a task"
    );
    assert!(
        db.active_grading_run().await.unwrap().is_none(),
        "nothing visible mid-run"
    );
    // w2 dies; its lease expires and w3 takes the task over.
    let taken = db
        .claim_grading_tasks(&run.id, "w3", 5, 261, 60)
        .await
        .unwrap();
    assert_eq!(taken, b);
    db.record_grades(&run.id, "w2", &[], &b, &[]).await.unwrap(); // too late: counts nothing
    db.record_grades(&run.id, "w3", &[grade_row(b[0], 90, 40.0)], &b, &[])
        .await
        .unwrap();
    assert!(db.finish_run_if_complete(&run.id, 300).await.unwrap());
    assert!(
        !db.finish_run_if_complete(&run.id, 301).await.unwrap(),
        "only once"
    );
    let active = db.active_grading_run().await.unwrap().unwrap();
    assert_eq!(
        (
            active.id.as_str(),
            active.graded,
            active.failures,
            active.status.as_str()
        ),
        (run.id.as_str(), 2, 0, "done")
    );
    (run.id, a[0])
}

/// The completed `run` is the latest; its ranking rows carry the
/// catalog's category and currency and the last price date; its grades
/// are the ones written (`first_claimed` graded 70, the other 40).
async fn the_snapshot_ranks_and_grades_the_run(
    db: &Arc<dyn Database>,
    run: &str,
    first_claimed: i64,
) {
    assert_eq!(db.latest_grading_run().await.unwrap().unwrap().id, run);
    let rows = db.ranking_rows(run, 90, Metric::Return).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .any(|r| r.ticker == "A1" && r.category == Category::UsStocks));
    assert!(
        rows.iter().all(|r| r.currency == "USD"),
        "the catalog's currency comes with each row"
    );
    // Day 399 of the stored series, joined from the prices.
    let day_399 = chrono::NaiveDate::from_ymd_opt(1971, 2, 4).unwrap();
    assert!(rows.iter().all(|r| r.last_price_date == day_399));
    assert_eq!(
        db.asset_by_ticker("A1")
            .await
            .unwrap()
            .unwrap()
            .last_price_date,
        Some(day_399)
    );
    let g = db.grade(run, 1, 90, Metric::Return).await.unwrap().unwrap();
    assert_eq!(
        g,
        grade_row(1, 90, if first_claimed == 1 { 70.0 } else { 40.0 })
    );
    assert!(db
        .grade(run, 1, 30, Metric::Return)
        .await
        .unwrap()
        .is_none());
}

/// The 90-day return grade history of `asset_id` in run after run.
fn points(asset_id: i64, body: &[u8]) -> TrackPoints {
    TrackPoints {
        asset_id,
        return_period: 90,
        metric: Metric::Return,
        body: body.to_vec(),
        stored: None,
    }
}

/// An asset's history and carry, as the next run reads them.
fn history(asset_id: i64, carry: Option<&[u8]>, points: Vec<TrackPoints>) -> AssetHistory {
    AssetHistory {
        asset_id,
        carry: carry.map(<[u8]>::to_vec),
        points,
    }
}

/// Grade histories: stored per (asset, period, metric), replaced by a
/// second write, read per (period, metric) with the asset's filters.
async fn grade_histories_are_stored_replaced_and_read(db: &Arc<dyn Database>, run: &str) {
    let carry = |asset_id, body: &[u8]| GradeCarry {
        asset_id,
        body: body.to_vec(),
    };
    db.record_track_points(
        run,
        &[points(1, b"old"), points(2, b"two")],
        &[carry(1, b"c-old")],
    )
    .await
    .unwrap();
    db.record_track_points(run, &[points(1, b"new")], &[carry(1, b"c-new")])
        .await
        .unwrap();
    // The assets' histories and carries, as the next run reads them: one
    // entry per asset asked for, in that order, an unknown one empty; each
    // history names the body it was read from.
    let mut read = db.asset_histories(run, &[2, 99, 1]).await.unwrap();
    for p in read.iter_mut().flat_map(|h| &mut h.points) {
        assert!(p.stored.take().is_some(), "{p:?}");
    }
    assert_eq!(
        read,
        vec![
            history(2, None, vec![points(2, b"two")]),
            history(99, None, Vec::new()),
            history(1, Some(b"c-new"), vec![points(1, b"new")]),
        ]
    );
    let stored = db.track_points(run, 90, Metric::Return).await.unwrap();
    assert_eq!(
        stored
            .iter()
            .map(|t| (t.asset_id, t.body.as_slice(), t.category, t.data_source))
            .collect::<Vec<_>>(),
        vec![
            (1, &b"new"[..], Category::UsStocks, DataSource::Synthetic),
            (2, &b"two"[..], Category::UsStocks, DataSource::Synthetic)
        ]
    );
    assert!(db
        .track_points(run, 30, Metric::Return)
        .await
        .unwrap()
        .is_empty());
}

/// A batch longer than one statement's rows, with bodies shared and new
/// and one key written twice (the later wins), reads back whole; the
/// histories of the earlier steps are left as they were.
async fn a_large_batch_is_written_whole(db: &Arc<dyn Database>, run: &str) {
    let shared = db.asset_histories(run, &[2]).await.unwrap()[0].points[0].stored;
    assert!(shared.is_some());
    let many = 1_201u32;
    let mut batch: Vec<TrackPoints> = (1..=many)
        .map(|period| TrackPoints {
            asset_id: 3,
            return_period: period,
            metric: Metric::Return,
            body: format!("history {period}").into_bytes(),
            // Every third points at a body stored before (its bytes).
            stored: (period % 3 == 0).then_some(shared).flatten(),
        })
        .collect();
    batch.push(TrackPoints {
        body: b"history 7, again".to_vec(),
        ..batch[6].clone()
    });
    db.record_track_points(run, &batch, &[]).await.unwrap();
    let read = db.asset_histories(run, &[3]).await.unwrap();
    let mut got: Vec<(u32, Vec<u8>)> = read[0]
        .points
        .iter()
        .map(|p| (p.return_period, p.body.clone()))
        .collect();
    got.sort();
    let want: Vec<(u32, Vec<u8>)> = (1..=many)
        .map(|period| {
            let body = match period {
                7 => b"history 7, again".to_vec(),
                p if p % 3 == 0 => b"two".to_vec(),
                p => format!("history {p}").into_bytes(),
            };
            (period, body)
        })
        .collect();
    assert_eq!(got, want);
    let earlier = db.asset_histories(run, &[1, 2]).await.unwrap();
    assert_eq!(earlier[0].points[0].body, b"new");
    assert_eq!(earlier[1].points[0].body, b"two");
}

/// A new day's run: the old snapshot (`run`) stays active until the new
/// one completes, then its grades, histories and carries are dropped. The
/// new run's id.
async fn a_new_days_run_replaces_the_snapshot_once_complete(
    db: &Arc<dyn Database>,
    run: &str,
) -> String {
    let next = db
        .start_or_join_run("2026-11-23", "e@1", "s@1", &[1, 2], 400)
        .await
        .unwrap();
    let all = db
        .claim_grading_tasks(&next.id, "w1", 10, 401, 60)
        .await
        .unwrap();
    db.record_grades(&next.id, "w1", &[grade_row(1, 90, 90.0)], &[1], &[2])
        .await
        .unwrap();
    assert_eq!(all.len(), 2);
    // Asset 1's history unchanged: the new run points at the old body
    // (its bytes not sent again); asset 2's is written anew.
    let old = db
        .asset_histories(run, &[1])
        .await
        .unwrap()
        .remove(0)
        .points;
    let renewed = [points(2, b"two, a day on")];
    db.record_track_points(&next.id, &[old, renewed.to_vec()].concat(), &[])
        .await
        .unwrap();
    assert_eq!(db.active_grading_run().await.unwrap().unwrap().id, run);
    assert!(db.finish_run_if_complete(&next.id, 402).await.unwrap());
    // The old run's rows went; the body the new run shares stayed.
    let kept = db.track_points(&next.id, 90, Metric::Return).await.unwrap();
    assert_eq!(
        kept.iter()
            .map(|t| (t.asset_id, t.body.as_slice()))
            .collect::<Vec<_>>(),
        vec![(1, &b"new"[..]), (2, &b"two, a day on"[..])]
    );
    let now_active = db.active_grading_run().await.unwrap().unwrap();
    assert_eq!(
        (
            now_active.id.as_str(),
            now_active.graded,
            now_active.failures
        ),
        (next.id.as_str(), 1, 1)
    );
    assert!(
        db.grade(run, 1, 90, Metric::Return)
            .await
            .unwrap()
            .is_none(),
        "old grades dropped"
    );
    assert!(
        db.track_points(run, 90, Metric::Return)
            .await
            .unwrap()
            .is_empty(),
        "old grade histories dropped with them"
    );
    assert_eq!(
        db.asset_histories(run, &[1]).await.unwrap(),
        vec![history(1, None, Vec::new())],
        "and their carries"
    );
    assert_eq!(
        db.ranking_rows(&next.id, 90, Metric::Return)
            .await
            .unwrap()
            .len(),
        1
    );
    next.id
}

/// Two pools on one database stand in for two replicas: concurrent starts
/// meet in one run whose tasks are all visible to every joiner, concurrent
/// claimers share the tasks out exactly once, and the run completes once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_grading_across_pools() {
    let url = pg_test_database().await;
    let pools = [connect(&url).await.unwrap(), connect(&url).await.unwrap()];
    let raw = sqlx::PgPool::connect(&url).await.unwrap();
    let entries: Vec<CatalogEntry> = (1..=POOLED_ASSETS)
        .map(|id| entry(id, &format!("T{id}"), Category::UsStocks, true))
        .collect();
    pools[0].upsert_catalog(&entries).await.unwrap();
    let ids: Vec<i64> = (1..=POOLED_ASSETS).collect();
    // Graded assets have prices (ranking rows carry their last date).
    let series = PriceSeries {
        dates: (0..300).collect(),
        closes: vec![1.0; 300],
    };
    let items: Vec<_> = ids
        .iter()
        .map(|&id| (id, &series, DataSource::Synthetic))
        .collect();
    pools[0].store_series(&items).await.unwrap();

    let run_id = concurrent_starts_meet_in_one_run(&pools, &raw, &ids).await;
    concurrent_claimers_grade_each_asset_once(&pools, &run_id, &ids).await;
    assert!(!pools[1]
        .finish_run_if_complete(&run_id, 3_001)
        .await
        .unwrap());
    let active = pools[1].active_grading_run().await.unwrap().unwrap();
    assert_eq!(
        (
            active.id.as_str(),
            active.status.as_str(),
            active.graded,
            active.failures
        ),
        (run_id.as_str(), "done", POOLED_ASSETS, 0)
    );
    assert_eq!(
        pools[0]
            .ranking_rows(&run_id, 90, Metric::Return)
            .await
            .unwrap()
            .len(),
        POOLED_ASSETS as usize
    );
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM grading_tasks WHERE run_id <> $1")
        .bind(&run_id)
        .fetch_one(&raw)
        .await
        .unwrap();
    assert_eq!(left, 0, "the other runs' tasks are dropped");

    raw.close().await;
    for db in &pools {
        db.close().await;
    }
    pg_drop_test_database(&url).await;
}

/// The assets of `postgres_grading_across_pools`.
const POOLED_ASSETS: i64 = 200;

/// Races to start the same run, five days running: every caller gets one
/// run, and its tasks are all there as soon as the call returns. The last
/// day's run.
async fn concurrent_starts_meet_in_one_run(
    pools: &[Arc<dyn Database>; 2],
    raw: &sqlx::PgPool,
    ids: &[i64],
) -> String {
    let mut run_id = String::new();
    for round in 0..5 {
        let day = format!("2026-01-0{}", round + 1);
        let mut starters = Vec::new();
        for i in 0..8 {
            let (db, raw, day, ids) =
                (pools[i % 2].clone(), raw.clone(), day.clone(), ids.to_vec());
            starters.push(tokio::spawn(async move {
                let run = db
                    .start_or_join_run(&day, "e@1", "s@1", &ids, 1_000 + i as i64)
                    .await
                    .unwrap();
                let tasks: i64 =
                    sqlx::query_scalar("SELECT COUNT(*) FROM grading_tasks WHERE run_id = $1")
                        .bind(&run.id)
                        .fetch_one(&raw)
                        .await
                        .unwrap();
                assert_eq!(
                    (run.total, tasks),
                    (POOLED_ASSETS, POOLED_ASSETS),
                    "a joiner sees every task"
                );
                run.id
            }));
        }
        let mut seen = Vec::new();
        for s in starters {
            seen.push(s.await.unwrap());
        }
        seen.dedup();
        assert_eq!(seen.len(), 1, "every replica joins the same run");
        run_id = seen.pop().unwrap();
    }
    run_id
}

/// Six workers, three per replica, claim small batches of `run_id` until
/// none are left: every asset claimed exactly once, the run completed
/// exactly once.
async fn concurrent_claimers_grade_each_asset_once(
    pools: &[Arc<dyn Database>; 2],
    run_id: &str,
    ids: &[i64],
) {
    let mut workers = Vec::new();
    for w in 0..6 {
        let (db, run_id) = (pools[w % 2].clone(), run_id.to_string());
        workers.push(tokio::spawn(async move {
            let worker = format!("w{w}");
            let (mut claimed, mut flips) = (Vec::new(), 0);
            loop {
                let batch = db
                    .claim_grading_tasks(&run_id, &worker, 7, 2_000, 600)
                    .await
                    .unwrap();
                if batch.is_empty() {
                    break;
                }
                let grades: Vec<GradeRow> = batch
                    .iter()
                    .flat_map(|&a| [grade_row(a, 30, a as f64), grade_row(a, 90, a as f64)])
                    .collect();
                db.record_grades(&run_id, &worker, &grades, &batch, &[])
                    .await
                    .unwrap();
                flips += usize::from(db.finish_run_if_complete(&run_id, 3_000).await.unwrap());
                claimed.extend(batch);
            }
            flips += usize::from(db.finish_run_if_complete(&run_id, 3_000).await.unwrap());
            (claimed, flips)
        }));
    }
    let (mut all, mut flips) = (Vec::new(), 0);
    for w in workers {
        let (claimed, f) = w.await.unwrap();
        all.extend(claimed);
        flips += f;
    }
    all.sort_unstable();
    assert_eq!(all, ids, "every asset claimed exactly once");
    assert_eq!(flips, 1, "the run completes exactly once");
}
