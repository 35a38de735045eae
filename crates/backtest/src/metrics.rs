//! Performance metrics of an equity curve (DESIGN.md §6). No rounding;
//! `None` where a formula is undefined.

/// The metrics of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// `E_N / E_0 - 1`.
    pub total_return: Option<f64>,
    /// `(E_N / E_0)^(1 / years) - 1`.
    pub cagr: Option<f64>,
    /// `mean(r) / sd(r, ddof 1) * sqrt(P)`.
    pub sharpe_ratio: Option<f64>,
    /// `mean(r) * P / (sqrt(sum(min(r, 0)^2) / N) * sqrt(P))`.
    pub sortino_ratio: Option<f64>,
    /// `min(E / cummax(E) - 1)`, at most 0.
    pub max_drawdown: Option<f64>,
    /// `E_N`.
    pub final_equity: f64,
    /// `N / P`.
    pub years: f64,
    /// Sum of the trades' costs.
    pub total_costs: f64,
    /// `total_costs / initial_capital * 100`.
    pub cost_drag_pct: f64,
    /// Number of trades.
    pub total_trades: u64,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Metrics of `equity` (E_0..E_N, E_0 the initial capital) with `periods`
/// returns per year.
pub fn metrics(equity: &[f64], periods: u32, total_costs: f64, total_trades: u64) -> Metrics {
    let p = f64::from(periods);
    let e0 = equity.first().copied().unwrap_or(f64::NAN);
    let en = equity.last().copied().unwrap_or(f64::NAN);
    let returns: Vec<f64> = equity.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
    let n = returns.len();
    let years = n as f64 / p;
    let total_return = finite(en / e0 - 1.0);
    let cagr = if n > 0 && e0 > 0.0 && en >= 0.0 {
        finite((en / e0).powf(1.0 / years) - 1.0)
    } else {
        None
    };
    let (sharpe_ratio, sortino_ratio) = if n >= 2 {
        let mean = returns.iter().sum::<f64>() / n as f64;
        let var = returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        let sharpe = (sd > 0.0).then(|| mean / sd * p.sqrt()).and_then(finite);
        let down = returns.iter().map(|r| r.min(0.0).powi(2)).sum::<f64>() / n as f64;
        let sortino = (down > 0.0)
            .then(|| mean * p / (down.sqrt() * p.sqrt()))
            .and_then(finite);
        (sharpe, sortino)
    } else {
        (None, None)
    };
    let mut peak = f64::NEG_INFINITY;
    let mut max_dd: Option<f64> = None;
    for &e in equity {
        peak = peak.max(e);
        let dd = e / peak - 1.0;
        if dd.is_finite() {
            max_dd = Some(max_dd.map_or(dd, |m: f64| m.min(dd)));
        }
    }
    Metrics {
        total_return,
        cagr,
        sharpe_ratio,
        sortino_ratio,
        max_drawdown: max_dd,
        final_equity: en,
        years,
        total_costs,
        cost_drag_pct: total_costs / e0 * 100.0,
        total_trades,
    }
}
