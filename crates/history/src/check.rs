//! What `elroy doctor` checks in the versioned home beyond git's own unfinished states: store
//! files whose `.git/index` entry is not HEAD's (elroy was stopped between its commit and the
//! index write), saved changes that no commit records, and which of those are a sync merge that
//! wrote its files but did not move the branch. [`repair_index`] is the safe repair of the first.

use std::path::Path;

use git2::{ObjectType, Oid, Repository, Status, StatusOptions, Tree};

use crate::{HistoryError, is_store_path};

/// What the versioned home has not recorded (paths relative to the home, sorted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unrecorded {
    /// Store files whose `.git/index` entry differs from HEAD's (or is missing). The index is a
    /// cache: [`repair_index`] sets it back to HEAD without touching any file.
    pub stale_index: Vec<String>,
    /// Store files whose content differs from HEAD's (changed, added or removed) and that no
    /// commit records yet: hand edits, or changes whose commit failed.
    pub uncommitted: Vec<String>,
    /// Those of [`Unrecorded::uncommitted`] that hold exactly what a fetched sync branch
    /// (`refs/remotes/sync/*`) has: a sync merge that wrote its files and stopped before it moved
    /// the branch. The next `elroy sync` finishes it.
    pub from_sync: Vec<String>,
}

/// The blob id of `path` in `tree`, if it has one.
fn blob_in(tree: &Tree<'_>, path: &str) -> Option<Oid> {
    tree.get_path(Path::new(path))
        .ok()
        .filter(|e| e.kind() == Some(ObjectType::Blob))
        .map(|e| e.id())
}

/// Looks for [`Unrecorded`] store files in the home repository at `root`. A home whose HEAD is
/// not born yet has nothing to compare with (empty answer).
///
/// # Errors
/// [`HistoryError::Git`] when the repository, its index or its status cannot be read.
pub fn unrecorded(root: &Path) -> Result<Unrecorded, HistoryError> {
    let repo = Repository::open(root)?;
    let Ok(head) = repo.head().and_then(|h| h.peel_to_tree()) else {
        return Ok(Unrecorded::default());
    };
    let index = repo.index()?;
    let sync_trees: Vec<Tree<'_>> = repo
        .references_glob("refs/remotes/sync/*")?
        .flatten()
        .filter_map(|r| r.peel_to_tree().ok())
        .collect();
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .renames_head_to_index(false);
    let statuses = repo.statuses(Some(&mut opts))?;
    let mut out = Unrecorded::default();
    for entry in statuses.iter() {
        let Ok(path) = entry.path().map(str::to_owned) else {
            continue;
        };
        if !is_store_path(&path) || entry.status() == Status::CURRENT {
            continue;
        }
        let in_head = blob_in(&head, &path);
        let in_index = index.get_path(Path::new(&path), 0).map(|e| e.id);
        let file = root.join(&path);
        let in_work = if file.is_file() {
            Some(Oid::hash_file(ObjectType::Blob, &file)?)
        } else {
            None
        };
        if in_index != in_head {
            out.stale_index.push(path.clone());
        }
        if in_work != in_head {
            if in_work.is_some() && sync_trees.iter().any(|t| blob_in(t, &path) == in_work) {
                out.from_sync.push(path.clone());
            }
            out.uncommitted.push(path);
        }
    }
    out.stale_index.sort();
    out.uncommitted.sort();
    out.from_sync.sort();
    Ok(out)
}

/// Sets the `.git/index` entries of `paths` back to HEAD's (with the work tree's stat data
/// where the file holds HEAD's content): no file and no commit changes. Takes the home lock
/// ([`crate::GitWrite`]).
///
/// # Errors
/// [`HistoryError`] when a lock cannot be taken, the repository cannot be opened or the index
/// cannot be written.
pub fn repair_index(root: &Path, paths: &[String]) -> Result<(), HistoryError> {
    let _git = crate::GitWrite::begin(root)?;
    crate::refresh_index(root, paths)
}
