//! [`VersionedHome`]: the repository in `$ELROY_HOME` and committing what changed outside elroy
//! (`initial import`, `external edit`), the calls lock, the commit messages. Uses `pending`,
//! `tree`, `walk`, `locks`, `reader`, `paths` and `error` (below it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use git2::{ErrorCode, Oid, Repository, RepositoryInitOptions};
use jiff::Timestamp;

use crate::error::HistoryError;
use crate::locks::GitWrite;
use crate::paths::GITIGNORE;
use crate::pending::{commit_pending, has_pending, retrying};
use crate::reader::{TreeReader, hash, head_born, read_work_tree};
use crate::tree::{CommitIf, commit_files, store_candidates, sync_index};
use crate::walk::{self, Stamp};

/// The message of the first commit of a home's repository (the stores as they were found).
pub const INITIAL_IMPORT: &str = "initial import";
/// The summary of a commit of changes made outside elroy, found when elroy starts; the files
/// follow in the message body, one a line.
pub const EXTERNAL_EDIT: &str = "external edit";

/// How many paths a tool commit's summary names before `and N more`.
const PATHS_IN_SUMMARY: usize = 3;

/// The versioned home: a git repository whose work tree is `$ELROY_HOME`.
#[derive(Debug, Clone)]
pub struct VersionedHome {
    root: PathBuf,
}

impl VersionedHome {
    /// The repository of the home `elroy_home`, which must exist (`elroy history`, `elroy undo`).
    ///
    /// # Errors
    /// [`HistoryError::NoRepository`] when the home has none.
    pub fn open(elroy_home: &Path) -> Result<Self, HistoryError> {
        if !elroy_home.join(".git").exists() {
            return Err(HistoryError::NoRepository);
        }
        Ok(VersionedHome {
            root: elroy_home.to_path_buf(),
        })
    }

    /// Opens the repository of `elroy_home` as a session start does, creating it when missing:
    /// a new repository (or one without commits) gets an [`INITIAL_IMPORT`] commit of the stores as
    /// they are; otherwise changes elroy saved but could not commit earlier (the journal, see
    /// [`HistoryError::NotRecorded`]) are committed under their own names, then changes made since
    /// the last commit are committed as [`EXTERNAL_EDIT`]. Runs under the home lock. Cheap when
    /// nothing changed: a stat per store file, no file read (see
    /// [`VersionedHome::commit_outside_edits`]).
    ///
    /// # Errors
    /// [`HistoryError`] when the repository cannot be created or the commit fails (a git lock held
    /// past the retry window is not an error: the edits are committed at a later start).
    pub fn start(elroy_home: &Path, now: Timestamp) -> Result<Self, HistoryError> {
        let home = VersionedHome::resume(elroy_home, now)?;
        home.commit_outside_edits(now)?;
        Ok(home)
    }

    /// What a tool call needs before it runs, in time independent of the home's size: the
    /// repository (created, with its [`INITIAL_IMPORT`], when missing or without commits) and the
    /// journaled changes of earlier runs committed under their own names. Outside edits are left
    /// for [`VersionedHome::commit_outside_edits`] (a session start, `elroy history`, `elroy
    /// undo`): a call commits only the paths it writes, and a hand edit of one of those is
    /// committed first as [`EXTERNAL_EDIT`] by the recorder, so no hand edit is ever committed
    /// under a tool's name (a home of 110,000 files costs one stat per file to walk).
    ///
    /// # Errors
    /// [`HistoryError`] when the repository cannot be created or opened.
    pub fn resume(elroy_home: &Path, now: Timestamp) -> Result<Self, HistoryError> {
        let home = VersionedHome {
            root: elroy_home.to_path_buf(),
        };
        let _lock = GitWrite::begin(elroy_home)?;
        if !elroy_home.join(".git").exists() {
            init(elroy_home)?;
        }
        let repo = home.repo()?;
        if head_born(&repo)? {
            // Changes saved but not committed earlier (a git lock was held) get their own commits
            // first, so they are never taken for outside edits.
            if let Err(e) = commit_pending(&repo, elroy_home) {
                tracing::warn!("versioned home: journaled changes not committed yet: {e}");
            }
            return Ok(home);
        }
        drop(_lock);
        // A new repository: the stores as they are become its first commit.
        home.commit_outside_edits(now)?;
        Ok(home)
    }

