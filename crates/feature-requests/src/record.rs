//! One feature-request file: reading it with Elroy's loader rules
//! (`docs/formats.md#loading-a-feature-request`) and writing it in Elroy's layout
//! (`docs/formats.md#feature-requests`). Source: Elroy 0.5.0
//! `repository/feature_requests/store.py`.

use elroy_markdown::{Document, Mapping, Value};

/// Statuses that mean a request is no longer active (compared ignoring case).
pub const INACTIVE_STATUSES: [&str; 5] = ["closed", "completed", "done", "cancelled", "rejected"];

/// A feature request as Elroy's loader sees it, plus the file's whole front matter so a rewrite
/// keeps keys Elroy does not know (D5).
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureRequest {
    /// The file name, e.g. `add-calendar-sync.md`.
    pub file_name: String,
    /// `id`; defaults to the file stem.
    pub id: String,
    /// `title`; defaults to the file stem.
    pub title: String,
    /// `status`; defaults to `open`.
    pub status: String,
    /// `source` lower-cased, or inferred (`self_reflection` / `user_request`).
    pub source: String,
    /// `created_at` as stored (a string, never reinterpreted); `""` when missing.
    pub created_at: String,
    /// `updated_at` as stored; `""` when missing.
    pub updated_at: String,
    /// `aliases` without blank entries.
    pub aliases: Vec<String>,
    /// The `Summary` section, or the whole body stripped when it is missing or empty.
    pub summary: String,
    /// The `Why It Matters` section, if non-empty.
    pub rationale: Option<String>,
    /// The `Supporting Context` section, if non-empty.
    pub supporting_context: Option<String>,
    /// The file's front matter as read (key order and unknown keys kept).
    pub front_matter: Mapping,
    /// When the `Summary` section was missing or empty (so `summary` is the whole body): that
    /// summary, and the body without its `Summary`, `Why It Matters` and `Supporting Context`
    /// sections, which a rewrite writes as the summary instead. Writing the whole body would copy
    /// those sections into the summary, doubling the file at every rewrite.
    pub body_fallback: Option<(String, String)>,
}

impl FeatureRequest {
    /// The file name without `.md`.
    pub fn stem(&self) -> &str {
        self.file_name
            .strip_suffix(".md")
            .unwrap_or(&self.file_name)
    }

    /// Whether the status is not one of [`INACTIVE_STATUSES`] (ignoring case and surrounding
    /// whitespace).
    pub fn is_active(&self) -> bool {
        let status = self.status.trim().to_lowercase();
        !INACTIVE_STATUSES.contains(&status.as_str())
    }

    /// Reads a parsed file with Elroy's loader rules (`docs/formats.md#loading-a-feature-request`).
    pub fn from_document(file_name: &str, doc: &Document) -> FeatureRequest {
        let stem = file_name.strip_suffix(".md").unwrap_or(file_name);
        let fm = &doc.front_matter;
        let text_or = |key: &str, default: &str| -> String {
            match fm.get(key) {
                Some(v) if truthy(v) => py_str(v),
                _ => default.to_owned(),
            }
        };
        let (summary, rationale, supporting_context) = parse_body(&doc.raw_body);
        let body_fallback =
            summary_is_fallback(&doc.raw_body).then(|| (summary.clone(), body_rest(&doc.raw_body)));
        let aliases = match fm.get("aliases") {
            Some(Value::List(items)) => items
                .iter()
                .map(py_str)
                .filter(|a| !a.trim().is_empty())
                .collect(),
            // Elroy iterates whatever is there; a lone string is taken as one alias here.
            Some(v @ Value::String(_)) if !py_str(v).trim().is_empty() => vec![py_str(v)],
            _ => Vec::new(),
        };
        let source = infer_source(fm.get("source"), supporting_context.as_deref());
        FeatureRequest {
            file_name: file_name.to_owned(),
            id: text_or("id", stem),
            title: text_or("title", stem),
            status: text_or("status", "open"),
            source,
            created_at: text_or("created_at", ""),
            updated_at: text_or("updated_at", ""),
            aliases,
            summary,
            rationale,
            supporting_context,
            front_matter: fm.clone(),
            body_fallback,
        }
    }

