//! The state of many prefixes of one series in one walk
//! ([`crate::analyse_states_at`]): what the state at row `t` needs is kept
//! up to date per bucket as the walk confirms outcomes, so taking it costs
//! about the size of the current bucket instead of a pass over the rows.
//! Every sum runs in confirmation order, as the whole-series statistics
//! sum it, so each value equals `analyse_state` of the cut series to the
//! bit.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::stats::{from_order_key, min_num, order_key};
use crate::{CurrentState, Estimators, Figures, Grid, Outcome, SegmentStats};

/// The state of one prefix: its current state, the statistics of its
/// current bucket and its typical yearly drawdown.
#[derive(Debug, Clone, PartialEq)]
pub struct StateAt {
    /// `A` used for annualisation.
    pub periods_per_year: u32,
    /// State at the prefix's last row.
    pub current: CurrentState,
    /// The statistics of the current bucket (`segments[current.segment]`).
    pub active_segment: SegmentStats,
    /// Median over calendar years of the worst within-year drawdown.
    pub typical_max_drawdown: Option<f64>,
}

/// Per-bucket figures on the current grid.
#[derive(Default, Clone)]
struct Bucket {
    /// Rows whose drawdown falls in the bucket.
    rows: u32,
    /// Sums of the EMA and median errors of its outcomes.
    ema_err: f64,
    med_err: f64,
    /// Its outcomes, split at their median.
    ys: RunningMedian,
    /// Their sum, in the same order.
    sum: f64,
    /// How many are above 0.
    wins: u32,
    /// The worst interim loss over their holding windows.
    loss: f64,
}

impl Bucket {
    fn add(&mut self, o: &Outcome, worst: f64) {
        self.ys.push(o.y);
        self.add_sums(o, worst);
    }

    /// Everything of [`Bucket::add`] but the median's halves.
    fn add_sums(&mut self, o: &Outcome, worst: f64) {
        self.ema_err += o.ema_err;
        self.med_err += o.med_err;
        self.sum += o.y;
        self.wins += u32::from(o.y > 0.0);
        self.loss = min_num(self.loss, worst);
    }
}

/// The median of every value pushed so far: the lower half in a max-heap,
/// the upper half in a min-heap (of order keys), so each push costs a log
/// and the median is read off the tops. Equal to `median_select` of the
/// same values: the middle value, or the mean of the two middles.
#[derive(Default, Clone)]
struct RunningMedian {
    lower: BinaryHeap<u64>,
    upper: BinaryHeap<Reverse<u64>>,
}

impl RunningMedian {
    fn len(&self) -> usize {
        self.lower.len() + self.upper.len()
    }

    fn push(&mut self, y: f64) {
        let key = order_key(y);
        // Every key of `lower` is at most every key of `upper`.
        match self.lower.peek() {
            Some(&top) if key <= top => self.lower.push(key),
            _ => self.upper.push(Reverse(key)),
        }
        // Keep the halves balanced, the upper one never smaller.
        if self.lower.len() > self.upper.len() {
            let top = self.lower.pop().expect("non-empty");
            self.upper.push(Reverse(top));
        } else if self.upper.len() > self.lower.len() + 1 {
            let Reverse(top) = self.upper.pop().expect("non-empty");
            self.lower.push(top);
        }
    }

    /// The halves of `keys` (order keys, in any order) built at once, equal
    /// to pushing them one by one: the lower half holds the smallest
    /// `len / 2` keys, the upper one the rest. Linear in the keys where
    /// pushing costs a log each (a regroup re-buckets every outcome).
    fn from_keys(mut keys: Vec<u64>) -> Self {
        let half = keys.len() / 2;
        if half > 0 {
            keys.select_nth_unstable(half);
        }
        let upper = keys.split_off(half);
        RunningMedian {
            lower: BinaryHeap::from(keys),
            upper: upper.into_iter().map(Reverse).collect(),
        }
    }

    /// The median of a non-empty set.
    fn median(&self) -> f64 {
        let Reverse(upper) = *self.upper.peek().expect("non-empty");
        let upper = from_order_key(upper);
        if self.len() % 2 == 1 {
            upper
        } else {
            (from_order_key(*self.lower.peek().expect("even and non-empty")) + upper) / 2.0
        }
    }
}

/// The walk's companion while prefixes are asked for.
pub(crate) struct Tracker {
    buckets: Vec<Bucket>,
    /// The worst interim return of each confirmed outcome's window, in
    /// confirmation order.
    worst: Vec<f64>,
    /// Monotone deque of row indices (ascending closes) over the windows.
    window: VecDeque<usize>,
    next: usize,
}

impl Tracker {
    pub(crate) fn new(k: usize) -> Self {
        Tracker {
            buckets: vec![Bucket::default(); k],
            worst: Vec::new(),
            window: VecDeque::new(),
            next: 0,
        }
    }

