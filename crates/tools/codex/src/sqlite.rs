//! [`SqliteSessionStore`]: Codex sessions in the `codex_sessions` table of `state.db`
//! (`docs/formats.md#codex-sessions`), created by elroy-db's migrations.

use std::sync::Arc;

use elroy_db::rusqlite::{self, OptionalExtension, Row, params};
use elroy_db::{Db, format_db_time, parse_db_time};
use jiff::Timestamp;

use crate::store::{
    CodexSession, CodexSessionStore, CommandRecord, STALE_MESSAGE, Scope, SessionStatus,
    SessionStoreError,
};

/// Codex sessions stored in the home's database.
#[derive(Debug, Clone)]
pub struct SqliteSessionStore {
    db: Arc<Db>,
}

impl SqliteSessionStore {
    /// A store over `db`.
    pub fn new(db: Arc<Db>) -> Self {
        SqliteSessionStore { db }
    }
}

fn user(user_id: Option<i64>) -> Result<i64, SessionStoreError> {
    user_id.ok_or(SessionStoreError::NoUser)
}

const COLUMNS: &str = "id, session_id, scope, repo_path, prompt, model, status, summary, final_message, \
     touched_paths, commands, commit_sha, session_file_path, exit_code, started_at, updated_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<CodexSession> {
    let text = |i: usize| row.get::<_, String>(i);
    let time = |i: usize| -> rusqlite::Result<Timestamp> {
        let raw: String = row.get(i)?;
        parse_db_time(&raw).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                i,
                rusqlite::types::Type::Text,
                format!("invalid timestamp {raw:?}").into(),
            )
        })
    };
    let touched: Vec<String> = serde_json::from_str(&text(9)?).unwrap_or_default();
    let commands: Vec<CommandRecord> = serde_json::from_str::<Vec<serde_json::Value>>(&text(10)?)
        .unwrap_or_default()
        .iter()
        .map(CommandRecord::from_json)
        .collect();
    Ok(CodexSession {
        row_id: row.get(0)?,
        session_id: text(1)?,
        scope: Scope::parse(&text(2)?).unwrap_or(Scope::Contrib),
        repo_path: text(3)?,
        prompt: text(4)?,
        model: row.get(5)?,
        status: SessionStatus::parse(&text(6)?).unwrap_or(SessionStatus::Failed),
        summary: text(7)?,
        final_message: text(8)?,
        touched_paths: touched,
        commands,
        commit_sha: row.get(11)?,
        session_file_path: row.get(12)?,
        exit_code: row.get(13)?,
        started_at: time(14)?,
        updated_at: time(15)?,
    })
}

fn json_lists(session: &CodexSession) -> (String, String) {
    let touched = serde_json::Value::from(session.touched_paths.clone()).to_string();
    let commands = serde_json::Value::Array(
        session
            .commands
            .iter()
            .map(CommandRecord::to_json)
            .collect(),
    )
    .to_string();
    (touched, commands)
}

