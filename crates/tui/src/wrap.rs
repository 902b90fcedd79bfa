//! Word wrapping of styled text: lines break only between words (a word wider than the whole
//! line is the one thing split, by characters); widths are terminal cells (`unicode-width`).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Wraps `spans` to `width` cells. The first line starts with `first_prefix`, the next ones with
/// `rest_prefix` (list bullets, quote bars, indentation). Spaces at the start of a continuation
/// line are dropped; `\n` inside a span forces a break. Always returns at least one line.
pub fn wrap_spans(
    spans: &[Span<'static>],
    width: usize,
    first_prefix: &[Span<'static>],
    rest_prefix: &[Span<'static>],
) -> Vec<Line<'static>> {
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
                        // A word wider than the line: split it by characters.
                        let mut chunk = String::new();
                        for ch in word.chars() {
                            let cw = ch.width().unwrap_or(0);
                            if builder.used + chunk.width() + cw > builder.width
                                && !(chunk.is_empty() && builder.is_empty())
                            {
                                builder.push_word(std::mem::take(&mut chunk), span.style);
                                out.push(builder.finish());
                                builder = LineBuilder::new(rest_prefix, width);
                            }
                            chunk.push(ch);
                        }
                        builder.push_word(chunk, span.style);
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

/// Hard-wraps one line of styled spans (code) at `width` cells, keeping every character.
pub fn hard_wrap(
    spans: &[Span<'static>],
    width: usize,
    prefix: &[Span<'static>],
) -> Vec<Line<'static>> {
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

    #[test]
    fn an_overlong_word_is_split_by_characters_and_newlines_break() {
        let spans = vec![Span::raw("abcdefghij\nxy")];
        let lines = wrap_spans(&spans, 4, &[], &[]);
        assert_eq!(texts(&lines), ["abcd", "efgh", "ij", "xy"]);
    }
}
