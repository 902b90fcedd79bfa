//! Reading the home's git trees: the files two trees differ by, a file's bytes, every path, and
//! an item's name; and writing one file of a tree into the home.

use std::collections::BTreeSet;
use std::path::Path;

use elroy_markdown::{Document, Value};
use git2::{ObjectType, Oid, Repository, Tree};

use super::report::{ChangeKind, FileChange};
use crate::SyncError;

/// Every blob path of `tree`, relative to the home.
pub(super) fn tree_paths(tree: &Tree<'_>) -> Result<BTreeSet<String>, SyncError> {
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

/// The blob id at `path` in `tree`, `None` when there is none.
pub(super) fn blob_id(tree: &Tree<'_>, path: &str) -> Option<Oid> {
    tree.get_path(Path::new(path)).ok().map(|e| e.id())
}

/// The bytes of the blob at `path` in `tree`, `None` when there is none.
pub(super) fn blob_bytes(
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
pub(super) fn changes(
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

/// The `name` front-matter key of a store file, when it has one.
pub(super) fn front_matter_name(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let doc = Document::parse(text, "sync").ok()?;
    match doc.front_matter.get("name")? {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// A file's name without its folder and `.md`, `_` read as a space.
pub(super) fn stem_name(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".md").unwrap_or(file).replace('_', " ")
}

/// Writes `bytes` to the home file `path` (relative) atomically, creating its folder.
pub(super) fn write_file(root: &Path, path: &str, bytes: &[u8]) -> Result<(), SyncError> {
    let file = root.join(path);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| SyncError::Write {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
    }
    elroy_markdown::write_atomic(&file, bytes, path)?;
    Ok(())
}
