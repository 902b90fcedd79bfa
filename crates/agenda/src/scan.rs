//! Scanning `agenda/` with an in-process cache keyed by each file's modification time, size and
//! inode: the files stay the source of truth, and an edit made by hand is seen on the next scan.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use elroy_markdown::{Document, read_text};
use jiff::Timestamp;

use crate::AgendaError;
use crate::item::Item;

/// One `*.md` file of `agenda/`.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A file whose front matter parsed.
    Item(Box<Item>),
    /// A file that could not be read or parsed. It is a candidate only through its stem, is
    /// reported by name and is never rewritten.
    Broken {
        /// File name without `.md`.
        stem: String,
        /// Display path.
        file: String,
        /// The error message (`invalid front matter in {file}: …`).
        message: String,
    },
}

impl Entry {
    /// The stem.
    pub fn stem(&self) -> &str {
        match self {
            Entry::Item(item) => &item.stem,
            Entry::Broken { stem, .. } => stem,
        }
    }

    /// The parsed item, if any.
    pub fn item(&self) -> Option<&Item> {
        match self {
            Entry::Item(item) => Some(item),
            Entry::Broken { .. } => None,
        }
    }
}

/// Cache key of a file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Signature {
    mtime_ns: i128,
    size: u64,
    inode: u64,
}

#[derive(Debug)]
struct Cached {
    signature: Signature,
    mtime: Timestamp,
    entry: Arc<Entry>,
}

/// The parse cache of one agenda directory.
#[derive(Debug, Default)]
pub(crate) struct ScanCache {
    files: BTreeMap<String, Cached>,
}

/// A scan result: the entries sorted by file name, with each file's modification time.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub entries: Vec<(Arc<Entry>, Timestamp)>,
}

fn signature(meta: &std::fs::Metadata) -> (Signature, Timestamp) {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| Timestamp::try_from(t).ok())
        .unwrap_or(Timestamp::UNIX_EPOCH);
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(meta);
    #[cfg(not(unix))]
    let inode = 0;
    (
        Signature {
            mtime_ns: mtime.as_nanosecond(),
            size: meta.len(),
            inode,
        },
        mtime,
    )
}

/// Reads and parses one file.
pub(crate) fn load_entry(path: &Path, stem: &str, file: &str) -> Entry {
    let parsed = read_text(path, file)
        .and_then(|text| Document::parse(&text, file))
        .map_err(|e| e.to_string())
        .and_then(|doc| Item::from_document(stem.to_owned(), file.to_owned(), doc));
    match parsed {
        Ok(item) => Entry::Item(Box::new(item)),
        Err(message) => Entry::Broken {
            stem: stem.to_owned(),
            file: file.to_owned(),
            message,
        },
    }
}

impl ScanCache {
    /// Lists `dir` (`*.md` regular files), re-parsing only files whose signature changed.
    pub(crate) fn scan(&mut self, dir: &Path, prefix: &str) -> Result<Snapshot, AgendaError> {
        let read = match std::fs::read_dir(dir) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.files.clear();
                return Ok(Snapshot::default());
            }
            Err(e) => {
                return Err(AgendaError::new(format!(
                    "Unable to read {}: {e}",
                    prefix.trim_end_matches('/')
                )));
            }
        };
        let mut seen: BTreeMap<String, (Signature, Timestamp)> = BTreeMap::new();
        for dirent in read.flatten() {
            let name = dirent.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.ends_with(".md") || name.starts_with('.') {
                continue;
            }
            let meta = match dirent.metadata() {
                Ok(m) if m.file_type().is_symlink() => match std::fs::metadata(dirent.path()) {
                    Ok(m) => m,
                    Err(_) => continue,
                },
                Ok(m) => m,
                Err(_) => continue,
            };
            if !meta.is_file() {
                continue;
            }
            seen.insert(name.to_owned(), signature(&meta));
        }
        self.files.retain(|name, _| seen.contains_key(name));
        let mut snapshot = Snapshot {
            entries: Vec::with_capacity(seen.len()),
        };
        for (name, (sig, mtime)) in seen {
            let fresh = self
                .files
                .get(&name)
                .is_some_and(|cached| cached.signature == sig);
            if !fresh {
                let stem = name.strip_suffix(".md").unwrap_or(&name);
                let file = format!("{prefix}{name}");
                let entry = Arc::new(load_entry(&dir.join(&name), stem, &file));
                self.files.insert(
                    name.clone(),
                    Cached {
                        signature: sig,
                        mtime,
                        entry,
                    },
                );
            }
            if let Some(cached) = self.files.get(&name) {
                snapshot
                    .entries
                    .push((Arc::clone(&cached.entry), cached.mtime));
            }
        }
        Ok(snapshot)
    }
}
