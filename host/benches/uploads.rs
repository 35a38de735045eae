//! `make bench-uploads`: abusive strategy uploads and runs (issue 26, item
//! 6), black-box against a fresh release server on loopback. For each
//! case, while `GET /api/health` is asked every 10 ms and the server's
//! `VmRSS` (`/proc/<pid>/status`) is read every 10 ms: the case's answers,
//! health's p50, p99 and worst, and resident memory before the case and at
//! its peak. Cases: garbage bytes; a 50 MB body declared by Content-Length
//! and one sent chunked with no length; a strategy whose core memories
//! declare 4 GiB, and one whose tables declare 10,000,000 elements; a
//! strategy importing `wasi:filesystem/types@0.2.6`, and one importing
//! `wasi:sockets/tcp@0.2.6`; the `misbehave_strategy` fixture uploaded and
//! run as an endless loop, a memory bomb and out-of-contract weights;
//! eight distinct strategies uploaded at once by one account; a second
//! account probing the first one's private strategy by name; the built-in
//! `topn` (native) on the languages' backtest, the per-run time to compare
//! with; then, per language, the `topn` example in Python and in TypeScript (built by `make
//! python-strategies` and `make ts-strategies`; missing, the bench stops and
//! names the target) uploaded (the wall is the upload's compile, to its
//! 201), its first backtest and its backtest again and again (each run's
//! time, calls, fuel and guest memory), and the language's misbehave
//! fixture uploaded and run as a memory bomb and an endless loop. Speed and
//! memory are reported, never asserted (the machine may be shared); the
//! bounds a user relies on are asserted by tests/it/upload_abuse.rs,
//! python_strategies.rs and ts_strategies.rs. Prints the markdown table of
//! every case, then one row per language summing its cases up.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::abuse;
use serde_json::{json, Value};

fn rss(pid: u32) -> u64 {
    abuse::proc_status_bytes(pid, "VmRSS")
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Health asked every 10 ms and `VmRSS` read every 10 ms, until stopped.
struct Watch {
    stop: Arc<AtomicBool>,
    health: tokio::task::JoinHandle<(Vec<Duration>, usize)>,
    rss: std::thread::JoinHandle<u64>,
}

impl Watch {
    fn start(base: &str, pid: u32) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let health = tokio::spawn({
            let (stop, url) = (stop.clone(), format!("{base}/api/health"));
            async move {
                let client = reqwest::Client::new();
                let (mut times, mut failed) = (Vec::new(), 0);
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let ok = client
                        .get(&url)
                        .timeout(Duration::from_secs(10))
                        .send()
                        .await
                        .is_ok_and(|r| r.status() == 200);
                    times.push(t.elapsed());
                    failed += usize::from(!ok);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                (times, failed)
            }
        });
        let rss = std::thread::spawn({
            let stop = stop.clone();
            move || {
                let mut peak = 0;
                while !stop.load(Ordering::Relaxed) {
                    peak = peak.max(rss(pid));
                    std::thread::sleep(Duration::from_millis(10));
                }
                peak.max(rss(pid))
            }
        });
        Watch { stop, health, rss }
    }

    async fn stop(self) -> (Vec<Duration>, usize, u64) {
        self.stop.store(true, Ordering::Relaxed);
        let (mut times, failed) = self.health.await.expect("health task");
        times.sort();
        let peak = self.rss.join().expect("rss thread");
        (times, failed, peak)
    }
}

/// An answer: status and `detail` (or the strategy's name on success).
struct Answer {
    status: u16,
    body: Value,
}

impl Answer {
    /// The status and the start of the detail (or the stored name).
    fn short(&self) -> String {
        let text = self.body["detail"]
            .as_str()
            .or_else(|| self.body["strategy"].as_str())
            .unwrap_or_default();
        eprintln!("  {} {text}", self.status);
        format!("{} {}", self.status, clip(text))
            .trim_end()
            .to_string()
    }

