//! `make bench-routes` (part of `make bench`): every cheap read route
//! (issue 41) under load, each back to back with `GET /api/health` at 32
//! connections, so its ratio compares like with like on a shared machine.
//!
//! Builds a demo database with `forecast demo load`, grades the whole demo
//! universe (the ranking and the catalog are measured at their real size),
//! creates a Premium account with unbounded quotas, a key and a password,
//! starts `forecast serve` and drives each route with
//! [`common::load`]: the Bearer routes with the key, their `/web/api`
//! twins with the session's cookie. Prints one markdown table (requests,
//! errors, req/s, p50, p99, ratio to health, target) and adds each route's
//! row to the `make bench` summary.
//!
//! Targets (issue 41): ≥ 0.5× health with p99 ≤ 10 ms and no errors; the
//! cached verdict ≥ 0.8×. `BENCH_SECONDS` sets the length of each case
//! (default 4); `BENCH_ROUTES` keeps only the cases whose label or path
//! contains it (`BENCH_ROUTES=ranking`); `BENCH_DB=<file>` keeps the graded
//! database in that file and reuses it when it exists.

mod common;

use std::time::Duration;

use common::load::{load_answering, load_with, Stats};
use common::summary::{row as summary, Verdict};

/// How a case authenticates.
#[derive(Clone, Copy)]
enum Auth {
    Key,
    Session,
    /// The key, offering brotli as browsers and `curl --compressed` do.
    KeyBrotli,
    /// The session, offering brotli.
    SessionBrotli,
}

/// The routes measured: label, path, authentication, least ratio to health.
const CASES: &[(&str, &str, Auth, f64)] = &[
    ("ranking, default", "/api/ranking", Auth::Key, 0.5),
    (
        "ranking, `limit=10`",
        "/api/ranking?limit=10",
        Auth::Key,
        0.5,
    ),
    (
        "ranking, `sort_by=score&order=asc`",
        "/api/ranking?sort_by=score&order=asc",
        Auth::Key,
        0.5,
    ),
    (
        "ranking, `categories=Crypto,Indices`",
        "/api/ranking?categories=Crypto,Indices",
        Auth::Key,
        0.5,
    ),
    ("ranking, `q=bank`", "/api/ranking?q=bank", Auth::Key, 0.5),
    (
        "ranking, screened (`source=real,ingested&min_episodes=10&grades=A,B,C`)",
        "/api/ranking?source=real,ingested&min_episodes=10&grades=A,B,C",
        Auth::Key,
        0.5,
    ),
    ("catalog `/api/assets`", "/api/assets", Auth::Key, 0.5),
    (
        "catalog `/api/assets`, `Accept-Encoding: br`",
        "/api/assets",
        Auth::KeyBrotli,
        0.5,
    ),
    (
        "catalog, `category=Indices`",
        "/api/assets?category=Indices",
        Auth::Key,
        0.5,
    ),
    (
        "`/api/asset-info/AAPL`",
        "/api/asset-info/AAPL",
        Auth::Key,
        0.5,
    ),
    ("`/api/strategies`", "/api/strategies", Auth::Key, 0.5),
    ("`/api/track-record`", "/api/track-record", Auth::Key, 0.5),
    (
        "`/api/track-record/AAPL`",
        "/api/track-record/AAPL",
        Auth::Key,
        0.5,
    ),
    (
        "`/api/track-record/AAPL`, `Accept-Encoding: br`",
        "/api/track-record/AAPL",
        Auth::KeyBrotli,
        0.5,
    ),
    (
        "cached verdict `/api/analysis/AAPL/verdict`",
        "/api/analysis/AAPL/verdict",
        Auth::Key,
        0.8,
    ),
    ("usage `/api/usage`", "/api/usage", Auth::Key, 0.5),
    ("web: usage", "/web/api/usage", Auth::Session, 0.5),
    (
        "web: ranking, default",
        "/web/api/ranking",
        Auth::Session,
        0.5,
    ),
    ("web: catalog", "/web/api/assets", Auth::Session, 0.5),
    (
        "web: catalog, `Accept-Encoding: br`",
        "/web/api/assets",
        Auth::SessionBrotli,
        0.5,
    ),
    (
        "web: `/api/asset-info/AAPL`",
        "/web/api/asset-info/AAPL",
        Auth::Session,
        0.5,
    ),
    ("web: strategies", "/web/api/strategies", Auth::Session, 0.5),
    (
        "web: track record",
        "/web/api/track-record",
        Auth::Session,
        0.5,
    ),
    (
        "web: cached verdict",
        "/web/api/analysis/AAPL/verdict",
        Auth::Session,
        0.8,
    ),
];

/// Routes measured on the answer a poll gets once its run is over: the
/// progress of an id no run holds, a 404 read from the in-memory board
/// like a live id's 200 (a run in flight would load the machine itself).
const NOT_FOUND: &[(&str, &str, Auth, f64)] = &[
    (
        "progress `/api/progress/{id}`, no such run (404)",
        "/api/progress/routes-bench-idle",
        Auth::Key,
        0.5,
    ),
    (
        "web: progress, no such run (404)",
        "/web/api/progress/routes-bench-idle",
        Auth::Session,
        0.5,
    ),
];

