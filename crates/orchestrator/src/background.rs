//! Work after the reply (`docs/behaviour.md#context-refresh-and-compression`,
//! `docs/behaviour.md#automatic-memory-creation`, `docs/behaviour.md#self-reflection`): automatic
//! memory creation every `messages_between_memory` user messages, self-reflection, and context
//! compression over `max_tokens`; consolidation (`docs/behaviour.md#consolidation`) is in
//! `consolidation.rs`.

use elroy_core::{Message, Role};
use elroy_llm::ChatRequest;
use elroy_memory::MemorySource;
use elroy_transcript::{ContextItem, PinContent, ResolvedEffect, compress, estimate_tokens};

use crate::ports::{Reflection, recorded};
use crate::{BackgroundError, Session};

/// The system text of automatic memory creation (`docs/behaviour.md#automatic-memory-creation` step
/// 2, ours); `{assistant}` is replaced.
pub const MEMORY_PROMPT: &str = "You write long-term memories for {assistant}, a personal assistant. From this conversation, write one memory about the user and their world that will be useful later: facts, plans, preferences and commitments. Write dates as YYYY-MM-DD. Reply in markdown: the first line is `# ` followed by a specific title about one topic, then the memory text in at most 300 words.";

/// The correction phrases self-reflection looks for (`docs/behaviour.md#self-reflection` step 1),
/// in order.
pub const REFLECTION_PHRASES: [&str; 5] = [
    "you forgot",
    "that's wrong",
    "not quite",
    "reflect on that",
    "you should improve",
];

/// The title of self-reflection's feature request (`docs/behaviour.md#self-reflection` step 3).
pub const REFLECTION_TITLE: &str = "Improve response handling after direct user corrections";

/// The versioned-home label of a memory made from the context
/// (`docs/behaviour.md#automatic-memory-creation`,
/// `docs/behaviour.md#context-refresh-and-compression` step 3.2).
const AUTOMATIC_MEMORY_LABEL: &str = "automatic memory";

/// The system text of the refresh summary (`docs/behaviour.md#context-refresh-and-compression` step
/// 3.3, ours); `{assistant}` is replaced.
pub const SUMMARY_PROMPT: &str = "Summarise this conversation from the point of view of {assistant}, in the first person, in at most 300 words. Keep names, dates (YYYY-MM-DD), decisions and open tasks.";

/// One step of the work after a reply, as named in logs and failure reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackgroundStep {
    /// Automatic memory creation (`docs/behaviour.md#automatic-memory-creation`).
    AutomaticMemory,
    /// Self-reflection (`docs/behaviour.md#self-reflection`).
    SelfReflection,
    /// Context refresh and compression (`docs/behaviour.md#context-refresh-and-compression`).
    ContextRefresh,
    /// Memory consolidation (`docs/behaviour.md#consolidation`).
    Consolidation,
}

impl std::fmt::Display for BackgroundStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BackgroundStep::AutomaticMemory => "automatic memory",
            BackgroundStep::SelfReflection => "self-reflection",
            BackgroundStep::ContextRefresh => "context refresh",
            BackgroundStep::Consolidation => "consolidation",
        })
    }
}

/// A failure of one background step (or of one part of it); the other steps ran anyway.
/// Displays as `{step}: {message}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{step}: {message}")]
pub struct BackgroundFailure {
    /// The step that failed.
    pub step: BackgroundStep,
    /// What failed, in words (a model or store error).
    pub message: String,
}

impl BackgroundFailure {
    fn new(step: BackgroundStep, message: impl Into<String>) -> Self {
        BackgroundFailure {
            step,
            message: message.into(),
        }
    }
}

/// What the background work did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AfterTurn {
    /// The title of the memory created automatically, if one was.
    pub memory_created: Option<String>,
    /// Whether the context was compressed.
    pub compressed: bool,
    /// The trigger phrase when self-reflection recorded a feature request.
    pub reflected: Option<String>,
    /// What consolidation did, when it was due (`docs/behaviour.md#consolidation`).
    pub consolidated: Option<crate::Consolidation>,
    /// Every failure, in the order it happened; each was also logged as a warning. A failed step
    /// never stops the steps after it.
    pub failures: Vec<BackgroundFailure>,
}

