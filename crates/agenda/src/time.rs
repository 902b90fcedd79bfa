//! Dates and trigger times: parsing (`tools.md` §1.0, §2.0.1, decision D7) and the displayed forms
//! (`formats.md` §8).

use std::sync::LazyLock;

use jiff::civil::{Date, DateTime, ISOWeekDate, Weekday};
use jiff::tz::{Offset, TimeZone};
use jiff::{Timestamp, ZonedDateTime};
use regex::Regex;

/// Largest relative duration accepted (3650 days), in seconds.
const MAX_RELATIVE_SECONDS: i64 = 3650 * 86_400;

static ISO_DATE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^(\d{4})(?:-(\d{2})-(\d{2})|(\d{2})(\d{2})|-?W(\d{2})(?:-?([1-7]))?)$").ok()
});

static ABSOLUTE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(\d{4})-(\d{2})-(\d{2})",
        r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?",
        r"(Z|[+-]\d{2}:\d{2}|[+-]\d{4}|[+-]\d{2})?)?$"
    ))
    .ok()
});

static COMPACT: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\+?(?:\d+[wdhm])+$").ok());
static COMPACT_PART: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(\d+)([wdhm])").ok());

fn captures<'h>(re: &LazyLock<Option<Regex>>, s: &'h str) -> Option<regex::Captures<'h>> {
    re.as_ref().and_then(|re| re.captures(s))
}

fn num(caps: &regex::Captures<'_>, i: usize) -> Option<i64> {
    caps.get(i).and_then(|m| m.as_str().parse().ok())
}

/// Parses an `item_date` / `due_date` argument (`tools.md` §1.0): `YYYY-MM-DD`, `YYYYMMDD`,
/// `YYYY-Www`, `YYYYWww` (the Monday of ISO week `ww`), `YYYY-Www-D`, `YYYYWwwD` (ISO weekday `D`).
/// Whitespace, times, `2026-3-20` and impossible dates give `None`.
///
/// ```
/// use elroy_agenda::parse_item_date;
/// assert_eq!(parse_item_date("2026-03-20").unwrap().to_string(), "2026-03-20");
/// assert_eq!(parse_item_date("2026W121").unwrap().to_string(), "2026-03-16");
/// assert!(parse_item_date("2026-3-18").is_none());
/// ```
pub fn parse_item_date(input: &str) -> Option<Date> {
    let caps = captures(&ISO_DATE, input)?;
    let year = i16::try_from(num(&caps, 1)?).ok()?;
    if caps.get(2).is_some() || caps.get(4).is_some() {
        let (m, d) = if caps.get(2).is_some() {
            (2, 3)
        } else {
            (4, 5)
        };
        let month = i8::try_from(num(&caps, m)?).ok()?;
        let day = i8::try_from(num(&caps, d)?).ok()?;
        return Date::new(year, month, day).ok();
    }
    let week = i8::try_from(num(&caps, 6)?).ok()?;
    let weekday = match caps.get(7) {
        Some(_) => Weekday::from_monday_one_offset(i8::try_from(num(&caps, 7)?).ok()?).ok()?,
        None => Weekday::Monday,
    };
    ISOWeekDate::new(year, week, weekday).ok().map(|w| w.date())
}

/// The `Invalid datetime format` message of `tools.md` §2.0.1 for a trimmed input.
pub fn invalid_datetime_message(input: &str) -> String {
    format!(
        "Invalid datetime format: '{input}'. Expected formats: 'YYYY-MM-DD HH:MM:SS', \
         'YYYY-MM-DD HH:MM', 'YYYY-MM-DD', or ISO 8601 format"
    )
}

fn unit_seconds(unit: &str) -> Option<i64> {
    Some(match unit {
        "m" | "minute" | "minutes" | "min" | "mins" => 60,
        "h" | "hour" | "hours" | "hr" | "hrs" => 3600,
        "d" | "day" | "days" => 86_400,
        "w" | "week" | "weeks" => 604_800,
        _ => return None,
    })
}

