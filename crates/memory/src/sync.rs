//! The index sync (`formats.md` §6.3): memory files written by Elroy, an editor or another process
//! are picked up; only files whose size or modification time changed are read.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use elroy_core::FileWarning;
use elroy_db::format_db_time;
use elroy_markdown::{Document, HomeLock, Value};
use jiff::Timestamp;
use rusqlite::{OpenFlags, OptionalExtension, params};

use crate::model::{MemorySource, sources_from_json, sources_to_json};
use crate::store::{file_stamp, md5_hex, render_memory, set_fts};
use crate::{MemoryError, MemoryStore};

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Files read and (re-)indexed.
    pub indexed: usize,
    /// Ids of memories that became inactive because their file left `memories/`; the caller
    /// unpins them from the context.
    pub deactivated: Vec<i64>,
    /// Files skipped or changed with a warning (invalid front matter, duplicate ids, new ids),
    /// one per file: show them with [`elroy_core::summarize_warnings`].
    pub warnings: Vec<FileWarning>,
    /// `(display path, reason)` of each file in `memories/` that could not be read (it was
    /// skipped; a search names it: [`MemoryStore::unreadable_files`]).
    pub unreadable: Vec<(String, String)>,
}

struct Row {
    id: i64,
    name: String,
    file_name: String,
    is_active: bool,
    size: Option<i64>,
    mtime: Option<i64>,
    ino: Option<i64>,
    ctime: Option<i64>,
    md5: String,
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
type Signature = (i64, i64, i64, i64);

fn signature(path: &Path) -> Option<Signature> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
        Some((
            i64::try_from(meta.size()).unwrap_or(i64::MAX),
            ns(meta.mtime(), meta.mtime_nsec()),
            meta.ino() as i64,
            ns(meta.ctime(), meta.ctime_nsec()),
        ))
    }
    #[cfg(not(unix))]
    {
        let (size, mtime) = file_stamp(path)?;
        Some((size, mtime, 0, mtime))
    }
}

/// The signature to store: a file changed within the last two seconds (by the wall clock) may
/// change again without a visible change of its stamps ("racy", as in git), so its inode is not
/// stored and the next sync reads it again.
fn stored_signature(sig: Signature, now_ns: i64) -> (i64, i64, Option<i64>, i64) {
    let racy = now_ns.saturating_sub(sig.1) < 2_000_000_000;
    (sig.0, sig.1, (!racy).then_some(sig.2), sig.3)
}

fn wall_clock_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

struct Found {
    file_name: String,
    path: PathBuf,
    in_archive: bool,
    stamp: Option<Signature>,
}

fn list_md(dir: &Path, prefix: &str) -> Vec<Found> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Found> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_file = e.file_type().ok()?.is_file();
            (is_file && name.ends_with(".md") && !name.starts_with('.')).then(|| {
                let path = e.path();
                Found {
                    file_name: format!("{prefix}{name}"),
                    stamp: signature(&path),
                    path,
                    in_archive: !prefix.is_empty(),
                }
            })
        })
        .collect();
    out.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    out
}

/// What Elroy's database says about a memory id (`formats.md` §6.3.1).
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
/// (`formats.md` §6.3): the row pointed into `archive/` (the file was moved back, by hand or by
/// `elroy undo`), or its file had left `memories/` (the last scan saw no file: no scan state) and
/// is here again. Such a memory is active again. An inactive row whose file stayed in place (an
/// Elroy memory imported as inactive, §6.3.1) stays inactive: elroy's row is authoritative.
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

