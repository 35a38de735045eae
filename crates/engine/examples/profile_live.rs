//! Times the engine calls of one live verdict (return metric, 90 days)
//! natively on a real history: what scorer 1.0.0 asks (the state and the
//! evidence) and what a forecasting scorer adds (the states and episodes at
//! every month-end): `cargo run --release --example profile_live [file]`.
mod common;

use forecast_engine as engine;

fn main() {
    let file = std::env::args().nth(1).unwrap_or("AAPL".into());
    let text = std::fs::read_to_string(format!("../data/prices/{file}.csv")).unwrap();
    let (dates, closes) = common::series(&text);
    let p = engine::Params {
        return_period: 90,
        periods_per_year: Some(252),
        ..Default::default()
    };
    let mut ends: Vec<u32> = (engine::MIN_ROWS as u32 - 1..closes.len() as u32 - 1)
        .step_by(21)
        .collect();
    ends.push(closes.len() as u32 - 1);
    let n = 200;
    let time = |label: &str, f: &mut dyn FnMut()| {
        let t = std::time::Instant::now();
        for _ in 0..n {
            f();
        }
        println!(
            "{label}: {:.3} ms",
            t.elapsed().as_secs_f64() * 1e3 / n as f64
        );
    };
    let st = engine::analyse_state(&dates, &closes, &p).unwrap();
    println!("{} rows, {} ends", closes.len(), ends.len());
    time("analyse_state", &mut || {
        std::hint::black_box(engine::analyse_state(&dates, &closes, &p).unwrap());
    });
    let req = [engine::EvidenceRequest {
        params: p,
        segments: vec![st.current.segment],
    }];
    time("evidence (1 bucket)", &mut || {
        std::hint::black_box(engine::evidence(&dates, &closes, &req));
    });
    time("states_at (month-ends + last)", &mut || {
        std::hint::black_box(engine::analyse_states_at(&dates, &closes, &p, &ends).unwrap());
    });
    time("forecast_inputs (month-ends + last)", &mut || {
        std::hint::black_box(engine::forecast_inputs(&dates, &closes, &p, &ends).unwrap());
    });
    let last = [closes.len() as u32 - 1];
    time("states_at (last only)", &mut || {
        std::hint::black_box(engine::analyse_states_at(&dates, &closes, &p, &last).unwrap());
    });
    time("episodes_at (month-ends + last)", &mut || {
        std::hint::black_box(engine::episodes_at(&dates, &closes, &p, &ends).unwrap());
    });
}
