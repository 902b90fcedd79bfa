//! The syncs: which directories changed since their last listing, the listing diffed against
//! the index (in SQL: at 100,000 memories the rows are never loaded), and the full check.

use std::collections::HashSet;
use std::path::PathBuf;

use elroy_markdown::{FileStamp, HomeLock, list_md_dir, wall_clock_ns};
use jiff::Timestamp;
use rusqlite::{Connection, params};

use super::dirs::MISSING_DIR;
use super::{DIRS, ROW_COLUMNS, Row, SyncReport, row_by_file, row_of};
use crate::{MemoryError, MemoryStore};

/// A file to read and index.
pub(super) struct Found {
    pub(super) file_name: String,
    pub(super) path: PathBuf,
    pub(super) in_archive: bool,
}

/// The SQL condition "`file_name` (of table alias `t`) is in the directory of prefix `?2`":
/// no `/` for `memories/`, the `archive/` prefix for the archive.
fn in_dir(alias: &str) -> String {
    format!(
        "((?2 = '' AND instr({alias}.file_name, '/') = 0)
          OR (?2 <> '' AND substr({alias}.file_name, 1, length(?2)) = ?2
              AND instr(substr({alias}.file_name, length(?2) + 1), '/') = 0))"
    )
}

/// How [`MemoryStore::scan`] decides which listed files to read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Names without a row (or an unreadable entry) of the same inode; a `stat` confirms them.
    Listing,
    /// Every listed file whose `stat` signature differs from its row's; unreadable files again.
    Full,
}

impl MemoryStore {
    /// Brings the index up to date with a full check (`docs/formats.md#memory-index-sync`): every
    /// file of `memories/` and `archive/` is `stat`ed and read when its signature changed; new
    /// files get rows (names from Elroy's database for the DEFAULT home, else the front-matter
    /// `name` key, else the stem with `_` → space), files without an `id` (or with a duplicate one)
    /// get a new id written into their front matter, rows whose file left `memories/` become
    /// inactive. Runs under the home lock in one `BEGIN IMMEDIATE` transaction. Commands use the
    /// cheaper
    /// [`MemoryStore::sync_if_changed`]; this one is for a person's check of the whole home.
    ///
    /// # Errors
    /// [`MemoryError`] for lock, write and database failures.
    pub fn sync(&self, now: Timestamp) -> Result<SyncReport, MemoryError> {
        let report = self.scan(now, Mode::Full, true, true)?;
        self.note_deactivated(&report);
        Ok(report)
    }

    /// The full check of `elroy doctor`: as [`MemoryStore::sync`] (every file `stat`ed, changed
    /// ones read and indexed: edits in place no query has touched yet), except that no file is
    /// written: files without an id, or with one already in use, are left for the next sync.
    ///
    /// # Errors
    /// As [`MemoryStore::sync`].
    pub fn check_all(&self, now: Timestamp) -> Result<SyncReport, MemoryError> {
        let report = self.scan(now, Mode::Full, true, false)?;
        self.note_deactivated(&report);
        Ok(report)
    }

    /// The sync of every command (`docs/formats.md#memory-index-sync` as elroy overrides it):
    /// when the signature of `memories/` or `archive/` differs from the one recorded at their last
    /// listing, each changed directory is listed (names only) and the listing is diffed against
    /// the index: new and replaced files (another inode: an editor's rename, `git checkout`) are
    /// read, rows whose file left are deactivated. Returns `None` when no directory changed
    /// (two `stat`s and one query). A file edited in place is seen when a query returns it
    /// ([`MemoryStore::revalidate`]) or by [`MemoryStore::sync`].
    ///
    /// # Errors
    /// As [`MemoryStore::sync`].
    pub fn sync_if_changed(&self, now: Timestamp) -> Result<Option<SyncReport>, MemoryError> {
        let current = self.dir_sigs();
        let stored = self.db.with_conn(|c| self.stored_dir_sigs(c))?;
        if (0..DIRS.len()).all(|i| stored[i] == Some(current[i])) {
            return Ok(None);
        }
        let report = self.scan(now, Mode::Listing, false, true)?;
        self.note_deactivated(&report);
        Ok(Some(report))
    }

    pub(super) fn note_deactivated(&self, report: &SyncReport) {
        if !report.deactivated.is_empty() {
            self.deactivated
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(&report.deactivated);
        }
    }

