//! Real time, in one place. The workspace bans the wall clock from every
//! crate that runs a simulation (`clippy.toml`); `twin real` measures a real
//! server, so its latencies, pacing and the GC log's window come from the
//! machine's clocks, through these two functions only.

use std::time::{Instant, SystemTime};

/// The monotonic clock: pacing and latencies.
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
}

/// The wall clock: to match the server's logs, which carry wall times.
#[allow(clippy::disallowed_methods)]
pub fn wall() -> SystemTime {
    SystemTime::now()
}

/// Today's date (UTC) as `YYYY-MM-DD`, for what a measurement records.
pub fn today_utc() -> String {
    let seconds = wall()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    date_of_days((seconds / 86_400) as i64)
}

/// The date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
fn date_of_days(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(date_of_days(0), "1970-01-01");
        assert_eq!(date_of_days(11_017), "2000-03-01");
        assert_eq!(date_of_days(20_785), "2026-11-28");
    }
}
