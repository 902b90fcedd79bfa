//! Repeating due items: a rule in the `recurrence` front-matter key, the next
//! occurrence in `trigger_datetime`.
//!
//! The stored rule is RFC 5545 text on one line, `DTSTART;TZID={zone}:{YYYYMMDDTHHMMSS}
//! RRULE:{rule}`: the first occurrence as a wall time in the item's own zone (the `TZID` is the
//! zone's IANA name; a zone without one, such as a POSIX `TZ` string, is written without `TZID`
//! and read in the configured zone) and the rule (`UNTIL` as a UTC instant, as RFC 5545 asks when
//! `DTSTART` has a zone). Occurrences are expanded by the `rrule` crate over wall-clock times and
//! placed in the zone by jiff afterwards, so 09:00 stays 09:00 across a daylight-saving change (a
//! wall time inside a gap reads with the offset before it, a fold takes the earlier instant, as
//! for every naive time elroy reads). Elroy 0.5.0 ignores the key and sees a one-off item at the
//! next occurrence.
//!
//! Three ways in, one rule: our phrase grammar (`every weekday at 9am`, `first monday of the
//! month at 10am`, see [`parse_repetition`]), a five-field cron expression (`0 9 * * 1-5`), and an
//! `RRULE:` line.

use jiff::civil::{Date, DateTime, Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

use crate::spoken::{day_of_month, month_word, weekday_word};

/// The front-matter key of the rule.
pub const RECURRENCE_KEY: &str = "recurrence";

/// A repetition rule and its first wall time: what the `recurrence` key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recurrence {
    /// The IANA name of the item's zone, when it has one.
    pub zone: Option<String>,
    /// The first occurrence's wall time (`DTSTART`).
    pub start: DateTime,
    /// The rule after `RRULE:` (`FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR`).
    pub rule: String,
}

/// The weekday codes of RFC 5545.
fn code(w: Weekday) -> &'static str {
    match w {
        Weekday::Monday => "MO",
        Weekday::Tuesday => "TU",
        Weekday::Wednesday => "WE",
        Weekday::Thursday => "TH",
        Weekday::Friday => "FR",
        Weekday::Saturday => "SA",
        Weekday::Sunday => "SU",
    }
}

