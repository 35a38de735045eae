//! Times the engine on the real S&P 500 history: `cargo run --release --example profile`.
mod common;

fn main() {
    let text = include_str!("../../../data/prices/IDX_GSPC.csv");
    let (dates, closes) = common::series(text);
    let p = forecast_engine::Params {
        periods_per_year: Some(252),
        ..Default::default()
    };
    let n = 200;
    let t = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(forecast_engine::analyse(&dates, &closes, &p).unwrap());
    }
    println!(
        "{:.3} ms per analysis of {} rows",
        t.elapsed().as_secs_f64() * 1e3 / n as f64,
        closes.len()
    );
}
