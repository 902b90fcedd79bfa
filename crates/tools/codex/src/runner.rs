//! Running Codex (`docs/tool-rules.md#running-codex`): command line, session row, events, status,
//! touched paths, optional commit, session file, result JSON.

use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use elroy_config::Config;
use elroy_core::{ToolContext, ToolError, ToolOutput};
use elroy_plugins::process::{self, Limits, last_chars, lossy};
use git2::Repository;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::events::parse_events;
use crate::git;
use crate::store::{CodexSession, CodexSessions, Scope, SessionStatus};

/// stdout kept from a Codex run (JSONL events).
const STDOUT_CAP: usize = 64 * 1024 * 1024;
/// stderr kept from a Codex run.
const STDERR_CAP: usize = 1024 * 1024;
/// Entries searched for Codex's session file.
const SESSION_FILE_SEARCH_LIMIT: usize = 5000;

/// Where Codex keeps its own files (`$CODEX_HOME`, default `~/.codex`). Put one in
/// [`elroy_core::Services`] to override the environment (tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexHome(pub PathBuf);

/// One Codex run requested by a tool.
#[derive(Debug, Clone)]
pub(crate) struct RunRequest {
    pub scope: Scope,
    /// The absolute directory Codex runs in.
    pub directory: PathBuf,
    /// The full prompt sent to Codex.
    pub codex_prompt: String,
    /// The request as given to the tool (recorded).
    pub prompt: String,
    pub model: Option<String>,
    /// `workspace-write` or `read-only`.
    pub sandbox: &'static str,
    /// Commit a completed run's changes (contrib edits).
    pub commit: bool,
    /// Add the read-only warning when files changed (inspections).
    pub warn_on_changes: bool,
}

fn local_session_id() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.write_u32(std::process::id());
    format!("local-{:012x}", hasher.finish() & 0xffff_ffff_ffff)
}

/// The Codex command line: `codex_command` split with POSIX shell rules, then `exec --json
/// --sandbox {mode} --skip-git-repo-check [-m {model}] -C {directory} {prompt}`.
pub(crate) fn command_line(
    codex_command: &str,
    request: &RunRequest,
) -> Result<Vec<String>, ToolError> {
    let mut words = shlex::split(codex_command)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| {
            ToolError::new(format!(
                "Unable to launch Codex: codex_command is empty or badly quoted: {codex_command}"
            ))
        })?;
    words.extend(
        [
            "exec",
            "--json",
            "--sandbox",
            request.sandbox,
            "--skip-git-repo-check",
        ]
        .map(String::from),
    );
    if let Some(model) = &request.model {
        words.push("-m".into());
        words.push(model.clone());
    }
    words.push("-C".into());
    words.push(request.directory.display().to_string());
    words.push(request.codex_prompt.clone());
    Ok(words)
}

/// Runs Codex for `request` and returns the tool result (`docs/tool-rules.md#running-codex` steps
/// 1–12).
pub(crate) async fn run_codex(
    ctx: &ToolContext,
    request: RunRequest,
) -> Result<ToolOutput, ToolError> {
    let config = ctx.services.require::<Config>()?;
    let store = ctx.services.require::<CodexSessions>()?;
    let timeout_seconds = config.settings.codex_timeout_seconds;
    let words = command_line(&config.settings.codex_command, &request)?;
    let repo = Repository::discover(&request.directory).ok();
    let before = repo.as_ref().map(git::snapshot).unwrap_or_default();

    let mut command = Command::new(&words[0]);
    command.args(&words[1..]).current_dir(&request.directory);
    let running = process::spawn(command)
        .map_err(|e| ToolError::new(format!("Unable to launch Codex: {e}")))?;

    let started_at = ctx.time.now();
    let mut session = CodexSession {
        row_id: 0,
        session_id: local_session_id(),
        scope: request.scope,
        repo_path: request.directory.display().to_string(),
        prompt: request.prompt.clone(),
        model: request.model.clone(),
        status: SessionStatus::Running,
        summary: String::new(),
        final_message: String::new(),
        touched_paths: Vec::new(),
        commands: Vec::new(),
        commit_sha: None,
        session_file_path: None,
        exit_code: None,
        started_at,
        updated_at: started_at,
    };
    let user_id = ctx.user_id();
    session.row_id = store
        .0
        .insert(user_id, &session)
        .map_err(|e| format!("Unable to record the Codex session: {e}"))?;

    let finished = running
        .finish(
            b"",
            Limits {
                timeout: Duration::from_secs(timeout_seconds),
                stdout_cap: STDOUT_CAP,
                stderr_cap: STDERR_CAP,
            },
        )
        .await;
    let events = parse_events(&lossy(&finished.stdout));
    if let Some(thread) = &events.thread_id {
        session.session_id = thread.clone();
    }
    session.commands = events.commands.clone();
    session.exit_code = finished.status.and_then(|s| s.code()).map(i64::from);
    let exited_zero = finished.status.is_some_and(|s| s.success());
    session.status = if finished.timed_out() {
        SessionStatus::TimedOut
    } else if exited_zero && events.final_message.is_some() {
        SessionStatus::Completed
    } else {
        SessionStatus::Failed
    };
    let failure = if exited_zero && events.final_message.is_none() && events.error.is_none() {
        "Codex did not emit a final assistant message.".to_owned()
    } else if let Some(error) = &events.error {
        error.clone()
    } else {
        let stderr = lossy(&finished.stderr);
        let stderr = stderr.trim();
        if stderr.is_empty() {
            "Codex run failed.".to_owned()
        } else {
            last_chars(stderr, 2000).to_owned()
        }
    };
    session.final_message = match session.status {
        SessionStatus::Completed => events.final_message.clone().unwrap_or_default(),
        SessionStatus::TimedOut => events.final_message.clone().unwrap_or_default(),
        _ => events
            .final_message
            .clone()
            .unwrap_or_else(|| failure.clone()),
    };

    if let Some(repo) = &repo {
        session.touched_paths = git::touched(&before, &git::snapshot(repo));
        if request.commit && session.status == SessionStatus::Completed && git::has_changes(repo) {
            let message = format!("Codex contrib edit (session {})", session.session_id);
            let oid = git::commit_all(repo, &message, ctx.time.now())?;
            session.commit_sha = Some(oid.to_string());
        }
    }
    session.session_file_path =
        find_session_file(ctx, &session.session_id).map(|p| p.display().to_string());
    session.summary = summary(&session, &request);
    session.updated_at = ctx.time.now();
    store
        .0
        .update(user_id, &session)
        .map_err(|e| format!("Unable to record the Codex session: {e}"))?;

    match session.status {
        SessionStatus::Completed => Ok(ToolOutput::json(&result_json(&session))),
        SessionStatus::TimedOut => Err(ToolError::new(format!(
            "Codex session {} timed out after {timeout_seconds} seconds",
            session.session_id
        ))),
        _ => Err(ToolError::new(format!(
            "Codex session {} failed: {failure}",
            session.session_id
        ))),
    }
}

