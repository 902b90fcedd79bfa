//! The three-way merge of the trees: each path changed on one side takes that side; a path
//! changed on both goes through [`merge::merge_file`]. Items are matched by identity, not only by
//! path:
//!
//! - a rename on one side (git's rename detection: the same or a similar file under another name
//!   of the same store, e.g. `rename_due_item` or a hand `mv`; for agenda files also the same
//!   [`UID_KEY`] under another name) and an edit of the old path on the other are merged into one
//!   file at the new path ([`ReportEntry::Renamed`]);
//! - two different store files created at the same path on both sides (twins: the same name), or
//!   a file theirs created whose path equals one of ours ignoring case and Unicode normalisation
//!   (case twins: `Call_mom.md`, `call_Mom.md`), stay two items: one becomes `NAME (from
//!   MACHINE)`, its file too ([`ReportEntry::Twin`]): the one made on the machine whose name
//!   sorts second (of case twins, one that was there at the last sync keeps its name). No two
//!   paths of the merged tree differ only by case.
//!

use std::collections::{BTreeMap, BTreeSet};

use elroy_history::machine_name;
use elroy_markdown::{Document, Value};
use git2::{Commit, Oid, Repository, Tree};
use jiff::Timestamp;

use super::renames::{Renames, renames};
use super::report::{ChangeKind, FileChange};
use super::trees::{blob_bytes, blob_id, changes, front_matter_name, stem_name, tree_paths};
use crate::SyncError;
use crate::merge::{self, FileKind, MergeInput, ReportEntry, Side};

/// The merged tree and what the merge did.
pub(super) struct MergedTree {
    /// The merged tree (not yet committed).
    pub tree: Oid,
    /// What the merge of files changed on both sides did.
    pub report: Vec<ReportEntry>,
    /// The paths the merge itself created (memory copies, siblings, renamed twins).
    pub fresh: BTreeSet<String>,
}

/// The three-way merge of the trees (see the module doc) of `ours` and `theirs` (made on the
/// machine `host`) over `base`.
pub(super) fn merge_trees(
    repo: &Repository,
    base: &Tree<'_>,
    ours: &Commit<'_>,
    theirs: &Commit<'_>,
    host: &str,
) -> Result<MergedTree, SyncError> {
    let mut merge = TreeMerge::new(repo, base, ours, theirs, host)?;
    let theirs_changed = changes(repo, Some(base), &merge.theirs.tree)?;
    let mut update = git2::build::TreeUpdateBuilder::new();
    let mut any = false;
    for change in theirs_changed {
        for (written, bytes) in merge.writes(change)? {
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
        update.create_updated(repo, &merge.ours.tree)?
    } else {
        merge.ours.tree.id()
    };
    Ok(MergedTree {
        tree,
        report: merge.report,
        fresh: merge.fresh,
    })
}

/// A file the merge writes (relative path, `None`: removed).
type Write = (String, Option<Vec<u8>>);

/// One side of the merge.
struct Branch<'r> {
    head: &'r Commit<'r>,
    tree: Tree<'r>,
    /// Its renames since the base.
    renames: Renames,
    /// The machine it comes from (this machine's name for ours).
    host: String,
}

/// The three versions of one path (`None`: no such file there).
struct Versions {
    base: Option<Vec<u8>>,
    ours: Option<Vec<u8>>,
    theirs: Option<Vec<u8>>,
}

/// One merge of two trees under way: both sides and what has been decided so far.
struct TreeMerge<'r> {
    repo: &'r Repository,
    base: &'r Tree<'r>,
    /// The merge base commit; `None` when the homes began apart.
    base_id: Option<Oid>,
    ours: Branch<'r>,
    theirs: Branch<'r>,
    /// The paths ours changed since the base.
    ours_changed: BTreeSet<String>,
    /// Theirs' renames, new path → old path.
    theirs_renamed_from: BTreeMap<String, String>,
    /// Ours' paths by their case- and normalisation-free key, for case twins.
    ours_keys: BTreeMap<String, String>,
    /// Every path of both trees and of the files the merge made, for the names a sibling, a
    /// memory copy or a twin must not take.
    taken: Vec<String>,
    /// The paths the merge made.
    fresh: BTreeSet<String>,
    report: Vec<ReportEntry>,
}

