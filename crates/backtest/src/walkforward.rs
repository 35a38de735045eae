//! Walk-forward analysis over runs that share one calendar: on each train
//! split choose the run with the best score, apply it to the next test
//! split, and chain the test splits' returns into one out-of-sample curve.
//!
//! Every run covers the whole window, so a split is a slice of each run's
//! equity curve: the figures of rows `a..=b` come from the curve
//! `E[a-1..=b]` (the move into row `a` belongs to the split), and the
//! out-of-sample curve multiplies the chosen run's daily ratios
//! `E[t] / E[t-1]` over each test split. No look-ahead: a run's equity at
//! row `t` depends on decisions taken from data up to `t - 1`, and the
//! choice for a test split reads only rows before it.

use crate::metrics::metrics;

/// Rows of the shared calendar, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitRows {
    /// First and last row of the train split.
    pub train: (usize, usize),
    /// First and last row of the test split (after the train split).
    pub test: (usize, usize),
}

/// The figures compared in and out of sample.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    /// `E_N / E_0 - 1`.
    pub total_return: Option<f64>,
    /// Compound annual growth rate.
    pub cagr: Option<f64>,
    /// Annualised Sharpe ratio.
    pub sharpe_ratio: Option<f64>,
    /// Annualised Sortino ratio.
    pub sortino_ratio: Option<f64>,
    /// Worst peak-to-trough fall (<= 0).
    pub max_drawdown: Option<f64>,
    /// `cagr / |max_drawdown|`, undefined without a drawdown.
    pub calmar_ratio: Option<f64>,
}

/// The figures of `curve` (`E_0..E_N`) with `periods` returns per year.
pub fn figures(curve: &[f64], periods: u32) -> Figures {
    let m = metrics(curve, periods, 0.0, 0);
    let calmar_ratio = match (m.cagr, m.max_drawdown) {
        (Some(c), Some(d)) if d < 0.0 => Some(c / -d).filter(|x| x.is_finite()),
        _ => None,
    };
    Figures {
        total_return: m.total_return,
        cagr: m.cagr,
        sharpe_ratio: m.sharpe_ratio,
        sortino_ratio: m.sortino_ratio,
        max_drawdown: m.max_drawdown,
        calmar_ratio,
    }
}

/// The slice of `equity` whose returns are rows `a..=b`.
pub fn slice(equity: &[f64], (a, b): (usize, usize)) -> &[f64] {
    &equity[a.saturating_sub(1)..=b]
}

/// What a walk-forward found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Per split, the index of the run chosen on its train split.
    pub chosen: Vec<usize>,
    /// Per split, the chosen run's figures on the train split.
    pub in_sample: Vec<Figures>,
    /// Per split, the chosen run's figures on the test split.
    pub out_of_sample: Vec<Figures>,
    /// The out-of-sample curve: `(row, equity)`, from the row before the
    /// first test split (at `initial`) to the last test row.
    pub stitched: Vec<(usize, f64)>,
}

/// Chooses, on each split's train rows, the run of `curves` with the
/// highest `score` (the first on a tie, the first run when no score is
/// defined) and chains its test rows from `initial`. Every curve has one
/// value per calendar row; the splits are in date order and their train
/// rows start at row 0 or later, their test rows at row 1 or later.
pub fn walk_forward(
    curves: &[&[f64]],
    splits: &[SplitRows],
    periods: u32,
    initial: f64,
    score: impl Fn(&Figures) -> Option<f64>,
) -> Outcome {
    let mut out = Outcome {
        chosen: Vec::with_capacity(splits.len()),
        in_sample: Vec::with_capacity(splits.len()),
        out_of_sample: Vec::with_capacity(splits.len()),
        stitched: Vec::new(),
    };
    let mut equity = initial;
    for split in splits {
        let mut best: Option<(usize, f64)> = None;
        let mut train = Vec::with_capacity(curves.len());
        for (k, curve) in curves.iter().enumerate() {
            let f = figures(slice(curve, split.train), periods);
            if let Some(s) = score(&f).filter(|s| s.is_finite()) {
                if best.is_none_or(|(_, b)| s > b) {
                    best = Some((k, s));
                }
            }
            train.push(f);
        }
        let k = best.map_or(0, |(k, _)| k);
        let curve = curves[k];
        let (a, b) = split.test;
        if out.stitched.is_empty() {
            out.stitched.push((a - 1, equity));
        }
        for t in a..=b {
            equity *= curve[t] / curve[t - 1];
            out.stitched.push((t, equity));
        }
        out.chosen.push(k);
        out.in_sample.push(train[k]);
        out.out_of_sample
            .push(figures(slice(curve, split.test), periods));
    }
    out
}

