//! [`DbIndex`]: the agenda index as the `agenda_items` table of `state.db` (`formats.md` §9.5),
//! validated against the files by their stat signatures.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use elroy_core::{Clock, SystemClock};
use elroy_db::rusqlite::{self, OptionalExtension, params};
use elroy_db::{Db, format_db_time, parse_db_time};
use jiff::Timestamp;
use md5::{Digest, Md5};

use crate::item::{ItemView, Status};
use crate::scan::{Entry, Parsed, Snapshot, Stamp, list_dir, parse_all, wall_clock_ns};
use crate::{AgendaError, Kind};

/// What the index knows about one live file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Stable per user: the recall metadata `memory_id` of the item (`formats.md` §8.6).
    pub id: i64,
    /// When elroy created the file, or first saw it (then the file's modification time).
    pub created_at: Timestamp,
}

#[derive(Debug, Clone)]
struct Row {
    id: i64,
    created_at: Timestamp,
    /// `None`: read the file at the next scan (new, renamed, racy or never scanned).
    stamp: Option<Stamp>,
    entry: Arc<Entry>,
}

#[derive(Debug, Default)]
struct State {
    /// Live rows by file name (`{stem}.md`), so the snapshot is in file-name order.
    by_file: BTreeMap<String, Row>,
    /// File name of each live id.
    by_id: HashMap<i64, String>,
    max_id: i64,
    /// `PRAGMA data_version` at the last load: it changes when another connection commits.
    data_version: Option<i64>,
    /// The entries of `by_file`, built when asked after a change.
    snapshot: Option<Arc<Vec<Arc<Entry>>>>,
    /// Lower-cased names of every directory entry at the last scan (the unique-path rule).
    names_lower: HashMap<String, u32>,
}

impl State {
    fn insert(&mut self, file_name: String, row: Row) {
        let id = row.id;
        self.max_id = self.max_id.max(id);
        if let Some(old) = self.by_file.insert(file_name.clone(), row)
            && old.id != id
        {
            self.by_id.remove(&old.id);
        }
        self.by_id.insert(id, file_name);
        self.snapshot = None;
    }

    fn remove(&mut self, file_name: &str) -> Option<Row> {
        let row = self.by_file.remove(file_name)?;
        self.by_id.remove(&row.id);
        self.snapshot = None;
        Some(row)
    }

    fn snapshot(&mut self) -> Snapshot {
        let entries = self
            .snapshot
            .get_or_insert_with(|| {
                Arc::new(
                    self.by_file
                        .values()
                        .map(|r| Arc::clone(&r.entry))
                        .collect(),
                )
            })
            .clone();
        Snapshot { entries }
    }
}

/// The agenda index in the `agenda_items` table of `state.db`, one row per file and user: the
/// stable id, the creation time, what the file says (name, `name` key, kind, status, completion,
/// date, triggers, checklist counts, body; or why it could not be read) and its stat signature
/// (size, mtime, inode, ctime). A file that disappears gets `status = 'deleted'`; renames by elroy
/// keep the id; ids are never reused.
///
/// Every store operation scans first ([`DbIndex::scan`]): one `readdir` and one `stat` per file;
/// only files whose signature differs from their row (edited, added, renamed by hand, checked out
/// by git) are read and their rows rewritten, in one transaction. The rows are mirrored in memory
/// and loaded again only when another connection (another elroy process) committed. The table is
/// a cache of the files: a deleted `state.db` is rebuilt by the next scan (ids renumbered). All
/// writes happen inside the home lock.
#[derive(Debug)]
pub struct DbIndex {
    db: Arc<Db>,
    user_id: i64,
    state: Mutex<State>,
    /// The clock of `updated_at` for deletes and renames (`ELROY_NOW` through `TimeContext`).
    clock: Arc<dyn Clock>,
}

fn sql(e: impl std::fmt::Display) -> String {
    format!("agenda index: {e}")
}

