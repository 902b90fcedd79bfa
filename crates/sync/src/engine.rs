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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::{Commit, ObjectType, Oid, Repository, Tree};
use jiff::Timestamp;

use elroy_history::{
    GitWrite, HistoryError, Unfinished, VersionedHome, machine_name, machine_signature,
};
use elroy_markdown::{Document, Value};

use crate::SyncError;
use crate::identity::{self, Renumbered};
use crate::index::{self, Remap};
use crate::merge::{self, FileKind, MergeInput, ReportEntry, Side};
use crate::transport::{self, Pushed};

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
        eprintln!("elroy sync: stopped after {step} ({FAIL_AFTER_ENV}, a test hook)");
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

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A new file.
    Added,
    /// A changed file.
    Modified,
    /// A removed file.
    Deleted,
}

/// One file a sync brought in (pulled) or sent (pushed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the home.
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
    /// The item's name: the `name` front-matter key when the file has one, else its stem with
    /// `_` read as a space.
    pub name: String,
}

impl FileChange {
    /// The store the file belongs to, for the report: `agenda`, `memories`, `feature requests`,
    /// `notes`, `user names` ([`crate::people`]), or `other`.
    pub fn store(&self) -> &'static str {
        if crate::people::token_of(&self.path).is_some() {
            return "user names";
        }
        match FileKind::of(&self.path) {
            FileKind::Agenda => "agenda",
            FileKind::Memory => "memories",
            FileKind::FeatureRequest => "feature requests",
            FileKind::Notes => "notes",
            FileKind::Other => "other",
        }
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Files changed in this home by the pull, sorted by path.
    pub pulled: Vec<FileChange>,
    /// Files the remote got from this machine, sorted by path.
    pub pushed: Vec<FileChange>,
    /// What the merge of files changed on both sides did (conflicts and where each text went).
    pub merged: Vec<ReportEntry>,
    /// Memories that got a new id.
    pub renumbered: Vec<Renumbered>,
    /// The machine the pulled changes came from (the remote head's), when anything was pulled.
    pub from: Option<String>,
    /// Whether the remote had no branch yet (the first push made it).
    pub remote_was_empty: bool,
    /// What the sync did to the repository besides syncing, one sentence each (a git lock left by
    /// a killed elroy removed, ...).
    pub notes: Vec<String>,
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
    let mut notes: Vec<String> = GitWrite::begin(root)?.notes().to_vec();
    let home = VersionedHome::resume(root, options.now)?;
    // One sync per home at a time: two would each report the other's pull or push as theirs.
    let _running = SyncRunning::take(root)?;
    // Only a sync writes `refs/remotes/sync/`, and it holds the sync lock meanwhile: a lock file
    // there now is a killed sync's (its fetch runs without the home lock).
    notes.extend(clear_fetch_locks(root));
    // Never over something git has not finished: a merge, a rebase, a detached HEAD, an unmerged
    // index (their files would be merged, committed and pushed with their conflict markers).
    refuse_unfinished(root)?;
    let mut names_written = false;
    let mut last_pulled: Vec<FileChange> = Vec::new();
    let mut merged: Vec<ReportEntry> = Vec::new();
    let mut renumbered: Vec<Renumbered> = Vec::new();
    let mut from = None;
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
            write_names(&home, options, &mut notes)?;
            names_written = true;
        }
        let lock = GitWrite::begin(root)?;
        notes.extend(lock.notes().iter().cloned());
        refuse_unfinished(root)?;
        if let Some(taken) = elroy_history::git_lock_files(root).into_iter().next() {
            // A `git` command began meanwhile: its index would be stale after the merge.
            return Err(SyncError::History(HistoryError::GitBusy {
                lock: taken,
                age: 0,
            }));
        }
        let ours = repo.head()?.peel_to_commit()?;
        let step = integrate(&repo, root, &ours, theirs, options)?;
        if let Some(step) = &step {
            merged.extend(step.merged.iter().cloned());
            renumbered.extend(step.renumbered.iter().cloned());
            // Without `from` nothing came in: the step only renumbered this machine's memories.
            if step.from.is_some() && !step.pulled.is_empty() {
                from.clone_from(&step.from);
                last_pulled.extend(step.pulled.iter().cloned());
            }
        }
        drop(lock);
        let head = repo.head()?.peel_to_commit()?;
        if Some(head.id()) == theirs {
            return Ok(finish(
                last_pulled,
                Vec::new(),
                merged,
                renumbered,
                from,
                false,
                notes,
            ));
        }
        let pushed_files = match theirs {
            Some(theirs) => changes(
                &repo,
                Some(&repo.find_commit(theirs)?.tree()?),
                &head.tree()?,
            )?,
            None => changes(&repo, None, &head.tree()?)?,
        };
        // What goes out never adds conflict markers (a person's own `git commit -a` after a
        // conflicted pull would otherwise reach every machine).
        let head_tree = head.tree()?;
        for change in &pushed_files {
            if change.kind != ChangeKind::Deleted
                && elroy_history::is_store_path(&change.path)
                && blob_bytes(&repo, &head_tree, &change.path)?
                    .is_some_and(|b| elroy_history::has_markers(&b))
            {
                return Err(SyncError::Unfinished(Unfinished::Markers {
                    path: change.path.clone(),
                }));
            }
        }
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
                return Ok(finish(
                    last_pulled,
                    pushed_files,
                    merged,
                    renumbered,
                    from,
                    theirs.is_none(),
                    notes,
                ));
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

