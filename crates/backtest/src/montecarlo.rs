//! Monte Carlo of a finished run (issue 29): other orderings of the same
//! daily returns, by a seeded stationary block bootstrap (Politis and
//! Romano, 1994).
//!
//! Each simulated path has as many days as the run. It starts at a random
//! day of the run's returns and walks forward (wrapping from the last day
//! to the first); before each following day it jumps to a new random day
//! with probability `1 / block_days`, so blocks have a geometric length of
//! mean `block_days` and keep the short-range dependence (volatility
//! clusters) that drawing single days would break. The same returns,
//! parameters and seed give the same figures.

use forecast_engine::SplitMix;

/// Most paths a simulation may draw.
pub const MAX_RUNS: u32 = 5_000;
/// Longest mean block, in days.
pub const MAX_BLOCK_DAYS: u32 = 250;
/// Days of the fan chart at most: longer paths are reported every k-th day.
pub const MAX_FAN_POINTS: usize = 500;

/// 5th, 50th and 95th percentiles.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spread {
    /// 5th percentile.
    pub p5: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// One day of the fan chart: percentiles of the paths' equity.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FanPoint {
    /// Day of the path (1 = after the first return).
    pub day: usize,
    /// 5th, 25th, 50th, 75th and 95th percentiles of equity.
    pub equity: [f64; 5],
}

/// What the simulation found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MonteCarlo {
    /// Paths drawn.
    pub runs: u32,
    /// Days of each path.
    pub days: usize,
    /// Compound annual growth rate of the paths.
    pub cagr: Spread,
    /// Maximum drawdown of the paths (≤ 0).
    pub max_drawdown: Spread,
    /// Final equity of the paths.
    pub final_equity: Spread,
    /// Share of paths ending below the initial capital.
    pub probability_of_loss: f64,
    /// Share of paths whose drawdown went beyond −50 %.
    pub probability_of_drawdown_beyond_50: f64,
    /// Percentiles of equity along the paths, at most [`MAX_FAN_POINTS`]
    /// days (the last day always included).
    pub fan: Vec<FanPoint>,
}

/// The `q` quantile of ascending `sorted` (linear between order
/// statistics, as numpy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn spread(mut xs: Vec<f64>) -> Spread {
    xs.sort_by(f64::total_cmp);
    Spread {
        p5: quantile(&xs, 0.05),
        p50: quantile(&xs, 0.5),
        p95: quantile(&xs, 0.95),
    }
}

