//! # elroy-mcp
//!
//! `elroy mcp`: a [Model Context Protocol](https://modelcontextprotocol.io) server over stdio,
//! built on the official Rust SDK ([`rmcp`]). It exposes every tool registered in an opened
//! [`Runtime`] (built-in tools and plugins) and runs each call the way a direct call runs
//! (`Runtime::call_tool`): registry lookup (unknown tools, D2), argument validation and coercion
//! (D3), the error contract (D1) and the result's effects applied to the active context window,
//! against the same home as every other front-end.
//!
//! - **`tools/list`**: one MCP tool per registered tool, in registry order; name and description
//!   verbatim, `inputSchema` = the tool's OpenAI `function.parameters` ([`input_schema`]).
//! - **`tools/call`**: the content of the tool result as one text block; a failed call
//!   (`Error invoking tool NAME: …`) comes back with `isError: true`, never as a JSON-RPC error.
//! - **Tool-list changes**: the server declares `tools.listChanged`. While it runs it checks the
//!   plugin locations (the home `contrib/` directory, `contrib_tools_path`, `custom_tools_path`)
//!   every [`PLUGIN_POLL_INTERVAL`]; when the set of plugin executables or their size or
//!   modification time changed, it probes them again, swaps the registry, and sends
//!   `notifications/tools/list_changed` if the tool list (names, descriptions or schemas)
//!   differs. Built-in tools never change while the server runs.
//! - **Framing**: every line is answered ([`framing`]): a line that is not JSON with `-32700
//!   Parse error` (`"id": null`), a message longer than [`framing::MAX_MESSAGE_BYTES`] (16 MiB)
//!   with `-32600` naming its size (with its `id`, or `null` when it has none); the server goes
//!   on reading. A `tools/call` with `params: null` or without `name` is `-32602 Invalid
//!   params`.
//! - **Annotations**: each listed tool carries `readOnlyHint`, `destructiveHint`,
//!   `idempotentHint` and `openWorldHint` derived from its declared effect ([`annotations`]).
//! - **Caller**: calls run as [`elroy_core::Caller::Client`], so the permission gate refuses
//!   what the rules deny and leaves asking to the client, which asks its person.
//! - **Logging**: stdout carries the protocol only. Logs go to the log file the CLI set up;
//!   warnings (for example a plugin that could not be loaded) go to stderr.

pub mod framing;
mod plugins_watch;
mod server;

pub use plugins_watch::PLUGIN_POLL_INTERVAL;
pub use server::{ElroyMcpServer, annotations, input_schema, mcp_tool};

use elroy_runtime::Runtime;

/// Why the server stopped with an error. Each variant keeps its source; the CLI prints the text.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The MCP handshake failed (the client sent no valid `initialize`, or the transport broke
    /// during it).
    #[error("MCP initialization failed: {0}")]
    Initialize(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    /// The connection's task failed after the handshake.
    #[error("MCP connection failed: {0}")]
    Connection(#[source] tokio::task::JoinError),
}

impl McpError {
    /// Whether the server stopped because the client closed the pipe (`elroy mcp | true`): an
    /// `io::Error` of kind `BrokenPipe` in the source chain. rmcp's failed handshake write
    /// (`ServerInitializeError::TransportError`) keeps its transport error in a field that is
    /// not its `source`, so the chain is followed into it too. The CLI ends quietly then.
    pub fn is_broken_pipe(&self) -> bool {
        broken_pipe_in(self)
    }
}

/// Whether `error`'s source chain holds an `io::Error` of kind `BrokenPipe`.
fn broken_pipe_in(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        if let Some(rmcp::service::ServerInitializeError::TransportError { error, .. }) =
            e.downcast_ref::<rmcp::service::ServerInitializeError>()
        {
            return broken_pipe_in(error);
        }
        current = e.source();
    }
    false
}

/// Serves `runtime`'s tools over stdin/stdout until the client closes the connection.
///
/// Must run inside a Tokio runtime with IO and time enabled (the CLI's `block_on` is one).
///
/// # Errors
/// [`McpError`] when the MCP handshake fails or the connection breaks; a client that simply
/// closes standard input ends the server with `Ok(())`.
pub async fn serve_stdio(runtime: Runtime) -> Result<(), McpError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    // Every line is looked at in front of rmcp, so one that is not JSON or is over the limit is
    // answered ([`framing`]); those answers and rmcp's share stdout through one writer.
    let (replies, replies_rx) = tokio::sync::mpsc::unbounded_channel();
    let (rmcp_out, writer_in) = tokio::io::duplex(64 * 1024);
    let writer = tokio::spawn(framing::write_lines(writer_in, replies_rx, stdout));
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(
        framing::BoundedLines::new(stdin, replies),
        rmcp_out,
    )
    .with_max_line_length(framing::RMCP_LINE_LIMIT);
    let outcome = serve(runtime, transport).await;
    // The last answers reach the client before the process ends (bounded: a client that stopped
    // reading does not hold elroy up).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
    outcome
}

/// Serves `runtime`'s tools over any rmcp transport (stdio in production, an in-memory duplex in
/// tests) until the peer disconnects.
///
/// # Errors
/// As [`serve_stdio`].
pub async fn serve<T, E, A>(mut runtime: Runtime, transport: T) -> Result<(), McpError>
where
    T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::ServiceExt;

    // elroy's own tools only: the tools elroy uses from other MCP servers are not re-exported
    // (two elroys configured as each other's servers would call each other in a loop).
    runtime.detach_mcp_clients();
    let server = ElroyMcpServer::new(runtime);
    let shared = server.shared();
    let running = server
        .serve(transport)
        .await
        .map_err(|e| McpError::Initialize(Box::new(e)))?;
    tracing::info!("mcp: client connected");
    let watcher = tokio::spawn(plugins_watch::watch(shared, running.peer().clone()));
    let outcome = running.waiting().await;
    watcher.abort();
    tracing::info!("mcp: connection closed");
    match outcome {
        Ok(_) => Ok(()),
        Err(e) => Err(McpError::Connection(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handshake_write_failed(kind: std::io::ErrorKind) -> McpError {
        type Stdio = rmcp::transport::async_rw::AsyncRwTransport<
            rmcp::RoleServer,
            tokio::io::Stdin,
            tokio::io::Stdout,
        >;
        McpError::Initialize(Box::new(rmcp::service::ServerInitializeError::transport::<
            Stdio,
        >(
            std::io::Error::from(kind),
            "send initialize response",
        )))
    }

    /// A closed pipe is told by the kind of the write's error inside rmcp's handshake error; a
    /// refused write of another kind is a failure.
    #[test]
    fn a_closed_pipe_is_told_by_its_kind() {
        assert!(handshake_write_failed(std::io::ErrorKind::BrokenPipe).is_broken_pipe());
        assert!(!handshake_write_failed(std::io::ErrorKind::PermissionDenied).is_broken_pipe());
        let other =
            McpError::Initialize(Box::new(std::io::Error::other("Broken pipe (os error 32)")));
        assert!(!other.is_broken_pipe(), "the words alone decide nothing");
    }
}
