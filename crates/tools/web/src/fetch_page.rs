//! `fetch_page` (`docs/tools.md#fetch_page`).

use std::sync::Arc;

use elroy_core::{
    AsyncTypedTool, Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput,
};
use reqwest::Url;
use serde_json::{Map, Value};

use crate::client::{MAX_BODY_BYTES, RedirectCheck, WebClient};
use crate::content::{self, Kind};
use crate::html_text::html_to_text;

/// `max_chars` when absent.
pub const DEFAULT_MAX_CHARS: i64 = 8000;
/// `max_chars` is lowered to this.
pub const MAX_MAX_CHARS: i64 = 100_000;

const ACCEPT: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5";

elroy_core::tool_args! {
    /// Arguments of `fetch_page`.
    pub struct FetchPageArgs {
        url: String => "The URL to fetch.",
        max_chars: Option<i64> => "Maximum number of characters to return (default 8000).",
    }
}

/// `fetch_page`: fetches a page over HTTP(S) and returns its readable text.
#[derive(Debug, Clone, Copy, Default)]
pub struct FetchPage;

impl AsyncTypedTool for FetchPage {
    type Args = FetchPageArgs;
    const NAME: &'static str = "fetch_page";
    const EFFECT: ToolEffect = ToolEffect::fetches_url("url");
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Fetch a web page and return its readable text content.";

    async fn run(&self, ctx: &ToolContext, args: FetchPageArgs) -> Result<ToolOutput, ToolError> {
        let url = parse_http_url(&args.url)?;
        let max_chars = match args.max_chars {
            None => DEFAULT_MAX_CHARS,
            Some(n) if n < 1 => return Err("max_chars must be at least 1".into()),
            Some(n) => n.min(MAX_MAX_CHARS),
        };
        let client = web_client(ctx)?;
        // A redirect to another host is a new target: the permission rules see it as a
        // `fetch_page` of that URL by the same caller.
        let check: &RedirectCheck<'_> = &|next: Url| {
            Box::pin(async move {
                let mut arguments = Map::new();
                arguments.insert("url".into(), Value::String(next.to_string()));
                ctx.check_follow_up(Self::NAME, Self::EFFECT, &arguments)
                    .await
            })
        };
        let page = client
            .get_checked(&url, Some(ACCEPT), MAX_BODY_BYTES, check)
            .await?;
        if page.status.as_u16() >= 400 {
            return Err(ToolError::new(format!(
                "HTTP {} for {}",
                status_text(page.status),
                page.final_url
            )));
        }
        let content_type = page.content_type.as_deref();
        let kind = content::classify(content_type, &page.body)
            .map_err(|e| ToolError::new(format!("{e} at {}", page.final_url)))?;
        let decoded = content::decode(content_type, kind, &page.body);
        let (title, text) = match kind {
            Kind::Html => {
                let readable = html_to_text(&decoded);
                (
                    Some(readable.title).filter(|t| !t.is_empty()),
                    readable.text,
                )
            }
            Kind::Text => (None, decoded),
        };
        let text = truncate(&text, usize::try_from(max_chars).unwrap_or(usize::MAX));
        let mut out = String::new();
        if let Some(title) = title {
            out.push_str(&format!("Title: {title}\n"));
        }
        out.push_str(&format!("URL: {}\n\n{text}", page.final_url));
        Ok(ToolOutput::text(out))
    }
}

/// The client from the services, or one built from the configuration.
pub(crate) fn web_client(ctx: &ToolContext) -> Result<Arc<WebClient>, ToolError> {
    if let Some(client) = ctx.services.get::<WebClient>() {
        return Ok(client);
    }
    let config = ctx.services.require::<elroy_config::Config>()?;
    Ok(Arc::new(WebClient::from_config(&config)?))
}

/// `404 Not Found` (the code, and the reason when it has one).
pub(crate) fn status_text(status: reqwest::StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// `docs/tools.md#fetch_page` step 1: trim, default to `https://`, parse, require `http`/`https`.
fn parse_http_url(raw: &str) -> Result<Url, ToolError> {
    let trimmed = raw.trim();
    let candidate = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("https://{trimmed}")
    };
    let url = Url::parse(&candidate).map_err(|_| format!("invalid URL: {trimmed}"))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(ToolError::new(format!(
            "unsupported URL scheme '{other}': only http and https are allowed"
        ))),
    }
}

/// `docs/tools.md#fetch_page` step 9: at most `max_chars` characters, with a note when cut; `(no
/// readable text)` when empty.
fn truncate(text: &str, max_chars: usize) -> String {
    if text.is_empty() {
        return "(no readable text)".to_owned();
    }
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let total = text.chars().count();
            format!(
                "{}\n\n[truncated: showing {max_chars} of {total} characters]",
                &text[..cut]
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_rules() {
        assert_eq!(
            parse_http_url(" example.com/a ").unwrap().as_str(),
            "https://example.com/a"
        );
        assert_eq!(
            parse_http_url("file:///etc/passwd").unwrap_err().message(),
            "unsupported URL scheme 'file': only http and https are allowed"
        );
        assert_eq!(
            parse_http_url("http://exa mple.com").unwrap_err().message(),
            "invalid URL: http://exa mple.com"
        );
    }

    #[test]
    fn truncation() {
        assert_eq!(truncate("", 5), "(no readable text)");
        assert_eq!(truncate("héllo", 5), "héllo");
        assert_eq!(
            truncate("héllo", 2),
            "hé\n\n[truncated: showing 2 of 5 characters]"
        );
    }
}