    /// Commits what changed in the stores since the last commit as [`EXTERNAL_EDIT`] (or
    /// [`INITIAL_IMPORT`] in a repository without commits), under the home lock. One walk of the
    /// store paths: a stat per store file and directory, reading no file whose `ctime` predates
    /// the last walk and no git object when nothing changed (`.git/elroy-walk.json`, see
    /// `walk.rs`); when HEAD was moved by something other than elroy since, libgit2's status walk
    /// (each file's stat compared with `.git/index`, HEAD's whole tree read). Either way only
    /// files that may have changed are read. `.git/index` entries a tool's commit left stale are
    /// refreshed. Left for later (not an error) while another process's tool call is under way
    /// or a git lock is held past the retry window. Returns whether a commit was made.
    ///
    /// # Errors
    /// [`HistoryError`] when the lock, the index or the commit fails.
    pub fn commit_outside_edits(&self, now: Timestamp) -> Result<bool, HistoryError> {
        let elroy_home = self.root.as_path();
        let _lock = GitWrite::begin(elroy_home)?;
        let repo = self.repo()?;
        if !head_born(&repo)? {
            let candidates = store_candidates(&repo)?;
            return Ok(self.commit_edits(&repo, candidates, now)? == Some(true));
        }
        // Nothing is committed (nor `.git/index` touched) while git has not finished something.
        crate::tree::check_state(&repo, elroy_home)?;
        if has_pending(elroy_home) {
            // Journaled changes first: they are their tools', not outside edits.
            if let Err(e) = commit_pending(&repo, elroy_home) {
                if let HistoryError::Unfinished(_) = e {
                    return Err(e);
                }
                tracing::warn!("versioned home: journaled changes not committed yet: {e}");
                return Ok(false);
            }
        }
        let since = walk::fs_now(elroy_home)?;
        let head = repo.head()?.peel_to_commit()?;
        let stamp = Stamp::read(elroy_home).filter(|s| {
            s.head == head.id() && s.since <= since && s.index == walk::index_state(elroy_home)
        });
        let head_tree = head.tree()?;
        let (candidates, dirs, stale) = match &stamp {
            Some(stamp) => {
                let found = walk::walk(&repo, elroy_home, &head_tree, Some(stamp))?;
                let candidates: Vec<String> = found.candidates.into_iter().collect();
                (candidates, found.dirs, stamp.stale_index.clone())
            }
            None => {
                // Directory states before libgit2's walk, so a change made during it is seen
                // by the next walk.
                let found = walk::walk(&repo, elroy_home, &head_tree, None)?;
                (store_candidates(&repo)?, found.dirs, BTreeSet::new())
            }
        };
        drop(head_tree);
        let fresh = |head: Oid| Stamp {
            head,
            since,
            dirs: dirs.clone(),
            stale_index: BTreeSet::new(),
            index: walk::index_state(elroy_home),
        };
        if candidates.is_empty() {
            if !stale.is_empty() {
                let stale: Vec<String> = stale.into_iter().collect();
                sync_index(&repo, elroy_home, &stale);
            }
            fresh(head.id()).write(elroy_home);
            return Ok(false);
        }
        // A tool call of another elroy process may have written a file and not committed it
        // yet (it holds the calls lock shared until it has): those changes are its to commit,
        // so the outside edits wait for a time when no call is under way.
        let calls = CallsLock::open(elroy_home)?;
        if !calls.try_exclusive() {
            tracing::debug!(
                "versioned home: a tool call is under way; outside edits left for later"
            );
            return Ok(false);
        }
        // Stale index entries are refreshed with the candidates (they are as HEAD has them).
        let candidates: Vec<String> = candidates
            .into_iter()
            .chain(stale)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let made = self.commit_edits(&repo, candidates, now)?;
        if made.is_some() {
            // Only when every candidate is as HEAD has it: edits left in the work tree must be
            // seen by the next walk.
            let head = repo.head()?.peel_to_commit()?.id();
            fresh(head).write(elroy_home);
        }
        Ok(made == Some(true))
    }

