//! Strategies written in Python (issue 43), built by `make
//! python-strategies` with componentize-py into target/python-strategies/
//! and uploaded to the real `forecast serve` as an author would:
//!
//! - `topn_py` (sdk/python/examples/topn), the built-in `topn` rewritten
//!   in Python, gives the built-in's trades and equity curve on the same
//!   requests, every number within 1e-12 (relative);
//! - `misbehave_py` (sdk/python/tests/misbehave): its memory bomb and its
//!   endless loop are stopped with a 422 naming the plugin and the bound,
//!   `/api/health` answers 200 throughout and afterwards, and the server's
//!   resident memory grows within a bound while the bomb runs.

//!
//! The tests are the TypeScript ones' too, in `guest_strategies`.

use crate::guest_strategies::{self as guest, Lang};

const PYTHON: Lang = Lang {
    name: "Python",
    target: "python-strategies",
    suffix: "py",
    out_of_memory: &["MemoryError"],
};

/// The Python `topn` and the built-in `topn` on the same requests: the same
/// trades, equity curve and metrics; the Python one reports its fuel.
#[tokio::test]
async fn the_python_topn_gives_the_builtin_topns_trades_and_equity() {
    guest::topn_gives_the_builtins_trades_and_equity(&PYTHON).await;
}

/// The Python memory bomb and endless loop: each a 422 naming the plugin
/// and the bound that stopped it, health 200 while it runs and after, the
/// server's resident memory within its bound; then a harmless run is a 200.
#[tokio::test]
async fn a_python_memory_bomb_and_endless_loop_are_stopped_cleanly() {
    guest::a_memory_bomb_and_endless_loop_are_stopped_cleanly(&PYTHON).await;
}

/// What a Python component costs the host, printed for docs/BENCHMARKS.md.
#[test]
fn python_component_figures() {
    guest::component_figures(&PYTHON);
}