impl CodexSessionStore for SqliteSessionStore {
    fn insert(&self, user_id: Option<i64>, s: &CodexSession) -> Result<i64, SessionStoreError> {
        let user_id = user(user_id)?;
        let (touched, commands) = json_lists(s);
        self.db
            .with_conn(|c| {
                c.execute(
                    "INSERT INTO codex_sessions (user_id, session_id, scope, repo_path, prompt, model, \
                     status, summary, final_message, touched_paths, commands, commit_sha, \
                     session_file_path, exit_code, started_at, updated_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                    params![
                        user_id,
                        s.session_id,
                        s.scope.as_str(),
                        s.repo_path,
                        s.prompt,
                        s.model,
                        s.status.as_str(),
                        s.summary,
                        s.final_message,
                        touched,
                        commands,
                        s.commit_sha,
                        s.session_file_path,
                        s.exit_code,
                        format_db_time(s.started_at),
                        format_db_time(s.updated_at),
                    ],
                )?;
                Ok(c.last_insert_rowid())
            })
            .map_err(SessionStoreError::from)
    }

    fn update(&self, user_id: Option<i64>, s: &CodexSession) -> Result<(), SessionStoreError> {
        let user_id = user(user_id)?;
        let (touched, commands) = json_lists(s);
        let write = |session_id: &str| {
            self.db.with_conn(|c| {
                c.execute(
                    "UPDATE codex_sessions SET session_id = ?3, status = ?4, summary = ?5, \
                     final_message = ?6, touched_paths = ?7, commands = ?8, commit_sha = ?9, \
                     session_file_path = ?10, exit_code = ?11, updated_at = ?12 \
                     WHERE user_id = ?1 AND id = ?2",
                    params![
                        user_id,
                        s.row_id,
                        session_id,
                        s.status.as_str(),
                        s.summary,
                        s.final_message,
                        touched,
                        commands,
                        s.commit_sha,
                        s.session_file_path,
                        s.exit_code,
                        format_db_time(s.updated_at),
                    ],
                )
            })
        };
        match write(&s.session_id) {
            Ok(_) => Ok(()),
            // A thread id already recorded for this user (UNIQUE): keep the row's own id.
            Err(_) => {
                let current: Option<String> = self.db.with_conn(|c| {
                    c.query_row(
                        "SELECT session_id FROM codex_sessions WHERE user_id = ?1 AND id = ?2",
                        params![user_id, s.row_id],
                        |r| r.get(0),
                    )
                    .optional()
                })?;
                let current = current.ok_or(SessionStoreError::RowNotFound(s.row_id))?;
                write(&current).map(|_| ()).map_err(SessionStoreError::from)
            }
        }
    }

    fn list(
        &self,
        user_id: Option<i64>,
        scope: Option<Scope>,
        limit: usize,
    ) -> Result<Vec<CodexSession>, SessionStoreError> {
        let user_id = user(user_id)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db
            .with_conn(|c| {
                let sql = format!(
                    "SELECT {COLUMNS} FROM codex_sessions WHERE user_id = ?1 \
                     AND (?2 IS NULL OR scope = ?2) ORDER BY updated_at DESC, id DESC LIMIT ?3"
                );
                let mut stmt = c.prepare(&sql)?;
                let rows =
                    stmt.query_map(params![user_id, scope.map(Scope::as_str), limit], from_row)?;
                rows.collect()
            })
            .map_err(SessionStoreError::from)
    }

    fn fail_stale(
        &self,
        user_id: Option<i64>,
        cutoff: Timestamp,
        now: Timestamp,
    ) -> Result<usize, SessionStoreError> {
        let user_id = user(user_id)?;
        self.db
            .with_conn(|c| {
                c.execute(
                    "UPDATE codex_sessions SET status = 'failed', final_message = ?2, updated_at = ?3 \
                     WHERE user_id = ?1 AND status = 'running' AND started_at < ?4",
                    params![
                        user_id,
                        STALE_MESSAGE,
                        format_db_time(now),
                        format_db_time(cutoff)
                    ],
                )
            })
            .map_err(SessionStoreError::from)
    }
}

