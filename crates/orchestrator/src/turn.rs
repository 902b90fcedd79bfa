//! One user turn (`docs/behaviour.md#one-turn`, `docs/behaviour.md#the-model-and-tool-loop`,
//! `docs/behaviour.md#persisting-a-turn`).

use std::collections::HashMap;

use elroy_core::{Caller, Effect, Message, RecallItem, Role, ToolCall, ToolContext, ToolResult};
use elroy_llm::{ChatRequest, LlmError, StreamDelta, TextEvent, TextProcessor};
use elroy_transcript::{ContextItem, ResolvedEffect};

use crate::events::{InjectedKind, TurnEvent, fenced};
use crate::gate::should_recall;
use crate::ports::RecallQuery;
use crate::session::Session;

/// The synthetic tool name of due-item pairs.
pub const DUE_ITEMS_TOOL: &str = "get_due_items";
/// The synthetic tool name of recall pairs.
pub const FAST_RECALL_TOOL: &str = "get_fast_recall";

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnInput {
    /// The user's message.
    pub text: String,
    /// A hidden turn: the message is sent but not persisted (the restart resume message, with
    /// tools off: [`TurnInput::hidden`]; a proactive turn, tools on: [`TurnInput::proactive`]).
    pub hidden: bool,
    /// Offer tools (default true).
    pub enable_tools: bool,
    /// Force the first round to call this tool (`elroy message --tool NAME`).
    pub forced_tool: Option<String>,
}

impl TurnInput {
    /// A normal turn with tools.
    pub fn new(text: impl Into<String>) -> Self {
        TurnInput {
            text: text.into(),
            hidden: false,
            enable_tools: true,
            forced_tool: None,
        }
    }

    /// A hidden turn (`docs/behaviour.md#restarting-a-session`).
    pub fn hidden(text: impl Into<String>) -> Self {
        TurnInput {
            hidden: true,
            enable_tools: false,
            ..TurnInput::new(text)
        }
    }

    /// A turn the assistant starts on its own (`proactive_reminders`): `text`
    /// tells the model what happened (a due item came due) and is sent but never stored, as for a
    /// hidden turn; unlike one, tools stay on so the model can act on the item. The reply is
    /// stored as any other; due items are injected as at the start of every turn (K5).
    pub fn proactive(text: impl Into<String>) -> Self {
        TurnInput {
            hidden: true,
            ..TurnInput::new(text)
        }
    }
}

/// What a finished turn produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The reply of the last round as the user reads it: text outside thought tags, code blocks
    /// fenced, trimmed.
    pub reply: String,
    /// The resume message of a `Restart` effect (the last one wins), for the front-end
    /// (`docs/behaviour.md#restarting-a-session`).
    pub restart: Option<String>,
    /// Model requests made.
    pub requests: usize,
}

