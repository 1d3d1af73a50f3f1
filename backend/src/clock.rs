//! The backend's one wall clock and its one pause. Times are read here, as
//! seconds, milliseconds or microseconds since the epoch (0 for a clock
//! set before 1970); retries that lost a race wait here a random while, so
//! writers that collided do not collide again in step.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `t` since the epoch; zero before it.
fn since_epoch(t: SystemTime) -> Duration {
    t.duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Now, in seconds since the epoch.
pub fn unix_seconds() -> u64 {
    since_epoch(SystemTime::now()).as_secs()
}

/// Now, in milliseconds since the epoch.
pub fn unix_millis() -> u64 {
    u64::try_from(since_epoch(SystemTime::now()).as_millis()).unwrap_or(u64::MAX)
}

/// Now, in microseconds since the epoch (the core's timestamps').
pub fn unix_micros() -> i64 {
    micros_of(SystemTime::now())
}

/// `t` in microseconds since the epoch.
pub fn micros_of(t: SystemTime) -> i64 {
    i64::try_from(since_epoch(t).as_micros()).unwrap_or(i64::MAX)
}

/// Sleeps a random while from `shortest` to `longest`, drawn from the OS's
/// random source.
pub async fn pause(shortest: Duration, longest: Duration) {
    tokio::time::sleep(jittered(shortest, longest)).await;
}

fn jittered(shortest: Duration, longest: Duration) -> Duration {
    let mut b = [0u8; 2];
    let _ = getrandom::fill(&mut b);
    let share = f64::from(u16::from_le_bytes(b)) / f64::from(u16::MAX);
    shortest + longest.saturating_sub(shortest).mul_f64(share)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_stays_within_its_bounds() {
        let (shortest, longest) = (Duration::from_millis(1), Duration::from_millis(20));
        for _ in 0..1_000 {
            let d = jittered(shortest, longest);
            assert!(shortest <= d && d <= longest, "{d:?}");
        }
        assert_eq!(jittered(longest, longest), longest);
    }

    #[test]
    fn times_agree_with_each_other() {
        let micros = unix_micros();
        assert!(micros > 1_600_000_000_000_000);
        assert!(unix_seconds().abs_diff(micros as u64 / 1_000_000) <= 1);
        assert!(unix_millis().abs_diff(micros as u64 / 1_000) <= 1_000);
        assert_eq!(micros_of(UNIX_EPOCH - Duration::from_secs(1)), 0);
    }
}