fn from_code(code: &str) -> Option<Weekday> {
    Some(match code {
        "MO" => Weekday::Monday,
        "TU" => Weekday::Tuesday,
        "WE" => Weekday::Wednesday,
        "TH" => Weekday::Thursday,
        "FR" => Weekday::Friday,
        "SA" => Weekday::Saturday,
        "SU" => Weekday::Sunday,
        _ => return None,
    })
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

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn ical(dt: DateTime) -> String {
    dt.strftime("%Y%m%dT%H%M%S").to_string()
}

fn parse_ical(text: &str) -> Option<DateTime> {
    let text = text.strip_suffix('Z').unwrap_or(text);
    DateTime::strptime("%Y%m%dT%H%M%S", text).ok()
}

impl Recurrence {
    /// The stored text: `DTSTART;TZID=Europe/Berlin:20260316T090000 RRULE:FREQ=DAILY`.
    pub fn to_text(&self) -> String {
        match &self.zone {
            Some(zone) => format!(
                "DTSTART;TZID={zone}:{} RRULE:{}",
                ical(self.start),
                self.rule
            ),
            None => format!("DTSTART:{} RRULE:{}", ical(self.start), self.rule),
        }
    }

    /// Reads the stored text back.
    ///
    /// # Errors
    /// `cannot read the recurrence '{text}': …` when it is not of that form or the rule is not
    /// valid.
    pub fn from_text(text: &str) -> Result<Recurrence, String> {
        let bad = |why: &str| format!("cannot read the recurrence '{text}': {why}");
        let mut words = text.split_whitespace();
        let (Some(start), Some(rule), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad("expected 'DTSTART…:… RRULE:…'"));
        };
        let (head, wall) = start
            .rsplit_once(':')
            .ok_or_else(|| bad("no DTSTART time"))?;
        let zone = match head {
            "DTSTART" => None,
            _ => Some(
                head.strip_prefix("DTSTART;TZID=")
                    .ok_or_else(|| bad("expected DTSTART"))?
                    .to_owned(),
            ),
        };
        let start = parse_ical(wall).ok_or_else(|| bad("DTSTART is not YYYYMMDDTHHMMSS"))?;
        let rule = rule
            .strip_prefix("RRULE:")
            .ok_or_else(|| bad("expected RRULE:"))?
            .to_owned();
        let recurrence = Recurrence { zone, start, rule };
        recurrence.rule_set(&TimeZone::UTC).map_err(|e| bad(&e))?;
        Ok(recurrence)
    }

    /// The zone occurrences are placed in: the rule's own, else `fallback`.
    pub fn time_zone(&self, fallback: &TimeZone) -> TimeZone {
        self.zone
            .as_deref()
            .and_then(|name| TimeZone::get(name).ok())
            .unwrap_or_else(|| fallback.clone())
    }

    /// The rule set over wall-clock times (written as UTC for the `rrule` crate).
    fn rule_set(&self, tz: &TimeZone) -> Result<rrule::RRuleSet, String> {
        let mut rule = self.rule.clone();
        // UNTIL is an instant: as a wall time in the item's zone, like the rest.
        if let Some(until) = rule
            .split(';')
            .find_map(|part| part.strip_prefix("UNTIL="))
            .map(str::to_owned)
        {
            let wall = if until.ends_with('Z') {
                let utc = parse_ical(&until).ok_or("UNTIL is not YYYYMMDDTHHMMSSZ")?;
                let instant = TimeZone::UTC
                    .to_ambiguous_timestamp(utc)
                    .compatible()
                    .map_err(|e| e.to_string())?;
                instant.to_zoned_datetime(tz.clone()).datetime()
            } else if until.len() == 8 {
                Date::strptime("%Y%m%d", &until)
                    .map_err(|_| "UNTIL is not a date")?
                    .at(23, 59, 59, 0)
            } else {
                parse_ical(&until).ok_or("UNTIL is not YYYYMMDDTHHMMSS")?
            };
            rule = rule.replace(&format!("UNTIL={until}"), &format!("UNTIL={}Z", ical(wall)));
        }
        format!("DTSTART:{}Z\nRRULE:{rule}", ical(self.start))
            .parse::<rrule::RRuleSet>()
            .map_err(|e| e.to_string())
    }

    /// The first occurrence at or after `from`, as an instant in the rule's zone (`fallback` when
    /// it has none); `None` when the rule has ended (`UNTIL`, `COUNT`).
    ///
    /// # Errors
    /// A rule the `rrule` crate refuses.
    pub fn next_at_or_after(
        &self,
        from: Timestamp,
        fallback: &TimeZone,
    ) -> Result<Option<Timestamp>, String> {
        let tz = self.time_zone(fallback);
        let wall = from.to_zoned_datetime(tz.clone()).datetime();
        // A fold (clocks set back): a wall time of the repeated hour stands for its first
        // instance (RFC 5545), which is before `from` when `from` is in the second pass. Every
        // such wall time is skipped at once by going on from the end of the fold, however many
        // the rule has there (one a minute, one a second).
        let mut after = wall;
        for _ in 0..4 {
            let Some(next) = self.next_wall(&tz, after)? else {
                return Ok(None);
            };
            let instant = tz
                .to_ambiguous_timestamp(next)
                .compatible()
                .map_err(|e| e.to_string())?;
            if instant >= from {
                return Ok(Some(instant));
            }
            let step = next
                .checked_add(jiff::Span::new().seconds(1))
                .map_err(|e| e.to_string())?;
            after = match fold_end(&tz, from) {
                Some(end) if end > step => end
                    .checked_sub(jiff::Span::new().seconds(1))
                    .map_err(|e| e.to_string())?,
                _ => step,
            };
        }
        // Never "ended" because of a clock change: a rule that still has occurrences but none
        // could be placed is an error, not the end of the series.
        Err(format!(
            "no occurrence of '{}' could be placed after {from}",
            self.rule
        ))
    }

    /// The occurrences (instants) in `[from, to]`, at most `limit`.
    ///
    /// # Errors
    /// As [`Recurrence::next_at_or_after`].
    pub fn between(
        &self,
        from: Timestamp,
        to: Timestamp,
        fallback: &TimeZone,
        limit: u16,
    ) -> Result<Vec<Timestamp>, String> {
        let tz = self.time_zone(fallback);
        let utc = |dt: DateTime| -> Result<chrono::DateTime<rrule::Tz>, String> { chrono_utc(dt) };
        let first = from.to_zoned_datetime(tz.clone()).datetime();
        let last = to.to_zoned_datetime(tz.clone()).datetime();
        let set = self.rule_set(&tz)?.after(utc(first)?).before(utc(last)?);
        let mut out = Vec::new();
        for dt in set.all(limit).dates {
            let wall = from_chrono(&dt)?;
            let instant = tz
                .to_ambiguous_timestamp(wall)
                .compatible()
                .map_err(|e| e.to_string())?;
            if instant >= from && instant <= to {
                out.push(instant);
            }
        }
        Ok(out)
    }

    fn next_wall(&self, tz: &TimeZone, after: DateTime) -> Result<Option<DateTime>, String> {
        let set = self.rule_set(tz)?.after(chrono_utc(after)?);
        match set.all(1).dates.first() {
            Some(dt) => from_chrono(dt).map(Some),
            None => Ok(None),
        }
    }

    /// The rule in words: `every weekday at 09:00`, `every 2 weeks on monday at 10:00`, `the
    /// first monday of every month at 10:00`, with `, 5 times` or `, until 2026-04-30`; a rule
    /// beyond these words reads as its RRULE text.
    pub fn describe(&self) -> String {
        describe(self)
    }
}

