//! One connection to one server: the transport (a child's stdio, or streamable HTTP), the MCP
//! handshake and the first `tools/list`, bounded by the startup timeout.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use elroy_config::{McpServer, McpTransport};
use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, StreamableHttpError,
};
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

/// Why a server could not be started or reached ([`connect`]): its text is the sentence the
/// person reads (`mcp list`, the one warning), naming the cause.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The entry itself is not usable (the configuration's words).
    #[error("{0}")]
    Entry(String),
    /// The stdio server's program could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The stdio server answered `initialize` wrongly.
    #[error("the MCP handshake failed: {}", tidy(.0.as_ref(), None))]
    Handshake(#[source] Box<rmcp::service::ClientInitializeError>),
    /// `tools/list` failed.
    #[error("tools/list failed: {0}")]
    ToolsList(#[source] Box<rmcp::ServiceError>),
    /// The stdio server did not answer within the start-up timeout; `hint` may say that `npx` /
    /// `uvx` is still downloading it.
    #[error(
        "did not answer initialize and tools/list within {seconds} s (mcp_startup_timeout_seconds){hint}"
    )]
    TimedOut {
        /// The timeout, in seconds.
        seconds: u64,
        /// `; \`npx\` may still be downloading …` or nothing.
        hint: String,
    },
    /// The stdio server exited while starting (its exit status as shown).
    #[error("exited during start-up ({0})")]
    Exited(String),
    /// The HTTP server's handshake failed; `reason` is the cause in one short line.
    #[error("the MCP handshake with {url} failed: {reason}")]
    HttpHandshake {
        /// The server's URL.
        url: String,
        /// The cause, in one short line.
        reason: String,
        /// rmcp's error.
        #[source]
        source: Box<rmcp::service::ClientInitializeError>,
    },
    /// The HTTP server did not answer within the start-up timeout.
    #[error(
        "{url} did not answer initialize and tools/list within {seconds} s (mcp_startup_timeout_seconds)"
    )]
    HttpTimedOut {
        /// The server's URL.
        url: String,
        /// The timeout, in seconds.
        seconds: u64,
    },
    /// A configured header name is not valid.
    #[error("header name {name:?} is not valid: {source}")]
    HeaderName {
        /// The name.
        name: String,
        /// Why.
        #[source]
        source: reqwest::header::InvalidHeaderName,
    },
    /// A configured header value is not valid.
    #[error("the value of header {name} is not valid: {source}")]
    HeaderValue {
        /// The header's name.
        name: String,
        /// Why.
        #[source]
        source: reqwest::header::InvalidHeaderValue,
    },
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    /// Any of these, followed by the last lines the server wrote to stderr.
    #[error("{source}; its stderr ended with:\n  {}", lines.join("\n  "))]
    WithStderr {
        /// The failure.
        #[source]
        source: Box<ConnectError>,
        /// The stderr lines quoted.
        lines: Vec<String>,
    },
}

