//! `elroy agenda [DATE | today | tomorrow | week] [--json]`: the plain agenda items of a day or
//! of the seven days from today, with checklist progress and the latest update; and the small
//! table printer `elroy agenda` and `elroy due` share (colours from the configuration on a
//! terminal, `NO_COLOR` honoured, plain text otherwise).

use std::process::ExitCode;

use elroy_agenda::{AgendaStore, Item, Kind, parse_item_date, split_updates};
use elroy_config::Config;
use elroy_runtime::Runtime;
use jiff::civil::Date;
use serde_json::{Value, json};

/// `elroy agenda …`
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  elroy agenda\n  elroy agenda tomorrow\n  elroy agenda week\n  \
                        elroy agenda 2026-12-24 --json"
)]
pub struct AgendaArgs {
    /// Which days: `today` (default), `tomorrow`, `week` (today and the six days after), or a
    /// date (YYYY-MM-DD)
    #[arg(value_name = "DATE | today | tomorrow | week")]
    pub when: Option<String>,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

/// The days `when` names (first and last, inclusive), relative to `today`.
fn days(when: Option<&str>, today: Date) -> Result<(Date, Date), String> {
    let word = when.map(|w| w.trim().to_lowercase());
    let one = |d: Date| Ok((d, d));
    match word.as_deref() {
        None | Some("today") => one(today),
        Some("tomorrow") => one(today.tomorrow().map_err(|e| e.to_string())?),
        Some("week") => Ok((
            today,
            today
                .checked_add(jiff::Span::new().days(6))
                .map_err(|e| e.to_string())?,
        )),
        Some(other) => parse_item_date(other).map(|d| (d, d)).ok_or_else(|| {
            format!("not a day: '{other}' (use today, tomorrow, week or a date YYYY-MM-DD)")
        }),
    }
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

/// The latest entry of an item's `## Updates`: `(stamp, note)`; the stamp is `None` when the
/// line is not `- **YYYY-MM-DD HH:MM**: note`.
fn latest_update(item: &Item) -> Option<(Option<String>, String)> {
    let (_, updates) = split_updates(item.text());
    let last = updates?
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())?
        .trim();
    let entry = last.strip_prefix("- ").unwrap_or(last);
    if let Some(rest) = entry.strip_prefix("**")
        && let Some((stamp, note)) = rest.split_once("**:")
    {
        return Some((Some(stamp.to_owned()), note.trim().to_owned()));
    }
    Some((None, entry.to_owned()))
}

pub(crate) fn run(config: Config, args: &AgendaArgs) -> Result<ExitCode, String> {
    let style = Style::new(&config);
    let (runtime, agenda) = open_agenda(config)?;
    let today = runtime.time.today();
    let (first, last) = days(args.when.as_deref(), today)?;
    let mut items: Vec<(Date, Item)> = agenda
        .active_items_with_ids(Some(Kind::Agenda), Some((first, last)))
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter_map(|(_, i)| i.date.filter(|d| *d >= first && *d <= last).map(|d| (d, i)))
        .collect();
    items.sort_by(|(da, a), (db, b)| (da, a.name()).cmp(&(db, b.name())));
    // Items whose date cannot be read are on no day: say which, rather than leave them out
    // silently (the listing itself stays as Elroy's).
    for (item, raw) in agenda
        .items_with_unreadable_dates()
        .map_err(|e| e.to_string())?
    {
        crate::output::eprintln(&format!(
            "warning: {}: date {:?} is not a date elroy can read (YYYY-MM-DD); \
             this item is listed on no day",
            item.file,
            one_line(&raw)
        ));
    }
    if args.json {
        let list: Vec<Value> = items
            .iter()
            .map(|(date, item)| item_json(*date, item))
            .collect();
        crate::output::println(
            &serde_json::to_string_pretty(&Value::Array(list)).unwrap_or_default(),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let range = if first == last {
        first.to_string()
    } else {
        format!("{first} to {last}")
    };
    if items.is_empty() {
        crate::output::println(&format!("No agenda items for {range}."))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["DATE", "ITEM", "CHECKLIST", "LATEST UPDATE"]);
    for (date, item) in &items {
        let checklist = item.checklist();
        let progress = if checklist.is_empty() {
            String::new()
        } else {
            format!(
                "{}/{}",
                checklist.iter().filter(|c| c.completed).count(),
                checklist.len()
            )
        };
        let update = latest_update(item).map_or_else(String::new, |(stamp, note)| match stamp {
            Some(stamp) => format!("{stamp} {note}"),
            None => note,
        });
        table.row(vec![
            Cell::plain(date.to_string()),
            Cell::plain(one_line(item.name())),
            Cell::plain(progress),
            Cell::plain(one_line(&update)),
        ]);
    }
    crate::output::print(&table.render(&style))?;
    Ok(ExitCode::SUCCESS)
}

fn item_json(date: Date, item: &Item) -> Value {
    let checklist = item.checklist();
    json!({
        "name": item.name(),
        "file": item.file,
        "date": date.to_string(),
        "text": split_updates(item.text()).0.trim(),
        "checklist": checklist.iter().map(|c| json!({
            "id": c.id,
            "text": c.text,
            "completed": c.completed,
            "due_date": c.due_date,
        })).collect::<Vec<_>>(),
        "checklist_completed": checklist.iter().filter(|c| c.completed).count(),
        "checklist_total": checklist.len(),
        "latest_update": latest_update(item).map(|(at, note)| json!({"at": at, "note": note})),
    })
}

/// Text on one line: runs of whitespace become one space, and every other control character
/// (C0, DEL, C1: ESC, BEL…) a space too, so nothing reaches the terminal as a command.
pub(crate) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn days_of_the_argument() {
        let today = jiff::civil::date(2026, 12, 1);
        assert_eq!(days(None, today).unwrap(), (today, today));
        assert_eq!(
            days(Some("Tomorrow"), today).unwrap().0,
            jiff::civil::date(2026, 12, 2)
        );
        assert_eq!(
            days(Some("week"), today).unwrap(),
            (today, jiff::civil::date(2026, 12, 7))
        );
        assert_eq!(
            days(Some("2026-12-24"), today).unwrap().0,
            jiff::civil::date(2026, 12, 24)
        );
        assert!(
            days(Some("someday"), today)
                .unwrap_err()
                .contains("not a day: 'someday'")
        );
    }
}
