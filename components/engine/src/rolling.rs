//! Median of the most recent `capacity` values, updated in O(capacity)
//! per push (a sorted copy beside the FIFO; capacity is 252, so a memmove
//! beats any tree here).

use std::collections::VecDeque;

use crate::stats::median_sorted;

#[derive(Debug, Clone)]
pub(crate) struct RollingMedian {
    capacity: usize,
    /// Values in arrival order, oldest first.
    fifo: VecDeque<f64>,
    /// The same values, ascending (total order).
    sorted: Vec<f64>,
}

impl RollingMedian {
    pub(crate) fn new(capacity: usize) -> Self {
        RollingMedian {
            capacity,
            fifo: VecDeque::with_capacity(capacity),
            sorted: Vec::with_capacity(capacity),
        }
    }

    /// A window holding the last `capacity` of `values` (in order).
    pub(crate) fn from_recent(capacity: usize, values: &[f64]) -> Self {
        let recent = &values[values.len().saturating_sub(capacity)..];
        let mut sorted = recent.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        RollingMedian {
            capacity,
            fifo: recent.iter().copied().collect(),
            sorted,
        }
    }

    pub(crate) fn push(&mut self, value: f64) {
        if self.fifo.len() == self.capacity {
            if let Some(old) = self.fifo.pop_front() {
                let at = self.sorted.partition_point(|v| v.total_cmp(&old).is_lt());
                self.sorted.remove(at);
            }
        }
        self.fifo.push_back(value);
        let at = self.sorted.partition_point(|v| v.total_cmp(&value).is_le());
        self.sorted.insert(at, value);
    }

    /// Median of the window; 0 when empty (callers check emptiness first).
    pub(crate) fn median(&self) -> f64 {
        if self.sorted.is_empty() {
            0.0
        } else {
            median_sorted(&self.sorted)
        }
    }
}
