//! [`ChatSession`]: what an interactive front end holds — the opened home and, once a chat model
//! is usable, the model session.

use std::sync::Arc;

use elroy_config::Config;
use elroy_core::Capabilities;
use elroy_orchestrator::Session;
use elroy_runtime::{Runtime, RuntimeError, WarningSink};

use crate::complete::CompletionNames;

/// The session handle of an interactive front end: the [`Runtime`] (stores, registry with the
/// versioned-home observer, direct tool calls) and the orchestrator [`Session`] built over it
/// (model turns). Both share the same lazily opened stores, so a command's change is seen by the
/// next turn and recorded in the history exactly like a model's call.
///
/// Opened with [`ChatSession::open_without_model_allowed`] it may have no model session yet
/// ([`ChatSession::no_model`]): every command and tool works, turns wait for
/// [`ChatSession::adopt_model`].
pub struct ChatSession {
    runtime: Runtime,
    session: Option<Arc<Session>>,
    /// Why there is no model session (the chat model could not be chosen), while there is none.
    no_model: Option<String>,
    capabilities: Capabilities,
    /// The model chosen with `/model NAME`, if any (`None`: the configured one).
    model_override: Option<String>,
    /// The configured chat model's name (the one `chat_model_api_base` was set for).
    configured_model: String,
}

impl std::fmt::Debug for ChatSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatSession")
            .field("model", &self.model_name())
            .field("model_override", &self.model_override)
            .finish_non_exhaustive()
    }
}

impl ChatSession {
    /// Opens `config`'s home (warnings found later go to `warn`) and starts a session for a front
    /// end with `capabilities` ([`Runtime::session`]).
    ///
    /// # Errors
    /// [`RuntimeError`] when the home cannot be opened, no chat model can be chosen or built, or
    /// the session cannot start.
    pub fn open(
        config: Config,
        capabilities: Capabilities,
        warn: WarningSink,
    ) -> Result<Self, RuntimeError> {
        let runtime = Runtime::open_with(config, warn)?;
        Self::from_runtime(runtime, capabilities)
    }

    /// Starts a session over an opened runtime.
    ///
    /// # Errors
    /// As [`Runtime::session`].
    pub fn from_runtime(
        runtime: Runtime,
        capabilities: Capabilities,
    ) -> Result<Self, RuntimeError> {
        let session = runtime.session(capabilities)?;
        Ok(ChatSession {
            configured_model: session.model_name().to_owned(),
            runtime,
            session: Some(Arc::new(session)),
            no_model: None,
            capabilities,
            model_override: None,
        })
    }

