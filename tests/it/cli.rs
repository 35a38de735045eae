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
    assert!(stdout.contains("demo universe updated"), "{stdout}");
    assert!(
        stdout.contains("0 added, 0 changed, 3232 kept, 0 old tickers retired"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3232 assets (78 real, 3154 synthetic, 0 ingested;"),
        "{stdout}"
    );
    let after = Server::start_with(db, &[]).debug_health().await.1;
    let counts = |v: &serde_json::Value| v["debug"]["database"]["counts"].clone();
    assert_eq!(counts(&before)["assets"], counts(&after)["assets"]);
    assert_eq!(counts(&before)["price_rows"], counts(&after)["price_rows"]);
}

/// Turns a copy of the current demo database into what a build with the
/// first catalog (2,606 assets, 4 real histories, `demo_universe` = 1)
/// left: the assets added since are gone, `RTL.DE` (since corrected to
/// `DTE.DE`) is an active asset with prices at its first-catalog id, and
/// the real histories shipped since are flagged synthetic.
async fn make_v1_database(db: &std::path::Path) {
    // RTL.DE's id: its line in the first catalog's ticker list.
    let rtl_id = include_str!("../../data/catalog_v1_tickers.txt")
        .lines()
        .position(|t| t == "RTL.DE")
        .unwrap()
        + 1;
    // One connection: the temporary tables belong to it.
    use sqlx::Connection as _;
    let mut conn = sqlx::SqliteConnection::connect(&common::sqlite_url(db))
        .await
        .unwrap();
    for sql in [
        "DELETE FROM analysis_cache WHERE asset_id > 2606",
        "DELETE FROM asset_metadata WHERE asset_id > 2606",
        "DELETE FROM daily_prices WHERE asset_id > 2606",
        "DELETE FROM assets WHERE id > 2606",
        "CREATE TEMP TABLE a AS SELECT * FROM assets WHERE ticker = 'MMM'",
        "UPDATE a SET id = $RTL, ticker = 'RTL.DE', name = 'RTL Group'",
        "INSERT INTO assets SELECT * FROM a",
        "CREATE TEMP TABLE p AS SELECT * FROM daily_prices WHERE asset_id = 1",
        "UPDATE p SET asset_id = $RTL",
        "INSERT INTO daily_prices SELECT * FROM p",
        "UPDATE assets SET data_source = 'synthetic'
         WHERE data_source = 'real' AND ticker NOT IN ('^GSPC', '^IXIC', '^VIX', 'CL=F')",
        // The first ^GSPC file had the same 5,031 days as ^IXIC's.
        "UPDATE daily_prices SET (row_count, first_date, last_date, has_weekends, series) =
           (SELECT row_count, first_date, last_date, has_weekends, series FROM daily_prices
            WHERE asset_id = (SELECT id FROM assets WHERE ticker = '^IXIC'))
         WHERE asset_id = (SELECT id FROM assets WHERE ticker = '^GSPC')",
        "UPDATE settings SET value = '1' WHERE key = 'demo_universe'",
    ] {
        let sql = sql.replace("$RTL", &rtl_id.to_string());
        sqlx::query(&sql).execute(&mut conn).await.unwrap();
    }
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM assets")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        n,
        2_606 - 28 + 1,
        "the first catalog's surviving tickers and RTL.DE"
    );
    conn.close().await.unwrap();
}

/// A Premium user made on the older database, and its key.
fn old_user_and_key(db: &std::path::Path) -> String {
    common::add_user(
        db,
        "old@example.com",
        "premium",
        Some("an old password 1234"),
    );
    common::create_key(db, "old@example.com", "from the old build")
}

