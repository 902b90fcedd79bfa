//! Property: random edit sequences on two sides of each kind of file, made the way elroy's tools
//! and a person edit them; after the merge every text either side ended with is somewhere (the
//! merged file, a sibling, a memory copy, or the report for a key both sides set), no output holds
//! conflict markers, and every merged store file still parses.

use elroy_markdown::{Document, Mapping, Value};
use proptest::prelude::*;

use super::*;

/// One edit: which operation, and an index it uses (modulo what exists).
type Edit = (u8, usize);

fn token(side: char, n: usize) -> String {
    format!("zq{side}{n}qz")
}

fn split_updates(body: &str) -> (String, String) {
    match body.find("\n## Updates\n\n") {
        Some(pos) => (
            body[..pos].trim_end().to_owned(),
            body[pos + "\n## Updates\n\n".len()..].trim_end().to_owned(),
        ),
        None => (body.to_owned(), String::new()),
    }
}

fn checklist(front: &Mapping) -> Vec<Value> {
    match front.get("checklist") {
        Some(Value::List(items)) => items.clone(),
        _ => Vec::new(),
    }
}

fn edit_agenda(text: &str, (op, i): Edit, tok: &str) -> String {
    let doc = Document::parse(text, "a.md").unwrap();
    let mut front = doc.front_matter.clone();
    let (mut main, mut updates) = split_updates(doc.body_trimmed());
    let mut list = checklist(&front);
    match op % 6 {
        0 => {
            let stamp = format!("2026-03-{:02} {:02}:{:02}", 16 + i % 4, i % 24, i % 60);
            if !updates.is_empty() {
                updates.push('\n');
            }
            updates.push_str(&format!("- **{stamp}**: {tok}"));
        }
        1 if i % 5 == 4 && !list.is_empty() => {
            // A hand edit repeating an id.
            let mut entry = list[0].clone();
            if let Value::Map(m) = &mut entry {
                m.insert("text", tok);
            }
            list.push(entry);
        }
        1 => {
            let id = list
                .iter()
                .filter_map(|e| match e {
                    Value::Map(m) => match m.get("id") {
                        Some(Value::Int(i)) => Some(*i),
                        _ => None,
                    },
                    _ => None,
                })
                .max()
                .unwrap_or(0)
                + 1;
            let mut entry = Mapping::new();
            entry.insert("completed", false);
            entry.insert("id", Value::Int(id));
            entry.insert("text", tok);
            list.push(Value::Map(entry));
        }
        2 => {
            let key = ["closing_comment", "custom"][i % 2];
            front.insert(key, tok);
        }
        3 => {
            let mut lines: Vec<String> = main.lines().map(str::to_owned).collect();
            if i % 2 == 0 || lines.is_empty() {
                lines.insert(i % (lines.len() + 1), tok.to_owned());
            } else {
                let n = lines.len();
                lines[i % n] = tok.to_owned();
            }
            main = lines.join("\n");
        }
        4 => {
            if !list.is_empty() {
                let n = list.len();
                if let Value::Map(m) = &mut list[i % n] {
                    m.insert("text", tok);
                }
            }
        }
        _ => {
            if i % 2 == 0 && !list.is_empty() {
                let n = list.len();
                list.remove(i % n);
            } else {
                let mut entries: Vec<&str> = updates.lines().collect();
                if !entries.is_empty() {
                    let n = entries.len();
                    entries.remove(i % n);
                }
                updates = entries.join("\n");
            }
        }
    }
    if list.is_empty() {
        front.remove("checklist");
    } else {
        front.insert("checklist", Value::List(list));
    }
    let body = if updates.is_empty() {
        main
    } else {
        format!("{main}\n\n## Updates\n\n{updates}")
            .trim()
            .to_owned()
    };
    Document::render_with_body(&front, &body, true)
}

fn edit_memory(text: &str, (op, i): Edit, tok: &str) -> String {
    let doc = Document::parse(text, "m.md").unwrap();
    let mut front = doc.front_matter.clone();
    let mut body = doc.raw_body.clone();
    match op % 4 {
        0 => body = format!("\n{tok}"),
        1 => body = format!("\n{}\n\nUpdate ({i}):\n{tok}", body),
        2 => front.insert(["topic", "name"][i % 2], tok),
        _ => body = body.replacen("Kyoto", tok, 1),
    }
    format!(
        "---\n{}\n---\n{body}",
        elroy_markdown::emit_yaml(&front, true)
    )
}

