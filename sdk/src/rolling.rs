//! Rolling statistics over the values a strategy sees at successive
//! rebalance dates (a strategy keeps them in its own state).

use std::collections::{BTreeMap, VecDeque};

use crate::AssetState;

/// The last `capacity` finite values pushed, with their mean, sample
/// standard deviation and z-score.
///
/// ```
/// use forecast_sdk::RollingWindow;
/// let mut w = RollingWindow::new(3);
/// for x in [1.0, 2.0, 3.0, 10.0] {
///     w.push(x);
/// }
/// assert_eq!(w.mean(), Some(5.0)); // of 2, 3, 10
/// assert!(w.is_full());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RollingWindow {
    values: VecDeque<f64>,
    capacity: usize,
}

impl RollingWindow {
    /// An empty window of `capacity` values (at least 1).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        RollingWindow {
            values: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// Appends `x`, dropping the oldest value when full. NaN and infinite
    /// values are ignored (returns false), so a missing signal never
    /// poisons the statistics.
    pub fn push(&mut self, x: f64) -> bool {
        if !x.is_finite() {
            return false;
        }
        if self.values.len() == self.capacity {
            self.values.pop_front();
        }
        self.values.push_back(x);
        true
    }

    /// Values held.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no value is held.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// True when `capacity` values are held.
    pub fn is_full(&self) -> bool {
        self.values.len() == self.capacity
    }

    /// The most values the window holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The most recent value.
    pub fn last(&self) -> Option<f64> {
        self.values.back().copied()
    }

    /// The values, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.values.iter().copied()
    }

    /// Forgets every value.
    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// Mean of the values; `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        if self.values.is_empty() {
            return None;
        }
        Some(self.values.iter().sum::<f64>() / self.values.len() as f64)
    }

    /// Sample standard deviation (ddof 1); `None` with fewer than 2 values.
    pub fn sd(&self) -> Option<f64> {
        let n = self.values.len();
        if n < 2 {
            return None;
        }
        let mean = self.mean()?;
        let ss: f64 = self.values.iter().map(|x| (x - mean).powi(2)).sum();
        Some((ss / (n - 1) as f64).sqrt())
    }

    /// z-score of the most recent value within the window,
    /// `(last - mean) / sd`, defined like the host's drawdown z-score
    /// ([`AssetState::zscore`]): `None` until the window is full, or when
    /// its values are all equal (sd <= 1e-12).
    pub fn zscore(&self) -> Option<f64> {
        if !self.is_full() || self.capacity < 2 {
            return None;
        }
        let (sd, mean, last) = (self.sd()?, self.mean()?, self.last()?);
        (sd > 1e-12).then(|| (last - mean) / sd)
    }
}

/// One [`RollingWindow`] per asset, keyed by the asset's index.
///
/// ```
/// # use forecast_sdk::{Context, RollingWindows};
/// # let ctx = Context { date: 0, equity: 1.0, cash: 1.0, assets: vec![] };
/// let mut windows = RollingWindows::new(12);
/// // At each rebalance date: remember each tradeable asset's median prediction.
/// windows.update(&ctx.assets, |a| a.median_return);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RollingWindows {
    capacity: usize,
    windows: BTreeMap<u32, RollingWindow>,
}

impl RollingWindows {
    /// No windows yet; each new one holds `capacity` values.
    pub fn new(capacity: usize) -> Self {
        RollingWindows {
            capacity: capacity.max(1),
            windows: BTreeMap::new(),
        }
    }

    /// Pushes `x` into the window of `asset` (created on first use).
    pub fn push(&mut self, asset: u32, x: f64) -> bool {
        let capacity = self.capacity;
        self.windows
            .entry(asset)
            .or_insert_with(|| RollingWindow::new(capacity))
            .push(x)
    }

    /// Pushes `value(a)` for every asset of `assets`, typically `&ctx.assets`.
    pub fn update<'a, I, F>(&mut self, assets: I, mut value: F)
    where
        I: IntoIterator<Item = &'a AssetState>,
        F: FnMut(&AssetState) -> f64,
    {
        for a in assets {
            self.push(a.asset, value(a));
        }
    }