/// The Codex session store of a runtime (`docs/formats.md#codex-sessions`): SQLite over the [`Db`]
/// in `services` when there is one, else in memory. At start-up, sessions still `running` that
/// started more than `codex_timeout_seconds` ago are marked failed.
///
/// Returns the store and a warning when that clean-up failed.
pub fn open_session_store(
    services: &elroy_core::Services,
    user_id: Option<i64>,
    now: Timestamp,
    codex_timeout_seconds: i64,
) -> (crate::CodexSessions, Option<String>) {
    let Some(db) = services.get::<Db>() else {
        return (
            crate::CodexSessions(Arc::new(crate::MemorySessionStore::new())),
            None,
        );
    };
    let store = SqliteSessionStore::new(db);
    let cutoff = now
        .checked_sub(jiff::SignedDuration::from_secs(
            codex_timeout_seconds.max(1),
        ))
        .unwrap_or(now);
    let warning = user_id
        .and_then(|_| store.fail_stale(user_id, cutoff, now).err())
        .map(|e| format!("could not close unfinished Codex sessions: {e}"));
    (crate::CodexSessions(Arc::new(store)), warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, scope: Scope, at: i64) -> CodexSession {
        let t = Timestamp::from_second(1_796_018_400 + at).unwrap();
        CodexSession {
            row_id: 0,
            session_id: id.into(),
            scope,
            repo_path: "/h/contrib".into(),
            prompt: "p".into(),
            model: None,
            status: SessionStatus::Running,
            summary: String::new(),
            final_message: String::new(),
            touched_paths: Vec::new(),
            commands: Vec::new(),
            commit_sha: None,
            session_file_path: None,
            exit_code: None,
            started_at: t,
            updated_at: t,
        }
    }

    #[test]
    fn round_trip_order_scope_and_stale_rows() {
        let db = Arc::new(Db::open_in_memory().unwrap());
        let user_id = db
            .ensure_user("DEFAULT", Timestamp::from_second(1_796_018_400).unwrap())
            .unwrap();
        let store = SqliteSessionStore::new(db);
        let u = Some(user_id);
        let mut a = session("local-aaaaaaaaaaaa", Scope::Contrib, 0);
        a.row_id = store.insert(u, &a).unwrap();
        a.session_id = "thread-a".into();
        a.status = SessionStatus::Completed;
        a.touched_paths = vec!["greet_tool".into()];
        a.commands = vec![CommandRecord {
            command: "ls".into(),
            exit_code: Some(0),
            output_excerpt: "x".into(),
        }];
        a.commit_sha = Some("0123456789abcdef0123456789abcdef01234567".into());
        a.exit_code = Some(0);
        a.updated_at = Timestamp::from_second(1_796_018_500).unwrap();
        store.update(u, &a).unwrap();
        let mut b = session("local-bbbbbbbbbbbb", Scope::Elroy, 10);
        b.row_id = store.insert(u, &b).unwrap();

        let all = store.list(u, None, 10).unwrap();
        assert_eq!(all, vec![a.clone(), b.clone()]);
        assert_eq!(
            store.list(u, Some(Scope::Elroy), 10).unwrap(),
            vec![b.clone()]
        );
        assert_eq!(store.list(u, None, 1).unwrap().len(), 1);
        assert!(store.list(None, None, 1).is_err());

        // A second row reporting an existing thread id keeps its own id.
        let mut dup = b.clone();
        dup.session_id = "thread-a".into();
        store.update(u, &dup).unwrap();
        let listed = store.list(u, Some(Scope::Elroy), 10).unwrap();
        assert_eq!(listed[0].session_id, "local-bbbbbbbbbbbb");

        // Still running and older than the cutoff: failed at start-up.
        let now = Timestamp::from_second(1_796_020_000).unwrap();
        let cutoff = Timestamp::from_second(1_796_018_405).unwrap();
        assert_eq!(store.fail_stale(u, cutoff, now).unwrap(), 0);
        let later = Timestamp::from_second(1_796_018_411).unwrap();
        assert_eq!(store.fail_stale(u, later, now).unwrap(), 1);
        let b2 = &store.list(u, Some(Scope::Elroy), 1).unwrap()[0];
        assert_eq!(b2.status, SessionStatus::Failed);
        assert_eq!(b2.final_message, STALE_MESSAGE);
    }

    #[test]
    fn runtime_store_uses_the_database() {
        let db = Arc::new(Db::open_in_memory().unwrap());
        let now = Timestamp::from_second(1_796_018_400).unwrap();
        let user_id = db.ensure_user("DEFAULT", now).unwrap();
        let mut services = elroy_core::Services::new();
        services.insert(Arc::clone(&db));
        let (store, warning) = open_session_store(&services, Some(user_id), now, 900);
        assert_eq!(warning, None);
        let s = session("local-cccccccccccc", Scope::Contrib, -2000);
        store.0.insert(Some(user_id), &s).unwrap();
        // Opening again (a new session start) fails the row left running 2000 s ago.
        let (store, _) = open_session_store(&services, Some(user_id), now, 900);
        let rows = store.0.list(Some(user_id), None, 5).unwrap();
        assert_eq!(rows[0].status, SessionStatus::Failed);
        let count: i64 = db
            .with_conn(|c| c.query_row("SELECT count(*) FROM codex_sessions", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(count, 1);
    }
}