#[allow(clippy::too_many_arguments)]
fn finish(
    mut pulled: Vec<FileChange>,
    pushed: Vec<FileChange>,
    merged: Vec<ReportEntry>,
    renumbered: Vec<Renumbered>,
    from: Option<String>,
    remote_was_empty: bool,
    notes: Vec<String>,
) -> SyncReport {
    pulled.sort_by(|a, b| a.path.cmp(&b.path));
    pulled.dedup_by(|a, b| a.path == b.path);
    // The repository's own `.gitignore` is the same on every machine: not news for the report.
    pulled.retain(|c| c.path != ".gitignore");
    let mut pushed = pushed;
    pushed.retain(|c| c.path != ".gitignore");
    SyncReport {
        pulled,
        pushed,
        merged,
        renumbered,
        from,
        remote_was_empty,
        notes,
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

/// What [`integrate`] did to the home.
struct Integrated {
    pulled: Vec<FileChange>,
    merged: Vec<ReportEntry>,
    renumbered: Vec<Renumbered>,
    from: Option<String>,
}

/// Brings `theirs` into this home (with the home lock held): fast-forward or merge, renumber,
/// `state.db`, files, branch, `.git/index`. `None` when there is nothing to pull.
fn integrate(
    repo: &Repository,
    root: &Path,
    ours: &Commit<'_>,
    theirs: Option<Oid>,
    options: &SyncOptions,
) -> Result<Option<Integrated>, SyncError> {
    let empty =
        || -> Result<Tree<'_>, SyncError> { Ok(repo.find_tree(repo.treebuilder(None)?.write()?)?) };
    let nothing_to_pull = match theirs {
        None => true,
        Some(id) => id == ours.id() || repo.graph_descendant_of(ours.id(), id)?,
    };
    let Some(theirs_id) = theirs.filter(|_| !nothing_to_pull) else {
        // Nothing comes in, but this machine's own new memories may share an id (made by hand,
        // or by two processes): they are renumbered before they are pushed, by the same rule.
        let base_tree = match theirs {
            Some(id) => repo.find_commit(id)?.tree()?,
            None => empty()?,
        };
        return finish_integration(
            repo,
            root,
            ours,
            ours.id(),
            &base_tree,
            Vec::new(),
            BTreeSet::new(),
            None,
            options,
        );
    };
    let theirs = repo.find_commit(theirs_id)?;
    let host = elroy_history::commit_machine(&theirs).unwrap_or_else(|| "remote".to_owned());
    let fast_forward = repo.graph_descendant_of(theirs_id, ours.id())?;
    let (base_tree, target, merged, fresh) = if fast_forward {
        (ours.tree()?, theirs_id, Vec::new(), BTreeSet::new())
    } else {
        // Two homes that began apart (the first sync of a second machine) have no common
        // commit: their merge base is the empty tree, and every file is new on its side.
        let base_tree = match repo.merge_base(ours.id(), theirs_id) {
            Ok(base_id) => repo.find_commit(base_id)?.tree()?,
            Err(e) if e.code() == git2::ErrorCode::NotFound => empty()?,
            Err(e) => return Err(e.into()),
        };
        let (tree, merged, fresh) = merge_trees(repo, &base_tree, ours, &theirs, &host)?;
        let sig = machine_signature(options.now)?;
        let mut message = format!("sync: merge from {host}\n");
        let lines = merge_lines(&merged);
        if !lines.is_empty() {
            message.push('\n');
            message.push_str(&lines.join("\n"));
            message.push('\n');
        }
        let tree = repo.find_tree(tree)?;
        let id = repo.commit(None, &sig, &sig, &message, &tree, &[ours, &theirs])?;
        (base_tree, id, merged, fresh)
    };
    // The report names every machine whose changes came in, not only the last to push.
    let from = pulled_machines(repo, theirs_id, ours.id())?.unwrap_or(host);
    finish_integration(
        repo,
        root,
        ours,
        target,
        &base_tree,
        merged,
        fresh,
        Some(from),
        options,
    )
}

/// The machines (other than this one) that made the commits `theirs` brings in over `ours`,
/// sorted and joined with `, `; `None` when no commit names one.
fn pulled_machines(repo: &Repository, theirs: Oid, ours: Oid) -> Result<Option<String>, SyncError> {
    let local = machine_name();
    let mut walk = repo.revwalk()?;
    walk.push(theirs)?;
    walk.hide(ours)?;
    let mut machines = BTreeSet::new();
    for id in walk {
        if let Some(machine) = elroy_history::commit_machine(&repo.find_commit(id?)?)
            && machine != local
        {
            machines.insert(machine);
        }
    }
    Ok((!machines.is_empty()).then(|| machines.into_iter().collect::<Vec<_>>().join(", ")))
}

/// The rest of [`integrate`] once `target` (ours, theirs, or the merge) is known: renumber
/// (`sync: renumber`), `state.db`, files, branch, `.git/index`. `None` when it leaves HEAD as it
/// is (nothing pulled, no id to change).
#[allow(clippy::too_many_arguments)]
fn finish_integration(
    repo: &Repository,
    root: &Path,
    ours: &Commit<'_>,
    mut target: Oid,
    base_tree: &Tree<'_>,
    merged: Vec<ReportEntry>,
    fresh: BTreeSet<String>,
    from: Option<String>,
    options: &SyncOptions,
) -> Result<Option<Integrated>, SyncError> {
    let host = from.clone().unwrap_or_else(|| "this machine".to_owned());
    // Ids unique again.
    let target_tree = repo.find_commit(target)?.tree()?;
    // The user homes whose memories changed on either side since the merge base: a new memory
    // of this machine can collide with one of the other's as well as the other way round.
    let mut touched = changes(repo, Some(base_tree), &ours.tree()?)?;
    touched.extend(changes(repo, Some(base_tree), &target_tree)?);
    let prefixes: BTreeSet<String> = touched
        .iter()
        .filter_map(|c| identity::memory_prefix(&c.path))
        .collect();
    let mut renumbered = Vec::new();
    let mut update = git2::build::TreeUpdateBuilder::new();
    for prefix in &prefixes {
        let files = identity::memory_files(repo, &target_tree, prefix)?;
        let base = identity::memory_files(repo, base_tree, prefix)?;
        let local_max = index::max_memory_id(options.db.as_deref(), &index::token_of(prefix))?;
        for (change, bytes) in identity::plan(&files, &base, &fresh, local_max) {
            let blob = repo.blob(&bytes)?;
            update.upsert(change.path.as_str(), blob, git2::FileMode::Blob);
            renumbered.push(change);
        }
    }
    if !renumbered.is_empty() {
        let tree = update.create_updated(repo, &target_tree)?;
        let tree = repo.find_tree(tree)?;
        let mut message = "sync: renumber\n\n".to_owned();
        for r in &renumbered {
            match r.old {
                Some(old) => message.push_str(&format!("{}: id {old} -> {}\n", r.path, r.new)),
                None => message.push_str(&format!("{}: id {}\n", r.path, r.new)),
            }
        }
        let parent = repo.find_commit(target)?;
        let sig = machine_signature(options.now)?;
        target = repo.commit(None, &sig, &sig, &message, &tree, &[&parent])?;
    }
    if target == ours.id() {
        return Ok(None);
    }
    fail_point("merge");
    let final_tree = repo.find_commit(target)?.tree()?;
    let old_tree = ours.tree()?;
    let pulled = changes(repo, Some(&old_tree), &final_tree)?;
    // state.db follows memories whose id changed at the same path.
    let mut remaps = Vec::new();
    for change in &pulled {
        let Some(prefix) = identity::memory_prefix(&change.path) else {
            continue;
        };
        let (Some(old), Some(new)) = (
            blob_bytes(repo, &old_tree, &change.path)?,
            blob_bytes(repo, &final_tree, &change.path)?,
        ) else {
            continue;
        };
        if let (Some(old), Some(new)) = (identity::memory_id(&old), identity::memory_id(&new))
            && old != new
        {
            remaps.push(Remap {
                token: index::token_of(&prefix),
                file_name: change.path[prefix.len() + "memories/".len()..].to_owned(),
                old,
                new,
            });
        }
    }
    // A file edited by hand since the last commit (a moment ago) is never overwritten.
    for change in &pulled {
        let on_disk = match std::fs::read(root.join(&change.path)) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(SyncError::Write {
                    path: change.path.clone(),
                    message: e.to_string(),
                });
            }
        };
        if on_disk != blob_bytes(repo, &old_tree, &change.path)? {
            return Err(SyncError::EditedDuringSync {
                path: change.path.clone(),
            });
        }
    }
    index::apply(options.db.as_deref(), &remaps)?;
    for change in &pulled {
        if let Some(token) = crate::people::token_of(&change.path)
            && let Some(bytes) = blob_bytes(repo, &final_tree, &change.path)?
        {
            crate::people::import(
                options.db.as_deref(),
                &token,
                &crate::people::parse(&bytes),
                options.now,
            )?;
        }
    }
    // The files first, then the branch (see the module doc).
    let half = pulled.len() / 2;
    for (n, change) in pulled.iter().enumerate() {
        if n == half {
            fail_point("index");
        }
        let file = root.join(&change.path);
        match blob_bytes(repo, &final_tree, &change.path)? {
            Some(bytes) => {
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| SyncError::Write {
                        path: change.path.clone(),
                        message: e.to_string(),
                    })?;
                }
                elroy_markdown::write_atomic(&file, &bytes, &change.path)?;
            }
            None => {
                if file.exists() {
                    elroy_markdown::remove_file(&file, &change.path)?;
                }
            }
        }
    }
    if pulled.is_empty() {
        fail_point("index");
    }
    let head_ref = repo.head()?.name().unwrap_or("refs/heads/main").to_owned();
    repo.reference_matching(
        &head_ref,
        target,
        true,
        ours.id(),
        &format!("elroy sync: merge from {host}"),
    )?;
    let paths: Vec<String> = pulled.iter().map(|c| c.path.clone()).collect();
    elroy_history::refresh_index(root, &paths)?;
    Ok(Some(Integrated {
        pulled,
        merged,
        renumbered,
        from,
    }))
}

