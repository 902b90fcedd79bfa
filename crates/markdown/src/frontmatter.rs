//! Reading and writing `---\n{yaml}\n---\n\n{body}` files (`docs/formats.md#front-matter-files`).

use std::path::Path;

use crate::{Mapping, MarkdownError, Value, emit_yaml};

/// A parsed markdown file: its front matter and raw body.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The front matter, keys in file order (empty when the file has none, or an empty block).
    pub front_matter: Mapping,
    /// Everything after the closing `---` line's line break, byte for byte
    /// (`docs/formats.md#reading-a-file` step 4): files written by [`Document::render`] have a raw
    /// body that starts with `\n`. Without front matter, the whole text.
    pub raw_body: String,
    /// Whether the file had a front-matter block.
    pub has_front_matter: bool,
    /// The YAML text of the block exactly as read (CRLF turned into LF), each line with its `\n`;
    /// empty for an empty block or no front matter. [`Document::render_keeping_front_matter`]
    /// writes it back unchanged when only the body changes.
    pub raw_yaml: String,
}

/// Splits off the first line (without its `\n`) and the rest after it.
fn split_line(s: &str) -> (&str, Option<&str>) {
    match s.find('\n') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

fn is_fence(line: &str) -> bool {
    line == "---" || line == "---\r"
}

/// The YAML parser's complaint in plain words, with the line counted in the file (the block
/// starts on line 2, after the opening `---`): `line 3: a value containing ": " must be in
/// quotes (or the line is indented too far)`. Library advice (`set DuplicateKeyPolicy in
/// Options`) and source snippets are dropped; messages without a plain rendering keep the
/// parser's wording.
fn parser_message(err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    let first = text.lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first).trim();
    // serde-saphyr: `line L column C: message`, L counted in the YAML block.
    let (line, message) = match first
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(' '))
        .and_then(|(l, rest)| Some((l.parse::<u64>().ok()?, rest)))
        .and_then(|(l, rest)| Some((l, rest.split_once(": ")?.1)))
    {
        Some((l, message)) => (Some(l + 1), message),
        None => (None, first),
    };
    let message = message.split(", set ").next().unwrap_or(message);
    let plain = plain_yaml_message(message).unwrap_or(message);
    match line {
        Some(l) => format!("line {l}: {plain}"),
        None => plain.to_owned(),
    }
}

/// Plain renderings of the YAML errors people make by hand in front matter.
fn plain_yaml_message(message: &str) -> Option<&'static str> {
    const PLAIN: &[(&str, &str)] = &[
        (
            "mapping values are not allowed",
            "a value containing \": \" must be in quotes (or the line is indented too far)",
        ),
        (
            "found a tab",
            "a tab is used for indentation; YAML allows only spaces",
        ),
        (
            "tabs disallowed",
            "a tab is used for indentation; YAML allows only spaces",
        ),
        (
            "unclosed bracket '['",
            "a \"[\" list is never closed with \"]\"",
        ),
        (
            "unclosed bracket '{'",
            "a \"{\" mapping is never closed with \"}\"",
        ),
        ("unclosed quote", "a quoted value is never closed"),
        (
            "unknown anchor",
            "a value starting with \"*\" refers to an anchor that does not exist (quote the value)",
        ),
        (
            "did not find expected key",
            "this line is not a \"key: value\" pair at the indentation of the lines above",
        ),
        (
            "unknown escape character",
            "a double-quoted value has an unknown backslash escape",
        ),
    ];
    PLAIN
        .iter()
        .find(|(needle, _)| message.contains(needle))
        .map(|(_, plain)| *plain)
}

