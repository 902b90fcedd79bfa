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
/// duration, 1 second to 3650 days), then the natural forms of issue 16 (`tomorrow 9am`,
/// `friday 17:00`, `next monday at 5:30 pm`, `tonight at 9`, `noon`: a day word, an optional `at`
/// and a 12- or 24-hour time; a weekday is the next such day, today included; `next {weekday}` is
/// the next one after today; a bare hour only after `at`), then absolute forms (naive times in
/// `now`'s zone). The result is a UTC instant in whole seconds. Used alike by `create_due_item`,
/// `elroy due snooze` and the interfaces.
///
/// # Errors
/// For a natural form whose time earlier today has passed: `'{input}' is HH:MM today, which has
/// already passed (it is HH:MM now). …` (never moved to tomorrow). Anything else that is not a
/// form: the `Invalid datetime format: '{trimmed input}'. …` message.
///
/// ```
/// use elroy_agenda::parse_trigger_time;
/// let now = "2026-11-30T03:23:24Z".parse::<jiff::Timestamp>().unwrap()
///     .to_zoned_datetime(jiff::tz::TimeZone::posix("IST-5:30").unwrap());
/// assert_eq!(parse_trigger_time("in 30 minutes", &now).unwrap().to_string(), "2026-11-30T03:53:24Z");
/// assert_eq!(parse_trigger_time("2026-12-02 09:00", &now).unwrap().to_string(), "2026-12-02T03:30:00Z");
/// assert_eq!(parse_trigger_time("tomorrow 9am", &now).unwrap().to_string(), "2026-12-01T03:30:00Z");
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
    if let Some(natural) = natural_time(trimmed, now) {
        return natural;
    }
    parse_absolute_time(trimmed, now.time_zone())
        .and_then(whole_seconds)
        .ok_or_else(invalid)
}

/// The day of a natural form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DayWord {
    Today,
    Tonight,
    Tomorrow,
    /// A weekday name: the next such day, today included.
    Weekday(Weekday),
    /// `next {weekday}`: the next such day after today.
    NextWeekday(Weekday),
}

fn weekday_word(word: &str) -> Option<Weekday> {
    Some(match word {
        "monday" | "mon" => Weekday::Monday,
        "tuesday" | "tue" | "tues" => Weekday::Tuesday,
        "wednesday" | "wed" => Weekday::Wednesday,
        "thursday" | "thu" | "thur" | "thurs" => Weekday::Thursday,
        "friday" | "fri" => Weekday::Friday,
        "saturday" | "sat" => Weekday::Saturday,
        "sunday" | "sun" => Weekday::Sunday,
        _ => return None,
    })
}

/// A day phrase at the start of `words`: the day and how many words it took.
fn day_phrase(words: &[&str]) -> Option<(DayWord, usize)> {
    match words {
        ["today", ..] => Some((DayWord::Today, 1)),
        ["tonight", ..] => Some((DayWord::Tonight, 1)),
        ["tomorrow" | "tmrw", ..] => Some((DayWord::Tomorrow, 1)),
        ["next", day, ..] => weekday_word(day).map(|w| (DayWord::NextWeekday(w), 2)),
        [day, ..] => weekday_word(day).map(|w| (DayWord::Weekday(w), 1)),
        [] => None,
    }
}

/// A time of day as written: hour, minute, and whether it had `am`/`pm` (`Some(true)` for pm).
#[derive(Debug, Clone, Copy)]
struct TimeWords {
    hour: i8,
    minute: i8,
    meridiem: Option<bool>,
    /// A bare hour (`at 9`): no minutes, no am/pm.
    bare: bool,
}

