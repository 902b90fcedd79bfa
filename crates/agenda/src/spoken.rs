//! Times as people say them: the one parser behind `create_due_item`'s
//! `trigger_time`, `elroy due snooze`, the palette and the slash commands, beside Elroy 0.5.0's own
//! ISO forms ([`crate::time`]). The grammar is elroy's own, documented with examples in
//! docs/tools.md:
//!
//! - relative: `in 2 hours`, `+45m`, `1h30m`, `in half an hour`, `in 1 month`, `in 2 years`
//!   (months and years are calendar arithmetic in the zone: Jan 31 + 1 month is Feb 28);
//! - a day, alone (then at the day start, 09:00 unless configured) or with a time: `today`,
//!   `tomorrow`, `friday`, `on friday`, `next friday`, `next week` (next Monday), `march 20`,
//!   `20 march 2026`, `mar 20th, 2026`;
//! - a part of the day: `tomorrow morning` (the day start), `afternoon` (14:00), `evening`
//!   (18:00), `tonight` / `this evening` (20:00, and a time said with them is after 17:00:
//!   `tonight at 12` is the coming midnight, `tonight at 1` 01:00 after it, `tonight at 9am` an
//!   error), `end of day` (17:00), `noon`, `midnight` (the coming one);
//! - a time: `9am`, `9 am`, `5:30 pm`, `17:00`, a bare hour only after `at` (`at 9`).

use jiff::civil::{Date, Time, Weekday};
use jiff::{Span, Timestamp, ZonedDateTime};

use crate::time::TriggerTimeError;

/// The longest relative duration accepted (3650 days), in seconds.
pub(crate) const MAX_RELATIVE_SECONDS: i64 = 3650 * 86_400;

/// The default day start: when a day said without a time fires (`friday`, `tomorrow`).
pub const DEFAULT_DAY_START: Time = Time::constant(9, 0, 0, 0);

/// A part of the day, with the time it stands for when no time is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// `morning`: the day start.
    Morning,
    /// `afternoon`: 14:00.
    Afternoon,
    /// `evening`, `night`, `tonight`: after 17:00 (a time said with it is read so), 18:00 or 20:00.
    Evening { default_hour: i8 },
    /// `end of day`: 17:00.
    EndOfDay,
}

/// The day of a spoken form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Day {
    Today,
    Tomorrow,
    /// A weekday name: the next such day, today included.
    Weekday(Weekday),
    /// `next {weekday}`: the next such day after today.
    NextWeekday(Weekday),
    /// `next week`: next Monday.
    NextWeek,
    /// A month-name date; without a year, the next such date (today included).
    Date {
        month: i8,
        day: i8,
        year: Option<i16>,
    },
}

/// A time of day as written.
#[derive(Debug, Clone, Copy)]
struct Said {
    hour: i8,
    minute: i8,
    /// `Some(true)` for pm, `Some(false)` for am.
    meridiem: Option<bool>,
    /// A bare hour (`at 9`): no minutes, no am/pm.
    bare: bool,
    /// `midnight`: the start of the next day.
    midnight: bool,
}

pub(crate) fn weekday_word(word: &str) -> Option<Weekday> {
    Some(match word.trim_end_matches(',') {
        "monday" | "mon" | "mondays" => Weekday::Monday,
        "tuesday" | "tue" | "tues" | "tuesdays" => Weekday::Tuesday,
        "wednesday" | "wed" | "wednesdays" => Weekday::Wednesday,
        "thursday" | "thu" | "thur" | "thurs" | "thursdays" => Weekday::Thursday,
        "friday" | "fri" | "fridays" => Weekday::Friday,
        "saturday" | "sat" | "saturdays" => Weekday::Saturday,
        "sunday" | "sun" | "sundays" => Weekday::Sunday,
        _ => return None,
    })
}

pub(crate) fn month_word(word: &str) -> Option<i8> {
    Some(match word.trim_end_matches(',') {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" => 3,
        "april" | "apr" => 4,
        "may" => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    })
}

