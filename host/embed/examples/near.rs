//! Prints the nearest catalog entries (cosine) of each argument: a
//! development aid for the matcher's thresholds.
//! `cargo run --release -p forecast-embed --example near -- "ride hailing app"`

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use forecast_embed::{Embedder, VectorIndex, DEFAULT_DIR};
use support::{active_entries, catalog_vectors, root};

fn main() {
    let model = Embedder::load(&root().join(DEFAULT_DIR)).expect("model");
    let entries = active_entries();
    let index = VectorIndex::new(&catalog_vectors(&model, &entries)).expect("index");
    for q in std::env::args().skip(1) {
        let t = Instant::now();
        let v = model.embed(&[q.as_str()]).expect("embed");
        let took = t.elapsed();
        let got: Vec<String> = index
            .nearest(&v[0], 10)
            .iter()
            .map(|&(i, c)| format!("{} {c:.3}", entries[i as usize].ticker))
            .collect();
        println!("{q:?} ({took:?}): {}", got.join(", "));
    }
}