    /// The file's text (`docs/formats.md#feature-requests`): the front matter as read with the
    /// seven known keys set (keys it lacked appended in the order `id`, `title`, `status`,
    /// `source`, `created_at`, `updated_at`, `aliases`), then the body, ending with one `\n`.
    pub fn render(&self) -> String {
        let mut fm = self.front_matter.clone();
        fm.insert("id", self.id.as_str());
        fm.insert("title", self.title.as_str());
        fm.insert("status", self.status.as_str());
        fm.insert("source", self.source.as_str());
        fm.insert("created_at", self.created_at.as_str());
        fm.insert("updated_at", self.updated_at.as_str());
        fm.insert(
            "aliases",
            Value::List(
                self.aliases
                    .iter()
                    .map(|a| Value::from(a.as_str()))
                    .collect(),
            ),
        );
        Document::render_with_body(
            &fm,
            &render_body(
                match &self.body_fallback {
                    Some((shown, rest)) if *shown == self.summary => rest,
                    _ => &self.summary,
                },
                self.rationale.as_deref(),
                self.supporting_context.as_deref(),
            ),
            false,
        )
    }
}

/// The body (`docs/formats.md#feature-request-body`): `## Summary`, then `## Why It Matters` and
/// `## Supporting Context` when non-empty, each section's text stripped, the whole stripped, plus
/// one `\n`.
pub fn render_body(
    summary: &str,
    rationale: Option<&str>,
    supporting_context: Option<&str>,
) -> String {
    let mut parts = vec!["## Summary".to_owned(), py_strip(summary).to_owned()];
    if let Some(r) = rationale.filter(|r| !r.is_empty()) {
        parts.extend([
            String::new(),
            "## Why It Matters".into(),
            py_strip(r).into(),
        ]);
    }
    if let Some(c) = supporting_context.filter(|c| !c.is_empty()) {
        parts.extend([
            String::new(),
            "## Supporting Context".into(),
            py_strip(c).into(),
        ]);
    }
    format!("{}\n", py_strip(&parts.join("\n")))
}

/// Splits a body into `(summary, rationale, supporting context)` (Elroy's
/// `parse_feature_request_body`): sections start at lines beginning with `## `; text before the
/// first one is ignored; a repeated section name continues the earlier one.
pub fn parse_body(body: &str) -> (String, Option<String>, Option<String>) {
    let mut sections: Vec<(String, Vec<&str>)> = Vec::new();
    let mut current: Option<usize> = None;
    for line in py_splitlines(body) {
        if let Some(name) = line.strip_prefix("## ") {
            let name = py_strip(name).to_owned();
            let index = match sections.iter().position(|(n, _)| *n == name) {
                Some(i) => i,
                None => {
                    sections.push((name, Vec::new()));
                    sections.len() - 1
                }
            };
            current = Some(index);
            continue;
        }
        if let Some(i) = current
            && let Some((_, lines)) = sections.get_mut(i)
        {
            lines.push(line);
        }
    }
    let clean = |name: &str| -> Option<String> {
        let (_, lines) = sections.iter().find(|(n, _)| n == name)?;
        let text = py_strip(&lines.join("\n")).to_owned();
        (!text.is_empty()).then_some(text)
    };
    let summary = clean("Summary").unwrap_or_else(|| py_strip(body).to_owned());
    (
        summary,
        clean("Why It Matters"),
        clean("Supporting Context"),
    )
}

/// Whether [`parse_body`] falls back to the whole body for the summary (no non-empty `Summary`).
fn summary_is_fallback(body: &str) -> bool {
    let mut in_summary = false;
    for line in py_splitlines(body) {
        if let Some(name) = line.strip_prefix("## ") {
            in_summary = py_strip(name) == "Summary";
        } else if in_summary && !py_strip(line).is_empty() {
            return false;
        }
    }
    true
}

/// The body without its `Summary` header and its `Why It Matters` and `Supporting Context`
/// sections (headers and text), stripped: what a rewrite keeps as the summary of a file whose
/// `Summary` section was missing or empty.
fn body_rest(body: &str) -> String {
    let mut kept = Vec::new();
    let mut skipping = false;
    for line in py_splitlines(body) {
        if let Some(name) = line.strip_prefix("## ") {
            let name = py_strip(name);
            skipping = matches!(name, "Summary" | "Why It Matters" | "Supporting Context");
            if skipping {
                continue;
            }
        }
        if !skipping {
            kept.push(line);
        }
    }
    py_strip(&kept.join("\n")).to_owned()
}

