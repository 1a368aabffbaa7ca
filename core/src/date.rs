//! Calendar dates in Asia/Tokyo (UTC+9, no daylight saving) from Unix time.

/// Offset of Asia/Tokyo from UTC in seconds. Japan has not observed DST since 1951.
const TOKYO_OFFSET_SECS: i64 = 9 * 3600;

/// A calendar date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    /// Year.
    pub year: i64,
    /// Month, 1..=12.
    pub month: u32,
    /// Day, 1..=31.
    pub day: u32,
}

impl Date {
    /// The date in Asia/Tokyo at `unix_secs` seconds after 1970-01-01T00:00:00Z.
    pub fn tokyo(unix_secs: u64) -> Date {
        let secs = i64::try_from(unix_secs).unwrap_or(i64::MAX - TOKYO_OFFSET_SECS);
        Date::from_days((secs + TOKYO_OFFSET_SECS).div_euclid(86_400))
    }

    /// The civil date `days` days after 1970-01-01 (Howard Hinnant's algorithm).
    fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Date { year, month, day }
    }
}

/// Whether `s` is an ISO 8601 calendar date, `YYYY-MM-DD`, with a month and day that
/// can exist (ISO dates then order as text).
pub fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10
        || b[4] != b'-'
        || b[7] != b'-'
        || !digits(0..4)
        || !digits(5..7)
        || !digits(8..10)
    {
        return false;
    }
    let month = u32::from(b[5] - b'0') * 10 + u32::from(b[6] - b'0');
    let day = u32::from(b[8] - b'0') * 10 + u32::from(b[9] - b'0');
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// `unix_secs` as an ISO 8601 UTC timestamp, `YYYY-MM-DDTHH:MM:SSZ`.
pub fn iso_utc(unix_secs: u64) -> String {
    let secs = i64::try_from(unix_secs).unwrap_or(i64::MAX);
    let date = Date::from_days(secs.div_euclid(86_400));
    let of_day = secs.rem_euclid(86_400);
    format!(
        "{date}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::Date;

    #[test]
    fn tokyo_dates() {
        assert_eq!(Date::tokyo(0).to_string(), "1970-01-01");
        // 2025-08-08T15:00:00Z is midnight 2025-08-09 in Tokyo.
        assert_eq!(Date::tokyo(1_754_665_200).to_string(), "2025-08-09");
        assert_eq!(Date::tokyo(1_754_665_199).to_string(), "2025-08-08");
        // Leap day.
        assert_eq!(Date::tokyo(1_709_164_800).to_string(), "2024-02-29");
        assert!(Date::tokyo(u64::MAX).year > 2000);
    }

    #[test]
    fn iso_timestamps_are_utc() {
        assert_eq!(super::iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::iso_utc(1_754_665_199), "2025-08-08T14:59:59Z");
        assert!(super::iso_utc(u64::MAX).ends_with('Z'));
    }
}
