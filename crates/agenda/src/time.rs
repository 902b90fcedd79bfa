//! Dates and trigger times: parsing (`docs/tool-rules.md#finding-an-agenda-item`,
//! `docs/tool-rules.md#reading-a-trigger-time`, decision D7) and the displayed forms
//! (`docs/formats.md#times-and-time-zones`).

use std::sync::LazyLock;

use jiff::civil::{Date, DateTime, ISOWeekDate, Time, Weekday};

use crate::spoken::{self, DEFAULT_DAY_START};
use jiff::tz::{Offset, TimeZone};
use jiff::{Timestamp, ZonedDateTime};
use regex::Regex;

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

fn captures<'h>(re: &LazyLock<Option<Regex>>, s: &'h str) -> Option<regex::Captures<'h>> {
    re.as_ref().and_then(|re| re.captures(s))
}

fn num(caps: &regex::Captures<'_>, i: usize) -> Option<i64> {
    caps.get(i).and_then(|m| m.as_str().parse().ok())
}

/// Parses an `item_date` / `due_date` argument (`docs/tool-rules.md#finding-an-agenda-item`):
/// `YYYY-MM-DD`, `YYYYMMDD`, `YYYY-Www`, `YYYYWww` (the Monday of ISO week `ww`), `YYYY-Www-D`,
/// `YYYYWwwD` (ISO weekday `D`). Whitespace, times, `2026-3-20` and impossible dates give `None`.
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

/// The `Invalid datetime format` message of `docs/tool-rules.md#reading-a-trigger-time` for a
/// trimmed input.
pub fn invalid_datetime_message(input: &str) -> String {
    format!(
        "Invalid datetime format: '{input}'. Expected formats: 'YYYY-MM-DD HH:MM:SS', \
         'YYYY-MM-DD HH:MM', 'YYYY-MM-DD', or ISO 8601 format"
    )
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

/// Parses an absolute time (`docs/tool-rules.md#reading-a-trigger-time` form 2). With an offset or
/// `Z`: that instant. Without: a wall-clock time in `tz` (a gap reads with the offset before it, a
/// fold takes the earlier instant). Sub-seconds are kept; callers truncate.
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

/// Parses a `trigger_time` argument as [`parse_trigger_time_with`] with the default day start
/// (09:00).
///
/// # Errors
/// As [`parse_trigger_time_with`].
///
/// ```
/// use elroy_agenda::parse_trigger_time;
/// let now = "2026-11-30T03:23:24Z".parse::<jiff::Timestamp>().unwrap()
///     .to_zoned_datetime(jiff::tz::TimeZone::posix("IST-5:30").unwrap());
/// assert_eq!(parse_trigger_time("in 30 minutes", &now).unwrap().to_string(), "2026-11-30T03:53:24Z");
/// assert_eq!(parse_trigger_time("2026-12-02 09:00", &now).unwrap().to_string(), "2026-12-02T03:30:00Z");
/// assert_eq!(parse_trigger_time("tomorrow 9am", &now).unwrap().to_string(), "2026-12-01T03:30:00Z");
/// assert_eq!(parse_trigger_time("tomorrow", &now).unwrap().to_string(), "2026-12-01T03:30:00Z");
/// assert!(parse_trigger_time("someday", &now).is_err());
/// ```
pub fn parse_trigger_time(input: &str, now: &ZonedDateTime) -> Result<Timestamp, TriggerTimeError> {
    parse_trigger_time_with(input, now, DEFAULT_DAY_START)
}

/// Parses a one-off `trigger_time` (`create_due_item`, `elroy due snooze`, the palette, the
/// slash commands): relative forms first (now + the duration, 1 second to 3650 days; months and
/// years in the calendar), then the spoken forms of [`crate::spoken`] (`tomorrow 9am`,
/// `friday`, `tonight at 12`, `march 20`; a day without a time at `day_start`), then Elroy 0.5.0's
/// absolute forms (naive times in `now`'s zone; a bare `YYYY-MM-DD` is midnight, as in Elroy).
/// The result is a UTC instant in whole seconds.
///
/// # Errors
/// For a spoken time earlier today that has passed: `'{input}' is HH:MM today, which has already
/// passed (it is HH:MM now). …` (never moved to tomorrow); `tonight at 9am`: that tonight means
/// 17:00 to 04:59. Anything else that is not a form: the `Invalid datetime format: '{trimmed
/// input}'. …` message of Elroy.
pub fn parse_trigger_time_with(
    input: &str,
    now: &ZonedDateTime,
    day_start: Time,
) -> Result<Timestamp, TriggerTimeError> {
    let trimmed = input.trim();
    let invalid = || TriggerTimeError::NotATime(trimmed.to_owned());
    if let Some(relative) = spoken::relative_time(trimmed, now) {
        return relative.map_err(|()| invalid());
    }
    if is_elroy_form(trimmed) {
        return parse_absolute_time(trimmed, now.time_zone())
            .and_then(whole_seconds)
            .ok_or_else(invalid);
    }
    if let Some(result) = spoken::spoken_time(trimmed, now, day_start) {
        return result;
    }
    Err(invalid())
}

/// Why a one-off `trigger_time` was not read ([`parse_trigger_time_with`]); its text is what the
/// model or person reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TriggerTimeError {
    /// Not a form elroy reads (the trimmed input): Elroy 0.5.0's `Invalid datetime format: …`
    /// message ([`invalid_datetime_message`]), which front ends may follow with the other forms
    /// they accept.
    #[error("{}", invalid_datetime_message(.0))]
    NotATime(String),
    /// A form elroy reads naming a time that cannot be meant (a time earlier today that has
    /// passed, `tonight at 9am`, `february 30`): why.
    #[error("{0}")]
    CannotBeMeant(String),
}