/// `db` as an older build filled it and its users used it: the v1
/// database, a user with a key (returned) and AAPL prices ingested.
async fn an_older_database_used(db: &std::path::Path) -> String {
    make_v1_database(db).await;
    let key = old_user_and_key(db);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("AAPL.csv");
    std::fs::write(&file, csv_rows(150.0)).unwrap();
    let (ok, _, stderr) = cli(db, &["ingest", "csv", file.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    key
}

/// What an updated database must serve: the old key and the new one,
/// the ingested AAPL prices, the new assets, the new real histories, and
/// RTL.DE kept but inactive.
async fn assert_updated(s: &Server, key: &str) {
    let (status, aapl) = s.get_as("/api/analysis/AAPL", Some(key)).await;
    assert_eq!(status, 200, "{aapl}");
    assert_eq!(aapl["metadata"]["data_source"], "ingested", "{aapl}");
    // The copy's AAPL history (3,270 rows, flagged synthetic) plus the 400
    // ingested rows, untouched by the update.
    assert_eq!(aapl["metadata"]["data_points"], 3_270 + 400);
    let (_, gspc) = s.get_as("/api/analysis/%5EGSPC", Some(key)).await;
    assert_eq!(
        gspc["metadata"]["data_points"], 16_607,
        "the new ^GSPC file"
    );
    for (ticker, source) in [
        ("ASML.AS", "real"),    // added, with a real history
        ("MSFT", "real"),       // synthetic before, a real file now
        ("MC.PA", "synthetic"), // added (LVMH)
        ("DTE.DE", "synthetic"),
    ] {
        let (status, v) = s
            .get_as(&format!("/api/analysis/{ticker}"), Some(key))
            .await;
        assert_eq!(status, 200, "{ticker}: {v}");
        assert_eq!(v["metadata"]["data_source"], source, "{ticker}");
    }
    let (status, v) = s.get_as("/api/analysis/RTL.DE", Some(key)).await;
    assert_eq!(status, 404, "a corrected ticker's old row is inactive: {v}");
    let (status, _) = s
        .get_as("/api/analysis/MSFT", Some(common::test_key()))
        .await;
    assert_eq!(status, 200, "the template's key still works");
    let counts = s.debug_health().await.1["debug"]["database"]["counts"].clone();
    assert_eq!(counts["assets"], 3_232 + 1, "{counts}");
}

/// Loading the changed catalog into a database an older build filled:
/// `forecast demo load` updates it in place, keeping users, keys and
/// ingested prices.
#[tokio::test]
async fn demo_load_updates_an_older_database_and_keeps_what_users_made() {
    let db = fresh_db();
    let key = an_older_database_used(&db).await;

    let (ok, stdout, stderr) = cli(&db, &["demo", "load"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("demo universe updated"), "{stdout}");
    // 654 assets are new; 71 series change: the 71 real histories of
    // first-catalog assets shipped since replace synthetic ones (AAPL's
    // ingested prices are kept), and ^GSPC's real file is a new one.
    assert!(
        stdout.contains("(654 added, 71 changed, 2507 kept, 1 old tickers retired)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3232 assets (77 real, 3154 synthetic, 1 ingested;"),
        "{stdout}"
    );
    assert!(
        !stderr.contains("loading demo universe"),
        "no progress bar when stderr is not a terminal: {stderr}"
    );
    let s = Server::start_with(db.clone(), &[]);
    assert_updated(&s, &key).await;
    drop(s);

    // Again: nothing left to change.
    let (ok, stdout, stderr) = cli(&db, &["demo", "load"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("(0 added, 0 changed, 3232 kept, 0 old tickers retired)"),
        "{stdout}"
    );
}

/// `serve` on a database an older build filled updates it before serving.
#[tokio::test]
async fn serve_updates_an_older_demo_database() {
    let db = fresh_db();
    let key = an_older_database_used(&db).await;
    let s = Server::start_with(db, &[]);
    assert_updated(&s, &key).await;
}

/// 400 weekdays of closes from 2024-01-01 on (after AAPL's and MSFT's
/// shipped histories, before today: plausible dates), as CSV.
fn csv_rows(start_price: f64) -> String {
    let mut out = String::from("date,open,high,low,close,volume\n");
    let mut day = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
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
        assert_eq!(first["metadata"]["data_source"], "real");
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
            if l.starts_with("2024-01-03") {
                "2024-01-03,1,1,1,oops,1000"
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
        assert_eq!(same["metadata"]["data_source"], "real");
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
