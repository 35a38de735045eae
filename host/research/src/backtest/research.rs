//! The parameter sweep and the walk-forward (issue 29): a batch of runs,
//! one per combination, shaped as a grid of metrics or as train/test
//! splits with a stitched out-of-sample curve.

use chrono::{Months, NaiveDate};
use forecast_api::backtest::{EquityPoint, MetricsBody};
use forecast_api::research::{
    RankBy, ResearchMetadata, Split, SplitMetrics, SplitMode, SplitParams, SweepResponse, SweepRow,
    ValidSweep, WalkForwardResponse,
};
use forecast_backtest::walkforward::{self, Figures, SplitRows};
use forecast_domain::series::{from_days, to_days};

use super::batch::{run_batch, Batch};
use super::response::metrics;
use super::BacktestService;
use forecast_services::error::Error;

/// Shortest test split kept, in calendar rows (a month of trading days):
/// the last split ends at the window's end and may be shorter than
/// `test_years`, but not shorter than this.
pub const MIN_TEST_ROWS: usize = 21;

/// Runs every combination of `sweep` over the window, as one batch within
/// the research time limit, each refusal naming its combination.
async fn run_all(
    svc: &BacktestService,
    sweep: &ValidSweep,
    slot: super::UserSlot,
) -> Result<Batch, Error> {
    let requests: Vec<_> = sweep
        .combinations
        .iter()
        .map(|c| c.request.clone())
        .collect();
    run_batch(
        svc,
        &sweep.base,
        &requests,
        &labels(sweep),
        slot,
        svc.limits.research_timeout,
    )
    .await
}

/// Runs every combination of `sweep` and ranks them.
pub(super) async fn sweep(
    svc: &BacktestService,
    sweep: ValidSweep,
    slot: super::UserSlot,
) -> Result<SweepResponse, Error> {
    let batch = run_all(svc, &sweep, slot).await?;
    let metadata = metadata(&batch, &sweep, svc.clock.now());
    let metrics: Vec<MetricsBody> = batch.reports.iter().map(metrics).collect();
    let scores: Vec<Option<f64>> = metrics
        .iter()
        .map(|m| sweep.rank_by.of(&SplitMetrics::from(m)))
        .collect();
    let ranks = ranks(&scores);
    let rows = sweep
        .combinations
        .into_iter()
        .zip(metrics)
        .zip(scores.iter().zip(&ranks))
        .map(|((c, metrics), (&score, &rank))| SweepRow {
            params: c.params,
            cell: c.cell,
            score,
            rank,
            metrics,
        })
        .collect();
    Ok(SweepResponse {
        rank_by: sweep.rank_by,
        axes: sweep.axes,
        rows,
        best: ranks.iter().position(|&r| r == Some(1)),
        metadata,
    })
}

/// Runs every combination of `sweep` over the whole window, then on each
/// split chooses the best on its train rows and applies it to its test
/// rows.
pub(super) async fn walk_forward(
    svc: &BacktestService,
    sweep: ValidSweep,
    split: SplitParams,
    slot: super::UserSlot,
) -> Result<WalkForwardResponse, Error> {
    // The window is known only from the data; an explicit one is checked
    // before any work.
    if let (Some(s), Some(e)) = (sweep.base.start_date, sweep.base.end_date) {
        check_fits(s, e, split)?;
    }
    let batch = run_all(svc, &sweep, slot).await?;
    let metadata = metadata(&batch, &sweep, svc.clock.now());
    let dates = &batch.reports[0].dates;
    if batch.reports.iter().any(|r| r.dates != *dates) {
        return Err(Error::Internal(
            "the combinations of a walk-forward ran on different calendars".into(),
        ));
    }
    check_fits(batch.start, batch.end, split)?;
    let rows = split_rows(dates, split);
    if rows.is_empty() {
        return Err(not_enough(batch.start, batch.end, split));
    }
    let curves: Vec<&[f64]> = batch.reports.iter().map(|r| r.equity.as_slice()).collect();
    let periods = batch.reports[0].periods_per_year;
    let initial = batch.reports[0].equity[0];
    let rank_by = sweep.rank_by;
    let outcome = walkforward::walk_forward(&curves, &rows, periods, initial, |f| {
        rank_by.of(&split_metrics(f))
    });
    let splits = rows
        .iter()
        .zip(&outcome.chosen)
        .zip(outcome.in_sample.iter().zip(&outcome.out_of_sample))
        .map(|((r, &k), (is, oos))| Split {
            train_start: from_days(dates[r.train.0]),
            train_end: from_days(dates[r.train.1]),
            test_start: from_days(dates[r.test.0]),
            test_end: from_days(dates[r.test.1]),
            chosen: sweep.combinations[k].params.clone(),
            in_sample: split_metrics(is),
            out_of_sample: split_metrics(oos),
        })
        .collect();
    let stitched: Vec<f64> = outcome.stitched.iter().map(|p| p.1).collect();
    let in_sample = split_metrics(&walkforward::mean(&outcome.in_sample));
    let out_of_sample = split_metrics(&walkforward::figures(&stitched, periods));
    Ok(WalkForwardResponse {
        mode: split.mode,
        train_years: split.train_years,
        test_years: split.test_years,
        rank_by,
        axes: sweep.axes,
        splits,
        equity_curve: outcome
            .stitched
            .iter()
            .map(|&(row, equity)| EquityPoint {
                date: from_days(dates[row]),
                equity,
            })
            .collect(),
        efficiency: efficiency(rank_by, &in_sample, &out_of_sample),
        in_sample,
        out_of_sample,
        metadata,
    })
}