    /// The ids of memories deactivated by syncs and checks of this store (and its clones) since
    /// the last call: their files left `memories/`; the caller unpins them.
    pub fn take_deactivated(&self) -> Vec<i64> {
        std::mem::take(&mut *self.deactivated.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Lists the directories (every one with `all`, else those whose signature changed) and
    /// indexes what the listing shows ([`Mode`]).
    fn scan(
        &self,
        now: Timestamp,
        mode: Mode,
        all: bool,
        assign_ids: bool,
    ) -> Result<SyncReport, MemoryError> {
        let _lock = HomeLock::acquire(&self.opts.elroy_home)?;
        self.db
            .with_conn_mapped(|c| -> Result<SyncReport, MemoryError> {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let mut report = SyncReport::default();
                let stored = self.stored_dir_sigs(&tx)?;
                let before = self.dir_sigs();
                let listed_at = wall_clock_ns();
                tx.execute_batch(
                    "CREATE TEMP TABLE IF NOT EXISTS memory_listing (
                   dir TEXT NOT NULL, name TEXT NOT NULL, ino INTEGER NOT NULL,
                   PRIMARY KEY (dir, name));
                 DELETE FROM temp.memory_listing;",
                )?;
                let mut listed = Vec::new();
                let mut candidates: Vec<Found> = Vec::new();
                let mut gone: Vec<Row> = Vec::new();
                for (i, prefix) in DIRS.iter().enumerate() {
                    if !all && stored[i] == Some(before[i]) {
                        continue;
                    }
                    listed.push(i);
                    let (found, left) = self.diff_dir(&tx, prefix, mode)?;
                    candidates.extend(found);
                    gone.extend(left);
                }
                self.index_files(&tx, candidates, gone, &mut report, now, assign_ids)?;
                // Each listed directory's signature is kept when it did not change while it was
                // listed and indexed (an id written into a file changes it) and is not racy.
                let after = self.dir_sigs();
                for i in listed {
                    let trusted = after[i] == before[i]
                        && (before[i] == MISSING_DIR || !before[i].is_racy(listed_at));
                    self.store_dir_sig(&tx, DIRS[i], trusted.then_some(after[i]))?;
                }
                tx.execute_batch("DELETE FROM temp.memory_listing;")?;
                tx.commit()?;
                Ok(report)
            })
    }

    /// Lists the directory of `prefix` into `temp.memory_listing` and diffs it against the index
    /// in SQL: the files to read ([`Mode`]), in name order, and the rows whose file left it
    /// ([`left_dir`]).
    fn diff_dir(
        &self,
        tx: &Connection,
        prefix: &str,
        mode: Mode,
    ) -> Result<(Vec<Found>, Vec<Row>), MemoryError> {
        let user = self.opts.user_id;
        let dir = self.dir_path(prefix);
        let names = list_md_dir(&dir, &self.display(&dir))?.files;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR IGNORE INTO temp.memory_listing (dir, name, ino) VALUES (?1, ?2, ?3)",
            )?;
            for (name, ino) in &names {
                // Off Unix the listing has no inodes; the rows keep 0 there.
                insert.execute(params![prefix, name, ino.unwrap_or(0)])?;
            }
        }
        // Names with no row (or unreadable entry) of the same inode.
        let fresh: Vec<String> = {
            let mut st = tx.prepare_cached(
                "SELECT l.name FROM temp.memory_listing l
                 WHERE l.dir = ?2
                   AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.user_id = ?1
                         AND m.file_name = ?2 || l.name AND m.file_ino = l.ino)
                   AND (?3 OR NOT EXISTS (SELECT 1 FROM memory_unreadable u
                         WHERE u.user_id = ?1 AND u.file_name = ?2 || l.name
                           AND u.file_ino = l.ino))
                 ORDER BY l.name",
            )?;
            st.query_map(params![user, prefix, mode == Mode::Full], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        let fresh_set: HashSet<&str> = fresh.iter().map(String::as_str).collect();
        let mut check: Vec<String> = Vec::new();
        if mode == Mode::Full {
            check.extend(
                names
                    .iter()
                    .filter(|(n, _)| !fresh_set.contains(n.as_str()))
                    .map(|(n, _)| n.clone()),
            );
        }
        // A name whose inode differs may still be the same file (file systems whose
        // listing reports other inode numbers than `stat`): its full signature decides.
        let mut found: Vec<Found> = Vec::new();
        for name in fresh.iter().chain(&check) {
            let file_name = format!("{prefix}{name}");
            let path = dir.join(name);
            let row = row_by_file(tx, user, &file_name)?;
            if row
                .as_ref()
                .is_some_and(|r| r.matches(FileStamp::of_file(&path)))
            {
                continue;
            }
            found.push(Found {
                file_name,
                path,
                in_archive: !prefix.is_empty(),
            });
        }
        found.sort_by(|a, b| a.file_name.cmp(&b.file_name));
        let gone = left_dir(tx, user, prefix)?;
        Ok((found, gone))
    }
}

/// The rows of directory `prefix` whose file is not in `temp.memory_listing` (inactive ones once:
/// their inode is cleared, so a file that comes back is read again); unreadable-file entries
/// whose file left are dropped.
fn left_dir(tx: &Connection, user: i64, prefix: &str) -> rusqlite::Result<Vec<Row>> {
    let mut st = tx.prepare_cached(&format!(
        "SELECT {} FROM memories m
         WHERE m.user_id = ?1 AND {} AND (m.is_active = 1 OR m.file_ino IS NOT NULL)
           AND NOT EXISTS (SELECT 1 FROM temp.memory_listing l
               WHERE l.dir = ?2 AND l.name = substr(m.file_name, length(?2) + 1))",
        ROW_COLUMNS
            .split(", ")
            .map(|c| format!("m.{c}"))
            .collect::<Vec<_>>()
            .join(", "),
        in_dir("m"),
    ))?;
    let gone = st
        .query_map(params![user, prefix], row_of)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    tx.execute(
        &format!(
            "DELETE FROM memory_unreadable WHERE user_id = ?1 AND {}
               AND NOT EXISTS (SELECT 1 FROM temp.memory_listing l WHERE l.dir = ?2
                   AND l.name = substr(memory_unreadable.file_name, length(?2) + 1))",
            in_dir("memory_unreadable")
        ),
        params![user, prefix],
    )?;
    Ok(gone)
}
