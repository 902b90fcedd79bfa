//! Reading memory files and indexing what they say: new rows (names from Elroy's database, the
//! front matter or the stem), ids written into files without one, rows whose file left.

use std::collections::HashSet;
use std::path::Path;

use elroy_core::FileWarning;
use elroy_db::format_db_time;
use elroy_markdown::{Document, MarkdownError, Value, wall_clock_ns};
use jiff::Timestamp;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::scan::Found;
use super::{
    DUPLICATE_ARCHIVED_ID, DUPLICATE_MEMORY_ID, NO_MEMORY_ID, Row, StampColumns, SyncReport,
    UNREADABLE_MEMORY_FILES, row_by_file, row_by_id,
};
use crate::model::{MemorySource, sources_from_json, sources_to_json};
use crate::store::{md5_hex, render_memory, set_fts};
use crate::{MemoryError, MemoryStore};

/// Whether the files `a` and `b` both exist and hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> bool {
    matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
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

/// A file read and parsed, with the id its front matter gives (if any).
struct Parsed {
    found: Found,
    doc: Document,
    id: Option<i64>,
}

/// What the steps of one [`MemoryStore::index_files`] share.
struct Run<'a> {
    store: &'a MemoryStore,
    tx: &'a Connection,
    user: i64,
    now: Timestamp,
    /// The wall clock (ns) for the racy rule of the stored signatures.
    wall: i64,
    /// Write a new id into files without one (or with a duplicate).
    assign_ids: bool,
    /// Elroy's database, for the names of new rows (DEFAULT home only).
    elroy: Option<Connection>,
    /// The largest id given so far.
    max_id: i64,
    /// Ids of the rows whose file left.
    gone_ids: HashSet<i64>,
    /// File names of the candidates.
    candidate_names: HashSet<String>,
    /// Ids taken by a file in this run (or kept by an unreadable one).
    claimed: HashSet<i64>,
    /// The rows the candidates' files had before this run (one may now hold another id).
    previous_rows: Vec<Row>,
    report: &'a mut SyncReport,
}

impl MemoryStore {
    /// Reads `candidates` (in order: `memories/` files first, each directory by name) and
    /// indexes them, then deactivates the rows of `gone` (their file left) that no candidate
    /// took over. `assign_ids`: write a new id into files without one (or with a duplicate);
    /// otherwise they are left for the next sync.
    pub(super) fn index_files(
        &self,
        tx: &Connection,
        candidates: Vec<Found>,
        gone: Vec<Row>,
        report: &mut SyncReport,
        now: Timestamp,
        assign_ids: bool,
    ) -> Result<(), MemoryError> {
        let user = self.opts.user_id;
        let elroy = if candidates.is_empty() {
            None
        } else {
            self.opts.elroy_db_path.as_deref().and_then(open_elroy_db)
        };
        let max_id: i64 = tx.query_row(
            "SELECT coalesce(max(id), 0) FROM memories WHERE user_id = ?1",
            [user],
            |r| r.get(0),
        )?;
        let mut run = Run {
            store: self,
            tx,
            user,
            now,
            wall: wall_clock_ns(),
            assign_ids,
            elroy,
            max_id,
            gone_ids: gone.iter().map(|r| r.id).collect(),
            candidate_names: candidates.iter().map(|f| f.file_name.clone()).collect(),
            claimed: HashSet::new(),
            previous_rows: Vec::new(),
            report,
        };
        // Pass 1: read and parse. Ids of rows kept as they are (their file is unreadable) are
        // claimed.
        let mut parsed = Vec::new();
        for found in candidates {
            if let Some(p) = run.read(found)? {
                parsed.push(p);
            }
        }
        // Pass 2: assign ids, then index.
        for p in parsed {
            run.index(p)?;
        }
        // Rows whose file is gone, and rows whose file now holds another id.
        let previous = std::mem::take(&mut run.previous_rows);
        for row in gone.iter().chain(&previous) {
            run.deactivate_if_gone(row)?;
        }
        Ok(())
    }
}

