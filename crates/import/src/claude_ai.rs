//! Claude.ai's data export: `conversations.json` (alone or in the export's zip), an array of
//! conversations `{uuid, name, created_at, chat_messages: [{uuid, sender, text, content,
//! created_at, parent_message_uuid}]}`. `sender` is `human` or `assistant`; `content` blocks of
//! type `text` are the words, `tool_use` and `tool_result` blocks become one line each, and
//! thinking is dropped. When messages name their parent, only the branch that ends at the last
//! message is read (edits and retries left behind are other branches).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use crate::ImportError;
use crate::chats::Sink;
use crate::convo::{Conversation, FormatError, Message, Role, str_at, text_of, time_of, tool_line};

/// Reads a Claude.ai export into `sink`, one conversation at a time.
///
/// # Errors
/// [`ImportError`] from the sink.
pub(crate) fn read(file: &Path, sink: &mut Sink<'_>) -> Result<(), ImportError> {
    crate::chatgpt::read_array(file, sink, "Claude.ai", conversation)
}

fn conversation(file: &Path, value: &Value) -> Result<Conversation, FormatError> {
    let id = str_at(value, "uuid").ok_or(FormatError::NoUuid)?;
    let Some(all) = value.get("chat_messages").and_then(Value::as_array) else {
        return Err(FormatError::NoChatMessages);
    };
    let chosen = active_branch(all);
    let mut messages = Vec::new();
    for m in chosen {
        let mid = str_at(m, "uuid").unwrap_or_default().to_owned();
        let at = time_of(m.get("created_at"));
        let role = match str_at(m, "sender") {
            Some("human") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => continue,
        };
        let mut words = Vec::new();
        let mut tools = Vec::new();
        match m.get("content").and_then(Value::as_array) {
            Some(blocks) if !blocks.is_empty() => {
                for b in blocks {
                    match str_at(b, "type") {
                        Some("text") => {
                            if let Some(t) = str_at(b, "text").map(str::trim)
                                && !t.is_empty()
                            {
                                words.push(t.to_owned());
                            }
                        }
                        Some("tool_use") => {
                            tools.push(tool_line(
                                str_at(b, "name").unwrap_or("tool"),
                                b.get("input"),
                            ));
                        }
                        Some("tool_result") => {
                            let name = str_at(b, "name").unwrap_or("tool");
                            tools.push(format!("[tool result: {name}]"));
                        }
                        _ => {}
                    }
                }
            }
            _ => {
                let t = text_of(m.get("text"));
                if !t.is_empty() {
                    words.push(t);
                }
            }
        }
        if !words.is_empty() {
            messages.push(Message {
                id: mid.clone(),
                role,
                text: words.join("\n\n"),
                at,
            });
        }
        for (i, line) in tools.into_iter().enumerate() {
            messages.push(Message {
                id: format!("{mid}/t{i}"),
                role: Role::Tool,
                text: line,
                at,
            });
        }
    }
    Ok(Conversation {
        id: id.to_owned(),
        title: str_at(value, "name").map(str::to_owned),
        file: file.to_path_buf(),
        project: None,
        started: time_of(value.get("created_at")),
        messages,
        ids_unique: false,
    })
}

/// The messages on the branch ending at the last message, when messages name their parents;
/// all of them in order otherwise.
fn active_branch(all: &[Value]) -> Vec<&Value> {
    let by_id: HashMap<&str, &Value> = all
        .iter()
        .filter_map(|m| Some((str_at(m, "uuid")?, m)))
        .collect();
    let has_parents = all
        .iter()
        .any(|m| str_at(m, "parent_message_uuid").is_some_and(|p| by_id.contains_key(p)));
    if !has_parents {
        return all.iter().collect();
    }
    let mut branch = Vec::new();
    let mut seen = HashSet::new();
    let mut at = all.last();
    while let Some(m) = at {
        let id = str_at(m, "uuid").unwrap_or_default();
        if !seen.insert(id) {
            break;
        }
        branch.push(m);
        at = str_at(m, "parent_message_uuid").and_then(|p| by_id.get(p).copied());
    }
    branch.reverse();
    branch
}
