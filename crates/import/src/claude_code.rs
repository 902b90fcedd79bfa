//! Claude Code's session logs: `~/.claude/projects/{project}/{session id}.jsonl`, one JSON
//! object a line. Lines of `type` `user` and `assistant` carry `message: {role, content}` with
//! `uuid`, `sessionId`, `cwd`, `timestamp`, `isSidechain` and `isMeta`; a `summary` line names the
//! session. Kept: the person's and Claude's text; each `tool_use` block as one line (tool name
//! and target) and each `tool_result` as one line naming the tool it answers, never file
//! contents. Skipped: sidechains (sub-agents), meta lines, thinking, slash-command echoes, and
//! lines seen before (a resumed session repeats its history under the same `uuid`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ImportError;
use crate::chats::Sink;
use crate::convo::{Conversation, Message, Problem, Role, str_at, time_of, tool_line, tool_target};
use crate::files::{session_lines, stem};

/// Reads one session file into `sink`.
///
/// # Errors
/// [`ImportError`] from the sink.
pub(crate) fn read(file: &Path, sink: &mut Sink<'_>) -> Result<(), ImportError> {
    let Some(lines) = session_lines(file, sink) else {
        return Ok(());
    };
    let mut session = None;
    let mut project = None;
    let mut title = None;
    let mut started = None;
    let mut seen = HashSet::new();
    let mut tools: HashMap<String, String> = HashMap::new();
    let mut messages = Vec::new();
    for (n, line) in &lines {
        let kind = str_at(line, "type").unwrap_or_default();
        if kind == "summary" {
            if title.is_none() {
                title = str_at(line, "summary").map(str::to_owned);
            }
            continue;
        }
        if kind != "user" && kind != "assistant" {
            continue;
        }
        let flag = |key| line.get(key).and_then(Value::as_bool).unwrap_or(false);
        if flag("isSidechain") || flag("isMeta") {
            continue;
        }
        let id = str_at(line, "uuid").map_or_else(|| format!("L{n}"), str::to_owned);
        if !seen.insert(id.clone()) {
            continue;
        }
        if session.is_none() {
            session = str_at(line, "sessionId").map(str::to_owned);
        }
        if project.is_none() {
            project = str_at(line, "cwd").map(PathBuf::from);
        }
        let at = time_of(line.get("timestamp"));
        started = started.or(at);
        let Some(message) = line.get("message") else {
            sink.problem(Problem::new(
                file,
                Some(*n),
                Some(format!("session {}", stem(file))),
                "a user or assistant line without `message`; the session is skipped",
            ));
            return Ok(());
        };
        let role = if kind == "user" {
            Role::User
        } else {
            Role::Assistant
        };
        let mut push = |role, text: String, suffix: usize| {
            let mid = if suffix == 0 {
                id.clone()
            } else {
                format!("{id}/{suffix}")
            };
            messages.push(Message {
                id: mid,
                role,
                text,
                at,
            });
        };
        match message.get("content") {
            Some(Value::String(s)) => {
                if let Some(text) = said(s) {
                    push(role, text, 0);
                }
            }
            Some(Value::Array(blocks)) => {
                let mut words = Vec::new();
                let mut lines = Vec::new();
                for b in blocks {
                    match str_at(b, "type") {
                        Some("text") => {
                            if let Some(t) = str_at(b, "text").and_then(said) {
                                words.push(t);
                            }
                        }
                        Some("tool_use") => {
                            let name = str_at(b, "name").unwrap_or("tool");
                            if let Some(use_id) = str_at(b, "id") {
                                let target = b.get("input").and_then(tool_target);
                                let label = match target {
                                    Some(t) => format!("{name} {t}"),
                                    None => name.to_owned(),
                                };
                                tools.insert(use_id.to_owned(), label);
                            }
                            lines.push(tool_line(name, b.get("input")));
                        }
                        Some("tool_result") => {
                            let of = str_at(b, "tool_use_id")
                                .and_then(|u| tools.get(u))
                                .map_or("a tool", String::as_str);
                            let error = b.get("is_error").and_then(Value::as_bool) == Some(true);
                            lines.push(format!(
                                "[tool result: {of}{}]",
                                if error { ", failed" } else { "" }
                            ));
                        }
                        _ => {}
                    }
                }
                let mut k = 0;
                if !words.is_empty() {
                    push(role, words.join("\n\n"), k);
                }
                for line in lines {
                    k += 1;
                    push(Role::Tool, line, k);
                }
            }
            _ => {}
        }
    }
    if messages.is_empty() {
        return Ok(());
    }
    sink.conversation(Conversation {
        id: session.unwrap_or_else(|| stem(file)),
        title,
        file: file.to_path_buf(),
        project: project.map(crate::convo::Project::Dir),
        started,
        messages,
        ids_unique: true,
    })
}

/// The words of a text block, or `None` for what the person did not say: slash-command echoes
/// and their captured output, and interruption markers.
fn said(text: &str) -> Option<String> {
    let t = text.trim();
    let machine = [
        "<command-",
        "<local-command-",
        "<bash-",
        "[Request interrupted",
    ];
    if t.is_empty() || machine.iter().any(|p| t.starts_with(p)) {
        return None;
    }
    Some(t.to_owned())
}
