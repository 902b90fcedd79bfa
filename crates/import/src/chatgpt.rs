//! ChatGPT's data export: `conversations.json` (alone or in the export's zip), an array of
//! conversations, each a tree of message nodes (`mapping`: node id → `{message, parent,
//! children}`) whose active branch ends at `current_node`. Only that branch is read, from
//! `current_node` back through `parent`: edits and regenerations the person left are other
//! branches and are not imported. System messages, hidden ones
//! (`metadata.is_visually_hidden_from_conversation`), the model's thoughts and empty messages are
//! dropped; tool calls and tool output become one line each.

use std::collections::HashSet;
use std::path::Path;
use std::rc::Rc;

use serde_json::Value;

use crate::ImportError;
use crate::chats::Sink;
use crate::convo::{Conversation, FormatError, Message, Problem, Role, str_at, time_of};
use crate::stream::{Position, each_element, with_export};

/// Reads a ChatGPT export into `sink`, one conversation at a time.
///
/// # Errors
/// [`ImportError`] from the sink (a memory that cannot be written).
pub(crate) fn read(file: &Path, sink: &mut Sink<'_>) -> Result<(), ImportError> {
    read_array(file, sink, "ChatGPT", conversation)
}

/// Streams the array of conversations of an export (ChatGPT's or Claude.ai's) into `sink`;
/// `parse` turns one element into a conversation or says why it cannot.
pub(crate) fn read_array(
    file: &Path,
    sink: &mut Sink<'_>,
    tool: &str,
    parse: fn(&Path, &Value) -> Result<Conversation, FormatError>,
) -> Result<(), ImportError> {
    let position = Rc::new(Position::default());
    let mut failure: Option<ImportError> = None;
    let mut index = 0usize;
    let mut last_title = String::new();
    let outcome = with_export(file, "conversations.json", |reader, _size| {
        each_element(reader, &position, |element| {
            index += 1;
            sink.bytes(position.bytes());
            match parse(file, &element) {
                Ok(conv) => {
                    last_title = conv.display_title();
                    if let Err(e) = sink.conversation(conv) {
                        failure = Some(e);
                        return false;
                    }
                }
                Err(reason) => {
                    let name = str_at(&element, "title")
                        .or_else(|| str_at(&element, "name"))
                        .map_or_else(
                            || format!("conversation {index} of the file"),
                            |t| format!("conversation {index} of the file, \"{t}\""),
                        );
                    sink.problem(Problem::new(
                        file,
                        Some(position.line()),
                        Some(name),
                        reason.to_string(),
                    ));
                }
            }
            true
        })
    });
    if let Some(e) = failure {
        return Err(e);
    }
    match outcome {
        Err(reason) => sink.problem(Problem::new(file, None, None, reason.to_string())),
        Ok(Ok(())) => {}
        Ok(Err(e)) if e.not_an_array => sink.problem(Problem::new(
            file,
            Some(e.line),
            None,
            format!(
                "not a {tool} export: expected an array of conversations ({})",
                e.message
            ),
        )),
        Ok(Err(e)) => {
            let after = if last_title.is_empty() {
                String::new()
            } else {
                format!(", the one after \"{last_title}\"")
            };
            sink.problem(Problem::new(
                file,
                Some(e.line),
                Some(format!("conversation {} of the file{after}", e.elements + 1)),
                format!(
                    "the file breaks off or is not valid JSON here ({}); this conversation and any after it are not imported",
                    e.message
                ),
            ));
        }
    }
    Ok(())
}

fn conversation(file: &Path, value: &Value) -> Result<Conversation, FormatError> {
    let Some(mapping) = value.get("mapping").and_then(Value::as_object) else {
        return Err(FormatError::NoMapping);
    };
    let id = str_at(value, "conversation_id")
        .or_else(|| str_at(value, "id"))
        .map(str::to_owned)
        .ok_or(FormatError::NoConversationId)?;
    let Some(current) = str_at(value, "current_node") else {
        return Err(FormatError::NoCurrentNode);
    };
    // The active branch, leaf to root.
    let mut branch = Vec::new();
    let mut seen = HashSet::new();
    let mut node_id = Some(current.to_owned());
    while let Some(nid) = node_id {
        if !seen.insert(nid.clone()) {
            return Err(FormatError::ParentLoop(nid));
        }
        let Some(node) = mapping.get(&nid) else {
            return Err(FormatError::MissingNode(nid));
        };
        branch.push((nid, node));
        node_id = str_at(node, "parent").map(str::to_owned);
    }
    branch.reverse();
    let messages = branch
        .into_iter()
        .filter_map(|(nid, node)| message(&nid, node.get("message")?))
        .collect();
    Ok(Conversation {
        id,
        title: str_at(value, "title").map(str::to_owned),
        file: file.to_path_buf(),
        project: None,
        started: time_of(value.get("create_time")),
        messages,
        ids_unique: false,
    })
}

/// One node's message as said, or `None` when it is not part of the conversation as shown.
fn message(node_id: &str, m: &Value) -> Option<Message> {
    let role = m.get("author").and_then(|a| str_at(a, "role"))?;
    let metadata = m.get("metadata");
    let hidden = metadata
        .and_then(|md| md.get("is_visually_hidden_from_conversation"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if hidden || role == "system" {
        return None;
    }
    let content = m.get("content")?;
    let kind = str_at(content, "content_type").unwrap_or("text");
    let at = time_of(m.get("create_time"));
    let recipient = str_at(m, "recipient").unwrap_or("all");
    let one = |role, text: String| {
        Some(Message {
            id: node_id.to_owned(),
            role,
            text,
            at,
        })
    };
    if role == "tool" {
        let name = m
            .get("author")
            .and_then(|a| str_at(a, "name"))
            .unwrap_or("tool");
        return one(Role::Tool, format!("[tool result: {name}]"));
    }
    if role == "assistant" && recipient != "all" {
        return one(Role::Tool, format!("[tool: {recipient}]"));
    }
    match kind {
        "text" | "multimodal_text" => {}
        // Thoughts, reasoning summaries, custom instructions: not what was said.
        _ => return None,
    }
    let parts = content.get("parts").and_then(Value::as_array)?;
    let text = parts
        .iter()
        .filter_map(|p| match p {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::Object(_) => match str_at(p, "content_type") {
                Some(t) if t.contains("image") => Some("[image]".to_owned()),
                Some(t) if t.contains("audio") => str_at(p, "text").map(str::to_owned),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    if text.is_empty() {
        return None;
    }
    let role = match role {
        "user" => Role::User,
        _ => Role::Assistant,
    };
    one(role, text)
}
