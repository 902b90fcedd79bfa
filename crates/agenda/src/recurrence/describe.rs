//! A rule in words: `every weekday at 09:00`, `every 2 weeks on monday at 10:00`, `the first
//! monday of every month at 10:00`, with `, 5 times` or `, until 2026-04-30`; a rule beyond
//! these words reads as its RRULE text.

use jiff::civil::{Date, DateTime, Weekday};

use super::{Recurrence, from_code};
use crate::spoken::weekday_name;

/// The rule keys these words cover; a rule with any other reads as its RRULE text.
const KNOWN: [&str; 10] = [
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

/// [`Recurrence::describe`].
pub(super) fn describe(r: &Recurrence) -> String {
    words(r).unwrap_or_else(|| format!("RRULE:{}", r.rule))
}

/// The words, `None` when the rule is beyond them.
fn words(r: &Recurrence) -> Option<String> {
    let rule = Rule::read(r)?;
    let at = rule.at()?;
    let days = rule.by_day()?;
    let text = match rule.sub_daily(&days) {
        Some(text) => text,
        None => format!("{} {at}", rule.head(days)?),
    };
    Some(rule.with_end(text))
}

/// A rule's parts, read.
struct Rule<'a> {
    parts: Vec<(&'a str, &'a str)>,
    interval: i64,
    hours: Vec<i64>,
    minutes: Vec<i64>,
    month_days: Vec<i64>,
    months: Vec<i64>,
    /// The first occurrence (gives the time, day or month a rule leaves out).
    start: DateTime,
}

/// A `BYDAY` entry: an optional ordinal, then the day.
type Day = (Option<i64>, Weekday);

