//! [`sync`]: one round of `elroy sync` — commit, fetch, merge, update the home, push.
//!
//! The order makes a kill at any step safe (nothing lost, the home readable, the next sync
//! completes):
//!
//! 0. git locks a killed elroy (or a killed sync's fetch) left are removed, named in the report;
//!    nothing happens while git has not finished something in the home (a merge, a rebase, a
//!    detached HEAD, an unmerged index: [`crate::SyncError::Unfinished`]),
//!    and a lock a running `git` holds is waited for ([`GIT_WAIT`]), then named;
//! 1. hand edits and journaled changes are committed (`VersionedHome::start`), memory names and
//!    agenda `uid`s are written into the files that lack them (`sync: names`);
//! 2. the remote's branch is fetched into `refs/remotes/sync/<branch>` (only that ref and objects
//!    change; no home lock is held while the network is used);
//! 3. under the home lock: the merge commit (`sync: merge from HOST`, two parents) and, when ids
//!    collide, `sync: renumber` are built as objects only;
//! 4. this machine's `state.db` follows renumbered memories ([`crate::index`]);
//! 5. the changed files are written into the home atomically, then the branch is moved and
//!    `.git/index` refreshed. A kill between 5's writes and the branch move leaves files that
//!    differ from HEAD: the next start commits them as `external edit` (their content is the
//!    merge's, so nothing is lost) and the next sync merges again without conflict;
//! 6. the branch is pushed (never forced) unless a commit to push adds conflict markers; it is
//!    reported only once the remote holds it; when another machine pushed meanwhile, fetch and
//!    merge again (at most [`ROUNDS`] times); any other refusal is an error with the remote's words.

mod integrate;
mod names;
mod renames;
mod report;
mod tree_merge;
mod trees;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use elroy_history::{GitWrite, HistoryError, Unfinished, VersionedHome};
use git2::{Commit, Oid, Repository};
use jiff::Timestamp;

pub use names::UID_KEY;
pub use report::{ChangeKind, FileChange, SyncReport, merge_lines};

use crate::SyncError;
use crate::identity::Renumbered;
use crate::merge::ReportEntry;
use crate::transport::{self, Pushed};
use integrate::{Home, Integrated, integrate};
use names::write_names;
use trees::{blob_bytes, changes};

/// How many fetch–merge–push rounds one sync tries when other machines keep pushing meanwhile.
pub const ROUNDS: usize = 3;

/// How long a sync waits for a git lock file that is taken (a `git` command running in the home)
/// before it stops, naming the lock.
pub const GIT_WAIT: Duration = Duration::from_secs(5);

/// The test hook: `ELROY_SYNC_FAIL_AFTER=<step>` ends the process (exit status 86) right after
/// that step, as a kill would: `fetch` (the remote fetched), `merge` (the merge commit built, no
/// local change yet), `index` (`state.db` updated and half the changed files written, the branch
/// not moved), `push` (pushed, the tracking ref not updated). Inert when unset. For the tests of
/// kill safety only.
pub const FAIL_AFTER_ENV: &str = "ELROY_SYNC_FAIL_AFTER";

fn fail_point(step: &str) {
    if std::env::var(FAIL_AFTER_ENV).is_ok_and(|s| s == step) {
        // Written without `eprintln!`, which panics when standard error is a closed pipe.
        let _ = writeln!(
            std::io::stderr(),
            "elroy sync: stopped after {step} ({FAIL_AFTER_ENV}, a test hook)"
        );
        std::process::exit(86);
    }
}

/// What one sync needs besides the home.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// The remote: a path, `file://`, `ssh://`, `https://` URL or scp-like `user@host:path`.
    pub remote: String,
    /// This machine's `state.db` (renumbered memories follow; names are read from it); `None`
    /// when there is none.
    pub db: Option<PathBuf>,
    /// The time of the commits the sync makes.
    pub now: Timestamp,
    /// How long the network part of a fetch or a push may take (the `git` program is stopped
    /// after it); local remotes are not limited.
    pub timeout: Duration,
}

/// The exclusive lock that one `elroy sync` of a home holds for its whole run
/// (`.git/elroy-sync.lock`, an advisory `flock`; released when dropped or when the process dies).
struct SyncRunning {
    _file: std::fs::File,
}

