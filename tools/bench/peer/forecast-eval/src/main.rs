//! `peer-forecast-eval OUT.json [PRICES_DIR]` or
//! `peer-forecast-eval OUT.json --rows ROWS.json [--lag N]`: evaluates
//! interval-forecast rows with `forecast_domain::evaluation::evaluate` and
//! writes the rows, the lag and every figure of the `Evaluation` as JSON,
//! for tools/bench/peer/forecast_eval.py to recompute with the reference
//! packages.
//!
//! `ROWS.json` is either a JSON array of rows (the `EvalRow` fields, `month`
//! an integer; `--lag` then required) or `{"lag": N, "rows": [...]}`.
//!
//! Without `--rows` the rows are built deterministically from the real
//! histories of PRICES_DIR (default data/prices), horizon h = 90 calendar
//! days, lag ⌈90/30⌉ = 3. For each file, sorted by name, each month-end
//! (the last row of a calendar month, with a later row in another month and
//! at least 300 rows before it) gets:
//! - the climatology: the forward 90-day simple returns close[e]/close[s] − 1
//!   (e the first row at least 90 days after s) of every start row s whose
//!   end row e is at or before the month-end; their mean, sd (ddof 1) and
//!   p10/p90 (linear interpolation, numpy's default);
//! - central = 0.5·clim_mean + 0.5·(mean of every file's clim_mean at that
//!   month), p10/p90 = central − (clim_mean − clim_p10), central +
//!   (clim_p90 − clim_mean);
//! - realised = the forward 90-day return from the month-end, when it exists
//!   (rows without one are not evaluated).
//!
//! These are test rows for the check only: the point is that both sides
//! compute on the same rows.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use forecast_domain::evaluation::{evaluate, EvalRow, Evaluation};
use serde::Serialize;

const HORIZON_DAYS: i32 = 90;
const MIN_ROWS_BEFORE: usize = 300;

#[derive(Serialize)]
struct Output<'a> {
    source: String,
    horizon_days: Option<i32>,
    lag: usize,
    /// Evaluated rows per price file (empty with `--rows`).
    assets: Vec<(String, usize)>,
    seconds: f64,
    rows: &'a [EvalRow],
    evaluation: Evaluation,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: peer-forecast-eval OUT.json [PRICES_DIR | --rows ROWS.json [--lag N]]";
    let out_path = args.first().expect(usage).clone();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .map(|i| args.get(i + 1).expect(usage).clone())
    };
    let lag_flag = flag("--lag").map(|l| l.parse::<usize>().expect("--lag N: an integer"));
    let (source, rows, lag, horizon, assets) = match flag("--rows") {
        Some(path) => {
            let (rows, lag) = read_rows(&path, lag_flag);
            (path, rows, lag, None, Vec::new())
        }
        None => {
            let dir = args.get(1).cloned().unwrap_or_else(|| "data/prices".into());
            let (rows, assets) = rows_from_prices(Path::new(&dir));
            let lag = lag_flag.unwrap_or((HORIZON_DAYS as usize).div_ceil(30));
            (dir, rows, lag, Some(HORIZON_DAYS), assets)
        }
    };
    let started = Instant::now();
    let evaluation = evaluate(&rows, lag).unwrap_or_else(|e| panic!("evaluate: {e}"));
    let seconds = started.elapsed().as_secs_f64();
    let output = Output {
        source,
        horizon_days: horizon,
        lag,
        assets,
        seconds,
        rows: &rows,
        evaluation,
    };
    let json = serde_json::to_string(&output).expect("serialisable");
    std::fs::write(&out_path, json).unwrap_or_else(|e| panic!("{out_path}: {e}"));
    eprintln!(
        "peer-forecast-eval: {} rows, {} months, lag {}: {:.2} ms -> {out_path}",
        output.evaluation.rows,
        output.evaluation.months,
        lag,
        seconds * 1e3
    );
}

/// A rows file: a bare array (lag from `--lag`) or `{"lag": N, "rows": [...]}`.
fn read_rows(path: &str, lag_flag: Option<usize>) -> (Vec<EvalRow>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let value: serde_json::Value = serde_json::from_str(&text).expect("rows: JSON");
    let (rows, lag) = match value {
        serde_json::Value::Array(_) => (value, None),
        serde_json::Value::Object(mut o) => {
            let lag = o.get("lag").and_then(|l| l.as_u64()).map(|l| l as usize);
            (o.remove("rows").expect("rows: a \"rows\" array"), lag)
        }
        _ => panic!("rows: an array or an object"),
    };
    let rows: Vec<EvalRow> = serde_json::from_value(rows).expect("rows: EvalRow fields");
    let lag = lag_flag
        .or(lag)
        .expect("the lag: --lag N or \"lag\" in the file");
    (rows, lag)
}

