//! Runs a [`Strategy`] natively over CSV price files, through the same
//! accounting the server uses (`forecast_backtest::run`), so that a
//! strategy is tested with `cargo test` before it is built to Wasm.
//!
//! What the harness does is what the server does for `POST /api/backtest`:
//!
//! * each asset's signals come from the engine's walk-forward over its whole
//!   history (`return_period`, `num_segments`, `decay_factor` and `metric`
//!   from the [`RunParams`]; 365 periods per year when that history has any
//!   weekend date, else 252), so the values a strategy sees are the
//!   server's to the bit;
//! * the request fields' bounds are the server's (e.g. `top_n` 1..=500,
//!   `return_period` 7..=365, `zscore_entry` in (0, 10]), refused with the
//!   field's name;
//! * an asset with fewer than 300 rows never enters the universe;
//! * trading costs per side follow the asset's category
//!   ([`cost_bps`](crate::cost_bps));
//! * the window defaults to the 10 years up to the latest date of the
//!   assets (the same calendar day 10 years earlier; 29 February becomes
//!   28 February).
//!
//! ```no_run
//! # use forecast_sdk::prelude::*;
//! # struct MyStrategy;
//! # impl Strategy for MyStrategy {
//! #     const NAME: &'static str = "mine"; const VERSION: &'static str = "0.1.0";
//! #     const DESCRIPTION: &'static str = "";
//! #     fn start(_: &[AssetMeta], _: &RunParams) -> Result<Self, ParamError> { Ok(MyStrategy) }
//! #     fn rebalance(&mut self, _: &Context) -> Result<Vec<Target>, String> { Ok(vec![]) }
//! # }
//! use forecast_sdk::harness::{summary, Harness};
//!
//! # fn main() -> Result<(), forecast_sdk::harness::HarnessError> {
//! let harness = Harness::from_csv_dir("data", "Indices")?.start_date("2016-01-01")?;
//! let params = RunParams { top_n: 2, ..RunParams::default() };
//! let report = harness.run::<MyStrategy>(&params)?;
//! println!("{}", summary(&report));
//! # Ok(())
//! # }
//! ```

mod csv;

use std::fmt;
use std::path::{Path, PathBuf};

use forecast_backtest::{AssetInput, RunError, Signals, Window};
use forecast_engine::{EngineError, Params};

use crate::date::{format_date, parse_date, years_before};
use crate::{AssetMeta, Context, ParamError, Report, RunParams, Strategy, Target};

/// Why the harness could not load data or finish a run.
#[derive(Debug)]
pub enum HarnessError {
    /// A file or folder could not be read.
    Io {
        /// The path as given.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A line of a CSV file is invalid.
    Csv {
        /// The file as given.
        file: String,
        /// 1-based line number; the header is line 1.
        line: usize,
        /// What is wrong with the line.
        message: String,
    },
    /// A file or folder as a whole is unusable (empty, no data rows, no CSV
    /// file in a folder).
    File {
        /// The file or folder as given.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// Two assets with the same ticker.
    DuplicateTicker(String),
    /// The engine refused an asset's data.
    Engine {
        /// The asset.
        ticker: String,
        /// The engine's message.
        message: String,
    },
    /// No asset has 300 rows of history by the end of the window and a row
    /// inside it.
    EmptyUniverse,
    /// A parameter the server or the strategy refuses (a 400 there); the
    /// field names the request field, e.g. `top_n` or `start_date`.
    Param(ParamError),
    /// The strategy's `rebalance` answered an error (a 500 there).
    Strategy(String),
    /// The strategy answered targets the contract forbids (a 500 there).
    Contract(String),
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HarnessError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            HarnessError::Csv {
                file,
                line,
                message,
            } => write!(f, "{file} line {line}: {message}"),
            HarnessError::File { file, message } => write!(f, "{file}: {message}"),
            HarnessError::DuplicateTicker(t) => write!(f, "ticker '{t}' is loaded twice"),
            HarnessError::Engine { ticker, message } => {
                write!(f, "engine refused {ticker}: {message}")
            }
            HarnessError::EmptyUniverse => write!(
                f,
                "empty universe: no asset has {} rows of history by the end of the window and a row inside it",
                crate::MIN_HISTORY
            ),
            HarnessError::Param(e) => write!(f, "parameter refused: {e}"),
            HarnessError::Strategy(m) => write!(f, "strategy failed: {m}"),
            HarnessError::Contract(m) => write!(f, "strategy broke the contract: {m}"),
        }
    }
}