    /// A backtest's use of its strategy (`metadata.plugin_usage`): calls
    /// (`start` and one per rebalance), fuel per call, guest time and the
    /// instance's peak memory; empty when the answer has none.
    fn usage(&self) -> Option<Usage> {
        let u = &self.body["metadata"]["plugin_usage"][0];
        Some(Usage {
            calls: u["calls"].as_u64()?,
            fuel: u["fuel"].as_u64()?,
            guest_ms: u["guest_ms"].as_f64()?,
            memory: u["peak_memory_bytes"].as_u64()?,
        })
    }
}

/// What a run used of its strategy, as the backtest reports it.
struct Usage {
    calls: u64,
    fuel: u64,
    guest_ms: f64,
    memory: u64,
}

impl Usage {
    fn fuel_per_call(&self) -> String {
        format!("{:.1} M", self.fuel as f64 / self.calls.max(1) as f64 / 1e6)
    }

    fn describe(&self) -> String {
        format!(
            "{} calls, {} fuel per call, {:.1} ms in the guest, {:.1} MiB of guest memory",
            self.calls,
            self.fuel_per_call(),
            self.guest_ms,
            self.memory as f64 / (1u64 << 20) as f64
        )
    }
}

/// At most 150 characters of `text`, safe in a table cell.
fn clip(text: &str) -> String {
    let mut short: String = text.chars().take(150).collect();
    if text.chars().count() > 150 {
        short.push('…');
    }
    short.replace('|', "\\|")
}

