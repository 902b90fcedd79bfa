//! Saying a repetition: a phrase, a cron expression or an `RRULE:` line said at some moment,
//! as a [`Recurrence`] and its first occurrence.

use jiff::civil::{DateTime, Time};
use jiff::{Timestamp, ZonedDateTime};

use super::Recurrence;
use super::cron::{cron_fields, cron_rule};
use super::error::RecurrenceError;
use super::phrase::phrase_rule;

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
) -> Option<Result<Repetition, RecurrenceError>> {
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
pub(super) struct Built {
    /// The RRULE text.
    pub rule: String,
    /// The wall time said (`at 9`), when the rule has no `BYHOUR`.
    pub time: Option<Time>,
    /// Hourly or finer: starts now.
    pub sub_daily: bool,
}

/// The [`Repetition`] of a rule said at `now`: its start, an interval counted from the first
/// matching day, and the first occurrence.
fn finish(b: Built, now: &ZonedDateTime, day_start: Time) -> Result<Repetition, RecurrenceError> {
    let tz = now.time_zone().clone();
    let recurrence = Recurrence {
        zone: tz.iana_name().map(str::to_owned),
        start: start_of(&b, now, day_start)?,
        rule: b.rule,
    };
    // Validates the rule too.
    recurrence.rule_set(&tz)?;
    let recurrence = first_period(recurrence, now)?;
    // The first occurrence: at or after now (DTSTART itself counts only when it is one).
    let first = recurrence
        .next_at_or_after(now.timestamp(), &tz)?
        .ok_or_else(|| {
            RecurrenceError::Unusable(format!(
                "the repetition '{}' has no occurrence after now",
                recurrence.describe()
            ))
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

/// The rule's first wall time (`DTSTART`): the next minute for an hourly or finer rule, today's
/// midnight for a rule with `BYHOUR`, else the time said (or `day_start`) today, tomorrow when
/// that has passed.
fn start_of(b: &Built, now: &ZonedDateTime, day_start: Time) -> Result<DateTime, RecurrenceError> {
    let has_hour = b.rule.contains("BYHOUR=");
    let today = now.date();
    if b.sub_daily || has_hour {
        let t = now.datetime();
        // The minute now, as a wall time: an hourly rule counts from here.
        let minute = t.date().at(t.hour(), t.minute(), 0, 0);
        return if b.sub_daily && !has_hour {
            minute
                .checked_add(jiff::Span::new().minutes(1))
                .map_err(RecurrenceError::from)
        } else {
            Ok(today.at(0, 0, 0, 0))
        };
    }
    let time = b.time.unwrap_or(day_start);
    let at = today.to_datetime(time);
    // Passed today: the rule starts tomorrow (`every 2 weeks` said at 10:00 starts at
    // tomorrow's 09:00, not in two weeks).
    if at < now.datetime() {
        Ok(today
            .tomorrow()
            .map_err(RecurrenceError::from)?
            .to_datetime(time))
    } else {
        Ok(at)
    }
}

/// With an interval, the first period is the one holding the first matching day: `every 2
/// weeks on monday` said on a Friday starts next Monday, not in the week after.
fn first_period(
    recurrence: Recurrence,
    now: &ZonedDateTime,
) -> Result<Recurrence, RecurrenceError> {
    if !recurrence.rule.contains("INTERVAL=") {
        return Ok(recurrence);
    }
    let tz = now.time_zone();
    let single: Vec<&str> = recurrence
        .rule
        .split(';')
        .filter(|p| !p.starts_with("INTERVAL=") && !p.starts_with("COUNT="))
        .collect();
    let probe = Recurrence {
        rule: single.join(";"),
        ..recurrence.clone()
    };
    Ok(match probe.next_at_or_after(now.timestamp(), tz)? {
        Some(first) => Recurrence {
            start: first.to_zoned_datetime(probe.time_zone(tz)).datetime(),
            ..recurrence
        },
        None => recurrence,
    })
}
