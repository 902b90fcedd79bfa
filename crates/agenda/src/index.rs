//! Stable integer ids for agenda files: the [`AgendaIndex`] trait and [`LogIndex`], an append-only
//! file implementation (`formats.md` §9.5 describes the SQLite form of the same index).

use std::collections::HashMap;
use std::fmt::Debug;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use jiff::Timestamp;

use crate::item::Item;

/// What the index knows about one live file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Stable per user: the recall metadata `memory_id` of the item (`formats.md` §8.6).
    pub id: i64,
    /// When elroy created the file, or first saw it (then the file's modification time).
    pub created_at: Timestamp,
}

/// One file of a scan, as the index sees it.
#[derive(Debug, Clone, Copy)]
pub struct LiveFile<'a> {
    /// File name without `.md`.
    pub stem: &'a str,
    /// Modification time.
    pub mtime: Timestamp,
    /// Size in bytes.
    pub size: u64,
    /// The parsed item; `None` for a file whose front matter cannot be read (its previous index
    /// data is kept, `formats.md` §9.5).
    pub item: Option<&'a Item>,
}

/// Assigns and keeps the ids of agenda files, keyed by stem (`formats.md` §9.5).
///
/// The store calls every method inside the home lock, after scanning `agenda/`. Ids are never
/// reused: a new id is one more than the largest ever assigned. An implementation backed by the
/// `agenda_items` table of `state.db` can replace [`LogIndex`] without touching the store.
pub trait AgendaIndex: Send + Sync + Debug {
    /// Reconciles with the live files of a scan (called whenever a file appeared, disappeared or
    /// changed): each unknown stem gets a new id (in the given order) with `created_at` = the
    /// file's mtime; known stems that are not in `live` are forgotten (status deleted); an index
    /// that keeps item data refreshes it.
    ///
    /// # Errors
    /// A message when the index cannot be read or written.
    fn sync(&self, live: &[LiveFile<'_>]) -> Result<(), String>;

    /// Picks up changes other processes made to the index since the last call, without a scan
    /// (called when the set of files did not change).
    ///
    /// # Errors
    /// A message when the index cannot be read.
    fn refresh(&self) -> Result<(), String> {
        Ok(())
    }

    /// The entry of a live stem.
    fn get(&self, stem: &str) -> Option<IndexEntry>;

    /// The stem that has `id`, while the file lives.
    fn stem_of(&self, id: i64) -> Option<String>;

    /// Records a file elroy just created: a new id, `created_at` = `at`.
    ///
    /// # Errors
    /// A message when the index cannot be written.
    fn created(&self, stem: &str, at: Timestamp) -> Result<IndexEntry, String>;

    /// Records a move (`rename_due_item`): the id and `created_at` stay with the file.
    ///
    /// # Errors
    /// A message when the index cannot be written.
    fn renamed(&self, old_stem: &str, new_stem: &str) -> Result<(), String>;

    /// Records a removal (`delete_agenda_item`, `delete_due_item`).
    ///
    /// # Errors
    /// A message when the index cannot be written.
    fn removed(&self, stem: &str) -> Result<(), String>;
}

#[derive(Debug, Default)]
struct State {
    by_stem: HashMap<String, IndexEntry>,
    by_id: HashMap<i64, String>,
    max_id: i64,
    /// Bytes of the log consumed so far.
    offset: u64,
}

impl State {
    fn apply(&mut self, line: &str) {
        let Ok(serde_json::Value::Object(obj)) = serde_json::from_str::<serde_json::Value>(line)
        else {
            return;
        };
        let id = obj.get("id").and_then(serde_json::Value::as_i64);
        let stem = obj.get("stem").and_then(serde_json::Value::as_str);
        match (obj.get("op").and_then(serde_json::Value::as_str), id) {
            (Some("add"), Some(id)) => {
                let created_at = obj
                    .get("created_at")
                    .and_then(serde_json::Value::as_str)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(Timestamp::UNIX_EPOCH);
                if let Some(stem) = stem {
                    self.insert(stem, IndexEntry { id, created_at });
                }
                self.max_id = self.max_id.max(id);
            }
            (Some("ren"), Some(id)) => {
                if let (Some(old), Some(new)) = (self.by_id.get(&id).cloned(), stem)
                    && let Some(entry) = self.by_stem.remove(&old)
                {
                    self.insert(new, entry);
                }
            }
            (Some("del"), Some(id)) => {
                if let Some(old) = self.by_id.remove(&id) {
                    self.by_stem.remove(&old);
                }
            }
            _ => {}
        }
    }

    fn insert(&mut self, stem: &str, entry: IndexEntry) {
        if let Some(previous) = self.by_stem.insert(stem.to_owned(), entry) {
            self.by_id.remove(&previous.id);
        }
        self.by_id.insert(entry.id, stem.to_owned());
    }
}

/// An [`AgendaIndex`] kept as an append-only JSON-lines log (`{"op":"add","id":3,"stem":"Pay_rent",
/// "created_at":"…"}`, `ren`, `del`), or only in memory.
///
/// Every process replays the log once and then reads only what other processes appended (the file
/// only grows; a shorter file is read again from the start). Appends happen inside the home lock. The
/// log is a rebuildable cache: losing it renumbers items, nothing else.
#[derive(Debug)]
pub struct LogIndex {
    path: Option<PathBuf>,
    state: Mutex<State>,
}

impl LogIndex {
    /// An index persisted at `path` (created on first write; its directory too).
    pub fn open(path: impl Into<PathBuf>) -> Self {
        LogIndex {
            path: Some(path.into()),
            state: Mutex::new(State::default()),
        }
    }

    /// An index that lives only in this process (tests, embedders without a home).
    pub fn in_memory() -> Self {
        LogIndex {
            path: None,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reads what was appended since the last call.
    fn refresh(&self, state: &mut State) -> Result<(), String> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if state.offset > 0 {
                    *state = State::default();
                }
                return Ok(());
            }
            Err(e) => return Err(io_message(path, &e)),
        };
        let len = file.metadata().map_err(|e| io_message(path, &e))?.len();
        if len < state.offset {
            *state = State::default();
        }
        if len == state.offset {
            return Ok(());
        }
        file.seek(SeekFrom::Start(state.offset))
            .map_err(|e| io_message(path, &e))?;
        let mut buf = Vec::new();
        file.read_to_end(&mut buf)
            .map_err(|e| io_message(path, &e))?;
        // Only whole lines count; a torn last line is read again later.
        let complete = buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        for line in String::from_utf8_lossy(&buf[..complete]).lines() {
            state.apply(line);
        }
        state.offset += complete as u64;
        Ok(())
    }

    fn append(&self, state: &mut State, line: &serde_json::Value) -> Result<(), String> {
        let text = format!("{line}\n");
        if let Some(path) = &self.path {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| io_message(path, &e))?;
            }
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| io_message(path, &e))?;
            let len = file.metadata().map_err(|e| io_message(path, &e))?.len();
            let mut bytes = text.clone();
            if len > state.offset {
                // A torn line left by a crash: end it so this record stays whole.
                bytes.insert(0, '\n');
            }
            file.write_all(bytes.as_bytes())
                .map_err(|e| io_message(path, &e))?;
            state.offset = len + bytes.len() as u64;
        }
        state.apply(text.trim_end());
        Ok(())
    }

    fn add(&self, state: &mut State, stem: &str, at: Timestamp) -> Result<IndexEntry, String> {
        let id = state.max_id + 1;
        self.append(
            state,
            &serde_json::json!({"op": "add", "id": id, "stem": stem, "created_at": at.to_string()}),
        )?;
        Ok(IndexEntry { id, created_at: at })
    }
}