/// Distinct answers of repeated runs, each with its count: `12 × 422 …`.
fn summarize(answers: &[String]) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for a in answers {
        match seen.iter_mut().find(|(s, _)| s == a) {
            Some((_, n)) => *n += 1,
            None => seen.push((a.clone(), 1)),
        }
    }
    seen.iter()
        .map(|(a, n)| format!("{n} × {a}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Runs `$one` (an async expression giving an answer's text) again and
/// again for `$seconds` (at least once) under [`Bench::case`].
macro_rules! repeated {
    ($b:expr, $label:expr, $seconds:expr, $one:expr) => {
        $b.case($label, async {
            let until = Instant::now() + $seconds;
            let mut answers = Vec::new();
            loop {
                answers.push($one.await);
                if Instant::now() >= until {
                    break;
                }
            }
            summarize(&answers)
        })
        .await
    };
}

struct Bench {
    base: String,
    client: reqwest::Client,
    pid: u32,
}

impl Bench {
    async fn send(&self, r: reqwest::RequestBuilder) -> Answer {
        let r = r.send().await.expect("request");
        let status = r.status().as_u16();
        let body = r.json().await.unwrap_or(Value::Null);
        Answer { status, body }
    }

    async fn upload(&self, key: &str, bytes: Vec<u8>) -> Answer {
        self.send(
            self.client
                .post(format!("{}/api/strategies", self.base))
                .bearer_auth(key)
                .header("content-type", "application/wasm")
                .body(bytes),
        )
        .await
    }

    async fn backtest(&self, key: &str, strategy: &str, top_n: Option<u32>) -> Answer {
        let mut body = json!({ "strategy": strategy, "category": "Indices" });
        if let Some(n) = top_n {
            body["top_n"] = json!(n);
        }
        self.send(
            self.client
                .post(format!("{}/api/backtest", self.base))
                .bearer_auth(key)
                .json(&body),
        )
        .await
    }

    /// Status, content type and body bytes of a request, for comparing
    /// answers byte for byte.
    async fn raw(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (u16, String, Vec<u8>) {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let ct = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        (status, ct, r.bytes().await.expect("body").to_vec())
    }

    /// Runs `case` under a [`Watch`], prints its row and returns its figures.
    async fn case(&self, label: &str, case: impl std::future::Future<Output = String>) -> Row {
        eprintln!("{label}…");
        let before = rss(self.pid);
        let watch = Watch::start(&self.base, self.pid);
        let started = Instant::now();
        let answers = case.await;
        let wall = started.elapsed();
        let (health, failed, peak) = watch.stop().await;
        let failures = if failed > 0 {
            format!(", **{failed} failed**")
        } else {
            String::new()
        };
        println!(
            "| {label} | {answers} | {:.1} s | {} / {} / {} ({} asks{failures}) | {} → {} |",
            wall.as_secs_f64(),
            ms(quantile(&health, 0.5)),
            ms(quantile(&health, 0.99)),
            ms(*health.last().expect("at least one ask")),
            health.len(),
            mib(before),
            mib(peak),
        );
        Row {
            before,
            wall,
            p99: quantile(&health, 0.99),
            worst: *health.last().expect("at least one ask"),
            failed,
            peak,
        }
    }
}

/// A case's figures, for the per-language summary.
struct Row {
    before: u64,
    wall: Duration,
    p99: Duration,
    worst: Duration,
    failed: usize,
    peak: u64,
}

/// Counts of each status, e.g. `6 × 201, 2 × 503`.
fn tally(statuses: &[u16]) -> String {
    let mut counts = std::collections::BTreeMap::new();
    for s in statuses {
        *counts.entry(*s).or_insert(0) += 1;
    }
    counts
        .iter()
        .map(|(s, n)| format!("{n} × {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A component `make <target>` built into `target/<dir>/<stem>.wasm`;
/// missing, the bench fails here (exit 1) naming the target that builds it.
fn built(dir: &str, stem: &str, target: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository, above host/")
        .join("target")
        .join(dir)
        .join(format!("{stem}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!(
            "error: {}: {e}; build it with `make {target}` (`make bench-uploads` does)",
            path.display()
        );
        std::process::exit(1)
    })
}

/// A strategy language's components: its `topn` example and its misbehave
/// fixture.
struct Language {
    name: &'static str,
    topn: Vec<u8>,
    misbehave: Vec<u8>,
}

/// Per-language figures over its cases, one summary row.
struct Summary {
    name: &'static str,
    size: usize,
    compile: Duration,
    first: Duration,
    per_run: Duration,
    fuel: String,
    memory: String,
    p99: Duration,
    worst: Duration,
    failed: usize,
    before: u64,
    peak: u64,
    after: u64,
}

#[tokio::main]
async fn main() {
    // Read first, so a missing one stops the bench before any work.
    let languages = [
        Language {
            name: "Python",
            topn: built("python-strategies", "topn_py", "python-strategies"),
            misbehave: built("python-strategies", "misbehave_py", "python-strategies"),
        },
        Language {
            name: "TypeScript",
            topn: built("ts-strategies", "topn_ts", "ts-strategies"),
            misbehave: built("ts-strategies", "misbehave_ts", "ts-strategies"),
        },
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let db = format!("sqlite://{}", dir.path().join("bench.db").display());
    eprintln!("loading the demo universe…");
    common::forecast(&db, &["demo", "load"]);
    let author = common::unmetered_key_for(&db, "author@example.com");
    let prober = common::unmetered_key_for(&db, "prober@example.com");
    // Compiled uploads kept on disk in a folder of this run only, so no
    // earlier run's compilations answer for this one.
    let modules = dir.path().join("modules");
    let modules_env = modules.display().to_string();
    let (mut server, base) = common::serve(&db, &[("FORECAST_MODULE_CACHE", &modules_env)]);
    let b = Bench {
        base,
        client: reqwest::Client::new(),
        pid: server.id(),
    };
    // Warm up: the first requests open the database and load the plugins.
    let _ = b
        .raw(reqwest::Method::GET, "/api/health", &author, None)
        .await;
    let dip = abuse::dip_buyer();
    let misbehave = std::fs::read(
        abuse::dip_buyer_path()
            .parent()
            .expect("the components folder")
            .join("misbehave_strategy.wasm"),
    )
    .expect("make components builds misbehave_strategy");

    let seconds = Duration::from_secs_f64(
        std::env::var("BENCH_SECONDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2.0),
    );
    println!("| case (each repeated for {seconds:?}, at least once) | answers | wall | health p50 / p99 / worst | RSS before → peak |");
    println!("|---|---|---|---|---|");
    refused_uploads(&b, &author, &dip, seconds).await;
    misbehaving_and_private(&b, &author, &prober, &dip, &misbehave, seconds).await;

    // The same backtest by the built-in `topn` (native, not metered), the
    // per-run time the uploaded ones compare with.
    let mut builtin = Vec::new();
    b.case(
        "built-in `topn` (native), the languages' backtest again and again",
        again(&b, &author, "topn", seconds, &mut builtin),
    )
    .await;
    let builtin = builtin[builtin.len() / 2];
    let mut summaries = Vec::new();
    for lang in &languages {
        summaries.push(language_cases(&b, &author, lang, seconds).await);
    }

    let (_, _, list) = b
        .raw(reqwest::Method::GET, "/api/strategies", &author, None)
        .await;
    let stored = serde_json::from_slice::<Value>(&list).expect("the list")["strategies"]
        .as_array()
        .expect("strategies")
        .iter()
        .filter(|s| s["owned"] == true)
        .count();
    let _ = server.kill();
    let _ = server.wait();
    let files: Vec<u64> = std::fs::read_dir(&modules)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .collect()
        })
        .unwrap_or_default();
    println!();
    println!(
        "Compiled components left in FORECAST_MODULE_CACHE by the run: {} files, {:.1} MB (strategies stored: {stored}).",
        files.len(),
        files.iter().sum::<u64>() as f64 / 1e6
    );
    print_languages(builtin, &summaries);
}

/// The per-language summary table, beside the built-in's per-run time.
fn print_languages(builtin: Duration, summaries: &[Summary]) {
    println!();
    println!("| language (`topn` example) | component | upload to 201 (compile) | first run | per run (median) | fuel per call | guest memory | health p99 (worst) over its cases | server RSS before → peak → after its cases |");
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| Rust (the built-in `topn`, native) | — | — | — | {} | not metered | — | — | — |",
        ms(builtin)
    );
    for s in summaries {
        let failures = if s.failed > 0 {
            format!(", **{} failed**", s.failed)
        } else {
            String::new()
        };
        println!(
            "| {} | {:.1} MB | {:.1} s | {} | {} | {} | {} | {} ({}{failures}) | {} → {} → {} |",
            s.name,
            s.size as f64 / 1e6,
            s.compile.as_secs_f64(),
            ms(s.first),
            ms(s.per_run),
            s.fuel,
            s.memory,
            ms(s.p99),
            ms(s.worst),
            mib(s.before),
            mib(s.peak),
            mib(s.after),
        );
    }
}

/// Uploads refused before any compile (garbage, huge declared memories and
/// tables, forbidden imports) and 50 MB bodies, with and without a length.
async fn refused_uploads(b: &Bench, author: &str, dip: &[u8], seconds: Duration) {
    let refused = [
        (
            "garbage (64 KiB after a component preamble)",
            abuse::garbage(),
        ),
        (
            "strategy whose core memories declare 65,536 pages (4 GiB)",
            abuse::huge_memory(dip),
        ),
        (
            "strategy whose tables declare 10,000,000 elements",
            abuse::huge_table(dip),
        ),
        (
            "strategy importing `wasi:filesystem/types@0.2.6`",
            abuse::importing(dip, "wasi:filesystem/types@0.2.6"),
        ),
        (
            "strategy importing `wasi:sockets/tcp@0.2.6`",
            abuse::importing(dip, "wasi:sockets/tcp@0.2.6"),
        ),
    ];

    for (label, bytes) in &refused {
        repeated!(b, label, seconds, async {
            b.upload(author, bytes.clone()).await.short()
        });
    }
    for (label, chunked) in [
        ("50 MB body, Content-Length declared", false),
        ("50 MB body, chunked (no length)", true),
    ] {
        b.case(label, async {
            let until = Instant::now() + seconds;
            let (mut answers, mut written) = (Vec::new(), Vec::new());
            loop {
                let a = abuse::post_large(&b.base, "/api/strategies", author, 50_000_000, chunked)
                    .await;
                let detail = serde_json::from_str::<Value>(&a.body)
                    .ok()
                    .and_then(|v| v["detail"].as_str().map(str::to_string))
                    .unwrap_or_default();
                answers.push(format!("{} {}", a.status, clip(&detail)));
                written.push(a.sent);
                if Instant::now() >= until {
                    break;
                }
            }
            written.sort();
            format!(
                "{}; answered when the client had written {:.1} MB (median), {:.1} MB at most",
                summarize(&answers),
                written[written.len() / 2] as f64 / 1e6,
                *written.last().expect("one run") as f64 / 1e6
            )
        })
        .await;
    }
}

/// The misbehaving strategy uploaded and run (loop, bomb, bad weights), 8
/// uploads at once, and a second account probing the private upload.
async fn misbehaving_and_private(
    b: &Bench,
    author: &str,
    prober: &str,
    dip: &[u8],
    misbehave: &[u8],
    seconds: Duration,
) {
    let mut name = String::new();
    b.case("`misbehave_strategy` uploaded", async {
        let a = b.upload(author, misbehave.to_vec()).await;
        name = a.body["strategy"].as_str().unwrap_or_default().to_string();
        a.short()
    })
    .await;
    for (label, top_n) in [
        ("its backtest, endless loop (top_n 7)", 7),
        ("its backtest, memory bomb (top_n 8)", 8),
        ("its backtest, out-of-contract weights (top_n 6)", 6),
    ] {
        repeated!(b, label, seconds, async {
            b.backtest(author, &name, Some(top_n)).await.short()
        });
    }

    b.case(
        "8 distinct strategies uploaded at once by one account",
        async {
            let runs: Vec<_> = (0..8)
                .map(|i| {
                    let bytes = abuse::renamed(dip, i);
                    let (client, url, key) = (
                        b.client.clone(),
                        format!("{}/api/strategies", b.base),
                        author.to_string(),
                    );
                    tokio::spawn(async move {
                        client
                            .post(url)
                            .bearer_auth(key)
                            .header("content-type", "application/wasm")
                            .body(bytes)
                            .send()
                            .await
                            .map(|r| r.status().as_u16())
                            .unwrap_or(0)
                    })
                })
                .collect();
            let mut statuses = Vec::new();
            for r in runs {
                statuses.push(r.await.expect("upload task"));
            }
            tally(&statuses)
        },
    )
    .await;

    // A name of the same length that no one has.
    let (handle, bare) = name.split_once('/').expect("@handle/name");
    let missing = format!("{handle}/{}", "z".repeat(bare.len()));
    repeated!(
        b,
        "a second account probing the private strategy by name (GET, PATCH, DELETE, backtest, pinned backtest; list)",
        seconds,
        async {
            let (mut same, mut probes, mut statuses) = (0, 0, Vec::new());
            for (method, body) in [
                (reqwest::Method::GET, None),
                (reqwest::Method::PATCH, Some(json!({ "shared": true }))),
                (reqwest::Method::DELETE, None),
            ] {
                let path = |n: &str| format!("/api/strategies/{n}");
                let a = b.raw(method.clone(), &path(&name), prober, body.clone()).await;
                let m = b.raw(method, &path(&missing), prober, body).await;
                statuses.push(a.0);
                probes += 1;
                same += usize::from(a.0 == m.0 && a.1 == m.1 && same_bytes(&a.2, &m.2, &name, &missing));
            }
            for pin in ["", "@0.0.1"] {
                let body = |n: &str| Some(json!({ "strategy": format!("{n}{pin}"), "category": "Indices" }));
                let a = b.raw(reqwest::Method::POST, "/api/backtest", prober, body(&name)).await;
                let m = b.raw(reqwest::Method::POST, "/api/backtest", prober, body(&missing)).await;
                statuses.push(a.0);
                probes += 1;
                same += usize::from(a.0 == m.0 && a.1 == m.1 && same_bytes(&a.2, &m.2, &name, &missing));
            }
            let list = b.raw(reqwest::Method::GET, "/api/strategies", prober, None).await;
            let listed = String::from_utf8_lossy(&list.2).contains(&name);
            format!(
                "({}; {same} of {probes} identical to a missing name's; {})",
                tally(&statuses),
                if listed { "**listed** to the prober" } else { "not listed" }
            )
        }
    );
}

/// The cases of one language: its `topn` uploaded (the wall is the
/// compile), its first backtest, its backtest again and again; its
/// misbehave fixture uploaded, run as a memory bomb (`top_n` 8) and an
/// endless loop (`top_n` 7).
async fn language_cases(b: &Bench, key: &str, lang: &Language, seconds: Duration) -> Summary {
    let mut rows = Vec::new();
    let size = lang.topn.len();
    let mut name = String::new();
    let upload = b
        .case(
            &format!(
                "`topn` in {} ({:.1} MB) uploaded",
                lang.name,
                size as f64 / 1e6
            ),
            async {
                let a = b.upload(key, lang.topn.clone()).await;
                name = a.body["strategy"].as_str().unwrap_or_default().to_string();
                a.short()
            },
        )
        .await;
    let mut usage = None;
    let first = b
        .case("its first backtest (`Indices`, top_n 2)", async {
            let a = b.backtest(key, &name, Some(2)).await;
            usage = a.usage();
            match &usage {
                Some(u) => format!("{}; {}", a.short(), u.describe()),
                None => a.short(),
            }
        })
        .await;
    let mut times = Vec::new();
    rows.push(
        b.case(
            "its backtest again and again",
            again(b, key, &name, seconds, &mut times),
        )
        .await,
    );
    let mut bad = String::new();
    rows.push(
        b.case(
            &format!(
                "its misbehave fixture ({:.1} MB) uploaded",
                lang.misbehave.len() as f64 / 1e6
            ),
            async {
                let a = b.upload(key, lang.misbehave.clone()).await;
                bad = a.body["strategy"].as_str().unwrap_or_default().to_string();
                a.short()
            },
        )
        .await,
    );
    for (label, top_n) in [
        ("its backtest, memory bomb (top_n 8)", 8),
        ("its backtest, endless loop (top_n 7)", 7),
    ] {
        rows.push(repeated!(b, label, seconds, async {
            b.backtest(key, &bad, Some(top_n)).await.short()
        }));
    }
    let (compile, first_run, before) = (upload.wall, first.wall, upload.before);
    rows.push(upload);
    rows.push(first);
    let worst_p99 = rows.iter().map(|r| r.p99).max().expect("rows");
    Summary {
        name: lang.name,
        size,
        compile,
        first: first_run,
        per_run: times.get(times.len() / 2).copied().unwrap_or_default(),
        fuel: usage
            .as_ref()
            .map(Usage::fuel_per_call)
            .unwrap_or_else(|| "—".into()),
        memory: usage
            .as_ref()
            .map(|u| format!("{:.1} MiB", u.memory as f64 / (1u64 << 20) as f64))
            .unwrap_or_else(|| "—".into()),
        p99: worst_p99,
        worst: rows.iter().map(|r| r.worst).max().expect("rows"),
        failed: rows.iter().map(|r| r.failed).sum(),
        before,
        peak: rows.iter().map(|r| r.peak).max().expect("rows"),
        after: rss(b.pid),
    }
}

/// The backtest of [`language_cases`] (`Indices`, `top_n` 2) run by `name`
/// again and again for `seconds` (at least once), each run's time kept in
/// `times` (sorted); the answers and the median and worst run.
async fn again(
    b: &Bench,
    key: &str,
    name: &str,
    seconds: Duration,
    times: &mut Vec<Duration>,
) -> String {
    let until = Instant::now() + seconds;
    let mut answers = Vec::new();
    loop {
        let started = Instant::now();
        answers.push(b.backtest(key, name, Some(2)).await.short());
        times.push(started.elapsed());
        if Instant::now() >= until {
            break;
        }
    }
    times.sort();
    format!(
        "{}; per run {} median, {} worst",
        summarize(&answers),
        ms(times[times.len() / 2]),
        ms(*times.last().expect("one run"))
    )
}

/// `a` and `b` are the same bytes once each names its own strategy.
fn same_bytes(a: &[u8], b: &[u8], a_name: &str, b_name: &str) -> bool {
    String::from_utf8_lossy(a).replace(a_name, "NAME")
        == String::from_utf8_lossy(b).replace(b_name, "NAME")
}
