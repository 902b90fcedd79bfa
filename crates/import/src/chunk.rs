//! What becomes a memory: a conversation cut into exchanges (a message of the person and what
//! followed it until the next), exchanges grouped into spans, each span one memory named from the
//! conversation's title and date, its text headed by where it came from.
//!
//! Each exchange has a stable key (`{source}:{conversation}:{first message id}`), kept as a hash
//! in the memory's sources, so a second import of the same file, or of a grown one, writes only
//! exchanges no memory holds yet.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::convo::{Conversation, Message, Role};

/// How much of a conversation one memory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Granularity {
    /// One exchange per memory.
    Exchange,
    /// Consecutive exchanges up to [`SPAN_CHARS`] characters per memory (the default; the
    /// measurement behind it is in `docs/import.md#granularity`).
    #[default]
    Span,
    /// The whole conversation (what is new of it) in one memory.
    Session,
}

/// The character budget of a span: exchanges are added while the span stays within it (an
/// exchange longer than the budget is a span of its own). About the 256 word pieces the
/// built-in embedder reads of a text, so the whole memory counts for recall by meaning.
pub const SPAN_CHARS: usize = 1200;

/// One exchange of a conversation.
#[derive(Debug, Clone)]
pub(crate) struct Exchange<'c> {
    /// Position in the conversation (0-based), for names.
    pub index: usize,
    /// The stable key's hash (what the memory's sources keep).
    pub key: i64,
    /// The messages.
    pub messages: &'c [Message],
}

impl Exchange<'_> {
    /// When it was said: its first dated message.
    pub fn at(&self) -> Option<Timestamp> {
        self.messages.iter().find_map(|m| m.at)
    }

    fn chars(&self) -> usize {
        self.messages
            .iter()
            .map(|m| m.text.chars().count() + 12)
            .sum()
    }
}

/// The hash kept for a key: the first 60 bits of its MD5, a positive `i64`.
pub(crate) fn key_hash(key: &str) -> i64 {
    let hex = elroy_memory::md5_hex(key);
    i64::from_str_radix(&hex[..15], 16).unwrap_or_default()
}

/// The conversation's exchanges: a new one starts at each message of the person; what comes
/// before the first belongs to the first.
pub(crate) fn exchanges<'c>(source: &str, conv: &'c Conversation) -> Vec<Exchange<'c>> {
    let mut starts: Vec<usize> = conv
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect();
    match starts.first_mut() {
        Some(first) => *first = 0,
        None => starts.push(0),
    }
    if conv.messages.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(starts.len());
    for (index, pair) in starts.iter().enumerate() {
        let end = starts
            .get(index + 1)
            .copied()
            .unwrap_or(conv.messages.len());
        let messages = &conv.messages[*pair..end];
        let key = if conv.ids_unique {
            format!("{source}:{}", messages[0].id)
        } else {
            format!("{source}:{}:{}", conv.id, messages[0].id)
        };
        out.push(Exchange {
            index,
            key: key_hash(&key),
            messages,
        });
    }
    out
}

/// Groups consecutive exchanges (`runs` of them with nothing left out between) into spans.
pub(crate) fn spans<'a, 'c>(
    run: &'a [Exchange<'c>],
    granularity: Granularity,
) -> Vec<&'a [Exchange<'c>]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (i, ex) in run.iter().enumerate() {
        let chars = ex.chars();
        let close = match granularity {
            Granularity::Exchange => i > start,
            Granularity::Span => i > start && size + chars > SPAN_CHARS,
            Granularity::Session => false,
        };
        if close {
            out.push(&run[start..i]);
            start = i;
            size = 0;
        }
        size += chars;
    }
    if start < run.len() {
        out.push(&run[start..]);
    }
    out
}

/// The memory of one span: its name, text and the time its words were said.
pub(crate) struct Rendered {
    pub name: String,
    pub text: String,
    pub at: Option<Timestamp>,
}