/// Seconds of a relative form (`in 2 hours`, `in 1 hour and 30 minutes`, `+45m`, `1h30m`), or
/// `None` when the input is not one. Zero and overflowing durations are `Some(0)` / `None`.
fn relative_seconds(input: &str) -> Option<Option<i64>> {
    let lower = input.to_lowercase();
    if let Some(rest) = lower.strip_prefix("in ") {
        let tokens: Vec<&str> = rest
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty() && *t != "and")
            .collect();
        if tokens.is_empty() || !tokens.len().is_multiple_of(2) {
            return None;
        }
        let mut total: i64 = 0;
        for pair in tokens.chunks(2) {
            let n: i64 = match pair[0] {
                "a" | "an" => 1,
                t if t.bytes().all(|b| b.is_ascii_digit()) => match t.parse() {
                    Ok(n) => n,
                    Err(_) => return Some(None),
                },
                _ => return None,
            };
            let unit = unit_seconds(pair[1])?;
            let Some(sum) = n.checked_mul(unit).and_then(|s| total.checked_add(s)) else {
                return Some(None);
            };
            total = sum;
        }
        return Some(Some(total));
    }
    if captures(&COMPACT, &lower).is_some() {
        let mut total: i64 = 0;
        let re = COMPACT_PART.as_ref()?;
        for caps in re.captures_iter(&lower) {
            let Some(n) = num(&caps, 1) else {
                return Some(None);
            };
            let unit = unit_seconds(caps.get(2).map_or("", |m| m.as_str()))?;
            let Some(sum) = n.checked_mul(unit).and_then(|s| total.checked_add(s)) else {
                return Some(None);
            };
            total = sum;
        }
        return Some(Some(total));
    }
    None
}

fn parse_offset(text: &str) -> Option<Offset> {
    if text == "Z" {
        return Some(Offset::UTC);
    }
    let sign: i32 = if text.starts_with('-') { -1 } else { 1 };
    let digits: String = text[1..].chars().filter(char::is_ascii_digit).collect();
    let hours: i32 = digits.get(0..2)?.parse().ok()?;
    let minutes: i32 = match digits.get(2..4) {
        Some(m) => m.parse().ok()?,
        None => 0,
    };
    if hours > 23 || minutes > 59 {
        return None;
    }
    Offset::from_seconds(sign * (hours * 3600 + minutes * 60)).ok()
}

/// Parses an absolute time (`tools.md` §2.0.1 form 2). With an offset or `Z`: that instant.
/// Without: a wall-clock time in `tz` (a gap reads with the offset before it, a fold takes the
/// earlier instant). Sub-seconds are kept; callers truncate.
pub fn parse_absolute_time(input: &str, tz: &TimeZone) -> Option<Timestamp> {
    let caps = captures(&ABSOLUTE, input)?;
    let date = Date::new(
        i16::try_from(num(&caps, 1)?).ok()?,
        i8::try_from(num(&caps, 2)?).ok()?,
        i8::try_from(num(&caps, 3)?).ok()?,
    )
    .ok()?;
    let hour = caps.get(4).map_or(Some(0), |_| num(&caps, 4))?;
    let minute = caps.get(5).map_or(Some(0), |_| num(&caps, 5))?;
    let second = caps.get(6).map_or(Some(0), |_| num(&caps, 6))?;
    let nanos: i32 = match caps.get(7) {
        Some(m) => {
            let mut digits: String = m.as_str().chars().take(9).collect();
            while digits.len() < 9 {
                digits.push('0');
            }
            digits.parse().ok()?
        }
        None => 0,
    };
    let dt = DateTime::new(
        date.year(),
        date.month(),
        date.day(),
        i8::try_from(hour).ok()?,
        i8::try_from(minute).ok()?,
        i8::try_from(second).ok()?,
        nanos,
    )
    .ok()?;
    match caps.get(8) {
        Some(offset) => parse_offset(offset.as_str())?.to_timestamp(dt).ok(),
        None => tz.to_ambiguous_timestamp(dt).compatible().ok(),
    }
}

fn whole_seconds(ts: Timestamp) -> Option<Timestamp> {
    Timestamp::from_second(ts.as_second() - i64::from(ts.subsec_nanosecond() < 0)).ok()
}

