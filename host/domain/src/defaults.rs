//! Every default and bound of the analysis parameters, defined once: the
//! services validate against them, the wire types document them, grading
//! and the registry's self-tests use them.

/// Forecast horizon in calendar days: default and inclusive bounds.
pub const RETURN_PERIOD: u32 = 90;
/// Smallest `return_period`.
pub const RETURN_PERIOD_MIN: u32 = 7;
/// Largest `return_period`.
pub const RETURN_PERIOD_MAX: u32 = 365;

/// Number of equal-width drawdown buckets: default and bounds.
pub const NUM_SEGMENTS: u32 = 20;
/// Fewest buckets.
pub const NUM_SEGMENTS_MIN: u32 = 10;
/// Most buckets.
pub const NUM_SEGMENTS_MAX: u32 = 50;

/// EMA decay: default and bounds.
pub const DECAY_FACTOR: f64 = 0.95;
/// Smallest decay.
pub const DECAY_FACTOR_MIN: f64 = 0.80;
/// Largest decay.
pub const DECAY_FACTOR_MAX: f64 = 0.99;

/// Fewest price rows an analysis (and a tradeable asset) needs.
pub const MIN_ROWS: usize = 300;

/// Most price rows a history may have (issue 25): ingest refuses a file or
/// fetch that would make an asset's history longer, and an analysis, a
/// verdict and the grading hand the engine at most the last this many rows
/// of the window (238 years of trading days; 60,000 rows fit the engine's
/// 256 MiB, two million rows exhaust it).
pub const MAX_HISTORY_ROWS: usize = 60_000;

/// Return periods the daily grading pre-computes; with the default
/// segments and decay (and no date bounds) these are served from the cache.
pub const GRADED_RETURN_PERIODS: [u32; 5] = [7, 30, 90, 180, 365];
