//! The index sync (`docs/formats.md#memory-index-sync`, as elroy overrides it): memory files
//! written by Elroy, an editor or another process are picked up without a look at every file.
//!
//! - **Directories.** `memory_dirs` keeps the stat signature (mtime, ctime, inode) of `memories/`
//!   and `archive/` at the listing that last covered them. A directory whose signature is
//!   unchanged is not listed at all ([`MemoryStore::sync_if_changed`]: two `stat`s and one
//!   query). A changed one is listed once, names and inode numbers only (no `stat` per file),
//!   and the listing is diffed against the index in SQL: a name without a row of the same inode
//!   is read, a row without a name has left the directory. A signature taken less than two
//!   seconds after the directory's mtime is not kept ("racy", as in git): the directory could
//!   change again within the file system's timestamp granularity without a visible change, so
//!   the next command lists it again. Elroy's own writes under the home lock carry a trusted
//!   signature forward (see ARCHITECTURE.md for the trade-off).
//! - **Files.** Each row keeps its file's stat signature (size, mtime, inode, ctime). The rows a
//!   query returns are checked by `stat` before the answer ([`MemoryStore::revalidate`]), and
//!   those whose signature changed are read again; so an edit in place is seen when a query
//!   returns the memory, or by a full check ([`MemoryStore::sync`], `elroy doctor`).
//! - **Unreadable files** are kept in `memory_unreadable` with their signature: every search
//!   names them, and they are read again only when their signature changes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use elroy_core::FileWarning;
use elroy_db::format_db_time;
pub(crate) use elroy_markdown::wall_clock_ns;
use elroy_markdown::{Document, FileStamp, HomeLock, RACY_NS, Value};
use jiff::Timestamp;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::model::{Memory, MemorySource, sources_from_json, sources_to_json};
use crate::store::{md5_hex, render_memory, set_fts};
use crate::{MemoryError, MemoryStore};

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Files read and (re-)indexed.
    pub indexed: usize,
    /// Index rows whose searchable text or active state changed (new, edited, deactivated or
    /// back): `0` when every file read again held what the index had (a search need not rank
    /// again).
    pub changed: usize,
    /// Ids of memories that became inactive because their file left `memories/`; the caller
    /// unpins them from the context.
    pub deactivated: Vec<i64>,
    /// Files skipped or changed with a warning (invalid front matter, duplicate ids, new ids),
    /// one per file: show them with [`elroy_core::summarize_warnings`].
    pub warnings: Vec<FileWarning>,
    /// `(display path, reason)` of each file in `memories/` that could not be read in this sync
    /// (it was skipped; a search names it: [`MemoryStore::unreadable_files`]).
    pub unreadable: Vec<(String, String)>,
}

/// An index row with its scan state.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) id: i64,
    name: String,
    pub(crate) file_name: String,
    is_active: bool,
    size: Option<i64>,
    mtime: Option<i64>,
    ino: Option<i64>,
    ctime: Option<i64>,
    md5: String,
}

const ROW_COLUMNS: &str =
    "id, name, file_name, is_active, file_size, file_mtime_ns, text_md5, file_ino, file_ctime_ns";

fn row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        id: r.get(0)?,
        name: r.get(1)?,
        file_name: r.get(2)?,
        is_active: r.get(3)?,
        size: r.get(4)?,
        mtime: r.get(5)?,
        md5: r.get(6)?,
        ino: r.get(7)?,
        ctime: r.get(8)?,
    })
}

impl Row {
    /// Whether `sig` is the signature this row recorded (a row without an inode was racy when
    /// recorded and never matches).
    fn matches(&self, sig: Option<Signature>) -> bool {
        let Some(sig) = sig else { return false };
        self.ino.is_some()
            && self.size == Some(sig.0)
            && self.mtime == Some(sig.1)
            && self.ino == Some(sig.2)
            && self.ctime == Some(sig.3)
    }
}

/// The kinds of [`FileWarning`] a sync reports.
pub const UNREADABLE_MEMORY_FILES: &str = "memory files could not be read and were skipped";
/// See [`UNREADABLE_MEMORY_FILES`].
pub const NO_MEMORY_ID: &str = "memory files had no id; ids were assigned";
/// See [`UNREADABLE_MEMORY_FILES`].
pub const DUPLICATE_MEMORY_ID: &str =
    "memory files had an id already in use; new ids were assigned";