impl SyncRunning {
    fn take(root: &Path) -> Result<SyncRunning, SyncError> {
        let path = root.join(".git").join("elroy-sync.lock");
        let write_err = |e: std::io::Error| SyncError::Write {
            path: ".git/elroy-sync.lock".to_owned(),
            message: e.to_string(),
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(write_err)?;
        match file.try_lock() {
            Ok(()) => Ok(SyncRunning { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(SyncError::AlreadyRunning),
            Err(std::fs::TryLockError::Error(e)) => Err(write_err(e)),
        }
    }
}

/// One sync round with the remote of `options` (see the module doc).
///
/// # Errors
/// [`SyncError::Remote`] when the remote cannot be reached, refuses or needs credentials (the
/// home is then exactly as before when this happens at the fetch); [`SyncError::History`],
/// [`SyncError::Git`], [`SyncError::Files`], [`SyncError::Index`] for local failures.
pub fn sync(root: &Path, options: &SyncOptions) -> Result<SyncReport, SyncError> {
    // The repository (created with its initial import when missing) and changes journaled
    // earlier; hand edits and names wait until the remote answered, so a remote that cannot be
    // reached leaves the home exactly as it was.
    // Git locks an elroy killed mid-write left are removed first, and the report says so.
    let mut progress = Progress {
        notes: GitWrite::begin(root)?.notes().to_vec(),
        ..Progress::default()
    };
    let home = VersionedHome::resume(root, options.now)?;
    // One sync per home at a time: two would each report the other's pull or push as theirs.
    let _running = SyncRunning::take(root)?;
    // Only a sync writes `refs/remotes/sync/`, and it holds the sync lock meanwhile: a lock file
    // there now is a killed sync's (its fetch runs without the home lock).
    progress.notes.extend(clear_fetch_locks(root));
    // Never over something git has not finished: a merge, a rebase, a detached HEAD, an unmerged
    // index (their files would be merged, committed and pushed with their conflict markers).
    refuse_unfinished(root)?;
    let mut names_written = false;
    for _round in 0..ROUNDS {
        let repo = Repository::open(root)?;
        let branch = branch_name(&repo)?;
        let theirs = transport::fetch(&repo, root, &options.remote, &branch, options.timeout)?;
        fail_point("fetch");
        // A `git` command running in the home (a lock file taken) is waited for, then named.
        elroy_history::wait_for_git(root, GIT_WAIT)?;
        // Hand edits (also those made while fetching) are committed before the merge looks at
        // HEAD, as at start-up; memory names go into the files before they are pushed.
        home.commit_outside_edits(options.now)?;
        if !names_written {
            write_names(&home, options, &mut progress.notes)?;
            names_written = true;
        }
        let target = Home {
            repo: &repo,
            root,
            options,
        };
        progress.pull(&target, theirs)?;
        let head = repo.head()?.peel_to_commit()?;
        if Some(head.id()) == theirs {
            return Ok(progress.into_report(Vec::new(), false));
        }
        let pushed_files = outgoing(&repo, &head, theirs)?;
        match transport::push(
            &repo,
            root,
            &options.remote,
            &branch,
            head.id(),
            options.timeout,
        )? {
            Pushed::Done => {
                fail_point("push");
                repo.reference(
                    &transport::tracking_ref(&branch),
                    head.id(),
                    true,
                    "elroy sync: pushed",
                )?;
                return Ok(progress.into_report(pushed_files, theirs.is_none()));
            }
            Pushed::NotFastForward => {
                tracing::info!("elroy sync: the remote moved meanwhile; fetching again");
            }
        }
    }
    Err(SyncError::Remote {
        remote: options.remote.clone(),
        message: format!(
            "other machines pushed during each of {ROUNDS} attempts; run elroy sync again"
        ),
    })
}

/// What the rounds of one sync have done so far.
#[derive(Default)]
struct Progress {
    /// The last round's pulled files.
    pulled: Vec<FileChange>,
    merged: Vec<ReportEntry>,
    renumbered: Vec<Renumbered>,
    from: Option<String>,
    notes: Vec<String>,
}

impl Progress {
    /// Brings `theirs` into the home under the home lock ([`integrate`]), once nothing git has
    /// not finished is there and no `git` command runs.
    fn pull(&mut self, home: &Home<'_>, theirs: Option<Oid>) -> Result<(), SyncError> {
        let lock = GitWrite::begin(home.root)?;
        self.notes.extend(lock.notes().iter().cloned());
        refuse_unfinished(home.root)?;
        if let Some(taken) = elroy_history::git_lock_files(home.root).into_iter().next() {
            // A `git` command began meanwhile: its index would be stale after the merge.
            return Err(SyncError::History(HistoryError::GitBusy {
                lock: taken,
                age: 0,
            }));
        }
        let ours = home.repo.head()?.peel_to_commit()?;
        if let Some(step) = integrate(home, &ours, theirs)? {
            self.add(step);
        }
        drop(lock);
        Ok(())
    }

    fn add(&mut self, step: Integrated) {
        self.merged.extend(step.merged);
        self.renumbered.extend(step.renumbered);
        // Without `from` nothing came in: the step only renumbered this machine's memories.
        if step.from.is_some() && !step.pulled.is_empty() {
            self.from = step.from;
            self.pulled.extend(step.pulled);
        }
    }

    /// The report, with the files `pushed` and whether the remote had no branch yet.
    fn into_report(self, pushed: Vec<FileChange>, remote_was_empty: bool) -> SyncReport {
        let mut pulled = self.pulled;
        pulled.sort_by(|a, b| a.path.cmp(&b.path));
        pulled.dedup_by(|a, b| a.path == b.path);
        // The repository's own `.gitignore` is the same on every machine: not news for the report.
        pulled.retain(|c| c.path != ".gitignore");
        let mut pushed = pushed;
        pushed.retain(|c| c.path != ".gitignore");
        SyncReport {
            pulled,
            pushed,
            merged: self.merged,
            renumbered: self.renumbered,
            from: self.from,
            remote_was_empty,
            notes: self.notes,
        }
    }
}

/// The files the push sends (`head` over `theirs`, the remote's head). What goes out never adds
/// conflict markers (a person's own `git commit -a` after a conflicted pull would otherwise reach
/// every machine): [`SyncError::Unfinished`] then.
fn outgoing(
    repo: &Repository,
    head: &Commit<'_>,
    theirs: Option<Oid>,
) -> Result<Vec<FileChange>, SyncError> {
    let head_tree = head.tree()?;
    let pushed_files = match theirs {
        Some(theirs) => changes(repo, Some(&repo.find_commit(theirs)?.tree()?), &head_tree)?,
        None => changes(repo, None, &head_tree)?,
    };
    for change in &pushed_files {
        if change.kind != ChangeKind::Deleted
            && elroy_history::is_store_path(&change.path)
            && blob_bytes(repo, &head_tree, &change.path)?
                .is_some_and(|b| elroy_history::has_markers(&b))
        {
            return Err(SyncError::Unfinished(Unfinished::Markers {
                path: change.path.clone(),
            }));
        }
    }
    Ok(pushed_files)
}

/// Removes the lock files under `.git/refs/remotes/sync/` (see [`sync`]); one note each.
fn clear_fetch_locks(root: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let dir = root.join(".git/refs/remotes/sync");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return notes;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "lock") && std::fs::remove_file(&path).is_ok() {
            let name = entry.file_name().to_string_lossy().into_owned();
            notes.push(format!(
                "removed .git/refs/remotes/sync/{name}, left by an elroy sync that was killed while \
                 it fetched"
            ));
        }
    }
    notes
}

/// [`SyncError::Unfinished`] naming the first thing git has not finished in the home, if any.
fn refuse_unfinished(root: &Path) -> Result<(), SyncError> {
    match elroy_history::unfinished(root)?.into_iter().next() {
        Some(state) => Err(SyncError::Unfinished(state)),
        None => Ok(()),
    }
}

fn branch_name(repo: &Repository) -> Result<String, SyncError> {
    let head = repo.find_reference("HEAD")?;
    Ok(head
        .symbolic_target()
        .ok()
        .flatten()
        .and_then(|t| t.strip_prefix("refs/heads/"))
        .unwrap_or("main")
        .to_owned())
}
