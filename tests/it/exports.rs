//! CSV exports (issue 29): every table a data route answers, as CSV with
//! `?format=csv` or `Accept: text/csv`, one table chosen by `?table=`;
//! the same numbers as the JSON, a header row, an attachment name; bad
//! `format` or `table` answer 400 naming them before any work; the
//! OpenAPI document lists both parameters and the `text/csv` body.

use crate::common;

use common::{assert_error, test_key, Browser, Server, TEST_EMAIL, TEST_PASSWORD};
use forecast_api::backtest::BacktestResponse;
use forecast_api::ranking::RankingResponse;
use serde_json::{json, Value};

/// The status, content type, disposition and body of a request.
pub(crate) async fn call(
    s: &Server,
    post: Option<&Value>,
    path: &str,
    accept: Option<&str>,
) -> (u16, String, String, String) {
    let builder = match post {
        Some(body) => s.client().post(s.url(path)).json(body),
        None => s.client().get(s.url(path)),
    };
    let mut builder = builder.bearer_auth(test_key());
    if let Some(a) = accept {
        builder = builder.header("accept", a);
    }
    let r = builder.send().await.expect("request");
    let header = |name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let (ct, cd) = (header("content-type"), header("content-disposition"));
    (r.status().as_u16(), ct, cd, r.text().await.unwrap())
}

/// The CSV's number is the JSON's (serde_json's default float parsing is
/// not correctly rounded: the last digit may differ).
fn close(csv: &str, b: f64) {
    let a = csv.parse::<f64>().unwrap();
    assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
}

pub(crate) fn rows(csv: &str) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let mut out = vec![r.headers().unwrap().iter().map(str::to_string).collect()];
    for rec in r.records() {
        out.push(rec.unwrap().iter().map(str::to_string).collect());
    }
    out
}

#[tokio::test]
async fn a_backtests_tables_are_its_json_as_csv() {
    let s = Server::app().await;
    let body = json!({"tickers": ["^GSPC", "^IXIC", "^DJI"], "top_n": 2,
                      "start_date": "2012-01-01", "end_date": "2014-12-31"});
    let (status, _, _, json) = call(&s, Some(&body), "/api/backtest", None).await;
    assert_eq!(status, 200);
    let json: BacktestResponse = serde_json::from_str(&json).unwrap();
    let (status, ct, cd, csv) = call(&s, Some(&body), "/api/backtest?format=csv", None).await;
    assert_eq!(status, 200, "{csv}");
    assert!(ct.starts_with("text/csv"), "{ct}");
    assert_eq!(cd, "attachment; filename=\"backtest-equity.csv\"");
    let t = rows(&csv);
    assert_eq!(
        t[0],
        [
            "date",
            "equity",
            "equal_weight_buy_hold",
            "equal_weight_rebalanced",
            "^GSPC"
        ]
    );
    let curve = &json.equity_curve;
    assert_eq!(t.len() - 1, curve.len());
    for (row, p) in t[1..].iter().zip(curve) {
        assert_eq!(row[0], p.date.to_string());
        close(&row[1], p.equity);
    }
    // The header asks for it too; trades and metrics by name.
    let (_, ct, _, same) = call(&s, Some(&body), "/api/backtest", Some("text/csv")).await;
    assert!(ct.starts_with("text/csv"));
    assert_eq!(same, csv);
    let (_, _, cd, trades) = call(
        &s,
        Some(&body),
        "/api/backtest?format=csv&table=trades",
        None,
    )
    .await;
    assert_eq!(cd, "attachment; filename=\"backtest-trades.csv\"");
    let t = rows(&trades);
    assert_eq!(
        t[0],
        [
            "date",
            "ticker",
            "side",
            "qty",
            "price",
            "cost",
            "realised_pnl"
        ]
    );
    for (row, trade) in t[1..].iter().zip(&json.trades) {
        assert_eq!(row[5].parse::<f64>().unwrap(), trade.cost);
        let pnl = trade.realised_pnl;
        assert_eq!(row[6].parse::<f64>().ok(), pnl, "empty for an opening fill");
    }
    assert_eq!(t.len() - 1, json.trades.len());
    let (_, _, _, metrics) = call(
        &s,
        Some(&body),
        "/api/backtest?format=csv&table=metrics",
        None,
    )
    .await;
    let t = rows(&metrics);
    let find = |k: &str| {
        t.iter()
            .find(|r| r[0] == k)
            .map(|r| r[1].clone())
            .unwrap_or_else(|| panic!("{k}"))
    };
    close(&find("sharpe_ratio"), json.metrics.sharpe_ratio.unwrap());
    close(
        &find("relative.equal_weight_buy_hold.beta"),
        json.metrics.relative["equal_weight_buy_hold"].beta.unwrap(),
    );
    // Bad choices are 400s naming them; `format=json` is the JSON.
    for (query, field) in [
        ("format=xml", "format"),
        ("format=csv&table=fills", "table"),
    ] {
        let (status, _, _, b) =
            call(&s, Some(&body), &format!("/api/backtest?{query}"), None).await;
        assert_error(&(status, serde_json::from_str(&b).unwrap()), 400, &[field]);
    }
    let (_, ct, _, _) = call(
        &s,
        Some(&body),
        "/api/backtest?format=json",
        Some("text/csv"),
    )
    .await;
    assert!(ct.starts_with("application/json"), "{ct}");
}

