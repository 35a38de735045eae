//! Proper evaluation of interval forecasts of a forward return against the
//! asset's own climatology. Pure statistics: no I/O, summation in row order.
//!
//! Each [`EvalRow`] is one (asset, month-end): the forecast (a central mean,
//! p10, p90), the climatology (the asset's past forward-return distribution:
//! mean, sd, p10, p90) and the realised return `y` once the horizon has
//! passed. [`evaluate`] computes:
//!
//! - **Gaussian CRPS.** The forecast is read as `N(central, σ)` and the
//!   climatology as `N(clim_mean, σ_c)`, both spreads by the same rule
//!   `σ = (p90 − p10) / (2·z₉₀)`, z₉₀ = Φ⁻¹(0.9) ([`sigma_from_quantiles`]);
//!   `clim_sd` is carried but not used, so the two are treated alike.
//!   CRPS(N(μ,s), y) = s·[z(2Φ(z) − 1) + 2φ(z) − 1/√π], z = (y − μ)/s.
//! - **Quantile (pinball) loss**: the mean over τ = 0.1 (p10) and τ = 0.9
//!   (p90) of ρ_τ(y − q) = (τ − 1[y < q])·(y − q).
//! - **Squared error** of the central estimate (climatology: its mean).
//!
//! Each of the three gives a [`SkillTest`]: the mean loss of either side over
//! the rows, the skill 1 − forecast/climatology, and a Diebold–Mariano test
//! on the per-month loss differential D_m = the sum over that month's rows
//! of (L_clim − L_forecast) divided by the mean rows per month, N/M
//! (positive: the forecast is better), so that the mean of D_m is the
//! row-weighted mean differential and the skill is exactly D̄ / L̄_clim.
//! Summing within a month first absorbs the cross-sectional correlation of
//! one month-end's rows; the Newey–West HAC variance of the mean of D_m with
//! Bartlett weights 1 − j/(lag+1), j = 1..lag, absorbs the overlap of
//! horizons across month-ends (the caller passes lag = ⌈h/30⌉). The variance
//! is exactly statsmodels'
//! `OLS(D, ones).fit(cov_type='HAC', cov_kwds={'maxlags': lag, 'use_correction': True})`:
//! with e_m = D_m − D̄ and M months,
//! `var = [Σe² + 2·Σ_j w_j·Σ_m e_m·e_{m−j}] / M² · M/(M − 1)`.
//! The months are taken in ascending order as consecutive periods (a month
//! without rows is skipped, not filled). `dm_stat = D̄/se`, `dm_p` its
//! two-sided normal p-value, and the 90 % interval D̄ ± 1.6448536269514722·se.
//! The skill's interval is (D̄ ± 1.6448536269514722·se) / L̄_clim, centred
//! on the skill, the denominator treated as fixed (its own sampling error
//! is ignored).
//!
//! **Calibration**: OLS of realised on central over all rows, intercept and
//! slope with Driscoll–Kraay standard errors: the scores x_i·u_i are summed
//! within each month, the monthly sums get the same Bartlett HAC as above,
//! and the sandwich (X'X)⁻¹ S (X'X)⁻¹ is scaled by G/(G − 1)·(n − 1)/(n − 2)
//! (G months, n rows) — exactly statsmodels'
//! `OLS(y, add_constant(x)).fit(cov_type='hac-groupsum', cov_kwds={'time': codes, 'maxlags': lag})`
//! on the rows sorted by month, with `codes` the months' ranks 0..G−1 (its
//! default `use_correction='cluster'`). As for D_m, a month without rows is
//! skipped, not filled (given raw month numbers, statsmodels' bincount would
//! insert zero-score months for such gaps). Intervals are
//! ±1.6448536269514722·se.
//!
//! Also: the coverage of [p10, p90] (both ends inclusive) for the forecast
//! and the climatology, the PIT histogram of y under `N(central, σ)` in ten
//! bins [k/10, (k+1)/10) (the last one closed), and a reliability table of
//! ten equal-count bins of the rows sorted by central.

use serde::{Deserialize, Serialize};

/// Φ⁻¹(0.9): the p10–p90 range of a normal is 2·Z90·σ.
pub const Z90: f64 = 1.2815515655446004;
/// Φ⁻¹(0.95): a two-sided 90 % interval is ±Z95·se.
pub const Z95: f64 = 1.6448536269514722;
/// Number of PIT and reliability bins.
pub const BINS: usize = 10;

/// One evaluated forecast: an (asset, month-end) with its realised return.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EvalRow {
    /// Month index (e.g. year·12 + month − 1); rows of one month-end share it.
    pub month: i32,
    /// The forecast's mean forward return.
    pub central: f64,
    /// The forecast's 10 % quantile.
    pub p10: f64,
    /// The forecast's 90 % quantile.
    pub p90: f64,
    /// The climatology's mean.
    pub clim_mean: f64,
    /// The climatology's standard deviation (carried, not used: both
    /// spreads come from the p10–p90 range).
    pub clim_sd: f64,
    /// The climatology's 10 % quantile.
    pub clim_p10: f64,
    /// The climatology's 90 % quantile.
    pub clim_p90: f64,
    /// The realised forward return.
    pub realised: f64,
}