/// When `from` lies in the second pass of a fold of `tz` (the hour repeated when clocks go
/// back), the wall time at which that fold ends (the transition in the offset before it, e.g.
/// 02:00 in America/New_York); `None` otherwise.
fn fold_end(tz: &TimeZone, from: Timestamp) -> Option<DateTime> {
    let probe = from.checked_add(jiff::SignedDuration::from_nanos(1)).ok()?;
    let transition = tz.preceding(probe).next()?.timestamp();
    let before = tz.to_offset(
        transition
            .checked_sub(jiff::SignedDuration::from_nanos(1))
            .ok()?,
    );
    let after = tz.to_offset(transition);
    if before <= after {
        return None;
    }
    let end = before.to_datetime(transition);
    (tz.to_datetime(from) < end).then_some(end)
}

fn chrono_utc(dt: DateTime) -> Result<chrono::DateTime<rrule::Tz>, String> {
    use chrono::TimeZone as _;
    let naive = chrono::NaiveDate::from_ymd_opt(
        i32::from(dt.year()),
        u32::try_from(dt.month()).map_err(|e| e.to_string())?,
        u32::try_from(dt.day()).map_err(|e| e.to_string())?,
    )
    .and_then(|d| {
        d.and_hms_opt(
            u32::try_from(dt.hour()).ok()?,
            u32::try_from(dt.minute()).ok()?,
            u32::try_from(dt.second()).ok()?,
        )
    })
    .ok_or("date out of range")?;
    Ok(rrule::Tz::UTC.from_utc_datetime(&naive))
}

fn from_chrono(dt: &chrono::DateTime<rrule::Tz>) -> Result<DateTime, String> {
    use chrono::{Datelike, Timelike};
    let n = dt.naive_utc();
    DateTime::new(
        i16::try_from(n.year()).map_err(|e| e.to_string())?,
        i8::try_from(n.month()).map_err(|e| e.to_string())?,
        i8::try_from(n.day()).map_err(|e| e.to_string())?,
        i8::try_from(n.hour()).map_err(|e| e.to_string())?,
        i8::try_from(n.minute()).map_err(|e| e.to_string())?,
        i8::try_from(n.second()).map_err(|e| e.to_string())?,
        0,
    )
    .map_err(|e| e.to_string())
}

fn ordinal_suffix(n: i64) -> &'static str {
    match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

