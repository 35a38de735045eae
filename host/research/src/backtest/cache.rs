//! The memory-resident columns backtests read: histories and signals, in
//! one cache bounded in bytes.

use std::sync::Arc;

use forecast_backtest as bt;
use forecast_domain::series::PriceSeries;
use forecast_domain::Metric;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;

/// Key of one asset's signals: the data, the engine and its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct SignalKey {
    pub(super) asset_id: i64,
    pub(super) data_version: i64,
    pub(super) engine_sha256: String,
    pub(super) return_period: u32,
    pub(super) num_segments: u32,
    pub(super) decay_bits: u64,
    pub(super) metric: Metric,
}

/// Key of one asset's stored history: it changes with every ingest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct HistoryKey {
    pub(super) asset_id: i64,
    pub(super) data_version: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CacheKey {
    History(HistoryKey),
    Signals(SignalKey),
}

#[derive(Clone)]
enum Cached {
    History(Arc<PriceSeries>),
    Signals(Arc<bt::Signals>),
}

impl Cached {
    fn heap_bytes(&self) -> usize {
        match self {
            Cached::History(s) => {
                s.dates.len() * std::mem::size_of::<i32>()
                    + s.closes.len() * std::mem::size_of::<f64>()
            }
            Cached::Signals(s) => s.heap_bytes(),
        }
    }
}

/// The weight of an entry: its heap bytes. Entries of more than
/// `u32::MAX` bytes (moka weighs in `u32`) are never inserted (see
/// [`SignalCache::put`]), so the conversion is exact for every entry held;
/// the clamp only keeps the weigher total.
fn weight(_key: &CacheKey, value: &Cached) -> u32 {
    u32::try_from(value.heap_bytes()).unwrap_or(u32::MAX)
}

/// The memory-resident columns backtests read, bounded in bytes together:
/// each asset's history (dates and closes) and the engine's walk-forward
/// signals per asset and engine parameters. The least recently used
/// entries go first. Keys carry the asset's data version (and for signals
/// the engine's sha256), so an ingest or an engine swap is never served
/// stale. A repeated backtest over the whole universe therefore touches
/// neither the store nor the engine.
///
/// A [`moka`] cache weighed in bytes, with its LRU policy rather than its
/// default TinyLFU admission: an ingest gives every asset a new key, and
/// TinyLFU would keep turning the new versions away in favour of the stale
/// ones' past popularity. Moka applies evictions in batches (on writes and
/// in [`SignalCache::bytes`]), so the bytes held can briefly pass the
/// budget between two writes; they are within it once its pending tasks
/// have run. An entry larger than the budget, or than `u32::MAX` bytes
/// (moka's largest weight), is never kept.
pub struct SignalCache {
    budget: usize,
    /// `None` when the budget is 0 (disabled).
    inner: Option<Cache<CacheKey, Cached>>,
}

impl SignalCache {
    /// A cache of at most `budget` bytes (0 disables it).
    pub fn new(budget: usize) -> Self {
        let inner = (budget > 0).then(|| {
            Cache::builder()
                .max_capacity(budget as u64)
                .weigher(weight)
                .eviction_policy(EvictionPolicy::lru())
                .build()
        });
        SignalCache { budget, inner }
    }

    fn get(&self, key: &CacheKey) -> Option<Cached> {
        self.inner.as_ref()?.get(key)
    }

    pub(super) fn signals(&self, key: &SignalKey) -> Option<Arc<bt::Signals>> {
        match self.get(&CacheKey::Signals(key.clone()))? {
            Cached::Signals(s) => Some(s),
            Cached::History(_) => None,
        }
    }

    pub(super) fn history(&self, key: HistoryKey) -> Option<Arc<PriceSeries>> {
        match self.get(&CacheKey::History(key))? {
            Cached::History(s) => Some(s),
            Cached::Signals(_) => None,
        }
    }

    /// Keeps `value` unless it is larger than the budget or than moka's
    /// largest weight (`u32::MAX` bytes, about 4 GiB): such an entry would
    /// be evicted at once, or weighed less than it holds.
    fn put(&self, key: CacheKey, value: Cached) {
        let Some(cache) = &self.inner else {
            return;
        };
        let size = value.heap_bytes();
        if size > self.budget || u32::try_from(size).is_err() {
            return;
        }
        cache.insert(key, value);
    }

