//! Median of the most recent `capacity` values, updated in O(capacity)
//! per push (a sorted copy beside the FIFO; capacity is 252, so a memmove
//! beats any tree here). Values are kept as order keys (`stats::order_key`)
//! so searching compares integers.

use std::collections::VecDeque;

use crate::stats::{from_order_key, order_key};

/// A window behind by this many values or more catches up by a refill (one
/// sort of at most a window) rather than a push per value (a search and a
/// shift each): the two cost about the same around here.
pub(crate) const REFILL_BACKLOG: usize = 48;

#[derive(Debug, Clone)]
pub(crate) struct RollingMedian {
    capacity: usize,
    /// Order keys in arrival order, oldest first.
    fifo: VecDeque<u64>,
    /// The same keys, ascending (the total order of the values).
    sorted: Vec<u64>,
}

impl RollingMedian {
    pub(crate) fn new(capacity: usize) -> Self {
        RollingMedian {
            capacity,
            fifo: VecDeque::with_capacity(capacity),
            sorted: Vec::with_capacity(capacity),
        }
    }

    /// Replaces the window by the last `capacity` of `values` (in order).
    pub(crate) fn refill(&mut self, values: impl Iterator<Item = f64>) {
        self.fifo.clear();
        for v in values {
            if self.fifo.len() == self.capacity {
                self.fifo.pop_front();
            }
            self.fifo.push_back(order_key(v));
        }
        self.sorted.clear();
        self.sorted.extend(self.fifo.iter().copied());
        self.sorted.sort_unstable();
    }

    pub(crate) fn push(&mut self, value: f64) {
        let key = order_key(value);
        let oldest = if self.fifo.len() == self.capacity {
            self.fifo.pop_front()
        } else {
            None
        };
        self.fifo.push_back(key);
        let at = self.sorted.partition_point(|&v| v <= key);
        match oldest {
            // The oldest leaves as the new one arrives: one shift of the
            // keys between the two places instead of a removal and an
            // insertion that each move half the window.
            Some(old) => {
                let from = self.sorted.partition_point(|&v| v < old);
                if at > from {
                    self.sorted.copy_within(from + 1..at, from);
                    self.sorted[at - 1] = key;
                } else {
                    self.sorted.copy_within(at..from, at + 1);
                    self.sorted[at] = key;
                }
            }
            None => self.sorted.insert(at, key),
        }
    }

    /// Median of the window; 0 when empty (callers check emptiness first).
    pub(crate) fn median(&self) -> f64 {
        let n = self.sorted.len();
        match n {
            0 => 0.0,
            _ if n % 2 == 1 => from_order_key(self.sorted[n / 2]),
            _ => middle_pair(self.sorted[n / 2 - 1], self.sorted[n / 2]),
        }
    }
}

/// The mean of the two middle values of an even-sized window.
fn middle_pair(low: u64, high: u64) -> f64 {
    (from_order_key(low) + from_order_key(high)) / 2.0
}
