//! Dates for deadlines and reports: RFC 3339 in UTC, to and from Unix seconds.

use anyhow::{Context, Result, bail};

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The civil date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `2026-12-01T23:59:00Z`.
pub fn format_utc(unix: i64) -> String {
    let (year, month, day) = civil_from_days(unix.div_euclid(86_400));
    let seconds = unix.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// Reads `2026-12-01`, `2026-12-01T23:59`, `2026-12-01T23:59:30Z` or `…+01:00`. A date alone
/// means the end of that day in UTC; a time without an offset is UTC.
pub fn parse(text: &str) -> Result<i64> {
    let text = text.trim();
    let invalid = || {
        format!(
            "`{text}` is not a date and time like 2026-12-01T23:59Z (RFC 3339; a date alone \
             means the end of that day, UTC)"
        )
    };
    let number = |s: &str| s.parse::<i64>().with_context(invalid);
    let (date, time) = match text.split_once(['T', ' ']) {
        Some((date, time)) => (date, Some(time)),
        None => (text, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    if parts.len() != 3 {
        bail!(invalid());
    }
    let (year, month, day) = (number(parts[0])?, number(parts[1])?, number(parts[2])?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        bail!(invalid());
    }
    let midnight = days_from_civil(year, month, day) * 86_400;
    let Some(time) = time else {
        return Ok(midnight + 86_399);
    };
    let (clock, offset) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else if let Some(at) = time.rfind(['+', '-']) {
        let (clock, zone) = time.split_at(at);
        let sign = if zone.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = zone[1..].split_once(':').with_context(invalid)?;
        (
            clock,
            sign * (number(hours)? * 3600 + number(minutes)? * 60),
        )
    } else {
        (time, 0)
    };
    let fields: Vec<&str> = clock.split(':').collect();
    if !(2..=3).contains(&fields.len()) {
        bail!(invalid());
    }
    let hours = number(fields[0])?;
    let minutes = number(fields[1])?;
    let seconds = match fields.get(2) {
        Some(s) => number(s.split('.').next().unwrap_or("0"))?,
        None => 0,
    };
    Ok(midnight + hours * 3600 + minutes * 60 + seconds - offset)
}

/// Now, in Unix seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_offsets() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(parse("1970-01-01T00:00Z").unwrap(), 0);
        let t = parse("2026-12-01T23:59:30Z").unwrap();
        assert_eq!(format_utc(t), "2026-12-01T23:59:30Z");
        assert_eq!(parse("2026-12-02T00:59:30+01:00").unwrap(), t);
        assert_eq!(
            parse("2024-02-29").unwrap(),
            parse("2024-02-29T23:59:59Z").unwrap()
        );
        assert!(parse("next friday").is_err());
    }
}