/// See [`UNREADABLE_MEMORY_FILES`].
pub const DUPLICATE_ARCHIVED_ID: &str =
    "archived memory files had an id already in use and were skipped";

/// A file's stat signature: size, mtime (ns), inode, ctime (ns). A same-size edit, an mtime set
/// back and a file replaced by `git checkout` each change at least one of them.
pub(crate) type Signature = (i64, i64, i64, i64);

pub(crate) fn signature(path: &Path) -> Option<Signature> {
    let stamp = FileStamp::read(path)?;
    Some((stamp.size, stamp.mtime_ns, stamp.ino, stamp.ctime_ns))
}

/// The signature to store: a file changed within the last two seconds (by the wall clock) may
/// change again without a visible change of its stamps ("racy", as in git), so its inode is not
/// stored and the next check reads it again.
pub(crate) fn stored_signature(sig: Signature, now_ns: i64) -> (i64, i64, Option<i64>, i64) {
    let racy = now_ns.saturating_sub(sig.1) < RACY_NS;
    (sig.0, sig.1, (!racy).then_some(sig.2), sig.3)
}

/// A directory's stat signature: mtime (ns), ctime (ns), inode; [`MISSING_DIR`] when it does not
/// exist.
pub(crate) type DirSig = (i64, i64, i64);

/// The signature of a directory that does not exist.
const MISSING_DIR: DirSig = (-1, -1, -1);

fn dir_signature(path: &Path) -> DirSig {
    match signature(path) {
        Some((_, mtime, ino, ctime)) if path.is_dir() => (mtime, ctime, ino),
        _ => MISSING_DIR,
    }
}

/// Whether the files `a` and `b` both exist and hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> bool {
    matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
}

/// The two directories of the store: `memories/` (file names without a prefix) and its
/// `archive/` (file names `archive/…`).
pub(crate) const DIRS: [&str; 2] = ["", "archive/"];

/// A file to read and index.
struct Found {
    file_name: String,
    path: PathBuf,
    in_archive: bool,
}

/// The `*.md` files of `dir` (not hidden), with their inode numbers as the directory listing
/// gives them (no `stat` per file), sorted by name.
fn list_names(dir: &Path) -> Vec<(String, i64)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, i64)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".md") || name.starts_with('.') {
                return None;
            }
            // `file_type` comes from the listing on the usual file systems (no `stat`).
            if !e.file_type().ok()?.is_file() {
                return None;
            }
            #[cfg(unix)]
            let ino = {
                use std::os::unix::fs::DirEntryExt;
                e.ino() as i64
            };
            #[cfg(not(unix))]
            let ino = 0;
            Some((name, ino))
        })
        .collect();
    out.sort();
    out
}

/// What Elroy's database says about a memory id (`docs/formats.md#names-from-elroys-database`).
struct ElroyMemory {
    name: String,
    is_active: bool,
    sources: Vec<MemorySource>,
}

fn open_elroy_db(path: &Path) -> Option<rusqlite::Connection> {
    if !path.is_file() {
        return None;
    }
    let conn = rusqlite::Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    let has_table: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'memory'",
            [],
            |r| r.get(0),
        )
        .ok()?;
    (has_table > 0).then_some(conn)
}

fn elroy_lookup(conn: &rusqlite::Connection, id: i64) -> Option<ElroyMemory> {
    conn.query_row(
        "SELECT name, is_active, source_metadata FROM memory WHERE id = ?1",
        [id],
        |r| {
            Ok(ElroyMemory {
                name: r.get(0)?,
                is_active: r.get::<_, Option<bool>>(1)?.unwrap_or(false),
                sources: sources_from_json(&r.get::<_, Option<String>>(2)?.unwrap_or_default())
                    .into_iter()
                    .filter(|s| s.source_type == "Memory")
                    .collect(),
            })
        },
    )
    .optional()
    .ok()
    .flatten()
}

