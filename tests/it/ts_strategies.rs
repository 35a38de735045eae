//! Strategies written in TypeScript (issue 43), built by `make
//! ts-strategies` with componentize-js into target/ts-strategies/ and
//! uploaded to the real `forecast serve` as an author would (the twin of
//! python_strategies.rs):
//!
//! - `topn_ts` (sdk/ts/examples/topn), the built-in `topn` rewritten in
//!   TypeScript, gives the built-in's trades and equity curve on the same
//!   requests, every number within 1e-12 (relative);
//! - `misbehave_ts` (sdk/ts/tests/misbehave): its memory bomb and its
//!   endless loop are stopped with a 422 naming the plugin and the bound,
//!   `/api/health` answers 200 throughout and afterwards, and the server's
//!   resident memory grows within a bound while the bomb runs.

use crate::guest_strategies::{self as guest, Lang};

const TYPESCRIPT: Lang = Lang {
    name: "TypeScript",
    target: "ts-strategies",
    suffix: "ts",
    out_of_memory: &["out of memory", "RangeError"],
};

/// The TypeScript `topn` and the built-in `topn` on the same requests: the
/// same trades, equity curve and metrics; the TypeScript one reports its fuel.
#[tokio::test]
async fn the_ts_topn_gives_the_builtin_topns_trades_and_equity() {
    guest::topn_gives_the_builtins_trades_and_equity(&TYPESCRIPT).await;
}

/// The TypeScript memory bomb and endless loop, as the Python ones.
#[tokio::test]
async fn a_ts_memory_bomb_and_endless_loop_are_stopped_cleanly() {
    guest::a_memory_bomb_and_endless_loop_are_stopped_cleanly(&TYPESCRIPT).await;
}

/// What a TypeScript component costs the host, printed for docs/BENCHMARKS.md.
#[test]
fn ts_component_figures() {
    guest::component_figures(&TYPESCRIPT);
}
