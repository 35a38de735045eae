//! Plausible prices only (issue 25): the rules every ingested row and
//! every resulting history must satisfy, shared by `forecast ingest csv`
//! ([`crate::files`]) and the live providers ([`crate::providers::fetch`],
//! hence the scheduled refresh).
//!
//! | rule | what is refused |
//! |---|---|
//! | `date range` | a date before [`EARLIEST_DATE`] (1800-01-01) or after tomorrow (UTC) |
//! | `price range` | a close outside [`MIN_CLOSE`]` ..= `[`MAX_CLOSE`] (1e-6 ..= 1e9) |
//! | `jump` | a close more than [`MAX_JUMP`] (10) times, or less than 1/10 of, the close of the row before it, unless the operator forces it (`--allow-jumps`) |
//! | `length` | a history of more than [`MAX_ROWS`] (60,000) rows |
//!
//! The jump rule looks at consecutive rows of the history as it would be
//! stored, so a row is checked against its stored neighbours too; pairs of
//! rows that were both stored already are not checked again. Each message
//! starts with the rule's name, so an operator sees which rule refused.

use chrono::NaiveDate;

use forecast_domain::series::{from_days, to_days, PriceSeries};

/// The earliest date a row may carry.
pub const EARLIEST_DATE: NaiveDate = match NaiveDate::from_ymd_opt(1800, 1, 1) {
    Some(d) => d,
    None => panic!("valid date"),
};
/// The smallest close accepted.
pub const MIN_CLOSE: f64 = 1e-6;
/// The largest close accepted.
pub const MAX_CLOSE: f64 = 1e9;
/// The largest factor between consecutive closes, either way.
pub const MAX_JUMP: f64 = 10.0;
/// The most rows a history may have.
pub const MAX_ROWS: usize = forecast_domain::defaults::MAX_HISTORY_ROWS;

/// The rules as applied on one day, with or without the operator's
/// permission for jumps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Today (UTC): rows up to tomorrow are accepted.
    pub today: NaiveDate,
    /// The operator forced jumps beyond [`MAX_JUMP`] (`--allow-jumps`).
    pub allow_jumps: bool,
}

impl Default for Rules {
    /// Today's rules by the system clock, jumps not forced (the demo
    /// load's; a fetch takes its day from its options' clock).
    fn default() -> Self {
        use forecast_domain::Clock as _;
        Rules::new(forecast_domain::SystemClock.today(), false)
    }
}

impl Rules {
    /// The rules on `today`.
    pub fn new(today: NaiveDate, allow_jumps: bool) -> Self {
        Rules { today, allow_jumps }
    }

    /// The date and price rules for one row; the message names the rule.
    pub fn check_row(&self, day: i32, close: f64) -> Result<(), String> {
        let latest = to_days(self.today) + 1;
        if day < to_days(EARLIEST_DATE) || day > latest {
            return Err(format!(
                "date range rule: {} is outside {EARLIEST_DATE} ..= {} (tomorrow, UTC)",
                from_days(day),
                from_days(latest)
            ));
        }
        // Also refuses NaN.
        if !(MIN_CLOSE..=MAX_CLOSE).contains(&close) {
            return Err(format!(
                "price range rule: close {} on {} is outside 1e-6 ..= 1e9",
                number(close),
                from_days(day)
            ));
        }
        Ok(())
    }

    /// The jump rule between a row and the row before it.
    pub fn check_jump(&self, before: (i32, f64), row: (i32, f64)) -> Result<(), String> {
        let factor = row.1 / before.1;
        if self.allow_jumps || (1.0 / MAX_JUMP..=MAX_JUMP).contains(&factor) {
            return Ok(());
        }
        Err(format!(
            "jump rule: close {} on {} is {}x the close {} on {} (the limit is {MAX_JUMP}x either way; --allow-jumps forces it)",
            number(row.1),
            from_days(row.0),
            number(factor),
            number(before.1),
            from_days(before.0)
        ))
    }

    /// The length rule for a history of `rows` rows.
    pub fn check_length(&self, rows: usize) -> Result<(), String> {
        if rows > MAX_ROWS {
            return Err(format!(
                "length rule: the history would have {rows} rows, more than {MAX_ROWS}"
            ));
        }
        Ok(())
    }

