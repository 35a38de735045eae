//! Choosing assets and turning a choice into target weights.

use std::cmp::Ordering;

use crate::{AssetState, Target};

/// The assets ordered by `key`, highest first.
///
/// Assets whose key is NaN are left out, so a missing value can be mapped
/// to NaN to exclude the asset (e.g. `|a| a.zscore.map_or(f64::NAN, |z| -z)`
/// ranks by lowest z-score and skips assets without one). Equal keys keep
/// the lower asset index first, so the order never depends on anything but
/// the data. For "lowest first", negate the key.
///
/// ```
/// # use forecast_sdk::{rank_by, AssetState};
/// # fn state(asset: u32, median_return: f64) -> AssetState {
/// #     AssetState { asset, price: 1.0, drawdown: 0.0, segment: 0, expected_return: 0.0,
/// #         median_return, prediction_error: None, median_error: None, zscore: None, weight: 0.0 }
/// # }
/// let assets = vec![state(0, 0.01), state(1, f64::NAN), state(2, 0.05), state(3, 0.01)];
/// let order: Vec<u32> = rank_by(&assets, |a| a.median_return).iter().map(|a| a.asset).collect();
/// assert_eq!(order, [2, 0, 3]);
/// ```
pub fn rank_by<'a, I, F>(assets: I, key: F) -> Vec<&'a AssetState>
where
    I: IntoIterator<Item = &'a AssetState>,
    F: FnMut(&AssetState) -> f64,
{
    let mut keyed = keyed(assets, key);
    keyed.sort_by(best_first);
    keyed.into_iter().map(|(_, a)| a).collect()
}

/// Each asset with its key, those whose key is NaN left out.
fn keyed<'a, I, F>(assets: I, mut key: F) -> Vec<(f64, &'a AssetState)>
where
    I: IntoIterator<Item = &'a AssetState>,
    F: FnMut(&AssetState) -> f64,
{
    assets
        .into_iter()
        .map(|a| (key(a), a))
        .filter(|(k, _)| !k.is_nan())
        .collect()
}

/// [`rank_by`]'s order: the higher key first, then the lower asset index.
fn best_first((ka, a): &(f64, &AssetState), (kb, b): &(f64, &AssetState)) -> Ordering {
    kb.partial_cmp(ka)
        .unwrap_or(Ordering::Equal)
        .then(a.asset.cmp(&b.asset))
}

/// The first `n` of [`rank_by`]'s order, the same assets in the same
/// order, found without ordering the rest: a selection, then a sort of
/// the `n` chosen (linear in the assets rather than `n log n` of all of
/// them; a strategy that keeps only a few of thousands of assets at each
/// decision spends much less of its time limit).
///
/// ```
/// # use forecast_sdk::{top_by, AssetState};
/// # fn state(asset: u32, median_return: f64) -> AssetState {
/// #     AssetState { asset, price: 1.0, drawdown: 0.0, segment: 0, expected_return: 0.0,
/// #         median_return, prediction_error: None, median_error: None, zscore: None, weight: 0.0 }
/// # }
/// let assets = vec![state(0, 0.01), state(1, f64::NAN), state(2, 0.05), state(3, 0.01)];
/// let top: Vec<u32> = top_by(&assets, |a| a.median_return, 2).iter().map(|a| a.asset).collect();
/// assert_eq!(top, [2, 0]);
/// ```
pub fn top_by<'a, I, F>(assets: I, key: F, n: usize) -> Vec<&'a AssetState>
where
    I: IntoIterator<Item = &'a AssetState>,
    F: FnMut(&AssetState) -> f64,
{
    if n == 0 {
        return Vec::new();
    }
    let mut keyed = keyed(assets, key);
    if n < keyed.len() {
        keyed.select_nth_unstable_by(n - 1, best_first);
        keyed.truncate(n);
    }
    keyed.sort_by(best_first);
    keyed.into_iter().map(|(_, a)| a).collect()
}

/// Equal weight `1 / slots` in each of the first `slots` assets (fewer
/// assets leave the rest of the equity in cash; more are ignored). The
/// gross exposure is therefore at most 1, as the contract requires.
///
/// ```
/// # use forecast_sdk::{equal_weights, rank_by, AssetState};
/// # fn state(asset: u32, median_return: f64) -> AssetState {
/// #     AssetState { asset, price: 1.0, drawdown: 0.0, segment: 0, expected_return: 0.0,
/// #         median_return, prediction_error: None, median_error: None, zscore: None, weight: 0.0 }
/// # }
/// let assets = vec![state(0, 0.01), state(1, 0.03), state(2, 0.02)];
/// let targets = equal_weights(rank_by(&assets, |a| a.median_return), 4);
/// assert_eq!(targets.len(), 3);
/// assert_eq!((targets[0].asset, targets[0].weight), (1, 0.25));
/// ```
pub fn equal_weights<'a, I>(assets: I, slots: u32) -> Vec<Target>
where
    I: IntoIterator<Item = &'a AssetState>,
{
    if slots == 0 {
        return Vec::new();
    }
    weighted(
        assets.into_iter().take(slots as usize),
        1.0 / f64::from(slots),
    )
}

