//! [`Recorder`]: the call observer that commits what each tool call changed. The top of the
//! crate with `undo`: uses `home`, `pending`, `tree`, `reader`, `locks`, `paths` and `error`.

use git2::{Oid, Repository};
use jiff::Timestamp;
use serde_json::{Map, Value};

use elroy_core::{CallObserver, ObservedCall, ToolContext, ToolResult};
use elroy_markdown::{Before, Touched, WriteScope};

use crate::error::HistoryError;
use crate::home::{CallsLock, VersionedHome, external_edit_message, tool_message};
use crate::locks::GitWrite;
use crate::paths::is_store_path;
use crate::pending::{Pending, commit_pending, has_pending, journal, retrying};
use crate::reader::{FileState, TreeReader, hash, head_born, read_work_tree};
use crate::tree::{CommitIf, commit_files, store_candidates, sync_index_after_call};

/// Commits the store files a tool call changed as `{tool}: {paths}` (e.g.
/// `delete_agenda_item: agenda/Water_the_plants.md`). Installed on the registry by the runtime
/// ([`elroy_core::ToolRegistry::set_call_observer`]), so direct calls, model turns and MCP calls are
/// all recorded.
///
/// The paths come from the write journal ([`elroy_markdown::WriteScope`]): every store write goes
/// through `elroy_markdown`, which notes, for each path the call changed, its content just before
/// the call's first change of it. After the call only those paths are looked at (no status walk
/// of the home): a path whose content is back to what it was, or already committed, makes no
/// commit; one whose earlier content differs from the last commit (a hand edit not committed yet)
/// gets two commits, the hand edit as `external edit`, then the tool's change, so undoing the tool
/// never reverts the hand edit. Hand edits of files the call did not touch are left for the next
/// start (`external edit`). A call that changed nothing touches no git file at all. A commit that
/// finds a git lock taken is retried for [`crate::RETRY_WINDOW`]; one that still fails never fails
/// the call: the change is journaled, committed under the tool's name the next time elroy commits
/// or starts, and the call's result gets a note saying it was saved but not recorded
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
    scope: WriteScope,
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
        if let Err(e) = &calls {
            tracing::warn!(tool = name, "versioned home: {e}");
        }
        Box::new(RecordedCall {
            home: self.home.clone(),
            name: name.to_owned(),
            scope: WriteScope::begin(self.home.root()),
            _calls: calls.ok(),
        })
    }
}

