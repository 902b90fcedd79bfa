//! # elroy-serve
//!
//! `elroy serve`: elroy behind any chat front end or MCP client over HTTP (`docs/serve.md`).
//!
//! - `GET /v1/models`: one model, `elroy` (backed by the configured chat model).
//! - `POST /v1/chat/completions`: one elroy turn per request (recall, due items, elroy's tools,
//!   memory formation after the reply) with the configured model upstream; the reply as OpenAI's
//!   `chat.completion`, or streamed as `chat.completion.chunk` server-sent events ending with
//!   `data: [DONE]`, with keep-alive comments while the turn runs ([`chat`]).
//! - `/mcp`: elroy's tools over MCP's streamable HTTP transport (rmcp), for the key's user.
//! - Every request needs `Authorization: Bearer KEY`; each key maps to a user token, whose home
//!   (memories, agenda, notes) is the only one its requests reach. A wrong or missing key is
//!   `401` in OpenAI's error shape.
//! - Sessions ([`sessions`]): one conversation, one context window; one turn per session at a
//!   time (a second request waits), sessions run concurrently.
//! - Shutdown ([`run`]): the listener closes, running turns finish and their background work
//!   (memory formation) completes, MCP streams end.

pub mod chat;
mod mcp_http;
pub mod sessions;
pub mod settings;
pub mod users;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use settings::{ServeSettings, SettingsError, ToolActivity};
pub use users::{ConfigLoader, OpenUserError};

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Accepting connections failed.
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// What every handler shares.
pub(crate) struct AppState {
    pub(crate) settings: ServeSettings,
    pub(crate) users: users::Users,
    /// Background work after turns (memory formation), awaited at shutdown.
    pub(crate) background: Mutex<Vec<JoinHandle<()>>>,
}

impl AppState {
    /// Keeps `task` to be awaited at shutdown (finished ones are dropped now).
    pub(crate) fn keep(&self, task: JoinHandle<()>) {
        let mut tasks = self.background.lock().unwrap_or_else(|e| e.into_inner());
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }
}

/// The authenticated user of a request, put in its extensions by [`authenticate`].
#[derive(Debug, Clone)]
pub(crate) struct AuthedUser(pub(crate) Arc<users::UserState>);

/// What the request log line adds about a request (the session), set by handlers.
#[derive(Debug, Clone)]
pub(crate) struct LogNote(pub(crate) String);

/// An error in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
pub(crate) fn openai_error(
    status: StatusCode,
    kind: &str,
    code: Option<&str>,
    param: Option<&str>,
    message: impl Into<String>,
) -> Response {
    let body = serde_json::json!({
        "error": {
            "message": message.into(),
            "type": kind,
            "param": param,
            "code": code,
        }
    });
    (status, axum::Json(body)).into_response()
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, key) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
}

/// Checks the bearer key and opens its user's home; `401` otherwise.
async fn authenticate(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer(request.headers()).and_then(|key| state.settings.user_of(key)) else {
        return openai_error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            Some("invalid_api_key"),
            None,
            "Incorrect or missing API key: send Authorization: Bearer KEY with a key of serve.keys or ELROY_SERVE_KEY.",
        );
    };
    let token = token.to_owned();
    let opened = {
        let state = Arc::clone(&state);
        let token = token.clone();
        tokio::task::spawn_blocking(move || state.users.get(&token)).await
    };
    match opened {
        Ok(Ok(user)) => {
            request.extensions_mut().insert(AuthedUser(user));
            next.run(request).await
        }
        Ok(Err(e)) => openai_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            None,
            None,
            format!("the home of user {token} could not be opened: {e}"),
        ),
        Err(e) => openai_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            None,
            None,
            format!("the home of user {token} could not be opened: {e}"),
        ),
    }
}

/// One line per request on stderr (and in the log): method, path, status, milliseconds, user
/// and what the handler noted (the session).
async fn log_request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let note = response
        .extensions()
        .get::<LogNote>()
        .map(|n| format!(" {}", n.0))
        .unwrap_or_default();
    let line = format!(
        "{method} {path} {} {}ms{note}",
        response.status().as_u16(),
        started.elapsed().as_millis()
    );
    tracing::info!("{line}");
    elroy_runtime::output::eprintln(&line);
    response
}

/// Serves on `listener` until `shutdown` completes, then drains: no new connection is
/// accepted, requests in flight finish (their turns run to the end), MCP streams are closed, and
/// the background work of finished turns completes.
///
/// # Errors
/// [`ServeError::Io`] when the listener fails.
pub async fn run(
    listener: tokio::net::TcpListener,
    settings: ServeSettings,
    loader: ConfigLoader,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let mcp_cancel = CancellationToken::new();
    let mcp_config = mcp_http::config(&settings, mcp_cancel.clone());
    let state = Arc::new(AppState {
        users: users::Users::new(loader, mcp_config),
        settings,
        background: Mutex::new(Vec::new()),
    });
    let authed = Router::new()
        .route("/v1/models", get(chat::models))
        .route("/v1/chat/completions", post(chat::completions))
        .route("/mcp", any(mcp_http::handle))
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            authenticate,
        ));
    let app = authed
        .fallback(|| async {
            openai_error(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                Some("unknown_url"),
                None,
                "Unknown path: elroy serves /v1/models, /v1/chat/completions and /mcp.",
            )
        })
        .layer(axum::middleware::from_fn(log_request))
        .with_state(Arc::clone(&state));
    let cancel = mcp_cancel.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            // MCP's standing event streams would keep the drain waiting forever.
            cancel.cancel();
        })
        .await?;
    let tasks: Vec<JoinHandle<()>> = {
        let mut tasks = state.background.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *tasks)
    };
    for task in tasks {
        let _ = task.await;
    }
    Ok(())
}

/// Completes on the first SIGINT or SIGTERM (the server's shutdown signal); prints
/// `elroy serve: stopping …` on stderr.
pub async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        // Without signal handlers the process keeps the default action (it ends).
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    elroy_runtime::output::eprintln("elroy serve: stopping (finishing the turns in progress)");
}
