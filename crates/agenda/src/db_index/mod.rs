//! [`DbIndex`]: the agenda index as the `agenda_items` table of `state.db`
//! (`docs/formats.md#agenda-index`), validated against the files by their stat signatures.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use elroy_core::{Clock, SystemClock};
use elroy_db::Db;
use elroy_db::rusqlite::{self, OptionalExtension, params};
use jiff::Timestamp;
use jiff::civil::Date;
use md5::{Digest, Md5};

mod error;
mod listing;
mod names;
mod query;
mod rows;
mod write;

pub use error::IndexError;
pub(crate) use query::Query;
use rows::{LOAD_COLUMNS, Loaded, Row, kind_word, status_word};

use crate::item::{ItemView, Status};
use crate::scan::{Entry, FileStamp, Parsed, Snapshot, parse_all, wall_clock_ns};
use crate::{AgendaError, Kind};

/// What the index knows about one live file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Stable per user: the recall metadata `memory_id` of the item
    /// (`docs/formats.md#the-recall-payload`).
    pub id: i64,
    /// When elroy created the file, or first saw it (then the file's modification time).
    pub created_at: Timestamp,
}

/// Ids of the rows the current operation's queries returned, by stem (emptied by
/// [`DbIndex::begin`]).
#[derive(Debug, Default)]
struct Seen {
    by_stem: HashMap<String, IndexEntry>,
}

/// The agenda index in the `agenda_items` table of `state.db`, one row per file and user: the
/// stable id, the creation time, what the file says (name, `name` key, kind, status, completion,
/// date, triggers, checklist counts, body; or why it could not be read) and its stat signature
/// (size, mtime, inode, ctime). A file that disappears gets `status = 'deleted'`; renames by elroy
/// keep the id; ids are never reused.
///
/// Nothing is loaded whole. An operation first checks the directory: its stat
/// signature (mtime in ns and inode) is kept in `meta` (key `agenda_dir:{user id}`), stored only
/// when it is older than two seconds (the racy rule of the files). Unchanged: no listing. Changed
/// (a file added, removed, or renamed over, as editors and `git checkout` do): one `readdir`
/// (names and inodes, no `stat`) diffed against the rows; new files and files whose inode changed
/// are read, rows without a file are marked deleted. Then each query ([`Query`]) selects only the
/// rows it needs in SQL, stats their files and re-reads those whose signature changed. The
/// trade-off: a file edited in place (same inode, directory unchanged) is seen by the next query
/// that returns its row, and by `elroy doctor` ([`crate::AgendaStore::broken_files`] checks
/// every file); a query that filters on what the edit changed (the date, the name) sees it only
/// then. The table is a cache of the files: a deleted `state.db` is rebuilt by the next operation
/// (ids renumbered). All writes happen inside the home lock.
#[derive(Debug)]
pub struct DbIndex {
    db: Arc<Db>,
    user_id: i64,
    seen: Mutex<Seen>,
    /// Lower-cased names of the non-item `*.md` entries at the last directory check.
    others_lower: Mutex<Vec<String>>,
    /// Lower-cased file names of the live rows, when this operation already loaded them.
    names_lower: Mutex<Option<HashSet<String>>>,
    /// The clock of `updated_at` for deletes and renames (`ELROY_NOW` through `TimeContext`).
    clock: Arc<dyn Clock>,
    /// How many agenda files this index stat'ed (queries and listing diffs), for tests.
    files_checked: AtomicU64,
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

/// A placeholder for a row whose file has not been read yet (its stamp is `None`, so the query
/// reads the file or drops the row; it is never shown).
fn unread(stem: &str) -> Arc<Entry> {
    Arc::new(Entry::Broken {
        stem: stem.to_owned(),
        file: String::new(),
        message: String::new(),
    })
}

/// The ids of existing rows met by a directory check or a query, by file name.
type Known = HashMap<String, i64>;

/// The `meta` key of the agenda version of `user_id` (see [`DbIndex::version`]).
fn version_key(user_id: i64) -> String {
    format!("agenda_version:{user_id}")
}

/// Adds one to the agenda version of `user_id`, on `conn` (inside the transaction of the row
/// write it stands for).
fn bump_version(conn: &rusqlite::Connection, user_id: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, '1') \
         ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        [version_key(user_id)],
    )?;
    Ok(())
}

