//! Adding the `name` key to an Elroy-written agenda file without touching any other byte.
//!
//! Elroy keeps agenda and due-item names only in its database; elroy keeps them in the `name`
//! front-matter key (D6, `docs/formats.md#item-names-and-stems`). The key is inserted as one line
//! (PyYAML style, as elroy writes it) at its place in the sorted key order, so the rest of the file
//! (PyYAML's folding and escapes included) stays exactly as Elroy wrote it.

use elroy_markdown::{Document, Mapping, Value};

/// `text` with a `name: {name}` front-matter entry, or `None` when the file has no front matter,
/// already has a `name` key, or the insertion would not read back as exactly that one change.
pub(crate) fn with_name_key(text: &str, name: &str, file: &str) -> Option<String> {
    let before = Document::parse(text, file).ok()?;
    if !before.has_front_matter || before.front_matter.contains_key("name") {
        return None;
    }
    let mut entry = Mapping::new();
    entry.insert("name", Value::String(name.to_owned()));
    let line = elroy_markdown::emit_yaml(&entry, true);
    let line = if line.ends_with('\n') {
        line
    } else {
        format!("{line}\n")
    };

    // Byte offset of each front-matter line, from the line after the opening fence up to the
    // closing fence; the entry goes before the first top-level key that sorts after `name`.
    let mut offset = text.find('\n')? + 1;
    let mut insert_at = None;
    loop {
        let rest = &text[offset..];
        let line_end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let current = &rest[..line_end];
        let bare = current.trim_end_matches(['\n', '\r']);
        if bare == "---" {
            insert_at.get_or_insert(offset);
            break;
        }
        let top_level_key = !current.starts_with([' ', '\t', '-', '#']) && bare.contains(':');
        if top_level_key && insert_at.is_none() {
            let key = bare.split(':').next().unwrap_or_default().trim();
            let key = key.trim_matches(['\'', '"']);
            if key > "name" {
                insert_at = Some(offset);
            }
        }
        if line_end == 0 || offset + line_end >= text.len() {
            return None;
        }
        offset += line_end;
    }
    let at = insert_at?;
    let updated = format!("{}{line}{}", &text[..at], &text[at..]);

    let after = Document::parse(&updated, file).ok()?;
    let mut expected = before.front_matter.clone();
    expected.insert("name", Value::String(name.to_owned()));
    let same_keys = expected.len() == after.front_matter.len()
        && expected
            .iter()
            .all(|(k, v)| after.front_matter.get(k) == Some(v));
    (same_keys && after.raw_body == before.raw_body).then_some(updated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserted_in_key_order_other_bytes_kept() {
        let text = "---\ncompleted: false\ndate: '2026-03-16'\nstatus: created\ntrigger_context: when user mentions the library, an overdue notice, or anything about\n  returning borrowed books\n---\n\nReturn both books.";
        let out = with_name_key(text, "Return library books (2)", "agenda/x.md").unwrap();
        assert_eq!(
            out,
            text.replace(
                "status: created\n",
                "name: Return library books (2)\nstatus: created\n"
            )
        );
    }

    #[test]
    fn quoted_and_last_positions() {
        let text = "---\nchecklist:\n- completed: true\n  id: 1\n  text: x\ncompleted: false\ndate: '2026-03-18'\n---\n\nBody";
        let out = with_name_key(text, "Ask about café #wifi: password", "agenda/x.md").unwrap();
        let doc = Document::parse(&out, "x").unwrap();
        assert_eq!(
            doc.front_matter.get("name"),
            Some(&Value::String("Ask about café #wifi: password".into()))
        );
        assert!(out.starts_with("---\nchecklist:\n- completed: true\n  id: 1\n  text: x\ncompleted: false\ndate: '2026-03-18'\nname: "));
        assert!(out.ends_with("\n---\n\nBody"));
    }

    #[test]
    fn left_alone() {
        assert_eq!(with_name_key("no front matter", "n", "x"), None);
        assert_eq!(with_name_key("---\nname: a\n---\nb", "n", "x"), None);
        assert_eq!(with_name_key("---\n: [\n---\nb", "n", "x"), None);
    }
}
