//! Repetitions: each kind of phrase, a cron expression and an RRULE line,
//! walked through at least three occurrences (one across a DST change), with their rules in
//! words and the stored text read back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_agenda::{
    CronProblem, DEFAULT_DAY_START, Recurrence, RecurrenceError, format_spoken_instant,
    parse_repetition,
};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

fn at(local: &str, zone: &str) -> ZonedDateTime {
    let tz = TimeZone::get(zone).unwrap();
    let dt: jiff::civil::DateTime = local.parse().unwrap();
    tz.to_ambiguous_zoned_datetime(dt).compatible().unwrap()
}

/// The rule in words and its first `n` occurrences (local, with weekday and offset).
fn walk(input: &str, now: &ZonedDateTime, n: usize) -> (String, Vec<String>) {
    let rep = parse_repetition(input, now, DEFAULT_DAY_START)
        .unwrap_or_else(|| panic!("{input}: not a repetition"))
        .unwrap_or_else(|e| panic!("{input}: {e}"));
    // The stored text reads back as the same rule.
    let stored = rep.recurrence.to_text();
    assert_eq!(
        Recurrence::from_text(&stored).unwrap(),
        rep.recurrence,
        "{stored}"
    );
    let tz = now.time_zone();
    let mut out = vec![format_spoken_instant(rep.first, tz)];
    let mut last: Timestamp = rep.first;
    while out.len() < n {
        let from = Timestamp::from_second(last.as_second() + 1).unwrap();
        match rep.recurrence.next_at_or_after(from, tz).unwrap() {
            Some(next) => {
                out.push(format_spoken_instant(next, tz));
                last = next;
            }
            None => break,
        }
    }
    (rep.recurrence.describe(), out)
}

