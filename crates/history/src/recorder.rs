//! [`Recorder`]: the call observer that commits what each tool call changed.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{Index, IndexEntry, IndexTime, ObjectType, Oid, Repository};
use jiff::Timestamp;
use serde_json::{Map, Value};

use elroy_core::{CallObserver, ObservedCall, ToolContext, ToolResult};
use elroy_markdown::HomeLock;

use crate::home::{
    CallsLock, changed_paths, clear_stale_git_locks, external_edit_message, head_born, signature,
    store_statuses, tool_message,
};
use crate::pending::{FileState, Pending, retrying, stored_state, write_index_best_effort};
use crate::{HistoryError, VersionedHome};

/// Commits the store files a tool call changed as `{tool}: {paths}` (e.g.
/// `delete_agenda_item: agenda/Water_the_plants.md`). Installed on the registry by the runtime
/// ([`elroy_core::ToolRegistry::set_call_observer`]), so direct calls, model turns and MCP calls are
/// all recorded.
///
/// Before the tool runs it notes the store files that already differ from the last commit (hand
/// edits not yet committed, or another process's change about to be committed) and keeps their
/// content; after, it commits only what the call changed. A file that was edited by hand and then
/// changed by the tool gets two commits: the hand edit as `external edit`, then the tool's change,
/// so undoing the tool never reverts the hand edit. A call that changed nothing makes no commit. A
/// commit that finds a git lock taken is retried for [`crate::RETRY_WINDOW`]; one that still fails
/// never fails the call: the change is journaled, committed under the tool's name the next time
/// elroy commits or starts, and the call's result gets a note saying it was saved but not recorded
/// ([`HistoryError::NotRecorded`]).
#[derive(Debug, Clone)]
pub struct Recorder {
    home: VersionedHome,
}

impl Recorder {
    /// A recorder for `home`.
    pub fn new(home: VersionedHome) -> Self {
        Recorder { home }
    }
}

struct RecordedCall {
    home: VersionedHome,
    name: String,
    before: BTreeMap<String, FileState>,
    // Held (shared) until the call's changes are committed; see `CallsLock`.
    _calls: Option<CallsLock>,
}

impl CallObserver for Recorder {
    fn call_starting(
        &self,
        _ctx: &ToolContext,
        name: &str,
        _arguments: &Map<String, Value>,
    ) -> Box<dyn ObservedCall> {
        let calls = CallsLock::open(self.home.root()).and_then(CallsLock::shared);
        let before = self.home.snapshot();
        if let Err(e) = calls.as_ref().and(before.as_ref()) {
            tracing::warn!(tool = name, "versioned home: {e}");
        }
        Box::new(RecordedCall {
            home: self.home.clone(),
            name: name.to_owned(),
            before: before.unwrap_or_default(),
            _calls: calls.ok(),
        })
    }
}

impl ObservedCall for RecordedCall {
    fn finished(self: Box<Self>, ctx: &ToolContext, _result: &ToolResult) -> Option<String> {
        match self
            .home
            .commit_call(ctx.time.now(), &self.name, &self.before)
        {
            Ok(Some(id)) => {
                tracing::debug!(tool = %self.name, commit = %id, "versioned home: committed");
                None
            }
            Ok(None) => None,
            Err(e @ (HistoryError::NotRecorded { .. } | HistoryError::NotJournaled { .. })) => {
                tracing::warn!(tool = %self.name, "versioned home: {e}");
                Some(format!("Note: {e}."))
            }
            Err(e) => {
                tracing::warn!(tool = %self.name, "versioned home: could not commit: {e}");
                None
            }
        }
    }
}

impl VersionedHome {
    /// Runs `work` (a change to the stores that is not a tool call, e.g. background memory work)
    /// and commits what it changed as `{label}: {paths}`, exactly as [`Recorder`] does for a tool
    /// call: hand edits made before are left out, a commit that fails is retried and then journaled
    /// (see [`HistoryError::NotRecorded`]), and logged. Returns what `work` returned.
    pub fn record<R>(&self, now: Timestamp, label: &str, work: impl FnOnce() -> R) -> R {
        let calls = CallsLock::open(self.root()).and_then(CallsLock::shared);
        let before = self.snapshot();
        if let Err(e) = calls.as_ref().and(before.as_ref()) {
            tracing::warn!(label, "versioned home: {e}");
        }
        let result = work();
        match self.commit_call(now, label, &before.unwrap_or_default()) {
            Ok(_) => {}
            Err(e) => tracing::warn!(label, "versioned home: could not commit: {e}"),
        }
        drop(calls);
        result
    }

    /// The store files that differ from the last commit, with their content written to the object
    /// database (so a hand edit can be committed as it was even after a tool overwrites it).
    fn snapshot(&self) -> Result<BTreeMap<String, FileState>, HistoryError> {
        let repo = self.repo()?;
        let mut before = BTreeMap::new();
        for (path, deleted) in store_statuses(&repo)? {
            let state = if deleted {
                None
            } else {
                match std::fs::read(self.root().join(&path)) {
                    Ok(bytes) => Some(repo.blob(&bytes)?),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(read_err(&path, &e)),
                }
            };
            before.insert(path, state);
        }
        Ok(before)
    }