/// The three-way merge of the trees: each path changed on one side takes that side; a path
/// changed on both goes through [`merge::merge_file`]. Items are matched by identity, not only by
/// path:
///
/// - a rename on one side (git's rename detection: the same or a similar file under another name
///   of the same store, e.g. `rename_due_item` or a hand `mv`; for agenda files also the same
///   [`UID_KEY`] under another name) and an edit of the old path on the other are merged into one
///   file at the new path ([`ReportEntry::Renamed`]);
/// - two different store files created at the same path on both sides (twins: the same name), or
///   a file theirs created whose path equals one of ours ignoring case and Unicode normalisation
///   (case twins: `Call_mom.md`, `call_Mom.md`), stay two items: one becomes `NAME (from
///   MACHINE)`, its file too ([`ReportEntry::Twin`]): the one made on the machine whose name
///   sorts second (of case twins, one that was there at the last sync keeps its name). No two
///   paths of the merged tree differ only by case.
///
/// Returns the merged tree, the report entries, and the paths the merge itself created (memory
/// copies, siblings, renamed twins).
fn merge_trees(
    repo: &Repository,
    base: &Tree<'_>,
    ours: &Commit<'_>,
    theirs: &Commit<'_>,
    host: &str,
) -> Result<(Oid, Vec<ReportEntry>, BTreeSet<String>), SyncError> {
    let ours_tree = ours.tree()?;
    let theirs_tree = theirs.tree()?;
    let ours_changed: BTreeSet<String> = changes(repo, Some(base), &ours_tree)?
        .into_iter()
        .map(|c| c.path)
        .collect();
    let theirs_changed = changes(repo, Some(base), &theirs_tree)?;
    let ours_renames = renames(repo, base, &ours_tree)?;
    let theirs_renames = renames(repo, base, &theirs_tree)?;
    let theirs_renamed_from: std::collections::BTreeMap<&String, &String> =
        theirs_renames.iter().map(|(old, new)| (new, old)).collect();
    let base_id = repo.merge_base(ours.id(), theirs.id()).ok();
    let local = machine_name();
    let mut update = git2::build::TreeUpdateBuilder::new();
    let mut report = Vec::new();
    let mut fresh = BTreeSet::new();
    let mut any = false;
    // Every path of both trees, for the names a sibling, a memory copy or a twin must not take.
    let mut taken: Vec<String> = tree_paths(&ours_tree)?
        .union(&tree_paths(&theirs_tree)?)
        .cloned()
        .collect();
    // Ours' paths by their case- and normalisation-free key, for case twins.
    let ours_keys: std::collections::BTreeMap<String, String> = tree_paths(&ours_tree)?
        .into_iter()
        .map(|p| (fold_path(&p), p))
        .collect();
    for change in theirs_changed {
        let path = change.path;
        let theirs_bytes = blob_bytes(repo, &theirs_tree, &path)?;
        if let Some(old) = theirs_renamed_from.get(&path)
            && ours_changed.contains(*old)
            && blob_bytes(repo, &ours_tree, old)?.is_some()
            && blob_bytes(repo, &ours_tree, &path)?.is_none()
        {
            // Theirs renamed a file ours edited: merged at the old path's turn, below.
            continue;
        }
        // (target path, base, ours, theirs, the old path to remove) of a rename on one side.
        let renamed: Option<(String, String)> =
            match (theirs_renames.get(&path), ours_renames.get(&path)) {
                (Some(new), _)
                    if ours_changed.contains(&path)
                        && blob_bytes(repo, &ours_tree, &path)?.is_some()
                        && blob_bytes(repo, &ours_tree, new)?.is_none() =>
                {
                    Some((new.clone(), path.clone()))
                }
                (_, Some(new))
                    if theirs_bytes.is_some() && blob_bytes(repo, &theirs_tree, new)?.is_none() =>
                {
                    Some((new.clone(), path.clone()))
                }
                _ => None,
            };
        let writes: Vec<Write> = if let Some((new, old)) = renamed {
            // One item, at the new path, with the other side's edit.
            let theirs_side = if theirs_renames.get(&old) == Some(&new) {
                blob_bytes(repo, &theirs_tree, &new)?
            } else {
                theirs_bytes.clone()
            };
            let ours_side = if ours_renames.get(&old) == Some(&new) {
                blob_bytes(repo, &ours_tree, &new)?
            } else {
                blob_bytes(repo, &ours_tree, &old)?
            };
            let base_bytes = blob_bytes(repo, base, &old)?;
            let ours_path = if ours_renames.get(&old) == Some(&new) {
                &new
            } else {
                &old
            };
            let theirs_path = if theirs_renames.get(&old) == Some(&new) {
                &new
            } else {
                &old
            };
            let input = MergeInput::new(
                &new,
                base_bytes.as_deref(),
                Side {
                    bytes: ours_side.as_deref(),
                    time: last_change_time(repo, ours, base_id, ours_path)?,
                    host: &local,
                },
                Side {
                    bytes: theirs_side.as_deref(),
                    time: last_change_time(repo, theirs, base_id, theirs_path)?,
                    host,
                },
            )
            .with_taken(&taken);
            let outcome = merge::merge_file(&input);
            let mut writes = outcome.writes;
            if !writes.iter().any(|(p, _)| *p == new) && ours_path != &new {
                // Ours' content stays, under the new name.
                writes.push((new.clone(), ours_side.clone()));
            }
            // The old path goes (ours still has it when theirs renamed).
            if ours_path == &old {
                writes.push((old.clone(), None));
            }
            report.push(ReportEntry::Renamed {
                path: new.clone(),
                from: old.clone(),
            });
            report.extend(
                outcome
                    .report
                    .into_iter()
                    .filter(|r| !matches!(r, ReportEntry::Merged { .. })),
            );
            writes
        } else if ours_changed.contains(&path) {
            let base_bytes = blob_bytes(repo, base, &path)?;
            let ours_bytes = blob_bytes(repo, &ours_tree, &path)?;
            match (&base_bytes, &ours_bytes, &theirs_bytes) {
                (None, Some(o), Some(t)) if o != t && FileKind::of(&path) == FileKind::Agenda => {
                    // Twins: both machines created an item of this name. The one made on the
                    // machine whose name sorts second becomes `NAME (from THAT MACHINE)`, so
                    // every machine decides alike whoever syncs first.
                    let ours_moves = local.as_str() > host;
                    let (moved, mover) = if ours_moves {
                        (o, &local)
                    } else {
                        (t, &host.to_owned())
                    };
                    match twin(&path, moved, mover, &taken) {
                        Some((new_path, bytes, name)) => {
                            taken.push(new_path.clone());
                            fresh.insert(new_path.clone());
                            report.push(ReportEntry::Twin {
                                path: path.clone(),
                                new_path: new_path.clone(),
                                name,
                            });
                            if ours_moves {
                                vec![(path.clone(), Some(t.clone())), (new_path, Some(bytes))]
                            } else {
                                vec![(new_path, Some(bytes))]
                            }
                        }
                        None => merge_both(
                            repo,
                            ours,
                            theirs,
                            base_id,
                            &local,
                            host,
                            &path,
                            &base_bytes,
                            &ours_bytes,
                            &theirs_bytes,
                            &mut taken,
                            &mut fresh,
                            &mut report,
                        )?,
                    }
                }
                _ => merge_both(
                    repo,
                    ours,
                    theirs,
                    base_id,
                    &local,
                    host,
                    &path,
                    &base_bytes,
                    &ours_bytes,
                    &theirs_bytes,
                    &mut taken,
                    &mut fresh,
                    &mut report,
                )?,
            }
        } else if let Some(bytes) = &theirs_bytes
            && change.kind == ChangeKind::Added
            && FileKind::of(&path) == FileKind::Agenda
            && let Some(ours_path) = ours_keys.get(&fold_path(&path))
            && *ours_path != path
        {
            // Case twins: the item theirs created only differs from one of ours by case or
            // Unicode normalisation; on a case-insensitive file system they would be one file.
            // One that was there at the last sync keeps its name; of two new ones, the one made
            // on the machine whose name sorts second moves, as for twins.
            let ours_bytes = blob_bytes(repo, &ours_tree, ours_path)?;
            let ours_moves = blob_bytes(repo, base, ours_path)?.is_none() && local.as_str() > host;
            let moved = match (&ours_bytes, ours_moves) {
                (Some(o), true) => twin(ours_path, o, &local, &taken),
                _ => twin(&path, bytes, host, &taken),
            };
            match moved {
                Some((new_path, renamed, name)) => {
                    taken.push(new_path.clone());
                    fresh.insert(new_path.clone());
                    let kept = if ours_moves { &path } else { ours_path };
                    report.push(ReportEntry::Twin {
                        path: kept.clone(),
                        new_path: new_path.clone(),
                        name,
                    });
                    if ours_moves {
                        vec![
                            (path.clone(), theirs_bytes),
                            (ours_path.clone(), None),
                            (new_path, Some(renamed)),
                        ]
                    } else {
                        vec![(new_path, Some(renamed))]
                    }
                }
                None => vec![(path.clone(), theirs_bytes)],
            }
        } else {
            vec![(path.clone(), theirs_bytes)]
        };
        for (written, bytes) in writes {
            any = true;
            match bytes {
                Some(bytes) => {
                    let blob = repo.blob(&bytes)?;
                    update.upsert(written.as_str(), blob, git2::FileMode::Blob);
                }
                None => {
                    update.remove(written.as_str());
                }
            }
        }
    }
    let tree = if any {
        update.create_updated(repo, &ours_tree)?
    } else {
        ours_tree.id()
    };
    Ok((tree, report, fresh))
}

