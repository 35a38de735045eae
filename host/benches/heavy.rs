//! `make bench-heavy`: the server-wide budget for heavy work (issue 25)
//! under the two loads, through the real server on loopback:
//!
//! 1. 100 clients (ten accounts × ten) each sending live analyses one
//!    after another for `BENCH_SECONDS` (default 15), every one with
//!    parameters of its own so no cache answers it, while `GET
//!    /api/health` is asked every 10 ms: health's p50, p99 and worst, how
//!    many analyses were served or refused (503, uncharged), peak memory;
//! 2. eight accounts each starting one whole-universe backtest with its
//!    own decay at once: served, refused, the wall time, and the server's
//!    peak resident memory (`VmHWM` of `/proc/<pid>/status`).
//!
//! Each load runs twice, on a fresh server each time: with the default
//! budget and with the budget opened wide (`FORECAST_HEAVY_SLOTS=64`,
//! `FORECAST_HEAVY_MEMORY_MB=1000000`, a queue of 1,000), which is how the
//! server behaved before the budget. Speed and memory are reported, never
//! asserted: the machine may be shared. Prints one markdown table.

mod common;

use std::time::{Duration, Instant};

use common::summary::{row as summary, Verdict};

const ACCOUNTS: usize = 10;
const CLIENTS_PER_ACCOUNT: usize = 10;
const BACKTESTS: usize = 8;

/// The budget opened wide: the server as it was before issue 25.
const WIDE: &[(&str, &str)] = &[
    ("FORECAST_HEAVY_SLOTS", "64"),
    ("FORECAST_HEAVY_MEMORY_MB", "1000000"),
    ("FORECAST_HEAVY_QUEUE", "1000"),
    ("FORECAST_HEAVY_QUEUE_PER_ACCOUNT", "1000"),
];

/// Premium accounts with unbounded quotas, and a key each.
fn accounts(db: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| common::unmetered_key_for(db, &format!("heavy{i}@example.com")))
        .collect()
}

fn peak_rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .expect("VmHWM");
    kb >> 10
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

struct Flood {
    served: usize,
    refused: usize,
    other: usize,
    health: Vec<Duration>,
    seconds: f64,
    peak_mib: u64,
}