/// Renders a span of `conv` from `tool` (`ChatGPT`): the name `{title} ({date})`, with
/// ` #{n}` when the span starts at the conversation's n-th exchange (n > 1); the text a header
/// line naming the tool, the conversation, its date and file, then one line per message.
pub(crate) fn render(
    tool: &str,
    conv: &Conversation,
    span: &[Exchange<'_>],
    tz: &TimeZone,
) -> Rendered {
    let title = conv.display_title();
    let at = span.iter().find_map(Exchange::at).or(conv.started);
    let local = |t: Timestamp, fmt: &str| t.to_zoned_datetime(tz.clone()).strftime(fmt).to_string();
    let date = at.map(|t| local(t, "%Y-%m-%d"));
    let first = span.first().map_or(0, |e| e.index);
    let mut name = match &date {
        Some(d) => format!("{title} ({d})"),
        None => title,
    };
    if first > 0 {
        name.push_str(&format!(" #{}", first + 1));
    }
    let mut text = source_line(&format!("Imported from {tool}"), conv, at, tz);
    text.push('\n');
    let assistant = if tool == "Claude Code" {
        "Claude"
    } else {
        tool
    };
    for ex in span {
        for m in ex.messages {
            text.push('\n');
            match m.role {
                Role::User => text.push_str("User: "),
                Role::Assistant => {
                    text.push_str(assistant);
                    text.push_str(": ");
                }
                Role::Tool => {}
            }
            text.push_str(m.text.trim());
        }
    }
    Rendered { name, text, at }
}

/// The line that heads an imported memory and names where its words come from:
/// `{lead}: conversation "{title}", {local date and time} ({file})`.
pub(crate) fn source_line(
    lead: &str,
    conv: &Conversation,
    at: Option<Timestamp>,
    tz: &TimeZone,
) -> String {
    let when = at.map_or_else(
        || "date unknown".to_owned(),
        |t| {
            t.to_zoned_datetime(tz.clone())
                .strftime("%Y-%m-%d %H:%M")
                .to_string()
        },
    );
    format!(
        "{lead}: conversation \"{}\", {when} ({})",
        conv.display_title(),
        conv.file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn conv(texts: &[(Role, &str)]) -> Conversation {
        Conversation {
            id: "c1".into(),
            title: Some("Trip".into()),
            file: PathBuf::from("x.json"),
            project: None,
            started: None,
            ids_unique: false,
            messages: texts
                .iter()
                .enumerate()
                .map(|(i, (role, text))| Message {
                    id: format!("m{i}"),
                    role: *role,
                    text: (*text).to_owned(),
                    at: Some(Timestamp::from_second(1_700_000_000 + i as i64 * 60).unwrap()),
                })
                .collect(),
        }
    }

    #[test]
    fn exchanges_start_at_each_user_message_and_keys_are_stable() {
        let c = conv(&[
            (Role::Assistant, "hello"),
            (Role::User, "a"),
            (Role::Assistant, "b"),
            (Role::Tool, "[tool: x]"),
            (Role::User, "c"),
        ]);
        let ex = exchanges("chatgpt", &c);
        assert_eq!(ex.len(), 2);
        assert_eq!(ex[0].messages.len(), 4);
        assert_eq!(ex[1].messages.len(), 1);
        assert_eq!(ex[1].key, key_hash("chatgpt:c1:m4"));
        assert_ne!(ex[0].key, ex[1].key);
        assert!(ex.iter().all(|e| e.key > 0));
    }

    #[test]
    fn spans_follow_the_granularity() {
        let long = "x".repeat(700);
        let c = conv(&[
            (Role::User, &long),
            (Role::User, "short"),
            (Role::User, &long),
            (Role::User, "short"),
        ]);
        let ex = exchanges("chatgpt", &c);
        assert_eq!(spans(&ex, Granularity::Exchange).len(), 4);
        assert_eq!(spans(&ex, Granularity::Session).len(), 1);
        let s = spans(&ex, Granularity::Span);
        assert_eq!(s.len(), 2, "700+5 fit, the next 700 does not");
        assert_eq!(s[1][0].index, 2);
        let r = render("ChatGPT", &c, s[1], &TimeZone::UTC);
        assert_eq!(r.name, "Trip (2023-11-14) #3");
        assert!(r.text.starts_with(
            "Imported from ChatGPT: conversation \"Trip\", 2023-11-14 22:15 (x.json)\n\nUser: xxx"
        ));
    }
}