/// Parses a `trigger_time` argument (`tools.md` §2.0.1, D7): relative forms first (now + the
/// duration, 1 second to 3650 days), then absolute forms (naive times in `now`'s zone). The
/// result is a UTC instant in whole seconds.
///
/// # Errors
/// The `Invalid datetime format: '{trimmed input}'. …` message.
///
/// ```
/// use elroy_agenda::parse_trigger_time;
/// let now = "2026-11-30T03:23:24Z".parse::<jiff::Timestamp>().unwrap()
///     .to_zoned_datetime(jiff::tz::TimeZone::posix("IST-5:30").unwrap());
/// assert_eq!(parse_trigger_time("in 30 minutes", &now).unwrap().to_string(), "2026-11-30T03:53:24Z");
/// assert_eq!(parse_trigger_time("2026-12-02 09:00", &now).unwrap().to_string(), "2026-12-02T03:30:00Z");
/// assert!(parse_trigger_time("tomorrow", &now).is_err());
/// ```
pub fn parse_trigger_time(input: &str, now: &ZonedDateTime) -> Result<Timestamp, String> {
    let trimmed = input.trim();
    let invalid = || invalid_datetime_message(trimmed);
    if let Some(seconds) = relative_seconds(trimmed) {
        let seconds = seconds.ok_or_else(invalid)?;
        if seconds <= 0 || seconds > MAX_RELATIVE_SECONDS {
            return Err(invalid());
        }
        let base = whole_seconds(now.timestamp()).ok_or_else(invalid)?;
        return Timestamp::from_second(base.as_second() + seconds).map_err(|_| invalid());
    }
    parse_absolute_time(trimmed, now.time_zone())
        .and_then(whole_seconds)
        .ok_or_else(invalid)
}

/// A stored `trigger_datetime` read back (`formats.md` §8.4): an absolute form with an offset is
/// that instant; without an offset it is UTC.
pub fn parse_stored_trigger(text: &str) -> Option<Timestamp> {
    parse_absolute_time(text.trim(), &TimeZone::UTC)
}

/// The stored form of a trigger instant: `YYYY-MM-DD HH:MM:SS+00:00` in UTC (`formats.md` §8.2).
pub fn format_stored_trigger(ts: Timestamp) -> String {
    ts.to_zoned_datetime(TimeZone::UTC)
        .strftime("%Y-%m-%d %H:%M:%S+00:00")
        .to_string()
}

/// A trigger time as displayed (D7): local time with offset, `YYYY-MM-DD HH:MM:SS±HH:MM`
/// (`formats.md` §8.3), for example `2026-12-02 09:00:00+05:30`.
pub fn format_local_with_offset(ts: Timestamp, tz: &TimeZone) -> String {
    ts.to_zoned_datetime(tz.clone())
        .strftime("%Y-%m-%d %H:%M:%S%:z")
        .to_string()
}

/// An instant the way Python's `str(datetime)` prints a UTC datetime: `YYYY-MM-DD HH:MM:SS+00:00`,
/// with `.ffffff` before the offset only when the microseconds are not zero (`tools.md` §2.1 step 4).
pub fn format_python_utc(ts: Timestamp) -> String {
    let zdt = ts.to_zoned_datetime(TimeZone::UTC);
    let micros = zdt.subsec_nanosecond() / 1000;
    if micros == 0 {
        zdt.strftime("%Y-%m-%d %H:%M:%S+00:00").to_string()
    } else {
        format!("{}.{micros:06}+00:00", zdt.strftime("%Y-%m-%d %H:%M:%S"))
    }
}