/// The same `weight` for every asset (negative to go short). The caller
/// keeps the gross exposure, `count × |weight|`, at most 1.
pub fn weighted<'a, I>(assets: I, weight: f64) -> Vec<Target>
where
    I: IntoIterator<Item = &'a AssetState>,
{
    assets
        .into_iter()
        .map(|a| Target {
            asset: a.asset,
            weight,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `top_by` is `rank_by` cut at `n`, ties and NaN included.
    #[test]
    fn top_by_is_the_head_of_rank_by() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for round in 0..50 {
            let len = 1 + (next() % 120) as usize;
            let assets: Vec<AssetState> = (0..len as u32)
                .map(|i| {
                    let r = next() % 10;
                    // Few distinct values, so ties are common; some NaN, some -0.0.
                    let v = match r {
                        0 => f64::NAN,
                        1 => -0.0,
                        _ => f64::from(next() % 5) / 100.0 - 0.02,
                    };
                    state(i, v)
                })
                .collect();
            for n in [0, 1, 2, 5, len / 2, len, len + 3] {
                let all: Vec<u32> = rank_by(&assets, |a| a.median_return)
                    .iter()
                    .take(n)
                    .map(|a| a.asset)
                    .collect();
                let top: Vec<u32> = top_by(&assets, |a| a.median_return, n)
                    .iter()
                    .map(|a| a.asset)
                    .collect();
                assert_eq!(top, all, "round {round}, n {n}");
            }
        }
    }

    fn state(asset: u32, median_return: f64) -> AssetState {
        AssetState {
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
        }
    }

    fn order(v: &[&AssetState]) -> Vec<u32> {
        v.iter().map(|a| a.asset).collect()
    }

    #[test]
    fn ranking_is_highest_first_with_ties_by_index_and_nan_left_out() {
        let assets = vec![
            state(4, 0.02),
            state(1, 0.02),
            state(0, f64::NAN),
            state(3, -0.5),
            state(2, 0.30),
            state(5, f64::INFINITY),
            state(6, 0.0),
            state(7, -0.0),
        ];
        assert_eq!(
            order(&rank_by(&assets, |a| a.median_return)),
            [5, 2, 1, 4, 6, 7, 3]
        );
        // Lowest first by negating; ties still by index.
        assert_eq!(
            order(&rank_by(&assets, |a| -a.median_return)),
            [3, 6, 7, 1, 4, 2, 5]
        );
        // Input order does not matter.
        let mut reversed = assets.clone();
        reversed.reverse();
        assert_eq!(
            order(&rank_by(&reversed, |a| a.median_return)),
            [5, 2, 1, 4, 6, 7, 3]
        );
        // Options mapped to NaN are excluded.
        let mut z = assets.clone();
        z[0].zscore = Some(-2.0);
        z[3].zscore = Some(-3.0);
        assert_eq!(
            order(&rank_by(&z, |a| a.zscore.map_or(f64::NAN, |z| -z))),
            [3, 4]
        );
        assert!(rank_by(&Vec::new(), |a| a.median_return).is_empty());
    }

    #[test]
    fn equal_weights_fill_at_most_the_slots() {
        let assets: Vec<AssetState> = (0..5).map(|i| state(i, 0.0)).collect();
        let t = equal_weights(&assets, 3);
        assert_eq!(
            t,
            vec![
                Target {
                    asset: 0,
                    weight: 1.0 / 3.0
                },
                Target {
                    asset: 1,
                    weight: 1.0 / 3.0
                },
                Target {
                    asset: 2,
                    weight: 1.0 / 3.0
                },
            ]
        );
        let gross: f64 = t.iter().map(|t| t.weight.abs()).sum();
        assert!(gross <= 1.0 + 1e-12);
        let t = equal_weights(&assets[..2], 4);
        assert_eq!(t.len(), 2);
        assert!(t.iter().all(|t| t.weight == 0.25));
        assert!(equal_weights(&assets, 0).is_empty());
        let short = weighted(&assets[3..], -0.1);
        assert_eq!(
            short,
            vec![
                Target {
                    asset: 3,
                    weight: -0.1
                },
                Target {
                    asset: 4,
                    weight: -0.1
                },
            ]
        );
    }
}