/// A day of the month: `20`, `20th`, `1st`, `20,`.
pub(crate) fn day_of_month(word: &str) -> Option<i8> {
    let word = word.trim_end_matches(',');
    let digits = word
        .strip_suffix("st")
        .or_else(|| word.strip_suffix("nd"))
        .or_else(|| word.strip_suffix("rd"))
        .or_else(|| word.strip_suffix("th"))
        .unwrap_or(word);
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn year_word(word: &str) -> Option<i16> {
    let word = word.trim_end_matches(',');
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
}

fn part_word(words: &[&str]) -> Option<(Part, usize)> {
    match words {
        ["morning", ..] => Some((Part::Morning, 1)),
        ["afternoon", ..] => Some((Part::Afternoon, 1)),
        ["evening", ..] => Some((Part::Evening { default_hour: 18 }, 1)),
        ["night", ..] => Some((Part::Evening { default_hour: 20 }, 1)),
        _ => None,
    }
}

/// A day phrase at the start of `words`: the day, a part of the day, and how many words it took.
fn day_phrase(words: &[&str]) -> Option<(Day, Option<Part>, usize)> {
    let (day, part, n) = match words {
        ["today", ..] => (Day::Today, None, 1),
        ["tonight", ..] => (Day::Today, Some(Part::Evening { default_hour: 20 }), 1),
        ["this", rest @ ..] => {
            let (part, n) = part_word(rest)?;
            let part = match part {
                Part::Evening { .. } => Part::Evening { default_hour: 18 },
                other => other,
            };
            (Day::Today, Some(part), 1 + n)
        }
        ["end", "of", "day", ..] | ["end", "of", "the", "day", ..] => {
            let n = if words[2] == "the" { 4 } else { 3 };
            (Day::Today, Some(Part::EndOfDay), n)
        }
        ["eod", ..] => (Day::Today, Some(Part::EndOfDay), 1),
        ["tomorrow" | "tmrw", ..] => (Day::Tomorrow, None, 1),
        ["next", "week", ..] => (Day::NextWeek, None, 2),
        ["next", day, ..] => (Day::NextWeekday(weekday_word(day)?), None, 2),
        ["on", rest @ ..] => {
            let (day, part, n) = day_phrase(rest)?;
            return Some((day, part, n + 1));
        }
        // `the 3rd of april`, `the 20th march`.
        ["the", day, ..] if day_of_month(day).is_some() => {
            let (day, part, n) = day_phrase(&words[1..])?;
            return Some((day, part, n + 1));
        }
        [month, day, rest @ ..] if month_word(month).is_some() && day_of_month(day).is_some() => {
            let year = rest.first().and_then(|w| year_word(w));
            (
                Day::Date {
                    month: month_word(month)?,
                    day: day_of_month(day)?,
                    year,
                },
                None,
                2 + usize::from(year.is_some()),
            )
        }
        [day, rest @ ..] if day_of_month(day).is_some() => {
            let rest = match rest {
                ["of", rest @ ..] => rest,
                rest => rest,
            };
            let month = month_word(rest.first()?)?;
            let year = rest.get(1).and_then(|w| year_word(w));
            let of = usize::from(words.get(1) == Some(&"of"));
            (
                Day::Date {
                    month,
                    day: day_of_month(day)?,
                    year,
                },
                None,
                2 + of + usize::from(year.is_some()),
            )
        }
        [day, ..] => (Day::Weekday(weekday_word(day)?), None, 1),
        [] => return None,
    };
    // `tomorrow morning`, `friday evening`.
    if part.is_none()
        && let Some((part, m)) = part_word(&words[n..])
    {
        return Some((day, Some(part), n + m));
    }
    Some((day, part, n))
}

/// The time in `words` (all of them): `9am`, `9 am`, `5:30 pm`, `17:00`, `noon`, `midnight`, or a
/// bare hour (`9`). `None` when the words are not exactly one time.
fn time_words(words: &[&str]) -> Option<Said> {
    let text: String = match words {
        [one] => (*one).to_owned(),
        [_, "am" | "pm" | "a.m." | "p.m."] => words.concat(),
        _ => return None,
    };
    let plain = |hour, midnight| Said {
        hour,
        minute: 0,
        meridiem: None,
        bare: false,
        midnight,
    };
    match text.as_str() {
        "noon" | "midday" => return Some(plain(12, false)),
        "midnight" => return Some(plain(0, true)),
        _ => {}
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
    Some(Said {
        hour,
        minute,
        meridiem,
        bare: meridiem.is_none() && !clock.contains(':'),
        midnight: false,
    })
}

/// A time after an optional `at`; a bare hour only after `at`.
fn with_at(words: &[&str]) -> Option<Said> {
    match words {
        ["at", time @ ..] => time_words(time),
        time => time_words(time).filter(|t| !t.bare),
    }
}

/// Splits the words of a spoken form into its day (and part of the day) and its time.
/// A day phrase: the day and a part of the day.
type DayPart = (Day, Option<Part>);

fn split(words: &[&str]) -> Option<(Option<DayPart>, Option<Said>)> {
    if let Some((day, part, n)) = day_phrase(words) {
        if n == words.len() {
            return Some((Some((day, part)), None));
        }
        if let Some(time) = with_at(&words[n..]) {
            return Some((Some((day, part)), Some(time)));
        }
    }
    if let Some(time) = with_at(words) {
        return Some((None, Some(time)));
    }
    // The day after the time: `5pm tonight`, `9am on friday`, `at 9 tomorrow`, `9am march 20`.
    for at in 1..words.len() {
        let (time, day) = words.split_at(at);
        if let Some((parsed, part, n)) = day_phrase(day)
            && n == day.len()
            && let Some(time) = with_at(time)
        {
            return Some((Some((parsed, part)), Some(time)));
        }
    }
    None
}

/// The lowercase English name of a weekday (`monday`), as phrases and descriptions say it.
pub(crate) fn weekday_name(w: Weekday) -> &'static str {
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

/// A time that cannot be meant, for this reason (the words the model reads).
fn meant(reason: impl Into<String>) -> TriggerTimeError {
    TriggerTimeError::CannotBeMeant(reason.into())
}

/// The date a day phrase means at `today`.
fn resolve_day(day: Day, today: Date) -> Result<Date, TriggerTimeError> {
    let bad = |e: jiff::Error| meant(e.to_string());
    Ok(match day {
        Day::Today => today,
        Day::Tomorrow => today.tomorrow().map_err(bad)?,
        Day::Weekday(w) if today.weekday() == w => today,
        Day::Weekday(w) | Day::NextWeekday(w) => today.nth_weekday(1, w).map_err(bad)?,
        Day::NextWeek => today.nth_weekday(1, Weekday::Monday).map_err(bad)?,
        Day::Date { month, day, year } => match year {
            Some(year) => Date::new(year, month, day)
                .map_err(|_| meant(format!("there is no day {day} in month {month} of {year}")))?,
            None => {
                let this_year = Date::new(today.year(), month, day);
                match this_year {
                    Ok(date) if date >= today => date,
                    _ => {
                        // Next year's (February 29 waits for a leap year).
                        let mut year = today.year();
                        loop {
                            year = year.checked_add(1).ok_or(meant("year out of range"))?;
                            if let Ok(date) = Date::new(year, month, day) {
                                break date;
                            }
                            if year > today.year() + 8 {
                                return Err(meant(format!(
                                    "there is no day {day} in month {month}"
                                )));
                            }
                        }
                    }
                }
            }
        },
    })
}

/// The hour and day offset of a time said with `tonight`/`evening`: after 17:00, running to 04:59
/// the next morning (`tonight at 12` = the coming midnight, `tonight at 1` = 01:00 after it).
fn evening_hour(said: Said) -> Option<(i8, i8)> {
    let h = said.hour;
    match said.meridiem {
        None if said.midnight => Some((0, 1)),
        None => match h {
            17..=23 => Some((h, 0)),
            5..=11 => Some((h + 12, 0)),
            12 => Some((0, 1)),
            0..=4 => Some((h, 1)),
            _ => None,
        },
        Some(true) => (5..=11).contains(&h).then_some((h + 12, 0)),
        Some(false) => match h {
            12 => Some((0, 1)),
            1..=4 => Some((h, 1)),
            _ => None,
        },
    }
}

/// Parses a spoken form (see the module documentation) at `now`; `None` when `input` is not one
/// (the caller tries Elroy's forms), else the instant in `now`'s zone (a gap read with the offset
/// before it, a fold the earlier instant), or the error for a time that cannot be meant.
pub(crate) fn spoken_time(
    input: &str,
    now: &ZonedDateTime,
    day_start: Time,
) -> Option<Result<Timestamp, TriggerTimeError>> {
    let lower = input.to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let (day, said) = split(&words)?;
    let (day, part) = day.unwrap_or((Day::Today, None));
    Some(resolve(input, now, day_start, day, part, said))
}

fn resolve(
    input: &str,
    now: &ZonedDateTime,
    day_start: Time,
    day: Day,
    part: Option<Part>,
    said: Option<Said>,
) -> Result<Timestamp, TriggerTimeError> {
    let today = now.date();
    let mut date = resolve_day(day, today)?;
    let (hour, minute) = match (said, part) {
        (None, None) => (day_start.hour(), day_start.minute()),
        (None, Some(Part::Morning)) => (day_start.hour(), day_start.minute()),
        (None, Some(Part::Afternoon)) => (14, 0),
        (None, Some(Part::Evening { default_hour })) => (default_hour, 0),
        (None, Some(Part::EndOfDay)) => (17, 0),
        (Some(said), Some(Part::Evening { .. })) => {
            let Some((hour, next_day)) = evening_hour(said) else {
                return Err(meant(format!(
                    "'{input}' is not in the evening: tonight and this evening mean 17:00 to \
                     04:59 the next morning. Say 'today {t}' or 'tomorrow {t}' for that time",
                    t = shown(said)
                )));
            };
            if next_day == 1 {
                date = date.tomorrow().map_err(|e| meant(e.to_string()))?;
            }
            (hour, said.minute)
        }
        (Some(said), part) => {
            if said.midnight {
                // The coming midnight: the start of the day after.
                date = date.tomorrow().map_err(|e| meant(e.to_string()))?;
                (0, 0)
            } else {
                let mut hour = said.hour;
                match said.meridiem {
                    Some(pm) => hour = hour % 12 + if pm { 12 } else { 0 },
                    None if part == Some(Part::Afternoon) && hour < 12 => hour += 12,
                    None => {}
                }
                (hour, said.minute)
            }
        }
    };
    let dt = date.at(hour, minute, 0, 0);
    let ts = now
        .time_zone()
        .to_ambiguous_timestamp(dt)
        .compatible()
        .map_err(|e| meant(e.to_string()))?;
    if ts < now.timestamp() && date == today {
        let shown = dt.strftime("%H:%M");
        let example = match day {
            Day::Weekday(w) => format!("next {} {shown}", weekday_name(w)),
            _ => format!("tomorrow {shown}"),
        };
        return Err(meant(format!(
            "'{input}' is {shown} today, which has already passed (it is {} now). Give a later \
             time, or another day such as '{example}'",
            now.strftime("%H:%M")
        )));
    }
    Ok(ts)
}

fn shown(said: Said) -> String {
    let hour = match said.meridiem {
        Some(pm) => said.hour % 12 + if pm { 12 } else { 0 },
        None => said.hour,
    };
    format!("{hour:02}:{:02}", said.minute)
}

fn unit(word: &str) -> Option<Unit> {
    Some(match word.trim_end_matches(',') {
        "m" | "minute" | "minutes" | "min" | "mins" => Unit::Seconds(60),
        "h" | "hour" | "hours" | "hr" | "hrs" => Unit::Seconds(3600),
        "d" | "day" | "days" => Unit::Seconds(86_400),
        "w" | "week" | "weeks" => Unit::Seconds(604_800),
        "month" | "months" => Unit::Months(1),
        "year" | "years" => Unit::Months(12),
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy)]
enum Unit {
    Seconds(i64),
    Months(i64),
}

/// A relative form: the seconds and the calendar months it adds (`in 1 month and 2 days`),
/// `Some(None)` for one that overflows, `None` when `input` is not one.
fn relative_parts(input: &str) -> Option<Option<(i64, i64)>> {
    let lower = input.to_lowercase();
    if let Some(rest) = lower.strip_prefix("in ") {
        let rest = rest.trim();
        if matches!(rest, "half an hour" | "a half hour" | "half hour") {
            return Some(Some((1800, 0)));
        }
        let tokens: Vec<&str> = rest
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty() && *t != "and")
            .collect();
        if tokens.is_empty() || !tokens.len().is_multiple_of(2) {
            return None;
        }
        let (mut seconds, mut months): (i64, i64) = (0, 0);
        for pair in tokens.chunks(2) {
            let n: i64 = match pair[0] {
                "a" | "an" | "one" => 1,
                t if t.bytes().all(|b| b.is_ascii_digit()) => match t.parse() {
                    Ok(n) => n,
                    Err(_) => return Some(None),
                },
                _ => return None,
            };
            let sum = match unit(pair[1])? {
                Unit::Seconds(s) => n.checked_mul(s).and_then(|s| seconds.checked_add(s)),
                Unit::Months(m) => n.checked_mul(m).and_then(|m| months.checked_add(m)),
            };
            let Some(sum) = sum else { return Some(None) };
            match unit(pair[1])? {
                Unit::Seconds(_) => seconds = sum,
                Unit::Months(_) => months = sum,
            }
        }
        return Some(Some((seconds, months)));
    }
    compact_seconds(&lower).map(|s| s.map(|s| (s, 0)))
}

/// `+45m`, `1h30m`, `2d`: the seconds, `Some(None)` on overflow, `None` when not that form.
fn compact_seconds(lower: &str) -> Option<Option<i64>> {
    let body = lower.strip_prefix('+').unwrap_or(lower);
    if body.is_empty() {
        return None;
    }
    let mut total: i64 = 0;
    let mut digits = String::new();
    for c in body.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if digits.is_empty() {
            return None;
        }
        let per = match c {
            'w' => 604_800,
            'd' => 86_400,
            'h' => 3600,
            'm' => 60,
            _ => return None,
        };
        let Ok(n) = digits.parse::<i64>() else {
            return Some(None);
        };
        let Some(sum) = n.checked_mul(per).and_then(|s| total.checked_add(s)) else {
            return Some(None);
        };
        total = sum;
        digits.clear();
    }
    if !digits.is_empty() {
        return None;
    }
    Some(Some(total))
}

/// A relative form at `now` (whole seconds; months and years in the calendar of `now`'s zone),
/// 1 second to 3650 days ahead. `None` when `input` is not one; `Some(Err(()))` when it is one
/// out of range.
pub(crate) fn relative_time(input: &str, now: &ZonedDateTime) -> Option<Result<Timestamp, ()>> {
    let parts = relative_parts(input)?;
    Some((|| {
        let (seconds, months) = parts.ok_or(())?;
        let base = now
            .timestamp()
            .as_second()
            .checked_sub(i64::from(now.timestamp().subsec_nanosecond() < 0))
            .ok_or(())?;
        let base = Timestamp::from_second(base)
            .map_err(|_| ())?
            .to_zoned_datetime(now.time_zone().clone());
        let shifted = if months > 0 {
            let months = i32::try_from(months).map_err(|_| ())?;
            base.checked_add(Span::new().try_months(months).map_err(|_| ())?)
                .map_err(|_| ())?
        } else {
            base.clone()
        };
        let target = shifted
            .timestamp()
            .as_second()
            .checked_add(seconds)
            .ok_or(())?;
        let ahead = target - base.timestamp().as_second();
        if ahead <= 0 || ahead > MAX_RELATIVE_SECONDS {
            return Err(());
        }
        Timestamp::from_second(target).map_err(|_| ())
    })())
}

/// A date said alone (`april 30`, `friday`, `tomorrow`, `next week`), as at `today`: the `until`
/// of a repetition.
pub(crate) fn spoken_date(words: &[&str], today: Date) -> Option<Date> {
    let (day, part, n) = day_phrase(words)?;
    (n == words.len() && part.is_none())
        .then(|| resolve_day(day, today).ok())
        .flatten()
}

/// A time of day said alone (`at 9`, `9am`, `18:30`, `noon`), as a wall time: the time of a
/// repetition.
pub(crate) fn clock_time(words: &[&str]) -> Option<Time> {
    let said = match words {
        ["at", rest @ ..] => time_words(rest)?,
        rest => time_words(rest)?,
    };
    let hour = match said.meridiem {
        Some(pm) => said.hour % 12 + if pm { 12 } else { 0 },
        None => said.hour,
    };
    Time::new(hour, said.minute, 0, 0).ok()
}