/// An update stamp: local `YYYY-MM-DD HH:MM` (`formats.md` §8.2).
pub fn format_update_stamp(now: &ZonedDateTime) -> String {
    now.strftime("%Y-%m-%d %H:%M").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(tz: &str) -> ZonedDateTime {
        "2026-11-30T03:23:24Z"
            .parse::<Timestamp>()
            .unwrap()
            .to_zoned_datetime(TimeZone::get(tz).unwrap())
    }

    fn stored(input: &str, now: &ZonedDateTime) -> String {
        format_stored_trigger(parse_trigger_time(input, now).unwrap())
    }

    #[test]
    fn trigger_examples_of_the_spec() {
        let n = now("Asia/Kolkata");
        let cases = [
            ("2026-12-02 09:00", "2026-12-02 03:30:00+00:00"),
            ("2026-12-02T09:00:00Z", "2026-12-02 09:00:00+00:00"),
            ("2026-12-02T09:00+01:00", "2026-12-02 08:00:00+00:00"),
            ("2026-12-02", "2026-12-01 18:30:00+00:00"),
            ("in 30 minutes", "2026-11-30 03:53:24+00:00"),
            ("+45m", "2026-11-30 04:08:24+00:00"),
            ("in 2 hours", "2026-11-30 05:23:24+00:00"),
            ("in 3 days", "2026-12-03 03:23:24+00:00"),
            ("2m", "2026-11-30 03:25:24+00:00"),
            ("in 2 minutes", "2026-11-30 03:25:24+00:00"),
            ("+1h30m", "2026-11-30 04:53:24+00:00"),
            ("in an hour", "2026-11-30 04:23:24+00:00"),
            ("in 1 hour and 30 minutes", "2026-11-30 04:53:24+00:00"),
            ("In 1 Hour, 30 mins", "2026-11-30 04:53:24+00:00"),
            ("  2026-12-02 09:00:30.75  ", "2026-12-02 03:30:30+00:00"),
            ("2026-12-02T09:00:00+0530", "2026-12-02 03:30:00+00:00"),
            ("2026-12-02T09:00:00-03", "2026-12-02 12:00:00+00:00"),
        ];
        for (input, expected) in cases {
            assert_eq!(stored(input, &n), expected, "{input}");
        }
        for bad in [
            "tomorrow",
            "0m",
            "in 0 days",
            "in 3651 days",
            "2026-12-2",
            "in days",
            "1x",
        ] {
            let err = parse_trigger_time(bad, &n).unwrap_err();
            assert_eq!(err, invalid_datetime_message(bad), "{bad}");
        }
        assert!(parse_trigger_time("in 3650 days", &n).is_ok());
    }

    #[test]
    fn dst_gap_and_fold() {
        let n = now("America/New_York");
        // 2026-03-08 02:30 does not exist in New York: read with the offset before the gap (-05).
        assert_eq!(stored("2026-03-08 02:30", &n), "2026-03-08 07:30:00+00:00");
        // 2026-11-01 01:30 happens twice: the earlier instant (-04).
        assert_eq!(stored("2026-11-01 01:30", &n), "2026-11-01 05:30:00+00:00");
    }

    #[test]
    fn item_dates() {
        for (input, expected) in [
            ("2026-03-20", "2026-03-20"),
            ("20260320", "2026-03-20"),
            ("2026-W12", "2026-03-16"),
            ("2026W12", "2026-03-16"),
            ("2026-W12-5", "2026-03-20"),
            ("2026W125", "2026-03-20"),
        ] {
            assert_eq!(parse_item_date(input).unwrap().to_string(), expected);
        }
        for bad in [
            "2026-3-18",
            " 2026-03-20",
            "2026-02-30",
            "2026-03-20T10:00",
            "2026-W54",
            "",
        ] {
            assert!(parse_item_date(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn displays() {
        let ts: Timestamp = "2026-12-02T03:30:00Z".parse().unwrap();
        let ist = TimeZone::posix("IST-5:30").unwrap();
        assert_eq!(
            format_local_with_offset(ts, &ist),
            "2026-12-02 09:00:00+05:30"
        );
        let ny = TimeZone::get("America/New_York").unwrap();
        assert_eq!(
            format_local_with_offset("2026-07-01T03:30:00Z".parse().unwrap(), &ny),
            "2026-06-30 23:30:00-04:00"
        );
        assert_eq!(format_python_utc(ts), "2026-12-02 03:30:00+00:00");
        let micro: Timestamp = "2026-03-16T03:00:00.000001Z".parse().unwrap();
        assert_eq!(format_python_utc(micro), "2026-03-16 03:00:00.000001+00:00");
        assert_eq!(
            parse_stored_trigger("2026-07-01 09:00:00+05:30").unwrap(),
            "2026-07-01T03:30:00Z".parse::<Timestamp>().unwrap()
        );
        assert_eq!(
            parse_stored_trigger("2026-07-01 03:30:00").unwrap(),
            "2026-07-01T03:30:00Z".parse::<Timestamp>().unwrap()
        );
    }
}