/// Said on Friday 2026-0327 at 10:00 in Berlin, two days before its change to summer time:
/// 09:00 stays 09:00 (+01:00 before, +02:00 after).
#[test]
fn every_kind_through_three_occurrences() {
    let now = at("2026-03-27T10:00", "Europe/Berlin");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "every weekday at 9am",
            "every weekday at 09:00",
            &[
                "Mon 2026-03-30 09:00 +02:00",
                "Tue 2026-03-31 09:00 +02:00",
                "Wed 2026-04-01 09:00 +02:00",
            ],
        ),
        (
            "weekdays at 9",
            "every weekday at 09:00",
            &[
                "Mon 2026-03-30 09:00 +02:00",
                "Tue 2026-03-31 09:00 +02:00",
                "Wed 2026-04-01 09:00 +02:00",
            ],
        ),
        (
            "every day at 9",
            "every day at 09:00",
            &[
                "Sat 2026-03-28 09:00 +01:00",
                "Sun 2026-03-29 09:00 +02:00",
                "Mon 2026-03-30 09:00 +02:00",
            ],
        ),
        (
            "daily at 8pm",
            "every day at 20:00",
            &[
                "Fri 2026-03-27 20:00 +01:00",
                "Sat 2026-03-28 20:00 +01:00",
                "Sun 2026-03-29 20:00 +02:00",
            ],
        ),
        (
            "every monday 9am",
            "every monday at 09:00",
            &[
                "Mon 2026-03-30 09:00 +02:00",
                "Mon 2026-04-06 09:00 +02:00",
                "Mon 2026-04-13 09:00 +02:00",
            ],
        ),
        (
            "every monday and thursday at 18:30",
            "every monday and thursday at 18:30",
            &[
                "Mon 2026-03-30 18:30 +02:00",
                "Thu 2026-04-02 18:30 +02:00",
                "Mon 2026-04-06 18:30 +02:00",
            ],
        ),
        (
            "every 2 weeks on monday at 10",
            "every 2 weeks on monday at 10:00",
            &[
                "Mon 2026-03-30 10:00 +02:00",
                "Mon 2026-04-13 10:00 +02:00",
                "Mon 2026-04-27 10:00 +02:00",
            ],
        ),
        (
            "every 2 weeks",
            "every 2 weeks on saturday at 09:00",
            &[
                "Sat 2026-03-28 09:00 +01:00",
                "Sat 2026-04-11 09:00 +02:00",
                "Sat 2026-04-25 09:00 +02:00",
            ],
        ),
        (
            "every month on the 15th at 9",
            "every month on the 15th at 09:00",
            &[
                "Wed 2026-04-15 09:00 +02:00",
                "Fri 2026-05-15 09:00 +02:00",
                "Mon 2026-06-15 09:00 +02:00",
            ],
        ),
        (
            "first monday of the month at 10am",
            "the first monday of every month at 10:00",
            &[
                "Mon 2026-04-06 10:00 +02:00",
                "Mon 2026-05-04 10:00 +02:00",
                "Mon 2026-06-01 10:00 +02:00",
            ],
        ),
        (
            "last friday of every month at 5pm",
            "the last friday of every month at 17:00",
            &[
                "Fri 2026-03-27 17:00 +01:00",
                "Fri 2026-04-24 17:00 +02:00",
                "Fri 2026-05-29 17:00 +02:00",
            ],
        ),
        (
            "every year on march 3 at 9",
            "every year on march 3 at 09:00",
            &[
                "Wed 2027-03-03 09:00 +01:00",
                "Fri 2028-03-03 09:00 +01:00",
                "Sat 2029-03-03 09:00 +01:00",
            ],
        ),
        (
            "0 9 * * 1-5",
            "every weekday at 09:00",
            &[
                "Mon 2026-03-30 09:00 +02:00",
                "Tue 2026-03-31 09:00 +02:00",
                "Wed 2026-04-01 09:00 +02:00",
            ],
        ),
        (
            "30 18 * * mon,thu",
            "every monday and thursday at 18:30",
            &[
                "Mon 2026-03-30 18:30 +02:00",
                "Thu 2026-04-02 18:30 +02:00",
                "Mon 2026-04-06 18:30 +02:00",
            ],
        ),
        (
            "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO",
            "every 2 weeks on monday at 09:00",
            &[
                "Mon 2026-03-30 09:00 +02:00",
                "Mon 2026-04-13 09:00 +02:00",
                "Mon 2026-04-27 09:00 +02:00",
            ],
        ),
        (
            "daily at 8 for 3 times",
            "every day at 08:00, 3 times",
            &[
                "Sat 2026-03-28 08:00 +01:00",
                "Sun 2026-03-29 08:00 +02:00",
                "Mon 2026-03-30 08:00 +02:00",
            ],
        ),
        (
            "every day at 7 until march 30",
            "every day at 07:00, until 2026-03-30",
            &[
                "Sat 2026-03-28 07:00 +01:00",
                "Sun 2026-03-29 07:00 +02:00",
                "Mon 2026-03-30 07:00 +02:00",
            ],
        ),
    ];
    for (input, words, expected) in cases {
        let (described, got) = walk(input, &now, 4);
        assert_eq!(&described, words, "{input}");
        assert_eq!(&got[..3], *expected, "{input}");
    }
    // COUNT and UNTIL end the rule.
    assert_eq!(walk("daily at 8 for 3 times", &now, 5).1.len(), 3);
    assert_eq!(walk("every day at 7 until march 30", &now, 5).1.len(), 3);
}

/// A wall time inside the spring-forward gap reads with the offset before it (as every naive
/// time elroy reads); the autumn fold takes the earlier instant.
#[test]
fn gap_and_fold() {
    let now = at("2026-03-27T10:00", "Europe/Berlin");
    let (_, got) = walk("every day at 2:30", &now, 3);
    assert_eq!(got[1], "Sun 2026-03-29 03:30 +02:00");
    assert_eq!(got[2], "Mon 2026-03-30 02:30 +02:00");
    let now = at("2026-10-24T10:00", "Europe/Berlin");
    let (_, got) = walk("every day at 2:30", &now, 3);
    assert_eq!(got[0], "Sun 2026-10-25 02:30 +02:00");
    assert_eq!(got[1], "Mon 2026-10-26 02:30 +01:00");
}

