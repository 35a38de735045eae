//! The tear sheet of a backtest (issue 29): one self-contained HTML
//! document drawn from the body of `POST /api/backtest`, to save, print or
//! send. It opens offline: no script, no external font, image or style
//! sheet, no address at all; only an inline `<style>` and inline SVG. Every
//! string of the body is escaped, and the same body gives the same bytes.
//!
//! In order: the title and the run's facts; the equity curve against the
//! benchmarks on a log scale; the drawdown; the monthly returns; the rolling
//! volatility and betas over [`ROLLING_WINDOW`] rows; the metrics; how the
//! page was made.
//!
//! A chart draws at most [`MAX_LINE_POINTS`] points per line: a longer
//! series keeps its first and last points and the lowest and highest point
//! of each of `(MAX_LINE_POINTS - 2) / 2` equal stretches of rows between
//! them, so its peaks and troughs survive and a daily century stays a small
//! file. The tables use every row.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{Datelike, NaiveDate};
use forecast_api::backtest::{BacktestResponse, BenchmarkBody, EquityPoint, MetricsBody};

/// Rows of the rolling window: each rolling figure uses the 63 daily
/// returns ending at its date (about a quarter of trading days).
pub const ROLLING_WINDOW: usize = 63;

/// Most points a chart draws per line.
pub const MAX_LINE_POINTS: usize = 1_000;

const STRATEGY_COLOR: &str = "#1f4e79";
const BENCHMARK_COLORS: [&str; 6] = [
    "#d9822b", "#5b8c2a", "#8e44ad", "#7f7f7f", "#c0392b", "#16a085",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DASH: &str = "\u{2014}";

/// Writes to a `String`, which cannot fail.
macro_rules! w {
    ($dst:expr, $($arg:tt)*) => {{
        let _ = write!($dst, $($arg)*);
    }};
}

/// The tear sheet of `r`, one self-contained HTML document.
pub fn tear_sheet(r: &BacktestResponse) -> String {
    let m = &r.metadata;
    let title = format!("Backtest tear sheet: {} {}", m.strategy, m.strategy_version);
    let mut out = String::with_capacity(96 * 1024);
    w!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{}</style>\n</head>\n<body>\n",
        esc(&title),
        CSS
    );
    header(&mut out, r, &title);

    let dates: Vec<NaiveDate> = r.equity_curve.iter().map(|p| p.date).collect();
    let equity: Vec<f64> = r.equity_curve.iter().map(|p| p.equity).collect();
    let xs: Vec<f64> = dates.iter().map(|&d| day(d)).collect();
    let benches: Vec<Bench<'_>> = r
        .benchmarks
        .iter()
        .enumerate()
        .map(|(i, (name, b))| Bench {
            name,
            color: BENCHMARK_COLORS[i % BENCHMARK_COLORS.len()],
            body: b,
        })
        .collect();
    let domain = x_domain(&xs, &benches);

    equity_section(&mut out, r, &xs, &equity, &benches, domain);
    drawdown_section(&mut out, &xs, &equity, domain);
    monthly_section(&mut out, &r.equity_curve);
    rolling_section(&mut out, r, &dates, &xs, &equity, &benches, domain);
    metrics_section(&mut out, &r.metrics);
    footer(&mut out, r);
    out.push_str("</body>\n</html>\n");
    out
}

/// A benchmark of the body, with its colour.
struct Bench<'a> {
    name: &'a str,
    color: &'static str,
    body: &'a BenchmarkBody,
}

