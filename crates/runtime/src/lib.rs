//! # elroy-runtime — the composition root
//!
//! The one place that builds what a command needs from a [`Config`]
//! (`docs/behaviour.md#start-up-steps`):
//!
//! - [`Runtime::open`]: the clock and user, the tool registry (built-in tools, `exclude_tools`,
//!   `include_base_tools`, then plugins, D15), and the stores as **lazy** [`Services`] entries:
//!   `state.db`, the user id, transcript, agenda, memories (with the embedder), feature requests,
//!   notebook and Codex sessions are each opened on the first lookup of their type, so a command
//!   opens only what its tools use (`elroy tools call get_current_date` opens no database, `elroy
//!   tools list` no store). The versioned home (elroy-history) starts — committing hand edits as
//!   `external edit` — before the first tool call or at session start, whichever comes first.
//! - The MCP servers of `mcp_servers` / `--mcp-config` ([`elroy_mcp_client::McpClients`]): the
//!   registry's tool source, so their tools `mcp__<server>__<tool>` are offered and called like
//!   any tool by every front end but `elroy mcp`. None is started by opening: a session starts
//!   them all in the background ([`Runtime::session`]), `elroy tools list` waits for them, a call
//!   of `mcp__a__x` starts only `a`.
//! - [`Runtime::call_tool`]: a direct call (`elroy tools call`, `elroy remember`, `elroy mcp`)
//!   with the result's effects applied to the active context.
//! - [`Runtime::session`]: an [`elroy_orchestrator::Session`] (`elroy message`, `elroy chat`): the
//!   chat and fast model clients ([`models`]), the stores, and the adapters ([`adapters`]) from the
//!   stores and the versioned home to the orchestrator's ports.
//! - [`Runtime::reminders`] and [`Runtime::snooze_due_item`] ([`reminders`]): due items to
//!   announce, the announcement ledger, the next trigger, snoozing.
//!
//! - [`Runtime::start_background_embedding`] ([`reembed`]): a session's background embedding of
//!   the memories that lack a vector of the configured model (a switched `embedding_model`),
//!   never blocking a turn.
//! - [`sync::sync_home`]: `elroy sync` and the syncs of interactive sessions and `elroy remind
//!   --watch`, one entry point for every front end.
//! - [`remind::run`]: `elroy remind`'s announcing, once or watching (with its notifier); the
//!   front ends' one path to standard output ([`output`]) and the log file ([`logging`]).
//! - [`doctor::check_home`]: `elroy doctor`, every store, file, the database and the versioned
//!   home checked, as typed problems.
//!
//! Front ends differ only in what they do with the result. Problems that do not stop a command
//! (a broken agenda file, a memory file that left `memories/`, a fast model that cannot be built)
//! are warnings: those found while opening are in [`Runtime::warnings`], later ones go to the
//! [`WarningSink`] the front end gave.

pub mod adapters;
pub mod config_view;
pub mod doctor;
mod doctor_fix;
pub mod doctor_vectors;
mod effects;
pub mod embed_server;
pub mod embed_worker;
pub mod embedder;
mod history;
pub mod import;
pub mod logging;
pub mod models;
pub mod output;
pub mod permissions;
mod redacting_model;
pub mod reembed;
pub mod remind;
pub mod reminders;
#[cfg(feature = "builtin-embedder")]
pub mod resident;
mod services;
pub mod sync;
pub mod versioned;
mod write_failure;

use std::sync::Arc;

use elroy_config::Config;
use elroy_core::{
    Caller, Capabilities, Conversation, FixedClock, Services, SystemClock, TimeContext,
    ToolContext, ToolRegistry, ToolResult, UserInfo,
};

/// Where warnings found after opening go (a lazily opened store's warnings, a fast model that
/// cannot be built). The CLI prints them to stderr as `warning: …`.
pub type WarningSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The default [`WarningSink`]: the log and stderr (`warning: {message}`).
pub fn stderr_warnings() -> WarningSink {
    Arc::new(|message: &str| {
        tracing::warn!("{message}");
        output::eprintln(&format!("warning: {message}"));
    })
}

