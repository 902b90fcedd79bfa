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

mod cron;
mod describe;
mod error;
mod parse;
mod phrase;

use jiff::Timestamp;
use jiff::civil::{Date, DateTime, Weekday};
use jiff::tz::TimeZone;

pub use error::{CronProblem, RecurrenceError};
pub use parse::{Repetition, looks_like_repetition, parse_repetition};

/// The front-matter key that holds the rule.
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

/// The weekday of an RFC 5545 code.
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

/// A wall time as RFC 5545 writes it: `20260316T090000`.
fn ical(dt: DateTime) -> String {
    dt.strftime("%Y%m%dT%H%M%S").to_string()
}

/// An RFC 5545 date-time (`20260316T090000`, a trailing `Z` ignored) as a wall time.
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
    /// [`RecurrenceError::Stored`] (`cannot read the recurrence '{text}': …`) when it is not of
    /// that form or the rule is not valid.
    pub fn from_text(text: &str) -> Result<Recurrence, RecurrenceError> {
        let stored = |problem: RecurrenceError| RecurrenceError::Stored {
            text: text.to_owned(),
            problem: Box::new(problem),
        };
        let bad = |why: &'static str| stored(RecurrenceError::Form(why));
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
        recurrence.rule_set(&TimeZone::UTC).map_err(stored)?;
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
    fn rule_set(&self, tz: &TimeZone) -> Result<rrule::RRuleSet, RecurrenceError> {
        let mut rule = self.rule.clone();
        // UNTIL is an instant: as a wall time in the item's zone, like the rest.
        if let Some(until) = rule
            .split(';')
            .find_map(|part| part.strip_prefix("UNTIL="))
            .map(str::to_owned)
        {
            let wall = if until.ends_with('Z') {
                let utc = parse_ical(&until)
                    .ok_or(RecurrenceError::Until("UNTIL is not YYYYMMDDTHHMMSSZ"))?;
                let instant = TimeZone::UTC.to_ambiguous_timestamp(utc).compatible()?;
                instant.to_zoned_datetime(tz.clone()).datetime()
            } else if until.len() == 8 {
                Date::strptime("%Y%m%d", &until)
                    .map_err(|_| RecurrenceError::Until("UNTIL is not a date"))?
                    .at(23, 59, 59, 0)
            } else {
                parse_ical(&until).ok_or(RecurrenceError::Until("UNTIL is not YYYYMMDDTHHMMSS"))?
            };
            rule = rule.replace(&format!("UNTIL={until}"), &format!("UNTIL={}Z", ical(wall)));
        }
        Ok(format!("DTSTART:{}Z\nRRULE:{rule}", ical(self.start)).parse::<rrule::RRuleSet>()?)
    }

    /// The first occurrence at or after `from`, as an instant in the rule's zone (`fallback` when
    /// it has none); `None` when the rule has ended (`UNTIL`, `COUNT`).
    ///
    /// # Errors
    /// [`RecurrenceError`]: a rule the `rrule` crate refuses, a date out of range, or
    /// [`RecurrenceError::NotPlaced`].
    pub fn next_at_or_after(
        &self,
        from: Timestamp,
        fallback: &TimeZone,
    ) -> Result<Option<Timestamp>, RecurrenceError> {
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
            let instant = tz.to_ambiguous_timestamp(next).compatible()?;
            if instant >= from {
                return Ok(Some(instant));
            }
            let step = next.checked_add(jiff::Span::new().seconds(1))?;
            after = match fold_end(&tz, from) {
                Some(end) if end > step => end.checked_sub(jiff::Span::new().seconds(1))?,
                _ => step,
            };
        }
        // Never "ended" because of a clock change: a rule that still has occurrences but none
        // could be placed is an error, not the end of the series.
        Err(RecurrenceError::NotPlaced {
            rule: self.rule.clone(),
            after: from,
        })
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
    ) -> Result<Vec<Timestamp>, RecurrenceError> {
        let tz = self.time_zone(fallback);
        let utc = chrono_utc;
        let first = from.to_zoned_datetime(tz.clone()).datetime();
        let last = to.to_zoned_datetime(tz.clone()).datetime();
        let set = self.rule_set(&tz)?.after(utc(first)?).before(utc(last)?);
        let mut out = Vec::new();
        for dt in set.all(limit).dates {
            let wall = from_chrono(&dt)?;
            let instant = tz.to_ambiguous_timestamp(wall).compatible()?;
            if instant >= from && instant <= to {
                out.push(instant);
            }
        }
        Ok(out)
    }

    fn next_wall(
        &self,
        tz: &TimeZone,
        after: DateTime,
    ) -> Result<Option<DateTime>, RecurrenceError> {
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
        describe::describe(self)
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

/// A wall time as the `rrule` crate's UTC date-time.
fn chrono_utc(dt: DateTime) -> Result<chrono::DateTime<rrule::Tz>, RecurrenceError> {
    use chrono::TimeZone as _;
    let naive = chrono::NaiveDate::from_ymd_opt(
        i32::from(dt.year()),
        u32::try_from(dt.month())?,
        u32::try_from(dt.day())?,
    )
    .and_then(|d| {
        d.and_hms_opt(
            u32::try_from(dt.hour()).ok()?,
            u32::try_from(dt.minute()).ok()?,
            u32::try_from(dt.second()).ok()?,
        )
    })
    .ok_or(RecurrenceError::OutOfRange)?;
    Ok(rrule::Tz::UTC.from_utc_datetime(&naive))
}

/// The `rrule` crate's UTC date-time as a wall time.
fn from_chrono(dt: &chrono::DateTime<rrule::Tz>) -> Result<DateTime, RecurrenceError> {
    use chrono::{Datelike, Timelike};
    let n = dt.naive_utc();
    DateTime::new(
        i16::try_from(n.year())?,
        i8::try_from(n.month())?,
        i8::try_from(n.day())?,
        i8::try_from(n.hour())?,
        i8::try_from(n.minute())?,
        i8::try_from(n.second())?,
        0,
    )
    .map_err(RecurrenceError::from)
}
