//! Times as people say them: one table of spoken forms against fixed clocks
//! in two zones, the `tonight` cases, and Elroy's own forms keeping Elroy's meaning.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_agenda::{
    DEFAULT_DAY_START, TriggerTimeError, format_spoken_instant, parse_trigger_time,
    parse_trigger_time_with, understand_trigger,
};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

/// `local` (`2026-03-17T10:00`) as a wall time in `zone`.
fn at(local: &str, zone: &str) -> ZonedDateTime {
    let tz = TimeZone::get(zone).unwrap();
    let dt: jiff::civil::DateTime = local.parse().unwrap();
    tz.to_ambiguous_zoned_datetime(dt).compatible().unwrap()
}

fn said(input: &str, now: &ZonedDateTime) -> String {
    let ts = parse_trigger_time(input, now).unwrap_or_else(|e| panic!("{input}: {e}"));
    format_spoken_instant(ts, now.time_zone())
}

/// Every spoken form of the issue, said on Tuesday 2026-03-17 at 10:00 local time, in Berlin
/// (UTC+1, its DST change on March 29 between now and `in 1 month`) and in New York (UTC-4, its
/// change already past): the same wall times in both, each at its own offset.
#[test]
fn spoken_forms_in_two_zones() {
    let cases: &[(&str, &str)] = &[
        ("friday", "Fri 2026-03-20 09:00"),
        ("on friday", "Fri 2026-03-20 09:00"),
        ("Friday", "Fri 2026-03-20 09:00"),
        ("tomorrow", "Wed 2026-03-18 09:00"),
        ("next week", "Mon 2026-03-23 09:00"),
        ("next monday", "Mon 2026-03-23 09:00"),
        ("tomorrow morning", "Wed 2026-03-18 09:00"),
        ("tomorrow afternoon", "Wed 2026-03-18 14:00"),
        ("tomorrow evening", "Wed 2026-03-18 18:00"),
        ("tomorrow at 5:30 pm", "Wed 2026-03-18 17:30"),
        ("end of day", "Tue 2026-03-17 17:00"),
        ("midnight", "Wed 2026-03-18 00:00"),
        ("at midnight", "Wed 2026-03-18 00:00"),
        ("noon", "Tue 2026-03-17 12:00"),
        ("in half an hour", "Tue 2026-03-17 10:30"),
        ("in 2 hours", "Tue 2026-03-17 12:00"),
        ("in 1 month", "Fri 2026-04-17 10:00"),
        ("in 2 years", "Fri 2028-03-17 10:00"),
        ("march 20 9am", "Fri 2026-03-20 09:00"),
        ("March 20", "Fri 2026-03-20 09:00"),
        ("20 march 2026 09:00", "Fri 2026-03-20 09:00"),
        ("20 march", "Fri 2026-03-20 09:00"),
        ("mar 20th, 2026 at 5pm", "Fri 2026-03-20 17:00"),
        ("the 3rd of april", "Fri 2026-04-03 09:00"),
        ("9am on april 3", "Fri 2026-04-03 09:00"),
        ("january 5", "Tue 2027-01-05 09:00"),
        ("tonight", "Tue 2026-03-17 20:00"),
        ("this evening", "Tue 2026-03-17 18:00"),
        ("tonight at 9", "Tue 2026-03-17 21:00"),
        ("tonight at 11pm", "Tue 2026-03-17 23:00"),
        ("tonight at 12", "Wed 2026-03-18 00:00"),
        ("tonight at 12am", "Wed 2026-03-18 00:00"),
        ("tonight at 1", "Wed 2026-03-18 01:00"),
        ("tonight at 0:30", "Wed 2026-03-18 00:30"),
        ("this evening at 7", "Tue 2026-03-17 19:00"),
        ("tomorrow night at 1", "Thu 2026-03-19 01:00"),
        // Elroy's own forms keep Elroy's meaning: a bare date is midnight.
        ("2026-03-20", "Fri 2026-03-20 00:00"),
        ("2026-03-20 09:00", "Fri 2026-03-20 09:00"),
    ];
    for zone in ["Europe/Berlin", "America/New_York"] {
        let now = at("2026-03-17T10:00", zone);
        for (input, expected) in cases {
            let got = said(input, &now);
            assert!(
                got.starts_with(expected),
                "{zone}: '{input}' gave {got}, expected {expected}"
            );
        }
        // The offsets are the zone's at each instant.
        let offset = |input: &str| said(input, &now).rsplit(' ').next().unwrap().to_owned();
        match zone {
            "Europe/Berlin" => {
                assert_eq!(offset("friday"), "+01:00");
                assert_eq!(offset("in 1 month"), "+02:00");
            }
            _ => {
                assert_eq!(offset("friday"), "-04:00");
                assert_eq!(offset("in 1 month"), "-04:00");
            }
        }
        // `tonight` means after 17:00: a morning time is an error, never this morning.
        for bad in [
            "tonight at 9am",
            "tonight at 3pm",
            "this evening at 12pm",
            "tonight at 15:00",
        ] {
            let err = parse_trigger_time(bad, &now).unwrap_err().to_string();
            assert!(err.contains("not in the evening"), "{zone}: {bad}: {err}");
        }
        // A day without a time whose day start has passed today: said so, never moved.
        let err = parse_trigger_time("tuesday", &now).unwrap_err().to_string();
        assert!(err.contains("already passed"), "{err}");
        let err = parse_trigger_time("today", &now).unwrap_err().to_string();
        assert!(err.contains("already passed"), "{err}");
        // Not a form: Elroy's message.
        let err = parse_trigger_time("someday soon", &now).unwrap_err();
        assert_eq!(err, TriggerTimeError::NotATime("someday soon".into()));
        assert!(
            err.to_string()
                .starts_with("Invalid datetime format: 'someday soon'"),
            "{err}"
        );
    }
}

