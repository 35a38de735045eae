//! End-to-end tests of the operator CLI: `forecast demo load` and
//! `forecast ingest csv`, observed through the real server.

use crate::common;

use std::fmt::Write as _;

use common::{cli, fresh_db, Server};
use forecast_domain::DataSource;
use forecast_testkit::api_health::StoreCounts;
use forecast_testkit::Auth;

#[tokio::test]
async fn demo_load_is_idempotent() {
    let db = fresh_db();
    let before = counts(&Server::start_with(db.clone(), &[])).await;
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
    let after = counts(&Server::start_with(db, &[])).await;
    assert_eq!(before.assets, after.assets);
    assert_eq!(before.price_rows, after.price_rows);
}

/// The store's row counts, as the server's diagnostics report them.
async fn counts(s: &Server) -> StoreCounts {
    let admin = s.api_as(Auth::Bearer(common::ADMIN_TOKEN.into()));
    let diagnostics = admin.diagnostics().await;
    diagnostics.database.counts.expect("the store's counts")
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
    let old = s.api_as(Auth::Bearer(key.to_string()));
    let aapl = old.analysis("AAPL", "").await.unwrap().metadata;
    assert_eq!(aapl.data_source, DataSource::Ingested, "{aapl:?}");
    // The copy's AAPL history (3,270 rows, flagged synthetic) plus the 400
    // ingested rows, untouched by the update.
    assert_eq!(aapl.data_points, 3_270 + 400);
    let gspc = old.analysis("^GSPC", "").await.unwrap().metadata;
    assert_eq!(gspc.data_points, 16_607, "the new ^GSPC file");
    for (ticker, source) in [
        ("ASML.AS", DataSource::Real),    // added, with a real history
        ("MSFT", DataSource::Real),       // synthetic before, a real file now
        ("MC.PA", DataSource::Synthetic), // added (LVMH)
        ("DTE.DE", DataSource::Synthetic),
    ] {
        let v = old.analysis(ticker, "").await.unwrap().metadata;
        assert_eq!(v.data_source, source, "{ticker}");
    }
    let refused = old.analysis("RTL.DE", "").await.unwrap_err();
    assert_eq!(
        refused.status, 404,
        "a corrected ticker's old row is inactive: {refused:?}"
    );
    s.api()
        .analysis("MSFT", "")
        .await
        .expect("the template's key still works");
    let counts = counts(s).await;
    assert_eq!(counts.assets, 3_232 + 1, "{counts:?}");
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
        let first = common::metadata(&s, "AAPL").await;
        assert_eq!(first.data_source, DataSource::Real);
        assert!(common::metadata(&s, "AAPL").await.from_cache);
    }
    let before = common::metadata(&Server::start_with(db.clone(), &[]), "AAPL").await;
    let rows_before = before.data_points;

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
        let same = common::metadata(&Server::start_with(db.clone(), &[]), "AAPL").await;
        assert!(same.from_cache, "the cache survives a rejected file");
        assert_eq!(same.data_source, DataSource::Real);
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
    let after = s.api().analysis("AAPL", "").await.unwrap();
    assert!(
        !after.metadata.from_cache,
        "new prices invalidate the cache"
    );
    assert_eq!(after.metadata.data_source, DataSource::Ingested);
    assert_eq!(after.metadata.data_points, rows_before + 400);
    let last_date = csv_rows(200.0).lines().last().unwrap()[..10].to_string();
    assert_eq!(after.metadata.end_date.to_string(), last_date);
    let info = s.api().asset_info("AAPL").await.unwrap();
    assert_eq!(info.data_source, DataSource::Ingested);

    // Re-ingesting the same dates replaces them (upsert), never duplicates.
    std::fs::write(&good, csv_rows(300.0)).unwrap();
    let (ok, _, stderr) = cli(
        &db,
        &["ingest", "csv", good.to_str().unwrap(), "--ticker", "AAPL"],
    );
    assert!(ok, "{stderr}");
    let again = s.api().analysis("AAPL", "").await.unwrap();
    assert_eq!(again.metadata.data_points, after.metadata.data_points);
    assert_ne!(again.current_state.price, after.current_state.price);

    // A directory: files named by ticker; an unknown ticker is rejected alone.
    let folder = dir.path().join("batch");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("MSFT.csv"), csv_rows(50.0)).unwrap();
    std::fs::write(folder.join("NOT-A-TICKER.csv"), csv_rows(50.0)).unwrap();
    let (ok, stdout, _) = cli(&db, &["ingest", "csv", folder.to_str().unwrap()]);
    assert!(!ok);
    assert!(stdout.contains("NOT-A-TICKER"), "{stdout}");
    let msft = s.api().analysis("MSFT", "return_period=30").await.unwrap();
    assert_eq!(msft.metadata.data_source, DataSource::Ingested);
}
