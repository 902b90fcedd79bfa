//! The memory index and how it follows the files (`docs/formats.md#memory-index-sync`, as elroy
//! overrides it): memory files written by Elroy, an editor or another process are picked up
//! without a look at every file. The stat signature, the `*.md` rule (a symlink is never a memory
//! file) and the listing are elroy-markdown's directory index ([`elroy_markdown::FileStamp`],
//! [`elroy_markdown::list_md_dir`]), shared with the agenda and the versioned home; the tables
//! that keep them (`memories`, `memory_dirs`, `memory_unreadable`) are this crate's.
//!
//! - [`dirs`]: the directories' signatures and free file names; [`scan`]: the listing diff and
//!   the syncs; [`files`]: reading and indexing files; [`check`]: the checks of single rows and
//!   of unreadable files.
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

use std::path::Path;

use elroy_core::FileWarning;
use elroy_markdown::{FileStamp, wall_clock_ns};
use rusqlite::{Connection, OptionalExtension, params};

mod check;
mod dirs;
mod files;
mod scan;

pub use check::unreadable_memory_files;
pub(crate) use dirs::DIRS;

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
    fn matches(&self, sig: Option<FileStamp>) -> bool {
        let Some(sig) = sig else { return false };
        self.ino.is_some()
            && self.size == Some(sig.size)
            && self.mtime == Some(sig.mtime_ns)
            && self.ino == Some(sig.ino)
            && self.ctime == Some(sig.ctime_ns)
    }
}

/// A memory file's signature as its row keeps it (columns `file_size`, `file_mtime_ns`,
/// `file_ino`, `file_ctime_ns`; sizes in bytes, times in ns since the epoch). A file changed
/// within the last two seconds by the wall clock is racy ([`FileStamp::is_racy`]): its inode is
/// not kept, so the row matches no signature and the next check reads the file again; size and
/// mtime stay, as they say a file was seen (see `files::came_back`). Every field is `None` when
/// there is no regular file at the path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StampColumns {
    pub(crate) size: Option<i64>,
    pub(crate) mtime_ns: Option<i64>,
    pub(crate) ino: Option<i64>,
    pub(crate) ctime_ns: Option<i64>,
}

impl StampColumns {
    /// The columns for the file at `path` now.
    pub(crate) fn of_file(path: &Path) -> StampColumns {
        StampColumns::of(FileStamp::of_file(path), wall_clock_ns())
    }

    /// The columns for `stamp` at the wall-clock time `now_ns`.
    pub(crate) fn of(stamp: Option<FileStamp>, now_ns: i64) -> StampColumns {
        match stamp {
            Some(s) => StampColumns {
                size: Some(s.size),
                mtime_ns: Some(s.mtime_ns),
                ino: s.trusted(now_ns).map(|s| s.ino),
                ctime_ns: Some(s.ctime_ns),
            },
            None => StampColumns::default(),
        }
    }

    /// The signature the columns stand for, when every one is set (a trusted signature).
    fn stamp(self) -> Option<FileStamp> {
        Some(FileStamp {
            size: self.size?,
            mtime_ns: self.mtime_ns?,
            ino: self.ino?,
            ctime_ns: self.ctime_ns?,
        })
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