impl ConnectError {
    /// This failure with the server's last stderr lines, when it wrote any.
    fn with_stderr(self, stderr: &StderrTail) -> Self {
        let lines = stderr.last(STDERR_LINES_QUOTED);
        if lines.is_empty() {
            self
        } else {
            ConnectError::WithStderr {
                source: Box::new(self),
                lines,
            }
        }
    }
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
/// [`ConnectError`]: the program could not be started, the server did not answer in time,
/// exited, or refused (an HTTP status such as 401 is named).
pub async fn connect(server: &McpServer, timeout: Duration) -> Result<Connection, ConnectError> {
    if let Some(problem) = &server.problem {
        return Err(ConnectError::Entry(problem.clone()));
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
            let (mut process, stdout, stdin) =
                crate::child::spawn(&spec).map_err(|source| ConnectError::Spawn {
                    command: command.clone(),
                    source,
                })?;
            let stderr = Arc::clone(&process.stderr);
            let handshake = async {
                let service = handler
                    .serve((TaskTap::new(stdout, Arc::clone(&task_only)), stdin))
                    .await
                    .map_err(|e| ConnectError::Handshake(Box::new(e)))?;
                let tools = service
                    .list_all_tools()
                    .await
                    .map_err(|e| ConnectError::ToolsList(Box::new(e)))?;
                Ok::<_, ConnectError>((service, tools))
            };
            let outcome = tokio::select! {
                outcome = tokio::time::timeout(timeout, handshake) => match outcome {
                    Ok(outcome) => outcome,
                    Err(_) => Err(ConnectError::TimedOut {
                        seconds: timeout.as_secs(),
                        hint: download_hint(command),
                    }),
                },
                status = process.wait() => Err(ConnectError::Exited(status.to_string())),
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
                    Err(reason.with_stderr(&stderr))
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
                        if cause(&e) == Cause::NotSent {
                            // reqwest names no cause in its message: find it.
                            if let Some(found) = unreachable_cause(url).await {
                                reason = found;
                            }
                        }
                        return Err(ConnectError::HttpHandshake {
                            url: url.to_string(),
                            reason,
                            source: Box::new(e),
                        });
                    }
                };
                let tools = service
                    .list_all_tools()
                    .await
                    .map_err(|e| ConnectError::ToolsList(Box::new(e)))?;
                Ok::<_, ConnectError>((service, tools))
            };
            let (service, tools) =
                tokio::time::timeout(timeout, handshake)
                    .await
                    .map_err(|_| ConnectError::HttpTimedOut {
                        url: url.to_string(),
                        seconds: timeout.as_secs(),
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
    let at = url.map(|u| format!(" at {u}")).unwrap_or_default();
    match cause(error) {
        Cause::Refused => return format!("connection refused: nothing is listening{at}"),
        Cause::Status(status) => {
            return match status.as_u16() {
                401 => {
                    format!(
                        "HTTP {status}: the server wants credentials; check the entry's headers"
                    )
                }
                404 => format!("HTTP {status}: no MCP endpoint{at}; check the URL"),
                _ => format!("HTTP {status}{at}"),
            };
        }
        Cause::AuthRequired => {
            return "HTTP 401 Unauthorized: the server wants credentials; check the entry's headers"
                .to_owned();
        }
        Cause::NotSent | Cause::Other => {}
    }
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    // What follows shortens the words for one line; it decides nothing.
    let mut text = parts.join(": ");
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

/// What a transport error comes down to, found from the errors it is made of (never from
/// their words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The connection was refused (nothing listens at the address).
    Refused,
    /// The server answered with this HTTP status.
    Status(reqwest::StatusCode),
    /// The server wants credentials (rmcp's `AuthRequired`).
    AuthRequired,
    /// The HTTP client could not send the request, for a reason it does not name (a name that
    /// does not resolve, a connection that fails otherwise).
    NotSent,
    /// Anything else.
    Other,
}

/// The [`Cause`] of `error`.
pub(crate) fn cause(error: &(dyn std::error::Error + 'static)) -> Cause {
    let causes = causes(error);
    if causes.iter().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    }) {
        return Cause::Refused;
    }
    let status = causes.iter().find_map(|c| {
        if let Some(r) = c.downcast_ref::<reqwest::Error>() {
            return r.status();
        }
        c.downcast_ref::<HttpStatusError>()
            .and_then(|h| reqwest::StatusCode::from_u16(h.status).ok())
    });
    if let Some(status) = status {
        return Cause::Status(status);
    }
    if causes
        .iter()
        .any(|c| c.downcast_ref::<AuthRequiredError>().is_some())
    {
        return Cause::AuthRequired;
    }
    if causes.iter().any(|c| {
        c.downcast_ref::<reqwest::Error>()
            .is_some_and(|r| r.is_request() || r.is_connect())
    }) {
        return Cause::NotSent;
    }
    Cause::Other
}

/// The errors `error` is made of, outermost first: each one's `source()`, and the errors rmcp
/// holds without naming them as sources (the transport's error inside a failed `initialize`, the
/// HTTP client's error inside a streamable HTTP error).
fn causes<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Vec<&'a (dyn std::error::Error + 'static)> {
    let mut out = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        out.push(e);
        if out.len() > 32 {
            break;
        }
        next = held_source(e).or_else(|| e.source());
    }
    out
}

/// The error rmcp keeps inside `e` without returning it from `source()`.
fn held_source<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    if let Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) =
        e.downcast_ref()
    {
        return Some(error);
    }
    if let Some(StreamableHttpError::<reqwest::Error>::Client(inner)) = e.downcast_ref() {
        return Some(inner);
    }
    None
}

/// The HTTP client of a streamable HTTP server: the workspace's reqwest (rustls with ring, no
/// second TLS stack), the configured headers on every request, connecting bounded by the
/// startup timeout.
fn http_client(
    headers: &BTreeMap<String, String>,
    timeout: Duration,
) -> Result<reqwest::Client, ConnectError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|source| {
            ConnectError::HeaderName {
                name: name.clone(),
                source,
            }
        })?;
        let mut value = reqwest::header::HeaderValue::from_str(value).map_err(|source| {
            ConnectError::HeaderValue {
                name: name.to_string(),
                source,
            }
        })?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    reqwest::Client::builder()
        .default_headers(map)
        .connect_timeout(timeout)
        .build()
        .map_err(ConnectError::HttpClient)
}