/// Whether an inactive row's file, now found in `memories/` (not `archive/`), came back there
/// (`docs/formats.md#memory-index-sync`): the row pointed into `archive/` (the file was moved back,
/// by hand or by `elroy undo`), or its file had left `memories/` (the last scan saw no file: no
/// scan state) and is here again. Such a memory is active again. An inactive row whose file stayed
/// in place (an Elroy memory imported as inactive, `docs/formats.md#names-from-elroys-database`)
/// stays inactive: elroy's row is authoritative.
fn came_back(row: &Row) -> bool {
    row.file_name.starts_with("archive/") || row.size.is_none() || row.mtime.is_none()
}

fn front_matter_id(doc: &Document) -> Option<i64> {
    match doc.front_matter.get("id")? {
        Value::Int(i) => Some(*i),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
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
    fn dir_path(&self, prefix: &str) -> PathBuf {
        if prefix.is_empty() {
            self.opts.memory_dir.clone()
        } else {
            self.archive_dir()
        }
    }

    /// The current signatures of `memories/` and `archive/`.
    pub(crate) fn dir_sigs(&self) -> [DirSig; 2] {
        DIRS.map(|prefix| dir_signature(&self.dir_path(prefix)))
    }

    /// The signatures recorded by the last listing of each directory (`None`: never listed, or
    /// listed while racy, or listed at another path).
    pub(crate) fn stored_dir_sigs(&self, c: &Connection) -> rusqlite::Result<[Option<DirSig>; 2]> {
        let mut out = [None, None];
        for (i, prefix) in DIRS.iter().enumerate() {
            let path = self.dir_path(prefix).to_string_lossy().into_owned();
            out[i] = c
                .prepare_cached(
                    "SELECT mtime_ns, ctime_ns, ino FROM memory_dirs
                     WHERE user_id = ?1 AND dir = ?2 AND path = ?3",
                )?
                .query_row(params![self.opts.user_id, prefix, path], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .optional()?;
        }
        Ok(out)
    }

    /// Records (or, with `None`, forgets) the signature of directory `prefix`.
    fn store_dir_sig(
        &self,
        c: &Connection,
        prefix: &str,
        sig: Option<DirSig>,
    ) -> rusqlite::Result<()> {
        match sig {
            Some((mtime, ctime, ino)) => {
                let path = self.dir_path(prefix).to_string_lossy().into_owned();
                c.prepare_cached(
                    "INSERT INTO memory_dirs (user_id, dir, path, mtime_ns, ctime_ns, ino)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(user_id, dir) DO UPDATE SET path = excluded.path,
                       mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, ino = excluded.ino",
                )?
                .execute(params![self.opts.user_id, prefix, path, mtime, ctime, ino])?;
            }
            None => {
                c.prepare_cached("DELETE FROM memory_dirs WHERE user_id = ?1 AND dir = ?2")?
                    .execute(params![self.opts.user_id, prefix])?;
            }
        }
        Ok(())
    }

    /// After Elroy's own write under the home lock (inside the transaction `c`): a directory
    /// whose signature was trusted just before the write (`before` equals the stored one) keeps
    /// being trusted with its new signature, so the next command lists nothing. A change another
    /// program makes in the same instant is then seen at the next listing or by a full check
    /// (ARCHITECTURE.md, "memory index").
    pub(crate) fn carry_dir_sigs(
        &self,
        c: &Connection,
        before: [DirSig; 2],
    ) -> rusqlite::Result<()> {
        let stored = self.stored_dir_sigs(c)?;
        let after = self.dir_sigs();
        for (i, prefix) in DIRS.iter().enumerate() {
            if stored[i] == Some(before[i]) && after[i] != before[i] {
                self.store_dir_sig(c, prefix, Some(after[i]))?;
            }
        }
        Ok(())
    }

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

    fn note_deactivated(&self, report: &SyncReport) {
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
        let user = self.opts.user_id;
        self.db.with_conn_mapped(|c| -> Result<SyncReport, MemoryError> {
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
                let dir = self.dir_path(prefix);
                let names = list_names(&dir);
                {
                    let mut insert = tx.prepare_cached(
                        "INSERT OR IGNORE INTO temp.memory_listing (dir, name, ino) VALUES (?1, ?2, ?3)",
                    )?;
                    for (name, ino) in &names {
                        insert.execute(params![prefix, name, ino])?;
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
                    let row = row_by_file(&tx, user, &file_name)?;
                    if row.as_ref().is_some_and(|r| r.matches(signature(&path))) {
                        continue;
                    }
                    found.push(Found {
                        file_name,
                        path,
                        in_archive: !prefix.is_empty(),
                    });
                }
                found.sort_by(|a, b| a.file_name.cmp(&b.file_name));
                candidates.extend(found);
                // Rows whose file left the directory (inactive ones once: their inode is
                // cleared, so a file that comes back is read again).
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
                gone.extend(
                    st.query_map(params![user, prefix], row_of)?
                        .collect::<rusqlite::Result<Vec<_>>>()?,
                );
                tx.execute(
                    &format!(
                        "DELETE FROM memory_unreadable WHERE user_id = ?1 AND {}
                           AND NOT EXISTS (SELECT 1 FROM temp.memory_listing l WHERE l.dir = ?2
                               AND l.name = substr(memory_unreadable.file_name, length(?2) + 1))",
                        in_dir("memory_unreadable")
                    ),
                    params![user, prefix],
                )?;
            }
            self.index_files(&tx, candidates, gone, &mut report, now, assign_ids)?;
            // Each listed directory's signature is kept when it did not change while it was
            // listed and indexed (an id written into a file changes it) and is not racy.
            let after = self.dir_sigs();
            for i in listed {
                let trusted = after[i] == before[i]
                    && (before[i] == MISSING_DIR || listed_at.saturating_sub(before[i].0) >= RACY_NS);
                self.store_dir_sig(&tx, DIRS[i], trusted.then_some(after[i]))?;
            }
            tx.execute_batch("DELETE FROM temp.memory_listing;")?;
            tx.commit()?;
            Ok(report)
        })
    }

    /// Checks the files of `memories` by `stat` (the rows a query is about to return) and reads
    /// again, under the home lock, those whose signature changed: edited in place, replaced, or
    /// gone (the row is deactivated). Returns `None` when every file was unchanged.
    ///
    /// # Errors
    /// [`MemoryError`] for lock, write and database failures.
    pub fn revalidate(
        &self,
        memories: &[Memory],
        now: Timestamp,
    ) -> Result<Option<SyncReport>, MemoryError> {
        let user = self.opts.user_id;
        let mut changed = Vec::new();
        for memory in memories {
            let row = self.db.with_conn(|c| row_by_id(c, user, memory.id))?;
            let Some(row) = row else { continue };
            if !row.matches(signature(&self.path_of(memory))) {
                changed.push(row);
            }
        }
        if changed.is_empty() {
            return Ok(None);
        }
        let report = self.reindex_rows(changed, now)?;
        self.note_deactivated(&report);
        Ok(Some(report))
    }

    /// Reads again the files of `rows` (those that exist) and deactivates the rows whose file is
    /// gone, under the home lock.
    fn reindex_rows(&self, rows: Vec<Row>, now: Timestamp) -> Result<SyncReport, MemoryError> {
        let _lock = HomeLock::acquire(&self.opts.elroy_home)?;
        self.db
            .with_conn_mapped(|c| -> Result<SyncReport, MemoryError> {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let mut report = SyncReport::default();
                let mut candidates = Vec::new();
                let mut gone = Vec::new();
                for row in rows {
                    let path = self.opts.memory_dir.join(&row.file_name);
                    if path.is_file() {
                        candidates.push(Found {
                            in_archive: row.file_name.starts_with("archive/"),
                            file_name: row.file_name.clone(),
                            path,
                        });
                    } else {
                        gone.push(row);
                    }
                }
                let before = self.dir_sigs();
                self.index_files(&tx, candidates, gone, &mut report, now, true)?;
                self.carry_dir_sigs(&tx, before)?;
                tx.commit()?;
                Ok(report)
            })
    }

    /// `(display path, reason)` of each file in `memories/` that could not be read when it was
    /// last looked at (invalid front matter, not UTF-8, unreadable), by file name. Such a file
    /// has no usable index row, so no search finds it, and it is named instead. Each is checked
    /// by `stat` first and read again when it changed (a person fixed it).
    ///
    /// # Errors
    /// [`MemoryError`] for database failures.
    pub fn unreadable_files_checked(
        &self,
        now: Timestamp,
    ) -> Result<Vec<(String, String)>, MemoryError> {
        let user = self.opts.user_id;
        let entries = self.unreadable_entries()?;
        let changed: Vec<&(String, String, String, Option<Signature>)> = entries
            .iter()
            .filter(|(file_name, _, _, sig)| {
                let now_sig = signature(&self.opts.memory_dir.join(file_name));
                sig.is_none() || now_sig != *sig
            })
            .collect();
        if changed.is_empty() {
            return Ok(entries.into_iter().map(|(_, s, r, _)| (s, r)).collect());
        }
        let files: Vec<Found> = changed
            .iter()
            .map(|(file_name, ..)| Found {
                file_name: file_name.clone(),
                path: self.opts.memory_dir.join(file_name),
                in_archive: false,
            })
            .collect();
        let report = {
            let _lock = HomeLock::acquire(&self.opts.elroy_home)?;
            self.db
                .with_conn_mapped(|c| -> Result<SyncReport, MemoryError> {
                    let tx =
                        c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                    let mut report = SyncReport::default();
                    let (present, missing): (Vec<Found>, Vec<Found>) =
                        files.into_iter().partition(|f| f.path.is_file());
                    for f in missing {
                        tx.execute(
                            "DELETE FROM memory_unreadable WHERE user_id = ?1 AND file_name = ?2",
                            params![user, f.file_name],
                        )?;
                    }
                    let before = self.dir_sigs();
                    self.index_files(&tx, present, Vec::new(), &mut report, now, true)?;
                    self.carry_dir_sigs(&tx, before)?;
                    tx.commit()?;
                    Ok(report)
                })?
        };
        self.note_deactivated(&report);
        Ok(self
            .unreadable_entries()?
            .into_iter()
            .map(|(_, s, r, _)| (s, r))
            .collect())
    }

    /// `(display path, reason)` of the unreadable files of `memories/` as last recorded, without
    /// a check.
    pub(crate) fn unreadable_recorded(&self) -> Result<Vec<(String, String)>, MemoryError> {
        Ok(self
            .unreadable_entries()?
            .into_iter()
            .map(|(_, s, r, _)| (s, r))
            .collect())
    }

    /// `(file name, display path, reason, stored signature)` of the unreadable files of
    /// `memories/`.
    #[allow(clippy::type_complexity)]
    fn unreadable_entries(
        &self,
    ) -> Result<Vec<(String, String, String, Option<Signature>)>, MemoryError> {
        Ok(self.db.with_conn(|c| {
            let mut st = c.prepare_cached(
                "SELECT file_name, shown, reason, file_size, file_mtime_ns, file_ino, file_ctime_ns
                 FROM memory_unreadable WHERE user_id = ?1 AND instr(file_name, '/') = 0
                 ORDER BY file_name",
            )?;
            st.query_map([self.opts.user_id], |r| {
                let sig = match (r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?) {
                    (Some(a), Some(b), Some(c), Some(d)) => Some((a, b, c, d)),
                    _ => None,
                };
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, sig))
            })?
            .collect()
        })?)
    }

    /// Reads `candidates` (in order: `memories/` files first, each directory by name) and
    /// indexes them, then deactivates the rows of `gone` (their file left) that no candidate
    /// took over. `assign_ids`: write a new id into files without one (or with a duplicate);
    /// otherwise they are left for the next sync.
    fn index_files(
        &self,
        tx: &Connection,
        candidates: Vec<Found>,
        gone: Vec<Row>,
        report: &mut SyncReport,
        now: Timestamp,
        assign_ids: bool,
    ) -> Result<(), MemoryError> {
        let user = self.opts.user_id;
        let wall = wall_clock_ns();
        let elroy = if candidates.is_empty() {
            None
        } else {
            self.opts.elroy_db_path.as_deref().and_then(open_elroy_db)
        };
        let mut max_id: i64 = tx.query_row(
            "SELECT coalesce(max(id), 0) FROM memories WHERE user_id = ?1",
            [user],
            |r| r.get(0),
        )?;
        let gone_ids: HashSet<i64> = gone.iter().map(|r| r.id).collect();
        let candidate_names: HashSet<String> =
            candidates.iter().map(|f| f.file_name.clone()).collect();

        // Pass 1: read and parse. Ids of rows kept as they are (their file is unreadable) are
        // claimed.
        let mut claimed: HashSet<i64> = HashSet::new();
        let mut previous_rows: Vec<Row> = Vec::new();
        let mut parsed: Vec<(Found, Document, Option<i64>)> = Vec::new();
        for f in candidates {
            let display = self.display(&f.path);
            let row = row_by_file(tx, user, &f.file_name)?;
            let doc = match elroy_markdown::read_text(&f.path, &display)
                .and_then(|text| Document::parse(&text, &display))
            {
                Ok(doc) => doc,
                Err(e) => {
                    report.warnings.push(FileWarning::new(
                        UNREADABLE_MEMORY_FILES,
                        display.clone(),
                        e.to_string(),
                    ));
                    let shown = e.file().map_or_else(|| display.clone(), str::to_owned);
                    if !f.in_archive {
                        report.unreadable.push((shown.clone(), e.reason()));
                    }
                    let sig = signature(&f.path).map(|s| stored_signature(s, wall));
                    tx.prepare_cached(
                        "INSERT INTO memory_unreadable (user_id, file_name, shown, reason,
                           file_size, file_mtime_ns, file_ino, file_ctime_ns)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                         ON CONFLICT(user_id, file_name) DO UPDATE SET shown = excluded.shown,
                           reason = excluded.reason, file_size = excluded.file_size,
                           file_mtime_ns = excluded.file_mtime_ns, file_ino = excluded.file_ino,
                           file_ctime_ns = excluded.file_ctime_ns",
                    )?
                    .execute(params![
                        user,
                        f.file_name,
                        shown,
                        e.reason(),
                        sig.map(|s| s.0),
                        sig.map(|s| s.1),
                        sig.and_then(|s| s.2),
                        sig.map(|s| s.3)
                    ])?;
                    if let Some(row) = row {
                        claimed.insert(row.id);
                    }
                    continue;
                }
            };
            tx.prepare_cached(
                "DELETE FROM memory_unreadable WHERE user_id = ?1 AND file_name = ?2",
            )?
            .execute(params![user, f.file_name])?;
            let id = front_matter_id(&doc);
            if let Some(id) = id {
                max_id = max_id.max(id);
            }
            if let Some(row) = row {
                previous_rows.push(row);
            }
            parsed.push((f, doc, id));
        }

        // Pass 2: assign ids, then index.
        for (f, mut doc, id) in parsed {
            let held_elsewhere = |id: i64| -> rusqlite::Result<bool> {
                if claimed.contains(&id) {
                    return Ok(true);
                }
                // An unchanged file elsewhere keeps its id.
                Ok(row_by_id(tx, user, id)?.is_some_and(|r| {
                    r.file_name != f.file_name
                        && r.size.is_some()
                        && !gone_ids.contains(&r.id)
                        && !candidate_names.contains(&r.file_name)
                        && self.opts.memory_dir.join(&r.file_name).is_file()
                }))
            };
            let id = match id {
                Some(id) if !held_elsewhere(id)? => id,
                Some(id) if f.in_archive => {
                    let display = self.display(&f.path);
                    // The archive name an update gives the old version before it writes the new
                    // one: a process killed in between leaves it beside the active file it
                    // copies (`docs/formats.md#multi-step-writes`). The update did not happen;
                    // the leftover goes.
                    if let Some(row) = row_by_id(tx, user, id)?
                        && row.is_active
                        && same_bytes(&f.path, &self.opts.memory_dir.join(&row.file_name))
                    {
                        elroy_markdown::remove_file(&f.path, &display)?;
                        continue;
                    }
                    report.warnings.push(FileWarning::new(
                        DUPLICATE_ARCHIVED_ID,
                        display.clone(),
                        format!("{display}: duplicate memory id in archive; skipped"),
                    ));
                    continue;
                }
                _ if !assign_ids => continue,
                other => {
                    max_id += 1;
                    let new_id = max_id;
                    doc.front_matter.insert("id", Value::Int(new_id));
                    let body = doc.raw_body.strip_prefix('\n').unwrap_or(&doc.raw_body);
                    let content = Document::render_with_body(&doc.front_matter, body, true);
                    let display = self.display(&f.path);
                    elroy_markdown::write_atomic(&f.path, content.as_bytes(), &display)?;
                    report.warnings.push(match other {
                        Some(old) => FileWarning::new(
                            DUPLICATE_MEMORY_ID,
                            display.clone(),
                            format!("{display}: duplicate memory id {old}; assigned id {new_id}"),
                        ),
                        None => FileWarning::new(
                            NO_MEMORY_ID,
                            display.clone(),
                            format!("{display}: no memory id; assigned id {new_id}"),
                        ),
                    });
                    new_id
                }
            };
            claimed.insert(id);
            let stamp = signature(&f.path).map(|s| stored_signature(s, wall));
            let (size, mtime, ino, ctime) = match stamp {
                Some((size, mtime, ino, ctime)) => (Some(size), Some(mtime), ino, Some(ctime)),
                None => (None, None, None, None),
            };
            let ts = format_db_time(now);
            report.indexed += 1;
            if let Some(row) = row_by_id(tx, user, id)? {
                let active = !f.in_archive && (row.is_active || came_back(&row));
                let rendering = render_memory(&row.name, Some(&doc.raw_body));
                let md5 = md5_hex(&rendering);
                tx.prepare_cached(
                    "UPDATE memories SET file_name = ?3, is_active = ?4, text_md5 = ?5,
                       file_size = ?6, file_mtime_ns = ?7, updated_at = ?8,
                       file_ino = ?9, file_ctime_ns = ?10
                     WHERE user_id = ?1 AND id = ?2",
                )?
                .execute(params![
                    user,
                    id,
                    f.file_name,
                    active,
                    md5,
                    size,
                    mtime,
                    ts,
                    ino,
                    ctime
                ])?;
                if row.is_active && !active {
                    report.deactivated.push(id);
                }
                if md5 != row.md5 || active != row.is_active {
                    report.changed += 1;
                    set_fts(
                        tx,
                        user,
                        id,
                        &row.name,
                        active.then_some(rendering.as_str()),
                    )?;
                }
            } else {
                let imported = elroy.as_ref().and_then(|c| elroy_lookup(c, id));
                let (name, active, sources) = match imported {
                    Some(e) => (e.name, e.is_active && !f.in_archive, e.sources),
                    None => {
                        let name = match doc.front_matter.get("name") {
                            Some(Value::String(s)) => s.clone(),
                            _ => Path::new(&f.file_name)
                                .file_stem()
                                .map(|s| s.to_string_lossy().replace('_', " "))
                                .unwrap_or_default(),
                        };
                        (name, !f.in_archive, Vec::new())
                    }
                };
                let name = elroy_markdown::normalize_name(&name).into_owned();
                let rendering = render_memory(&name, Some(&doc.raw_body));
                tx.prepare_cached(
                    "INSERT INTO memories (user_id, id, name, file_name, is_active, source_metadata,
                       text_md5, file_size, file_mtime_ns, created_at, updated_at,
                       file_ino, file_ctime_ns)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12)",
                )?
                .execute(params![
                    user,
                    id,
                    name,
                    f.file_name,
                    active,
                    sources_to_json(&sources),
                    md5_hex(&rendering),
                    size,
                    mtime,
                    ts,
                    ino,
                    ctime
                ])?;
                report.changed += 1;
                if active {
                    set_fts(tx, user, id, &name, Some(&rendering))?;
                }
            }
        }

        // Rows whose file is gone, and rows whose file now holds another id.
        for row in gone.iter().chain(&previous_rows) {
            if claimed.contains(&row.id) {
                continue;
            }
            // Another pass may have moved the row already (a file that left one directory for
            // the other): only a row still pointing at its old file is gone.
            let Some(current) = row_by_id(tx, user, row.id)? else {
                continue;
            };
            if current.file_name != row.file_name {
                continue;
            }
            if current.is_active {
                // The scan state is cleared: no file was seen, and a file that comes back with
                // this id is recognised as returning (`came_back`).
                tx.prepare_cached(
                    "UPDATE memories SET is_active = 0, file_size = NULL, file_mtime_ns = NULL,
                       file_ino = NULL, updated_at = ?3 WHERE user_id = ?1 AND id = ?2",
                )?
                .execute(params![user, row.id, format_db_time(now)])?;
                set_fts(tx, user, row.id, &row.name, None)?;
                report.deactivated.push(row.id);
                report.changed += 1;
            } else {
                tx.prepare_cached(
                    "UPDATE memories SET file_ino = NULL WHERE user_id = ?1 AND id = ?2",
                )?
                .execute(params![user, row.id])?;
            }
        }
        Ok(())
    }
}

