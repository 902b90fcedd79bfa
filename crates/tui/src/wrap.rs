//! Word wrapping of styled text: lines break only between words (a word wider than the whole
//! line is the one thing split, by characters); widths are terminal cells (`unicode-width`).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Tab stops for display: every this many cells.
pub const TAB_STOP: usize = 4;

/// `text` with each tab replaced by the spaces up to the next [`TAB_STOP`], counting display
/// cells from `column` (the cells already on the line); `\n` starts a new line at column 0.
/// Returns the text and the column after it. Terminals draw no tab a program writes into a
/// cell (ratatui drops it), so a tab in a stored text showed as nothing; the stored and sent
/// text keeps it, only the display expands it.
pub fn expand_tabs(text: &str, column: usize) -> (String, usize) {
    let mut col = column;
    if !text.contains('\t') {
        for ch in text.chars() {
            col = if ch == '\n' {
                0
            } else {
                col + ch.width().unwrap_or(0)
            };
        }
        return (text.to_owned(), col);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        match ch {
            '\t' => {
                let n = TAB_STOP - col % TAB_STOP;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' => {
                out.push('\n');
                col = 0;
            }
            _ => {
                out.push(ch);
                col += ch.width().unwrap_or(0);
            }
        }
    }
    (out, col)
}

/// [`expand_tabs`] over styled spans, the column carried from span to span.
pub fn expand_tabs_spans(spans: &[Span<'static>]) -> Vec<Span<'static>> {
    let mut col = 0;
    spans
        .iter()
        .map(|span| {
            if span.content.contains('\t') || col > 0 || span.content.contains('\n') {
                let (text, next) = expand_tabs(&span.content, col);
                col = next;
                Span::styled(text, span.style)
            } else {
                col = expand_tabs(&span.content, col).1;
                span.clone()
            }
        })
        .collect()
}

/// Wraps `spans` to `width` cells. The first line starts with `first_prefix`, the next ones with
/// `rest_prefix` (list bullets, quote bars, indentation). Spaces at the start of a continuation
/// line are dropped; `\n` inside a span forces a break; tabs are expanded ([`expand_tabs`]).
/// Always returns at least one line.
pub fn wrap_spans(
    spans: &[Span<'static>],
    width: usize,
    first_prefix: &[Span<'static>],
    rest_prefix: &[Span<'static>],
) -> Vec<Line<'static>> {
    let expanded;
    let spans = if spans.iter().any(|s| s.content.contains('\t')) {
        expanded = expand_tabs_spans(spans);
        &expanded[..]
    } else {
        spans
    };
    let mut out = Vec::new();
    let mut builder = LineBuilder::new(first_prefix, width);
    // Tokens: (text, style, is_space); newlines as their own token.
    for span in spans {
        for piece in split_tokens(&span.content) {
            match piece {
                Token::Newline => {
                    out.push(builder.finish());
                    builder = LineBuilder::new(rest_prefix, width);
                }
                Token::Space(text) => builder.push_space(text, span.style),
                Token::Word(word) => {
                    let w = word.width();
                    if builder.used + builder.pending_width() + w > builder.width
                        && !builder.is_empty()
                    {
                        out.push(builder.finish());
                        builder = LineBuilder::new(rest_prefix, width);
                    }
                    if w > builder.width {
                        // A word wider than the line (JSON, a URL, a path): split after its
                        // punctuation where it has some, else between characters.
                        let mut rest = word;
                        loop {
                            let pending = if builder.is_empty() {
                                0
                            } else {
                                builder.pending_width()
                            };
                            let room = builder.width.saturating_sub(builder.used + pending);
                            if rest.width() <= room {
                                builder.push_word(rest.to_owned(), span.style);
                                break;
                            }
                            let cut = split_point(rest, room);
                            if cut == 0 {
                                // Nothing fits after what the line holds: a new line.
                                out.push(builder.finish());
                                builder = LineBuilder::new(rest_prefix, width);
                                if builder.width.saturating_sub(builder.used) == 0 {
                                    break;
                                }
                                continue;
                            }
                            builder.push_word(rest[..cut].to_owned(), span.style);
                            out.push(builder.finish());
                            builder = LineBuilder::new(rest_prefix, width);
                            rest = &rest[cut..];
                        }
                    } else {
                        builder.push_word(word.to_owned(), span.style);
                    }
                }
            }
        }
    }
    out.push(builder.finish());
    out
}

/// Hard-wraps one line of styled spans (code) at `width` cells, keeping every character (tabs
/// expanded to spaces, [`expand_tabs`]).
pub fn hard_wrap(
    spans: &[Span<'static>],
    width: usize,
    prefix: &[Span<'static>],
) -> Vec<Line<'static>> {
    let expanded;
    let spans = if spans.iter().any(|s| s.content.contains('\t')) {
        expanded = expand_tabs_spans(spans);
        &expanded[..]
    } else {
        spans
    };
    let mut out = Vec::new();
    let mut builder = LineBuilder::new(prefix, width);
    for span in spans {
        let mut chunk = String::new();
        for ch in span.content.chars() {
            let cw = ch.width().unwrap_or(0);
            if builder.used + chunk.width() + cw > builder.width
                && !(chunk.is_empty() && builder.is_empty())
            {
                builder.push_word(std::mem::take(&mut chunk), span.style);
                out.push(builder.finish());
                builder = LineBuilder::new(prefix, width);
            }
            chunk.push(ch);
        }
        builder.push_word(chunk, span.style);
    }
    out.push(builder.finish());
    out
}

/// Where to cut `word` so that its first part fits in `room` cells: after the last punctuation
/// mark that keeps it within `room` (so `{"a":1,"b":2}` breaks after a comma, a path after a
/// slash), else after as many characters as fit. 0 when not even one character fits; a first
/// character wider than an empty line's room is still taken (callers pass the room of a fresh
/// line then), so every call makes progress.
fn split_point(word: &str, room: usize) -> usize {
    let mut used = 0;
    let mut fits = 0;
    let mut punct = 0;
    for (i, ch) in word.char_indices() {
        let w = ch.width().unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        fits = i + ch.len_utf8();
        if matches!(
            ch,
            ',' | ';' | ':' | '/' | '\\' | '&' | '?' | '=' | '-' | ')' | ']' | '}' | '|'
        ) {
            punct = fits;
        }
    }
    if fits == word.len() || punct == 0 {
        fits
    } else {
        punct
    }
}

enum Token<'a> {
    Word(&'a str),
    Space(&'a str),
    Newline,
}

fn split_tokens(text: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut start = 0;
    let mut kind: Option<bool> = None; // Some(true): in spaces, Some(false): in a word
    for (i, ch) in text.char_indices() {
        if ch == '\n' {
            if let Some(space) = kind.take() {
                tokens.push(if space {
                    Token::Space(&text[start..i])
                } else {
                    Token::Word(&text[start..i])
                });
            }
            tokens.push(Token::Newline);
            start = i + 1;
            continue;
        }
        let is_space = ch == ' ' || ch == '\t';
        match kind {
            Some(k) if k == is_space => {}
            Some(k) => {
                tokens.push(if k {
                    Token::Space(&text[start..i])
                } else {
                    Token::Word(&text[start..i])
                });
                start = i;
                kind = Some(is_space);
            }
            None => {
                start = i;
                kind = Some(is_space);
            }
        }
    }
    if let Some(k) = kind {
        tokens.push(if k {
            Token::Space(&text[start..])
        } else {
            Token::Word(&text[start..])
        });
    }
    tokens
}

struct LineBuilder {
    spans: Vec<Span<'static>>,
    prefix_len: usize,
    used: usize,
    width: usize,
    pending_space: Option<(String, Style)>,
}

impl LineBuilder {
    fn new(prefix: &[Span<'static>], width: usize) -> Self {
        let prefix_width: usize = prefix.iter().map(|s| s.content.width()).sum();
        LineBuilder {
            spans: prefix.to_vec(),
            prefix_len: prefix.len(),
            used: prefix_width,
            width: width.max(prefix_width + 1),
            pending_space: None,
        }
    }

    fn is_empty(&self) -> bool {
        self.spans.len() == self.prefix_len
    }

    fn pending_width(&self) -> usize {
        self.pending_space.as_ref().map_or(0, |(s, _)| s.width())
    }

    fn push_space(&mut self, text: &str, style: Style) {
        if self.is_empty() {
            return;
        }
        let text = text.replace('\t', "    ");
        self.pending_space = Some((text, style));
    }

    fn push_word(&mut self, word: String, style: Style) {
        if word.is_empty() {
            return;
        }
        if let Some((space, space_style)) = self.pending_space.take() {
            let w = space.width();
            if self.used + w + word.width() <= self.width {
                self.used += w;
                self.push(space, space_style);
            }
        }
        self.used += word.width();
        self.push(word, style);
    }

    fn push(&mut self, text: String, style: Style) {
        if self.spans.len() > self.prefix_len
            && let Some(last) = self.spans.last_mut()
            && last.style == style
        {
            last.content.to_mut().push_str(&text);
            return;
        }
        self.spans.push(Span::styled(text, style));
    }

    fn finish(self) -> Line<'static> {
        Line::from(self.spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn never_splits_a_word_that_fits() {
        let spans = vec![Span::raw("the quick brown fox jumps over the lazy dog")];
        let lines = wrap_spans(&spans, 12, &[], &[]);
        assert_eq!(
            texts(&lines),
            ["the quick", "brown fox", "jumps over", "the lazy dog"]
        );
        for line in &lines {
            assert!(line.width() <= 12);
        }
    }

    #[test]
    fn continuation_lines_get_the_rest_prefix_and_wide_characters_count_double() {
        let spans = vec![Span::raw("日本語 の テキスト です")];
        let lines = wrap_spans(&spans, 10, &[Span::raw("• ")], &[Span::raw("  ")]);
        assert_eq!(texts(&lines), ["• 日本語", "  の", "  テキスト", "  です"]);
    }

    /// Unbreakable text breaks after its punctuation, never inside a word where a mark
    /// exists. Cases: tool-result JSON (it wrapped inside words) and a path.
    #[test]
    fn overlong_json_and_paths_break_after_punctuation() {
        let spans = vec![Span::raw(
            r#"{"name":"Plan_the_trip","status":"open","done":false}"#,
        )];
        let lines = wrap_spans(&spans, 20, &[], &[]);
        assert_eq!(
            texts(&lines),
            [
                r#"{"name":"#,
                r#""Plan_the_trip","#,
                r#""status":"open","#,
                r#""done":false}"#
            ]
        );
        let spans = vec![Span::raw("see /home/me/projects/elroy/notes.md")];
        let lines = wrap_spans(&spans, 16, &[], &[]);
        assert_eq!(
            texts(&lines),
            ["see", "/home/me/", "projects/elroy/", "notes.md"]
        );
    }

    #[test]
    fn an_overlong_word_is_split_by_characters_and_newlines_break() {
        let spans = vec![Span::raw("abcdefghij\nxy")];
        let lines = wrap_spans(&spans, 4, &[], &[]);
        assert_eq!(texts(&lines), ["abcd", "efgh", "ij", "xy"]);
    }
}
