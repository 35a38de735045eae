//! Points `include_bytes!` at the components built by `make components`
//! and fails early with the fix when they are missing.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = std::env::var("FORECAST_COMPONENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| manifest.join("../components/target/wasm32-wasip2/release"));
    println!("cargo:rerun-if-env-changed=FORECAST_COMPONENTS_DIR");
    // misbehave.wasm is a test fixture, but `make components` always builds
    // it and the sandbox tests need it.
    for name in [
        "segmentation.wasm",
        "scorer.wasm",
        "matcher.wasm",
        "topn.wasm",
        "zscore.wasm",
        "longshort.wasm",
        "misbehave.wasm",
    ] {
        let path = dir.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        if !path.exists() {
            panic!(
                "{} is missing: build the guest components first with `make components` \
                 (or set FORECAST_COMPONENTS_DIR to a folder holding them)",
                path.display()
            );
        }
    }
    let dir = dir.canonicalize().expect("components dir exists");
    println!("cargo:rustc-env=FORECAST_COMPONENTS_DIR={}", dir.display());
}