/// Elroy's `infer_feature_request_source`: the stored value stripped and lower-cased when
/// non-empty; otherwise `self_reflection` when the supporting context carries all three
/// reflection markers, else `user_request`.
pub fn infer_source(source: Option<&Value>, supporting_context: Option<&str>) -> String {
    if let Some(v) = source.filter(|v| truthy(v)) {
        let normalized = py_strip(&py_str(v)).to_lowercase();
        if !normalized.is_empty() {
            return normalized;
        }
    }
    let context = supporting_context.unwrap_or_default();
    let markers = [
        "- Reflected at:",
        "- Trigger phrase:",
        "- Recent user feedback:",
    ];
    if markers.iter().all(|m| context.contains(m)) {
        "self_reflection".to_owned()
    } else {
        "user_request".to_owned()
    }
}

/// Python truthiness of a YAML value (`x or default`).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::String(s) | Value::Timestamp(s) => !s.is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Map(m) => !m.is_empty(),
    }
}

/// Python `str()` of a YAML scalar as Elroy's loader applies it (`True`, `5`, `1.5`, …).
fn py_str(v: &Value) -> String {
    match v {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 => format!("{f:.1}"),
        Value::Float(f) => f.to_string(),
        Value::String(s) | Value::Timestamp(s) => s.clone(),
        other => other.display_short(),
    }
}

/// Python's `str.strip()`: also strips the separators `\x1c`–`\x1f`, which are not Unicode
/// white space.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Python's `str.splitlines()`: splits at `\n`, `\r\n`, `\r`, `\x0b`, `\x0c`, `\x1c`–`\x1e`,
/// `\x85`, U+2028 and U+2029, without the breaks and without a final empty piece.
fn py_splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        out.push(&s[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r'
            && let Some(&(j, '\n')) = chars.peek()
        {
            chars.next();
            end = j + 1;
        }
        start = end;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitlines_like_python() {
        assert_eq!(py_splitlines("a\r\nb\rc\n\nd\n"), ["a", "b", "c", "", "d"]);
        assert_eq!(py_splitlines(""), Vec::<&str>::new());
        assert_eq!(py_splitlines("a\u{2028}b"), ["a", "b"]);
    }

    #[test]
    fn body_sections() {
        let (s, r, c) = parse_body(
            "\nintro\n## Summary\n x \n\n## Why It Matters\n\n## Supporting Context\n- a\n\n- b\n",
        );
        assert_eq!(s, "x");
        assert_eq!(r, None);
        assert_eq!(c.as_deref(), Some("- a\n\n- b"));
        let (s, _, _) = parse_body("\n  just text  \n");
        assert_eq!(s, "just text");
    }

    #[test]
    fn empty_summary_rewrite_does_not_grow() {
        // An empty description wrote an empty `Summary`; the loader's fallback summary is then the
        // whole body, and writing that back used to double the file at every merge.
        let mut text = "---\nid: t\n---\n\n## Summary\n\n\n## Supporting Context\n- a\n".to_owned();
        for body in [
            text.clone(),
            "---\nid: t\n---\n## Summary\n## Plan\n\n## Supporting Context\n- a\n".to_owned(),
        ] {
            text = body;
            let mut sizes = Vec::new();
            for round in 0..4 {
                let doc = Document::parse(&text, "t.md").unwrap();
                let mut r = FeatureRequest::from_document("t.md", &doc);
                r.supporting_context = Some(format!(
                    "{}\n\n- round {round}",
                    r.supporting_context.unwrap_or_default()
                ));
                text = r.render();
                sizes.push(text.matches("## ").count());
            }
            assert!(sizes.windows(2).all(|w| w[0] == w[1]), "{sizes:?}\n{text}");
            assert_eq!(text.matches("- round").count(), 4);
        }
        // Plain text without sections stays the summary.
        let doc = Document::parse("---\nid: t\n---\njust text\n", "t.md").unwrap();
        let r = FeatureRequest::from_document("t.md", &doc);
        assert!(r.render().ends_with("## Summary\njust text\n"));
    }

    #[test]
    fn body_render() {
        assert_eq!(render_body("s", None, None), "## Summary\ns\n");
        assert_eq!(
            render_body(" s ", Some("r"), Some("c\n")),
            "## Summary\ns\n\n## Why It Matters\nr\n\n## Supporting Context\nc\n"
        );
    }

    #[test]
    fn source_inference() {
        assert_eq!(
            infer_source(Some(&Value::from(" Self_Reflection ")), None),
            "self_reflection"
        );
        assert_eq!(
            infer_source(
                None,
                Some("- Reflected at: x\n- Trigger phrase: y\n- Recent user feedback: z")
            ),
            "self_reflection"
        );
        assert_eq!(
            infer_source(Some(&Value::from("  ")), Some("- Reflected at: x")),
            "user_request"
        );
    }
}