impl ObservedCall for RecordedCall {
    fn finished(self: Box<Self>, ctx: &ToolContext, _result: &ToolResult) -> Option<String> {
        let touched = self.scope.finish();
        match self
            .home
            .commit_touched(ctx.time.now(), &self.name, &touched)
        {
            Ok(Some(id)) => {
                tracing::debug!(tool = %self.name, commit = %id, "versioned home: committed");
                None
            }
            Ok(None) => None,
            Err(
                e @ (HistoryError::NotRecorded { .. }
                | HistoryError::NotRecordedUnfinished { .. }
                | HistoryError::NotJournaled { .. }),
            ) => {
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

/// A path to commit: its state and, when it exists, its bytes (written to the object database
/// when committing).
type Staged = (String, FileState, Option<Vec<u8>>);

impl VersionedHome {
    /// Runs `work` (a change to the stores that is not a tool call, e.g. background memory work)
    /// and commits what it changed as `{label}: {paths}`, exactly as [`Recorder`] does for a tool
    /// call: hand edits made before are left out, a commit that fails is retried and then journaled
    /// (see [`HistoryError::NotRecorded`]), and logged. `work` runs on the calling thread; the
    /// changes it makes there are its own even while a tool call runs on another thread of the
    /// process ([`WriteScope::on_this_thread`]). Returns what `work` returned.
    pub fn record<R>(&self, now: Timestamp, label: &str, work: impl FnOnce() -> R) -> R {
        let calls = CallsLock::open(self.root()).and_then(CallsLock::shared);
        if let Err(e) = &calls {
            tracing::warn!(label, "versioned home: {e}");
        }
        let scope = WriteScope::on_this_thread(self.root());
        let result = work();
        let touched = scope.finish();
        if let Err(e) = self.commit_touched(now, label, &touched) {
            tracing::warn!(label, "versioned home: could not commit: {e}");
        }
        drop(calls);
        result
    }

    /// Commits what a call of `tool` changed, given the paths it touched (from the write journal)
    /// and their content before: paths whose content is as before, or as HEAD has it, are left
    /// alone; a path whose content before differs from HEAD gets that content committed first as
    /// `external edit`. Changes journaled by earlier failed commits are committed first. A commit
    /// that finds a git lock taken is retried for [`crate::RETRY_WINDOW`]; if it still fails, the
    /// change is journaled. `.git/index` is brought up to date for the committed paths (left to
    /// the next walk when it is large: `tree::sync_index_after_call`).
    ///
    /// # Errors
    /// [`HistoryError::NotRecorded`] (journaled) or [`HistoryError::NotJournaled`] when the call
    /// changed files and they could not be committed; other [`HistoryError`]s when the lock or the
    /// repository could not even be opened (nothing is known about the call's changes then).
    pub(crate) fn commit_touched(
        &self,
        now: Timestamp,
        tool: &str,
        touched: &[Touched],
    ) -> Result<Option<Oid>, HistoryError> {
        let touched: Vec<&Touched> = touched.iter().filter(|t| is_store_path(&t.path)).collect();
        if touched.is_empty() && !has_pending(self.root()) {
            return Ok(None);
        }
        let _lock = GitWrite::begin(self.root())?;
        let repo = self.repo()?;
        if !head_born(&repo)? {
            // No history yet (the start failed): the first commit takes the stores as they are.
            let candidates = store_candidates(&repo)?;
            return self
                .commit_work_tree(&repo, candidates, now, &|paths| tool_message(tool, paths));
        }
        // Earlier changes that could not be committed go first, in order.
        let replayed = commit_pending(&repo, self.root());
        let mut head = TreeReader::new(&repo, repo.head()?.peel_to_tree()?);
        let mut earlier: Vec<Staged> = Vec::new();
        let mut ours: Vec<Staged> = Vec::new();
        for t in touched {
            let committed = head.blob(&t.path)?;
            let (before, before_bytes) = match &t.before {
                Before::Missing => (None, None),
                Before::Bytes(bytes) => (hash(Some(bytes))?, Some(bytes.clone())),
                Before::Unreadable(e) => {
                    tracing::warn!(
                        path = %t.path,
                        "versioned home: its content before {tool} was unreadable ({e}); \
                         taken as last committed"
                    );
                    (committed, None)
                }
            };
            let bytes = read_work_tree(self.root(), &t.path)?;
            let state = hash(bytes.as_deref())?;
            if state == before || state == committed {
                continue;
            }
            if before != committed {
                earlier.push((t.path.clone(), before, before_bytes));
            }
            ours.push((t.path.clone(), state, bytes));
        }
        if ours.is_empty() {
            if let Err(e) = replayed {
                tracing::warn!("versioned home: journaled changes still not committed: {e}");
            }
            return Ok(None);
        }
        let committed = replayed.and_then(|_| {
            let earlier = store_blobs(&repo, &earlier)?;
            let ours = store_blobs(&repo, &ours)?;
            retrying(|| {
                if !earlier.is_empty() {
                    commit_files(
                        &repo,
                        self.root(),
                        now,
                        &earlier,
                        &external_edit_message,
                        CommitIf::Changed,
                    )?;
                }
                commit_files(
                    &repo,
                    self.root(),
                    now,
                    &ours,
                    &|paths| tool_message(tool, paths),
                    CommitIf::Changed,
                )
            })
        });
        let (reason, unfinished) = match committed {
            Ok(id) => {
                let paths: Vec<String> = ours.iter().map(|(p, _, _)| p.clone()).collect();
                sync_index_after_call(&repo, self.root(), &paths);
                return Ok(id);
            }
            // Git has not finished something in the home (a merge, a rebase, a detached HEAD,
            // conflict markers): the change waits in the journal until it has.
            Err(HistoryError::Unfinished(state)) => (state.to_string(), Some(state)),
            Err(e) => (e.to_string(), None),
        };
        // Saved but not committed: journal it, so it is committed under the tool's name later.
        let paths: Vec<String> = ours.iter().map(|(p, _, _)| p.clone()).collect();
        let mut entries = Vec::new();
        if !earlier.is_empty() {
            let earlier_paths: Vec<String> = earlier.iter().map(|(p, _, _)| p.clone()).collect();
            entries.push(Pending {
                message: external_edit_message(&earlier_paths),
                time: now.as_second(),
                files: earlier
                    .iter()
                    .map(|(p, state, bytes)| (p.clone(), stored(&repo, *state, bytes.as_deref())))
                    .collect(),
            });
        }
        let message = tool_message(tool, &paths);
        entries.push(Pending {
            message: message.clone(),
            time: now.as_second(),
            files: ours
                .iter()
                .map(|(p, state, bytes)| (p.clone(), stored(&repo, *state, bytes.as_deref())))
                .collect(),
        });
        let summary = message.lines().next().unwrap_or_default().to_owned();
        match entries
            .iter()
            .try_for_each(|pending| journal(self.root(), pending))
        {
            Ok(()) => Err(match unfinished {
                Some(state) => HistoryError::NotRecordedUnfinished { summary, state },
                None => HistoryError::NotRecorded { summary, reason },
            }),
            Err(e) => Err(HistoryError::NotJournaled {
                reason: format!("{reason}; {e}"),
            }),
        }
    }
}

/// Writes the bytes of `staged` to the object database; returns the paths and states.
fn store_blobs(
    repo: &Repository,
    staged: &[Staged],
) -> Result<Vec<(String, FileState)>, HistoryError> {
    staged
        .iter()
        .map(|(path, state, bytes)| {
            if let Some(bytes) = bytes {
                repo.blob(bytes)?;
            }
            Ok((path.clone(), *state))
        })
        .collect()
}

/// `state`, its bytes written to the object database when they can be (for the journal: a state
/// whose blob is missing is taken from the work tree when the journal is committed).
fn stored(repo: &Repository, state: FileState, bytes: Option<&[u8]>) -> FileState {
    if let Some(bytes) = bytes {
        let _ = repo.blob(bytes);
    }
    state
}
