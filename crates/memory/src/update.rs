//! `update_outdated_or_incorrect_memory` as one step (`docs/formats.md#multi-step-writes`): the
//! old file's archive name, the new version's file and both index rows are one index
//! transaction; when any step fails the files are put back as they were ([`Undo`]).

use std::path::PathBuf;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::{Memory, MemoryError, MemorySource, MemoryStore};

/// The file changes of a store operation whose index transaction has not committed yet, undone
/// (newest first) when it does not commit.
#[derive(Debug, Default)]
pub(crate) struct Undo {
    steps: Vec<Step>,
}

#[derive(Debug)]
enum Step {
    /// A new file was written at this path (display path second).
    Written(PathBuf, String),
    /// A file was moved from `.1` to `.0` (display path of `.1` third).
    Renamed(PathBuf, PathBuf, String),
    /// The file at `.1` got the second name `.0` (display path of `.1` third).
    Linked(PathBuf, PathBuf, String),
}

impl Undo {
    /// Notes a new file (it did not exist before).
    pub(crate) fn written(&mut self, path: PathBuf, shown: String) {
        self.steps.push(Step::Written(path, shown));
    }

    /// Notes a move: the file now at `now_at` came from `came_from`.
    pub(crate) fn renamed(&mut self, now_at: PathBuf, came_from: PathBuf, shown: String) {
        self.steps.push(Step::Renamed(now_at, came_from, shown));
    }

    /// Notes a second name: `copy` holds what `original` held.
    pub(crate) fn linked(&mut self, copy: PathBuf, original: PathBuf, shown: String) {
        self.steps.push(Step::Linked(copy, original, shown));
    }

    /// Undoes the noted changes, newest first. A step that cannot be undone (the disk went away)
    /// is left: the file is then whole at one of its two places, and the next open indexes it.
    pub(crate) fn run(self) {
        for step in self.steps.into_iter().rev() {
            let _ = match step {
                Step::Written(path, shown) => elroy_markdown::remove_file(&path, &shown),
                Step::Renamed(now_at, came_from, shown) => {
                    elroy_markdown::rename_file(&now_at, &came_from, &shown)
                }
                Step::Linked(copy, original, shown) => {
                    // The original still holds the old version: the second name goes. Else (it
                    // was replaced or removed) the kept version moves back.
                    let same = match (std::fs::read(&original), std::fs::read(&copy)) {
                        (Ok(a), Ok(b)) => a == b,
                        _ => false,
                    };
                    if same {
                        elroy_markdown::remove_file(&copy, &shown)
                    } else {
                        elroy_markdown::rename_file(&copy, &original, &shown)
                    }
                }
            };
        }
    }
}

impl MemoryStore {
    /// `update_outdated_or_incorrect_memory` (`docs/tools.md#update_outdated_or_incorrect_memory`,
    /// D8): the active memory named `name` gets a new version whose text is `{old raw
    /// body}\n\nUpdate ({ts}):\n{update_text}`, `ts` = `now` in `tz` as `YYYY-MM-DD HH:MM:SS`; the
    /// old file moves to `archive/` and its row becomes inactive; the new memory has the same name
    /// and the source `Memory(old id)`. Returns `(old, new)`, or `None` when no active memory has
    /// that name.
    ///
    /// Whole or absent: the old file gets its archive name (a hard link, the file staying in
    /// place), the new version is written over it, then one index transaction records both. On
    /// any failure the new file is removed and the old one put back, so the memory stays as it
    /// was; a process killed in between leaves the old or the new version active, never neither,
    /// which the next open indexes.
    ///
    /// # Errors
    /// [`MemoryError`] (the old file is missing or unreadable, lock, write, database).
    pub fn update(
        &self,
        name: &str,
        update_text: &str,
        now: Timestamp,
        tz: &TimeZone,
    ) -> Result<Option<(Memory, Memory)>, MemoryError> {
        let pair = {
            let _lock = self.lock()?;
            let Some(old) = self.active_by_name(name)? else {
                return Ok(None);
            };
            let Some(raw) = self.raw_body(&old)? else {
                return Err(MemoryError::MissingFile {
                    name: old.name.clone(),
                    file: self.display(&self.path_of(&old)),
                });
            };
            let ts = now
                .to_zoned_datetime(tz.clone())
                .strftime("%Y-%m-%d %H:%M:%S")
                .to_string();
            let text = format!("{raw}\n\nUpdate ({ts}):\n{update_text}");
            self.update_locked(&old, name, &text, now)?
        };
        self.embed_new(pair.1.id);
        Ok(Some(pair))
    }

    fn update_locked(
        &self,
        old: &Memory,
        name: &str,
        text: &str,
        now: Timestamp,
    ) -> Result<(Memory, Memory), MemoryError> {
        let mut undo = Undo::default();
        let done = self
            .db
            .with_conn_mapped(|c| -> Result<(Memory, Memory), MemoryError> {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let before = self.dir_sigs();
                // The old version first gets its archive name (it also stays in place), then
                // the new version replaces it, so a kill at any point leaves one of the two
                // active and the old one never only in the archive.
                let archived = self.archive_in(&tx, old, now, true, &mut undo)?;
                let from = self.path_of(old);
                let new = self.insert_new(
                    &tx,
                    name,
                    text,
                    &[MemorySource::memory(old.id)],
                    now,
                    Some(&old.file_name),
                    &mut undo,
                )?;
                if self.path_of(&new) != from && from.exists() {
                    elroy_markdown::remove_file(&from, &self.display(&from))?;
                }
                // The archive name's change time moved when the old name was replaced (one link
                // fewer): its row gets the signature it has now.
                let kept = self.path_of(&archived);
                let sig = crate::index::StampColumns::of_file(&kept);
                tx.execute(
                    "UPDATE memories SET file_size = ?3, file_mtime_ns = ?4, file_ino = ?5,
                       file_ctime_ns = ?6 WHERE user_id = ?1 AND id = ?2",
                    rusqlite::params![
                        self.opts.user_id,
                        archived.id,
                        sig.size,
                        sig.mtime_ns,
                        sig.ino,
                        sig.ctime_ns
                    ],
                )?;
                let old = archived;
                self.carry_dir_sigs(&tx, before)?;
                tx.commit()?;
                Ok((old, new))
            });
        if done.is_err() {
            undo.run();
        }
        done
    }
}