/// `out / in` of the ranking figure, when both are defined and the
/// in-sample one is positive; for `max_drawdown` (at most 0) `in / out`,
/// so that below 1 still means worse out of sample.
fn efficiency(rank_by: RankBy, is: &SplitMetrics, oos: &SplitMetrics) -> Option<f64> {
    let (i, o) = (rank_by.of(is)?, rank_by.of(oos)?);
    let ratio = match rank_by {
        RankBy::MaxDrawdown if o < 0.0 => i / o,
        RankBy::MaxDrawdown => return None,
        _ if i > 0.0 => o / i,
        _ => return None,
    };
    ratio.is_finite().then_some(ratio)
}

/// The 400 of a window too short for one split.
fn not_enough(start: NaiveDate, end: NaiveDate, split: SplitParams) -> Error {
    Error::Invalid(format!(
        "the window from {start} to {end} is too short for train_years {} plus at least \
         {MIN_TEST_ROWS} rows of a test split; widen start_date/end_date or shorten \
         train_years",
        split.train_years
    ))
}

fn check_fits(start: NaiveDate, end: NaiveDate, split: SplitParams) -> Result<(), Error> {
    match start.checked_add_months(Months::new(12 * split.train_years)) {
        Some(first_test) if first_test < end => Ok(()),
        _ => Err(not_enough(start, end, split)),
    }
}

/// The splits over the run's calendar `dates`: the first test split starts
/// `train_years` after the window's start, each lasts `test_years` (the
/// last ends at the window's end, and is dropped if shorter than
/// [`MIN_TEST_ROWS`]); a rolling train split is the `train_years` before
/// its test split, an expanding one starts at the window's start.
fn split_rows(dates: &[i32], split: SplitParams) -> Vec<SplitRows> {
    let Some(&first) = dates.first() else {
        return Vec::new();
    };
    let start = from_days(first);
    let row_at = |d: NaiveDate| dates.partition_point(|&x| x < to_days(d));
    let years = |d: NaiveDate, y: u32| d.checked_add_months(Months::new(12 * y));
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(test_start) = years(start, split.train_years + k * split.test_years) {
        let a = row_at(test_start);
        if a == 0 || a >= dates.len() {
            break;
        }
        let b = years(test_start, split.test_years)
            .map(|d| row_at(d).saturating_sub(1))
            .unwrap_or(dates.len() - 1)
            .min(dates.len() - 1);
        if b + 1 - a < MIN_TEST_ROWS {
            break;
        }
        let train_from = match split.mode {
            SplitMode::Rolling => row_at(
                test_start
                    .checked_sub_months(Months::new(12 * split.train_years))
                    .unwrap_or(start),
            ),
            SplitMode::Expanding => 0,
        };
        out.push(SplitRows {
            train: (train_from, a - 1),
            test: (a, b),
        });
        k += 1;
    }
    out
}

/// Each combination as its refusals name it: `sweep (top_n=8, …)`, in the
/// axes' order.
fn labels(sweep: &ValidSweep) -> Vec<String> {
    sweep
        .combinations
        .iter()
        .map(|c| {
            let values: Vec<String> = sweep
                .axes
                .iter()
                .map(|a| format!("{}={}", a.name, c.params[&a.name]))
                .collect();
            format!("sweep ({})", values.join(", "))
        })
        .collect()
}

fn split_metrics(f: &Figures) -> SplitMetrics {
    SplitMetrics {
        total_return: f.total_return,
        cagr: f.cagr,
        sharpe_ratio: f.sharpe_ratio,
        sortino_ratio: f.sortino_ratio,
        max_drawdown: f.max_drawdown,
        calmar_ratio: f.calmar_ratio,
    }
}

