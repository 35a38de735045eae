//! The reported confidence: the matcher's raw score mapped to how often
//! answers with that score were right on held-out evaluation data.
//!
//! The raw score (tiers, coverage, similarity; see [`crate::index`] and
//! [`crate::hybrid`]) orders candidates well but says little as a
//! probability: an exact namesake scored 0.95 and was wrong, a sure coin
//! scored 0.50 and was right. [`calibrate`] is a monotone, piecewise
//! linear map fitted by isotonic regression (pool adjacent violators) of
//! "this candidate is one the query meant" on the raw score, over the
//! tuned evaluation groups with the model (`names`, `descriptions`,
//! `multi`, `knowledge`, `classes`); `host/embed/tests/eval.rs` refits it
//! (`calibration_table`) and reports its reliability on groups it never
//! saw (docs/BENCHMARKS.md). Being monotone it never reorders candidates.

/// For a mention's first candidate: (raw score, share of such answers
/// that were right), raw ascending, as `host/embed/tests/eval.rs` fitted
/// them (2026-11-27: 399 first and 568 other candidates of the tuned
/// groups, blocks of at least 25). Between points the map is linear;
/// below the first and above the last it is flat.
pub const FIRST: &[(f64, f64)] = &[
    (0.621, 0.44),
    (0.762, 0.64),
    (0.843, 0.792),
    (0.891, 0.824),
    (0.917, 0.868),
    (0.962, 0.958),
];

/// The same for the candidates after the first (the second and third
/// suggestions), which are right less often at the same raw score.
pub const OTHERS: &[(f64, f64)] = &[
    (0.445, 0.0),
    (0.536, 0.038),
    (0.599, 0.07),
    (0.648, 0.119),
    (0.674, 0.12),
    (0.702, 0.206),
    (0.73, 0.254),
    (0.77, 0.342),
    (0.812, 0.397),
    (0.866, 0.436),
    (0.922, 0.48),
    (0.95, 0.647),
];

/// The calibrated confidence of a raw score in [0, 1] for a candidate at
/// `rank` (0 for the first) of its list.
pub fn calibrate(raw: f64, rank: usize) -> f64 {
    calibrate_with(if rank == 0 { FIRST } else { OTHERS }, raw)
}

/// [`calibrate`] over another table (for refitting).
pub fn calibrate_with(table: &[(f64, f64)], raw: f64) -> f64 {
    let raw = if raw.is_finite() {
        raw.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let Some(&(x0, y0)) = table.first() else {
        return raw;
    };
    if raw <= x0 {
        return y0;
    }
    for w in table.windows(2) {
        let ((xa, ya), (xb, yb)) = (w[0], w[1]);
        if raw <= xb {
            if xb <= xa {
                return yb;
            }
            return (ya + (yb - ya) * (raw - xa) / (xb - xa)).clamp(0.0, 1.0);
        }
    }
    table.last().map_or(raw, |&(_, y)| y)
}

/// Isotonic regression of `labels` (1 right, 0 wrong) on `scores`: the
/// non-decreasing step function minimising squared error, as (raw score at
/// the block's mean, share right) points ready for [`calibrate_with`].
/// Blocks hold at least `min_block` samples so a point is not one answer.
pub fn fit(samples: &[(f64, bool)], min_block: usize) -> Vec<(f64, f64)> {
    let mut s: Vec<(f64, bool)> = samples
        .iter()
        .copied()
        .filter(|(x, _)| x.is_finite())
        .collect();
    s.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Blocks of (sum of x, sum of y, count).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for (x, y) in s {
        blocks.push((x, if y { 1.0 } else { 0.0 }, 1));
        loop {
            let k = blocks.len();
            if k < 2 {
                break;
            }
            let (a, b) = (blocks[k - 2], blocks[k - 1]);
            let violates = a.1 / a.2 as f64 >= b.1 / b.2 as f64;
            let small = a.2 < min_block;
            if violates || small {
                blocks.truncate(k - 2);
                blocks.push((a.0 + b.0, a.1 + b.1, a.2 + b.2));
            } else {
                break;
            }
        }
    }
    // A last block smaller than `min_block` joins the one before.
    if blocks.len() >= 2 && blocks[blocks.len() - 1].2 < min_block {
        let b = blocks.pop().expect("two blocks");
        let a = blocks.pop().expect("two blocks");
        blocks.push((a.0 + b.0, a.1 + b.1, a.2 + b.2));
    }
    let mut points: Vec<(f64, f64)> = blocks
        .iter()
        .map(|&(sx, sy, n)| (sx / n as f64, sy / n as f64))
        .collect();
    // Merging the last block may have broken monotonicity; restore it.
    for i in 1..points.len() {
        if points[i].1 < points[i - 1].1 {
            points[i].1 = points[i - 1].1;
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_is_monotone_flat_outside_and_linear_between() {
        let t = [(0.4, 0.1), (0.6, 0.5), (0.9, 0.95)];
        assert_eq!(calibrate_with(&t, 0.1), 0.1);
        assert_eq!(calibrate_with(&t, 1.0), 0.95);
        assert!((calibrate_with(&t, 0.5) - 0.3).abs() < 1e-12);
        let mut last = 0.0;
        for k in 0..=100 {
            let y = calibrate_with(&t, k as f64 / 100.0);
            assert!(y >= last);
            last = y;
        }
        assert_eq!(calibrate_with(&t, f64::NAN), 0.1);
    }

    #[test]
    fn fitting_pools_violators_into_a_non_decreasing_map() {
        // Right answers get more common with the score, with noise.
        let samples: Vec<(f64, bool)> = (0..400)
            .map(|i| {
                let x = i as f64 / 400.0;
                (x, (i * 7919) % 100 < (x * 100.0) as usize)
            })
            .collect();
        let t = fit(&samples, 20);
        assert!(t.len() >= 3, "{t:?}");
        assert!(t.windows(2).all(|w| w[0].1 <= w[1].1 && w[0].0 <= w[1].0));
        assert!(
            t.first().unwrap().1 < 0.3 && t.last().unwrap().1 > 0.7,
            "{t:?}"
        );
    }
}
