//! The harness over CSV fixtures written into a temporary folder.

use std::path::PathBuf;

use super::*;
use crate::date::format_date;
use crate::{equal_weights, rank_by};

/// A temporary folder removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "forecast-sdk-harness-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A deterministic price walk written as CSV: `rows` rows from 2015-01-05,
/// every day or weekdays only, with a slow cycle so drawdowns vary.
fn write_prices(path: &Path, seed: u64, rows: usize, every_day: bool, extra_columns: bool) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::from(if extra_columns {
        "date,open,high,low,close,volume\n"
    } else {
        "date,close\n"
    });
    let mut day = parse_date("2015-01-05").unwrap();
    let mut price = 100.0;
    for i in 0..rows {
        if !every_day {
            while forecast_engine::is_weekend(day) {
                day += 1;
            }
        }
        let cycle = (i as f64 / 90.0).sin() * 0.004;
        price *= 1.0 + cycle + (next() - 0.5) * 0.03;
        if extra_columns {
            text.push_str(&format!(
                "{},{:.4},{:.4},{:.4},{price},{}\n",
                format_date(day),
                price * 0.99,
                price * 1.01,
                price * 0.98,
                1000 + i
            ));
        } else {
            text.push_str(&format!("{},{price}\n", format_date(day)));
        }
        day += 1;
    }
    std::fs::write(path, text).unwrap();
}

/// Three tradeable assets (one trading every day) and one too short.
fn fixtures(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    write_prices(&dir.path("AAA.csv"), 1, 1_600, false, true);
    write_prices(&dir.path("BBB.csv"), 2, 1_500, false, false);
    write_prices(&dir.path("CCC.csv"), 3, 2_000, true, false);
    write_prices(&dir.path("SHORT.csv"), 4, 250, false, false);
    dir
}

/// Equal weight in the best `top_n` by median prediction, whatever its sign.
struct Best {
    top_n: u32,
}

impl Strategy for Best {
    const NAME: &'static str = "best";
    const VERSION: &'static str = "0.1.0";
    const DESCRIPTION: &'static str = "Test strategy.";

    fn start(universe: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        assert!(universe.iter().all(|a| a.ticker != "SHORT"));
        Ok(Best {
            top_n: params.top_n,
        })
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        Ok(equal_weights(
            rank_by(&ctx.assets, |a| a.median_return),
            self.top_n,
        ))
    }
}

fn params(top_n: u32) -> RunParams {
    RunParams {
        top_n,
        ..RunParams::default()
    }
}

#[test]
fn a_run_over_csv_files_trades_and_starts_at_the_capital() {
    let dir = fixtures("run");
    let h = Harness::from_csv_dir(&dir.0, "Indices").unwrap();
    assert_eq!(h.tickers(), ["AAA", "BBB", "CCC", "SHORT"]);
    let report = h.run::<Best>(&params(2)).unwrap();

    assert_eq!(report.equity[0], 100_000.0);
    assert!(report.equity.iter().all(|e| e.is_finite() && *e > 0.0));
    assert_eq!(report.equity.len(), report.dates.len());
    assert!(report.rebalance_dates > 10);
    assert!(!report.trades.is_empty());
    let universe = h.universe(&report);
    let tickers: Vec<&str> = universe.iter().map(|a| a.ticker.as_str()).collect();
    assert_eq!(tickers, ["AAA", "BBB", "CCC"], "SHORT has under 300 rows");
    assert!(report.trades.iter().all(|t| t.asset < universe.len()));
    // Costs at 5 bps (Indices) were charged.
    assert!(report.metrics.total_costs > 0.0);
    let t = &report.trades[0];
    assert!((t.cost - t.qty * t.price * 5.0 / 10_000.0).abs() < 1e-9);
    // CCC trades on weekends: the calendar has 365 periods per year.
    assert_eq!(report.periods_per_year, 365);

    let s = summary(&report);
    assert!(s.contains("total return") && s.contains("trades"), "{s}");
}

