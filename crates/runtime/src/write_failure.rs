//! Write failures in words a person understands: a tool error caused by a full disk or a home
//! elroy cannot write gets a note naming the home (`the disk holding ~/.elroy is full`,
//! `~/.elroy is read-only`), whichever front end made the call. The stores' own messages (the
//! file and the OS or SQLite error) stay as they are before it.

use std::path::{Path, PathBuf};

use elroy_core::{ObservedCall, ToolContext, ToolResult};

/// What kind of write failure an error text shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Full,
    ReadOnly,
}

/// The cause of a tool error `text`, if it is a write that the disk or the home refused.
/// `home_full` says whether the home's file system has no free block (SQLite reports a
/// read-only database for a home it opened read-only because the disk was full).
fn cause(text: &str, home_full: impl FnOnce() -> bool) -> Option<Cause> {
    // Rust's `(os error N)` suffix: ENOSPC, EDQUOT; EROFS, EACCES. SQLite's own words.
    let full = [
        "(os error 28)",
        "(os error 122)",
        "database or disk is full",
    ];
    let read_only = [
        "(os error 30)",
        "(os error 13)",
        "attempt to write a readonly database",
    ];
    if full.iter().any(|m| text.contains(m)) {
        return Some(Cause::Full);
    }
    if read_only.iter().any(|m| text.contains(m)) {
        return Some(if home_full() {
            Cause::Full
        } else {
            Cause::ReadOnly
        });
    }
    None
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

/// The note for a failed call's `text`, `None` when it is no write failure.
fn note(text: &str, home: &Path) -> Option<String> {
    let cause = cause(text, || elroy_db::fs_is_full(home))?;
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
            .then(|| note(&result.content, &self.home))
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
        let full = "Unable to write memories/Cat.md: No space left on device (os error 28)";
        assert_eq!(cause(full, || false), Some(Cause::Full));
        let db = "database error in /h/state.db: database or disk is full";
        assert_eq!(cause(db, || false), Some(Cause::Full));
        let ro = "Unable to write agenda/A.md: Read-only file system (os error 30)";
        assert_eq!(cause(ro, || false), Some(Cause::ReadOnly));
        let ro_db = "database error: attempt to write a readonly database";
        assert_eq!(cause(ro_db, || false), Some(Cause::ReadOnly));
        assert_eq!(cause(ro_db, || true), Some(Cause::Full));
        assert_eq!(cause("Memory 'x' not found", || true), None);
    }
}
