//! Commits that failed for a moment: a bounded retry ([`retrying`]), and the journal of changes
//! that were saved but could not be committed (`.git/elroy-pending.jsonl`), committed under their
//! own message the next time elroy commits, undoes or starts ([`commit_pending`]). Uses `tree`,
//! `state`, `reader` and `error` (below it).
//!
//! The fault kind: a history commit that fails transiently. A `git` command the user runs (or an
//! editor plugin, or a backup tool) holds `.git/index.lock` or `refs/heads/main.lock` for a moment;
//! the tool's change is on disk already, and its commit must neither vanish nor turn into an
//! `external edit` that `elroy undo` then refuses.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use git2::{ErrorCode, ObjectType, Oid, Repository};
use jiff::Timestamp;
use serde_json::{Value, json};

use crate::error::HistoryError;
use crate::reader::FileState;
use crate::state::has_markers;
use crate::tree::{CommitIf, commit_files, sync_index};

/// How long a commit that finds a git lock file taken is retried before its change is journaled.
pub const RETRY_WINDOW: Duration = Duration::from_millis(1500);

/// The journal, relative to the home.
pub(crate) const JOURNAL: &str = ".git/elroy-pending.jsonl";

/// Runs `attempt` until it succeeds, fails with something other than a taken git lock
/// (`ErrorCode::Locked`: `index.lock`, `HEAD.lock`, a ref's `.lock`), or [`RETRY_WINDOW`] has passed
/// (waits of 10 ms growing to 160 ms between attempts). Returns the last result.
pub(crate) fn retrying<T>(
    mut attempt: impl FnMut() -> Result<T, HistoryError>,
) -> Result<T, HistoryError> {
    let started = Instant::now();
    let mut wait = Duration::from_millis(10);
    loop {
        match attempt() {
            Err(HistoryError::Git(e))
                if e.code() == ErrorCode::Locked && started.elapsed() < RETRY_WINDOW =>
            {
                tracing::debug!("versioned home: {e}; retrying in {wait:?}");
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(160));
            }
            other => return other,
        }
    }
}

/// One change saved to the stores but not committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    /// The whole commit message, e.g. `delete_agenda_item: agenda/Water_the_plants.md`.
    pub(crate) message: String,
    /// When the change was made (seconds since the epoch), the commit's time.
    pub(crate) time: i64,
    /// Each changed file and the state the change left it in.
    pub(crate) files: BTreeMap<String, FileState>,
}

impl Pending {
    fn to_line(&self) -> String {
        let files: serde_json::Map<String, Value> = self
            .files
            .iter()
            .map(|(path, state)| {
                let state = state.map_or(Value::Null, |id| Value::String(id.to_string()));
                (path.clone(), state)
            })
            .collect();
        json!({"message": self.message, "time": self.time, "files": files}).to_string()
    }

    fn from_line(line: &str) -> Option<Self> {
        let value: Value = serde_json::from_str(line).ok()?;
        let files = value
            .get("files")?
            .as_object()?
            .iter()
            .map(|(path, state)| {
                let state = match state {
                    Value::Null => None,
                    Value::String(hex) => Some(Oid::from_str(hex).ok()?),
                    _ => return None,
                };
                Some((path.clone(), state))
            })
            .collect::<Option<BTreeMap<_, _>>>()?;
        Some(Pending {
            message: value.get("message")?.as_str()?.to_owned(),
            time: value.get("time")?.as_i64()?,
            files,
        })
    }
}