fn ordinal_word(n: i64) -> String {
    match n {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        4 => "fourth".into(),
        5 => "fifth".into(),
        -1 => "last".into(),
        -2 => "second to last".into(),
        n => format!("{n}{}", ordinal_suffix(n)),
    }
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn describe(r: &Recurrence) -> String {
    let parts: Vec<(&str, &str)> = r
        .rule
        .split(';')
        .filter_map(|p| p.split_once('='))
        .collect();
    let get = |key: &str| parts.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let known = [
        "FREQ",
        "INTERVAL",
        "BYDAY",
        "BYMONTHDAY",
        "BYMONTH",
        "COUNT",
        "UNTIL",
        "BYHOUR",
        "BYMINUTE",
        "WKST",
    ];
    let raw = || format!("RRULE:{}", r.rule);
    if parts.iter().any(|(k, _)| !known.contains(k)) {
        return raw();
    }
    let interval: i64 = get("INTERVAL").and_then(|v| v.parse().ok()).unwrap_or(1);
    let list = |key: &str| -> Vec<String> {
        get(key).map_or_else(Vec::new, |v| v.split(',').map(str::to_owned).collect())
    };
    let numbers =
        |key: &str| -> Option<Vec<i64>> { list(key).iter().map(|v| v.parse().ok()).collect() };
    let (Some(hours), Some(minutes), Some(month_days), Some(months)) = (
        numbers("BYHOUR"),
        numbers("BYMINUTE"),
        numbers("BYMONTHDAY"),
        numbers("BYMONTH"),
    ) else {
        return raw();
    };
    let hours = if hours.is_empty() {
        vec![i64::from(r.start.hour())]
    } else {
        hours
    };
    let minutes = if minutes.is_empty() {
        vec![i64::from(r.start.minute())]
    } else {
        minutes
    };
    let at = {
        let times: Vec<String> = hours
            .iter()
            .flat_map(|h| minutes.iter().map(move |m| format!("{h:02}:{m:02}")))
            .collect();
        if times.len() > 6 {
            return raw();
        }
        format!("at {}", join_and(&times))
    };
    // BYDAY entries: an optional ordinal, then the code.
    let mut days: Vec<(Option<i64>, Weekday)> = Vec::new();
    for entry in list("BYDAY") {
        let split = entry.len().saturating_sub(2);
        let (n, day) = entry.split_at(split);
        let Some(day) = from_code(day) else {
            return raw();
        };
        let n = if n.is_empty() {
            None
        } else {
            match n.trim_start_matches('+').parse() {
                Ok(n) => Some(n),
                Err(_) => return raw(),
            }
        };
        days.push((n, day));
    }
    let plain_days: Vec<Weekday> = days
        .iter()
        .filter(|(n, _)| n.is_none())
        .map(|d| d.1)
        .collect();
    let every = |unit: &str, units: &str| {
        if interval == 1 {
            format!("every {unit}")
        } else {
            format!("every {interval} {units}")
        }
    };
    let day_names = |ds: &[Weekday]| {
        let weekdays = [
            Weekday::Monday,
            Weekday::Tuesday,
            Weekday::Wednesday,
            Weekday::Thursday,
            Weekday::Friday,
        ];
        if ds.len() == 5 && weekdays.iter().all(|w| ds.contains(w)) {
            "weekday".to_owned()
        } else {
            join_and(
                &ds.iter()
                    .map(|w| weekday_name(*w).to_owned())
                    .collect::<Vec<_>>(),
            )
        }
    };
    let freq = get("FREQ").unwrap_or("");
    let head = match freq {
        "MINUTELY"
            if days.is_empty()
                && month_days.is_empty()
                && months.is_empty()
                && get("BYHOUR").is_none()
                && get("BYMINUTE").is_none() =>
        {
            return with_end(&get, every("minute", "minutes"));
        }
        "HOURLY"
            if days.is_empty()
                && month_days.is_empty()
                && months.is_empty()
                && get("BYHOUR").is_none() =>
        {
            let mins: Vec<String> = minutes.iter().map(|m| format!(":{m:02}")).collect();
            return with_end(
                &get,
                format!("{} at {}", every("hour", "hours"), join_and(&mins)),
            );
        }
        "DAILY" if days.is_empty() && month_days.is_empty() && months.is_empty() => {
            every("day", "days")
        }
        "DAILY" | "WEEKLY"
            if interval == 1
                && month_days.is_empty()
                && months.is_empty()
                && !plain_days.is_empty()
                && plain_days.len() == days.len() =>
        {
            format!("every {}", day_names(&plain_days))
        }
        "WEEKLY"
            if month_days.is_empty() && months.is_empty() && plain_days.len() == days.len() =>
        {
            let ds = if plain_days.is_empty() {
                vec![r.start.weekday()]
            } else {
                plain_days
            };
            format!("{} on {}", every("week", "weeks"), day_names(&ds))
        }
        "MONTHLY" if months.is_empty() && days.is_empty() => {
            let ds = if month_days.is_empty() {
                vec![i64::from(r.start.day())]
            } else {
                month_days
            };
            let ds: Vec<String> = ds
                .iter()
                .map(|d| {
                    if *d == -1 {
                        "last day".to_owned()
                    } else {
                        format!("{d}{}", ordinal_suffix(*d))
                    }
                })
                .collect();
            format!("{} on the {}", every("month", "months"), join_and(&ds))
        }
        "MONTHLY" if months.is_empty() && month_days.is_empty() && days.len() == 1 => {
            let (Some(n), day) = days[0] else {
                return raw();
            };
            let of = if interval == 1 {
                "every month".to_owned()
            } else {
                format!("every {interval} months")
            };
            format!("the {} {} of {of}", ordinal_word(n), weekday_name(day))
        }
        "YEARLY" if days.is_empty() && months.len() <= 1 && month_days.len() <= 1 => {
            let month = months
                .first()
                .copied()
                .unwrap_or(i64::from(r.start.month()));
            let day = month_days
                .first()
                .copied()
                .unwrap_or(i64::from(r.start.day()));
            let Some(name) = usize::try_from(month - 1).ok().and_then(|i| MONTHS.get(i)) else {
                return raw();
            };
            format!("{} on {name} {day}", every("year", "years"))
        }
        _ => return raw(),
    };
    with_end(&get, format!("{head} {at}"))
}

fn with_end<'a>(get: &dyn Fn(&str) -> Option<&'a str>, text: String) -> String {
    if let Some(count) = get("COUNT") {
        return format!("{text}, {count} times");
    }
    if let Some(until) = get("UNTIL") {
        let date = until
            .get(0..8)
            .and_then(|d| Date::strptime("%Y%m%d", d).ok());
        if let Some(date) = date {
            return format!("{text}, until {date}");
        }
    }
    text
}