/// The time in `words` (all of them): `9am`, `9 am`, `5:30 pm`, `5:30pm`, `17:00`, `noon`, or a bare
/// hour (`9`, only after `at`). `None` when the words are not exactly one time.
fn time_words(words: &[&str]) -> Option<TimeWords> {
    let text: String = match words {
        [one] => (*one).to_owned(),
        [_, "am" | "pm" | "a.m." | "p.m."] => words.concat(),
        _ => return None,
    };
    if text == "noon" {
        return Some(TimeWords {
            hour: 12,
            minute: 0,
            meridiem: None,
            bare: false,
        });
    }
    let (clock, meridiem) = if let Some(c) = text
        .strip_suffix("am")
        .or_else(|| text.strip_suffix("a.m."))
    {
        (c, Some(false))
    } else if let Some(c) = text
        .strip_suffix("pm")
        .or_else(|| text.strip_suffix("p.m."))
    {
        (c, Some(true))
    } else {
        (text.as_str(), None)
    };
    let (hour, minute) = match clock.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h, Some(m)),
        Some(_) => return None,
        None => (clock, None),
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(hour) || minute.is_some_and(|m| !digits(m)) {
        return None;
    }
    let hour: i8 = hour.parse().ok()?;
    let minute: i8 = minute.map_or(Some(0), |m| m.parse().ok())?;
    let valid_hour = match meridiem {
        Some(_) => (1..=12).contains(&hour),
        None => (0..=23).contains(&hour),
    };
    if !valid_hour || !(0..=59).contains(&minute) {
        return None;
    }
    Some(TimeWords {
        hour,
        minute,
        meridiem,
        bare: meridiem.is_none() && !clock.contains(':'),
    })
}

/// The natural forms (issue 16): an optional day word (`today`, `tonight`, `tomorrow`, a weekday,
/// `next {weekday}`), an optional `at`, and a time (`9am`, `5:30 pm`, `17:00`, `noon`; a bare hour
/// only after `at`); the day may also follow the time (`5pm tonight`, `9am on friday`). Returns
/// `None` when `input` is not such a form (the caller tries the other forms), else the instant in
/// `now`'s zone (a gap or fold as [`parse_absolute_time`]), or the error for a time earlier today
/// that has passed.
fn natural_time(input: &str, now: &ZonedDateTime) -> Option<Result<Timestamp, String>> {
    let lower = input.to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let (day, time) = parse_natural(&words)?;
    let day = day.unwrap_or(DayWord::Today);
    let today = now.date();
    let date = match day {
        DayWord::Today | DayWord::Tonight => today,
        DayWord::Tomorrow => today.tomorrow().ok()?,
        DayWord::Weekday(w) => today
            .nth_weekday(1, w)
            .ok()
            .map(|d| if today.weekday() == w { today } else { d })?,
        DayWord::NextWeekday(w) => today.nth_weekday(1, w).ok()?,
    };
    let mut hour = time.hour;
    match time.meridiem {
        Some(pm) => hour = hour % 12 + if pm { 12 } else { 0 },
        // `tonight at 9`, `tonight 9:30`: the evening.
        None if day == DayWord::Tonight && hour < 12 => hour += 12,
        None => {}
    }
    let dt = date.at(hour, time.minute, 0, 0);
    let ts = now
        .time_zone()
        .to_ambiguous_timestamp(dt)
        .compatible()
        .ok()?;
    if ts < now.timestamp() {
        let shown = dt.strftime("%H:%M");
        let example = match day {
            DayWord::Weekday(w) => format!("next {} {shown}", weekday_name(w)),
            _ => format!("tomorrow {shown}"),
        };
        return Some(Err(format!(
            "'{input}' is {shown} today, which has already passed (it is {} now). Give a later \
             time, or another day such as '{example}'",
            now.strftime("%H:%M")
        )));
    }
    Some(Ok(ts))
}

fn weekday_name(w: Weekday) -> &'static str {
    match w {
        Weekday::Monday => "monday",
        Weekday::Tuesday => "tuesday",
        Weekday::Wednesday => "wednesday",
        Weekday::Thursday => "thursday",
        Weekday::Friday => "friday",
        Weekday::Saturday => "saturday",
        Weekday::Sunday => "sunday",
    }
}

