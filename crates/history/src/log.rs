//! [`VersionedHome::history`]: the changes, newest first. Uses `home`, `reader`, `machine` and
//! `error` (below it).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use git2::{Commit, ObjectType, Oid, Repository, Tree};
use jiff::Timestamp;

use crate::error::HistoryError;
use crate::home::VersionedHome;
use crate::reader::{changed_paths, head_born};

/// Characters of a short commit id.
pub(crate) const SHORT_ID: usize = 7;

/// One commit of the versioned home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The full commit id (40 hex digits).
    pub id: String,
    /// Its first seven hex digits.
    pub short_id: String,
    /// When elroy made it (the clock of that session: `ELROY_NOW` fixes it).
    pub time: Timestamp,
    /// The first line of the message, e.g. `add_agenda_item: agenda/Water_the_plants.md`.
    pub summary: String,
    /// The whole message.
    pub message: String,
    /// Files the commit changed, relative to the home, sorted (empty from
    /// [`VersionedHome::walk_summaries`], which does not read them).
    pub paths: Vec<String>,
    /// The machine the change was made on when it is another machine's (a change `elroy sync`
    /// pulled); `None` for this machine's changes and for commits of no recorded machine.
    pub machine: Option<String>,
}

impl Change {
    pub(crate) fn of(repo: &Repository, commit: &Commit<'_>) -> Result<Self, HistoryError> {
        let parent_tree = match commit.parents().next() {
            Some(parent) => Some(parent.tree()?),
            None => None,
        };
        let paths = changed_paths(repo, parent_tree.as_ref(), &commit.tree()?)?;
        Ok(Change {
            paths,
            ..Change::summary_of(commit)
        })
    }

    /// The change without its files (`paths` empty): no tree is read.
    fn summary_of(commit: &Commit<'_>) -> Self {
        let id = commit.id().to_string();
        let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
        Change {
            short_id: id[..SHORT_ID.min(id.len())].to_owned(),
            id,
            time: Timestamp::from_second(commit.time().seconds()).unwrap_or(Timestamp::UNIX_EPOCH),
            summary: message.lines().next().unwrap_or_default().to_owned(),
            message,
            paths: Vec::new(),
            machine: crate::machine::commit_machine(commit)
                .filter(|m| *m != crate::machine::machine_name()),
        }
    }
}

