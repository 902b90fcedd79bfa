//! The HTTP client shared by the web tools (`docs/tool-rules.md#http-rules`): user agent,
//! redirects, proxies, whole-request timeout, body size cap, and the error messages of the
//! `docs/tool-rules.md#http-rules` table.

use std::net::IpAddr;
use std::time::Duration;

use elroy_core::{BoxFuture, Refused};
use tokio::time::{Instant, timeout_at};

use elroy_config::Config;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue, LOCATION};
use reqwest::{NoProxy, Proxy, StatusCode, Url, redirect};

use crate::address::{AddressRefusal, GuardedResolver, check_address};
use crate::error::FetchError;

/// Bodies are read up to this many bytes; the rest is ignored (`docs/tools.md#fetch_page` step 5).
pub const MAX_BODY_BYTES: usize = 5_242_880;

/// Redirects followed at most (`docs/tool-rules.md#http-rules`).
pub const MAX_REDIRECTS: usize = 10;

/// Hosts always contacted directly, whatever the proxy variables say
/// (`docs/tool-rules.md#http-rules`).
const LOOPBACK_NO_PROXY: &str = "localhost,127.0.0.0/8,::1";

/// Installs rustls' `ring` crypto provider as the process default, if none is installed yet.
///
/// reqwest is built with `rustls-no-provider` (see the root `Cargo.toml`), so some provider must be
/// installed before the first client is built. Calling this more than once is harmless.
pub fn install_crypto_provider() {
    // Err means a provider is already installed, which is just as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Asked before a redirect to another host is followed, with the new URL: `Ok` follows it,
/// `Err` stops the request with that refusal.
pub type RedirectCheck<'a> = dyn Fn(Url) -> BoxFuture<'a, Result<(), Refused>> + Send + Sync + 'a;

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
/// Every hop is checked against the address rules of [`crate::address`] before elroy connects:
/// an address in the URL directly, and every address a DNS name resolves to (through the client's
/// own resolver, so the connection goes only to checked addresses). Redirects are followed here,
/// not by reqwest, so each target is checked the same way. Through a configured proxy the proxy
/// resolves DNS names, so there only addresses written in the URL (and `localhost`, which is
/// never proxied) can be checked.
///
/// The runtime puts one in [`elroy_core::Services`]; tools build their own from the configuration
/// when none is there.
#[derive(Debug, Clone)]
pub struct WebClient {
    client: reqwest::Client,
    timeout_seconds: u64,
    allow_private_addresses: bool,
}

impl WebClient {
    /// A client with the settings of `config` (`web_timeout_seconds`) and the process environment's
    /// proxy variables.
    ///
    /// # Errors
    /// [`FetchError::Setup`] when the TLS backend cannot be initialised.
    pub fn from_config(config: &Config) -> Result<Self, FetchError> {
        Self::new(
            config.settings.web_timeout_seconds,
            config.settings.fetch_allow_private_addresses,
            &|name| std::env::var(name).ok(),
        )
    }

    /// A client with a timeout in seconds, `allow_private_addresses` as the
    /// `fetch_allow_private_addresses` setting (loopback, private and unspecified addresses;
    /// link-local and cloud metadata addresses are refused either way), reading proxy variables
    /// through `env`.
    ///
    /// # Errors
    /// [`FetchError::Setup`] when the TLS backend cannot be initialised.
    pub fn new(
        timeout_seconds: u64,
        allow_private_addresses: bool,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, FetchError> {
        install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .user_agent(format!(
                "Mozilla/5.0 (compatible; elroy/{})",
                env!("CARGO_PKG_VERSION")
            ))
            .redirect(redirect::Policy::none())
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
        let http_proxy = either("HTTP_PROXY", "http_proxy");
        let https_proxy = either("HTTPS_PROXY", "https_proxy");
        // The proxies' own host names are the user's choice: the resolver does not check them.
        let trusted = [&http_proxy, &https_proxy]
            .into_iter()
            .flatten()
            .filter_map(|u| proxy_host(u))
            .collect();
        let proxies = [
            http_proxy.and_then(|u| Proxy::http(u).ok()),
            https_proxy.and_then(|u| Proxy::https(u).ok()),
        ];
        // An unusable proxy variable is ignored rather than making the web tools unusable.
        for proxy in proxies.into_iter().flatten() {
            builder = builder.proxy(proxy.no_proxy(NoProxy::from_string(&no_proxy)));
        }
        builder = builder.dns_resolver(GuardedResolver {
            allow_private: allow_private_addresses,
            trusted,
        });
        let client = builder.build().map_err(FetchError::Setup)?;
        Ok(WebClient {
            client,
            timeout_seconds,
            allow_private_addresses,
        })
    }

    /// The whole-request timeout in seconds.
    pub fn timeout_seconds(&self) -> u64 {
        self.timeout_seconds
    }

    /// Whether loopback, private and unspecified addresses may be reached
    /// (`fetch_allow_private_addresses`).
    pub fn allow_private_addresses(&self) -> bool {
        self.allow_private_addresses
    }

    /// `GET url` with an optional `Accept` header, reading at most `max_bytes` of the body.
    /// Redirects (301, 302, 303, 307, 308 with a `Location`) are followed up to
    /// [`MAX_REDIRECTS`] times, each target checked like the first URL.
    ///
    /// # Errors
    /// As [`WebClient::get_checked`].
    pub async fn get(
        &self,
        url: &Url,
        accept: Option<&'static str>,
        max_bytes: usize,
    ) -> Result<Fetched, FetchError> {
        let no_check: &RedirectCheck<'_> = &|_| Box::pin(std::future::ready(Ok(())));
        self.get_checked(url, accept, max_bytes, no_check).await
    }

    /// [`WebClient::get`], with `check` asked before following a redirect to another host
    /// (the permission rules judge hosts, so `http:` to `https:` on one host is not asked):
    /// `fetch_page` asks the permission rules about the new URL there. The time
    /// `check` takes (a person reading an approval prompt) does not count against the timeout.
    ///
    /// # Errors
    /// [`FetchError`], whose text is the `docs/tool-rules.md#http-rules` message: `request timed out after {n} seconds: {url}`,
    /// `request failed: {url}: {error}`, `too many redirects: {url}`, `redirect to unsupported URL
    /// scheme '{scheme}': {url}` (`file:`, `data:`, `ftp:`, … are never followed, and never read as
    /// an empty page), `refused to fetch {url}: {address} is a loopback address (…)` (or
    /// `{host} resolves to {address}, …`) for a hop whose address the rules of [`crate::address`]
    /// refuse, and `check`'s refusal followed by `(redirected from {url})`.
    pub async fn get_checked(
        &self,
        url: &Url,
        accept: Option<&'static str>,
        max_bytes: usize,
        check: &RedirectCheck<'_>,
    ) -> Result<Fetched, FetchError> {
        let mut deadline = Instant::now() + Duration::from_secs(self.timeout_seconds);
        let timed_out = || FetchError::TimedOut {
            seconds: self.timeout_seconds,
            url: url.to_string(),
        };
        let mut current = url.clone();
        let mut redirects = 0usize;
        let mut response = loop {
            self.check_literal_host(&current)?;
            let mut builder = self.client.get(current.clone());
            if let Some(accept) = accept {
                builder = builder.header(ACCEPT, HeaderValue::from_static(accept));
            }
            let response = timeout_at(deadline, builder.send())
                .await
                .map_err(|_| timed_out())?
                .map_err(|e| describe(e, &current))?;
            let Some(next) = redirect_target(&response, &current)? else {
                break response;
            };
            if redirects >= MAX_REDIRECTS {
                return Err(FetchError::TooManyRedirects(url.to_string()));
            }
            redirects += 1;
            if next.host_str() != current.host_str() {
                let asked = Instant::now();
                check(next.clone())
                    .await
                    .map_err(|refusal| FetchError::RedirectRefused {
                        from: current.to_string(),
                        refusal,
                    })?;
                deadline += asked.elapsed();
            }
            current = next;
        };
        let final_url = current;
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let mut body = Vec::new();
        while body.len() < max_bytes {
            match timeout_at(deadline, response.chunk())
                .await
                .map_err(|_| timed_out())?
            {
                Ok(Some(chunk)) => {
                    let take = chunk.len().min(max_bytes - body.len());
                    body.extend_from_slice(&chunk[..take]);
                }
                Ok(None) => break,
                Err(e) => return Err(describe(e, &final_url)),
            }
        }
        Ok(Fetched {
            final_url,
            status,
            content_type,
            body,
        })
    }

    /// Refuses a URL whose host is an address the rules forbid (names are checked by the
    /// resolver when they are looked up).
    fn check_literal_host(&self, url: &Url) -> Result<(), FetchError> {
        // `host_str` is the parsed host: `127.0.0.1` also for `http://2130706433/`, `[::1]` for
        // IPv6.
        let host = url.host_str().unwrap_or_default();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let Ok(ip) = bare.parse::<IpAddr>() else {
            return Ok(());
        };
        check_address(ip, self.allow_private_addresses).map_err(|refusal| FetchError::Address {
            url: url.to_string(),
            refusal,
        })
    }
}

/// The URL a redirect response points to, `None` when `response` is not a redirect to follow.
///
/// # Errors
/// A target that is not `http`/`https`, or a `Location` that is not a URL.
fn redirect_target(response: &reqwest::Response, current: &Url) -> Result<Option<Url>, FetchError> {
    if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let Some(location) = response.headers().get(LOCATION) else {
        return Ok(None);
    };
    let location = String::from_utf8_lossy(location.as_bytes());
    let next = current
        .join(location.trim())
        .map_err(|e| FetchError::InvalidRedirect {
            location: location.trim().to_owned(),
            current: current.to_string(),
            source: Box::new(e),
        })?;
    match next.scheme() {
        "http" | "https" => Ok(Some(next)),
        scheme => Err(FetchError::UnsupportedScheme {
            scheme: scheme.to_owned(),
            target: next.as_str().to_owned(),
        }),
    }
}

/// The host of a proxy variable's value (`http://proxy:3128`, `proxy:3128`).
fn proxy_host(value: &str) -> Option<String> {
    let value = value.trim();
    let with_scheme = if value.contains("://") {
        value.to_owned()
    } else {
        format!("http://{value}")
    };
    Url::parse(&with_scheme)
        .ok()?
        .host_str()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
}

/// The [`FetchError`] of a reqwest error; an address the resolver refused is named as such.
fn describe(error: reqwest::Error, url: &Url) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<AddressRefusal>() {
            return FetchError::Address {
                url: url.to_string(),
                refusal: refusal.clone(),
            };
        }
        source = e.source();
    }
    FetchError::Request {
        url: url.to_string(),
        source: error,
    }
}
