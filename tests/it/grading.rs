//! The daily grading job, cached verdicts and the ranking: `forecast grade`
//! (the real CLI) with its progress, served by the router in process, the atomic snapshot (a failed or
//! interrupted run leaves the previous one served), cache invalidation by
//! ingest, every ranking parameter, and (on PostgreSQL) two processes
//! splitting one run.
//!
//! The universe is the demo one with all but one asset per category (and
//! the four real histories) deactivated, so a full run takes seconds.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use chrono::NaiveDate;
use common::{fresh_db, grade, sqlite_url, Server, BIN};
use forecast_api::analysis::VerdictResponse;
use forecast_api::assets::DataSources;
use forecast_api::ranking::{RankedAsset, RankingResponse, SortKey};
use forecast_domain::{Category, DataSource, Metric};
use forecast_testkit::api_health::{Diagnostics, GradingHealth};
use forecast_testkit::{Api, Auth, Refused};

/// Runs one statement and one count query on SQLite or PostgreSQL.
pub(crate) async fn exec_and_count(url: &str, statement: &str, count: &str) -> i64 {
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::query(statement).execute(&pool).await.unwrap();
        let n = sqlx::query_scalar(count).fetch_one(&pool).await.unwrap();
        pool.close().await;
        n
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query(statement).execute(&pool).await.unwrap();
        let n = sqlx::query_scalar(count).fetch_one(&pool).await.unwrap();
        pool.close().await;
        n
    }
}

/// Deactivates all but one asset per category and the four real
/// histories; returns the number of gradable assets left.
pub(crate) async fn small_universe(url: &str) -> usize {
    exec_and_count(
        url,
        "UPDATE assets SET is_active = (id IN (SELECT MIN(id) FROM assets GROUP BY category)
             OR ticker IN ('^GSPC', '^IXIC', '^VIX', 'CL=F', 'AAPL'))",
        "SELECT COUNT(*) FROM assets a JOIN daily_prices p ON p.asset_id = a.id
         WHERE a.is_active AND p.row_count >= 300",
    )
    .await as usize
}

/// The figure of a row the ranking sorts by `key` (its `sort_by`).
fn figure(key: &str) -> fn(&RankedAsset) -> f64 {
    match key {
        "median_return" => |a| a.median_return,
        "expected_return" => |a| a.expected_return,
        "win_rate" => |a| a.win_rate,
        "prediction_error" => |a| a.prediction_error,
        "current_drawdown" => |a| a.current_drawdown,
        "current_price" => |a| a.current_price,
        "score" => |a| a.score,
        _ => panic!("no figure {key}"),
    }
}

/// `items` ordered by the figure `key`, in the direction asked, ties by
/// ticker ascending.
fn sorted_by(items: &[RankedAsset], key: &str, descending: bool) -> bool {
    let figure = figure(key);
    items.windows(2).all(|w| {
        let (a, b) = (figure(&w[0]), figure(&w[1]));
        let ordered = if descending { a > b } else { a < b };
        ordered || (a == b && w[0].ticker < w[1].ticker)
    })
}

/// The client with the admin token (the diagnostics).
fn admin(s: &Server) -> Api {
    s.api_as(Auth::Bearer(common::ADMIN_TOKEN.into()))
}

/// The grading runs of `s`'s diagnostics.
async fn grading(s: &Server) -> GradingHealth {
    let d = admin(s).diagnostics().await;
    d.grading.expect("the grading runs could be read")
}

/// Whether the active run is the latest one (both none counts).
fn active_is_last(g: &GradingHealth) -> bool {
    g.active_run.as_deref() == g.last_run.as_ref().map(|r| r.id.as_str())
}

/// The ranking with `query`; panics on a refusal.
async fn ranking(s: &Server, query: &str) -> RankingResponse {
    s.api()
        .ranking(query)
        .await
        .unwrap_or_else(|r| panic!("ranking?{query}: {r}"))
}

/// ^GSPC's verdict with `query`; panics on a refusal.
async fn verdict(s: &Server, query: &str) -> VerdictResponse {
    s.api()
        .verdict("^GSPC", query)
        .await
        .unwrap_or_else(|r| panic!("verdict?{query}: {r}"))
}

fn day(d: &str) -> NaiveDate {
    d.parse().unwrap()
}

pub(crate) async fn sqlite_small() -> (PathBuf, usize) {
    let db = fresh_db();
    let n = small_universe(&sqlite_url(&db)).await;
    (db, n)
}

#[tokio::test]
async fn grade_then_cached_verdicts_and_every_ranking_parameter() {
    let (db, n) = sqlite_small().await;
    assert!(n >= 15, "{n}");
    let (ok, stdout, stderr) = grade(&sqlite_url(&db), &[]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("now active") && stdout.contains(&format!("{n} assets graded here")),
        "{stdout}"
    );
    assert!(
        stderr.contains("grading: ") && stderr.contains("assets/s") && stderr.contains("ETA"),
        "progress: {stderr}"
    );

    let s = Server::app_with(db, &[]).await;
    let g = grading(&s).await;
    let last = g.last_run.as_ref().expect("the last run");
    assert_eq!(last.status, "done");
    assert_eq!(last.assets_graded, n as i64);
    assert_eq!(last.failures, 0);
    assert!(last.duration_seconds.is_some(), "{last:?}");
    assert!(active_is_last(&g), "{g:?}");

    let score = graded_verdicts_come_from_the_snapshot(&s).await;
    the_default_ranking_is_every_asset_by_median_return(&s, n, score).await;
    every_ranking_parameter_sorts_filters_and_limits(&s, n).await;
}

