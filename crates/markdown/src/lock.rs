//! The per-home lock (`docs/formats.md#the-home-lock`, decision D12).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::Duration;

use crate::MarkdownError;

/// The lock file's name inside `$ELROY_HOME`.
pub const LOCK_FILE_NAME: &str = ".lock";

/// How long [`HomeLock::acquire`] waits before failing.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// An exclusive, advisory lock on `$ELROY_HOME/.lock` (`flock`/`LockFileEx` through
/// [`File::try_lock`] and [`File::lock`]), held until dropped.
///
/// Every read-modify-write of home files runs inside one: acquire, re-read the file from disk,
/// write atomically, release. The lock is per open file, so two threads of one process exclude
/// each other as two processes do. It is never held across an LLM call.
#[derive(Debug)]
pub struct HomeLock {
    _file: Option<File>,
}

impl HomeLock {
    /// Acquires the lock of the home `elroy_home`, creating the directory and the lock file when
    /// missing (the file is never deleted). Waits at most [`LOCK_TIMEOUT`].
    ///
    /// # Errors
    /// [`MarkdownError::LockTimeout`] (`Could not acquire the elroy home lock within 10 seconds`),
    /// or [`MarkdownError::Lock`] when the lock file cannot be opened or locked.
    pub fn acquire(elroy_home: &Path) -> Result<HomeLock, MarkdownError> {
        Self::acquire_with_timeout(elroy_home, LOCK_TIMEOUT)
    }

    /// As [`HomeLock::acquire`] with another timeout (tests).
    ///
    /// # Errors
    /// As [`HomeLock::acquire`].
    pub fn acquire_with_timeout(
        elroy_home: &Path,
        timeout: Duration,
    ) -> Result<HomeLock, MarkdownError> {
        let lock_err = |e: std::io::Error| MarkdownError::Lock {
            file: LOCK_FILE_NAME.to_owned(),
            message: e.to_string(),
            kind: e.kind(),
        };
        std::fs::create_dir_all(elroy_home).map_err(lock_err)?;
        let path = elroy_home.join(LOCK_FILE_NAME);
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        {
            Ok(file) => file,
            // A home elroy cannot write (a read-only mount, another owner): the lock is taken
            // through a read-only handle (`flock` needs none other), or, when the lock file
            // does not exist and cannot be made, not at all. Nobody writes such a home through
            // elroy, so the reads it guards need no exclusion; a write fails on its own, naming
            // its file.
            Err(e) if cannot_write(&e) => match File::open(&path) {
                Ok(file) => file,
                Err(again) if again.kind() == std::io::ErrorKind::NotFound => {
                    return Ok(HomeLock { _file: None });
                }
                Err(_) => return Err(lock_err(e)),
            },
            Err(e) => return Err(lock_err(e)),
        };
        // Uncontended: take it at once.
        match file.try_lock() {
            Ok(()) => return Ok(HomeLock { _file: Some(file) }),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(lock_err(e)),
        }
        // Contended: wait in the kernel (a blocking `flock` on a helper thread), so this process
        // is woken when the holder releases and competes on equal terms with every other waiter.
        // Polling with sleeps lost the lock to newcomers again and again under load, and a writer
        // among eight then waited past the timeout. On timeout the helper thread stays blocked;
        // when it gets the lock later it finds nobody listening and drops the file, which
        // releases the lock at once.
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("elroy-home-lock".into())
            .spawn(move || {
                let result = file.lock().map(|()| file);
                // A closed channel means the caller gave up: dropping the file unlocks it.
                let _ = sender.send(result);
            })
            .map_err(lock_err)?;
        match receiver.recv_timeout(timeout) {
            Ok(Ok(file)) => Ok(HomeLock { _file: Some(file) }),
            Ok(Err(e)) => Err(lock_err(e)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(MarkdownError::LockTimeout),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(lock_err(
                std::io::Error::other("the lock thread ended without an answer"),
            )),
        }
    }
}

/// Whether opening the lock file for writing failed because the home cannot be written.
fn cannot_write(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_waits_then_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let held = HomeLock::acquire(dir.path()).unwrap();
        let err =
            HomeLock::acquire_with_timeout(dir.path(), Duration::from_millis(50)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Could not acquire the elroy home lock within 10 seconds"
        );
        drop(held);
        assert!(HomeLock::acquire_with_timeout(dir.path(), Duration::from_millis(50)).is_ok());
        assert!(dir.path().join(".lock").exists());
    }

    #[test]
    fn a_waiter_gets_the_lock_when_the_holder_releases() {
        let dir = tempfile::tempdir().unwrap();
        let held = HomeLock::acquire(dir.path()).unwrap();
        let root = dir.path().to_path_buf();
        let waiter = std::thread::spawn(move || {
            HomeLock::acquire_with_timeout(&root, Duration::from_secs(30)).map(|_| ())
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !waiter.is_finished(),
            "the waiter must wait while the lock is held"
        );
        drop(held);
        assert!(waiter.join().unwrap().is_ok());
    }

    #[test]
    fn a_timed_out_waiter_does_not_keep_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let held = HomeLock::acquire(dir.path()).unwrap();
        assert!(HomeLock::acquire_with_timeout(dir.path(), Duration::from_millis(20)).is_err());
        drop(held);
        // The abandoned helper thread may take the lock for a moment; it must let it go.
        assert!(HomeLock::acquire_with_timeout(dir.path(), Duration::from_secs(5)).is_ok());
    }
}