pub(crate) fn md5_hex(text: &str) -> String {
    Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn file_name_of(stem: &str) -> String {
    format!("{stem}.md")
}

fn timestamp_of_ns(ns: i64) -> Timestamp {
    Timestamp::from_nanosecond(i128::from(ns)).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A placeholder for a row whose file has not been read yet (its stamp is `None`, so the next
/// scan reads the file or drops the row; it is never shown).
fn unread(stem: &str) -> Arc<Entry> {
    Arc::new(Entry::Broken {
        stem: stem.to_owned(),
        file: String::new(),
        message: String::new(),
    })
}

/// The columns of one row as loaded.
struct Loaded {
    id: i64,
    stem: String,
    created_at: String,
    stamp: [Option<i64>; 4],
    name_key: Option<String>,
    raw_status: Option<String>,
    completed: Option<bool>,
    item_date: Option<String>,
    trigger_raw: Option<String>,
    trigger_datetime: Option<String>,
    trigger_context: Option<String>,
    checklist: (Option<i64>, Option<i64>),
    body: Option<String>,
    broken: Option<String>,
}

impl Loaded {
    fn into_row(self, prefix: &str) -> (String, Row) {
        let file_name = file_name_of(&self.stem);
        let stamp = match self.stamp {
            [Some(size), Some(mtime_ns), Some(ino), Some(ctime_ns)] => Some(Stamp {
                size,
                mtime_ns,
                ino,
                ctime_ns,
            }),
            _ => None,
        };
        let entry = if let Some(message) = self.broken {
            Some(Entry::Broken {
                file: format!("{prefix}{file_name}"),
                stem: self.stem.clone(),
                message,
            })
        } else if let (Some(status), Some(completed)) = (self.raw_status, self.completed) {
            Some(Entry::Item(Box::new(
                ItemView {
                    stem: self.stem.clone(),
                    name_key: self.name_key,
                    completed,
                    status: Status::from_word(&status),
                    date: self.item_date.and_then(|d| d.parse().ok()),
                    trigger_raw: self.trigger_raw,
                    trigger_datetime: self.trigger_datetime.as_deref().and_then(parse_db_time),
                    trigger_context: self.trigger_context,
                    checklist_completed: usize::try_from(self.checklist.0.unwrap_or(0))
                        .unwrap_or(0),
                    checklist_total: usize::try_from(self.checklist.1.unwrap_or(0)).unwrap_or(0),
                    text: self.body.unwrap_or_default(),
                    stem_lower: String::new(),
                    name_lower: String::new(),
                }
                .with_names(),
            )))
        } else {
            None
        };
        let row = Row {
            id: self.id,
            created_at: parse_db_time(&self.created_at).unwrap_or(Timestamp::UNIX_EPOCH),
            // A row without its data is read again.
            stamp: stamp.filter(|_| entry.is_some()),
            entry: entry.map_or_else(|| unread(&self.stem), Arc::new),
        };
        (file_name, row)
    }
}

/// The detail columns of a parsed item: `(name, kind, status)` of §9.5 and the view's columns.
fn kind_word(view: &ItemView) -> &'static str {
    match view.kind() {
        Kind::Agenda => "agenda",
        Kind::Due => "due",
    }
}

fn status_word(view: &ItemView) -> &'static str {
    // The table knows created/completed/deleted; a file that exists is never 'deleted'.
    if view.is_active() {
        "created"
    } else {
        "completed"
    }
}

const LOAD_SQL: &str = "SELECT id, stem, created_at, file_size, file_mtime_ns, file_ino, \
     file_ctime_ns, name_key, raw_status, completed, item_date, trigger_raw, trigger_datetime, \
     trigger_context, checklist_done, checklist_total, body, broken FROM agenda_items \
     WHERE user_id = ?1 AND status <> 'deleted'";

impl DbIndex {
    /// The index of `user_id` (a `users` row) in `db`, stamping `updated_at` with the system
    /// clock; use [`DbIndex::with_clock`] to give it the session's clock.
    pub fn new(db: Arc<Db>, user_id: i64) -> Self {
        DbIndex {
            db,
            user_id,
            state: Mutex::new(State::default()),
            clock: Arc::new(SystemClock),
        }
    }

    /// The same index stamping `updated_at` of deletes and renames with `clock` (the runtime's
    /// `TimeContext::clock`, so `ELROY_NOW` fixes it).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Loads the user's live rows when the database changed under us (or on first use).
    fn reload(&self, state: &mut State, prefix: &str) -> Result<(), String> {
        let user = self.user_id;
        let loaded = self
            .db
            .with_conn(|c| {
                let version: i64 = c.query_row("PRAGMA data_version", [], |r| r.get(0))?;
                if state.data_version == Some(version) {
                    return Ok(None);
                }
                let max: i64 = c.query_row(
                    "SELECT COALESCE(MAX(id), 0) FROM agenda_items WHERE user_id = ?1",
                    [user],
                    |r| r.get(0),
                )?;
                let mut stmt = c.prepare(LOAD_SQL)?;
                let rows = stmt
                    .query_map([user], |r| {
                        Ok(Loaded {
                            id: r.get(0)?,
                            stem: r.get(1)?,
                            created_at: r.get(2)?,
                            stamp: [r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?],
                            name_key: r.get(7)?,
                            raw_status: r.get(8)?,
                            completed: r.get(9)?,
                            item_date: r.get(10)?,
                            trigger_raw: r.get(11)?,
                            trigger_datetime: r.get(12)?,
                            trigger_context: r.get(13)?,
                            checklist: (r.get(14)?, r.get(15)?),
                            body: r.get(16)?,
                            broken: r.get(17)?,
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(Some((version, max, rows)))
            })
            .map_err(sql)?;
        if let Some((version, max, rows)) = loaded {
            *state = State::default();
            for loaded in rows {
                let (file_name, row) = loaded.into_row(prefix);
                state.insert(file_name, row);
            }
            state.max_id = state.max_id.max(max);
            state.data_version = Some(version);
        }
        Ok(())
    }

    /// Brings the index up to date with `dir` and returns its entries (file-name order), with the
    /// files found unreadable by this scan (`(display path, message)`: new or changed files that
    /// do not parse; a file still broken since an earlier scan is not repeated). Call inside the
    /// home lock.
    ///
    /// # Errors
    /// A directory that cannot be listed; database failures.
    pub(crate) fn scan(
        &self,
        dir: &Path,
        prefix: &str,
    ) -> Result<(Snapshot, Vec<(String, String)>), AgendaError> {
        let listing = list_dir(dir, prefix)?;
        let mut state = self.lock();
        self.reload(&mut state, prefix).map_err(AgendaError::new)?;
        state.names_lower = listing.names_lower;
        let mut seen: HashSet<&str> = HashSet::with_capacity(listing.files.len());
        let mut to_parse = Vec::new();
        for (name, stamp) in &listing.files {
            seen.insert(name.as_str());
            match state.by_file.get(name) {
                Some(row) if row.stamp == Some(*stamp) => {}
                _ => to_parse.push((name.clone(), *stamp)),
            }
        }
        let gone: Vec<String> = state
            .by_file
            .keys()
            .filter(|f| !seen.contains(f.as_str()))
            .cloned()
            .collect();
        if to_parse.is_empty() && gone.is_empty() {
            return Ok((state.snapshot(), Vec::new()));
        }
        let wall = wall_clock_ns();
        // A file read again only because its stamp was racy, and unchanged, needs no write.
        let parsed: Vec<Parsed> = parse_all(dir, prefix, to_parse)
            .into_iter()
            .filter(|p| {
                !(p.stamp.is_racy(wall)
                    && state
                        .by_file
                        .get(&p.name)
                        .is_some_and(|row| row.stamp.is_none() && *row.entry == p.entry))
            })
            .collect();
        let problems = parsed
            .iter()
            .filter_map(|p| match &p.entry {
                Entry::Broken { file, message, .. } => Some((file.clone(), message.clone())),
                Entry::Item(_) => None,
            })
            .collect();
        if parsed.is_empty() && gone.is_empty() {
            return Ok((state.snapshot(), problems));
        }
        // The table is a cache of the files: when it cannot be written (a full disk), this
        // process goes on with what it read, and the next one reads those files again.
        let _unsaved = self.write_scan(&mut state, &parsed, &gone, wall);
        Ok((state.snapshot(), problems))
    }

    /// Writes a scan's changes in one transaction, then into the mirror.
    fn write_scan(
        &self,
        state: &mut State,
        parsed: &[Parsed],
        gone: &[String],
        wall: i64,
    ) -> Result<(), String> {
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        let gone_ids: Vec<i64> = gone
            .iter()
            .filter_map(|f| state.by_file.get(f).map(|r| r.id))
            .collect();
        let mut next_id = state.max_id;
        // (parsed, id, created_at, is_new, stored stamp)
        let mut plan = Vec::with_capacity(parsed.len());
        for p in parsed {
            let stored = (!p.stamp.is_racy(wall)).then_some(p.stamp);
            match state.by_file.get(&p.name) {
                Some(row) => plan.push((p, row.id, row.created_at, false, stored)),
                None => {
                    next_id += 1;
                    plan.push((p, next_id, timestamp_of_ns(p.stamp.mtime_ns), true, stored));
                }
            }
        }
        let written = self
            .db
            .with_conn(|c| {
                let tx = c.transaction()?;
                for id in &gone_ids {
                    tx.execute(
                        "UPDATE agenda_items SET status = 'deleted', updated_at = ?3 \
                         WHERE user_id = ?1 AND id = ?2",
                        params![user, id, now],
                    )?;
                }
                for (p, id, created_at, is_new, stored) in &plan {
                    let stem = p.name.strip_suffix(".md").unwrap_or(&p.name);
                    let stamp_cols = (
                        stored.map(|s| s.size),
                        stored.map(|s| s.mtime_ns),
                        stored.map(|s| s.ino),
                        stored.map(|s| s.ctime_ns),
                    );
                    let updated = format_db_time(timestamp_of_ns(p.stamp.mtime_ns));
                    if *is_new {
                        tx.execute(
                            "INSERT INTO agenda_items (user_id, id, stem, name, kind, status, \
                             text_md5, created_at, updated_at) \
                             VALUES (?1, ?2, ?3, ?3, 'agenda', 'created', ?4, ?5, ?5)",
                            params![user, id, stem, p.text_md5, format_db_time(*created_at)],
                        )?;
                    }
                    match &p.entry {
                        Entry::Broken { message, .. } => {
                            // A file that does not parse keeps its previous data (§9.5).
                            tx.execute(
                                "UPDATE agenda_items SET broken = ?3, file_size = ?4, \
                                 file_mtime_ns = ?5, file_ino = ?6, file_ctime_ns = ?7, \
                                 updated_at = ?8 WHERE user_id = ?1 AND id = ?2",
                                params![
                                    user,
                                    id,
                                    message,
                                    stamp_cols.0,
                                    stamp_cols.1,
                                    stamp_cols.2,
                                    stamp_cols.3,
                                    updated
                                ],
                            )?;
                        }
                        Entry::Item(view) => {
                            tx.execute(
                                "UPDATE agenda_items SET name = ?3, kind = ?4, status = ?5, \
                                 item_date = ?6, trigger_datetime = ?7, trigger_context = ?8, \
                                 text_md5 = ?9, file_size = ?10, file_mtime_ns = ?11, \
                                 file_ino = ?12, file_ctime_ns = ?13, name_key = ?14, \
                                 raw_status = ?15, completed = ?16, trigger_raw = ?17, \
                                 checklist_done = ?18, checklist_total = ?19, body = ?20, \
                                 broken = NULL, updated_at = ?21 \
                                 WHERE user_id = ?1 AND id = ?2",
                                params![
                                    user,
                                    id,
                                    view.name(),
                                    kind_word(view),
                                    status_word(view),
                                    view.date.map(|d| d.to_string()),
                                    view.trigger_datetime.map(format_db_time),
                                    view.trigger_context,
                                    p.text_md5,
                                    stamp_cols.0,
                                    stamp_cols.1,
                                    stamp_cols.2,
                                    stamp_cols.3,
                                    view.name_key,
                                    view.status.as_str(),
                                    view.completed,
                                    view.trigger_raw,
                                    view.checklist_completed as i64,
                                    view.checklist_total as i64,
                                    view.text,
                                    updated
                                ],
                            )?;
                        }
                    }
                }
                tx.commit()
            })
            .map_err(sql);
        // The mirror follows the files whether or not the rows were written.
        for f in gone {
            state.remove(f);
        }
        for (p, id, created_at, _, stored) in plan {
            state.insert(
                p.name.clone(),
                Row {
                    id,
                    created_at,
                    stamp: stored,
                    entry: Arc::new(p.entry.clone()),
                },
            );
        }
        written
    }

    fn mark_deleted(&self, state: &mut State, stem: &str) -> Result<(), String> {
        let Some(row) = state.remove(&file_name_of(stem)) else {
            return Ok(());
        };
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        self.db
            .with_conn(|c| {
                c.execute(
                    "UPDATE agenda_items SET status = 'deleted', updated_at = ?3 \
                     WHERE user_id = ?1 AND id = ?2",
                    params![user, row.id, now],
                )
            })
            .map_err(sql)?;
        Ok(())
    }

    /// Whether the directory had an entry called `name`, ignoring case (`formats.md` §2.3, D12),
    /// at the last scan. Call it inside the home lock, right after a scan.
    pub(crate) fn is_taken(&self, name: &str) -> bool {
        self.lock().names_lower.contains_key(&name.to_lowercase())
    }

    /// The entry of a live stem.
    pub(crate) fn get(&self, stem: &str) -> Option<IndexEntry> {
        self.lock()
            .by_file
            .get(&file_name_of(stem))
            .map(|r| IndexEntry {
                id: r.id,
                created_at: r.created_at,
            })
    }

    /// Picks up rows other processes committed, without listing the directory (see
    /// [`DbIndex::unchanged_stem_of`]).
    pub(crate) fn refresh(&self, prefix: &str) -> Result<(), String> {
        let mut state = self.lock();
        self.reload(&mut state, prefix)
    }

    /// The stem of `id` when its file's stat signature is the one the index holds (the row is
    /// current without a scan); `Ok(None)` for an unknown id; `Err(())` when only a scan can
    /// tell (no signature stored, or the file changed or is gone).
    pub(crate) fn unchanged_stem_of(&self, id: i64, dir: &Path) -> Result<Option<String>, ()> {
        let state = self.lock();
        let Some(file_name) = state.by_id.get(&id) else {
            return Ok(None);
        };
        let stored = state
            .by_file
            .get(file_name)
            .and_then(|r| r.stamp)
            .ok_or(())?;
        let now = std::fs::metadata(dir.join(file_name)).map_err(|_| ())?;
        if Stamp::of(&now) != stored {
            return Err(());
        }
        Ok(Some(
            file_name
                .strip_suffix(".md")
                .unwrap_or(file_name)
                .to_owned(),
        ))
    }

    /// The stem that has `id`, while the file lives.
    pub(crate) fn stem_of(&self, id: i64) -> Option<String> {
        self.lock()
            .by_id
            .get(&id)
            .map(|f| f.strip_suffix(".md").unwrap_or(f).to_owned())
    }

    /// Records a file elroy just created: a new id, `created_at` = `at`; the next scan reads it.
    pub(crate) fn created(&self, stem: &str, at: Timestamp) -> Result<IndexEntry, String> {
        let mut state = self.lock();
        self.mark_deleted(&mut state, stem)?;
        let id = state.max_id + 1;
        let user = self.user_id;
        let when = format_db_time(at);
        self.db
            .with_conn(|c| {
                c.execute(
                    "INSERT INTO agenda_items (user_id, id, stem, name, kind, status, text_md5, \
                     created_at, updated_at) \
                     VALUES (?1, ?2, ?3, ?3, 'agenda', 'created', ?4, ?5, ?5)",
                    params![user, id, stem, md5_hex(""), when],
                )
            })
            .map_err(sql)?;
        state.insert(
            file_name_of(stem),
            Row {
                id,
                created_at: at,
                stamp: None,
                entry: unread(stem),
            },
        );
        Ok(IndexEntry { id, created_at: at })
    }

    /// Records a move by elroy (`rename_due_item`): the id and `created_at` stay with the file;
    /// the next scan reads it.
    pub(crate) fn renamed(&self, old_stem: &str, new_stem: &str) -> Result<(), String> {
        let mut state = self.lock();
        let Some(row) = state.remove(&file_name_of(old_stem)) else {
            return Ok(());
        };
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        self.db
            .with_conn(|c| {
                c.execute(
                    "UPDATE agenda_items SET stem = ?3, file_size = NULL, file_mtime_ns = NULL, \
                     updated_at = ?4 WHERE user_id = ?1 AND id = ?2",
                    params![user, row.id, new_stem, now],
                )
            })
            .map_err(sql)?;
        state.insert(file_name_of(new_stem), Row { stamp: None, ..row });
        Ok(())
    }

    /// Records a removal by elroy (`delete_agenda_item`, `delete_due_item`).
    pub(crate) fn removed(&self, stem: &str) -> Result<(), String> {
        let mut state = self.lock();
        self.mark_deleted(&mut state, stem)
    }
}

/// The stored status of the item with `id`, for tests and diagnostics.
///
/// # Errors
/// A message when the query fails.
pub fn indexed_status(db: &Db, user_id: i64, id: i64) -> Result<Option<(String, String)>, String> {
    db.with_conn(|c| {
        c.query_row(
            "SELECT stem, status FROM agenda_items WHERE user_id = ?1 AND id = ?2",
            params![user_id, id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
    })
    .map_err(sql)
}

#[cfg(test)]
mod tests {
    use super::*;
    use elroy_core::FixedClock;

    fn updated_at(db: &Db, user: i64, id: i64) -> String {
        db.with_conn(|c| {
            c.query_row(
                "SELECT updated_at FROM agenda_items WHERE user_id = ?1 AND id = ?2",
                params![user, id],
                |r| r.get(0),
            )
        })
        .unwrap()
    }

    #[test]
    fn deletes_and_renames_are_stamped_with_the_injected_clock() {
        let db = Arc::new(Db::open_in_memory().unwrap());
        let t0: Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
        let user = db.ensure_user("DEFAULT", t0).unwrap();
        let fixed: Timestamp = "2001-02-03T04:05:06Z".parse().unwrap();
        let index = DbIndex::new(Arc::clone(&db), user).with_clock(Arc::new(FixedClock(fixed)));
        let a = index.created("A", t0).unwrap();
        let b = index.created("B", t0).unwrap();
        let c = index.created("C", t0).unwrap();
        index.renamed("A", "A2").unwrap();
        assert_eq!(updated_at(&db, user, a.id), format_db_time(fixed));
        index.removed("B").unwrap();
        assert_eq!(updated_at(&db, user, b.id), format_db_time(fixed));
        assert_eq!(
            indexed_status(&db, user, b.id).unwrap(),
            Some(("B".to_owned(), "deleted".to_owned()))
        );
        // A file gone at a scan is marked deleted at the clock's time too.
        let empty = tempfile::tempdir().unwrap();
        index.scan(empty.path(), "agenda/").unwrap();
        assert_eq!(updated_at(&db, user, c.id), format_db_time(fixed));
        assert_eq!(
            indexed_status(&db, user, c.id).unwrap().map(|s| s.1),
            Some("deleted".to_owned())
        );
    }
}