/// One loss compared between the forecast and the climatology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillTest {
    /// The forecast's mean loss over the rows.
    pub forecast: f64,
    /// The climatology's mean loss over the rows.
    pub climatology: f64,
    /// 1 − forecast/climatology.
    pub skill: f64,
    /// Mean over months of D_m = month mean of (L_clim − L_forecast).
    pub differential: f64,
    /// Newey–West HAC standard error of `differential`.
    pub se: f64,
    /// Diebold–Mariano statistic `differential / se`.
    pub dm_stat: f64,
    /// Its two-sided p-value under N(0, 1).
    pub dm_p: f64,
    /// `differential − Z95·se`.
    pub differential_lo: f64,
    /// `differential + Z95·se`.
    pub differential_hi: f64,
    /// `differential_lo / climatology`: the skill's 90 % interval (the
    /// differential's mean is the row mean, so it is centred on the skill;
    /// the denominator is treated as fixed).
    pub skill_lo: f64,
    /// `differential_hi / climatology`.
    pub skill_hi: f64,
}

/// A regression coefficient with its Driscoll–Kraay 90 % interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coefficient {
    /// OLS estimate.
    pub estimate: f64,
    /// Driscoll–Kraay standard error.
    pub se: f64,
    /// `estimate − Z95·se`.
    pub lo: f64,
    /// `estimate + Z95·se`.
    pub hi: f64,
}

/// OLS of realised on central: a calibrated forecast has intercept 0, slope 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The intercept.
    pub intercept: Coefficient,
    /// The slope on central.
    pub slope: Coefficient,
}

/// One equal-count bin of the rows sorted by central.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityBin {
    /// Mean central of the bin (NaN when empty: fewer than 10 rows).
    pub mean_predicted: f64,
    /// Mean realised of the bin (NaN when empty).
    pub mean_realised: f64,
    /// Rows in the bin.
    pub count: usize,
}

/// Every figure of an evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Rows evaluated.
    pub rows: usize,
    /// Distinct months among them.
    pub months: usize,
    /// The HAC lag used (months).
    pub lag: usize,
    /// Gaussian CRPS.
    pub crps: SkillTest,
    /// Mean pinball loss at τ = 0.1 and 0.9.
    pub pinball: SkillTest,
    /// Squared error of central (climatology: its mean).
    pub mse: SkillTest,
    /// OLS of realised on central with Driscoll–Kraay intervals.
    pub calibration: Calibration,
    /// Share of rows with p10 ≤ y ≤ p90.
    pub coverage: f64,
    /// Share of rows with clim_p10 ≤ y ≤ clim_p90.
    pub climatology_coverage: f64,
    /// PIT counts in [k/10, (k+1)/10), k = 0..9 (the last bin closed).
    pub pit_histogram: [usize; BINS],
    /// Ten equal-count bins of the rows sorted by central (ties: row order).
    pub reliability: Vec<ReliabilityBin>,
}

/// Rows that cannot be evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// Nothing to evaluate.
    #[error("no rows to evaluate")]
    Empty,
    /// A field used by the evaluation is NaN or infinite.
    #[error("row {row}: {field} is not finite")]
    NotFinite {
        /// Index in the input.
        row: usize,
        /// The field's name.
        field: &'static str,
    },
    /// p90 ≤ p10: no normal spread.
    #[error("row {row}: {which} p90 is not above its p10")]
    NoSpread {
        /// Index in the input.
        row: usize,
        /// `forecast` or `climatology`.
        which: &'static str,
    },
    /// The HAC variances need at least two months.
    #[error("{0} distinct month(s): at least 2 are needed")]
    TooFewMonths(usize),
    /// The calibration regression needs at least three rows.
    #[error("{0} rows: the calibration regression needs at least 3")]
    TooFewRows(usize),
    /// Central does not vary: no slope.
    #[error("every central estimate is equal: the calibration slope is undefined")]
    ConstantCentral,
}

/// Standard normal CDF, Φ(x) = erfc(−x/√2)/2 (relative accuracy ~1e-15).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// Standard normal density φ(x).
pub fn normal_pdf(x: f64) -> f64 {
    // 1/√(2π)
    const NORM: f64 = 0.398_942_280_401_432_7;
    NORM * (-(x * x) / 2.0).exp()
}

/// The σ of a normal whose p10 and p90 are given: (p90 − p10)/(2·Z90).
pub fn sigma_from_quantiles(p10: f64, p90: f64) -> f64 {
    (p90 - p10) / (2.0 * Z90)
}