    /// The length and jump rules for `merged`, the history as it would be
    /// stored, where `new_days` (sorted) are the dates the write sets. The
    /// error carries the date of the new row a refused jump involves.
    pub fn check_history(&self, merged: &PriceSeries, new_days: &[i32]) -> Result<(), Refusal> {
        self.check_length(merged.len())
            .map_err(|message| Refusal { day: None, message })?;
        if self.allow_jumps {
            return Ok(());
        }
        let is_new = |d: i32| new_days.binary_search(&d).is_ok();
        let rows = || {
            merged
                .dates
                .iter()
                .copied()
                .zip(merged.closes.iter().copied())
        };
        for (before, row) in rows().zip(rows().skip(1)) {
            if !is_new(before.0) && !is_new(row.0) {
                continue;
            }
            self.check_jump(before, row).map_err(|message| Refusal {
                day: Some(if is_new(row.0) { row.0 } else { before.0 }),
                message,
            })?;
        }
        Ok(())
    }
}

/// A number as an operator reads it: plain, or in exponent notation when
/// very large or small (`1e308`, not 309 digits).
fn number(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{}", (x * 1e6).round() / 1e6)
    }
}

/// Why a history was refused by [`Rules::check_history`].
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The date of the new row the rule refused (none for the length).
    pub day: Option<i32>,
    /// The rule and the values, e.g. `jump rule: ...`.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> i32 {
        to_days(NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap())
    }

    fn rules() -> Rules {
        Rules::new(NaiveDate::from_ymd_opt(2026, 11, 26).unwrap(), false)
    }

    #[test]
    fn dates_from_1800_to_tomorrow() {
        let r = rules();
        assert!(r.check_row(day("1800-01-01"), 1.0).is_ok());
        assert!(r.check_row(day("2026-11-27"), 1.0).is_ok(), "tomorrow");
        for bad in ["1799-12-31", "0001-01-01", "2026-11-28", "9999-12-31"] {
            let e = r.check_row(day(bad), 1.0).unwrap_err();
            assert!(e.starts_with("date range rule: "), "{e}");
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn closes_between_a_millionth_and_a_billion() {
        let r = rules();
        let d = day("2024-01-02");
        for ok in [1e-6, 0.5, 1e9] {
            assert!(r.check_row(d, ok).is_ok(), "{ok}");
        }
        for bad in [
            1e308,
            1e-320,
            0.0,
            -1.0,
            1.1e9,
            9e-7,
            f64::NAN,
            f64::INFINITY,
        ] {
            let e = r.check_row(d, bad).unwrap_err();
            assert!(e.starts_with("price range rule: "), "{bad}: {e}");
            assert!(e.contains("2024-01-02"), "{e}");
        }
    }

    #[test]
    fn jumps_beyond_ten_times_unless_forced() {
        let r = rules();
        let a = (day("2024-01-02"), 10.0);
        assert!(r.check_jump(a, (day("2024-01-03"), 100.0)).is_ok());
        assert!(r.check_jump(a, (day("2024-01-03"), 1.0)).is_ok());
        let e = r.check_jump(a, (day("2024-01-03"), 100.1)).unwrap_err();
        assert!(e.starts_with("jump rule: "), "{e}");
        assert!(e.contains("2024-01-03") && e.contains("2024-01-02"), "{e}");
        assert!(e.contains("--allow-jumps"), "{e}");
        assert!(r.check_jump(a, (day("2024-01-03"), 0.99)).is_err());
        let forced = Rules::new(r.today, true);
        assert!(forced.check_jump(a, (day("2024-01-03"), 1e6)).is_ok());
    }

    #[test]
    fn histories_up_to_sixty_thousand_rows() {
        let r = rules();
        assert!(r.check_length(MAX_ROWS).is_ok());
        let e = r.check_length(MAX_ROWS + 1).unwrap_err();
        assert!(e.starts_with("length rule: ") && e.contains("60000"), "{e}");
        let long = PriceSeries {
            dates: (0..=MAX_ROWS as i32).collect(),
            closes: vec![1.0; MAX_ROWS + 1],
        };
        let refusal = r.check_history(&long, &[0]).unwrap_err();
        assert_eq!(refusal.day, None);
        assert!(refusal.message.starts_with("length rule: "));
    }

    #[test]
    fn history_jumps_are_checked_where_new_rows_touch() {
        let r = rules();
        // Stored: 1, 2 (a 20x jump already stored), 4; new: 3.
        let s = PriceSeries {
            dates: vec![1, 2, 3, 4],
            closes: vec![1.0, 20.0, 21.0, 22.0],
        };
        assert!(r.check_history(&s, &[3]).is_ok(), "old pairs not rechecked");
        let refusal = r.check_history(&s, &[2]).unwrap_err();
        assert_eq!(refusal.day, Some(2));
        assert!(refusal.message.starts_with("jump rule: "));
        // A new row before a stored one names the new row.
        assert_eq!(r.check_history(&s, &[1]).unwrap_err().day, Some(1));
        assert!(Rules::new(r.today, true).check_history(&s, &[1, 2]).is_ok());
    }
}
