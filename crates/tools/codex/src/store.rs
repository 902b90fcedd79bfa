//! Recorded Codex sessions (`docs/formats.md#codex-sessions`): the record, the store trait, and an
//! in-memory store. The SQLite store over `state.db` lives in [`crate::sqlite`].

use std::sync::{Arc, Mutex};

use jiff::Timestamp;

/// Which tree a session ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The contrib plugin directory (`edit_contrib_with_codex`).
    Contrib,
    /// The Elroy source tree (`inspect_elroy_with_codex`).
    Elroy,
}

impl Scope {
    /// `contrib` or `elroy`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Contrib => "contrib",
            Scope::Elroy => "elroy",
        }
    }

    /// Parses `contrib` / `elroy`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "contrib" => Some(Scope::Contrib),
            "elroy" => Some(Scope::Elroy),
            _ => None,
        }
    }
}

/// The state of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStatus {
    /// Codex is running (or elroy died mid-run).
    Running,
    /// Exit status 0 and a final message.
    Completed,
    /// Anything else that ended.
    Failed,
    /// Killed after `codex_timeout_seconds`.
    TimedOut,
}

impl SessionStatus {
    /// `running`, `completed`, `failed` or `timed_out`.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Running => "running",
            SessionStatus::Completed => "completed",
            SessionStatus::Failed => "failed",
            SessionStatus::TimedOut => "timed_out",
        }
    }

    /// Parses the database text.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "running" => SessionStatus::Running,
            "completed" => SessionStatus::Completed,
            "failed" => SessionStatus::Failed,
            "timed_out" => SessionStatus::TimedOut,
            _ => return None,
        })
    }
}

/// A command Codex ran (`docs/tool-rules.md#running-codex` step 5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRecord {
    /// The command line.
    pub command: String,
    /// Its exit code, if reported.
    pub exit_code: Option<i64>,
    /// The first 400 characters of its output.
    pub output_excerpt: String,
}

impl CommandRecord {
    /// `{"command","exit_code","output_excerpt"}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "command": self.command,
            "exit_code": self.exit_code,
            "output_excerpt": self.output_excerpt,
        })
    }

    /// Reads the JSON form; missing fields become empty.
    pub fn from_json(value: &serde_json::Value) -> Self {
        CommandRecord {
            command: value
                .get("command")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            exit_code: value.get("exit_code").and_then(serde_json::Value::as_i64),
            output_excerpt: value
                .get("output_excerpt")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        }
    }
}

/// One row of `codex_sessions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexSession {
    /// The row id (0 before insertion).
    pub row_id: i64,
    /// Codex's thread id, or `local-{12 hex}`.
    pub session_id: String,
    /// Where it ran.
    pub scope: Scope,
    /// The absolute directory Codex ran in.
    pub repo_path: String,
    /// The request as given to the tool.
    pub prompt: String,
    /// The model override, if any.
    pub model: Option<String>,
    /// The state.
    pub status: SessionStatus,
    /// The summary lines (`docs/tool-rules.md#running-codex` step 10).
    pub summary: String,
    /// Codex's final message (or the failure message).
    pub final_message: String,
    /// Repo-relative paths changed during the run, sorted.
    pub touched_paths: Vec<String>,
    /// Commands Codex ran.
    pub commands: Vec<CommandRecord>,
    /// The commit made for the run, if any.
    pub commit_sha: Option<String>,
    /// Codex's own session log, if found.
    pub session_file_path: Option<String>,
    /// The process exit code, if it exited.
    pub exit_code: Option<i64>,
    /// When Codex started.
    pub started_at: Timestamp,
    /// The last change.
    pub updated_at: Timestamp,
}

/// Storage of Codex sessions per user. The runtime puts one in [`elroy_core::Services`] wrapped in
/// [`CodexSessions`].
pub trait CodexSessionStore: Send + Sync + std::fmt::Debug {
    /// Inserts `session` and returns its row id.
    ///
    /// # Errors
    /// [`SessionStoreError`].
    fn insert(
        &self,
        user_id: Option<i64>,
        session: &CodexSession,
    ) -> Result<i64, SessionStoreError>;

    /// Replaces the row `session.row_id` with `session`.
    ///
    /// # Errors
    /// [`SessionStoreError`].
    fn update(&self, user_id: Option<i64>, session: &CodexSession)
    -> Result<(), SessionStoreError>;