/// The row of `file_name` (a row whose file is present first, then the lowest id).
fn row_by_file(c: &Connection, user: i64, file_name: &str) -> rusqlite::Result<Option<Row>> {
    c.prepare_cached(&format!(
        "SELECT {ROW_COLUMNS} FROM memories WHERE user_id = ?1 AND file_name = ?2
         ORDER BY file_size IS NULL, id LIMIT 1"
    ))?
    .query_row(params![user, file_name], row_of)
    .optional()
}

fn row_by_id(c: &Connection, user: i64, id: i64) -> rusqlite::Result<Option<Row>> {
    c.prepare_cached(&format!(
        "SELECT {ROW_COLUMNS} FROM memories WHERE user_id = ?1 AND id = ?2"
    ))?
    .query_row(params![user, id], row_of)
    .optional()
}

/// Whether a file named `file_name` (with its directory prefix, `archive/…` or none) would clash
/// with a file of the index or an unreadable file, ignoring ASCII case (D12); the file system
/// is asked by the caller for the exact name.
pub(crate) fn name_in_index(c: &Connection, user: i64, file_name: &str) -> rusqlite::Result<bool> {
    c.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM memories WHERE user_id = ?1
                          AND file_name = ?2 COLLATE NOCASE AND file_size IS NOT NULL)
             OR EXISTS (SELECT 1 FROM memory_unreadable WHERE user_id = ?1
                          AND file_name = ?2 COLLATE NOCASE)",
    )?
    .query_row(params![user, file_name], |r| r.get(0))
}

