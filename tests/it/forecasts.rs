//! Calibrated forecasts (decision 0079), black-box: a grade history's rows
//! carry the forecast the verdict shows at each date, nothing after a date
//! changes what was forecast at it, thin evidence never earns an extreme
//! letter, the universe record is calibrated on real prices, the evidence
//! gate refuses a worse scorer both from the CLI and the admin API (and
//! records an override with its reason), and the model cards.
//!
//! One database graded once for the tests that read a grading run (every
//! asset with real prices active, nothing else: the pooled fit sees every
//! real asset); each test serves a private copy of it.

use std::path::{Path, PathBuf};

use crate::common;

use chrono::NaiveDate;
use common::{cli, cli_ok, component, sqlite_url, Server, ADMIN_TOKEN};
use forecast_api::admin::Listed;
use forecast_api::analysis::ForecastBody;
use forecast_api::models::{ModelCard, ModelComparison, ModelsResponse};
use forecast_api::track_record::{ForecastEvaluation, RowForecast, SkillScore};
use forecast_testkit::{Auth, Refusal};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// A fresh demo database in which exactly the assets with real prices are
/// active.
async fn real_only_db() -> PathBuf {
    real_only(common::fresh_db()).await
}

/// `db` with exactly the assets with real prices active.
async fn real_only(db: PathBuf) -> PathBuf {
    let pool = sqlx::SqlitePool::connect(&sqlite_url(&db)).await.unwrap();
    sqlx::query("UPDATE assets SET is_active = (data_source = 'real')")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    db
}

/// Number of active assets with real prices in `db`.
async fn active_real(db: &Path) -> u64 {
    let pool = sqlx::SqlitePool::connect(&sqlite_url(db)).await.unwrap();
    let n: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM assets WHERE is_active AND data_source = 'real'")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    n as u64
}

/// The real-only database, graded once per test binary.
async fn graded() -> &'static Path {
    static DB: tokio::sync::OnceCell<PathBuf> = tokio::sync::OnceCell::const_new();
    DB.get_or_init(|| async {
        // Shared by the tests of this module: kept until the binary ends.
        let db = real_only(common::fresh_db_kept()).await;
        common::grade_ok(&sqlite_url(&db));
        db
    })
    .await
}

/// A private copy of the graded database.
async fn graded_copy() -> PathBuf {
    let from = graded().await;
    let to = common::empty_db();
    std::fs::copy(from, &to).expect("copy the graded database");
    let wal = from.with_extension("db-wal");
    if wal.exists() {
        std::fs::copy(&wal, to.with_extension("db-wal")).expect("copy the WAL");
    }
    to
}

