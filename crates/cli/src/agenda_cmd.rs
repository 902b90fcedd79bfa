//! `elroy agenda [DATE | today | tomorrow | yesterday | week] [--json]`: the plain agenda items of
//! a day or of the seven days from today (elroy-commands' `views::agenda_days`, which `/agenda`
//! and the interface's sidebar draw too), with checklist progress and the latest update; and the small
//! table printer `elroy agenda` and `elroy due` share (colours from the configuration on a
//! terminal, `NO_COLOR` honoured, plain text otherwise).

use std::process::ExitCode;

use elroy_agenda::{AgendaStore, split_updates};
use elroy_commands::views::{self, one_line};
use elroy_config::Config;
use elroy_runtime::Runtime;
use serde_json::{Value, json};

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
    let runtime = Runtime::open(config).map_err(|e| e.to_string())?;
    for warning in &runtime.warnings {
        crate::output::eprintln(&format!("warning: {warning}"));
    }
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
        let list: Vec<Value> = listing.entries.iter().map(item_json).collect();
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

fn item_json(entry: &views::AgendaEntry) -> Value {
    let item = &entry.item;
    let checklist = item.checklist();
    json!({
        "name": item.name(),
        "file": item.file,
        "date": entry.date.to_string(),
        "text": split_updates(item.text()).0.trim(),
        "checklist": checklist.iter().map(|c| json!({
            "id": c.id,
            "text": c.text,
            "completed": c.completed,
            "due_date": c.due_date,
        })).collect::<Vec<_>>(),
        "checklist_completed": checklist.iter().filter(|c| c.completed).count(),
        "checklist_total": checklist.len(),
        "latest_update": entry.latest_update.as_ref().map(|u| json!({"at": u.at, "note": u.note})),
    })
}

/// Terminal styling: the configuration's colours on a terminal without `NO_COLOR`, else none.
pub(crate) struct Style {
    enabled: bool,
    header: String,
    warning: String,
    accent: String,
}

use crate::chat::{RESET, color};

impl Style {
    pub(crate) fn new(config: &Config) -> Self {
        use std::io::IsTerminal;
        let enabled = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let keys = &config.settings;
        Style {
            enabled,
            header: color(&keys.system_message_color),
            warning: color(&keys.warning_color),
            accent: color(&keys.assistant_color),
        }
    }

    fn paint(&self, text: &str, escape: &str) -> String {
        if self.enabled && !escape.is_empty() && !text.is_empty() {
            format!("{escape}{text}{RESET}")
        } else {
            text.to_owned()
        }
    }
}

/// How a cell is painted.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tone {
    Plain,
    Warning,
    Accent,
}

/// One table cell.
pub(crate) struct Cell {
    text: String,
    tone: Tone,
}

impl Cell {
    pub(crate) fn plain(text: impl Into<String>) -> Self {
        Cell::toned(text, Tone::Plain)
    }

    /// A cell of `text` on one line: control characters (a model or a hand edit can put escape
    /// sequences, bells or line breaks into a name or a text) become spaces, so a table row
    /// stays one row and nothing reaches the terminal as a command.
    pub(crate) fn toned(text: impl Into<String>, tone: Tone) -> Self {
        Cell {
            text: one_line(&text.into()),
            tone,
        }
    }
}

/// A left-aligned table with a header; columns as wide as their widest cell (in characters), two
/// spaces apart, the last one not padded.
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    pub(crate) fn render(&self, style: &Style) -> String {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.text.chars().count());
            }
        }
        let line = |cells: Vec<(String, &str)>| {
            let mut out = String::new();
            for (i, (text, escape)) in cells.iter().enumerate() {
                let pad = if i + 1 == cells.len() {
                    0
                } else {
                    widths[i].saturating_sub(text.chars().count()) + 2
                };
                out.push_str(&style.paint(text, escape));
                out.push_str(&" ".repeat(pad));
            }
            out.trim_end().to_owned() + "\n"
        };
        let mut out = line(
            self.header
                .iter()
                .map(|h| (h.clone(), style.header.as_str()))
                .collect(),
        );
        for row in &self.rows {
            out.push_str(&line(
                row.iter()
                    .map(|c| {
                        let escape = match c.tone {
                            Tone::Plain => "",
                            Tone::Warning => style.warning.as_str(),
                            Tone::Accent => style.accent.as_str(),
                        };
                        (c.text.clone(), escape)
                    })
                    .collect(),
            ));
        }
        out
    }
}