/// Verdicts of the graded defaults come from the snapshot and agree with
/// a live analysis; custom parameters are computed live; the ^GSPC
/// verdict's score.
async fn graded_verdicts_come_from_the_snapshot(s: &Server) -> f64 {
    // current_state, signals, active_segment, grade and metadata are
    // objects: the type's.
    let v = verdict(s, "").await;
    assert!(v.metadata.from_cache);
    assert_eq!(v.ticker, "^GSPC");
    assert!(["A", "B", "C", "D", "F"].contains(&v.grade.letter.as_str()));
    let score = v.grade.score;
    assert!((0.0..=100.0).contains(&score));
    assert!(v.typical_max_drawdown.expect("a typical drawdown") < 0.0);
    assert_eq!(v.metadata.data_points, 16_607);
    assert_eq!(v.active_segment.segment_idx, v.current_state.segment);
    // The cached verdict agrees with a live full analysis.
    let full = s.api().analysis("^GSPC", "").await.unwrap();
    assert_eq!(full.current_state, v.current_state);
    let other = verdict(s, "return_period=30&metric=sortino").await;
    assert!(other.metadata.from_cache);
    assert_eq!(other.metadata.metric, Metric::Sortino);
    // Custom parameters are computed live, and agree in shape (a grade
    // with its letter: the type's).
    for q in [
        "return_period=45",
        "num_segments=25",
        "decay_factor=0.9",
        "end_date=2015-01-01",
    ] {
        let live = verdict(s, q).await;
        assert!(!live.metadata.from_cache, "{q}");
    }
    let api = s.api();
    api.verdict("^GSPC", "return_period=400")
        .await
        .refused()
        .assert(400, &["return_period"]);
    api.verdict("NOPE", "").await.refused().assert(404, &[]);
    score
}

/// The default ranking: the first 50 of the `n` assets, each with its
/// figures, by median return; ^GSPC's row flagged real and scored
/// `score`, as its verdict.
async fn the_default_ranking_is_every_asset_by_median_return(s: &Server, n: usize, score: f64) {
    // Every row's figures are numbers, calculated_at a time: the types'.
    let r = ranking(s, "").await;
    let items = &r.ranked_assets;
    assert_eq!(items.len(), n.min(50));
    assert_eq!(r.metadata.total_assets, n);
    assert_eq!(r.metadata.filtered_assets, n);
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item.rank, i + 1);
    }
    assert!(sorted_by(items, "median_return", true));
    let gspc = items.iter().find(|i| i.ticker == "^GSPC").unwrap();
    assert_eq!(
        gspc.data_source,
        DataSource::Real,
        "synthetic data is flagged in the ranking too"
    );
    assert_eq!(gspc.score, score, "ranking and verdict share the grade");
}

/// Every sort key both ways, the limit, the category filters, every
/// pre-computed (period, metric), the refusals and the Bearer guard.
async fn every_ranking_parameter_sorts_filters_and_limits(s: &Server, n: usize) {
    for key in [
        "median_return",
        "expected_return",
        "win_rate",
        "prediction_error",
        "current_drawdown",
        "current_price",
    ] {
        for (sort, desc) in [("asc", false), ("desc", true)] {
            let r = ranking(s, &format!("sort_by={key}&sort={sort}&limit=500")).await;
            assert!(sorted_by(&r.ranked_assets, key, desc), "{key} {sort}");
        }
    }
    let three = ranking(s, "limit=3").await;
    assert_eq!(three.ranked_assets.len(), 3);
    assert_eq!(
        three.metadata.filtered_assets, n,
        "filtered counts before the limit"
    );
    let idx = ranking(s, "category=Indices&limit=500").await;
    let idx_items = &idx.ranked_assets;
    assert!(idx_items.iter().all(|i| i.category == Category::Indices));
    assert_eq!(idx.metadata.filtered_assets, idx_items.len());
    assert_eq!(idx.metadata.total_assets, n);
    let two = ranking(s, "categories=Crypto,Forex&category=Indices&limit=500").await;
    assert!(two
        .ranked_assets
        .iter()
        .all(|i| i.category == Category::Crypto || i.category == Category::Forex));
    for p in [7, 30, 90, 180, 365] {
        for m in ["return", "sharpe", "sortino"] {
            let r = ranking(s, &format!("return_period={p}&metric={m}&limit=1")).await;
            assert_eq!(
                r.metadata.total_assets, n,
                "every standard combination is pre-computed"
            );
        }
    }
    let api = s.api();
    for q in [
        "limit=0",
        "limit=501",
        "return_period=60",
        "metric=alpha",
        "sort=up",
        "sort_by=volume",
        "offset=-1",
        "category=Nope",
        // An invalid category is refused even where `categories` wins.
        "categories=Crypto&category=Nope",
    ] {
        assert_eq!(api.ranking(q).await.refused().status, 400, "{q}");
    }
    assert_eq!(
        s.api_as(Auth::Anonymous).ranking("").await.refused().status,
        401,
        "the ranking is a Bearer route"
    );
}

