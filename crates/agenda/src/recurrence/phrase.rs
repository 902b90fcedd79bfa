//! Our phrase grammar for repetitions: `every weekday at 9am`, `every 2 weeks on monday at 10`,
//! `first monday of the month at 10am`, `every 30 minutes`, each with an optional `until DATE`
//! or `for N times`.

use jiff::ZonedDateTime;
use jiff::civil::Weekday;
use jiff::tz::TimeZone;

use super::error::RecurrenceError;
use super::parse::{Built, looks_like_repetition};
use super::{code, ical};
use crate::spoken::{day_of_month, month_word, weekday_word};

/// The rule of a phrase (`lower`, lower case) said at `now`; `None` when it does not look like a
/// repetition.
pub(super) fn phrase_rule(
    lower: &str,
    now: &ZonedDateTime,
) -> Option<Result<Built, RecurrenceError>> {
    if !looks_like_repetition(lower) {
        return None;
    }
    Some(phrase(lower, now))
}

fn phrase(lower: &str, now: &ZonedDateTime) -> Result<Built, RecurrenceError> {
    let words: Vec<&str> = lower
        .split_whitespace()
        .map(|w| w.trim_end_matches(','))
        .filter(|w| !w.is_empty())
        .collect();
    let (words, end) = end_clause(&words, now)?;
    let mut p = Phrase {
        w: words,
        interval: 1,
        sub_daily: false,
    };
    let mut rule = match p.lead()? {
        Lead::Unit(u) => Some(p.unit_rule(u)?),
        Lead::Rule(r) => Some(r.to_owned()),
        Lead::Nothing => None,
    };
    if rule.is_none() {
        rule = p.weekdays();
    }
    if rule.is_none() {
        rule = p.nth_weekday_of_month();
    }
    let Some(mut rule) = rule else {
        return Err(RecurrenceError::Unusable(format!(
            "'{lower}' is not a repetition elroy knows. Say it like 'every weekday at 9am', \
             'every 2 weeks on monday at 10', 'first monday of the month at 10am', a cron \
             expression ('0 9 * * 1-5') or an RRULE: line"
        )));
    };
    // The time: `at 9`, `9am`, `18:30`.
    let time = if p.w.is_empty() {
        None
    } else {
        Some(crate::spoken::clock_time(p.w).ok_or_else(|| {
            RecurrenceError::Unusable(format!(
                "'{lower}': '{}' is not a time of day (say 'at 9', '9am' or '18:30')",
                p.w.join(" ")
            ))
        })?)
    };
    if p.sub_daily
        && let Some(t) = time
    {
        // `every hour at :30` is not ours; an hourly rule with a time starts then.
        rule.push_str(&format!(";BYMINUTE={}", t.minute()));
    }
    rule.push_str(&end);
    Ok(Built {
        rule,
        time: if p.sub_daily { None } else { time },
        sub_daily: p.sub_daily,
    })
}

/// How a phrase begins.
enum Lead<'a> {
    /// `every N units`, `every other unit`, `daily`, `every week`, …: the unit.
    Unit(&'a str),
    /// `every weekday`, `weekends`: the whole rule.
    Rule(&'static str),
    /// Something else (`mondays at 9`, `first monday of the month`).
    Nothing,
}

/// A phrase being read: the words left and what they said so far.
struct Phrase<'a> {
    w: &'a [&'a str],
    interval: i64,
    /// Hourly or finer.
    sub_daily: bool,
}

impl<'a> Phrase<'a> {
    /// Drops the next `n` words (fewer when there are fewer).
    fn take(&mut self, n: usize) {
        self.w = &self.w[n.min(self.w.len())..];
    }

