//! Markdown (pulldown-cmark) to wrapped terminal lines: headings, emphasis, inline code, lists
//! (nested, numbered), block quotes, code blocks (highlighted), tables and links as text, rules.
//! Used for replies (re-rendered as they stream: an unclosed fence is a code block until it
//! closes), sidebar panels and detail views.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::highlight::highlight;
use crate::wrap::{hard_wrap, wrap_spans};

/// Renders `text` as markdown into lines at most `width` cells wide, base text in `base`.
/// `color` enables syntax highlighting; `dim` styles fences, bullets and quote bars.
pub fn render(
    text: &str,
    width: usize,
    base: Style,
    dim: Style,
    color: bool,
) -> Vec<Line<'static>> {
    let mut r = Renderer {
        out: Vec::new(),
        width: width.max(4),
        base,
        dim,
        color,
        inline: Vec::new(),
        styles: vec![base],
        lists: Vec::new(),
        quote: 0,
        item_first: false,
        code: None,
        table: None,
        link: None,
        heading: None,
    };
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    r.flush();
    if let Some((lang, code)) = r.code.take() {
        r.code_block(&lang, &code);
    }
    while r.out.last().is_some_and(|l| l.width() == 0) {
        r.out.pop();
    }
    r.out
}

struct Renderer {
    out: Vec<Line<'static>>,
    width: usize,
    base: Style,
    dim: Style,
    color: bool,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Open lists: `Some(next number)` for ordered lists.
    lists: Vec<Option<u64>>,
    quote: usize,
    /// The next flushed paragraph is the first of a list item (gets the bullet).
    item_first: bool,
    code: Option<(String, String)>,
    table: Option<Table>,
    link: Option<String>,
    heading: Option<HeadingLevel>,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    cell: String,
    row: Vec<String>,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.base)
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let s = f(self.style());
        self.styles.push(s);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// Quote bars and list indentation for the first and the following lines of a block.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for _ in 0..self.quote {
            first.push(Span::styled("│ ", self.dim));
            rest.push(Span::styled("│ ", self.dim));
        }
        let depth = self.lists.len();
        if depth > 0 {
            let indent = "  ".repeat(depth - 1);
            let bullet = match self.lists.last().copied().flatten() {
                Some(n) => format!("{n}. "),
                None => "• ".to_owned(),
            };
            let pad = " ".repeat(bullet.width());
            if self.item_first {
                first.push(Span::styled(format!("{indent}{bullet}"), self.dim));
                self.item_first = false;
            } else {
                first.push(Span::raw(format!("{indent}{pad}")));
            }
            rest.push(Span::raw(format!("{indent}{pad}")));
        }
        (first, rest)
    }

    fn blank(&mut self) {
        if self.out.last().is_some_and(|l| l.width() > 0) {
            let (_, rest) = self.prefixes_peek();
            self.out.push(Line::from(rest));
        }
    }

    fn prefixes_peek(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let bars: Vec<Span<'static>> = (0..self.quote)
            .map(|_| Span::styled("│", self.dim))
            .collect();
        (bars.clone(), bars)
    }

    fn flush(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let (first, rest) = self.prefixes();
        let lines = wrap_spans(&spans, self.width, &first, &rest);
        self.out.extend(lines);
    }

    fn text(&mut self, text: &str) {
        if let Some(table) = &mut self.table {
            table.cell.push_str(text);
            return;
        }
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        let style = self.style();
        self.inline.push(Span::styled(text.to_owned(), style));
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        let (first, _) = self.prefixes();
        let mut prefix = first;
        prefix.push(Span::styled("▏ ", self.dim));
        if !lang.is_empty() {
            let mut label = prefix.clone();
            label.push(Span::styled(
                lang.to_owned(),
                self.dim.add_modifier(Modifier::ITALIC),
            ));
            self.out.push(Line::from(label));
        }
        let code = code.strip_suffix('\n').unwrap_or(code);
        for spans in highlight(code, lang, self.color, self.base) {
            self.out.extend(hard_wrap(&spans, self.width, &prefix));
        }
    }

    fn table_end(&mut self, table: Table) {
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; cols];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.width());
            }
        }
        for (r, row) in table.rows.iter().enumerate() {
            let mut line = String::new();
            for (i, w) in widths.iter().enumerate() {
                let cell = row.get(i).map_or("", String::as_str);
                if i > 0 {
                    line.push_str(" │ ");
                }
                line.push_str(cell);
                line.push_str(&" ".repeat(w.saturating_sub(cell.width())));
            }
            let style = if r == 0 {
                self.base.add_modifier(Modifier::BOLD)
            } else {
                self.base
            };
            let (first, rest) = self.prefixes();
            self.out.extend(wrap_spans(
                &[Span::styled(line.trim_end().to_owned(), style)],
                self.width,
                &first,
                &rest,
            ));
            if r == 0 {
                let sep: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.out
                    .push(Line::from(Span::styled(sep.join("─┼─"), self.dim)));
            }
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                if let Some(table) = &mut self.table {
                    table.cell.push_str(&t);
                } else {
                    let style = self.style().add_modifier(Modifier::BOLD);
                    self.inline.push(Span::styled(t.into_string(), style));
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.text("\n"),
            Event::Rule => {
                self.flush();
                self.blank();
                self.out.push(Line::from(Span::styled(
                    "─".repeat(self.width.min(40)),
                    self.dim,
                )));
            }
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph if !self.item_first => self.blank(),
            Tag::Heading { level, .. } => {
                self.flush();
                self.blank();
                self.heading = Some(level);
                let underline = level == HeadingLevel::H1;
                self.push_style(|s| {
                    let s = s.add_modifier(Modifier::BOLD);
                    if underline {
                        s.add_modifier(Modifier::UNDERLINED)
                    } else {
                        s
                    }
                });
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.blank();
                self.quote += 1;
                self.push_style(|s| s.add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.blank();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.into_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                self.item_first = true;
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.link = Some(dest_url.into_string());
                self.push_style(|s| s.add_modifier(Modifier::UNDERLINED));
            }
            Tag::Table(_) => {
                self.flush();
                self.blank();
                self.table = Some(Table::default());
            }
            Tag::TableHead | Tag::TableRow | Tag::TableCell => {}
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush(),
            TagEnd::Heading(_) => {
                if let Some(level) = self.heading.take() {
                    let marks = "#".repeat(level as usize);
                    let style = self.style();
                    self.inline
                        .insert(0, Span::styled(format!("{marks} "), style));
                }
                self.flush();
                self.pop_style();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
                self.pop_style();
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(&lang, &code);
                }
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::Item => {
                self.flush();
                self.item_first = false;
                if let Some(Some(n)) = self.lists.last_mut() {
                    *n += 1;
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link | TagEnd::Image => {
                self.pop_style();
                if let Some(url) = self.link.take()
                    && !url.is_empty()
                {
                    let shown: String = self
                        .inline
                        .iter()
                        .rev()
                        .take(1)
                        .map(|s| s.content.to_string())
                        .collect();
                    if shown != url {
                        self.inline
                            .push(Span::styled(format!(" ({url})"), self.dim));
                    }
                }
            }
            TagEnd::TableCell => {
                if let Some(t) = &mut self.table {
                    let cell = std::mem::take(&mut t.cell);
                    t.row.push(cell.trim().to_owned());
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.table_end(t);
                }
            }
            _ => {}
        }
    }
}

/// The plain text of rendered lines (tests and the text capture).
pub fn plain(lines: &[Line<'_>]) -> String {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(text: &str, width: usize) -> String {
        plain(&render(text, width, Style::new(), Style::new(), false))
    }

    #[test]
    fn blocks_render_as_text() {
        let text = "# Title\n\nSome *emphasis* and **bold** with `code`.\n\n- one\n- two\n  1. nested\n\n> quoted\n\n```rust\nfn main() {}\n```\n\n| a | bb |\n|---|----|\n| 1 | 2 |\n\n[link](https://example.org)\n";
        insta::assert_snapshot!(md(text, 40));
    }

    #[test]
    fn wrapping_keeps_words_whole_inside_lists() {
        let out = md("- alpha beta gamma delta epsilon zeta eta theta", 20);
        assert_eq!(out, "• alpha beta gamma\n  delta epsilon zeta\n  eta theta");
    }

    #[test]
    fn an_unclosed_fence_renders_as_code_while_streaming() {
        let out = md("Here:\n\n```py\nprint(1)\n", 30);
        assert_eq!(out, "Here:\n\n▏ py\n▏ print(1)");
    }
}
