//! Timestamps in GCO's record format (`datetime.now(UTC).isoformat()`).

/// `2026-09-01T13:22:56.123456+00:00` for microseconds since the Unix epoch.
pub fn format_timestamp(unix_micros: i64) -> String {
    let secs = unix_micros.div_euclid(1_000_000);
    let micros = unix_micros.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_python_isoformat() {
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00.000000+00:00");
        assert_eq!(format_timestamp(1_788_268_976_123_456), "2026-09-01T13:22:56.123456+00:00");
        assert_eq!(format_timestamp(951_782_400_000_001), "2000-02-29T00:00:00.000001+00:00");
    }
}
