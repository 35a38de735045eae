//! What the Python and TypeScript strategy tests share
//! (`python_strategies`, `ts_strategies`): a component built by the
//! language's make target uploaded to the real `forecast serve` as an author
//! would; its `topn` against the built-in's; its misbehave fixture's memory
//! bomb and endless loop; what its component costs the host.

use std::path::PathBuf;

use crate::common;

use common::{peak_rss, rss, test_key, with_health, Server};
use serde_json::{json, Value};

/// Assets of the demo universe whose histories are real (data/prices/).
const REAL_TICKERS: &[&str] = &[
    "AAPL", "AMZN", "BA", "CAT", "CVX", "DIS", "GE", "HD", "IBM", "INTC", "JNJ", "JPM", "KO",
    "MCD", "MMM", "MRK", "MSFT", "PEP", "PFE", "PG", "WMT", "XOM", "SPY", "DIA", "TLT", "XLE",
    "XLF", "XLK",
];

/// The bound on the server's resident growth while the memory bomb runs:
/// the instance's memory cap (256 MiB) and the run's own working set.
const MAX_GROWTH_BYTES: u64 = 600 << 20;

/// A language strategies are written in, and where its components are.
pub(crate) struct Lang {
    /// Its name in messages: `Python`.
    pub(crate) name: &'static str,
    /// The make target that builds its components into `target/<target>/`.
    pub(crate) target: &'static str,
    /// The suffix of its components' stems and strategies' names: `py`.
    pub(crate) suffix: &'static str,
    /// What its runtime says when the memory bomb meets a bound of its own.
    pub(crate) out_of_memory: &'static [&'static str],
}

impl Lang {
    /// A component built by `make <target>`.
    fn component(&self, stem: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../target")
            .join(self.target)
            .join(format!("{stem}_{}.wasm", self.suffix));
        std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; build it with `make {}`",
                path.display(),
                self.target
            )
        })
    }

    /// Uploads a component; the name to run it by.
    async fn upload(&self, s: &Server, stem: &str) -> String {
        let (status, body) = post(
            s,
            "/api/strategies",
            self.component(stem),
            "application/wasm",
        )
        .await;
        assert_eq!(status, 201, "upload of {stem}: {body}");
        body["strategy"].as_str().unwrap().to_string()
    }
}