    pub(super) fn put_signals(&self, key: SignalKey, signals: Arc<bt::Signals>) {
        self.put(CacheKey::Signals(key), Cached::Signals(signals));
    }

    pub(super) fn put_history(&self, key: HistoryKey, series: Arc<PriceSeries>) {
        self.put(CacheKey::History(key), Cached::History(series));
    }

    /// Bytes held, once the evictions pending have been applied.
    pub fn bytes(&self) -> usize {
        let Some(cache) = &self.inner else {
            return 0;
        };
        cache.run_pending_tasks();
        usize::try_from(cache.weighted_size()).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(n: usize) -> Arc<bt::Signals> {
        Arc::new(bt::Signals {
            drawdowns: vec![0.0; n],
            segments: vec![0; n],
            expected_returns: vec![0.0; n],
            median_returns: vec![0.0; n],
            prediction_error_cumavg: vec![0.0; n],
            median_error_cumavg: vec![0.0; n],
        })
    }

    fn key(id: i64) -> SignalKey {
        SignalKey {
            asset_id: id,
            data_version: 1,
            engine_sha256: "x".into(),
            return_period: 90,
            num_segments: 20,
            decay_bits: 0.95f64.to_bits(),
            metric: Metric::Return,
        }
    }

    #[test]
    fn the_signal_cache_stays_within_its_budget() {
        let one = sig(1_000).heap_bytes();
        let cache = SignalCache::new(one * 10);
        for id in 0..25 {
            cache.put_signals(key(id), sig(1_000));
            // Keep asset 0 hot.
            assert!(cache.signals(&key(0)).is_some(), "the hot entry survives");
            assert!(cache.bytes() <= one * 10, "never over budget");
        }
        assert_eq!(cache.bytes(), one * 10, "full, not emptied");
        assert!(cache.signals(&key(24)).is_some(), "the newest is kept");
        assert!(cache.signals(&key(1)).is_none(), "cold entries went first");
        let other_version = SignalKey {
            data_version: 2,
            ..key(24)
        };
        assert!(
            cache.signals(&other_version).is_none(),
            "a new data version misses"
        );
        let other_engine = SignalKey {
            engine_sha256: "y".into(),
            ..key(24)
        };
        assert!(
            cache.signals(&other_engine).is_none(),
            "another engine's signals are not served"
        );
        // Histories share the budget and the keys' data versions.
        let series = Arc::new(PriceSeries {
            dates: (0..1_000).collect(),
            closes: vec![1.0; 1_000],
        });
        let h = |v: i64| HistoryKey {
            asset_id: 7,
            data_version: v,
        };
        cache.put_history(h(1), series);
        assert!(cache.history(h(1)).is_some());
        assert!(cache.history(h(2)).is_none(), "an ingest misses");
        assert!(cache.bytes() <= one * 10);
    }

    #[test]
    fn an_entry_larger_than_the_budget_is_not_kept() {
        let one = sig(1_000).heap_bytes();
        let cache = SignalCache::new(one * 2);
        cache.put_signals(key(1), sig(1_000));
        cache.put_signals(key(2), sig(3_000));
        assert!(cache.signals(&key(2)).is_none(), "too large to keep");
        assert!(
            cache.signals(&key(1)).is_some(),
            "and it evicted nothing to try"
        );
        assert_eq!(cache.bytes(), one);
    }

    #[test]
    fn a_budget_of_zero_disables_the_cache() {
        let cache = SignalCache::new(0);
        cache.put_signals(key(1), sig(10));
        cache.put_history(
            HistoryKey {
                asset_id: 1,
                data_version: 1,
            },
            Arc::new(PriceSeries::default()),
        );
        assert!(cache.signals(&key(1)).is_none());
        assert!(cache
            .history(HistoryKey {
                asset_id: 1,
                data_version: 1,
            })
            .is_none());
        assert_eq!(cache.bytes(), 0);
    }
}