/// Every memory file that cannot be read (`elroy doctor`): `(display path, reason)` for each
/// `*.md` of `memory_dir` and its `archive/` that is not UTF-8, cannot be opened or has front
/// matter that does not parse, in file-name order. Read-only: it opens no database, takes no lock
/// and assigns no ids (a file without an id is not a problem: the next sync gives it one). Paths
/// are shown relative to `elroy_home`.
pub fn unreadable_memory_files(elroy_home: &Path, memory_dir: &Path) -> Vec<(String, String)> {
    let display = |path: &Path| match path.strip_prefix(elroy_home) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.display().to_string(),
    };
    let archive = memory_dir.join("archive");
    let files = list_names(memory_dir)
        .into_iter()
        .map(|(n, _)| memory_dir.join(n))
        .chain(
            list_names(&archive)
                .into_iter()
                .map(|(n, _)| archive.join(n)),
        );
    files
        .filter_map(|path| {
            let shown = display(&path);
            elroy_markdown::read_text(&path, &shown)
                .and_then(|text| Document::parse(&text, &shown))
                .err()
                .map(|e| (shown, e.to_string()))
        })
        .collect()
}

impl MemoryStore {
    /// The first free file name for `base` in directory `prefix` (`""` or `"archive/"`,
    /// `docs/formats.md#unique-paths`): `B.md`, `B-2.md`, … that neither the file system (exact
    /// name) nor the index (ignoring case) has. Without a trusted signature of the directory, the
    /// directory is listed ([`elroy_markdown::unique_path`]). `except` (a file name of the
    /// directory) does not count as taken on the file system: the file a memory update is about
    /// to replace.
    pub(crate) fn free_path(
        &self,
        c: &Connection,
        prefix: &str,
        base: &str,
        except: Option<&str>,
    ) -> Result<PathBuf, MemoryError> {
        let dir = self.dir_path(prefix);
        let i = DIRS.iter().position(|p| *p == prefix).unwrap_or(0);
        let trusted = self.stored_dir_sigs(c)?[i] == Some(dir_signature(&dir));
        if !trusted {
            return Ok(elroy_markdown::unique_path(
                &dir,
                base,
                except,
                &self.display(&dir),
            )?);
        }
        let mut failure = None;
        let name = elroy_markdown::unique_file_name(base, |candidate| {
            if except != Some(candidate) && std::fs::symlink_metadata(dir.join(candidate)).is_ok() {
                return true;
            }
            match name_in_index(c, self.opts.user_id, &format!("{prefix}{candidate}")) {
                Ok(taken) => taken,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        });
        if let Some(e) = failure {
            return Err(e.into());
        }
        Ok(dir.join(name))
    }
}
