//! Commits in O(change): trees updated path by path from HEAD's (`git_tree_create_updated`), and
//! `.git/index` kept current for exactly those paths, with the work tree's stat data, so the
//! status walk at the next start (and the user's own `git status`) re-reads only files whose stat
//! changed.

use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{
    ErrorCode, FileMode, Index, IndexEntry, IndexTime, ObjectType, Oid, Repository, Status,
    StatusOptions, Tree,
};
use jiff::Timestamp;

use crate::HistoryError;
use crate::home::signature;
use crate::paths::{PATHSPECS, is_store_path};
use crate::pending::FileState;

/// A file to commit: its path relative to the home and its state (blob, or `None`: deleted).
pub(crate) type FileChange = (String, FileState);

/// Looks paths up in one tree, reading each directory's tree object once.
///
/// `Tree::get_path` reads every tree on the way from the object database at each call, and
/// libgit2 caches no tree object above 4 KiB: at 100,000 memories the `memories/` tree is a
/// 5.5 MB object (inflated and parsed again for each lookup, ~30 ms each in a release build).
/// A commit looks each of its paths up two or three times; this keeps the trees it read.
pub(crate) struct TreeReader<'r> {
    repo: &'r Repository,
    root: Tree<'r>,
    /// Directory path (no trailing `/`) → its tree, or `None` when the directory is not there.
    dirs: std::collections::HashMap<String, Option<Tree<'r>>>,
}

impl<'r> TreeReader<'r> {
    /// A reader of `root`.
    pub(crate) fn new(repo: &'r Repository, root: Tree<'r>) -> Self {
        TreeReader {
            repo,
            root,
            dirs: std::collections::HashMap::new(),
        }
    }

    /// The tree read.
    pub(crate) fn root(&self) -> &Tree<'r> {
        &self.root
    }

    /// The tree of directory `dir` (`/`-separated, relative to the root; "" is the root).
    fn dir(&mut self, dir: &str) -> Result<Option<&Tree<'r>>, HistoryError> {
        if dir.is_empty() {
            return Ok(Some(&self.root));
        }
        if !self.dirs.contains_key(dir) {
            let (parent, name) = dir.rsplit_once('/').unwrap_or(("", dir));
            let id = match self.dir(parent)? {
                Some(tree) => tree
                    .get_name(name)
                    .filter(|e| e.kind() == Some(ObjectType::Tree))
                    .map(|e| e.id()),
                None => None,
            };
            let tree = match id {
                Some(id) => Some(self.repo.find_tree(id)?),
                None => None,
            };
            self.dirs.insert(dir.to_owned(), tree);
        }
        Ok(self.dirs.get(dir).and_then(Option::as_ref))
    }

    /// The tree of directory `dir` (`/`-separated, relative to the root; "" is the root), if
    /// there is one.
    pub(crate) fn tree(&mut self, dir: &str) -> Result<Option<Tree<'r>>, HistoryError> {
        Ok(self.dir(dir)?.cloned())
    }

    /// The blob at `path` and its file mode, if any (a tree or nothing there: `None`).
    pub(crate) fn entry(&mut self, path: &str) -> Result<Option<(Oid, i32)>, HistoryError> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        Ok(self.dir(dir)?.and_then(|tree| {
            tree.get_name(name)
                .filter(|e| e.kind() == Some(ObjectType::Blob))
                .map(|e| (e.id(), e.filemode()))
        }))
    }

    /// The blob at `path`, if any.
    pub(crate) fn blob(&mut self, path: &str) -> Result<FileState, HistoryError> {
        Ok(self.entry(path)?.map(|(id, _)| id))
    }
}

/// The tree of HEAD, or the empty tree when HEAD is unborn.
fn base_tree(repo: &Repository) -> Result<(Option<git2::Commit<'_>>, Tree<'_>), HistoryError> {
    match repo.head() {
        Ok(head) => {
            let commit = head.peel_to_commit()?;
            let tree = commit.tree()?;
            Ok((Some(commit), tree))
        }
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
            let empty = repo.treebuilder(None)?.write()?;
            Ok((None, repo.find_tree(empty)?))
        }
        Err(e) => Err(e.into()),
    }
}

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
/// # Errors
/// [`HistoryError::Git`] when a tree or the commit cannot be written (a taken ref lock is
/// `ErrorCode::Locked`: retry with [`crate::pending::retrying`]).
pub(crate) fn commit_files(
    repo: &Repository,
    root: &Path,
    now: Timestamp,
    files: &[FileChange],
    message_for: &dyn Fn(&[String]) -> String,
    when: CommitIf,
) -> Result<Option<Oid>, HistoryError> {
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
    let sig = signature(now)?;
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

/// Reads the work-tree file at `path`: its bytes, or `None` when it does not exist.
pub(crate) fn read_work_tree(root: &Path, path: &str) -> Result<Option<Vec<u8>>, HistoryError> {
    match std::fs::read(root.join(path)) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HistoryError::Read {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// The blob id `bytes` have (as `git hash-object`, raw bytes).
pub(crate) fn hash(bytes: Option<&[u8]>) -> Result<FileState, HistoryError> {
    bytes
        .map(|b| Oid::hash_object(ObjectType::Blob, b))
        .transpose()
        .map_err(HistoryError::from)
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