impl MemoryStore {
    /// Re-scans the memory directory and its `archive/` and brings the index up to date
    /// (`formats.md` §6.3): new files get rows (names from Elroy's database for the DEFAULT home,
    /// else the front-matter `name` key, else the stem with `_` → space), files without an `id`
    /// (or with a duplicate one) get a new id written into their front matter, changed files are
    /// re-indexed, rows whose file left `memories/` become inactive. Runs under the home lock in
    /// one `BEGIN IMMEDIATE` transaction.
    ///
    /// # Errors
    /// [`MemoryError`] for lock, write and database failures.
    pub fn sync(&self, now: Timestamp) -> Result<SyncReport, MemoryError> {
        let report = self.sync_all(now)?;
        if let Ok(mut unreadable) = self.unreadable.lock() {
            unreadable.clone_from(&report.unreadable);
        }
        // Taken after the scan, which may itself write ids into files. A directory changed within
        // the last two seconds may change again within the file system's timestamp granularity
        // without a visible mtime change ("racy" stamps, as in git), so it is not trusted.
        let stamps = self.dir_stamps();
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(i64::MAX, |d| {
                i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
            });
        let racy = [stamps.0, stamps.1]
            .into_iter()
            .flatten()
            .any(|mtime| now_ns.saturating_sub(mtime) < 2_000_000_000);
        *self.last_scan.lock().unwrap_or_else(|e| e.into_inner()) = (!racy).then_some(stamps);
        Ok(report)
    }

    /// The in-session sync (`formats.md` §6.3): runs [`MemoryStore::sync`] only when the
    /// modification time of the memory directory (or its `archive/`) changed since the last
    /// sync, so a file added, removed or renamed is seen at once; a file edited in place is seen
    /// at the next session start. Returns `None` when nothing was scanned.
    ///
    /// # Errors
    /// As [`MemoryStore::sync`].
    pub fn sync_if_changed(&self, now: Timestamp) -> Result<Option<SyncReport>, MemoryError> {
        let stamps = self.dir_stamps();
        let last = *self.last_scan.lock().unwrap_or_else(|e| e.into_inner());
        if last == Some(stamps) {
            return Ok(None);
        }
        self.sync(now).map(Some)
    }

    fn dir_stamps(&self) -> crate::store::DirStamps {
        (
            file_stamp(&self.opts.memory_dir).map(|s| s.1),
            file_stamp(&self.archive_dir()).map(|s| s.1),
        )
    }