/// A file the merge writes (relative path, `None`: removed).
type Write = (String, Option<Vec<u8>>);

/// A path changed on both sides, through [`merge::merge_file`]; the new files it makes are
/// added to `taken` and `fresh`.
#[allow(clippy::too_many_arguments)]
fn merge_both(
    repo: &Repository,
    ours: &Commit<'_>,
    theirs: &Commit<'_>,
    base_id: Option<Oid>,
    local: &str,
    host: &str,
    path: &str,
    base_bytes: &Option<Vec<u8>>,
    ours_bytes: &Option<Vec<u8>>,
    theirs_bytes: &Option<Vec<u8>>,
    taken: &mut Vec<String>,
    fresh: &mut BTreeSet<String>,
    report: &mut Vec<ReportEntry>,
) -> Result<Vec<Write>, SyncError> {
    let input = MergeInput::new(
        path,
        base_bytes.as_deref(),
        Side {
            bytes: ours_bytes.as_deref(),
            time: last_change_time(repo, ours, base_id, path)?,
            host: local,
        },
        Side {
            bytes: theirs_bytes.as_deref(),
            time: last_change_time(repo, theirs, base_id, path)?,
            host,
        },
    )
    .with_taken(taken);
    let outcome = merge::merge_file(&input);
    report.extend(outcome.report);
    for (written, _) in &outcome.writes {
        if written != path {
            fresh.insert(written.clone());
            // A later sibling or copy in this sync must not take this name either.
            taken.push(written.clone());
        }
    }
    Ok(outcome.writes)
}

