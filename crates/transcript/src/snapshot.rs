//! The conversation snapshot rendering (`docs/tools.md#get_source_content_for_memory`,
//! `ContextMessageSet`), shared by `get_source_content_for_memory` (elroy-tools-memory) and
//! automatic memory creation (elroy-orchestrator): it lives with the messages it renders.

use elroy_core::Role;
use jiff::tz::TimeZone;

use crate::StoredMessage;

fn dt(m: &StoredMessage, tz: &TimeZone) -> String {
    m.created_at
        .to_zoned_datetime(tz.clone())
        .strftime("%A, %B %d, %Y %I:%M %p %Z")
        .to_string()
}

/// Renders a conversation snapshot (`docs/tools.md#get_source_content_for_memory`,
/// `ContextMessageSet`): `Conversation Summary`, one part per message (`SYSTEM (…)`, `{USER} (…)`,
/// `{ASSISTANT} (…)`, tool-call requests, `TOOL CALL RESULT (…)`), then `Messages from {first} to
/// {last}` over user messages (or `No messages in context`), joined by blank lines. Times are local
/// (D7).
pub fn render_snapshot(
    messages: &[StoredMessage],
    tz: &TimeZone,
    preferred_name: Option<&str>,
    assistant_name: Option<&str>,
) -> String {
    let user_label = preferred_name
        .filter(|n| !n.is_empty())
        .map_or_else(|| "USER".to_owned(), str::to_uppercase);
    let assistant_label = assistant_name
        .filter(|n| !n.is_empty())
        .unwrap_or("ASSISTANT");
    let mut parts = vec!["Conversation Summary".to_owned()];
    let mut user_times = Vec::new();
    for m in messages {
        let Some(content) = m.message.content.as_deref() else {
            // NULL content is skipped, but an assistant's tool calls still show.
            if m.message.role == Role::Assistant {
                for call in &m.message.tool_calls {
                    parts.push(format!(
                        "{assistant_label} TOOL CALL REQUEST ({}): function name: {}, arguments: {}",
                        dt(m, tz),
                        call.name,
                        call.arguments
                    ));
                }
            }
            continue;
        };
        let when = dt(m, tz);
        match m.message.role {
            Role::System => parts.push(format!("SYSTEM ({when}): {content}")),
            Role::User => {
                user_times.push(when.clone());
                parts.push(format!("{user_label} ({when}): {content}"));
            }
            Role::Assistant => {
                if !content.is_empty() {
                    parts.push(format!("{assistant_label} ({when}): {content}"));
                }
                for call in &m.message.tool_calls {
                    parts.push(format!(
                        "{assistant_label} TOOL CALL REQUEST ({when}): function name: {}, arguments: {}",
                        call.name, call.arguments
                    ));
                }
            }
            Role::Tool => parts.push(format!("TOOL CALL RESULT ({when}): {content}")),
        }
    }
    parts.push(match (user_times.first(), user_times.last()) {
        (Some(first), Some(last)) => format!("Messages from {first} to {last}"),
        _ => "No messages in context".to_owned(),
    });
    parts.join("\n\n")
}
