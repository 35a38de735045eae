//! A daily close series and its compact storage encoding.
//!
//! Dates are days since 1970-01-01 (the WIT convention), closes are > 0,
//! dates strictly increase. The encoding is columnar little-endian:
//! `b"FES1"`, `u32` row count, the dates as `i32`, the closes as `f64`.

use chrono::NaiveDate;
// The engine's weekend arithmetic: a calendar conversion per row was a few
// percent of a cold backtest, which asks this of every asset's history.
use forecast_engine::{civil_from_days, is_weekend};

const MAGIC: &[u8; 4] = b"FES1";

/// Days since 1970-01-01 of a calendar date.
pub fn to_days(date: NaiveDate) -> i32 {
    (date - NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid epoch")).num_days() as i32
}

/// The calendar date of a day number.
pub fn from_days(days: i32) -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid epoch") + chrono::Duration::days(days.into())
}

/// `(year, month 1..=12)` of a day number, as [`from_days`] gives them but
/// by integer arithmetic: month-ends are found row by row over every
/// asset's history in each grade, where building a date per row was a few
/// percent of the run.
pub fn year_month(days: i32) -> (i32, u32) {
    let (year, month, _) = civil_from_days(days);
    (year, month)
}

/// A daily close series, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceSeries {
    /// Days since 1970-01-01, strictly increasing.
    pub dates: Vec<i32>,
    /// Closes aligned with `dates`.
    pub closes: Vec<f64>,
}

