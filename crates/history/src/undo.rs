//! [`VersionedHome::undo`]: revert the last change elroy made. The top of the crate with
//! `recorder`: uses `log`, `home`, `pending`, `tree`, `reader`, `locks`, `machine` and `error`.

use std::path::Path;

use git2::{ObjectType, Oid, Repository, Tree};
use jiff::Timestamp;

use crate::error::HistoryError;
use crate::home::{EXTERNAL_EDIT, INITIAL_IMPORT, VersionedHome};
use crate::locks::GitWrite;
use crate::log::{Change, history_walk};
use crate::pending::{Pending, commit_pending, journal, retrying};
use crate::reader::head_born;
use crate::tree::{CommitIf, check_state, commit_files, sync_index};

/// The summary prefix of an undo commit: `undo: {original summary}`.
pub const UNDO_PREFIX: &str = "undo: ";
/// The body line of an undo commit naming the commit it reverts: `Reverts {full id}`.
const REVERTS: &str = "Reverts ";

/// What [`VersionedHome::undo`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The change that was reverted.
    pub original: Change,
    /// The new `undo: …` commit.
    pub commit: Change,
}

impl VersionedHome {
    /// Reverts the last change elroy made: every file of that commit gets its content from before
    /// it, byte for byte (deleted files come back, created files are removed), committed as
    /// `undo: {original summary}`. Commits that are not elroy's (`external edit`) are passed over,
    /// as are changes already undone, so a second `undo` reverts the change before. Runs under the
    /// home lock.
    ///
    /// # Errors
    /// [`HistoryError::EditedSince`] (nothing is changed) when a file of that change is no longer as
    /// the change left it: edited by hand, or changed by something not yet committed;
    /// [`HistoryError::NothingToUndo`] when only the initial import and outside edits are left;
    /// [`HistoryError::NotRecorded`] when the files were restored but the commit failed even after
    /// retrying for [`crate::RETRY_WINDOW`] (it is journaled and made at the next start).
    pub fn undo(&self, now: Timestamp) -> Result<Undone, HistoryError> {
        let _lock = GitWrite::begin(self.root())?;
        let repo = self.repo()?;
        if !head_born(&repo)? {
            return Err(HistoryError::NothingToUndo);
        }
        // Never while git has not finished something (a merge, a rebase, a detached HEAD).
        check_state(&repo, self.root())?;
        // A change saved but not committed earlier is committed first, under its own name: it is
        // then the one undone, as the user expects.
        commit_pending(&repo, self.root())?;
        let target = find_target(&repo)?;
        let target_commit = repo.find_commit(target)?;
        let Some(parent) = target_commit.parents().next() else {
            return Err(HistoryError::NothingToUndo);
        };
        let original = Change::of(&repo, &target_commit)?;
        let after = target_commit.tree()?;
        let before = parent.tree()?;
        // Refuse before touching anything.
        let head_tree = repo.head()?.peel_to_tree()?;
        for path in &original.paths {
            let now_blob = work_tree_blob(self.root(), path)?;
            if now_blob != blob_at(&after, path)? {
                if now_blob == blob_at(&head_tree, path)? && only_names_since(&repo, target, path)?
                {
                    // The only change since is this machine's `elroy sync` writing the memory's
                    // `name` key (bookkeeping: the name is in state.db, the next sync writes it
                    // again); reverting it with the change loses nothing.
                    continue;
                }
                if let Some(by) = pulled_since(&repo, target, path)? {
                    return Err(HistoryError::ChangedByPull {
                        message: original.summary.clone(),
                        id: original.short_id.clone(),
                        path: path.clone(),
                        by,
                    });
                }
                return Err(HistoryError::EditedSince {
                    message: original.summary.clone(),
                    id: original.short_id.clone(),
                    path: path.clone(),
                });
            }
        }
        let mut restored: Vec<(String, Option<Oid>)> = Vec::new();
        for path in &original.paths {
            let file = self.root().join(path);
            let state = blob_at(&before, path)?;
            match state {
                Some(id) => {
                    let blob = repo.find_blob(id)?;
                    elroy_markdown::write_atomic(&file, blob.content(), path)?;
                }
                None => {
                    if file.exists() {
                        elroy_markdown::remove_file(&file, path)?;
                    }
                }
            }
            restored.push((path.clone(), state));
        }
        let message = format!(
            "{UNDO_PREFIX}{}\n\n{REVERTS}{}\n",
            original.summary, original.id
        );
        let id = match retrying(|| commit_restored(&repo, self.root(), now, &message, &restored)) {
            Ok(id) => id,
            Err(e) => {
                // The files are restored; the commit saying so waits in the journal.
                let pending = Pending {
                    message: message.clone(),
                    time: now.as_second(),
                    files: restored.iter().cloned().collect(),
                };
                return Err(match journal(self.root(), &pending) {
                    Ok(()) => HistoryError::NotRecorded {
                        summary: format!("{UNDO_PREFIX}{}", original.summary),
                        reason: e.to_string(),
                    },
                    Err(j) => HistoryError::NotJournaled {
                        reason: format!("{e}; {j}"),
                    },
                });
            }
        };
        let commit = Change::of(&repo, &repo.find_commit(id)?)?;
        Ok(Undone { original, commit })
    }
}