impl From<TriggerTimeError> for String {
    fn from(error: TriggerTimeError) -> Self {
        error.to_string()
    }
}

/// Why a `create_due_item` `trigger_time` was not understood ([`understand_trigger`]); its text
/// is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum TriggerError {
    /// Not a form elroy reads: Elroy's `Invalid datetime format` message followed by the forms
    /// elroy also accepts.
    #[error(
        "{0}; elroy also accepts times as people say them (in 2 hours, tomorrow 9am, friday, \
         tonight at 9, march 20 10:30) and repetitions (every weekday at 9am, every 2 weeks on \
         monday at 10, 0 9 * * 1-5, RRULE:FREQ=DAILY)"
    )]
    Unknown(#[source] TriggerTimeError),
    /// A one-off time that cannot be meant (or an Elroy form that does not parse).
    #[error(transparent)]
    Time(#[from] TriggerTimeError),
    /// A repetition that cannot be used.
    #[error(transparent)]
    Repetition(#[from] crate::RecurrenceError),
}

/// A `trigger_time` understood ([`understand_trigger`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Understood {
    /// The instant: the one-off time, or a repetition's first occurrence.
    pub at: Timestamp,
    /// The rule, for a repetition.
    pub recurrence: Option<crate::Recurrence>,
    /// Whether the input was one of Elroy 0.5.0's own formats ([`is_elroy_form`]): then the
    /// confirmation is Elroy's sentence alone.
    pub elroy_form: bool,
}

impl Understood {
    /// What was understood, for a confirmation: `Wed 2026-03-18 09:00 +01:00`, and for a
    /// repetition `, every weekday at 09:00`, in `tz` (the rule's own zone for a repetition).
    pub fn resolved(&self, tz: &TimeZone) -> String {
        let zone = self
            .recurrence
            .as_ref()
            .map_or_else(|| tz.clone(), |r| r.time_zone(tz));
        let shown = format_spoken_instant(self.at, &zone);
        match &self.recurrence {
            Some(rule) => format!("{shown}, {}", rule.describe()),
            None => shown,
        }
    }
}

/// An instant with its weekday, as a confirmation shows it: `Wed 2026-03-18 09:00 +01:00`.
pub fn format_spoken_instant(ts: Timestamp, tz: &TimeZone) -> String {
    ts.to_zoned_datetime(tz.clone())
        .strftime("%a %Y-%m-%d %H:%M %:z")
        .to_string()
}

/// Understands a `create_due_item` `trigger_time` at `now`: Elroy 0.5.0's own formats first (a
/// bare `YYYY-MM-DD` stays midnight), then a repetition ([`crate::parse_repetition`]: `every
/// weekday at 9am`, `0 9 * * 1-5`, `RRULE:FREQ=…`), then a one-off as
/// [`parse_trigger_time_with`].
///
/// # Errors
/// [`TriggerError`]: the errors of [`crate::parse_repetition`] and [`parse_trigger_time_with`];
/// a phrase that is neither gives Elroy's `Invalid datetime format` message followed by the
/// forms elroy also accepts.
pub fn understand_trigger(
    input: &str,
    now: &ZonedDateTime,
    day_start: Time,
) -> Result<Understood, TriggerError> {
    let trimmed = input.trim();
    if is_elroy_form(trimmed) {
        return Ok(Understood {
            at: parse_trigger_time_with(trimmed, now, day_start)?,
            recurrence: None,
            elroy_form: true,
        });
    }
    if let Some(repetition) = crate::recurrence::parse_repetition(trimmed, now, day_start) {
        let repetition = repetition?;
        return Ok(Understood {
            at: repetition.first,
            recurrence: Some(repetition.recurrence),
            elroy_form: false,
        });
    }
    let at = parse_trigger_time_with(trimmed, now, day_start).map_err(|e| match e {
        TriggerTimeError::NotATime(_) => TriggerError::Unknown(e),
        TriggerTimeError::CannotBeMeant(_) => TriggerError::Time(e),
    })?;
    Ok(Understood {
        at,
        recurrence: None,
        elroy_form: false,
    })
}

/// Whether `input` (trimmed) is one of Elroy 0.5.0's own formats (`YYYY-MM-DD HH:MM[:SS]`,
/// `YYYY-MM-DD`, ISO 8601 with or without an offset): the forms whose confirmation stays
/// Elroy's sentence alone.
pub fn is_elroy_form(input: &str) -> bool {
    captures(&ABSOLUTE, input.trim()).is_some()
}

/// A stored `trigger_datetime` read back (`docs/formats.md#reading-times-elroy-wrote`): an absolute
/// form with an offset is that instant; without an offset it is UTC.
pub fn parse_stored_trigger(text: &str) -> Option<Timestamp> {
    parse_absolute_time(text.trim(), &TimeZone::UTC)
}

/// The stored form of a trigger instant: `YYYY-MM-DD HH:MM:SS+00:00` in UTC
/// (`docs/formats.md#timestamps-elroy-writes`).
pub fn format_stored_trigger(ts: Timestamp) -> String {
    ts.to_zoned_datetime(TimeZone::UTC)
        .strftime("%Y-%m-%d %H:%M:%S+00:00")
        .to_string()
}

/// A trigger time as displayed (D7): local time with offset, `YYYY-MM-DD HH:MM:SS±HH:MM`
/// (`docs/formats.md#displayed-times`), for example `2026-12-02 09:00:00+05:30`.
pub fn format_local_with_offset(ts: Timestamp, tz: &TimeZone) -> String {
    ts.to_zoned_datetime(tz.clone())
        .strftime("%Y-%m-%d %H:%M:%S%:z")
        .to_string()
}

/// An instant the way Python's `str(datetime)` prints a UTC datetime: `YYYY-MM-DD HH:MM:SS+00:00`,
/// with `.ffffff` before the offset only when the microseconds are not zero
/// (`docs/tools.md#create_due_item` step 4).
pub fn format_python_utc(ts: Timestamp) -> String {
    let zdt = ts.to_zoned_datetime(TimeZone::UTC);
    let micros = zdt.subsec_nanosecond() / 1000;
    if micros == 0 {
        zdt.strftime("%Y-%m-%d %H:%M:%S+00:00").to_string()
    } else {
        format!("{}.{micros:06}+00:00", zdt.strftime("%Y-%m-%d %H:%M:%S"))
    }
}

/// An update stamp: local `YYYY-MM-DD HH:MM` (`docs/formats.md#timestamps-elroy-writes`).
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
            "someday",
            "0m",
            "in 0 days",
            "in 3651 days",
            "2026-12-2",
            "in days",
            "1x",
        ] {
            let err = parse_trigger_time(bad, &n).unwrap_err();
            assert_eq!(err, TriggerTimeError::NotATime(bad.into()), "{bad}");
            assert_eq!(err.to_string(), invalid_datetime_message(bad), "{bad}");
        }
        assert!(parse_trigger_time("in 3650 days", &n).is_ok());
    }

    /// The natural forms, in the configured zone. `now` is Monday 2026-11-30 08:53:24
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
            let err = parse_trigger_time(input, &n).unwrap_err().to_string();
            assert!(
                err.contains("today, which has already passed"),
                "{input}: {err}"
            );
            assert!(err.contains("it is 08:53 now"), "{input}: {err}");
            assert!(err.contains(hint), "{input}: {err}");
        }
        // Anything else keeps the old message.
        for bad in [
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
            assert_eq!(err, TriggerTimeError::NotATime(bad.into()), "{bad}");
            assert_eq!(err.to_string(), invalid_datetime_message(bad), "{bad}");
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