/// Parses YAML text as a front-matter mapping (empty text gives an empty mapping).
///
/// # Errors
/// [`MarkdownError::InvalidFrontMatter`] for invalid YAML or a top level that is not a mapping.
pub(crate) fn parse_yaml_mapping(yaml: &str, file: &str) -> Result<Mapping, MarkdownError> {
    let invalid = |message: String| MarkdownError::InvalidFrontMatter {
        file: file.to_owned(),
        message,
    };
    let normalized;
    let yaml = if yaml.contains('\r') {
        normalized = yaml.replace("\r\n", "\n");
        normalized.as_str()
    } else {
        yaml
    };
    // A key given twice: the last value wins, as PyYAML (Elroy) reads it; the key keeps the
    // position of its first occurrence (a Python dict's order).
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::LastWins,
    };
    let parsed: serde_json::Value = serde_saphyr::from_str_with_options(yaml, options)
        .map_err(|e| invalid(parser_message(&e)))?;
    match Value::from_json(parsed) {
        Value::Null => Ok(Mapping::new()),
        Value::Map(map) => Ok(map),
        other => Err(invalid(format!(
            "the top level is not a mapping (found {})",
            match other {
                Value::List(_) => "a list",
                _ => "a scalar",
            }
        ))),
    }
}

impl Document {
    /// Parses a file's text (BOM already skipped, see [`read_text`]).
    ///
    /// The front matter starts when the first line is exactly `---` (a trailing `\r` allowed) and
    /// ends at the next such line. CRLF files and an empty block are accepted (D5). A first `---`
    /// with no closing line means the file has no front matter. `file` is the display path used in
    /// errors (relative to `$ELROY_HOME`, `/` separators).
    ///
    /// # Errors
    /// [`MarkdownError::InvalidFrontMatter`] (`invalid front matter in {file}: {parser message}`)
    /// when the block is not valid YAML or not a mapping. Callers must not rewrite such a file.
    pub fn parse(text: &str, file: &str) -> Result<Document, MarkdownError> {
        let no_front_matter = || Document {
            front_matter: Mapping::new(),
            raw_body: text.to_owned(),
            has_front_matter: false,
            raw_yaml: String::new(),
        };
        let (first, rest) = split_line(text);
        let Some(mut rest) = rest.filter(|_| is_fence(first)) else {
            return Ok(no_front_matter());
        };
        let yaml_start = text.len() - rest.len();
        loop {
            let line_start = text.len() - rest.len();
            let (line, after) = split_line(rest);
            if is_fence(line) {
                let yaml = &text[yaml_start..line_start];
                let front_matter = parse_yaml_mapping(yaml, file)?;
                return Ok(Document {
                    front_matter,
                    raw_body: after.unwrap_or_default().to_owned(),
                    has_front_matter: true,
                    raw_yaml: yaml.replace("\r\n", "\n"),
                });
            }
            match after {
                Some(next) => rest = next,
                None => return Ok(no_front_matter()),
            }
        }
    }

    /// The body without surrounding whitespace (what agenda listings and renderings use).
    pub fn body_trimmed(&self) -> &str {
        self.raw_body.trim()
    }

    /// Renders `---\n{yaml}\n---\n\n{body}` (`docs/formats.md#writing-a-file`): LF line endings,
    /// `body` exactly as given (no newline is added after it). `sort_keys` as in [`emit_yaml`].
    pub fn render_with_body(front_matter: &Mapping, body: &str, sort_keys: bool) -> String {
        let yaml = emit_yaml(front_matter, sort_keys);
        let mut out = String::with_capacity(yaml.len() + body.len() + 10);
        out.push_str("---\n");
        out.push_str(&yaml);
        out.push_str("\n---\n\n");
        out.push_str(body);
        out
    }

    /// Renders the file with a new body and the front-matter block byte for byte as it was read
    /// (`---\n{raw yaml}---\n\n{body}`), for tools that change only the body and must leave the
    /// front matter exactly as it was (D5). Without a block in the original, the front matter is
    /// emitted as by [`Document::render_with_body`].
    pub fn render_keeping_front_matter(&self, body: &str, sort_keys: bool) -> String {
        if !self.has_front_matter || self.raw_yaml.trim().is_empty() {
            return Self::render_with_body(&self.front_matter, body, sort_keys);
        }
        let mut yaml = self.raw_yaml.clone();
        if !yaml.ends_with('\n') {
            yaml.push('\n');
        }
        format!("---\n{yaml}---\n\n{body}")
    }

    /// Renders this document keeping its raw body byte for byte: `---\n{yaml}\n---\n{raw_body}`.
    /// For a document parsed from a file elroy or Elroy wrote, this is the file (apart from YAML
    /// style differences such as Elroy's folding and escapes).
    pub fn render(&self, sort_keys: bool) -> String {
        let yaml = emit_yaml(&self.front_matter, sort_keys);
        format!("---\n{yaml}\n---\n{}", self.raw_body)
    }
}

