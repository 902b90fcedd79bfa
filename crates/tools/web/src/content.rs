//! Media types and character decoding of fetched bodies (`docs/tools.md#fetch_page` steps 6–7).

use encoding_rs::{Encoding, UTF_8};

use crate::error::UnsupportedContent;

/// How a body is turned into text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML: readable text through [`crate::html_text`].
    Html,
    /// Plain text (including JSON, XML, JavaScript): used as decoded.
    Text,
}

/// The media type of a `Content-Type` value: the part before `;`, trimmed, in lower case.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a `Content-Type` value, without quotes.
pub fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_owned())
            .filter(|v| !v.is_empty())
    })
}

/// Classifies a body (`docs/tools.md#fetch_page` step 7).
///
/// # Errors
/// [`UnsupportedContent`] with the media type to report (`application/octet-stream` when the
/// header is missing and the body looks binary).
pub fn classify(content_type: Option<&str>, body: &[u8]) -> Result<Kind, UnsupportedContent> {
    let media = content_type.map(media_type).unwrap_or_default();
    match media.as_str() {
        "text/html" | "application/xhtml+xml" => return Ok(Kind::Html),
        "application/json" | "application/xml" | "application/javascript" => return Ok(Kind::Text),
        m if m.starts_with("text/") || m.ends_with("+json") || m.ends_with("+xml") => {
            return Ok(Kind::Text);
        }
        "" | "application/octet-stream" => {}
        other => {
            return Err(UnsupportedContent {
                media: other.to_owned(),
            });
        }
    }
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let head = &body[start..body.len().min(start + 16)];
    let starts_with = |prefix: &[u8]| {
        head.len() >= prefix.len() && head[..prefix.len()].eq_ignore_ascii_case(prefix)
    };
    if starts_with(b"<!doctype html") || starts_with(b"<html") {
        Ok(Kind::Html)
    } else if !body[..body.len().min(8192)].contains(&0) {
        Ok(Kind::Text)
    } else {
        Err(UnsupportedContent {
            media: if media.is_empty() {
                "application/octet-stream".to_owned()
            } else {
                media
            },
        })
    }
}

/// Decodes a body: the `Content-Type` charset; else, for HTML, a `<meta charset=…>` or
/// `http-equiv` content type in the first 1024 bytes; else UTF-8. Unknown labels fall back to the
/// next rule; undecodable bytes become U+FFFD.
pub fn decode(content_type: Option<&str>, kind: Kind, body: &[u8]) -> String {
    let from_header = content_type
        .and_then(charset_param)
        .and_then(|label| Encoding::for_label(label.as_bytes()));
    let from_meta = || {
        (kind == Kind::Html)
            .then(|| meta_charset(&body[..body.len().min(1024)]))
            .flatten()
            .and_then(|label| Encoding::for_label(label.as_bytes()))
    };
    let encoding = from_header.or_else(from_meta).unwrap_or(UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// The charset label declared by a `<meta>` tag in `head` (`<meta charset="…">` or
/// `<meta http-equiv="Content-Type" content="text/html; charset=…">`).
fn meta_charset(head: &[u8]) -> Option<String> {
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(pos) = find(&lower[from..], b"<meta") {
        let tag_start = from + pos;
        let tag_end = lower[tag_start..]
            .iter()
            .position(|b| *b == b'>')
            .map_or(lower.len(), |e| tag_start + e);
        let tag = &lower[tag_start..tag_end];
        if let Some(c) = find(tag, b"charset=") {
            let value = &tag[c + b"charset=".len()..];
            let value = value
                .iter()
                .skip_while(|b| **b == b'"' || **b == b'\'' || b.is_ascii_whitespace())
                .take_while(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
                .copied()
                .collect::<Vec<u8>>();
            if !value.is_empty() {
                return Some(String::from_utf8_lossy(&value).into_owned());
            }
        }
        from = tag_end;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        assert_eq!(
            classify(Some("text/html; charset=utf-8"), b""),
            Ok(Kind::Html)
        );
        assert_eq!(classify(Some("application/ld+json"), b"{}"), Ok(Kind::Text));
        assert_eq!(classify(Some("text/csv"), b"a,b"), Ok(Kind::Text));
        assert_eq!(
            classify(Some("image/png"), b"\x89PNG"),
            Err(UnsupportedContent {
                media: "image/png".into()
            })
        );
        assert_eq!(classify(None, b"  <!DOCTYPE HTML><p>x"), Ok(Kind::Html));
        assert_eq!(
            classify(Some("application/octet-stream"), b"<HTML>"),
            Ok(Kind::Html)
        );
        assert_eq!(classify(None, b"plain words"), Ok(Kind::Text));
        assert_eq!(
            classify(None, b"\x00\x01binary"),
            Err(UnsupportedContent {
                media: "application/octet-stream".into()
            })
        );
    }

    #[test]
    fn charsets() {
        let latin1 = b"caf\xe9";
        assert_eq!(
            decode(
                Some("text/plain; charset=\"ISO-8859-1\""),
                Kind::Text,
                latin1
            ),
            "café"
        );
        let html = b"<html><head><meta charset='windows-1252'></head><body>caf\xe9</body></html>";
        assert!(decode(Some("text/html"), Kind::Html, html).contains("café"));
        let equiv =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\xe9";
        assert!(decode(None, Kind::Html, equiv).ends_with('é'));
        assert_eq!(decode(None, Kind::Text, b"caf\xe9"), "caf\u{fffd}");
    }
}
