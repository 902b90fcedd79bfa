//! [`AgendaStore`]: every agenda and due-item operation of `tools.md` §1–§2, each one locked
//! read-modify-write on the files (`formats.md` §3.6).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use elroy_markdown::{
    Document, HomeLock, Mapping, Value, remove_file, rename_file, sanitize_filename,
    unique_file_name, write_atomic,
};
use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

use crate::index::{AgendaIndex, LogIndex};
use crate::item::{Item, checklist_entry, split_updates};
use crate::scan::{Entry, ScanCache, Snapshot, load_entry};
use crate::time::{
    format_local_with_offset, format_python_utc, format_stored_trigger, format_update_stamp,
    parse_item_date,
};
use crate::{AgendaError, Kind};

/// The fallback file-name base of agenda and due items (`formats.md` §2.1).
pub const AGENDA_FALLBACK: &str = "agenda_item";

/// An item an operation touched: enough for messages and recall effects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRef {
    /// Stable id (recall `memory_id`).
    pub id: i64,
    /// File name without `.md` (after the operation).
    pub stem: String,
    /// The item's name (D6).
    pub name: String,
}

/// A plain agenda item as `list_agenda_items` shows it (`tools.md` §1.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedItem {
    /// The stem (listed as `name`, as Elroy does).
    pub stem: String,
    /// The main text, stripped.
    pub text: String,
    /// Completed checklist entries.
    pub checklist_completed: usize,
    /// All checklist entries.
    pub checklist_total: usize,
}

/// A due item as `print_due_item`, due-item surfacing and recall see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueItem {
    /// Stable id.
    pub id: i64,
    /// The item's name (D6).
    pub name: String,
    /// The stem.
    pub stem: String,
    /// The time trigger.
    pub trigger_datetime: Option<Timestamp>,
    /// The context trigger.
    pub trigger_context: Option<String>,
    /// The body, stripped.
    pub text: String,
}

impl DueItem {
    /// The `print_due_item` text (`tools.md` §2.6), `{name}` being the name as asked for:
    /// `Due item '{name}':`, `Trigger Time: {local with offset}` (D7), `Context: …`, `Text: …`.
    pub fn print(&self, asked_name: &str, tz: &TimeZone) -> String {
        let mut lines = vec![format!("Due item '{asked_name}':")];
        if let Some(ts) = self.trigger_datetime {
            lines.push(format!(
                "Trigger Time: {}",
                format_local_with_offset(ts, tz)
            ));
        }
        if let Some(context) = &self.trigger_context {
            lines.push(format!("Context: {context}"));
        }
        lines.push(format!("Text: {}", self.text));
        lines.join("\n")
    }

    /// The `⏰ DUE ITEM` block of the due-item injection (`orchestrator.md` §5).
    pub fn due_notice(&self, tz: &TimeZone) -> String {
        let when = self
            .trigger_datetime
            .map(|ts| format_local_with_offset(ts, tz))
            .unwrap_or_default();
        format!(
            "⏰ DUE ITEM: '{}' - {}\n\nThis item was scheduled for {when} and is now due. Please inform the user about it and then use the delete_due_item tool to remove it from active due items.",
            self.name, self.text
        )
    }
}

/// An active item for recall: its id, name, kind and rendering (`formats.md` §8.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallEntry {
    /// Stable id (`memory_id`, `memory_type` `AgendaItem`).
    pub id: i64,
    /// The name.
    pub name: String,
    /// Plain or due.
    pub kind: Kind,
    /// The rendering (`to_fact`).
    pub fact: String,
}

/// Arguments of [`AgendaStore::create_due_item`] (after `trigger_time` was parsed).
#[derive(Debug, Clone)]
pub struct NewDueItem<'a> {
    /// `name`, as given.
    pub name: &'a str,
    /// `text`.
    pub text: &'a str,
    /// The parsed `trigger_time`.
    pub trigger: Option<Timestamp>,
    /// `trigger_context`.
    pub trigger_context: Option<&'a str>,
}

