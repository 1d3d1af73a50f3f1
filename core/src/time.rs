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
        assert_eq!(
            format_timestamp(1_788_268_976_123_456),
            "2026-09-01T13:22:56.123456+00:00"
        );
        assert_eq!(
            format_timestamp(951_782_400_000_001),
            "2000-02-29T00:00:00.000001+00:00"
        );
    }
}

/// Microseconds since the Unix epoch of a timestamp in GCO's format
/// (`2026-09-01T13:22:56.123456+00:00`; a missing fraction reads as zero).
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let text = text
        .strip_suffix("+00:00")
        .or_else(|| text.strip_suffix('Z'))?;
    let (date, time) = text.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, min, s) = (t.next()??, t.next()??, t.next()??);
    // What Python's `datetime` holds: years 1 to 9999, real calendar days,
    // no leap seconds.
    let month_days = match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=9999).contains(&y)
        || !(1..=12).contains(&m)
        || !(1..=month_days).contains(&day)
        || h > 23
        || min > 59
        || s > 59
        || frac.is_empty()
        || frac.len() > 6
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let micros: i64 = format!("{frac:0<6}").parse().ok()?;
    let days = days_from_civil(y, m as u32, day as u32);
    Some(((days * 86_400 + h * 3600 + min * 60 + s) * 1_000_000) + micros)
}

/// Howard Hinnant's civil-to-days algorithm.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The `updated_at` for a change made at `now_micros` to a record last
/// updated at `previous`: strictly later, so every write gets a new version
/// even within one microsecond.
pub fn next_timestamp(now_micros: i64, previous: &str) -> String {
    let floor = parse_timestamp(previous).map_or(i64::MIN, |p| p + 1);
    format_timestamp(now_micros.max(floor))
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    #[test]
    fn parses_what_it_formats() {
        for micros in [0, 1_788_268_976_123_456, 951_782_400_000_001, -1] {
            assert_eq!(parse_timestamp(&format_timestamp(micros)), Some(micros));
        }
        assert_eq!(
            parse_timestamp("2026-09-01T13:22:56+00:00"),
            Some(1_788_268_976_000_000)
        );
        for invalid in [
            "2026-13-01T00:00:00+00:00",
            "2026-02-30T00:00:00+00:00",
            "2025-02-29T00:00:00+00:00",
            "2026-04-31T00:00:00+00:00",
            "2026-01-01T00:00:60+00:00",
            "2026-01-01T00:00:00.+00:00",
            "2026-01-01T00:00:00.-1+00:00",
            "10000-01-01T00:00:00+00:00",
            "yesterday",
        ] {
            assert_eq!(parse_timestamp(invalid), None, "{invalid}");
        }
        assert!(parse_timestamp("2024-02-29T00:00:00+00:00").is_some());
        assert!(parse_timestamp("2000-02-29T00:00:00+00:00").is_some());
    }

    #[test]
    fn versions_always_move_forward() {
        let prev = format_timestamp(1_000_000);
        assert_eq!(next_timestamp(5, &prev), format_timestamp(1_000_001));
        assert_eq!(
            next_timestamp(2_000_000, &prev),
            format_timestamp(2_000_000)
        );
        assert_eq!(next_timestamp(7, "garbage"), format_timestamp(7));
    }
}
