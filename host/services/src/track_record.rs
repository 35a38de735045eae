//! An asset's grade history (issue 27): the month-ends it is graded at,
//! the return realised after each, and the outcomes per grade letter. The
//! states come from the engine's `evidence.states-at` (one walk, each
//! state equal to a verdict's with `end_date` at that month-end); this
//! module holds only the calendar and the arithmetic around them.

use chrono::Datelike;
use forecast_api::track_record::{GradeOutcome, TrackRecordRow};
use forecast_domain::series::{from_days, PriceSeries};

use crate::analysis::MIN_ROWS;

/// The row indices of the month-ends of `series` that have at least
/// [`MIN_ROWS`] rows up to them: each row whose next row lies in a later
/// month (the last row's month is not over, so it is none).
pub fn month_ends(series: &PriceSeries) -> Vec<u32> {
    let month = |d: i32| {
        let date = from_days(d);
        (date.year(), date.month())
    };
    series
        .dates
        .windows(2)
        .enumerate()
        .filter(|&(t, w)| t + 1 >= MIN_ROWS && month(w[0]) != month(w[1]))
        .map(|(t, _)| t as u32)
        .collect()
}

/// The simple return from row `t` to the first row at least `horizon`
/// calendar days later, if the series reaches it.
pub fn realised_return(series: &PriceSeries, t: usize, horizon: u32) -> Option<f64> {
    let target = series.dates[t] + horizon as i32;
    let j = t + series.dates[t..].partition_point(|&d| d < target);
    (j < series.len()).then(|| series.closes[j] / series.closes[t] - 1.0)
}

/// Per grade letter (in the order of `letters`, then any other in order of
/// appearance), the realised outcomes of the rows that have one.
pub fn by_grade(rows: &[TrackRecordRow], letters: &[&str]) -> Vec<GradeOutcome> {
    let mut order: Vec<String> = letters.iter().map(|l| l.to_string()).collect();
    for r in rows {
        if !order.contains(&r.grade) {
            order.push(r.grade.clone());
        }
    }
    order
        .into_iter()
        .map(|letter| {
            let mut ys: Vec<f64> = rows
                .iter()
                .filter(|r| r.grade == letter)
                .filter_map(|r| r.realised_return)
                .collect();
            ys.sort_unstable_by(f64::total_cmp);
            let n = ys.len();
            let median = match n {
                0 => None,
                _ if n % 2 == 1 => Some(ys[n / 2]),
                _ => Some((ys[n / 2 - 1] + ys[n / 2]) / 2.0),
            };
            GradeOutcome {
                grade: letter,
                count: n as u32,
                mean_realised_return: (n > 0).then(|| ys.iter().sum::<f64>() / n as f64),
                median_realised_return: median,
                hit_rate: (n > 0)
                    .then(|| ys.iter().filter(|&&y| y > 0.0).count() as f64 / n as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use forecast_domain::series::to_days;

    fn series(dates: &[&str], closes: &[f64]) -> PriceSeries {
        PriceSeries {
            dates: dates
                .iter()
                .map(|d| to_days(d.parse().unwrap()))
                .collect(),
            closes: closes.to_vec(),
        }
    }

    #[test]
    fn month_ends_are_last_trading_days_after_enough_rows() {
        // 400 calendar days from 2020-01-01: month-ends from row 299 on.
        let start = to_days("2020-01-01".parse().unwrap());
        let s = PriceSeries {
            dates: (0..400).map(|i| start + i).collect(),
            closes: vec![1.0; 400],
        };
        let ends: Vec<String> = month_ends(&s)
            .iter()
            .map(|&t| from_days(s.dates[t as usize]).to_string())
            .collect();
        // Row 299 is 2020-10-26: the first month-end with 300 rows is
        // October's; the last row (2021-02-03) closes no month.
        assert_eq!(
            ends,
            ["2020-10-31", "2020-11-30", "2020-12-31", "2021-01-31"]
        );
    }

    #[test]
    fn realised_return_waits_for_the_horizon() {
        let s = series(
            &["2024-01-31", "2024-02-01", "2024-03-01", "2024-03-04"],
            &[100.0, 101.0, 110.0, 120.0],
        );
        // 30 days after Jan 31 is Mar 1.
        assert!((realised_return(&s, 0, 30).unwrap() - 0.10).abs() < 1e-12);
        // 33 days after Jan 31 is Mar 4, the last row.
        assert!((realised_return(&s, 0, 33).unwrap() - 0.20).abs() < 1e-12);
        assert_eq!(realised_return(&s, 0, 34), None);
        assert_eq!(realised_return(&s, 3, 7), None);
    }

    #[test]
    fn outcomes_per_letter_skip_rows_without_a_realised_return() {
        let row = |grade: &str, y: Option<f64>| TrackRecordRow {
            date: "2024-01-31".parse().unwrap(),
            grade: grade.into(),
            score: 50.0,
            predicted_median_return: 0.0,
            realised_return: y,
        };
        let rows = [
            row("A", Some(0.1)),
            row("A", Some(-0.2)),
            row("A", Some(0.3)),
            row("C", None),
            row("Z", Some(0.0)),
        ];
        let got = by_grade(&rows, &["A", "B", "C"]);
        assert_eq!(got.len(), 4);
        assert_eq!(got[0].count, 3);
        assert_eq!(got[0].median_realised_return, Some(0.1));
        assert!((got[0].mean_realised_return.unwrap() - 0.2 / 3.0).abs() < 1e-12);
        assert!((got[0].hit_rate.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!((got[1].count, got[1].hit_rate), (0, None));
        assert_eq!((got[2].count, got[2].mean_realised_return), (0, None));
        assert_eq!((got[3].grade.as_str(), got[3].hit_rate), ("Z", Some(0.0)));
    }
}