/// The rendering of an item (`formats.md` §8.5): `#{name} (Timed: {local time})\n{text}`,
/// `#{name} (Context: {context})\n{text}` or `#Agenda: {name}\n{text}`.
pub fn to_fact(item: &Item, tz: &TimeZone) -> String {
    let text = item.text();
    match (item.kind(), item.trigger_datetime, &item.trigger_context) {
        (Kind::Due, Some(ts), _) => format!(
            "#{} (Timed: {})\n{text}",
            item.name(),
            format_local_with_offset(ts, tz)
        ),
        (Kind::Due, None, Some(context)) => {
            format!("#{} (Context: {context})\n{text}", item.name())
        }
        (Kind::Due, None, None) => format!(
            "#{} (Timed: {})\n{text}",
            item.name(),
            item.trigger_raw.as_deref().unwrap_or_default()
        ),
        (Kind::Agenda, _, _) => format!("#Agenda: {}\n{text}", item.name()),
    }
}

/// The agenda and due items of one user home: `<user home>/agenda/*.md`.
///
/// Every operation takes the home lock (`$ELROY_HOME/.lock`), scans the directory (parsing only
/// files whose mtime, size or inode changed since the last scan in this process), syncs the id
/// index, re-reads the file it changes from disk and writes atomically. Safe to share between
/// threads and processes.
#[derive(Debug)]
pub struct AgendaStore {
    elroy_home: PathBuf,
    agenda_dir: PathBuf,
    prefix: String,
    index: Box<dyn AgendaIndex>,
    cache: Mutex<ScanCache>,
}

impl AgendaStore {
    /// A store for `user_home` inside `elroy_home`, with ids from `index`. Nothing is read or
    /// created until the first operation.
    pub fn new(elroy_home: &Path, user_home: &Path, index: Box<dyn AgendaIndex>) -> Self {
        let relative = user_home
            .strip_prefix(elroy_home)
            .ok()
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        let prefix = if relative.is_empty() {
            "agenda/".to_owned()
        } else {
            format!("{relative}/agenda/")
        };
        AgendaStore {
            elroy_home: elroy_home.to_path_buf(),
            agenda_dir: user_home.join("agenda"),
            prefix,
            index,
            cache: Mutex::new(ScanCache::default()),
        }
    }

    /// A store whose id index is the log file `$ELROY_HOME/cache/agenda-index/{token}.jsonl`.
    pub fn open(elroy_home: &Path, user_home: &Path, user_token: &str) -> Self {
        let path = elroy_home
            .join("cache")
            .join("agenda-index")
            .join(format!("{user_token}.jsonl"));
        Self::new(elroy_home, user_home, Box::new(LogIndex::open(path)))
    }

    /// The `agenda/` directory.
    pub fn agenda_dir(&self) -> &Path {
        &self.agenda_dir
    }

    fn display(&self, file_name: &str) -> String {
        format!("{}{file_name}", self.prefix)
    }

    /// Runs `f` on a fresh scan, inside the home lock.
    fn locked<T>(
        &self,
        f: impl FnOnce(&Snapshot) -> Result<T, AgendaError>,
    ) -> Result<T, AgendaError> {
        let _lock = HomeLock::acquire(&self.elroy_home)?;
        let snapshot = {
            let mut cache = self
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            cache.scan(&self.agenda_dir, &self.prefix)?
        };
        if snapshot.names_changed {
            let live: Vec<(&str, Timestamp)> = snapshot
                .entries
                .iter()
                .map(|(e, mtime)| (e.stem(), *mtime))
                .collect();
            self.index.sync(&live).map_err(AgendaError::new)?;
        } else {
            self.index.refresh().map_err(AgendaError::new)?;
        }
        f(&snapshot)
    }

    fn id_of(&self, stem: &str) -> i64 {
        self.index.get(stem).map_or(0, |e| e.id)
    }

    fn item_ref(&self, item: &Item) -> ItemRef {
        ItemRef {
            id: self.id_of(&item.stem),
            stem: item.stem.clone(),
            name: item.name().to_owned(),
        }
    }

    /// Re-reads an item's file from disk (inside the lock, never from the cache).
    fn fresh(&self, stem: &str) -> Result<Item, AgendaError> {
        let file_name = format!("{stem}.md");
        match load_entry(
            &self.agenda_dir.join(&file_name),
            stem,
            &self.display(&file_name),
        ) {
            Entry::Item(item) => Ok(*item),
            Entry::Broken { message, .. } => Err(AgendaError::new(message)),
        }
    }

    fn write(&self, stem: &str, content: &str) -> Result<(), AgendaError> {
        let file_name = format!("{stem}.md");
        write_atomic(
            &self.agenda_dir.join(&file_name),
            content.as_bytes(),
            &self.display(&file_name),
        )?;
        Ok(())
    }

