//! Bringing the remote's commit into this home under the home lock (steps 3–5 of the module doc of
//! [`super`]): fast-forward or merge, renumber colliding memory ids, `state.db`, the files, the
//! branch and `.git/index`.

use std::collections::BTreeSet;
use std::path::Path;

use elroy_history::{machine_name, machine_signature};
use git2::{Commit, Oid, Repository, Tree};

use super::report::{FileChange, merge_lines};
use super::tree_merge::{MergedTree, merge_trees};
use super::trees::{blob_bytes, changes, write_file};
use super::{SyncOptions, fail_point};
use crate::SyncError;
use crate::identity::{self, Renumbered};
use crate::index::{self, Remap};
use crate::merge::ReportEntry;

/// The home one sync works on.
pub(super) struct Home<'a> {
    pub repo: &'a Repository,
    /// The home's folder.
    pub root: &'a Path,
    pub options: &'a SyncOptions,
}

/// What [`integrate`] did to the home.
pub(super) struct Integrated {
    pub pulled: Vec<FileChange>,
    pub merged: Vec<ReportEntry>,
    pub renumbered: Vec<Renumbered>,
    pub from: Option<String>,
}

/// Where HEAD moves once the remote's commit is known, before ids are made unique.
struct Target<'r> {
    /// Ours, theirs (a fast-forward), or their merge.
    commit: Oid,
    /// The tree changes are counted from (the merge base's; theirs' when nothing is pulled).
    base_tree: Tree<'r>,
    /// What the merge of files changed on both sides did.
    merged: Vec<ReportEntry>,
    /// The paths the merge itself created.
    fresh: BTreeSet<String>,
    /// The machines the pulled changes came from; `None` when nothing is pulled.
    from: Option<String>,
}

/// Brings `theirs` into this home (with the home lock held): fast-forward or merge, renumber,
/// `state.db`, files, branch, `.git/index`. `None` when there is nothing to pull.
pub(super) fn integrate(
    home: &Home<'_>,
    ours: &Commit<'_>,
    theirs: Option<Oid>,
) -> Result<Option<Integrated>, SyncError> {
    let repo = home.repo;
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
        let target = Target {
            commit: ours.id(),
            base_tree,
            merged: Vec::new(),
            fresh: BTreeSet::new(),
            from: None,
        };
        return finish_integration(home, ours, target);
    };
    let theirs = repo.find_commit(theirs_id)?;
    let host = elroy_history::commit_machine(&theirs).unwrap_or_else(|| "remote".to_owned());
    let fast_forward = repo.graph_descendant_of(theirs_id, ours.id())?;
    let mut target = if fast_forward {
        Target {
            commit: theirs_id,
            base_tree: ours.tree()?,
            merged: Vec::new(),
            fresh: BTreeSet::new(),
            from: None,
        }
    } else {
        // Two homes that began apart (the first sync of a second machine) have no common
        // commit: their merge base is the empty tree, and every file is new on its side.
        let base_tree = match repo.merge_base(ours.id(), theirs_id) {
            Ok(base_id) => repo.find_commit(base_id)?.tree()?,
            Err(e) if e.code() == git2::ErrorCode::NotFound => empty()?,
            Err(e) => return Err(e.into()),
        };
        let merged = merge_trees(repo, &base_tree, ours, &theirs, &host)?;
        let commit = commit_merge(home, ours, &theirs, &host, &merged)?;
        Target {
            commit,
            base_tree,
            merged: merged.report,
            fresh: merged.fresh,
            from: None,
        }
    };
    // The report names every machine whose changes came in, not only the last to push.
    target.from = Some(pulled_machines(repo, theirs_id, ours.id())?.unwrap_or(host));
    finish_integration(home, ours, target)
}