impl Run<'_> {
    /// Reads and parses one file; an unreadable one is recorded (and its row's id claimed).
    fn read(&mut self, f: Found) -> Result<Option<Parsed>, MemoryError> {
        let display = self.store.display(&f.path);
        let row = row_by_file(self.tx, self.user, &f.file_name)?;
        let doc = match elroy_markdown::read_text(&f.path, &display)
            .and_then(|text| Document::parse(&text, &display))
        {
            Ok(doc) => doc,
            Err(e) => {
                self.unreadable(&f, &display, &e)?;
                if let Some(row) = row {
                    self.claimed.insert(row.id);
                }
                return Ok(None);
            }
        };
        self.tx
            .prepare_cached("DELETE FROM memory_unreadable WHERE user_id = ?1 AND file_name = ?2")?
            .execute(params![self.user, f.file_name])?;
        let id = front_matter_id(&doc);
        if let Some(id) = id {
            self.max_id = self.max_id.max(id);
        }
        if let Some(row) = row {
            self.previous_rows.push(row);
        }
        Ok(Some(Parsed { found: f, doc, id }))
    }

    /// Records a file that could not be read in `memory_unreadable` and the report.
    fn unreadable(&mut self, f: &Found, display: &str, e: &MarkdownError) -> rusqlite::Result<()> {
        self.report.warnings.push(FileWarning::new(
            UNREADABLE_MEMORY_FILES,
            display.to_owned(),
            e.to_string(),
        ));
        let shown = e.file().unwrap_or(display).to_owned();
        if !f.in_archive {
            self.report.unreadable.push((shown.clone(), e.reason()));
        }
        let sig = StampColumns::of(elroy_markdown::FileStamp::of_file(&f.path), self.wall);
        self.tx
            .prepare_cached(
                "INSERT INTO memory_unreadable (user_id, file_name, shown, reason,
                   file_size, file_mtime_ns, file_ino, file_ctime_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT(user_id, file_name) DO UPDATE SET shown = excluded.shown,
                   reason = excluded.reason, file_size = excluded.file_size,
                   file_mtime_ns = excluded.file_mtime_ns, file_ino = excluded.file_ino,
                   file_ctime_ns = excluded.file_ctime_ns",
            )?
            .execute(params![
                self.user,
                f.file_name,
                shown,
                e.reason(),
                sig.size,
                sig.mtime_ns,
                sig.ino,
                sig.ctime_ns
            ])?;
        Ok(())
    }

    /// Whether `id` belongs to another file than `f`: claimed in this run, or the id of a row
    /// whose file elsewhere is unchanged (it keeps its id).
    fn held_elsewhere(&self, f: &Found, id: i64) -> rusqlite::Result<bool> {
        if self.claimed.contains(&id) {
            return Ok(true);
        }
        Ok(row_by_id(self.tx, self.user, id)?.is_some_and(|r| {
            r.file_name != f.file_name
                && r.size.is_some()
                && !self.gone_ids.contains(&r.id)
                && !self.candidate_names.contains(&r.file_name)
                && elroy_markdown::FileStamp::of_file(
                    &self.store.opts.memory_dir.join(&r.file_name),
                )
                .is_some()
        }))
    }

    /// The id file `p` is indexed under: its own when free, else a new one written into the
    /// file (`None`: the file is skipped, or left for the next sync without `assign_ids`).
    fn choose_id(&mut self, p: &mut Parsed) -> Result<Option<i64>, MemoryError> {
        let f = &p.found;
        let id = match p.id {
            Some(id) if !self.held_elsewhere(f, id)? => id,
            Some(id) if f.in_archive => {
                let display = self.store.display(&f.path);
                // The archive name an update gives the old version before it writes the new
                // one: a process killed in between leaves it beside the active file it
                // copies (`docs/formats.md#multi-step-writes`). The update did not happen;
                // the leftover goes.
                if let Some(row) = row_by_id(self.tx, self.user, id)?
                    && row.is_active
                    && same_bytes(&f.path, &self.store.opts.memory_dir.join(&row.file_name))
                {
                    elroy_markdown::remove_file(&f.path, &display)?;
                    return Ok(None);
                }
                self.report.warnings.push(FileWarning::new(
                    DUPLICATE_ARCHIVED_ID,
                    display.clone(),
                    format!("{display}: duplicate memory id in archive; skipped"),
                ));
                return Ok(None);
            }
            _ if !self.assign_ids => return Ok(None),
            old => {
                self.max_id += 1;
                let new_id = self.max_id;
                self.write_id(p, old, new_id)?;
                new_id
            }
        };
        self.claimed.insert(id);
        Ok(Some(id))
    }

    /// Writes `new_id` into the front matter of `p`'s file (it had `old` or none).
    fn write_id(
        &mut self,
        p: &mut Parsed,
        old: Option<i64>,
        new_id: i64,
    ) -> Result<(), MemoryError> {
        p.doc.front_matter.insert("id", Value::Int(new_id));
        let body = p.doc.raw_body.strip_prefix('\n').unwrap_or(&p.doc.raw_body);
        let content = Document::render_with_body(&p.doc.front_matter, body, true);
        let display = self.store.display(&p.found.path);
        elroy_markdown::write_atomic(&p.found.path, content.as_bytes(), &display)?;
        self.report.warnings.push(match old {
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
        Ok(())
    }

    /// Indexes one parsed file under its id: the row of that id updated, or a new row.
    fn index(&mut self, mut p: Parsed) -> Result<(), MemoryError> {
        let Some(id) = self.choose_id(&mut p)? else {
            return Ok(());
        };
        let stamp = StampColumns::of(elroy_markdown::FileStamp::of_file(&p.found.path), self.wall);
        self.report.indexed += 1;
        match row_by_id(self.tx, self.user, id)? {
            Some(row) => self.update_row(&p, id, &row, stamp)?,
            None => self.insert_row(&p, id, stamp)?,
        }
        Ok(())
    }

    /// Points the existing row `row` (id `id`) at file `p`.
    fn update_row(
        &mut self,
        p: &Parsed,
        id: i64,
        row: &Row,
        stamp: StampColumns,
    ) -> rusqlite::Result<()> {
        let f = &p.found;
        let active = !f.in_archive && (row.is_active || came_back(row));
        let rendering = render_memory(&row.name, Some(&p.doc.raw_body));
        let md5 = md5_hex(&rendering);
        self.tx
            .prepare_cached(
                "UPDATE memories SET file_name = ?3, is_active = ?4, text_md5 = ?5,
                   file_size = ?6, file_mtime_ns = ?7, updated_at = ?8,
                   file_ino = ?9, file_ctime_ns = ?10
                 WHERE user_id = ?1 AND id = ?2",
            )?
            .execute(params![
                self.user,
                id,
                f.file_name,
                active,
                md5,
                stamp.size,
                stamp.mtime_ns,
                format_db_time(self.now),
                stamp.ino,
                stamp.ctime_ns
            ])?;
        if row.is_active && !active {
            self.report.deactivated.push(id);
        }
        if md5 != row.md5 || active != row.is_active {
            self.report.changed += 1;
            set_fts(
                self.tx,
                self.user,
                id,
                &row.name,
                active.then_some(rendering.as_str()),
            )?;
        }
        Ok(())
    }

    /// A new row `id` for file `p`: its name from Elroy's database, else the front-matter
    /// `name`, else the stem with `_` → space.
    fn insert_row(&mut self, p: &Parsed, id: i64, stamp: StampColumns) -> rusqlite::Result<()> {
        let f = &p.found;
        let imported = self.elroy.as_ref().and_then(|c| elroy_lookup(c, id));
        let (name, active, sources) = match imported {
            Some(e) => (e.name, e.is_active && !f.in_archive, e.sources),
            None => {
                let name = match p.doc.front_matter.get("name") {
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
        let rendering = render_memory(&name, Some(&p.doc.raw_body));
        self.tx
            .prepare_cached(
                "INSERT INTO memories (user_id, id, name, file_name, is_active, source_metadata,
                   text_md5, file_size, file_mtime_ns, created_at, updated_at,
                   file_ino, file_ctime_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12)",
            )?
            .execute(params![
                self.user,
                id,
                name,
                f.file_name,
                active,
                sources_to_json(&sources),
                md5_hex(&rendering),
                stamp.size,
                stamp.mtime_ns,
                format_db_time(self.now),
                stamp.ino,
                stamp.ctime_ns
            ])?;
        self.report.changed += 1;
        if active {
            set_fts(self.tx, self.user, id, &name, Some(&rendering))?;
        }
        Ok(())
    }

    /// Deactivates `row` when no file of this run took its id and it still points at its old
    /// file (another pass may have moved it already: a file that left one directory for the
    /// other).
    fn deactivate_if_gone(&mut self, row: &Row) -> rusqlite::Result<()> {
        if self.claimed.contains(&row.id) {
            return Ok(());
        }
        let Some(current) = row_by_id(self.tx, self.user, row.id)? else {
            return Ok(());
        };
        if current.file_name != row.file_name {
            return Ok(());
        }
        if current.is_active {
            // The scan state is cleared: no file was seen, and a file that comes back with
            // this id is recognised as returning (`came_back`).
            self.tx
                .prepare_cached(
                    "UPDATE memories SET is_active = 0, file_size = NULL, file_mtime_ns = NULL,
                       file_ino = NULL, updated_at = ?3 WHERE user_id = ?1 AND id = ?2",
                )?
                .execute(params![self.user, row.id, format_db_time(self.now)])?;
            set_fts(self.tx, self.user, row.id, &row.name, None)?;
            self.report.deactivated.push(row.id);
            self.report.changed += 1;
        } else {
            self.tx
                .prepare_cached(
                    "UPDATE memories SET file_ino = NULL WHERE user_id = ?1 AND id = ?2",
                )?
                .execute(params![self.user, row.id])?;
        }
        Ok(())
    }
}
