//! One opened home per user token: the runtime turns run in, its sessions, and its MCP service.
//! Opened on the user's first request and kept (stores, the embedder and MCP clients stay
//! loaded), so later requests pay no start-up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use elroy_config::{Config, ConfigError};
use elroy_mcp::ElroyMcpServer;
use elroy_runtime::Runtime;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::sessions::Sessions;

/// Loads the configuration of a user token (the CLI's flags and files with `--user TOKEN`).
pub type ConfigLoader = Arc<dyn Fn(&str) -> Result<Config, ConfigError> + Send + Sync>;

/// Why a user's home could not be opened ([`Users::get`]); the text follows `the home of user
/// TOKEN could not be opened: ` in the client's error.
#[derive(Debug, thiserror::Error)]
pub enum OpenUserError {
    /// The user's configuration could not be loaded.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The home (stores, registry, models) could not be opened.
    #[error(transparent)]
    Runtime(#[from] elroy_runtime::RuntimeError),
}

/// The MCP-over-HTTP service of one user.
pub type McpService = StreamableHttpService<ElroyMcpServer, LocalSessionManager>;

/// A user's opened home.
pub struct UserState {
    /// The user token.
    pub token: String,
    /// The runtime turns run in (its MCP clients' tools included, as in `elroy message`).
    pub runtime: Runtime,
    /// The user's sessions.
    pub sessions: Sessions,
    /// `/mcp` for this user: elroy's own tools, as `elroy mcp` serves them.
    pub mcp: McpService,
}

impl std::fmt::Debug for UserState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserState")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// Every user's opened home, opened on first use.
pub struct Users {
    loader: ConfigLoader,
    mcp_config: StreamableHttpServerConfig,
    open: Mutex<HashMap<String, Arc<UserState>>>,
}

impl std::fmt::Debug for Users {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Users").finish_non_exhaustive()
    }
}

impl Users {
    /// No user opened yet; `mcp_config` is each user's MCP service configuration.
    pub fn new(loader: ConfigLoader, mcp_config: StreamableHttpServerConfig) -> Self {
        Users {
            loader,
            mcp_config,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The opened home of `token`, opened now if it was not.
    ///
    /// # Errors
    /// [`OpenUserError`]: the configuration or the home could not be opened.
    pub fn get(&self, token: &str) -> Result<Arc<UserState>, OpenUserError> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(user) = open.get(token) {
            return Ok(Arc::clone(user));
        }
        let config = (self.loader)(token)?;
        let runtime = Runtime::open_with(config.clone(), elroy_runtime::logged_warnings())?;
        for warning in &runtime.warnings {
            tracing::warn!("{warning}");
        }
        // A second runtime for MCP: `elroy mcp` serves elroy's own tools only (its clients'
        // tools are never re-exported), while turns offer them.
        let mut mcp_runtime = Runtime::open_with(config, elroy_runtime::logged_warnings())?;
        mcp_runtime.detach_mcp_clients();
        let handler = ElroyMcpServer::new(mcp_runtime);
        let mcp = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            self.mcp_config.clone(),
        );
        let user = Arc::new(UserState {
            token: token.to_owned(),
            runtime,
            sessions: Sessions::default(),
            mcp,
        });
        open.insert(token.to_owned(), Arc::clone(&user));
        Ok(user)
    }
}
