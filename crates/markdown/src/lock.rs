//! The per-home lock (`formats.md` §3.6, decision D12).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::MarkdownError;

/// The lock file's name inside `$ELROY_HOME`.
pub const LOCK_FILE_NAME: &str = ".lock";

/// How long [`HomeLock::acquire`] waits before failing.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// An exclusive, advisory lock on `$ELROY_HOME/.lock` (`flock`/`LockFileEx` through
/// [`File::try_lock`]), held until dropped.
///
/// Every read-modify-write of home files runs inside one: acquire, re-read the file from disk,
/// write atomically, release. The lock is per open file, so two threads of one process exclude
/// each other as two processes do. It is never held across an LLM call.
#[derive(Debug)]
pub struct HomeLock {
    _file: File,
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
        };
        std::fs::create_dir_all(elroy_home).map_err(lock_err)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(elroy_home.join(LOCK_FILE_NAME))
            .map_err(lock_err)?;
        let start = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(HomeLock { _file: file }),
                Err(TryLockError::WouldBlock) => {
                    if start.elapsed() >= timeout {
                        return Err(MarkdownError::LockTimeout);
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(TryLockError::Error(e)) => return Err(lock_err(e)),
            }
        }
    }
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
}