/// Whether `path` is `filter` or inside it (both relative, `/`-separated).
fn matches(path: &str, filter: &str) -> bool {
    filter.is_empty()
        || path == filter
        || path
            .strip_prefix(filter)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl VersionedHome {
    /// The commits of the home, newest first; with `path` (relative to the home, a file or a
    /// directory) only those that changed it.
    ///
    /// # Errors
    /// [`HistoryError::Git`] when the repository cannot be read.
    pub fn history(&self, path: Option<&str>) -> Result<Vec<Change>, HistoryError> {
        let mut changes = Vec::new();
        self.walk_history(path, &mut |change| {
            changes.push(change);
            true
        })?;
        Ok(changes)
    }

    /// As [`VersionedHome::history`], one change at a time: `each` gets the changes newest first
    /// and returns whether to go on, so a reader that wants the newest few (`elroy history |
    /// head`) costs those few, not the whole history (each change is a tree diff).
    ///
    /// # Errors
    /// [`HistoryError::Git`] when the repository cannot be read.
    pub fn walk_history(
        &self,
        path: Option<&str>,
        each: &mut dyn FnMut(Change) -> bool,
    ) -> Result<(), HistoryError> {
        let repo = self.repo()?;
        if !head_born(&repo)? {
            return Ok(());
        }
        let filter = path.map(|p| p.trim_end_matches('/').trim_start_matches("./"));
        for id in history_walk(&repo)? {
            let commit = repo.find_commit(id?)?;
            if commit.parent_count() > 1 && !merge_changed_ours(&repo, &commit)? {
                // A sync merge that only brought the other machine's commits in: those are
                // listed themselves, with their machine.
                continue;
            }
            let change = Change::of(&repo, &commit)?;
            if filter.is_none_or(|f| change.paths.iter().any(|p| matches(p, f))) && !each(change) {
                break;
            }
        }
        Ok(())
    }

    /// The changes as [`VersionedHome::walk_history`] lists them, without their files: each
    /// [`Change::paths`] is empty. It reads no tree without `path` (a commit's files are a diff of
    /// two trees: at 100,000 memories each `create_memory` commit has two 5.5 MB trees to read),
    /// and with `path` only the entry at `path` of each commit's tree (a commit changed `path`,
    /// a file or a directory, when that entry's id or mode differs from its parent's). `elroy
    /// history`.
    ///
    /// # Errors
    /// [`HistoryError::Git`] when the repository cannot be read.
    pub fn walk_summaries(
        &self,
        path: Option<&str>,
        each: &mut dyn FnMut(Change) -> bool,
    ) -> Result<(), HistoryError> {
        let repo = self.repo()?;
        if !head_born(&repo)? {
            return Ok(());
        }
        let filter = path
            .map(|p| p.trim_end_matches('/').trim_start_matches("./"))
            .filter(|p| !p.is_empty());
        // The trees read for the last commit, by id: its parent's are the next commit's own.
        let mut known: HashMap<Oid, Tree<'_>> = HashMap::new();
        for id in history_walk(&repo)? {
            let commit = repo.find_commit(id?)?;
            if commit.parent_count() > 1 && !merge_changed_ours(&repo, &commit)? {
                // As in `walk_history`: the pulled commits are listed themselves.
                continue;
            }
            if let Some(filter) = filter {
                let parent = match commit.parents().next() {
                    Some(parent) => Some(parent.tree()?),
                    None => None,
                };
                let mut read = HashMap::new();
                let changed =
                    path_changed(&repo, &mut known, &mut read, filter, commit.tree()?, parent)?;
                known = read;
                if !changed {
                    continue;
                }
            }
            if !each(Change::summary_of(&commit)) {
                break;
            }
        }
        Ok(())
    }
}

impl VersionedHome {
    /// Whether the history can be read (`elroy doctor`), in time that grows with the number of
    /// commits, not with what they changed: every commit object reachable from HEAD (other
    /// machines' included), and every tree of HEAD (no blob, no diff: reading the changes of 10,000 commits
    /// against a 110,000-file tree takes minutes). Each object read is checked against its id
    /// (turned on here for the rest of the process: `doctor` reads nothing else from git).
    ///
    /// # Errors
    /// [`HistoryError::Git`] naming the first object that cannot be read.
    pub fn check_readable(&self) -> Result<(), HistoryError> {
        let repo = self.repo()?;
        git2::opts::strict_hash_verification(true);
        if !head_born(&repo)? {
            return Ok(());
        }
        for id in history_walk(&repo)? {
            let commit = repo.find_commit(id?)?;
            let _ = commit.tree_id();
        }
        // The walk reads every tree of HEAD (it fails on one that cannot be read).
        let head = repo.head()?.peel_to_tree()?;
        head.walk(git2::TreeWalkMode::PreOrder, |_, _| {
            git2::TreeWalkResult::Ok
        })?;
        Ok(())
    }
}

/// Whether the entry at `path` (a file or a directory) differs between `tree` and `parent` (the
/// empty tree when `None`): id or mode. Reads the trees on the way in step and stops at the first
/// directory both have with the same id, so a commit that did not touch `path`'s directory costs
/// no tree read beyond the roots. Trees are taken from `known` (read for the commit before) and
/// every tree read or taken goes into `read`.
fn path_changed<'r>(
    repo: &'r Repository,
    known: &mut HashMap<Oid, Tree<'r>>,
    read: &mut HashMap<Oid, Tree<'r>>,
    path: &str,
    tree: Tree<'r>,
    parent: Option<Tree<'r>>,
) -> Result<bool, HistoryError> {
    let mut lookup = |id: Oid| -> Result<Tree<'r>, HistoryError> {
        let tree = match known.remove(&id).or_else(|| read.get(&id).cloned()) {
            Some(tree) => tree,
            None => repo.find_tree(id)?,
        };
        read.insert(id, tree.clone());
        Ok(tree)
    };
    let mut mine = Some(tree);
    let mut theirs = parent;
    let mut parts = path.split('/').peekable();
    while let Some(part) = parts.next() {
        let entry = |tree: &Option<Tree<'r>>| {
            tree.as_ref()
                .and_then(|t| t.get_name(part).map(|e| (e.id(), e.filemode(), e.kind())))
        };
        let (a, b) = (entry(&mine), entry(&theirs));
        if a.map(|(id, mode, _)| (id, mode)) == b.map(|(id, mode, _)| (id, mode)) {
            return Ok(false);
        }
        if parts.peek().is_none() {
            return Ok(true);
        }
        let subtree = |e: Option<(Oid, i32, Option<ObjectType>)>| match e {
            Some((id, _, Some(ObjectType::Tree))) => Some(id),
            _ => None,
        };
        mine = subtree(a).map(&mut lookup).transpose()?;
        theirs = subtree(b).map(&mut lookup).transpose()?;
        if mine.is_none() && theirs.is_none() {
            return Ok(false);
        }
    }
    Ok(false)
}