/// One attempt at the undo commit: HEAD's tree with `restored` (path, blob or deleted), updated
/// path by path; `.git/index` is brought up to date for those paths.
fn commit_restored(
    repo: &Repository,
    root: &Path,
    now: Timestamp,
    message: &str,
    restored: &[(String, Option<Oid>)],
) -> Result<Oid, HistoryError> {
    let id = commit_files(
        repo,
        root,
        now,
        restored,
        &|_| message.to_owned(),
        CommitIf::Always,
    )?
    .ok_or_else(|| HistoryError::Git(git2::Error::from_str("the undo commit was not made")))?;
    let paths: Vec<String> = restored.iter().map(|(p, _)| p.clone()).collect();
    sync_index(repo, root, &paths);
    Ok(id)
}

/// The newest commit elroy made that is not undone yet.
fn find_target(repo: &Repository) -> Result<Oid, HistoryError> {
    let mut undone: Vec<Oid> = Vec::new();
    // Every commit reachable from HEAD, newest first: after `elroy sync` this machine's own
    // changes may be behind another machine's merge (its second parent), not on the first-parent
    // line.
    for id in history_walk(repo)? {
        let id = id?;
        let commit = repo.find_commit(id)?;
        let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
        let summary = message.lines().next().unwrap_or_default();
        if commit.parent_count() == 0 || summary == INITIAL_IMPORT {
            // A synced home has one initial import per machine: go on to older changes.
            continue;
        }
        if summary.starts_with(UNDO_PREFIX) {
            if let Some(reverted) = message
                .lines()
                .find_map(|l| l.strip_prefix(REVERTS))
                .and_then(|hex| Oid::from_str(hex.trim()).ok())
            {
                undone.push(reverted);
            }
            continue;
        }
        if summary == EXTERNAL_EDIT
            || summary.starts_with(crate::machine::SYNC_PREFIX)
            || crate::machine::is_other_machine(&commit)
            || undone.contains(&id)
        {
            // Outside edits, `elroy sync`'s merges and renumberings, and changes another machine
            // made (pulled by a sync) are not this machine's to undo.
            continue;
        }
        return Ok(id);
    }
    Err(HistoryError::NothingToUndo)
}

/// Whether every commit after `target` (on HEAD's side) that changed `path` is this machine's own
/// `sync: names` commit (the memory `name` key `elroy sync` adds before pushing).
fn only_names_since(repo: &Repository, target: Oid, path: &str) -> Result<bool, HistoryError> {
    let mut walk = repo.revwalk()?;
    walk.push_head()?;
    walk.hide(target)?;
    let mut any = false;
    for id in walk {
        let commit = repo.find_commit(id?)?;
        // Changed by this commit: different from every parent (a merge that kept one side's
        // version did not change it), or present in a root commit.
        let now = blob_at(&commit.tree()?, path)?;
        let mut changed = commit.parent_count() > 0 || now.is_some();
        for parent in commit.parents() {
            if blob_at(&parent.tree()?, path)? == now {
                changed = false;
                break;
            }
        }
        if !changed {
            continue;
        }
        let names = String::from_utf8_lossy(commit.message_bytes())
            .lines()
            .next()
            .is_some_and(|l| l == NAMES_SUMMARY);
        if !names || crate::machine::is_other_machine(&commit) {
            return Ok(false);
        }
        any = true;
    }
    Ok(any)
}

/// The summary of the commit in which `elroy sync` writes memory names into their files.
const NAMES_SUMMARY: &str = "sync: names";

/// What changed `path` after `target` through `elroy sync`, in words for the refusal: a commit of
/// another machine, a sync merge, or this machine's own `sync: …` bookkeeping on HEAD's side of
/// `target`. `None` when no sync touched it (it was edited by hand).
fn pulled_since(
    repo: &Repository,
    target: Oid,
    path: &str,
) -> Result<Option<String>, HistoryError> {
    let mut walk = repo.revwalk()?;
    walk.push_head()?;
    walk.hide(target)?;
    for id in walk {
        let commit = repo.find_commit(id?)?;
        let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
        let sync = message.starts_with(crate::machine::SYNC_PREFIX);
        let other = crate::machine::is_other_machine(&commit);
        if !sync && !other {
            continue;
        }
        let tree = commit.tree()?;
        let changed = match commit.parents().next() {
            Some(parent) => blob_at(&parent.tree()?, path)? != blob_at(&tree, path)?,
            None => false,
        };
        if changed {
            let summary = message.lines().next().unwrap_or_default();
            let by = match crate::machine::commit_machine(&commit).filter(|_| other) {
                Some(machine) => format!("a change from {machine} (pulled by elroy sync)"),
                None => match summary.strip_prefix("sync: merge from ") {
                    Some(machine) => format!("elroy sync merging changes from {machine}"),
                    // This machine's own sync bookkeeping (`sync: renumber`, `sync: names`).
                    None => format!("this machine's elroy sync ('{summary}')"),
                },
            };
            return Ok(Some(by));
        }
    }
    Ok(None)
}

/// The blob at `path` in `tree`, if any.
fn blob_at(tree: &Tree<'_>, path: &str) -> Result<Option<Oid>, HistoryError> {
    match tree.get_path(Path::new(path)) {
        Ok(entry) if entry.kind() == Some(ObjectType::Blob) => Ok(Some(entry.id())),
        Ok(_) => Ok(None),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The blob id of the work-tree file at `path` (as `git hash-object` computes it, raw bytes), or
/// `None` when it does not exist.
fn work_tree_blob(root: &Path, path: &str) -> Result<Option<Oid>, HistoryError> {
    match std::fs::read(root.join(path)) {
        Ok(bytes) => Ok(Some(Oid::hash_object(ObjectType::Blob, &bytes)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HistoryError::Read {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}