impl DbIndex {
    /// The index of `user_id` (a `users` row) in `db`, stamping `updated_at` with the system
    /// clock; use [`DbIndex::with_clock`] to give it the session's clock.
    pub fn new(db: Arc<Db>, user_id: i64) -> Self {
        DbIndex {
            db,
            user_id,
            seen: Mutex::new(Seen::default()),
            others_lower: Mutex::new(Vec::new()),
            names_lower: Mutex::new(None),
            clock: Arc::new(SystemClock),
            files_checked: AtomicU64::new(0),
        }
    }

    /// The same index stamping `updated_at` of deletes and renames with `clock` (the runtime's
    /// `TimeContext::clock`, so `ELROY_NOW` fixes it).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn names_lower(&self) -> std::sync::MutexGuard<'_, Option<HashSet<String>>> {
        self.names_lower
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn meta_key(&self) -> String {
        format!("agenda_dir:{}", self.user_id)
    }

    fn names_key(&self) -> String {
        format!("agenda_names:{}", self.user_id)
    }

    fn meta_get(&self, key: &str) -> Result<Option<String>, IndexError> {
        Ok(self.db.with_conn(|c| {
            c.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
                .query_row([key], |r| r.get(0))
                .optional()
        })?)
    }

    /// Sets (`Some`) or removes (`None`) a `meta` value. A value that cannot be written only
    /// costs a later operation a listing or a diff.
    fn meta_set(&self, key: &str, value: Option<&str>) {
        let _ = self.db.with_conn(|c| match value {
            Some(value) => c.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, value],
            ),
            None => c.execute("DELETE FROM meta WHERE key = ?1", [key]),
        });
    }

    /// Starts an operation that needs no directory check (a lookup by id: the file of the row
    /// is stat'ed, and a file the row does not know is not asked for).
    pub(crate) fn reset(&self) {
        self.seen().by_stem.clear();
        *self.names_lower() = None;
    }

    /// The entry of a stem returned by this operation's queries (or created by it).
    pub(crate) fn get(&self, stem: &str) -> Option<IndexEntry> {
        self.seen().by_stem.get(stem).copied()
    }

    /// The agenda version of this user (`meta` key `agenda_version:{user id}`, `0` when absent):
    /// a number raised in the transaction of every write to this user's rows (elroy's own
    /// writes, and what a directory check or a query read again or found gone). Equal versions
    /// mean the rows did not change in between, so a cache of the rows (the agenda rows of the
    /// recall index) is still current; a file edited in place is seen, and the version raised,
    /// only when a query returns its row. A deleted `state.db` starts again at `0`, together
    /// with any cache kept in it.
    ///
    /// # Errors
    /// Database failures.
    pub(crate) fn version(&self) -> Result<i64, AgendaError> {
        let value = self.meta_get(&version_key(self.user_id))?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// How many agenda files this index stat'ed since it was made (each query stats the files
    /// of the rows it returns; a listing diff stats new entries).
    pub(crate) fn files_checked(&self) -> u64 {
        self.files_checked.load(Ordering::Relaxed)
    }
}

/// The stored status of the item with `id`, for tests and diagnostics.
///
/// # Errors
/// [`IndexError::Db`] when the query fails.
pub fn indexed_status(
    db: &Db,
    user_id: i64,
    id: i64,
) -> Result<Option<(String, String)>, IndexError> {
    Ok(db.with_conn(|c| {
        c.query_row(
            "SELECT stem, status FROM agenda_items WHERE user_id = ?1 AND id = ?2",
            params![user_id, id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use elroy_core::FixedClock;
    use elroy_db::format_db_time;

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
        // A file gone at a directory check is marked deleted at the clock's time too.
        let empty = tempfile::tempdir().unwrap();
        index.begin(empty.path(), "agenda/", true).unwrap();
        assert_eq!(updated_at(&db, user, c.id), format_db_time(fixed));
        assert_eq!(
            indexed_status(&db, user, c.id).unwrap().map(|s| s.1),
            Some("deleted".to_owned())
        );
    }
}
