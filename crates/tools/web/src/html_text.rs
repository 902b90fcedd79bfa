//! Readable text from HTML (`docs/tool-rules.md#html-to-text`).
//!
//! Parsing is html5ever's HTML5 parser (through `scraper`). The rendering follows the rules of
//! `docs/tool-rules.md#html-to-text` exactly (removed elements, `main`/`article` root, paragraph
//! and line blocks, heading and list prefixes, table cells joined by ` | `); general-purpose
//! converters such as `html2text` wrap lines, draw table borders and keep navigation, so they
//! cannot produce the specified text.

use ego_tree::NodeRef;
use scraper::{Html, Node};

/// Elements removed with their content (`docs/tool-rules.md#html-to-text` step 2).
const REMOVED: &[&str] = &[
    "head", "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas",
    "nav", "footer",
];

/// Elements with a blank line before and after.
const PARAGRAPH_BLOCKS: &[&str] = &[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "dl",
    "pre",
    "blockquote",
    "table",
    "figure",
    "hr",
    "section",
    "article",
    "main",
    "header",
    "aside",
    "details",
    "form",
    "fieldset",
    "address",
];

/// Elements with a line break before and after.
const LINE_BLOCKS: &[&str] = &[
    "div",
    "li",
    "dt",
    "dd",
    "tr",
    "figcaption",
    "summary",
    "caption",
    "option",
];

/// The title and readable text of an HTML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readable {
    /// The first `<title>`, else the first `<h1>`, whitespace-collapsed; may be empty.
    pub title: String,
    /// The text of the root element per `docs/tool-rules.md#html-to-text`.
    pub text: String,
}

/// Converts an HTML document to its title and readable text (`docs/tool-rules.md#html-to-text`).
pub fn html_to_text(html: &str) -> Readable {
    let doc = Html::parse_document(html);
    let root = doc.tree.root();
    let title = first_text(root, "title")
        .filter(|t| !t.is_empty())
        .or_else(|| first_text(root, "h1"))
        .unwrap_or_default();
    let mut mains = Vec::new();
    let mut articles = Vec::new();
    let mut body = None;
    find_roots(root, &mut mains, &mut articles, &mut body);
    let start = match (mains.as_slice(), articles.as_slice()) {
        ([main], _) => *main,
        (_, [article]) => *article,
        _ => body.unwrap_or(root),
    };
    let mut writer = Writer::default();
    writer.walk(start);
    Readable {
        title,
        text: writer.finish(),
    }
}

fn element_name(node: NodeRef<'_, Node>) -> Option<&str> {
    node.value().as_element().map(|e| e.name())
}

