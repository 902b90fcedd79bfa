//! [`RecurrenceError`]: why a repetition cannot be understood or a rule cannot be evaluated.

use jiff::Timestamp;

/// Why a repetition (a phrase, a cron expression, an `RRULE:` line, a stored rule) cannot be
/// used. Its `Display` is what the model or person reads after `Error invoking tool …: `.
#[derive(Debug, thiserror::Error)]
pub enum RecurrenceError {
    /// A phrase elroy does not read as a repetition, or one that cannot be meant: the sentence
    /// that says why and how to say it (`'every 0 days' never repeats`), made where the phrase
    /// was read because the model acts on its words.
    #[error("{0}")]
    Unusable(String),
    /// A field of a cron expression is not valid.
    #[error("cron expression '{expression}': {problem}")]
    Cron {
        /// The five fields as given.
        expression: String,
        /// What is wrong.
        #[source]
        problem: CronProblem,
    },
    /// A stored recurrence (`recurrence` front-matter key) cannot be read.
    #[error("cannot read the recurrence '{text}': {problem}")]
    Stored {
        /// The stored text.
        text: String,
        /// What is wrong.
        #[source]
        problem: Box<RecurrenceError>,
    },
    /// The stored text is not of the form `DTSTART…:… RRULE:…` (which part is missing).
    #[error("{0}")]
    Form(&'static str),
    /// The rule's `UNTIL` is not a date or date-time (which form was expected).
    #[error("{0}")]
    Until(&'static str),
    /// The `rrule` crate refused the rule.
    #[error(transparent)]
    Rule(#[from] rrule::RRuleError),
    /// A date or time out of jiff's range.
    #[error(transparent)]
    Time(#[from] jiff::Error),
    /// A calendar field out of range between jiff and chrono.
    #[error(transparent)]
    Field(#[from] std::num::TryFromIntError),
    /// A date out of chrono's range.
    #[error("date out of range")]
    OutOfRange,
    /// A rule that still has occurrences, none of which could be placed in the zone.
    #[error("no occurrence of '{rule}' could be placed after {after}")]
    NotPlaced {
        /// The rule.
        rule: String,
        /// The instant searched from.
        after: Timestamp,
    },
}

/// What is wrong with a field of a cron expression.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CronProblem {
    /// A step (`*/0`, `*/x`) that is not a positive number: the part.
    #[error("bad step in '{0}'")]
    BadStep(String),
    /// A value that is neither a number nor a name of this field.
    #[error("'{0}' is not a value of this field")]
    NotAValue(String),
    /// A value or range outside the field's bounds.
    #[error("'{part}' is outside {min}-{max}")]
    OutOfBounds {
        /// The part.
        part: String,
        /// The field's least value.
        min: i64,
        /// The field's greatest value.
        max: i64,
    },
    /// A day of the month and a day of the week together.
    #[error(
        "a day of the month and a day of the week together mean either in cron, which one rule cannot say; make two reminders"
    )]
    DayOfMonthAndWeek,
    /// A weekday number jiff refuses.
    #[error(transparent)]
    Weekday(#[from] jiff::Error),
}