/// Whether `input` looks like a repetition (so a parse failure names the repetition forms).
pub fn looks_like_repetition(input: &str) -> bool {
    let lower = input.trim().to_lowercase();
    let first = lower.split_whitespace().next().unwrap_or("");
    lower.starts_with("rrule:")
        || cron_fields(&lower).is_some()
        || matches!(
            first,
            "every"
                | "daily"
                | "weekly"
                | "monthly"
                | "yearly"
                | "annually"
                | "hourly"
                | "weekdays"
                | "weekends"
        )
        || matches!(
            first,
            "mondays"
                | "tuesdays"
                | "wednesdays"
                | "thursdays"
                | "fridays"
                | "saturdays"
                | "sundays"
        )
        || lower.contains(" of the month")
        || lower.contains(" of every month")
        || lower.contains(" of each month")
}

fn cron_fields(lower: &str) -> Option<Vec<&str>> {
    let fields: Vec<&str> = lower.split_whitespace().collect();
    (fields.len() == 5
        && fields.iter().all(|f| {
            f.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '*' | ',' | '-' | '/'))
        })
        && fields[..2].iter().all(|f| {
            f.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '*' | ',' | '-' | '/'))
        }))
    .then_some(fields)
}

/// A repetition understood: the rule and its first occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repetition {
    /// The rule, as stored.
    pub recurrence: Recurrence,
    /// The first occurrence at or after now.
    pub first: Timestamp,
}

/// Parses a repetition said at `now` in `now`'s zone: a phrase of our grammar
/// (`every day at 8`, `daily at 8pm`, `every weekday at 9am`, `weekdays at 9`, `every monday and
/// thursday at 18:30`, `every 2 weeks on monday at 10`, `every month on the 15th at 9`, `first
/// monday of the month at 10am`, `last friday of every month at 5pm`, `every year on march 3 at
/// 9`, `every 30 minutes`, each with an optional `until DATE` or `for N times`; a phrase without
/// a time fires at `day_start`), a five-field cron expression (`0 9 * * 1-5`; day of month and
/// day of week not both restricted), or an `RRULE:` line (`DTSTART` the next `day_start`, or
/// now for an hourly or finer rule, unless it has `BYHOUR`). `None` when `input` is none of
/// these.
///
/// # Errors
/// A phrase or cron expression that is almost one (`every 0 days`, an unknown field), a rule the
/// `rrule` crate refuses, or a rule with no occurrence left.
pub fn parse_repetition(
    input: &str,
    now: &ZonedDateTime,
    day_start: Time,
) -> Option<Result<Repetition, String>> {
    let lower = input.trim().to_lowercase();
    let built = if let Some(rule) = lower.strip_prefix("rrule:") {
        Some(Ok(Built {
            rule: rule.trim().to_uppercase(),
            time: None,
            sub_daily: false,
        }))
    } else if let Some(fields) = cron_fields(&lower) {
        Some(cron_rule(&fields))
    } else {
        phrase_rule(&lower, now)
    }?;
    Some(built.and_then(|b| finish(b, now, day_start)))
}

/// A rule before its start is chosen.
struct Built {
    rule: String,
    /// The wall time said (`at 9`), when the rule has no `BYHOUR`.
    time: Option<Time>,
    /// Hourly or finer: starts now.
    sub_daily: bool,
}

fn finish(b: Built, now: &ZonedDateTime, day_start: Time) -> Result<Repetition, String> {
    let tz = now.time_zone().clone();
    let has_hour = b.rule.contains("BYHOUR=");
    let today = now.date();
    let start = if b.sub_daily || has_hour {
        let t = now.datetime();
        // The minute now, as a wall time: an hourly rule counts from here.
        let minute = t.date().at(t.hour(), t.minute(), 0, 0);
        if b.sub_daily && !has_hour {
            minute
                .checked_add(jiff::Span::new().minutes(1))
                .map_err(|e| e.to_string())?
        } else {
            today.at(0, 0, 0, 0)
        }
    } else {
        let time = b.time.unwrap_or(day_start);
        let at = today.to_datetime(time);
        // Passed today: the rule starts tomorrow (`every 2 weeks` said at 10:00 starts at
        // tomorrow's 09:00, not in two weeks).
        if at < now.datetime() {
            today
                .tomorrow()
                .map_err(|e| e.to_string())?
                .to_datetime(time)
        } else {
            at
        }
    };
    let recurrence = Recurrence {
        zone: tz.iana_name().map(str::to_owned),
        start,
        rule: b.rule,
    };
    // Validates the rule too.
    recurrence.rule_set(&tz)?;
    // With an interval, the first period is the one holding the first matching day: `every 2
    // weeks on monday` said on a Friday starts next Monday, not in the week after.
    let recurrence = if recurrence.rule.contains("INTERVAL=") {
        let single: Vec<&str> = recurrence
            .rule
            .split(';')
            .filter(|p| !p.starts_with("INTERVAL=") && !p.starts_with("COUNT="))
            .collect();
        let probe = Recurrence {
            rule: single.join(";"),
            ..recurrence.clone()
        };
        match probe.next_at_or_after(now.timestamp(), &tz)? {
            Some(first) => Recurrence {
                start: first.to_zoned_datetime(probe.time_zone(&tz)).datetime(),
                ..recurrence
            },
            None => recurrence,
        }
    } else {
        recurrence
    };
    // The first occurrence: at or after now (DTSTART itself counts only when it is one).
    let first = recurrence
        .next_at_or_after(now.timestamp(), &tz)?
        .ok_or_else(|| {
            format!(
                "the repetition '{}' has no occurrence after now",
                recurrence.describe()
            )
        })?;
    // DTSTART moves to the first occurrence (when it is later), so COUNT counts from it.
    let first_wall = first
        .to_zoned_datetime(recurrence.time_zone(&tz))
        .datetime();
    let recurrence = if first_wall > recurrence.start {
        Recurrence {
            start: first_wall,
            ..recurrence
        }
    } else {
        recurrence
    };
    Ok(Repetition { recurrence, first })
}