/// Whether `node` is removed with its content (`docs/tool-rules.md#html-to-text` step 2).
fn is_removed(node: NodeRef<'_, Node>) -> bool {
    let Some(element) = node.value().as_element() else {
        return false;
    };
    REMOVED.contains(&element.name())
        || element.attr("hidden").is_some()
        || element
            .attr("aria-hidden")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Whitespace-collapsed, trimmed text of the first `name` element in document order.
fn first_text(root: NodeRef<'_, Node>, name: &str) -> Option<String> {
    let node = root
        .descendants()
        .find(|n| element_name(*n) == Some(name))?;
    let text: String = node
        .descendants()
        .filter_map(|n| n.value().as_text().map(|t| t.to_string()))
        .collect();
    Some(collapse(&text))
}

fn collapse(text: &str) -> String {
    text.split(|c: char| c.is_ascii_whitespace() || c == '\u{a0}')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Collects the `main`, `article` and first `body` elements outside removed subtrees.
fn find_roots<'a>(
    node: NodeRef<'a, Node>,
    mains: &mut Vec<NodeRef<'a, Node>>,
    articles: &mut Vec<NodeRef<'a, Node>>,
    body: &mut Option<NodeRef<'a, Node>>,
) {
    if is_removed(node) {
        return;
    }
    match element_name(node) {
        Some("main") => mains.push(node),
        Some("article") => articles.push(node),
        Some("body") if body.is_none() => *body = Some(node),
        _ => {}
    }
    for child in node.children() {
        find_roots(child, mains, articles, body);
    }
}

/// One output line: list indentation, content, and whether it came from `<pre>`.
#[derive(Debug, Default)]
struct Line {
    indent: String,
    text: String,
    pre: bool,
}

/// An open list: its kind and the next item number.
#[derive(Debug)]
struct List {
    ordered: bool,
    next: i64,
}

#[derive(Debug, Default)]
struct Writer {
    lines: Vec<Line>,
    /// Breaks owed before the next content: 0 none, 1 line break, 2 blank line.
    pending_break: u8,
    pending_space: bool,
    /// A heading or list-item prefix owed before the next content, with its indentation.
    pending_prefix: Option<(String, String)>,
    lists: Vec<List>,
    pre_depth: usize,
    /// Cells seen in each open table row.
    cells: Vec<usize>,
}

impl Writer {
    fn walk(&mut self, node: NodeRef<'_, Node>) {
        match node.value() {
            Node::Text(text) => self.text(text),
            Node::Element(element) if !is_removed(node) => {
                let name = element.name();
                self.open(name, element);
                for child in node.children() {
                    self.walk(child);
                }
                self.close(name);
            }
            Node::Document | Node::Fragment => {
                for child in node.children() {
                    self.walk(child);
                }
            }
            _ => {}
        }
    }

    fn open(&mut self, name: &str, element: &scraper::node::Element) {
        if PARAGRAPH_BLOCKS.contains(&name) {
            self.block(2);
        } else if LINE_BLOCKS.contains(&name) {
            self.block(1);
        }
        match name {
            "br" => self.pending_break = (self.pending_break + 1).min(2),
            "ul" | "ol" => {
                let next = if name == "ol" {
                    element
                        .attr("start")
                        .and_then(|s| s.trim().parse().ok())
                        .unwrap_or(1)
                } else {
                    1
                };
                self.lists.push(List {
                    ordered: name == "ol",
                    next,
                });
            }
            "li" => {
                let indent = "  ".repeat(self.lists.len().saturating_sub(1));
                let marker = match self.lists.last_mut() {
                    Some(list) if list.ordered => {
                        let n = list.next;
                        list.next += 1;
                        format!("{n}. ")
                    }
                    _ => "- ".to_owned(),
                };
                self.pending_prefix = Some((indent, marker));
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let level = name[1..].parse::<usize>().unwrap_or(1);
                self.pending_prefix = Some((String::new(), format!("{} ", "#".repeat(level))));
            }
            "pre" => self.pre_depth += 1,
            "tr" => self.cells.push(0),
            "td" | "th" => {
                if let Some(count) = self.cells.last_mut() {
                    *count += 1;
                    if *count > 1 {
                        self.pending_space = false;
                        self.push_content(" | ");
                    }
                }
            }
            _ => {}
        }
    }

    fn close(&mut self, name: &str) {
        match name {
            "ul" | "ol" => {
                self.lists.pop();
            }
            "pre" => self.pre_depth = self.pre_depth.saturating_sub(1),
            "tr" => {
                self.cells.pop();
            }
            _ => {}
        }
        if PARAGRAPH_BLOCKS.contains(&name) {
            self.block(2);
        } else if LINE_BLOCKS.contains(&name) {
            self.block(1);
        }
    }

    fn block(&mut self, level: u8) {
        self.pending_break = self.pending_break.max(level);
        self.pending_space = false;
    }

    fn text(&mut self, text: &str) {
        if self.pre_depth > 0 {
            for (i, part) in text.split('\n').enumerate() {
                if i > 0 {
                    self.flush();
                    self.lines.push(Line {
                        pre: true,
                        ..Line::default()
                    });
                }
                if !part.is_empty() {
                    self.push_content(part);
                }
            }
            return;
        }
        for c in text.chars() {
            if c.is_ascii_whitespace() || c == '\u{a0}' {
                self.pending_space = true;
            } else {
                let mut buf = [0u8; 4];
                self.push_content(c.encode_utf8(&mut buf));
            }
        }
    }

    /// Starts the lines owed by pending breaks and writes a pending prefix.
    fn flush(&mut self) {
        if self.pending_break > 0 {
            if !self.lines.is_empty() {
                if self.pending_break == 2 {
                    self.lines.push(Line::default());
                }
                self.lines.push(Line::default());
            }
            self.pending_break = 0;
            self.pending_space = false;
        }
        if self.lines.is_empty() {
            self.lines.push(Line::default());
        }
        if let Some((indent, marker)) = self.pending_prefix.take() {
            if let Some(line) = self.lines.last_mut() {
                if line.text.trim().is_empty() {
                    line.indent = indent;
                }
                line.text.push_str(&marker);
            }
            self.pending_space = false;
        }
    }

    fn push_content(&mut self, content: &str) {
        self.flush();
        let pending_space = std::mem::take(&mut self.pending_space);
        let pre = self.pre_depth > 0;
        if let Some(line) = self.lines.last_mut() {
            line.pre |= pre;
            if pending_space && !line.text.is_empty() && !line.text.ends_with(' ') {
                line.text.push(' ');
            }
            line.text.push_str(content);
        }
    }

    /// Clean-up (`docs/tool-rules.md#html-to-text` step 5): trim lines outside `<pre>`, collapse
    /// blank runs, drop leading and trailing blank lines.
    fn finish(self) -> String {
        let mut out: Vec<String> = Vec::new();
        for line in self.lines {
            let text = if line.pre {
                line.text
            } else {
                let trimmed = line.text.trim();
                if trimmed.is_empty() {
                    String::new()
                } else {
                    format!("{}{trimmed}", line.indent)
                }
            };
            let blank = text.trim().is_empty();
            if blank && out.last().is_none_or(|l| l.is_empty()) {
                continue;
            }
            out.push(if blank { String::new() } else { text });
        }
        while out.last().is_some_and(|l| l.is_empty()) {
            out.pop();
        }
        out.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example() {
        let html = "<html><head><title>Example Domain</title><style>p{color:red}</style></head>\n<body><nav>Home | About</nav>\n<h1>Example Domain</h1>\n<p>This domain is for use in   illustrative\nexamples.</p>\n<ul><li>One</li><li>Two <b>bold</b></li></ul>\n<script>var x = 1;</script>\n<footer>© 2026</footer></body></html>";
        let r = html_to_text(html);
        assert_eq!(r.title, "Example Domain");
        assert_eq!(
            r.text,
            "# Example Domain\n\nThis domain is for use in illustrative examples.\n\n- One\n- Two bold"
        );
        assert_eq!(r.text.chars().count(), 84);
    }

    #[test]
    fn lists_tables_pre_and_roots() {
        let html = r#"<body><div>outside</div><main>
<ol start="3"><li>three<ul><li>nested</li></ul></li><li>four</li></ol>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td> 2 </td></tr></table>
<pre>  keep
    this</pre>
<p hidden>secret</p><p aria-hidden="true">also secret</p>
<p>line<br>break &amp; <a href="x">link</a><img src="y"></p>
</main></body>"#;
        let r = html_to_text(html);
        assert_eq!(
            r.text,
            "3. three\n\n  - nested\n\n4. four\n\na | b\n1 | 2\n\n  keep\n    this\n\nline\nbreak & link"
        );
        assert_eq!(r.title, "");
    }

    #[test]
    fn title_falls_back_to_h1_and_article_root() {
        let html = "<title> </title><body><header>Site</header><article><h2>Sub  title</h2><p>Body</p></article><aside>x</aside></body>";
        let r = html_to_text(html);
        assert_eq!(r.title, "");
        assert_eq!(r.text, "## Sub title\n\nBody");
        let with_h1 = html_to_text("<body><h1> Big\n title </h1></body>");
        assert_eq!(with_h1.title, "Big title");
    }
}
