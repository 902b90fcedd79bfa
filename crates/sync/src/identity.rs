//! Identity across machines: after a merge every memory id is unique per user
//! again (`docs/formats.md#memory-ids`).
//!
//! Two machines number new memories independently, so after a merge two files of one user home can
//! carry one `id`, and a memory copy made by the merge (`NAME (from HOST)`) carries none. The rule,
//! the same on every machine:
//!
//! - among the files sharing an id, the one that had that id **at that path in the merge base**
//!   keeps it; when none (two new memories) or several did, the file whose path sorts first (byte
//!   order) keeps it, as the memory index does for hand-made duplicates
//!   (`docs/formats.md#memory-index-sync`);
//! - every other file, and every file without an id, gets a new id: one above the largest id of
//!   that user found in the merged files and in this machine's index (so ids are never reused
//!   here), in path order.
//!
//! The rewritten files are committed as `sync: renumber`, so the other machines take the new ids
//! with the next pull and their indexes follow (see `crate::index`).

use std::collections::{BTreeMap, BTreeSet};

use git2::{ObjectType, Repository, Tree};

use elroy_markdown::{Document, Value};

use crate::SyncError;

/// One memory file that got a new id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renumbered {
    /// The file, relative to the home.
    pub path: String,
    /// Its id before (`None`: it had none, a memory copy made by the merge).
    pub old: Option<i64>,
    /// Its new id.
    pub new: i64,
}

/// The user-home prefix (`""` or `users/TOKEN/`) of a memory file path, `None` for other paths.
pub(crate) fn memory_prefix(path: &str) -> Option<String> {
    if crate::merge::FileKind::of(path) != crate::merge::FileKind::Memory {
        return None;
    }
    let at = path.find("memories/")?;
    Some(path[..at].to_owned())
}