/// A cron field's values in `min..=max` (`*`, `N`, `A-B`, `*/S`, `A-B/S`, lists, names).
fn cron_values(
    field: &str,
    min: i64,
    max: i64,
    names: &dyn Fn(&str) -> Option<i64>,
) -> Result<Vec<i64>, String> {
    let mut values = Vec::new();
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (
                r,
                s.parse::<i64>()
                    .map_err(|_| format!("bad step in '{part}'"))?,
            ),
            None => (part, 1),
        };
        if step < 1 {
            return Err(format!("bad step in '{part}'"));
        }
        let value = |s: &str| -> Result<i64, String> {
            s.parse::<i64>()
                .ok()
                .or_else(|| names(s))
                .ok_or_else(|| format!("'{s}' is not a value of this field"))
        };
        let (lo, hi) = match range {
            "*" => (min, max),
            r => match r.split_once('-') {
                Some((a, b)) => (value(a)?, value(b)?),
                None if step > 1 => (value(r)?, max),
                None => (value(r)?, value(r)?),
            },
        };
        if lo < min || hi > max || lo > hi {
            return Err(format!("'{part}' is outside {min}-{max}"));
        }
        let mut v = lo;
        while v <= hi {
            values.push(v);
            v += step;
        }
    }
    values.sort_unstable();
    values.dedup();
    Ok(values)
}

fn cron_rule(fields: &[&str]) -> Result<Built, String> {
    let bad = |e: String| format!("cron expression '{}': {e}", fields.join(" "));
    let none = |_: &str| None;
    let minutes = cron_values(fields[0], 0, 59, &none).map_err(bad)?;
    let hours = cron_values(fields[1], 0, 23, &none).map_err(bad)?;
    let dom = cron_values(fields[2], 1, 31, &none).map_err(bad)?;
    let month_names = |s: &str| month_word(s).map(i64::from);
    let months = cron_values(fields[3], 1, 12, &month_names).map_err(bad)?;
    let dow_names = |s: &str| weekday_word(s).map(|w| i64::from(w.to_sunday_zero_offset()));
    let dow = cron_values(fields[4], 0, 7, &dow_names).map_err(bad)?;
    let dom_restricted = fields[2] != "*";
    let dow_restricted = fields[4] != "*";
    if dom_restricted && dow_restricted {
        return Err(bad(
            "a day of the month and a day of the week together mean either in cron, which one \
             rule cannot say; make two reminders"
                .into(),
        ));
    }
    let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let freq = if minutes.len() == 60 {
        "MINUTELY"
    } else if hours.len() == 24 {
        "HOURLY"
    } else {
        "DAILY"
    };
    let mut rule = format!("FREQ={freq}");
    if minutes.len() < 60 {
        rule.push_str(&format!(";BYMINUTE={}", join(&minutes)));
    }
    if hours.len() < 24 {
        rule.push_str(&format!(";BYHOUR={}", join(&hours)));
    }
    if dom_restricted {
        rule.push_str(&format!(";BYMONTHDAY={}", join(&dom)));
    }
    if months.len() < 12 {
        rule.push_str(&format!(";BYMONTH={}", join(&months)));
    }
    if dow_restricted {
        let mut codes: Vec<&str> = Vec::new();
        for d in [1, 2, 3, 4, 5, 6, 0] {
            if dow.contains(&d) || (d == 0 && dow.contains(&7)) {
                let w = Weekday::from_sunday_zero_offset(i8::try_from(d).unwrap_or(0))
                    .map_err(|e| e.to_string())?;
                codes.push(code(w));
            }
        }
        rule.push_str(&format!(";BYDAY={}", codes.join(",")));
    }
    Ok(Built {
        rule,
        time: None,
        sub_daily: freq != "DAILY",
    })
}

