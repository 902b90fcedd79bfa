//! `elroy due [--json]`, `elroy due snooze NAME WHEN`, `elroy due done NAME`: the due items for a
//! person, drawn from elroy-commands' due list (`views::due_list`, the list `/due` and the
//! interface's sidebar draw too): timed items first in time order with their time as the tools
//! confirm it and a relative time (`in 2 h`, `overdue 35 min`), then contextual items. Snoozing and completing go through the same store code as the tools
//! and are each one versioned-home commit (`elroy history`, `elroy undo`).

use std::process::ExitCode;

use elroy_commands::views;
use elroy_config::Config;

use super::agenda::open_agenda;
use crate::table::{Cell, Style, Table, Tone};

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
            crate::print_tool_result(&runtime.snooze_due_item(name, &when.join(" ")))
        }
        Some(DueCommand::Done {
            name,
            comment,
            series: true,
        }) => {
            let runtime = elroy_runtime::Runtime::open(config).map_err(|e| e.to_string())?;
            crate::print_tool_result(&runtime.complete_due_series(name, comment.as_deref()))
        }
        Some(DueCommand::Done { name, comment, .. }) => {
            let runtime = elroy_runtime::Runtime::open(config).map_err(|e| e.to_string())?;
            crate::print_tool_result(&crate::block_on(
                runtime.complete_due_item(name, comment.as_deref()),
            )?)
        }
    }
}

fn list(config: Config, json: bool) -> Result<ExitCode, String> {
    let style = Style::new(&config);
    let (runtime, agenda) = open_agenda(config)?;
    let now = runtime.time.now();
    let tz = runtime.time.tz.clone();
    let list = views::due_list(&agenda, &runtime.time).map_err(|e| e.to_string())?;
    // A trigger time that cannot be read never fires: say which (as `elroy doctor` does).
    for bad in &list.unreadable {
        crate::output::eprintln(&format!(
            "warning: agenda/{}.md: trigger_datetime {:?} is not a time elroy can read \
             (YYYY-MM-DD HH:MM:SS+00:00); this due item never fires",
            bad.stem, bad.raw
        ));
    }
    if json {
        let value = list.to_json(now, &tz);
        crate::output::println(&serde_json::to_string_pretty(&value).unwrap_or_default())?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        crate::output::println("No due items.")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    if !list.timed.is_empty() {
        let repeating = list.timed.iter().any(|t| t.item.recurrence.is_some());
        let mut table = if repeating {
            Table::new(&["WHEN", "DUE", "ITEM", "REPEATS", "TEXT"])
        } else {
            Table::new(&["WHEN", "DUE", "ITEM", "TEXT"])
        };
        for timed in &list.timed {
            let tone = if timed.overdue {
                Tone::Warning
            } else {
                Tone::Accent
            };
            let mut row = vec![
                Cell::plain(&timed.when),
                Cell::toned(&timed.relative, tone),
                Cell::plain(&timed.item.name),
            ];
            if repeating {
                row.push(Cell::plain(timed.repeats.clone().unwrap_or_default()));
            }
            row.push(Cell::plain(&timed.summary));
            table.row(row);
        }
        out.push_str(&table.render(&style));
    }
    if !list.contextual.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        let mut table = Table::new(&["CONTEXT", "ITEM", "TEXT"]);
        for item in &list.contextual {
            table.row(vec![
                Cell::plain(&item.context),
                Cell::plain(&item.item.name),
                Cell::plain(&item.summary),
            ]);
        }
        out.push_str(&table.render(&style));
    }
    crate::output::print(&out)?;
    Ok(ExitCode::SUCCESS)
}