impl std::error::Error for HarnessError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HarnessError::Io { source, .. } => Some(source),
            HarnessError::Param(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ParamError> for HarnessError {
    fn from(e: ParamError) -> Self {
        HarnessError::Param(e)
    }
}

/// One asset's price history.
#[derive(Debug, Clone)]
struct Asset {
    meta: AssetMeta,
    dates: Vec<i32>,
    closes: Vec<f64>,
}

/// A universe of assets loaded from CSV files and an optional window; runs
/// strategies over them.
#[derive(Debug, Clone, Default)]
pub struct Harness {
    assets: Vec<Asset>,
    start: Option<i32>,
    end: Option<i32>,
}

impl Harness {
    /// No assets, the default window.
    pub fn new() -> Self {
        Harness::default()
    }

    /// Adds the asset `ticker` of `category` (e.g. `Indices`, `Crypto`,
    /// `US Stocks`: it sets the trading cost) from a CSV file with a
    /// `date,close` header (optional `open`, `high`, `low`, `volume`
    /// columns, any order; rows in any date order). Assets keep the order
    /// they are added in; it is the universe order strategies see.
    pub fn asset_csv(
        mut self,
        ticker: &str,
        category: &str,
        path: impl AsRef<Path>,
    ) -> Result<Self, HarnessError> {
        let path = path.as_ref();
        if self.assets.iter().any(|a| a.meta.ticker == ticker) {
            return Err(HarnessError::DuplicateTicker(ticker.to_string()));
        }
        let text = std::fs::read_to_string(path).map_err(|source| HarnessError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let (dates, closes) = csv::parse(&path.display().to_string(), &text)?;
        self.assets.push(Asset {
            meta: AssetMeta {
                ticker: ticker.to_string(),
                name: ticker.to_string(),
                category: category.to_string(),
            },
            dates,
            closes,
        });
        Ok(self)
    }

    /// Every `*.csv` file directly in `dir` (hidden files skipped), sorted by
    /// file name, each an asset of `category` whose ticker is the file name
    /// without `.csv` (`BTC-USD.csv` → `BTC-USD`).
    pub fn from_csv_dir(dir: impl AsRef<Path>, category: &str) -> Result<Self, HarnessError> {
        let dir = dir.as_ref();
        let io_error = |source| HarnessError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut files: Vec<(PathBuf, String)> = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io_error)? {
            let path = entry.map_err(io_error)?.path();
            let is_csv = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
            let ticker = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if is_csv && path.is_file() && !ticker.is_empty() && !ticker.starts_with('.') {
                let ticker = ticker.to_string();
                files.push((path, ticker));
            }
        }
        if files.is_empty() {
            return Err(HarnessError::File {
                file: dir.display().to_string(),
                message: "no .csv file in the folder".to_string(),
            });
        }
        files.sort();
        files
            .into_iter()
            .try_fold(Harness::new(), |h, (path, ticker)| {
                h.asset_csv(&ticker, category, path)
            })
    }

    /// First date of the window, `YYYY-MM-DD` (default: 10 years before the
    /// end).
    pub fn start_date(mut self, date: &str) -> Result<Self, HarnessError> {
        self.start = Some(window_date("start_date", date)?);
        Ok(self)
    }

    /// Last date of the window, `YYYY-MM-DD` (default: the latest date of
    /// the assets).
    pub fn end_date(mut self, date: &str) -> Result<Self, HarnessError> {
        self.end = Some(window_date("end_date", date)?);
        Ok(self)
    }

    /// The tickers, in universe order before the 300-row rule.
    pub fn tickers(&self) -> Vec<&str> {
        self.assets.iter().map(|a| a.meta.ticker.as_str()).collect()
    }

    /// The assets of a `report` of this harness in the order its indexes
    /// refer to: `universe(&report)[trade.asset]` is the asset of a trade,
    /// and the same index is `AssetState::asset` in a context.
    pub fn universe(&self, report: &Report) -> Vec<&AssetMeta> {
        report
            .universe
            .iter()
            .map(|&i| &self.assets[i].meta)
            .collect()
    }

    /// The window a run would use: `(start, end)` in days since 1970-01-01.
    /// `None` without assets.
    pub fn window(&self) -> Option<(i32, i32)> {
        let end = match self.end {
            Some(end) => end,
            None => self
                .assets
                .iter()
                .filter_map(|a| a.dates.last())
                .max()
                .copied()?,
        };
        Some((self.start.unwrap_or_else(|| years_before(end, 10)), end))
    }

    /// Runs `S` with `params` and returns the run's report (equity curve,
    /// trades, metrics, benchmarks). Errors mirror the server's answers: a
    /// refused parameter is a 400 there, a strategy error or contract
    /// violation a 500.
    pub fn run<S: Strategy>(&self, params: &RunParams) -> Result<Report, HarnessError> {
        check_params(params)?;
        let (start, end) = self.window().ok_or(HarnessError::EmptyUniverse)?;
        if start > end {
            return Err(ParamError::new(
                "start_date",
                format!(
                    "start_date {} is after end_date {}",
                    format_date(start),
                    format_date(end)
                ),
            )
            .into());
        }
        let signals = self
            .assets
            .iter()
            .map(|a| signals(a, params))
            .collect::<Result<Vec<Signals>, HarnessError>>()?;
        // Every asset is an input, so the report's indexes are this
        // harness's; one without signals (under 300 rows) never enters.
        let inputs: Vec<AssetInput<'_>> = self
            .assets
            .iter()
            .zip(&signals)
            .map(|(a, s)| AssetInput {
                meta: &a.meta,
                cost_bps: crate::cost_bps(&a.meta.category),
                dates: &a.dates,
                closes: &a.closes,
                signals: s,
            })
            .collect();
        let mut adapter = Adapter::<S>(None);
        forecast_backtest::run(
            &inputs,
            Window { start, end },
            params,
            &mut adapter,
            &mut || false,
        )
        .map_err(|e| match e {
            RunError::EmptyUniverse => HarnessError::EmptyUniverse,
            RunError::Param(e) => HarnessError::Param(e),
            RunError::Strategy(m) => HarnessError::Strategy(m),
            RunError::Contract(m) => HarnessError::Contract(m),
            RunError::Cancelled => HarnessError::Strategy("run cancelled".to_string()),
        })
    }
}

/// A `YYYY-MM-DD` date of the window, refused with its field.
fn window_date(field: &str, date: &str) -> Result<i32, HarnessError> {
    parse_date(date).ok_or_else(|| {
        ParamError::new(
            field,
            format!("{field} '{date}' is not a valid YYYY-MM-DD date"),
        )
        .into()
    })
}

/// The bounds the server puts on a request's fields (a 400 naming the
/// field there), so that a strategy is never tested with values it could
/// not receive.
fn check_params(p: &RunParams) -> Result<(), HarnessError> {
    p.validate().map_err(HarnessError::from)
}

/// The engine's walk-forward over an asset's whole history, as the server
/// computes it; empty when the asset has fewer rows than the engine needs.
fn signals(a: &Asset, p: &RunParams) -> Result<Signals, HarnessError> {
    let params = Params {
        return_period: p.return_period,
        num_segments: p.num_segments,
        decay_factor: p.decay_factor,
        metric: p.metric,
        periods_per_year: Some(forecast_engine::infer_periods_per_year(&a.dates)),
    };
    match forecast_engine::walk_forward(&a.dates, &a.closes, &params) {
        Ok(w) => Ok(Signals::from(w)),
        Err(EngineError::InsufficientData { .. }) => Ok(Signals::default()),
        Err(EngineError::InvalidInput(message)) => Err(HarnessError::Engine {
            ticker: a.meta.ticker.clone(),
            message,
        }),
    }
}

/// Drives an author's [`Strategy`] as the accounting expects.
struct Adapter<S>(Option<S>);

impl<S: Strategy> forecast_backtest::Strategy for Adapter<S> {
    type Error = String;

    fn start(
        &mut self,
        universe: &[AssetMeta],
        params: &RunParams,
    ) -> Result<Result<(), ParamError>, String> {
        Ok(S::start(universe, params).map(|s| self.0 = Some(s)))
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        match self.0.as_mut() {
            Some(s) => s.rebalance(ctx),
            None => Err("rebalance called before start".to_string()),
        }
    }
}

/// A one-paragraph summary of a report, for printing: the window, total
/// return, CAGR, Sharpe and Sortino ratios, maximum drawdown, trades and
/// costs.
pub fn summary(report: &Report) -> String {
    let m = &report.metrics;
    let pct = |x: Option<f64>| x.map_or("n/a".to_string(), |x| format!("{:+.2} %", 100.0 * x));
    let ratio = |x: Option<f64>| x.map_or("n/a".to_string(), |x| format!("{x:.2}"));
    let (first, last) = match (report.dates.first(), report.dates.last()) {
        (Some(&a), Some(&b)) => (format_date(a), format_date(b)),
        _ => ("?".to_string(), "?".to_string()),
    };
    format!(
        "{first} to {last} ({:.1} years, {} assets, {} rebalance dates): \
         total return {}, CAGR {}, Sharpe {}, Sortino {}, max drawdown {}, \
         {} trades, costs {:.2} ({:.2} % of capital), final equity {:.2}",
        m.years,
        report.universe.len(),
        report.rebalance_dates,
        pct(m.total_return),
        pct(m.cagr),
        ratio(m.sharpe_ratio),
        ratio(m.sortino_ratio),
        pct(m.max_drawdown),
        m.total_trades,
        m.total_costs,
        m.cost_drag_pct,
        m.final_equity,
    )
}

#[cfg(test)]
mod tests;
