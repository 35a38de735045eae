//! `make bench`: the segmentation engine natively and as a Wasm component
//! on the real 5,031-row NASDAQ Composite history (1999–2018; until issue 16
//! the bench read the S&P 500 file of the same 5,031 days, now a 16,607-row
//! 1950–2015 one, so the numbers stay comparable), and the fixed cost of a plugin
//! call (fresh instance from the pool + one trivial export call).
//!
//! Prints a Markdown table (the one in docs/BENCHMARKS.md). Timings are
//! medians and 95th percentiles over many runs after a warm-up.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::summary::{row, Verdict};

use forecast::plugins::segmentation::{AnalysisParams, Metric};
use forecast::plugins::{builtin, Permit, PluginRuntime, RuntimeConfig, SegmentationPlugin};
use forecast::series::{to_days, PriceSeries};

fn load_ixic() -> PriceSeries {
    let text = include_str!("../../data/prices/IDX_IXIC.csv");
    let mut s = PriceSeries::default();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        let date = chrono::NaiveDate::parse_from_str(cols[0], "%Y-%m-%d").expect("date");
        s.dates.push(to_days(date));
        s.closes.push(cols[4].parse().expect("close"));
    }
    s
}

struct Stats {
    median: Duration,
    p95: Duration,
    runs: usize,
}