/// The renames git's rename detection finds between `base` and `side` (the same or a similar
/// file under another path), old path → new path, for store files that stay in the same kind of
/// store (agenda, memories, feature requests).
fn renames(
    repo: &Repository,
    base: &Tree<'_>,
    side: &Tree<'_>,
) -> Result<std::collections::BTreeMap<String, String>, SyncError> {
    let mut diff = repo.diff_tree_to_tree(Some(base), Some(side), None)?;
    let mut find = git2::DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))?;
    let mut found = std::collections::BTreeMap::new();
    for delta in diff.deltas() {
        if delta.status() != git2::Delta::Renamed {
            continue;
        }
        let path = |f: git2::DiffFile<'_>| f.path().map(|p| p.to_string_lossy().replace('\\', "/"));
        let (Some(old), Some(new)) = (path(delta.old_file()), path(delta.new_file())) else {
            continue;
        };
        let kind = FileKind::of(&old);
        if kind == FileKind::of(&new)
            && matches!(
                kind,
                FileKind::Agenda | FileKind::Memory | FileKind::FeatureRequest
            )
        {
            found.insert(old, new);
        }
    }
    // Files too different for git's detection (renamed and rewritten) that carry the same
    // identity are one item renamed: agenda files by their `uid`, memories by their `id` (unique
    // on one side: this side's own ids since the base).
    let mut removed: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    let mut added: Vec<(String, String)> = Vec::new();
    for delta in diff.deltas() {
        let (status, file) = match delta.status() {
            git2::Delta::Deleted => (git2::Delta::Deleted, delta.old_file()),
            git2::Delta::Added => (git2::Delta::Added, delta.new_file()),
            _ => continue,
        };
        let Some(path) = file.path().map(|p| p.to_string_lossy().replace('\\', "/")) else {
            continue;
        };
        let identity = |bytes: &[u8]| match FileKind::of(&path) {
            FileKind::Agenda => uid_of(bytes).map(|uid| format!("uid {uid}")),
            FileKind::Memory => identity::memory_prefix(&path)
                .zip(identity::memory_id(bytes))
                .map(|(prefix, id)| format!("memory {prefix} {id}")),
            _ => None,
        };
        let Some(uid) = repo
            .find_blob(file.id())
            .ok()
            .and_then(|b| identity(b.content()))
        else {
            continue;
        };
        if status == git2::Delta::Deleted {
            removed.insert(uid, path);
        } else {
            added.push((uid, path));
        }
    }
    for (uid, new) in added {
        if let Some(old) = removed.remove(&uid)
            && old.rsplit_once('/').map(|(d, _)| d) == new.rsplit_once('/').map(|(d, _)| d)
        {
            found.insert(old, new);
        }
    }
    Ok(found)
}

