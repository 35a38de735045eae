//! Calendar arithmetic on days since 1970-01-01, without a date library
//! (the engine has no dependencies so it builds for any target).

/// True for Saturdays and Sundays. 1970-01-01 was a Thursday.
pub fn is_weekend(days: i32) -> bool {
    // 0 = Monday .. 6 = Sunday.
    let weekday = (days + 3).rem_euclid(7);
    weekday >= 5
}

/// `(year, month, day)` of a day number (proleptic Gregorian; Howard
/// Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i32) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i32::from(month <= 2);
    (year, month, day)
}