    /// Reads how the phrase begins.
    fn lead(&mut self) -> Result<Lead<'a>, RecurrenceError> {
        let w = self.w;
        let (lead, n) = match w {
            ["every", "other", u, ..] => {
                self.interval = 2;
                (Lead::Unit(u), 3)
            }
            ["every", n, u, ..] if n.parse::<i64>().is_ok() => {
                self.interval = n
                    .parse()
                    .map_err(|_| RecurrenceError::Unusable(format!("'{n}' is not a number")))?;
                if self.interval < 1 {
                    return Err(RecurrenceError::Unusable(format!(
                        "'every {n} {u}' never repeats"
                    )));
                }
                (Lead::Unit(u), 3)
            }
            ["daily", ..] => (Lead::Unit("day"), 1),
            ["weekly", ..] => (Lead::Unit("week"), 1),
            ["monthly", ..] => (Lead::Unit("month"), 1),
            ["yearly" | "annually", ..] => (Lead::Unit("year"), 1),
            ["hourly", ..] => (Lead::Unit("hour"), 1),
            ["every", "weekday" | "weekdays", ..] => (Lead::Rule(WEEKDAYS), 2),
            ["weekdays", ..] => (Lead::Rule(WEEKDAYS), 1),
            ["every", "weekend" | "weekends", ..] => (Lead::Rule(WEEKENDS), 2),
            ["weekends", ..] => (Lead::Rule(WEEKENDS), 1),
            ["every", u, ..]
                if matches!(*u, "day" | "week" | "month" | "year" | "hour" | "minute") =>
            {
                (Lead::Unit(u), 2)
            }
            _ => (Lead::Nothing, 0),
        };
        self.take(n);
        Ok(lead)
    }

    /// The rule of a unit (`day`, `weeks`, …) and what follows it: `on monday and thursday`,
    /// `on the 15th`, `on the first monday`, `on march 3`.
    fn unit_rule(&mut self, u: &str) -> Result<String, RecurrenceError> {
        let freq = match u.trim_end_matches('s') {
            "day" => "DAILY",
            "week" => "WEEKLY",
            "month" => "MONTHLY",
            "year" => "YEARLY",
            "hour" => {
                self.sub_daily = true;
                "HOURLY"
            }
            "minute" | "min" => {
                self.sub_daily = true;
                "MINUTELY"
            }
            _ => {
                return Err(RecurrenceError::Unusable(format!(
                    "'{u}' is not a unit of repetition (day, week, month, year, hour, minute)"
                )));
            }
        };
        let interval = if self.interval > 1 {
            format!(";INTERVAL={}", self.interval)
        } else {
            String::new()
        };
        let mut r = format!("FREQ={freq}{interval}");
        if matches!(self.w.first(), Some(&"on")) {
            self.take(1);
        }
        if matches!(self.w.first(), Some(&"the")) {
            self.take(1);
        }
        match freq {
            "WEEKLY" | "DAILY" => {
                if let Some((days, n)) = weekday_list(self.w) {
                    r = format!("FREQ=WEEKLY{interval};BYDAY={}", codes(&days));
                    self.take(n);
                }
            }
            "MONTHLY" => r.push_str(&self.monthly_on()),
            "YEARLY" => {
                if let Some((m, d)) = month_and_day(self.w) {
                    r.push_str(&format!(";BYMONTH={m};BYMONTHDAY={d}"));
                    self.take(2);
                }
            }
            _ => {}
        }
        Ok(r)
    }

    /// A monthly rule's day: `first monday`, `last day`, `15th` (empty when none is said).
    fn monthly_on(&mut self) -> String {
        let w = self.w;
        if let (Some(n), Some(d)) = (
            w.first().and_then(|x| ordinal(x)),
            w.get(1).and_then(|x| weekday_word(x)),
        ) {
            self.take(2);
            format!(";BYDAY={n}{}", code(d))
        } else if matches!(w, ["last", "day", ..]) {
            self.take(2);
            ";BYMONTHDAY=-1".to_owned()
        } else if let Some(d) = w.first().and_then(|x| day_of_month(x)) {
            self.take(1);
            format!(";BYMONTHDAY={d}")
        } else {
            String::new()
        }
    }

    /// `every monday and thursday`, `mondays at 9`, `every monday 9am`.
    fn weekdays(&mut self) -> Option<String> {
        let start = usize::from(self.w.first() == Some(&"every"));
        let (days, n) = weekday_list(&self.w[start..])?;
        self.take(start + n);
        Some(format!("FREQ=WEEKLY;BYDAY={}", codes(&days)))
    }

    /// `first monday of the month`, `the last friday of every month`, `every first monday …`.
    fn nth_weekday_of_month(&mut self) -> Option<String> {
        let mut v = self.w;
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
            self.w = rest;
            return Some(format!("FREQ=MONTHLY;BYDAY={n}{}", code(day)));
        }
        None
    }
}

const WEEKDAYS: &str = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR";
const WEEKENDS: &str = "FREQ=WEEKLY;BYDAY=SA,SU";

/// `march 3` or `3 march`: the month and the day.
fn month_and_day(w: &[&str]) -> Option<(i8, i8)> {
    match w {
        [m, d, ..] if month_word(m).is_some() && day_of_month(d).is_some() => {
            Some((month_word(m)?, day_of_month(d)?))
        }
        [d, m, ..] if month_word(m).is_some() && day_of_month(d).is_some() => {
            Some((month_word(m)?, day_of_month(d)?))
        }
        _ => None,
    }
}

/// The trailing `until DATE` / `for N times` / `N times` of a phrase: the rest and the suffix.
fn end_clause<'a>(
    words: &'a [&'a str],
    now: &ZonedDateTime,
) -> Result<(&'a [&'a str], String), RecurrenceError> {
    if let Some(pos) = words.iter().position(|w| *w == "until") {
        let date_words = &words[pos + 1..];
        let text = date_words.join(" ");
        let date = crate::parse_item_date(&text)
            .or_else(|| crate::spoken::spoken_date(date_words, now.date()))
            .ok_or_else(|| {
                RecurrenceError::Unusable(format!(
                    "'until {text}' is not a date (say 'until 2026-04-30' or 'until april 30')"
                ))
            })?;
        // The end of that day in the zone, as UTC (RFC 5545: UNTIL is UTC when DTSTART has a zone).
        let end = now
            .time_zone()
            .to_ambiguous_timestamp(date.at(23, 59, 59, 0))
            .compatible()
            .map_err(RecurrenceError::from)?;
        let utc = end.to_zoned_datetime(TimeZone::UTC).datetime();
        return Ok((&words[..pos], format!(";UNTIL={}Z", ical(utc))));
    }
    let n = words.len();
    if n >= 2 && matches!(words[n - 1], "times" | "time") {
        let count_at = n - 2;
        let count: u32 = words[count_at].parse().map_err(|_| {
            RecurrenceError::Unusable(format!("'{} times' is not a count", words[count_at]))
        })?;
        if count == 0 {
            return Err(RecurrenceError::Unusable(
                "a repetition for 0 times never fires".into(),
            ));
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

/// `first`, `2nd`, … `last` as an RFC 5545 ordinal.
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

/// The weekdays a phrase starts with (`monday and thursday`) and how many words they take.
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

/// The days' RFC 5545 codes, Monday first, joined with `,`.
fn codes(days: &[Weekday]) -> String {
    let mut sorted = days.to_vec();
    sorted.sort_by_key(|w| w.to_monday_zero_offset());
    sorted
        .iter()
        .map(|w| code(*w))
        .collect::<Vec<_>>()
        .join(",")
}
