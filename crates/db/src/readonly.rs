//! Opening `state.db` read-only when it cannot be written (`docs/formats.md#connection-and-migrations`):
//! a read-only home or a full disk must not stop listing, printing and recall.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::{Db, DbError, migrations};

/// Whether `e` says the database file or its directory cannot be written (read-only, full, an
/// I/O failure of its WAL files): a read-only open may then still work, and a read path goes on
/// without the cache write it wanted.
pub fn is_cannot_write(e: &DbError) -> bool {
    cannot_write(e)
}

pub(crate) fn cannot_write(e: &DbError) -> bool {
    let code = match e {
        DbError::Sqlite(e) | DbError::SqliteIn { source: e, .. } => e.sqlite_error_code(),
        DbError::Io { .. } => return true,
        _ => None,
    };
    matches!(
        code,
        Some(
            ErrorCode::ReadOnly
                | ErrorCode::CannotOpen
                | ErrorCode::DiskFull
                | ErrorCode::SystemIoFailure
                | ErrorCode::PermissionDenied
        )
    )
}

/// Why the file at `path` cannot be written, in words a person understands, from the error of
/// the read-write open.
fn reason(path: &Path, e: &DbError) -> String {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .display()
        .to_string();
    let full = match e {
        DbError::Sqlite(e) | DbError::SqliteIn { source: e, .. } => {
            e.sqlite_error_code() == Some(ErrorCode::DiskFull)
        }
        _ => false,
    } || fs_is_full(path);
    if full {
        format!("the disk holding {dir} is full")
    } else {
        format!("{dir} is read-only")
    }
}

/// Whether the file system holding `path` has no free block for unprivileged writers (a full
/// disk shows as an I/O error of the WAL index rather than `SQLITE_FULL`).
pub fn fs_is_full(path: &Path) -> bool {
    rustix::fs::statvfs(path).is_ok_and(|st| st.f_bavail == 0)
}

/// `path` as an SQLite `file:` URI (RFC 3986 escapes for the characters SQLite gives meaning).
fn uri(path: &Path, params: &str) -> String {
    let mut out = String::from("file:");
    for ch in path.to_string_lossy().chars() {
        match ch {
            '%' | '?' | '#' => out.push_str(&format!("%{:02X}", ch as u32)),
            _ => out.push(ch),
        }
    }
    out.push('?');
    out.push_str(params);
    out
}

/// Opens `path` read-only: first as a normal read-only connection (which works when the WAL
/// files exist or can be created), then, when no WAL holds commits the file lacks, as an
/// immutable file (no WAL index needed). The schema must be current (no migration can run).
///
/// # Errors
/// The failure of the last attempt; the caller reports the read-write error instead.
pub(crate) fn open(path: &Path, why: &DbError) -> Result<Db, DbError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let wal = {
        let mut p = path.as_os_str().to_owned();
        p.push("-wal");
        std::path::PathBuf::from(p)
    };
    let wal_empty = std::fs::metadata(&wal).map_or(true, |m| m.len() == 0);
    let mut last = None;
    for params in ["mode=ro", "immutable=1"] {
        if params == "immutable=1" && !wal_empty {
            break;
        }
        let attempt = Connection::open_with_flags(uri(path, params), flags)
            .map_err(DbError::from)
            .and_then(|conn| check(conn, path));
        match attempt {
            Ok(conn) => {
                return Ok(Db {
                    conn: Mutex::new(conn),
                    path: Some(path.to_path_buf()),
                    read_only: Some(reason(path, why)),
                });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| DbError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other("cannot open read-only"),
    }))
}

/// The checks of a read-write open that only read: not Elroy's own database, the current
/// schema, and one read that proves the file can be read.
fn check(conn: Connection, path: &Path) -> Result<Connection, DbError> {
    conn.busy_timeout(std::time::Duration::from_millis(5000))?;
    migrations::refuse_foreign(&conn, &path.display().to_string())?;
    let version = migrations::current_version(&conn)?;
    if version != migrations::LATEST_VERSION {
        return Err(DbError::TooNew {
            found: version,
            supported: migrations::LATEST_VERSION,
        });
    }
    Ok(conn)
}
