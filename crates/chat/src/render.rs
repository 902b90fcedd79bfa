//! Streamed markdown for the terminal, word by word: reply text is shown as soon as each word is
//! complete (a word is held back only until the whitespace after it arrives, so a word is never
//! split by wrapping), with headings bold and underlined, list bullets as `•`, quotes as `│`,
//! `**strong**`, `*emphasis*` and `` `code` `` styled by a small incremental state machine (a
//! style opened in one delta is closed in a later one), and lines wrapped at the terminal width
//! between words, continuation lines indented under list items. Code blocks arrive as their own
//! events and are printed by the chat.
//!
//! Without styles and without a width (output not a terminal), the text passes through unchanged
//! and at once.

use unicode_width::UnicodeWidthStr;

const BOLD_UNDERLINE: &str = "\x1b[1;4m";
const BOLD: &str = "\x1b[1m";
const NORMAL_INTENSITY: &str = "\x1b[22m";
const ITALIC: &str = "\x1b[3m";
const NO_ITALIC: &str = "\x1b[23m";
const INVERSE: &str = "\x1b[7m";
const NO_INVERSE: &str = "\x1b[27m";
const NO_UNDERLINE: &str = "\x1b[24m";
const DIM: &str = "\x1b[2m";

/// Renders streamed markdown word by word.
#[derive(Debug, Default)]
pub(crate) struct MarkdownStream {
    /// ANSI styles on.
    styles: bool,
    /// Wrap at this many columns (`None`: never wrap).
    width: Option<usize>,
    /// Received text not yet shown: the last, possibly incomplete, word.
    pending: String,
    /// Whitespace seen after the last shown word, shown before the next word unless the line
    /// wraps there.
    space: String,
    /// No word of the current line has been shown yet.
    line_start: bool,
    /// The current output column.
    column: usize,
    /// The indent of continuation lines of the current line.
    hang: usize,
    /// The current line is a heading.
    heading: bool,
    /// The current line is a quote.
    quote: bool,
    /// The next word follows a line marker: the whitespace before it is not shown.
    after_marker: bool,
    bold: bool,
    italic: bool,
    code: bool,
}

impl MarkdownStream {
    /// A renderer: `styles` turns ANSI styling on, `width` wrapping at that many columns. With
    /// neither, text passes through unchanged.
    pub(crate) fn new(styles: bool, width: Option<usize>) -> Self {
        MarkdownStream {
            styles,
            width: width.filter(|w| *w >= 10),
            line_start: true,
            ..MarkdownStream::default()
        }
    }

    fn passthrough(&self) -> bool {
        !self.styles && self.width.is_none()
    }

    /// Adds a delta; returns what can be shown now: every word followed by whitespace, every
    /// completed line.
    pub(crate) fn push(&mut self, delta: &str) -> String {
        if self.passthrough() {
            return delta.to_owned();
        }
        self.pending.push_str(delta);
        let mut out = String::new();
        while let Some(end) = self.pending.find(char::is_whitespace) {
            let word: String = self.pending.drain(..end).collect();
            let Some(blank) = self.pending.chars().next() else {
                break;
            };
            self.pending.drain(..blank.len_utf8());
            if !word.is_empty() {
                self.word(&word, &mut out);
            }
            if blank == '\n' {
                self.end_line(&mut out);
            } else if self.line_start {
                // Indentation before the first word of a line.
                self.space.push(if blank == '\t' { ' ' } else { blank });
            } else {
                self.space.push(blank);
            }
        }
        out
    }

    /// Shows what is left (a last word without whitespace after it) and closes open styles.
    pub(crate) fn finish(&mut self) -> String {
        if self.passthrough() {
            return String::new();
        }
        let mut out = String::new();
        let word = std::mem::take(&mut self.pending);
        if !word.is_empty() {
            self.word(&word, &mut out);
        }
        self.close_styles(&mut out);
        self.space.clear();
        self.line_start = true;
        self.column = 0;
        self.hang = 0;
        out
    }

    /// Closes the styles of the current line and starts a new one.
    fn end_line(&mut self, out: &mut String) {
        self.close_styles(out);
        out.push('\n');
        self.space.clear();
        self.line_start = true;
        self.column = 0;
        self.hang = 0;
    }

    fn close_styles(&mut self, out: &mut String) {
        if self.styles {
            if self.code {
                out.push_str(NO_INVERSE);
            }
            if self.italic {
                out.push_str(NO_ITALIC);
            }
            if self.bold {
                out.push_str(NORMAL_INTENSITY);
            }
            if self.heading {
                out.push_str(NO_UNDERLINE);
                out.push_str(NORMAL_INTENSITY);
            }
            if self.quote {
                out.push_str(NORMAL_INTENSITY);
            }
        }
        self.code = false;
        self.italic = false;
        self.bold = false;
        self.heading = false;
        self.quote = false;
    }

