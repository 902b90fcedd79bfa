//! One connection to one server: the transport (a child's stdio, or streamable HTTP), the MCP
//! handshake and the first `tools/list`, bounded by the startup timeout.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use elroy_config::{McpServer, McpTransport};
use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::Notify;

use crate::child::{ServerProcess, Spawn, StderrTail};

/// Lines of stderr quoted in a failure message.
pub const STDERR_LINES_QUOTED: usize = 5;

/// The client side of one connection: tells the refresher when the server's tool list changed.
#[derive(Clone)]
pub struct Handler {
    /// Notified on `notifications/tools/list_changed`.
    pub list_changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("elroy", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// An initialized connection with the server's tools.
pub struct Connection {
    /// The rmcp client.
    pub service: RunningService<RoleClient, Handler>,
    /// The child process of a stdio server.
    pub process: Option<ServerProcess>,
    /// The server's tools as it listed them.
    pub tools: Vec<rmcp::model::Tool>,
    /// Notified when the server's tool list changed.
    pub list_changed: Arc<Notify>,
}

/// Why a server could not be reached: a sentence naming the cause, with the server's last
/// stderr lines when it wrote any.
pub fn with_stderr(reason: String, stderr: Option<&StderrTail>) -> String {
    let lines = stderr
        .map(|s| s.last(STDERR_LINES_QUOTED))
        .unwrap_or_default();
    if lines.is_empty() {
        reason
    } else {
        format!("{reason}; its stderr ended with:\n  {}", lines.join("\n  "))
    }
}

/// Starts (stdio) or reaches (HTTP) `server`, runs `initialize` and lists its tools, all within
/// `timeout`.
///
/// # Errors
/// A sentence for the user: the program could not be started, the server did not answer in
/// time, exited, or refused (an HTTP status such as 401 is named).
pub async fn connect(server: &McpServer, timeout: Duration) -> Result<Connection, String> {
    if let Some(problem) = &server.problem {
        return Err(problem.clone());
    }
    let list_changed = Arc::new(Notify::new());
    let handler = Handler {
        list_changed: Arc::clone(&list_changed),
    };
    match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let spec = Spawn {
                server: &server.name,
                command,
                args,
                env,
                cwd: cwd.as_ref(),
            };
            let (mut process, stdout, stdin) = crate::child::spawn(&spec)
                .map_err(|e| format!("could not start `{command}`: {e}"))?;
            let stderr = Arc::clone(&process.stderr);
            let handshake = async {
                let service = handler
                    .serve((stdout, stdin))
                    .await
                    .map_err(|e| format!("the MCP handshake failed: {}", tidy(&e.to_string())))?;
                let tools = service
                    .list_all_tools()
                    .await
                    .map_err(|e| format!("tools/list failed: {e}"))?;
                Ok::<_, String>((service, tools))
            };
            let outcome = tokio::select! {
                outcome = tokio::time::timeout(timeout, handshake) => match outcome {
                    Ok(outcome) => outcome,
                    Err(_) => Err(format!(
                        "did not answer initialize and tools/list within {} s (mcp_startup_timeout_seconds)",
                        timeout.as_secs()
                    )),
                },
                status = process.wait() => Err(format!("exited during start-up ({status})")),
            };
            match outcome {
                Ok((service, tools)) => Ok(Connection {
                    service,
                    process: Some(process),
                    tools,
                    list_changed,
                }),
                Err(reason) => {
                    process.stop().await;
                    // The stderr reader gets the lines written before the exit.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Err(with_stderr(reason, Some(&stderr)))
                }
            }
        }
        McpTransport::Http { url, headers } => {
            let client = http_client(headers, timeout)?;
            let config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    url.as_str(),
                );
            let transport =
                rmcp::transport::StreamableHttpClientTransport::with_client(client, config);
            let handshake = async {
                let service = handler.serve(transport).await.map_err(|e| {
                    format!(
                        "the MCP handshake with {url} failed: {}",
                        tidy(&e.to_string())
                    )
                })?;
                let tools = service
                    .list_all_tools()
                    .await
                    .map_err(|e| format!("tools/list failed: {e}"))?;
                Ok::<_, String>((service, tools))
            };
            let (service, tools) = tokio::time::timeout(timeout, handshake)
                .await
                .map_err(|_| {
                    format!(
                        "{url} did not answer initialize and tools/list within {} s (mcp_startup_timeout_seconds)",
                        timeout.as_secs()
                    )
                })??;
            Ok(Connection {
                service,
                process: None,
                tools,
                list_changed,
            })
        }
    }
}

/// rmcp's error text without the transport's Rust type name
/// (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: Auth required, when send
/// initialize request` → `Auth required, when send initialize request`), and a 401 said plainly.
fn tidy(message: &str) -> String {
    let mut text = message.to_owned();
    if let Some(start) = text.find("Transport [")
        && let Some(end) = text[start..].find("] error: ")
    {
        text.replace_range(start..start + end + "] error: ".len(), "");
    }
    let text = text.trim_start_matches("Send message error ").to_owned();
    if text.contains("Auth required") {
        format!(
            "{text} (HTTP 401 Unauthorized: the server wants credentials; check the entry's headers)"
        )
    } else {
        text
    }
}

/// The HTTP client of a streamable HTTP server: the workspace's reqwest (rustls with ring, no
/// second TLS stack), the configured headers on every request, connecting bounded by the
/// startup timeout.
fn http_client(
    headers: &BTreeMap<String, String>,
    timeout: Duration,
) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("header name {name:?} is not valid: {e}"))?;
        let mut value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|e| format!("the value of header {name} is not valid: {e}"))?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    reqwest::Client::builder()
        .default_headers(map)
        .connect_timeout(timeout)
        .build()
        .map_err(|e| format!("could not build the HTTP client: {e}"))
}
