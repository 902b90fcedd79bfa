//! `elroy due [--json]`, `elroy due snooze NAME WHEN`, `elroy due done NAME`: the due items for a
//! person. Timed items come first in time order with a relative time (`in 2 h`, `overdue 35 min`),
//! then contextual items. Snoozing and completing go through the same store code as the tools
//! and are each one versioned-home commit (`elroy history`, `elroy undo`).

use std::process::ExitCode;

use elroy_agenda::{DueItem, format_local_with_offset};
use elroy_config::Config;
use jiff::Timestamp;
use serde_json::{Value, json};

use crate::agenda_cmd::{Cell, Style, Table, Tone, one_line, open_agenda};

/// `elroy due …`
#[derive(Debug, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  elroy due\n  elroy due --json\n  elroy due snooze \"Call the dentist\" 10m\n  \
                  elroy due snooze \"Call the dentist\" tomorrow 9am\n  elroy due done \"Call the dentist\"\n  \
                  elroy due done Standup --series    # a repeating item: end it\n\n\
                  Repeating items are created with create_due_item (trigger_time: every weekday at 9am, \
                  0 9 * * 1-5, RRULE:FREQ=DAILY); done moves one to its next occurrence, snooze moves \
                  only the current one."
)]
pub struct DueArgs {
    /// Print JSON instead of tables
    #[arg(long)]
    pub json: bool,
    /// Snooze or complete an item (without: list the due items)
    #[command(subcommand)]
    pub command: Option<DueCommand>,
}

/// `elroy due` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum DueCommand {
    /// Move a timed item's trigger: `10m`, `2h`, `in 90 minutes`, `tomorrow 9am`, `friday 17:00`,
    /// `2026-12-24 08:00` (as create_due_item reads trigger_time); only the trigger changes
    Snooze {
        /// The due item's name (as `elroy due` lists it)
        name: String,
        /// When it should fire again (several words are joined: tomorrow 9am)
        #[arg(required = true, num_args = 1.., value_name = "WHEN")]
        when: Vec<String>,
    },
    /// Mark a due item completed (as the complete_due_item tool); a repeating item completes
    /// this occurrence and moves to the next
    Done {
        /// The due item's name (as `elroy due` lists it)
        name: String,
        /// A closing comment kept in the file
        #[arg(long, value_name = "TEXT")]
        comment: Option<String>,
        /// For a repeating item: end the whole series, not only this occurrence
        #[arg(long)]
        series: bool,
    },
}

pub(crate) fn run(config: Config, args: &DueArgs) -> Result<ExitCode, String> {
    match &args.command {
        None => list(config, args.json),
        Some(DueCommand::Snooze { name, when }) => {
            let runtime = elroy_runtime::Runtime::open(config).map_err(|e| e.to_string())?;
            finish(runtime.snooze_due_item(name, &when.join(" ")))
        }
        Some(DueCommand::Done {
            name,
            comment,
            series: true,
        }) => {
            let runtime = elroy_runtime::Runtime::open(config).map_err(|e| e.to_string())?;
            finish(runtime.complete_due_series(name, comment.as_deref()))
        }
        Some(DueCommand::Done { name, comment, .. }) => {
            let runtime = elroy_runtime::Runtime::open(config).map_err(|e| e.to_string())?;
            let mut arguments = serde_json::Map::new();
            arguments.insert("name".into(), name.as_str().into());
            if let Some(comment) = comment {
                arguments.insert("closing_comment".into(), comment.as_str().into());
            }
            let raw = Value::Object(arguments).to_string();
            finish(crate::block_on(
                runtime.call_tool("complete_due_item", Some(&raw)),
            )?)
        }
    }
}

/// A change's result: its text on stdout (exit 0), or on stderr (exit 1).
fn finish(result: elroy_core::ToolResult) -> Result<ExitCode, String> {
    if result.is_error {
        crate::output::eprintln(&result.content);
        return Ok(ExitCode::FAILURE);
    }
    crate::output::println(&result.content)?;
    Ok(ExitCode::SUCCESS)
}

