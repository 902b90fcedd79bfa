//! The agenda-item operations (`docs/tools.md#agenda`).

use elroy_markdown::{Mapping, Value};
use jiff::civil::Date;
use jiff::{Timestamp, ZonedDateTime};

use super::matching::{active_items, candidate_stems, find_item};
use super::{AgendaStore, DirCheck, ItemRef, ListedItem, UnreadableFile, normalize_trigger};
use crate::db_index::Query;
use crate::item::{Item, checklist_entry, split_updates};
use crate::scan::{Entry, Snapshot};
use crate::time::{format_update_stamp, parse_item_date};
use crate::{AgendaError, Kind};

impl AgendaStore {
    /// `add_agenda_item` (`docs/tools.md#add_agenda_item`): the name is the text's first line in
    /// NFC cut to 60 characters; the file is `agenda/{sanitized name}[-N].md`.
    ///
    /// # Errors
    /// `Task name cannot be empty`, `Task '{name}' already exists`, write failures.
    pub fn add_item(&self, text: &str, date: Date, now: Timestamp) -> Result<ItemRef, AgendaError> {
        let first_line = text.split('\n').next().unwrap_or_default();
        // The name in NFC: the NFD spelling of an existing task is a duplicate.
        let name: String = elroy_markdown::normalize_name(first_line)
            .chars()
            .take(60)
            .collect();
        if name.trim().is_empty() {
            return Err(AgendaError::new("Task name cannot be empty"));
        }
        self.locked(|| {
            let snap = &self.query(Query::Named(&name))?;
            if active_items(snap).any(|i| i.name() == name) {
                return Err(AgendaError::new(format!("Task '{name}' already exists")));
            }
            let mut front = Mapping::new();
            front.insert("completed", false);
            front.insert("date", date.to_string());
            front.insert("name", name.as_str());
            front.insert("status", "created");
            let (stem, entry) = self.create_item(&name, &front, text, now)?;
            Ok(ItemRef {
                id: entry.id,
                stem,
                name: name.clone(),
            })
        })
    }

    /// `complete_agenda_item` (`docs/tools.md#complete_agenda_item`): `completed: true`, `status:
    /// completed`, `closing_comment: null`; the file is kept.
    ///
    /// # Errors
    /// The matching errors of `docs/tool-rules.md#finding-an-agenda-item`, front-matter and write
    /// failures.
    pub fn complete_item(&self, item_name: &str) -> Result<ItemRef, AgendaError> {
        self.locked(|| {
            let stem = self.find_item(item_name)?;
            let item = self.fresh(&stem)?;
            let mut front = item.front_matter().clone();
            front.insert("completed", true);
            front.insert("status", "completed");
            front.insert("closing_comment", Value::Null);
            normalize_trigger(&mut front, &item);
            self.write_front_matter(&item, &front)?;
            Ok(self.item_ref(&item))
        })
    }

    /// `delete_agenda_item` (`docs/tools.md#delete_agenda_item`): removes the file.
    ///
    /// # Errors
    /// The matching errors of `docs/tool-rules.md#finding-an-agenda-item`, front-matter and write
    /// failures.
    pub fn delete_item(&self, item_name: &str) -> Result<ItemRef, AgendaError> {
        self.locked(|| {
            let stem = self.find_item(item_name)?;
            let item = self.fresh(&stem)?;
            let found = self.item_ref(&item);
            self.remove(&stem)?;
            Ok(found)
        })
    }