/// The summary lines of `docs/tool-rules.md#running-codex` step 10 (with the read-only warning of
/// `docs/tools.md#inspect_elroy_with_codex` step 4).
fn summary(session: &CodexSession, request: &RunRequest) -> String {
    let mut lines = vec![format!(
        "Codex session {} ran in {} (scope: {}).",
        session.session_id,
        session.repo_path,
        session.scope.as_str()
    )];
    if session.touched_paths.is_empty() {
        lines.push("No repository changes were detected during this run.".into());
    } else {
        let first: Vec<&str> = session
            .touched_paths
            .iter()
            .take(10)
            .map(String::as_str)
            .collect();
        lines.push(format!(
            "Paths changed during this run: {}",
            first.join(", ")
        ));
    }
    if let Some(commit) = &session.commit_sha {
        lines.push(format!(
            "Committed as {}.",
            commit.get(..12).unwrap_or(commit)
        ));
    }
    if request.warn_on_changes && !session.touched_paths.is_empty() {
        lines.push("Warning: files changed during a read-only inspection.".into());
    }
    lines.push(format!("Final message: {}", session.final_message));
    lines.join("\n")
}

/// The result JSON of `docs/tool-rules.md#running-codex` step 10, keys in order.
fn result_json(session: &CodexSession) -> Value {
    json!({
        "session_id": session.session_id,
        "scope": session.scope.as_str(),
        "repo_path": session.repo_path,
        "status": session.status.as_str(),
        "summary": session.summary,
        "final_message": session.final_message,
        "touched_paths": session.touched_paths,
        "commands": session.commands.iter().map(|c| c.to_json()).collect::<Vec<_>>(),
        "commit": session.commit_sha,
        "session_file_path": session.session_file_path,
    })
}

/// The first `*{session_id}.jsonl` under `{codex home}/sessions`, searching at most 5,000 entries
/// in name order.
fn find_session_file(ctx: &ToolContext, session_id: &str) -> Option<PathBuf> {
    let home = match ctx.services.get::<CodexHome>() {
        Some(h) => h.0.clone(),
        None => std::env::var_os("CODEX_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::home_dir().map(|h| h.join(".codex")))?,
    };
    let suffix = format!("{session_id}.jsonl");
    search(&home.join("sessions"), &suffix)
}

fn search(root: &Path, suffix: &str) -> Option<PathBuf> {
    if !root.is_dir() {
        return None;
    }
    walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .take(SESSION_FILE_SEARCH_LIMIT)
        .filter_map(Result::ok)
        .find(|e| e.file_type().is_file() && e.file_name().to_string_lossy().ends_with(suffix))
        .map(walkdir::DirEntry::into_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(model: Option<&str>) -> RunRequest {
        RunRequest {
            scope: Scope::Contrib,
            directory: PathBuf::from("/h/contrib"),
            codex_prompt: "do it".into(),
            prompt: "do it".into(),
            model: model.map(str::to_owned),
            sandbox: "workspace-write",
            commit: true,
            warn_on_changes: false,
        }
    }

    #[test]
    fn command_words() {
        assert_eq!(
            command_line("python3 'fake codex.py'", &request(Some("o3"))).unwrap(),
            [
                "python3",
                "fake codex.py",
                "exec",
                "--json",
                "--sandbox",
                "workspace-write",
                "--skip-git-repo-check",
                "-m",
                "o3",
                "-C",
                "/h/contrib",
                "do it"
            ]
        );
        assert!(command_line("codex 'unbalanced", &request(None)).is_err());
        assert!(local_session_id().starts_with("local-"));
        assert_eq!(local_session_id().len(), "local-".len() + 12);
    }
}
