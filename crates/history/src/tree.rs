//! Commits in O(change): trees updated path by path from HEAD's (`git_tree_create_updated`), and
//! `.git/index` kept current for exactly those paths, with the work tree's stat data, so the
//! status walk at the next start (and the user's own `git status`) re-reads only files whose stat
//! changed. [`commit_files`] is the one place every elroy commit of the stores is made, so it is
//! where the repository-state checks run (`state`). Uses `walk`, `state`, `reader`, `machine`,
//! `paths` and `error` (below it).

use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{
    ErrorCode, FileMode, Index, IndexEntry, IndexTime, Oid, Repository, Status, StatusOptions,
};
use jiff::Timestamp;

use crate::error::HistoryError;
use crate::machine::machine_signature;
use crate::paths::{PATHSPECS, is_store_path};
use crate::reader::{FileState, TreeReader, base_tree, hash, read_work_tree};
use crate::state;

/// A file to commit: its path relative to the home and its state (blob, or `None`: deleted).
pub(crate) type FileChange = (String, FileState);

/// The mode a work-tree file is committed with: executable or not, as `git add` does.
fn work_tree_mode(root: &Path, path: &str) -> FileMode {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if std::fs::metadata(root.join(path)).is_ok_and(|m| m.permissions().mode() & 0o111 != 0) {
            return FileMode::BlobExecutable;
        }
    }
    let _ = (root, path);
    FileMode::Blob
}

/// Whether [`commit_files`] commits when no path changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommitIf {
    /// Only when a path changes (else no commit).
    Changed,
    /// Always (an undo whose files already hold the earlier content still says it was undone).
    Always,
}

/// Commits `files` on HEAD (a root commit when HEAD is unborn): each path gets its state, every
/// other path keeps HEAD's; only the trees on the changed paths are rewritten. The message is
/// `message_for(changed paths, sorted)`. Returns `None` (no commit) when no path changes, unless
/// `when` is [`CommitIf::Always`]. Blobs must be in the object database already.
///
/// Nothing is committed while git has not finished something in the home (a merge, a rebase, a
/// detached HEAD, unmerged index entries) or when a store file to commit holds conflict markers.
///
/// # Errors
/// [`HistoryError::Unfinished`] (nothing committed) as above; [`HistoryError::Git`] when a tree or
/// the commit cannot be written (a taken ref lock is `ErrorCode::Locked`: retry with
/// [`crate::pending::retrying`]).
pub(crate) fn commit_files(
    repo: &Repository,
    root: &Path,
    now: Timestamp,
    files: &[FileChange],
    message_for: &dyn Fn(&[String]) -> String,
    when: CommitIf,
) -> Result<Option<Oid>, HistoryError> {
    check_state(repo, root)?;
    for (path, state) in files {
        if let Some(id) = state
            && let Ok(blob) = repo.find_blob(*id)
            && let Some(found) = state::check_markers(path, blob.content())
        {
            return Err(HistoryError::Unfinished(found));
        }
    }
    let (parent, base) = base_tree(repo)?;
    let mut base = TreeReader::new(repo, base);
    let mut update = TreeUpdateBuilder::new();
    let mut changed: Vec<String> = Vec::new();
    for (path, state) in files {
        let current = base.entry(path)?;
        match state {
            Some(id) => {
                // The work-tree file's executable bit, as `git add`; the same content with
                // another mode is a change too.
                let mode = work_tree_mode(root, path);
                if current != Some((*id, i32::from(mode))) {
                    update.upsert(path.as_str(), *id, mode);
                    changed.push(path.clone());
                }
            }
            None => {
                if current.is_some() {
                    update.remove(path.as_str());
                    changed.push(path.clone());
                }
            }
        }
    }
    changed.sort();
    changed.dedup();
    let base = base.root();
    let tree_id = if changed.is_empty() {
        base.id()
    } else {
        update.create_updated(repo, base)?
    };
    if tree_id == base.id() && when == CommitIf::Changed {
        return Ok(None);
    }
    let tree = repo.find_tree(tree_id)?;
    let sig = machine_signature(now)?;
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let id = repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        &message_for(&changed),
        &tree,
        &parents,
    )?;
    if let Some(parent) = &parent {
        crate::walk::advance(root, parent.id(), id);
    }
    Ok(Some(id))
}

