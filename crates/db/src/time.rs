//! Database timestamps: TEXT `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC
//! (`docs/formats.md#timestamps-elroy-writes`, `docs/formats.md#connection-and-migrations`).

use jiff::Timestamp;

/// `2026-11-30T03:23:26.014063Z`: UTC, always six fraction digits (sub-microseconds truncated).
pub fn format_db_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

/// Parses a database timestamp (or any RFC 3339 instant). `None` when it does not parse.
pub fn parse_db_time(text: &str) -> Option<Timestamp> {
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_time_round_trip() {
        let ts: Timestamp = "2026-11-30T03:23:26.014063Z".parse().unwrap();
        assert_eq!(format_db_time(ts), "2026-11-30T03:23:26.014063Z");
        assert_eq!(parse_db_time(&format_db_time(ts)), Some(ts));
        let whole: Timestamp = "2026-03-16T08:30:00Z".parse().unwrap();
        assert_eq!(format_db_time(whole), "2026-03-16T08:30:00.000000Z");
    }
}
