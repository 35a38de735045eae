//! Times `analyse_state` over the 15 graded combinations of the S&P 500
//! history: `cargo run --release --example profile_state`.
fn main() {
    let text = include_str!("../../../data/prices/IDX_GSPC.csv");
    let (mut dates, mut closes) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().skip(1).enumerate() {
        let cols: Vec<&str> = line.split(',').collect();
        dates.push(i as i32 * 7 / 5);
        closes.push(cols[4].parse::<f64>().unwrap());
    }
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
}