/// 1 for the highest score, 2 for the next, …; `None` where the score is
/// undefined. Ties keep the combinations' order.
fn ranks(scores: &[Option<f64>]) -> Vec<Option<u32>> {
    let mut order: Vec<usize> = (0..scores.len()).filter(|&i| scores[i].is_some()).collect();
    order.sort_by(|&a, &b| {
        scores[b]
            .partial_cmp(&scores[a])
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let mut out = vec![None; scores.len()];
    for (rank, &i) in order.iter().enumerate() {
        out[i] = Some(rank as u32 + 1);
    }
    out
}

fn metadata(
    batch: &Batch,
    sweep: &ValidSweep,
    calculated_at: chrono::DateTime<chrono::Utc>,
) -> ResearchMetadata {
    ResearchMetadata {
        strategy: match crate::authored::StrategyRef::parse(&sweep.base.strategy) {
            Some(r) => format!("@{}/{}", r.handle, r.name),
            None => batch.strategy.info().name.clone(),
        },
        strategy_version: batch.strategy.info().version.clone(),
        engine_version: batch.engine_version.clone(),
        start_date: batch
            .reports
            .first()
            .and_then(|r| r.dates.first())
            .map_or(batch.start, |&d| from_days(d)),
        end_date: batch
            .reports
            .first()
            .and_then(|r| r.dates.last())
            .map_or(batch.end, |&d| from_days(d)),
        assets_count: batch
            .reports
            .iter()
            .map(|r| r.universe.len())
            .max()
            .unwrap_or(0),
        combinations: batch.reports.len(),
        signal_passes: batch.signal_passes,
        signals_cached: batch.signals_cached,
        periods_per_year: batch.reports.first().map_or(252, |r| r.periods_per_year),
        include_costs: sweep.base.params.include_costs,
        calculated_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calendar(from: &str, years: i32) -> Vec<i32> {
        let start = to_days(NaiveDate::parse_from_str(from, "%Y-%m-%d").unwrap());
        (start..start + 365 * years + years / 4).collect()
    }

    fn params(train: u32, test: u32, mode: SplitMode) -> SplitParams {
        SplitParams {
            train_years: train,
            test_years: test,
            mode,
        }
    }

    #[test]
    fn rolling_splits_tile_the_window_after_the_first_train_years() {
        let dates = calendar("2010-01-01", 10);
        let rows = split_rows(&dates, params(3, 1, SplitMode::Rolling));
        assert_eq!(rows.len(), 7);
        let d = |i: usize| from_days(dates[i]).to_string();
        assert_eq!(d(rows[0].test.0), "2013-01-01");
        assert_eq!(d(rows[0].test.1), "2013-12-31");
        assert_eq!(d(rows[0].train.0), "2010-01-01");
        assert_eq!(d(rows[0].train.1), "2012-12-31");
        assert_eq!(d(rows[1].train.0), "2011-01-01");
        // Contiguous test splits.
        for w in rows.windows(2) {
            assert_eq!(w[0].test.1 + 1, w[1].test.0);
        }
        assert_eq!(rows.last().unwrap().test.1, dates.len() - 1);
    }

    #[test]
    fn expanding_train_splits_start_at_the_window() {
        let dates = calendar("2010-01-01", 6);
        let rows = split_rows(&dates, params(2, 2, SplitMode::Expanding));
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.train.0 == 0));
        assert_eq!(rows[1].train.1 + 1, rows[1].test.0);
    }

    #[test]
    fn a_window_too_short_has_no_split() {
        let dates = calendar("2010-01-01", 3);
        assert!(split_rows(&dates, params(3, 1, SplitMode::Rolling)).is_empty());
        let e = check_fits(
            NaiveDate::from_ymd_opt(2020, 1, 1).unwrap(),
            NaiveDate::from_ymd_opt(2022, 6, 1).unwrap(),
            params(3, 1, SplitMode::Rolling),
        )
        .unwrap_err();
        assert!(e.to_string().contains("too short for train_years 3"), "{e}");
    }

    #[test]
    fn ranks_put_the_highest_first_and_skip_undefined() {
        assert_eq!(
            ranks(&[Some(0.5), None, Some(1.5), Some(0.5)]),
            vec![Some(2), None, Some(1), Some(3)]
        );
    }

    #[test]
    fn efficiency_is_out_over_in() {
        let with = |sharpe: f64, dd: f64| SplitMetrics {
            sharpe_ratio: Some(sharpe),
            max_drawdown: Some(dd),
            ..SplitMetrics::default()
        };
        let e = efficiency(RankBy::SharpeRatio, &with(1.0, -0.1), &with(0.5, -0.2)).unwrap();
        assert!((e - 0.5).abs() < 1e-12);
        let e = efficiency(RankBy::MaxDrawdown, &with(1.0, -0.1), &with(0.5, -0.2)).unwrap();
        assert!((e - 0.5).abs() < 1e-12);
        assert_eq!(
            efficiency(RankBy::SharpeRatio, &with(-1.0, -0.1), &with(0.5, -0.2)),
            None
        );
    }
}
