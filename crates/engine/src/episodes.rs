//! The independent episodes behind the current bucket of many prefixes of
//! one series ([`episodes_at_many`]) in one walk: what
//! [`crate::evidence`] of the series cut after row `t` reports as the
//! `episodes` of the bucket row `t` falls in.
//!
//! On a fixed grid each row's bucket is fixed, so the episodes of every
//! bucket grow one row at a time: a row starts a new episode when it lies at
//! least `return_period` calendar days after its bucket's previous row, and
//! the episode counts once its first row's exit lies within the prefix.
//! Exits are monotone in the row index, so the starts still waiting for
//! their exit form a FIFO. The grid moves only when the running deepest
//! drawdown needs another floor step (at most [`crate::Grid::steps_for`]'s
//! 20 times), and only then are the counts rebuilt from row 0.

use std::collections::VecDeque;

use crate::{check_ends, validate_params, EngineError, ExitsByHorizon, Grid, Params, Prepared};

/// The confirmed episodes of the current bucket of each prefix
/// `rows 0..=end` for `end` in `ends` (strictly ascending, each prefix at
/// least [`crate::MIN_ROWS`] long): entry `i` equals the `episodes` that
/// [`crate::evidence`] of the series cut after row `ends[i]` reports for
/// the bucket of that row.
pub fn episodes_at(
    dates: &[i32],
    closes: &[f64],
    params: &Params,
    ends: &[u32],
) -> Result<Vec<u32>, EngineError> {
    episodes_at_many(dates, closes, std::slice::from_ref(params), ends)
        .pop()
        .expect("one answer per parameter set")
}

/// [`episodes_at`] for each of `params` over one series, in order, sharing
/// the checks of the series, the drawdowns and each horizon's exits. An
/// error in the series or in `ends` is every entry's; a bad parameter set
/// is its own (the checks and errors of
/// [`crate::analyse_states_at_many`]).
pub fn episodes_at_many(
    dates: &[i32],
    closes: &[f64],
    params: &[Params],
    ends: &[u32],
) -> Vec<Result<Vec<u32>, EngineError>> {
    // Episodes read no outcome, so no metric needs the return prefix sums.
    let checked = Prepared::new(dates, closes, false).and_then(|prepared| {
        check_ends(ends, closes.len())?;
        Ok(prepared)
    });
    let prepared = match checked {
        Ok(p) => p,
        Err(e) => return params.iter().map(|_| Err(e.clone())).collect(),
    };
    let mut exits = ExitsByHorizon::default();
    params
        .iter()
        .map(|p| {
            validate_params(p)?;
            Ok(walk(&prepared, p, exits.of(dates, p), ends))
        })
        .collect()
}

/// The answers for one checked parameter set: one walk up to the last end.
fn walk(prepared: &Prepared, params: &Params, exits: &[Option<usize>], ends: &[u32]) -> Vec<u32> {
    let Some(&last) = ends.last() else {
        return Vec::new();
    };
    let (drawdowns, floor_steps) = (&prepared.drawdowns, &prepared.floor_steps);
    let mut grid = Grid::new(floor_steps[0], params.num_segments);
    let mut counts = Counts::new(
        prepared.dates,
        exits,
        params.return_period as i32,
        params.num_segments as usize,
    );
    let mut out = Vec::with_capacity(ends.len());
    let mut wanted = ends.iter().map(|&e| e as usize).peekable();
    for t in 0..=last as usize {
        if floor_steps[t] != grid.steps {
            // The floor deepened: the rows so far are bucketed again.
            grid = Grid::new(floor_steps[t], params.num_segments);
            counts.regroup(&grid, drawdowns, t);
        }
        let bucket = grid.segment(drawdowns[t]);
        counts.row(t, bucket);
        counts.confirm(t);
        if wanted.next_if_eq(&t).is_some() {
            out.push(counts.confirmed[bucket]);
        }
    }
    out
}

/// Per-bucket episode counts on the current grid.
struct Counts<'a> {
    dates: &'a [i32],
    exits: &'a [Option<usize>],
    horizon: i32,
    /// Date of each bucket's latest row.
    last: Vec<Option<i32>>,
    /// Episodes of each bucket whose first row's exit has been reached.
    confirmed: Vec<u32>,
    /// First rows (and buckets) of the episodes still waiting for their
    /// exit, in row order, so in exit order.
    pending: VecDeque<(usize, usize)>,
}

impl<'a> Counts<'a> {
    fn new(dates: &'a [i32], exits: &'a [Option<usize>], horizon: i32, k: usize) -> Self {
        Counts {
            dates,
            exits,
            horizon,
            last: vec![None; k],
            confirmed: vec![0; k],
            pending: VecDeque::new(),
        }
    }

    /// The grid moved at row `t` (before the row is counted): rows `0..t`
    /// are counted again on `grid`; [`Counts::confirm`] then confirms
    /// what their exits allow.
    fn regroup(&mut self, grid: &Grid, drawdowns: &[f64], t: usize) {
        self.last.fill(None);
        self.confirmed.fill(0);
        self.pending.clear();
        for (s, &d) in drawdowns[..t].iter().enumerate() {
            self.row(s, grid.segment(d));
        }
    }

    /// Counts row `s` in `bucket`: a new episode after a gap of at least
    /// the horizon (or as the bucket's first row).
    fn row(&mut self, s: usize, bucket: usize) {
        let date = self.dates[s];
        if self.last[bucket].is_none_or(|prev| date - prev >= self.horizon) {
            self.pending.push_back((s, bucket));
        }
        self.last[bucket] = Some(date);
    }

    /// Confirms every waiting episode whose first row's exit is at most `t`.
    fn confirm(&mut self, t: usize) {
        while let Some(&(s, bucket)) = self.pending.front() {
            if self.exits[s].is_none_or(|j| j > t) {
                break;
            }
            self.pending.pop_front();
            self.confirmed[bucket] += 1;
        }
    }
}

/// The median prediction and the current bucket's episodes at some rows,
/// recorded by [`crate::forecast_inputs`]'s walk as it passes them (the
/// episodes counted as [`walk`] counts them, on the walk's grid).
pub(crate) struct Marked<'a> {
    counts: Counts<'a>,
    rows: &'a [usize],
    pub(crate) medians: Vec<f64>,
    pub(crate) episodes: Vec<u32>,
}

impl<'a> Marked<'a> {
    pub(crate) fn new(
        dates: &'a [i32],
        exits: &'a [Option<usize>],
        params: &Params,
        rows: &'a [usize],
    ) -> Self {
        let k = params.num_segments as usize;
        Marked {
            counts: Counts::new(dates, exits, params.return_period as i32, k),
            rows,
            medians: Vec::with_capacity(rows.len()),
            episodes: Vec::with_capacity(rows.len()),
        }
    }

    /// The grid moved at row `t`, before the row is counted.
    pub(crate) fn regroup(&mut self, grid: &Grid, drawdowns: &[f64], t: usize) {
        self.counts.regroup(grid, drawdowns, t);
    }

    /// Row `t` falls in `bucket` with median prediction `median`.
    pub(crate) fn row(&mut self, t: usize, bucket: usize, median: f64) {
        self.counts.row(t, bucket);
        self.counts.confirm(t);
        if self.rows.get(self.medians.len()) == Some(&t) {
            self.medians.push(median);
            self.episodes.push(self.counts.confirmed[bucket]);
        }
    }
}
