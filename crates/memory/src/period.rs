//! The time a question names (`docs/behaviour.md#the-time-a-question-names`): a day (`on 13
//! October, 2023`, `May 3, 2023`), a month (`in May 2023`), a year (`in 2023`) or a month of any
//! year (`in June`), read from the words of the question; with the day it is asked
//! ([`named_period_on`]), also a time relative to it (`last week`, `last May`, `three days ago`:
//! `crate::relative_period`). Recall then ranks the memories written
//! in that period before the others ([`crate::MemoryStore::search`]).
//!
//! Only the extraction is done here, over the question's words; the dates are `jiff` civil dates
//! and every calendar step (month lengths, leap years, the day after) is jiff's.

use jiff::ToSpan;
use jiff::civil::Date;

/// A period a question names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// The days from `start` (inclusive) to `end` (exclusive).
    Days {
        /// The first day.
        start: Date,
        /// The day after the last.
        end: Date,
    },
    /// A month (1–12) of whatever year (`in June`, `which outdoor spot did she visit in May?`).
    MonthOfAnyYear(i8),
}

impl Period {
    /// The SQL condition over a timestamp column `column` holding UTC ISO 8601 text
    /// (`2023-05-08T13:56:00.000000Z`): a comparison of its date prefix, so rows written by other
    /// tools (`2023-05-08 13:56:00`) compare alike. The text has no parameters and no user input
    /// (only digits).
    pub fn sql_condition(&self, column: &str) -> String {
        match self {
            Period::Days { start, end } => format!(
                "({column} >= '{}' AND {column} < '{}')",
                start.strftime("%Y-%m-%d"),
                end.strftime("%Y-%m-%d")
            ),
            Period::MonthOfAnyYear(m) => format!("substr({column}, 6, 2) = '{m:02}'"),
        }
    }
}

const MONTHS: [(&str, i8); 21] = [
    ("january", 1),
    ("jan", 1),
    ("february", 2),
    ("feb", 2),
    ("march", 3),
    ("april", 4),
    ("apr", 4),
    ("may", 5),
    ("june", 6),
    ("jun", 6),
    ("july", 7),
    ("jul", 7),
    ("august", 8),
    ("aug", 8),
    ("september", 9),
    ("sept", 9),
    ("october", 10),
    ("oct", 10),
    ("november", 11),
    ("december", 12),
    ("dec", 12),
];

/// Words before a month alone that make it a time (`in May`, not `may I`).
const MONTH_LEADS: [&str; 12] = [
    "in", "during", "of", "since", "until", "before", "after", "by", "early", "late", "mid", "last",
];

/// The month a word names (`may`, `sept`), 1–12.
pub(crate) fn month(word: &str) -> Option<i8> {
    MONTHS.iter().find(|(n, _)| *n == word).map(|(_, m)| *m)
}

/// A day of the month (`13`, `3rd`, `21st`).
fn day(word: &str) -> Option<i8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !(suffix.is_empty() || ["st", "nd", "rd", "th"].contains(&suffix)) {
        return None;
    }
    digits.parse::<i8>().ok().filter(|d| (1..=31).contains(d))
}

/// A year of four digits, 1900–2199.
fn year(word: &str) -> Option<i16> {
    (word.len() == 4)
        .then(|| word.parse::<i16>().ok())
        .flatten()
        .filter(|y| (1900..2200).contains(y))
}

/// One period found at a word, with the words it used.
fn at(words: &[&str], i: usize) -> Option<(Period, usize)> {
    let w = |k: usize| words.get(i + k).copied().unwrap_or("");
    let days = |y: i16, m: i8, d: i8, used: usize| {
        let start = Date::new(y, m, d).ok()?;
        Some((
            Period::Days {
                start,
                end: start.checked_add(1.day()).ok()?,
            },
            used,
        ))
    };
    let month_of = |y: i16, m: i8, used: usize| {
        let start = Date::new(y, m, 1).ok()?;
        Some((
            Period::Days {
                start,
                end: start.checked_add(1.month()).ok()?,
            },
            used,
        ))
    };
    // `13 October 2023`, `13th of October, 2023`
    if let Some(d) = day(w(0)) {
        let k = usize::from(w(1) == "of");
        if let Some(m) = month(w(1 + k)) {
            return match year(w(2 + k)) {
                Some(y) => days(y, m, d, 3 + k),
                None => Some((Period::MonthOfAnyYear(m), 2 + k)),
            };
        }
    }
    if let Some(m) = month(w(0)) {
        // `October 13, 2023`, `October 13th 2023`
        if let (Some(d), Some(y)) = (day(w(1)), year(w(2))) {
            return days(y, m, d, 3);
        }
        // `May 2023`
        if let Some(y) = year(w(1)) {
            return month_of(y, m, 2);
        }
        // `in June`, `on October 13` (no year): the month of any year.
        let lead = i.checked_sub(1).and_then(|p| words.get(p)).copied();
        if day(w(1)).is_some() || lead.is_some_and(|l| MONTH_LEADS.contains(&l)) {
            return Some((
                Period::MonthOfAnyYear(m),
                1 + usize::from(day(w(1)).is_some()),
            ));
        }
    }
    // `in 2023`
    if let Some(y) = year(w(0)) {
        let start = Date::new(y, 1, 1).ok()?;
        return Some((
            Period::Days {
                start,
                end: start.checked_add(1.year()).ok()?,
            },
            1,
        ));
    }
    None
}