/// The state of `path` in the work tree, its content written to the object database when it can
/// be (else only hashed; [`commit_pending`] then reads the file again).
pub(crate) fn stored_state(
    repo: &Repository,
    root: &Path,
    path: &str,
) -> Result<FileState, HistoryError> {
    match std::fs::read(root.join(path)) {
        Ok(bytes) => match repo.blob(&bytes) {
            Ok(id) => Ok(Some(id)),
            Err(_) => Ok(Some(Oid::hash_object(ObjectType::Blob, &bytes)?)),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HistoryError::Read {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// Appends `pending` to the journal. Call with the home lock held.
pub(crate) fn journal(root: &Path, pending: &Pending) -> Result<(), HistoryError> {
    let path = root.join(JOURNAL);
    let mut text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(HistoryError::Read {
                path: JOURNAL.into(),
                message: e.to_string(),
            });
        }
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&pending.to_line());
    text.push('\n');
    elroy_markdown::write_atomic(&path, text.as_bytes(), JOURNAL)?;
    Ok(())
}

/// Whether changes wait in the journal.
pub(crate) fn has_pending(root: &Path) -> bool {
    root.join(JOURNAL).exists()
}

/// Commits the journaled changes, oldest first, each under its own message and time, exactly
/// in the state the change left its files (a file whose content is not in the object database
/// is taken from the work tree), then removes the journal. A change whose files HEAD already
/// holds makes no commit. Call with the home lock held and HEAD born. Returns how many commits
/// it made.
///
/// # Errors
/// [`HistoryError`] when the journal cannot be read or a commit fails (the journal is kept, and
/// tried again at the next commit); an unreadable line is skipped with a warning.
pub(crate) fn commit_pending(repo: &Repository, root: &Path) -> Result<usize, HistoryError> {
    let path = root.join(JOURNAL);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => {
            return Err(HistoryError::Read {
                path: JOURNAL.into(),
                message: e.to_string(),
            });
        }
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut made = 0;
    for (n, line) in lines.iter().enumerate() {
        let Some(pending) = Pending::from_line(line) else {
            tracing::warn!("versioned home: skipped an unreadable line of {JOURNAL}: {line}");
            continue;
        };
        match retrying(|| commit_pending_one(repo, root, &pending)) {
            Ok(Some(_)) => made += 1,
            Ok(None) => {}
            Err(e) => {
                // Keep only what is still pending, so a change is never committed twice.
                let mut rest = lines[n..].join("\n");
                rest.push('\n');
                elroy_markdown::write_atomic(&path, rest.as_bytes(), JOURNAL)?;
                return Err(e);
            }
        }
    }
    elroy_markdown::remove_file(&path, JOURNAL)?;
    let mut paths: Vec<String> = lines
        .iter()
        .filter_map(|line| Pending::from_line(line))
        .flat_map(|pending| pending.files.into_keys())
        .collect();
    paths.sort();
    paths.dedup();
    sync_index(repo, root, &paths);
    Ok(made)
}

fn commit_pending_one(
    repo: &Repository,
    root: &Path,
    pending: &Pending,
) -> Result<Option<Oid>, HistoryError> {
    let mut files = Vec::new();
    for (path, state) in &pending.files {
        let state = match state {
            // A change made on a file that held conflict markers: once the person has resolved
            // the file, its resolution is what the change left (the markers never go in).
            Some(id)
                if repo
                    .find_blob(*id)
                    .is_ok_and(|blob| has_markers(blob.content())) =>
            {
                stored_state(repo, root, path)?
            }
            Some(id) if repo.find_blob(*id).is_ok() => Some(*id),
            Some(_) => stored_state(repo, root, path)?,
            None => None,
        };
        files.push((path.clone(), state));
    }
    let time = Timestamp::from_second(pending.time).unwrap_or(Timestamp::UNIX_EPOCH);
    commit_files(
        repo,
        root,
        time,
        &files,
        &|_| pending.message.clone(),
        CommitIf::Changed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_lines_round_trip() {
        let id = Oid::hash_object(ObjectType::Blob, b"x").ok();
        let pending = Pending {
            message: "delete_agenda_item: agenda/a.md\n\nmore".into(),
            time: 1_773_649_800,
            files: BTreeMap::from([("agenda/a.md".into(), None), ("agenda/b.md".into(), id)]),
        };
        assert_eq!(Pending::from_line(&pending.to_line()), Some(pending));
        assert_eq!(Pending::from_line("{\"message\":1}"), None);
        assert_eq!(Pending::from_line("not json"), None);
    }
}
