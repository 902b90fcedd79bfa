//! `web_search` (`docs/tools.md#web_search`): DuckDuckGo's HTML results page, parsed with
//! `scraper`.

use elroy_core::{
    AsyncTypedTool, Changes, EffectClass, Lineage, ToolContext, ToolEffect, ToolError, ToolFamily,
    ToolOutput,
};
use reqwest::Url;
use scraper::{Html, Selector};

use crate::client::MAX_BODY_BYTES;
use crate::content::{self, Kind};
use crate::fetch_page::{status_text, web_client};

/// `max_results` when absent.
pub const DEFAULT_MAX_RESULTS: i64 = 5;
/// `max_results` is clamped to `1..=MAX_RESULTS`.
pub const MAX_RESULTS: i64 = 20;

elroy_core::tool_args! {
    /// Arguments of `web_search`.
    pub struct WebSearchArgs {
        query: String => "The search query string.",
        max_results: Option<i64> => "Maximum number of results to return (default 5, max 20).",
    }
}

/// `web_search`: searches DuckDuckGo (config `web_search_url`) and lists titles, URLs and snippets.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebSearch;

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// The result title, whitespace-collapsed.
    pub title: String,
    /// The target URL (DuckDuckGo's `uddg` redirect decoded).
    pub url: String,
    /// The snippet, whitespace-collapsed; may be empty.
    pub snippet: String,
}

impl AsyncTypedTool for WebSearch {
    type Args = WebSearchArgs;
    const NAME: &'static str = "web_search";
    const EFFECT: ToolEffect = ToolEffect::new(EffectClass::Network, Changes::Nothing);
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str =
        "Search the web using DuckDuckGo and return a list of results.";

    async fn run(&self, ctx: &ToolContext, args: WebSearchArgs) -> Result<ToolOutput, ToolError> {
        let query = args.query.trim();
        if query.is_empty() {
            return Err("query must not be empty".into());
        }
        let max_results = args
            .max_results
            .unwrap_or(DEFAULT_MAX_RESULTS)
            .clamp(1, MAX_RESULTS);
        let config = ctx.services.require::<elroy_config::Config>()?;
        let base_text = &config.settings.web_search_url;
        let base = Url::parse(base_text.trim())
            .map_err(|e| format!("invalid web_search_url '{base_text}': {e}"))?;
        let mut url = base.clone();
        url.query_pairs_mut().append_pair("q", query);
        let client = web_client(ctx)?;
        let page = client.get(&url, None, MAX_BODY_BYTES).await?;
        let code = page.status.as_u16();
        if code >= 400 {
            return Err(ToolError::new(format!(
                "search request failed: HTTP {}",
                status_text(page.status)
            )));
        }
        if code == 202 {
            return Err("search request was rate limited (HTTP 202); try again later".into());
        }
        let html = content::decode(page.content_type.as_deref(), Kind::Html, &page.body);
        let results = parse_results(&html, &base);
        let take = usize::try_from(max_results).unwrap_or(1);
        Ok(ToolOutput::text(format_results(
            query,
            &results[..results.len().min(take)],
        )))
    }
}

/// Parses a DuckDuckGo HTML results page (`docs/tools.md#web_search` step 5). Links are resolved
/// against `base`; a `uddg` query parameter is the real target. Ads, results without a title,
/// non-HTTP(S) URLs and repeated URLs are skipped.
pub fn parse_results(html: &str, base: &Url) -> Vec<SearchResult> {
    let doc = Html::parse_document(html);
    let (Ok(container), Ok(link), Ok(snippet)) = (
        Selector::parse(".result:not(.result--ad)"),
        Selector::parse("a.result__a"),
        Selector::parse(".result__snippet"),
    ) else {
        return Vec::new();
    };
    let mut results: Vec<SearchResult> = Vec::new();
    for result in doc.select(&container) {
        let Some(anchor) = result.select(&link).next() else {
            continue;
        };
        let title = collapse(&anchor.text().collect::<String>());
        if title.is_empty() {
            continue;
        }
        let Some(url) = anchor.attr("href").and_then(|href| target_url(href, base)) else {
            continue;
        };
        if results.iter().any(|r| r.url == url) {
            continue;
        }
        let snippet = result
            .select(&snippet)
            .next()
            .map(|s| collapse(&s.text().collect::<String>()))
            .unwrap_or_default();
        results.push(SearchResult {
            title,
            url,
            snippet,
        });
    }
    results
}

/// The result URL of `href`: resolved against `base`, unwrapped from `uddg`, HTTP(S) only.
fn target_url(href: &str, base: &Url) -> Option<String> {
    let resolved = base.join(href.trim()).ok()?;
    let target = match resolved.query_pairs().find(|(k, _)| k == "uddg") {
        Some((_, value)) => {
            let value = value.trim().to_owned();
            Url::parse(&value).ok().map(|u| (u, value))
        }
        None => Some((resolved.clone(), resolved.to_string())),
    };
    let (parsed, text) = target?;
    matches!(parsed.scheme(), "http" | "https").then_some(text)
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The numbered list of `docs/tools.md#web_search` step 6, or `No results found for '{query}'.`.
pub fn format_results(query: &str, results: &[SearchResult]) -> String {
    if results.is_empty() {
        return format!("No results found for '{query}'.");
    }
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut entry = format!("{}. {}\n   {}", i + 1, r.title, r.url);
            if !r.snippet.is_empty() {
                entry.push_str("\n   ");
                entry.push_str(&r.snippet);
            }
            entry
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example() {
        let html = r##"<div class="result results_links result--ad"><h2><a class="result__a" href="https://ads.example/">Ad</a></h2></div>
<div class="result results_links web-result"><h2 class="result__title">
  <a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2F&amp;rut=abc">Rust <b>Programming</b> Language</a></h2>
  <a class="result__snippet" href="#">A language empowering everyone.</a></div>
<div class="result results_links web-result"><h2><a class="result__a" href="https://doc.rust-lang.org/book/">The Book</a></h2></div>"##;
        let base = Url::parse("http://127.0.0.1:8080/html/").unwrap();
        let results = parse_results(html, &base);
        assert_eq!(
            format_results("rust language", &results),
            "1. Rust Programming Language\n   https://www.rust-lang.org/\n   A language empowering everyone.\n\n2. The Book\n   https://doc.rust-lang.org/book/"
        );
        assert_eq!(format_results("x", &[]), "No results found for 'x'.");
    }
}