/// The text (or ISO date) of a row the ranking sorts by `key`.
fn text(key: &str) -> fn(&RankedAsset) -> String {
    match key {
        "ticker" => |a| a.ticker.clone(),
        "name" => |a| a.name.clone(),
        "category" => |a| a.category.as_str().to_string(),
        "last_price_date" => |a| a.last_price_date.to_string(),
        _ => panic!("no text {key}"),
    }
}

/// `items` ordered by the text (or ISO date) `key`, lower-cased, in the
/// direction asked, ties by ticker ascending.
fn sorted_by_text(items: &[RankedAsset], key: &str, descending: bool) -> bool {
    let text = text(key);
    items.windows(2).all(|w| {
        let (a, b) = (text(&w[0]).to_lowercase(), text(&w[1]).to_lowercase());
        let ordered = if descending { a > b } else { a < b };
        ordered || (a == b && w[0].ticker < w[1].ticker)
    })
}

fn tickers(r: &RankingResponse) -> Vec<String> {
    r.ranked_assets.iter().map(|i| i.ticker.clone()).collect()
}

/// The screener: sources, letters, score and drawdown ranges and a least
/// number of episodes filter the whole ranking before it is counted and
/// paged, each as the rows' own figures say; a bad value is a 400 naming
/// its parameter; the CSV carries the screened rows.
#[tokio::test]
async fn the_screener_filters_the_whole_ranking() {
    let (db, n) = sqlite_small().await;
    let url = sqlite_url(&db);
    assert!(grade(&url, &[]).0);
    let s = Server::app_with(db, &[]).await;
    let whole = ranking(&s, "sort_by=ticker&limit=500").await;
    assert_eq!(whole.ranked_assets.len(), n);
    let has = |src: DataSource| whole.ranked_assets.iter().any(|a| a.data_source == src);
    assert!(has(DataSource::Real) && has(DataSource::Synthetic));
    assert!(whole.ranked_assets.iter().all(|a| a.episodes.is_some()));
    let mut narrowed = 0;
    for (screen, keep) in &screens() {
        let kept = assert_screened(&s, &whole, n, screen, keep).await;
        narrowed += usize::from(kept < n && kept > 0);
    }
    assert!(
        narrowed >= 5,
        "the screens must keep some rows and drop others"
    );
    // The screened rows as CSV: a header and one line per row.
    let csv = s
        .get_bearer(
            "/api/ranking?format=csv&limit=500&source=real",
            common::test_key(),
        )
        .await;
    assert_eq!(csv.status().as_u16(), 200);
    let real = whole
        .ranked_assets
        .iter()
        .filter(|a| a.data_source == DataSource::Real)
        .count();
    assert_eq!(csv.text().await.unwrap().lines().count(), real + 1);
    for (query, needles) in [
        ("source=stonks", &["source", "stonks"][..]),
        ("min_score=101", &["min_score"]),
        ("min_score=60&max_score=40", &["min_score", "max_score"]),
        ("max_current_drawdown=0.5", &["max_current_drawdown"]),
        ("min_win_rate=nan", &["min_win_rate"]),
        ("grades=ABC", &["grades"]),
        ("min_episodes=-1", &["min_episodes"]),
        ("currency=dollars", &["currency"]),
    ] {
        s.api().ranking(query).await.refused().assert(400, needles);
    }
}

/// Which rows a screen keeps, by the rows' own figures.
type Keep = Box<dyn Fn(&forecast_api::ranking::RankedAsset) -> bool>;

/// The screens the screener test asks for, each with the rows it keeps.
fn screens() -> Vec<(&'static str, Keep)> {
    vec![
        (
            "source=real,ingested",
            Box::new(|a| a.data_source != DataSource::Synthetic),
        ),
        (
            "source=synthetic",
            Box::new(|a| a.data_source == DataSource::Synthetic),
        ),
        (
            "grades=c,d",
            Box::new(|a| ["C", "D"].contains(&a.grade.as_str())),
        ),
        (
            "min_score=45&max_score=60",
            Box::new(|a| (45.0..=60.0).contains(&a.score)),
        ),
        (
            "max_current_drawdown=-0.1",
            Box::new(|a| a.current_drawdown <= -0.1),
        ),
        ("min_win_rate=0.5", Box::new(|a| a.win_rate >= 0.5)),
        (
            "min_median_return=0&max_expected_return=0.5",
            Box::new(|a| a.median_return >= 0.0 && a.expected_return <= 0.5),
        ),
        ("min_episodes=10", Box::new(|a| a.episodes.unwrap() >= 10)),
        ("currency=usd", Box::new(|a| a.currency == "USD")),
        ("currency=&source=", Box::new(|_| true)),
        (
            "source=real&min_episodes=5&grades=A,B,C",
            Box::new(|a| {
                a.data_source == DataSource::Real
                    && a.episodes.unwrap() >= 5
                    && a.grade.as_str() <= "C"
            }),
        ),
    ]
}