/// Self-reflection's trigger (`docs/behaviour.md#self-reflection` steps 1–2): the newest of
/// `user_messages` (oldest first) containing, ignoring case, one of [`REFLECTION_PHRASES`] (the
/// first phrase of the list that it contains), and its excerpt: whitespace runs collapsed, trimmed,
/// and when longer than 240 characters its first 237 characters right-trimmed plus `...`.
pub fn reflection_trigger(user_messages: &[&str]) -> Option<(String, String)> {
    user_messages.iter().rev().find_map(|m| {
        let lower = m.to_lowercase();
        let phrase = REFLECTION_PHRASES.iter().find(|p| lower.contains(*p))?;
        let collapsed = m.split_whitespace().collect::<Vec<_>>().join(" ");
        let excerpt = if collapsed.chars().count() > 240 {
            let cut: String = collapsed.chars().take(237).collect();
            format!("{}...", cut.trim_end())
        } else {
            collapsed
        };
        Some(((*phrase).to_owned(), excerpt))
    })
}

/// Forms one memory from `conversation` the way elroy forms its own
/// (`docs/behaviour.md#automatic-memory-creation` steps 2–3): `model` is asked with
/// [`MEMORY_PROMPT`] (`{assistant}` replaced by `assistant`) about the conversation text, and its
/// reply split by [`parse_memory_reply`] into a title and a text. `None` when the reply is empty.
/// Automatic memory creation and `elroy import --summarize` both call it.
///
/// # Errors
/// [`elroy_llm::LlmError`] when the model call fails.
pub async fn form_memory(
    model: &dyn elroy_llm::ChatModel,
    assistant: &str,
    conversation: String,
) -> Result<Option<(String, String)>, elroy_llm::LlmError> {
    let request = ChatRequest {
        messages: vec![
            Message::system(MEMORY_PROMPT.replace("{assistant}", assistant)),
            Message::user(conversation),
        ],
        ..ChatRequest::default()
    };
    let reply = model.chat(&request).await?;
    Ok(parse_memory_reply(&reply.content))
}

/// Splits a model reply into a memory title and text (`docs/behaviour.md#automatic-memory-creation`
/// step 3): the first line starting with `#` gives the title (leading `#`s and whitespace removed),
/// the lines after it (trimmed) the text; without such a line, the first non-empty line is the
/// title. An empty text means the title is the text. `None` for an empty reply.
pub fn parse_memory_reply(reply: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = reply.lines().collect();
    let heading = lines.iter().position(|l| l.trim_start().starts_with('#'));
    let (title_index, title) = match heading {
        Some(i) => (i, lines[i].trim_start().trim_start_matches('#').trim()),
        None => {
            let i = lines.iter().position(|l| !l.trim().is_empty())?;
            (i, lines[i].trim())
        }
    };
    if title.is_empty() {
        return None;
    }
    let text = lines[title_index + 1..].join("\n").trim().to_owned();
    let text = if text.is_empty() {
        title.to_owned()
    } else {
        text
    };
    Some((title.to_owned(), text))
}

impl Session {
    /// Runs the post-turn background work (call it after the reply was shown), every step even
    /// when an earlier one failed:
    ///
    /// 1. `docs/behaviour.md#automatic-memory-creation`: when `messages_between_memory > 0` and
    ///    `messages_since_memory` reached it, the fast model writes one memory from the active
    ///    context (rendered as `docs/tools.md#get_source_content_for_memory` without the heading
    ///    and range line); it is created op-tracked with the current context version as its source,
    ///    and pinned (one version, reason `pin`).
    /// 2. `docs/behaviour.md#self-reflection`: self-reflection.
    /// 3. `docs/behaviour.md#context-refresh-and-compression`: the context refresh and compression
    ///    over `max_tokens`.
    /// 4. `docs/behaviour.md#consolidation`: consolidation, when an op-tracked creation
    ///    (`create_memory` during the turn, step 1 or the refresh) made it due
    ///    ([`Session::consolidate`]); runs last so it sees every memory created before it.
    ///
    /// Each failure (a model answering an error, a store that cannot be written, a part of the
    /// refresh such as its summary) is logged as a warning and collected in
    /// [`AfterTurn::failures`] for the front-end to show; the turn itself is already persisted.
    /// Elroy runs these jobs independently too (each in its own thread).
    pub async fn after_turn(&self) -> AfterTurn {
        let mut report = AfterTurn::default();
        let failed = |report: &mut AfterTurn, step: BackgroundStep, message: String| {
            let failure = BackgroundFailure::new(step, message);
            tracing::warn!("background work after the turn: {failure}");
            report.failures.push(failure);
        };
        match self.maybe_create_memory().await {
            Ok(created) => report.memory_created = created,
            Err(e) => failed(&mut report, BackgroundStep::AutomaticMemory, e.to_string()),
        }
        match self.maybe_reflect() {
            Ok(reflected) => report.reflected = reflected,
            Err(e) => failed(&mut report, BackgroundStep::SelfReflection, e.to_string()),
        }
        let mut partial = Vec::new();
        match self.refresh_if_needed(&mut partial).await {
            Ok(compressed) => report.compressed = compressed,
            Err(e) => failed(&mut report, BackgroundStep::ContextRefresh, e.to_string()),
        }
        for message in partial {
            failed(&mut report, BackgroundStep::ContextRefresh, message);
        }
        match self.maybe_consolidate().await {
            Ok(consolidated) => {
                if let Some(c) = &consolidated {
                    for ids in &c.failed {
                        failed(
                            &mut report,
                            BackgroundStep::Consolidation,
                            format!("the memories {ids:?} were left unmerged"),
                        );
                    }
                }
                report.consolidated = consolidated;
            }
            Err(e) => failed(&mut report, BackgroundStep::Consolidation, e.to_string()),
        }
        report
    }

