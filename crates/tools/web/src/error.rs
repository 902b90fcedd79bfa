//! [`FetchError`]: why a request of the web tools failed, with the words of the
//! `docs/tool-rules.md#http-rules` table; [`UnsupportedContent`]: a body the tools do not read.

use elroy_core::{Refused, ToolError};

use crate::address::AddressRefusal;

/// A failed request ([`crate::WebClient`]). Its `Display` is the message the model reads after
/// `Error invoking tool NAME: `; each variant keeps what caused it (URLs as they are shown).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The client could not be built (the TLS backend).
    #[error("unable to set up the HTTP client: {}", error_chain(.0))]
    Setup(#[source] reqwest::Error),
    /// The whole request took longer than `web_timeout_seconds`.
    #[error("request timed out after {seconds} seconds: {url}")]
    TimedOut {
        /// The timeout, in seconds.
        seconds: u64,
        /// The URL first asked for.
        url: String,
    },
    /// The request itself failed (connection, TLS, body).
    #[error("request failed: {url}: {}", error_chain(.source))]
    Request {
        /// The URL of the hop that failed.
        url: String,
        /// reqwest's error.
        #[source]
        source: reqwest::Error,
    },
    /// A hop's address is one the rules of [`crate::address`] refuse.
    #[error("refused to fetch {url}: {refusal}")]
    Address {
        /// The URL of the refused hop.
        url: String,
        /// Which address and why.
        #[source]
        refusal: AddressRefusal,
    },
    /// More than [`crate::MAX_REDIRECTS`] redirects.
    #[error("too many redirects: {0}")]
    TooManyRedirects(String),
    /// A redirect to another host that the permission check refused.
    #[error("{refusal} (redirected from {from})")]
    RedirectRefused {
        /// The URL that redirected.
        from: String,
        /// The permission check's refusal.
        #[source]
        refusal: Refused,
    },
    /// A `Location` that is not a URL.
    #[error("redirect to an invalid URL '{}': {current}", clip(.location))]
    InvalidRedirect {
        /// The `Location` header, trimmed.
        location: String,
        /// The URL that redirected.
        current: String,
        /// Why it is not a URL.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A redirect to a scheme other than `http`/`https` (`file:`, `data:`, …), never followed.
    #[error("redirect to unsupported URL scheme '{scheme}': {}", clip(.target))]
    UnsupportedScheme {
        /// The scheme.
        scheme: String,
        /// The target URL.
        target: String,
    },
}

impl From<FetchError> for ToolError {
    fn from(e: FetchError) -> Self {
        ToolError::new(e.to_string())
    }
}

/// A body of a media type the web tools do not read (`docs/tools.md#fetch_page` step 7):
/// `unsupported content type '{media}'`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported content type '{media}'")]
pub struct UnsupportedContent {
    /// The media type (`image/png`; `application/octet-stream` for a binary body without one).
    pub media: String,
}

/// At most 200 characters of `text` (a `data:` URL can be megabytes), with `…` when cut.
fn clip(text: &str) -> String {
    match text.char_indices().nth(200) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// The causes of an error joined by `: `, skipping reqwest's own wrapper text and repeats
/// (`client error (Connect): tcp connect error: Connection refused (os error 111)`).
fn error_chain(error: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    if parts.is_empty() {
        error.to_string()
    } else {
        parts.join(": ")
    }
}