    /// The grid moved at row `t` (before the row is counted): every row and
    /// outcome so far is bucketed again.
    pub(crate) fn regroup(
        &mut self,
        grid: &Grid,
        drawdowns: &[f64],
        t: usize,
        outcomes: &[Outcome],
    ) {
        for b in &mut self.buckets {
            *b = Bucket::default();
        }
        for &d in &drawdowns[..t] {
            self.buckets[grid.segment(d)].rows += 1;
        }
        let mut keys: Vec<Vec<u64>> = vec![Vec::new(); self.buckets.len()];
        for (o, &worst) in outcomes.iter().zip(&self.worst) {
            let i = grid.segment(drawdowns[o.start]);
            self.buckets[i].add_sums(o, worst);
            keys[i].push(order_key(o.y));
        }
        for (b, keys) in self.buckets.iter_mut().zip(keys) {
            b.ys = RunningMedian::from_keys(keys);
        }
    }

    /// Counts row `t` in `bucket`.
    pub(crate) fn row(&mut self, bucket: usize) {
        self.buckets[bucket].rows += 1;
    }

    /// A newly confirmed outcome, in `bucket`: its window's lowest close
    /// (the same monotone deque as the whole-series statistics).
    pub(crate) fn outcome(&mut self, o: &Outcome, bucket: usize, closes: &[f64]) {
        self.next = self.next.max(o.start + 1);
        while self.next <= o.exit {
            while self
                .window
                .back()
                .is_some_and(|&b| closes[b] >= closes[self.next])
            {
                self.window.pop_back();
            }
            self.window.push_back(self.next);
            self.next += 1;
        }
        while self.window.front().is_some_and(|&f| f <= o.start) {
            self.window.pop_front();
        }
        let lowest = closes[*self.window.front().expect("exit > start")];
        let worst = min_num(lowest / closes[o.start] - 1.0, 0.0);
        self.worst.push(worst);
        self.buckets[bucket].add(o, worst);
    }

    /// The state of the prefix ending at the walk's current row.
    pub(crate) fn take(&self, at: Snapshot<'_>) -> StateAt {
        let i = at.segment;
        let b = &self.buckets[i];
        let confirmed = b.ys.len() as u32;
        let (e, m, c) = if confirmed > 0 {
            (b.ema_err, b.med_err, confirmed)
        } else {
            at.all_errors
        };
        let has = confirmed > 0;
        let n = b.ys.len() as f64;
        StateAt {
            periods_per_year: at.periods_per_year,
            current: state(&at, e, m, c, confirmed),
            active_segment: SegmentStats {
                segment_idx: i as u32,
                lower_bound: -((i + 1) as f64) * at.grid.width,
                upper_bound: -(i as f64) * at.grid.width,
                count: b.rows,
                expected_return: at.estimators[i].ema,
                avg_return: has.then(|| b.sum / n),
                median_return: has.then(|| at.estimators[i].window.median()),
                static_median_return: has.then(|| b.ys.median()),
                max_loss: has.then_some(b.loss),
                win_rate: has.then(|| f64::from(b.wins) / n),
            },
            typical_max_drawdown: at.typical_max_drawdown,
        }
    }
}

/// What the walk knows at the row a snapshot is taken.
pub(crate) struct Snapshot<'a> {
    pub(crate) periods_per_year: u32,
    pub(crate) grid: &'a Grid,
    pub(crate) estimators: &'a [Estimators],
    pub(crate) segment: usize,
    pub(crate) price: f64,
    pub(crate) drawdown: f64,
    pub(crate) expected_return: f64,
    pub(crate) median_return: f64,
    /// Error sums and count over every outcome (the fallback of a bucket
    /// without one).
    pub(crate) all_errors: (f64, f64, u32),
    pub(crate) typical_max_drawdown: Option<f64>,
}

/// The current state from its bucket's (or every outcome's) error sums,
/// as `current_state` computes it.
fn state(at: &Snapshot<'_>, e: f64, m: f64, c: u32, confirmed: u32) -> CurrentState {
    let figures = Figures {
        price: at.price,
        drawdown: at.drawdown,
        segment: at.segment as u32,
        expected_return: at.expected_return,
        median_return: at.median_return,
    };
    figures.state((e, m, c), confirmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built at once or pushed one by one, the halves answer the same
    /// medians, also while more values are pushed afterwards (duplicates,
    /// signs and zero included).
    #[test]
    fn halves_built_at_once_equal_halves_pushed() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % 41) as f64 / 8.0 - 2.5
        };
        for len in 0..60 {
            let values: Vec<f64> = (0..len).map(|_| next()).collect();
            let mut pushed = RunningMedian::default();
            values.iter().for_each(|&y| pushed.push(y));
            let mut built =
                RunningMedian::from_keys(values.iter().map(|&y| order_key(y)).collect());
            assert_eq!(
                (built.lower.len(), built.upper.len()),
                (pushed.lower.len(), pushed.upper.len())
            );
            for _ in 0..8 {
                if pushed.len() > 0 {
                    assert_eq!(
                        built.median().to_bits(),
                        pushed.median().to_bits(),
                        "len {len}"
                    );
                }
                let y = next();
                pushed.push(y);
                built.push(y);
            }
        }
    }
}
