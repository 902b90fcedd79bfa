//! Git's lock files in the home, and elroy's own record of its git writes ([`GitWrite`]).
//!
//! git (and libgit2) take a lock by creating `FILE.lock` (`.git/index.lock`, `.git/HEAD.lock`,
//! `.git/refs/heads/main.lock`, `.git/packed-refs.lock`) and remove it when done; a process killed
//! in between leaves it, and every later write of that file fails. elroy makes every git write
//! under the home lock ([`HomeLock`], an advisory `flock` the kernel releases when the process
//! dies) and, inside it, keeps `.git/elroy-git-write` (its pid and start time) for as long as the
//! write runs. So whoever takes the home lock and finds that record knows the writer before it
//! was killed mid-write: the git locks made since the record was written are that writer's, and
//! are removed at once, with a line saying so. Any other lock belongs to a `git` command (the
//! person's own, an editor's, a backup's): it is respected while fresh, and removed only once it
//! is older than [`STALE_GIT_LOCK`], with a line naming it.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use elroy_markdown::HomeLock;

use crate::error::HistoryError;

/// elroy's record of a git write under way, relative to the home.
pub(crate) const RECORD: &str = ".git/elroy-git-write";

/// How old a git lock that is not elroy's must be before elroy takes it for one left by a killed
/// `git` command: a `git` command the user runs in the home may hold a lock for as long as its
/// editor is open (`git commit`, `git add -p`, `git rebase -i`). Meanwhile a blocked tool commit
/// is retried and then journaled, so nothing is lost while a lock is held.
pub const STALE_GIT_LOCK: Duration = Duration::from_secs(15 * 60);

/// The git lock files that exist in the home's repository now, relative to the home (`.git/...`),
/// sorted: `index.lock`, `HEAD.lock`, `packed-refs.lock` and every `refs/heads/**.lock`.
pub fn git_lock_files(root: &Path) -> Vec<String> {
    let git = root.join(".git");
    let mut found = Vec::new();
    for name in ["index.lock", "HEAD.lock", "packed-refs.lock"] {
        if git.join(name).exists() {
            found.push(format!(".git/{name}"));
        }
    }
    let mut dirs = vec![git.join("refs").join("heads")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "lock")
                && let Ok(rel) = path.strip_prefix(root)
            {
                found.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

/// How long ago `path` was last modified (zero when it is in the future or unreadable).
fn age(path: &Path) -> Option<Duration> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}

/// The home lock held for a git write, with elroy's record of it (see the module doc). Taking it
/// first removes what an earlier elroy killed mid-write left, and git locks older than
/// [`STALE_GIT_LOCK`]; [`GitWrite::notes`] says what was removed. The record goes when this is
/// dropped.
pub struct GitWrite {
    _lock: HomeLock,
    record: PathBuf,
    notes: Vec<String>,
}

impl std::fmt::Debug for GitWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitWrite")
            .field("record", &self.record)
            .field("notes", &self.notes)
            .finish()
    }
}

impl GitWrite {
    /// Takes the home lock of `root` (waiting as [`HomeLock::acquire`] does), recovers the git
    /// locks a killed writer left, and writes the record. A home without a repository gets no
    /// record.
    ///
    /// # Errors
    /// [`HistoryError::Files`] when the home lock cannot be taken.
    pub fn begin(root: &Path) -> Result<GitWrite, HistoryError> {
        let lock = HomeLock::acquire(root)?;
        let notes = recover(root);
        for note in &notes {
            tracing::warn!("versioned home: {note}");
        }
        let record = root.join(RECORD);
        if root.join(".git").is_dir() {
            let text = format!(
                "{} {}\n",
                std::process::id(),
                start_time(std::process::id())
            );
            if let Err(e) = std::fs::write(&record, text) {
                tracing::debug!("versioned home: {RECORD} not written: {e}");
            }
        }
        Ok(GitWrite {
            _lock: lock,
            record,
            notes,
        })
    }

    /// What taking the lock removed, one sentence each (e.g. `removed .git/index.lock, left by
    /// elroy (pid 4242) killed while it wrote to the repository`).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

impl Drop for GitWrite {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.record);
    }
}