/// The ranking screened by `screen` is exactly the rows of `whole` (all
/// `n` assets) that `keep` keeps, counted before paging, its sources
/// counted; how many.
async fn assert_screened(
    s: &Server,
    whole: &forecast_api::ranking::RankingResponse,
    n: usize,
    screen: &str,
    keep: &Keep,
) -> usize {
    let want: Vec<&str> = whole
        .ranked_assets
        .iter()
        .filter(|a| keep(a))
        .map(|a| a.ticker.as_str())
        .collect();
    let got = ranking(s, &format!("sort_by=ticker&limit=500&{screen}")).await;
    let tickers: Vec<&str> = got
        .ranked_assets
        .iter()
        .map(|a| a.ticker.as_str())
        .collect();
    assert_eq!(tickers, want, "{screen}");
    assert_eq!(got.metadata.filtered_assets, want.len(), "{screen}");
    assert_eq!(got.metadata.total_assets, n, "{screen}");
    let synthetic = got
        .ranked_assets
        .iter()
        .filter(|a| a.data_source == DataSource::Synthetic)
        .count();
    assert_eq!(got.metadata.data_sources.synthetic, synthetic, "{screen}");
    want.len()
}

/// Issue 24: the whole ranking sorts by any column, filters by text and
/// pages past one answer; each row says its currency, and so do verdicts
/// (served from a snapshot stored before verdicts had one, too).
#[tokio::test]
async fn the_whole_ranking_sorts_filters_by_text_and_pages() {
    let (db, n) = sqlite_small().await;
    let url = sqlite_url(&db);
    assert!(grade(&url, &[]).0);
    // Snapshot verdicts stored before `currency` existed.
    let left = exec_and_count(
        &url,
        "UPDATE grades SET body = json_remove(body, '$.metadata.currency')",
        "SELECT COUNT(*) FROM grades WHERE body LIKE '%currency%'",
    )
    .await;
    assert_eq!(left, 0);
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let currencies: std::collections::HashMap<String, String> =
        sqlx::query_as("SELECT ticker, currency FROM assets WHERE is_active")
            .fetch_all(&pool)
            .await
            .unwrap()
            .into_iter()
            .collect();
    pool.close().await;
    let s = Server::app_with(db, &[]).await;

    every_column_sorts_the_whole_list(&s, n, &currencies).await;
    pages_make_the_whole_list(&s, n).await;
    the_text_filter_matches_ticker_or_name(&s, n).await;

    // Verdicts name the currency, cached (from a body stored without it)
    // and live.
    for (query, cached) in [("", true), ("return_period=45", false)] {
        let v = verdict(&s, query).await;
        assert_eq!(v.metadata.from_cache, cached, "{query}");
        assert_eq!(v.metadata.currency, "USD", "{query}");
    }
    the_snapshot_verdict_is_compressed_as_asked(&s).await;

    let web = ranking(&s, "limit=500").await;
    let non_usd = web
        .ranked_assets
        .iter()
        .find(|i| i.currency != "USD")
        .unwrap();
    let v = s.api().verdict(&non_usd.ticker, "").await.unwrap();
    assert!(v.metadata.from_cache);
    assert_eq!(v.metadata.currency, non_usd.currency);
}

/// Every column, over the whole list of `n` assets, each row naming its
/// currency as the catalog does.
async fn every_column_sorts_the_whole_list(
    s: &Server,
    n: usize,
    currencies: &std::collections::HashMap<String, String>,
) {
    let whole = ranking(s, "sort_by=score&limit=500").await;
    let items = &whole.ranked_assets;
    assert_eq!(items.len(), n);
    assert!(sorted_by(items, "score", true));
    assert_eq!(whole.metadata.sort_by, SortKey::Score);
    assert_eq!(whole.metadata.offset, 0);
    for item in items {
        let t = item.ticker.as_str();
        assert_eq!(item.currency, currencies[t], "{t}");
    }
    assert!(items.iter().any(|i| i.currency != "USD"), "not all USD");
    let asc = ranking(s, "sort_by=score&sort=asc&limit=500").await;
    assert!(sorted_by(&asc.ranked_assets, "score", false));
    for key in ["ticker", "name", "category", "last_price_date"] {
        for (sort, desc) in [("asc", false), ("desc", true)] {
            let r = ranking(s, &format!("sort_by={key}&sort={sort}&limit=500")).await;
            let items = &r.ranked_assets;
            assert_eq!(items.len(), n);
            assert!(sorted_by_text(items, key, desc), "{key} {sort}");
        }
    }
}

/// Pages of 4 make the whole list of `n`, ranked in it; past its end a
/// page is empty.
async fn pages_make_the_whole_list(s: &Server, n: usize) {
    for sort_by in ["score", "name"] {
        let whole = ranking(s, &format!("sort_by={sort_by}&limit=500")).await;
        let mut paged = Vec::new();
        for offset in (0..n).step_by(4) {
            let page = ranking(s, &format!("sort_by={sort_by}&limit=4&offset={offset}")).await;
            assert_eq!(page.metadata.offset, offset);
            assert_eq!(page.metadata.filtered_assets, n);
            for (i, item) in page.ranked_assets.iter().enumerate() {
                assert_eq!(item.rank, offset + i + 1, "{sort_by}");
            }
            paged.extend(page.ranked_assets);
        }
        assert_eq!(paged, whole.ranked_assets, "{sort_by}");
    }
    for offset in [n, 100_000] {
        let past = ranking(s, &format!("offset={offset}")).await;
        assert!(past.ranked_assets.is_empty());
        assert_eq!(past.metadata.filtered_assets, n);
        assert_eq!(past.metadata.offset, offset);
    }
}