/// CRPS of `N(mu, sigma)` at the outcome `y` (closed form, `sigma > 0`).
pub fn crps_gaussian(mu: f64, sigma: f64, y: f64) -> f64 {
    // 1/√π
    const PI_INV_SQRT: f64 = 0.564_189_583_547_756_3;
    let z = (y - mu) / sigma;
    sigma * (z * (2.0 * normal_cdf(z) - 1.0) + 2.0 * normal_pdf(z) - PI_INV_SQRT)
}

/// Pinball loss ρ_τ(y − q) = (τ − 1[y < q])·(y − q).
pub fn pinball(tau: f64, y: f64, q: f64) -> f64 {
    let indicator = if y < q { 1.0 } else { 0.0 };
    (tau - indicator) * (y - q)
}

/// The mean of a series and its Newey–West HAC standard error with
/// Bartlett weights, lags 1..=`lag`, and the n/(n − 1) correction: the
/// standard error of statsmodels' `OLS(d, ones)` with `cov_type='HAC'`,
/// `maxlags=lag`, `use_correction=True`. Needs `d.len() >= 2`.
pub fn newey_west_mean(d: &[f64], lag: usize) -> (f64, f64) {
    let n = d.len();
    let mean = d.iter().sum::<f64>() / n as f64;
    let e: Vec<f64> = d.iter().map(|x| x - mean).collect();
    let mut s: f64 = e.iter().map(|x| x * x).sum();
    for j in 1..=lag.min(n.saturating_sub(1)) {
        let w = 1.0 - j as f64 / (lag as f64 + 1.0);
        let cross: f64 = (j..n).map(|t| e[t] * e[t - j]).sum();
        s += w * 2.0 * cross;
    }
    let nf = n as f64;
    let var = s / (nf * nf) * (nf / (nf - 1.0));
    (mean, var.sqrt())
}

/// Two-sided normal p-value of a statistic.
fn two_sided_p(stat: f64) -> f64 {
    // 2·(1 − Φ(|t|)) = erfc(|t|/√2), without the cancellation.
    libm::erfc(stat.abs() * std::f64::consts::FRAC_1_SQRT_2)
}

/// Evaluates the rows (see the module documentation); `lag` is the HAC lag
/// in months (⌈h/30⌉ for a horizon of h calendar days).
pub fn evaluate(rows: &[EvalRow], lag: usize) -> Result<Evaluation, EvalError> {
    validate(rows)?;
    let groups = month_groups(rows);
    if groups.len() < 2 {
        return Err(EvalError::TooFewMonths(groups.len()));
    }
    if rows.len() < 3 {
        return Err(EvalError::TooFewRows(rows.len()));
    }
    let losses = Losses::of(rows);
    let n = rows.len() as f64;
    let covered = |lo: fn(&EvalRow) -> f64, hi: fn(&EvalRow) -> f64| {
        let inside = rows
            .iter()
            .filter(|r| lo(r) <= r.realised && r.realised <= hi(r))
            .count();
        inside as f64 / n
    };
    Ok(Evaluation {
        rows: rows.len(),
        months: groups.len(),
        lag,
        crps: skill_test(&losses.crps, &groups, lag),
        pinball: skill_test(&losses.pinball, &groups, lag),
        mse: skill_test(&losses.mse, &groups, lag),
        calibration: calibration(rows, &groups, lag)?,
        coverage: covered(|r| r.p10, |r| r.p90),
        climatology_coverage: covered(|r| r.clim_p10, |r| r.clim_p90),
        pit_histogram: pit_histogram(rows),
        reliability: reliability(rows),
    })
}

/// Rejects empty input, non-finite fields and intervals without spread.
fn validate(rows: &[EvalRow]) -> Result<(), EvalError> {
    if rows.is_empty() {
        return Err(EvalError::Empty);
    }
    for (i, r) in rows.iter().enumerate() {
        let fields = [
            ("central", r.central),
            ("p10", r.p10),
            ("p90", r.p90),
            ("clim_mean", r.clim_mean),
            ("clim_p10", r.clim_p10),
            ("clim_p90", r.clim_p90),
            ("realised", r.realised),
        ];
        if let Some((field, _)) = fields.iter().find(|(_, v)| !v.is_finite()) {
            return Err(EvalError::NotFinite { row: i, field });
        }
        if r.p90 <= r.p10 {
            return Err(EvalError::NoSpread {
                row: i,
                which: "forecast",
            });
        }
        if r.clim_p90 <= r.clim_p10 {
            return Err(EvalError::NoSpread {
                row: i,
                which: "climatology",
            });
        }
    }
    Ok(())
}

/// The row indices of each distinct month, months ascending, rows in input
/// order within a month.
fn month_groups(rows: &[EvalRow]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| rows[i].month); // stable: input order within a month
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match groups.last_mut() {
            Some(g) if rows[g[0]].month == rows[i].month => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    groups
}