const CSS: &str = "
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0 auto;max-width:860px;padding:24px 18px;background:#fff;color:#1b1b1b;
font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;
-webkit-print-color-adjust:exact;print-color-adjust:exact}
h1{font-size:21px;margin:0 0 6px}
h2{font-size:16px;margin:26px 0 8px;padding-bottom:3px;border-bottom:1px solid #d8d8d8}
p{margin:4px 0}
.facts{color:#333}
.warn{color:#8a4b00}
.disclaimer{font-weight:600}
.note,.empty{color:#666;font-size:12px}
.legend{font-size:12px;color:#333}
.key{display:inline-block;margin-right:14px;white-space:nowrap}
.key i{display:inline-block;width:14px;height:3px;margin:0 5px 3px 0;vertical-align:middle}
svg{display:block;width:100%;height:auto}
svg text{font-size:11px;fill:#555}
.grid{stroke:#e6e6e6;stroke-width:1}
.frame{fill:none;stroke:#bbb;stroke-width:1}
.ref{stroke:#999;stroke-width:1;stroke-dasharray:4 3}
.line{fill:none;stroke-width:1.4;stroke-linejoin:round;stroke-linecap:round}
.area{stroke:none;fill-opacity:.25}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;text-align:right;white-space:nowrap}
th{font-weight:600}
.metrics td:first-child,.metrics th:first-child,.relative td:first-child,
.relative th:first-child{text-align:left}
.metrics td.what{text-align:left;color:#666;font-size:12px;white-space:normal}
.metrics tr,.relative tr{border-bottom:1px solid #eee}
.heat{width:100%;table-layout:fixed;font-size:11px}
.heat th,.heat td{padding:2px 3px;border:1px solid #fff}
.heat td.year{font-weight:600;background:#f3f3f3}
footer{margin-top:28px;padding-top:8px;border-top:1px solid #d8d8d8;color:#555;font-size:12px}
@page{size:A4;margin:14mm}
@media print{
body{max-width:none;padding:0;font-size:11px}
h2{break-after:avoid;margin-top:16px}
section{break-inside:avoid}
.heat{font-size:9px}
}
";

// ---------------------------------------------------------------------------
// Sections

fn header(out: &mut String, r: &BacktestResponse, title: &str) {
    let m = &r.metadata;
    w!(out, "<header>\n<h1>{}</h1>\n", esc(title));
    let costs = if m.include_costs {
        let per: Vec<String> = m
            .cost_bps
            .iter()
            .map(|(cat, bps)| format!("{} {} bps", esc(cat), trim(*bps, 2)))
            .collect();
        if per.is_empty() {
            "yes".to_string()
        } else {
            format!("yes ({})", per.join(", "))
        }
    } else {
        "no".to_string()
    };
    w!(
        out,
        "<p class=\"facts\">Window <b>{}</b> \u{2013} <b>{}</b> \u{b7} {} \u{b7} \
         {}, {} per year \u{b7} {} taken \u{b7} engine {} \u{b7} \
         costs charged: {} \u{b7} calculated {}</p>\n",
        m.start_date,
        m.end_date,
        count(m.assets_count as u64, "asset"),
        count(r.equity_curve.len() as u64, "row"),
        m.periods_per_year,
        count(u64::from(m.rebalance_dates), "decision"),
        esc(&m.engine_version),
        costs,
        m.calculated_at.format("%Y-%m-%d %H:%M:%S UTC"),
    );
    if m.data_sources.synthetic > 0 {
        w!(
            out,
            "<p class=\"warn\">Synthetic prices (generated demo data, not market data) for \
             {} of {}.</p>\n",
            thousands(m.data_sources.synthetic as f64, 0),
            count(m.data_sources.total() as u64, "asset"),
        );
    }
    if m.unusable_assets_count > 0 {
        w!(
            out,
            "<p class=\"note\">Left out of the requested universe for lack of data in the \
             window: {}.</p>\n",
            count(m.unusable_assets_count as u64, "asset"),
        );
    }
    out.push_str(
        "<p class=\"disclaimer\">Output is informational only and is not financial \
         advice.</p>\n</header>\n",
    );
}

fn equity_section(
    out: &mut String,
    r: &BacktestResponse,
    xs: &[f64],
    equity: &[f64],
    benches: &[Bench<'_>],
    domain: Option<(f64, f64)>,
) {
    out.push_str("<section>\n<h2>Equity against the benchmarks (log scale)</h2>\n");
    let mut lines = vec![Line {
        name: &r.metadata.strategy,
        color: STRATEGY_COLOR,
        xs: xs.to_vec(),
        ys: equity.to_vec(),
    }];
    for b in benches {
        let n = b.body.dates.len().min(b.body.equity.len());
        lines.push(Line {
            name: b.name,
            color: b.color,
            xs: b.body.dates[..n].iter().map(|&d| day(d)).collect(),
            ys: b.body.equity[..n].to_vec(),
        });
    }
    legend(out, &lines, true);
    chart(
        out,
        &Chart {
            label: "Equity of the strategy and the benchmarks, log scale",
            height: 280.0,
            scale: Scale::Log,
            include: &[],
            flat: (0.0, 0.0),
            area: false,
            reference: None,
            tick: |v, _| compact(v),
        },
        &lines,
        domain,
    );
    out.push_str("</section>\n");
}

fn drawdown_section(out: &mut String, xs: &[f64], equity: &[f64], domain: Option<(f64, f64)>) {
    out.push_str(
        "<section>\n<h2>Drawdown</h2>\n<p class=\"note\">The strategy's equity over its \
         highest close so far, minus one.</p>\n",
    );
    let lines = [Line {
        name: "Drawdown",
        color: "#b03a2e",
        xs: xs.to_vec(),
        ys: drawdowns(equity),
    }];
    chart(
        out,
        &Chart {
            label: "Drawdown of the strategy, percent",
            height: 180.0,
            scale: Scale::Linear,
            include: &[0.0],
            flat: (-0.01, 0.0),
            area: true,
            reference: None,
            tick: pct_tick,
        },
        &lines,
        domain,
    );
    out.push_str("</section>\n");
}

fn monthly_section(out: &mut String, curve: &[EquityPoint]) {
    out.push_str(
        "<section>\n<h2>Monthly returns</h2>\n<p class=\"note\">Each month's last equity over \
         the previous month's last (the first month: over the first point); the year's \
         last over the previous year's last.</p>\n",
    );
    let mr = monthly_returns(curve);
    if mr.months.is_empty() {
        out.push_str("<p class=\"empty\">No data.</p>\n</section>\n");
        return;
    }
    let scale = mr
        .months
        .values()
        .flatten()
        .fold(0.0_f64, |a, v| a.max(v.abs()));
    out.push_str("<table class=\"heat\">\n<thead><tr><th></th>");
    for name in MONTHS {
        w!(out, "<th>{name}</th>");
    }
    out.push_str("<th>Year</th></tr></thead>\n<tbody>\n");
    let first = mr.months.keys().next().map_or(0, |k| k.0);
    let last = mr.months.keys().next_back().map_or(0, |k| k.0);
    for year in first..=last {
        let in_year = mr.months.range((year, 1)..=(year, 12)).next().is_some();
        if !in_year && !mr.years.contains_key(&year) {
            continue;
        }
        w!(out, "<tr><th>{year}</th>");
        for month in 1..=12 {
            match mr.months.get(&(year, month)) {
                None => out.push_str("<td></td>"),
                Some(None) => w!(out, "<td>{DASH}</td>"),
                Some(Some(v)) => {
                    w!(
                        out,
                        "<td style=\"background:{}\">{}</td>",
                        heat(*v, scale),
                        signed_pct(*v)
                    );
                }
            }
        }
        match mr.years.get(&year) {
            None => out.push_str("<td class=\"year\"></td>"),
            Some(None) => w!(out, "<td class=\"year\">{DASH}</td>"),
            Some(Some(v)) => w!(out, "<td class=\"year\">{}</td>", signed_pct(*v)),
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn rolling_section(
    out: &mut String,
    r: &BacktestResponse,
    dates: &[NaiveDate],
    xs: &[f64],
    equity: &[f64],
    benches: &[Bench<'_>],
    domain: Option<(f64, f64)>,
) {
    w!(
        out,
        "<section>\n<h2>Rolling volatility and beta</h2>\n<p class=\"note\">Over the {ROLLING_WINDOW} \
         daily simple returns ending at each date ({} rows of the curve): the strategy's \
         standard deviation \u{d7} \u{221a}{} (annualised), and its beta against each \
         benchmark, cov(strategy, benchmark) / var(benchmark).</p>\n",
        ROLLING_WINDOW + 1,
        r.metadata.periods_per_year.max(1),
    );
    if equity.len() <= ROLLING_WINDOW {
        w!(
            out,
            "<p class=\"empty\">Fewer than {} rows: no rolling window.</p>\n</section>\n",
            ROLLING_WINDOW + 1
        );
        return;
    }
    let vol = rolling_volatility(equity, ROLLING_WINDOW, r.metadata.periods_per_year);
    let lines = [Line {
        name: "Annualised volatility",
        color: STRATEGY_COLOR,
        xs: xs.to_vec(),
        ys: vol.iter().map(|v| v.unwrap_or(f64::NAN)).collect(),
    }];
    out.push_str("<p class=\"legend\"><b>Annualised volatility</b></p>\n");
    chart(
        out,
        &Chart {
            label: "Rolling annualised volatility of the strategy, percent",
            height: 170.0,
            scale: Scale::Linear,
            include: &[0.0],
            flat: (0.0, 0.01),
            area: false,
            reference: None,
            tick: pct_tick,
        },
        &lines,
        domain,
    );
    out.push_str("<p class=\"legend\"><b>Beta</b></p>\n");
    if benches.is_empty() {
        out.push_str("<p class=\"empty\">No benchmarks.</p>\n</section>\n");
        return;
    }
    let lines: Vec<Line<'_>> = benches
        .iter()
        .map(|b| Line {
            name: b.name,
            color: b.color,
            xs: xs.to_vec(),
            ys: rolling_beta(equity, &aligned(b.body, dates), ROLLING_WINDOW)
                .iter()
                .map(|v| v.unwrap_or(f64::NAN))
                .collect(),
        })
        .collect();
    legend(out, &lines, false);
    chart(
        out,
        &Chart {
            label: "Rolling beta of the strategy against each benchmark",
            height: 170.0,
            scale: Scale::Linear,
            include: &[0.0, 1.0],
            flat: (0.0, 1.0),
            area: false,
            reference: Some(1.0),
            tick: number_tick,
        },
        &lines,
        domain,
    );
    out.push_str("</section>\n");
}

/// The metrics table's rows: name, formatted value, what it means.
fn metric_rows(m: &MetricsBody) -> [(&'static str, String, &'static str); 21] {
    let days = |d: i64| format!("{} days", thousands(d as f64, 0));
    [
        (
            "Total return",
            pct(m.total_return),
            "Final equity over the first, minus one.",
        ),
        ("CAGR", pct(m.cagr), "Compound annual growth rate."),
        (
            "Sharpe ratio",
            ratio(m.sharpe_ratio),
            "Annualised, of the daily returns.",
        ),
        (
            "Sortino ratio",
            ratio(m.sortino_ratio),
            "Annualised, of the daily returns.",
        ),
        (
            "Max drawdown",
            pct(m.max_drawdown),
            "Worst fall from a peak.",
        ),
        (
            "Calmar ratio",
            ratio(m.calmar_ratio),
            "CAGR over the max drawdown.",
        ),
        (
            "Ulcer index",
            pct(m.ulcer_index),
            "Root mean square of the daily drawdowns.",
        ),
        (
            "Longest drawdown",
            days(m.longest_drawdown_days),
            "Calendar days under a peak, first close to last.",
        ),
        (
            "Its recovery",
            m.longest_drawdown_recovery_days
                .map_or_else(|| DASH.to_string(), days),
            "Calendar days from its lowest close back to the peak (\u{2014}: not recovered).",
        ),
        ("VaR 95 %", pct(m.var_95), "Daily value at risk, normal."),
        (
            "CVaR 95 %",
            pct(m.cvar_95),
            "Daily expected shortfall, normal.",
        ),
        (
            "Exposure",
            pct(m.exposure),
            "Share of days that began invested.",
        ),
        (
            "Turnover",
            pct(m.turnover),
            "Share of the portfolio traded per year, one-sided.",
        ),
        (
            "Best month",
            pct(m.best_month),
            "Compounded calendar month.",
        ),
        (
            "Worst month",
            pct(m.worst_month),
            "Compounded calendar month.",
        ),
        (
            "Winning months",
            pct(m.winning_months),
            "Share of the months with a non-zero return that gained.",
        ),
        ("Final equity", money(m.final_equity), "Equity at the end."),
        ("Total costs", money(m.total_costs), "Sum of trading costs."),
        (
            "Cost drag",
            finite(m.cost_drag_pct)
                .map_or_else(|| DASH.to_string(), |v| format!("{} %", fixed(v, 2))),
            "Costs as a percentage of the initial capital.",
        ),
        ("Trades", thousands(m.total_trades as f64, 0), "Fills."),
        (
            "Years",
            finite(m.years).map_or_else(|| DASH.to_string(), |v| fixed(v, 2)),
            "Returns in the curve over periods per year.",
        ),
    ]
}

fn metrics_section(out: &mut String, m: &MetricsBody) {
    out.push_str(
        "<section>\n<h2>Metrics</h2>\n<table class=\"metrics\">\n<thead><tr><th>Metric</th>\
         <th>Value</th><th></th></tr></thead>\n<tbody>\n",
    );
    for (name, value, what) in metric_rows(m) {
        w!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"what\">{}</td></tr>\n",
            esc(name),
            value,
            esc(what)
        );
    }
    out.push_str("</tbody>\n</table>\n");
    relative_section(out, m);
}

/// The strategy against each benchmark.
fn relative_section(out: &mut String, m: &MetricsBody) {
    out.push_str("<h2>Against the benchmarks</h2>\n");
    if m.relative.is_empty() {
        out.push_str("<p class=\"empty\">No benchmarks.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<table class=\"relative\">\n<thead><tr><th>Benchmark</th><th>Beta</th>\
         <th>Alpha (per year)</th><th>Tracking error</th><th>Information ratio</th></tr>\
         </thead>\n<tbody>\n",
    );
    for (name, rel) in &m.relative {
        w!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(name),
            ratio(rel.beta),
            pct(rel.alpha),
            pct(rel.tracking_error),
            ratio(rel.information_ratio)
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn footer(out: &mut String, r: &BacktestResponse) {
    let m = &r.metadata;
    let s = &m.data_sources;
    w!(
        out,
        "<footer>\n<p>Generated by Forecast Engine from POST /api/backtest: strategy {} {}, \
         engine {}, calculated {}.</p>\n<p>Data sources: prices of {} \u{2014} {} real \
         (histories shipped with the service), {} ingested (loaded by forecast ingest), {} \
         synthetic (generated demo prices, not market data).</p>\n<p>Charts draw at most \
         {} points per line (the first, the last, and the lowest and highest of each stretch \
         of rows); the tables use every row.</p>\n</footer>\n",
        esc(&m.strategy),
        esc(&m.strategy_version),
        esc(&m.engine_version),
        m.calculated_at.format("%Y-%m-%d %H:%M:%S UTC"),
        count(s.total() as u64, "asset"),
        thousands(s.real as f64, 0),
        thousands(s.ingested as f64, 0),
        thousands(s.synthetic as f64, 0),
        thousands(MAX_LINE_POINTS as f64, 0),
    );
}

/// The key of each line, with its change from the first drawable point to
/// the last when `changes`.
fn legend(out: &mut String, lines: &[Line<'_>], changes: bool) {
    out.push_str("<p class=\"legend\">");
    for l in lines {
        w!(
            out,
            "<span class=\"key\"><i style=\"background:{}\"></i>{}",
            l.color,
            esc(l.name)
        );
        if changes {
            let mut ok = l.ys.iter().copied().filter(|y| y.is_finite() && *y > 0.0);
            if let (Some(a), Some(b)) = (ok.next(), ok.next_back()) {
                w!(out, " ({})", signed_pct(b / a - 1.0));
            }
        }
        out.push_str("</span>");
    }
    out.push_str("</p>\n");
}

// ---------------------------------------------------------------------------
// Figures

/// `E / cummax(E) - 1` for each row; NaN where undefined (a non-finite
/// value, or no positive peak yet).
fn drawdowns(equity: &[f64]) -> Vec<f64> {
    let mut peak = f64::NEG_INFINITY;
    equity
        .iter()
        .map(|&e| {
            if !e.is_finite() {
                return f64::NAN;
            }
            peak = peak.max(e);
            if peak > 0.0 {
                e / peak - 1.0
            } else {
                f64::NAN
            }
        })
        .collect()
}

/// Calendar months (year, month) and years of a curve, compounded.
#[derive(Debug, Default)]
struct MonthlyReturns {
    /// Each month with a point after the first: its return, `None` when
    /// undefined (a base that is not positive).
    months: BTreeMap<(i32, u32), Option<f64>>,
    /// Each year with a point after the first, the same way.
    years: BTreeMap<i32, Option<f64>>,
}

/// Each month's last equity over the last equity before the month (the
/// first point for the first month); a month whose only point is the
/// first point has no return, as in the engine's `best_month`. Likewise
/// for years. Non-finite points are skipped.
fn monthly_returns(curve: &[EquityPoint]) -> MonthlyReturns {
    let mut out = MonthlyReturns::default();
    let pts: Vec<(NaiveDate, f64)> = curve
        .iter()
        .filter(|p| p.equity.is_finite())
        .map(|p| (p.date, p.equity))
        .collect();
    let Some(&(first_date, first)) = pts.iter().min_by_key(|p| p.0) else {
        return out;
    };
    // The last point of each month (a later row wins a tie of dates).
    let mut ends: BTreeMap<(i32, u32), (NaiveDate, f64)> = BTreeMap::new();
    for &(d, e) in &pts {
        let slot = ends.entry((d.year(), d.month())).or_insert((d, e));
        if d >= slot.0 {
            *slot = (d, e);
        }
    }
    let mut year_ends: BTreeMap<i32, (NaiveDate, f64)> = BTreeMap::new();
    let mut prev = first;
    for (&(y, m), &(d, e)) in &ends {
        year_ends.insert(y, (d, e));
        if d == first_date {
            continue;
        }
        out.months.insert((y, m), growth(e, prev));
        prev = e;
    }
    let mut prev = first;
    for (&y, &(d, e)) in &year_ends {
        if d == first_date {
            continue;
        }
        out.years.insert(y, growth(e, prev));
        prev = e;
    }
    out
}

/// `e / base - 1`, when `base` is positive and the result finite.
fn growth(e: f64, base: f64) -> Option<f64> {
    if base > 0.0 {
        finite(e / base - 1.0)
    } else {
        None
    }
}

/// Daily simple returns aligned with the rows: `r[i] = E[i] / E[i-1] - 1`,
/// NaN for the first row and where `E[i-1]` is not positive.
fn simple_returns(equity: &[f64]) -> Vec<f64> {
    let mut r = Vec::with_capacity(equity.len());
    if !equity.is_empty() {
        r.push(f64::NAN);
    }
    for w in equity.windows(2) {
        r.push(growth(w[1], w[0]).unwrap_or(f64::NAN));
    }
    r
}

/// The annualised volatility at each row: the sample standard deviation
/// of the `window` returns ending at the row, times
/// `sqrt(periods_per_year)` (1 when 0). `None` for the first `window` rows
/// and where a return of the window is undefined.
fn rolling_volatility(equity: &[f64], window: usize, periods_per_year: u32) -> Vec<Option<f64>> {
    let r = simple_returns(equity);
    let annual = f64::from(periods_per_year.max(1)).sqrt();
    rolling(&r, window, |w| {
        let (lo, hi) = w
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        if lo == hi {
            return Some(0.0);
        }
        let mean = w.iter().sum::<f64>() / w.len() as f64;
        let ss: f64 = w.iter().map(|x| (x - mean) * (x - mean)).sum();
        finite((ss / (w.len() - 1) as f64).sqrt() * annual)
    })
}

/// The beta at each row against `bench` (its equity on the same rows, NaN
/// where missing): `cov(r, b) / var(b)` of the `window` returns ending at
/// the row. `None` for the first `window` rows, where a return of the
/// window is undefined, and where the benchmark did not move.
fn rolling_beta(equity: &[f64], bench: &[f64], window: usize) -> Vec<Option<f64>> {
    let r = simple_returns(equity);
    let b = simple_returns(bench);
    let n = r.len().min(b.len());
    let pairs: Vec<(f64, f64)> = r[..n].iter().copied().zip(b[..n].iter().copied()).collect();
    let mut out = rolling(&pairs, window, |w| {
        let k = w.len() as f64;
        let mr = w.iter().map(|p| p.0).sum::<f64>() / k;
        let mb = w.iter().map(|p| p.1).sum::<f64>() / k;
        let cov: f64 = w.iter().map(|p| (p.0 - mr) * (p.1 - mb)).sum();
        let var: f64 = w.iter().map(|p| (p.1 - mb) * (p.1 - mb)).sum();
        if var > 0.0 {
            finite(cov / var)
        } else {
            None
        }
    });
    out.resize(equity.len(), None);
    out
}

/// Something finite: NaN-free for f64, both parts for pairs.
trait Defined: Copy {
    fn defined(self) -> bool;
}
impl Defined for f64 {
    fn defined(self) -> bool {
        self.is_finite()
    }
}
impl Defined for (f64, f64) {
    fn defined(self) -> bool {
        self.0.is_finite() && self.1.is_finite()
    }
}

/// `f` of the `window` values ending at each row from row `window` on
/// (row 0 of a return series is undefined); `None` before, or when a value
/// of the window is undefined or `window < 2`.
fn rolling<T: Defined>(
    xs: &[T],
    window: usize,
    f: impl Fn(&[T]) -> Option<f64>,
) -> Vec<Option<f64>> {
    let mut out = vec![None; xs.len()];
    if window < 2 {
        return out;
    }
    // Rows since the last undefined value, to skip windows holding one.
    let mut run = 0usize;
    for (i, x) in xs.iter().enumerate() {
        run = if x.defined() { run + 1 } else { 0 };
        if i >= window && run >= window {
            out[i] = f(&xs[i + 1 - window..=i]);
        }
    }
    out
}

/// The benchmark's equity on `dates` (NaN where it has none).
fn aligned(b: &BenchmarkBody, dates: &[NaiveDate]) -> Vec<f64> {
    let n = b.dates.len().min(b.equity.len());
    if b.dates[..n] == *dates {
        return b.equity[..n].to_vec();
    }
    let by_date: BTreeMap<NaiveDate, f64> = b.dates[..n]
        .iter()
        .copied()
        .zip(b.equity[..n].iter().copied())
        .collect();
    dates
        .iter()
        .map(|d| by_date.get(d).copied().unwrap_or(f64::NAN))
        .collect()
}

// ---------------------------------------------------------------------------
// Charts

const WIDTH: f64 = 760.0;
const PAD_LEFT: f64 = 62.0;
const PAD_RIGHT: f64 = 14.0;
const PAD_TOP: f64 = 10.0;
const PAD_BOTTOM: f64 = 24.0;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scale {
    Log,
    Linear,
}

struct Chart<'a> {
    /// The SVG's accessible label.
    label: &'a str,
    height: f64,
    scale: Scale,
    /// Values the y axis always shows.
    include: &'a [f64],
    /// The y range when the data do not span one.
    flat: (f64, f64),
    /// Fill between the line and 0.
    area: bool,
    /// A dashed horizontal line at this value.
    reference: Option<f64>,
    /// A y tick's label from its value and the step between ticks.
    tick: fn(f64, f64) -> String,
}

struct Line<'a> {
    name: &'a str,
    color: &'static str,
    /// Day numbers ([`day`]).
    xs: Vec<f64>,
    /// Values; NaN (or, on a log scale, not positive) is a gap.
    ys: Vec<f64>,
}

/// The y axis: the transformed range and the ticks (values).
struct Axis {
    t0: f64,
    t1: f64,
    ticks: Vec<f64>,
    step: f64,
}

fn day(d: NaiveDate) -> f64 {
    f64::from(d.num_days_from_ce())
}

fn date_of(x: f64) -> Option<NaiveDate> {
    if !x.is_finite() || x.abs() > f64::from(i32::MAX) {
        return None;
    }
    NaiveDate::from_num_days_from_ce_opt(x.round() as i32)
}

/// The first and last day over the curve and the benchmarks.
fn x_domain(xs: &[f64], benches: &[Bench<'_>]) -> Option<(f64, f64)> {
    let all = xs.iter().copied().chain(
        benches
            .iter()
            .flat_map(|b| b.body.dates.iter().map(|&d| day(d))),
    );
    all.fold(None, |acc, x| match acc {
        None => Some((x, x)),
        Some((a, b)) => Some((a.min(x), b.max(x))),
    })
}

/// The rows a line draws: all of them up to `max`; else the first, the
/// last, and in each of `(max - 2) / 2` equal stretches between them the
/// lowest and the highest valid value in row order (the first row of a
/// stretch without one, to keep the gap).
fn thin(ys: &[f64], max: usize, valid: impl Fn(f64) -> bool) -> Vec<usize> {
    let n = ys.len();
    if n <= max || max < 4 {
        return (0..n).collect();
    }
    let buckets = (max - 2) / 2;
    let inner = n - 2;
    let mut out = Vec::with_capacity(max);
    out.push(0);
    for b in 0..buckets {
        let lo = 1 + b * inner / buckets;
        let hi = 1 + (b + 1) * inner / buckets;
        if lo >= hi {
            continue;
        }
        let mut least: Option<(usize, f64)> = None;
        let mut most: Option<(usize, f64)> = None;
        for (i, &y) in ys.iter().enumerate().take(hi).skip(lo) {
            if !valid(y) {
                continue;
            }
            if least.is_none_or(|(_, v)| y < v) {
                least = Some((i, y));
            }
            if most.is_none_or(|(_, v)| y > v) {
                most = Some((i, y));
            }
        }
        match (least, most) {
            (Some((a, _)), Some((c, _))) => {
                out.push(a.min(c));
                if a != c {
                    out.push(a.max(c));
                }
            }
            _ => out.push(lo),
        }
    }
    out.push(n - 1);
    out
}

/// The y range of the lines' drawable points, widened to `c.include`;
/// none without a drawable point.
fn y_range(c: &Chart<'_>, lines: &[Line<'_>], valid: impl Fn(f64) -> bool) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for l in lines {
        for (&x, &y) in l.xs.iter().zip(&l.ys) {
            if x.is_finite() && valid(y) {
                lo = lo.min(y);
                hi = hi.max(y);
            }
        }
    }
    if lo > hi {
        return None;
    }
    for &v in c.include {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    Some((lo, hi))
}

/// A chart's drawing area: its height, the plot's width and height, the
/// x domain.
struct Frame {
    h: f64,
    pw: f64,
    ph: f64,
    x: (f64, f64),
}

/// The horizontal and vertical grid with their labels, and the reference
/// line.
fn grid(
    out: &mut String,
    c: &Chart<'_>,
    axis: &Axis,
    f: &Frame,
    sx: &dyn Fn(f64) -> f64,
    sy: &dyn Fn(f64) -> f64,
) {
    let (h, pw, ph) = (f.h, f.pw, f.ph);
    let (x0, x1) = f.x;
    // Horizontal grid and y labels.
    for &v in &axis.ticks {
        let y = sy(v);
        if !y.is_finite() {
            continue;
        }
        w!(
            out,
            "<line class=\"grid\" x1=\"{PAD_LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            PAD_LEFT + pw,
            PAD_LEFT - 6.0,
            y + 4.0,
            esc(&(c.tick)(v, axis.step))
        );
    }
    // Vertical grid and x labels.
    for (x, label) in x_ticks(x0, x1) {
        let px = sx(x);
        if !px.is_finite() {
            continue;
        }
        w!(
            out,
            "<line class=\"grid\" x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{PAD_TOP}\" y2=\"{:.1}\"/>\
             <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            PAD_TOP + ph,
            h - 7.0,
            esc(&label)
        );
    }
    if let Some(v) = c.reference {
        let y = sy(v);
        if y.is_finite() && (PAD_TOP..=PAD_TOP + ph).contains(&y) {
            w!(
                out,
                "<line class=\"ref\" x1=\"{PAD_LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\n",
                PAD_LEFT + pw
            );
        }
    }
}

fn chart(out: &mut String, c: &Chart<'_>, lines: &[Line<'_>], domain: Option<(f64, f64)>) {
    let log = c.scale == Scale::Log;
    let valid = move |y: f64| y.is_finite() && (!log || y > 0.0);
    let (Some((x0, x1)), Some((lo, hi))) = (domain, y_range(c, lines, valid)) else {
        out.push_str("<p class=\"empty\">No data to draw.</p>\n");
        return;
    };
    let axis = if log {
        log_axis(lo, hi)
    } else {
        linear_axis(lo, hi, c.flat)
    };
    let tf = move |v: f64| if log { v.ln() } else { v };
    let (h, pw) = (c.height, WIDTH - PAD_LEFT - PAD_RIGHT);
    let ph = h - PAD_TOP - PAD_BOTTOM;
    let sx = move |x: f64| {
        if x1 > x0 {
            PAD_LEFT + (x - x0) / (x1 - x0) * pw
        } else {
            PAD_LEFT + pw / 2.0
        }
    };
    let (t0, t1) = (axis.t0, axis.t1);
    let sy = move |v: f64| PAD_TOP + (t1 - tf(v)) / (t1 - t0) * ph;

    w!(
        out,
        "<svg viewBox=\"0 0 {WIDTH} {h}\" role=\"img\" aria-label=\"{}\">\n",
        esc(c.label)
    );
    let frame = Frame {
        h,
        pw,
        ph,
        x: (x0, x1),
    };
    grid(out, c, &axis, &frame, &sx, &sy);
    let base = sy(0.0);
    for l in lines {
        let rows = thin(&l.ys, MAX_LINE_POINTS, valid);
        let mut seg: Vec<(f64, f64)> = Vec::new();
        let mut flush = |seg: &mut Vec<(f64, f64)>| {
            segment(out, l, seg, (c.area && base.is_finite()).then_some(base));
            seg.clear();
        };
        for i in rows {
            let (x, y) = (l.xs.get(i).copied().unwrap_or(f64::NAN), l.ys[i]);
            let p = (sx(x), sy(y));
            if x.is_finite() && valid(y) && p.0.is_finite() && p.1.is_finite() {
                seg.push(p);
            } else {
                flush(&mut seg);
            }
        }
        flush(&mut seg);
    }
    w!(
        out,
        "<rect class=\"frame\" x=\"{PAD_LEFT}\" y=\"{PAD_TOP}\" width=\"{pw:.1}\" height=\"{ph:.1}\"/>\n</svg>\n"
    );
}

/// One unbroken stretch of a line: a polyline (a dot for a single point),
/// over a filled polygon down to `base` when given.
fn segment(out: &mut String, l: &Line<'_>, seg: &[(f64, f64)], base: Option<f64>) {
    match seg {
        [] => {}
        [(x, y)] => {
            w!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2\" fill=\"{}\"><title>{}</title></circle>\n",
                l.color,
                esc(l.name)
            );
        }
        _ => {
            if let Some(b) = base {
                w!(
                    out,
                    "<polygon class=\"area\" fill=\"{}\" points=\"",
                    l.color
                );
                w!(out, "{:.1},{b:.1}", seg[0].0);
                for (x, y) in seg {
                    w!(out, " {x:.1},{y:.1}");
                }
                w!(out, " {:.1},{b:.1}\"/>\n", seg[seg.len() - 1].0);
            }
            w!(
                out,
                "<polyline class=\"line\" stroke=\"{}\" points=\"",
                l.color
            );
            for (k, (x, y)) in seg.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                w!(out, "{x:.1},{y:.1}");
            }
            w!(out, "\"><title>{}</title></polyline>\n", esc(l.name));
        }
    }
}

/// A log axis over `[lo, hi]` (both positive), padded 4 %.
fn log_axis(lo: f64, hi: f64) -> Axis {
    let (a, b) = (lo.ln(), hi.ln());
    let pad = if b - a > 1e-9 { (b - a) * 0.04 } else { 0.05 };
    let (t0, t1) = (a - pad, b + pad);
    Axis {
        t0,
        t1,
        ticks: log_ticks(t0.exp(), t1.exp()),
        step: 0.0,
    }
}

/// Ticks inside `[lo, hi]`: 1-2-5 steps when that gives 3 to 8; powers of
/// ten (every k-th, at most 8) when it gives more; else a linear step when
/// that gives more ticks.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |v: f64| (lo..=hi).contains(&v);
    let fine: Vec<f64> = (e0..=e1)
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .filter(|&v| within(v))
        .collect();
    if (3..=8).contains(&fine.len()) {
        return fine;
    }
    if fine.len() > 8 {
        let pows: Vec<f64> = (e0..=e1)
            .map(|e| 10f64.powi(e))
            .filter(|&v| within(v))
            .collect();
        let k = pows.len().div_ceil(8).max(1);
        return pows.into_iter().step_by(k).collect();
    }
    let linear = linear_ticks(lo, hi).0;
    if linear.len() > fine.len() {
        linear
    } else {
        fine
    }
}

/// A linear axis over `[lo, hi]` (`flat` when that is no range), widened
/// to whole steps.
fn linear_axis(lo: f64, hi: f64, flat: (f64, f64)) -> Axis {
    let span = hi - lo;
    let (lo, hi) = if span.is_finite() && span > 1e-12 * lo.abs().max(hi.abs()) && span > 0.0 {
        (lo, hi)
    } else if flat.1 > flat.0 {
        (lo.min(flat.0), hi.max(flat.1))
    } else {
        (lo - 0.5, hi + 0.5)
    };
    let (ticks, step) = linear_ticks(lo, hi);
    match (ticks.first(), ticks.last()) {
        (Some(&a), Some(&b)) if step > 0.0 => {
            let t0 = if a > lo { a - step } else { a };
            let t1 = if b < hi { b + step } else { b };
            let mut ticks = ticks;
            if t0 < a {
                ticks.insert(0, t0);
            }
            if t1 > b {
                ticks.push(t1);
            }
            Axis {
                t0,
                t1,
                ticks,
                step,
            }
        }
        _ => Axis {
            t0: lo,
            t1: if hi > lo { hi } else { lo + 1.0 },
            ticks: Vec::new(),
            step: 0.0,
        },
    }
}

/// Multiples of a 1-2-2.5-5 step inside `[lo, hi]`, about 4 steps apart
/// the range; and the step.
fn linear_ticks(lo: f64, hi: f64) -> (Vec<f64>, f64) {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return (Vec::new(), 0.0);
    }
    let raw = span / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let step = mag
        * if f <= 1.0 {
            1.0
        } else if f <= 2.0 {
            2.0
        } else if f <= 2.5 {
            2.5
        } else if f <= 5.0 {
            5.0
        } else {
            10.0
        };
    if !(step.is_finite() && step > 0.0) {
        return (Vec::new(), 0.0);
    }
    let (k0, k1) = ((lo / step - 1e-9).ceil(), (hi / step + 1e-9).floor());
    if !(k0.is_finite() && k1.is_finite()) || k1 - k0 > 20.0 || k1 < k0 {
        return (Vec::new(), step);
    }
    let ticks = (0..=(k1 - k0) as i64)
        .map(|k| (k0 + k as f64) * step)
        .map(|v| if v == 0.0 { 0.0 } else { v })
        .collect();
    (ticks, step)
}

/// Date ticks between days `x0` and `x1`: 1 January of every year (or
/// every 2nd, 5th, ...: at most 10); else the first of every month (or
/// every 2nd, 3rd, 6th: at most 8); else the two ends.
fn x_ticks(x0: f64, x1: f64) -> Vec<(f64, String)> {
    let (Some(d0), Some(d1)) = (date_of(x0), date_of(x1)) else {
        return Vec::new();
    };
    let years: Vec<NaiveDate> = (d0.year()..=d1.year())
        .filter_map(|y| NaiveDate::from_ymd_opt(y, 1, 1))
        .filter(|d| (d0..=d1).contains(d))
        .collect();
    if years.len() >= 2 {
        for step in [1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000] {
            let picked: Vec<&NaiveDate> = years.iter().filter(|d| d.year() % step == 0).collect();
            if picked.len() <= 10 {
                return picked
                    .into_iter()
                    .map(|d| (day(*d), d.year().to_string()))
                    .collect();
            }
        }
        return Vec::new();
    }
    let mut months = Vec::new();
    let (mut y, mut m) = (d0.year(), d0.month());
    while let Some(d) = NaiveDate::from_ymd_opt(y, m, 1) {
        if d > d1 {
            break;
        }
        if d >= d0 {
            months.push(d);
        }
        (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    }
    if months.len() >= 2 {
        for step in [1, 2, 3, 6] {
            let picked: Vec<&NaiveDate> = months
                .iter()
                .filter(|d| (d.month() - 1) % step == 0)
                .collect();
            if picked.len() <= 8 {
                return picked
                    .into_iter()
                    .map(|d| (day(*d), d.format("%Y-%m").to_string()))
                    .collect();
            }
        }
    }
    if d0 == d1 {
        vec![(x0, d0.to_string())]
    } else {
        vec![(x0, d0.to_string()), (x1, d1.to_string())]
    }
}

// ---------------------------------------------------------------------------
// Formatting

/// `s` with `& < > " '` escaped, for text and attribute values.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// `v` with `d` decimals, never "-0".
fn fixed(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => s,
    }
}

/// `v` with at most `d` decimals, trailing zeros dropped.
fn trim(v: f64, d: usize) -> String {
    let s = fixed(v, d);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `v` with `d` decimals and thousands separated by commas.
fn thousands(v: f64, d: usize) -> String {
    if !v.is_finite() {
        return DASH.to_string();
    }
    let s = fixed(v, d);
    let (sign, s) = match s.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", s.as_str()),
    };
    let (int, frac) = s.split_once('.').map_or((s, ""), |(a, b)| (a, b));
    let mut grouped = String::with_capacity(int.len() + int.len() / 3);
    for (k, ch) in int.chars().enumerate() {
        if k > 0 && (int.len() - k) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// `n` and `word`, plural unless `n` is 1: "1 asset", "12 assets".
fn count(n: u64, word: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {word}{s}", thousands(n as f64, 0))
}

/// A fraction as a percentage with 2 decimals, "—" for none.
fn pct(v: Option<f64>) -> String {
    v.and_then(finite).map_or_else(
        || DASH.to_string(),
        |v| format!("{} %", fixed(v * 100.0, 2)),
    )
}

/// A ratio with 2 decimals, "—" for none.
fn ratio(v: Option<f64>) -> String {
    v.and_then(finite)
        .map_or_else(|| DASH.to_string(), |v| fixed(v, 2))
}

/// An amount with 2 decimals and thousands separators.
fn money(v: f64) -> String {
    thousands(v, 2)
}

/// A fraction as a signed percentage with 1 decimal: "+1.2 %", "-0.5 %",
/// "0.0 %".
fn signed_pct(v: f64) -> String {
    if !v.is_finite() {
        return DASH.to_string();
    }
    let s = thousands(v * 100.0, 1);
    if s.starts_with('-') || s.bytes().all(|b| b == b'0' || b == b'.') {
        format!("{s} %")
    } else {
        format!("+{s} %")
    }
}

/// Decimals that show multiples of `step` exactly (at most 6).
fn decimals(step: f64) -> usize {
    (0..6)
        .find(|&d| {
            let s = step * 10f64.powi(d as i32);
            (s - s.round()).abs() < 1e-6 * s.abs().max(1.0)
        })
        .unwrap_or(6)
}

fn pct_tick(v: f64, step: f64) -> String {
    format!("{} %", fixed(v * 100.0, decimals(step * 100.0)))
}

fn number_tick(v: f64, step: f64) -> String {
    fixed(v, decimals(step))
}

/// A value in few characters: 950, 12.5k, 3.2M, 1.1B, 2T.
fn compact(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "B")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    if a >= 1.0 || a == 0.0 {
        format!("{}{suffix}", trim(x, 2))
    } else if a >= 1e-3 {
        trim(x, 4)
    } else {
        format!("{x:.1e}")
    }
}

/// The background of a monthly cell: white to green for a gain, to red for
/// a loss, in proportion to `|v| / scale`.
fn heat(v: f64, scale: f64) -> String {
    let t = if scale > 0.0 {
        (v.abs() / scale).clamp(0.0, 1.0) * 0.7
    } else {
        0.0
    };
    let target: (f64, f64, f64) = if v < 0.0 {
        (215.0, 48.0, 39.0)
    } else {
        (26.0, 152.0, 80.0)
    };
    let mix = |c: f64| (255.0 + (c - 255.0) * t).round().clamp(0.0, 255.0) as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(target.0),
        mix(target.1),
        mix(target.2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use forecast_api::assets::DataSources;
    use forecast_api::backtest::{BacktestMetadata, RelativeMetrics};

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn metrics(all_none: bool) -> MetricsBody {
        let s = |v: f64| (!all_none).then_some(v);
        let mut relative = BTreeMap::new();
        relative.insert(
            "equal_weight_buy_hold".to_string(),
            RelativeMetrics {
                beta: s(0.83),
                alpha: s(0.021),
                tracking_error: s(0.054),
                information_ratio: s(0.4),
            },
        );
        MetricsBody {
            total_return: s(1.234),
            cagr: s(0.084),
            sharpe_ratio: s(0.91),
            sortino_ratio: s(1.3),
            max_drawdown: s(-0.312),
            final_equity: 223_400.0,
            years: 10.0,
            total_costs: 1_234.5,
            cost_drag_pct: 1.2345,
            total_trades: 4_321,
            calmar_ratio: s(0.27),
            ulcer_index: s(0.08),
            longest_drawdown_days: 400,
            longest_drawdown_recovery_days: s(120.0).map(|v| v as i64),
            var_95: s(-0.017),
            cvar_95: s(-0.021),
            exposure: s(0.97),
            turnover: s(3.4),
            best_month: s(0.12),
            worst_month: s(-0.15),
            winning_months: s(0.61),
            relative: if all_none { BTreeMap::new() } else { relative },
        }
    }

    /// A response over `curve`, with the benchmarks named and their equity
    /// on the same dates.
    fn response(
        strategy: &str,
        curve: &[(NaiveDate, f64)],
        benches: &[(&str, Vec<f64>)],
    ) -> BacktestResponse {
        let dates: Vec<NaiveDate> = curve.iter().map(|p| p.0).collect();
        let mut cost_bps = BTreeMap::new();
        cost_bps.insert("equity".to_string(), 5.0);
        BacktestResponse {
            equity_curve: curve
                .iter()
                .map(|&(date, equity)| EquityPoint { date, equity })
                .collect(),
            trades: Vec::new(),
            metrics: metrics(false),
            benchmarks: benches
                .iter()
                .map(|(name, eq)| {
                    (
                        name.to_string(),
                        BenchmarkBody {
                            dates: dates.clone(),
                            equity: eq.clone(),
                        },
                    )
                })
                .collect(),
            metadata: BacktestMetadata {
                assets_count: 12,
                data_points: 1_000,
                rebalance_dates: 120,
                calculated_at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
                strategy: strategy.to_string(),
                strategy_version: "1.2.0".to_string(),
                engine_version: "0.9.1".to_string(),
                start_date: dates.first().copied().unwrap_or_default(),
                end_date: dates.last().copied().unwrap_or_default(),
                periods_per_year: 252,
                include_costs: true,
                cost_bps,
                signals_cached: 0,
                decay_factor: Some(0.97),
                trades_total: Some(0),
                trades_truncated: Some(false),
                data_sources: DataSources {
                    real: 10,
                    ingested: 1,
                    synthetic: 1,
                },
                unusable_assets_count: 0,
                unusable_assets: Vec::new(),
                plugin_usage: Vec::new(),
                benchmarks_left_out: Vec::new(),
            },
        }
    }

    /// Weekdays from `start`, `n` of them.
    fn weekdays(start: NaiveDate, n: usize) -> Vec<NaiveDate> {
        let mut d = start;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            if d.weekday().num_days_from_monday() < 5 {
                out.push(d);
            }
            d = d.succ_opt().unwrap();
        }
        out
    }

    /// A curve: (date, equity) rows.
    type Curve = Vec<(NaiveDate, f64)>;
    /// Benchmarks: (name, equity on the curve's dates).
    type Benches = Vec<(&'static str, Vec<f64>)>;

    /// A deterministic wobbly curve (no randomness: a few sines).
    fn wobbly(n: usize, start: NaiveDate) -> (Curve, Benches) {
        let dates = weekdays(start, n);
        let mut e = 100_000.0;
        let (mut b1, mut b2) = (100_000.0, 100_000.0);
        let mut curve = Vec::with_capacity(n);
        let (mut v1, mut v2) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (i, &d) in dates.iter().enumerate() {
            if i > 0 {
                let x = i as f64;
                let m = 0.01 * (x * 0.37).sin() + 0.004 * (x * 0.05).cos();
                e *= 1.0 + 0.0003 + m;
                b1 *= 1.0 + 0.0002 + 0.8 * m + 0.003 * (x * 1.3).sin();
                b2 *= 1.0 + 0.00025 + 0.5 * m;
            }
            curve.push((d, e));
            v1.push(b1);
            v2.push(b2);
        }
        (
            curve,
            vec![
                ("equal_weight_buy_hold", v1),
                ("equal_weight_rebalanced", v2),
            ],
        )
    }

    /// The `points` attributes of the document's polylines and polygons:
    /// (element, point count).
    fn point_counts(doc: &str) -> Vec<(&'static str, usize)> {
        let mut out = Vec::new();
        for (tag, name) in [("<polyline ", "polyline"), ("<polygon ", "polygon")] {
            for part in doc.split(tag).skip(1) {
                let attr = part.split("points=\"").nth(1).unwrap();
                let pts = &attr[..attr.find('"').unwrap()];
                out.push((name, pts.split(' ').count()));
            }
        }
        out
    }

    /// Structural checks every document must pass.
    fn assert_well_formed(doc: &str) {
        assert!(doc.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(doc.ends_with("</body>\n</html>\n"));
        assert!(doc.contains("<meta name=\"viewport\""));
        assert!(doc.contains("@media print"));
        assert!(!doc.to_lowercase().contains("<script"));
        assert!(!doc.contains("http://") && !doc.contains("https://"));
        assert!(!doc.contains("url(") && !doc.contains("@import"));
        for tag in [
            "<img", "<link", "<iframe", "<object", "<embed", "<image", "<use",
        ] {
            assert!(!doc.contains(tag), "{tag}");
        }
        // No NaN or infinity written (the only "inf" is in "informational").
        assert!(!doc.contains("NaN"));
        assert!(doc
            .match_indices("inf")
            .all(|(i, _)| doc[i + 3..].starts_with('o')));
        for tag in [
            "svg", "table", "section", "tr", "p", "header", "footer", "polyline",
        ] {
            let open =
                doc.matches(&format!("<{tag}>")).count() + doc.matches(&format!("<{tag} ")).count();
            let close = doc.matches(&format!("</{tag}>")).count();
            assert_eq!(open, close, "<{tag}> opened {open} times, closed {close}");
        }
        assert!(doc.contains("Output is informational only and is not financial advice."));
    }

    #[test]
    fn tearsheet_is_offline_and_complete() {
        let (curve, benches) = wobbly(2_520, date(2015, 1, 1));
        let doc = tear_sheet(&response("dip-buyer", &curve, &benches));
        assert_well_formed(&doc);
        assert!(doc.contains("<title>Backtest tear sheet: dip-buyer 1.2.0</title>"));
        assert!(doc.contains("Window <b>2015-01-01</b> \u{2013} <b>"));
        assert!(doc.contains("2023-11-14 22:13:20 UTC"));
        assert!(doc.contains("costs charged: yes (equity 5 bps)"));
        assert!(
            doc.contains("generated by Forecast Engine from POST /api/backtest")
                || doc.contains("Generated by Forecast Engine from POST /api/backtest")
        );
        assert!(doc.contains("10 real"));
        // Sections in order.
        let at = |s: &str| doc.find(s).unwrap_or_else(|| panic!("missing {s}"));
        let order = [
            "<h1>",
            "Equity against the benchmarks (log scale)",
            "<h2>Drawdown</h2>",
            "<h2>Monthly returns</h2>",
            "<h2>Rolling volatility and beta</h2>",
            "<h2>Metrics</h2>",
            "<h2>Against the benchmarks</h2>",
            "<footer>",
        ];
        for pair in order.windows(2) {
            assert!(at(pair[0]) < at(pair[1]), "{} before {}", pair[0], pair[1]);
        }
        // One line per series in the equity chart, the drawdown, volatility
        // and one beta per benchmark.
        assert_eq!(doc.matches("<polyline ").count(), 3 + 1 + 1 + 2);
        assert!(doc.contains("<td>Total return</td><td>123.40 %</td>"));
        assert!(doc.contains("<td>Sharpe ratio</td><td>0.91</td>"));
        assert!(doc.contains("<td>Final equity</td><td>223,400.00</td>"));
        assert!(doc.contains("<td>Cost drag</td><td>1.23 %</td>"));
        assert!(doc.contains("<td>Trades</td><td>4,321</td>"));
        assert!(doc.contains(
            "<tr><td>equal_weight_buy_hold</td><td>0.83</td><td>2.10 %</td><td>5.40 %</td><td>0.40</td></tr>"
        ));
        // Deterministic.
        assert_eq!(doc, tear_sheet(&response("dip-buyer", &curve, &benches)));
        eprintln!("10-year daily tear sheet: {} bytes", doc.len());
        assert!(doc.len() < 150_000, "{} bytes", doc.len());
    }

    #[test]
    fn tearsheet_monthly_table_compounds_across_a_year_boundary() {
        let curve = [
            (date(2020, 11, 16), 100.0),
            (date(2020, 11, 30), 110.0),
            (date(2020, 12, 15), 99.0),
            (date(2020, 12, 31), 104.5),
            (date(2021, 1, 11), 95.0),
            (date(2021, 1, 29), 114.0),
            (date(2021, 3, 1), 102.6),
        ];
        let r = response("m", &curve, &[]);
        let mr = monthly_returns(&r.equity_curve);
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        assert_eq!(mr.months.len(), 4);
        assert!(close(mr.months[&(2020, 11)], 0.1));
        assert!(close(mr.months[&(2020, 12)], 104.5 / 110.0 - 1.0));
        assert!(close(mr.months[&(2021, 1)], 114.0 / 104.5 - 1.0));
        assert!(!mr.months.contains_key(&(2021, 2)));
        assert!(close(mr.months[&(2021, 3)], -0.1));
        assert!(close(mr.years[&2020], 0.045));
        assert!(close(mr.years[&2021], 102.6 / 104.5 - 1.0));

        let doc = tear_sheet(&r);
        assert_well_formed(&doc);
        let row = |y: &str| {
            let start = doc.find(&format!("<tr><th>{y}</th>")).unwrap();
            let end = start + doc[start..].find("</tr>").unwrap();
            doc[start..end].to_string()
        };
        let cells = |row: &str| -> Vec<String> {
            row.split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    c[..c.find("</td>").unwrap()].to_string()
                })
                .collect()
        };
        let y2020 = cells(&row("2020"));
        let y2021 = cells(&row("2021"));
        let mut want2020 = vec![String::new(); 10];
        want2020.extend(["+10.0 %", "-5.0 %", "+4.5 %"].map(String::from));
        assert_eq!(y2020, want2020);
        let mut want2021: Vec<String> = ["+9.1 %", "", "-10.0 %"].map(String::from).to_vec();
        want2021.extend(vec![String::new(); 9]);
        want2021.push("-1.8 %".to_string());
        assert_eq!(y2021, want2021);
        // The largest move is the deepest colour; a loss is red, a gain green.
        assert!(row("2020").contains(&format!("background:{}", heat(0.1, 0.1))));
        assert_eq!(heat(-0.1, 0.1), "#e36e68");
        assert_eq!(heat(0.1, 0.1), "#5fb785");
        assert_eq!(heat(0.0, 0.1), "#ffffff");
    }

    #[test]
    fn tearsheet_escapes_every_string_of_the_body() {
        let (curve, _) = wobbly(300, date(2020, 1, 1));
        let evil = "@h4x/<script>alert('x')</script>&\"";
        let mut r = response(evil, &curve, &[("<b>bench</b>", vec![100.0; 300])]);
        r.metadata.strategy_version = "1\"><script>".to_string();
        r.metadata.engine_version = "<img src=x>".to_string();
        r.metadata.cost_bps.insert("<i>".to_string(), 2.5);
        r.metrics.relative.insert(
            "<svg onload=alert(1)>".to_string(),
            RelativeMetrics {
                beta: None,
                alpha: None,
                tracking_error: None,
                information_ratio: None,
            },
        );
        let doc = tear_sheet(&r);
        assert_well_formed(&doc);
        assert!(doc.contains("@h4x/&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"));
        assert!(doc.contains("1&quot;&gt;&lt;script&gt;"));
        assert!(doc.contains("&lt;img src=x&gt;"));
        assert!(doc.contains("&lt;b&gt;bench&lt;/b&gt;"));
        assert!(doc.contains("&lt;i&gt; 2.5 bps"));
        assert!(doc.contains("&lt;svg onload=alert(1)&gt;"));
        assert!(!doc.contains("<b>bench") && !doc.contains("<img") && !doc.contains("<i>"));
    }

    #[test]
    fn tearsheet_thins_a_long_curve() {
        let (curve, benches) = wobbly(40_000, date(1880, 1, 1));
        let doc = tear_sheet(&response("long", &curve, &benches));
        assert_well_formed(&doc);
        eprintln!("40,000-row tear sheet: {} bytes", doc.len());
        assert!(doc.len() < 400_000, "{} bytes", doc.len());
        let counts = point_counts(&doc);
        assert_eq!(counts.iter().filter(|c| c.0 == "polyline").count(), 7);
        for (el, n) in counts {
            let most = if el == "polygon" {
                MAX_LINE_POINTS + 2
            } else {
                MAX_LINE_POINTS
            };
            assert!(n <= most && n >= MAX_LINE_POINTS / 2, "{el} of {n} points");
        }
        // The thinning keeps the extremes of the drawdown.
        let e: Vec<f64> = curve.iter().map(|p| p.1).collect();
        let dd = drawdowns(&e);
        let rows = thin(&dd, MAX_LINE_POINTS, f64::is_finite);
        let worst = dd.iter().copied().fold(0.0, f64::min);
        assert!(rows.iter().any(|&i| dd[i] == worst));
        assert_eq!(rows.first(), Some(&0));
        assert_eq!(rows.last(), Some(&(dd.len() - 1)));
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn tearsheet_survives_edge_cases() {
        let d = date(2020, 6, 1);
        let mut cases = vec![
            response("empty", &[], &[]),
            response("one", &[(d, 100.0)], &[("b", vec![100.0])]),
            response("two", &[(d, 100.0), (date(2020, 6, 2), 101.0)], &[]),
            response("zero", &[(d, 0.0), (date(2020, 6, 2), 0.0)], &[]),
            response(
                "negative",
                &[
                    (d, 100.0),
                    (date(2020, 6, 2), -50.0),
                    (date(2020, 6, 3), 10.0),
                ],
                &[("b", vec![100.0, 100.0, 100.0])],
            ),
            response("flat", &[(d, 100.0); 3], &[]),
        ];
        // Flat for a year, a crash to zero and back, benchmark shorter.
        let dates = weekdays(date(2019, 1, 1), 400);
        let mut curve: Vec<(NaiveDate, f64)> = dates.iter().map(|&d| (d, 100.0)).collect();
        curve[200].1 = 0.0;
        curve[201].1 = -3.0;
        let mut r = response("crash", &curve, &[("b", vec![100.0; 400])]);
        r.benchmarks.get_mut("b").unwrap().equity.truncate(100);
        cases.push(r);
        let mut none = response("none", &[(d, 100.0)], &[]);
        none.metrics = metrics(true);
        none.metrics.final_equity = f64::NAN;
        none.metrics.years = f64::INFINITY;
        cases.push(none);
        for r in &cases {
            let doc = tear_sheet(r);
            assert_well_formed(&doc);
        }
        let empty = tear_sheet(&cases[0]);
        assert!(empty.contains("No data to draw."));
        assert!(empty.contains("Fewer than 64 rows"));
        let none = tear_sheet(&cases[cases.len() - 1]);
        assert!(none.contains("<td>Sharpe ratio</td><td>\u{2014}</td>"));
        assert!(none.contains("<td>Its recovery</td><td>\u{2014}</td>"));
        assert!(none.contains("<td>Final equity</td><td>\u{2014}</td>"));
        assert!(none.contains("No benchmarks."));
    }

    #[test]
    fn tearsheet_rolling_volatility_and_beta() {
        // Constant daily returns: no volatility.
        let mut e = vec![100.0];
        for _ in 0..199 {
            e.push(e[e.len() - 1] * 1.001);
        }
        let vol = rolling_volatility(&e, ROLLING_WINDOW, 252);
        assert_eq!(vol.len(), 200);
        assert!(vol[..ROLLING_WINDOW].iter().all(Option::is_none));
        assert!(vol[ROLLING_WINDOW..]
            .iter()
            .all(|v| v.unwrap().abs() < 1e-12));

        // Alternating +1 %, -1 %: 63 returns of which 32 of one sign and 31
        // of the other: mean ±a/63, sum of squares about the mean
        // 63 a² - a²/63, sample variance that over 62.
        let mut e = vec![100.0];
        for i in 1..200 {
            let r = if i % 2 == 1 { 0.01 } else { -0.01 };
            e.push(e[i - 1] * (1.0 + r));
        }
        let a: f64 = 0.01;
        let want = (a * a * (63.0 - 1.0 / 63.0) / 62.0).sqrt() * 252f64.sqrt();
        let vol = rolling_volatility(&e, ROLLING_WINDOW, 252);
        for v in &vol[ROLLING_WINDOW..] {
            assert!((v.unwrap() - want).abs() < 1e-9, "{v:?} against {want}");
        }
        // 252 * 3968 / 3906 = 256: the hand-computed value is 16 %.
        assert!((want - 0.16).abs() < 1e-12);

        // Beta: against itself 1, against half its moves 2, against a flat
        // benchmark none.
        let half: Vec<f64> = {
            let mut b = vec![100.0];
            for i in 1..e.len() {
                let r = e[i] / e[i - 1] - 1.0;
                b.push(b[i - 1] * (1.0 + r / 2.0));
            }
            b
        };
        let beta = rolling_beta(&e, &e, ROLLING_WINDOW);
        assert!(beta[ROLLING_WINDOW..]
            .iter()
            .all(|v| (v.unwrap() - 1.0).abs() < 1e-9));
        let beta = rolling_beta(&e, &half, ROLLING_WINDOW);
        assert!(beta[ROLLING_WINDOW..]
            .iter()
            .all(|v| (v.unwrap() - 2.0).abs() < 1e-9));
        let beta = rolling_beta(&e, &[100.0; 200], ROLLING_WINDOW);
        assert!(beta.iter().all(Option::is_none));
        // A gap in the equity voids the windows holding it.
        let mut g = e.clone();
        g[100] = 0.0;
        let vol = rolling_volatility(&g, ROLLING_WINDOW, 252);
        // r[100] = -100 % is defined; r[101] (over a zero) is not.
        assert!(vol[100].is_some());
        assert!(vol[101..=100 + ROLLING_WINDOW].iter().all(Option::is_none));
        assert!(vol[101 + ROLLING_WINDOW].is_some());
    }

    #[test]
    fn tearsheet_axes() {
        assert_eq!(
            log_ticks(90_000.0, 260_000.0),
            vec![100_000.0, 150_000.0, 200_000.0, 250_000.0]
        );
        assert_eq!(log_ticks(90_000.0, 1.2e6), vec![1e5, 2e5, 5e5, 1e6]);
        let near = |a: &[f64], b: &[f64]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| (x - y).abs() < 1e-9 * y.abs().max(1.0))
        };
        assert!(near(&log_ticks(900.0, 2.0e6), &[1e3, 1e4, 1e5, 1e6]));
        assert!(near(&linear_ticks(-0.31, 0.0).0, &[-0.3, -0.2, -0.1, 0.0]));
        assert_eq!(compact(250_000.0), "250k");
        assert_eq!(compact(1_500_000.0), "1.5M");
        assert_eq!(signed_pct(-0.0001), "0.0 %");
        assert_eq!(signed_pct(57_801.137), "+5,780,113.7 %");
        assert_eq!(count(1, "asset"), "1 asset");
        assert_eq!(thousands(-1_234_567.891, 2), "-1,234,567.89");
        assert_eq!(pct_tick(-0.1, 0.05), "-10 %");
        let t = x_ticks(day(date(2015, 1, 1)), day(date(2024, 12, 31)));
        assert_eq!(t.len(), 10);
        assert_eq!(t[0].1, "2015");
        let t = x_ticks(day(date(1880, 1, 1)), day(date(2033, 5, 1)));
        assert!(t.len() <= 10 && t.len() >= 4, "{t:?}");
    }
}
