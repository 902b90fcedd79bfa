//! # elroy-mcp-client
//!
//! elroy as a [Model Context Protocol](https://modelcontextprotocol.io) client: the
//! servers configured in `mcp_servers` (and the `mcpServers` of `--mcp-config FILE`, in Claude
//! Desktop's shape, see [`elroy_config::McpServer`]) lend their tools to elroy. Built on the
//! official Rust SDK's client ([`rmcp`]): a stdio server is a child process whose pipes carry
//! rmcp's line transport; a URL is rmcp's streamable HTTP client transport on the workspace's
//! reqwest.
//!
//! - **Names.** Each server tool is the elroy tool `mcp__<server>__<tool>`, sanitised and
//!   shortened to what OpenAI and Anthropic accept ([`naming`]), with the server's description and
//!   `inputSchema` (kept whole: `$defs`, `anyOf`, `title`, `default`). The registry validates its
//!   arguments like any tool's and applies `exclude_tools`.
//! - **In the background.** [`McpClients`] owns a small Tokio runtime of its own (one worker
//!   thread), so servers start, run and are called the same way whichever front end (and
//!   runtime, or none) asks. [`McpClients::start_all`] starts every server in parallel and returns
//!   at once; [`McpClients`] as an [`elroy_core::ToolSource`] lists what is ready now
//!   (`available`), waits for servers still starting (`ready`, each bounded by
//!   `mcp_startup_timeout_seconds`), or starts only the servers a called name could belong to
//!   (`find`: `elroy tools call mcp__a__x` starts only `a`).
//! - **Failures.** A server that cannot start, exits, or does not answer `initialize` and
//!   `tools/list` in time is reported once, by name, with its stderr's last lines, through the
//!   warning sink (and the log); its tools are simply absent. A stdio server that exits while
//!   in use is restarted once per session. A call is bounded by `mcp_call_timeout_seconds`; an
//!   error result (`isError: true`) or a broken connection is a tool error. Transport errors are
//!   one short line naming the cause (connection refused, an HTTP status, never an HTML page);
//!   a start-up timeout of `npx` / `uvx` hints at a first-run download.
//! - **Children.** Each stdio server runs in its own process group with its stderr in the log
//!   (never elroy's stdout or stderr), with a minimal environment ([`child::INHERITED_ENV`])
//!   plus its entry's `env`. At shutdown (dropping the last handle) every group gets SIGTERM,
//!   then SIGKILL, and is reaped; on SIGINT, SIGTERM or SIGHUP of elroy too, unless the front
//!   end handles that signal itself ([`signals`]).
//! - **Effects.** Each tool declares its effect from its transport and annotations
//!   ([`tool_effect`]); tools that require task augmentation are not offered.
//! - **Changes.** `notifications/tools/list_changed` lists the server's tools again.

pub mod child;
mod connect;
pub mod naming;
mod server;
pub mod signals;
mod tasks;
mod tool;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use elroy_config::Config;
use elroy_core::{BoxFuture, SourcedTool, ToolSource};
use tokio::sync::watch;

pub use server::Phase;
pub use tool::{McpTool, effect as tool_effect, result_text};

use server::{Server, Shared};

/// Where server failures are reported (the runtime's warning sink: stderr for the command line,
/// the log only for the interface).
pub type Warn = Arc<dyn Fn(&str) + Send + Sync>;

/// How long shutdown waits for the servers to stop (each gets SIGTERM, then SIGKILL).
const SHUTDOWN_WAIT: Duration = Duration::from_secs(3);

/// One server's state for `elroy mcp list` and the interface's status bar.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    /// Its configured name.
    pub name: String,
    /// `stdio` or `http`.
    pub kind: &'static str,
    /// Its phase.
    pub phase: Phase,
    /// Its tools' exposed names and (first line of) descriptions, when ready.
    pub tools: Vec<(String, String)>,
}

pub(crate) struct Inner {
    servers: Vec<Arc<Server>>,
    handle: tokio::runtime::Handle,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    stop: watch::Sender<bool>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// The MCP servers of one elroy process. Cheap to clone (shared); the servers stop when the
/// last clone is dropped.
#[derive(Clone)]
pub struct McpClients {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.inner.servers.iter().map(|s| &s.config.name))
            .finish()
    }
}

