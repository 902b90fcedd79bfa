//! [`AgendaStore`]: every agenda and due-item operation of `docs/tools.md#agenda` to
//! `docs/tools.md#due-items`, each one locked read-modify-write on the files
//! (`docs/formats.md#the-home-lock`).
//!
//! - `views`: what operations return (`ItemRef`, `ListedItem`, `DueItem`, …) and `to_fact`.
//! - `matching`: finding items by name (D6).
//! - `agenda_ops` / `due_ops`: the operations of `docs/tools.md#agenda` and
//!   `docs/tools.md#due-items`, recall and due surfacing.

mod agenda_ops;
mod due_ops;
mod matching;
mod reminder_ops;
mod repeat_ops;
mod views;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_core::{FileWarning, FileWarningSink};
use elroy_db::Db;
use elroy_markdown::{
    Document, HomeLock, Mapping, Value, remove_file, sanitize_filename, unique_file_name,
    write_atomic,
};

use crate::db_index::Query;
use crate::item::Item;
use crate::scan::{Snapshot, load_item};
use crate::time::format_stored_trigger;
use crate::{AgendaError, DbIndex};

pub use repeat_ops::Occurrence;
pub use views::{DueItem, ItemRef, ListedItem, NewDueItem, RecallEntry, to_fact};

/// The fallback file-name base of agenda and due items (`docs/formats.md#file-names`).
pub const AGENDA_FALLBACK: &str = "agenda_item";

/// An agenda file that cannot be read: `(display path, message)`.
pub type UnreadableFile = (String, String);

/// The kind of [`FileWarning`] for an agenda file that cannot be read.
pub const UNREADABLE_AGENDA_FILES: &str = "agenda files could not be read and were skipped";

/// How an operation checks the directory before its queries.
#[derive(Debug, Clone, Copy)]
enum DirCheck {
    /// Not at all: a lookup by id stats the row's file, and needs no other.
    None,
    /// A listing when the directory's signature changed ([`DbIndex::begin`]).
    IfChanged,
    /// A listing whatever the signature (the full check of `elroy doctor`).
    Full,
}

/// The agenda and due items of one user home: `<user home>/agenda/*.md`.
///
/// Every operation takes the home lock (`$ELROY_HOME/.lock`), checks the directory and asks the
/// index for the rows it needs ([`DbIndex`]: a `stat` per returned row, reading only the files
/// whose signature changed), re-reads the file it changes from disk and writes atomically. Safe to
/// share between threads and processes. Files found unreadable when they are read go to the
/// warning sink ([`AgendaStore::with_warnings`]).
pub struct AgendaStore {
    elroy_home: PathBuf,
    agenda_dir: PathBuf,
    prefix: String,
    index: DbIndex,
    warn: Option<FileWarningSink>,
}

