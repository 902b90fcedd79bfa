//! `elroy agenda [DATE | today | tomorrow | yesterday | week] [--json]`: the plain agenda items of
//! a day or of the seven days from today (elroy-commands' `views::agenda_days`, which `/agenda`
//! and the interface's sidebar draw too), with checklist progress and the latest update, drawn
//! with the command line's table printer (`crate::table`).

use std::process::ExitCode;

use elroy_agenda::AgendaStore;
use elroy_commands::views::{self, one_line};
use elroy_config::Config;
use elroy_runtime::Runtime;
use serde_json::Value;

use crate::table::{Cell, Style, Table};

/// `elroy agenda …`
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  elroy agenda\n  elroy agenda tomorrow\n  elroy agenda week\n  \
                        elroy agenda 2026-12-24 --json"
)]
pub struct AgendaArgs {
    /// Which days: `today` (default), `tomorrow`, `yesterday`, `week` (today and the six days
    /// after), or a date (YYYY-MM-DD)
    #[arg(value_name = "DATE | today | tomorrow | yesterday | week")]
    pub when: Option<String>,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

/// Opens the runtime (warnings to stderr) and the agenda store.
pub(crate) fn open_agenda(
    config: Config,
) -> Result<(Runtime, std::sync::Arc<AgendaStore>), String> {
    let runtime = Runtime::open_for_command(config).map_err(|e| e.to_string())?;
    let agenda = runtime
        .services
        .require::<AgendaStore>()
        .map_err(|e| e.message().to_owned())?;
    Ok((runtime, agenda))
}

pub(crate) fn run(config: Config, args: &AgendaArgs) -> Result<ExitCode, String> {
    let style = Style::new(&config);
    let (runtime, agenda) = open_agenda(config)?;
    let days = views::Days::parse(args.when.as_deref(), runtime.time.today())
        .map_err(|e| e.to_string())?;
    let listing = views::agenda_days(&agenda, days).map_err(|e| e.to_string())?;
    // Items whose date cannot be read are on no day: say which, rather than leave them out
    // silently (the listing itself stays as Elroy's).
    for (item, raw) in &listing.unreadable {
        crate::output::eprintln(&format!(
            "warning: {}: date {:?} is not a date elroy can read (YYYY-MM-DD); \
             this item is listed on no day",
            item.file,
            one_line(raw)
        ));
    }
    if args.json {
        let list: Vec<Value> = listing
            .entries
            .iter()
            .map(views::AgendaEntry::to_json)
            .collect();
        crate::output::println(
            &serde_json::to_string_pretty(&Value::Array(list)).unwrap_or_default(),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if listing.entries.is_empty() {
        crate::output::println(&format!("No agenda items for {}.", days.describe()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["DATE", "ITEM", "CHECKLIST", "LATEST UPDATE"]);
    for entry in &listing.entries {
        let progress = entry
            .progress
            .map(|(done, total)| format!("{done}/{total}"))
            .unwrap_or_default();
        table.row(vec![
            Cell::plain(entry.date.to_string()),
            Cell::plain(entry.title()),
            Cell::plain(progress),
            Cell::plain(
                entry
                    .latest_update
                    .as_ref()
                    .map(views::LatestUpdate::line)
                    .unwrap_or_default(),
            ),
        ]);
    }
    crate::output::print(&table.render(&style))?;
    Ok(ExitCode::SUCCESS)
}