/// Named figures, compared by position with another list of the same names.
type Figures<const N: usize> = [(&'static str, f64); N];

/// The first figure of `a` further than `tol` from its namesake in `b`
/// (a NaN is never within).
fn apart<const N: usize>(
    a: Figures<N>,
    b: Figures<N>,
    tol: f64,
) -> Option<(&'static str, f64, f64)> {
    let within = |x: f64, y: f64| (x - y).abs() <= tol;
    a.into_iter()
        .zip(b)
        .map(|((k, x), (_, y))| (k, x, y))
        .find(|&(_, x, y)| !within(x, y))
}

/// Asserts that every figure of `a` agrees with its namesake in `b` within `tol`.
fn close_on<const N: usize>(a: Figures<N>, b: Figures<N>, tol: f64, what: &str) {
    if let Some((k, x, y)) = apart(a, b, tol) {
        panic!("{what}: {k} {x} against {y} (tolerance {tol})");
    }
}

/// The central forecast and its 80 % interval, by name.
fn interval(central: f64, p10: f64, p90: f64) -> Figures<3> {
    [("central", central), ("p10", p10), ("p90", p90)]
}

/// A verdict's forecast as named figures.
fn verdict_figures(f: &ForecastBody) -> Figures<5> {
    let [c, lo, hi] = interval(f.central, f.p10, f.p90);
    [
        c,
        lo,
        hi,
        ("central_se", f.central_se),
        ("reference", f.reference),
    ]
}

/// A grade-history row's forecast as named figures.
fn row_figures(f: &RowForecast) -> Figures<6> {
    let [c, lo, hi] = interval(f.central, f.p10, f.p90);
    [
        c,
        lo,
        hi,
        ("climatology_mean", f.climatology_mean),
        ("climatology_p10", f.climatology_p10),
        ("climatology_p90", f.climatology_p90),
    ]
}

/// Every row of an asset's grade history is the verdict with `end_date` at
/// its date: the same calibrated forecast (central, p10, p90), letter and
/// score.
#[tokio::test]
async fn grade_history_rows_carry_the_forecast_the_verdict_shows_at_their_date() {
    let s = Server::app_with(graded_copy().await, &[]).await;
    let api = s.api();
    // AAPL: every row (a live verdict takes milliseconds); ^GSPC, 777
    // rows: twelve spread over its history.
    for (ticker, sample) in [("AAPL", None), ("^GSPC", Some(12))] {
        let history = api
            .track_record(ticker, "return_period=90")
            .await
            .unwrap()
            .history;
        assert!(
            history.len() > 100,
            "{ticker}: {} month-ends",
            history.len()
        );
        let rows: Vec<usize> = match sample {
            None => (0..history.len()).collect(),
            Some(n) => (0..n).map(|i| i * (history.len() - 1) / (n - 1)).collect(),
        };
        for i in rows {
            let row = &history[i];
            let what = format!("{ticker} at {}", row.date);
            let rf = row
                .forecast
                .as_ref()
                .unwrap_or_else(|| panic!("{what}: no forecast"));
            assert!(
                rf.p10 <= rf.central && rf.central <= rf.p90,
                "{what}: {rf:?}"
            );
            assert!(rf.climatology_p10 <= rf.climatology_p90, "{what}: {rf:?}");
            let query = format!("return_period=90&end_date={}", row.date);
            let v = api.verdict(ticker, &query).await.unwrap();
            let vf = v
                .forecast
                .as_ref()
                .unwrap_or_else(|| panic!("{what}: no verdict forecast"));
            assert_eq!(vf.return_period, 90, "{what}: {vf:?}");
            let (got, want) = (
                interval(rf.central, rf.p10, rf.p90),
                interval(vf.central, vf.p10, vf.p90),
            );
            close_on(got, want, 1e-5, &what);
            assert_eq!(row.grade, v.grade.letter, "{what}: {rf:?} {vf:?}");
            assert!(
                (row.score - v.grade.score).abs() <= 1e-3,
                "{what}: score {} against {}",
                row.score,
                v.grade.score
            );
        }
    }
}

/// AAPL's prices after `cut` removed (the rest of the universe untouched).
async fn cut_aapl(db: &Path, cut: &str) {
    let store = forecast::store::connect(&sqlite_url(db)).await.unwrap();
    let a = store.asset_by_ticker("AAPL").await.unwrap().unwrap();
    let full = store.load_series(a.id).await.unwrap().unwrap();
    let kept = full.window(None, Some(cut.parse().unwrap()));
    assert!(kept.len() > 1_000 && kept.len() < full.len());
    store
        .store_series(&[(a.id, &kept, a.data_source)])
        .await
        .unwrap();
    store.close().await;
}

/// No look-ahead: with AAPL's prices after D deleted, its verdict at D and
/// every row of its grade history before D are unchanged (forecast, letter,
/// score), and the realised returns known by D are the same.
#[tokio::test]
async fn removing_later_prices_changes_nothing_forecast_before_them() {
    const D: &str = "2007-12-31";
    let d: NaiveDate = D.parse().unwrap();
    let full = Server::app_with(graded_copy().await, &[]).await;
    let cut_db = real_only_db().await;
    cut_aapl(&cut_db, D).await;
    let cut = Server::app_with(cut_db, &[]).await;
    let (full, cut) = (full.api(), cut.api());

    for period in [90u32, 30] {
        let query = format!("return_period={period}&end_date={D}");
        let a = full.verdict("AAPL", &query).await.unwrap();
        let b = cut.verdict("AAPL", &query).await.unwrap();
        assert_eq!(b.metadata.last_price_date, d, "{:?}", b.metadata);
        let what = format!("verdict at {D}, {period} days");
        let (fa, fb) = (
            a.forecast.expect("a forecast"),
            b.forecast.expect("a forecast"),
        );
        close_on(verdict_figures(&fa), verdict_figures(&fb), 1e-12, &what);
        assert_eq!((&fa.method, fa.thin), (&fb.method, fb.thin), "{what}");
        assert_eq!(a.grade.letter, b.grade.letter);
        assert!((a.grade.score - b.grade.score).abs() <= 1e-9);

        let query = format!("return_period={period}");
        let a = full.track_record("AAPL", &query).await.unwrap();
        let b = cut.track_record("AAPL", &query).await.unwrap();
        let before: Vec<_> = a.history.iter().filter(|r| r.date < d).collect();
        let after = &b.history;
        assert!(before.len() > 50, "{} rows before {D}", before.len());
        assert_eq!(
            after.len(),
            before.len(),
            "the cut history grades the month-ends before {D}"
        );
        let mut known = 0;
        for (x, y) in before.iter().zip(after) {
            assert_eq!(x.date, y.date);
            let what = format!("{period}-day row of {}", x.date);
            assert_eq!(x.grade, y.grade, "{what}");
            assert!((x.score - y.score).abs() <= 1e-9, "{what}: {x:?} {y:?}");
            let (fx, fy) = (x.forecast.as_ref(), y.forecast.as_ref());
            let (fx, fy) = (fx.expect("a forecast"), fy.expect("a forecast"));
            close_on(row_figures(fx), row_figures(fy), 1e-12, &what);
            // The outcome was known by D exactly when its horizon ended by D.
            if x.date + chrono::Days::new(u64::from(period)) <= d {
                known += 1;
                assert_eq!(x.realised_return, y.realised_return, "{what}");
            } else {
                assert!(y.realised_return.is_none(), "{what}: {y:?}");
            }
        }
        assert!(known > 50, "{known} outcomes known by {D}");
    }
}

/// A live verdict's kept facts (climatology, realised returns at the
/// month-ends) follow the prices: after an old AAPL close is corrected
/// through `forecast ingest csv` while the server runs, its live forecast
/// (non-default segments, so computed for the request) becomes what a
/// fresh server answers for the corrected prices, not a mix of old facts
/// and new medians.
#[tokio::test]
async fn a_corrected_old_price_reaches_the_live_forecast() {
    const QUERY: &str = "num_segments=13";
    let db = graded_copy().await;
    let running = Server::app_with(db.clone(), &[]).await;
    let forecast =
        |v: forecast_api::analysis::VerdictResponse| (v.forecast.expect("a forecast"), v.grade);
    let (before, _) = forecast(running.api().verdict("AAPL", QUERY).await.unwrap());

    // AAPL's close of 2005-06-01, 30 % higher.
    let store = forecast::store::connect(&sqlite_url(&db)).await.unwrap();
    let a = store.asset_by_ticker("AAPL").await.unwrap().unwrap();
    let series = store.load_series(a.id).await.unwrap().unwrap();
    store.close().await;
    let day = forecast::series::to_days("2005-06-01".parse().unwrap());
    let row = series
        .dates
        .iter()
        .position(|&d| d == day)
        .expect("a close on 2005-06-01");
    let file = db.with_extension("aapl-fix.csv");
    let close = series.closes[row] * 1.3;
    std::fs::write(&file, format!("date,close\n2005-06-01,{close:.6}\n")).unwrap();
    cli_ok(
        &db,
        &["ingest", "csv", "--ticker", "AAPL", file.to_str().unwrap()],
        "",
    );

    let fresh = Server::app_with(db, &[]).await;
    let (want, want_grade) = forecast(fresh.api().verdict("AAPL", QUERY).await.unwrap());
    assert!(
        (want.central - before.central).abs() > 1e-9,
        "the correction moves the forecast: {before:?} {want:?}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (got, grade) = forecast(running.api().verdict("AAPL", QUERY).await.unwrap());
        let same = apart(verdict_figures(&got), verdict_figures(&want), 1e-12).is_none();
        if same {
            assert_eq!(grade, want_grade);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the running server still answers {got:?} (a fresh one {want:?})"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// Thin evidence never earns A or F: over every active asset, a verdict
/// lettered A or F has `forecast.thin` false, a bucket of fewer than ten
/// independent episodes is thin, and a thin verdict's score is within
/// [20, 80].
#[tokio::test]
async fn thin_evidence_never_earns_an_extreme_letter() {
    let db = graded_copy().await;
    let expected = active_real(&db).await;
    let s = Server::app_with(db, &[]).await;
    let api = s.api();
    let assets = api.assets("limit=1000").await.unwrap().assets;
    assert_eq!(assets.len() as u64, expected);
    for period in [90, 30] {
        let (mut thin, mut few, mut extreme) = (0, 0, 0);
        for a in &assets {
            let ticker = &a.ticker;
            let v = api
                .verdict(ticker, &format!("return_period={period}"))
                .await
                .unwrap();
            assert!(v.metadata.from_cache, "{ticker}: graded");
            let fc = v.forecast.as_ref();
            let is_thin = fc
                .map(|f| f.thin)
                .unwrap_or_else(|| panic!("{ticker}: no forecast.thin in {v:?}"));
            let (letter, score) = (v.grade.letter.as_str(), v.grade.score);
            let episodes = v
                .current_state
                .evidence
                .as_ref()
                .expect("evidence")
                .episodes;
            let what =
                format!("{ticker} at {period} days: {letter} {score}, {episodes} episodes, {fc:?}");
            if letter == "A" || letter == "F" {
                extreme += 1;
                assert!(!is_thin, "{what}");
            }
            if episodes < 10 {
                few += 1;
                assert!(is_thin, "{what}");
            }
            if is_thin {
                thin += 1;
                assert!((20.0..=80.0).contains(&score), "{what}");
            }
        }
        // Neither rule is vacuous on this universe.
        assert!(
            thin > 10 && few > 10 && extreme > 0,
            "{thin} thin, {few} under 10 episodes, {extreme} A or F"
        );
    }
}

/// The finite figures of one skill score; its p-value a probability and
/// its interval around the estimate.
fn check_skill(s: &SkillScore, what: &str) {
    for (k, v) in [
        ("forecast", s.forecast),
        ("climatology", s.climatology),
        ("skill", s.skill),
        ("dm_stat", s.dm_stat),
        ("dm_p", s.dm_p),
    ] {
        assert!(v.is_finite(), "{what}.{k}: {s:?}");
    }
    assert!((0.0..=1.0).contains(&s.dm_p), "{what}: dm_p {}", s.dm_p);
    let ci = s.skill_ci;
    assert!(ci[0] <= s.skill && s.skill <= ci[1], "{what}: {s:?}");
}

/// The done-criterion on real prices (all of them active): at 30
/// and 90 days every well-filled reliability decile is within 3 points of
/// what was realised and the 80 % interval covers 75-85 % of outcomes; the
/// skill figures are finite with p-values in [0, 1].
#[tokio::test]
async fn forecasts_are_calibrated_on_real_prices() {
    let db = graded_copy().await;
    let assets = active_real(&db).await;
    assert!(assets >= 78, "{assets} real assets active");
    let s = Server::app_with(db, &[]).await;
    for period in [30, 90, 365] {
        let query = format!("source=real&return_period={period}");
        let record = s.api().universe_track_record(&query).await.unwrap();
        assert_eq!(u64::from(record.assets), assets, "every real asset");
        let e = record
            .forecast_evaluation
            .unwrap_or_else(|| panic!("no forecast_evaluation at {period}"));
        let rows = e.rows;
        assert!(rows > 10_000, "{rows} rows at {period}");
        for (k, skill) in [
            ("crps", &e.crps),
            ("quantile_loss", &e.quantile_loss),
            ("squared_error", &e.squared_error),
        ] {
            check_skill(skill, &format!("{period} days {k}"));
        }
        for (k, c) in [
            ("calibration_intercept", &e.calibration_intercept),
            ("calibration_slope", &e.calibration_slope),
        ] {
            assert!(c.ci[0] <= c.estimate && c.estimate <= c.ci[1], "{k}: {c:?}");
        }
        assert_eq!(e.pit_histogram.iter().sum::<u32>(), rows);
        let bins = &e.reliability;
        assert_eq!(bins.len(), 10);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u32>(), rows);
        let coverage = e.coverage;
        let worst = bins
            .iter()
            .filter(|b| b.count >= 100)
            .map(|b| (b.mean_realised - b.mean_predicted).abs())
            .fold(0.0, f64::max);
        match period {
            // Decile calibration at 365 days misses the 3-point target (era
            // effects, docs/BENCHMARKS.md): the worst gap measured is 5.3
            // points with the drift floor (7.0 without), held here below 6.
            365 => {
                assert!(
                    worst <= 0.06,
                    "365 days: worst decile gap {worst}: {bins:?}"
                );
                assert!((0.70..=0.90).contains(&coverage), "coverage {coverage}");
            }
            _ => {
                assert!(
                    worst <= 0.03,
                    "{period} days: worst decile gap {worst}: {bins:?}"
                );
                assert!(
                    (0.75..=0.85).contains(&coverage),
                    "{period} days: coverage {coverage}"
                );
            }
        }
    }
}

/// `forecast plugin list --json`: the active version of `kind`.
fn active_version(db: &Path, kind: &str) -> String {
    let out = cli_ok(db, &["plugin", "list", "--json"], "");
    serde_json::from_str::<Vec<Listed>>(&out)
        .unwrap()
        .into_iter()
        .find(|p| p.kind.as_str() == kind && p.active)
        .map(|p| p.version)
        .unwrap_or_else(|| panic!("no active {kind} in {out}"))
}

/// The last activation recorded for the scorer: (version, activated_by).
async fn last_scorer_activation(db: &Path) -> (String, String) {
    let pool = sqlx::SqlitePool::connect(&sqlite_url(db)).await.unwrap();
    let row: (String, String) = sqlx::query_as(
        "SELECT version, activated_by FROM plugin_activations
         WHERE kind = 'scorer' ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    row
}

/// `forecast plugin compare scorer default a b --json`.
fn compare(db: &Path, a: &str, b: &str) -> ModelComparison {
    let out = cli_ok(
        db,
        &["plugin", "compare", "scorer", "default", a, b, "--json"],
        "",
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `POST /api/admin/plugins/{what}` with the admin token.
async fn admin_post<T: DeserializeOwned>(
    s: &Server,
    what: &str,
    body: Value,
) -> Result<T, Refusal> {
    let admin = s.api_as(Auth::Bearer(ADMIN_TOKEN.into()));
    admin.post(&format!("/admin/plugins/{what}"), &body).await
}

/// The evidence gate both ways: the calibrated scorer is promoted over the
/// classic one; a deliberately worse scorer is refused with the figures
/// (CLI and admin API) until forced with a reason, which the activation
/// history records. The admin compare route and its refusals.
#[tokio::test]
async fn the_evidence_gate_promotes_the_better_scorer_and_refuses_the_worse() {
    let db = common::fresh_db();
    assert_eq!(active_version(&db, "scorer"), "2.1.0");

    // (a) The classic scorer as the baseline: it is itself worse than the
    // calibrated one, so activating it needs the override.
    let (ok, _, err) = cli(&db, &["plugin", "activate", "scorer", "default", "1.0.0"]);
    assert!(!ok && err.contains("significantly worse"), "{err}");
    assert_eq!(active_version(&db, "scorer"), "2.1.0");
    activate_forced(&db, "1.0.0", "baseline for the gate test").await;
    the_calibrated_scorer_is_promoted_over_the_classic(&db).await;

    // (b) The worse fixture is refused, from the CLI and the admin API.
    let c = the_cli_refuses_the_worse_scorer_with_the_figures(&db);
    the_admin_api_refuses_the_worse_scorer_and_compares(&db, &c).await;

    // The override, recorded with its reason.
    activate_forced(&db, "2.1.0-worse", "testing the override").await;
    // --force without --reason is refused by the command line itself.
    let (ok, _, err) = cli(
        &db,
        &[
            "plugin", "activate", "scorer", "default", "2.1.0", "--force",
        ],
    );
    assert!(!ok && err.contains("--reason"), "{err}");
}

/// `plugin activate --force --reason` of scorer `version`: active, and
/// the activation history records the reason.
async fn activate_forced(db: &Path, version: &str, reason: &str) {
    cli_ok(
        db,
        &[
            "plugin", "activate", "scorer", "default", version, "--force", "--reason", reason,
        ],
        "",
    );
    assert_eq!(active_version(db, "scorer"), version);
    let (activated, by) = last_scorer_activation(db).await;
    assert_eq!(activated, version);
    assert!(by.ends_with(&format!(" (forced: {reason})")), "{by}");
}

/// With the classic scorer active, the calibrated one compares as not
/// worse and is activated without the override.
async fn the_calibrated_scorer_is_promoted_over_the_classic(db: &Path) {
    let c = compare(db, "1.0.0", "2.1.0");
    println!("compare 1.0.0 2.1.0: {c:#?}");
    assert!(!c.b_significantly_worse, "{c:?}");
    assert!(c.rows > 1_000, "{c:?}");
    assert_eq!(c.return_period, 90);
    assert_eq!(c.a.model, "scorer/default@1.0.0");
    assert_eq!(c.b.model, "scorer/default@2.1.0");
    assert!((0.0..=1.0).contains(&c.dm_p));
    let out = common::activate_plugin(db, "scorer", "default", "2.1.0");
    assert!(out.contains("active: scorer/default@2.1.0"), "{out}");
    assert_eq!(active_version(db, "scorer"), "2.1.0");
    let (version, by) = last_scorer_activation(db).await;
    assert_eq!(version, "2.1.0");
    assert!(!by.contains("forced"), "{by}");
}

/// The worse fixture, added as 2.1.0-worse, compares as significantly
/// worse and `plugin activate` refuses it with the figures; the
/// comparison.
fn the_cli_refuses_the_worse_scorer_with_the_figures(db: &Path) -> ModelComparison {
    let worse = component("scorer_worse");
    common::add_plugin(db, &worse, "scorer", "default", "2.1.0-worse");
    let c = compare(db, "2.1.0", "2.1.0-worse");
    assert!(c.b_significantly_worse, "{c:?}");
    let crps = |card: &ModelCard| format!("{:.5}", evaluation(card).crps.forecast);
    let (ok, _, err) = cli(
        db,
        &["plugin", "activate", "scorer", "default", "2.1.0-worse"],
    );
    assert!(!ok, "the worse scorer was activated");
    for needle in [
        "significantly worse",
        "Diebold-Mariano",
        "CRPS",
        &crps(&c.a),
        &crps(&c.b),
        "--force",
    ] {
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    }
    assert_eq!(active_version(db, "scorer"), "2.1.0");
    c
}

/// The admin API refuses the worse scorer (and a forced activation
/// without a reason), and its compare route answers as the CLI's `c` did,
/// behind the admin token, refusing an ungraded horizon and an unknown
/// version.
async fn the_admin_api_refuses_the_worse_scorer_and_compares(db: &Path, c: &ModelComparison) {
    let s = Server::app_with(db.to_path_buf(), &[]).await;
    let activate = json!({"kind": "scorer", "name": "default", "version": "2.1.0-worse"});
    let refused = admin_post::<Value>(&s, "activate", activate)
        .await
        .unwrap_err();
    refused.assert(422, &["significantly worse", "Diebold-Mariano"]);
    for reason in [json!(null), json!("   ")] {
        let body = json!({"kind": "scorer", "name": "default", "version": "2.1.0-worse",
                          "force": true, "reason": reason});
        let refused = admin_post::<Value>(&s, "activate", body).await.unwrap_err();
        refused.assert(400, &["reason"]);
    }
    assert_eq!(active_version(db, "scorer"), "2.1.0");

    let body = json!({"kind": "scorer", "name": "default", "a": "2.1.0", "b": "2.1.0-worse"});
    let anonymous = s.api_as(Auth::Anonymous);
    let refused = anonymous
        .post::<_, Value>("/admin/plugins/compare", &body)
        .await
        .unwrap_err();
    assert_eq!(refused.status, 401);
    let got: ModelComparison = admin_post(&s, "compare", body).await.unwrap();
    assert!(got.b_significantly_worse);
    assert_eq!(got.rows, c.rows);
    assert_eq!(got.return_period, 90);
    assert!((got.dm_stat - c.dm_stat).abs() < 1e-9, "{got:?}");
    let body = json!({"kind": "scorer", "name": "default", "a": "2.1.0", "b": "2.1.0-worse",
                      "return_period": 45});
    let refused = admin_post::<Value>(&s, "compare", body).await.unwrap_err();
    refused.assert(400, &["return_period", "45"]);
    let body = json!({"kind": "scorer", "name": "default", "a": "2.1.0", "b": "9.9.9"});
    let refused = admin_post::<Value>(&s, "compare", body).await.unwrap_err();
    refused.assert(404, &["9.9.9"]);
}

/// A card's evaluation, which every card of a graded horizon has.
fn evaluation(card: &ModelCard) -> &ForecastEvaluation {
    card.evaluation
        .as_ref()
        .unwrap_or_else(|| panic!("{} has no evaluation", card.model))
}

/// `GET /api/models`: refused before any grading run; after one, the
/// active engine and scorer and a card per graded horizon, each the
/// forecast evaluation of the universe record of real prices, the 90-day
/// one agreeing with `forecast plugin compare` on the same prices.
#[tokio::test]
async fn model_cards_come_from_the_grading_run() {
    let before = Server::app().await;
    let refused = before
        .api()
        .get::<ModelsResponse>("/models")
        .await
        .unwrap_err();
    refused.assert(503, &["grading run"]);
    drop(before);

    let db = graded_copy().await;
    let engine = format!(
        "segmentation/default@{}",
        active_version(&db, "segmentation")
    );
    let scorer = format!("scorer/default@{}", active_version(&db, "scorer"));
    let cli_card = compare(&db, "1.0.0", "2.1.0").b;
    let s = Server::app_with(db, &[]).await;
    let m: ModelsResponse = s.api().get("/models").await.unwrap();
    assert_eq!(m.engine, engine);
    assert_eq!(m.scorer, scorer);
    assert!(m.run_id.is_some(), "{m:?}");
    let periods: Vec<u32> = m.cards.iter().map(|c| c.return_period).collect();
    assert_eq!(periods, [7, 30, 90, 180, 365]);
    for card in &m.cards {
        let period = card.return_period;
        assert_eq!(card.model, scorer);
        assert_eq!(card.source, "real");
        assert!(
            card.first_date.unwrap() < card.last_date.unwrap(),
            "{card:?}"
        );
        let e = evaluation(card);
        assert!(e.rows > 0, "{period}: {card:?}");
        let query = format!("source=real&return_period={period}");
        let record = s.api().universe_track_record(&query).await.unwrap();
        assert_eq!(Some(e), record.forecast_evaluation.as_ref(), "{period}");
    }
    // The stored (f32) histories and the live comparison score the same
    // rows of the same scorer.
    assert_eq!(scorer, "scorer/default@2.1.0");
    let (card, live) = (evaluation(&m.cards[2]), evaluation(&cli_card));
    assert_eq!(card.rows, live.rows);
    assert_eq!(card.months, live.months);
    assert!(
        (card.crps.forecast - live.crps.forecast).abs() < 1e-6,
        "{:?} against {:?}",
        card.crps,
        live.crps
    );
}