    /// `add_agenda_checklist_item` (`docs/tools.md#add_agenda_checklist_item`). Returns the item
    /// and the new entry id.
    ///
    /// # Errors
    /// Matching errors, `Invalid due_date format '{due_date}'. Use YYYY-MM-DD.`, front-matter
    /// errors (including strict booleans), write failures.
    pub fn add_checklist_item(
        &self,
        item_name: &str,
        text: &str,
        due_date: Option<&str>,
    ) -> Result<(ItemRef, i64), AgendaError> {
        self.locked(|| {
            let stem = self.find_item(item_name)?;
            let due = match due_date {
                Some(d) => Some(parse_item_date(d).ok_or_else(|| {
                    AgendaError::new(format!("Invalid due_date format '{d}'. Use YYYY-MM-DD."))
                })?),
                None => None,
            };
            let item = self.fresh(&stem)?;
            let mut entries = normalized_checklist(&item)?;
            let id = entries.iter().filter_map(entry_id).max().unwrap_or(0) + 1;
            let mut entry = Mapping::new();
            entry.insert("completed", false);
            if let Some(due) = due {
                entry.insert("due_date", due.to_string());
            }
            entry.insert("id", id);
            entry.insert("text", text);
            entries.push(entry);
            self.save_checklist(&item, entries)?;
            Ok((self.item_ref(&item), id))
        })
    }

    /// `complete_agenda_checklist_item` (`docs/tools.md#complete_agenda_checklist_item`).
    ///
    /// # Errors
    /// Matching errors, `Agenda item '{stem}' has no checklist item {id}.`, write failures.
    pub fn complete_checklist_item(
        &self,
        item_name: &str,
        checklist_item_id: i64,
    ) -> Result<ItemRef, AgendaError> {
        self.edit_checklist(item_name, checklist_item_id, |entry| {
            entry.insert("completed", true);
        })
    }

    /// `edit_agenda_checklist_item` (`docs/tools.md#edit_agenda_checklist_item`).
    ///
    /// # Errors
    /// As [`AgendaStore::complete_checklist_item`].
    pub fn edit_checklist_item(
        &self,
        item_name: &str,
        checklist_item_id: i64,
        new_text: &str,
    ) -> Result<ItemRef, AgendaError> {
        self.edit_checklist(item_name, checklist_item_id, |entry| {
            entry.insert("text", new_text);
        })
    }

    fn edit_checklist(
        &self,
        item_name: &str,
        checklist_item_id: i64,
        change: impl FnOnce(&mut Mapping),
    ) -> Result<ItemRef, AgendaError> {
        self.locked(|| {
            let stem = self.find_item(item_name)?;
            let item = self.fresh(&stem)?;
            let mut entries = normalized_checklist(&item)?;
            let Some(entry) = entries
                .iter_mut()
                .find(|e| entry_id(e) == Some(checklist_item_id))
            else {
                return Err(AgendaError::new(format!(
                    "Agenda item '{stem}' has no checklist item {checklist_item_id}."
                )));
            };
            change(entry);
            self.save_checklist(&item, entries)?;
            Ok(self.item_ref(&item))
        })
    }

    fn save_checklist(&self, item: &Item, entries: Vec<Mapping>) -> Result<(), AgendaError> {
        let mut front = item.front_matter().clone();
        if entries.is_empty() {
            front.remove("checklist");
        } else {
            front.insert(
                "checklist",
                Value::List(entries.into_iter().map(Value::Map).collect()),
            );
        }
        normalize_trigger(&mut front, item);
        self.write_front_matter(item, &front)
    }

    /// `add_agenda_item_update` (`docs/tools.md#add_agenda_item_update`): appends `- **{ts}**:
    /// {note}` under `## Updates`; the front matter is left byte for byte as it was (D5). Returns
    /// the item and the stamp (`YYYY-MM-DD HH:MM`, local).
    ///
    /// # Errors
    /// Matching errors, front-matter and write failures.
    pub fn add_update(
        &self,
        item_name: &str,
        note: &str,
        now: &ZonedDateTime,
    ) -> Result<(ItemRef, String), AgendaError> {
        self.locked(|| {
            let stem = self.find_item(item_name)?;
            let item = self.fresh(&stem)?;
            let (main, updates) = split_updates(item.text());
            let stamp = format_update_stamp(now);
            let mut body = format!("{main}\n\n## Updates\n\n");
            if let Some(updates) = updates {
                body.push_str(updates);
                body.push('\n');
            }
            body.push_str(&format!("- **{stamp}**: {note}"));
            self.write_body(&item, body.trim())?;
            Ok((self.item_ref(&item), stamp))
        })
    }

