//! The HTTP client shared by the web tools (`tools.md` §8.0): user agent, redirects, proxies,
//! whole-request timeout, body size cap, and the error messages of the §8.0 table.

use std::time::Duration;

use elroy_config::Config;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{NoProxy, Proxy, StatusCode, Url, redirect};

/// Bodies are read up to this many bytes; the rest is ignored (`tools.md` §8.1 step 5).
pub const MAX_BODY_BYTES: usize = 5_242_880;

/// Redirects followed at most (`tools.md` §8.0).
pub const MAX_REDIRECTS: usize = 10;

/// Hosts always contacted directly, whatever the proxy variables say (`tools.md` §8.0).
const LOOPBACK_NO_PROXY: &str = "localhost,127.0.0.0/8,::1";

/// Installs rustls' `ring` crypto provider as the process default, if none is installed yet.
///
/// reqwest is built with `rustls-no-provider` (see the root `Cargo.toml`), so some provider must be
/// installed before the first client is built. Calling this more than once is harmless.
pub fn install_crypto_provider() {
    // Err means a provider is already installed, which is just as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Why a redirect was refused; carried through reqwest's error chain.
#[derive(Debug)]
enum RedirectRefusal {
    TooMany,
    Scheme { scheme: String, url: String },
}

impl std::fmt::Display for RedirectRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedirectRefusal::TooMany => f.write_str("too many redirects"),
            RedirectRefusal::Scheme { scheme, url } => {
                write!(f, "redirect to unsupported URL scheme '{scheme}': {url}")
            }
        }
    }
}

impl std::error::Error for RedirectRefusal {}

/// A fetched response: final URL, status, `Content-Type` and at most `max_bytes` of the body.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL after redirects.
    pub final_url: Url,
    /// The HTTP status.
    pub status: StatusCode,
    /// The raw `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The body, cut at the cap.
    pub body: Vec<u8>,
}

/// An HTTP client configured for the web tools: `User-Agent: Mozilla/5.0 (compatible;
/// elroy/{version})`, at most 10 redirects to `http`/`https` only, `HTTP_PROXY`/`HTTPS_PROXY`/
/// `NO_PROXY` honoured except for loopback hosts, and the `web_timeout_seconds` timeout for the
/// whole request including the body.
///
/// The runtime puts one in [`elroy_core::Services`]; tools build their own from the configuration
/// when none is there.
#[derive(Debug, Clone)]
pub struct WebClient {
    client: reqwest::Client,
    timeout_seconds: u64,
}

impl WebClient {
    /// A client with the settings of `config` (`web_timeout_seconds`) and the process environment's
    /// proxy variables.
    ///
    /// # Errors
    /// A message when the TLS backend cannot be initialised.
    pub fn from_config(config: &Config) -> Result<Self, String> {
        Self::new(config.settings.web_timeout_seconds, &|name| {
            std::env::var(name).ok()
        })
    }

    /// A client with a timeout in seconds, reading proxy variables through `env`.
    ///
    /// # Errors
    /// A message when the TLS backend cannot be initialised.
    pub fn new(timeout_seconds: u64, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        install_crypto_provider();
        let policy = redirect::Policy::custom(|attempt| {
            let scheme = attempt.url().scheme().to_owned();
            if scheme != "http" && scheme != "https" {
                let url = attempt.url().to_string();
                return attempt.error(RedirectRefusal::Scheme { scheme, url });
            }
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error(RedirectRefusal::TooMany);
            }
            attempt.follow()
        });
        let mut builder = reqwest::Client::builder()
            .user_agent(format!(
                "Mozilla/5.0 (compatible; elroy/{})",
                env!("CARGO_PKG_VERSION")
            ))
            .redirect(policy)
            .no_proxy();
        let either = |upper: &str, lower: &str| {
            env(upper)
                .or_else(|| env(lower))
                .filter(|v| !v.trim().is_empty())
        };
        let mut no_proxy = LOOPBACK_NO_PROXY.to_owned();
        if let Some(extra) = either("NO_PROXY", "no_proxy") {
            no_proxy.push(',');
            no_proxy.push_str(&extra);
        }
        let proxies = [
            either("HTTP_PROXY", "http_proxy").and_then(|u| Proxy::http(u).ok()),
            either("HTTPS_PROXY", "https_proxy").and_then(|u| Proxy::https(u).ok()),
        ];
        // An unusable proxy variable is ignored rather than making the web tools unusable.
        for proxy in proxies.into_iter().flatten() {
            builder = builder.proxy(proxy.no_proxy(NoProxy::from_string(&no_proxy)));
        }
        let client = builder
            .build()
            .map_err(|e| format!("unable to set up the HTTP client: {}", error_chain(&e)))?;
        Ok(WebClient {
            client,
            timeout_seconds,
        })
    }

    /// The whole-request timeout in seconds.
    pub fn timeout_seconds(&self) -> u64 {
        self.timeout_seconds
    }

    /// `GET url` with an optional `Accept` header, reading at most `max_bytes` of the body.
    ///
    /// # Errors
    /// The §8.0 messages: `request timed out after {n} seconds: {url}`, `request failed: {url}:
    /// {error}`, `too many redirects: {url}`, `redirect to unsupported URL scheme '{scheme}': {url}`.
    pub async fn get(
        &self,
        url: &Url,
        accept: Option<&'static str>,
        max_bytes: usize,
    ) -> Result<Fetched, String> {
        let request = async {
            let mut builder = self.client.get(url.clone());
            if let Some(accept) = accept {
                builder = builder.header(ACCEPT, HeaderValue::from_static(accept));
            }
            let mut response = builder.send().await.map_err(|e| describe(&e, url))?;
            let final_url = response.url().clone();
            let status = response.status();
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            let mut body = Vec::new();
            while body.len() < max_bytes {
                match response.chunk().await {
                    Ok(Some(chunk)) => {
                        let take = chunk.len().min(max_bytes - body.len());
                        body.extend_from_slice(&chunk[..take]);
                    }
                    Ok(None) => break,
                    Err(e) => return Err(describe(&e, &final_url)),
                }
            }
            Ok(Fetched {
                final_url,
                status,
                content_type,
                body,
            })
        };
        match tokio::time::timeout(Duration::from_secs(self.timeout_seconds), request).await {
            Ok(result) => result,
            Err(_) => Err(format!(
                "request timed out after {} seconds: {url}",
                self.timeout_seconds
            )),
        }
    }
}

/// The §8.0 message for a reqwest error.
fn describe(error: &reqwest::Error, url: &Url) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<RedirectRefusal>() {
            return match refusal {
                RedirectRefusal::TooMany => format!("too many redirects: {url}"),
                other => other.to_string(),
            };
        }
        source = e.source();
    }
    format!("request failed: {url}: {}", error_chain(error))
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