/// The front-matter key that identifies an agenda or due item across machines and renames: a
/// string elroy writes once (the first sync of the file) and never changes; Elroy 0.5.0 ignores it.
pub const UID_KEY: &str = "uid";

/// The `uid` of an agenda file, if it has one.
fn uid_of(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let doc = Document::parse(text, "uid").ok()?;
    match doc.front_matter.get(UID_KEY)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// `bytes` (the agenda file at `path`) with a `uid` line added to its front matter, in key order
/// (the keys elroy and Elroy 0.5.0 write are sorted), every other byte as it was; `None` when it
/// has one already or its front matter does not parse. The uid is derived from the path and the
/// content (UUID-shaped hex of their SHA-1), so two machines that hold the same file before their
/// first sync give it the same uid.
fn with_uid(path: &str, bytes: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let doc = Document::parse(text, path).ok()?;
    if !doc.has_front_matter || doc.front_matter.get(UID_KEY).is_some() {
        return None;
    }
    let mut seed = format!("elroy uid\0{path}\0").into_bytes();
    seed.extend_from_slice(bytes);
    let hex = Oid::hash_object(ObjectType::Blob, &seed).ok()?.to_string();
    let uid = format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    );
    let line = format!(
        "{UID_KEY}: {}\n",
        elroy_markdown::emit_yaml_scalar_string(&uid)
    );
    // Before the first top-level key that sorts after `uid`, else at the end.
    let mut yaml = String::new();
    let mut placed = false;
    for raw in doc.raw_yaml.split_inclusive('\n') {
        let key = raw
            .split_once(':')
            .map(|(k, _)| k)
            .filter(|k| !k.starts_with([' ', '\t', '-', '#']) && !k.is_empty());
        if !placed && key.is_some_and(|k| k > UID_KEY) {
            yaml.push_str(&line);
            placed = true;
        }
        yaml.push_str(raw);
    }
    if !placed {
        if !yaml.is_empty() && !yaml.ends_with('\n') {
            yaml.push('\n');
        }
        yaml.push_str(&line);
    }
    let out = format!("---\n{yaml}---\n{}", doc.raw_body);
    // Never a file that reads differently: the same keys plus the uid.
    let check = Document::parse(&out, path).ok()?;
    let mut expected = doc.front_matter.clone();
    expected.insert(UID_KEY, Value::String(uid));
    (check.front_matter == expected && check.raw_body == doc.raw_body).then(|| out.into_bytes())
}

/// A path's key for "the same file on a case-insensitive file system": Unicode NFC, lower case.
fn fold_path(path: &str) -> String {
    elroy_markdown::normalize_name(path).to_lowercase()
}

/// The twin of the agenda file `path` with content `bytes`, renamed for machine `host`: its
/// `name` key becomes `NAME (from HOST)` and its file that name sanitized as elroy names agenda
/// files (`-2`, `-3`, … when taken, compared ignoring case). `None` when its front matter does
/// not parse (it then merges as any file).
fn twin(
    path: &str,
    bytes: &[u8],
    host: &str,
    taken: &[String],
) -> Option<(String, Vec<u8>, String)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut doc = Document::parse(text, path).ok()?;
    let name = front_matter_name(bytes).unwrap_or_else(|| stem_name(path));
    let new_name = format!("{name} (from {host})");
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let stem = elroy_markdown::sanitize_filename(&new_name, "agenda_item");
    let taken: BTreeSet<String> = taken.iter().map(|p| fold_path(p)).collect();
    let mut candidate = format!("{dir}/{stem}.md");
    let mut n = 2;
    while taken.contains(&fold_path(&candidate)) {
        candidate = format!("{dir}/{stem}-{n}.md");
        n += 1;
    }
    doc.front_matter
        .insert("name", Value::String(new_name.clone()));
    Some((candidate, doc.render(true).into_bytes(), new_name))
}

