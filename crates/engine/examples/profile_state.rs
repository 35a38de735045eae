//! Times `analyse_state` over the 15 graded combinations of the S&P 500
//! history, one call each and all in one `analyse_states` call:
//! `cargo run --release --example profile_state`.
mod common;

fn main() {
    profile_walks();
    let text = include_str!("../../../data/prices/IDX_GSPC.csv");
    let (dates, closes) = common::series(text);
    let metrics = [
        forecast_engine::Metric::Return,
        forecast_engine::Metric::Sharpe,
        forecast_engine::Metric::Sortino,
    ];
    let rounds = 20;
    let t = std::time::Instant::now();
    for _ in 0..rounds {
        for period in [7, 30, 90, 180, 365] {
            for metric in metrics {
                let p = forecast_engine::Params {
                    return_period: period,
                    metric,
                    periods_per_year: Some(252),
                    ..Default::default()
                };
                std::hint::black_box(forecast_engine::analyse_state(&dates, &closes, &p).unwrap());
            }
        }
    }
    println!(
        "{:.3} ms per state analysis of {} rows",
        t.elapsed().as_secs_f64() * 1e3 / (rounds * 15) as f64,
        closes.len()
    );
    // The same 15 in one call, sharing what they have in common.
    let all: Vec<_> = [7, 30, 90, 180, 365]
        .into_iter()
        .flat_map(|period| {
            metrics.map(|metric| forecast_engine::Params {
                return_period: period,
                metric,
                periods_per_year: Some(252),
                ..Default::default()
            })
        })
        .collect();
    let t = std::time::Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(forecast_engine::analyse_states(&dates, &closes, &all));
    }
    println!(
        "{:.3} ms per state analysis of {} rows in one analyse_states call of 15",
        t.elapsed().as_secs_f64() * 1e3 / (rounds * 15) as f64,
        closes.len()
    );
}

/// The walk a live forecast needs (`states-at` at every month-end and the
/// last row, and the episodes there) against one `analyse_state`, on
/// AAPL's history at 90 days with 23 buckets:
/// `cargo run --release --example profile_state`.
#[allow(dead_code)]
fn profile_walks() {
    let text = include_str!("../../../data/prices/AAPL.csv");
    let (dates, closes) = common::series(text);
    let p = forecast_engine::Params {
        return_period: 90,
        num_segments: 23,
        periods_per_year: Some(252),
        ..Default::default()
    };
    let mut ends: Vec<u32> = (300..closes.len() as u32).step_by(21).collect();
    ends.push(closes.len() as u32 - 1);
    let rounds = 50;
    let time = |label: &str, f: &dyn Fn()| {
        let t = std::time::Instant::now();
        for _ in 0..rounds {
            f();
        }
        println!(
            "{label}: {:.3} ms ({} rows, {} ends)",
            t.elapsed().as_secs_f64() * 1e3 / rounds as f64,
            closes.len(),
            ends.len()
        );
    };
    time("analyse_state", &|| {
        std::hint::black_box(forecast_engine::analyse_state(&dates, &closes, &p).unwrap());
    });
    time("analyse_states_at", &|| {
        std::hint::black_box(
            forecast_engine::analyse_states_at(&dates, &closes, &p, &ends).unwrap(),
        );
    });
    time("episodes_at", &|| {
        std::hint::black_box(forecast_engine::episodes_at(&dates, &closes, &p, &ends).unwrap());
    });
}
