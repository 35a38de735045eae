//! End-to-end tests of the operator CLI: `forecast demo load` and
//! `forecast ingest csv`, observed through the real server.

use crate::common;

use std::fmt::Write as _;

use common::{cli, fresh_db, Server};

#[tokio::test]
async fn demo_load_is_idempotent() {
    let db = fresh_db();
    let before = Server::start_with(db.clone(), &[]).debug_health().await.1;
    let (ok, stdout, stderr) = cli(&db, &["demo", "load"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("2606 assets"), "{stdout}");
    let after = Server::start_with(db, &[]).debug_health().await.1;
    let counts = |v: &serde_json::Value| v["debug"]["database"]["counts"].clone();
    assert_eq!(counts(&before)["assets"], counts(&after)["assets"]);
    assert_eq!(counts(&before)["price_rows"], counts(&after)["price_rows"]);
}

/// 400 weekdays of closes from 2027-01-04 on, as CSV.
fn csv_rows(start_price: f64) -> String {
    let mut out = String::from("date,open,high,low,close,volume\n");
    let mut day = chrono::NaiveDate::from_ymd_opt(2027, 1, 4).unwrap();
    let mut p = start_price;
    let mut n = 0;
    while n < 400 {
        if chrono::Datelike::weekday(&day).number_from_monday() <= 5 {
            p *= 1.0 + ((n as f64) * 0.7).sin() * 0.01;
            writeln!(out, "{day},{p},{p},{p},{p},1000").unwrap();
            n += 1;
        }
        day = day.succ_opt().unwrap();
    }
    out
}

#[tokio::test]
async fn ingest_upserts_invalidates_the_cache_and_rejects_bad_files_whole() {
    let db = fresh_db();
    let dir = tempfile::tempdir().unwrap();
    {
        let s = Server::start_with(db.clone(), &[]);
        let (_, first) = s.get("/api/analysis/AAPL").await;
        assert_eq!(first["metadata"]["data_source"], "synthetic");
        let (_, cached) = s.get("/api/analysis/AAPL").await;
        assert_eq!(cached["metadata"]["from_cache"], true);
    }
    let before = {
        let s = Server::start_with(db.clone(), &[]);
        s.get("/api/analysis/AAPL").await.1
    };
    let rows_before = before["metadata"]["data_points"].as_u64().unwrap();

    // A bad row: the whole file is rejected with its line number, nothing written.
    let bad = dir.path().join("AAPL.csv");
    let text: String = csv_rows(200.0)
        .lines()
        .map(|l| {
            if l.starts_with("2027-01-06") {
                "2027-01-06,1,1,1,oops,1000"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&bad, text).unwrap();
    let (ok, stdout, stderr) = cli(&db, &["ingest", "csv", bad.to_str().unwrap()]);
    assert!(!ok, "a bad file fails the command");
    assert!(
        stdout.contains("line 4"),
        "names the line: {stdout} {stderr}"
    );
    {
        let s = Server::start_with(db.clone(), &[]);
        let (_, same) = s.get("/api/analysis/AAPL").await;
        assert_eq!(
            same["metadata"]["from_cache"], true,
            "the cache survives a rejected file"
        );
        assert_eq!(same["metadata"]["data_source"], "synthetic");
    }

    // A good file with --ticker: upserted, flagged, cache invalidated.
    let good = dir.path().join("apple-prices.csv");
    std::fs::write(&good, csv_rows(200.0)).unwrap();
    let (ok, stdout, stderr) = cli(
        &db,
        &["ingest", "csv", good.to_str().unwrap(), "--ticker", "AAPL"],
    );
    assert!(ok, "{stdout} {stderr}");
    let s = Server::start_with(db.clone(), &[]);
    let (status, after) = s.get("/api/analysis/AAPL").await;
    assert_eq!(status, 200);
    assert_eq!(
        after["metadata"]["from_cache"], false,
        "new prices invalidate the cache"
    );
    assert_eq!(after["metadata"]["data_source"], "ingested");
    assert_eq!(
        after["metadata"]["data_points"].as_u64().unwrap(),
        rows_before + 400
    );
    let last_date = csv_rows(200.0).lines().last().unwrap()[..10].to_string();
    assert_eq!(after["metadata"]["end_date"], last_date.as_str());
    let (_, info) = s.get("/api/asset-info/AAPL").await;
    assert_eq!(info["data_source"], "ingested");

    // Re-ingesting the same dates replaces them (upsert), never duplicates.
    std::fs::write(&good, csv_rows(300.0)).unwrap();
    let (ok, _, stderr) = cli(
        &db,
        &["ingest", "csv", good.to_str().unwrap(), "--ticker", "AAPL"],
    );
    assert!(ok, "{stderr}");
    let (_, again) = s.get("/api/analysis/AAPL").await;
    assert_eq!(
        again["metadata"]["data_points"],
        after["metadata"]["data_points"]
    );
    assert_ne!(
        again["current_state"]["price"],
        after["current_state"]["price"]
    );

    // A directory: files named by ticker; an unknown ticker is rejected alone.
    let folder = dir.path().join("batch");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("MSFT.csv"), csv_rows(50.0)).unwrap();
    std::fs::write(folder.join("NOT-A-TICKER.csv"), csv_rows(50.0)).unwrap();
    let (ok, stdout, _) = cli(&db, &["ingest", "csv", folder.to_str().unwrap()]);
    assert!(!ok);
    assert!(stdout.contains("NOT-A-TICKER"), "{stdout}");
    let (_, msft) = s.get("/api/analysis/MSFT?return_period=30").await;
    assert_eq!(msft["metadata"]["data_source"], "ingested");
}