/// Per-row losses, `(forecast, climatology)` for each loss.
struct Losses {
    crps: Vec<(f64, f64)>,
    pinball: Vec<(f64, f64)>,
    mse: Vec<(f64, f64)>,
}

impl Losses {
    fn of(rows: &[EvalRow]) -> Losses {
        let quantile_loss = |y, p10, p90| 0.5 * (pinball(0.1, y, p10) + pinball(0.9, y, p90));
        let mut l = Losses {
            crps: Vec::with_capacity(rows.len()),
            pinball: Vec::with_capacity(rows.len()),
            mse: Vec::with_capacity(rows.len()),
        };
        for r in rows {
            let y = r.realised;
            let sigma = sigma_from_quantiles(r.p10, r.p90);
            let sigma_c = sigma_from_quantiles(r.clim_p10, r.clim_p90);
            l.crps.push((
                crps_gaussian(r.central, sigma, y),
                crps_gaussian(r.clim_mean, sigma_c, y),
            ));
            l.pinball.push((
                quantile_loss(y, r.p10, r.p90),
                quantile_loss(y, r.clim_p10, r.clim_p90),
            ));
            l.mse
                .push(((y - r.central).powi(2), (y - r.clim_mean).powi(2)));
        }
        l
    }
}

/// Mean losses, skill and the Diebold–Mariano test on monthly differentials.
fn skill_test(loss: &[(f64, f64)], groups: &[Vec<usize>], lag: usize) -> SkillTest {
    let n = loss.len() as f64;
    let forecast = loss.iter().map(|l| l.0).sum::<f64>() / n;
    let climatology = loss.iter().map(|l| l.1).sum::<f64>() / n;
    let per_month = n / groups.len() as f64;
    let monthly: Vec<f64> = groups
        .iter()
        .map(|g| g.iter().map(|&i| loss[i].1 - loss[i].0).sum::<f64>() / per_month)
        .collect();
    let (differential, se) = newey_west_mean(&monthly, lag);
    let dm_stat = differential / se;
    let differential_lo = differential - Z95 * se;
    let differential_hi = differential + Z95 * se;
    let skill = 1.0 - forecast / climatology;
    SkillTest {
        forecast,
        climatology,
        skill,
        differential,
        se,
        dm_stat,
        dm_p: two_sided_p(dm_stat),
        differential_lo,
        differential_hi,
        skill_lo: differential_lo / climatology,
        skill_hi: differential_hi / climatology,
    }
}

/// OLS of realised on central with the Driscoll–Kraay covariance.
fn calibration(
    rows: &[EvalRow],
    groups: &[Vec<usize>],
    lag: usize,
) -> Result<Calibration, EvalError> {
    let order: Vec<usize> = groups.iter().flatten().copied().collect();
    let n = order.len() as f64;
    let x_bar = order.iter().map(|&i| rows[i].central).sum::<f64>() / n;
    let y_bar = order.iter().map(|&i| rows[i].realised).sum::<f64>() / n;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &i in &order {
        let dx = rows[i].central - x_bar;
        sxx += dx * dx;
        sxy += dx * (rows[i].realised - y_bar);
    }
    if sxx <= 0.0 || sxx <= f64::EPSILON * x_bar * x_bar * n {
        return Err(EvalError::ConstantCentral);
    }
    let slope = sxy / sxx;
    let intercept = y_bar - slope * x_bar;
    // Scores x_i·u_i summed within each month, as (Σu, Σx·u).
    let sums: Vec<[f64; 2]> = groups
        .iter()
        .map(|g| {
            g.iter().fold([0.0, 0.0], |acc, &i| {
                let r = &rows[i];
                let u = r.realised - intercept - slope * r.central;
                [acc[0] + u, acc[1] + r.central * u]
            })
        })
        .collect();
    let s = hac_outer(&sums, lag);
    // (X'X)⁻¹ of [1, x], written with the centred sum of squares.
    let h = [
        [1.0 / n + x_bar * x_bar / sxx, -x_bar / sxx],
        [-x_bar / sxx, 1.0 / sxx],
    ];
    let cov = sandwich(&h, &s);
    let g = groups.len() as f64;
    let correction = g / (g - 1.0) * ((n - 1.0) / (n - 2.0));
    let coefficient = |estimate: f64, var: f64| {
        let se = (var * correction).sqrt();
        Coefficient {
            estimate,
            se,
            lo: estimate - Z95 * se,
            hi: estimate + Z95 * se,
        }
    };
    Ok(Calibration {
        intercept: coefficient(intercept, cov[0][0]),
        slope: coefficient(slope, cov[1][1]),
    })
}