impl<'a> Rule<'a> {
    fn read(r: &'a Recurrence) -> Option<Rule<'a>> {
        let parts: Vec<(&str, &str)> = r
            .rule
            .split(';')
            .filter_map(|p| p.split_once('='))
            .collect();
        if parts.iter().any(|(k, _)| !KNOWN.contains(k)) {
            return None;
        }
        let mut rule = Rule {
            parts,
            interval: 1,
            hours: Vec::new(),
            minutes: Vec::new(),
            month_days: Vec::new(),
            months: Vec::new(),
            start: r.start,
        };
        rule.interval = rule
            .get("INTERVAL")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        rule.hours = rule.numbers("BYHOUR")?;
        rule.minutes = rule.numbers("BYMINUTE")?;
        rule.month_days = rule.numbers("BYMONTHDAY")?;
        rule.months = rule.numbers("BYMONTH")?;
        if rule.hours.is_empty() {
            rule.hours = vec![i64::from(r.start.hour())];
        }
        if rule.minutes.is_empty() {
            rule.minutes = vec![i64::from(r.start.minute())];
        }
        Some(rule)
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.parts.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn list(&self, key: &str) -> Vec<&'a str> {
        self.get(key)
            .map_or_else(Vec::new, |v| v.split(',').collect())
    }

    fn numbers(&self, key: &str) -> Option<Vec<i64>> {
        self.list(key).iter().map(|v| v.parse().ok()).collect()
    }

    /// `at 09:00` (at most six times of day).
    fn at(&self) -> Option<String> {
        let times: Vec<String> = self
            .hours
            .iter()
            .flat_map(|h| self.minutes.iter().map(move |m| format!("{h:02}:{m:02}")))
            .collect();
        (times.len() <= 6).then(|| format!("at {}", join_and(&times)))
    }

    /// The `BYDAY` entries.
    fn by_day(&self) -> Option<Vec<Day>> {
        let mut days = Vec::new();
        for entry in self.list("BYDAY") {
            let split = entry.len().saturating_sub(2);
            let (n, day) = entry.split_at(split);
            let day = from_code(day)?;
            let n = if n.is_empty() {
                None
            } else {
                Some(n.trim_start_matches('+').parse().ok()?)
            };
            days.push((n, day));
        }
        Some(days)
    }

    fn every(&self, unit: &str, units: &str) -> String {
        if self.interval == 1 {
            format!("every {unit}")
        } else {
            format!("every {} {units}", self.interval)
        }
    }

    /// The words of a minutely or hourly rule, when it is one these words cover.
    fn sub_daily(&self, days: &[Day]) -> Option<String> {
        let by_date = !days.is_empty() || !self.month_days.is_empty() || !self.months.is_empty();
        match self.get("FREQ").unwrap_or("") {
            "MINUTELY"
                if !by_date && self.get("BYHOUR").is_none() && self.get("BYMINUTE").is_none() =>
            {
                Some(self.every("minute", "minutes"))
            }
            "HOURLY" if !by_date && self.get("BYHOUR").is_none() => {
                let mins: Vec<String> = self.minutes.iter().map(|m| format!(":{m:02}")).collect();
                Some(format!(
                    "{} at {}",
                    self.every("hour", "hours"),
                    join_and(&mins)
                ))
            }
            _ => None,
        }
    }

    /// The words before `at …` of a daily, weekly, monthly or yearly rule.
    fn head(&self, days: Vec<Day>) -> Option<String> {
        let plain_days: Vec<Weekday> = days
            .iter()
            .filter(|(n, _)| n.is_none())
            .map(|d| d.1)
            .collect();
        let (no_month_days, no_months) = (self.month_days.is_empty(), self.months.is_empty());
        Some(match self.get("FREQ").unwrap_or("") {
            "DAILY" if days.is_empty() && no_month_days && no_months => self.every("day", "days"),
            "DAILY" | "WEEKLY"
                if self.interval == 1
                    && no_month_days
                    && no_months
                    && !plain_days.is_empty()
                    && plain_days.len() == days.len() =>
            {
                format!("every {}", day_names(&plain_days))
            }
            "WEEKLY" if no_month_days && no_months && plain_days.len() == days.len() => {
                let ds = if plain_days.is_empty() {
                    vec![self.start.weekday()]
                } else {
                    plain_days
                };
                format!("{} on {}", self.every("week", "weeks"), day_names(&ds))
            }
            "MONTHLY" if no_months && days.is_empty() => self.monthly_on_days(),
            "MONTHLY" if no_months && no_month_days && days.len() == 1 => {
                let (Some(n), day) = days[0] else {
                    return None;
                };
                let of = if self.interval == 1 {
                    "every month".to_owned()
                } else {
                    format!("every {} months", self.interval)
                };
                format!("the {} {} of {of}", ordinal_word(n), weekday_name(day))
            }
            "YEARLY" if days.is_empty() && self.months.len() <= 1 && self.month_days.len() <= 1 => {
                self.yearly()?
            }
            _ => return None,
        })
    }

    /// `every month on the 15th`, `… on the last day`.
    fn monthly_on_days(&self) -> String {
        let ds = if self.month_days.is_empty() {
            vec![i64::from(self.start.day())]
        } else {
            self.month_days.clone()
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
        format!("{} on the {}", self.every("month", "months"), join_and(&ds))
    }

    /// `every year on march 3`.
    fn yearly(&self) -> Option<String> {
        let month = self
            .months
            .first()
            .copied()
            .unwrap_or(i64::from(self.start.month()));
        let day = self
            .month_days
            .first()
            .copied()
            .unwrap_or(i64::from(self.start.day()));
        let name = usize::try_from(month - 1)
            .ok()
            .and_then(|i| MONTHS.get(i))?;
        Some(format!("{} on {name} {day}", self.every("year", "years")))
    }

    /// `text` with the rule's end: `, 5 times` or `, until 2026-04-30`.
    fn with_end(&self, text: String) -> String {
        if let Some(count) = self.get("COUNT") {
            return format!("{text}, {count} times");
        }
        if let Some(until) = self.get("UNTIL") {
            let date = until
                .get(0..8)
                .and_then(|d| Date::strptime("%Y%m%d", d).ok());
            if let Some(date) = date {
                return format!("{text}, until {date}");
            }
        }
        text
    }
}

/// `weekday` for Monday to Friday, else the days' names joined with `and`.
fn day_names(ds: &[Weekday]) -> String {
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