/// The text filter: ticker or name, any case, before counting and paging;
/// its bounds and the other parameters' refusals.
async fn the_text_filter_matches_ticker_or_name(s: &Server, n: usize) {
    let by_ticker = ranking(s, "sort_by=ticker&sort=asc&limit=500").await;
    let expected = |text: &str| -> Vec<String> {
        by_ticker
            .ranked_assets
            .iter()
            .filter(|i| {
                let has = |f: &str| f.to_lowercase().contains(text);
                has(&i.ticker) || has(&i.name)
            })
            .map(|i| i.ticker.clone())
            .collect()
    };
    let apple = ranking(s, "q=aPpLe&sort_by=ticker&sort=asc&limit=500").await;
    assert!(tickers(&apple).contains(&"AAPL".to_string()), "by name");
    assert_eq!(tickers(&apple), expected("apple"));
    assert_eq!(apple.metadata.filtered_assets, expected("apple").len());
    assert_eq!(apple.metadata.total_assets, n);
    assert_eq!(apple.ranked_assets[0].rank, 1);
    let gspc = ranking(s, "q=%5Egs&sort_by=ticker&sort=asc").await;
    assert!(tickers(&gspc).contains(&"^GSPC".to_string()), "by ticker");
    assert_eq!(tickers(&gspc), expected("^gs"));
    let sp = ranking(s, "q=%20s%26p%20&sort_by=ticker&sort=asc").await;
    assert_eq!(tickers(&sp), expected("s&p"), "blanks around ignored");
    assert!(!expected("s&p").is_empty());
    let carets = expected("^");
    assert!(carets.len() >= 3, "{carets:?}");
    let page = ranking(s, "q=%5E&sort_by=ticker&sort=asc&limit=2&offset=1").await;
    assert_eq!(page.metadata.filtered_assets, carets.len());
    assert_eq!(tickers(&page), carets[1..3]);
    assert_eq!(page.ranked_assets[0].rank, 2);
    let none = ranking(s, "q=no%20such%20asset").await;
    assert!(none.ranked_assets.is_empty());
    assert_eq!(none.metadata.filtered_assets, 0);
    assert!(none.metadata.last_price_dates.is_none());
    let other = ranking(s, "q=apple&category=Indices").await;
    assert_eq!(other.metadata.filtered_assets, 0, "filters combine");
    ranking(s, &format!("q={}", "a".repeat(100))).await;
    for (q, name) in [
        (format!("q={}", "a".repeat(101)), "q must be at most 100"),
        ("offset=100001".into(), "offset"),
        ("offset=1.5".into(), "offset"),
        ("sort_by=Score".into(), "sort_by"),
    ] {
        s.api().ranking(&q).await.refused().assert(400, &[name]);
    }
}

/// The snapshot verdict's stored bytes, compressed as asked (issue 24).
async fn the_snapshot_verdict_is_compressed_as_asked(s: &Server) {
    let raw = |encoding: Option<&'static str>| {
        let mut req = s
            .client()
            .get(s.url("/api/analysis/%5EGSPC/verdict"))
            .bearer_auth(common::test_key());
        if let Some(e) = encoding {
            req = req.header("accept-encoding", e);
        }
        async move {
            let r = req.send().await.unwrap();
            let encoded = r
                .headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap().to_string());
            (encoded, r.bytes().to_vec())
        }
    };
    let (none, plain) = raw(None).await;
    assert_eq!(none, None);
    let (br, body) = raw(Some("br")).await;
    assert_eq!(br.as_deref(), Some("br"));
    let mut decoded = Vec::new();
    std::io::Read::read_to_end(
        &mut brotli_decompressor::Decompressor::new(&body[..], 4096),
        &mut decoded,
    )
    .unwrap();
    assert_eq!(decoded, plain, "the same bytes");
    let v: VerdictResponse = serde_json::from_slice(&plain).unwrap();
    assert!(v.metadata.from_cache);
}

/// Issue 16: every aggregate says how much of it is real, ingested or
/// synthetic, and every answer says when the asset's prices end.
#[tokio::test]
async fn aggregates_count_their_data_sources_and_answers_say_when_prices_end() {
    let (db, n) = sqlite_small().await;
    let url = sqlite_url(&db);
    let real = exec_and_count(
        &url,
        "SELECT 1",
        "SELECT COUNT(*) FROM assets a JOIN daily_prices p ON p.asset_id = a.id
         WHERE a.is_active AND p.row_count >= 300 AND a.data_source = 'real'",
    )
    .await as usize;
    assert!(real >= 4 && real < n, "{real} of {n}");
    // One asset's prices come from `forecast ingest`.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("CL=F.csv");
    std::fs::write(&csv, "date,close\n2019-01-04,47.96\n").unwrap();
    assert!(common::cli(&db, &["ingest", "csv", csv.to_str().unwrap()]).0);
    let (ok, stdout, stderr) = grade(&url, &[]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains(&format!(
            "graded prices: {} real, 1 ingested, {} synthetic",
            real - 1,
            n - real
        )),
        "{stdout}"
    );

    let s = Server::app_with(db, &[]).await;
    let r = ranking(&s, "limit=500").await;
    let meta = &r.metadata;
    assert_eq!(
        meta.data_sources,
        DataSources {
            real: real - 1,
            ingested: 1,
            synthetic: n - real
        }
    );
    assert_eq!(meta.stale_excluded, 0);
    let rows = &r.ranked_assets;
    let row = |t: &str| rows.iter().find(|i| i.ticker == t).unwrap();
    assert_eq!(row("^GSPC").last_price_date, day("2015-12-31"));
    assert_eq!(row("AAPL").last_price_date, day("2013-03-01"));
    assert_eq!(row("CL=F").last_price_date, day("2019-01-04"));
    assert_eq!(row("CL=F").data_source, DataSource::Ingested);
    let oldest = rows.iter().map(|i| i.last_price_date).min().unwrap();
    assert!(oldest <= day("2013-03-01"));
    let dates = meta.last_price_dates.as_ref().expect("the rows' dates");
    assert_eq!(dates.oldest, oldest);
    let newest = dates.newest;
    assert!(
        newest > day("2026-01-01"),
        "synthetic histories end recently: {newest}"
    );
    stale_assets_are_left_out_by_age(&s, rows, n, real).await;
    per_asset_answers_carry_the_last_price_date(&s).await;
}

