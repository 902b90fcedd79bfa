//! # elroy-tools-web
//!
//! The web tool family (`docs/tools.md#web`, decision D14: Elroy 0.5.0 publishes no code for
//! these tools, so the contract is ours):
//!
//! - [`FetchPage`] (`fetch_page`): HTTP(S) only, readable text of HTML
//!   (`docs/tool-rules.md#html-to-text`), `max_chars` truncation with a note, a 5 MiB body cap.
//! - [`WebSearch`] (`web_search`): DuckDuckGo's HTML results page at config `web_search_url`,
//!   results numbered with title, decoded URL and snippet.
//!
//! Both use a [`WebClient`] (user agent, redirects, proxies, `web_timeout_seconds`), taken from
//! [`elroy_core::Services`] when the runtime put one there. The client refuses link-local and
//! cloud metadata addresses always, and loopback, private and unspecified addresses unless
//! `fetch_allow_private_addresses` is true, at every hop and after DNS resolution
//! ([`address`]); a redirect to `file:`, `data:` or any scheme but `http`/`https` is an error.

pub mod address;
mod client;
mod content;
mod error;
mod fetch_page;
pub mod html_text;
mod web_search;

use elroy_core::{ToolFamily, ToolRegistry, async_tool};

pub use client::{Fetched, MAX_BODY_BYTES, MAX_REDIRECTS, WebClient, install_crypto_provider};
pub use error::{FetchError, UnsupportedContent};
pub use fetch_page::{DEFAULT_MAX_CHARS, FetchPage, FetchPageArgs, MAX_MAX_CHARS};
pub use web_search::{
    DEFAULT_MAX_RESULTS, MAX_RESULTS, SearchResult, WebSearch, WebSearchArgs, format_results,
    parse_results,
};

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Web",
    guide: "Web search (DuckDuckGo) and the readable text of a page. These are the only tools \
            that use the network.",
};

/// Registers `fetch_page` and `web_search`.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(async_tool(WebSearch))
        .register(async_tool(FetchPage));
}
