//! The renames of one side since the merge base: what git's rename detection finds, and files too
//! different for it that carry the same identity (an agenda file's `uid`, a memory's `id`).

use std::collections::BTreeMap;

use git2::{Diff, DiffFile, Repository, Tree};

use super::names::uid_of;
use crate::merge::FileKind;
use crate::{SyncError, identity};

/// Old path → new path.
pub(super) type Renames = BTreeMap<String, String>;

/// The renames found between `base` and `side` (the same or a similar file under another path),
/// old path → new path, for store files that stay in the same kind of store (agenda, memories,
/// feature requests).
pub(super) fn renames(
    repo: &Repository,
    base: &Tree<'_>,
    side: &Tree<'_>,
) -> Result<Renames, SyncError> {
    let mut diff = repo.diff_tree_to_tree(Some(base), Some(side), None)?;
    let mut find = git2::DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))?;
    let mut found = Renames::new();
    for delta in diff.deltas() {
        if delta.status() != git2::Delta::Renamed {
            continue;
        }
        let (Some(old), Some(new)) = (slash_path(&delta.old_file()), slash_path(&delta.new_file()))
        else {
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
    found.extend(same_identity(repo, &diff));
    Ok(found)
}

/// Files too different for git's detection (renamed and rewritten) that carry the same
/// identity are one item renamed: agenda files by their `uid`, memories by their `id` (unique
/// on one side: this side's own ids since the base). Only within one folder.
fn same_identity(repo: &Repository, diff: &Diff<'_>) -> Renames {
    let mut removed: BTreeMap<String, String> = BTreeMap::new();
    let mut added: Vec<(String, String)> = Vec::new();
    for delta in diff.deltas() {
        let (status, file) = match delta.status() {
            git2::Delta::Deleted => (git2::Delta::Deleted, delta.old_file()),
            git2::Delta::Added => (git2::Delta::Added, delta.new_file()),
            _ => continue,
        };
        let Some(path) = slash_path(&file) else {
            continue;
        };
        let Some(uid) = repo
            .find_blob(file.id())
            .ok()
            .and_then(|b| identity_of(&path, b.content()))
        else {
            continue;
        };
        if status == git2::Delta::Deleted {
            removed.insert(uid, path);
        } else {
            added.push((uid, path));
        }
    }
    let mut found = Renames::new();
    for (uid, new) in added {
        if let Some(old) = removed.remove(&uid)
            && old.rsplit_once('/').map(|(d, _)| d) == new.rsplit_once('/').map(|(d, _)| d)
        {
            found.insert(old, new);
        }
    }
    found
}

/// The identity of the store file `path` with content `bytes`, as one string.
fn identity_of(path: &str, bytes: &[u8]) -> Option<String> {
    match FileKind::of(path) {
        FileKind::Agenda => uid_of(bytes).map(|uid| format!("uid {uid}")),
        FileKind::Memory => identity::memory_prefix(path)
            .zip(identity::memory_id(bytes))
            .map(|(prefix, id)| format!("memory {prefix} {id}")),
        _ => None,
    }
}

/// A diff file's path with `/` separators.
fn slash_path(file: &DiffFile<'_>) -> Option<String> {
    file.path().map(|p| p.to_string_lossy().replace('\\', "/"))
}