/// The start time of process `pid` (clock ticks since boot, `/proc/PID/stat` field 22), `0` when
/// unknown; with the pid it tells a live writer from a later process that got the same pid.
fn start_time(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // The command name (field 2) is in parentheses and may hold spaces: count after its end.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Whether the writer of `record` (`PID START`) is still running.
fn writer_alive(record: &str) -> Option<u32> {
    let mut parts = record.split_whitespace();
    let pid: u32 = parts.next()?.parse().ok()?;
    let start: u64 = parts.next()?.parse().ok()?;
    (pid != std::process::id() && start != 0 && start_time(pid) == start).then_some(pid)
}

/// Removes what a killed elroy left (its record and the git locks made since it was written) and
/// git locks older than [`STALE_GIT_LOCK`]. Call with the home lock held. Returns one note per
/// removed lock.
fn recover(root: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let record_path = root.join(RECORD);
    let mut since: Option<SystemTime> = None;
    let mut killed_pid = String::new();
    if let Ok(text) = std::fs::read_to_string(&record_path) {
        if let Some(pid) = writer_alive(&text) {
            // The home lock is ours, so this should not happen (a file system without working
            // `flock`): leave its locks alone.
            tracing::warn!("versioned home: elroy (pid {pid}) is writing to the repository");
            return notes;
        }
        since = std::fs::metadata(&record_path)
            .and_then(|m| m.modified())
            .ok()
            // A lock made in the same clock tick as the record, on a coarse clock.
            .map(|t| t - Duration::from_secs(1));
        killed_pid = text.split_whitespace().next().unwrap_or("?").to_owned();
        let _ = std::fs::remove_file(&record_path);
    }
    for lock in git_lock_files(root) {
        let path = root.join(&lock);
        let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        let elroys = matches!((since, modified), (Some(since), Some(m)) if m >= since);
        let old = age(&path).is_some_and(|age| age >= STALE_GIT_LOCK);
        if !elroys && !old {
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) if elroys => notes.push(format!(
                "removed {lock}, left by elroy (pid {killed_pid}) killed while it wrote to the \
                 repository"
            )),
            Ok(()) => notes.push(format!(
                "removed {lock}, {} minutes old: no git command holds a lock that long, so one \
                 that was killed left it",
                age(&path)
                    .or(modified.and_then(|m| SystemTime::now().duration_since(m).ok()))
                    .map_or(STALE_GIT_LOCK.as_secs() / 60, |a| a.as_secs() / 60)
            )),
            Err(e) => tracing::warn!("versioned home: cannot remove {lock}: {e}"),
        }
    }
    notes
}

/// Waits until no git lock file is taken in the home (a `git` command is running), for at most
/// `timeout`, checking every 100 ms. Call without the home lock held.
///
/// # Errors
/// [`HistoryError::GitBusy`] naming the first lock still taken after `timeout`.
pub fn wait_for_git(root: &Path, timeout: Duration) -> Result<(), HistoryError> {
    let started = std::time::Instant::now();
    loop {
        let taken = git_lock_files(root);
        let Some(lock) = taken.into_iter().next() else {
            return Ok(());
        };
        if started.elapsed() >= timeout {
            let age = age(&root.join(&lock)).map_or(0, |a| a.as_secs());
            return Err(HistoryError::GitBusy { lock, age });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_killed_writers_locks_go_at_once_and_a_fresh_foreign_one_stays() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git/refs/heads")).unwrap();
        // A git command of the person's, running since before elroy's write began.
        std::fs::write(root.join(".git/HEAD.lock"), "").unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(root.join(".git/HEAD.lock"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        // A writer that died (pid 0 never runs elroy) left its record and two locks.
        std::fs::write(root.join(RECORD), "0 1\n").unwrap();
        std::fs::write(root.join(".git/index.lock"), "").unwrap();
        std::fs::write(root.join(".git/refs/heads/main.lock"), "").unwrap();
        let write = GitWrite::begin(root).unwrap();
        assert_eq!(write.notes().len(), 2, "{:?}", write.notes());
        assert!(write.notes()[0].contains(".git/index.lock"));
        assert!(write.notes()[1].contains(".git/refs/heads/main.lock"));
        assert_eq!(git_lock_files(root), [".git/HEAD.lock"]);
        assert!(root.join(RECORD).exists());
        drop(write);
        assert!(!root.join(RECORD).exists());
        let err = wait_for_git(root, Duration::from_millis(200)).unwrap_err();
        assert!(err.to_string().contains(".git/HEAD.lock"), "{err}");
    }
}
