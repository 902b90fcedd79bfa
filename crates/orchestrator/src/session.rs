//! [`Session`]: session start (`docs/behaviour.md#start-up-steps` steps 5–7) — the frozen soul, the
//! system prompt, the active context aged out, repaired and given the current system prompt.

use std::path::PathBuf;
use std::sync::Arc;

use elroy_config::Config;
use elroy_core::{Capabilities, Message, Role, Services, TimeContext, ToolRegistry, UserInfo};
use elroy_db::Db;
use elroy_llm::ChatModel;
use elroy_notebook::Soul;
use elroy_transcript::{ContextItem, Provider, TranscriptStore, is_system_instruction};

use crate::SessionError;
use crate::ports::{ChangeRecorder, DueSource, PinResolver, RecallSource, ReflectionSink};
use crate::prompt::{PromptParts, system_prompt};

/// The configuration keys a session uses, read once.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `max_assistant_loops`: tool rounds allowed are `0..=this` (K6).
    pub max_assistant_loops: usize,
    /// `max_tool_failures_per_turn` (R3).
    pub max_tool_failures_per_turn: usize,
    /// `show_internal_thought`: emit [`crate::TurnEvent::Injected`].
    pub show_internal_thought: bool,
    /// `inline_tool_calls`: schemas in the system prompt, calls parsed from text.
    pub inline_tool_calls: bool,
    /// `max_context_age_minutes`.
    pub max_context_age_minutes: f64,
    /// `max_tokens`: context size that triggers a refresh.
    pub max_tokens: usize,
    /// `default_assistant_name`.
    pub default_assistant_name: String,
    /// `messages_between_memory`: automatic memory creation trigger; 0 disables it.
    pub messages_between_memory: i64,
    /// `memories_between_consolidation`.
    pub memories_between_consolidation: i64,
    /// `messages_between_self_reflection`: self-reflection trigger; 0 disables it.
    pub messages_between_self_reflection: i64,
    /// `memory_cluster_similarity_threshold`: consolidation's neighbour distance
    /// (`docs/behaviour.md#consolidation`).
    pub memory_cluster_similarity_threshold: f64,
    /// `min_memory_cluster_size`: neighbours a core point needs
    /// (`docs/behaviour.md#consolidation`).
    pub min_memory_cluster_size: usize,
    /// `max_memory_cluster_size`: members kept per cluster (`docs/behaviour.md#consolidation`).
    pub max_memory_cluster_size: usize,
    /// `reflect`: reflective recall (`docs/behaviour.md#injection-and-reflective-recall`): the chat
    /// model turns the recalled items into a short note, injected as a `get_reflective_recall` pair
    /// instead of the plain `get_fast_recall`.
    pub reflect: bool,
    /// `memory_recall_classifier_enabled`: a fast-model call decides whether recall runs
    /// (`docs/behaviour.md#whether-to-recall` step 3). Default false (We (D9); Elroy: true).
    pub memory_recall_classifier_enabled: bool,
    /// `memory_recall_classifier_window`: how many context messages (conversation only: no
    /// system, tool or empty messages) the classifier reads before the latest message.
    pub memory_recall_classifier_window: usize,
}

impl Settings {
    /// Reads the keys from `config`.
    pub fn from_config(config: &Config) -> Self {
        let keys = &config.settings;
        let uint = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        Settings {
            max_assistant_loops: uint(keys.max_assistant_loops),
            max_tool_failures_per_turn: uint(keys.max_tool_failures_per_turn).max(1),
            show_internal_thought: keys.show_internal_thought,
            inline_tool_calls: keys.inline_tool_calls,
            max_context_age_minutes: keys.max_context_age_minutes,
            max_tokens: uint(keys.max_tokens).max(1),
            default_assistant_name: keys.default_assistant_name.clone(),
            messages_between_memory: int(keys.messages_between_memory),
            memories_between_consolidation: int(keys.memories_between_consolidation),
            messages_between_self_reflection: int(keys.messages_between_self_reflection),
            memory_cluster_similarity_threshold: keys.memory_cluster_similarity_threshold,
            min_memory_cluster_size: uint(keys.min_memory_cluster_size),
            max_memory_cluster_size: uint(keys.max_memory_cluster_size),
            reflect: keys.reflect,
            memory_recall_classifier_enabled: keys.memory_recall_classifier_enabled,
            memory_recall_classifier_window: uint(keys.memory_recall_classifier_window),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_assistant_loops: 4,
            max_tool_failures_per_turn: 3,
            show_internal_thought: true,
            inline_tool_calls: false,
            max_context_age_minutes: 720.0,
            max_tokens: 100_000,
            default_assistant_name: "Elroy".into(),
            messages_between_memory: 20,
            memories_between_consolidation: 4,
            messages_between_self_reflection: 10,
            memory_cluster_similarity_threshold: 0.21125,
            min_memory_cluster_size: 3,
            max_memory_cluster_size: 5,
            reflect: false,
            memory_recall_classifier_enabled: false,
            memory_recall_classifier_window: 3,
        }
    }
}

