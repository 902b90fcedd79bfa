//! Reading trees and work-tree files: [`TreeReader`] (paths looked up in one tree, each directory
//! read once), the work-tree state of a file ([`read_work_tree`], [`hash`]), HEAD's tree
//! ([`base_tree`], [`head_born`]) and the paths two trees differ in ([`changed_paths`]). The
//! bottom of the crate beside `paths`, `machine` and `error`: it uses no other module.

use std::path::Path;

use git2::{ErrorCode, ObjectType, Oid, Repository, Tree};

use crate::error::HistoryError;

/// The work-tree state of a store file: its blob id, or `None` when it is deleted.
pub(crate) type FileState = Option<Oid>;

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
pub(crate) fn base_tree(
    repo: &Repository,
) -> Result<(Option<git2::Commit<'_>>, Tree<'_>), HistoryError> {
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

pub(crate) fn head_born(repo: &Repository) -> Result<bool, HistoryError> {
    match repo.head() {
        Ok(_) => Ok(true),
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Paths whose content differs between `old` (none: the empty tree) and `new`, sorted.
pub(crate) fn changed_paths(
    repo: &Repository,
    old: Option<&git2::Tree<'_>>,
    new: &git2::Tree<'_>,
) -> Result<Vec<String>, HistoryError> {
    let diff = repo.diff_tree_to_tree(old, Some(new), None)?;
    let mut paths: Vec<String> = diff
        .deltas()
        .filter_map(|delta| {
            delta
                .new_file()
                .path()
                .or_else(|| delta.old_file().path())
                .map(|p| p.to_string_lossy().replace('\\', "/"))
        })
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}