/// Simulates `runs` paths of `returns` (daily simple returns of the run)
/// from `initial` equity, blocks of mean `block_days` (1 draws single
/// days), seeded by `seed`; `periods` returns per year. `runs` and
/// `block_days` are clamped to [1, [`MAX_RUNS`]] and [1,
/// [`MAX_BLOCK_DAYS`]]; no returns give the default (empty) answer.
pub fn monte_carlo(
    returns: &[f64],
    initial: f64,
    periods: u32,
    runs: u32,
    block_days: u32,
    seed: u64,
) -> MonteCarlo {
    let n = returns.len();
    if n == 0 || initial.is_nan() || initial <= 0.0 {
        return MonteCarlo::default();
    }
    let runs = runs.clamp(1, MAX_RUNS);
    let block_days = block_days.clamp(1, MAX_BLOCK_DAYS);
    let jump = 1.0 / f64::from(block_days);
    let stride = n.div_ceil(MAX_FAN_POINTS).max(1);
    let fan_days: Vec<usize> = (1..=n).filter(|d| d % stride == 0 || *d == n).collect();
    // Equity of every path on each fan day, path-major.
    let mut at_days = vec![0.0; fan_days.len() * runs as usize];
    let mut finals = Vec::with_capacity(runs as usize);
    let mut drawdowns = Vec::with_capacity(runs as usize);
    let mut rng = SplitMix(seed ^ 0x6D6F_6E74_6563_6172);
    let years = n as f64 / f64::from(periods);
    for path in 0..runs as usize {
        let mut day = rng.below(n);
        let mut equity = initial;
        let mut peak = initial;
        let mut worst = 0.0f64;
        let mut next_fan = 0;
        for step in 1..=n {
            if step > 1 {
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                day = if u < jump {
                    rng.below(n)
                } else {
                    (day + 1) % n
                };
            }
            equity *= 1.0 + returns[day];
            peak = peak.max(equity);
            worst = worst.min(equity / peak - 1.0);
            if fan_days.get(next_fan) == Some(&step) {
                at_days[path * fan_days.len() + next_fan] = equity;
                next_fan += 1;
            }
        }
        finals.push(equity);
        drawdowns.push(worst);
    }
    let cagrs: Vec<f64> = finals
        .iter()
        .map(|e| (e / initial).max(0.0).powf(1.0 / years) - 1.0)
        .collect();
    let losses = finals.iter().filter(|&&e| e < initial).count();
    let deep = drawdowns.iter().filter(|&&d| d < -0.5).count();
    let fan = fan_days
        .iter()
        .enumerate()
        .map(|(k, &day)| {
            let mut column: Vec<f64> = (0..runs as usize)
                .map(|p| at_days[p * fan_days.len() + k])
                .collect();
            column.sort_by(f64::total_cmp);
            FanPoint {
                day,
                equity: [0.05, 0.25, 0.5, 0.75, 0.95].map(|q| quantile(&column, q)),
            }
        })
        .collect();
    MonteCarlo {
        runs,
        days: n,
        cagr: spread(cagrs),
        max_drawdown: spread(drawdowns),
        final_equity: spread(finals),
        probability_of_loss: losses as f64 / f64::from(runs),
        probability_of_drawdown_beyond_50: deep as f64 / f64::from(runs),
        fan,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn returns() -> Vec<f64> {
        // A year of alternating small gains and losses with a crash.
        (0..252)
            .map(|i| match i {
                100 => -0.3,
                _ if i % 2 == 0 => 0.012,
                _ => -0.008,
            })
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_figures_and_another_seed_others() {
        let r = returns();
        let a = monte_carlo(&r, 100.0, 252, 500, 20, 7);
        let b = monte_carlo(&r, 100.0, 252, 500, 20, 7);
        let c = monte_carlo(&r, 100.0, 252, 500, 20, 8);
        assert_eq!(a, b);
        assert_ne!(a.final_equity, c.final_equity);
        assert_eq!(a.runs, 500);
        assert_eq!(a.days, 252);
    }

    #[test]
    fn every_path_reorders_the_same_returns_so_single_days_keep_the_product() {
        // With blocks of one day and every return equal, every path ends at
        // the same equity; with a crash among them, the crash is drawn a
        // random number of times.
        let flat = vec![0.001; 100];
        let m = monte_carlo(&flat, 100.0, 252, 200, 1, 3);
        let end = 100.0 * 1.001f64.powi(100);
        assert!((m.final_equity.p5 - end).abs() < 1e-9 && (m.final_equity.p95 - end).abs() < 1e-9);
        assert_eq!(m.probability_of_loss, 0.0);
        assert_eq!(m.max_drawdown.p50, 0.0);
        // Percentiles are ordered; the fan ends at the final equity's.
        let m = monte_carlo(&returns(), 100.0, 252, 1000, 10, 11);
        for s in [m.cagr, m.max_drawdown, m.final_equity] {
            assert!(s.p5 <= s.p50 && s.p50 <= s.p95, "{s:?}");
        }
        let last = m.fan.last().unwrap();
        assert_eq!(last.day, 252);
        assert!((last.equity[2] - m.final_equity.p50).abs() < 1e-9);
        assert!(last.equity.windows(2).all(|w| w[0] <= w[1]));
        // The crash makes losses and deep drawdowns possible, not certain.
        assert!(m.probability_of_loss > 0.0 && m.probability_of_loss < 1.0);
        assert!(m.max_drawdown.p5 <= -0.3 + 1e-12);
    }

    #[test]
    fn bounds_are_clamped_and_empty_input_answers_nothing() {
        let m = monte_carlo(&returns(), 100.0, 252, 50_000, 10_000, 1);
        assert_eq!(m.runs, MAX_RUNS);
        assert_eq!(
            monte_carlo(&[], 100.0, 252, 10, 5, 1),
            MonteCarlo::default()
        );
        assert_eq!(
            monte_carlo(&[0.1], 0.0, 252, 10, 5, 1),
            MonteCarlo::default()
        );
        // A long run is reported at most MAX_FAN_POINTS days, its last included.
        let long = vec![0.0005; 3_001];
        let m = monte_carlo(&long, 100.0, 252, 10, 5, 1);
        assert!(m.fan.len() <= MAX_FAN_POINTS + 1);
        assert_eq!(m.fan.last().unwrap().day, 3_001);
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&xs, 0.5), 2.5);
        assert!((quantile(&xs, 0.05) - 1.15).abs() < 1e-12);
        assert!((quantile(&xs, 0.95) - 3.85).abs() < 1e-12);
    }
}