    fn sync_all(&self, now: Timestamp) -> Result<SyncReport, MemoryError> {
        let _lock = HomeLock::acquire(&self.opts.elroy_home)?;
        let user = self.opts.user_id;
        let mut report = SyncReport::default();
        let mut files = list_md(&self.opts.memory_dir, "");
        files.extend(list_md(&self.archive_dir(), "archive/"));
        let elroy = self.opts.elroy_db_path.as_deref().and_then(open_elroy_db);
        let wall = wall_clock_ns();
        self.db.with_conn_mapped(|c| -> Result<(), MemoryError> {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let rows: Vec<Row> = {
                let mut st = tx.prepare(
                    "SELECT id, name, file_name, is_active, file_size, file_mtime_ns, text_md5,
                       file_ino, file_ctime_ns
                     FROM memories WHERE user_id = ?1",
                )?;
                st.query_map([user], |r| {
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
                })?
                .collect::<rusqlite::Result<_>>()?
            };
            let by_id: HashMap<i64, &Row> = rows.iter().map(|r| (r.id, r)).collect();
            let by_file: HashMap<&str, &Row> =
                rows.iter().map(|r| (r.file_name.as_str(), r)).collect();
            let mut max_id = rows.iter().map(|r| r.id).max().unwrap_or(0);

            // Pass 1: unchanged files keep their row; changed or new files are parsed.
            let mut seen: HashSet<i64> = HashSet::new();
            let mut parsed: Vec<(Found, Document, Option<i64>)> = Vec::new();
            for f in files {
                if let Some(row) = by_file.get(f.file_name.as_str())
                    && let Some(stamp) = f.stamp
                    && Some(stamp.0) == row.size
                    && Some(stamp.1) == row.mtime
                    && Some(stamp.2) == row.ino
                    && Some(stamp.3) == row.ctime
                {
                    seen.insert(row.id);
                    continue;
                }
                let display = self.display(&f.path);
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
                        if !f.in_archive {
                            report.unreadable.push((
                                e.file().map_or_else(|| display.clone(), str::to_owned),
                                e.reason(),
                            ));
                        }
                        if let Some(row) = by_file.get(f.file_name.as_str()) {
                            seen.insert(row.id);
                        }
                        continue;
                    }
                };
                let id = front_matter_id(&doc);
                if let Some(id) = id {
                    max_id = max_id.max(id);
                }
                parsed.push((f, doc, id));
            }

            // Pass 2: assign ids, then index.
            for (f, mut doc, id) in parsed {
                let id = match id {
                    Some(id) if !seen.contains(&id) => id,
                    Some(_) if f.in_archive => {
                        let display = self.display(&f.path);
                        report.warnings.push(FileWarning::new(
                            DUPLICATE_ARCHIVED_ID,
                            display.clone(),
                            format!("{display}: duplicate memory id in archive; skipped"),
                        ));
                        continue;
                    }
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
                seen.insert(id);
                let stamp = signature(&f.path)
                    .or(f.stamp)
                    .map(|s| stored_signature(s, wall));
                let (size, mtime, ino, ctime) = match stamp {
                    Some((size, mtime, ino, ctime)) => (Some(size), Some(mtime), ino, Some(ctime)),
                    None => (None, None, None, None),
                };
                let ts = format_db_time(now);
                report.indexed += 1;
                if let Some(row) = by_id.get(&id) {
                    let active = !f.in_archive && (row.is_active || came_back(row));
                    let rendering = render_memory(&row.name, Some(&doc.raw_body));
                    let md5 = md5_hex(&rendering);
                    tx.execute(
                        "UPDATE memories SET file_name = ?3, is_active = ?4, text_md5 = ?5,
                           file_size = ?6, file_mtime_ns = ?7, updated_at = ?8,
                           file_ino = ?9, file_ctime_ns = ?10
                         WHERE user_id = ?1 AND id = ?2",
                        params![user, id, f.file_name, active, md5, size, mtime, ts, ino, ctime],
                    )?;
                    if row.is_active && !active {
                        report.deactivated.push(id);
                    }
                    if md5 != row.md5 || active != row.is_active {
                        set_fts(&tx, user, id, &row.name, active.then_some(rendering.as_str()))?;
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
                    tx.execute(
                        "INSERT INTO memories (user_id, id, name, file_name, is_active, source_metadata,
                           text_md5, file_size, file_mtime_ns, created_at, updated_at,
                           file_ino, file_ctime_ns)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12)",
                        params![
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
                        ],
                    )?;
                    if active {
                        set_fts(&tx, user, id, &name, Some(&rendering))?;
                    }
                }
            }

            // Rows whose file is gone.
            for row in &rows {
                if !seen.contains(&row.id) && row.is_active {
                    // The scan state is cleared: no file was seen, and a file that comes back
                    // with this id is recognised as returning (`came_back`).
                    tx.execute(
                        "UPDATE memories SET is_active = 0, file_size = NULL, file_mtime_ns = NULL,
                           updated_at = ?3 WHERE user_id = ?1 AND id = ?2",
                        params![user, row.id, format_db_time(now)],
                    )?;
                    set_fts(&tx, user, row.id, &row.name, None)?;
                    report.deactivated.push(row.id);
                }
            }
            tx.commit()?;
            Ok(())
        })?;
        Ok(report)
    }
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
    let mut files = list_md(memory_dir, "");
    files.extend(list_md(&memory_dir.join("archive"), "archive/"));
    files
        .into_iter()
        .filter_map(|f| {
            let shown = display(&f.path);
            elroy_markdown::read_text(&f.path, &shown)
                .and_then(|text| Document::parse(&text, &shown))
                .err()
                .map(|e| (shown, e.to_string()))
        })
        .collect()
}