    /// [`VersionedHome::commit_work_tree`] of `candidates` as an outside edit: whether a commit
    /// was made, or `None` when a git lock was held past the retry window (not an error: the
    /// edits stay in the work tree and are committed later).
    fn commit_edits(
        &self,
        repo: &Repository,
        candidates: Vec<String>,
        now: Timestamp,
    ) -> Result<Option<bool>, HistoryError> {
        match self.commit_work_tree(repo, candidates, now, &external_edit_message) {
            Ok(made) => Ok(Some(made.is_some())),
            Err(HistoryError::Git(e)) if e.code() == ErrorCode::Locked => {
                tracing::warn!("versioned home: outside edits not committed yet: {e}");
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// `$ELROY_HOME`, the repository's work tree.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn repo(&self) -> Result<Repository, HistoryError> {
        // Every object elroy writes into a tree comes from its own index, so libgit2's check that
        // each entry exists (one object lookup per file of the directory, ~15 ms for 1,000 agenda
        // files) buys nothing here. Nor does re-hashing every object read to compare it with its
        // id (SHA-1 with collision detection: at 100,000 memories the `memories/` tree is 5.5 MB,
        // hashed at each read; 30% of `elroy history | head`'s time): zlib's checksum still
        // catches a damaged loose object, and `elroy doctor` reads the history with it on. The
        // options are process-wide.
        static OPTIONS: std::sync::Once = std::sync::Once::new();
        OPTIONS.call_once(|| {
            git2::opts::strict_object_creation(false);
            git2::opts::strict_hash_verification(false);
        });
        Ok(Repository::open(&self.root)?)
    }

    /// Commits every changed store file (new, modified, deleted) with the message `message_for`
    /// makes from the changed paths (sorted, relative to the home); [`INITIAL_IMPORT`] when the
    /// repository has no commit yet. Finds them with one status walk (see
    /// [`VersionedHome::start`]) under the home lock, so concurrent processes neither lose nor
    /// duplicate a change. Tool calls do not use this: they commit the paths they wrote.
    ///
    /// Returns the new commit, or `None` when nothing changed.
    ///
    /// # Errors
    /// [`HistoryError`] when the lock, the index or the commit fails.
    pub fn commit_changes(
        &self,
        now: Timestamp,
        message_for: &dyn Fn(&[String]) -> String,
    ) -> Result<Option<Oid>, HistoryError> {
        let _lock = GitWrite::begin(&self.root)?;
        let repo = self.repo()?;
        if head_born(&repo)? {
            commit_pending(&repo, &self.root)?;
        }
        let candidates = store_candidates(&repo)?;
        self.commit_work_tree(&repo, candidates, now, message_for)
    }

    /// Commits the work-tree state of those of `candidates` (store paths) that differ from HEAD as
    /// one commit `message_for(changed paths)` ([`INITIAL_IMPORT`], with `.gitignore`, when HEAD is
    /// unborn), retried for [`crate::RETRY_WINDOW`] while a git lock is taken, then brings
    /// `.git/index` up to date for every candidate. Call with the home lock held.
    pub(crate) fn commit_work_tree(
        &self,
        repo: &Repository,
        mut candidates: Vec<String>,
        now: Timestamp,
        message_for: &dyn Fn(&[String]) -> String,
    ) -> Result<Option<Oid>, HistoryError> {
        let born = head_born(repo)?;
        if !born {
            let gitignore = self.root.join(".gitignore");
            if !gitignore.exists() {
                elroy_markdown::write_atomic(&gitignore, GITIGNORE.as_bytes(), ".gitignore")?;
            }
            candidates.push(".gitignore".to_owned());
        }
        let mut head = if born {
            Some(TreeReader::new(repo, repo.head()?.peel_to_tree()?))
        } else {
            None
        };
        let mut files = Vec::new();
        for path in &candidates {
            let bytes = read_work_tree(&self.root, path)?;
            let state = hash(bytes.as_deref())?;
            let committed = match &mut head {
                Some(tree) => tree.blob(path)?,
                None => None,
            };
            if state != committed || !born {
                if let Some(bytes) = &bytes {
                    repo.blob(bytes)?;
                }
                files.push((path.clone(), state));
            }
        }
        let initial = |_: &[String]| INITIAL_IMPORT.to_owned();
        let message_for: &dyn Fn(&[String]) -> String = if born { message_for } else { &initial };
        let id = retrying(|| {
            commit_files(
                repo,
                &self.root,
                now,
                &files,
                message_for,
                CommitIf::Changed,
            )
        })?;
        sync_index(repo, &self.root, &candidates);
        Ok(id)
    }
}

/// `external edit`, then the files, one a line.
pub(crate) fn external_edit_message(paths: &[String]) -> String {
    let mut message = EXTERNAL_EDIT.to_owned();
    message.push_str("\n\n");
    message.push_str(&paths.join("\n"));
    message
}

/// `.git/elroy-calls.lock`: held shared by every tool call from just before it runs until its
/// changes are committed, and tried exclusively by [`VersionedHome::start`] before it commits outside
/// edits, so a change another process is about to commit is never taken for a hand edit.
pub(crate) struct CallsLock {
    file: std::fs::File,
}

impl CallsLock {
    pub(crate) fn open(root: &Path) -> Result<Self, HistoryError> {
        let path = root.join(".git").join("elroy-calls.lock");
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map(|file| CallsLock { file })
            .map_err(|e| HistoryError::Read {
                path: ".git/elroy-calls.lock".into(),
                message: e.to_string(),
            })
    }

    /// Holds the lock shared (waits only while a start holds it exclusively, which is brief).
    pub(crate) fn shared(self) -> Result<Self, HistoryError> {
        self.file.lock_shared().map_err(|e| HistoryError::Read {
            path: ".git/elroy-calls.lock".into(),
            message: e.to_string(),
        })?;
        Ok(self)
    }

    /// Whether no tool call holds the lock (it is then held exclusively until dropped).
    pub(crate) fn try_exclusive(&self) -> bool {
        self.file.try_lock().is_ok()
    }
}

/// The message of a tool's commit: `{tool}: {path}, {path}, {path} and N more`.
pub(crate) fn tool_message(tool: &str, paths: &[String]) -> String {
    let shown = paths.len().min(PATHS_IN_SUMMARY);
    let mut message = format!("{tool}: {}", paths[..shown].join(", "));
    if paths.len() > shown {
        message.push_str(&format!(" and {} more", paths.len() - shown));
    }
    if paths.len() > 1 {
        message.push_str("\n\n");
        message.push_str(&paths.join("\n"));
    }
    message
}

fn init(root: &Path) -> Result<(), HistoryError> {
    let mut options = RepositoryInitOptions::new();
    options.initial_head("main").no_reinit(true);
    let repo = Repository::init_opts(root, &options)?;
    // Byte-for-byte history whatever the user's global git configuration says: no line-ending or
    // filter conversion on staging.
    let mut config = repo.config()?;
    config.set_bool("core.autocrlf", false)?;
    config.set_str("core.safecrlf", "false")?;
    let info = repo.path().join("info");
    let write_err = |e: std::io::Error| HistoryError::Read {
        path: ".git/info/attributes".into(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&info).map_err(write_err)?;
    std::fs::write(info.join("attributes"), "* -text -filter -ident\n").map_err(write_err)?;
    Ok(())
}
