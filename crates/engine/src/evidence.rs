//! The evidence behind a bucket's figures (docs/METHODOLOGY.md): how many
//! independent visits ("episodes") stand behind them, the spread of the
//! outcomes, a bootstrap interval of their median, how often a visit fell
//! deeper and how long it took to regain the prior peak.
//!
//! Everything here is computed from the series up to its last row `T` and
//! the drawdown grid of `T` (the grid `segments` report), like the
//! segment statistics. No figure changes the walk-forward predictions.

use crate::stats::{median_select, median_sorted, percentile_sorted};
use crate::{outcome, EngineError, ExitsByHorizon, Grid, Params, Prepared};

/// Resamples of the bootstrap interval of a bucket's median.
pub const BOOTSTRAP_RESAMPLES: usize = 1_000;
/// Coverage of `median_return_ci`: the 5th and 95th percentiles of the
/// resampled medians.
pub const CI_LEVEL: f64 = 0.90;
/// Fixed seed of the bootstrap: the same input gives the same interval.
pub const BOOTSTRAP_SEED: u64 = 0x005E_ED0F_E71D_E11C;

/// The evidence of one bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentEvidence {
    /// Bucket index on the grid of `T`.
    pub segment_idx: u32,
    /// Independent visits to the bucket whose first day's horizon has
    /// passed: maximal runs of the bucket's rows in which consecutive rows
    /// lie less than `return_period` calendar days apart.
    pub episodes: u32,
    /// p10, p25, p50, p75, p90 of the bucket's confirmed outcomes (every
    /// day, numpy's linear interpolation); `None` without outcomes.
    pub quantiles: Option<[f64; 5]>,
    /// 90 % interval of the bucket's median outcome by a bootstrap that
    /// resamples whole episodes; `None` with fewer than two episodes.
    pub median_return_ci: Option<(f64, f64)>,
    /// Share of episodes whose drawdown went below the bucket's lower
    /// bound between entry and the horizon; `None` without episodes.
    pub fell_further: Option<f64>,
    /// Median calendar days from an episode's entry to the first close at
    /// or above the peak before it, over the episodes that recovered.
    pub recovery_days_median: Option<f64>,
    /// Episodes that regained their prior peak by `T`.
    pub recovered: u32,
    /// Episodes that had not regained it by `T`.
    pub unrecovered: u32,
}

/// The evidence of the requested buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// One entry per requested bucket, in the order asked.
    pub segments: Vec<SegmentEvidence>,
    /// Median of every confirmed outcome of the series, whatever its
    /// bucket: what the bucket's median is compared with.
    pub unconditional_median: Option<f64>,
}

/// What to compute evidence for: the parameters and the buckets (empty:
/// every bucket).
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceRequest {
    /// Parameters of the analysis the buckets belong to.
    pub params: Params,
    /// Bucket indices (each below `num_segments`); empty asks for all.
    pub segments: Vec<u32>,
}

/// [`Evidence`] for each request over one series, sharing the checks and
/// drawdowns. One answer per request, in order.
pub fn evidence(
    dates: &[i32],
    closes: &[f64],
    requests: &[EvidenceRequest],
) -> Vec<Result<Evidence, EngineError>> {
    let with_prefix = requests
        .iter()
        .any(|r| crate::reads_prefix(r.params.metric));
    let prepared = match Prepared::new(dates, closes, with_prefix) {
        Ok(p) => p,
        Err(e) => return requests.iter().map(|_| Err(e.clone())).collect(),
    };
    let next_peak = next_peak(&prepared.drawdowns);
    let mut exits = ExitsByHorizon::default();
    requests
        .iter()
        .map(|r| one(&prepared, &next_peak, &mut exits, r))
        .collect()
}

/// `next_peak[v]`: the first row at or after `v` whose close is a new
/// running high (drawdown 0), if any.
fn next_peak(drawdowns: &[f64]) -> Vec<Option<usize>> {
    let mut next = None;
    let mut out = vec![None; drawdowns.len()];
    for v in (0..drawdowns.len()).rev() {
        if drawdowns[v] >= 0.0 {
            next = Some(v);
        }
        out[v] = next;
    }
    out
}

