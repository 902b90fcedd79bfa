//! Streamed markdown for the terminal: reply text is rendered line by line as it arrives —
//! headings bold and underlined, list bullets as `•`, `**strong**`, `*emphasis*` and `` `code` ``
//! styled through pulldown-cmark's inline parsing. Code blocks arrive as their own events and are
//! printed by the chat. Without colours (output not a terminal, `NO_COLOR`) the text passes through
//! unchanged.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

const BOLD_UNDERLINE: &str = "\x1b[1;4m";
const BOLD: &str = "\x1b[1m";
const NORMAL_INTENSITY: &str = "\x1b[22m";
const ITALIC: &str = "\x1b[3m";
const NO_ITALIC: &str = "\x1b[23m";
const INVERSE: &str = "\x1b[7m";
const NO_INVERSE: &str = "\x1b[27m";
const NO_UNDERLINE: &str = "\x1b[24m";

/// Renders streamed markdown one complete line at a time.
#[derive(Debug, Default)]
pub(crate) struct MarkdownStream {
    enabled: bool,
    line: String,
}

impl MarkdownStream {
    /// A renderer; when `enabled` is false, text passes through unchanged.
    pub(crate) fn new(enabled: bool) -> Self {
        MarkdownStream {
            enabled,
            line: String::new(),
        }
    }

    /// Adds a delta; returns the rendering of the lines it completed.
    pub(crate) fn push(&mut self, delta: &str) -> String {
        if !self.enabled {
            return delta.to_owned();
        }
        self.line.push_str(delta);
        let mut out = String::new();
        while let Some(end) = self.line.find('\n') {
            let line: String = self.line.drain(..=end).collect();
            out.push_str(&render_line(line.trim_end_matches('\n')));
            out.push('\n');
        }
        out
    }

    /// Renders what is left (a last line without a newline).
    pub(crate) fn finish(&mut self) -> String {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            String::new()
        } else {
            render_line(&line)
        }
    }
}

/// One line: a heading, a bullet or numbered item, or a paragraph line.
pub(crate) fn render_line(line: &str) -> String {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
        return format!(
            "{indent}{BOLD_UNDERLINE}{}{NO_UNDERLINE}{NORMAL_INTENSITY}",
            inline(trimmed[hashes..].trim())
        );
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = trimmed.strip_prefix(bullet) {
            return format!("{indent}• {}", inline(rest));
        }
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && trimmed[digits..].starts_with(". ") {
        return format!(
            "{indent}{} {}",
            &trimmed[..digits + 1],
            inline(&trimmed[digits + 2..])
        );
    }
    format!("{indent}{}", inline(trimmed))
}

/// Inline styles of one line of text.
fn inline(text: &str) -> String {
    let mut out = String::new();
    for event in Parser::new(text) {
        match event {
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => out.push_str(&t),
            Event::Code(c) => {
                out.push_str(INVERSE);
                out.push_str(&c);
                out.push_str(NO_INVERSE);
            }
            Event::Start(Tag::Strong) => out.push_str(BOLD),
            Event::End(TagEnd::Strong) => out.push_str(NORMAL_INTENSITY),
            Event::Start(Tag::Emphasis) => out.push_str(ITALIC),
            Event::End(TagEnd::Emphasis) => out.push_str(NO_ITALIC),
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_complete_lines() {
        let mut md = MarkdownStream::new(true);
        assert_eq!(md.push("# Plan for **to"), "");
        assert_eq!(
            md.push("day**\n- buy `milk`\n2. call *mom*\nrest"),
            "\x1b[1;4mPlan for \x1b[1mtoday\x1b[22m\x1b[24m\x1b[22m\n• buy \x1b[7mmilk\x1b[27m\n2. call \x1b[3mmom\x1b[23m\n"
        );
        assert_eq!(md.finish(), "rest");
        assert_eq!(md.finish(), "");
    }

    #[test]
    fn passes_through_without_colours() {
        let mut md = MarkdownStream::new(false);
        assert_eq!(md.push("**a**\n# b"), "**a**\n# b");
        assert_eq!(md.finish(), "");
    }

    #[test]
    fn plain_text_is_unchanged() {
        assert_eq!(render_line("Hello, world."), "Hello, world.");
        assert_eq!(render_line("  indented"), "  indented");
    }
}