/// Leave out what ends more than N days ago (N reaching back to 2020):
/// the real histories go, the recent synthetic ones stay. `rows` is the
/// whole ranking of `n` assets, `real` of them real.
async fn stale_assets_are_left_out_by_age(s: &Server, rows: &[RankedAsset], n: usize, real: usize) {
    let today = chrono::Utc::now().date_naive();
    let since_2020 = (today - chrono::NaiveDate::from_ymd_opt(2020, 1, 1).unwrap()).num_days();
    let fresh = ranking(s, &format!("limit=500&max_age_days={since_2020}")).await;
    let kept = &fresh.ranked_assets;
    assert!(kept.iter().all(|i| i.last_price_date >= day("2020-01-01")));
    assert!(!kept.iter().any(|i| i.ticker == "^GSPC"));
    // Most real histories end before 2020 (some, such as ^TNX, later).
    let young: Vec<&RankedAsset> = rows
        .iter()
        .filter(|i| i.last_price_date >= day("2020-01-01"))
        .collect();
    let count = |source: DataSource| young.iter().filter(|i| i.data_source == source).count();
    assert!(n - young.len() >= 4, "{} stale of {n}", n - young.len());
    assert_eq!(fresh.metadata.stale_excluded, n - young.len());
    assert_eq!(fresh.metadata.filtered_assets, young.len());
    assert_eq!(kept.len(), young.len());
    assert_eq!(
        fresh.metadata.data_sources,
        DataSources {
            real: count(DataSource::Real),
            ingested: 0,
            synthetic: n - real
        }
    );
    for bad in ["-1", "36501", "soon"] {
        s.api()
            .ranking(&format!("max_age_days={bad}"))
            .await
            .refused()
            .assert(400, &["max_age_days"]);
    }
}

/// Per-asset answers: cached and live verdicts, the analysis, the
/// catalog and the metadata all carry ^GSPC's last price date.
async fn per_asset_answers_carry_the_last_price_date(s: &Server) {
    let api = s.api();
    let last = day("2015-12-31");
    for query in ["", "return_period=45"] {
        let v = verdict(s, query).await;
        assert_eq!(v.metadata.last_price_date, last, "verdict?{query}");
    }
    for query in ["end_date=2010-01-01", ""] {
        let a = api.analysis("^GSPC", query).await.unwrap();
        assert_eq!(a.metadata.last_price_date, last, "analysis?{query}");
    }
    let cut = api.analysis("^GSPC", "end_date=2010-01-01").await.unwrap();
    assert_eq!(
        cut.metadata.end_date,
        day("2009-12-31"),
        "the window ends earlier"
    );
    let info = api.asset_info("^GSPC").await.unwrap();
    assert_eq!(info.last_price_date, Some(last));
    let list = api.assets("category=Indices").await.unwrap();
    let gspc = list.assets.iter().find(|a| a.ticker == "^GSPC").unwrap();
    assert_eq!(gspc.last_price_date, Some(last));
}

