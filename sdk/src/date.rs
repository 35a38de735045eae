//! Dates as the contract carries them: days since 1970-01-01 (UTC), e.g.
//! [`Context::date`](crate::Context::date). Plain arithmetic, no date
//! library, so it costs a plugin nothing.

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(year: i32, month: u32, day: u32) -> i32 {
    // Howard Hinnant's `days_from_civil`.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = month as i32;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + day as i32 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `(year, month, day)` of a day number.
pub fn civil_from_days(days: i32) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i32::from(month <= 2), month, day)
}

/// Days in `month` of `year`.
pub fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Parses a strict `YYYY-MM-DD` date into days since 1970-01-01; `None`
/// for any other shape or an impossible date (e.g. `2023-02-29`).
pub fn parse_date(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    let shape_ok = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if !shape_ok {
        return None;
    }
    let year: i32 = s[0..4].parse().ok()?;
    let month: u32 = s[5..7].parse().ok()?;
    let day: u32 = s[8..10].parse().ok()?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// Formats days since 1970-01-01 as `YYYY-MM-DD`, e.g. for a log line
/// about [`Context::date`](crate::Context::date).
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The same calendar day `years` years earlier (29 February becomes
/// 28 February in a common year).
pub fn years_before(days: i32, years: i32) -> i32 {
    let (y, m, d) = civil_from_days(days);
    let y = y - years;
    days_from_civil(y, m, d.min(days_in_month(y, m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_known_dates() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2000-03-01"), Some(11_017));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        assert_eq!(format_date(19_723), "2024-01-01");
        for d in (-800_000..800_000).step_by(997) {
            let (y, m, day) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, day), d);
            if (0..=9999).contains(&y) {
                assert_eq!(parse_date(&format_date(d)), Some(d));
            }
        }
    }

    #[test]
    fn strict_shapes_and_impossible_dates_are_refused() {
        for bad in [
            "2024-1-05",
            "2024/01/05",
            "24-01-05",
            "2024-13-01",
            "2023-02-29",
            "2024-04-31",
            "2024-00-10",
            "",
            "2024-01-05T00",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert!(parse_date("2024-02-29").is_some());
    }

    #[test]
    fn years_before_clamps_leap_days() {
        let d = parse_date("2024-02-29").unwrap();
        assert_eq!(format_date(years_before(d, 10)), "2014-02-28");
        let d = parse_date("2025-06-30").unwrap();
        assert_eq!(format_date(years_before(d, 10)), "2015-06-30");
    }
}