/// When `path` last changed on the side whose head is `head`: the time of the newest commit
/// after `base` (all of them when there is no common commit) whose tree has another `path` than
/// its first parent's; the head's time when none is found (decides key-by-key conflicts,
/// `merge::Side::time`).
fn last_change_time(
    repo: &Repository,
    head: &Commit<'_>,
    base: Option<Oid>,
    path: &str,
) -> Result<Timestamp, SyncError> {
    let time = |c: &Commit<'_>| Timestamp::from_second(c.time().seconds()).unwrap_or_default();
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
    walk.push(head.id())?;
    if let Some(base) = base {
        walk.hide(base)?;
    }
    for id in walk {
        let commit = repo.find_commit(id?)?;
        let mine = blob_id(&commit.tree()?, path);
        let before = match commit.parents().next() {
            Some(parent) => blob_id(&parent.tree()?, path),
            None => None,
        };
        if mine != before {
            return Ok(time(&commit));
        }
    }
    Ok(time(head))
}

/// Every blob path of `tree`, relative to the home.
fn tree_paths(tree: &Tree<'_>) -> Result<BTreeSet<String>, SyncError> {
    let mut paths = BTreeSet::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob)
            && let Ok(name) = entry.name()
        {
            paths.insert(format!("{dir}{name}"));
        }
        git2::TreeWalkResult::Ok
    })?;
    Ok(paths)
}

fn blob_id(tree: &Tree<'_>, path: &str) -> Option<Oid> {
    tree.get_path(Path::new(path)).ok().map(|e| e.id())
}

/// The report's lines about merged files.
pub fn merge_lines(entries: &[ReportEntry]) -> Vec<String> {
    entries
        .iter()
        .map(|entry| match entry {
            ReportEntry::KeyConflict {
                path,
                key,
                kept,
                other,
            } => format!(
                "{path}: both machines changed '{key}'; kept the later value {kept}, the other was {other}"
            ),
            ReportEntry::Sibling { path, sibling } => format!(
                "{path}: changed on both machines; this machine's text stays in it, the other's is in {sibling}"
            ),
            ReportEntry::MemoryCopy {
                path,
                new_path,
                name,
            } => format!(
                "{path}: both machines changed the text; the other text is now the memory '{name}' ({new_path})"
            ),
            ReportEntry::EditKeptOverDelete { path } => {
                format!("{path}: deleted on one machine, edited on the other; the edit was kept")
            }
            ReportEntry::Merged { path } => {
                format!("{path}: changes from both machines merged")
            }
            ReportEntry::Renamed { path, from } => format!(
                "{from}: renamed to {path} on one machine and changed on the other; one item, with the new name and the change"
            ),
            ReportEntry::Twin {
                path,
                new_path,
                name,
            } => format!(
                "{path}: both machines made an item of this name; the other is now '{name}' ({new_path}), and both stay active"
            ),
        })
        .collect()
}