/// The `tonight` fault of the issue (the whole kind: a morning or midday reading of a time said
/// with `tonight`): said at 07:00, `tonight at 9am` was accepted as this morning.
#[test]
fn tonight_at_seven_in_the_morning() {
    let now = at("2026-03-17T07:00", "Europe/Berlin");
    assert!(parse_trigger_time("tonight at 9am", &now).is_err());
    assert!(said("tonight at 9", &now).starts_with("Tue 2026-03-17 21:00"));
    assert!(said("tonight at 12", &now).starts_with("Wed 2026-03-18 00:00"));
}

/// Said at 00:30 on a Tuesday, `tomorrow` is Wednesday, and the confirmation shows it.
#[test]
fn what_was_understood_names_the_day() {
    let now = at("2026-03-17T00:30", "Europe/Berlin");
    let understood = understand_trigger("tomorrow 9am", &now, DEFAULT_DAY_START).unwrap();
    assert!(!understood.elroy_form);
    assert_eq!(
        understood.resolved(now.time_zone()),
        "Wed 2026-03-18 09:00 +01:00"
    );
    let elroy = understand_trigger("2026-03-18 09:00", &now, DEFAULT_DAY_START).unwrap();
    assert!(elroy.elroy_form);
    let rule = understand_trigger("every weekday at 9am", &now, DEFAULT_DAY_START).unwrap();
    assert_eq!(
        rule.resolved(now.time_zone()),
        "Tue 2026-03-17 09:00 +01:00, every weekday at 09:00"
    );
}

/// The configured day start moves every day said without a time; calendar months clamp.
#[test]
fn day_start_and_calendar_months() {
    let now = at("2026-01-31T10:00", "Europe/Berlin");
    let eight_thirty = jiff::civil::Time::constant(8, 30, 0, 0);
    let ts = parse_trigger_time_with("tomorrow", &now, eight_thirty).unwrap();
    assert!(format_spoken_instant(ts, now.time_zone()).starts_with("Sun 2026-02-01 08:30"));
    assert!(said("in 1 month", &now).starts_with("Sat 2026-02-28 10:00"));
    let ts: Timestamp = parse_trigger_time("in 3650 days", &now).unwrap();
    assert!(ts > now.timestamp());
    assert!(parse_trigger_time("in 11 years", &now).is_err());
}