fn edit_feature(text: &str, (op, i): Edit, tok: &str) -> String {
    let doc = Document::parse(text, "f.md").unwrap();
    let mut front = doc.front_matter.clone();
    let mut body = doc.raw_body.clone();
    let mut aliases = match front.get("aliases") {
        Some(Value::List(a)) => a.clone(),
        _ => Vec::new(),
    };
    match op % 6 {
        0 => aliases.push(Value::String(tok.to_owned())),
        1 => body = format!("{}\n\n- Edited at: {tok}\n", body.trim_end()),
        2 => body = body.replacen("## Summary\n", &format!("## Summary\n{tok}\n"), 1),
        3 => front.insert("status", tok),
        4 => match i % 3 {
            0 => body = body.replacen("Markdown", tok, 1),
            1 => body = format!("{}\n\n## Notes\n{tok}\n", body.trim_end()),
            // A hand edit repeating a heading.
            _ => body = format!("{}\n\n## Summary\n{tok}\n", body.trim_end()),
        },
        _ => {
            if !aliases.is_empty() {
                let n = aliases.len();
                aliases.remove(i % n);
            }
        }
    }
    front.insert("aliases", Value::List(aliases));
    format!(
        "---\n{}\n---\n{body}",
        elroy_markdown::emit_yaml(&front, false)
    )
}

fn edit_lines(text: &str, (op, i): Edit, tok: &str, bullets: bool) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let n = lines.len();
    let entry = if bullets {
        format!("- {tok}")
    } else {
        tok.to_owned()
    };
    match op % 4 {
        0 => lines.push(entry),
        1 if n > 0 => lines[i % n] = entry,
        2 if n > 0 => {
            lines.remove(i % n);
        }
        _ => lines.insert(i % (n + 1), tok.to_owned()),
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// (path, base) of each kind.
fn bases() -> Vec<(&'static str, &'static str)> {
    vec![
        (super::BUDGET, super::BUDGET_BASE),
        (super::RENT, super::RENT_BASE),
        (super::KYOTO, super::KYOTO_BASE),
        (super::EXPORT, super::EXPORT_BASE),
        ("MEMORY.md", super::NOTES_BASE),
        ("SOUL.md", "# Soul\n\nBe kind.\nBe brief.\n"),
    ]
}

fn apply(path: &str, base: &str, edits: &[Edit], side: char) -> String {
    let mut text = base.to_owned();
    for (n, edit) in edits.iter().enumerate() {
        let tok = token(side, n);
        text = match FileKind::of(path) {
            FileKind::Agenda => edit_agenda(&text, *edit, &tok),
            FileKind::Memory => edit_memory(&text, *edit, &tok),
            FileKind::FeatureRequest => edit_feature(&text, *edit, &tok),
            FileKind::Notes => edit_lines(&text, *edit, &tok, true),
            FileKind::Other => edit_lines(&text, *edit, &tok, false),
        };
    }
    text
}

fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("zq") {
        let after = &rest[start..];
        match after[2..].find("qz") {
            Some(end) => {
                out.push(after[..end + 4].to_owned());
                rest = &after[end + 4..];
            }
            None => break,
        }
    }
    out
}

/// `deleted`: 1 ours deleted the file, 2 theirs did, 3 the base lacks it (both created it).
fn check(kind: usize, ours_edits: &[Edit], theirs_edits: &[Edit], deleted: u8, later: bool) {
    let (path, base) = bases()[kind];
    let ours = apply(path, base, ours_edits, 'o');
    let theirs = apply(path, base, theirs_edits, 't');
    let ours = (deleted != 1).then_some(ours);
    let theirs = (deleted != 2).then_some(theirs);
    let (to, tt) = if later { (100, 200) } else { (200, 100) };
    let out = merge_file(&MergeInput::new(
        path,
        (deleted != 3).then_some(base.as_bytes()),
        super::side(ours.as_deref(), to, "laptop"),
        super::side(theirs.as_deref(), tt, "desktop"),
    ));
    let merged: Option<String> = match out.writes.iter().find(|(p, _)| p == path) {
        Some((_, content)) => content
            .as_ref()
            .map(|c| String::from_utf8(c.clone()).unwrap()),
        None => ours.clone(),
    };
    let mut everything = merged.clone().unwrap_or_default();
    for (p, content) in &out.writes {
        let text = String::from_utf8_lossy(content.as_deref().unwrap_or_default()).into_owned();
        assert!(!text.contains("<<<<<<<"), "{p} holds conflict markers");
        if p != path {
            everything.push_str(&text);
        }
    }
    for entry in &out.report {
        if let ReportEntry::KeyConflict { kept, other, .. } = entry {
            everything.push_str(kept);
            everything.push_str(other);
        }
    }
    for text in ours.iter().chain(theirs.iter()) {
        for tok in tokens(text) {
            assert!(
                everything.contains(&tok),
                "{tok} lost merging {path}\n--- ours:\n{ours:?}\n--- theirs:\n{theirs:?}\n--- outcome:\n{out:#?}"
            );
        }
    }
    if let Some(merged) = merged
        && !matches!(FileKind::of(path), FileKind::Notes | FileKind::Other)
    {
        Document::parse(&merged, path).unwrap();
    }
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec((0u8..6, 0usize..12), 0..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn every_text_either_side_wrote_survives_the_merge(
        kind in 0usize..6,
        ours in edits(),
        theirs in edits(),
        deleted in prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8)],
        later in any::<bool>(),
    ) {
        check(kind, &ours, &theirs, deleted, later);
    }
}