/// The bytes of the blob at `path` in `tree`, `None` when there is none.
fn blob_bytes(
    repo: &Repository,
    tree: &Tree<'_>,
    path: &str,
) -> Result<Option<Vec<u8>>, SyncError> {
    match tree.get_path(Path::new(path)) {
        Ok(entry) if entry.kind() == Some(ObjectType::Blob) => {
            Ok(Some(repo.find_blob(entry.id())?.content().to_vec()))
        }
        Ok(_) => Ok(None),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The files that differ between `old` (none: empty) and `new`, sorted by path, with names.
fn changes(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: &Tree<'_>,
) -> Result<Vec<FileChange>, SyncError> {
    let diff = repo.diff_tree_to_tree(old, Some(new), None)?;
    let mut out = Vec::new();
    for delta in diff.deltas() {
        let Some(path) = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().replace('\\', "/"))
        else {
            continue;
        };
        let kind = match delta.status() {
            git2::Delta::Added => ChangeKind::Added,
            git2::Delta::Deleted => ChangeKind::Deleted,
            _ => ChangeKind::Modified,
        };
        let id = if kind == ChangeKind::Deleted {
            delta.old_file().id()
        } else {
            delta.new_file().id()
        };
        let name = repo
            .find_blob(id)
            .ok()
            .and_then(|blob| front_matter_name(blob.content()))
            .unwrap_or_else(|| stem_name(&path));
        out.push(FileChange { path, kind, name });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn front_matter_name(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let doc = Document::parse(text, "sync").ok()?;
    match doc.front_matter.get("name")? {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn stem_name(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".md").unwrap_or(file).replace('_', " ")
}

/// Gives each agenda file (agenda and due items) changed since the last sync that has no `uid`
/// front-matter key one ([`with_uid`]: the identity that tells a renamed item from a new one on
/// another machine), and writes each memory's name (from this machine's index) into its file as
/// the front-matter key
/// `name` (`docs/formats.md#memory-index-sync`: the memory index names a memory it does not know by
/// that key), for the memory files changed since the last sync (all of them at the first), and the
/// users' names ([`crate::people`]), committed as `sync: names` together with the removal of
/// sibling files (`*.sync-conflict-*`) deleted by hand. A file whose front matter does not parse is
/// left alone.
fn write_names(
    home: &VersionedHome,
    options: &SyncOptions,
    notes: &mut Vec<String>,
) -> Result<(), SyncError> {
    let conn = index::open_for_names(options.db.as_deref());
    let root = home.root();
    let _lock = GitWrite::begin(root)?;
    notes.extend(_lock.notes().iter().cloned());
    let repo = Repository::open(root)?;
    let branch = branch_name(&repo)?;
    let head = repo.head()?.peel_to_commit()?;
    let since = repo
        .refname_to_id(&transport::tracking_ref(&branch))
        .ok()
        .and_then(|id| repo.find_commit(id).ok())
        .map(|c| c.tree())
        .transpose()?;
    let head_tree = head.tree()?;
    let mut files = Vec::new();
    for change in changes(&repo, since.as_ref(), &head_tree)? {
        if change.kind == ChangeKind::Deleted {
            continue;
        }
        if FileKind::of(&change.path) == FileKind::Agenda
            && let Some(bytes) = blob_bytes(&repo, &head_tree, &change.path)?
            && let Some(with_uid) = with_uid(&change.path, &bytes)
            // Only files as committed: a hand edit made since is the next sync's.
            && std::fs::read(root.join(&change.path)).ok().as_deref() == Some(bytes.as_slice())
        {
            files.push((change.path.clone(), with_uid));
            continue;
        }
        let Some(prefix) = identity::memory_prefix(&change.path) else {
            continue;
        };
        let Some(bytes) = blob_bytes(&repo, &head_tree, &change.path)? else {
            continue;
        };
        let Some(id) = identity::memory_id(&bytes) else {
            continue;
        };
        let Some(name) = conn
            .as_ref()
            .and_then(|conn| index::memory_name(conn, &index::token_of(&prefix), id))
        else {
            continue;
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let Ok(mut doc) = Document::parse(text, &change.path) else {
            continue;
        };
        if doc.front_matter.get("name").is_some() {
            // Present: written by a person (a hand edit of the name is theirs, never reverted)
            // or by an earlier sync. Only a missing name is added.
            continue;
        }
        // Only files as committed: a hand edit made since is the next sync's.
        let on_disk = std::fs::read(root.join(&change.path)).ok();
        if on_disk.as_deref() != Some(bytes.as_slice()) {
            continue;
        }
        doc.front_matter.insert("name", Value::String(name));
        files.push((change.path.clone(), doc.render(true).into_bytes()));
    }
    // Sibling files deleted by hand (merged by the person, as the report asks) leave the
    // repository too; they are not store paths, so no other commit removes them.
    let mut gone: Vec<String> = Vec::new();
    head_tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if let Ok(name) = entry.name()
            && name.contains(".sync-conflict-")
            && entry.kind() == Some(ObjectType::Blob)
        {
            let path = format!("{dir}{name}");
            if !root.join(&path).exists() {
                gone.push(path);
            }
        }
        git2::TreeWalkResult::Ok
    })?;
    // The users' names (full, preferred) in their names files, when they differ.
    for (token, names) in crate::people::local(options.db.as_deref())? {
        let path = crate::people::path_of(&token);
        let Some(bytes) = crate::people::render(&names) else {
            continue;
        };
        if blob_bytes(&repo, &head_tree, &path)?.as_deref() != Some(bytes.as_slice()) {
            files.push((path, bytes));
        }
    }
    if files.is_empty() && gone.is_empty() {
        return Ok(());
    }
    let mut update = git2::build::TreeUpdateBuilder::new();
    for (path, bytes) in &files {
        let blob = repo.blob(bytes)?;
        update.upsert(path.as_str(), blob, git2::FileMode::Blob);
    }
    for path in &gone {
        update.remove(path.as_str());
    }
    let tree = repo.find_tree(update.create_updated(&repo, &head_tree)?)?;
    let sig = machine_signature(options.now)?;
    let mut message = "sync: names\n\n".to_owned();
    for (path, _) in &files {
        message.push_str(path);
        message.push('\n');
    }
    for path in &gone {
        message.push_str(&format!("{path} (deleted)\n"));
    }
    let id = repo.commit(None, &sig, &sig, &message, &tree, &[&head])?;
    for (path, bytes) in &files {
        let file = root.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SyncError::Write {
                path: path.clone(),
                message: e.to_string(),
            })?;
        }
        elroy_markdown::write_atomic(&file, bytes, path)?;
    }
    let head_ref = repo.head()?.name().unwrap_or("refs/heads/main").to_owned();
    repo.reference_matching(&head_ref, id, true, head.id(), "elroy sync: names")?;
    let mut paths: Vec<String> = files.into_iter().map(|(p, _)| p).collect();
    paths.extend(gone);
    elroy_history::refresh_index(root, &paths)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_files_time_is_its_last_change_not_the_heads() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let commit = |files: &[(&str, &str)], secs: i64, parent: Option<Oid>| -> Oid {
            let mut builder = repo.treebuilder(None).unwrap();
            for (name, text) in files {
                let blob = repo.blob(text.as_bytes()).unwrap();
                builder.insert(name, blob, 0o100_644).unwrap();
            }
            let tree = repo.find_tree(builder.write().unwrap()).unwrap();
            let sig = git2::Signature::new("t", "t@t", &git2::Time::new(secs, 0)).unwrap();
            let parents: Vec<Commit<'_>> = parent
                .into_iter()
                .map(|p| repo.find_commit(p).unwrap())
                .collect();
            let refs: Vec<&Commit<'_>> = parents.iter().collect();
            repo.commit(None, &sig, &sig, "m", &tree, &refs).unwrap()
        };
        let first = commit(&[("a.md", "1")], 100, None);
        let second = commit(&[("a.md", "2")], 200, Some(first));
        let third = commit(&[("a.md", "2"), ("b.md", "x")], 300, Some(second));
        let head = repo.find_commit(third).unwrap();
        let at = |s: i64| Timestamp::from_second(s).unwrap();
        assert_eq!(
            last_change_time(&repo, &head, None, "a.md").unwrap(),
            at(200)
        );
        assert_eq!(
            last_change_time(&repo, &head, None, "b.md").unwrap(),
            at(300)
        );
        // Nothing after the base changed it: the head's time.
        assert_eq!(
            last_change_time(&repo, &head, Some(second), "a.md").unwrap(),
            at(300)
        );
    }
}