/// The `id` of a memory file's content, if it has a readable integer one.
pub(crate) fn memory_id(bytes: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc = Document::parse(text, "memory").ok()?;
    match doc.front_matter.get("id")? {
        Value::Int(id) => Some(*id),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `bytes` with the front-matter `id` set to `id` (other keys and the body kept). `None` when the
/// front matter cannot be read (such a file is left alone, as the memory index leaves it).
pub(crate) fn with_id(bytes: &[u8], id: i64) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut doc = Document::parse(text, "memory").ok()?;
    if !doc.has_front_matter {
        let mut front_matter = elroy_markdown::Mapping::new();
        front_matter.insert("id", Value::Int(id));
        let body = text.trim_start_matches('\n');
        return Some(Document::render_with_body(&front_matter, body, true).into_bytes());
    }
    let had = doc.front_matter.contains_key("id");
    if let Some(slot) = doc.front_matter.get_mut("id") {
        *slot = Value::Int(id);
    } else {
        doc.front_matter.insert("id", Value::Int(id));
    }
    // Keys in file order when the file had its id (only the value changes); sorted when added.
    Some(doc.render(!had).into_bytes())
}

/// The memory files (`memories/*.md`, `memories/archive/*.md`) of the user home `prefix` in
/// `tree`: path → content.
pub(crate) fn memory_files(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &str,
) -> Result<BTreeMap<String, Vec<u8>>, SyncError> {
    let mut files = BTreeMap::new();
    for dir in ["memories", "memories/archive"] {
        let dir_path = format!("{prefix}{dir}");
        let sub = match tree.get_path(std::path::Path::new(&dir_path)) {
            Ok(entry) if entry.kind() == Some(ObjectType::Tree) => repo.find_tree(entry.id())?,
            Ok(_) => continue,
            Err(e) if e.code() == git2::ErrorCode::NotFound => continue,
            Err(e) => return Err(e.into()),
        };
        for entry in sub.iter() {
            if entry.kind() != Some(ObjectType::Blob) {
                continue;
            }
            let Ok(name) = entry.name() else { continue };
            if !name.ends_with(".md") || name.starts_with('.') {
                continue;
            }
            let blob = repo.find_blob(entry.id())?;
            files.insert(format!("{dir_path}/{name}"), blob.content().to_vec());
        }
    }
    Ok(files)
}

/// Decides the renumbering of one user home's memory files (see the module doc): `files` as
/// merged, `base` the merge base's files of that home, `fresh` the files the merge itself made
/// (memory copies, which get an id when they have none), `local_max` the largest id this machine's
/// index knows for that user. Returns the files to rewrite, in path order, with their new content.
pub(crate) fn plan(
    files: &BTreeMap<String, Vec<u8>>,
    base: &BTreeMap<String, Vec<u8>>,
    fresh: &BTreeSet<String>,
    local_max: i64,
) -> Vec<(Renumbered, Vec<u8>)> {
    let mut by_id: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
    let mut without: Vec<&str> = Vec::new();
    let mut max = local_max;
    for (path, bytes) in files {
        match memory_id(bytes) {
            Some(id) => {
                max = max.max(id);
                by_id.entry(id).or_default().push(path);
            }
            None => {
                // Only files the merge made (memory copies) get an id here; one a person wrote
                // without an id gets it from the memory index, as ever. A file whose front
                // matter does not parse is left for `elroy doctor`.
                if fresh.contains(path) && with_id(bytes, 0).is_some() {
                    without.push(path);
                }
            }
        }
    }
    let mut moving: BTreeSet<(&str, Option<i64>)> = BTreeSet::new();
    for (id, paths) in &by_id {
        if paths.len() < 2 {
            continue;
        }
        let in_base: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| base.get(*p).and_then(|b| memory_id(b)) == Some(*id))
            .collect();
        // Paths are in byte order (a BTreeMap's), so the first is the one that sorts first.
        let keeper = in_base.first().copied().unwrap_or(paths[0]);
        for path in paths {
            if *path != keeper {
                moving.insert((path, Some(*id)));
            }
        }
    }
    for path in without {
        moving.insert((path, None));
    }
    let mut out = Vec::new();
    for (path, old) in moving {
        max += 1;
        let Some(bytes) = files.get(path).and_then(|b| with_id(b, max)) else {
            continue;
        };
        out.push((
            Renumbered {
                path: path.to_owned(),
                old,
                new: max,
            },
            bytes,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(id: Option<i64>, text: &str) -> Vec<u8> {
        match id {
            Some(id) => format!("---\nid: {id}\n---\n\n{text}").into_bytes(),
            None => text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn the_base_item_keeps_its_id_and_new_ones_are_numbered_above_all() {
        let base = BTreeMap::from([("memories/Dog.md".to_owned(), file(Some(3), "dog"))]);
        let files = BTreeMap::from([
            ("memories/Dog.md".to_owned(), file(Some(3), "dog")),
            ("memories/Cat.md".to_owned(), file(Some(3), "cat")),
            ("memories/Owl.md".to_owned(), file(Some(7), "owl")),
            ("memories/Copy.md".to_owned(), file(None, "copy")),
        ]);
        let fresh = BTreeSet::from(["memories/Copy.md".to_owned()]);
        let plan = plan(&files, &base, &fresh, 9);
        let got: Vec<(String, Option<i64>, i64)> = plan
            .iter()
            .map(|(r, _)| (r.path.clone(), r.old, r.new))
            .collect();
        assert_eq!(
            got,
            vec![
                ("memories/Cat.md".to_owned(), Some(3), 10),
                ("memories/Copy.md".to_owned(), None, 11),
            ]
        );
        assert_eq!(memory_id(&plan[0].1), Some(10));
        assert_eq!(plan[0].1, file(Some(10), "cat"));
        assert_eq!(memory_id(&plan[1].1), Some(11));
        assert!(String::from_utf8_lossy(&plan[1].1).ends_with("copy"));
    }

    #[test]
    fn two_new_items_with_one_id_the_first_path_keeps_it() {
        let files = BTreeMap::from([
            ("memories/b.md".to_owned(), file(Some(5), "b")),
            ("memories/a.md".to_owned(), file(Some(5), "a")),
        ]);
        let plan = plan(&files, &BTreeMap::new(), &BTreeSet::new(), 0);
        assert_eq!(plan.len(), 1);
        assert_eq!(plan[0].0.path, "memories/b.md");
        assert_eq!(plan[0].0.new, 6);
    }

    #[test]
    fn other_keys_are_kept_in_order() {
        let bytes = b"---\nid: 4\nname: Trip plan\n---\n\nKyoto".to_vec();
        let out = with_id(&bytes, 12).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "---\nid: 12\nname: Trip plan\n---\n\nKyoto"
        );
    }
}
