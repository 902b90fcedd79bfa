//! [`VersionedHome::history`]: the changes, newest first.

use git2::{Commit, Oid, Repository, Sort};
use jiff::Timestamp;

use crate::home::{changed_paths, head_born};
use crate::{HistoryError, VersionedHome};

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
    /// Files the commit changed, relative to the home, sorted.
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
        let id = commit.id().to_string();
        let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
        Ok(Change {
            short_id: id[..SHORT_ID.min(id.len())].to_owned(),
            id,
            time: Timestamp::from_second(commit.time().seconds()).unwrap_or(Timestamp::UNIX_EPOCH),
            summary: message.lines().next().unwrap_or_default().to_owned(),
            message,
            paths,
            machine: crate::machine::commit_machine(commit)
                .filter(|m| *m != crate::machine::machine_name()),
        })
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
}

/// Every commit reachable from HEAD, newest first (children before parents): after `elroy sync`
/// merged another machine's changes, those are listed too, not only this machine's line.
pub(crate) fn history_walk(
    repo: &Repository,
) -> Result<impl Iterator<Item = Result<Oid, git2::Error>> + '_, HistoryError> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
    walk.push_head()?;
    Ok(walk)
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