/// Every commit reachable from HEAD, newest first: after `elroy sync` merged another machine's
/// changes, those are listed too, not only this machine's line.
///
/// Lazy (one commit read per id, so `elroy history | head` reads a few of 10,000 commits):
/// libgit2's topological sort reads the whole graph before the first id, and its time sort
/// orders commits of the same second arbitrarily, a parent before its child included. This walk
/// takes the newest commit time first and, among equal times, the commit queued first (as `git
/// log`'s date order), so a line of commits made within one second stays child before parent.
pub(crate) fn history_walk(repo: &Repository) -> Result<HistoryWalk<'_>, HistoryError> {
    let head = repo.head()?.peel_to_commit()?;
    let mut walk = HistoryWalk {
        repo,
        queue: BinaryHeap::new(),
        seen: HashSet::new(),
        queued: 0,
    };
    walk.seen.insert(head.id());
    walk.push(head.id(), head.time().seconds());
    Ok(walk)
}

/// The iterator of [`history_walk`].
pub(crate) struct HistoryWalk<'r> {
    repo: &'r Repository,
    /// (commit time, queue order reversed, id): the heap pops the newest, then the first queued.
    queue: BinaryHeap<(i64, Reverse<u64>, Oid)>,
    seen: HashSet<Oid>,
    queued: u64,
}

impl HistoryWalk<'_> {
    fn push(&mut self, id: Oid, time: i64) {
        self.queue.push((time, Reverse(self.queued), id));
        self.queued += 1;
    }
}

impl Iterator for HistoryWalk<'_> {
    type Item = Result<Oid, git2::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let (_, _, id) = self.queue.pop()?;
        let commit = match self.repo.find_commit(id) {
            Ok(commit) => commit,
            Err(e) => return Some(Err(e)),
        };
        for parent in commit.parents() {
            if self.seen.insert(parent.id()) {
                self.push(parent.id(), parent.time().seconds());
            }
        }
        Some(Ok(id))
    }
}

/// Whether the merge `commit` made a change of its own: its tree differs from each parent's
/// tree on some path in a way neither parent had (a merged file, a sibling, a renamed memory).
fn merge_changed_ours(repo: &Repository, commit: &Commit<'_>) -> Result<bool, HistoryError> {
    let tree = commit.tree()?;
    let mut per_parent = Vec::new();
    for parent in commit.parents() {
        per_parent.push(changed_paths(repo, Some(&parent.tree()?), &tree)?);
    }
    // A path changed relative to every parent came from neither side as it is.
    let Some((first, rest)) = per_parent.split_first() else {
        return Ok(false);
    };
    Ok(first
        .iter()
        .any(|p| rest.iter().all(|other| other.contains(p))))
}

#[cfg(test)]
mod tests {
    #[test]
    fn path_filter() {
        assert!(super::matches("agenda/a.md", "agenda"));
        assert!(super::matches("agenda/a.md", "agenda/a.md"));
        assert!(!super::matches("agenda2/a.md", "agenda"));
        assert!(!super::matches("agenda/a.md.bak", "agenda/a.md"));
    }
}