fn one(
    prepared: &Prepared,
    next_peak: &[Option<usize>],
    exits: &mut ExitsByHorizon,
    request: &EvidenceRequest,
) -> Result<Evidence, EngineError> {
    let params = &request.params;
    crate::validate_params(params)?;
    let k = params.num_segments;
    if let Some(bad) = request.segments.iter().find(|&&s| s >= k) {
        return Err(EngineError::InvalidInput(format!(
            "segment {bad} outside 0..{k}"
        )));
    }
    let (dates, closes, drawdowns) = (prepared.dates, prepared.closes, &prepared.drawdowns);
    let n = closes.len();
    let h = params.return_period as i32;
    let a = params
        .periods_per_year
        .unwrap_or_else(|| crate::infer_periods_per_year(dates));
    let exits = exits.of(dates, params);
    let grid = Grid::new(prepared.floor_steps[n - 1], k);
    let ys: Vec<Option<f64>> = (0..n)
        .map(|s| exits[s].and_then(|j| outcome(params.metric, closes, &prepared.prefix, s, j, a)))
        .collect();
    let mut all: Vec<f64> = ys.iter().flatten().copied().collect();
    let unconditional_median = (!all.is_empty()).then(|| median_select(&mut all));
    let wanted: Vec<u32> = if request.segments.is_empty() {
        (0..k).collect()
    } else {
        request.segments.clone()
    };
    // The rows of each bucket on the grid of T, in order.
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); k as usize];
    for (t, &d) in drawdowns.iter().enumerate() {
        rows[grid.segment(d)].push(t);
    }
    let segments = wanted
        .iter()
        .map(|&b| {
            bucket(
                b,
                &rows[b as usize],
                &Inputs {
                    dates,
                    drawdowns,
                    exits,
                    ys: &ys,
                    next_peak,
                    lower_bound: -f64::from(b + 1) * grid.width,
                    horizon: h,
                },
            )
        })
        .collect();
    Ok(Evidence {
        segments,
        unconditional_median,
    })
}

struct Inputs<'a> {
    dates: &'a [i32],
    drawdowns: &'a [f64],
    exits: &'a [Option<usize>],
    ys: &'a [Option<f64>],
    next_peak: &'a [Option<usize>],
    lower_bound: f64,
    horizon: i32,
}

/// The episodes of one bucket: the index range of `rows` each covers.
pub(crate) fn episodes(rows: &[usize], dates: &[i32], horizon: i32) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=rows.len() {
        if i == rows.len() || dates[rows[i]] - dates[rows[i - 1]] >= horizon {
            if i > start {
                out.push((start, i));
            }
            start = i;
        }
    }
    out
}

fn bucket(b: u32, rows: &[usize], x: &Inputs) -> SegmentEvidence {
    // An episode counts once its first day's horizon has passed.
    let confirmed: Vec<(usize, usize)> = episodes(rows, x.dates, x.horizon)
        .into_iter()
        .filter(|&(from, _)| x.exits[rows[from]].is_some())
        .collect();
    let mut fell = 0u32;
    let mut recovery_days = Vec::new();
    for &(from, _) in &confirmed {
        let entry = rows[from];
        let exit = x.exits[entry].expect("confirmed");
        if x.drawdowns[entry + 1..=exit]
            .iter()
            .any(|&d| d < x.lower_bound)
        {
            fell += 1;
        }
        if let Some(v) = x.next_peak[entry] {
            recovery_days.push(f64::from(x.dates[v] - x.dates[entry]));
        }
    }
    // Every confirmed outcome of the bucket, tagged with its episode.
    let mut pooled: Vec<(f64, u32)> = Vec::new();
    for (e, &(from, to)) in confirmed.iter().enumerate() {
        for &t in &rows[from..to] {
            if let Some(y) = x.ys[t] {
                pooled.push((y, e as u32));
            }
        }
    }
    // Exits are monotone, so every confirmed outcome of the bucket lies in
    // a confirmed episode: `pooled` holds the same values.
    let mut values: Vec<f64> = rows.iter().filter_map(|&t| x.ys[t]).collect();
    values.sort_unstable_by(f64::total_cmp);
    // The median as the segment statistics write it ((a + b) / 2), so p50
    // is `static_median_return` to the bit.
    let quantiles = (!values.is_empty()).then(|| {
        [0.10, 0.25, 0.50, 0.75, 0.90].map(|q| match q == 0.5 {
            true => median_sorted(&values),
            false => percentile_sorted(&values, q),
        })
    });
    pooled.sort_unstable_by(|p, q| p.0.total_cmp(&q.0));
    recovery_days.sort_unstable_by(f64::total_cmp);
    let n_eps = confirmed.len() as u32;
    SegmentEvidence {
        segment_idx: b,
        episodes: n_eps,
        quantiles,
        median_return_ci: bootstrap_ci(&pooled, confirmed.len(), u64::from(b)),
        fell_further: (n_eps > 0).then(|| f64::from(fell) / f64::from(n_eps)),
        recovery_days_median: (!recovery_days.is_empty()).then(|| median_sorted(&recovery_days)),
        recovered: recovery_days.len() as u32,
        unrecovered: n_eps - recovery_days.len() as u32,
    }
}

/// SplitMix64: a small, well-mixed generator; the same seed gives the same
/// sequence (the evidence's bootstrap, a backtest's Monte Carlo).
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift; the bias is below 2^-32 for the
    /// counts used here).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Positions between checkpoints of [`Checkpoints`].
const STRIDE: usize = 64;