    /// Commits what a call of `tool` changed, given the [`VersionedHome::snapshot`] taken before
    /// it: files unchanged since then are left alone; files that were dirty before and changed
    /// since get their earlier state committed first as `external edit`. Changes journaled by
    /// earlier failed commits are committed first. A commit that finds a git lock taken is retried
    /// for [`crate::RETRY_WINDOW`]; if it still fails, the change is journaled.
    ///
    /// # Errors
    /// [`HistoryError::NotRecorded`] (journaled) or [`HistoryError::NotJournaled`] when the call
    /// changed files and they could not be committed; other [`HistoryError`]s when the lock or the
    /// repository could not even be opened (nothing is known about the call's changes then).
    pub(crate) fn commit_call(
        &self,
        now: Timestamp,
        tool: &str,
        before: &BTreeMap<String, FileState>,
    ) -> Result<Option<Oid>, HistoryError> {
        // Straight to the lock (45 µs uncontended): a status walk outside it would only be repeated
        // inside it.
        let _lock = HomeLock::acquire(self.root())?;
        clear_stale_git_locks(self.root());
        let repo = self.repo()?;
        if !head_born(&repo)? {
            drop(_lock);
            return self.commit_changes(now, &|paths| tool_message(tool, paths));
        }
        // Earlier changes that could not be committed go first, in order.
        let replayed = self.commit_pending(&repo);
        let mut ours: Vec<(String, bool)> = Vec::new();
        let mut earlier: Vec<(String, FileState)> = Vec::new();
        for (path, deleted) in store_statuses(&repo)? {
            let state = if deleted {
                None
            } else {
                hash_file(self.root(), &path)?
            };
            match before.get(&path) {
                Some(old) if *old == state => {}
                Some(old) => {
                    earlier.push((path.clone(), *old));
                    ours.push((path, deleted));
                }
                None => ours.push((path, deleted)),
            }
        }
        if ours.is_empty() {
            if let Err(e) = replayed {
                tracing::warn!("versioned home: journaled changes still not committed: {e}");
            }
            return Ok(None);
        }
        let committed =
            replayed.and_then(|_| retrying(|| commit_ours(&repo, now, tool, &earlier, &ours)));
        let reason = match committed {
            Ok(id) => return Ok(id),
            Err(e) => e.to_string(),
        };
        // Saved but not committed: journal it, so it is committed under the tool's name later.
        let paths: Vec<String> = ours.iter().map(|(p, _)| p.clone()).collect();
        let mut entries = Vec::new();
        if !earlier.is_empty() {
            let earlier_paths: Vec<String> = earlier.iter().map(|(p, _)| p.clone()).collect();
            entries.push(Pending {
                message: external_edit_message(&earlier_paths),
                time: now.as_second(),
                files: earlier.iter().cloned().collect(),
            });
        }
        let message = tool_message(tool, &paths);
        let files = paths
            .iter()
            .map(|path| Ok((path.clone(), stored_state(&repo, self.root(), path)?)))
            .collect::<Result<BTreeMap<_, _>, HistoryError>>();
        let journaled = files.and_then(|files| {
            entries.push(Pending {
                message: message.clone(),
                time: now.as_second(),
                files,
            });
            entries.iter().try_for_each(|pending| self.journal(pending))
        });
        match journaled {
            Ok(()) => Err(HistoryError::NotRecorded {
                summary: message.lines().next().unwrap_or_default().to_owned(),
                reason,
            }),
            Err(e) => Err(HistoryError::NotJournaled {
                reason: format!("{reason}; {e}"),
            }),
        }
    }
}

/// One attempt at committing a call's changes: the `earlier` states of files that were dirty before
/// it as `external edit`, then `ours` (the work tree's current files) as `{tool}: {paths}`. The tree
/// is built in memory from HEAD's; `.git/index` is updated when it can be.
fn commit_ours(
    repo: &Repository,
    now: Timestamp,
    tool: &str,
    earlier: &[(String, FileState)],
    ours: &[(String, bool)],
) -> Result<Option<Oid>, HistoryError> {
    let mut index = repo.index()?;
    index.read_tree(&repo.head()?.peel_to_tree()?)?;
    if !earlier.is_empty() {
        for (path, state) in earlier {
            match state {
                Some(id) => index.add(&entry(path, *id))?,
                None => remove(&mut index, path)?,
            }
        }
        commit_index(repo, &mut index, now, &external_edit_message)?;
    }
    for (path, deleted) in ours {
        if *deleted {
            remove(&mut index, path)?;
        } else {
            index.add_path(Path::new(path))?;
        }
    }
    commit_index(repo, &mut index, now, &|paths| tool_message(tool, paths))
}

/// Writes `index` and commits its tree on HEAD with `message_for(changed paths)`; `None` when the
/// tree equals HEAD's.
fn commit_index(
    repo: &Repository,
    index: &mut Index,
    now: Timestamp,
    message_for: &dyn Fn(&[String]) -> String,
) -> Result<Option<Oid>, HistoryError> {
    write_index_best_effort(index)?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let head = repo.head()?.peel_to_commit()?;
    let paths = changed_paths(repo, Some(&head.tree()?), &tree)?;
    if paths.is_empty() {
        return Ok(None);
    }
    let sig = signature(now)?;
    Ok(Some(repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        &message_for(&paths),
        &tree,
        &[&head],
    )?))
}

fn remove(index: &mut Index, path: &str) -> Result<(), HistoryError> {
    if index.get_path(Path::new(path), 0).is_some() {
        index.remove_path(Path::new(path))?;
    }
    Ok(())
}

/// An index entry for a regular file with blob `id` (no stat data: the next status re-reads the
/// file).
pub(crate) fn entry(path: &str, id: Oid) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: 0o100_644,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: u16::try_from(path.len()).unwrap_or(0xfff).min(0xfff),
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

fn hash_file(root: &Path, path: &str) -> Result<FileState, HistoryError> {
    match std::fs::read(root.join(path)) {
        Ok(bytes) => Ok(Some(Oid::hash_object(ObjectType::Blob, &bytes)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(read_err(path, &e)),
    }
}

fn read_err(path: &str, e: &std::io::Error) -> HistoryError {
    HistoryError::Read {
        path: path.to_owned(),
        message: e.to_string(),
    }
}
