//! # elroy-runtime
//!
//! Opens an elroy home the way a session start does (`orchestrator.md` §2.1 steps 1–4): resolves
//! the configuration, opens the database and the stores (into [`Services`]), and builds the tool
//! registry (built-in tools, `exclude_tools`, `include_base_tools`). Front-ends (CLI, chat, MCP) use
//! it to run tools with the same context a model turn has.

mod effects;
mod services;

use std::sync::Arc;

use elroy_config::Config;
use elroy_core::{
    Capabilities, FixedClock, Services, SystemClock, TimeContext, ToolContext, ToolRegistry,
    ToolResult, UserInfo,
};

/// Why a home could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A store or the database failed to open.
    #[error("{0}")]
    Open(String),
}

/// An opened home: configuration, stores, registry.
pub struct Runtime {
    /// The resolved configuration.
    pub config: Arc<Config>,
    /// Now and the configured zone (`ELROY_NOW` fixes the clock).
    pub time: TimeContext,
    /// The user of this session.
    pub user: UserInfo,
    /// Stores and shared handles, passed to tools.
    pub services: Services,
    /// Every tool of the session.
    pub registry: ToolRegistry,
    /// Non-fatal problems found while opening (config warnings, skipped plugins).
    pub warnings: Vec<String>,
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
    /// Opens the home described by `config`.
    ///
    /// # Errors
    /// [`RuntimeError`] when the database or a store cannot be opened.
    pub fn open(config: Config) -> Result<Self, RuntimeError> {
        let config = Arc::new(config);
        let clock: Arc<dyn elroy_core::Clock> = match config.now {
            Some(now) => Arc::new(FixedClock(now)),
            None => Arc::new(SystemClock),
        };
        let time = TimeContext::new(clock, config.timezone.clone());
        let mut user = UserInfo {
            id: None,
            token: config.settings.user_token.clone(),
            elroy_home: config.paths.elroy_home.clone(),
            user_home: config.paths.user_home.clone(),
        };
        let mut warnings = config.warnings.clone();
        let mut services = services::open_services(&config, &time, &mut user, &mut warnings)?;
        let mut registry = build_registry(&config);
        // Plugins (tools.md §9.1) come after the built-in tools; a bad plugin is a warning.
        let plugins = elroy_plugins::load_plugins(&config, &mut registry);
        for warning in &plugins.warnings {
            tracing::warn!("{warning}");
        }
        warnings.extend(plugins.warnings);
        services.insert(Arc::new(elroy_plugins::Panels(plugins.panels)));
        // --- elroy-history (versioned home) ---
        // Commits hand edits since the last run (or the initial import), then records every tool
        // call that changes a markdown store, whoever makes it (direct, model turn, MCP). A failure
        // here is a warning: the home works unversioned. Store changes that are not tool calls
        // (background memory work) find the home in `Services` and use `VersionedHome::record`.
        if config.settings.versioned_home {
            match elroy_history::VersionedHome::start(&config.paths.elroy_home, time.now()) {
                Ok(home) => {
                    services.insert(Arc::new(home.clone()));
                    registry.set_call_observer(Arc::new(elroy_history::Recorder::new(home)));
                }
                Err(e) => {
                    let message = format!("versioned home: {e}");
                    tracing::warn!("{message}");
                    warnings.push(message);
                }
            }
        }
        Ok(Runtime {
            config,
            time,
            user,
            services,
            registry,
            warnings,
        })
    }

    /// The context a tool call gets in this runtime.
    pub fn tool_context(&self, capabilities: Capabilities) -> ToolContext {
        ToolContext {
            time: self.time.clone(),
            user: self.user.clone(),
            cwd: std::env::current_dir().unwrap_or_else(|_| self.user.user_home.clone()),
            conversation: Arc::new(effects::active_conversation(&self.services, &self.user)),
            capabilities,
            services: self.services.clone(),
        }
    }

    /// A direct tool call (`elroy tools call`): validation and the error contract as in a turn;
    /// the result's effects are applied to the active context window at once (`orchestrator.md`
    /// §7.4, "Direct tool calls"). `restart_session` is not available here.
    pub async fn call_tool(&self, name: &str, raw_arguments: Option<&str>) -> ToolResult {
        let ctx = self.tool_context(Capabilities { can_restart: false });
        let mut result = self.registry.invoke(name, raw_arguments, &ctx).await;
        tracing::info!(
            tool = name,
            is_error = result.is_error,
            effects = result.effects.len(),
            "direct tool call"
        );
        if !result.is_error && !result.effects.is_empty() {
            if let Err(message) =
                effects::apply_direct(&self.services, &self.user, &self.time, &result.effects)
            {
                self.warn(&format!("could not apply the effects of {name}: {message}"));
            } else {
                result.effects.clear();
            }
        }
        result
    }

    fn warn(&self, message: &str) {
        tracing::warn!("{message}");
        eprintln!("warning: {message}");
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