fn io_message(path: &Path, e: &std::io::Error) -> String {
    format!("Unable to update the agenda index {}: {e}", path.display())
}

impl AgendaIndex for LogIndex {
    fn sync(&self, live: &[LiveFile<'_>]) -> Result<(), String> {
        let mut state = self.lock();
        self.refresh(&mut state)?;
        let mut known = 0usize;
        let mut new = Vec::new();
        for file in live {
            if state.by_stem.contains_key(file.stem) {
                known += 1;
            } else {
                new.push((file.stem, file.mtime));
            }
        }
        if known < state.by_stem.len() {
            let live_set: std::collections::HashSet<&str> = live.iter().map(|f| f.stem).collect();
            let mut gone: Vec<i64> = state
                .by_stem
                .iter()
                .filter(|(stem, _)| !live_set.contains(stem.as_str()))
                .map(|(_, e)| e.id)
                .collect();
            gone.sort_unstable();
            for id in gone {
                self.append(&mut state, &serde_json::json!({"op": "del", "id": id}))?;
            }
        }
        for (stem, mtime) in new {
            self.add(&mut state, stem, mtime)?;
        }
        Ok(())
    }

    fn refresh(&self) -> Result<(), String> {
        let mut state = self.lock();
        LogIndex::refresh(self, &mut state)
    }

    fn get(&self, stem: &str) -> Option<IndexEntry> {
        self.lock().by_stem.get(stem).copied()
    }

    fn stem_of(&self, id: i64) -> Option<String> {
        self.lock().by_id.get(&id).cloned()
    }

    fn created(&self, stem: &str, at: Timestamp) -> Result<IndexEntry, String> {
        let mut state = self.lock();
        self.refresh(&mut state)?;
        if let Some(old) = state.by_stem.get(stem).copied() {
            self.append(&mut state, &serde_json::json!({"op": "del", "id": old.id}))?;
        }
        self.add(&mut state, stem, at)
    }

    fn renamed(&self, old_stem: &str, new_stem: &str) -> Result<(), String> {
        let mut state = self.lock();
        self.refresh(&mut state)?;
        match state.by_stem.get(old_stem).copied() {
            Some(entry) => self.append(
                &mut state,
                &serde_json::json!({"op": "ren", "id": entry.id, "stem": new_stem}),
            ),
            None => Ok(()),
        }
    }

    fn removed(&self, stem: &str) -> Result<(), String> {
        let mut state = self.lock();
        self.refresh(&mut state)?;
        match state.by_stem.get(stem).copied() {
            Some(entry) => self.append(
                &mut state,
                &serde_json::json!({"op": "del", "id": entry.id}),
            ),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live<'a>(stems: &[&'a str]) -> Vec<LiveFile<'a>> {
        stems
            .iter()
            .map(|stem| LiveFile {
                stem,
                mtime: Timestamp::UNIX_EPOCH,
                size: 0,
                item: None,
            })
            .collect()
    }