/// The merge commit `sync: merge from HOST` of `ours` and `theirs` with the merged tree (not yet
/// on the branch); its message lists what the merge did.
fn commit_merge(
    home: &Home<'_>,
    ours: &Commit<'_>,
    theirs: &Commit<'_>,
    host: &str,
    merged: &MergedTree,
) -> Result<Oid, SyncError> {
    let sig = machine_signature(home.options.now)?;
    let mut message = format!("sync: merge from {host}\n");
    let lines = merge_lines(&merged.report);
    if !lines.is_empty() {
        message.push('\n');
        message.push_str(&lines.join("\n"));
        message.push('\n');
    }
    let tree = home.repo.find_tree(merged.tree)?;
    Ok(home
        .repo
        .commit(None, &sig, &sig, &message, &tree, &[ours, theirs])?)
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

/// The rest of [`integrate`] once the target (ours, theirs, or the merge) is known: renumber
/// (`sync: renumber`), `state.db`, files, branch, `.git/index`. `None` when it leaves HEAD as it
/// is (nothing pulled, no id to change).
fn finish_integration(
    home: &Home<'_>,
    ours: &Commit<'_>,
    target: Target<'_>,
) -> Result<Option<Integrated>, SyncError> {
    let repo = home.repo;
    let host = target
        .from
        .clone()
        .unwrap_or_else(|| "this machine".to_owned());
    let (commit, renumbered) = renumber(home, ours, &target)?;
    if commit == ours.id() {
        return Ok(None);
    }
    fail_point("merge");
    let final_tree = repo.find_commit(commit)?.tree()?;
    let old_tree = ours.tree()?;
    let pulled = changes(repo, Some(&old_tree), &final_tree)?;
    let remaps = remaps(repo, &pulled, &old_tree, &final_tree)?;
    refuse_edited(home, &pulled, &old_tree)?;
    index::apply(home.options.db.as_deref(), &remaps)?;
    import_people(home, &pulled, &final_tree)?;
    // The files first, then the branch (see the module doc).
    write_pulled(home, &pulled, &final_tree)?;
    let head_ref = repo.head()?.name().unwrap_or("refs/heads/main").to_owned();
    repo.reference_matching(
        &head_ref,
        commit,
        true,
        ours.id(),
        &format!("elroy sync: merge from {host}"),
    )?;
    let paths: Vec<String> = pulled.iter().map(|c| c.path.clone()).collect();
    elroy_history::refresh_index(home.root, &paths)?;
    Ok(Some(Integrated {
        pulled,
        merged: target.merged,
        renumbered,
        from: target.from,
    }))
}

/// Ids unique again: the target with a `sync: renumber` commit over it when memories of the user
/// homes changed on either side since the merge base share an id (a new memory of this machine
/// can collide with one of the other's as well as the other way round), and the memories renumbered.
fn renumber(
    home: &Home<'_>,
    ours: &Commit<'_>,
    target: &Target<'_>,
) -> Result<(Oid, Vec<Renumbered>), SyncError> {
    let repo = home.repo;
    let target_tree = repo.find_commit(target.commit)?.tree()?;
    let mut touched = changes(repo, Some(&target.base_tree), &ours.tree()?)?;
    touched.extend(changes(repo, Some(&target.base_tree), &target_tree)?);
    let prefixes: BTreeSet<String> = touched
        .iter()
        .filter_map(|c| identity::memory_prefix(&c.path))
        .collect();
    let mut renumbered = Vec::new();
    let mut update = git2::build::TreeUpdateBuilder::new();
    for prefix in &prefixes {
        let files = identity::memory_files(repo, &target_tree, prefix)?;
        let base = identity::memory_files(repo, &target.base_tree, prefix)?;
        let db = home.options.db.as_deref();
        let local_max = index::max_memory_id(db, &index::token_of(prefix))?;
        for (change, bytes) in identity::plan(&files, &base, &target.fresh, local_max) {
            let blob = repo.blob(&bytes)?;
            update.upsert(change.path.as_str(), blob, git2::FileMode::Blob);
            renumbered.push(change);
        }
    }
    if renumbered.is_empty() {
        return Ok((target.commit, renumbered));
    }
    let tree = update.create_updated(repo, &target_tree)?;
    let tree = repo.find_tree(tree)?;
    let mut message = "sync: renumber\n\n".to_owned();
    for r in &renumbered {
        match r.old {
            Some(old) => message.push_str(&format!("{}: id {old} -> {}\n", r.path, r.new)),
            None => message.push_str(&format!("{}: id {}\n", r.path, r.new)),
        }
    }
    let parent = repo.find_commit(target.commit)?;
    let sig = machine_signature(home.options.now)?;
    let commit = repo.commit(None, &sig, &sig, &message, &tree, &[&parent])?;
    Ok((commit, renumbered))
}

/// The `state.db` changes for memories whose id changed at the same path.
fn remaps(
    repo: &Repository,
    pulled: &[FileChange],
    old_tree: &Tree<'_>,
    final_tree: &Tree<'_>,
) -> Result<Vec<Remap>, SyncError> {
    let mut remaps = Vec::new();
    for change in pulled {
        let Some(prefix) = identity::memory_prefix(&change.path) else {
            continue;
        };
        let (Some(old), Some(new)) = (
            blob_bytes(repo, old_tree, &change.path)?,
            blob_bytes(repo, final_tree, &change.path)?,
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
    Ok(remaps)
}

/// [`SyncError::EditedDuringSync`] when a file the pull changes was edited by hand since the last
/// commit (a moment ago): it is never overwritten.
fn refuse_edited(
    home: &Home<'_>,
    pulled: &[FileChange],
    old_tree: &Tree<'_>,
) -> Result<(), SyncError> {
    for change in pulled {
        let on_disk = match std::fs::read(home.root.join(&change.path)) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(SyncError::Write {
                    path: change.path.clone(),
                    message: e.to_string(),
                });
            }
        };
        if on_disk != blob_bytes(home.repo, old_tree, &change.path)? {
            return Err(SyncError::EditedDuringSync {
                path: change.path.clone(),
            });
        }
    }
    Ok(())
}

/// The users' names the pull brings ([`crate::people`]) into this machine's `state.db`.
fn import_people(
    home: &Home<'_>,
    pulled: &[FileChange],
    final_tree: &Tree<'_>,
) -> Result<(), SyncError> {
    for change in pulled {
        if let Some(token) = crate::people::token_of(&change.path)
            && let Some(bytes) = blob_bytes(home.repo, final_tree, &change.path)?
        {
            crate::people::import(
                home.options.db.as_deref(),
                &token,
                &crate::people::parse(&bytes),
                home.options.now,
            )?;
        }
    }
    Ok(())
}

/// Writes (or removes) each pulled file in the home as `final_tree` has it, atomically.
fn write_pulled(
    home: &Home<'_>,
    pulled: &[FileChange],
    final_tree: &Tree<'_>,
) -> Result<(), SyncError> {
    let half = pulled.len() / 2;
    for (n, change) in pulled.iter().enumerate() {
        if n == half {
            fail_point("index");
        }
        match blob_bytes(home.repo, final_tree, &change.path)? {
            Some(bytes) => write_file(home.root, &change.path, &bytes)?,
            None => {
                let file = home.root.join(&change.path);
                if file.exists() {
                    elroy_markdown::remove_file(&file, &change.path)?;
                }
            }
        }
    }
    if pulled.is_empty() {
        fail_point("index");
    }
    Ok(())
}