const CONNECTIONS: usize = 32;

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main]
async fn main() {
    let seconds: u64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let dir = tempfile::tempdir().unwrap();
    // BENCH_DB=path keeps the graded database there and reuses it on the
    // next run (its setup takes minutes; the cases take seconds).
    let kept = std::env::var("BENCH_DB").ok();
    let file = kept.map_or_else(|| dir.path().join("bench.db"), Into::into);
    let db = format!("sqlite://{}", file.display());
    let (email, password) = ("routes-bench@example.com", "routes bench password");
    if file.exists() {
        // An account holds at most 5 keys: the earlier runs' go.
        let pool = sqlx::SqlitePool::connect(&db).await.expect("open BENCH_DB");
        sqlx::query("DELETE FROM api_keys WHERE user_id = (SELECT id FROM users WHERE email = $1)")
            .bind(email)
            .execute(&pool)
            .await
            .expect("drop the earlier runs' keys");
        pool.close().await;
    } else {
        common::forecast(&db, &["demo", "load"]);
        common::forecast(&db, &["grade"]);
        common::password_user(&db, email, "premium", password);
    }
    let key = common::unmetered_key_of(&db, email);
    let (mut server, base) = common::serve(&db, &[]);
    let addr = base.trim_start_matches("http://").to_string();
    let cookie = common::session_cookie(&base, email, password).await;
    let bearer = format!("Authorization: Bearer {key}\r\n");
    let session = format!("Cookie: {cookie}\r\n");

    let pid = server.id();
    let _ = load_with(&addr, "/api/health", "", 1, 1).await;
    let started = common::abuse::proc_status_bytes(pid, "VmRSS");
    println!("| route | requests | errors | req/s | health req/s | ratio | p50 | p99 | server CPU µs per request (health) | target | |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let only = std::env::var("BENCH_ROUTES").unwrap_or_default();
    let cases = CASES.iter().map(|c| (c, 200..300));
    for (&(label, path, auth, least), expected) in
        cases.chain(NOT_FOUND.iter().map(|c| (c, 404..405)))
    {
        if !(label.contains(&only) || path.contains(&only)) {
            continue;
        }
        let headers = match auth {
            Auth::Key => bearer.clone(),
            Auth::Session => session.clone(),
            Auth::KeyBrotli => format!("{bearer}Accept-Encoding: br\r\n"),
            Auth::SessionBrotli => format!("{session}Accept-Encoding: br\r\n"),
        };
        let cpu = common::abuse::cpu_seconds(pid);
        let health = load_with(&addr, "/api/health", "", CONNECTIONS, seconds).await;
        let between = common::abuse::cpu_seconds(pid);
        let case = load_answering(&addr, path, &headers, CONNECTIONS, seconds, expected).await;
        let after = common::abuse::cpu_seconds(pid);
        let per_request = |cpu: f64, stats: &Stats| cpu * 1e6 / stats.sent.max(1) as f64;
        let cpu = [
            per_request(between - cpu, &health),
            per_request(after - between, &case),
        ];
        report(label, &case, &health, least, cpu);
    }
    // Every snapshot the routes above built is in memory now: what the
    // server holds beyond what it held when it started answering.
    let warmed = common::abuse::proc_status_bytes(pid, "VmRSS");
    let grew = warmed.saturating_sub(started) as f64 / 1e6;
    println!(
        "resident memory: {:.0} MB answering, {:.0} MB after every case (+{grew:.0} MB)",
        started as f64 / 1e6,
        warmed as f64 / 1e6
    );
    if only.is_empty() {
        summary(
            "memory of the read routes' snapshots (resident growth, demo universe)",
            &format!("+{grew:.0} MB"),
            "≤ 150 MB",
            Verdict::of(grew <= 150.0),
        );
    }
    server.kill().ok();
    server.wait().ok();
}

/// Prints the case's row and adds it to the summary. `cpu` is the
/// server's CPU time per answer, health's then the case's: steadier than
/// throughput on a machine the load generator shares, so a change to the
/// request path is judged by it first.
fn report(label: &str, case: &Stats, health: &Stats, least: f64, cpu: [f64; 2]) {
    let ratio = case.per_second / health.per_second.max(1.0);
    let ok = ratio >= least && case.p99 <= Duration::from_millis(10) && case.errors == 0;
    let target = format!("≥ {least}× health, p99 ≤ 10 ms");
    println!(
        "| {label} | {} | {} | {:.0} | {:.0} | {ratio:.2}× | {} | {} | {:.1} ({:.1}) | {target} | {} |",
        case.requests,
        case.errors,
        case.per_second,
        health.per_second,
        ms(case.p50),
        ms(case.p99),
        cpu[1],
        cpu[0],
        if ok { "met" } else { "**missed**" }
    );
    summary(
        &format!("{label} vs `/api/health`, {CONNECTIONS} connections"),
        &format!(
            "{ratio:.2}× ({:.0} vs {:.0} req/s), p99 {}, {} errors",
            case.per_second,
            health.per_second,
            ms(case.p99),
            case.errors
        ),
        &target,
        Verdict::of(ok),
    );
}
