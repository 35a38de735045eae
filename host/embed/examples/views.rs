//! Prints the texts each catalog entry is embedded as (its views), for the
//! tickers given, or counts over the whole active catalog without any.
//! `cargo run --release -p forecast-embed --example views -- DAL KO`

#[path = "../tests/support/mod.rs"]
mod support;

use support::{active_entries, entry_views};

fn main() {
    let entries = active_entries();
    let asked: Vec<String> = std::env::args().skip(1).collect();
    if asked.is_empty() {
        let views: usize = entries.iter().map(|e| entry_views(e).len()).sum();
        println!("{} entries, {views} views", entries.len());
        return;
    }
    for e in entries.iter().filter(|e| asked.contains(&e.ticker)) {
        println!("{}:", e.ticker);
        for v in entry_views(e) {
            println!("  {v}");
        }
    }
}