/// What is not a repetition is left to the other forms; what almost is one says why.
#[test]
fn errors_name_the_fault() {
    let now = at("2026-03-27T10:00", "Europe/Berlin");
    assert!(parse_repetition("tomorrow 9am", &now, DEFAULT_DAY_START).is_none());
    // A short weekday name ending in s is one day, not a repetition.
    assert!(parse_repetition("thurs 9am", &now, DEFAULT_DAY_START).is_none());
    let (rule, _) = walk("mondays at 9", &now, 1);
    assert_eq!(rule, "every monday at 09:00");
    let (rule, got) = walk("every 30 minutes", &now, 3);
    assert_eq!(rule, "every 30 minutes");
    assert_eq!(
        got,
        [
            "Fri 2026-03-27 10:01 +01:00",
            "Fri 2026-03-27 10:31 +01:00",
            "Fri 2026-03-27 11:01 +01:00"
        ]
    );
    assert!(parse_repetition("2026-03-28 09:00", &now, DEFAULT_DAY_START).is_none());
    for (bad, needle) in [
        ("every 0 days", "never repeats"),
        ("every day at teatime", "not a time of day"),
        ("0 9 15 * 1", "make two reminders"),
        ("0 25 * * *", "outside 0-23"),
        ("every fortnight", "not a repetition elroy knows"),
        ("daily for 0 times", "never fires"),
        ("RRULE:FREQ=SOMETIMES", ""),
    ] {
        let err = parse_repetition(bad, &now, DEFAULT_DAY_START)
            .unwrap_or_else(|| panic!("{bad}: not seen as a repetition"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{bad}: {err}");
    }
    // The kinds behind the words: a cron field out of bounds, a rule the rrule crate refuses.
    assert!(matches!(
        parse_repetition("0 25 * * *", &now, DEFAULT_DAY_START),
        Some(Err(RecurrenceError::Cron {
            problem: CronProblem::OutOfBounds {
                min: 0,
                max: 23,
                ..
            },
            ..
        }))
    ));
    assert!(matches!(
        parse_repetition("RRULE:FREQ=SOMETIMES", &now, DEFAULT_DAY_START),
        Some(Err(RecurrenceError::Rule(_)))
    ));
}

/// The instant `utc` as a time in `zone`.
fn instant_in(utc: &str, zone: &str) -> ZonedDateTime {
    let ts: Timestamp = utc.parse().unwrap();
    ts.to_zoned_datetime(TimeZone::get(zone).unwrap())
}

/// The night clocks go back: a wall time of the repeated hour stands for its first instance
/// (RFC 5545), so from the second pass the next occurrence is the first wall time after the fold,
/// however many of the rule's wall times fall in the hour; never "no occurrence", never the end.
#[test]
fn autumn_fold_next_occurrence_in_any_zone() {
    // Created at 01:20 in the repeated hour (the second pass, -05:00) in New York.
    let now = instant_in("2026-11-01T06:20:00Z", "America/New_York");
    let (_, got) = walk("*/5 * * * *", &now, 3);
    assert_eq!(
        got,
        [
            "Sun 2026-11-01 02:00 -05:00",
            "Sun 2026-11-01 02:05 -05:00",
            "Sun 2026-11-01 02:10 -05:00"
        ]
    );
    // Created before the hour, announced during its second pass: the series goes on.
    let before = at("2026-11-01T00:50", "America/New_York");
    let rep = parse_repetition("*/5 * * * *", &before, DEFAULT_DAY_START)
        .unwrap()
        .unwrap();
    let tz = before.time_zone();
    for (from, next) in [
        ("2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"),
        ("2026-11-01T06:20:00Z", "2026-11-01T07:00:00Z"),
        ("2026-11-01T06:59:59Z", "2026-11-01T07:00:00Z"),
        // The first pass is unchanged.
        ("2026-11-01T05:20:01Z", "2026-11-01T05:25:00Z"),
    ] {
        let got = rep
            .recurrence
            .next_at_or_after(from.parse().unwrap(), tz)
            .unwrap();
        assert_eq!(got, Some(next.parse().unwrap()), "from {from}");
    }
    // Another zone and rule: every minute (sixty wall times in the fold) in Berlin.
    let now = instant_in("2026-10-25T01:30:00Z", "Europe/Berlin");
    let (_, got) = walk("* * * * *", &now, 2);
    assert_eq!(
        got,
        ["Sun 2026-10-25 03:00 +01:00", "Sun 2026-10-25 03:01 +01:00"]
    );
    // A fold of thirty minutes (Lord Howe Island): every 5 minutes.
    let now = instant_in("2026-04-04T15:10:00Z", "Australia/Lord_Howe");
    let (_, got) = walk("*/5 * * * *", &now, 1);
    assert_eq!(got, ["Sun 2026-04-05 02:00 +10:30"]);
}
