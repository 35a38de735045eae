//! Times what grading asks of the engine per asset on the S&P 500 history:
//! the 15 graded states in one call, the evidence of each state's current
//! bucket in one call, and the states at every month-end for each of the
//! 15 combinations (the track record), one call each and all in one call
//! with the last row (what grading asks since the track record):
//! `cargo run --release --example profile_evidence`.
mod common;

use forecast_engine as engine;

fn main() {
    let text = include_str!("../../../data/prices/IDX_GSPC.csv");
    let (dates, closes) = common::series(text);
    let mut params = Vec::new();
    for period in [7, 30, 90, 180, 365] {
        for metric in [
            engine::Metric::Return,
            engine::Metric::Sharpe,
            engine::Metric::Sortino,
        ] {
            params.push(engine::Params {
                return_period: period,
                metric,
                periods_per_year: Some(252),
                ..Default::default()
            });
        }
    }
    // Every 21st row stands in for the month-ends.
    let ends: Vec<u32> = (engine::MIN_ROWS as u32 - 1..closes.len() as u32 - 1)
        .step_by(21)
        .collect();
    let time = |label: &str, n: usize, f: &mut dyn FnMut()| {
        let t = std::time::Instant::now();
        for _ in 0..n {
            f();
        }
        println!(
            "{label}: {:.2} ms ({} rows, {} month-ends)",
            t.elapsed().as_secs_f64() * 1e3 / n as f64,
            closes.len(),
            ends.len()
        );
    };
    let states = engine::analyse_states(&dates, &closes, &params);
    time("15 states (analyse_states)", 10, &mut || {
        std::hint::black_box(engine::analyse_states(&dates, &closes, &params));
    });
    let requests: Vec<engine::EvidenceRequest> = params
        .iter()
        .zip(&states)
        .map(|(p, s)| engine::EvidenceRequest {
            params: *p,
            segments: vec![s.as_ref().unwrap().current.segment],
        })
        .collect();
    time("15 current buckets' evidence", 10, &mut || {
        std::hint::black_box(engine::evidence(&dates, &closes, &requests));
    });
    time(
        "15 month-end histories (states_at, one call each)",
        3,
        &mut || {
            for p in &params {
                std::hint::black_box(engine::analyse_states_at(&dates, &closes, p, &ends).unwrap());
            }
        },
    );
    let mut with_last = ends.clone();
    with_last.push(closes.len() as u32 - 1);
    time(
        "15 histories and today's states (analyse_states_at_many)",
        3,
        &mut || {
            std::hint::black_box(engine::analyse_states_at_many(
                &dates, &closes, &params, &with_last,
            ));
        },
    );
}