    /// [`ChatSession::open`], except that no chat model being configured is not an error: the
    /// handle then has no model session and [`ChatSession::no_model`] says why (a first run).
    ///
    /// # Errors
    /// As [`ChatSession::open`], other than [`elroy_llm::LlmError::NoModel`].
    pub fn open_without_model_allowed(
        config: Config,
        capabilities: Capabilities,
        warn: WarningSink,
    ) -> Result<Self, RuntimeError> {
        let runtime = Runtime::open_with(config, warn)?;
        match runtime.session(capabilities) {
            Ok(session) => Ok(ChatSession {
                configured_model: session.model_name().to_owned(),
                runtime,
                session: Some(Arc::new(session)),
                no_model: None,
                capabilities,
                model_override: None,
            }),
            Err(RuntimeError::Model(elroy_llm::LlmError::NoModel(why))) => Ok(ChatSession {
                runtime,
                session: None,
                no_model: Some(why),
                capabilities,
                model_override: None,
                configured_model: String::new(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Why there is no model session yet (no chat model is configured), or `None` when there is
    /// one.
    pub fn no_model(&self) -> Option<&str> {
        self.no_model.as_deref()
    }

    /// Starts the model session with `chat_model` at `api_base` with `api_key` (each replacing
    /// the configured value when given): the choice of a first run, for this process; saving it
    /// is [`crate::save_model_choice`]. On error nothing changes.
    ///
    /// # Errors
    /// [`RuntimeError`] when the model cannot be built or the session cannot start.
    pub fn adopt_model(
        &mut self,
        chat_model: &str,
        api_base: Option<&str>,
        api_key: Option<&str>,
    ) -> Result<(), RuntimeError> {
        let mut config = (*self.runtime.config).clone();
        config.settings.chat_model = Some(chat_model.to_owned());
        if let Some(base) = api_base {
            config.settings.chat_model_api_base = Some(base.to_owned());
        }
        if let Some(key) = api_key {
            config.settings.chat_model_api_key = Some(key.to_owned());
        }
        let previous = std::mem::replace(&mut self.runtime.config, Arc::new(config));
        match self.runtime.session(self.capabilities) {
            Ok(session) => {
                self.configured_model = session.model_name().to_owned();
                self.session = Some(Arc::new(session));
                self.no_model = None;
                self.model_override = None;
                Ok(())
            }
            Err(e) => {
                self.runtime.config = previous;
                Err(e)
            }
        }
    }

    /// The opened home: configuration, stores, registry, direct tool calls.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The model session (turns, background work); `None` before a chat model is usable.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_deref()
    }

    /// The model session, shared: for work that outlives a borrow of this handle, such as the
    /// background work after a reply ([`Session::after_turn`]) running while the next input is
    /// read. After [`ChatSession::switch_model`] a clone still refers to the previous session.
    pub fn shared_session(&self) -> Option<Arc<Session>> {
        self.session.clone()
    }

    /// The chat model's name as its client reports it (`gpt-4o`, `testkit-model`); `None`
    /// before a chat model is usable.
    pub fn model_name(&self) -> Option<&str> {
        self.session.as_deref().map(Session::model_name)
    }

    /// Replaces the session with one whose chat model is `name` (as `--model NAME`: aliases
    /// resolved), for this process only; the configuration is not written. The active context
    /// carries over (it lives in `state.db`). On error the current session stays.
    ///
    /// # Errors
    /// [`RuntimeError::Model`] when `name` cannot be used (no key for its provider).
    ///
    /// A configured `chat_model_api_base` belongs to the configured model's provider: a model
    /// of another provider (`/model sonnet` after a local `llama3.1`) is built without it (and
    /// without `chat_model_api_key`), one of the same provider is sent to it. Returns the one
    /// line that says which, when a base URL is configured.
    pub fn switch_model(&mut self, name: &str) -> Result<Option<String>, RuntimeError> {
        let base = self.runtime.config.settings.chat_model_api_base.clone();
        let owner = provider(&self.configured_model);
        let wanted = provider(elroy_llm::select::resolve_alias(name));
        let drop_base = base.is_some() && owner != wanted;
        let session = self
            .runtime
            .session_for_model(self.capabilities, name, drop_base)?;
        self.session = Some(Arc::new(session));
        self.no_model = None;
        self.model_override = Some(name.to_owned());
        Ok(base.map(|base| {
            if drop_base {
                format!(
                    "chat_model_api_base ({base}) is for {owner} models like `{}`, so `{name}` uses {wanted}'s own address.",
                    self.configured_model
                )
            } else {
                format!(
                    "chat_model_api_base stays {base}: `{name}` is sent there (set another in the configuration for another server)."
                )
            }
        }))
    }

    /// The model chosen with `/model NAME` in this session, if any.
    pub fn model_override(&self) -> Option<&str> {
        self.model_override.as_deref()
    }

    /// Names for argument completion: the configured chat model, the model aliases, and the
    /// active memories' names (empty when the memory store cannot be opened).
    pub fn completion_names(&self) -> CompletionNames {
        let mut models: Vec<String> = self
            .runtime
            .config
            .settings
            .chat_model
            .iter()
            .cloned()
            .collect();
        for alias in MODEL_ALIASES {
            if !models.iter().any(|m| m == alias) {
                models.push((*alias).to_owned());
            }
        }
        let memories = self
            .runtime
            .services
            .try_get::<elroy_memory::MemoryStore>()
            .ok()
            .flatten()
            .and_then(|store| store.active_names().ok())
            .unwrap_or_default();
        CompletionNames { models, memories }
    }
}

/// The model aliases of `docs/behaviour.md#model-aliases` (`elroy_llm::select::resolve_alias`).
const MODEL_ALIASES: &[&str] = &[
    "sonnet",
    "opus",
    "haiku",
    "gpt-5",
    "gpt5-mini",
    "gpt5-nano",
    "o1",
    "o1_mini",
];

/// The provider a model name addresses (as elroy-llm picks the protocol): `Anthropic` for
/// `anthropic/…` and `claude…`, `Gemini` for `gemini/…`, else `OpenAI-compatible` (OpenAI, or
/// any server speaking its API: Ollama, vLLM, llama.cpp, LM Studio).
pub fn provider(model: &str) -> &'static str {
    let model = elroy_llm::select::resolve_alias(model);
    if model.starts_with("anthropic/") || model.starts_with("claude") {
        "Anthropic"
    } else if model.starts_with("gemini/") {
        "Gemini"
    } else {
        "OpenAI-compatible"
    }
}
