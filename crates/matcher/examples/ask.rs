//! Asks the lexical index about each argument over `data/catalog.csv`:
//! `cargo run --release -p forecast-matcher --example ask -- "cash app" "oil"`.
use forecast_matcher::eval::load_catalog_csv;
use forecast_matcher::Index;

fn main() {
    let text = std::fs::read_to_string("../data/catalog.csv")
        .or_else(|_| std::fs::read_to_string("data/catalog.csv"))
        .expect("run from the repository or components/");
    let index = Index::new(load_catalog_csv(&text).expect("catalog"));
    for q in std::env::args().skip(1) {
        let got: Vec<String> = index
            .find(&q, 5)
            .iter()
            .map(|&(i, c)| format!("{} {c:.3}", index.entries()[i as usize].ticker))
            .collect();
        let no_model = |texts: &[String], _k: u32| vec![Vec::new(); texts.len()];
        let mentions: Vec<String> =
            forecast_matcher::find_mentions_with_model(&index, &q, 3, |_| None, no_model)
                .into_iter()
                .map(|m| {
                    let c: Vec<String> = m
                        .candidates
                        .iter()
                        .map(|&(i, c)| format!("{} {c:.2}", index.entries()[i as usize].ticker))
                        .collect();
                    format!("{:?} → {}", m.text, c.join(", "))
                })
                .collect();
        println!("{q:?}: index {got:?}\n  mentions: {}", mentions.join(" | "));
    }
}