fn measure(budget: Duration, mut f: impl FnMut()) -> Stats {
    for _ in 0..5 {
        f();
    }
    let mut samples = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || samples.len() < 20 {
        let t = Instant::now();
        f();
        samples.push(t.elapsed());
    }
    samples.sort();
    Stats {
        median: samples[samples.len() / 2],
        p95: samples[samples.len() * 95 / 100],
        runs: samples.len(),
    }
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

/// One segmentation call measured natively and through the component.
struct Pair {
    native: Stats,
    wasm: Stats,
}

impl Pair {
    /// The component's median over the native one.
    fn ratio(&self) -> f64 {
        self.wasm.median.as_secs_f64() / self.native.median.as_secs_f64()
    }
}

/// What the bench needs for every case: its time budget, the series and
/// the loaded engine with the call slot it holds.
struct Bench {
    budget: Duration,
    series: PriceSeries,
    plugin: SegmentationPlugin,
    permit: Permit,
}

fn main() {
    let budget = Duration::from_secs(
        std::env::var("BENCH_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3),
    );
    let series = load_ixic();
    let runtime = Arc::new(PluginRuntime::new(RuntimeConfig::default()).expect("runtime"));
    // The bench is the only caller: one permit serves every call.
    let permit = runtime.try_acquire().expect("a free call slot");
    let plugin = SegmentationPlugin::load(runtime, "default", builtin::SEGMENTATION).expect("load");
    let bench = Bench {
        budget,
        series,
        plugin,
        permit,
    };

    println!("| case | rows | median | p95 | runs |");
    println!("|---|---|---|---|---|");
    let worst_ratio = single_analyses(&bench);
    let states = graded_states(&bench);
    let ping = measure(bench.budget, || {
        std::hint::black_box(bench.plugin.ping(&bench.permit).expect("ping"));
    });
    println!(
        "| fresh instance + trivial call (`engine-version`) | | {} | {} | {} |",
        fmt(ping.median),
        fmt(ping.p95),
        ping.runs
    );
    summary(bench.series.len(), worst_ratio, &states, &ping);
}

/// One analysis per metric, natively and through the component, each
/// printed with their ratio; the worst ratio.
fn single_analyses(bench: &Bench) -> f64 {
    let Bench {
        budget,
        series,
        plugin,
        permit,
    } = bench;
    let mut worst_ratio: f64 = 0.0;
    for (metric, native_metric, name) in [
        (
            Metric::TotalReturn,
            forecast_engine::Metric::Return,
            "return",
        ),
        (Metric::Sharpe, forecast_engine::Metric::Sharpe, "sharpe"),
        (Metric::Sortino, forecast_engine::Metric::Sortino, "sortino"),
    ] {
        let native_params = forecast_engine::Params {
            metric: native_metric,
            periods_per_year: Some(252),
            ..forecast_engine::Params::default()
        };
        let native = measure(*budget, || {
            let a = forecast_engine::analyse(&series.dates, &series.closes, &native_params)
                .expect("native");
            std::hint::black_box(a);
        });
        let params = AnalysisParams {
            return_period: forecast::domain::defaults::RETURN_PERIOD,
            num_segments: forecast::domain::defaults::NUM_SEGMENTS,
            decay_factor: forecast::domain::defaults::DECAY_FACTOR,
            metric,
            periods_per_year: Some(252),
        };
        let wasm = measure(*budget, || {
            let a = plugin
                .analyse(permit, series, params)
                .expect("call")
                .expect("analysis");
            std::hint::black_box(a);
        });
        let rows = series.len();
        println!(
            "| analysis `{name}`, native | {rows} | {} | {} | {} |",
            fmt(native.median),
            fmt(native.p95),
            native.runs
        );
        println!("| analysis `{name}`, component (instantiate + copy in/out + run) | {rows} | {} | {} | {} |", fmt(wasm.median), fmt(wasm.p95), wasm.runs);
        let ratio = Pair { native, wasm }.ratio();
        worst_ratio = worst_ratio.max(ratio);
        println!("| Wasm/native ratio `{name}` (medians) | | {ratio:.2} | | |");
    }
    worst_ratio
}

/// Grading's call: the 15 graded (period, metric) states of one asset in
/// one `analyse-states` call, natively and through the component, printed.
fn graded_states(bench: &Bench) -> Pair {
    let Bench {
        budget,
        series,
        plugin,
        permit,
    } = bench;
    let combos: Vec<(u32, Metric, forecast_engine::Metric)> =
        forecast::domain::defaults::GRADED_RETURN_PERIODS
            .into_iter()
            .flat_map(|period| {
                [
                    (period, Metric::TotalReturn, forecast_engine::Metric::Return),
                    (period, Metric::Sharpe, forecast_engine::Metric::Sharpe),
                    (period, Metric::Sortino, forecast_engine::Metric::Sortino),
                ]
            })
            .collect();
    let native_sets: Vec<forecast_engine::Params> = combos
        .iter()
        .map(|&(return_period, _, metric)| forecast_engine::Params {
            return_period,
            metric,
            periods_per_year: Some(252),
            ..forecast_engine::Params::default()
        })
        .collect();
    let sets: Vec<AnalysisParams> = combos
        .iter()
        .map(|&(return_period, metric, _)| AnalysisParams {
            return_period,
            num_segments: forecast::domain::defaults::NUM_SEGMENTS,
            decay_factor: forecast::domain::defaults::DECAY_FACTOR,
            metric,
            periods_per_year: Some(252),
        })
        .collect();
    let native = measure(*budget, || {
        std::hint::black_box(forecast_engine::analyse_states(
            &series.dates,
            &series.closes,
            &native_sets,
        ));
    });
    let wasm = measure(*budget, || {
        std::hint::black_box(plugin.analyse_states(permit, series, &sets).expect("call"));
    });
    let rows = series.len();
    println!(
        "| 15 graded states (`analyse-states`), native | {rows} | {} | {} | {} |",
        fmt(native.median),
        fmt(native.p95),
        native.runs
    );
    println!(
        "| 15 graded states (`analyse-states`), component | {rows} | {} | {} | {} |",
        fmt(wasm.median),
        fmt(wasm.p95),
        wasm.runs
    );
    let states = Pair { native, wasm };
    println!(
        "| Wasm/native ratio, graded states (medians) | | {:.2} | | |",
        states.ratio()
    );
    states
}

/// The bench's rows of the summary table, with their targets.
fn summary(rows: usize, worst_ratio: f64, states: &Pair, ping: &Stats) {
    row(
        &format!("engine analysis, {rows} rows: component / native (worst metric, back to back)"),
        &format!("{worst_ratio:.2}"),
        "≤ 1.2",
        Verdict::of(worst_ratio <= 1.2),
    );
    row(
        "grading's 15 states in one `analyse-states` call: component / native",
        &format!(
            "{:.2} ({} / {})",
            states.ratio(),
            fmt(states.wasm.median),
            fmt(states.native.median)
        ),
        "— (the grade's wall time is the target)",
        Verdict::None,
    );
    row(
        "fresh engine instance + trivial call",
        &fmt(ping.median),
        "≤ 50 µs",
        Verdict::of(ping.median.as_secs_f64() <= 50e-6),
    );
}
