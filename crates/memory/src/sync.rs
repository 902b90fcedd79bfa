//! The index sync (`formats.md` §6.3): memory files written by Elroy, an editor or another process
//! are picked up; only files whose size or modification time changed are read.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

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
    /// Files skipped or changed with a warning (invalid front matter, duplicate ids, new ids).
    pub warnings: Vec<String>,
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
    md5: String,
}

struct Found {
    file_name: String,
    path: PathBuf,
    in_archive: bool,
    stamp: Option<(i64, i64)>,
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
                    stamp: file_stamp(&path),
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
        self.db.with_conn_mapped(|c| -> Result<(), MemoryError> {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let rows: Vec<Row> = {
                let mut st = tx.prepare(
                    "SELECT id, name, file_name, is_active, file_size, file_mtime_ns, text_md5
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
                    && f.stamp.is_some()
                    && f.stamp == row.size.zip(row.mtime)
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
                        report.warnings.push(e.to_string());
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
                        report.warnings.push(format!(
                            "{}: duplicate memory id in archive; skipped",
                            self.display(&f.path)
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
                            Some(old) => format!("{display}: duplicate memory id {old}; assigned id {new_id}"),
                            None => format!("{display}: no memory id; assigned id {new_id}"),
                        });
                        new_id
                    }
                };
                seen.insert(id);
                let stamp = file_stamp(&f.path).or(f.stamp);
                let (size, mtime) = stamp.unzip();
                let ts = format_db_time(now);
                report.indexed += 1;
                if let Some(row) = by_id.get(&id) {
                    let active = !f.in_archive && (row.is_active || came_back(row));
                    let rendering = render_memory(&row.name, Some(&doc.raw_body));
                    let md5 = md5_hex(&rendering);
                    tx.execute(
                        "UPDATE memories SET file_name = ?3, is_active = ?4, text_md5 = ?5,
                           file_size = ?6, file_mtime_ns = ?7, updated_at = ?8
                         WHERE user_id = ?1 AND id = ?2",
                        params![user, id, f.file_name, active, md5, size, mtime, ts],
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
                           text_md5, file_size, file_mtime_ns, created_at, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
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
                            ts
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
