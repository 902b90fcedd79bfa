//! `/mcp`: the key's user's MCP service (rmcp's streamable HTTP server over elroy-mcp's
//! handler, the tools `elroy mcp` serves).

use axum::extract::{Extension, Request};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio_util::sync::CancellationToken;

use crate::settings::ServeSettings;
use crate::{AuthedUser, LogNote};

/// The MCP service configuration: sessions kept, closed on `cancel` (shutdown); keep-alive as
/// the chat's. On loopback only loopback `Host` headers are accepted (DNS rebinding); on another
/// address every host is (the bearer key still guards every request).
pub(crate) fn config(
    settings: &ServeSettings,
    cancel: CancellationToken,
) -> StreamableHttpServerConfig {
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel)
        .with_sse_keep_alive(Some(settings.keep_alive));
    if settings.bind.ip().is_loopback() {
        config
    } else {
        config.disable_allowed_hosts()
    }
}

/// Passes the request to the user's MCP service.
pub(crate) async fn handle(Extension(user): Extension<AuthedUser>, request: Request) -> Response {
    let token = user.0.token.clone();
    let mut response = user
        .0
        .mcp
        .handle(request)
        .await
        .map(axum::body::Body::new)
        .into_response();
    response
        .extensions_mut()
        .insert(LogNote(format!("user={token} mcp")));
    response
}