#[tokio::test]
async fn ranking_analysis_and_sweep_tables_export() {
    // A ranking needs a grading run: a small universe, graded.
    let (db, _) = crate::grading::sqlite_small().await;
    common::grade_ok(&common::sqlite_url(&db));
    let s = Server::app_with(db, &[]).await;
    let (_, _, _, json) = call(&s, None, "/api/ranking?limit=7", None).await;
    let json: RankingResponse = serde_json::from_str(&json).unwrap();
    let (status, _, _, csv) = call(&s, None, "/api/ranking?limit=7&format=csv", None).await;
    assert_eq!(status, 200, "{csv}");
    let t = rows(&csv);
    assert_eq!(t[0][0..3], ["rank", "ticker", "name"]);
    assert_eq!(t.len() - 1, 7);
    assert_eq!(t[1][1], json.ranked_assets[0].ticker);

    let (_, _, _, series) = call(&s, None, "/api/analysis/%5EGSPC?format=csv", None).await;
    let t = rows(&series);
    assert_eq!(t[0][0..3], ["date", "price", "drawdown"]);
    assert!(t.len() > 300);
    let (_, _, cd, segments) = call(
        &s,
        None,
        "/api/analysis/%5EGSPC?format=csv&table=segments",
        None,
    )
    .await;
    assert_eq!(cd, "attachment; filename=\"analysis-segments.csv\"");
    assert_eq!(rows(&segments).len() - 1, 20);

    // An asset's grade history: one line per month-end of the JSON.
    let (_, _, _, json) = call(&s, None, "/api/track-record/%5EGSPC", None).await;
    let tr: forecast_api::track_record::TrackRecordResponse = serde_json::from_str(&json).unwrap();
    let (status, _, cd, csv) = call(&s, None, "/api/track-record/%5EGSPC?format=csv", None).await;
    assert_eq!(status, 200, "{csv}");
    assert_eq!(cd, "attachment; filename=\"track-record-history.csv\"");
    let t = rows(&csv);
    assert_eq!(
        t[0][0..5],
        [
            "date",
            "grade",
            "score",
            "predicted_median_return",
            "realised_return"
        ]
    );
    assert_eq!(t.len() - 1, tr.history.len());
    assert_eq!(t[1][0], tr.history[0].date.to_string());
    assert_eq!(t[1][1], tr.history[0].grade);

    let body = json!({"tickers": ["^GSPC", "^IXIC", "AAPL"], "start_date": "2008-01-01",
                      "end_date": "2014-12-31", "sweep": {"top_n": [1, 2]}});
    let (status, _, _, csv) = call(&s, Some(&body), "/api/backtest/sweep?format=csv", None).await;
    assert_eq!(status, 200, "{csv}");
    let t = rows(&csv);
    assert_eq!(t[0][0..3], ["top_n", "score", "rank"]);
    assert_eq!(t.len() - 1, 2);
    let (status, _, _, csv) = call(
        &s,
        Some(&body),
        "/api/backtest/walk-forward?format=csv",
        None,
    )
    .await;
    assert_eq!(status, 200, "{csv}");
    let t = rows(&csv);
    assert_eq!(t[0][4], "chosen.top_n");
    assert!(t.len() > 2);
}