    /// Rewrites an item's front matter; the raw body stays byte for byte (R1).
    fn write_front_matter(&self, item: &Item, front: &Mapping) -> Result<(), AgendaError> {
        self.write(&item.stem, &with_front_matter(item, front))
    }

    fn write_body(&self, item: &Item, body: &str) -> Result<(), AgendaError> {
        let body = body.replace("\r\n", "\n");
        self.write(
            &item.stem,
            &item.document.render_keeping_front_matter(&body, true),
        )
    }

    /// The unique file name for `base` (`formats.md` §2.3): the scan's view of the directory
    /// (names compared ignoring case), `except` not counting as taken, checked once more against
    /// the file system for the exact name. Call inside the lock, after the scan.
    fn unique_name(&self, base: &str, except: Option<&str>) -> String {
        let cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let except = except.map(str::to_lowercase);
        unique_file_name(base, |candidate| {
            if except.as_deref() == Some(candidate.to_lowercase().as_str()) {
                return false;
            }
            cache.is_taken(candidate)
                || std::fs::symlink_metadata(self.agenda_dir.join(candidate)).is_ok()
        })
    }

    /// Places a new file for `name` and returns its stem (under the lock).
    fn create_file(&self, name: &str, front: &Mapping, body: &str) -> Result<String, AgendaError> {
        let base = sanitize_filename(name, AGENDA_FALLBACK);
        let file_name = self.unique_name(&base, None);
        let path = self.agenda_dir.join(&file_name);
        let stem = file_name
            .strip_suffix(".md")
            .unwrap_or(&file_name)
            .to_owned();
        write_atomic(
            &path,
            Document::render_with_body(front, body, true).as_bytes(),
            &self.display(&file_name),
        )?;
        Ok(stem)
    }

    // ---- agenda items (tools.md §1) ----

    /// `add_agenda_item` (`tools.md` §1.1): the name is the text's first line cut to 60
    /// characters; the file is `agenda/{sanitized name}[-N].md`.
    ///
    /// # Errors
    /// `Task name cannot be empty`, `Task '{name}' already exists`, write failures.
    pub fn add_item(&self, text: &str, date: Date, now: Timestamp) -> Result<ItemRef, AgendaError> {
        let first_line = text.split('\n').next().unwrap_or_default();
        let name: String = first_line.chars().take(60).collect();
        if name.trim().is_empty() {
            return Err(AgendaError::new("Task name cannot be empty"));
        }
        self.locked(|snap| {
            if active_items(snap).any(|i| i.name() == name) {
                return Err(AgendaError::new(format!("Task '{name}' already exists")));
            }
            let mut front = Mapping::new();
            front.insert("completed", false);
            front.insert("date", date.to_string());
            front.insert("name", name.as_str());
            front.insert("status", "created");
            let stem = self.create_file(&name, &front, text)?;
            let entry = self.index.created(&stem, now).map_err(AgendaError::new)?;
            Ok(ItemRef {
                id: entry.id,
                stem,
                name: name.clone(),
            })
        })
    }

