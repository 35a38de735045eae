//! Risk and benchmark-relative metrics of a run (issue 29), beside the
//! headline [`crate::Metrics`].
//!
//! Every figure is computed from the daily simple returns
//! `r_i = E_i / E_(i-1) - 1` of the equity curve `E_0..E_N` (E_0 the
//! initial capital) and, where relative, of a benchmark's curve on the same
//! dates. Conventions follow quantstats where it has the figure, so the
//! two can be compared (docs/METHODOLOGY.md lists each formula and where
//! quantstats differs):
//!
//! | figure | formula |
//! |---|---|
//! | Calmar | `CAGR / abs(max drawdown)` |
//! | Ulcer index | `sqrt(sum(dd_i^2) / (N - 1))`, `dd_i = E_i / max(E_0..E_i) - 1` |
//! | longest drawdown | calendar days from the first day under a peak to the last, inclusive |
//! | its recovery | calendar days from its lowest close to the close back at the peak (none if never) |
//! | 95 % VaR | `mean(r) + sd(r) * z_0.05` (normal, `sd` with N - 1) |
//! | 95 % CVaR | `mean(r) - sd(r) * φ(z_0.05) / 0.05` (normal expected shortfall) |
//! | exposure | share of days that began with money invested |
//! | turnover | `sum(traded value) / 2 / mean(E) / years` (a whole portfolio replaced once a year is 1) |
//! | best / worst month | calendar months' compounded returns (partial first and last months included) |
//! | winning months | months with a positive return / months with a non-zero return |
//! | beta | `cov(r, b) / var(b)` |
//! | alpha | `(mean(r) - beta * mean(b)) * P` |
//! | tracking error | `sd(r - b) * sqrt(P)` |
//! | information ratio | `mean(r - b) / sd(r - b) * sqrt(P)` |

use forecast_engine::civil_from_days;

/// The 5 % quantile of the standard normal distribution, `Φ⁻¹(0.05)`.
pub const Z_05: f64 = -1.644_853_626_951_472_2;

/// Risk figures of one curve (see the module table).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Risk {
    /// `CAGR / abs(max drawdown)`; none without a drawdown.
    pub calmar_ratio: Option<f64>,
    /// Root mean square of the drawdowns.
    pub ulcer_index: Option<f64>,
    /// Calendar days of the longest drawdown (0 when the curve never fell
    /// under a peak).
    pub longest_drawdown_days: i64,
    /// Calendar days from that drawdown's lowest close to the close that
    /// regained the peak; none while it has not.
    pub longest_drawdown_recovery_days: Option<i64>,
    /// 95 % value at risk of a daily return (normal; a negative number).
    pub var_95: Option<f64>,
    /// 95 % expected shortfall of a daily return (normal): the mean of
    /// the returns worse than the VaR, for normal returns.
    pub cvar_95: Option<f64>,
    /// Share of days that began with money invested, in [0, 1].
    pub exposure: Option<f64>,
    /// Share of the portfolio traded per year (one-sided).
    pub turnover: Option<f64>,
    /// Best calendar month's return.
    pub best_month: Option<f64>,
    /// Worst calendar month's return.
    pub worst_month: Option<f64>,
    /// Share of months with a positive return among those with any.
    pub winning_months: Option<f64>,
}

/// Figures of a curve against one benchmark (see the module table).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Relative {
    /// Sensitivity to the benchmark's daily returns.
    pub beta: Option<f64>,
    /// Annualised return not explained by beta.
    pub alpha: Option<f64>,
    /// Annualised deviation of the active returns.
    pub tracking_error: Option<f64>,
    /// Annualised mean active return per unit of tracking error.
    pub information_ratio: Option<f64>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The standard normal density.
fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Daily simple returns of a curve.
pub fn returns(curve: &[f64]) -> Vec<f64> {
    curve.windows(2).map(|w| w[1] / w[0] - 1.0).collect()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample standard deviation (N - 1).
fn sd(x: &[f64]) -> f64 {
    let m = mean(x);
    (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

/// The risk figures of `equity` (`E_0..E_N` at `dates`) with `cash` beside
/// it, `traded` the value of every fill, `periods` returns per year, and
/// the run's CAGR and maximum drawdown.
pub fn risk(
    dates: &[i32],
    equity: &[f64],
    cash: &[f64],
    traded: f64,
    periods: u32,
    cagr: Option<f64>,
    max_drawdown: Option<f64>,
) -> Risk {
    let r = returns(equity);
    let n = r.len();
    let mut out = Risk {
        calmar_ratio: match (cagr, max_drawdown) {
            (Some(c), Some(d)) if d < 0.0 => finite(c / d.abs()),
            _ => None,
        },
        ..Risk::default()
    };
    if n == 0 || dates.len() != equity.len() {
        return out;
    }

    // Drawdowns against the running peak, E_0 included.
    let mut peak = equity[0];
    let mut squares = 0.0;
    // The current drawdown: its first day under the peak and its lowest.
    let mut open: Option<(usize, usize)> = None;
    let mut longest: Option<(i64, Option<i64>)> = None;
    let mut close = |start: usize, last: usize, valley: usize, back: Option<usize>| {
        let days = i64::from(dates[last] - dates[start]) + 1;
        let recovery = back.map(|b| i64::from(dates[b] - dates[valley]));
        if longest.is_none_or(|(d, _)| days > d) {
            longest = Some((days, recovery));
        }
    };
    for i in 1..equity.len() {
        let e = equity[i];
        if e >= peak {
            if let Some((start, valley)) = open.take() {
                close(start, i - 1, valley, Some(i));
            }
            peak = e;
        } else {
            let dd = e / peak - 1.0;
            squares += dd * dd;
            match &mut open {
                Some((_, valley)) => {
                    if e < equity[*valley] {
                        *valley = i;
                    }
                }
                None => open = Some((i, i)),
            }
        }
    }
    if let Some((start, valley)) = open {
        close(start, equity.len() - 1, valley, None);
    }
    if let Some((days, recovery)) = longest {
        out.longest_drawdown_days = days;
        out.longest_drawdown_recovery_days = recovery;
    }
    if n >= 2 {
        out.ulcer_index = finite((squares / (n - 1) as f64).sqrt());
        let (m, s) = (mean(&r), sd(&r));
        out.var_95 = finite(m + s * Z_05);
        // The same normal distribution's mean below its 5 % quantile, so
        // the two figures come from one estimator.
        out.cvar_95 = finite(m - s * normal_pdf(Z_05) / 0.05);
    }

    // Exposure: the day's return came from money invested at its start.
    if cash.len() == equity.len() {
        let invested = (0..n)
            .filter(|&i| equity[i] - cash[i] > 1e-9 * equity[i].abs().max(1.0))
            .count();
        out.exposure = Some(invested as f64 / n as f64);
    }
    let years = n as f64 / f64::from(periods);
    let mean_equity = mean(equity);
    if years > 0.0 && mean_equity > 0.0 {
        out.turnover = finite(traded / 2.0 / mean_equity / years);
    }

    // Calendar months, compounded.
    let mut months: Vec<f64> = Vec::new();
    let mut current: Option<((i32, u32), f64)> = None;
    for (i, x) in r.iter().enumerate() {
        let (y, m, _) = civil_from_days(dates[i + 1]);
        match &mut current {
            Some((key, growth)) if *key == (y, m) => *growth *= 1.0 + x,
            _ => {
                if let Some((_, growth)) = current.take() {
                    months.push(growth - 1.0);
                }
                current = Some(((y, m), 1.0 + x));
            }
        }
    }
    if let Some((_, growth)) = current {
        months.push(growth - 1.0);
    }
    out.best_month = months.iter().copied().reduce(f64::max).and_then(finite);
    out.worst_month = months.iter().copied().reduce(f64::min).and_then(finite);
    let active = months.iter().filter(|&&m| m != 0.0).count();
    if active > 0 {
        out.winning_months =
            Some(months.iter().filter(|&&m| m > 0.0).count() as f64 / active as f64);
    }
    out
}

/// The figures of `equity` against `benchmark` (same dates), `periods`
/// returns per year.
pub fn relative(equity: &[f64], benchmark: &[f64], periods: u32) -> Relative {
    let r = returns(equity);
    let b = returns(benchmark);
    if r.len() != b.len() || r.len() < 2 {
        return Relative::default();
    }
    let p = f64::from(periods);
    let (mr, mb) = (mean(&r), mean(&b));
    let n1 = (r.len() - 1) as f64;
    let cov = r
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - mr) * (y - mb))
        .sum::<f64>()
        / n1;
    let var_b = b.iter().map(|y| (y - mb).powi(2)).sum::<f64>() / n1;
    let beta = (var_b > 0.0).then(|| cov / var_b).and_then(finite);
    let alpha = beta.and_then(|beta| finite((mr - beta * mb) * p));
    let active: Vec<f64> = r.iter().zip(&b).map(|(x, y)| x - y).collect();
    let te = sd(&active);
    Relative {
        beta,
        alpha,
        tracking_error: finite(te * p.sqrt()),
        information_ratio: (te > 0.0)
            .then(|| mean(&active) / te * p.sqrt())
            .and_then(finite),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2024-01-30 as days since 1970-01-01.
    const JAN_30: i32 = 19_752;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn drawdowns_months_and_tails_by_hand() {
        // Jan 30, Jan 31, Feb 1, Feb 2, Feb 3, Feb 4, Feb 5.
        let dates: Vec<i32> = (0..7).map(|k| JAN_30 + k).collect();
        let equity = [100.0, 110.0, 99.0, 104.5, 121.0, 110.0, 115.5];
        let cash = [100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 121.0];
        let r = risk(&dates, &equity, &cash, 300.0, 365, Some(0.5), Some(-0.1));
        assert_eq!(r.calmar_ratio, Some(5.0));
        // Under the 110 peak on Feb 1 and 2 (back above on Feb 3): 2 days,
        // valley Feb 1, recovered 2 days later. Under 121 from Feb 4 to
        // the end (Feb 5): also 2 days, not longer, so the first stays.
        assert_eq!(r.longest_drawdown_days, 2);
        assert_eq!(r.longest_drawdown_recovery_days, Some(2));
        // dd: 0, -0.1, -0.05, 0, -1/11, -0.045454…
        let dd = [0.0, -0.1, -0.05, 0.0, -1.0 / 11.0, 115.5 / 121.0 - 1.0];
        let want = (dd.iter().map(|d| d * d).sum::<f64>() / 5.0).sqrt();
        assert!(close(r.ulcer_index.unwrap(), want));
        // Months: January (one return, +10 %), February (the rest).
        assert!(close(r.best_month.unwrap(), 0.1));
        assert!(close(r.worst_month.unwrap(), 115.5 / 110.0 - 1.0));
        assert_eq!(r.winning_months, Some(1.0));
        // Invested at the start of the first five of six days.
        assert!(close(r.exposure.unwrap(), 5.0 / 6.0));
        // 300 traded: 150 one-sided over a mean of 760 / 7, in 6/365 years.
        assert!(close(
            r.turnover.unwrap(),
            150.0 / (760.0 / 7.0) / (6.0 / 365.0)
        ));
        let rets = returns(&equity);
        let (m, s) = (mean(&rets), sd(&rets));
        assert!(close(r.var_95.unwrap(), m + s * Z_05));
        // φ(1.6448536…) = 0.1031356403…: the normal tail's mean lies 2.0627
        // deviations below the mean.
        assert!(close(
            r.cvar_95.unwrap(),
            m - s * 0.103_135_640_375_371_28 / 0.05
        ));
        assert!(r.cvar_95.unwrap() < r.var_95.unwrap());
    }

    #[test]
    fn an_unrecovered_drawdown_has_no_recovery() {
        let dates: Vec<i32> = (0..5).map(|k| JAN_30 + 7 * k).collect();
        let equity = [100.0, 90.0, 80.0, 85.0, 95.0];
        let r = risk(&dates, &equity, &[0.0; 5], 0.0, 52, None, Some(-0.2));
        // Under the start from day 7 to day 28.
        assert_eq!(r.longest_drawdown_days, 22);
        assert_eq!(r.longest_drawdown_recovery_days, None);
        assert_eq!(r.calmar_ratio, None);
        assert_eq!(r.turnover, Some(0.0));
        assert_eq!(r.exposure, Some(1.0));
    }

    #[test]
    fn a_flat_curve_has_no_drawdown_and_no_winning_month() {
        let dates: Vec<i32> = (0..4).map(|k| JAN_30 + k).collect();
        let r = risk(
            &dates,
            &[100.0; 4],
            &[100.0; 4],
            0.0,
            252,
            Some(0.0),
            Some(0.0),
        );
        assert_eq!(r.longest_drawdown_days, 0);
        assert_eq!(r.ulcer_index, Some(0.0));
        assert_eq!(r.winning_months, None);
        assert_eq!(r.exposure, Some(0.0));
        assert_eq!(r.calmar_ratio, None);
        // One point: nothing but the defaults.
        assert_eq!(
            risk(&[JAN_30], &[100.0], &[100.0], 0.0, 252, None, None),
            Risk::default()
        );
    }

    #[test]
    fn beta_alpha_and_active_risk_by_hand() {
        let bench = [100.0, 101.0, 99.0, 102.0, 103.0];
        // Twice the benchmark's returns plus 0.1 % a day: beta 2.
        let b = returns(&bench);
        let mut equity = vec![100.0];
        for x in &b {
            let last = *equity.last().unwrap();
            equity.push(last * (1.0 + 2.0 * x + 0.001));
        }
        let rel = relative(&equity, &bench, 252);
        assert!(close(rel.beta.unwrap(), 2.0));
        assert!(close(rel.alpha.unwrap(), 0.001 * 252.0));
        let active: Vec<f64> = returns(&equity)
            .iter()
            .zip(&b)
            .map(|(x, y)| x - y)
            .collect();
        assert!(close(
            rel.tracking_error.unwrap(),
            sd(&active) * 252f64.sqrt()
        ));
        assert!(close(
            rel.information_ratio.unwrap(),
            mean(&active) / sd(&active) * 252f64.sqrt()
        ));
        // Against itself: beta 1, no alpha, no active risk.
        let own = relative(&bench, &bench, 252);
        assert!(close(own.beta.unwrap(), 1.0));
        assert!(own.alpha.unwrap().abs() < 1e-15);
        assert_eq!(own.tracking_error, Some(0.0));
        assert_eq!(own.information_ratio, None);
        // A flat benchmark explains nothing.
        assert_eq!(relative(&equity, &[100.0; 5], 252).beta, None);
        assert_eq!(relative(&[1.0], &[1.0], 252), Relative::default());
    }
}
