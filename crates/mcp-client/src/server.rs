//! One configured server's life in a session: not started → starting → ready (tools) or failed;
//! a crashed stdio server restarted once; `notifications/tools/list_changed` refreshing the
//! tools; stopped (its process group killed and reaped) at shutdown.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use elroy_config::McpServer;
use elroy_core::{SourcedTool, ToolError, ToolOrigin};
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use tokio::sync::watch;

use crate::child::StderrTail;
use crate::connect::{Connection, Handler, connect, with_stderr};
use crate::naming;
use crate::tool::McpTool;

/// Resolves once shutdown was asked for.
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Not started in this process (`elroy tools call get_current_date` starts none).
    NotStarted,
    /// Starting (or restarting after a crash).
    Starting,
    /// Initialized; its tools are offered.
    Ready,
    /// Could not start, or crashed again after its one restart: the reason, with its last stderr
    /// lines.
    Failed(String),
}

/// Timeouts and the warning sink every server shares.
#[derive(Clone)]
pub(crate) struct Shared {
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    pub warn: crate::Warn,
    /// The clients' runtime.
    pub handle: tokio::runtime::Handle,
    /// Set at shutdown: a starting server stops instead of becoming ready.
    pub shutdown: watch::Receiver<bool>,
}

struct State {
    phase: Phase,
    tools: Vec<SourcedTool>,
    peer: Option<Arc<RunningService<RoleClient, Handler>>>,
    stderr: Option<Arc<StderrTail>>,
}

/// One configured server.
pub struct Server {
    pub(crate) config: McpServer,
    /// The `<server>` part of its tools' names.
    pub(crate) label: String,
    state: Mutex<State>,
    /// Bumped on every change of phase or tools.
    changed: watch::Sender<u64>,
    started: AtomicBool,
    restarted: AtomicBool,
    reported: AtomicBool,
    shared: Shared,
}