/// Load 1 on a fresh server: 100 clients (ten per account), each sending
/// live analyses one after another for `seconds` (after a 503 it retries
/// 100 ms later, faster than `Retry-After` asks), every one with
/// parameters no earlier request had.
async fn flood(db: &str, keys: &[String], env: &[(&str, &str)], seconds: u64) -> Flood {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let (mut server, base) = common::serve(db, env);
    let client = reqwest::Client::new();
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let next = Arc::new(AtomicUsize::new(0));
    let mut runs = Vec::new();
    for key in keys {
        for _ in 0..CLIENTS_PER_ACCOUNT {
            let (client, key, base, next) =
                (client.clone(), key.clone(), base.clone(), next.clone());
            runs.push(tokio::spawn(async move {
                let (mut served, mut refused, mut other) = (0, 0, 0);
                while Instant::now() < until {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    // 190 decays × 40 segment counts: distinct for 7,600 requests.
                    let url = format!(
                        "{base}/api/analysis/%5EGSPC?decay_factor={:.3}&num_segments={}&return_period=30",
                        0.80 + 0.001 * (i % 190) as f64,
                        10 + (i / 190) % 40
                    );
                    match client.get(url).bearer_auth(&key).send().await {
                        Ok(r) if r.status() == 200 => {
                            let _ = r.bytes().await;
                            served += 1;
                        }
                        Ok(r) if r.status() == 503 => {
                            refused += 1;
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                        _ => other += 1,
                    }
                }
                (served, refused, other)
            }));
        }
    }
    let done = Arc::new(AtomicBool::new(false));
    let health = tokio::spawn({
        let (client, done, url) = (client.clone(), done.clone(), format!("{base}/api/health"));
        async move {
            let mut times = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let t = Instant::now();
                let ok = client
                    .get(&url)
                    .send()
                    .await
                    .is_ok_and(|r| r.status() == 200);
                assert!(ok, "health failed during the flood");
                times.push(t.elapsed());
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            times
        }
    });
    let (mut served, mut refused, mut other) = (0, 0, 0);
    for r in runs {
        let (s, r, o) = r.await.unwrap();
        served += s;
        refused += r;
        other += o;
    }
    let seconds = started.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    let mut health = health.await.unwrap();
    health.sort();
    let peak_mib = peak_rss_mib(server.id());
    let _ = server.kill();
    let _ = server.wait();
    Flood {
        served,
        refused,
        other,
        health,
        seconds,
        peak_mib,
    }
}

struct Backtests {
    served: usize,
    refused: usize,
    other: usize,
    seconds: f64,
    peak_mib: u64,
}

/// Load 2 on a fresh server.
async fn backtests(db: &str, keys: &[String], env: &[(&str, &str)]) -> Backtests {
    let mut env = env.to_vec();
    env.push(("FORECAST_BACKTEST_TIMEOUT_MS", "600000"));
    let (mut server, base) = common::serve(db, &env);
    let client = reqwest::Client::new();
    let started = Instant::now();
    let runs: Vec<_> = keys
        .iter()
        .take(BACKTESTS)
        .enumerate()
        .map(|(i, key)| {
            let (client, key, url) = (client.clone(), key.clone(), format!("{base}/api/backtest"));
            let decay = 0.9 + 0.011 * i as f64;
            tokio::spawn(async move {
                client
                    .post(url)
                    .bearer_auth(key)
                    .json(&serde_json::json!({ "decay_factor": decay }))
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
                    .unwrap_or(0)
            })
        })
        .collect();
    let (mut served, mut refused, mut other) = (0, 0, 0);
    for r in runs {
        match r.await.unwrap() {
            200 => served += 1,
            503 => refused += 1,
            _ => other += 1,
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let peak_mib = peak_rss_mib(server.id());
    let _ = server.kill();
    let _ = server.wait();
    Backtests {
        served,
        refused,
        other,
        seconds,
        peak_mib,
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = format!("sqlite://{}", dir.path().join("bench.db").display());
    eprintln!("loading the demo universe…");
    common::forecast(&db, &["demo", "load"]);
    let keys = accounts(&db, ACCOUNTS);
    let seconds: u64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);

    println!("| load | budget | answers | health p50 / p99 / worst | wall | peak RSS |");
    println!("|---|---|---|---|---|---|");
    let mut default_p99 = Duration::ZERO;
    let mut default_peak = 0;
    for (label, env) in [("default", &[][..]), ("opened wide", WIDE)] {
        eprintln!("100 clients of live analyses for {seconds} s, budget {label}…");
        let f = flood(&db, &keys, env, seconds).await;
        let p99 = quantile(&f.health, 0.99);
        println!(
            "| 100 clients of live analyses (10 accounts × 10) | {label} | {} × 200, {} × 503, {} other | {} / {} / {} ({} asks) | {:.1} s | {} MiB |",
            f.served,
            f.refused,
            f.other,
            ms(quantile(&f.health, 0.5)),
            ms(p99),
            ms(*f.health.last().unwrap()),
            f.health.len(),
            f.seconds,
            f.peak_mib
        );
        eprintln!("8 universe backtests, budget {label}…");
        let b = backtests(&db, &keys, env).await;
        println!(
            "| 8 universe backtests (8 accounts × 1) | {label} | {} × 200, {} × 503, {} other | — | {:.1} s | {} MiB |",
            b.served, b.refused, b.other, b.seconds, b.peak_mib
        );
        if label == "default" {
            default_p99 = p99;
            default_peak = b.peak_mib;
        }
    }
    summary(
        "`/api/health` p99 during 100 clients of live analyses (default budget)",
        &ms(default_p99),
        "≤ 100 ms",
        Verdict::of(default_p99 <= Duration::from_millis(100)),
    );
    summary(
        "Peak RSS, 8 accounts × universe backtest at once (default budget)",
        &format!("{default_peak} MiB"),
        "≤ 2 GB",
        Verdict::of(default_peak * (1 << 20) <= 2_000_000_000),
    );
}
