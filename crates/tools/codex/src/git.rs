//! git through git2 (decision D16): opening or creating the contrib repository, status snapshots,
//! signatures and commits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{ErrorCode, IndexAddOption, ObjectType, Oid, Repository, Signature, StatusOptions};
use jiff::Timestamp;

/// The author and committer when the repository configures none
/// (`docs/tools.md#create_contrib_repo` step 5).
pub const FALLBACK_NAME: &str = "Elroy Contrib";
/// The fallback e-mail.
pub const FALLBACK_EMAIL: &str = "elroy-contrib@example.local";

/// Why a git step of the Codex tools failed; the text is the tool error the caller reads.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `dir` has no repository and none could be made there.
    #[error("Unable to initialise git repository at {}: {}", .dir.display(), .source.message())]
    Init {
        /// The directory.
        dir: PathBuf,
        /// git2's error.
        source: git2::Error,
    },
    /// The configured (or fallback) name and e-mail make no valid signature.
    #[error("invalid git signature: {}", .0.message())]
    Signature(git2::Error),
    /// A commit failed.
    #[error("Unable to commit in {repo}: {}", .source.message())]
    Commit {
        /// The repository's working tree (its `.git` directory when bare).
        repo: String,
        /// git2's error.
        source: git2::Error,
    },
}

impl From<GitError> for elroy_core::ToolError {
    fn from(error: GitError) -> Self {
        elroy_core::ToolError::new(error.to_string())
    }
}

/// Opens the repository whose root is `dir`, or initialises one there. A repository that merely
/// encloses `dir` does not count. Returns the repository and whether it was created.
///
/// # Errors
/// [`GitError::Init`].
pub fn open_or_init(dir: &Path) -> Result<(Repository, bool), GitError> {
    if dir.join(".git").exists()
        && let Ok(repo) = Repository::open(dir)
    {
        return Ok((repo, false));
    }
    Repository::init(dir)
        .map(|r| (r, true))
        .map_err(|source| GitError::Init {
            dir: dir.to_path_buf(),
            source,
        })
}

/// Whether the repository has no commit yet.
pub fn is_unborn(repo: &Repository) -> bool {
    match repo.head() {
        Ok(_) => false,
        Err(e) => matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound),
    }
}

/// The signature for commits at `now`: the repository's `user.name` and `user.email` if both are
/// set, else `Elroy Contrib <elroy-contrib@example.local>`.
///
/// # Errors
/// [`GitError::Signature`].
pub fn signature(repo: &Repository, now: Timestamp) -> Result<Signature<'static>, GitError> {
    let configured = repo.config().ok().and_then(|c| {
        let name = c.get_string("user.name").ok()?;
        let email = c.get_string("user.email").ok()?;
        (!name.trim().is_empty() && !email.trim().is_empty()).then_some((name, email))
    });
    let (name, email) =
        configured.unwrap_or_else(|| (FALLBACK_NAME.to_owned(), FALLBACK_EMAIL.to_owned()));
    let time = git2::Time::new(now.as_second(), 0);
    Signature::new(&name, &email, &time).map_err(GitError::Signature)
}

fn head_parent(repo: &Repository) -> Result<Option<git2::Commit<'_>>, git2::Error> {
    if is_unborn(repo) {
        return Ok(None);
    }
    repo.head()?.peel_to_commit().map(Some)
}

/// Commits exactly the top-level `files` of the working tree (other staged changes stay staged,
/// uncommitted) with `message`; the index is updated for those files too.
///
/// # Errors
/// [`GitError::Commit`] with git2's message.
pub fn commit_files(
    repo: &Repository,
    files: &[&str],
    message: &str,
    now: Timestamp,
) -> Result<Oid, GitError> {
    let run = || -> Result<Oid, git2::Error> {
        let workdir = repo
            .workdir()
            .ok_or_else(|| git2::Error::from_str("the repository has no working tree"))?;
        let parent = head_parent(repo)?;
        let base = parent.as_ref().map(git2::Commit::tree).transpose()?;
        let mut builder = repo.treebuilder(base.as_ref())?;
        let mut index = repo.index()?;
        for file in files {
            let path = workdir.join(file);
            let blob = repo.blob_path(&path)?;
            builder.insert(file, blob, file_mode(&path))?;
            index.add_path(Path::new(file))?;
        }
        index.write()?;
        let tree = repo.find_tree(builder.write()?)?;
        let sig = signature(repo, now).map_err(|e| git2::Error::from_str(&e.to_string()))?;
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
    };
    run().map_err(|source| GitError::Commit {
        repo: repo_label(repo),
        source,
    })
}

/// Whether the working tree has any change or untracked file (ignored files aside).
pub fn has_changes(repo: &Repository) -> bool {
    let mut opts = status_options();
    repo.statuses(Some(&mut opts))
        .map(|s| !s.is_empty())
        .unwrap_or(false)
}

/// Stages everything (additions, modifications, deletions) and commits it with `message`.
///
/// # Errors
/// [`GitError::Commit`] with git2's message.
pub fn commit_all(repo: &Repository, message: &str, now: Timestamp) -> Result<Oid, GitError> {
    let run = || -> Result<Oid, git2::Error> {
        let mut index = repo.index()?;
        index.add_all(["*"], IndexAddOption::DEFAULT, None)?;
        index.update_all(["*"], None)?;
        index.write()?;
        let tree = repo.find_tree(index.write_tree()?)?;
        let parent = head_parent(repo)?;
        let sig = signature(repo, now).map_err(|e| git2::Error::from_str(&e.to_string()))?;
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
    };
    run().map_err(|source| GitError::Commit {
        repo: repo_label(repo),
        source,
    })
}

fn repo_label(repo: &Repository) -> String {
    repo.workdir()
        .unwrap_or_else(|| repo.path())
        .display()
        .to_string()
}

#[cfg(unix)]
fn file_mode(path: &Path) -> i32 {
    use std::os::unix::fs::PermissionsExt;
    let executable = std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false);
    if executable { 0o100_755 } else { 0o100_644 }
}

#[cfg(not(unix))]
fn file_mode(_path: &Path) -> i32 {
    0o100_644
}

fn status_options() -> StatusOptions {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    opts
}

/// For every path the repository status reports: its status bits and the hash of its working-tree
/// content (`deleted` when absent), keyed by repo-relative path (`docs/tool-rules.md#running-codex`
/// step 8).
pub fn snapshot(repo: &Repository) -> BTreeMap<String, (u32, String)> {
    let mut out = BTreeMap::new();
    let Some(workdir) = repo.workdir() else {
        return out;
    };
    let mut opts = status_options();
    let Ok(statuses) = repo.statuses(Some(&mut opts)) else {
        return out;
    };
    for entry in statuses.iter() {
        let Ok(path) = entry.path() else { continue };
        let full = workdir.join(path);
        let hash = if full.is_file() {
            Oid::hash_file(ObjectType::Blob, &full)
                .map_or_else(|_| "unreadable".to_owned(), |o| o.to_string())
        } else {
            "deleted".to_owned()
        };
        out.insert(path.to_owned(), (entry.status().bits(), hash));
    }
    out
}

/// Paths whose status or content differ between two snapshots, sorted.
pub fn touched(
    before: &BTreeMap<String, (u32, String)>,
    after: &BTreeMap<String, (u32, String)>,
) -> Vec<String> {
    let mut paths: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|p| before.get(*p) != after.get(*p))
        .cloned()
        .collect();
    paths.sort();
    paths.dedup();
    paths
}