#[test]
fn the_default_window_is_ten_years_to_the_latest_date() {
    let dir = fixtures("window");
    let h = Harness::new()
        .asset_csv("AAA", "Crypto", dir.path("AAA.csv"))
        .unwrap();
    let (start, end) = h.window().unwrap();
    let last = *h.assets[0].dates.last().unwrap();
    assert_eq!(end, last);
    assert_eq!(start, years_before(last, 10));

    let h = h
        .start_date("2017-01-02")
        .unwrap()
        .end_date("2019-12-31")
        .unwrap();
    let report = h.run::<Best>(&params(1)).unwrap();
    assert_eq!(format_date(report.dates[0]), "2017-01-02");
    assert!(*report.dates.last().unwrap() <= parse_date("2019-12-31").unwrap());
    // Crypto costs 15 bps per side.
    let t = &report.trades[0];
    assert!((t.cost - t.qty * t.price * 15.0 / 10_000.0).abs() < 1e-9);
}

/// Records what it saw, in a thread-local (each test has its own thread).
struct Recorder;

thread_local! {
    static SEEN: std::cell::RefCell<Vec<Context>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Strategy for Recorder {
    const NAME: &'static str = "recorder";
    const VERSION: &'static str = "0.1.0";
    const DESCRIPTION: &'static str = "Records contexts.";

    fn start(_: &[AssetMeta], _: &RunParams) -> Result<Self, ParamError> {
        Ok(Recorder)
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        SEEN.with_borrow_mut(|s| s.push(ctx.clone()));
        Ok(Vec::new())
    }
}

#[test]
fn signals_are_the_engines_walk_forward_over_the_whole_history() {
    let dir = fixtures("signals");
    let h = Harness::from_csv_dir(&dir.0, "Crypto").unwrap();
    let p = RunParams {
        top_n: 1,
        return_period: 30,
        num_segments: 12,
        decay_factor: 0.9,
        metric: crate::Metric::Sharpe,
        ..RunParams::default()
    };
    let report = h.run::<Recorder>(&p).unwrap();
    assert!(report.trades.is_empty());
    let seen = SEEN.with_borrow(|s| s.clone());
    assert_eq!(seen.len() as u32, report.rebalance_dates);
    let universe = h.universe(&report);
    for (k, asset) in universe.iter().enumerate() {
        let a = h
            .assets
            .iter()
            .find(|x| x.meta.ticker == asset.ticker)
            .unwrap();
        let expected = forecast_engine::walk_forward(
            &a.dates,
            &a.closes,
            &Params {
                return_period: 30,
                num_segments: 12,
                decay_factor: 0.9,
                metric: crate::Metric::Sharpe,
                periods_per_year: Some(if a.meta.ticker == "CCC" { 365 } else { 252 }),
            },
        )
        .unwrap();
        let mut checked = 0;
        for ctx in &seen {
            let Some(state) = ctx.assets.iter().find(|s| s.asset as usize == k) else {
                continue;
            };
            let row = a.dates.partition_point(|&d| d <= ctx.date) - 1;
            assert_eq!(
                state.median_return.to_bits(),
                expected.median_returns[row].to_bits()
            );
            assert_eq!(state.drawdown.to_bits(), expected.drawdowns[row].to_bits());
            checked += 1;
        }
        assert!(checked > 10, "{}", asset.ticker);
    }
}

/// Refuses a `zscore_exit` above 5; with `top_n` 1 answers a gross
/// exposure of 1.5, with 2 an error.
struct Refuses(u32);

impl Strategy for Refuses {
    const NAME: &'static str = "refuses";
    const VERSION: &'static str = "0.1.0";
    const DESCRIPTION: &'static str = "Refuses or fails on demand.";

    fn start(_: &[AssetMeta], params: &RunParams) -> Result<Self, ParamError> {
        if params.zscore_exit > 5.0 {
            return Err(ParamError::new("zscore_exit", "must be at most 5"));
        }
        Ok(Refuses(params.top_n))
    }

    fn rebalance(&mut self, ctx: &Context) -> Result<Vec<Target>, String> {
        match (self.0, ctx.assets.first()) {
            (2, _) => Err("nothing to trade".to_string()),
            (_, Some(a)) => Ok(vec![Target {
                asset: a.asset,
                weight: 1.5,
            }]),
            (_, None) => Ok(Vec::new()),
        }
    }
}

#[test]
fn refusals_failures_and_contract_violations_are_reported() {
    let dir = fixtures("errors");
    let h = Harness::from_csv_dir(&dir.0, "Indices").unwrap();

    let err = h
        .run::<Best>(&RunParams {
            return_period: 3,
            ..params(1)
        })
        .unwrap_err();
    assert!(
        matches!(&err, HarnessError::Param(e) if e.field == "return_period"),
        "{err}"
    );
    let err = h.run::<Best>(&params(4)).unwrap_err();
    assert!(
        matches!(&err, HarnessError::Param(e) if e.field == "top_n"),
        "{err}"
    );
    let err = h
        .run::<Refuses>(&RunParams {
            zscore_exit: 6.0,
            ..params(1)
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "parameter refused: zscore_exit: must be at most 5"
    );
    // The server's own bounds come first, in its words.
    let err = h
        .run::<Refuses>(&RunParams {
            zscore_entry: -1.0,
            ..params(1)
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "parameter refused: zscore_entry: zscore_entry must be a number greater than 0 \
         and at most 10 (got -1)"
    );
    let err = h.run::<Refuses>(&params(1)).unwrap_err();
    assert!(
        matches!(&err, HarnessError::Contract(m) if m.contains("gross exposure")),
        "{err}"
    );
    let err = h.run::<Refuses>(&params(2)).unwrap_err();
    assert_eq!(err.to_string(), "strategy failed: nothing to trade");

    let late = h.clone().start_date("2030-01-01").unwrap();
    let err = late.run::<Best>(&params(1)).unwrap_err();
    assert!(
        matches!(&err, HarnessError::Param(e) if e.field == "start_date"),
        "{err}"
    );
    let err = Harness::new().start_date("2024-02-30").unwrap_err();
    assert!(
        matches!(&err, HarnessError::Param(e) if e.field == "start_date"),
        "{err}"
    );

    let short = Harness::new()
        .asset_csv("SHORT", "Indices", dir.path("SHORT.csv"))
        .unwrap();
    assert!(matches!(
        short.run::<Best>(&params(1)),
        Err(HarnessError::EmptyUniverse)
    ));
    assert!(matches!(
        Harness::new().run::<Best>(&params(1)),
        Err(HarnessError::EmptyUniverse)
    ));
}

#[test]
fn loading_errors_name_the_file() {
    let dir = TempDir::new("load");
    std::fs::write(
        dir.path("BAD.csv"),
        "date,close\n2024-01-02,1\n2024-01-03,-2\n",
    )
    .unwrap();
    let err = Harness::from_csv_dir(&dir.0, "Indices").unwrap_err();
    let path = dir.path("BAD.csv").display().to_string();
    assert_eq!(
        err.to_string(),
        format!("{path} line 3: close '-2' must be greater than 0")
    );
    assert!(matches!(err, HarnessError::Csv { line: 3, .. }));

    std::fs::write(dir.path("BAD.csv"), "date,price\n2024-01-02,1\n").unwrap();
    let err = Harness::new()
        .asset_csv("BAD", "Indices", dir.path("BAD.csv"))
        .unwrap_err();
    assert!(
        err.to_string().contains("header has no 'close' column"),
        "{err}"
    );

    let err = Harness::new()
        .asset_csv("NONE", "Indices", dir.path("missing.csv"))
        .unwrap_err();
    assert!(matches!(err, HarnessError::Io { .. }), "{err}");
    assert!(std::error::Error::source(&err).is_some());

    std::fs::write(dir.path("OK.csv"), "date,close\n2024-01-02,1\n").unwrap();
    let err = Harness::new()
        .asset_csv("X", "Indices", dir.path("OK.csv"))
        .unwrap()
        .asset_csv("X", "Indices", dir.path("OK.csv"))
        .unwrap_err();
    assert_eq!(err.to_string(), "ticker 'X' is loaded twice");

    let empty = TempDir::new("empty");
    let err = Harness::from_csv_dir(&empty.0, "Indices").unwrap_err();
    assert!(
        err.to_string().ends_with("no .csv file in the folder"),
        "{err}"
    );
}