    /// `docs/behaviour.md#self-reflection`: when the number of user messages with content in the
    /// active context is a positive multiple of `messages_between_self_reflection`, a correction
    /// phrase in the newest such message is recorded as the self-reflection feature request.
    fn maybe_reflect(&self) -> Result<Option<String>, BackgroundError> {
        let p = &self.parts;
        let every = p.settings.messages_between_self_reflection;
        let Some(sink) = &p.reflections else {
            return Ok(None);
        };
        if every <= 0 {
            return Ok(None);
        }
        let stored = p.transcript.active_context(p.user_id)?;
        let users: Vec<&str> = stored
            .iter()
            .filter(|s| s.message.role == Role::User)
            .filter_map(|s| s.message.content.as_deref())
            .filter(|c| !c.is_empty())
            .collect();
        let count = i64::try_from(users.len()).unwrap_or(0);
        if count < every || count % every != 0 {
            return Ok(None);
        }
        let Some((phrase, excerpt)) = reflection_trigger(&users) else {
            return Ok(None);
        };
        let proposal = Reflection {
            title: REFLECTION_TITLE.to_owned(),
            summary: "When the user corrects the assistant explicitly, treat it as a sign to re-check the answer and recover within the same turn.".to_owned(),
            rationale: format!("Recent feedback contained the phrase '{phrase}', which suggests an incomplete or wrong answer."),
            phrase: phrase.clone(),
            excerpt,
        };
        let now = p.time.now();
        recorded(p.history.as_deref(), now, "self-reflection", || {
            sink.record_reflection(now, &proposal)
        })??;
        Ok(Some(phrase))
    }

    async fn maybe_create_memory(&self) -> Result<Option<String>, BackgroundError> {
        let p = &self.parts;
        let every = p.settings.messages_between_memory;
        if p.memory.is_none() || every <= 0 {
            return Ok(None);
        }
        let tracker = p.db.op_tracker(p.user_id)?;
        if tracker.messages_since_memory < every {
            return Ok(None);
        }
        self.memory_from_context().await
    }

    /// The active context rendered as `docs/tools.md#get_source_content_for_memory` without the
    /// heading and the range line.
    fn conversation_text(&self) -> Result<String, BackgroundError> {
        let p = &self.parts;
        let stored = p.transcript.active_context(p.user_id)?;
        let prefs = p.db.preferences(p.user_id)?;
        let rendered = elroy_transcript::render_snapshot(
            &stored,
            &p.time.tz,
            prefs.preferred_name.as_deref(),
            prefs.assistant_name.as_deref(),
        );
        let body = rendered
            .strip_prefix("Conversation Summary\n\n")
            .unwrap_or(&rendered);
        Ok(body
            .rsplit_once("\n\n")
            .map_or("", |(head, _)| head)
            .to_owned())
    }

    /// Asks the fast model with `system` about `text`; its reply text.
    async fn ask_fast_model(
        &self,
        system: String,
        text: String,
    ) -> Result<String, BackgroundError> {
        let p = &self.parts;
        let request = ChatRequest {
            messages: vec![Message::system(system), Message::user(text)],
            ..ChatRequest::default()
        };
        let model = p.fast_model.as_ref().unwrap_or(&p.model);
        let reply = model.chat(&request).await?;
        Ok(reply.content)
    }

    /// `docs/behaviour.md#automatic-memory-creation` formation: one memory from the whole active
    /// context, op-tracked, sourced from the current context version, pinned (one version, reason
    /// `pin`). Its name, or `None` when the model's reply is empty or there is no memory store.
    async fn memory_from_context(&self) -> Result<Option<String>, BackgroundError> {
        let p = &self.parts;
        let Some(store) = &p.memory else {
            return Ok(None);
        };
        let body = self.conversation_text()?;
        let model = p.fast_model.as_ref().unwrap_or(&p.model);
        let Some((title, text)) = form_memory(model.as_ref(), &self.assistant_name(), body).await?
        else {
            return Ok(None);
        };
        let now = p.time.now();
        let version = p.transcript.current_version(p.user_id)?.unwrap_or(0);
        // With a versioned home the new file is its own commit, `automatic memory: {path}`
        // (undoable like a tool call), not an `external edit` at the next start.
        let memory = recorded(p.history.as_deref(), now, AUTOMATIC_MEMORY_LABEL, || {
            store.create(&title, &text, &[MemorySource::context(version)], now)
        })??;
        store.record_op_tracked(p.settings.memories_between_consolidation)?;
        if let Some((metadata, rendering)) = store.recall_entry(memory.id)? {
            p.transcript.apply_effects(
                p.user_id,
                now,
                &[ResolvedEffect::Pin(PinContent {
                    metadata,
                    rendering,
                })],
            )?;
        }
        Ok(Some(memory.name))
    }