/// The MCP clients' runtime could not be started ([`McpClients::new`]).
#[derive(Debug, thiserror::Error)]
#[error("could not start the MCP clients' runtime: {0}")]
pub struct ClientsError(#[source] pub std::io::Error);

impl McpClients {
    /// The configured servers of `config` (none started), failures reported to `warn`; `None`
    /// when no server is configured (no runtime is built then).
    ///
    /// # Errors
    /// [`ClientsError`] when the clients' runtime (one thread) cannot be started.
    pub fn new(config: &Config, warn: Warn) -> Result<Option<Self>, ClientsError> {
        if config.mcp_servers.is_empty() {
            return Ok(None);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("elroy-mcp-client")
            .enable_all()
            .build()
            .map_err(ClientsError)?;
        let (stop, shutdown) = watch::channel(false);
        let shared = Shared {
            startup_timeout: Duration::from_secs(config.settings.mcp_startup_timeout_seconds),
            call_timeout: Duration::from_secs(config.settings.mcp_call_timeout_seconds),
            warn,
            handle: runtime.handle().clone(),
            shutdown,
        };
        let mut labels: Vec<String> = Vec::new();
        let servers = config
            .mcp_servers
            .iter()
            .map(|server| {
                let label = naming::server_label(&server.name, |l| labels.iter().any(|t| t == l));
                labels.push(label.clone());
                Arc::new(Server::new(server.clone(), label, shared.clone()))
            })
            .collect();
        let inner = Arc::new(Inner {
            servers,
            handle: runtime.handle().clone(),
            runtime: Mutex::new(Some(runtime)),
            stop,
            tasks: Mutex::new(Vec::new()),
        });
        signals::register(&inner);
        Ok(Some(McpClients { inner }))
    }

    /// The configured servers' names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.inner
            .servers
            .iter()
            .map(|s| s.config.name.as_str())
            .collect()
    }

    fn start(&self, server: &Arc<Server>) {
        if server.claim_start() {
            let task = self.inner.handle.spawn(Arc::clone(server).run());
            if let Ok(mut tasks) = self.inner.tasks.lock() {
                tasks.push(task);
            }
        }
    }

    /// Starts every server not started yet, in parallel, and returns at once.
    pub fn start_all(&self) {
        for server in &self.inner.servers {
            self.start(server);
        }
    }

    /// Waits (on the clients' runtime) until none of `servers` is still starting.
    async fn settle(&self, servers: Vec<Arc<Server>>) {
        let task = self.inner.handle.spawn(async move {
            for server in servers {
                server.settled().await;
            }
        });
        let _ = task.await;
    }

    /// Every server's state now (nothing is started).
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.inner
            .servers
            .iter()
            .map(|server| ServerStatus {
                name: server.config.name.clone(),
                kind: server.config.kind(),
                phase: server.phase(),
                tools: server
                    .tools()
                    .iter()
                    .map(|t| {
                        let spec = t.tool.spec();
                        let summary = spec.description.lines().next().unwrap_or_default();
                        (spec.name.clone(), summary.to_owned())
                    })
                    .collect(),
            })
            .collect()
    }

    /// Starts every server and waits until each is ready or failed, then their states
    /// (`elroy mcp list`).
    pub async fn start_and_wait(&self) -> Vec<ServerStatus> {
        self.start_all();
        self.settle(self.inner.servers.clone()).await;
        self.statuses()
    }

    fn available_tools(&self) -> Vec<SourcedTool> {
        let mut tools: Vec<SourcedTool> =
            self.inner.servers.iter().flat_map(|s| s.tools()).collect();
        tools.sort_by(|a, b| a.tool.spec().name.cmp(&b.tool.spec().name));
        tools
    }

    /// Stops every server: SIGTERM to each stdio server's process group, SIGKILL after a short
    /// grace, reaped; waits at most a few seconds. Called when the last clone is dropped; safe to
    /// call from inside another Tokio runtime.
    pub fn shutdown(&self) {
        self.inner.shutdown();
    }
}

impl Inner {
    fn shutdown(&self) {
        self.stop_servers();
        if let Ok(mut runtime) = self.runtime.lock()
            && let Some(runtime) = runtime.take()
        {
            runtime.shutdown_background();
        }
    }

    /// Tells every server to stop and waits (at most [`SHUTDOWN_WAIT`]) until they did; the
    /// clients' runtime keeps running. Safe to call twice and from any thread outside it.
    fn stop_servers(&self) {
        let _ = self.stop.send(true);
        let tasks: Vec<_> = self
            .tasks
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        if !tasks.is_empty() {
            let (done, wait) = std::sync::mpsc::channel();
            self.handle.spawn(async move {
                for task in tasks {
                    let _ = task.await;
                }
                let _ = done.send(());
            });
            let _ = wait.recv_timeout(SHUTDOWN_WAIT);
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl ToolSource for McpClients {
    fn available(&self) -> Vec<SourcedTool> {
        self.available_tools()
    }

    fn ready(&self) -> BoxFuture<'_, Vec<SourcedTool>> {
        Box::pin(async move {
            self.start_all();
            self.settle(self.inner.servers.clone()).await;
            self.available_tools()
        })
    }

    fn find<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Option<SourcedTool>> {
        Box::pin(async move {
            let candidates: Vec<Arc<Server>> = self
                .inner
                .servers
                .iter()
                .filter(|s| naming::could_belong(name, &s.label))
                .cloned()
                .collect();
            for server in &candidates {
                self.start(server);
            }
            self.settle(candidates.clone()).await;
            if let Some(found) = candidates
                .iter()
                .flat_map(|s| s.tools())
                .find(|t| t.tool.spec().name == name)
            {
                return Some(found);
            }
            // A name of a server that failed: say so, not "unknown tool".
            candidates.iter().find_map(|server| match server.phase() {
                Phase::Failed(reason) => Some(SourcedTool {
                    tool: Arc::new(tool::Unavailable {
                        spec: elroy_core::ToolSpec::new(name, "", None),
                        message: format!(
                            "the MCP server {} is not available: {reason}",
                            server.config.name
                        ),
                    }),
                    origin: elroy_core::ToolOrigin::Mcp {
                        server: server.config.name.clone(),
                        tool: name.to_owned(),
                    },
                }),
                _ => None,
            })
        })
    }
}