/// The trailing `until DATE` / `for N times` / `N times` of a phrase: the rest and the suffix.
fn end_clause<'a>(
    words: &'a [&'a str],
    now: &ZonedDateTime,
) -> Result<(&'a [&'a str], String), String> {
    if let Some(pos) = words.iter().position(|w| *w == "until") {
        let date_words = &words[pos + 1..];
        let text = date_words.join(" ");
        let date = crate::parse_item_date(&text)
            .or_else(|| crate::spoken::spoken_date(date_words, now.date()))
            .ok_or_else(|| {
                format!("'until {text}' is not a date (say 'until 2026-04-30' or 'until april 30')")
            })?;
        // The end of that day in the zone, as UTC (RFC 5545: UNTIL is UTC when DTSTART has a zone).
        let end = now
            .time_zone()
            .to_ambiguous_timestamp(date.at(23, 59, 59, 0))
            .compatible()
            .map_err(|e| e.to_string())?;
        let utc = end.to_zoned_datetime(TimeZone::UTC).datetime();
        return Ok((&words[..pos], format!(";UNTIL={}Z", ical(utc))));
    }
    let n = words.len();
    if n >= 2 && matches!(words[n - 1], "times" | "time") {
        let count_at = n - 2;
        let count: u32 = words[count_at]
            .parse()
            .map_err(|_| format!("'{} times' is not a count", words[count_at]))?;
        if count == 0 {
            return Err("a repetition for 0 times never fires".into());
        }
        let rest_end = if count_at > 0 && words[count_at - 1] == "for" {
            count_at - 1
        } else {
            count_at
        };
        return Ok((&words[..rest_end], format!(";COUNT={count}")));
    }
    Ok((words, String::new()))
}

fn ordinal(word: &str) -> Option<i64> {
    Some(match word {
        "first" | "1st" => 1,
        "second" | "2nd" => 2,
        "third" | "3rd" => 3,
        "fourth" | "4th" => 4,
        "fifth" | "5th" => 5,
        "last" => -1,
        _ => return None,
    })
}

fn weekday_list(words: &[&str]) -> Option<(Vec<Weekday>, usize)> {
    let mut days = Vec::new();
    let mut n = 0;
    for w in words {
        let w = w.trim_end_matches(',');
        if w == "and" || w.is_empty() {
            n += 1;
            continue;
        }
        match weekday_word(w) {
            Some(day) => {
                if !days.contains(&day) {
                    days.push(day);
                }
                n += 1;
            }
            None => break,
        }
    }
    // A trailing `and` belongs to what follows.
    while n > 0 && words[n - 1] == "and" {
        n -= 1;
    }
    (!days.is_empty()).then_some((days, n))
}

fn codes(days: &[Weekday]) -> String {
    let mut sorted = days.to_vec();
    sorted.sort_by_key(|w| w.to_monday_zero_offset());
    sorted
        .iter()
        .map(|w| code(*w))
        .collect::<Vec<_>>()
        .join(",")
}