    /// `docs/behaviour.md#context-refresh-and-compression`: when the active context has a user
    /// message and more than `max_tokens` estimated tokens: a memory of the whole context (pinned),
    /// then compression to `max_tokens / 3` plus a `context_summary` pair (`Recent conversation
    /// summary: …`) at the end, stored as one version (reason `refresh`). A failed memory or
    /// summary call leaves that part out and is pushed to `partial`; the compression happens
    /// anyway.
    async fn refresh_if_needed(&self, partial: &mut Vec<String>) -> Result<bool, BackgroundError> {
        let p = &self.parts;
        let stored = p.transcript.active_context(p.user_id)?;
        let tokens: usize = stored.iter().map(|s| estimate_tokens(&s.message)).sum();
        let has_user = stored.iter().any(|s| s.message.role == Role::User);
        if !has_user || tokens <= p.settings.max_tokens {
            return Ok(false);
        }
        if let Err(e) = self.memory_from_context().await {
            partial.push(format!(
                "the memory of the context could not be created: {e}"
            ));
        }
        let summary = {
            let system = SUMMARY_PROMPT.replace("{assistant}", &self.assistant_name());
            let asked = match self.conversation_text() {
                Ok(body) => self.ask_fast_model(system, body).await,
                Err(e) => Err(e),
            };
            match asked {
                Ok(text) if !text.trim().is_empty() => Some(text.trim().to_owned()),
                Ok(_) => None,
                Err(e) => {
                    partial.push(format!("no summary of the compressed conversation: {e}"));
                    None
                }
            }
        };
        let stored = p.transcript.active_context(p.user_id)?;
        let messages: Vec<_> = stored.iter().map(|s| s.message.clone()).collect();
        let created: Vec<_> = stored.iter().map(|s| s.created_at).collect();
        let max_age =
            jiff::SignedDuration::from_secs((p.settings.max_context_age_minutes * 60.0) as i64);
        let now = p.time.now();
        let keep = compress(
            &messages,
            &created,
            p.settings.max_tokens / 3,
            Some(max_age),
            now,
        );
        let mut target: Vec<ContextItem> = keep
            .iter()
            .filter_map(|&i| stored.get(i).map(|s| ContextItem::Stored(s.id)))
            .collect();
        if let Some(summary) = summary {
            target.extend(
                Message::synthetic_pair(
                    &crate::new_call_id(),
                    "context_summary",
                    format!("Recent conversation summary: {summary}"),
                )
                .into_iter()
                .map(ContextItem::New),
            );
        }
        p.transcript
            .set_context(p.user_id, "refresh", now, &target)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflection_trigger_finds_the_newest_correction() {
        assert_eq!(reflection_trigger(&["hello", "thanks"]), None);
        assert_eq!(
            reflection_trigger(&["You forgot my   dentist\nappointment", "ok"]),
            Some((
                "you forgot".into(),
                "You forgot my dentist appointment".into()
            ))
        );
        let long = format!("Not quite. {}", "word ".repeat(100));
        let (phrase, excerpt) = reflection_trigger(&[long.as_str()]).unwrap();
        assert_eq!(phrase, "not quite");
        assert!(excerpt.ends_with("..."));
        // 237 characters ("... word w") plus "...".
        assert_eq!(excerpt.chars().count(), 240);
        assert!(excerpt.ends_with(" w..."));
    }

    #[test]
    fn memory_reply_parsing() {
        assert_eq!(
            parse_memory_reply("# User's dog Biscuit\n\nThe dog is named Biscuit.\n"),
            Some((
                "User's dog Biscuit".into(),
                "The dog is named Biscuit.".into()
            ))
        );
        assert_eq!(
            parse_memory_reply("\nTrip to Lisbon\nOn 2026-12-01.\n"),
            Some(("Trip to Lisbon".into(), "On 2026-12-01.".into()))
        );
        assert_eq!(
            parse_memory_reply("## Only a title"),
            Some(("Only a title".into(), "Only a title".into()))
        );
        assert_eq!(parse_memory_reply("  \n"), None);
    }
}