/// How many values of each episode lie before every `STRIDE`-th position of
/// the pooled, ascending outcomes: the weight of a resample below such a
/// position is one sum over the episodes, so a value of given rank is found
/// by a binary search over checkpoints and a scan of at most `STRIDE`
/// values, not a scan of them all.
struct Checkpoints {
    /// `before[k * episodes + e]`: values of episode `e` among the first
    /// `k * STRIDE` pooled values.
    before: Vec<u32>,
    episodes: usize,
}

impl Checkpoints {
    fn new(pooled: &[(f64, u32)], episodes: usize) -> Self {
        let marks = pooled.len() / STRIDE + 1;
        let mut before = vec![0u32; marks * episodes];
        let mut running = vec![0u32; episodes];
        for (i, &(_, e)) in pooled.iter().enumerate() {
            if i % STRIDE == 0 {
                let k = i / STRIDE;
                before[k * episodes..(k + 1) * episodes].copy_from_slice(&running);
            }
            running[e as usize] += 1;
        }
        Checkpoints { before, episodes }
    }

    /// Weight (sum of `weight[e]` per value) of the first `k * STRIDE` values.
    fn weight_before(&self, k: usize, weight: &[u64]) -> u64 {
        self.before[k * self.episodes..(k + 1) * self.episodes]
            .iter()
            .zip(weight)
            .map(|(&c, &w)| u64::from(c) * w)
            .sum()
    }

    /// The value of 0-based `rank` in the resample that draws episode `e`
    /// `weight[e]` times (`rank` below the resample's size).
    fn value_at_rank(&self, pooled: &[(f64, u32)], weight: &[u64], rank: u64) -> f64 {
        // The last checkpoint whose weight before it is at most `rank`.
        let marks = pooled.len().div_ceil(STRIDE);
        let (mut lo, mut hi) = (0usize, marks);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.weight_before(mid, weight) <= rank {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut cum = self.weight_before(lo, weight);
        for &(y, e) in &pooled[lo * STRIDE..] {
            cum += weight[e as usize];
            if cum > rank {
                return y;
            }
        }
        unreachable!("rank {rank} below the resample's size")
    }
}

/// The 90 % percentile interval of the median of the pooled outcomes when
/// whole episodes are drawn with replacement (a block bootstrap whose
/// blocks are the episodes, so overlapping windows stay together).
/// `pooled` is ascending by value, each tagged with its episode.
pub(crate) fn bootstrap_ci(
    pooled: &[(f64, u32)],
    episodes: usize,
    salt: u64,
) -> Option<(f64, f64)> {
    if episodes < 2 || pooled.is_empty() {
        return None;
    }
    let mut size = vec![0u64; episodes];
    for &(_, e) in pooled {
        size[e as usize] += 1;
    }
    let mut rng = SplitMix(BOOTSTRAP_SEED ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let counts = Checkpoints::new(pooled, episodes);
    let mut weight = vec![0u64; episodes];
    let mut medians = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        weight.fill(0);
        let mut total = 0u64;
        for _ in 0..episodes {
            let e = rng.below(episodes);
            weight[e] += 1;
            total += size[e];
        }
        if total == 0 {
            continue;
        }
        // Ranks (0-based) of the two middle values of the pooled sample.
        let (lo_rank, hi_rank) = ((total - 1) / 2, total / 2);
        let lo = counts.value_at_rank(pooled, &weight, lo_rank);
        let hi = counts.value_at_rank(pooled, &weight, hi_rank);
        medians.push((lo + hi) / 2.0);
    }
    if medians.is_empty() {
        return None;
    }
    medians.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - CI_LEVEL) / 2.0;
    Some((
        percentile_sorted(&medians, tail),
        percentile_sorted(&medians, 1.0 - tail),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checkpointed search finds the value a scan of every pooled value
    /// finds, for every rank of random resamples.
    #[test]
    fn ranks_by_checkpoints_equal_a_full_scan() {
        let mut rng = SplitMix(9);
        for (n, episodes) in [
            (1usize, 1usize),
            (63, 2),
            (64, 3),
            (65, 5),
            (700, 40),
            (3000, 9),
        ] {
            let mut pooled: Vec<(f64, u32)> = (0..n)
                .map(|_| ((rng.below(500) as f64) / 7.0, rng.below(episodes) as u32))
                .collect();
            pooled.sort_unstable_by(|p, q| p.0.total_cmp(&q.0));
            let counts = Checkpoints::new(&pooled, episodes);
            for _ in 0..5 {
                let weight: Vec<u64> = (0..episodes).map(|_| rng.below(4) as u64).collect();
                let total: u64 = pooled.iter().map(|&(_, e)| weight[e as usize]).sum();
                for rank in 0..total {
                    let mut cum = 0;
                    let scanned = pooled
                        .iter()
                        .find(|&&(_, e)| {
                            cum += weight[e as usize];
                            cum > rank
                        })
                        .unwrap()
                        .0;
                    assert_eq!(counts.value_at_rank(&pooled, &weight, rank), scanned);
                }
            }
        }
    }
}
