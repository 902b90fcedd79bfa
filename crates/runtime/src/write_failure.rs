//! Write failures in words a person understands: a tool error caused by a full disk or a home
//! elroy cannot write gets a note naming the home (`the disk holding ~/.elroy is full`,
//! `~/.elroy is read-only`), whichever front end made the call. The stores' own messages (the
//! file and the OS or SQLite error) stay as they are before it.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use elroy_core::{ObservedCall, ToolContext, ToolResult};

/// What kind of write failure a tool error was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Full,
    ReadOnly,
}

/// The cause of a tool error whose I/O failure was of kind `kind` (set by the store that failed:
/// the OS error of a file write, or SQLite's `SQLITE_FULL` / `SQLITE_READONLY`), if it is a write
/// that the disk or the home refused. `home_full` says whether the home's file system has no free
/// block (SQLite reports a read-only database for a home it opened read-only because the disk was
/// full).
fn cause(kind: Option<ErrorKind>, home_full: impl FnOnce() -> bool) -> Option<Cause> {
    match kind? {
        // ENOSPC, EDQUOT.
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Some(Cause::Full),
        // EROFS, EACCES.
        ErrorKind::ReadOnlyFilesystem | ErrorKind::PermissionDenied => Some(if home_full() {
            Cause::Full
        } else {
            Cause::ReadOnly
        }),
        _ => None,
    }
}

/// The home as a person types it: `~/…` under `$HOME`.
fn shown(home: &Path) -> String {
    if let Some(user_home) = std::env::var_os("HOME").map(PathBuf::from)
        && let Ok(rel) = home.strip_prefix(&user_home)
    {
        return if rel.as_os_str().is_empty() {
            "~".to_owned()
        } else {
            format!("~/{}", rel.display())
        };
    }
    home.display().to_string()
}

/// The note for a failed call whose I/O failure was of kind `kind`, `None` when it is no write
/// failure.
fn note(kind: Option<ErrorKind>, home: &Path) -> Option<String> {
    let cause = cause(kind, || elroy_db::fs_is_full(home))?;
    let home = shown(home);
    Some(match cause {
        Cause::Full => format!("The disk holding {home} is full; free some space and try again."),
        Cause::ReadOnly => format!("{home} is read-only; elroy can read it but not change it."),
    })
}

/// Wraps the observed call `inner`: its note, then the write-failure note of a failed call.
pub(crate) fn explained(inner: Box<dyn ObservedCall>, home: &Path) -> Box<dyn ObservedCall> {
    Box::new(Explained {
        inner,
        home: home.to_path_buf(),
    })
}

struct Explained {
    inner: Box<dyn ObservedCall>,
    home: PathBuf,
}

impl ObservedCall for Explained {
    fn finished(self: Box<Self>, ctx: &ToolContext, result: &ToolResult) -> Option<String> {
        let inner = self.inner.finished(ctx, result);
        let ours = result
            .is_error
            .then(|| note(result.io_kind, &self.home))
            .flatten();
        match (inner, ours) {
            (Some(a), Some(b)) => Some(format!("{a} {b}")),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_cause() {
        use elroy_db::rusqlite;
        // The kinds the stores carry: a file write's OS error, SQLite's codes.
        let enospc = std::io::Error::from_raw_os_error(28);
        assert_eq!(cause(Some(enospc.kind()), || false), Some(Cause::Full));
        let edquot = std::io::Error::from_raw_os_error(122);
        assert_eq!(cause(Some(edquot.kind()), || false), Some(Cause::Full));
        let erofs = std::io::Error::from_raw_os_error(30);
        assert_eq!(cause(Some(erofs.kind()), || false), Some(Cause::ReadOnly));
        let sqlite = |code| rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None);
        let db_full = elroy_db::DbError::Sqlite(sqlite(rusqlite::ffi::SQLITE_FULL));
        assert_eq!(cause(db_full.io_kind(), || false), Some(Cause::Full));
        let db_ro = elroy_db::DbError::Sqlite(sqlite(rusqlite::ffi::SQLITE_READONLY));
        assert_eq!(cause(db_ro.io_kind(), || false), Some(Cause::ReadOnly));
        assert_eq!(cause(db_ro.io_kind(), || true), Some(Cause::Full));
        // Other failures, even with the words of one in their text, are none.
        let busy = elroy_db::DbError::Sqlite(sqlite(rusqlite::ffi::SQLITE_BUSY));
        assert_eq!(cause(busy.io_kind(), || true), None);
        let missing = std::io::Error::from_raw_os_error(2);
        assert_eq!(cause(Some(missing.kind()), || true), None);
        assert_eq!(cause(None, || true), None);
    }
}