    /// Shows one complete word: the line's marker when it is the first, else the space before it
    /// or a wrap.
    fn word(&mut self, word: &str, out: &mut String) {
        if self.line_start {
            self.line_start = false;
            let indent = std::mem::take(&mut self.space);
            let indent_width = indent.width();
            out.push_str(&indent);
            self.column = indent_width;
            self.hang = indent_width;
            if self.styles && self.line_marker(word, indent_width, out) {
                self.after_marker = true;
                return;
            }
        } else {
            let mut space = std::mem::take(&mut self.space);
            if std::mem::take(&mut self.after_marker) {
                space.clear();
            }
            let width = self.measure(word);
            let fits = self
                .width
                .is_none_or(|w| self.column + space.width() + width <= w);
            if fits || self.column <= self.hang {
                out.push_str(&space);
                self.column += space.width();
            } else {
                out.push('\n');
                out.push_str(&" ".repeat(self.hang));
                self.column = self.hang;
                if self.quote {
                    out.push_str("│ ");
                    self.column += 2;
                }
            }
        }
        let (rendered, width) = if self.styles {
            self.inline(word)
        } else {
            (word.to_owned(), word.width())
        };
        out.push_str(&rendered);
        self.column += width;
    }

    /// The width `word` will take, without changing the style state.
    fn measure(&self, word: &str) -> usize {
        if !self.styles {
            return word.width();
        }
        let mut probe = MarkdownStream {
            bold: self.bold,
            italic: self.italic,
            code: self.code,
            styles: true,
            ..MarkdownStream::default()
        };
        probe.inline(word).1
    }

    /// A line marker (`#`…, `-`, `*`, `+`, `1.`, `>`) as the first word: shown styled; returns
    /// whether `word` was one.
    fn line_marker(&mut self, word: &str, indent: usize, out: &mut String) -> bool {
        if (1..=6).contains(&word.len()) && word.chars().all(|c| c == '#') {
            self.heading = true;
            out.push_str(BOLD_UNDERLINE);
            return true;
        }
        if matches!(word, "-" | "*" | "+") {
            out.push_str("• ");
            self.column += 2;
            self.hang = indent + 2;
            return true;
        }
        if word == ">" {
            self.quote = true;
            out.push_str(DIM);
            out.push_str("│ ");
            self.column += 2;
            return true;
        }
        let digits = word.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && digits < 10 && matches!(&word[digits..], "." | ")") {
            out.push_str(word);
            out.push(' ');
            self.column += word.len() + 1;
            self.hang = indent + word.len() + 1;
            return true;
        }
        false
    }

    /// One word with its inline markers turned into styles: `` ` `` code (nothing else inside),
    /// `**`/`__` strong, `*`/`_` emphasis (`_` only at the word's edges, so `snake_case` stays),
    /// `\` escaping the next character. A marker that cannot open (a `*` ending a word with no
    /// emphasis open) is shown as is. Returns the rendering and its width on screen.
    fn inline(&mut self, word: &str) -> (String, usize) {
        let chars: Vec<char> = word.chars().collect();
        let mut out = String::new();
        let mut shown = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            let at_start = i == 0;
            let at_end = i + 1 == chars.len();
            if self.code {
                if c == '`' {
                    self.code = false;
                    out.push_str(NO_INVERSE);
                } else {
                    out.push(c);
                    shown.push(c);
                }
                i += 1;
                continue;
            }
            match c {
                '\\' if next.is_some_and(|n| n.is_ascii_punctuation()) => {
                    if let Some(n) = next {
                        out.push(n);
                        shown.push(n);
                    }
                    i += 2;
                    continue;
                }
                '`' => {
                    self.code = true;
                    out.push_str(INVERSE);
                }
                '*' | '_' if next == Some(c) => {
                    let edge = c == '*' || at_start || i + 2 == chars.len();
                    if edge && (self.bold || i + 2 < chars.len() || !at_start) {
                        self.bold = !self.bold;
                        out.push_str(if self.bold { BOLD } else { NORMAL_INTENSITY });
                    } else {
                        out.push(c);
                        out.push(c);
                        shown.push(c);
                        shown.push(c);
                    }
                    i += 2;
                    continue;
                }
                '*' | '_' => {
                    let edge = c == '*' || at_start || at_end;
                    if edge && self.italic {
                        self.italic = false;
                        out.push_str(NO_ITALIC);
                    } else if edge && !at_end {
                        self.italic = true;
                        out.push_str(ITALIC);
                    } else {
                        out.push(c);
                        shown.push(c);
                    }
                }
                _ => {
                    out.push(c);
                    shown.push(c);
                }
            }
            i += 1;
        }
        (out, shown.width())
    }
}

