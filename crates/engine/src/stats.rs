//! Small order statistics shared by the engine.

/// The smaller of two numbers that are never NaN. `f64::min` is a call to
/// libm's `fmin` on wasm32 (its rule for NaN differs from the `f64.min`
/// instruction's); a comparison is one instruction. Equal to `f64::min`
/// for every non-NaN pair except that of `-0.0` and `+0.0`, where it
/// returns `a` (the engine's callers never compare signed zeros: see each).
#[inline]
pub(crate) fn min_num(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// The larger of two numbers that are never NaN; see [`min_num`].
#[inline]
pub(crate) fn max_num(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Arithmetic mean of a non-empty slice.
pub(crate) fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Median of a non-empty ascending slice (mean of the two middles when even).
pub(crate) fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Percentile `q` in [0, 1] of a non-empty ascending slice with linear
/// interpolation between closest ranks (numpy's default method).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Median of a non-empty slice by selection (reorders it); equal to
/// [`median_sorted`] of the sorted slice.
pub(crate) fn median_select(values: &mut [f64]) -> f64 {
    let n = values.len();
    let (left, mid, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *mid;
    if n % 2 == 1 {
        upper
    } else {
        let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// Order-preserving map of a finite `f64` to `u64` (the total order of
/// `f64::total_cmp`), so selection compares plain integers.
#[inline]
pub(crate) fn order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// Inverse of [`order_key`].
#[inline]
pub(crate) fn from_order_key(k: u64) -> f64 {
    if k >> 63 == 1 {
        f64::from_bits(k & !(1 << 63))
    } else {
        f64::from_bits(!k)
    }
}

/// Places the elements of rank `ranks` (ascending, deduplicated, all in
/// `offset..offset + keys.len()`) at their sorted positions.
fn multiselect(keys: &mut [u64], offset: usize, ranks: &[usize]) {
    if ranks.is_empty() || keys.len() <= 1 {
        return;
    }
    let mid = ranks.len() / 2;
    let k = ranks[mid] - offset;
    keys.select_nth_unstable(k);
    let (left, right) = keys.split_at_mut(k);
    multiselect(left, offset, &ranks[..mid]);
    multiselect(&mut right[1..], offset + k + 1, &ranks[mid + 1..]);
}

/// Percentiles `qs` (ascending, each in [0, 1]) of non-empty order keys
/// (see [`order_key`]) with the interpolation of [`percentile_sorted`], by
/// selecting only the ranks needed instead of sorting. The slice is
/// reordered.
pub(crate) fn percentiles_select<const N: usize>(keys: &mut [u64], qs: [f64; N]) -> [f64; N] {
    let n = keys.len();
    let pos = qs.map(|q| q * (n - 1) as f64);
    let mut lows: Vec<usize> = pos.iter().map(|p| p.floor() as usize).collect();
    lows.dedup();
    multiselect(keys, 0, &lows);
    pos.map(|p| {
        let (lo, hi) = (p.floor() as usize, p.ceil() as usize);
        let a = from_order_key(keys[lo]);
        if hi == lo {
            return a;
        }
        // Between two selected ranks the keys are unordered but bounded, so
        // rank lo + 1 is the smallest key before the next selected rank.
        let end = lows.iter().copied().find(|&r| r > lo).unwrap_or(n);
        let b = from_order_key(*keys[lo + 1..end.max(lo + 2)].iter().min().expect("hi < n"));
        a + (b - a) * (p - lo as f64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_keys_preserve_order_and_round_trip() {
        let xs = [-1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, 1e300];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) < order_key(w[1]) || (w[0] == 0.0 && w[1] == 0.0));
        }
        for x in xs {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn median_by_selection_matches_sorting() {
        for v in [
            vec![3.0],
            vec![2.0, 1.0],
            vec![5.0, 1.0, 4.0, 1.0],
            vec![-1.0, 7.0, 0.5, 0.5, 2.0],
        ] {
            let mut sorted = v.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            let mut scratch = v.clone();
            assert_eq!(median_select(&mut scratch), median_sorted(&sorted), "{v:?}");
        }
    }

    #[test]
    fn selection_matches_sorting() {
        let mut seed = 12345u64;
        for n in [1usize, 2, 3, 7, 10, 64, 251, 1000] {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Few distinct values, so ties are exercised too.
                    ((seed >> 40) % 17) as f64 - 8.0
                })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            let qs = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0];
            let mut keys: Vec<u64> = values.iter().map(|&v| order_key(v)).collect();
            let got = percentiles_select(&mut keys, qs);
            for (g, q) in got.iter().zip(qs) {
                assert_eq!(*g, percentile_sorted(&sorted, q), "n {n} q {q}");
            }
        }
    }
}