/// A single-threaded async runtime for one command of a front end, running `future` to its end.
///
/// # Errors
/// [`AsyncRuntimeError`] when the runtime cannot be built.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, AsyncRuntimeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(AsyncRuntimeError)?;
    Ok(runtime.block_on(future))
}

/// The async runtime of a front end's command could not start ([`block_on`]).
#[derive(Debug, thiserror::Error)]
#[error("cannot start the async runtime: {0}")]
pub struct AsyncRuntimeError(#[source] pub std::io::Error);

/// The front ends' error line (their commands fail with a `String`).
impl From<AsyncRuntimeError> for String {
    fn from(error: AsyncRuntimeError) -> Self {
        error.to_string()
    }
}

/// A [`WarningSink`] that only logs (front ends whose stderr is for errors only).
pub fn logged_warnings() -> WarningSink {
    Arc::new(|message: &str| tracing::warn!("{message}"))
}

/// Why the composition root could not build what a command needs. Each variant keeps its source.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No chat model could be chosen or its client built (missing key, unknown provider).
    #[error(transparent)]
    Model(#[from] elroy_llm::LlmError),
    /// A store or the database could not be opened.
    #[error(transparent)]
    Store(#[from] elroy_core::ServiceError),
    /// The session could not start (transcript or database).
    #[error(transparent)]
    Session(#[from] elroy_orchestrator::SessionError),
    /// A permission rule could not be read.
    #[error(transparent)]
    Permissions(#[from] elroy_permissions::PolicyError),
}

/// An opened home: configuration, user, lazily opened stores, registry.
pub struct Runtime {
    /// The resolved configuration.
    pub config: Arc<Config>,
    /// Now and the configured zone (`ELROY_NOW` fixes the clock).
    pub time: TimeContext,
    /// The user of this session (`id` is `None`: the id is the lazily opened
    /// [`elroy_core::UserId`] service, see [`ToolContext::user_id`]).
    pub user: UserInfo,
    /// Stores and shared handles, passed to tools; stores open on first use.
    pub services: Services,
    /// Every tool of the session.
    pub registry: ToolRegistry,
    /// Non-fatal problems found while opening (config warnings, skipped plugins).
    pub warnings: Vec<String>,
    /// The configured MCP servers (`None` when there are none, or for `elroy mcp`); their tools
    /// reach the registry as its [`elroy_core::ToolSource`].
    pub mcp: Option<elroy_mcp_client::McpClients>,
    /// The permission check every tool call passes (`docs/security.md`), installed on
    /// [`Runtime::registry`]; front ends that can ask their person install an approver on it.
    pub permissions: Arc<elroy_permissions::Gate>,
    /// Where later warnings go.
    warn: WarningSink,
    /// The versioned home, started on first use (`versioned_home: false`: never).
    history: Arc<history::LazyHistory>,
}

/// A runtime that leaves memories without a vector starts the detached worker as it ends
/// (`crate::embed_worker`).
impl Drop for Runtime {
    fn drop(&mut self) {
        self.start_embed_worker_if_needed();
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("user", &self.user)
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Opens the home described by `config`, warnings found later to the log and stderr
    /// ([`stderr_warnings`]). Opens no store: see [`Runtime::open_with`].
    ///
    /// # Errors
    /// None today (every store opens lazily); the `Result` keeps room for checks at open.
    pub fn open(config: Config) -> Result<Self, RuntimeError> {
        Self::open_with(config, stderr_warnings())
    }

    /// Opens the home described by `config`: clock, user, registry with plugins, and the stores
    /// as lazy services (nothing is read from the home's stores or `state.db` here). Warnings
    /// found later go to `warn`.
    ///
    /// # Errors
    /// None today (every store opens lazily); the `Result` keeps room for checks at open.
    pub fn open_with(config: Config, warn: WarningSink) -> Result<Self, RuntimeError> {
        let config = Arc::new(config);
        let clock: Arc<dyn elroy_core::Clock> = match config.now {
            Some(now) => Arc::new(FixedClock(now)),
            None => Arc::new(SystemClock),
        };
        let mut warnings = config.warnings.clone();
        let day_start =
            match jiff::civil::Time::strptime("%H:%M", config.settings.day_start_time.trim()) {
                Ok(time) => time,
                Err(_) => {
                    warnings.push(format!(
                        "day_start_time: '{}' is not a time as HH:MM (e.g. 08:30); using 09:00",
                        config.settings.day_start_time
                    ));
                    elroy_core::DEFAULT_DAY_START
                }
            };
        let time = TimeContext::new(clock, config.timezone.clone()).with_day_start(day_start);
        let user = UserInfo {
            id: None,
            token: config.settings.user_token.clone(),
            elroy_home: config.paths.elroy_home.clone(),
            user_home: config.paths.user_home.clone(),
        };
        let mut services = services::open_services(&config, &time, &user, &warn);
        let mut registry = build_registry(&config);
        // Plugins (`docs/tool-rules.md#plugins`) come after the built-in tools; a bad plugin is a
        // warning.
        let plugins = elroy_plugins::load_plugins(&config, &mut registry);
        for warning in &plugins.warnings {
            tracing::warn!("{warning}");
        }
        warnings.extend(plugins.warnings);
        services.insert(Arc::new(elroy_plugins::Panels(plugins.panels)));
        services.insert(Arc::new(elroy_plugins::Untrusted(plugins.untrusted)));
        // MCP servers: configured here, started by whoever needs their tools.
        let mcp = match elroy_mcp_client::McpClients::new(&config, Arc::clone(&warn)) {
            Ok(mcp) => mcp,
            Err(e) => {
                warnings.push(e.to_string());
                None
            }
        };
        if let Some(mcp) = &mcp {
            registry.set_source(Arc::new(mcp.clone()));
        }
        // --- elroy-history (versioned home) ---
        // Started on the first tool call (or at session start): commits hand edits since the last
        // run (or the initial import), then records every tool call that changes a markdown
        // store, whoever makes it (direct, model turn, MCP). A failure is a warning: the home
        // works unversioned. Background store changes go through the orchestrator's
        // `ChangeRecorder` port (`adapters::HistoryPort`).
        let history = Arc::new(history::LazyHistory::new(
            config.settings.versioned_home,
            config.paths.elroy_home.clone(),
            time.clone(),
            Arc::clone(&warn),
        ));
        registry.set_call_observer(Arc::clone(&history) as Arc<dyn elroy_core::CallObserver>);
        let permissions = permissions::build_gate(&config, &warn)?;
        let gate = Arc::clone(&permissions) as Arc<dyn elroy_core::PermissionGate>;
        registry.set_permission_gate(Arc::clone(&gate));
        // The same check for a target that moves while a tool runs (a redirect to another host).
        services.insert(Arc::new(elroy_core::InstalledGate(gate)));
        Ok(Runtime {
            permissions,
            config,
            time,
            user,
            services,
            registry,
            warnings,
            mcp,
            warn,
            history,
        })
    }

    /// Drops the MCP servers and their tools from this runtime: `elroy mcp` serves elroy's own
    /// tools only (a client of two elroys, each of the other, would loop).
    pub fn detach_mcp_clients(&mut self) {
        self.registry.remove_source();
        self.mcp = None;
    }

    /// Starts every configured MCP server in the background (returns at once); a session start
    /// does it, so the servers are ready by the first turn that needs them.
    pub fn start_mcp_servers(&self) {
        if let Some(mcp) = &self.mcp {
            mcp.start_all();
        }
    }

    /// The context a direct tool call gets in this runtime: the conversation view is the active
    /// context window, read from the transcript only if the tool looks at it.
    pub fn tool_context(&self, capabilities: Capabilities) -> ToolContext {
        let services = self.services.clone();
        ToolContext {
            time: self.time.clone(),
            user: self.user.clone(),
            cwd: std::env::current_dir().unwrap_or_else(|_| self.user.user_home.clone()),
            conversation: Conversation::lazy(move || effects::active_conversation(&services)),
            capabilities,
            services: self.services.clone(),
            caller: Caller::Person,
        }
    }

    /// A direct tool call (`elroy tools call`): validation and the error contract as in a turn;
    /// the result's effects are applied to the active context window at once
    /// (`docs/behaviour.md#applying-effects`, "Direct tool calls"). `restart_session` is not
    /// available here.
    pub async fn call_tool(&self, name: &str, raw_arguments: Option<&str>) -> ToolResult {
        self.call_tool_as(Caller::Person, name, raw_arguments).await
    }

    /// [`Runtime::call_tool`] on behalf of `caller`: `elroy mcp` passes [`Caller::Client`], so
    /// the permission gate refuses what the rules deny and leaves asking to the client.
    pub async fn call_tool_as(
        &self,
        caller: Caller,
        name: &str,
        raw_arguments: Option<&str>,
    ) -> ToolResult {
        let mut ctx = self.tool_context(Capabilities { can_restart: false });
        ctx.caller = caller;
        let mut result = self.registry.invoke(name, raw_arguments, &ctx).await;
        tracing::info!(
            tool = name,
            is_error = result.is_error,
            effects = result.effects.len(),
            "direct tool call"
        );
        if !result.is_error && !result.effects.is_empty() {
            if let Err(e) = effects::apply_direct(&self.services, &self.time, &result.effects) {
                (self.warn)(&format!("could not apply the effects of {name}: {e}"));
            } else {
                result.effects.clear();
            }
        }
        result
    }

    /// A session for a front end with `capabilities` (`elroy message`, `elroy chat`): the chat
    /// model client, the fast model client (a configured fast model that cannot be built is a
    /// warning, and background work uses the chat model), the versioned home started, the
    /// stores opened, and the adapters to the orchestrator's ports; then
    /// [`elroy_orchestrator::Session::start`].
    ///
    /// # Errors
    /// [`RuntimeError::Model`] when no chat model can be chosen or built,
    /// [`RuntimeError::Store`] when `state.db` cannot be opened, [`RuntimeError::Session`] when
    /// the session cannot start.
    pub fn session(
        &self,
        capabilities: Capabilities,
    ) -> Result<elroy_orchestrator::Session, RuntimeError> {
        self.session_with_model(capabilities, None)
    }

    /// [`Runtime::session`] with `chat_model` in place of the configured chat model when given
    /// (as `--model NAME` would: aliases resolved, provider chosen by the name; the fast model
    /// follows the chat model unless `fast_model` is set). Used by the interactive `/model NAME`
    /// command: the switch lasts for this session only, nothing is written to the configuration.
    ///
    /// # Errors
    /// As [`Runtime::session`]; [`RuntimeError::Model`] when `chat_model` cannot be built (no
    /// key for its provider).
    pub fn session_with_model(
        &self,
        capabilities: Capabilities,
        chat_model: Option<&str>,
    ) -> Result<elroy_orchestrator::Session, RuntimeError> {
        let models = match chat_model {
            None => models::Models::build(
                &self.config,
                &elroy_llm::select::process_env,
                self.warn.as_ref(),
            )?,
            Some(name) => return self.session_for_model(capabilities, name, false),
        };
        self.start_mcp_servers();
        let parts = adapters::session_parts(self, models, capabilities)?;
        Ok(elroy_orchestrator::Session::start(parts)?)
    }

    /// [`Runtime::session_with_model`] for `chat_model`; with `drop_api_base`, without the
    /// configured `chat_model_api_base` and `chat_model_api_key` (they belonged to a model of
    /// another provider: a local server's base URL would otherwise receive the new provider's
    /// requests and answer `404`).
    ///
    /// # Errors
    /// As [`Runtime::session_with_model`].
    pub fn session_for_model(
        &self,
        capabilities: Capabilities,
        chat_model: &str,
        drop_api_base: bool,
    ) -> Result<elroy_orchestrator::Session, RuntimeError> {
        let mut config = (*self.config).clone();
        config.settings.chat_model = Some(chat_model.to_owned());
        if drop_api_base {
            config.settings.chat_model_api_base = None;
            config.settings.chat_model_api_key = None;
        }
        let models =
            models::Models::build(&config, &elroy_llm::select::process_env, self.warn.as_ref())?;
        let parts = adapters::session_parts(self, models, capabilities)?;
        Ok(elroy_orchestrator::Session::start(parts)?)
    }

    /// The versioned home's change recorder, started now if it was not (a session start; `None`
    /// when `versioned_home` is off or the home could not be started). It does not walk the home
    /// for outside edits (see `history.rs`): `elroy history` and `elroy undo` commit them.
    pub fn change_recorder(&self) -> Option<Arc<dyn elroy_orchestrator::ChangeRecorder>> {
        self.history.home().map(|home| {
            Arc::new(adapters::HistoryPort(home)) as Arc<dyn elroy_orchestrator::ChangeRecorder>
        })
    }

    /// [`Runtime::open`], then each of [`Runtime::warnings`] on stderr as `warning: …` (the
    /// command line's one-shot commands).
    ///
    /// # Errors
    /// As [`Runtime::open`].
    pub fn open_for_command(config: Config) -> Result<Self, RuntimeError> {
        let runtime = Runtime::open(config)?;
        for warning in &runtime.warnings {
            output::eprintln(&format!("warning: {warning}"));
        }
        Ok(runtime)
    }

    /// Reports a warning found after opening through the front end's [`WarningSink`].
    pub fn warn(&self, message: &str) {
        (self.warn)(message);
    }

    /// Prints the one line naming the plugins this runtime did not run because they are not
    /// trusted, `warning: …` on stderr (for the front ends that only log [`Runtime::warnings`]:
    /// `elroy message`, the line chat).
    pub fn warn_untrusted(&self) {
        if let Some(line) = self
            .services
            .get::<elroy_plugins::Untrusted>()
            .and_then(|u| elroy_plugins::untrusted_summary(&u.0))
        {
            output::eprintln(&format!("warning: {line}"));
        }
    }
}

/// The registry for `config`: built-in tools unless `include_base_tools` is false, minus
/// `exclude_tools`.
pub fn build_registry(config: &Config) -> ToolRegistry {
    let mut registry = if config.settings.include_base_tools {
        elroy_tools_builtin::builtin_registry()
    } else {
        ToolRegistry::new()
    };
    registry.exclude(&config.settings.exclude_tools);
    registry
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn config(home: &std::path::Path) -> Config {
        let options = elroy_config::LoadOptions {
            home: Some(home.to_path_buf()),
            cwd: home.to_path_buf(),
            user_dir: Some(home.to_path_buf()),
            ..elroy_config::LoadOptions::default()
        };
        Config::load(&options).unwrap()
    }

    /// A tool opens only its own store (the kind: every store is opened on first use, none at
    /// start): opening the runtime opens nothing; `get_current_date` opens nothing;
    /// `get_user_preferred_name` opens the database and the user, not the agenda or memories.
    #[tokio::test]
    async fn a_tool_opens_only_what_it_uses() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".elroy");
        let runtime = Runtime::open_with(config(&home), logged_warnings()).unwrap();
        let open = |r: &Runtime| {
            [
                r.services.is_open::<elroy_db::Db>(),
                r.services.is_open::<elroy_core::UserId>(),
                r.services.is_open::<elroy_agenda::AgendaStore>(),
                r.services.is_open::<elroy_memory::MemoryStore>(),
            ]
        };
        assert_eq!(open(&runtime), [false; 4]);
        let date = runtime.call_tool("get_current_date", None).await;
        assert!(!date.is_error, "{}", date.content);
        assert_eq!(open(&runtime), [false; 4]);
        assert!(!home.join("state.db").exists());
        let name = runtime.call_tool("get_user_preferred_name", None).await;
        assert!(!name.is_error, "{}", name.content);
        assert_eq!(open(&runtime), [true, true, false, false]);
    }
}
