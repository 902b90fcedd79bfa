//! The shape every chat source is read into: a conversation of messages in the order they were
//! said, each with its source's stable id and the time it was said; and the problems found on
//! the way (file, line, reason).

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde_json::Value;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The person.
    User,
    /// The assistant (its words).
    Assistant,
    /// A tool call or result, condensed to one line (`[tool: Edit src/main.rs]`).
    Tool,
}

/// One message as said.
#[derive(Debug, Clone)]
pub(crate) struct Message {
    /// The source's id of the message (a node id, a uuid, `L12` for a line number); stable
    /// across re-reads of the same file and of a grown one.
    pub id: String,
    /// Who said it.
    pub role: Role,
    /// What was said (never empty).
    pub text: String,
    /// When it was said, when the source records it.
    pub at: Option<Timestamp>,
}

/// One conversation (a chat, a session) of a source, its messages on the active branch only.
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    /// The source's id of the conversation (stable across exports).
    pub id: String,
    /// Its title, when the source has one.
    pub title: Option<String>,
    /// The file it was read from.
    pub file: PathBuf,
    /// Where an agent session ran (Claude Code, Codex, Gemini CLI), for `--project`.
    pub project: Option<Project>,
    /// When it started, when known (the first message's time otherwise).
    pub started: Option<Timestamp>,
    /// The messages, in the order they were said.
    pub messages: Vec<Message>,
    /// Whether message ids are unique across conversations (Claude Code's uuids, which a
    /// resumed session repeats in its new file): exchange keys then leave out the conversation.
    pub ids_unique: bool,
}

impl Conversation {
    /// The title, else the first words the person said (at most 60 characters), else the id.
    pub fn display_title(&self) -> String {
        if let Some(title) = self.title.as_deref().map(str::trim)
            && !title.is_empty()
        {
            return clip(title, 80);
        }
        match self.messages.iter().find(|m| m.role == Role::User) {
            Some(first) => clip(first.text.lines().next().unwrap_or_default(), 60),
            None => self.id.clone(),
        }
    }
}

/// Where an agent session ran, as its source records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Project {
    /// The working directory (Claude Code's and Codex's `cwd`, Gemini CLI's `.project_root`).
    Dir(PathBuf),
    /// The SHA-256 (lower-case hex) of the project folder's absolute path: the name of an older
    /// Gemini CLI's folder under `~/.gemini/tmp`, which records no path.
    Sha256(String),
}

impl Project {
    /// Whether the session ran in `want` (an absolute path) or a folder inside it. A hashed
    /// project can only be compared whole: it matches `want` itself (as given or with symbolic
    /// links resolved), not a folder inside it.
    pub fn within(&self, want: &Path) -> bool {
        match self {
            Project::Dir(dir) => dir.starts_with(want),
            Project::Sha256(hash) => {
                // Gemini CLI hashes the path as Node's `path.resolve` writes it: no trailing
                // separator, no `.` parts; rebuilding it from its components does the same.
                let written: PathBuf = want.components().collect();
                let resolved = want.canonicalize().ok();
                std::iter::once(written)
                    .chain(resolved)
                    .any(|p| sha256_hex(&p.to_string_lossy()) == *hash)
            }
        }
    }
}

/// SHA-256 of `text`, lower-case hex.
pub(crate) fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a conversation or session of an export is not of the format elroy reads; the text is
/// the [`Problem`]'s reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FormatError {
    /// A ChatGPT conversation without `mapping`.
    #[error("no `mapping` of messages (unknown export format)")]
    NoMapping,
    /// A ChatGPT conversation without an id.
    #[error("no `conversation_id` or `id`")]
    NoConversationId,
    /// A ChatGPT conversation without `current_node`.
    #[error("no `current_node` (the active branch cannot be told)")]
    NoCurrentNode,
    /// The parents of the active branch loop (at this node).
    #[error("the messages' parents form a loop at node {0}")]
    ParentLoop(String),
    /// A node the branch names that `mapping` lacks.
    #[error("node {0} is named but not in `mapping`")]
    MissingNode(String),
    /// A Claude.ai conversation without `uuid`.
    #[error("no `uuid` (unknown export format)")]
    NoUuid,
    /// A Claude.ai conversation without `chat_messages`.
    #[error("no `chat_messages` (unknown export format)")]
    NoChatMessages,
    /// A Gemini CLI message without `id`.
    #[error("a message without `id`; the session is skipped")]
    MessageWithoutId,
    /// A Gemini CLI record that is not an object.
    #[error("a record that is not a JSON object; the session is skipped")]
    NotAnObject,
    /// A Gemini CLI message update without `id`.
    #[error("a message update without `id`; the session is skipped")]
    UpdateWithoutId,
}

