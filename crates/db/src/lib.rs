//! # elroy-db
//!
//! elroy's one SQLite database per home (`state.db`, `docs/formats.md#the-database`): opening with
//! the pragmas of `docs/formats.md#connection-and-migrations` (WAL, `foreign_keys`, a 5 s busy
//! timeout, `synchronous=NORMAL`), numbered forward-only migrations applied at open
//! ([`migrations`]), the refusal to touch Elroy's own database (`docs/formats.md#home-layout`), and
//! the users and user preferences of `docs/formats.md#users-and-preferences` ([`UserPreferences`]).
//!
//! Stores (memory, transcript, agenda, Codex sessions) share one [`Db`] through an `Arc` and run
//! their statements with [`Db::with_conn`]. Every write transaction is short
//! (`docs/formats.md#connection-and-migrations`).

mod error;
pub mod grams;
pub mod migrations;
mod readonly;
mod time;
mod tracker;
mod users;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

pub use error::{DbError, sqlite_io_kind};
pub use readonly::{fs_is_full, is_cannot_write};
pub use time::{format_db_time, parse_db_time};
pub use tracker::OpTracker;
pub use users::{PreferenceField, UserPreferences};

/// Re-exported so stores use the same rusqlite version.
pub use rusqlite;

/// The database of one home.
///
/// Holds one connection behind a mutex: statements of concurrent callers in one process are
/// serialised, and other processes are handled by SQLite's locking with the busy timeout.
#[derive(Debug)]
pub struct Db {
    conn: Mutex<Connection>,
    path: Option<PathBuf>,
    /// Why the file was opened read-only ([`Db::read_only`]), `None` when it can be written.
    read_only: Option<String>,
}

/// How long a connection waits for another process's lock (`docs/behaviour.md#context-repair`: 5
/// s).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(5000);

impl Db {
    /// Opens (creating it if needed) the database file at `path` and migrates it to the latest
    /// schema. The parent directory is created on demand.
    ///
    /// # Errors
    /// [`DbError::ElroyOwned`] when the file is Elroy's (Python) database (an `alembic_version`
    /// table and no `meta` table); [`DbError::SqliteIn`] (naming the file) / [`DbError::Io`] for
    /// other failures;
    /// [`DbError::NotElroy`] when `meta.app` names another program.
    ///
    /// An existing, up-to-date file that cannot be written (a read-only home, a full disk: its
    /// WAL index cannot be created) is opened read-only instead ([`Db::read_only`] says why):
    /// reads work, and every write fails with SQLite's `attempt to write a readonly database`.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(parent)
            && !path.is_file()
        {
            return Err(DbError::Io {
                path: parent.to_path_buf(),
                source: e,
            });
        }
        // Errors name the file (a full disk or a lock held elsewhere says which database).
        let in_file = |e: DbError| match e {
            DbError::Sqlite(source) => DbError::SqliteIn {
                file: path.display().to_string(),
                source,
            },
            other => other,
        };
        let opened = Connection::open(path)
            .map_err(DbError::from)
            .and_then(|conn| Db::init(conn, Some(path.to_path_buf())));
        match opened {
            Ok(db) => Ok(db),
            Err(e) if path.is_file() && readonly::cannot_write(&e) => {
                readonly::open(path, &e).map_err(|_| in_file(e))
            }
            Err(e) => Err(in_file(e)),
        }
    }

    /// Why the database was opened read-only (`{dir} is read-only`, `the disk holding {dir} is
    /// full`), `None` when it can be written.
    pub fn read_only(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    /// An in-memory database (`sqlite::memory:`, tests), migrated.
    ///
    /// # Errors
    /// [`DbError::Sqlite`] when SQLite fails.
    pub fn open_in_memory() -> Result<Db, DbError> {
        Db::init(Connection::open_in_memory()?, None)
    }

    fn init(mut conn: Connection, path: Option<PathBuf>) -> Result<Db, DbError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Every `conn.transaction()` takes the write lock at BEGIN. A deferred transaction that
        // reads before it writes fails at once with "database is locked" (SQLITE_BUSY_SNAPSHOT,
        // no busy wait) when another process committed in between — the kind behind the
        // occasional failure of concurrent processes opening one home. Read-only work needs no
        // transaction.
        conn.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
        let shown = path
            .as_deref()
            .map_or_else(|| ":memory:".to_owned(), |p| p.display().to_string());
        // Refuse before any pragma writes to the file.
        migrations::refuse_foreign(&conn, &shown)?;
        enable_wal(&conn)?;
        conn.execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")?;
        migrations::migrate(&mut conn)?;
        Ok(Db {
            conn: Mutex::new(conn),
            path,
            read_only: None,
        })
    }

    /// The database file, or `None` for an in-memory database.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Runs `f` with the connection (one caller at a time). Use a transaction inside `f`
    /// (`conn.transaction()`) for multi-statement writes.
    ///
    /// # Errors
    /// Whatever `f` returns, as [`DbError::SqliteIn`] naming the database file.
    pub fn with_conn<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, DbError> {
        let mut guard = self.lock();
        f(&mut guard).map_err(|source| DbError::SqliteIn {
            file: self
                .path
                .as_deref()
                .map_or_else(|| ":memory:".to_owned(), |p| p.display().to_string()),
            source,
        })
    }

    /// Like [`Db::with_conn`] for closures with their own error type (which must absorb
    /// `rusqlite::Error`).
    ///
    /// # Errors
    /// Whatever `f` returns.
    pub fn with_conn_mapped<T, E>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut guard = self.lock();
        f(&mut guard)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic in another caller cannot leave SQLite inconsistent (transactions roll back on
        // drop), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// SQLite's `PRAGMA integrity_check` (`elroy doctor`): the problems it lists, empty when the
    /// database is sound.
    ///
    /// # Errors
    /// [`DbError::SqliteIn`] when the check cannot run.
    pub fn integrity_problems(&self) -> Result<Vec<String>, DbError> {
        self.with_conn(|c| {
            let mut st = c.prepare("PRAGMA integrity_check")?;
            let rows = st
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows.into_iter().filter(|r| r != "ok").collect())
        })
    }

    /// The schema version recorded in `meta.schema_version`.
    ///
    /// # Errors
    /// [`DbError::Sqlite`].
    pub fn schema_version(&self) -> Result<i64, DbError> {
        self.with_conn(|c| migrations::current_version(c))
    }
}

/// Turns the file to WAL (`docs/formats.md#connection-and-migrations`); the in-memory database
/// stays in "memory" mode.
///
/// A new file starts in rollback mode, and the switch needs it to itself: when another connection
/// is reading it at that moment (several processes opening a new home at once), SQLite answers
/// `SQLITE_BUSY` at once, without calling the busy handler. So the switch is tried again every
/// 5 ms until the busy timeout has passed; a file already in WAL answers at once.
///
/// # Errors
/// `rusqlite::Error`: `SQLITE_BUSY` after [`BUSY_TIMEOUT`], or any other failure at once.
fn enable_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
            Ok(_mode) => return Ok(()),
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests;
