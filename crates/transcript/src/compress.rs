//! Context compression (`docs/behaviour.md#context-refresh-and-compression`): keep the system
//! message and the newest whole units that fit a token target.

use elroy_core::{Message, Role};
use jiff::{SignedDuration, Timestamp};

/// The token estimate of one message (We (impl),
/// `docs/behaviour.md#context-refresh-and-compression`): `ceil(chars / 4)`, `chars` = the
/// characters (Unicode scalar values) of the content (0 if null) plus, for each tool call, the
/// characters of its name and its arguments string.
pub fn estimate_tokens(m: &Message) -> usize {
    let chars = m.content.as_deref().map_or(0, |c| c.chars().count())
        + m.tool_calls
            .iter()
            .map(|c| c.name.chars().count() + c.arguments.chars().count())
            .sum::<usize>();
    chars.div_ceil(4)
}

/// Compresses `messages` (the first is the system message) to at most `target` tokens.
///
/// Returns the indices of the kept messages, ascending: index 0 (the system message) and the
/// newest **units** that fit `target - tokens(system)` — an assistant message with tool calls
/// plus the tool messages directly after it is one unit, every other message is its own. The
/// walk from the newest unit backwards stops at the first unit that would exceed the budget or
/// that contains a message created before `now - max_age` (`created_at[i]` belongs to
/// `messages[i]`; `max_age` `None` means no age limit). Messages are never reordered and a tool
/// message never loses its assistant call. An empty input gives an empty result.
pub fn compress(
    messages: &[Message],
    created_at: &[Timestamp],
    target: usize,
    max_age: Option<SignedDuration>,
    now: Timestamp,
) -> Vec<usize> {
    let Some(system) = messages.first() else {
        return Vec::new();
    };
    let budget = target.saturating_sub(estimate_tokens(system));
    let cutoff = max_age.and_then(|age| now.checked_sub(age).ok());
    // Units as index ranges over messages[1..].
    let mut units: Vec<(usize, usize)> = Vec::new();
    let mut i = 1;
    while i < messages.len() {
        let start = i;
        i += 1;
        if messages[start].role == Role::Assistant && !messages[start].tool_calls.is_empty() {
            while i < messages.len() && messages[i].role == Role::Tool {
                i += 1;
            }
        }
        units.push((start, i));
    }
    let mut total = 0usize;
    let mut first_kept = messages.len();
    for &(start, end) in units.iter().rev() {
        let tokens: usize = messages[start..end].iter().map(estimate_tokens).sum();
        let too_old = cutoff
            .is_some_and(|cut| (start..end).any(|k| created_at.get(k).is_some_and(|t| *t < cut)));
        if too_old || total + tokens > budget {
            break;
        }
        total += tokens;
        first_kept = start;
    }
    std::iter::once(0)
        .chain(first_kept..messages.len())
        .collect()
}