/// One price file: day numbers, month indices (year·12 + month − 1), closes.
struct History {
    days: Vec<i64>,
    months: Vec<i32>,
    closes: Vec<f64>,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Reads `date,…,close,…` (any column order; a BOM or CR tolerated).
fn read_history(path: &Path) -> History {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("a header")
        .trim_start_matches('\u{feff}')
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let (date_col, close_col) = (
        col("date").expect("a date column"),
        col("close").expect("a close column"),
    );
    let mut h = History {
        days: Vec::new(),
        months: Vec::new(),
        closes: Vec::new(),
    };
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let date: Vec<i64> = fields[date_col]
            .split('-')
            .map(|p| {
                p.parse()
                    .unwrap_or_else(|_| panic!("{path:?}: date {line}"))
            })
            .collect();
        let close: f64 = fields[close_col]
            .parse()
            .unwrap_or_else(|_| panic!("{path:?}: close {line}"));
        let days = days_from_civil(date[0], date[1], date[2]);
        assert!(
            h.days.last().is_none_or(|&d| d < days),
            "{path:?}: dates must increase"
        );
        h.days.push(days);
        h.months.push((date[0] * 12 + date[1] - 1) as i32);
        h.closes.push(close);
    }
    h
}

/// numpy's default ("linear") quantile of sorted data.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = (sorted.len() - 1) as f64 * q;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let (a, b, t) = (sorted[lo], sorted[hi], pos - lo as f64);
    // numpy's _lerp: from the nearer end.
    if t >= 0.5 {
        b - (b - a) * (1.0 - t)
    } else {
        a + (b - a) * t
    }
}

/// A month-end of one asset: its month, climatology and realised return.
struct MonthEnd {
    month: i32,
    mean: f64,
    sd: f64,
    p10: f64,
    p90: f64,
    realised: Option<f64>,
}

/// The month-ends of one history with their climatology (see the top).
fn month_ends(h: &History) -> Vec<MonthEnd> {
    let n = h.days.len();
    // end[s]: the first row at least HORIZON_DAYS after s (monotone in s).
    let mut e = 0;
    let end: Vec<Option<usize>> = h
        .days
        .iter()
        .map(|&start| {
            while e < n && h.days[e] < start + HORIZON_DAYS as i64 {
                e += 1;
            }
            (e < n).then_some(e)
        })
        .collect();
    let fwd = |s: usize| end[s].map(|e| h.closes[e] / h.closes[s] - 1.0);
    let (mut included, mut sorted, mut out) = (0, Vec::<f64>::new(), Vec::new());
    for i in MIN_ROWS_BEFORE..n.saturating_sub(1) {
        // Start rows whose end row is at or before i: a prefix, grown here.
        while included < n && end[included].is_some_and(|e| e <= i) {
            let r = fwd(included).expect("has an end");
            let at = sorted.partition_point(|&x| x < r);
            sorted.insert(at, r);
            included += 1;
        }
        if h.months[i + 1] == h.months[i] || included < 2 {
            continue;
        }
        let k = included as f64;
        let mean = (0..included)
            .map(|s| fwd(s).expect("included"))
            .sum::<f64>()
            / k;
        let ss: f64 = (0..included)
            .map(|s| (fwd(s).expect("included") - mean).powi(2))
            .sum();
        out.push(MonthEnd {
            month: h.months[i],
            mean,
            sd: (ss / (k - 1.0)).sqrt(),
            p10: quantile(&sorted, 0.1),
            p90: quantile(&sorted, 0.9),
            realised: fwd(i),
        });
    }
    out
}

/// The evaluated rows of every CSV of `dir` (files by name, then month).
fn rows_from_prices(dir: &Path) -> (Vec<EvalRow>, Vec<(String, usize)>) {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir:?}: {e}"))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    files.sort();
    let per_file: Vec<(String, Vec<MonthEnd>)> = files
        .iter()
        .map(|p| {
            let name = p
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            (name, month_ends(&read_history(p)))
        })
        .collect();
    // Pooled mean of the files' climatology means per month, in file order.
    let mut pooled: BTreeMap<i32, (f64, usize)> = BTreeMap::new();
    for m in per_file.iter().flat_map(|(_, ms)| ms) {
        let p = pooled.entry(m.month).or_insert((0.0, 0));
        p.0 += m.mean;
        p.1 += 1;
    }
    let mut rows = Vec::new();
    let mut assets = Vec::new();
    for (name, ms) in &per_file {
        let before = rows.len();
        for m in ms {
            let Some(realised) = m.realised else { continue };
            if m.p90 <= m.p10 {
                continue;
            }
            let (sum, count) = pooled[&m.month];
            let central = 0.5 * m.mean + 0.5 * (sum / count as f64);
            rows.push(EvalRow {
                month: m.month,
                central,
                p10: central - (m.mean - m.p10),
                p90: central + (m.p90 - m.mean),
                clim_mean: m.mean,
                clim_sd: m.sd,
                clim_p10: m.p10,
                clim_p90: m.p90,
                realised,
            });
        }
        assets.push((name.clone(), rows.len() - before));
    }
    (rows, assets)
}