/// A stored blob that does not decode.
#[derive(Debug, thiserror::Error)]
#[error("corrupt price series blob: {0}")]
pub struct CorruptSeries(&'static str);

impl PriceSeries {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.dates.len()
    }

    /// True without rows.
    pub fn is_empty(&self) -> bool {
        self.dates.is_empty()
    }

    /// True when any date is a Saturday or Sunday (crypto-style calendar).
    pub fn has_weekends(&self) -> bool {
        self.dates.iter().any(|&d| is_weekend(d))
    }

    /// Periods per year for annualisation: 365 with weekend rows, else 252.
    pub fn periods_per_year(&self) -> u32 {
        if self.has_weekends() {
            365
        } else {
            252
        }
    }

    /// The rows with `start <= date <= end` (either bound optional).
    pub fn window(&self, start: Option<NaiveDate>, end: Option<NaiveDate>) -> PriceSeries {
        let lo = start.map_or(0, |d| self.dates.partition_point(|&x| x < to_days(d)));
        let hi = end.map_or(self.len(), |d| {
            self.dates.partition_point(|&x| x <= to_days(d))
        });
        let hi = hi.max(lo);
        PriceSeries {
            dates: self.dates[lo..hi].to_vec(),
            closes: self.closes[lo..hi].to_vec(),
        }
    }

    /// The last `n` rows (all of them when there are fewer).
    pub fn last_rows(mut self, n: usize) -> PriceSeries {
        let cut = self.len().saturating_sub(n);
        if cut > 0 {
            self.dates.drain(..cut);
            self.closes.drain(..cut);
        }
        self
    }

    /// The oldest `n` rows (all of them when there are fewer).
    pub fn first_rows(mut self, n: usize) -> PriceSeries {
        self.dates.truncate(n);
        self.closes.truncate(n);
        self
    }

    /// Upserts `rows` by date: a row with an existing date replaces its
    /// close, others are inserted in order. `rows` need not be sorted.
    pub fn merge(&mut self, rows: &[(i32, f64)]) {
        let mut all: Vec<(i32, f64)> = self
            .dates
            .iter()
            .copied()
            .zip(self.closes.iter().copied())
            .collect();
        all.extend_from_slice(rows);
        // Stable sort keeps insertion order among equal dates, so the
        // last occurrence (the newest write) wins below.
        all.sort_by_key(|&(d, _)| d);
        let mut dates = Vec::with_capacity(all.len());
        let mut closes: Vec<f64> = Vec::with_capacity(all.len());
        for (d, c) in all {
            if dates.last() == Some(&d) {
                *closes.last_mut().expect("parallel vectors") = c;
            } else {
                dates.push(d);
                closes.push(c);
            }
        }
        self.dates = dates;
        self.closes = closes;
    }

    /// The storage encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.len() * 12);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.len() as u32).to_le_bytes());
        for d in &self.dates {
            out.extend_from_slice(&d.to_le_bytes());
        }
        for c in &self.closes {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out
    }

    /// Decodes [`PriceSeries::encode`]'s output.
    pub fn decode(bytes: &[u8]) -> Result<Self, CorruptSeries> {
        if bytes.len() < 8 || &bytes[..4] != MAGIC {
            return Err(CorruptSeries("bad header"));
        }
        let n = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes")) as usize;
        if bytes.len() != 8 + n * 12 {
            return Err(CorruptSeries("length does not match row count"));
        }
        let (dates, closes) = bytes[8..].split_at(n * 4);
        Ok(PriceSeries {
            dates: dates
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
            closes: closes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::Datelike;

    use super::*;

    /// The arithmetic year and month agree with the calendar's, every day
    /// from 1800 to 2200 (both sides of the epoch, every leap rule).
    #[test]
    fn year_and_month_by_arithmetic_match_the_calendar() {
        let first = to_days(NaiveDate::from_ymd_opt(1800, 1, 1).unwrap());
        let last = to_days(NaiveDate::from_ymd_opt(2200, 12, 31).unwrap());
        for days in first..=last {
            let date = from_days(days);
            assert_eq!(year_month(days), (date.year(), date.month()), "{date}");
        }
    }

    /// The arithmetic weekend agrees with the calendar, before and after
    /// the epoch.
    #[test]
    fn weekends_by_arithmetic_match_the_calendar() {
        for d in -40_000..40_000 {
            let calendar = from_days(d).weekday().number_from_monday() >= 6;
            assert_eq!(is_weekend(d), calendar, "day {d}");
        }
    }

    #[test]
    fn encoding_round_trips() {
        let s = PriceSeries {
            dates: vec![-3, 0, 19_000],
            closes: vec![1.5, 2.25, 1e9],
        };
        assert_eq!(PriceSeries::decode(&s.encode()).unwrap(), s);
        assert!(PriceSeries::decode(&s.encode()[..20]).is_err());
    }

    #[test]
    fn last_rows_keeps_the_newest() {
        let s = PriceSeries {
            dates: vec![1, 2, 3],
            closes: vec![10.0, 20.0, 30.0],
        };
        assert_eq!(s.clone().last_rows(5), s);
        let tail = s.last_rows(2);
        assert_eq!((tail.dates, tail.closes), (vec![2, 3], vec![20.0, 30.0]));
    }

    #[test]
    fn merge_upserts_by_date_newest_wins() {
        let mut s = PriceSeries {
            dates: vec![1, 3, 5],
            closes: vec![10.0, 30.0, 50.0],
        };
        s.merge(&[(4, 40.0), (3, 33.0), (0, 1.0), (4, 44.0)]);
        assert_eq!(s.dates, vec![0, 1, 3, 4, 5]);
        assert_eq!(s.closes, vec![1.0, 10.0, 33.0, 44.0, 50.0]);
    }

    #[test]
    fn window_is_inclusive_and_weekends_are_detected() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd).unwrap();
        // 2024-01-05 is a Friday, 2024-01-06 a Saturday.
        let s = PriceSeries {
            dates: vec![
                to_days(d(2024, 1, 4)),
                to_days(d(2024, 1, 5)),
                to_days(d(2024, 1, 8)),
            ],
            closes: vec![1.0, 2.0, 3.0],
        };
        assert!(!s.has_weekends());
        assert_eq!(s.periods_per_year(), 252);
        let w = s.window(Some(d(2024, 1, 5)), Some(d(2024, 1, 8)));
        assert_eq!(w.closes, vec![2.0, 3.0]);
        assert!(s
            .window(Some(d(2024, 2, 1)), Some(d(2024, 1, 1)))
            .is_empty());
        let mut c = s.clone();
        c.merge(&[(to_days(d(2024, 1, 6)), 2.5)]);
        assert!(c.has_weekends());
        assert_eq!(from_days(to_days(d(2024, 1, 6))), d(2024, 1, 6));
    }
}
