//! Prints the matches for each argument, with the time each query took (a
//! development aid for looking at confidences):
//! `cargo run --release -p forecast-matcher --example probe -- "the iPhone maker" nvidea`;
//! `-- --eval` runs every query of `eval/queries.csv`.
use forecast_matcher::eval::{drop_inactive, load_catalog_csv};
use forecast_matcher::Index;

fn main() {
    let path = format!("{}/../../data/catalog.csv", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("catalog");
    // `INACTIVE_TICKERS` of host/src/demo.rs, as in tests/eval.rs.
    let inactive = ["FISV", "FTT-USD", "CEL-USD", "HOMEX.MX", "IDVL4.SA"];
    let entries = drop_inactive(load_catalog_csv(&text).expect("catalog"), &inactive);
    let index = Index::new(entries);
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--eval") {
        let path = format!("{}/eval/queries.csv", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("queries");
        args = forecast_matcher::eval::load_queries(&text)
            .expect("queries")
            .into_iter()
            .map(|q| q.text)
            .collect();
    }
    for q in args {
        let t = std::time::Instant::now();
        let r = index.find(&q, 5);
        let took = t.elapsed();
        let got: Vec<String> = r
            .iter()
            .map(|&(i, c)| {
                let e = &index.entries()[i as usize];
                format!("{} ({}) {c:.3}", e.ticker, e.name)
            })
            .collect();
        let shown: String = q.chars().take(60).collect();
        println!("{shown:?} ({took:?}) → {}", got.join(", "));
    }
}