/// A complete code block (a `CodeBlock` event): with styles, a dim `── language ──` label and
/// the code indented by two spaces (copyable without fences); without, the fenced block as the
/// model wrote it. Starts and ends on a line of its own.
pub(crate) fn code_block(language: &str, content: &str, styles: bool) -> String {
    if !styles {
        return format!("\n```{language}\n{content}```\n");
    }
    let label = if language.trim().is_empty() {
        "code"
    } else {
        language.trim()
    };
    let mut out = format!("\n{DIM}── {label} ──{NORMAL_INTENSITY}\n");
    for line in content.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(chunks: &[&str], width: Option<usize>) -> String {
        let mut md = MarkdownStream::new(true, width);
        let mut out: String = chunks.iter().map(|c| md.push(c)).collect();
        out.push_str(&md.finish());
        out
    }

    fn plain(text: &str) -> String {
        let mut out = String::new();
        let mut skip = false;
        for c in text.chars() {
            if c == '\x1b' {
                skip = true;
            } else if skip {
                skip = c != 'm';
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Each word is shown as soon as the whitespace after it arrives; only the last word waits.
    #[test]
    fn words_show_as_they_arrive() {
        let mut md = MarkdownStream::new(true, Some(80));
        assert_eq!(md.push("Hel"), "");
        assert_eq!(md.push("lo wor"), "Hello");
        assert_eq!(md.push("ld, how"), " world,");
        assert_eq!(md.push(" are you?\nFine"), " how are you?\n");
        assert_eq!(md.finish(), "Fine");
        assert_eq!(md.finish(), "");
    }

    #[test]
    fn styles_across_deltas() {
        let out = render(
            &[
                "# Plan for **to",
                "day**\n- buy `oat ",
                "milk`\n2. call *mom*\nrest",
            ],
            None,
        );
        assert_eq!(
            out,
            "\x1b[1;4mPlan for \x1b[1mtoday\x1b[22m\x1b[24m\x1b[22m\n• buy \x1b[7moat milk\x1b[27m\n2. call \x1b[3mmom\x1b[23m\nrest"
        );
        // The same text in one delta or character by character renders the same.
        let text = "# Plan for **today**\n- buy `oat milk`\n2. call *mom*\nrest";
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(render(&refs, None), out);
        assert_eq!(render(&[text], None), out);
    }

    #[test]
    fn markers_that_are_text_stay_text() {
        assert_eq!(
            plain(&render(&["use snake_case and 2 * 3 here"], None)),
            "use snake_case and 2 * 3 here"
        );
        assert_eq!(
            plain(&render(&["a \\*literal\\* star"], None)),
            "a *literal* star"
        );
        assert_eq!(plain(&render(&["> quoted words"], None)), "│ quoted words");
    }

    /// Wrapping happens between words, never inside one; list continuations are indented.
    #[test]
    fn wraps_between_words() {
        let text = "- alpha beta gamma delta epsilon zeta eta theta iota kappa\nsupercalifragilisticexpialidocious-is-long ok";
        let out = plain(&render(&[text], Some(20)));
        for line in out.lines() {
            assert!(
                line.chars().count() <= 20 || !line.trim().contains(' '),
                "{out}"
            );
        }
        assert_eq!(
            out,
            "• alpha beta gamma\n  delta epsilon zeta\n  eta theta iota\n  kappa\nsupercalifragilisticexpialidocious-is-long\nok"
        );
        // Styled words are measured without their markers.
        let styled = plain(&render(&["**abcd** **efgh** **ijkl** mnop"], Some(14)));
        assert_eq!(styled, "abcd efgh ijkl\nmnop");
    }

    #[test]
    fn passes_through_without_styles_or_width() {
        let mut md = MarkdownStream::new(false, None);
        assert_eq!(md.push("**a**\n# b"), "**a**\n# b");
        assert_eq!(md.push(" c"), " c");
        assert_eq!(md.finish(), "");
        // Without styles but with a width: markers stay, lines wrap between words.
        assert_eq!(
            render_plain("# one two three four", 12),
            "# one two\nthree four"
        );
    }

    #[test]
    fn code_blocks() {
        assert_eq!(
            code_block("rust", "fn main() {}\n", false),
            "\n```rust\nfn main() {}\n```\n"
        );
        assert_eq!(
            plain(&code_block("rust", "fn main() {\n    run();\n}\n", true)),
            "\n── rust ──\n  fn main() {\n      run();\n  }\n"
        );
        assert_eq!(plain(&code_block("", "x\n", true)), "\n── code ──\n  x\n");
    }

    fn render_plain(text: &str, width: usize) -> String {
        let mut md = MarkdownStream::new(false, Some(width));
        let mut out = md.push(text);
        out.push_str(&md.finish());
        out
    }
}