/// Splits the words of a natural form into its day and its time.
fn parse_natural(words: &[&str]) -> Option<(Option<DayWord>, TimeWords)> {
    let with_at = |rest: &[&str]| -> Option<TimeWords> {
        match rest {
            ["at", time @ ..] => time_words(time),
            time => time_words(time).filter(|t| !t.bare),
        }
    };
    if let Some((day, n)) = day_phrase(words)
        && let Some(time) = with_at(&words[n..])
    {
        return Some((Some(day), time));
    }
    if let Some(time) = with_at(words) {
        return Some((None, time));
    }
    // The day after the time: `5pm tonight`, `9am on friday`, `at 9 tomorrow`.
    for split in 1..words.len() {
        let (time, day) = words.split_at(split);
        let day = match day {
            ["on", rest @ ..] => rest,
            rest => rest,
        };
        if let Some((parsed, n)) = day_phrase(day)
            && n == day.len()
            && let Some(time) = with_at(time)
        {
            return Some((Some(parsed), time));
        }
    }
    None
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

    /// Issue 16: the natural forms, in the configured zone. `now` is Monday 2026-11-30 08:53:24
    /// in Kolkata (03:23:24 UTC).
    #[test]
    fn natural_forms() {
        let n = now("Asia/Kolkata");
        let cases = [
            ("tomorrow 9am", "2026-12-01 03:30:00+00:00"),
            ("tomorrow at 9am", "2026-12-01 03:30:00+00:00"),
            ("Tomorrow at 9 AM", "2026-12-01 03:30:00+00:00"),
            ("tomorrow at 9", "2026-12-01 03:30:00+00:00"),
            ("9am tomorrow", "2026-12-01 03:30:00+00:00"),
            ("today 5:30 pm", "2026-11-30 12:00:00+00:00"),
            ("5:30pm", "2026-11-30 12:00:00+00:00"),
            ("at 17:00", "2026-11-30 11:30:00+00:00"),
            ("17:00", "2026-11-30 11:30:00+00:00"),
            ("noon", "2026-11-30 06:30:00+00:00"),
            ("tonight at 9", "2026-11-30 15:30:00+00:00"),
            ("5pm tonight", "2026-11-30 11:30:00+00:00"),
            ("tonight 21:15", "2026-11-30 15:45:00+00:00"),
            ("12am tomorrow", "2026-11-30 18:30:00+00:00"),
            ("tomorrow 12pm", "2026-12-01 06:30:00+00:00"),
            // Weekday names: the next such day, today included; `next`: after today.
            ("friday 17:00", "2026-12-04 11:30:00+00:00"),
            ("Fri at 5:30 p.m.", "2026-12-04 12:00:00+00:00"),
            ("9am on wednesday", "2026-12-02 03:30:00+00:00"),
            ("monday 18:00", "2026-11-30 12:30:00+00:00"),
            ("next monday 9am", "2026-12-07 03:30:00+00:00"),
            ("next friday at 9am", "2026-12-04 03:30:00+00:00"),
        ];
        for (input, expected) in cases {
            assert_eq!(stored(input, &n), expected, "{input}");
        }
        // A time earlier today is an error that says so (never moved to tomorrow).
        for (input, hint) in [
            ("8am", "tomorrow 08:00"),
            ("today at 8:30", "tomorrow 08:30"),
            ("monday 7am", "next monday 07:00"),
        ] {
            let err = parse_trigger_time(input, &n).unwrap_err();
            assert!(
                err.contains("today, which has already passed"),
                "{input}: {err}"
            );
            assert!(err.contains("it is 08:53 now"), "{input}: {err}");
            assert!(err.contains(hint), "{input}: {err}");
        }
        // Anything else keeps the old message.
        for bad in [
            "tomorrow",
            "tonight",
            "next monday",
            "9",
            "13pm",
            "0am",
            "25:00",
            "9:5",
            "tomorrow at",
            "at 1 2",
            "someday 9am",
            "next 9am",
            "9am 5pm",
        ] {
            let err = parse_trigger_time(bad, &n).unwrap_err();
            assert_eq!(err, invalid_datetime_message(bad), "{bad}");
        }
    }

    /// Natural forms across a daylight-saving change read as the absolute forms do.
    #[test]
    fn natural_forms_in_dst_gap_and_fold() {
        let ny = TimeZone::get("America/New_York").unwrap();
        let before_gap = "2026-03-07T15:00:00Z"
            .parse::<Timestamp>()
            .unwrap()
            .to_zoned_datetime(ny.clone());
        assert_eq!(
            stored("tomorrow 2:30am", &before_gap),
            "2026-03-08 07:30:00+00:00"
        );
        let before_fold = "2026-10-31T15:00:00Z"
            .parse::<Timestamp>()
            .unwrap()
            .to_zoned_datetime(ny);
        assert_eq!(
            stored("tomorrow at 1:30am", &before_fold),
            "2026-11-01 05:30:00+00:00"
        );
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