    /// The window of `asset`, if anything was pushed for it.
    pub fn get(&self, asset: u32) -> Option<&RollingWindow> {
        self.windows.get(&asset)
    }

    /// Forgets the window of `asset`.
    pub fn remove(&mut self, asset: u32) -> Option<RollingWindow> {
        self.windows.remove(&asset)
    }

    /// Every `(asset, window)`, by asset index.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &RollingWindow)> + '_ {
        self.windows.iter().map(|(&a, w)| (a, w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(values: &[f64]) -> (f64, f64) {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt())
    }

    #[test]
    fn statistics_match_a_direct_computation_over_the_last_values() {
        let xs: Vec<f64> = (0..40)
            .map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.01 + (i as f64) * 0.001)
            .collect();
        let mut w = RollingWindow::new(7);
        for (i, &x) in xs.iter().enumerate() {
            assert!(w.push(x));
            let tail = &xs[(i + 1).saturating_sub(7)..=i];
            assert_eq!(w.len(), tail.len());
            assert_eq!(w.last(), Some(x));
            let mean = tail.iter().sum::<f64>() / tail.len() as f64;
            assert!((w.mean().unwrap() - mean).abs() < 1e-15);
            if tail.len() >= 2 {
                let (_, sd) = direct(tail);
                assert!((w.sd().unwrap() - sd).abs() < 1e-15);
            } else {
                assert_eq!(w.sd(), None);
            }
            if tail.len() == 7 {
                let (m, sd) = direct(tail);
                assert!((w.zscore().unwrap() - (x - m) / sd).abs() < 1e-12);
                // The same definition as the host's drawdown z-score.
                let host = forecast_backtest::zscore(&xs, i, 7).unwrap();
                assert!((w.zscore().unwrap() - host).abs() < 1e-12);
            } else {
                assert_eq!(w.zscore(), None);
            }
        }
        assert!(w.is_full());
        assert_eq!(w.iter().count(), 7);
    }

    #[test]
    fn edge_cases() {
        let mut w = RollingWindow::new(0);
        assert_eq!(w.capacity(), 1);
        assert!(w.is_empty());
        assert_eq!(w.mean(), None);
        assert!(!w.push(f64::NAN));
        assert!(!w.push(f64::INFINITY));
        assert!(w.is_empty());
        w.push(2.0);
        w.push(3.0);
        assert_eq!(w.iter().collect::<Vec<_>>(), [3.0]);
        assert_eq!(w.zscore(), None);
        let mut flat = RollingWindow::new(3);
        for _ in 0..3 {
            flat.push(1.5);
        }
        assert_eq!(flat.sd(), Some(0.0));
        assert_eq!(flat.zscore(), None);
        flat.clear();
        assert!(flat.is_empty());
    }

    #[test]
    fn per_asset_windows() {
        let state = |asset: u32, median_return: f64| AssetState {
            asset,
            price: 1.0,
            drawdown: 0.0,
            segment: 0,
            expected_return: 0.0,
            median_return,
            prediction_error: None,
            median_error: None,
            zscore: None,
            weight: 0.0,
        };
        let mut ws = RollingWindows::new(2);
        ws.update(&[state(3, 1.0), state(1, 2.0)], |a| a.median_return);
        ws.update(&[state(3, 3.0)], |a| a.median_return);
        ws.push(3, 5.0);
        assert_eq!(ws.get(3).unwrap().iter().collect::<Vec<_>>(), [3.0, 5.0]);
        assert_eq!(ws.get(1).unwrap().mean(), Some(2.0));
        assert!(ws.get(0).is_none());
        assert_eq!(ws.iter().map(|(a, _)| a).collect::<Vec<_>>(), [1, 3]);
        assert!(ws.remove(1).is_some());
        assert!(ws.get(1).is_none());
    }
}