/// Everything a session runs with.
pub struct SessionParts {
    /// Configuration values.
    pub settings: Settings,
    /// Now and the zone.
    pub time: TimeContext,
    /// The user; `user_id` is its database id.
    pub user: UserInfo,
    /// `users.id`.
    pub user_id: i64,
    /// The tools offered to the model.
    pub registry: Arc<ToolRegistry>,
    /// Stores for tools.
    pub services: Services,
    /// What the front-end can do (`restart_session`).
    pub capabilities: Capabilities,
    /// The working directory for filesystem tools.
    pub cwd: PathBuf,
    /// The database (op tracker, preferences).
    pub db: Arc<Db>,
    /// The transcript (context window, persistence).
    pub transcript: TranscriptStore,
    /// The chat model.
    pub model: Arc<dyn ChatModel>,
    /// The fast model for background work (`None`: the chat model).
    pub fast_model: Option<Arc<dyn ChatModel>>,
    /// The memory store, for automatic memory creation
    /// (`docs/behaviour.md#automatic-memory-creation`) and consolidation
    /// (`docs/behaviour.md#consolidation`).
    pub memory: Option<Arc<elroy_memory::MemoryStore>>,
    /// Where self-reflection's feature request goes (`docs/behaviour.md#self-reflection`); `None`
    /// disables self-reflection.
    pub reflections: Option<Arc<dyn ReflectionSink>>,
    /// Records background store changes as versioned-home commits; `None` when the home is not
    /// versioned.
    pub history: Option<Arc<dyn ChangeRecorder>>,
    /// The provider family (the validator's user-first rule for Anthropic).
    pub provider: Provider,
    /// Recall, when a memory store is available.
    pub recall: Option<Arc<dyn RecallSource>>,
    /// Due items, when an agenda store is available.
    pub due: Option<Arc<dyn DueSource>>,
    /// Pin resolution, when stores are available.
    pub pins: Option<Arc<dyn PinResolver>>,
}

impl std::fmt::Debug for SessionParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionParts")
            .field("user_id", &self.user_id)
            .field("model", &self.model.model_name())
            .finish_non_exhaustive()
    }
}

/// A started session: the system prompt is fixed for its lifetime (the soul snapshot is frozen).
pub struct Session {
    pub(crate) parts: SessionParts,
    pub(crate) system_prompt: String,
    pub(crate) tool_schemas: Vec<serde_json::Value>,
    soul: Soul,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("parts", &self.parts)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Starts a session (`docs/behaviour.md#start-up-steps` steps 5–6): composes the soul snapshot
    /// from the user home, builds the system prompt, loads the active context, drops non-system
    /// messages older than `max_context_age_minutes` (one version, reason `session`), runs the
    /// validator (reason `repair`) and replaces a stale system prompt (reason `system`).
    ///
    /// # Errors
    /// [`SessionError`] when the database or the transcript fails.
    pub fn start(parts: SessionParts) -> Result<Session, SessionError> {
        let soul = Soul::compose(&parts.user.user_home);
        for warning in soul.warnings() {
            tracing::warn!("{warning}");
        }
        let prefs = parts.db.preferences(parts.user_id)?;
        let tool_schemas: Vec<serde_json::Value> =
            parts.registry.specs().iter().map(|s| s.to_json()).collect();
        let inline = parts.settings.inline_tool_calls.then(|| {
            elroy_core::pyjson::dumps_indent2(&serde_json::Value::Array(tool_schemas.clone()))
        });
        let soul_block = soul.prompt_block();
        let assistant = prefs
            .assistant_name
            .clone()
            .unwrap_or_else(|| parts.settings.default_assistant_name.clone());
        let prompt = system_prompt(&PromptParts {
            persona: prefs.system_persona.as_deref(),
            user_alias: prefs.preferred_name.as_deref(),
            assistant_alias: &assistant,
            inline_tool_schemas: inline.as_deref(),
            soul_block: soul_block.as_deref(),
        });
        let session = Session {
            parts,
            system_prompt: prompt,
            tool_schemas,
            soul,
        };
        session.prepare_context()?;
        Ok(session)
    }

