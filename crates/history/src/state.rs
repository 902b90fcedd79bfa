//! Whether git has finished what it was doing in the home ([`Unfinished`]): the one check every
//! path that commits calls before it commits ([`check`], [`check_markers`]: tool calls, start-up's
//! `external edit`, the journal, undo, `elroy sync`), and what `elroy doctor` lists
//! ([`unfinished`], [`marker_files`]).
//!
//! The home is an ordinary git repository that people also use with `git`: a conflicted `git
//! pull` leaves `.git/MERGE_HEAD`, an index with unmerged entries and files with conflict
//! markers; `git checkout --detach` leaves HEAD on no branch. Committing over either would put
//! marker lines into the history (and, through `elroy sync`, into every machine), or commit on no
//! branch. Nothing here changes the repository. Uses only `paths` (below it); `error` wraps
//! [`Unfinished`] into `HistoryError::Unfinished`.

use std::path::Path;

use git2::{Repository, RepositoryState};

use crate::paths::is_store_path;

/// Something git has not finished in the home; elroy commits nothing while it lasts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfinished {
    /// A merge is in progress (`.git/MERGE_HEAD`: a `git merge` or `git pull` that stopped).
    Merge,
    /// A rebase is in progress (`git rebase`, `git pull --rebase`).
    Rebase,
    /// A cherry-pick is in progress.
    CherryPick,
    /// A revert is in progress.
    Revert,
    /// `git am` is applying patches.
    ApplyMailbox,
    /// A bisect is in progress.
    Bisect,
    /// The index holds unmerged entries (conflict stages) for these paths, sorted (e.g. after a
    /// conflicted `git stash pop`).
    Unmerged {
        /// The paths with conflict stages, relative to the home.
        paths: Vec<String>,
    },
    /// HEAD is on no branch (`git checkout --detach`, `git checkout COMMIT`).
    Detached {
        /// The branch to go back to (`main` unless the home has another).
        branch: String,
    },
    /// A store file holds conflict markers (`<<<<<<<` … `>>>>>>>` lines).
    Markers {
        /// The file, relative to the home.
        path: String,
    },
}

impl Unfinished {
    /// What is unfinished, e.g. `a git merge is in progress in the home`.
    pub fn state(&self) -> String {
        match self {
            Unfinished::Merge => "a git merge is in progress in the home".into(),
            Unfinished::Rebase => "a git rebase is in progress in the home".into(),
            Unfinished::CherryPick => "a git cherry-pick is in progress in the home".into(),
            Unfinished::Revert => "a git revert is in progress in the home".into(),
            Unfinished::ApplyMailbox => "git am is applying patches in the home".into(),
            Unfinished::Bisect => "a git bisect is in progress in the home".into(),
            Unfinished::Unmerged { paths } => {
                format!("the home's git index has unmerged files ({})", shown(paths))
            }
            Unfinished::Detached { .. } => "the home's HEAD is detached (on no branch)".into(),
            Unfinished::Markers { path } => {
                format!("{path} holds git conflict markers (<<<<<<< … >>>>>>> lines)")
            }
        }
    }

    /// The command (or edit) that ends it, e.g. ``finish it with `git commit`, or run `git merge
    /// --abort` ``.
    pub fn remedy(&self) -> String {
        match self {
            Unfinished::Merge => {
                "resolve the files and `git commit`, or run `git merge --abort`".into()
            }
            Unfinished::Rebase => {
                "resolve the files and `git rebase --continue`, or run `git rebase --abort`".into()
            }
            Unfinished::CherryPick => {
                "resolve the files and `git cherry-pick --continue`, or run `git cherry-pick --abort`"
                    .into()
            }
            Unfinished::Revert => {
                "resolve the files and `git revert --continue`, or run `git revert --abort`".into()
            }
            Unfinished::ApplyMailbox => "run `git am --continue` or `git am --abort`".into(),
            Unfinished::Bisect => "run `git bisect reset`".into(),
            Unfinished::Unmerged { .. } => {
                "resolve them and `git add` them, or run `git reset --merge`".into()
            }
            Unfinished::Detached { branch } => format!("run `git switch {branch}`"),
            Unfinished::Markers { .. } => {
                "edit it to keep the text you want and delete the marker lines".into()
            }
        }
    }
}

impl std::fmt::Display for Unfinished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.state(), self.remedy())
    }
}

fn shown(paths: &[String]) -> String {
    let mut text = paths.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > 3 {
        text.push_str(&format!(" and {} more", paths.len() - 3));
    }
    text
}

/// The repository-level states of [`Unfinished`] that hold in `repo` now (every one, for `elroy
/// doctor`; no [`Unfinished::Markers`]: see [`marker_files`]). Reads `.git/index` whole.
///
/// # Errors
/// libgit2's error when the repository or its index cannot be read.
pub fn unfinished(root: &Path) -> Result<Vec<Unfinished>, git2::Error> {
    let repo = Repository::open(root)?;
    let mut found = Vec::new();
    if let Some(state) = operation(&repo) {
        found.push(state);
    }
    if let Some(state) = unmerged(&repo)? {
        found.push(state);
    }
    if let Some(state) = detached(&repo)? {
        found.push(state);
    }
    Ok(found)
}