impl std::fmt::Debug for AgendaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgendaStore")
            .field("agenda_dir", &self.agenda_dir)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl AgendaStore {
    /// A store for `user_home` inside `elroy_home`, indexed by `index`. Nothing is read or
    /// created until the first operation.
    pub fn new(elroy_home: &Path, user_home: &Path, index: DbIndex) -> Self {
        let relative = user_home
            .strip_prefix(elroy_home)
            .ok()
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        let prefix = if relative.is_empty() {
            "agenda/".to_owned()
        } else {
            format!("{relative}/agenda/")
        };
        AgendaStore {
            elroy_home: elroy_home.to_path_buf(),
            agenda_dir: user_home.join("agenda"),
            prefix,
            index,
            warn: None,
        }
    }

    /// A store indexed in `$ELROY_HOME/state.db` (opened and migrated here) for the user
    /// `user_token` (tests, benchmarks, embedders; the runtime shares its own database).
    ///
    /// # Errors
    /// The database cannot be opened.
    pub fn open(
        elroy_home: &Path,
        user_home: &Path,
        user_token: &str,
    ) -> Result<Self, AgendaError> {
        let db = Db::open(&elroy_home.join("state.db")).map_err(AgendaError::from)?;
        let user = db
            .ensure_user(user_token, jiff::Timestamp::now())
            .map_err(AgendaError::from)?;
        Ok(Self::new(
            elroy_home,
            user_home,
            DbIndex::new(Arc::new(db), user),
        ))
    }

    /// The same store sending the files it finds unreadable, when it reads them, to `sink`
    /// (kind [`UNREADABLE_AGENDA_FILES`]); a file is reported again only after it changed.
    #[must_use]
    pub fn with_warnings(mut self, sink: FileWarningSink) -> Self {
        self.warn = Some(sink);
        self
    }

    /// The `agenda/` directory.
    pub fn agenda_dir(&self) -> &Path {
        &self.agenda_dir
    }

    fn display(&self, file_name: &str) -> String {
        format!("{}{file_name}", self.prefix)
    }

    /// Runs `f` inside the home lock, after the directory check of [`DbIndex::begin`]; `f`
    /// asks for the rows it needs with [`AgendaStore::query`].
    fn locked<T>(&self, f: impl FnOnce() -> Result<T, AgendaError>) -> Result<T, AgendaError> {
        self.locked_with(DirCheck::IfChanged, f)
    }

    /// [`AgendaStore::locked`] with another directory check.
    fn locked_with<T>(
        &self,
        check: DirCheck,
        f: impl FnOnce() -> Result<T, AgendaError>,
    ) -> Result<T, AgendaError> {
        let _lock = HomeLock::acquire(&self.elroy_home)?;
        match check {
            DirCheck::None => self.index.reset(),
            DirCheck::IfChanged | DirCheck::Full => {
                let full = matches!(check, DirCheck::Full);
                let problems = self.index.begin(&self.agenda_dir, &self.prefix, full)?;
                self.report(problems);
            }
        }
        f()
    }

    /// The rows `query` needs, each checked against its file (inside [`AgendaStore::locked`]).
    fn query(&self, query: Query<'_>) -> Result<Snapshot, AgendaError> {
        let (snapshot, problems) = self.index.query(&self.agenda_dir, &self.prefix, query)?;
        self.report(problems);
        Ok(snapshot)
    }

    fn report(&self, problems: Vec<(String, String)>) {
        if !problems.is_empty()
            && let Some(warn) = &self.warn
        {
            warn(
                problems
                    .into_iter()
                    .map(|(file, message)| FileWarning::new(UNREADABLE_AGENDA_FILES, file, message))
                    .collect(),
            );
        }
    }

    fn id_of(&self, stem: &str) -> i64 {
        self.index.get(stem).map_or(0, |e| e.id)
    }

    fn item_ref(&self, item: &Item) -> ItemRef {
        ItemRef {
            id: self.id_of(&item.stem),
            stem: item.stem.clone(),
            name: item.name().to_owned(),
        }
    }

    /// Re-reads an item's file from disk (inside the lock, never from the cache).
    fn fresh(&self, stem: &str) -> Result<Item, AgendaError> {
        let file_name = format!("{stem}.md");
        load_item(
            &self.agenda_dir.join(&file_name),
            stem,
            &self.display(&file_name),
        )
        .map_err(AgendaError::from)
    }

    fn write(&self, stem: &str, content: &str) -> Result<(), AgendaError> {
        let file_name = format!("{stem}.md");
        let before = self.ino_of(&file_name);
        write_atomic(
            &self.agenda_dir.join(&file_name),
            content.as_bytes(),
            &self.display(&file_name),
        )?;
        // The file is the item: once it is written the change is made. When its row cannot be
        // marked (a full disk), the row keeps the old inode and the directory listing digest is
        // left behind, so the next operation lists the directory and reads the file again.
        if self.index.written(stem).is_ok() {
            // An atomic write puts a new file (a new inode) in place of the old one.
            self.index.entries_changed(
                &[(file_name.as_str(), before)],
                &[(file_name.as_str(), self.ino_of(&file_name))],
            );
        }
        Ok(())
    }

    /// The inode of the entry `file_name` of `agenda/` (as `readdir` gives it: a symlink's own).
    fn ino_of(&self, file_name: &str) -> Option<i64> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            std::fs::symlink_metadata(self.agenda_dir.join(file_name))
                .ok()
                .map(|m| m.ino() as i64)
        }
        #[cfg(not(unix))]
        {
            let _ = file_name;
            None
        }
    }

    /// Records a new file elroy placed (the row is [`DbIndex::created`]'s).
    fn entry_added(&self, stem: &str) {
        let file_name = format!("{stem}.md");
        self.index
            .entries_changed(&[], &[(file_name.as_str(), self.ino_of(&file_name))]);
    }

    /// Removes the file of `stem` and its row.
    fn remove(&self, stem: &str) -> Result<(), AgendaError> {
        let file_name = format!("{stem}.md");
        let before = self.ino_of(&file_name);
        remove_file(&self.agenda_dir.join(&file_name), &self.display(&file_name))?;
        // As in [`AgendaStore::write`]: a row that cannot be marked is found without its file at
        // the next listing.
        if self.index.removed(stem).is_ok() {
            self.index
                .entries_changed(&[(file_name.as_str(), before)], &[]);
        }
        Ok(())
    }

    /// Rewrites an item's front matter; the raw body stays byte for byte (R1).
    fn write_front_matter(&self, item: &Item, front: &Mapping) -> Result<(), AgendaError> {
        self.write(&item.stem, &with_front_matter(item, front))
    }

    fn write_body(&self, item: &Item, body: &str) -> Result<(), AgendaError> {
        let body = body.replace("\r\n", "\n");
        self.write(
            &item.stem,
            &item.document.render_keeping_front_matter(&body, true),
        )
    }

    /// The unique file name for `base` (`docs/formats.md#unique-paths`): the index's view of the
    /// directory (names compared ignoring case), `except` not counting as taken, checked once more
    /// against the file system for the exact name. Call inside the lock.
    fn unique_name(&self, base: &str, except: Option<&str>) -> String {
        let except = except.map(str::to_lowercase);
        unique_file_name(base, |candidate| {
            if except.as_deref() == Some(candidate.to_lowercase().as_str()) {
                return false;
            }
            self.index.is_taken(candidate)
                || std::fs::symlink_metadata(self.agenda_dir.join(candidate)).is_ok()
        })
    }

    /// Places a new file for `name`, gives it its row and returns the row (under the lock). Whole
    /// or absent (`docs/formats.md#multi-step-writes`): when the row cannot be added (a full
    /// disk) the file goes again, so the failed call changed nothing and a retry makes no
    /// duplicate.
    fn create_item(
        &self,
        name: &str,
        front: &Mapping,
        body: &str,
        at: jiff::Timestamp,
    ) -> Result<(String, crate::db_index::IndexEntry), AgendaError> {
        let stem = self.create_file(name, front, body)?;
        match self.index.created(&stem, at) {
            Ok(entry) => {
                self.entry_added(&stem);
                Ok((stem, entry))
            }
            Err(e) => {
                let file_name = format!("{stem}.md");
                let _ = remove_file(&self.agenda_dir.join(&file_name), &self.display(&file_name));
                Err(e.into())
            }
        }
    }

    /// Places a new file for `name` and returns its stem (under the lock).
    fn create_file(&self, name: &str, front: &Mapping, body: &str) -> Result<String, AgendaError> {
        let base = sanitize_filename(name, AGENDA_FALLBACK);
        let file_name = self.unique_name(&base, None);
        let path = self.agenda_dir.join(&file_name);
        let stem = file_name
            .strip_suffix(".md")
            .unwrap_or(&file_name)
            .to_owned();
        write_atomic(
            &path,
            Document::render_with_body(front, body, true).as_bytes(),
            &self.display(&file_name),
        )?;
        Ok(stem)
    }
}

/// The file text of `item` with new front matter and its raw body unchanged.
fn with_front_matter(item: &Item, front: &Mapping) -> String {
    // D5: a CRLF file that elroy rewrites becomes LF.
    let raw_body = item.document.raw_body.replace("\r\n", "\n");
    if !item.document.has_front_matter {
        return Document::render_with_body(front, &raw_body, true);
    }
    Document {
        front_matter: front.clone(),
        raw_body,
        has_front_matter: true,
        raw_yaml: String::new(),
    }
    .render(true)
}

/// Rewrites `trigger_datetime` in its stored form (unquoted UTC) so a rewrite keeps it a timestamp.
fn normalize_trigger(front: &mut Mapping, item: &Item) {
    if let Some(ts) = item.trigger_datetime {
        front.insert(
            "trigger_datetime",
            Value::Timestamp(format_stored_trigger(ts)),
        );
    }
}