    fn prepare_context(&self) -> Result<(), SessionError> {
        let p = &self.parts;
        let now = p.time.now();
        let stored = p.transcript.active_context(p.user_id)?;
        // Age-out (`docs/behaviour.md#start-up-steps` step 6).
        let max_age_secs = (p.settings.max_context_age_minutes * 60.0) as i64;
        let cutoff = now
            .checked_sub(jiff::SignedDuration::from_secs(max_age_secs))
            .ok();
        if let Some(cutoff) = cutoff {
            let old: Vec<i64> = stored
                .iter()
                .filter(|s| s.message.role != Role::System && s.created_at < cutoff)
                .map(|s| s.id)
                .collect();
            if !old.is_empty() {
                p.transcript.remove(p.user_id, "session", now, &old)?;
            }
        }
        let stored = p.transcript.active_context(p.user_id)?;
        let prompt = self.system_prompt.clone();
        p.transcript
            .repair(p.user_id, now, &stored, p.provider, || {
                Message::system(prompt)
            })?;
        let stored = p.transcript.active_context(p.user_id)?;
        if let Some(first) = stored.first()
            && is_system_instruction(&first.message)
            && first.message.content.as_deref() != Some(self.system_prompt.as_str())
        {
            let mut target = vec![ContextItem::New(Message::system(
                self.system_prompt.clone(),
            ))];
            target.extend(stored[1..].iter().map(|s| ContextItem::Stored(s.id)));
            p.transcript
                .set_context(p.user_id, "system", now, &target)?;
        }
        Ok(())
    }

    /// The system prompt of this session.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    /// The soul snapshot taken at session start.
    pub fn soul(&self) -> &Soul {
        &self.soul
    }

    /// The chat model's name.
    pub fn model_name(&self) -> &str {
        self.parts.model.model_name()
    }

    /// The parts the session runs with.
    pub fn parts(&self) -> &SessionParts {
        &self.parts
    }

    /// The assistant name: the `assistant_name` preference, else `default_assistant_name`.
    pub fn assistant_name(&self) -> String {
        self.parts
            .db
            .preferences(self.parts.user_id)
            .ok()
            .and_then(|p| p.assistant_name)
            .unwrap_or_else(|| self.parts.settings.default_assistant_name.clone())
    }

    /// The session-context text (`docs/behaviour.md#the-session-context-pair`, Elroy's wording):
    /// who logged in and when, with `first_today` the local time of the user's earliest stored
    /// message today, if any.
    pub fn session_context_text(&self, first_today: Option<jiff::Timestamp>) -> String {
        let p = &self.parts;
        let name =
            p.db.preferences(p.user_id)
                .ok()
                .and_then(|x| x.preferred_name)
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "User".to_owned());
        let now = p
            .time
            .now_local()
            .strftime("%A, %B %d, %Y %I:%M %p %Z")
            .to_string();
        match first_today {
            Some(first) => format!(
                "Current date/time: {now}. {name} has logged in. I first started chatting with {name} today at {}.",
                first
                    .to_zoned_datetime(p.time.tz.clone())
                    .strftime("%I:%M %p")
            ),
            None => format!(
                "Current date/time: {now}. {name} has logged in. I haven't chatted with {name} yet today. I should offer a brief greeting (less than 50 words)."
            ),
        }
    }

    /// Appends the session-context pair (`docs/behaviour.md#the-session-context-pair`) for an
    /// interactive front-end, as one version (reason `session`).
    ///
    /// # Errors
    /// [`SessionError`] when the database or the transcript fails.
    pub fn add_session_context(&self) -> Result<(), SessionError> {
        let p = &self.parts;
        let today = p.time.today();
        let first = p
            .transcript
            .active_context(p.user_id)?
            .into_iter()
            .filter(|s| s.message.role == Role::User)
            .map(|s| s.created_at)
            .filter(|t| t.to_zoned_datetime(p.time.tz.clone()).date() == today)
            .min();
        let text = self.session_context_text(first);
        let pair = Message::synthetic_pair(&crate::new_call_id(), "get_session_context", text);
        p.transcript
            .append(p.user_id, "session", p.time.now(), &pair)?;
        Ok(())
    }
}