impl Server {
    pub(crate) fn new(config: McpServer, label: String, shared: Shared) -> Self {
        Server {
            config,
            label,
            state: Mutex::new(State {
                phase: Phase::NotStarted,
                tools: Vec::new(),
                peer: None,
                stderr: None,
            }),
            changed: watch::channel(0).0,
            started: AtomicBool::new(false),
            restarted: AtomicBool::new(false),
            reported: AtomicBool::new(false),
            shared,
        }
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut state) = self.state.lock() {
            f(&mut state);
        }
        self.changed.send_modify(|n| *n += 1);
    }

    /// The phase now.
    pub fn phase(&self) -> Phase {
        self.state
            .lock()
            .map_or(Phase::Failed("state lock poisoned".into()), |s| {
                s.phase.clone()
            })
    }

    /// The tools offered now (none unless ready).
    pub(crate) fn tools(&self) -> Vec<SourcedTool> {
        self.state
            .lock()
            .map_or_else(|_| Vec::new(), |s| s.tools.clone())
    }

    /// Marks the server as started; `true` the first time (the caller then runs [`Server::run`]).
    pub(crate) fn claim_start(&self) -> bool {
        let first = !self.started.swap(true, Ordering::SeqCst);
        if first {
            self.update(|s| s.phase = Phase::Starting);
        }
        first
    }

    /// Waits until the server is ready or failed (or was never started); at most a little more
    /// than the startup timeout (connecting is bounded by it already).
    pub(crate) async fn settled(&self) {
        let mut changes = self.changed.subscribe();
        let wait = async {
            loop {
                if !matches!(self.phase(), Phase::Starting) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        let limit = self.shared.startup_timeout + Duration::from_secs(2);
        let _ = tokio::time::timeout(limit, wait).await;
    }

    /// After a call found the connection of a stdio server closed: its tools are withdrawn at
    /// once (the process is exiting; [`Server::serve`] restarts it or reports it), so the next
    /// call waits for the restart instead of reaching the dead connection. A connection already
    /// replaced is left alone.
    fn connection_lost(&self, peer: &Arc<RunningService<RoleClient, Handler>>) {
        if self.config.kind() != "stdio" {
            return;
        }
        self.update(|s| {
            if s.peer.as_ref().is_some_and(|p| Arc::ptr_eq(p, peer)) {
                s.phase = Phase::Starting;
                s.tools.clear();
                s.peer = None;
            }
        });
    }

    fn report(&self, reason: &str) {
        if !self.reported.swap(true, Ordering::SeqCst) {
            (self.shared.warn)(&format!("MCP server {} failed: {reason}", self.config.name));
        }
    }

    fn fail(&self, reason: String) {
        tracing::warn!(server = %self.config.name, "MCP server failed: {reason}");
        self.report(&reason);
        self.update(|s| {
            s.phase = Phase::Failed(reason);
            s.tools.clear();
            s.peer = None;
        });
    }

    /// The server's tools as elroy tools, named by [`naming`].
    /// Tools that require task augmentation (`task_only`) are not offered: elroy calls tools
    /// only directly.
    fn make_tools(
        self: &Arc<Self>,
        listed: &[rmcp::model::Tool],
        task_only: &crate::tasks::TaskOnly,
    ) -> Vec<SourcedTool> {
        let mut names: Vec<String> = Vec::new();
        let mut out = Vec::new();
        let task_only = task_only.lock().map(|t| t.clone()).unwrap_or_default();
        for tool in listed {
            if task_only.contains(tool.name.as_ref()) {
                tracing::info!(
                    server = %self.config.name,
                    tool = %tool.name,
                    "MCP tool not offered: it can only run as a task (execution.taskSupport: required)"
                );
                continue;
            }
            let exposed = naming::exposed_name(&self.label, &self.config.name, &tool.name, |n| {
                names.iter().any(|t| t == n)
            });
            match McpTool::new(self, exposed.clone(), tool) {
                Ok(mcp_tool) => {
                    names.push(exposed);
                    out.push(SourcedTool {
                        tool: Arc::new(mcp_tool),
                        origin: ToolOrigin::Mcp {
                            server: self.config.name.clone(),
                            tool: tool.name.to_string(),
                        },
                    });
                }
                Err(e) => tracing::warn!(
                    server = %self.config.name,
                    tool = %tool.name,
                    "MCP tool skipped: its inputSchema cannot be read: {e}"
                ),
            }
        }
        out
    }

    /// The server's life: connect, serve until it exits or elroy shuts down, restart once after
    /// a crash. Runs on the clients' runtime.
    pub(crate) async fn run(self: Arc<Self>) {
        let mut shutdown = self.shared.shutdown.clone();
        loop {
            self.update(|s| s.phase = Phase::Starting);
            let connecting = connect(&self.config, self.shared.startup_timeout);
            let connection = tokio::select! {
                outcome = connecting => outcome,
                () = stopped(&mut shutdown) => return,
            };
            let connection = match connection {
                Ok(connection) => connection,
                Err(reason) => return self.fail(reason.to_string()),
            };
            match self.serve(connection, &mut shutdown).await {
                None => return,
                Some(reason) => {
                    if self.restarted.swap(true, Ordering::SeqCst) {
                        return self.fail(format!(
                            "{reason} (it was restarted once already in this session)"
                        ));
                    }
                    tracing::warn!(server = %self.config.name, "MCP server {reason}; restarting it once");
                }
            }
        }
    }

    /// Serves one connection; `Some(reason)` when the server exited (a crash), `None` at shutdown.
    async fn serve(
        self: &Arc<Self>,
        connection: Connection,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Option<String> {
        let Connection {
            service,
            mut process,
            tools,
            list_changed,
            task_only,
        } = connection;
        let peer = Arc::new(service);
        let stderr = process.as_ref().map(|p| Arc::clone(&p.stderr));
        let offered = self.make_tools(&tools, &task_only);
        tracing::info!(server = %self.config.name, tools = offered.len(), "MCP server ready");
        self.update(|s| {
            s.phase = Phase::Ready;
            s.tools = offered;
            s.peer = Some(Arc::clone(&peer));
            s.stderr = stderr.clone();
        });
        let outcome = loop {
            tokio::select! {
                () = list_changed.notified() => {
                    let listed = tokio::time::timeout(self.shared.startup_timeout, peer.list_all_tools()).await;
                    match listed {
                        Ok(Ok(tools)) => {
                            let offered = self.make_tools(&tools, &task_only);
                            tracing::info!(server = %self.config.name, tools = offered.len(), "MCP server's tools changed");
                            self.update(|s| s.tools = offered);
                        }
                        Ok(Err(e)) => tracing::warn!(server = %self.config.name, "tools/list after list_changed failed: {e}"),
                        Err(_) => tracing::warn!(server = %self.config.name, "tools/list after list_changed timed out"),
                    }
                }
                status = async {
                    match process.as_mut() {
                        Some(process) => process.wait().await,
                        None => std::future::pending().await,
                    }
                } => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    break Some(with_stderr(format!("exited ({status})"), stderr.as_deref()));
                }
                () = stopped(shutdown) => break None,
            }
        };
        self.update(|s| {
            s.peer = None;
            s.tools.clear();
            if outcome.is_some() {
                s.phase = Phase::Starting;
            }
        });
        if let Ok(peer) = Arc::try_unwrap(peer) {
            let _ = tokio::time::timeout(Duration::from_millis(200), peer.cancel()).await;
        }
        if let Some(process) = process.as_mut() {
            process.stop().await;
        }
        outcome
    }

    /// Calls `tool` with `arguments`, waiting for a server still starting; bounded by
    /// `mcp_call_timeout_seconds`. Runs on the clients' runtime (the caller's may have no timer).
    ///
    /// # Errors
    /// A [`ToolError`] naming the server: not available (and why), no answer in time, or the
    /// connection broke during the call (a crash, with its last stderr lines).
    pub(crate) async fn call(
        self: &Arc<Self>,
        tool: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ToolError> {
        let server = Arc::clone(self);
        let tool = tool.to_owned();
        let task = self.shared.handle.spawn(async move {
            server.settled().await;
            let (peer, stderr) = {
                let state = server
                    .state
                    .lock()
                    .map_err(|_| ToolError::new("MCP client state lock poisoned"))?;
                match (&state.phase, &state.peer) {
                    (Phase::Ready, Some(peer)) => (Arc::clone(peer), state.stderr.clone()),
                    (Phase::Failed(reason), _) => {
                        return Err(ToolError::new(format!(
                            "the MCP server {} is not available: {reason}",
                            server.config.name
                        )));
                    }
                    _ => {
                        return Err(ToolError::new(format!(
                            "the MCP server {} is not running",
                            server.config.name
                        )));
                    }
                }
            };
            let params = CallToolRequestParams::new(tool.clone()).with_arguments(arguments);
            let timeout = server.shared.call_timeout;
            match tokio::time::timeout(timeout, peer.call_tool(params)).await {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(e)) => {
                    if matches!(
                        e,
                        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)
                    ) {
                        server.connection_lost(&peer);
                    }
                    // A crash shows as the connection closing; its stderr arrives just after.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Err(ToolError::new(with_stderr(
                        format!(
                            "the MCP server {} failed during the call of {tool}: {}",
                            server.config.name,
                            crate::connect::tidy(&e, None)
                        ),
                        stderr.as_deref(),
                    )))
                }
                Err(_) => Err(ToolError::new(format!(
                    "the MCP server {} did not answer the call of {tool} within {} s (mcp_call_timeout_seconds)",
                    server.config.name,
                    timeout.as_secs()
                ))),
            }
        });
        task.await
            .unwrap_or_else(|e| Err(ToolError::new(format!("the MCP call could not run: {e}"))))
    }
}
