//! The checks of single rows (those a query is about to return), of the files last found
//! unreadable, and `elroy doctor`'s read-only look at every file.

use std::path::Path;

use elroy_markdown::{Document, FileStamp, HomeLock, list_md_dir};
use jiff::Timestamp;
use rusqlite::params;

use super::scan::Found;
use super::{Row, StampColumns, SyncReport, row_by_id};
use crate::model::Memory;
use crate::{MemoryError, MemoryStore};

impl MemoryStore {
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
            if !row.matches(FileStamp::of_file(&self.path_of(memory))) {
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
                    if FileStamp::of_file(&path).is_some() {
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
        let changed: Vec<&(String, String, String, Option<FileStamp>)> = entries
            .iter()
            .filter(|(file_name, _, _, sig)| {
                let now_sig = FileStamp::of_file(&self.opts.memory_dir.join(file_name));
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
                    let (present, missing): (Vec<Found>, Vec<Found>) = files
                        .into_iter()
                        .partition(|f| FileStamp::of_file(&f.path).is_some());
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
    ) -> Result<Vec<(String, String, String, Option<FileStamp>)>, MemoryError> {
        Ok(self.db.with_conn(|c| {
            let mut st = c.prepare_cached(
                "SELECT file_name, shown, reason, file_size, file_mtime_ns, file_ino, file_ctime_ns
                 FROM memory_unreadable WHERE user_id = ?1 AND instr(file_name, '/') = 0
                 ORDER BY file_name",
            )?;
            st.query_map([self.opts.user_id], |r| {
                let sig = StampColumns {
                    size: r.get(3)?,
                    mtime_ns: r.get(4)?,
                    ino: r.get(5)?,
                    ctime_ns: r.get(6)?,
                }
                .stamp();
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, sig))
            })?
            .collect()
        })?)
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
    let mut out = Vec::new();
    for dir in [memory_dir.to_path_buf(), memory_dir.join("archive")] {
        let shown_dir = display(&dir);
        let names = match list_md_dir(&dir, &shown_dir) {
            Ok(listing) => listing.files,
            Err(e) => {
                out.push((shown_dir, e.to_string()));
                continue;
            }
        };
        for (name, _) in names {
            let path = dir.join(name);
            let shown = display(&path);
            if let Err(e) = elroy_markdown::read_text(&path, &shown)
                .and_then(|text| Document::parse(&text, &shown))
            {
                out.push((shown, e.to_string()));
            }
        }
    }
    out
}