/// Reads a file as UTF-8 text, skipping a leading byte-order mark (`docs/formats.md#reading-a-file`
/// step 1).
///
/// # Errors
/// [`MarkdownError::Read`] (`Unable to read {file}: {os error}`) or [`MarkdownError::NotUtf8`]
/// (`{file} is not valid UTF-8`). `file` is the display path.
pub fn read_text(path: &Path, file: &str) -> Result<String, MarkdownError> {
    // A FIFO or device in a store folder would block or be read forever.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Err(MarkdownError::Read {
            file: file.to_owned(),
            message: "not a regular file".to_owned(),
        });
    }
    let bytes = std::fs::read(path).map_err(|e| MarkdownError::Read {
        file: file.to_owned(),
        message: e.to_string(),
    })?;
    let bytes = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .map(<[u8]>::to_vec)
        .unwrap_or(bytes);
    String::from_utf8(bytes).map_err(|_| MarkdownError::NotUtf8 {
        file: file.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn read_text_refuses_devices() {
        let err = read_text(Path::new("/dev/zero"), "agenda/x.md").unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn parses_elroy_files_with_folding_and_escapes() {
        let text = "---\nchecklist:\n- completed: false\n  id: 2\n  text: \"Book room at Caf\\xE9 Zentral for the \\u65E5\\u672C delegation, with projector,\\\n    \\ whiteboard and coffee for twelve\"\ncompleted: false\ntrigger_context: when user mentions the library, an overdue notice, or anything about\n  returning borrowed books\n---\n\nbody";
        let doc = Document::parse(text, "agenda/x.md").unwrap();
        assert_eq!(doc.raw_body, "\nbody");
        let Some(Value::List(items)) = doc.front_matter.get("checklist") else {
            panic!("no checklist")
        };
        let Value::Map(entry) = &items[0] else {
            panic!("no entry")
        };
        assert_eq!(
            entry.get("text").and_then(Value::as_str),
            Some(
                "Book room at Café Zentral for the 日本 delegation, with projector, whiteboard and coffee for twelve"
            )
        );
        assert_eq!(
            doc.front_matter
                .get("trigger_context")
                .and_then(Value::as_str),
            Some(
                "when user mentions the library, an overdue notice, or anything about returning borrowed books"
            )
        );
    }

    #[test]
    fn crlf_empty_block_and_no_front_matter() {
        let doc = Document::parse("---\r\na: 1\r\n---\r\n\r\nhi\r\n", "f.md").unwrap();
        assert_eq!(doc.front_matter.get("a"), Some(&Value::Int(1)));
        assert_eq!(doc.raw_body, "\r\nhi\r\n");
        let doc = Document::parse("---\n---\nbody", "f.md").unwrap();
        assert!(doc.has_front_matter && doc.front_matter.is_empty());
        assert_eq!(doc.raw_body, "body");
        let doc = Document::parse("just text\n---\n", "f.md").unwrap();
        assert!(!doc.has_front_matter);
        assert_eq!(doc.raw_body, "just text\n---\n");
        let doc = Document::parse("---\nnot closed", "f.md").unwrap();
        assert!(!doc.has_front_matter);
    }

    #[test]
    fn body_fences_stay_in_the_body() {
        let text = Document::render_with_body(
            &Mapping(vec![("id".into(), Value::Int(4))]),
            "---\nfoo: bar\n---\nhello",
            true,
        );
        assert_eq!(text, "---\nid: 4\n---\n\n---\nfoo: bar\n---\nhello");
        let doc = Document::parse(&text, "memories/x.md").unwrap();
        assert_eq!(doc.front_matter.len(), 1);
        assert_eq!(doc.raw_body, "\n---\nfoo: bar\n---\nhello");
        assert_eq!(doc.render(true), text);
        assert_eq!(
            doc.render_keeping_front_matter("new", true),
            "---\nid: 4\n---\n\nnew"
        );
        let folded = "---\nb: \"Caf\\xE9\"\na: x\r\n---\n\nold";
        let doc = Document::parse(folded, "x.md").unwrap();
        assert_eq!(
            doc.render_keeping_front_matter("new", true),
            "---\nb: \"Caf\\xE9\"\na: x\n---\n\nnew"
        );
    }

    #[test]
    fn invalid_yaml_names_the_file() {
        let err = Document::parse("---\ndate: [2026-03-20\n---\n\nx", "agenda/Broken.md")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("invalid front matter in agenda/Broken.md: "),
            "{err}"
        );
        assert!(!err.contains('\n'));
        let err = Document::parse("---\n- a\n---\n", "a.md").unwrap_err();
        assert!(err.to_string().contains("not a mapping"));
    }

    /// Kind: a front-matter key given twice (hand edits, merges). PyYAML (Elroy 0.5.0) reads the
    /// file and the last value wins; the key keeps its first position. The issue's example (a
    /// second `status:` line in an agenda file) and a repeated key inside a nested mapping.
    #[test]
    fn duplicate_keys_last_value_wins() {
        let text = "---\ncompleted: false\ndate: '2026-03-20'\nstatus: created\nstatus: in_progress\nname: X\n---\n\nbody";
        let doc = Document::parse(text, "agenda/X.md").unwrap();
        assert_eq!(
            doc.front_matter.get("status").and_then(Value::as_str),
            Some("in_progress")
        );
        let keys: Vec<&str> = doc.front_matter.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["completed", "date", "status", "name"]);
        let text =
            "---\ntags: [a]\nchecklist:\n- id: 1\n  text: old\n  text: new\ntags: [b, c]\n---\n";
        let doc = Document::parse(text, "memories/x.md").unwrap();
        let Some(Value::List(items)) = doc.front_matter.get("checklist") else {
            panic!("no checklist")
        };
        let Value::Map(entry) = &items[0] else {
            panic!("no entry")
        };
        assert_eq!(entry.get("text").and_then(Value::as_str), Some("new"));
        assert_eq!(
            doc.front_matter.get("tags"),
            Some(&Value::List(vec![Value::from("b"), Value::from("c")]))
        );
    }

    /// Kind: front matter that truly cannot be read. The error names the file, the line in the
    /// file and the fault in plain words, never the YAML library's advice or a source snippet:
    /// an unquoted `: ` in a value and a tab used for indentation.
    #[test]
    fn unreadable_front_matter_is_explained_in_plain_words() {
        let err = Document::parse("---\nid: 3\ntitle: Re: x\n---\n\nbody", "memories/a.md")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "invalid front matter in memories/a.md: line 3: a value containing \": \" must be in quotes (or the line is indented too far)"
        );
        let err = Document::parse("---\nid: 3\ntags:\n\t- x\n---\n", "memories/b.md")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "invalid front matter in memories/b.md: line 4: a tab is used for indentation; YAML allows only spaces"
        );
        let err = Document::parse("---\nid: 3\n\tname: x\n---\n", "memories/c.md")
            .unwrap_err()
            .to_string();
        assert!(err.contains("a tab is used for indentation"), "{err}");
        assert!(
            !err.contains("Options") && !err.contains('\n') && !err.contains("-->"),
            "{err}"
        );
    }

    #[test]
    fn round_trip_of_quoted_values() {
        let mut fm = Mapping::new();
        for (k, v) in [
            ("a", "Re: October 24 booking"),
            ("b", "yes"),
            ("c", "line\nbreak\t\u{7}"),
            ("d", "'q' \"dq\" \\"),
            ("e", "2026-03-20"),
            ("f", "日本語 café"),
        ] {
            fm.insert(k, v);
        }
        let text = Document::render_with_body(&fm, "b", true);
        let doc = Document::parse(&text, "x.md").unwrap();
        assert_eq!(doc.front_matter, fm);
    }

    #[test]
    fn bom_and_invalid_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.md");
        std::fs::write(&p, b"\xEF\xBB\xBF---\na: 1\n---\n").unwrap();
        assert_eq!(read_text(&p, "a.md").unwrap(), "---\na: 1\n---\n");
        std::fs::write(&p, b"\xFF").unwrap();
        assert_eq!(
            read_text(&p, "a.md").unwrap_err().to_string(),
            "a.md is not valid UTF-8"
        );
    }
}