/// The first repository-level [`Unfinished`] state of `repo`, for a path about to commit: an
/// operation in progress, HEAD detached, then unmerged index entries (the index is read only when
/// something other than elroy wrote it since elroy last did, `index_written_by_elroy` false:
/// elroy never writes conflict stages).
///
/// # Errors
/// libgit2's error when the repository cannot be read.
pub(crate) fn check(
    repo: &Repository,
    index_written_by_elroy: bool,
) -> Result<Option<Unfinished>, git2::Error> {
    if let Some(state) = operation(repo) {
        return Ok(Some(state));
    }
    if let Some(state) = detached(repo)? {
        return Ok(Some(state));
    }
    if !index_written_by_elroy {
        return unmerged(repo);
    }
    Ok(None)
}

/// [`Unfinished::Markers`] when `bytes`, the content about to be committed at the store path
/// `path`, holds conflict markers ([`has_markers`]).
pub(crate) fn check_markers(path: &str, bytes: &[u8]) -> Option<Unfinished> {
    (is_store_path(path) && has_markers(bytes)).then(|| Unfinished::Markers {
        path: path.to_owned(),
    })
}

/// Whether `bytes` hold git conflict markers: a line starting `<<<<<<<` followed, later, by a line
/// starting `>>>>>>>` (what `git merge`, `git rebase` and `git stash pop` write; a `=======` line
/// alone is a Markdown heading underline, not a marker).
pub fn has_markers(bytes: &[u8]) -> bool {
    let mut opened = false;
    for line in bytes.split(|&b| b == b'\n') {
        let marker = |m: &[u8]| {
            line.starts_with(m) && matches!(line.get(7), None | Some(b' ' | b'\r' | b'\t'))
        };
        if marker(b"<<<<<<<") {
            opened = true;
        } else if opened && marker(b">>>>>>>") {
            return true;
        }
    }
    false
}

/// Every store file of the home at `root` (relative, `/`-separated, sorted) that holds conflict
/// markers ([`has_markers`]); reads every store file (for `elroy doctor`). Unreadable files and
/// directories are skipped.
pub fn marker_files(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![String::new()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let rel = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                if !name.starts_with('.') && !matches!(rel.as_str(), "logs" | "cache") {
                    dirs.push(rel);
                }
            } else if is_store_path(&rel)
                && std::fs::read(entry.path()).is_ok_and(|bytes| has_markers(&bytes))
            {
                found.push(rel);
            }
        }
    }
    found.sort();
    found
}

fn operation(repo: &Repository) -> Option<Unfinished> {
    match repo.state() {
        RepositoryState::Clean => None,
        RepositoryState::Merge => Some(Unfinished::Merge),
        RepositoryState::Revert | RepositoryState::RevertSequence => Some(Unfinished::Revert),
        RepositoryState::CherryPick | RepositoryState::CherryPickSequence => {
            Some(Unfinished::CherryPick)
        }
        RepositoryState::Bisect => Some(Unfinished::Bisect),
        RepositoryState::Rebase
        | RepositoryState::RebaseInteractive
        | RepositoryState::RebaseMerge => Some(Unfinished::Rebase),
        RepositoryState::ApplyMailbox | RepositoryState::ApplyMailboxOrRebase => {
            Some(Unfinished::ApplyMailbox)
        }
    }
}

fn detached(repo: &Repository) -> Result<Option<Unfinished>, git2::Error> {
    match repo.head_detached() {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        // An unborn HEAD is on a branch.
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e),
    }
    let branch = if repo.find_branch("main", git2::BranchType::Local).is_ok() {
        "main".to_owned()
    } else {
        repo.branches(Some(git2::BranchType::Local))?
            .filter_map(Result::ok)
            .find_map(|(b, _)| b.name().ok().flatten().map(str::to_owned))
            .unwrap_or_else(|| "main".to_owned())
    };
    Ok(Some(Unfinished::Detached { branch }))
}

fn unmerged(repo: &Repository) -> Result<Option<Unfinished>, git2::Error> {
    let index = repo.index()?;
    if !index.has_conflicts() {
        return Ok(None);
    }
    let mut paths: Vec<String> = index
        .conflicts()?
        .filter_map(Result::ok)
        .filter_map(|c| c.our.or(c.their).or(c.ancestor))
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .collect();
    paths.sort();
    paths.dedup();
    Ok(Some(Unfinished::Unmerged { paths }))
}

#[cfg(test)]
mod tests {
    use super::has_markers;

    #[test]
    fn markers_are_an_opening_and_a_closing_line() {
        assert!(has_markers(
            b"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> origin/main\n"
        ));
        // diff3 style, CRLF endings.
        assert!(has_markers(
            b"<<<<<<< ours\r\n||||||| base\r\n=======\r\n>>>>>>> theirs\r\n"
        ));
        // A Markdown heading underline, or an opening line alone, is not a conflict.
        assert!(!has_markers(b"Title\n=======\n\ntext\n"));
        assert!(!has_markers(b"<<<<<<< HEAD\nno end\n"));
        assert!(!has_markers(b">>>>>>> theirs\n<<<<<<< ours\n"));
        assert!(!has_markers(b"<<<<<<<<<< arrows\n>>>>>>>>>> more\n"));
    }
}
