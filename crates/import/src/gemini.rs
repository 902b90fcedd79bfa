//! Gemini CLI's session files under `~/.gemini/tmp/{project hash}/chats/`:
//!
//! - `session-*.json` (older): `{sessionId, projectHash, startTime, lastUpdated, summary?,
//!   messages: [{id, timestamp, type, content, toolCalls?}]}`, the whole file rewritten on each
//!   turn;
//! - `session-*.jsonl` (newer, append-only): a `session_metadata` record, message records
//!   `{id, type, timestamp, content}`, `message_update` records (`{type: "message_update", id,
//!   …}` fields that replace the message's), `{"$set": {…}}` records (metadata, or a batch of
//!   `messages`) and `{"$rewindTo": id}` (that message and every later one are gone).
//!
//! Records are deduplicated by `id`: the last version of a message wins, in the place it first
//! had. Kept: `user` and `gemini` messages' text (the `<session_context>` Gemini injects is
//! dropped) and each tool call as one line; `info` and `error` messages and thoughts are dropped.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::ImportError;
use crate::chats::Sink;
use crate::convo::{
    Conversation, FormatError, Message, Problem, Project, Role, str_at, text_of, time_of, tool_line,
};
use crate::files::{json_lines, stem};

/// Reads one session file into `sink`.
///
/// # Errors
/// [`ImportError`] from the sink.
pub(crate) fn read(file: &Path, sink: &mut Sink<'_>) -> Result<(), ImportError> {
    let session = format!("session {}", stem(file));
    let records = if file.extension().is_some_and(|e| e == "jsonl") {
        match json_lines(file) {
            Ok(lines) => lines,
            Err(mut problem) => {
                problem.conversation = Some(session);
                sink.problem(problem);
                return Ok(());
            }
        }
    } else {
        let parsed = std::fs::read(file)
            .map_err(|e| e.to_string())
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).map_err(|e| e.to_string()));
        match parsed {
            Ok(whole) => vec![(1, whole)],
            Err(reason) => {
                sink.problem(Problem::new(
                    file,
                    None,
                    Some(session),
                    format!("not a readable session file ({reason})"),
                ));
                return Ok(());
            }
        }
    };
    let mut log = Log::default();
    for (n, record) in records {
        if let Err(reason) = log.apply(&record) {
            sink.problem(Problem::new(
                file,
                Some(n),
                Some(session),
                reason.to_string(),
            ));
            return Ok(());
        }
    }
    let mut messages = Vec::new();
    for id in &log.order {
        let Some(m) = log.by_id.get(id) else { continue };
        let at = time_of(m.get("timestamp"));
        let role = match str_at(m, "type") {
            Some("user") => Role::User,
            Some("gemini" | "model") => Role::Assistant,
            _ => continue,
        };
        let text = text_of(m.get("content"));
        if !text.is_empty() && !text.starts_with("<session_context>") {
            messages.push(Message {
                id: id.clone(),
                role,
                text,
                at,
            });
        }
        for (i, call) in m
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            messages.push(Message {
                id: format!("{id}/t{i}"),
                role: Role::Tool,
                text: tool_line(str_at(call, "name").unwrap_or("tool"), call.get("args")),
                at,
            });
        }
    }
    if messages.is_empty() {
        return Ok(());
    }
    let meta = &log.meta;
    sink.conversation(Conversation {
        id: meta
            .get("sessionId")
            .and_then(Value::as_str)
            .map_or_else(|| stem(file), str::to_owned),
        title: meta
            .get("summary")
            .and_then(Value::as_str)
            .map(str::to_owned),
        file: file.to_path_buf(),
        project: project_of(file),
        started: time_of(meta.get("startTime")).or_else(|| messages.iter().find_map(|m| m.at)),
        messages,
        ids_unique: false,
    })
}

/// The project a session file belongs to, from its folder `~/.gemini/tmp/{project}/chats/`:
/// newer Gemini CLI versions name the folder with a short slug and write the project's absolute
/// path into its `.project_root` file; older ones name it with the SHA-256 of that path.
fn project_of(file: &Path) -> Option<Project> {
    let folder = file.parent()?.parent()?;
    if let Ok(root) = std::fs::read_to_string(folder.join(".project_root")) {
        let root = root.trim();
        if !root.is_empty() {
            return Some(Project::Dir(root.into()));
        }
    }
    let name = folder.file_name()?.to_str()?;
    (name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| Project::Sha256(name.to_owned()))
}

/// A session replayed record by record.
#[derive(Default)]
struct Log {
    meta: serde_json::Map<String, Value>,
    order: Vec<String>,
    by_id: HashMap<String, Value>,
}

impl Log {
    fn upsert(&mut self, m: &Value) -> Result<(), FormatError> {
        let Some(id) = str_at(m, "id") else {
            return Err(FormatError::MessageWithoutId);
        };
        if !self.by_id.contains_key(id) {
            self.order.push(id.to_owned());
        }
        self.by_id.insert(id.to_owned(), m.clone());
        Ok(())
    }

    fn apply(&mut self, record: &Value) -> Result<(), FormatError> {
        let Some(obj) = record.as_object() else {
            return Err(FormatError::NotAnObject);
        };
        if let Some(set) = obj.get("$set").and_then(Value::as_object) {
            for (k, v) in set {
                if k == "messages" {
                    for m in v.as_array().into_iter().flatten() {
                        self.upsert(m)?;
                    }
                } else {
                    self.meta.insert(k.clone(), v.clone());
                }
            }
            return Ok(());
        }
        if let Some(to) = obj.get("$rewindTo").and_then(Value::as_str) {
            if let Some(at) = self.order.iter().position(|id| id == to) {
                for id in self.order.split_off(at) {
                    self.by_id.remove(&id);
                }
            }
            return Ok(());
        }
        // The whole older file: metadata and its messages.
        if let Some(all) = obj.get("messages").and_then(Value::as_array) {
            for (k, v) in obj {
                if k != "messages" {
                    self.meta.insert(k.clone(), v.clone());
                }
            }
            for m in all {
                self.upsert(m)?;
            }
            return Ok(());
        }
        match str_at(record, "type") {
            Some("session_metadata") => {
                self.meta.extend(obj.clone());
                Ok(())
            }
            Some("message_update") => {
                let Some(id) = str_at(record, "id") else {
                    return Err(FormatError::UpdateWithoutId);
                };
                if let Some(Value::Object(m)) = self.by_id.get_mut(id) {
                    for (k, v) in obj {
                        if k != "type" {
                            m.insert(k.clone(), v.clone());
                        }
                    }
                }
                Ok(())
            }
            Some(_) if obj.contains_key("id") => self.upsert(record),
            // Metadata written as a bare first record (`sessionId`, `projectHash`).
            _ if obj.contains_key("sessionId") => {
                self.meta.extend(obj.clone());
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