#[tokio::test]
async fn ingest_invalidates_exactly_the_ingested_asset() {
    let (db, n) = sqlite_small().await;
    assert!(grade(&sqlite_url(&db), &[]).0);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("AAPL.csv");
    std::fs::write(&csv, "date,close\n2026-11-02,123.0\n2026-11-03,124.5\n").unwrap();
    let (ok, _, stderr) = common::cli(&db, &["ingest", "csv", csv.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let s = Server::app_with(db, &[]).await;
    let aapl = s.api().verdict("AAPL", "").await.unwrap();
    assert!(!aapl.metadata.from_cache, "new prices: computed live");
    assert_eq!(aapl.current_state.price, 124.5);
    assert_eq!(aapl.metadata.data_source, DataSource::Ingested);
    let gspc = verdict(&s, "").await;
    assert!(gspc.metadata.from_cache, "other assets stay cached");
    let r = ranking(&s, "limit=500").await;
    assert_eq!(
        r.metadata.total_assets,
        n - 1,
        "the stale grade is out of the ranking until the next run"
    );
}

/// Starts `forecast grade` with `engine`, waits for its first progress
/// report and kills it: a replica dying mid-run with claimed tasks.
fn grade_until_first_progress_then_kill(url: &str, engine: &Path) {
    use std::io::Read;
    let mut child = Command::new(BIN)
        .arg("grade")
        .env("DATABASE_URL", url)
        .env("FORECAST_SEGMENTATION_WASM", engine)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("grading: ") {
        let k = stderr.read(&mut buf).unwrap();
        assert!(k > 0, "grade exited before reporting progress");
        seen.extend_from_slice(&buf[..k]);
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A clock reading for a second `forecast grade` (`FORECAST_TEST_CLOCK`):
/// seconds after the killed one's claims, so their 1-second lease has
/// expired for it without waiting.
fn after_the_lease() -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(5)).to_rfc3339()
}

/// `forecast grade` with the engine `alt` once the killed run's 1 s
/// lease has expired: (success, stdout, stderr).
fn grade_after_the_lease(url: &str, alt: &Path) -> (bool, String, String) {
    grade(
        url,
        &[
            ("FORECAST_SEGMENTATION_WASM", alt.to_str().unwrap()),
            ("FORECAST_GRADING_LEASE_SECONDS", "1"),
            ("FORECAST_TEST_CLOCK", &after_the_lease()),
        ],
    )
}

/// A copy of the built-in engine under another name: a different engine
/// version label, so `forecast grade` starts a new run.
fn alt_engine(dir: &Path) -> PathBuf {
    let path = dir.join("alt.wasm");
    std::fs::copy(common::component("segmentation"), &path).unwrap();
    path
}

#[tokio::test]
async fn failed_and_interrupted_runs_leave_the_previous_snapshot_served() {
    let (db, n) = sqlite_small().await;
    let url = sqlite_url(&db);
    assert!(grade(&url, &[]).0);
    let s = Server::app_with(db.clone(), &[]).await;
    let first_run = grading(&s).await.active_run;

    // A run whose engine fails on every asset is never activated.
    let misbehave = common::component("misbehave");
    let (ok, stdout, _) = grade(
        &url,
        &[
            ("FORECAST_SEGMENTATION_WASM", misbehave.to_str().unwrap()),
            ("FORECAST_PLUGIN_TIMEOUT_MS", "100"),
        ],
    );
    assert!(ok);
    assert!(
        stdout.contains(&format!("{n} failed")) && !stdout.contains("now active"),
        "{stdout}"
    );
    assert_eq!(grading(&s).await.active_run, first_run);
    assert!(verdict(&s, "").await.metadata.from_cache);

    // A run killed half-way is not visible; a second process finishes it,
    // taking over the dead process's expired claims, each asset once.
    let dir = tempfile::tempdir().unwrap();
    let alt = alt_engine(dir.path());
    grade_until_first_progress_then_kill(&url, &alt);
    let mid = grading(&s).await;
    assert_eq!(
        mid.active_run, first_run,
        "a half-graded run is never served"
    );
    assert_eq!(mid.last_run.expect("the killed run").status, "running");
    let (ok, stdout, stderr) = grade_after_the_lease(&url, &alt);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("now active"), "{stdout}");
    let done = grading(&s).await;
    let last = done.last_run.as_ref().expect("the finished run");
    assert_eq!((last.assets_graded, last.failures), (n as i64, 0));
    assert_ne!(done.active_run, first_run);
    assert_eq!(last.engine, "segmentation/alt@1.1.0");
    // This server runs the default engine: the alt engine's snapshot is not
    // served as its answer.
    assert!(!verdict(&s, "").await.metadata.from_cache);
}

#[tokio::test]
async fn two_processes_split_one_run_on_postgres() {
    let db = common::postgres::ScratchPg::create("grading").await;
    let url = db.url.clone();
    common::cli_ok_url(&url, &["demo", "load"], "");
    let n = small_universe(&url).await;
    let spawn = || {
        let url = url.clone();
        std::thread::spawn(move || grade(&url, &[]))
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    assert!(a.0 && b.0, "{} {}", a.2, b.2);
    let here = |out: &str| -> usize {
        let i = out.find(" assets graded here").unwrap();
        out[..i].rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(
        here(&a.1) + here(&b.1),
        n,
        "every asset graded exactly once: {} / {}",
        a.1,
        b.1
    );
    assert_eq!(
        [&a.1, &b.1]
            .iter()
            .filter(|o| o.contains("now active"))
            .count(),
        1,
        "activated once"
    );
    let graded = exec_and_count(&url, "SELECT 1", "SELECT MAX(graded) FROM grading_runs").await;
    assert_eq!(graded as usize, n);

    // A replica killed mid-run loses no task: another one takes its claims
    // over once their lease expires, and every asset is counted once.
    let dir = tempfile::tempdir().unwrap();
    let alt = alt_engine(dir.path());
    grade_until_first_progress_then_kill(&url, &alt);
    let (ok, stdout, stderr) = grade_after_the_lease(&url, &alt);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("now active")
            && stdout.contains(&format!("run total {n} graded, 0 failed")),
        "{stdout}"
    );
}

#[tokio::test]
async fn serve_grades_at_start_when_there_is_no_snapshot() {
    let (db, n) = sqlite_small().await;
    let s = Server::app_with(db, &[("FORECAST_GRADING", "on")]).await;
    // Poll the health diagnostics until the start-up run is active (bounded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let g = admin(&s).diagnostics().await.grading;
        if let Some(g) = g.as_ref().filter(|g| g.active_run.is_some()) {
            let last = g.last_run.as_ref().expect("the run");
            assert_eq!(last.assets_graded, n as i64);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no grading run completed: {g:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(ranking(&s, "").await.metadata.total_assets, n);
    assert!(verdict(&s, "").await.metadata.from_cache);
}

/// The app over `db` grading in the background, polling for engine
/// changes every `poll_ms` milliseconds.
async fn grading_app_polling(db: PathBuf, poll_ms: &str) -> Server {
    let env = [
        ("FORECAST_GRADING", "on"),
        ("FORECAST_PLUGIN_POLL_MS", poll_ms),
    ];
    Server::app_with(db, &env).await
}

/// Activating another engine schedules a re-grade: the snapshot of the old
/// engine is replaced by one of the new, without waiting for the next day.
#[tokio::test]
async fn activating_an_engine_regrades() {
    let (db, n) = sqlite_small().await;
    let s = grading_app_polling(db, "200").await;
    let engine_of_active_run = |h: &Diagnostics| {
        let g = h.grading.as_ref()?;
        let last = g.last_run.as_ref();
        (g.active_run.is_some() && active_is_last(g)).then(|| last.unwrap().engine.clone())
    };
    let wait_for = |want: &'static str| {
        let s = &s;
        async move {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            loop {
                let h = admin(s).diagnostics().await;
                if engine_of_active_run(&h).as_deref() == Some(want) {
                    return h;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "no run by {want}: {h:?}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        }
    };
    wait_for("segmentation/default@1.1.0").await;
    let altered = common::component("segmentation_altered");
    common::add_plugin(&s.db, &altered, "segmentation", "default", "1.1.0-altered");
    common::activate_plugin(&s.db, "segmentation", "default", "1.1.0-altered");
    let h = wait_for("segmentation/default@1.1.0-altered").await;
    let last = h.grading.and_then(|g| g.last_run).expect("the run");
    assert_eq!(last.assets_graded, n as i64);
    let v = verdict(&s, "").await;
    assert_eq!(v.metadata.engine_version, "1.1.0-altered");
    assert!(v.metadata.from_cache, "served from the new snapshot");
}

/// A rollback serves the restored engine's snapshot again at once — the
/// very run it graded earlier today, re-activated, not graded again — and
/// a rollback while the candidate's run is still going abandons that run:
/// its grades are never served.
#[tokio::test]
async fn a_rollback_serves_the_restored_engines_snapshot_and_abandons_the_candidates_run() {
    let (db, _) = sqlite_small().await;
    let s = grading_app_polling(db, "100").await;
    let first = health_when(&s, "the first snapshot", |g| {
        g.active_run.is_some() && active_is_last(g) && engine(g) == "segmentation/default@1.1.0"
    })
    .await;
    let original = first.active_run.unwrap();
    let is_original = |g: &GradingHealth| g.active_run.as_ref() == Some(&original);
    let altered = common::component("segmentation_altered");
    let cli = |args: &[&str]| common::cli_ok(&s.db, args, "");
    common::add_plugin(&s.db, &altered, "segmentation", "default", "1.1.0-altered");
    let activate = [
        "plugin",
        "activate",
        "segmentation",
        "default",
        "1.1.0-altered",
    ];
    let rollback = ["plugin", "rollback", "segmentation", "default"];

    // 1. Activate, let the candidate's run complete, roll back: the
    //    original run is served again, from the cache.
    cli(&activate);
    health_when(&s, "the candidate's snapshot", |g| {
        active_is_last(g) && engine(g) == "segmentation/default@1.1.0-altered"
    })
    .await;
    assert_eq!(verdict_engine(&s).await, ("1.1.0-altered".into(), true));
    cli(&rollback);
    health_when(&s, "the original run re-activated", is_original).await;
    assert_eq!(verdict_engine(&s).await, ("1.1.0".into(), true));

    // 2. Activate and roll back at once, while the candidate grades: the
    //    original run stays (or is at once again) the served one, and the
    //    candidate's run is never activated.
    cli(&activate);
    cli(&rollback);
    health_when(
        &s,
        "the original run served after the quick rollback",
        is_original,
    )
    .await;
    for _ in 0..30 {
        let g = grading(&s).await;
        assert_eq!(
            g.active_run.as_ref(),
            Some(&original),
            "the rolled-back engine's run is never served: {g:?}"
        );
        let (engine, cached) = verdict_engine(&s).await;
        assert_eq!((engine.as_str(), cached), ("1.1.0", true));
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The engine of the latest run ("" when there is none).
fn engine(g: &GradingHealth) -> &str {
    g.last_run.as_ref().map_or("", |r| r.engine.as_str())
}

/// `s`'s grading runs (its debug health), asked every 100 ms until `ok`
/// holds (at most two minutes, else the test fails naming `what`); the
/// answer that did.
async fn health_when(s: &Server, what: &str, ok: impl Fn(&GradingHealth) -> bool) -> GradingHealth {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let g = grading(s).await;
        if ok(&g) {
            return g;
        }
        assert!(std::time::Instant::now() < deadline, "{what}: {g:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The engine version of ^GSPC's default verdict, and whether it was
/// served from the snapshot.
async fn verdict_engine(s: &Server) -> (String, bool) {
    // A refusal (while the engines swap) is neither.
    match s.api().verdict("^GSPC", "").await {
        Ok(v) => (v.metadata.engine_version, v.metadata.from_cache),
        Err(_) => (String::new(), false),
    }
}