/// S = Σ_t g_t g_t' + Σ_j w_j Σ_t (g_t g_{t−j}' + g_{t−j} g_t'), Bartlett w_j.
fn hac_outer(g: &[[f64; 2]], lag: usize) -> [[f64; 2]; 2] {
    let mut s = [[0.0; 2]; 2];
    for t in g {
        for a in 0..2 {
            for b in 0..2 {
                s[a][b] += t[a] * t[b];
            }
        }
    }
    for j in 1..=lag.min(g.len().saturating_sub(1)) {
        let w = 1.0 - j as f64 / (lag as f64 + 1.0);
        let mut c = [[0.0; 2]; 2];
        for t in j..g.len() {
            for a in 0..2 {
                for b in 0..2 {
                    c[a][b] += g[t][a] * g[t - j][b];
                }
            }
        }
        for a in 0..2 {
            for b in 0..2 {
                s[a][b] += w * (c[a][b] + c[b][a]);
            }
        }
    }
    s
}

/// H·S·H for symmetric 2×2 H.
fn sandwich(h: &[[f64; 2]; 2], s: &[[f64; 2]; 2]) -> [[f64; 2]; 2] {
    let mul = |a: &[[f64; 2]; 2], b: &[[f64; 2]; 2]| {
        let mut m = [[0.0; 2]; 2];
        for (i, row) in m.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                *cell = a[i][0] * b[0][j] + a[i][1] * b[1][j];
            }
        }
        m
    };
    mul(&mul(h, s), h)
}

/// PIT of each realised under N(central, σ), counted in ten bins.
fn pit_histogram(rows: &[EvalRow]) -> [usize; BINS] {
    let mut counts = [0; BINS];
    for r in rows {
        let pit = normal_cdf((r.realised - r.central) / sigma_from_quantiles(r.p10, r.p90));
        // The number of inner edges k/10 (k = 1..9) at or below the PIT.
        let bin = (1..BINS).filter(|&k| pit >= k as f64 / BINS as f64).count();
        counts[bin] += 1;
    }
    counts
}