fn phrase_rule(lower: &str, now: &ZonedDateTime) -> Option<Result<Built, String>> {
    let words: Vec<&str> = lower
        .split_whitespace()
        .map(|w| w.trim_end_matches(','))
        .filter(|w| !w.is_empty())
        .collect();
    if !looks_like_repetition(lower) {
        return None;
    }
    let (words, end) = match end_clause(&words, now) {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    let mut w: &[&str] = words;
    let mut interval: i64 = 1;
    let mut rule: Option<String> = None;
    let mut sub_daily = false;
    let take = |w: &mut &[&str], n: usize| *w = &w[n.min(w.len())..];
    // `every N units`, `every other unit`.
    let mut unit: Option<&str> = None;
    match w {
        ["every", "other", u, ..] => {
            interval = 2;
            unit = Some(u);
            take(&mut w, 3);
        }
        ["every", n, u, ..] if n.parse::<i64>().is_ok() => {
            interval = n.parse().ok()?;
            if interval < 1 {
                return Some(Err(format!("'every {n} {u}' never repeats")));
            }
            unit = Some(u);
            take(&mut w, 3);
        }
        ["daily", ..] => {
            unit = Some("day");
            take(&mut w, 1);
        }
        ["weekly", ..] => {
            unit = Some("week");
            take(&mut w, 1);
        }
        ["monthly", ..] => {
            unit = Some("month");
            take(&mut w, 1);
        }
        ["yearly" | "annually", ..] => {
            unit = Some("year");
            take(&mut w, 1);
        }
        ["hourly", ..] => {
            unit = Some("hour");
            take(&mut w, 1);
        }
        ["every", "weekday" | "weekdays", ..] | ["weekdays", ..] => {
            rule = Some("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR".into());
            let n = if w[0] == "every" { 2 } else { 1 };
            take(&mut w, n);
        }
        ["every", "weekend" | "weekends", ..] | ["weekends", ..] => {
            rule = Some("FREQ=WEEKLY;BYDAY=SA,SU".into());
            let n = if w[0] == "every" { 2 } else { 1 };
            take(&mut w, n);
        }
        ["every", u, ..] if matches!(*u, "day" | "week" | "month" | "year" | "hour" | "minute") => {
            unit = Some(u);
            take(&mut w, 2);
        }
        _ => {}
    }
    if let Some(u) = unit {
        let freq = match u.trim_end_matches('s') {
            "day" => "DAILY",
            "week" => "WEEKLY",
            "month" => "MONTHLY",
            "year" => "YEARLY",
            "hour" => {
                sub_daily = true;
                "HOURLY"
            }
            "minute" | "min" => {
                sub_daily = true;
                "MINUTELY"
            }
            _ => {
                return Some(Err(format!(
                    "'{u}' is not a unit of repetition (day, week, month, year, hour, minute)"
                )));
            }
        };
        let mut r = format!("FREQ={freq}");
        if interval > 1 {
            r.push_str(&format!(";INTERVAL={interval}"));
        }
        // `on monday and thursday`, `on the 15th`, `on the first monday`, `on march 3`.
        let on = matches!(w.first(), Some(&"on"));
        if on {
            take(&mut w, 1);
        }
        let the = matches!(w.first(), Some(&"the"));
        if the {
            take(&mut w, 1);
        }
        match freq {
            "WEEKLY" | "DAILY" => {
                if let Some((days, n)) = weekday_list(w) {
                    r = format!(
                        "FREQ=WEEKLY{}",
                        if interval > 1 {
                            format!(";INTERVAL={interval}")
                        } else {
                            String::new()
                        }
                    );
                    r.push_str(&format!(";BYDAY={}", codes(&days)));
                    take(&mut w, n);
                }
            }
            "MONTHLY" => {
                if let (Some(n), Some(d)) = (
                    w.first().and_then(|x| ordinal(x)),
                    w.get(1).and_then(|x| weekday_word(x)),
                ) {
                    r.push_str(&format!(";BYDAY={n}{}", code(d)));
                    take(&mut w, 2);
                } else if matches!(w, ["last", "day", ..]) {
                    r.push_str(";BYMONTHDAY=-1");
                    take(&mut w, 2);
                } else if let Some(d) = w.first().and_then(|x| day_of_month(x)) {
                    r.push_str(&format!(";BYMONTHDAY={d}"));
                    take(&mut w, 1);
                }
            }
            "YEARLY" => {
                let md = match w {
                    [m, d, ..] if month_word(m).is_some() && day_of_month(d).is_some() => {
                        Some((month_word(m)?, day_of_month(d)?))
                    }
                    [d, m, ..] if month_word(m).is_some() && day_of_month(d).is_some() => {
                        Some((month_word(m)?, day_of_month(d)?))
                    }
                    _ => None,
                };
                if let Some((m, d)) = md {
                    r.push_str(&format!(";BYMONTH={m};BYMONTHDAY={d}"));
                    take(&mut w, 2);
                }
            }
            _ => {}
        }
        rule = Some(r);
    }
    if rule.is_none() {
        // `every monday and thursday`, `mondays at 9`, `every monday 9am`.
        let start = usize::from(w.first() == Some(&"every"));
        if let Some((days, n)) = weekday_list(&w[start..]) {
            rule = Some(format!("FREQ=WEEKLY;BYDAY={}", codes(&days)));
            take(&mut w, start + n);
        }
    }
    if rule.is_none() {
        // `first monday of the month`, `the last friday of every month`, `every first monday …`.
        let mut v = w;
        if matches!(v.first(), Some(&"every")) {
            v = &v[1..];
        }
        if matches!(v.first(), Some(&"the")) {
            v = &v[1..];
        }
        if let [o, d, "of", which, "month", rest @ ..] = v
            && let (Some(n), Some(day)) = (ordinal(o), weekday_word(d))
            && matches!(*which, "the" | "every" | "each")
        {
            rule = Some(format!("FREQ=MONTHLY;BYDAY={n}{}", code(day)));
            w = rest;
        }
    }
    let Some(mut rule) = rule else {
        return Some(Err(format!(
            "'{lower}' is not a repetition elroy knows. Say it like 'every weekday at 9am', \
             'every 2 weeks on monday at 10', 'first monday of the month at 10am', a cron \
             expression ('0 9 * * 1-5') or an RRULE: line"
        )));
    };
    // The time: `at 9`, `9am`, `18:30`.
    let time = if w.is_empty() {
        None
    } else {
        match crate::spoken::clock_time(w) {
            Some(t) => Some(t),
            None => {
                return Some(Err(format!(
                    "'{lower}': '{}' is not a time of day (say 'at 9', '9am' or '18:30')",
                    w.join(" ")
                )));
            }
        }
    };
    if sub_daily && let Some(t) = time {
        // `every hour at :30` is not ours; an hourly rule with a time starts then.
        rule.push_str(&format!(";BYMINUTE={}", t.minute()));
    }
    rule.push_str(&end);
    Some(Ok(Built {
        rule,
        time: if sub_daily { None } else { time },
        sub_daily,
    }))
}
