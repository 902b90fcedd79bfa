//! The due-item operations (`docs/tools.md#due-items`), due surfacing and recall.

use elroy_markdown::{Mapping, Value, rename_file, sanitize_filename};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

use super::matching::{active_due, active_items, find_due};
use super::views::{to_fact, view_fact};
use super::{AGENDA_FALLBACK, AgendaStore, DirCheck, DueItem, ItemRef, NewDueItem, RecallEntry};
use super::{normalize_trigger, with_front_matter};
use crate::db_index::Query;
use crate::item::{Item, ItemView};
use crate::scan::Snapshot;
use crate::time::{format_python_utc, format_stored_trigger};
use crate::{AgendaError, Kind};

impl AgendaStore {
    /// `create_due_item` steps 2–7 (`docs/tools.md#create_due_item`); the caller parsed
    /// `trigger_time` (step 1).
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
        self.create_due_item_repeating(new, None, now)
    }

    /// [`AgendaStore::create_due_item`] with a repetition: the rule goes in the
    /// `recurrence` key (sorted among the others, as every key Elroy writes) and `new.trigger`
    /// must be its first occurrence, so Elroy 0.5.0 reads the file as a one-off then.
    ///
    /// # Errors
    /// As [`AgendaStore::create_due_item`].
    pub fn create_due_item_repeating(
        &self,
        new: &NewDueItem<'_>,
        recurrence: Option<&crate::Recurrence>,
        now: &ZonedDateTime,
    ) -> Result<ItemRef, AgendaError> {
        // Names are NFC on input (stored, compared, file name), so the NFD spelling of an
        // existing item is refused as a duplicate.
        let name = &*elroy_markdown::normalize_name(new.name);
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
        self.locked(|| {
            let snap = &self.query(Query::Named(name))?;
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
            if let Some(rule) = recurrence {
                front.insert(crate::RECURRENCE_KEY, rule.to_text());
            }
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
            let (stem, entry) = self.create_item(name, &front, new.text, now.timestamp())?;
            Ok(ItemRef {
                id: entry.id,
                stem,
                name: name.to_owned(),
            })
        })
    }

    /// `Active due item '{name}' not found. Active due items: {names in creation order}` (inside
    /// the lock).
    pub(super) fn due_not_found_active(&self, name: &str) -> AgendaError {
        match self.active_due_names_by_creation() {
            Ok(names) => AgendaError::new(format!(
                "Active due item '{name}' not found. Active due items: {}",
                names.join(", ")
            )),
            Err(e) => e,
        }
    }

    fn active_due_names_by_creation(&self) -> Result<Vec<String>, AgendaError> {
        Ok(self.due_names_by_creation(&self.query(Query::ActiveDue)?))
    }

    /// `Due item '{name}' not found. Valid items: {sorted names}` (inside the lock).
    fn due_not_found_valid(&self, name: &str) -> AgendaError {
        let snap = match self.query(Query::ActiveDue) {
            Ok(snap) => snap,
            Err(e) => return e,
        };
        let mut names: Vec<&str> = active_due(&snap).map(ItemView::name).collect();
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
        self.locked(|| {
            let snap = self.query(Query::DueNamed(name))?;
            let Some(found) = find_due(&snap, name) else {
                return Err(self.due_not_found_active(name));
            };
            let item = self.fresh(&found.stem)?;
            let result = self.item_ref(&item);
            if delete {
                self.remove(&item.stem)?;
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

    /// `complete_due_item` (`docs/tools.md#complete_due_item`): marks it completed with the closing
    /// comment; the file is kept.
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

    /// `delete_due_item` (`docs/tools.md#delete_due_item`): removes the file.
    ///
    /// # Errors
    /// As [`AgendaStore::complete_due_item`].
    pub fn delete_due_item(&self, name: &str) -> Result<ItemRef, AgendaError> {
        self.close_due(name, None, true)
    }

    /// `rename_due_item` (`docs/tools.md#rename_due_item`): moves the file when the sanitized name
    /// changes, sets `name` (D6); the id stays. `user` is how the user is named in the not-found
    /// messages (the numeric user id).
    ///
    /// # Errors
    /// The messages of `docs/tools.md#rename_due_item` steps 1–4, write failures.
    pub fn rename_due_item(
        &self,
        old_name: &str,
        new_name: &str,
        user: &str,
    ) -> Result<ItemRef, AgendaError> {
        let new_name = &*elroy_markdown::normalize_name(new_name);
        self.locked(|| {
            let snap = self.query(Query::DueNamed(old_name))?;
            let Some(found) = find_due(&snap, old_name) else {
                return Err(AgendaError::new(format!(
                    "Active due item '{old_name}' not found for user {user}. Active items: {}",
                    self.active_due_names_by_creation()?.join(", ")
                )));
            };
            if new_name.trim().is_empty() {
                return Err(AgendaError::new("Due item name cannot be empty"));
            }
            if find_due(&self.query(Query::DueNamed(new_name))?, new_name).is_some() {
                return Err(AgendaError::new(format!(
                    "Active due item '{new_name}' already exists for user {user}"
                )));
            }
            if active_items(&self.query(Query::Named(new_name))?)
                .any(|i| i.kind() == Kind::Agenda && i.name() == new_name)
            {
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
                    let old_path = self.agenda_dir.join(&old_file);
                    rename_file(&old_path, &path, &self.display(&new_file))?;
                    if let Err(e) = self.index.renamed(&item.stem, &new_stem) {
                        // Whole or absent: the file goes back under its old name.
                        let _ = rename_file(&path, &old_path, &self.display(&old_file));
                        return Err(e.into());
                    }
                    // A rename keeps the inode.
                    let ino = self.ino_of(&new_file);
                    self.index
                        .entries_changed(&[(old_file.as_str(), ino)], &[(new_file.as_str(), ino)]);
                    stem = new_stem;
                }
            }
            let mut front = item.front_matter().clone();
            front.insert("name", new_name);
            normalize_trigger(&mut front, &item);
            if let Err(e) = self.write(&stem, &with_front_matter(&item, &front)) {
                // The new name could not be written into the file (a full disk): the file goes
                // back under its old name, so the item keeps its old name everywhere.
                if stem != item.stem {
                    let (from, to) = (format!("{stem}.md"), format!("{}.md", item.stem));
                    let ino = self.ino_of(&from);
                    if rename_file(
                        &self.agenda_dir.join(&from),
                        &self.agenda_dir.join(&to),
                        &self.display(&to),
                    )
                    .is_ok()
                        && self.index.renamed(&stem, &item.stem).is_ok()
                    {
                        self.index
                            .entries_changed(&[(from.as_str(), ino)], &[(to.as_str(), ino)]);
                    }
                }
                return Err(e);
            }
            Ok(ItemRef {
                id: self.id_of(&stem),
                stem,
                name: new_name.to_owned(),
            })
        })
    }

    /// `update_due_item_text` (`docs/tools.md#update_due_item_text`): replaces the body; the front
    /// matter stays byte for byte (D5).
    ///
    /// # Errors
    /// `Due item '{name}' not found. Valid items: {sorted names}`, write failures.
    pub fn update_due_item_text(&self, name: &str, new_text: &str) -> Result<ItemRef, AgendaError> {
        self.locked(|| {
            let snap = self.query(Query::DueNamed(name))?;
            let Some(found) = find_due(&snap, name) else {
                return Err(self.due_not_found_valid(name));
            };
            let item = self.fresh(&found.stem)?;
            self.write_body(&item, new_text)?;
            Ok(self.item_ref(&item))
        })
    }

    /// The active due item called `name` (`print_due_item`, `docs/tools.md#print_due_item`).
    ///
    /// # Errors
    /// `Due item '{name}' not found. Valid items: {sorted names}`.
    pub fn due_item(&self, name: &str) -> Result<DueItem, AgendaError> {
        self.locked(|| {
            let snap = self.query(Query::DueNamed(name))?;
            match find_due(&snap, name) {
                Some(item) => Ok(self.due_view(item)),
                None => Err(self.due_not_found_valid(name)),
            }
        })
    }

    fn due_view(&self, item: &ItemView) -> DueItem {
        DueItem {
            id: self.id_of(&item.stem),
            name: item.name().to_owned(),
            stem: item.stem.clone(),
            trigger_datetime: item.trigger_datetime,
            trigger_context: item.trigger_context.clone(),
            trigger_raw: item.trigger_raw.clone(),
            text: item.text().to_owned(),
            recurrence: item.recurrence.clone(),
        }
    }

    /// Every active due item, by file name, from the index (`elroy due`): only the due items'
    /// rows are selected and their files stat'ed (read when changed), nothing else.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn active_due_items(&self) -> Result<Vec<DueItem>, AgendaError> {
        self.locked(|| {
            let snap = self.query(Query::ActiveDue)?;
            Ok(active_due(&snap).map(|i| self.due_view(i)).collect())
        })
    }

    /// Active due items whose time has come (`trigger_datetime <= now`), by trigger time then id:
    /// what the orchestrator announces as `⏰ DUE ITEM` (`docs/behaviour.md#due-items-in-a-turn`).
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn due_now(&self, now: Timestamp) -> Result<Vec<DueItem>, AgendaError> {
        self.locked(|| {
            let snap = self.query(Query::ActiveDue)?;
            let mut due: Vec<DueItem> = active_due(&snap)
                .filter(|i| i.trigger_datetime.is_some_and(|t| t <= now))
                .map(|i| self.due_view(i))
                .collect();
            due.sort_by_key(|d| (d.trigger_datetime, d.id));
            Ok(due)
        })
    }

    /// Every active item (plain and due) with its id and rendering, by file name: the agenda side
    /// of recall (`docs/formats.md#times-and-time-zones`).
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn recall_entries(&self, tz: &TimeZone) -> Result<Vec<RecallEntry>, AgendaError> {
        Ok(self.recall_entries_with_stamp(tz)?.0)
    }

    /// [`AgendaStore::recall_entries`] and the recall stamp they stand for (the agenda version
    /// read in the same lock, after the rows were brought up to date, and `tz`): a cache built
    /// from the entries is current while [`AgendaStore::recall_stamp`] returns the same text.
    ///
    /// # Errors
    /// Lock or directory failures; database failures.
    pub fn recall_entries_with_stamp(
        &self,
        tz: &TimeZone,
    ) -> Result<(Vec<RecallEntry>, String), AgendaError> {
        self.locked(|| {
            let snap = self.query(Query::All)?;
            let entries = active_items(&snap)
                .map(|i| RecallEntry {
                    id: self.id_of(&i.stem),
                    name: i.name().to_owned(),
                    kind: i.kind(),
                    fact: view_fact(i, tz),
                })
                .collect();
            Ok((entries, stamp_of(self.index.version()?, tz)))
        })
    }

    /// The recall stamp `{agenda version} {time zone}` (the version: a number raised by every
    /// change to the index's rows; the zone: that of the renderings): recall keeps the stamp
    /// its agenda rows of `recall_fts` were built from, and rebuilds them only when this
    /// differs. Checks the directory first (one `stat`; a listing when it changed), so files
    /// added, removed or renamed by hand raise it; no file is stat'ed otherwise, so a file
    /// edited in place is seen when a query returns its row (the index's trade-off, see
    /// [`crate::DbIndex`]).
    ///
    /// # Errors
    /// Lock or directory failures; database failures.
    pub fn recall_stamp(&self, tz: &TimeZone) -> Result<String, AgendaError> {
        self.locked(|| Ok(stamp_of(self.index.version()?, tz)))
    }

    /// The active items among `ids` (the hits of a recall), by file name: only their rows are
    /// selected and their files stat'ed (read when changed; gone or completed items are left
    /// out). No directory check.
    ///
    /// # Errors
    /// Lock failures; database failures.
    pub fn recall_entries_by_ids(
        &self,
        ids: &[i64],
        tz: &TimeZone,
    ) -> Result<Vec<RecallEntry>, AgendaError> {
        self.entries_by_ids(Query::Ids(ids), ids, tz)
    }

    /// [`AgendaStore::recall_entries_by_ids`] for the due items only: only the rows the index
    /// holds as active due items are selected and stat'ed (a file edited in place into a due
    /// item since its row was read is not among them).
    ///
    /// # Errors
    /// Lock failures; database failures.
    pub fn recall_due_entries_by_ids(
        &self,
        ids: &[i64],
        tz: &TimeZone,
    ) -> Result<Vec<RecallEntry>, AgendaError> {
        Ok(self
            .entries_by_ids(Query::DueIds(ids), ids, tz)?
            .into_iter()
            .filter(|e| e.kind == Kind::Due)
            .collect())
    }

    fn entries_by_ids(
        &self,
        query: Query<'_>,
        ids: &[i64],
        tz: &TimeZone,
    ) -> Result<Vec<RecallEntry>, AgendaError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.locked_with(DirCheck::None, || {
            let snap = self.query(query)?;
            Ok(active_items(&snap)
                .map(|i| RecallEntry {
                    id: self.id_of(&i.stem),
                    name: i.name().to_owned(),
                    kind: i.kind(),
                    fact: view_fact(i, tz),
                })
                .collect())
        })
    }

    /// How many agenda files this store stat'ed since it was made (every query stats the files
    /// of the rows it returns, a listing diff the new entries): for tests that an operation
    /// touched only the rows it needs.
    pub fn files_checked(&self) -> u64 {
        self.index.files_checked()
    }

    /// The item with id `id`, active or not, while its file exists.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn item_by_id(&self, id: i64) -> Result<Option<Item>, AgendaError> {
        // Recall and pins ask for a few ids at a time: the row of the id, its file stat'ed; the
        // directory is not checked (a file the row does not know is not asked for).
        self.locked_with(DirCheck::None, || {
            let snap = self.query(Query::Id(id))?;
            match snap.entries.first() {
                Some(entry) => Ok(self.fresh(entry.stem()).ok()),
                None => Ok(None),
            }
        })
    }

    /// The rendering of the item with id `id` (`docs/formats.md#renderings`), while its file
    /// exists.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn fact_by_id(&self, id: i64, tz: &TimeZone) -> Result<Option<String>, AgendaError> {
        Ok(self.item_by_id(id)?.map(|i| to_fact(&i, tz)))
    }
}

/// The recall stamp of `version` and `tz` (see [`AgendaStore::recall_stamp`]).
fn stamp_of(version: i64, tz: &TimeZone) -> String {
    let zone = tz.iana_name().map_or_else(
        || {
            tz.to_fixed_offset()
                .map_or_else(|_| format!("{tz:?}"), |o| o.to_string())
        },
        str::to_owned,
    );
    format!("{version} {zone}")
}