#[tokio::test]
async fn the_openapi_document_lists_the_exports() {
    let s = Server::app().await;
    let (_, doc) = s.get("/api/openapi.json").await;
    for (path, method) in [
        ("/api/backtest", "post"),
        ("/web/api/backtest/sweep", "post"),
        ("/api/ranking", "get"),
        ("/api/analysis/{ticker}", "get"),
    ] {
        let op = &doc["paths"][path][method];
        assert!(
            op["responses"]["200"]["content"]["text/csv"].is_object(),
            "{path}"
        );
        let names: Vec<&str> = op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(
            names.contains(&"format") && names.contains(&"table"),
            "{path}: {names:?}"
        );
    }
}

#[tokio::test]
async fn the_watchlist_exports_its_graded_rows_to_premium_and_its_assets_to_free() {
    let (db, _) = crate::grading::sqlite_small().await;
    let url = common::sqlite_url(&db);
    common::grade_ok(&url);
    // Active after the run: on the watchlist, but not graded yet.
    crate::grading::exec_and_count(
        &url,
        "UPDATE assets SET is_active = TRUE WHERE ticker = 'MSFT'",
        "SELECT COUNT(*) FROM assets WHERE ticker = 'MSFT' AND is_active",
    )
    .await;
    let s = Server::app_with(db, &[]).await;
    let (_, json) = s.get_as("/api/ranking?limit=100", Some(test_key())).await;
    let ranking: forecast_api::ranking::RankingResponse = serde_json::from_value(json).unwrap();
    let row = |t: &str| {
        ranking
            .ranked_assets
            .iter()
            .find(|a| a.ticker == t)
            .unwrap()
    };
    let list = json!({ "tickers": ["AAPL", "MSFT", "^GSPC"] });

    let b = Browser::login(&s, TEST_EMAIL, TEST_PASSWORD).await;
    assert_eq!(
        b.send(reqwest::Method::PUT, "/web/watchlist", Some(list.clone()))
            .await
            .0,
        200
    );
    let (status, cd, csv) = b.download("/web/watchlist?format=csv").await;
    assert_eq!(status, 200, "{csv}");
    assert_eq!(cd, "attachment; filename=\"watchlist-assets.csv\"");
    let t = rows(&csv);
    assert_eq!(
        t[0][0..6],
        [
            "ticker",
            "name",
            "category",
            "data_source",
            "currency",
            "grade"
        ]
    );
    let tickers: Vec<&str> = t[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(tickers, ["AAPL", "MSFT", "^GSPC"], "the order chosen");
    for (line, ticker) in [(1, "AAPL"), (3, "^GSPC")] {
        let (r, a) = (&t[line], row(ticker));
        assert_eq!(r[3], "real");
        assert_eq!(r[5], a.grade);
        close(&r[6], a.score);
        close(&r[8], a.current_price);
        assert_eq!(r[9], a.last_price_date.to_string());
        close(&r[11], a.median_return);
    }
    assert!(
        t[2][5..].iter().all(String::is_empty),
        "MSFT was not graded: {:?}",
        t[2]
    );
    assert!(!t[2][1].is_empty(), "but it is named");
    // JSON stays the default; a bad format is named.
    assert_eq!(
        b.send(reqwest::Method::GET, "/web/watchlist", None).await.1["tickers"][0]["ticker"],
        "AAPL"
    );
    let (status, _, body) = b.download("/web/watchlist?format=xlsx").await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("format must be json or csv"), "{body}");

    // A Free account: its assets, no graded figures (its page shows none).
    common::add_user(&s.db, "free@example.com", "free", Some("free password"));
    let free = Browser::login(&s, "free@example.com", "free password").await;
    assert_eq!(
        free.send(reqwest::Method::PUT, "/web/watchlist", Some(list))
            .await
            .0,
        200
    );
    let (status, _, csv) = free.download("/web/watchlist?format=csv").await;
    assert_eq!(status, 200, "{csv}");
    let t = rows(&csv);
    assert_eq!(t.len(), 4);
    assert!(
        t[1..]
            .iter()
            .all(|r| !r[1].is_empty() && r[5..].iter().all(String::is_empty)),
        "{t:?}"
    );
}