/// Why a turn failed. The user message stays stored (`docs/behaviour.md#one-turn` "Failures").
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The model request failed (after retries).
    #[error("{0}")]
    Model(#[from] LlmError),
    /// The transcript (context window, persistence) failed.
    #[error(transparent)]
    Transcript(#[from] elroy_transcript::TranscriptError),
    /// The database failed.
    #[error(transparent)]
    Database(#[from] elroy_db::DbError),
}

/// The turn's working state: the context as loaded (with the stored id of each message) and the
/// new messages.
struct Work {
    context: Vec<Message>,
    context_ids: Vec<i64>,
    new: Vec<Message>,
    removed_ids: Vec<i64>,
    restart: Option<String>,
}

impl Work {
    fn conversation(&self) -> Vec<Message> {
        let mut all = self.context.clone();
        all.extend(self.new.iter().cloned());
        all
    }
}

impl Session {
    /// Runs one turn, emitting events to `sink`; ends with [`TurnEvent::Done`] or
    /// [`TurnEvent::Error`]. Dropping the future cancels the turn; the user message is stored
    /// before the first model request, so it is never lost.
    ///
    /// # Errors
    /// [`TurnError`] when a model request or the database fails.
    pub async fn turn(
        &self,
        input: &TurnInput,
        sink: &mut (dyn FnMut(TurnEvent) + Send),
    ) -> Result<TurnOutcome, TurnError> {
        match self.turn_inner(input, sink).await {
            Ok(outcome) => {
                sink(TurnEvent::Done);
                Ok(outcome)
            }
            Err(error) => {
                sink(TurnEvent::Error(error.to_string()));
                Err(error)
            }
        }
    }

    async fn turn_inner(
        &self,
        input: &TurnInput,
        sink: &mut (dyn FnMut(TurnEvent) + Send),
    ) -> Result<TurnOutcome, TurnError> {
        let p = &self.parts;
        let uid = p.user_id;
        sink(TurnEvent::Status("loading context...".into()));
        let stored = p.transcript.active_context(uid)?;
        let prompt = self.system_prompt.clone();
        let (repaired, _) = p
            .transcript
            .repair(uid, p.time.now(), &stored, p.provider, || {
                Message::system(prompt)
            })?;
        let stored = if repaired.is_some() {
            p.transcript.active_context(uid)?
        } else {
            stored
        };
        let mut work = Work {
            context: stored.iter().map(|s| s.message.clone()).collect(),
            context_ids: stored.iter().map(|s| s.id).collect(),
            new: Vec::new(),
            removed_ids: Vec::new(),
            restart: None,
        };

        // `docs/behaviour.md#one-turn` step 2: store the user message at once.
        // A hidden message (the restart resume message) is sent but never stored.
        let user = Message::user(input.text.clone());
        if !input.hidden {
            p.transcript
                .append(uid, "turn", p.time.now(), std::slice::from_ref(&user))?;
            if !input.text.trim().is_empty() {
                p.db.add_messages_since_memory(uid, 1)?;
            }
        }
        work.new.push(user);

        // `docs/behaviour.md#one-turn` steps 3–5: recall and due items.
        let mut injected = Vec::new();
        self.inject_recall(&input.text, &mut work, &mut injected, sink)
            .await;
        if let Some(due) = &p.due {
            match due.due_text(&p.time) {
                Ok(Some(text)) => {
                    injected.push((InjectedKind::Due, text.clone()));
                    work.new.extend(Message::synthetic_pair(
                        &new_call_id(),
                        DUE_ITEMS_TOOL,
                        text,
                    ));
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("due items unavailable this turn: {e}"),
            }
        }
        if p.settings.show_internal_thought {
            for (kind, text) in injected {
                sink(TurnEvent::Injected { kind, text });
            }
        }

        // The tools of this turn: with MCP servers, those ready now (a server still starting is
        // waited for, at most its startup timeout), so a server that became ready or changed its
        // tools since the session started is offered.
        let sourced;
        let (registry, tool_schemas) = if p.registry.has_source() {
            sink(TurnEvent::Status("waiting for MCP servers...".into()));
            sourced = p.registry.ready().await;
            let schemas: Vec<serde_json::Value> =
                sourced.specs().iter().map(|s| s.to_json()).collect();
            (&sourced, std::borrow::Cow::Owned(schemas))
        } else {
            (
                p.registry.as_ref(),
                std::borrow::Cow::Borrowed(&self.tool_schemas),
            )
        };

        // `docs/behaviour.md#the-model-and-tool-loop`: the model/tool loop.
        let mut loops = 0usize;
        let mut failures: HashMap<String, usize> = HashMap::new();
        let mut requests = 0usize;
        let reply = loop {
            let tools_on = input.enable_tools && loops <= p.settings.max_assistant_loops;
            let request = ChatRequest {
                messages: work.conversation(),
                tools: if tools_on && !p.settings.inline_tool_calls {
                    tool_schemas.to_vec()
                } else {
                    Vec::new()
                },
                forced_tool: if loops == 0 {
                    input.forced_tool.clone()
                } else {
                    None
                },
                json_schema: None,
            };
            sink(TurnEvent::Status("thinking...".into()));
            requests += 1;
            let round = self.stream_round(&request, sink).await?;
            let mut calls = round.native_calls;
            calls.extend(round.inline_calls);
            if !tools_on && !calls.is_empty() {
                tracing::info!(
                    count = calls.len(),
                    "tool calls in a round without tools were dropped"
                );
                calls.clear();
            }
            let mut assistant = Message::assistant(Some(round.content), calls.clone());
            assistant.model = Some(p.model.model_name().to_owned());
            work.new.push(assistant);
            if calls.is_empty() {
                break round.visible;
            }
            let mut effects = Vec::new();
            for call in &calls {
                let result = self
                    .execute(registry, call, &work, &mut failures, sink)
                    .await;
                work.new
                    .push(Message::tool(&call.id, &result.content, result.is_error));
                sink(TurnEvent::ToolResult {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    content: result.content.clone(),
                    is_error: result.is_error,
                });
                sink(TurnEvent::Status("thinking...".into()));
                effects.extend(result.effects);
            }
            self.apply_effects(effects, &mut work);
            loops += 1;
        };

        self.persist(work.new, &work.removed_ids)?;
        Ok(TurnOutcome {
            reply: reply.trim().to_owned(),
            restart: work.restart,
            requests,
        })
    }

    /// `docs/behaviour.md#one-turn` step 3, recall (`docs/behaviour.md#recall`): the heuristic skip
    /// (`docs/behaviour.md#whether-to-recall` step 2); then, with
    /// `memory_recall_classifier_enabled`, `Status("classifying recall...")` and the classifier
    /// (`docs/behaviour.md#whether-to-recall` step 3), whose "no" skips recall; then
    /// `Status("fetching memories...")`, the recall source, and at most one pair appended to
    /// `work.new`: `get_fast_recall`, or with `reflect` the `get_reflective_recall` reflection
    /// (none when the reflection finds nothing relevant,
    /// `docs/behaviour.md#injection-and-reflective-recall`). A failing recall source is logged and
    /// the turn goes on without recall.
    async fn inject_recall(
        &self,
        message: &str,
        work: &mut Work,
        injected: &mut Vec<(InjectedKind, String)>,
        sink: &mut (dyn FnMut(TurnEvent) + Send),
    ) {
        let p = &self.parts;
        let Some(recall) = &p.recall else {
            return;
        };
        if !should_recall(message) {
            return;
        }
        if p.settings.memory_recall_classifier_enabled {
            sink(TurnEvent::Status("classifying recall...".into()));
            if !self.classifier_allows_recall(&work.context, message).await {
                return;
            }
        }
        sink(TurnEvent::Status("fetching memories...".into()));
        let conversation = work.conversation();
        let query = RecallQuery {
            message,
            conversation: &conversation,
            time: &p.time,
        };
        let payload = match recall.recall(&query) {
            Ok(Some(payload)) => payload,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("recall failed, continuing without it: {e}");
                return;
            }
        };
        if let Some((tool, payload)) = self.recall_pair(payload, &conversation).await {
            injected.push((InjectedKind::Recall, payload.content.clone()));
            work.new.extend(Message::synthetic_pair(
                &new_call_id(),
                tool,
                payload.to_json_string(),
            ));
        }
    }

    async fn execute(
        &self,
        registry: &elroy_core::ToolRegistry,
        call: &ToolCall,
        work: &Work,
        failures: &mut HashMap<String, usize>,
        sink: &mut (dyn FnMut(TurnEvent) + Send),
    ) -> ToolResult {
        let p = &self.parts;
        sink(TurnEvent::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        sink(TurnEvent::Status(format!("running {}...", call.name)));
        let limit = p.settings.max_tool_failures_per_turn;
        let failed = failures.get(&call.name).copied().unwrap_or(0);
        if failed >= limit {
            return ToolResult::error(
                &call.name,
                &format!(
                    "this tool already failed {failed} times in this turn; stop retrying it and answer the user"
                ),
            );
        }
        let ctx = ToolContext {
            time: p.time.clone(),
            user: p.user.clone(),
            cwd: p.cwd.clone(),
            conversation: work.conversation().into(),
            capabilities: p.capabilities,
            services: p.services.clone(),
            caller: Caller::Model,
        };
        let result = registry
            .invoke(&call.name, Some(&call.arguments), &ctx)
            .await;
        if result.is_error {
            *failures.entry(call.name.clone()).or_default() += 1;
        }
        result
    }

    /// Streams one round, turning deltas into events (`docs/behaviour.md#tags-thoughts-and-code`).
    async fn stream_round(
        &self,
        request: &ChatRequest,
        sink: &mut (dyn FnMut(TurnEvent) + Send),
    ) -> Result<Round, LlmError> {
        let mut shaper = Shaper::default();
        let mut processor = TextProcessor::new();
        let response = {
            let mut on_delta = |delta: StreamDelta| match delta {
                StreamDelta::Text(text) => {
                    for event in processor.push(&text) {
                        shaper.handle(event, sink);
                    }
                }
                StreamDelta::Reasoning(text) => sink(TurnEvent::ThoughtDelta(text)),
                StreamDelta::ToolCallStarted(_) => {}
            };
            self.parts.model.chat_stream(request, &mut on_delta).await?
        };
        for event in processor.finish() {
            shaper.handle(event, sink);
        }
        Ok(Round {
            content: response.content,
            native_calls: response.tool_calls,
            inline_calls: shaper.inline_calls,
            visible: shaper.visible,
        })
    }

    /// Applies a round's effects (`docs/behaviour.md#applying-effects`): pins append pairs to
    /// `new`, unpins remove recall messages from `new` now and from the stored context at
    /// persistence, the last restart wins.
    fn apply_effects(&self, effects: Vec<Effect>, work: &mut Work) {
        let mut resolved = Vec::new();
        for effect in effects {
            match effect {
                Effect::Restart { resume_message } => work.restart = Some(resume_message),
                Effect::Unpin(item) => resolved.push(ResolvedEffect::Unpin(item)),
                Effect::Pin(item) => match self.resolve_pin(item) {
                    Some(content) => resolved.push(ResolvedEffect::Pin(content)),
                    None => tracing::info!(?item, "pin of an item that cannot be resolved ignored"),
                },
            }
        }
        if resolved.is_empty() {
            return;
        }
        let all = work.conversation();
        let outcome = elroy_transcript::effects::apply(&all, &resolved);
        let split = work.context.len();
        for &index in outcome.removed.iter().rev() {
            if index < split {
                work.context.remove(index);
                let id = work.context_ids.remove(index);
                work.removed_ids.push(id);
            } else if index - split < work.new.len() {
                work.new.remove(index - split);
            }
        }
        work.new.extend(outcome.added);
    }

    fn resolve_pin(&self, item: RecallItem) -> Option<elroy_transcript::PinContent> {
        self.parts
            .pins
            .as_ref()
            .and_then(|r| r.resolve(item, &self.parts.time))
    }

    /// `docs/behaviour.md#persisting-a-turn`: stores the turn's messages (the user message is
    /// already stored) and applies unpins, as one version (reason `turn`).
    fn persist(&self, new: Vec<Message>, removed_ids: &[i64]) -> Result<(), TurnError> {
        let p = &self.parts;
        // new[0] is the user message: stored at the start of the turn, or never (hidden).
        let to_store: Vec<Message> = new
            .into_iter()
            .skip(1)
            .filter(|m| {
                m.role == Role::Tool
                    || !m.tool_calls.is_empty()
                    || m.content.as_deref().is_some_and(|c| !c.is_empty())
            })
            .collect();
        let now = p.time.now();
        if removed_ids.is_empty() {
            if !to_store.is_empty() {
                p.transcript.append(p.user_id, "turn", now, &to_store)?;
            }
            return Ok(());
        }
        let current = p.transcript.active_context(p.user_id)?;
        let mut target: Vec<ContextItem> = current
            .iter()
            .filter(|s| !removed_ids.contains(&s.id))
            .map(|s| ContextItem::Stored(s.id))
            .collect();
        target.extend(to_store.into_iter().map(ContextItem::New));
        p.transcript.set_context(p.user_id, "turn", now, &target)?;
        Ok(())
    }
}

/// What one round produced.
struct Round {
    content: String,
    native_calls: Vec<ToolCall>,
    inline_calls: Vec<ToolCall>,
    visible: String,
}

/// Turns processed text events into turn events and the visible reply.
#[derive(Default)]
struct Shaper {
    visible: String,
    inline_calls: Vec<ToolCall>,
    separate: bool,
}

impl Shaper {
    fn handle(&mut self, event: TextEvent, sink: &mut (dyn FnMut(TurnEvent) + Send)) {
        match event {
            TextEvent::Text(text) => {
                let text = if self.separate && !self.visible.is_empty() {
                    format!("\n\n{text}")
                } else {
                    text
                };
                self.separate = false;
                self.visible.push_str(&text);
                sink(TurnEvent::TextDelta(text));
            }
            TextEvent::Thought(text) => {
                self.separate = true;
                sink(TurnEvent::ThoughtDelta(text));
            }
            TextEvent::Code { language, content } => {
                self.separate = false;
                self.visible.push_str(&fenced(&language, &content));
                sink(TurnEvent::CodeBlock { language, content });
            }
            TextEvent::Call(call) => {
                self.separate = true;
                self.inline_calls.push(call);
            }
        }
    }
}

/// A synthetic call id: a random UUID v4, hyphenated, lower case
/// (`docs/behaviour.md#synthetic-pairs`).
pub fn new_call_id() -> String {
    uuid::Uuid::new_v4().hyphenated().to_string()
}