/// The mean of each figure over `all`, over the values defined.
pub fn mean(all: &[Figures]) -> Figures {
    let avg = |get: fn(&Figures) -> Option<f64>| {
        let v: Vec<f64> = all.iter().filter_map(get).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    Figures {
        total_return: avg(|f| f.total_return),
        cagr: avg(|f| f.cagr),
        sharpe_ratio: avg(|f| f.sharpe_ratio),
        sortino_ratio: avg(|f| f.sortino_ratio),
        max_drawdown: avg(|f| f.max_drawdown),
        calmar_ratio: avg(|f| f.calmar_ratio),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total_return(f: &Figures) -> Option<f64> {
        f.total_return
    }

    #[test]
    fn each_test_split_uses_the_train_winner_and_the_curve_chains() {
        // Run 0 rises in rows 1..=4 and falls after; run 1 the other way.
        let up_then_down = [100.0, 110.0, 121.0, 133.1, 146.41, 131.769, 118.5921];
        let down_then_up = [100.0, 90.0, 81.0, 72.9, 65.61, 72.171, 79.3881];
        let curves: Vec<&[f64]> = vec![&up_then_down, &down_then_up];
        let splits = [
            SplitRows {
                train: (0, 2),
                test: (3, 4),
            },
            SplitRows {
                train: (3, 4),
                test: (5, 6),
            },
        ];
        let o = walk_forward(&curves, &splits, 252, 1000.0, total_return);
        // Run 0 won rows 0..=2 and 3..=4, so it trades both test splits.
        assert_eq!(o.chosen, vec![0, 0]);
        let rows: Vec<usize> = o.stitched.iter().map(|p| p.0).collect();
        assert_eq!(rows, vec![2, 3, 4, 5, 6]);
        // 1000 × 1.1 × 1.1 × 0.9 × 0.9.
        let last = o.stitched.last().unwrap().1;
        assert!(
            (last - 1000.0 * 1.1 * 1.1 * 0.9 * 0.9).abs() < 1e-9,
            "{last}"
        );
        // In sample: rows 0..=2 from E[0] = 100 to E[2] = 121.
        assert!((o.in_sample[0].total_return.unwrap() - 0.21).abs() < 1e-12);
        // Out of sample on split 2: two falls of 10 %.
        assert!((o.out_of_sample[1].total_return.unwrap() - (0.81 - 1.0)).abs() < 1e-12);
    }

    #[test]
    fn a_later_train_split_can_switch_runs() {
        let a = [100.0, 110.0, 121.0, 108.9, 98.01, 88.209];
        let b = [100.0, 90.0, 95.0, 110.0, 121.0, 133.1];
        let curves: Vec<&[f64]> = vec![&a, &b];
        let splits = [
            SplitRows {
                train: (0, 2),
                test: (3, 3),
            },
            SplitRows {
                train: (1, 3),
                test: (4, 5),
            },
        ];
        let o = walk_forward(&curves, &splits, 252, 100.0, total_return);
        assert_eq!(o.chosen, vec![0, 1]);
        // Row 3 from run 0 (−10 %), rows 4 and 5 from run 1 (+10 % each).
        let last = o.stitched.last().unwrap().1;
        assert!((last - 100.0 * 0.9 * 1.1 * 1.1).abs() < 1e-9, "{last}");
    }

    #[test]
    fn undefined_scores_fall_back_to_the_first_run() {
        let flat = [100.0, 100.0, 100.0, 100.0];
        let curves: Vec<&[f64]> = vec![&flat, &flat];
        let splits = [SplitRows {
            train: (0, 1),
            test: (2, 3),
        }];
        let o = walk_forward(&curves, &splits, 252, 100.0, |f| f.sharpe_ratio);
        assert_eq!(o.chosen, vec![0]);
        assert_eq!(o.in_sample[0].sharpe_ratio, None);
    }

    #[test]
    fn mean_skips_undefined_values() {
        let m = mean(&[
            Figures {
                cagr: Some(0.1),
                ..Figures::default()
            },
            Figures {
                cagr: Some(0.3),
                sharpe_ratio: Some(1.0),
                ..Figures::default()
            },
        ]);
        assert!((m.cagr.unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(m.sharpe_ratio, Some(1.0));
        assert_eq!(m.total_return, None);
    }
}