/// Something that kept a conversation (or a whole file) out of the import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// The line (1-based) where the problem was found, when known.
    pub line: Option<u64>,
    /// Which conversation was skipped (`conversation 12 of the file`, a session id), when known.
    pub conversation: Option<String>,
    /// Why, in plain words.
    pub reason: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(c) = &self.conversation {
            write!(f, " ({c})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl Problem {
    pub(crate) fn new(
        file: &Path,
        line: Option<u64>,
        conversation: Option<String>,
        reason: impl Into<String>,
    ) -> Self {
        Problem {
            file: file.to_path_buf(),
            line,
            conversation,
            reason: reason.into(),
        }
    }
}

/// At most `max` characters of `text`, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", text[..cut].trim_end()),
        None => text.to_owned(),
    }
}

/// A timestamp from an ISO 8601 string (`2025-09-30T14:11:04.096Z`) or from seconds since the
/// epoch (ChatGPT's `create_time`, a float).
pub(crate) fn time_of(value: Option<&Value>) -> Option<Timestamp> {
    match value? {
        Value::String(s) => s.parse::<Timestamp>().ok().or_else(|| {
            // Claude.ai writes `2024-03-05T14:02:11.123456+00:00`, which parses; a naive time is UTC.
            s.parse::<jiff::civil::DateTime>()
                .ok()
                .and_then(|dt| jiff::tz::TimeZone::UTC.to_timestamp(dt).ok())
        }),
        Value::Number(n) => {
            let secs = n.as_f64()?;
            if !secs.is_finite() || secs <= 0.0 {
                return None;
            }
            // Whole milliseconds: sub-millisecond digits of a float are noise.
            #[allow(clippy::cast_possible_truncation)]
            let ms = (secs * 1000.0).round() as i64;
            Timestamp::from_millisecond(ms).ok()
        }
        _ => None,
    }
}

/// The string at `key`, when it is one.
pub(crate) fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// A tool call condensed to one line: its name and its target (a path, a command's first line,
/// a pattern or an address), never file contents.
pub(crate) fn tool_line(name: &str, input: Option<&Value>) -> String {
    let target = input.and_then(tool_target);
    match target {
        Some(t) => format!("[tool: {name} {t}]"),
        None => format!("[tool: {name}]"),
    }
}

/// The target of a tool call's input: the first of the keys tools name their target with.
pub(crate) fn tool_target(input: &Value) -> Option<String> {
    // Codex passes arguments as a JSON string.
    if let Value::String(s) = input {
        return serde_json::from_str::<Value>(s)
            .ok()
            .and_then(|v| tool_target(&v));
    }
    for key in [
        "file_path",
        "path",
        "notebook_path",
        "absolute_path",
        "command",
        "cmd",
        "pattern",
        "url",
        "query",
        "description",
    ] {
        match input.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => {
                return Some(clip(s.lines().next().unwrap_or_default(), 80));
            }
            Some(Value::Array(parts)) if !parts.is_empty() => {
                let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
                return Some(clip(&words.join(" "), 80));
            }
            _ => {}
        }
    }
    None
}

/// The text of a content value: a string, or an array of parts whose `text` (or string parts)
/// are joined by blank lines.
pub(crate) fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.trim()),
                Value::Object(_) => str_at(p, "text").map(str::trim),
                _ => None,
            })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}