/// `POST path` as the test account; the status and JSON body.
async fn post(s: &Server, path: &str, body: Vec<u8>, content_type: &str) -> (u16, Value) {
    let r = s
        .client()
        .post(s.url(path))
        .bearer_auth(test_key())
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn backtest(s: &Server, body: &Value) -> (u16, Value) {
    post(
        s,
        "/api/backtest",
        serde_json::to_vec(body).unwrap(),
        "application/json",
    )
    .await
}

/// `a` and `b` are the same JSON, numbers within 1e-12 relative.
fn assert_same(a: &Value, b: &Value, at: &str, lang: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                "{at}: {x} ({lang}) vs {y} (built-in)"
            );
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: lengths");
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                assert_same(x, y, &format!("{at}[{i}]"), lang);
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            let keys = |o: &serde_json::Map<String, Value>| o.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(x), keys(y), "{at}: fields");
            for (k, v) in x {
                assert_same(v, &y[k], &format!("{at}.{k}"), lang);
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

/// The language's `topn` and the built-in `topn` on the same requests: the
/// same trades, equity curve and metrics; the guest one reports its fuel.
pub(crate) async fn topn_gives_the_builtins_trades_and_equity(lang: &Lang) {
    let s = Server::start();
    let name = lang.upload(&s, "topn").await;
    let requests = [
        json!({ "tickers": REAL_TICKERS, "top_n": 3, "rebalance": "weekly",
                "start_date": "2005-01-01" }),
        json!({ "category": "Indices", "top_n": 2, "rebalance": "monthly",
                "metric": "sharpe" }),
    ];
    for request in requests {
        let mut builtin = request.clone();
        builtin["strategy"] = json!("topn");
        let mut guest = request.clone();
        guest["strategy"] = json!(name);
        let (bs, b) = backtest(&s, &builtin).await;
        assert_eq!(bs, 200, "built-in: {b}");
        let (ps, p) = backtest(&s, &guest).await;
        assert_eq!(ps, 200, "{}: {p}", lang.name);
        let trades = b["trades"].as_array().unwrap();
        assert!(!trades.is_empty(), "{request}: the built-in traded nothing");
        for field in ["trades", "equity_curve", "metrics"] {
            assert_same(&p[field], &b[field], field, lang.name);
        }
        let usage = &p["metadata"]["plugin_usage"][0];
        let fuel = usage["fuel"].as_u64().unwrap();
        assert!(fuel > 0, "{usage}");
        eprintln!(
            "{request}: {} trades, {} points; {} usage {usage}",
            trades.len(),
            b["equity_curve"].as_array().unwrap().len(),
            lang.name
        );
    }
}

/// Forgets the process's resident peak (VmHWM), so the next peak is the
/// next case's alone (the upload's compilation peaked before it).
fn reset_peak(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("clear_refs");
}

/// The language's memory bomb and endless loop: each a 422 naming the
/// plugin and the bound that stopped it, health 200 while it runs and
/// after, the server's resident memory within its bound; then the same
/// upload runs a harmless request to a 200.
pub(crate) async fn a_memory_bomb_and_endless_loop_are_stopped_cleanly(lang: &Lang) {
    let mut s = Server::start();
    let name = lang.upload(&s, "misbehave").await;
    let plugin = format!("misbehave-{}@0.0.1", lang.suffix);
    let pid = s.process().id();
    let run = |top_n: u32| json!({ "strategy": name, "tickers": REAL_TICKERS, "top_n": top_n });

    reset_peak(pid);
    let before = rss(pid);
    let ((status, body), health) = with_health(&s, backtest(&s, &run(8))).await;
    eprintln!("memory bomb: {status} {body}; health during it: {health}");
    assert_eq!(status, 422, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains(&plugin), "{detail}");
    assert!(
        ["256 MiB", "fuel budget"]
            .iter()
            .chain(lang.out_of_memory)
            .any(|bound| detail.contains(bound)),
        "{detail}"
    );
    let growth = peak_rss(pid).saturating_sub(before);
    assert!(
        growth < MAX_GROWTH_BYTES,
        "resident memory grew by {} MiB",
        growth >> 20
    );

    let ((status, body), health) = with_health(&s, backtest(&s, &run(7))).await;
    eprintln!("endless loop: {status} {body}; health during it: {health}");
    assert_eq!(status, 422, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains(&plugin), "{detail}");
    assert!(detail.contains("fuel budget"), "{detail}");

    let (status, body) = s.get_as("/api/health", None).await;
    assert_eq!(status, 200, "health afterwards: {body}");
    let (status, body) = backtest(&s, &run(3)).await;
    assert_eq!(status, 200, "a harmless run afterwards: {body}");
}

/// What the language's `topn` component costs the host, printed for docs/BENCHMARKS.md
/// and sdk/README.md (not asserted as times): its size, the compilation
/// (with the first instance and its `info` call, as an upload does), its
/// compiled image, a fresh instance per run. Asserted: it loads under the
/// server's defaults (256 MiB memory cap, fuel metering) and its compiled
/// image fits the uploads' cap.
pub(crate) fn component_figures(lang: &Lang) {
    use forecast_plugins::strategy::{StrategyPlugin, UNNAMED};
    use forecast_plugins::{PluginRuntime, RuntimeConfig};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    let bytes = lang.component("topn");
    let runtime = Arc::new(
        PluginRuntime::new(RuntimeConfig {
            call_timeout: Duration::from_secs(30),
            memory_limit: 256 << 20,
            max_concurrency: 2,
            perf_map: false,
            fuel: true,
            guest_log_ceiling: tracing::Level::ERROR,
        })
        .unwrap(),
    );
    let rss_before = rss(std::process::id());
    let started = Instant::now();
    let plugin = Arc::new(StrategyPlugin::load(runtime.clone(), UNNAMED, &bytes).unwrap());
    let compile = started.elapsed();
    let compiled = plugin.compiled_bytes();
    let permit = runtime.try_acquire().expect("a free call slot");
    let mut instantiate = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let run = plugin
            .instance(&permit, Instant::now() + Duration::from_secs(30))
            .unwrap();
        instantiate.push(started.elapsed());
        drop(run);
    }
    instantiate.sort();
    eprintln!(
        "topn_{}: {} bytes; compiled in {} ms (with its first instance and info) to {} bytes; \
         a fresh instance in {:.1} ms (median of 5); this process grew {} MiB",
        lang.suffix,
        bytes.len(),
        compile.as_millis(),
        compiled,
        instantiate[2].as_secs_f64() * 1e3,
        rss(std::process::id()).saturating_sub(rss_before) >> 20
    );
    assert_eq!(plugin.info().name, format!("topn-{}", lang.suffix));
    assert!(compiled <= forecast_research::authored::MAX_COMPILED_BYTES);
}
