//! `get_current_date`'s display time (`docs/tools.md#get_current_date`): the weekday, date and
//! 12-hour time in the configured zone, with the zone's abbreviation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_tools_session::format_display_time;
use jiff::tz::TimeZone;

fn at(instant: &str, tz: TimeZone) -> String {
    let t: jiff::Timestamp = instant.parse().unwrap();
    format_display_time(&t.to_zoned_datetime(tz))
}

#[test]
fn display_in_configured_zone() {
    assert_eq!(
        at("2026-11-30T03:53:00Z", TimeZone::posix("IST-5:30").unwrap()),
        "Monday, November 30, 2026 09:23 AM IST"
    );
    assert_eq!(
        at(
            "2026-03-16T08:30:00Z",
            TimeZone::get("America/New_York").unwrap()
        ),
        "Monday, March 16, 2026 04:30 AM EDT"
    );
    assert_eq!(
        at("2026-03-16T20:05:00Z", TimeZone::UTC),
        "Monday, March 16, 2026 08:05 PM UTC"
    );
}