    /// Finds an agenda item by `item_name` (`docs/tool-rules.md#finding-an-agenda-item`, D6) inside
    /// the lock: the names of the live rows pick the candidates, whose files are then checked and
    /// read when changed ([`crate::DbIndex`]), and the match is made again on what they say. When
    /// that finds no single item, the match is made once more on every row, each file checked (a
    /// name edited in place by hand is then found).
    fn find_item(&self, item_name: &str) -> Result<String, AgendaError> {
        if let Some(stems) = candidate_stems(&self.index.name_candidates()?, item_name)
            && let Ok(stem) = find_item(&self.query(Query::Stems(&stems))?, item_name)
        {
            return Ok(stem);
        }
        find_item(&self.query(Query::All)?, item_name)
    }

    /// `list_agenda_items` (`docs/tools.md#list_agenda_items`): active plain items dated `date`, by
    /// file name. Files with invalid front matter are skipped.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn list_items(&self, date: Date) -> Result<Vec<ListedItem>, AgendaError> {
        self.locked(|| Ok(listed(&self.query(Query::Dates(date, date))?, date)))
    }

    /// [`AgendaStore::list_items`] and the files known not to parse, from one query (what
    /// `list_agenda_items` shows; [`AgendaStore::broken_files`] checks every file).
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn listing(
        &self,
        date: Date,
    ) -> Result<(Vec<ListedItem>, Vec<UnreadableFile>), AgendaError> {
        self.locked(|| {
            let snap = self.query(Query::Dates(date, date))?;
            Ok((listed(&snap, date), broken(&snap)))
        })
    }

    /// Files whose front matter could not be read: `(display path, message)`, by file name.
    /// The full check of `elroy doctor`: the directory is listed and every file stat'ed (only
    /// files that changed since they were last read are read), so it also brings every row of
    /// the index up to date, edits in place included.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn broken_files(&self) -> Result<Vec<(String, String)>, AgendaError> {
        self.locked_with(DirCheck::Full, || Ok(broken(&self.query(Query::All)?)))
    }
}

fn listed(snap: &Snapshot, date: Date) -> Vec<ListedItem> {
    snap.entries
        .iter()
        .filter_map(|e| e.item())
        .filter(|i| {
            !i.completed
                && i.status != crate::Status::Deleted
                && i.kind() == Kind::Agenda
                && i.date == Some(date)
        })
        .map(|i| ListedItem {
            stem: i.stem.clone(),
            text: i.main_text().to_owned(),
            checklist_completed: i.checklist_completed,
            checklist_total: i.checklist_total,
        })
        .collect()
}

fn broken(snap: &Snapshot) -> Vec<(String, String)> {
    snap.entries
        .iter()
        .filter_map(|e| match e.as_ref() {
            Entry::Broken { file, message, .. } => Some((file.clone(), message.clone())),
            Entry::Item(_) => None,
        })
        .collect()
}

fn entry_id(entry: &Mapping) -> Option<i64> {
    match entry.get("id") {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// The checklist rewritten by the rules of `docs/formats.md#checklist-entries`: entries without
/// `id` or `text` dropped, `id` an integer, `text` a string, `completed` a strict boolean,
/// `due_date` only when non-empty, other keys kept (D5).
fn normalized_checklist(item: &Item) -> Result<Vec<Mapping>, AgendaError> {
    let Some(Value::List(entries)) = item.front_matter().get("checklist") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries {
        let Value::Map(map) = entry else { continue };
        let Some(parsed) = checklist_entry(map, &item.file)? else {
            continue;
        };
        let mut normalized = map.clone();
        normalized.insert("completed", parsed.completed);
        normalized.insert("id", parsed.id);
        normalized.insert("text", parsed.text);
        match parsed.due_date {
            Some(due) => normalized.insert("due_date", due),
            None => {
                normalized.remove("due_date");
            }
        }
        out.push(normalized);
    }
    Ok(out)
}