    #[test]
    fn ids_survive_processes_and_are_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache/agenda.jsonl");
        let t0 = Timestamp::UNIX_EPOCH;
        let a = LogIndex::open(&path);
        a.sync(&live(&["B", "A"])).unwrap();
        assert_eq!(a.get("B").unwrap().id, 1);
        assert_eq!(a.get("A").unwrap().id, 2);
        let c = a.created("C", t0).unwrap();
        assert_eq!(c.id, 3);
        // Another process sees the same ids and continues the numbering.
        let b = LogIndex::open(&path);
        b.sync(&live(&["A", "B", "C"])).unwrap();
        assert_eq!(b.get("C").unwrap().id, 3);
        b.renamed("C", "D").unwrap();
        b.removed("A").unwrap();
        a.sync(&live(&["B", "D", "E"])).unwrap();
        assert_eq!(a.get("D").unwrap().id, 3);
        assert_eq!(a.stem_of(3).as_deref(), Some("D"));
        assert!(a.get("A").is_none());
        assert_eq!(a.get("E").unwrap().id, 4);
        // A file that disappeared is forgotten; a new file of the same stem gets a new id.
        a.sync(&live(&["D", "E"])).unwrap();
        a.sync(&live(&["B", "D", "E"])).unwrap();
        assert_eq!(a.get("B").unwrap().id, 5);
    }

    #[test]
    fn torn_last_line_is_ignored_until_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.jsonl");
        std::fs::write(&path, "{\"op\":\"add\",\"id\":7,\"stem\":\"X\",\"created_at\":\"2026-01-01T00:00:00Z\"}\n{\"op\":\"add\",\"id\":8,").unwrap();
        let index = LogIndex::open(&path);
        index.sync(&live(&["X"])).unwrap();
        assert_eq!(index.get("X").unwrap().id, 7);
    }
}
