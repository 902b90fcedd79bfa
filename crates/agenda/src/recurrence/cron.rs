//! Five-field cron expressions (`0 9 * * 1-5`) as RFC 5545 rules.

use jiff::civil::Weekday;

use super::code;
use super::error::{CronProblem, RecurrenceError};
use super::parse::Built;
use crate::spoken::{month_word, weekday_word};

/// The five fields of `lower`, when it looks like a cron expression.
pub(super) fn cron_fields(lower: &str) -> Option<Vec<&str>> {
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

/// A cron field's values in `min..=max` (`*`, `N`, `A-B`, `*/S`, `A-B/S`, lists, names).
fn cron_values(
    field: &str,
    min: i64,
    max: i64,
    names: &dyn Fn(&str) -> Option<i64>,
) -> Result<Vec<i64>, CronProblem> {
    let mut values = Vec::new();
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (
                r,
                s.parse::<i64>()
                    .map_err(|_| CronProblem::BadStep(part.to_owned()))?,
            ),
            None => (part, 1),
        };
        if step < 1 {
            return Err(CronProblem::BadStep(part.to_owned()));
        }
        let value = |s: &str| -> Result<i64, CronProblem> {
            s.parse::<i64>()
                .ok()
                .or_else(|| names(s))
                .ok_or_else(|| CronProblem::NotAValue(s.to_owned()))
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
            return Err(CronProblem::OutOfBounds {
                part: part.to_owned(),
                min,
                max,
            });
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

/// The rule of a cron expression's five `fields`.
pub(super) fn cron_rule(fields: &[&str]) -> Result<Built, RecurrenceError> {
    let bad = |problem: CronProblem| RecurrenceError::Cron {
        expression: fields.join(" "),
        problem,
    };
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
        return Err(bad(CronProblem::DayOfMonthAndWeek));
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
                    .map_err(|e| bad(e.into()))?;
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
