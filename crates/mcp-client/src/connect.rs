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
use crate::tasks::{TaskOnly, TaskTap};

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
    /// Its tools that require task augmentation (not offered).
    pub task_only: TaskOnly,
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
    let task_only = TaskOnly::default();
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
                    .serve((TaskTap::new(stdout, Arc::clone(&task_only)), stdin))
                    .await
                    .map_err(|e| format!("the MCP handshake failed: {}", tidy(&e, None)))?;
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
                        "did not answer initialize and tools/list within {} s (mcp_startup_timeout_seconds){}",
                        timeout.as_secs(),
                        download_hint(command)
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
                    task_only,
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
                let service = match handler.serve(transport).await {
                    Ok(service) => service,
                    Err(e) => {
                        let mut reason = tidy(&e, Some(url.as_str()));
                        if reason.contains("error sending request") {
                            // reqwest names no cause in its message: find it.
                            if let Some(cause) = unreachable_cause(url).await {
                                reason = cause;
                            }
                        }
                        return Err(format!("the MCP handshake with {url} failed: {reason}"));
                    }
                };
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
                task_only,
            })
        }
    }
}

/// Why `url` could not be reached when reqwest said only "error sending request": one TCP
/// connection to its host and port (bounded by a few seconds) tells a refused connection and a
/// name that does not resolve; `None` when the port answers (the cause was something else).
async fn unreachable_cause(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let host = parsed
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = parsed.port_or_known_default()?;
    let connect = tokio::net::TcpStream::connect((host, port));
    match tokio::time::timeout(Duration::from_secs(3), connect).await {
        Ok(Ok(_)) => None,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            Some(format!("connection refused: nothing is listening at {url}"))
        }
        Ok(Err(e)) => Some(format!("cannot connect to {host}:{port}: {e}")),
        Err(_) => Some(format!(
            "cannot connect to {host}:{port}: no answer within 3 s"
        )),
    }
}

/// Commands that download the server on their first run.
const DOWNLOADERS: [&str; 2] = ["npx", "uvx"];

/// For a start-up timeout: a hint that `npx` / `uvx` may still be downloading the server.
fn download_hint(command: &str) -> String {
    let program = std::path::Path::new(command)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(command);
    if DOWNLOADERS.contains(&program) {
        format!(
            "; `{program}` may still be downloading the server on its first run: run the command once by hand, or raise mcp_startup_timeout_seconds"
        )
    } else {
        String::new()
    }
}

/// The longest failure reason kept from a transport error, in characters.
const REASON_CHARS: usize = 240;

/// A transport error in one short line that names the cause: the error and its sources without
/// the transport's Rust type name; a refused connection said as "connection refused"; an HTTP
/// status named with its code; an HTML page (a 404 from a web server) never pasted; at most
/// [`REASON_CHARS`] characters.
pub(crate) fn tidy(error: &(dyn std::error::Error + 'static), url: Option<&str>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    let chain = parts.join(": ");
    let lower = chain.to_lowercase();
    let at = url.map(|u| format!(" at {u}")).unwrap_or_default();
    if lower.contains("connection refused") {
        return format!("connection refused: nothing is listening{at}");
    }
    if let Some(status) = http_status(&chain) {
        return match status.split_whitespace().next() {
            Some("401") => {
                format!("HTTP {status}: the server wants credentials; check the entry's headers")
            }
            Some("404") => format!("HTTP {status}: no MCP endpoint{at}; check the URL"),
            _ => format!("HTTP {status}{at}"),
        };
    }
    if lower.contains("auth required") {
        return "HTTP 401 Unauthorized: the server wants credentials; check the entry's headers"
            .to_owned();
    }
    let mut text = chain;
    if let Some(start) = text.find("Transport [")
        && let Some(end) = text[start..].find("] error: ")
    {
        text.replace_range(start..start + end + "] error: ".len(), "");
    }
    let text = text.trim_start_matches("Send message error ").to_owned();
    let html = ["<!doctype", "<html", "<head", "<body"]
        .iter()
        .filter_map(|tag| text.to_lowercase().find(tag))
        .min();
    let (text, page) = match html {
        Some(at) => (
            text[..at].trim_end().trim_end_matches(':').to_owned(),
            " (an HTML page, not an MCP endpoint: check the URL)",
        ),
        None => (text, ""),
    };
    let line = text.lines().next().unwrap_or_default().trim();
    let short: String = line.chars().take(REASON_CHARS).collect();
    let cut = if short.len() < line.len() { "…" } else { "" };
    format!("{short}{cut}{page}")
}

/// The HTTP status an error names (`404 Not Found`), as reqwest and rmcp write it.
fn http_status(text: &str) -> Option<String> {
    for marker in [
        "HTTP status client error (",
        "HTTP status server error (",
        "HTTP status ",
    ] {
        if let Some(start) = text.find(marker) {
            let rest = &text[start + marker.len()..];
            let end = rest.find([')', ',', ';']).unwrap_or(rest.len());
            let status = rest[..end].trim();
            if status.len() >= 3 && status.as_bytes()[..3].iter().all(u8::is_ascii_digit) {
                return Some(status.chars().take(60).collect());
            }
        }
    }
    None
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