    /// The user's sessions of `scope` (all when `None`), newest `updated_at` first, then highest
    /// row id, at most `limit`.
    ///
    /// # Errors
    /// [`SessionStoreError`].
    fn list(
        &self,
        user_id: Option<i64>,
        scope: Option<Scope>,
        limit: usize,
    ) -> Result<Vec<CodexSession>, SessionStoreError>;

    /// Marks sessions still `running` that started before `cutoff` as `failed` with the final
    /// message `Elroy exited before the Codex session finished.`
    /// (`docs/formats.md#codex-sessions`); returns how many.
    ///
    /// # Errors
    /// [`SessionStoreError`].
    fn fail_stale(
        &self,
        user_id: Option<i64>,
        cutoff: Timestamp,
        now: Timestamp,
    ) -> Result<usize, SessionStoreError>;
}

/// Why a [`CodexSessionStore`] call failed; its text is what the tool's caller reads after
/// `Unable to record the Codex session: `.
#[derive(Debug, thiserror::Error)]
pub enum SessionStoreError {
    /// The call has no database user (`ToolContext::user_id` is `None`).
    #[error("the user is not registered in the database")]
    NoUser,
    /// The user already has a session with this id.
    #[error("Codex session {0} already exists")]
    Duplicate(String),
    /// The user has no session row with this id.
    #[error("Codex session row {0} not found")]
    RowNotFound(i64),
    /// The database refused (locked, full, read-only, …).
    #[error(transparent)]
    Database(#[from] elroy_db::DbError),
}

/// The final message of sessions that were still running when elroy exited.
pub const STALE_MESSAGE: &str = "Elroy exited before the Codex session finished.";

/// The session store of a runtime, as kept in [`elroy_core::Services`].
#[derive(Debug, Clone)]
pub struct CodexSessions(pub Arc<dyn CodexSessionStore>);

/// Sessions kept in memory (tests, embedders without a database).
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    rows: Mutex<Vec<(Option<i64>, CodexSession)>>,
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every stored session of every user, in insertion order.
    pub fn list_all(&self) -> Vec<CodexSession> {
        self.rows().iter().map(|(_, s)| s.clone()).collect()
    }

    fn rows(&self) -> std::sync::MutexGuard<'_, Vec<(Option<i64>, CodexSession)>> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl CodexSessionStore for MemorySessionStore {
    fn insert(
        &self,
        user_id: Option<i64>,
        session: &CodexSession,
    ) -> Result<i64, SessionStoreError> {
        let mut rows = self.rows();
        if rows
            .iter()
            .any(|(u, s)| *u == user_id && s.session_id == session.session_id)
        {
            return Err(SessionStoreError::Duplicate(session.session_id.clone()));
        }
        let id = rows.iter().map(|(_, s)| s.row_id).max().unwrap_or(0) + 1;
        let mut stored = session.clone();
        stored.row_id = id;
        rows.push((user_id, stored));
        Ok(id)
    }

    fn update(
        &self,
        user_id: Option<i64>,
        session: &CodexSession,
    ) -> Result<(), SessionStoreError> {
        let mut rows = self.rows();
        let row = rows
            .iter_mut()
            .find(|(u, s)| *u == user_id && s.row_id == session.row_id)
            .ok_or(SessionStoreError::RowNotFound(session.row_id))?;
        row.1 = session.clone();
        Ok(())
    }

    fn list(
        &self,
        user_id: Option<i64>,
        scope: Option<Scope>,
        limit: usize,
    ) -> Result<Vec<CodexSession>, SessionStoreError> {
        let mut out: Vec<CodexSession> = self
            .rows()
            .iter()
            .filter(|(u, s)| *u == user_id && scope.is_none_or(|sc| s.scope == sc))
            .map(|(_, s)| s.clone())
            .collect();
        out.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then(b.row_id.cmp(&a.row_id))
        });
        out.truncate(limit);
        Ok(out)
    }

    fn fail_stale(
        &self,
        user_id: Option<i64>,
        cutoff: Timestamp,
        now: Timestamp,
    ) -> Result<usize, SessionStoreError> {
        let mut n = 0;
        for (u, s) in self.rows().iter_mut() {
            if *u == user_id && s.status == SessionStatus::Running && s.started_at < cutoff {
                s.status = SessionStatus::Failed;
                s.final_message = STALE_MESSAGE.to_owned();
                s.updated_at = now;
                n += 1;
            }
        }
        Ok(n)
    }
}

/// A database timestamp: UTC `YYYY-MM-DDTHH:MM:SS.ffffffZ`
/// (`docs/formats.md#timestamps-elroy-writes`).
pub fn format_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}