impl<'r> TreeMerge<'r> {
    fn new(
        repo: &'r Repository,
        base: &'r Tree<'r>,
        ours: &'r Commit<'r>,
        theirs: &'r Commit<'r>,
        host: &str,
    ) -> Result<TreeMerge<'r>, SyncError> {
        let branch = |head: &'r Commit<'r>, host: String| -> Result<Branch<'r>, SyncError> {
            let tree = head.tree()?;
            let renames = renames(repo, base, &tree)?;
            Ok(Branch {
                head,
                tree,
                renames,
                host,
            })
        };
        let ours = branch(ours, machine_name())?;
        let theirs = branch(theirs, host.to_owned())?;
        let ours_changed = changes(repo, Some(base), &ours.tree)?
            .into_iter()
            .map(|c| c.path)
            .collect();
        let theirs_renamed_from = theirs
            .renames
            .iter()
            .map(|(old, new)| (new.clone(), old.clone()))
            .collect();
        let ours_paths = tree_paths(&ours.tree)?;
        let taken = ours_paths
            .union(&tree_paths(&theirs.tree)?)
            .cloned()
            .collect();
        let ours_keys = ours_paths.into_iter().map(|p| (fold_path(&p), p)).collect();
        Ok(TreeMerge {
            repo,
            base,
            base_id: repo.merge_base(ours.head.id(), theirs.head.id()).ok(),
            ours,
            theirs,
            ours_changed,
            theirs_renamed_from,
            ours_keys,
            taken,
            fresh: BTreeSet::new(),
            report: Vec::new(),
        })
    }

    /// What the merge writes for one path theirs changed.
    fn writes(&mut self, change: FileChange) -> Result<Vec<Write>, SyncError> {
        let path = change.path;
        let theirs_bytes = blob_bytes(self.repo, &self.theirs.tree, &path)?;
        if let Some(old) = self.theirs_renamed_from.get(&path)
            && self.ours_changed.contains(old)
            && blob_bytes(self.repo, &self.ours.tree, old)?.is_some()
            && blob_bytes(self.repo, &self.ours.tree, &path)?.is_none()
        {
            // Theirs renamed a file ours edited: merged at the old path's turn.
            return Ok(Vec::new());
        }
        if let Some((new, old)) = self.rename_of(&path, theirs_bytes.is_some())? {
            return self.merge_renamed(&new, &old, theirs_bytes);
        }
        if self.ours_changed.contains(&path) {
            return self.changed_on_both(&path, theirs_bytes);
        }
        if let Some(bytes) = &theirs_bytes
            && change.kind == ChangeKind::Added
            && FileKind::of(&path) == FileKind::Agenda
            && let Some(ours_path) = self.ours_keys.get(&fold_path(&path))
            && *ours_path != path
        {
            let ours_path = ours_path.clone();
            return self.case_twins(&path, &ours_path, bytes.clone());
        }
        Ok(vec![(path, theirs_bytes)])
    }

    /// (new path, old path) when `path` was renamed on one side and changed on the other.
    fn rename_of(
        &self,
        path: &str,
        theirs_has: bool,
    ) -> Result<Option<(String, String)>, SyncError> {
        let (repo, ours) = (self.repo, &self.ours.tree);
        Ok(
            match (self.theirs.renames.get(path), self.ours.renames.get(path)) {
                (Some(new), _)
                    if self.ours_changed.contains(path)
                        && blob_bytes(repo, ours, path)?.is_some()
                        && blob_bytes(repo, ours, new)?.is_none() =>
                {
                    Some((new.to_owned(), path.to_owned()))
                }
                (_, Some(new))
                    if theirs_has && blob_bytes(repo, &self.theirs.tree, new)?.is_none() =>
                {
                    Some((new.to_owned(), path.to_owned()))
                }
                _ => None,
            },
        )
    }

    /// One item, at the new path, with the other side's edit.
    fn merge_renamed(
        &mut self,
        new: &str,
        old: &str,
        theirs_bytes: Option<Vec<u8>>,
    ) -> Result<Vec<Write>, SyncError> {
        let repo = self.repo;
        let ours_renamed = self.ours.renames.get(old).map(String::as_str) == Some(new);
        let theirs_renamed = self.theirs.renames.get(old).map(String::as_str) == Some(new);
        let theirs_side = if theirs_renamed {
            blob_bytes(repo, &self.theirs.tree, new)?
        } else {
            theirs_bytes
        };
        let ours_path = if ours_renamed { new } else { old };
        let theirs_path = if theirs_renamed { new } else { old };
        let ours_side = blob_bytes(repo, &self.ours.tree, ours_path)?;
        let base_bytes = blob_bytes(repo, self.base, old)?;
        let input = MergeInput::new(
            new,
            base_bytes.as_deref(),
            self.side(&self.ours, ours_side.as_deref(), ours_path)?,
            self.side(&self.theirs, theirs_side.as_deref(), theirs_path)?,
        )
        .with_taken(&self.taken);
        let outcome = merge::merge_file(&input);
        let mut writes = outcome.writes;
        if !writes.iter().any(|(p, _)| p == new) && ours_path != new {
            // Ours' content stays, under the new name.
            writes.push((new.to_owned(), ours_side));
        }
        // The old path goes (ours still has it when theirs renamed).
        if ours_path == old {
            writes.push((old.to_owned(), None));
        }
        self.report.push(ReportEntry::Renamed {
            path: new.to_owned(),
            from: old.to_owned(),
        });
        self.report.extend(
            outcome
                .report
                .into_iter()
                .filter(|r| !matches!(r, ReportEntry::Merged { .. })),
        );
        Ok(writes)
    }

    /// A path both sides changed: twins when both created an agenda item of this name, else a
    /// file merge.
    fn changed_on_both(
        &mut self,
        path: &str,
        theirs_bytes: Option<Vec<u8>>,
    ) -> Result<Vec<Write>, SyncError> {
        let versions = Versions {
            base: blob_bytes(self.repo, self.base, path)?,
            ours: blob_bytes(self.repo, &self.ours.tree, path)?,
            theirs: theirs_bytes,
        };
        if let (None, Some(o), Some(t)) = (&versions.base, &versions.ours, &versions.theirs)
            && o != t
            && FileKind::of(path) == FileKind::Agenda
            && let Some(writes) = self.twins(path, o, t)
        {
            return Ok(writes);
        }
        self.merge_both(path, &versions)
    }

    /// Twins: both machines created an item of this name. The one made on the machine whose
    /// name sorts second becomes `NAME (from THAT MACHINE)`, so every machine decides alike
    /// whoever syncs first. `None` when that item's front matter does not parse.
    fn twins(&mut self, path: &str, ours: &[u8], theirs: &[u8]) -> Option<Vec<Write>> {
        let ours_moves = self.ours.host > self.theirs.host;
        let (moved, mover) = if ours_moves {
            (ours, &self.ours.host)
        } else {
            (theirs, &self.theirs.host)
        };
        let (new_path, bytes, name) = twin(path, moved, mover, &self.taken)?;
        self.made(&new_path);
        self.report.push(ReportEntry::Twin {
            path: path.to_owned(),
            new_path: new_path.to_owned(),
            name,
        });
        Some(if ours_moves {
            vec![
                (path.to_owned(), Some(theirs.to_vec())),
                (new_path, Some(bytes)),
            ]
        } else {
            vec![(new_path, Some(bytes))]
        })
    }

    /// Case twins: the item theirs created (`path`, `bytes`) only differs from ours' `ours_path`
    /// by case or Unicode normalisation; on a case-insensitive file system they would be one
    /// file. One that was there at the last sync keeps its name; of two new ones, the one made on
    /// the machine whose name sorts second moves, as for twins.
    fn case_twins(
        &mut self,
        path: &str,
        ours_path: &str,
        bytes: Vec<u8>,
    ) -> Result<Vec<Write>, SyncError> {
        let ours_bytes = blob_bytes(self.repo, &self.ours.tree, ours_path)?;
        let ours_moves = blob_bytes(self.repo, self.base, ours_path)?.is_none()
            && self.ours.host > self.theirs.host;
        let moved = match (&ours_bytes, ours_moves) {
            (Some(o), true) => twin(ours_path, o, &self.ours.host, &self.taken),
            _ => twin(path, &bytes, &self.theirs.host, &self.taken),
        };
        let Some((new_path, renamed, name)) = moved else {
            return Ok(vec![(path.to_owned(), Some(bytes))]);
        };
        self.made(&new_path);
        let kept = if ours_moves { path } else { ours_path };
        self.report.push(ReportEntry::Twin {
            path: kept.to_owned(),
            new_path: new_path.to_owned(),
            name,
        });
        Ok(if ours_moves {
            vec![
                (path.to_owned(), Some(bytes)),
                (ours_path.to_owned(), None),
                (new_path, Some(renamed)),
            ]
        } else {
            vec![(new_path, Some(renamed))]
        })
    }

    /// A path changed on both sides, through [`merge::merge_file`]; the new files it makes are
    /// added to `taken` and `fresh`.
    fn merge_both(&mut self, path: &str, versions: &Versions) -> Result<Vec<Write>, SyncError> {
        let input = MergeInput::new(
            path,
            versions.base.as_deref(),
            self.side(&self.ours, versions.ours.as_deref(), path)?,
            self.side(&self.theirs, versions.theirs.as_deref(), path)?,
        )
        .with_taken(&self.taken);
        let outcome = merge::merge_file(&input);
        self.report.extend(outcome.report);
        for (written, _) in &outcome.writes {
            if written != path {
                // A later sibling or copy in this sync must not take this name either.
                self.made(written);
            }
        }
        Ok(outcome.writes)
    }

    /// `branch`'s side of the merge of `path` (its version `bytes`).
    fn side<'a>(
        &self,
        branch: &'a Branch<'_>,
        bytes: Option<&'a [u8]>,
        path: &str,
    ) -> Result<Side<'a>, SyncError> {
        Ok(Side {
            bytes,
            time: last_change_time(self.repo, branch.head, self.base_id, path)?,
            host: &branch.host,
        })
    }

    /// Records a file the merge made: later siblings, copies and twins must not take its name.
    fn made(&mut self, path: &str) {
        self.taken.push(path.to_owned());
        self.fresh.insert(path.to_owned());
    }
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