/// The period `text` names when asked on `today`: a date it names ([`named_period`]) first, else
/// a time relative to `today` (`last week`, `last May`, `three days ago`), else a month of any
/// year (`in June`).
pub fn named_period_on(text: &str, today: Date) -> Option<Period> {
    let absolute = named_period(text);
    if let Some(Period::Days { .. }) = absolute {
        return absolute;
    }
    let lower = text.to_lowercase();
    let words = words(&lower);
    crate::relative_period::relative_period(&words, today).or(absolute)
}

/// The words of a lowercase text (runs of letters and digits).
fn words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The period `text` names, if any. Several dated periods (`between August 11 and August 15
/// 2023`) give the span from the first day of the earliest to the end of the latest; a month of
/// any year counts only when nothing more precise is named.
pub fn named_period(text: &str) -> Option<Period> {
    let lower = text.to_lowercase();
    let words = words(&lower);
    let mut found = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match at(&words, i) {
            Some((p, used)) => {
                found.push(p);
                i += used.max(1);
            }
            None => i += 1,
        }
    }
    let spans: Vec<(Date, Date)> = found
        .iter()
        .filter_map(|p| match p {
            Period::Days { start, end } => Some((*start, *end)),
            Period::MonthOfAnyYear(_) => None,
        })
        .collect();
    if let (Some(start), Some(end)) = (
        spans.iter().map(|s| s.0).min(),
        spans.iter().map(|s| s.1).max(),
    ) {
        return Some(Period::Days { start, end });
    }
    found.first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(a: &str, b: &str) -> Option<Period> {
        Some(Period::Days {
            start: a.parse().unwrap(),
            end: b.parse().unwrap(),
        })
    }

    #[test]
    fn days_months_and_years() {
        assert_eq!(
            named_period("What painting did she show on October 13, 2023?"),
            days("2023-10-13", "2023-10-14")
        );
        assert_eq!(
            named_period("What did he find on 1 February, 2023?"),
            days("2023-02-01", "2023-02-02")
        );
        assert_eq!(
            named_period("What happened on the 3rd of June 2023"),
            days("2023-06-03", "2023-06-04")
        );
        assert_eq!(
            named_period("What class did she start in December 2023?"),
            days("2023-12-01", "2024-01-01")
        );
        assert_eq!(
            named_period("What did he do in February 2024?"),
            days("2024-02-01", "2024-03-01")
        );
        assert_eq!(
            named_period("How many times did they go to the beach in 2023?"),
            days("2023-01-01", "2024-01-01")
        );
        assert_eq!(
            named_period("Where was he between August 11 and August 15 2023?"),
            days("2023-08-15", "2023-08-16")
        );
    }

    #[test]
    fn a_month_alone_and_words_that_are_not_times() {
        assert_eq!(
            named_period("When did they go camping in June?"),
            Some(Period::MonthOfAnyYear(6))
        );
        assert_eq!(
            named_period("Which spot did she visit in May?"),
            Some(Period::MonthOfAnyYear(5))
        );
        assert_eq!(named_period("May I ask what the dog is called?"), None);
        assert_eq!(named_period("What did the 300 guests bring?"), None);
        assert_eq!(named_period("What is her favourite book?"), None);
        // An impossible day names only its year.
        assert_eq!(
            named_period("on February 30, 2023"),
            days("2023-01-01", "2024-01-01")
        );
    }

    #[test]
    fn sql_conditions() {
        let p = days("2023-05-01", "2023-06-01").unwrap();
        assert_eq!(
            p.sql_condition("created_at"),
            "(created_at >= '2023-05-01' AND created_at < '2023-06-01')"
        );
        assert_eq!(
            Period::MonthOfAnyYear(6).sql_condition("m.created_at"),
            "substr(m.created_at, 6, 2) = '06'"
        );
    }
}