/// `in 2 h`, `overdue 35 min`, `now`: the distance from `now` to `trigger`, whole units cut
/// down (minutes under an hour, hours and minutes under ten hours, hours under two days, then
/// days).
pub(crate) fn relative(trigger: Timestamp, now: Timestamp) -> String {
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

fn list(config: Config, json: bool) -> Result<ExitCode, String> {
    let style = Style::new(&config);
    let (runtime, agenda) = open_agenda(config)?;
    let now = runtime.time.now();
    let tz = runtime.time.tz.clone();
    let due: Vec<DueItem> = agenda.active_due_items().map_err(|e| e.to_string())?;
    let mut timed: Vec<(Timestamp, &DueItem)> = due
        .iter()
        .filter_map(|i| i.trigger_datetime.map(|t| (t, i)))
        .collect();
    timed.sort_by(|(ta, a), (tb, b)| (ta, &a.name).cmp(&(tb, &b.name)));
    // A trigger time that cannot be read never fires: say which (as `elroy doctor` does).
    for item in due
        .iter()
        .filter(|i| i.trigger_datetime.is_none() && i.trigger_raw.is_some())
    {
        crate::output::eprintln(&format!(
            "warning: agenda/{}.md: trigger_datetime {:?} is not a time elroy can read \
             (YYYY-MM-DD HH:MM:SS+00:00); this due item never fires",
            item.stem,
            one_line(item.trigger_raw.as_deref().unwrap_or_default())
        ));
    }
    let mut contextual: Vec<&DueItem> = due
        .iter()
        .filter(|i| i.trigger_datetime.is_none())
        .collect();
    contextual.sort_by(|a, b| a.name.cmp(&b.name));
    if json {
        let value = json!({
            "timed": timed.iter().map(|(t, i)| json!({
                "name": i.name,
                "trigger_datetime": t.to_string(),
                "local": format_local_with_offset(*t, &tz),
                "seconds_until": t.as_second() - now.as_second(),
                "relative": relative(*t, now),
                "repeats": i.repeats(),
                "recurrence": i.recurrence,
                "trigger_context": i.trigger_context,
                "text": i.text,
            })).collect::<Vec<_>>(),
            "contextual": contextual.iter().map(|i| json!({
                "name": i.name,
                "trigger_context": i.trigger_context,
                // A trigger_datetime that does not parse, as written (the file is kept).
                "trigger_raw": i.trigger_raw,
                "text": i.text,
            })).collect::<Vec<_>>(),
        });
        crate::output::println(&serde_json::to_string_pretty(&value).unwrap_or_default())?;
        return Ok(ExitCode::SUCCESS);
    }
    if timed.is_empty() && contextual.is_empty() {
        crate::output::println("No due items.")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    if !timed.is_empty() {
        let today = now.to_zoned_datetime(tz.clone()).date();
        let repeating = timed.iter().any(|(_, i)| i.recurrence.is_some());
        let mut table = if repeating {
            Table::new(&["WHEN", "DUE", "ITEM", "REPEATS", "TEXT"])
        } else {
            Table::new(&["WHEN", "DUE", "ITEM", "TEXT"])
        };
        for (t, item) in &timed {
            let local = t.to_zoned_datetime(tz.clone());
            let when = if local.date() == today {
                local.strftime("today %H:%M").to_string()
            } else {
                local.strftime("%a %Y-%m-%d %H:%M").to_string()
            };
            let tone = if *t <= now {
                Tone::Warning
            } else {
                Tone::Accent
            };
            let mut row = vec![
                Cell::plain(when),
                Cell::toned(relative(*t, now), tone),
                Cell::plain(one_line(&item.name)),
            ];
            if repeating {
                row.push(Cell::plain(item.repeats().unwrap_or_default()));
            }
            row.push(Cell::plain(one_line(&item.text)));
            table.row(row);
        }
        out.push_str(&table.render(&style));
    }
    if !contextual.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        let mut table = Table::new(&["CONTEXT", "ITEM", "TEXT"]);
        for item in &contextual {
            let when = item
                .trigger_context
                .clone()
                .or_else(|| item.trigger_raw.clone())
                .unwrap_or_default();
            table.row(vec![
                Cell::plain(one_line(&when)),
                Cell::plain(one_line(&item.name)),
                Cell::plain(one_line(&item.text)),
            ]);
        }
        out.push_str(&table.render(&style));
    }
    crate::output::print(&out)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
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
}
