//! [`AgendaStore`]: every agenda and due-item operation of `tools.md` §1–§2, each one locked
//! read-modify-write on the files (`formats.md` §3.6).
//!
//! - `views`: what operations return (`ItemRef`, `ListedItem`, `DueItem`, …) and `to_fact`.
//! - `matching`: finding items by name (D6).
//! - `agenda_ops` / `due_ops`: the operations of `tools.md` §1 and §2, recall and due surfacing.

mod agenda_ops;
mod due_ops;
mod matching;
mod reminder_ops;
mod views;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use elroy_markdown::{
    Document, HomeLock, Mapping, Value, sanitize_filename, unique_file_name, write_atomic,
};

use crate::AgendaError;
use crate::index::{AgendaIndex, LiveFile, LogIndex};
use crate::item::Item;
use crate::scan::{Entry, ScanCache, Snapshot, load_entry};
use crate::time::format_stored_trigger;

pub use views::{DueItem, ItemRef, ListedItem, NewDueItem, RecallEntry, to_fact};

/// The fallback file-name base of agenda and due items (`formats.md` §2.1).
pub const AGENDA_FALLBACK: &str = "agenda_item";

/// The agenda and due items of one user home: `<user home>/agenda/*.md`.
///
/// Every operation takes the home lock (`$ELROY_HOME/.lock`), scans the directory (parsing only
/// files whose mtime, size or inode changed since the last scan in this process), syncs the id
/// index, re-reads the file it changes from disk and writes atomically. Safe to share between
/// threads and processes.
#[derive(Debug)]
pub struct AgendaStore {
    elroy_home: PathBuf,
    agenda_dir: PathBuf,
    prefix: String,
    index: Box<dyn AgendaIndex>,
    cache: Mutex<ScanCache>,
}

impl AgendaStore {
    /// A store for `user_home` inside `elroy_home`, with ids from `index`. Nothing is read or
    /// created until the first operation.
    pub fn new(elroy_home: &Path, user_home: &Path, index: Box<dyn AgendaIndex>) -> Self {
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
            cache: Mutex::new(ScanCache::default()),
        }
    }

    /// A store whose id index is the log file `$ELROY_HOME/cache/agenda-index/{token}.jsonl`.
    pub fn open(elroy_home: &Path, user_home: &Path, user_token: &str) -> Self {
        let path = elroy_home
            .join("cache")
            .join("agenda-index")
            .join(format!("{user_token}.jsonl"));
        Self::new(elroy_home, user_home, Box::new(LogIndex::open(path)))
    }

    /// The `agenda/` directory.
    pub fn agenda_dir(&self) -> &Path {
        &self.agenda_dir
    }

    fn display(&self, file_name: &str) -> String {
        format!("{}{file_name}", self.prefix)
    }

    /// Runs `f` on a fresh scan, inside the home lock.
    fn locked<T>(
        &self,
        f: impl FnOnce(&Snapshot) -> Result<T, AgendaError>,
    ) -> Result<T, AgendaError> {
        let _lock = HomeLock::acquire(&self.elroy_home)?;
        let snapshot = {
            let mut cache = self
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            cache.scan(&self.agenda_dir, &self.prefix)?
        };
        if snapshot.changed {
            let live: Vec<LiveFile<'_>> = snapshot
                .entries
                .iter()
                .map(|(e, stamp)| LiveFile {
                    stem: e.stem(),
                    mtime: stamp.mtime,
                    size: stamp.size,
                    item: e.item(),
                })
                .collect();
            self.index.sync(&live).map_err(AgendaError::new)?;
        } else {
            self.index.refresh().map_err(AgendaError::new)?;
        }
        f(&snapshot)
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
        match load_entry(
            &self.agenda_dir.join(&file_name),
            stem,
            &self.display(&file_name),
        ) {
            Entry::Item(item) => Ok(*item),
            Entry::Broken { message, .. } => Err(AgendaError::new(message)),
        }
    }

    fn write(&self, stem: &str, content: &str) -> Result<(), AgendaError> {
        let file_name = format!("{stem}.md");
        write_atomic(
            &self.agenda_dir.join(&file_name),
            content.as_bytes(),
            &self.display(&file_name),
        )?;
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

    /// The unique file name for `base` (`formats.md` §2.3): the scan's view of the directory
    /// (names compared ignoring case), `except` not counting as taken, checked once more against
    /// the file system for the exact name. Call inside the lock, after the scan.
    fn unique_name(&self, base: &str, except: Option<&str>) -> String {
        let cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let except = except.map(str::to_lowercase);
        unique_file_name(base, |candidate| {
            if except.as_deref() == Some(candidate.to_lowercase().as_str()) {
                return false;
            }
            cache.is_taken(candidate)
                || std::fs::symlink_metadata(self.agenda_dir.join(candidate)).is_ok()
        })
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
