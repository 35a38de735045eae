//! End-to-end tests of `forecast ingest fetch`: the real binary against a
//! fake Yahoo / Stooq server (tests/common/fake_provider.rs) replaying the
//! fixture files of tests/fixtures/providers/, observed through the store
//! and the real server.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::fake_provider::{FakeProvider, Reply};
use common::{fresh_db, sqlite_url, Server, BIN};
use forecast::series::{to_days, PriceSeries};
use forecast_domain::DataSource;

/// Runs `forecast ingest fetch ARGS` against `db` with both providers'
/// base URLs on `fake`: (success, stdout, stderr).
fn fetch(db: &Path, fake: &FakeProvider, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(["ingest", "fetch"])
        .args(args)
        .env("DATABASE_URL", sqlite_url(db))
        .env("FORECAST_YAHOO_URL", &fake.base)
        .env("FORECAST_STOOQ_URL", &fake.base)
        .output()
        .expect("run forecast");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What the store holds for a ticker: its series, data version and source.
#[derive(Debug, Clone, PartialEq)]
struct Stored {
    series: Option<PriceSeries>,
    data_version: i64,
    data_source: String,
}

async fn stored(db: &Path, tickers: &[&str]) -> Vec<Stored> {
    let store = forecast::store::connect(&sqlite_url(db)).await.unwrap();
    let mut out = Vec::new();
    for t in tickers {
        let a = store
            .asset_by_ticker(t)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{t} is in the catalog"));
        out.push(Stored {
            series: store.load_series(a.id).await.unwrap(),
            data_version: a.data_version,
            data_source: a.data_source.as_str().to_string(),
        });
    }
    store.close().await;
    out
}

fn day(s: &str) -> i32 {
    to_days(chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap())
}

fn close_on(s: &PriceSeries, date: &str) -> Option<f64> {
    let i = s.dates.iter().position(|&d| d == day(date))?;
    Some(s.closes[i])
}

fn gaps(fake: &FakeProvider, symbol: &str) -> Vec<Duration> {
    let r = fake.requests_for(symbol);
    r.windows(2).map(|w| w[1].at - w[0].at).collect()
}

#[tokio::test]
async fn yahoo_fetch_loads_invalidates_caches_and_a_repeat_is_unchanged() {
    let db = fresh_db();
    let fake = FakeProvider::start();
    fake.script("AAPL", vec![Reply::fixture("yahoo/AAPL.json")])
        .script("BTC-USD", vec![Reply::fixture("yahoo/BTC-USD.json")])
        .script(
            "NVDA",
            vec![Reply::fixture("yahoo/NVDA-split-unadjusted.json")],
        );
    let server = Server::start_with(db.clone(), &[]);
    let first = common::metadata(&server, "AAPL").await;
    let cached = common::metadata(&server, "AAPL").await;
    assert!(cached.from_cache);
    assert_eq!(cached.data_source, DataSource::Real);
    let rows_before = u64::from(first.data_points);
    let tickers = ["AAPL", "BTC-USD", "NVDA"];
    let before = stored(&db, &tickers).await;

    let (ok, stdout, stderr) = fetch(
        &db,
        &fake,
        &[
            "--provider",
            "yahoo",
            "--tickers",
            "AAPL,BTC-USD,NVDA",
            "--rate",
            "2",
        ],
    );
    assert!(ok, "{stdout}\n{stderr}");
    assert_first_fetch_reported(&stdout, &stderr, rows_before);
    requests_are_yahoos_and_spaced_by_the_rate(&fake);
    let after = stored(&db, &tickers).await;
    stored_merged_by_date_and_adjusted(&before, &after);

    // The running server answers from the new data at once.
    let fresh = common::metadata(&server, "AAPL").await;
    assert!(!fresh.from_cache, "new prices invalidate the cache");
    assert_eq!(fresh.data_source, DataSource::Ingested);
    assert_eq!(u64::from(fresh.data_points), rows_before + 10);
    assert_eq!(fresh.end_date.to_string(), "2024-02-16");
    let info = server.api().asset_info("AAPL").await.unwrap();
    assert_eq!(info.data_source, DataSource::Ingested);
    assert!(common::metadata(&server, "AAPL").await.from_cache);

    // Again, with nothing new: unchanged, nothing written, caches kept.
    let (ok, stdout, stderr) = fetch(
        &db,
        &fake,
        &[
            "--provider",
            "yahoo",
            "--tickers",
            "AAPL,BTC-USD,NVDA",
            "--rate",
            "20",
            "--since",
            "2024-01-01",
        ],
    );
    assert!(ok, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("unchanged AAPL: 10 rows fetched, all already stored"),
        "{stdout}"
    );
    assert!(
        stdout.contains(": 0 loaded, 3 unchanged, 0 failed"),
        "{stdout}"
    );
    assert_eq!(
        stored(&db, &tickers).await,
        after,
        "no write, same data versions"
    );
    assert!(
        common::metadata(&server, "AAPL").await.from_cache,
        "an unchanged asset keeps its cache"
    );
    let last = fake.requests().pop().unwrap();
    assert!(
        last.target.contains("period1=1704067200&period2="),
        "{last:?}"
    );
}

/// The first fetch's report: each asset loaded with its counts (AAPL had
/// `rows_before` rows), the totals, and no progress bar off a terminal.
fn assert_first_fetch_reported(stdout: &str, stderr: &str, rows_before: u64) {
    assert!(
        stdout.contains(&format!(
            "loaded    AAPL: 10 rows fetched, {rows_before} -> {} rows stored",
            rows_before + 10
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("loaded    BTC-USD: 6 rows fetched")
            && stdout.contains("(2 null closes skipped, 1 repeated dates, 0 splits adjusted)"),
        "{stdout}"
    );
    assert!(stdout.contains("1 splits adjusted"), "{stdout}");
    assert!(
        stdout.contains("fetched 3 assets from yahoo in ")
            && stdout.contains(": 3 loaded, 0 unchanged, 0 failed"),
        "{stdout}"
    );
    assert!(
        !stderr.contains("fetching from"),
        "no progress bar when stderr is not a terminal: {stderr}"
    );
}

/// The requests: the real path and query, the project's User-Agent, one
/// per asset, spaced by the rate limit (2/s, no burst).
fn requests_are_yahoos_and_spaced_by_the_rate(fake: &FakeProvider) {
    let requests = fake.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    for r in &requests {
        assert!(r.user_agent.starts_with("forecast-engine/"), "{r:?}");
        assert!(
            r.target
                .starts_with(&format!("/v8/finance/chart/{}?interval=1d", r.symbol))
                && r.target.contains("range=max"),
            "{r:?}"
        );
    }
    let mut times: Vec<_> = requests.iter().map(|r| r.at).collect();
    times.sort();
    for w in times.windows(2) {
        assert!(
            w[1] - w[0] >= Duration::from_millis(400),
            "--rate 2 spaces requests by 500 ms: {:?}",
            w[1] - w[0]
        );
    }
}

/// Stored after the fetch of AAPL, BTC-USD and NVDA: merged by date,
/// flagged ingested, one data version more; adjusted closes, the last bar
/// of a date, synthetic history replaced, the split adjusted.
fn stored_merged_by_date_and_adjusted(before: &[Stored], after: &[Stored]) {
    for (b, a) in before.iter().zip(after) {
        assert_eq!(a.data_version, b.data_version + 1);
        assert_eq!(a.data_source, "ingested");
    }
    let aapl = after[0].series.as_ref().unwrap();
    let old = before[0].series.as_ref().unwrap();
    assert_eq!(aapl.len(), old.len() + 10);
    assert_eq!(&aapl.dates[..old.len()], &old.dates[..], "history kept");
    assert_eq!(&aapl.closes[..old.len()], &old.closes[..]);
    // adjclose is stored, not close.
    assert_eq!(close_on(aapl, "2024-02-05"), Some(186.37));
    assert_eq!(close_on(aapl, "2024-02-16"), Some(182.31));
    let btc = after[1].series.as_ref().unwrap();
    assert_eq!(
        close_on(btc, "2024-06-08"),
        Some(69_310.5),
        "the last bar of a date wins"
    );
    // BTC-USD's demo history was synthetic: it is replaced, never mixed
    // with market data, and a null close stores nothing.
    assert_eq!(before[1].data_source, "synthetic");
    assert!(old_close(&before[1], "2024-06-03").is_some());
    assert_eq!(btc.len(), 6, "only the fetched rows");
    assert_eq!(close_on(btc, "2024-06-03"), None);
    // The split is no crash: 1208.88 raw on 06-07 is 120.888 adjusted.
    let nvda = after[2].series.as_ref().unwrap();
    assert_eq!(close_on(nvda, "2024-06-07"), Some(120.888));
    assert_eq!(close_on(nvda, "2024-06-10"), Some(121.79));
    let from = nvda
        .dates
        .iter()
        .position(|&d| d == day("2024-06-03"))
        .unwrap();
    let worst = nvda.closes[from..]
        .windows(2)
        .map(|w| w[1] / w[0] - 1.0)
        .fold(0.0_f64, f64::min);
    assert!(worst > -0.05, "worst day across the split {worst}");
}

fn old_close(s: &Stored, date: &str) -> Option<f64> {
    s.series.as_ref().and_then(|s| close_on(s, date))
}

#[tokio::test]
async fn yahoo_retries_then_fails_each_bad_asset_whole() {
    let db = fresh_db();
    let fake = FakeProvider::start();
    let good = || Reply::fixture("yahoo/AAPL.json");
    fake.script(
        "MSFT",
        vec![Reply::status(429).header("Retry-After", "1"), good()],
    )
    .script("AMZN", vec![Reply::status(503), Reply::status(503), good()])
    .script("XOM", vec![Reply::status(500)])
    .script("META", vec![Reply::fixture("yahoo/truncated.json")])
    .script(
        "GE",
        vec![Reply::fixture("yahoo/not-found.json").with_status(404)],
    )
    .script("KO", vec![good().cut(5_000)])
    .script("IBM", vec![Reply::ok(vec![b' '; 21 * 1024 * 1024])]);
    let failing = ["XOM", "META", "GE", "KO", "IBM", "CS2-CSGO"];
    let before = stored(&db, &failing).await;

    let (ok, stdout, stderr) = fetch(
        &db,
        &fake,
        &[
            "--provider",
            "yahoo",
            "--tickers",
            "MSFT,AMZN,XOM,META,GE,KO,IBM,CS2-CSGO",
            "--rate",
            "20",
            "--concurrency",
            "8",
        ],
    );
    assert!(!ok, "a failed asset fails the command: {stdout}");
    assert!(stderr.contains("6 of 8 assets failed"), "{stderr}");
    for line in [
        "loaded    MSFT: 10 rows fetched",
        "loaded    AMZN: 10 rows fetched",
        "FAILED    XOM: HTTP 500 Internal Server Error (after 4 attempts)",
        "FAILED    META: yahoo answer is not valid chart JSON",
        "FAILED    GE: HTTP 404: Not Found: No data found, symbol may be delisted",
        "FAILED    KO: answer cut off",
        "FAILED    IBM: answer larger than 20 MiB",
        "FAILED    CS2-CSGO: yahoo has no symbol for CS2-CSGO",
        ": 2 loaded, 0 unchanged, 6 failed",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
    assert!(stdout.contains("the answer was cut off"), "{stdout}");
    let ko = stdout
        .lines()
        .find(|l| l.starts_with("FAILED    KO:"))
        .unwrap();
    assert!(ko.ends_with("(after 4 attempts)"), "{ko}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("FAILED")).count(),
        6,
        "one line per failure: {stdout}"
    );

    // 429 then success: the retry waited for Retry-After.
    let msft = gaps(&fake, "MSFT");
    assert_eq!(msft.len(), 1, "two requests");
    assert!(
        msft[0] >= Duration::from_secs(1),
        "Retry-After: 1 honoured: {msft:?}"
    );
    // 503 twice then success: backoff 500 ms then 1 s, each jittered to [d/2, d].
    let amzn = gaps(&fake, "AMZN");
    assert_eq!(amzn.len(), 2, "three requests");
    assert!(
        amzn[0] >= Duration::from_millis(250) && amzn[1] >= Duration::from_millis(500),
        "{amzn:?}"
    );
    // 500 forever and a cut transfer: bounded attempts.
    assert_eq!(fake.requests_for("XOM").len(), 4);
    assert_eq!(fake.requests_for("KO").len(), 4);
    // Not retried: a truncated 200, a 404, a body over the cap; no symbol, no request.
    assert_eq!(fake.requests_for("META").len(), 1);
    assert_eq!(fake.requests_for("GE").len(), 1);
    assert_eq!(fake.requests_for("IBM").len(), 1);
    assert!(fake.requests_for("CS2-CSGO").is_empty());

    // Every failed asset keeps exactly what it had; the others are loaded.
    assert_eq!(
        stored(&db, &failing).await,
        before,
        "nothing of a failed asset is written"
    );
    let loaded = stored(&db, &["MSFT", "AMZN"]).await;
    assert!(
        loaded.iter().all(|s| s.data_source == "ingested"),
        "{loaded:?}"
    );
}

#[tokio::test]
async fn stooq_fetch_maps_symbols_and_fails_bad_answers_whole() {
    let db = fresh_db();
    let fake = FakeProvider::start();
    fake.script("aapl.us", vec![Reply::fixture("stooq/aapl.us.csv")])
        .script("^spx", vec![Reply::fixture("stooq/^spx.csv")])
        .script("eurusd", vec![Reply::fixture("stooq/eurusd.csv")])
        .script("msft.us", vec![Reply::fixture("stooq/no-data.txt")])
        .script("nvda.us", vec![Reply::fixture("stooq/truncated.csv")])
        .script(
            "btcusd",
            vec![Reply::status(503), Reply::fixture("stooq/eurusd.csv")],
        );
    let failing = ["MSFT", "NVDA", "AIR.MC"];
    let before = stored(&db, &failing).await;
    let (ok, stdout, stderr) = fetch(
        &db,
        &fake,
        &[
            "--provider",
            "stooq",
            "--tickers",
            "AAPL,^GSPC,EURUSD=X,MSFT,NVDA,AIR.MC,BTC-USD",
            "--since",
            "2024-01-01",
            "--rate",
            "20",
        ],
    );
    assert!(!ok, "{stdout}");
    for line in [
        "loaded    AAPL: 10 rows fetched",
        "loaded    ^GSPC: 5 rows fetched",
        "(0 null closes skipped, 1 repeated dates, 0 splits adjusted)",
        "loaded    EURUSD=X: 5 rows fetched",
        "loaded    BTC-USD: 5 rows fetched",
        "FAILED    MSFT: stooq has no data for this symbol (unknown symbol, or no rows in the requested dates)",
        "FAILED    NVDA: stooq CSV line 11: expected 6 fields as in the header, found 2 (answer cut off?)",
        "FAILED    AIR.MC: stooq has no symbol for AIR.MC (European Stocks)",
        ": 4 loaded, 0 unchanged, 3 failed",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}\n{stderr}");
    }
    let mut symbols: Vec<String> = fake.requests().into_iter().map(|r| r.symbol).collect();
    symbols.sort();
    symbols.dedup();
    assert_eq!(
        symbols,
        ["^spx", "aapl.us", "btcusd", "eurusd", "msft.us", "nvda.us"]
    );
    let today = chrono::Utc::now().date_naive().format("%Y%m%d").to_string();
    let spx = fake.requests_for("^spx").pop().unwrap();
    assert_eq!(
        spx.target,
        format!("/q/d/l/?s=%5Espx&i=d&d1=20240101&d2={today}")
    );

    assert_eq!(
        stored(&db, &failing).await,
        before,
        "failed assets keep their prices"
    );
    let got = stored(&db, &["^GSPC", "AAPL"]).await;
    let gspc = got[0].series.as_ref().unwrap();
    assert_eq!(
        close_on(gspc, "2024-06-05"),
        Some(5354.03),
        "the repeated date keeps its last row"
    );
    assert_eq!(close_on(gspc, "2024-06-04"), Some(5291.34));
    assert_eq!(got[1].data_source, "ingested");
    assert_eq!(
        close_on(got[1].series.as_ref().unwrap(), "2024-02-16"),
        Some(182.31)
    );
}

#[tokio::test]
async fn stooq_over_quota_stops_asking() {
    let db = fresh_db();
    let fake = FakeProvider::start();
    for s in ["aapl.us", "msft.us", "nvda.us"] {
        fake.script(s, vec![Reply::fixture("stooq/limit.txt")]);
    }
    let before = stored(&db, &["AAPL", "MSFT", "NVDA"]).await;
    let (ok, stdout, _) = fetch(
        &db,
        &fake,
        &[
            "--provider",
            "stooq",
            "--tickers",
            "AAPL,MSFT,NVDA",
            "--concurrency",
            "1",
            "--rate",
            "20",
        ],
    );
    assert!(!ok);
    assert!(
        stdout.contains(
            "FAILED    AAPL: stooq refuses more requests today: Exceeded the daily hits limit"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAILED    MSFT: not fetched: stooq refuses more requests today"),
        "{stdout}"
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "no request after the quota answer"
    );
    assert_eq!(stored(&db, &["AAPL", "MSFT", "NVDA"]).await, before);
}

#[tokio::test]
async fn bad_selections_are_refused_before_any_request() {
    let db = fresh_db();
    let fake = FakeProvider::start();
    fake.script("AAPL", vec![Reply::fixture("yahoo/AAPL.json")]);
    let (ok, _, stderr) = fetch(
        &db,
        &fake,
        &["--provider", "yahoo", "--tickers", "AAPL,NOPE,ZZZ9"],
    );
    assert!(!ok);
    assert!(
        stderr.contains("unknown tickers NOPE, ZZZ9: not in the catalog, nothing was fetched"),
        "{stderr}"
    );
    let (ok, _, stderr) = fetch(&db, &fake, &["--provider", "yahoo", "--category", "Stocks"]);
    assert!(!ok);
    assert!(
        stderr.contains("unknown category 'Stocks'; expected one of: US Stocks, ETFs"),
        "{stderr}"
    );
    for args in [
        vec!["--provider", "yahoo"],
        vec!["--provider", "google", "--all"],
        vec!["--provider", "yahoo", "--all", "--tickers", "AAPL"],
        vec!["--provider", "yahoo", "--all", "--rate", "0"],
        vec!["--provider", "yahoo", "--all", "--concurrency", "100"],
        vec!["--provider", "yahoo", "--all", "--since", "2024-13-01"],
    ] {
        let (ok, _, stderr) = fetch(&db, &fake, &args);
        assert!(!ok && stderr.contains("error"), "{args:?}: {stderr}");
    }
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());

    // A category: the CS2 cases have no Yahoo symbol, so none is asked for.
    let (ok, stdout, _) = fetch(
        &db,
        &fake,
        &["--provider", "yahoo", "--category", "CS2 Cases"],
    );
    assert!(!ok);
    let failed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAILED")).collect();
    assert!(failed.len() > 30, "{stdout}");
    assert!(
        failed
            .iter()
            .all(|l| l.contains(": yahoo has no symbol for CS2-")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(": 0 loaded, 0 unchanged, {} failed", failed.len())),
        "{stdout}"
    );
    assert!(fake.requests().is_empty());
}

/// Issue 25: a provider's implausible answer is refused whole, naming the
/// row and the rule, and nothing is written; a jump is stored only when
/// the operator forces it.
#[tokio::test]
async fn implausible_answers_are_refused_and_jumps_only_when_forced() {
    let db = fresh_db();
    let fake = FakeProvider::start();
    let head = "Date,Open,High,Low,Close,Volume\n";
    // MSFT's shipped history ends on 2017-11-10 at 83.87: 900 is 10.7x.
    fake.script(
        "aapl.us",
        vec![Reply::ok(format!("{head}2024-02-05,1,1,1,1e308,1\n"))],
    )
    .script(
        "ko.us",
        vec![Reply::ok(format!(
            "{head}2024-02-05,1,1,1,50,1\n9999-12-31,1,1,1,50,1\n"
        ))],
    )
    .script(
        "msft.us",
        vec![Reply::ok(format!(
            "{head}2024-02-05,900,900,900,900,1\n2024-02-06,901,901,901,901,1\n"
        ))],
    );
    let tickers = ["AAPL", "KO", "MSFT"];
    let before = stored(&db, &tickers).await;
    let (ok, stdout, stderr) = fetch(
        &db,
        &fake,
        &["--provider", "stooq", "--tickers", "AAPL,KO,MSFT"],
    );
    assert!(!ok, "{stdout}\n{stderr}");
    for line in [
        "FAILED    AAPL: stooq answered an implausible row: price range rule: close 1e308 on 2024-02-05",
        "FAILED    KO: stooq answered an implausible row: date range rule: 9999-12-31",
        "FAILED    MSFT: stooq answer refused (row 2024-02-05): jump rule: close 900 on 2024-02-05",
    ] {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }
    assert_eq!(stored(&db, &tickers).await, before, "nothing written");

    let (ok, stdout, stderr) = fetch(
        &db,
        &fake,
        &["--provider", "stooq", "--tickers", "MSFT", "--allow-jumps"],
    );
    assert!(ok, "{stdout}\n{stderr}");
    let after = stored(&db, &["MSFT"]).await;
    let msft = after[0].series.as_ref().unwrap();
    assert_eq!(close_on(msft, "2024-02-06"), Some(901.0));
    assert_eq!(after[0].data_version, before[2].data_version + 1);
}