/// Ten equal-count bins of the rows sorted by central (stable).
fn reliability(rows: &[EvalRow]) -> Vec<ReliabilityBin> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        rows[a]
            .central
            .partial_cmp(&rows[b].central)
            .expect("validated finite")
    });
    let n = rows.len();
    (0..BINS)
        .map(|b| {
            let bin = &order[b * n / BINS..(b + 1) * n / BINS];
            let count = bin.len();
            let mean = |f: fn(&EvalRow) -> f64| {
                bin.iter().map(|&i| f(&rows[i])).sum::<f64>() / count as f64
            };
            ReliabilityBin {
                mean_predicted: mean(|r| r.central),
                mean_realised: mean(|r| r.realised),
                count,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    fn row(month: i32, central: f64, clim_mean: f64, realised: f64) -> EvalRow {
        EvalRow {
            month,
            central,
            p10: central - Z90,
            p90: central + Z90,
            clim_mean,
            clim_sd: 1.0,
            clim_p10: clim_mean - Z90,
            clim_p90: clim_mean + Z90,
            realised,
        }
    }

    #[test]
    fn normal_cdf_matches_tabulated_values() {
        assert_eq!(normal_cdf(0.0), 0.5);
        assert!(close(normal_cdf(Z90), 0.9, 1e-15));
        assert!(close(normal_cdf(-Z95), 0.05, 1e-15));
        // Φ(−1.96) and Φ(−10), relative.
        let p = normal_cdf(-1.96);
        assert!((p - 0.024_997_895_148_220_435).abs() <= 1e-15 * p);
        let p = normal_cdf(-10.0);
        assert!((p - 7.619_853_024_160_527e-24).abs() <= 1e-14 * p);
        assert!(close(normal_cdf(1.0) + normal_cdf(-1.0), 1.0, 1e-16));
        assert!(close(
            normal_pdf(0.0),
            1.0 / (2.0 * std::f64::consts::PI).sqrt(),
            1e-16
        ));
    }

    #[test]
    fn crps_closed_form_by_hand() {
        // z = 0: s·(2φ(0) − 1/√π) = s·(√2 − 1)/√π.
        let at_zero = (2f64.sqrt() - 1.0) / std::f64::consts::PI.sqrt();
        assert!(close(crps_gaussian(0.0, 1.0, 0.0), at_zero, 1e-15));
        assert!(close(crps_gaussian(3.0, 2.0, 3.0), 2.0 * at_zero, 1e-15));
        // Symmetric in y − μ; far out it is |y − μ| − s/√π (φ, 1 − Φ negligible).
        assert!(close(
            crps_gaussian(0.0, 1.0, 1.3),
            crps_gaussian(0.0, 1.0, -1.3),
            1e-15
        ));
        let far = 40.0 - 1.0 / std::f64::consts::PI.sqrt();
        assert!(close(crps_gaussian(0.0, 1.0, 40.0), far, 1e-15));
    }

    #[test]
    fn pinball_by_hand() {
        // y = 0, p10 = −1, p90 = 1: 0.1·1 and (0.9 − 1)·(−1): both 0.1.
        assert!(close(pinball(0.1, 0.0, -1.0), 0.1, 1e-16));
        assert!(close(pinball(0.9, 0.0, 1.0), 0.1, 1e-16));
        // y = 2: 0.1·3 = 0.3 and 0.9·1 = 0.9.
        assert!(close(pinball(0.1, 2.0, -1.0), 0.3, 1e-16));
        assert!(close(pinball(0.9, 2.0, 1.0), 0.9, 1e-16));
        assert_eq!(pinball(0.1, 1.0, 1.0), 0.0);
    }

    #[test]
    fn newey_west_by_hand() {
        // e = (−1.5, −0.5, 0.5, 1.5): Σe² = 5, Σ e_t e_{t−1} = 1.25,
        // Σ e_t e_{t−2} = −1.5; var = S/(n(n−1)).
        let d = [1.0, 2.0, 3.0, 4.0];
        let (mean, se) = newey_west_mean(&d, 0);
        assert_eq!(mean, 2.5);
        assert!(close(se * se, 5.0 / 12.0, 1e-15));
        let (_, se) = newey_west_mean(&d, 1);
        assert!(close(se * se, (5.0 + 2.0 * 0.5 * 1.25) / 12.0, 1e-15));
        let (_, se) = newey_west_mean(&d, 2);
        let s = 5.0 + 2.0 * (2.0 / 3.0) * 1.25 + 2.0 * (1.0 / 3.0) * -1.5;
        assert!(close(se * se, s / 12.0, 1e-15));
        // Lags beyond the series contribute nothing but still set the weights.
        let (_, se) = newey_west_mean(&d, 10);
        let s = 5.0
            + 2.0 * (10.0 / 11.0) * 1.25
            + 2.0 * (9.0 / 11.0) * -1.5
            + 2.0 * (8.0 / 11.0) * (1.5 * -1.5);
        assert!(close(se * se, s / 12.0, 1e-15));
    }

    #[test]
    fn newey_west_lag_zero_is_the_sample_variance_over_n() {
        let d: Vec<f64> = (0..37)
            .map(|i| ((i * 7919) % 101) as f64 / 13.0 - 3.0)
            .collect();
        let n = d.len() as f64;
        let mean = d.iter().sum::<f64>() / n;
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let (_, se) = newey_west_mean(&d, 0);
        assert!(close(se * se, var / n, 1e-14));
    }

    /// Four rows in three months with unit spreads (σ = 1 on both sides).
    fn four_rows() -> Vec<EvalRow> {
        vec![
            row(0, 0.0, 1.0, 0.0),
            row(0, 1.0, 1.0, 0.0),
            row(1, 0.0, 2.0, 1.0),
            row(2, 2.0, 0.0, 2.0),
        ]
    }

    #[test]
    fn squared_error_skill_and_dm_by_hand() {
        let e = evaluate(&four_rows(), 0).unwrap();
        assert_eq!((e.rows, e.months, e.lag), (4, 3, 0));
        // Forecast errors² 0, 1, 1, 0; climatology's 1, 1, 1, 4.
        assert!(close(e.mse.forecast, 0.5, 1e-16));
        assert!(close(e.mse.climatology, 1.75, 1e-16));
        assert!(close(e.mse.skill, 5.0 / 7.0, 1e-15));
        // Row differentials 1, 0, 0, 4; month sums (1, 0, 4) over 4/3 rows
        // per month: D_m = (0.75, 0, 3), mean 1.25 (the row mean),
        // e = (−0.5, −1.25, 1.75), Σe² = 4.875.
        assert!(close(e.mse.differential, 1.25, 1e-15));
        let se = (4.875f64 / 6.0).sqrt();
        assert!(close(e.mse.se, se, 1e-15));
        assert!(close(e.mse.dm_stat, 1.25 / se, 1e-15));
        assert!(close(
            e.mse.dm_p,
            2.0 * (1.0 - normal_cdf(1.25 / se)),
            1e-14
        ));
        assert!(close(e.mse.differential_lo, 1.25 - Z95 * se, 1e-15));
        // The skill is the differential over climatology's mean loss.
        assert!(close(e.mse.skill, e.mse.differential / 1.75, 1e-15));
        assert!(close(e.mse.skill_hi, (1.25 + Z95 * se) / 1.75, 1e-15));
    }

    #[test]
    fn pinball_and_crps_means_by_hand() {
        let e = evaluate(&four_rows(), 1).unwrap();
        // Both spreads are ±Z90 around the mean: the loss of a row is a
        // function of |y − mean| only.
        let q = |d: f64| 0.5 * (pinball(0.1, d, -Z90) + pinball(0.9, d, Z90));
        let f = (q(0.0) + q(-1.0) + q(1.0) + q(0.0)) / 4.0;
        let c = (q(-1.0) + q(-1.0) + q(-1.0) + q(2.0)) / 4.0;
        assert!(close(e.pinball.forecast, f, 1e-15));
        assert!(close(e.pinball.climatology, c, 1e-15));
        // |d| ≤ Z90: 0.5·(0.1·(d + Z90) + 0.1·(Z90 − d)) = 0.1·Z90.
        assert!(close(q(0.3), 0.1 * Z90, 1e-15));
        let g = |d: f64| crps_gaussian(0.0, 1.0, d);
        let f = (g(0.0) + g(1.0) + g(1.0) + g(0.0)) / 4.0;
        assert!(close(e.crps.forecast, f, 1e-15));
        assert!(close(e.crps.skill, 1.0 - f / e.crps.climatology, 1e-15));
    }

    /// An independent Driscoll–Kraay: raw X'X inverted by its determinant,
    /// months summed through a map, no small-sample shortcuts.
    fn naive_dk(rows: &[EvalRow], lag: usize) -> (f64, f64, f64, f64) {
        let n = rows.len() as f64;
        let (sx, sy) = rows
            .iter()
            .fold((0.0, 0.0), |a, r| (a.0 + r.central, a.1 + r.realised));
        let sxx: f64 = rows.iter().map(|r| r.central * r.central).sum();
        let sxy: f64 = rows.iter().map(|r| r.central * r.realised).sum();
        let det = n * sxx - sx * sx;
        let inv = [[sxx / det, -sx / det], [-sx / det, n / det]];
        let a = inv[0][0] * sy + inv[0][1] * sxy;
        let b = inv[1][0] * sy + inv[1][1] * sxy;
        let mut by_month = std::collections::BTreeMap::new();
        for r in rows {
            let u = r.realised - a - b * r.central;
            let e = by_month.entry(r.month).or_insert([0.0, 0.0]);
            e[0] += u;
            e[1] += r.central * u;
        }
        let g: Vec<[f64; 2]> = by_month.into_values().collect();
        let mut s = [[0.0; 2]; 2];
        for j in 0..=lag.min(g.len() - 1) {
            let w = 1.0 - j as f64 / (lag as f64 + 1.0);
            for t in j..g.len() {
                for p in 0..2 {
                    for q in 0..2 {
                        let c = g[t][p] * g[t - j][q];
                        s[p][q] += if j == 0 {
                            c
                        } else {
                            w * (c + g[t - j][p] * g[t][q])
                        };
                    }
                }
            }
        }
        let m = g.len() as f64;
        let k = m / (m - 1.0) * (n - 1.0) / (n - 2.0);
        let mut cov = [[0.0; 2]; 2];
        for p in 0..2 {
            for q in 0..2 {
                for r in 0..2 {
                    for t in 0..2 {
                        cov[p][q] += inv[p][r] * s[r][t] * inv[t][q];
                    }
                }
            }
        }
        (a, b, (cov[0][0] * k).sqrt(), (cov[1][1] * k).sqrt())
    }

    fn panel() -> Vec<EvalRow> {
        (0..60i32)
            .map(|i| {
                let x = ((i * 37) % 17) as f64 / 40.0 - 0.1;
                let noise = ((i * 53) % 23) as f64 / 50.0 - 0.2;
                row(200 + i % 9, x, 0.01, 0.02 + 0.8 * x + noise)
            })
            .collect()
    }

    #[test]
    fn calibration_by_hand_and_against_a_naive_driscoll_kraay() {
        let e = evaluate(&four_rows(), 0).unwrap();
        // x = (0, 1, 0, 2), y = (0, 0, 1, 2): Sxx = 2.75, Sxy = 1.75.
        assert!(close(e.calibration.slope.estimate, 7.0 / 11.0, 1e-15));
        assert!(close(e.calibration.intercept.estimate, 3.0 / 11.0, 1e-15));
        for lag in [0, 1, 3, 12] {
            let rows = panel();
            let e = evaluate(&rows, lag).unwrap();
            let (a, b, se_a, se_b) = naive_dk(&rows, lag);
            let c = &e.calibration;
            assert!(close(c.intercept.estimate, a, 1e-12), "lag {lag}");
            assert!(close(c.slope.estimate, b, 1e-12), "lag {lag}");
            assert!(close(c.intercept.se, se_a, 1e-12), "lag {lag}");
            assert!(close(c.slope.se, se_b, 1e-12), "lag {lag}");
            assert!(close(c.slope.hi - c.slope.lo, 2.0 * Z95 * se_b, 1e-12));
        }
    }

    #[test]
    fn driscoll_kraay_sums_within_a_month() {
        // Every row twice in its month: the sandwich is unchanged (the group
        // sums double, (X'X)⁻¹ halves); only (n − 1)/(n − 2) moves.
        let rows = panel();
        let doubled: Vec<EvalRow> = rows.iter().flat_map(|r| [*r, *r]).collect();
        let one = evaluate(&rows, 2).unwrap().calibration;
        let two = evaluate(&doubled, 2).unwrap().calibration;
        let n = rows.len() as f64;
        let ratio = ((2.0 * n - 1.0) / (2.0 * n - 2.0)) / ((n - 1.0) / (n - 2.0));
        assert!(close(two.slope.se, one.slope.se * ratio.sqrt(), 1e-12));
        assert!(close(
            two.intercept.se,
            one.intercept.se * ratio.sqrt(),
            1e-12
        ));
    }

    #[test]
    fn monthly_differentials_keep_the_row_weights() {
        // Month 0 has two rows (D = 1 and 0), month 1 one (D = 0), month 2
        // one (D = 4): the row-weighted c − f is 1.25, and so is the mean of
        // the monthly differentials (sums over 4/3 rows per month), where a
        // mean of monthly means would give 1.5.
        let e = evaluate(&four_rows(), 0).unwrap();
        assert!(close(e.mse.climatology - e.mse.forecast, 1.25, 1e-16));
        assert!(close(e.mse.differential, 1.25, 1e-15));
        // Input order does not matter.
        let mut shuffled = four_rows();
        shuffled.reverse();
        let r = evaluate(&shuffled, 0).unwrap();
        assert!(close(r.mse.se, e.mse.se, 1e-15));
        assert!(close(r.calibration.slope.se, e.calibration.slope.se, 1e-14));
    }

    #[test]
    fn coverage_pit_and_reliability() {
        let mut rows = four_rows();
        rows[0].realised = rows[0].p10; // on the edge: covered
        rows[1].realised = 5.0; // far above: PIT bin 9, not covered
        let e = evaluate(&rows, 0).unwrap();
        assert!(close(e.coverage, 0.75, 1e-16));
        // Climatology (mean ± Z90): only row 2 (y = 1, mean 2) is inside.
        assert!(close(e.climatology_coverage, 0.25, 1e-16));
        // PITs: Φ(−Z90) ≈ 0.1 (bin 0 or 1), Φ(4) → 9, Φ(1) ≈ 0.84 → 8, Φ(0) → 5.
        assert_eq!(e.pit_histogram.iter().sum::<usize>(), 4);
        assert_eq!(
            (e.pit_histogram[5], e.pit_histogram[8], e.pit_histogram[9]),
            (1, 1, 1)
        );
        // Four rows: bins 2, 4, 7 and 9 of ten hold one row each.
        let counts: Vec<usize> = e.reliability.iter().map(|b| b.count).collect();
        assert_eq!(counts, [0, 0, 1, 0, 1, 0, 0, 1, 0, 1]);
        assert!(e.reliability[0].mean_predicted.is_nan());
        // Sorted by central, ties in row order: (0, y=−Z90), (0, 1), (1, 5), (2, 2).
        assert_eq!(e.reliability[2].mean_realised, -Z90);
        assert_eq!(e.reliability[4].mean_realised, 1.0);
        assert_eq!(e.reliability[7].mean_realised, 5.0);
        let rows: Vec<EvalRow> = (0..25)
            .map(|i| row(i % 3, (i / 2) as f64, 0.0, i as f64))
            .collect();
        let e = evaluate(&rows, 0).unwrap();
        let counts: Vec<usize> = e.reliability.iter().map(|b| b.count).collect();
        assert_eq!(counts, [2, 3, 2, 3, 2, 3, 2, 3, 2, 3]);
        assert_eq!(e.reliability[0].mean_predicted, 0.0);
        assert_eq!(e.reliability[1].mean_realised, 3.0);
    }

    #[test]
    fn rejects_what_it_cannot_evaluate() {
        assert_eq!(evaluate(&[], 1), Err(EvalError::Empty));
        let one_month: Vec<EvalRow> = (0..5).map(|i| row(7, i as f64, 0.0, 0.0)).collect();
        assert_eq!(evaluate(&one_month, 1), Err(EvalError::TooFewMonths(1)));
        let two = [row(1, 0.0, 0.0, 0.0), row(2, 1.0, 0.0, 0.0)];
        assert_eq!(evaluate(&two, 1), Err(EvalError::TooFewRows(2)));
        let flat: Vec<EvalRow> = (0..5).map(|i| row(i, 0.02, 0.0, i as f64)).collect();
        assert_eq!(evaluate(&flat, 1), Err(EvalError::ConstantCentral));
        let mut bad = four_rows();
        bad[2].realised = f64::NAN;
        assert_eq!(
            evaluate(&bad, 1),
            Err(EvalError::NotFinite {
                row: 2,
                field: "realised"
            })
        );
        let mut bad = four_rows();
        bad[1].clim_p90 = bad[1].clim_p10;
        assert_eq!(
            evaluate(&bad, 1),
            Err(EvalError::NoSpread {
                row: 1,
                which: "climatology"
            })
        );
    }
}
