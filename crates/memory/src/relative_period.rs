//! The time a question names relative to the day it is asked
//! (`docs/behaviour.md#the-time-a-question-names`): `yesterday`, `last week`, `this month`, `last
//! year`, `last May`, `last Friday`, `last weekend`, `three weeks ago`, `2 years ago`.
//!
//! A phrase gives a span of whole days. Where people use a phrase for two spans (`last week`: the
//! calendar week before this one, or the seven days before today), the span covers both (from the
//! start of the calendar week before this one to the end of today), because the period only ranks
//! its memories first and never hides the others: a span a little too wide costs less than one
//! that misses the day meant. Weeks start on Monday. Every calendar step is jiff's.

use jiff::civil::{Date, Weekday};
use jiff::{Span, ToSpan};

use crate::period::Period;

/// Number words read before `days`, `weeks`, `months` or `years ago`.
const NUMBERS: [(&str, i64); 14] = [
    ("a", 1),
    ("an", 1),
    ("one", 1),
    ("two", 2),
    ("couple", 2),
    ("three", 3),
    ("few", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
];

const WEEKDAYS: [(&str, Weekday); 7] = [
    ("monday", Weekday::Monday),
    ("tuesday", Weekday::Tuesday),
    ("wednesday", Weekday::Wednesday),
    ("thursday", Weekday::Thursday),
    ("friday", Weekday::Friday),
    ("saturday", Weekday::Saturday),
    ("sunday", Weekday::Sunday),
];

/// The period the first relative phrase of `words` (lowercase, no punctuation) names, counted
/// from `today`; `None` when there is none.
pub(crate) fn relative_period(words: &[&str], today: Date) -> Option<Period> {
    (0..words.len()).find_map(|i| at(words, i, today))
}

/// A relative phrase starting at word `i`.
fn at(words: &[&str], i: usize, today: Date) -> Option<Period> {
    let w = |k: usize| words.get(i + k).copied().unwrap_or("");
    match w(0) {
        "yesterday" => return span(today.checked_sub(1.day()).ok()?, today),
        "today" | "tonight" => return span(today, next(today)?),
        "last" | "past" | "this" => {
            let this = w(0) == "this";
            return match w(1) {
                "week" => week(today, this),
                "weekend" => weekend(today),
                "month" => month(today, this),
                "year" => year(today, this),
                word if !this => last_named(word, today),
                _ => None,
            };
        }
        _ => {}
    }
    // `three weeks ago`, `a couple of months ago`, `2 years ago`
    let number = |word: &str| NUMBERS.iter().find(|(n, _)| *n == word).map(|(_, v)| *v);
    let mut count = w(0).parse::<i64>().ok().or_else(|| number(w(0)))?;
    let mut k = 1;
    // `a couple of`, `a few`
    while matches!(w(k), "couple" | "few" | "of") {
        count = number(w(k)).unwrap_or(count);
        k += 1;
    }
    if w(k + 1) != "ago" || !(1..=100).contains(&count) {
        return None;
    }
    ago(w(k), count, today)
}

fn span(start: Date, end: Date) -> Option<Period> {
    (start < end).then_some(Period::Days { start, end })
}

fn next(day: Date) -> Option<Date> {
    day.checked_add(1.day()).ok()
}

/// Monday of the week of `day`.
fn monday(day: Date) -> Option<Date> {
    let back = i64::from(day.weekday().to_monday_zero_offset());
    day.checked_sub(back.days()).ok()
}

/// `this week`: Monday to today; `last week`: the Monday before to today.
fn week(today: Date, this: bool) -> Option<Period> {
    let start = monday(today)?;
    let start = if this {
        start
    } else {
        start.checked_sub(1.week()).ok()?
    };
    span(start, next(today)?)
}

/// `last weekend` / `this weekend`: the latest Saturday and Sunday before today; asked on a
/// weekend day, from the Saturday before to today.
fn weekend(today: Date) -> Option<Period> {
    let offset = i64::from(today.weekday().to_monday_zero_offset());
    if offset >= 5 {
        let saturday = today.checked_sub((offset - 5 + 7).days()).ok()?;
        return span(saturday, next(today)?);
    }
    let saturday = today.checked_sub((offset + 2).days()).ok()?;
    span(saturday, saturday.checked_add(2.days()).ok()?)
}

/// `this month`: the first to today; `last month`: the first of the month before to today.
fn month(today: Date, this: bool) -> Option<Period> {
    let first = today.first_of_month();
    let start = if this {
        first
    } else {
        first.checked_sub(1.month()).ok()?
    };
    span(start, next(today)?)
}

/// `this year`: 1 January to today; `last year`: 1 January of the year before to today.
fn year(today: Date, this: bool) -> Option<Period> {
    let first = Date::new(today.year(), 1, 1).ok()?;
    let start = if this {
        first
    } else {
        first.checked_sub(1.year()).ok()?
    };
    span(start, next(today)?)
}

/// `last May` (the latest whole May before this month) or `last Friday` (the latest Friday
/// before today).
fn last_named(word: &str, today: Date) -> Option<Period> {
    if let Some(m) = crate::period::month(word) {
        let this_year = Date::new(today.year(), m, 1).ok()?;
        let start = if this_year < today.first_of_month() {
            this_year
        } else {
            this_year.checked_sub(1.year()).ok()?
        };
        return span(start, start.checked_add(1.month()).ok()?);
    }
    let (_, weekday) = WEEKDAYS.iter().find(|(n, _)| *n == word)?;
    let back = (i64::from(today.weekday().to_monday_zero_offset())
        - i64::from(weekday.to_monday_zero_offset()))
    .rem_euclid(7);
    let back = if back == 0 { 7 } else { back };
    let day = today.checked_sub(back.days()).ok()?;
    span(day, next(day)?)
}

/// `N days ago`: that day and the days either side; `N weeks ago`: the week around that day;
/// `N months ago`, `N years ago`: that calendar month or year.
fn ago(unit: &str, count: i64, today: Date) -> Option<Period> {
    let back = |s: Span| today.checked_sub(s).ok();
    match unit.trim_end_matches('s') {
        "day" => {
            let day = back(count.days())?;
            span(
                day.checked_sub(1.day()).ok()?,
                day.checked_add(2.days()).ok()?,
            )
        }
        "week" => {
            let day = back(count.weeks())?;
            span(
                day.checked_sub(3.days()).ok()?,
                day.checked_add(4.days()).ok()?,
            )
        }
        "month" => {
            let first = back(count.months())?.first_of_month();
            span(first, first.checked_add(1.month()).ok()?)
        }
        "year" => {
            let first = Date::new(back(count.years())?.year(), 1, 1).ok()?;
            span(first, first.checked_add(1.year()).ok()?)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::period::named_period_on;

    /// Saturday 5 December 2026.
    fn today() -> Date {
        Date::new(2026, 12, 5).unwrap()
    }

    fn days(text: &str) -> Option<(String, String)> {
        match named_period_on(text, today())? {
            Period::Days { start, end } => Some((start.to_string(), end.to_string())),
            Period::MonthOfAnyYear(_) => None,
        }
    }

    fn pair(a: &str, b: &str) -> Option<(String, String)> {
        Some((a.to_owned(), b.to_owned()))
    }

    #[test]
    fn days_weeks_and_weekends() {
        assert_eq!(
            days("What did I eat yesterday?"),
            pair("2026-12-04", "2026-12-05")
        );
        assert_eq!(
            days("what happened today"),
            pair("2026-12-05", "2026-12-06")
        );
        // Monday 23 November to today.
        assert_eq!(
            days("What did I do last week?"),
            pair("2026-11-23", "2026-12-06")
        );
        assert_eq!(days("this week"), pair("2026-11-30", "2026-12-06"));
        assert_eq!(days("last weekend"), pair("2026-11-28", "2026-12-06"));
        assert_eq!(
            named_period_on("last weekend", Date::new(2026, 12, 2).unwrap()),
            Some(Period::Days {
                start: Date::new(2026, 11, 28).unwrap(),
                end: Date::new(2026, 11, 30).unwrap(),
            })
        );
        // Friday 4 December; a Saturday asked on a Saturday is a week ago.
        assert_eq!(
            days("Who did I meet last Friday?"),
            pair("2026-12-04", "2026-12-05")
        );
        assert_eq!(days("last saturday"), pair("2026-11-28", "2026-11-29"));
    }

    #[test]
    fn months_years_and_ago() {
        // The latest whole May before December 2026; a December asked in December is last year's.
        assert_eq!(
            days("Where did I go last May?"),
            pair("2026-05-01", "2026-06-01")
        );
        assert_eq!(days("last december"), pair("2025-12-01", "2026-01-01"));
        assert_eq!(days("last month"), pair("2026-11-01", "2026-12-06"));
        assert_eq!(days("this year"), pair("2026-01-01", "2026-12-06"));
        assert_eq!(days("last year"), pair("2025-01-01", "2026-12-06"));
        assert_eq!(
            days("What did I buy three days ago?"),
            pair("2026-12-01", "2026-12-04")
        );
        assert_eq!(days("2 weeks ago"), pair("2026-11-18", "2026-11-25"));
        assert_eq!(
            days("a couple of months ago"),
            pair("2026-10-01", "2026-11-01")
        );
        assert_eq!(days("a year ago"), pair("2025-01-01", "2026-01-01"));
    }

    /// An absolute date wins over the relative reading; words that only look like a phrase are
    /// not one; without a relative phrase the absolute reading is the same as without a day.
    #[test]
    fn absolute_dates_win_and_lookalikes_are_not_periods() {
        assert_eq!(
            days("What did I do on May 3, 2023, the day before yesterday?"),
            pair("2023-05-03", "2023-05-04")
        );
        assert_eq!(days("What was the last book she read?"), None);
        assert_eq!(days("the past is the past"), None);
        assert_eq!(days("a dog ago"), None);
        assert_eq!(days("I have 300 days ago"), None);
        assert_eq!(
            named_period_on("Which spot did she visit in May?", today()),
            Some(Period::MonthOfAnyYear(5))
        );
    }
}
