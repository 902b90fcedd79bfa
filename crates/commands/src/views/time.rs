//! Times and days as a person reads and types them.

use jiff::Timestamp;
use jiff::civil::Date;

/// A due time where a person reads it: weekday, date, time and offset in `tz`
/// (`Sun 2026-12-06 09:00 +00:00`). The very function the `create_due_item` confirmation and
/// `elroy due snooze` (`elroy_runtime`) write their times with, so the forms cannot drift apart.
pub use elroy_agenda::format_spoken_instant as due_time;

/// `in 2 h`, `overdue 35 min`, `now`: the distance from `now` to `trigger`, whole units cut
/// down (minutes under an hour, hours and minutes under ten hours, hours under two days, then
/// days).
pub fn relative(trigger: Timestamp, now: Timestamp) -> String {
    let seconds = trigger.as_second() - now.as_second();
    let minutes = seconds.abs() / 60;
    if minutes == 0 {
        return "now".into();
    }
    let amount = if minutes < 60 {
        format!("{minutes} min")
    } else if minutes < 600 && minutes % 60 != 0 {
        format!("{} h {} min", minutes / 60, minutes % 60)
    } else if minutes < 48 * 60 {
        format!("{} h", minutes / 60)
    } else {
        format!("{} d", minutes / (24 * 60))
    };
    if seconds > 0 {
        format!("in {amount}")
    } else {
        format!("overdue {amount}")
    }
}

/// Text on one line: runs of whitespace become one space, and every other control character
/// (C0, DEL, C1: ESC, BEL…) a space too, so nothing reaches a terminal as a command.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A range of days, first and last inclusive, as a person names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Days {
    /// The first day.
    pub first: Date,
    /// The last day (equal to `first` for one day).
    pub last: Date,
}

/// A word that names no day.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a day: '{0}' (use today, tomorrow, yesterday, week or a date YYYY-MM-DD)")]
pub struct DaysError(pub String);

impl Days {
    /// The days `word` names relative to `today` (case and surrounding spaces ignored): none or
    /// `today`, `tomorrow`, `yesterday`, `week` (today and the six days after), or a date
    /// `YYYY-MM-DD`.
    ///
    /// # Errors
    /// [`DaysError`] for any other word.
    pub fn parse(word: Option<&str>, today: Date) -> Result<Days, DaysError> {
        let shifted = |days: i64| {
            today
                .checked_add(jiff::Span::new().days(days))
                .map_err(|_| DaysError(word.unwrap_or_default().trim().to_owned()))
        };
        let lower = word.map(|w| w.trim().to_lowercase());
        let (first, last) = match lower.as_deref() {
            None | Some("today") => (today, today),
            Some("tomorrow") => (shifted(1)?, shifted(1)?),
            Some("yesterday") => (shifted(-1)?, shifted(-1)?),
            Some("week") => (today, shifted(6)?),
            Some(other) => {
                let day = elroy_agenda::parse_item_date(other)
                    .ok_or_else(|| DaysError(word.unwrap_or_default().trim().to_owned()))?;
                (day, day)
            }
        };
        Ok(Days { first, last })
    }

    /// `2026-12-01`, or `2026-12-01 to 2026-12-07` for several days.
    pub fn describe(&self) -> String {
        if self.first == self.last {
            self.first.to_string()
        } else {
            format!("{} to {}", self.first, self.last)
        }
    }

    /// Whether `date` is one of these days.
    pub fn contains(&self, date: Date) -> bool {
        date >= self.first && date <= self.last
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use jiff::tz::TimeZone;

    use super::*;

    #[test]
    fn relative_times() {
        let now: Timestamp = "2026-12-01T09:00:00Z".parse().unwrap();
        let at = |s: i64| Timestamp::from_second(now.as_second() + s).unwrap();
        assert_eq!(relative(at(30), now), "now");
        assert_eq!(relative(at(-59), now), "now");
        assert_eq!(relative(at(2 * 3600), now), "in 2 h");
        assert_eq!(relative(at(2 * 3600 + 59), now), "in 2 h");
        assert_eq!(relative(at(-35 * 60), now), "overdue 35 min");
        assert_eq!(relative(at(90 * 60), now), "in 1 h 30 min");
        assert_eq!(relative(at(30 * 3600 + 600), now), "in 30 h");
        assert_eq!(relative(at(-3 * 86_400), now), "overdue 3 d");
    }

    /// The one due-time format is the tool confirmation's, in any zone.
    #[test]
    fn due_times_read_as_the_tool_confirms_them() {
        let at: Timestamp = "2026-12-06T09:00:00Z".parse().unwrap();
        assert_eq!(due_time(at, &TimeZone::UTC), "Sun 2026-12-06 09:00 +00:00");
        let kolkata = TimeZone::get("Asia/Kolkata").unwrap();
        assert_eq!(due_time(at, &kolkata), "Sun 2026-12-06 14:30 +05:30");
    }

    /// Every day word both `elroy agenda` and `/agenda` take.
    #[test]
    fn day_words() {
        let today = jiff::civil::date(2026, 12, 1);
        let one = |d: Date| Days { first: d, last: d };
        assert_eq!(Days::parse(None, today).unwrap(), one(today));
        assert_eq!(
            Days::parse(Some(" Tomorrow "), today).unwrap(),
            one(jiff::civil::date(2026, 12, 2))
        );
        assert_eq!(
            Days::parse(Some("yesterday"), today).unwrap(),
            one(jiff::civil::date(2026, 11, 30))
        );
        let week = Days::parse(Some("WEEK"), today).unwrap();
        assert_eq!(week.last, jiff::civil::date(2026, 12, 7));
        assert_eq!(week.describe(), "2026-12-01 to 2026-12-07");
        assert_eq!(
            Days::parse(Some("2026-12-24"), today).unwrap().describe(),
            "2026-12-24"
        );
        for bad in ["someday", "2026-13-01"] {
            assert_eq!(
                Days::parse(Some(bad), today).unwrap_err().to_string(),
                format!(
                    "not a day: '{bad}' (use today, tomorrow, yesterday, week or a date YYYY-MM-DD)"
                )
            );
        }
    }

    #[test]
    fn one_line_removes_controls() {
        assert_eq!(one_line("a\n b\t\u{1b}[31mc\u{7}"), "a b [31mc");
    }
}
