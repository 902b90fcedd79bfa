//! The agenda of some days: every front end's list of plain agenda items.

use elroy_agenda::{AgendaError, AgendaStore, Item, Kind, split_updates};
use jiff::civil::Date;

use super::time::Days;

/// The plain agenda items of some days, by day then name, and the items on no day because their
/// date cannot be read.
#[derive(Debug, Clone)]
pub struct AgendaDays {
    /// The days asked for.
    pub days: Days,
    /// The items, by date then name.
    pub entries: Vec<AgendaEntry>,
    /// Items whose `date` cannot be read, with the date as written: they are on no day.
    pub unreadable: Vec<(Item, String)>,
}

/// One agenda item on its day.
#[derive(Debug, Clone)]
pub struct AgendaEntry {
    /// Its day.
    pub date: Date,
    /// The item as stored.
    pub item: Item,
    /// Checklist progress `(completed, total)`; `None` without a checklist.
    pub progress: Option<(usize, usize)>,
    /// The latest entry of its `## Updates`.
    pub latest_update: Option<LatestUpdate>,
}

/// The latest entry of an item's `## Updates`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestUpdate {
    /// Its stamp (`2026-12-01 08:00`); `None` when the line is not `- **STAMP**: note`.
    pub at: Option<String>,
    /// The note.
    pub note: String,
}

impl LatestUpdate {
    /// `2026-12-01 08:00 ferns done`, or the note alone without a stamp.
    pub fn line(&self) -> String {
        match &self.at {
            Some(at) => format!("{at} {}", self.note),
            None => self.note.clone(),
        }
    }
}

impl AgendaEntry {
    /// `elroy agenda --json`'s object for this entry: name, file, date, text (without its
    /// updates), checklist (id, text, completed, due_date), checklist_completed,
    /// checklist_total, latest_update (at, note).
    pub fn to_json(&self) -> serde_json::Value {
        let item = &self.item;
        let checklist = item.checklist();
        serde_json::json!({
            "name": item.name(),
            "file": item.file,
            "date": self.date.to_string(),
            "text": split_updates(item.text()).0.trim(),
            "checklist": checklist.iter().map(|c| serde_json::json!({
                "id": c.id,
                "text": c.text,
                "completed": c.completed,
                "due_date": c.due_date,
            })).collect::<Vec<_>>(),
            "checklist_completed": checklist.iter().filter(|c| c.completed).count(),
            "checklist_total": checklist.len(),
            "latest_update": self.latest_update.as_ref().map(|u| serde_json::json!({"at": u.at, "note": u.note})),
        })
    }

    fn new(date: Date, item: Item) -> Self {
        let checklist = item.checklist();
        let progress = (!checklist.is_empty()).then(|| {
            (
                checklist.iter().filter(|c| c.completed).count(),
                checklist.len(),
            )
        });
        let latest_update = latest_update(&item);
        AgendaEntry {
            date,
            item,
            progress,
            latest_update,
        }
    }

    /// The item's title: the first line of its text when its name was made from that line
    /// (`Plan_the_trip` from `Plan the trip`), else its name. As written (a tab stays a tab):
    /// each front end makes it safe for its target ([`super::one_line`] for a table).
    pub fn title(&self) -> String {
        let name = self.item.name();
        let first = self.first_line();
        let stem_of_first = first.replace(' ', "_");
        if !first.is_empty() && (first == name || stem_of_first.eq_ignore_ascii_case(name)) {
            first
        } else {
            name.to_owned()
        }
    }

    /// The first line of the text when it says more than the title (else `None`).
    pub fn note(&self) -> Option<String> {
        let first = self.first_line();
        (!first.is_empty() && first != self.title()).then_some(first)
    }

    fn first_line(&self) -> String {
        let first = self.item.main_text().lines().next().unwrap_or_default();
        first.trim().to_owned()
    }
}

/// The latest entry of an item's `## Updates`.
fn latest_update(item: &Item) -> Option<LatestUpdate> {
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
        return Some(LatestUpdate {
            at: Some(stamp.to_owned()),
            note: note.trim().to_owned(),
        });
    }
    Some(LatestUpdate {
        at: None,
        note: entry.to_owned(),
    })
}

/// The active plain agenda items of `days` in `store`.
///
/// # Errors
/// The store's, when its index or files cannot be read.
pub fn agenda_days(store: &AgendaStore, days: Days) -> Result<AgendaDays, AgendaError> {
    let mut entries: Vec<AgendaEntry> = store
        .active_items_with_ids(Some(Kind::Agenda), Some((days.first, days.last)))?
        .into_iter()
        .filter_map(|(_, item)| {
            let date = item.date.filter(|d| days.contains(*d))?;
            Some(AgendaEntry::new(date, item))
        })
        .collect();
    entries.sort_by(|a, b| (a.date, a.item.name()).cmp(&(b.date, b.item.name())));
    Ok(AgendaDays {
        days,
        entries,
        unreadable: store.items_with_unreadable_dates()?,
    })
}