    /// `complete_agenda_item` (`tools.md` §1.2): `completed: true`, `status: completed`,
    /// `closing_comment: null`; the file is kept.
    ///
    /// # Errors
    /// The matching errors of §1.0, front-matter and write failures.
    pub fn complete_item(&self, item_name: &str) -> Result<ItemRef, AgendaError> {
        self.locked(|snap| {
            let stem = find_item(snap, item_name)?;
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

    /// `delete_agenda_item` (`tools.md` §1.3): removes the file.
    ///
    /// # Errors
    /// The matching errors of §1.0, front-matter and write failures.
    pub fn delete_item(&self, item_name: &str) -> Result<ItemRef, AgendaError> {
        self.locked(|snap| {
            let stem = find_item(snap, item_name)?;
            let item = self.fresh(&stem)?;
            let found = self.item_ref(&item);
            let file_name = format!("{stem}.md");
            remove_file(&self.agenda_dir.join(&file_name), &self.display(&file_name))?;
            self.index.removed(&stem).map_err(AgendaError::new)?;
            Ok(found)
        })
    }

    /// `add_agenda_checklist_item` (`tools.md` §1.4). Returns the item and the new entry id.
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
        self.locked(|snap| {
            let stem = find_item(snap, item_name)?;
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

    /// `complete_agenda_checklist_item` (`tools.md` §1.5).
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

    /// `edit_agenda_checklist_item` (`tools.md` §1.6).
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
        self.locked(|snap| {
            let stem = find_item(snap, item_name)?;
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

    /// `add_agenda_item_update` (`tools.md` §1.7): appends `- **{ts}**: {note}` under
    /// `## Updates`; the front matter is left byte for byte as it was (D5). Returns the item and
    /// the stamp (`YYYY-MM-DD HH:MM`, local).
    ///
    /// # Errors
    /// Matching errors, front-matter and write failures.
    pub fn add_update(
        &self,
        item_name: &str,
        note: &str,
        now: &ZonedDateTime,
    ) -> Result<(ItemRef, String), AgendaError> {
        self.locked(|snap| {
            let stem = find_item(snap, item_name)?;
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

    /// `list_agenda_items` (`tools.md` §1.8): active plain items dated `date`, by file name. Files
    /// with invalid front matter are skipped.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn list_items(&self, date: Date) -> Result<Vec<ListedItem>, AgendaError> {
        self.locked(|snap| {
            Ok(snap
                .entries
                .iter()
                .filter_map(|(e, _)| e.item())
                .filter(|i| {
                    !i.completed
                        && i.status != crate::Status::Deleted
                        && i.kind() == Kind::Agenda
                        && i.date == Some(date)
                })
                .map(|i| {
                    let checklist = i.checklist();
                    ListedItem {
                        stem: i.stem.clone(),
                        text: i.main_text().to_owned(),
                        checklist_completed: checklist.iter().filter(|c| c.completed).count(),
                        checklist_total: checklist.len(),
                    }
                })
                .collect())
        })
    }

    /// Files whose front matter could not be read: `(display path, message)`, by file name.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn broken_files(&self) -> Result<Vec<(String, String)>, AgendaError> {
        self.locked(|snap| {
            Ok(snap
                .entries
                .iter()
                .filter_map(|(e, _)| match e.as_ref() {
                    Entry::Broken { file, message, .. } => Some((file.clone(), message.clone())),
                    Entry::Item(_) => None,
                })
                .collect())
        })
    }

    // ---- due items (tools.md §2) ----

    /// `create_due_item` steps 2–7 (`tools.md` §2.1); the caller parsed `trigger_time` (step 1).
    ///
    /// # Errors
    /// `Due item name cannot be empty`, `Either trigger_time or trigger_context must be provided
    /// for due items`, the past-time message, `{Timed|Contextual} due item '{name}' already
    /// exists`, write failures.
    pub fn create_due_item(
        &self,
        new: &NewDueItem<'_>,
        now: &ZonedDateTime,
    ) -> Result<ItemRef, AgendaError> {
        let name = new.name;
        if name.trim().is_empty() {
            return Err(AgendaError::new("Due item name cannot be empty"));
        }
        if new.trigger.is_none() && new.trigger_context.is_none() {
            return Err(AgendaError::new(
                "Either trigger_time or trigger_context must be provided for due items",
            ));
        }
        if let Some(trigger) = new.trigger
            && trigger < now.timestamp()
        {
            return Err(AgendaError::new(format!(
                "Attempted to create a due item for {}, which is in the past. The current time is {}",
                format_python_utc(trigger),
                format_python_utc(now.timestamp())
            )));
        }
        self.locked(|snap| {
            if active_items(snap).any(|i| i.name() == name) {
                let kind = if new.trigger.is_some() {
                    "Timed"
                } else {
                    "Contextual"
                };
                return Err(AgendaError::new(format!(
                    "{kind} due item '{name}' already exists"
                )));
            }
            let mut front = Mapping::new();
            front.insert("completed", false);
            front.insert("date", now.date().to_string());
            front.insert("name", name);
            front.insert("status", "created");
            if let Some(context) = new.trigger_context {
                front.insert("trigger_context", context);
            }
            if let Some(trigger) = new.trigger {
                front.insert(
                    "trigger_datetime",
                    Value::Timestamp(format_stored_trigger(trigger)),
                );
            }
            let stem = self.create_file(name, &front, new.text)?;
            let entry = self
                .index
                .created(&stem, now.timestamp())
                .map_err(AgendaError::new)?;
            Ok(ItemRef {
                id: entry.id,
                stem,
                name: name.to_owned(),
            })
        })
    }

    fn due_not_found_active(&self, snap: &Snapshot, name: &str) -> AgendaError {
        AgendaError::new(format!(
            "Active due item '{name}' not found. Active due items: {}",
            self.due_names_by_creation(snap).join(", ")
        ))
    }

    fn due_not_found_valid(snap: &Snapshot, name: &str) -> AgendaError {
        let mut names: Vec<&str> = active_due(snap).map(Item::name).collect();
        names.sort_unstable();
        AgendaError::new(format!(
            "Due item '{name}' not found. Valid items: {}",
            names.join(",")
        ))
    }

    fn due_names_by_creation(&self, snap: &Snapshot) -> Vec<String> {
        let mut items: Vec<(Timestamp, &str, &str)> = active_due(snap)
            .map(|i| {
                let created = self
                    .index
                    .get(&i.stem)
                    .map_or(Timestamp::UNIX_EPOCH, |e| e.created_at);
                (created, i.stem.as_str(), i.name())
            })
            .collect();
        items.sort();
        items.into_iter().map(|(_, _, n)| n.to_owned()).collect()
    }

    fn close_due(
        &self,
        name: &str,
        closing_comment: Option<&str>,
        delete: bool,
    ) -> Result<ItemRef, AgendaError> {
        self.locked(|snap| {
            let Some(found) = find_due(snap, name) else {
                return Err(self.due_not_found_active(snap, name));
            };
            let item = self.fresh(&found.stem)?;
            let result = self.item_ref(&item);
            if delete {
                let file_name = format!("{}.md", item.stem);
                remove_file(&self.agenda_dir.join(&file_name), &self.display(&file_name))?;
                self.index.removed(&item.stem).map_err(AgendaError::new)?;
            } else {
                let mut front = item.front_matter().clone();
                front.insert("completed", true);
                front.insert("status", "completed");
                front.insert(
                    "closing_comment",
                    closing_comment.map_or(Value::Null, Value::from),
                );
                normalize_trigger(&mut front, &item);
                self.write_front_matter(&item, &front)?;
            }
            Ok(result)
        })
    }

    /// `complete_due_item` (`tools.md` §2.2): marks it completed with the closing comment; the
    /// file is kept.
    ///
    /// # Errors
    /// `Active due item '{name}' not found. Active due items: {names in creation order}`, write
    /// failures.
    pub fn complete_due_item(
        &self,
        name: &str,
        closing_comment: Option<&str>,
    ) -> Result<ItemRef, AgendaError> {
        self.close_due(name, closing_comment, false)
    }

    /// `delete_due_item` (`tools.md` §2.3): removes the file.
    ///
    /// # Errors
    /// As [`AgendaStore::complete_due_item`].
    pub fn delete_due_item(&self, name: &str) -> Result<ItemRef, AgendaError> {
        self.close_due(name, None, true)
    }

    /// `rename_due_item` (`tools.md` §2.4): moves the file when the sanitized name changes, sets
    /// `name` (D6); the id stays. `user` is how the user is named in the not-found messages (the
    /// numeric user id).
    ///
    /// # Errors
    /// The messages of §2.4 steps 1–4, write failures.
    pub fn rename_due_item(
        &self,
        old_name: &str,
        new_name: &str,
        user: &str,
    ) -> Result<ItemRef, AgendaError> {
        self.locked(|snap| {
            let Some(found) = find_due(snap, old_name) else {
                return Err(AgendaError::new(format!(
                    "Active due item '{old_name}' not found for user {user}. Active items: {}",
                    self.due_names_by_creation(snap).join(", ")
                )));
            };
            if new_name.trim().is_empty() {
                return Err(AgendaError::new("Due item name cannot be empty"));
            }
            if find_due(snap, new_name).is_some() {
                return Err(AgendaError::new(format!(
                    "Active due item '{new_name}' already exists for user {user}"
                )));
            }
            if active_items(snap).any(|i| i.kind() == Kind::Agenda && i.name() == new_name) {
                return Err(AgendaError::new(format!(
                    "Active task '{new_name}' already exists."
                )));
            }
            let item = self.fresh(&found.stem)?;
            let base = sanitize_filename(new_name, AGENDA_FALLBACK);
            let mut stem = item.stem.clone();
            if base != item.stem {
                let old_file = format!("{}.md", item.stem);
                let new_file = self.unique_name(&base, Some(&old_file));
                let path = self.agenda_dir.join(&new_file);
                let new_stem = new_file.strip_suffix(".md").unwrap_or(&new_file).to_owned();
                if new_stem != item.stem {
                    rename_file(
                        &self.agenda_dir.join(&old_file),
                        &path,
                        &self.display(&new_file),
                    )?;
                    self.index
                        .renamed(&item.stem, &new_stem)
                        .map_err(AgendaError::new)?;
                    stem = new_stem;
                }
            }
            let mut front = item.front_matter().clone();
            front.insert("name", new_name);
            normalize_trigger(&mut front, &item);
            self.write(&stem, &with_front_matter(&item, &front))?;
            Ok(ItemRef {
                id: self.id_of(&stem),
                stem,
                name: new_name.to_owned(),
            })
        })
    }

    /// `update_due_item_text` (`tools.md` §2.5): replaces the body; the front matter stays byte for
    /// byte (D5).
    ///
    /// # Errors
    /// `Due item '{name}' not found. Valid items: {sorted names}`, write failures.
    pub fn update_due_item_text(&self, name: &str, new_text: &str) -> Result<ItemRef, AgendaError> {
        self.locked(|snap| {
            let Some(found) = find_due(snap, name) else {
                return Err(Self::due_not_found_valid(snap, name));
            };
            let item = self.fresh(&found.stem)?;
            self.write_body(&item, new_text)?;
            Ok(self.item_ref(&item))
        })
    }

    /// The active due item called `name` (`print_due_item`, `tools.md` §2.6).
    ///
    /// # Errors
    /// `Due item '{name}' not found. Valid items: {sorted names}`.
    pub fn due_item(&self, name: &str) -> Result<DueItem, AgendaError> {
        self.locked(|snap| match find_due(snap, name) {
            Some(item) => Ok(self.due_view(item)),
            None => Err(Self::due_not_found_valid(snap, name)),
        })
    }

    fn due_view(&self, item: &Item) -> DueItem {
        DueItem {
            id: self.id_of(&item.stem),
            name: item.name().to_owned(),
            stem: item.stem.clone(),
            trigger_datetime: item.trigger_datetime,
            trigger_context: item.trigger_context.clone(),
            text: item.text().to_owned(),
        }
    }

    /// Active due items whose time has come (`trigger_datetime <= now`), by trigger time then id:
    /// what the orchestrator announces as `⏰ DUE ITEM` (`orchestrator.md` §5).
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn due_now(&self, now: Timestamp) -> Result<Vec<DueItem>, AgendaError> {
        self.locked(|snap| {
            let mut due: Vec<DueItem> = active_due(snap)
                .filter(|i| i.trigger_datetime.is_some_and(|t| t <= now))
                .map(|i| self.due_view(i))
                .collect();
            due.sort_by_key(|d| (d.trigger_datetime, d.id));
            Ok(due)
        })
    }

    /// Every active item (plain and due) with its id and rendering, by file name: the agenda side
    /// of recall (`formats.md` §8.5–§8.6).
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn recall_entries(&self, tz: &TimeZone) -> Result<Vec<RecallEntry>, AgendaError> {
        self.locked(|snap| {
            Ok(active_items(snap)
                .map(|i| RecallEntry {
                    id: self.id_of(&i.stem),
                    name: i.name().to_owned(),
                    kind: i.kind(),
                    fact: to_fact(i, tz),
                })
                .collect())
        })
    }

    /// The item with id `id`, active or not, while its file exists.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn item_by_id(&self, id: i64) -> Result<Option<Item>, AgendaError> {
        self.locked(|snap| {
            let Some(stem) = self.index.stem_of(id) else {
                return Ok(None);
            };
            Ok(snap
                .entries
                .iter()
                .filter_map(|(e, _)| e.item())
                .find(|i| i.stem == stem)
                .cloned())
        })
    }

    /// The rendering of the item with id `id` (`formats.md` §8.5), while its file exists.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn fact_by_id(&self, id: i64, tz: &TimeZone) -> Result<Option<String>, AgendaError> {
        Ok(self.item_by_id(id)?.map(|i| to_fact(&i, tz)))
    }
}

/// The file text of `item` with new front matter and its raw body unchanged.
fn with_front_matter(item: &Item, front: &Mapping) -> String {
    // D5: a CRLF file that elroy rewrites becomes LF.
    let raw_body = item.document.raw_body.replace("\r\n", "\n");
    if !item.document.has_front_matter {
        return Document::render_with_body(front, &raw_body, true);
    }
    Document {
        front_matter: front.clone(),
        raw_body,
        has_front_matter: true,
        raw_yaml: String::new(),
    }
    .render(true)
}

fn active_items(snap: &Snapshot) -> impl Iterator<Item = &Item> {
    snap.entries
        .iter()
        .filter_map(|(e, _)| e.item())
        .filter(|i| i.is_active())
}

fn active_due(snap: &Snapshot) -> impl Iterator<Item = &Item> {
    active_items(snap).filter(|i| i.kind() == Kind::Due)
}

/// Finds an active due item by exact name, or (no `name` key) by sanitized name = stem (D6).
fn find_due<'a>(snap: &'a Snapshot, name: &str) -> Option<&'a Item> {
    let sanitized = sanitize_filename(name, AGENDA_FALLBACK);
    let mut by_key = None;
    let mut by_stem = None;
    for item in active_due(snap) {
        match &item.name_key {
            Some(key) if key == name => {
                by_key.get_or_insert(item);
            }
            None if item.stem == sanitized => {
                by_stem.get_or_insert(item);
            }
            _ => {}
        }
    }
    by_key.or(by_stem)
}

/// Finds an agenda item by `item_name` (`tools.md` §1.0, D6); returns its stem.
fn find_item(snap: &Snapshot, item_name: &str) -> Result<String, AgendaError> {
    let not_found = || AgendaError::new(format!("No agenda item found matching '{item_name}'."));
    if item_name.trim().is_empty() {
        return Err(not_found());
    }
    let query = item_name.to_lowercase();
    // Candidates: active parsed items, and unparsable files through their stem.
    let candidates: Vec<&Arc<Entry>> = snap
        .entries
        .iter()
        .map(|(e, _)| e)
        .filter(|e| e.item().is_none_or(Item::is_active))
        .collect();
    fn stem_lower(e: &Entry) -> std::borrow::Cow<'_, str> {
        match e {
            Entry::Item(i) => std::borrow::Cow::Borrowed(i.stem_lower.as_str()),
            Entry::Broken { stem, .. } => std::borrow::Cow::Owned(stem.to_lowercase()),
        }
    }
    let exact: Vec<&Arc<Entry>> = candidates
        .iter()
        .copied()
        .filter(|e| stem_lower(e) == query || e.item().is_some_and(|i| i.name_lower == query))
        .collect();
    let chosen = if exact.is_empty() {
        let subs: Vec<&Arc<Entry>> = candidates
            .iter()
            .copied()
            .filter(|e| stem_lower(e).contains(query.as_str()))
            .collect();
        pick(subs, item_name, not_found)?
    } else {
        pick(exact, item_name, not_found)?
    };
    match chosen.as_ref() {
        Entry::Item(item) => Ok(item.stem.clone()),
        Entry::Broken { message, .. } => Err(AgendaError::new(message.clone())),
    }
}

fn pick<'a>(
    matches: Vec<&'a Arc<Entry>>,
    item_name: &str,
    not_found: impl FnOnce() -> AgendaError,
) -> Result<&'a Arc<Entry>, AgendaError> {
    match matches.as_slice() {
        [] => Err(not_found()),
        [one] => Ok(one),
        many => {
            let mut stems: Vec<&str> = many.iter().map(|e| e.stem()).collect();
            stems.sort_unstable();
            Err(AgendaError::new(format!(
                "Multiple agenda items match '{item_name}': {}. Be more specific.",
                stems.join(", ")
            )))
        }
    }
}

fn entry_id(entry: &Mapping) -> Option<i64> {
    match entry.get("id") {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// The checklist rewritten by the rules of `formats.md` §4.3: entries without `id` or `text`
/// dropped, `id` an integer, `text` a string, `completed` a strict boolean, `due_date` only when
/// non-empty, other keys kept (D5).
fn normalized_checklist(item: &Item) -> Result<Vec<Mapping>, AgendaError> {
    let Some(Value::List(entries)) = item.front_matter().get("checklist") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries {
        let Value::Map(map) = entry else { continue };
        let Some(parsed) = checklist_entry(map, &item.file).map_err(AgendaError::new)? else {
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

/// Rewrites `trigger_datetime` in its stored form (unquoted UTC) so a rewrite keeps it a timestamp.
fn normalize_trigger(front: &mut Mapping, item: &Item) {
    if let Some(ts) = item.trigger_datetime {
        front.insert(
            "trigger_datetime",
            Value::Timestamp(format_stored_trigger(ts)),
        );
    }
}