/// [`HistoryError::Unfinished`] when git has not finished something in the home's repository
/// (`state::check`; `.git/index` is read for unmerged entries only when something other than
/// elroy wrote it since elroy last did).
///
/// # Errors
/// As above, or [`HistoryError::Git`] when the repository cannot be read.
pub(crate) fn check_state(repo: &Repository, root: &Path) -> Result<(), HistoryError> {
    let elroys_index = crate::walk::Stamp::read(root).is_some_and(|stamp| {
        stamp.index.is_some() && stamp.index == crate::walk::index_state(root)
    });
    match state::check(repo, elroys_index)? {
        Some(found) => Err(HistoryError::Unfinished(found)),
        None => Ok(()),
    }
}

/// Store files whose status is not current: the work tree or `.git/index` differs from HEAD
/// (new, modified, deleted, or an index entry that is stale because `index.lock` was taken when
/// elroy last committed). libgit2 compares the work tree with the index by stat and re-reads only
/// files whose stat changed; files whose stat changed but not their content get fresh stat data
/// in `.git/index` (written when its lock is free), so they are not read again. Call with the home
/// lock held (elroy writes `.git/index` only under it).
pub(crate) fn store_candidates(repo: &Repository) -> Result<Vec<String>, HistoryError> {
    let walk = |update_index: bool| -> Result<Vec<String>, git2::Error> {
        let mut options = StatusOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(false)
            .exclude_submodules(true)
            .renames_head_to_index(false)
            .renames_index_to_workdir(false)
            .update_index(update_index);
        for spec in PATHSPECS {
            options.pathspec(spec);
        }
        let statuses = repo.statuses(Some(&mut options))?;
        Ok(statuses
            .iter()
            .filter(|entry| entry.status() != Status::CURRENT)
            .filter_map(|entry| {
                let path = entry.path().ok()?.to_owned();
                is_store_path(&path).then_some(path)
            })
            .collect())
    };
    match walk(true) {
        Ok(paths) => Ok(paths),
        // `.git/index` could not be rewritten (a `git` command holds its lock): the same walk
        // without refreshing it.
        Err(e) if e.code() == ErrorCode::Locked => {
            tracing::debug!("versioned home: .git/index not refreshed: {e}");
            Ok(walk(false)?)
        }
        Err(e) => Err(e.into()),
    }
}

/// The size of `.git/index` above which a tool's commit leaves the index as it is (see
/// [`sync_index_after_call`]): 2 MiB, about 20,000 store files.
pub(crate) const INDEX_KEPT_CURRENT_MAX: u64 = 2 * 1024 * 1024;

/// [`sync_index`] after a tool call's commit, when `.git/index` is at most
/// [`INDEX_KEPT_CURRENT_MAX`] bytes. libgit2 reads, checks (SHA-1) and rewrites the whole file to
/// change one entry: at 110,000 store files that is an 11 MB file read and written per call, more
/// than the rest of the call. Above that size the index is left stale for the committed paths: their
/// entries differ from HEAD, so the next outside-edit walk ([`store_candidates`]: `elroy history`,
/// `elroy undo`, a start) sees exactly those paths, finds them as HEAD has them (no commit) and
/// refreshes their entries, in one rewrite for all the calls since. Until then the user's own
/// `git status` lists those paths as staged (the index still holds their previous content).
pub(crate) fn sync_index_after_call(repo: &Repository, root: &Path, paths: &[String]) {
    let size = std::fs::metadata(repo.path().join("index")).map_or(0, |m| m.len());
    if size > INDEX_KEPT_CURRENT_MAX {
        tracing::debug!(
            size,
            "versioned home: .git/index left for the next walk (a large home)"
        );
        crate::walk::note_stale_index(root, paths);
        return;
    }
    sync_index(repo, root, paths);
}

/// Makes `.git/index` agree with HEAD for `paths`: a path HEAD does not have is dropped; one it
/// has gets HEAD's blob, with the work tree's stat data when the file holds exactly that blob (so
/// a status walk need not read it), else without (so the next walk reads it and sees the
/// difference). An index without entries (missing, or never written) is first filled from HEAD's
/// tree. Best effort, never an error: when `.git/index` cannot be read or written (a `git`
/// command holds `index.lock`) it is left as it is, and the next start refreshes the entries that
/// differ from HEAD.
pub(crate) fn sync_index(repo: &Repository, root: &Path, paths: &[String]) {
    if let Err(e) = try_sync_index(repo, root, paths) {
        tracing::debug!("versioned home: .git/index not updated: {e}");
        crate::walk::forget(root);
    }
}

fn try_sync_index(repo: &Repository, root: &Path, paths: &[String]) -> Result<(), HistoryError> {
    if paths.is_empty() {
        return Ok(());
    }
    let (_, head) = base_tree(repo)?;
    let mut index = repo.index()?;
    if index.is_empty() {
        index.read_tree(&head)?;
    }
    let mut head = TreeReader::new(repo, head);
    for path in paths {
        match head.entry(path)? {
            None => {
                if index.get_path(Path::new(path), 0).is_some() {
                    index.remove_path(Path::new(path))?;
                }
            }
            Some((id, mode)) => {
                let matches = match read_work_tree(root, path)? {
                    Some(bytes) => hash(Some(&bytes))? == Some(id),
                    None => false,
                };
                let stat = if matches {
                    std::fs::metadata(root.join(path)).ok()
                } else {
                    None
                };
                index.add(&index_entry(path, id, mode, stat.as_ref()))?;
            }
        }
    }
    if write_index(&mut index)? {
        crate::walk::note_index_written(root);
    } else {
        // Stale entries: the next walk is libgit2's, which sees and refreshes them.
        crate::walk::forget(root);
    }
    Ok(())
}

/// Writes `index` to `.git/index`; a taken `index.lock` is not an error (the index is a cache):
/// returns whether it was written.
fn write_index(index: &mut Index) -> Result<bool, HistoryError> {
    match index.write() {
        Ok(()) => Ok(true),
        Err(e) if e.code() == ErrorCode::Locked => {
            tracing::debug!("versioned home: .git/index not updated: {e}");
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

/// An index entry for a regular file at `path` with blob `id` and `mode`, with the stat data of
/// `stat` (the work-tree file, which holds exactly `id`), or none (a status walk then re-reads
/// the file).
pub(crate) fn index_entry(
    path: &str,
    id: Oid,
    mode: i32,
    stat: Option<&std::fs::Metadata>,
) -> IndexEntry {
    let mut entry = IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: u32::try_from(mode).unwrap_or(0o100_644),
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: u16::try_from(path.len()).unwrap_or(0xfff).min(0xfff),
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    };
    #[cfg(unix)]
    if let Some(meta) = stat {
        use std::os::unix::fs::MetadataExt;
        // The same truncations libgit2 makes when it fills an entry from `stat`.
        entry.ctime = IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32);
        entry.mtime = IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32);
        entry.dev = meta.dev() as u32;
        entry.ino = meta.ino() as u32;
        entry.uid = meta.uid();
        entry.gid = meta.gid();
        entry.file_size = meta.len() as u32;
    }
    #[cfg(not(unix))]
    let _ = stat;
    entry
}

/// Brings `.git/index` up to date with HEAD for `paths` (relative to the home), with the work
/// tree's stat data where the file holds HEAD's content, as elroy does after its own commits;
/// for `elroy sync` after it moved the branch. Best effort (the index is a cache). Call with the
/// home lock held.
///
/// # Errors
/// [`HistoryError::Git`] when the repository cannot be opened.
pub fn refresh_index(root: &std::path::Path, paths: &[String]) -> Result<(), HistoryError> {
    let repo = git2::Repository::open(root)?;
    sync_index(&repo, root, paths);
    Ok(())
}
