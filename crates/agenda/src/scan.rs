//! Reading `agenda/`: listing its files with their stat signatures, and parsing the files whose
//! signature changed. The index that remembers what each file said is [`crate::DbIndex`]; the
//! files stay the source of truth.

use std::path::Path;
use std::sync::Arc;

use elroy_markdown::{Document, read_text};

use crate::AgendaError;
use crate::item::{Item, ItemView};

/// One `*.md` file of `agenda/`, as the index knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A file whose front matter parsed.
    Item(Box<ItemView>),
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
    pub(crate) fn stem(&self) -> &str {
        match self {
            Entry::Item(item) => &item.stem,
            Entry::Broken { stem, .. } => stem,
        }
    }

    /// The parsed item, if any.
    pub(crate) fn item(&self) -> Option<&ItemView> {
        match self {
            Entry::Item(item) => Some(item),
            Entry::Broken { .. } => None,
        }
    }
}

/// The stat signature of a file version (elroy-markdown's, shared with the memory index).
pub(crate) use elroy_markdown::{FileStamp as Stamp, wall_clock_ns};

/// The names in `agenda/` (one `readdir`, no `stat` of regular files).
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// `*.md` entries that are regular files or symlinks, with the inode `readdir` gives
    /// (`None` for a symlink: its target is stat'ed), by file name.
    pub files: Vec<(String, Option<i64>)>,
    /// Lower-cased names of the other entries whose lower-cased name ends in `.md` (a directory
    /// `x.md`, a file `X.MD`): they take a name under the unique-path rule
    /// (`docs/formats.md#unique-paths`, names compared ignoring case) without being items.
    pub others_lower: Vec<String>,
}

fn is_agenda_file(name: &str) -> bool {
    name.ends_with(".md") && !name.starts_with('.')
}

/// Lists the names in `dir`: one `readdir`, the file types and inodes it returns, no file is
/// stat'ed or opened. A missing directory lists as empty.
///
/// # Errors
/// `Unable to read agenda: …` when the directory cannot be read.
pub(crate) fn list_dir(dir: &Path, prefix: &str) -> Result<Listing, AgendaError> {
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Listing::default()),
        Err(e) => {
            return Err(AgendaError::new(format!(
                "Unable to read {}: {e}",
                prefix.trim_end_matches('/')
            )));
        }
    };
    let mut listing = Listing::default();
    for dirent in read.flatten() {
        let name = dirent.file_name();
        let Some(name) = name.to_str() else { continue };
        let Ok(kind) = dirent.file_type() else {
            continue;
        };
        if is_agenda_file(name) && (kind.is_file() || kind.is_symlink()) {
            #[cfg(unix)]
            let ino = {
                use std::os::unix::fs::DirEntryExt;
                (!kind.is_symlink()).then(|| dirent.ino() as i64)
            };
            #[cfg(not(unix))]
            let ino = None;
            listing.files.push((name.to_owned(), ino));
        } else {
            let lower = name.to_lowercase();
            if lower.ends_with(".md") {
                listing.others_lower.push(lower);
            }
        }
    }
    // New files get their ids in file-name order.
    listing.files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    listing.others_lower.sort_unstable();
    Ok(listing)
}

/// The signature of the regular file at `path` (symlinks followed), `None` when there is no
/// such file.
pub(crate) fn stat_file(path: &Path) -> Option<Stamp> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| Stamp::of(&m))
}

/// Reads and parses one file into an [`Item`].
///
/// # Errors
/// The read or front-matter error, in plain words with the display path.
pub(crate) fn load_item(path: &Path, stem: &str, file: &str) -> Result<Item, String> {
    read_text(path, file)
        .and_then(|text| Document::parse(&text, file))
        .map_err(|e| e.to_string())
        .and_then(|doc| {
            Item::from_document(stem.to_owned(), file.to_owned(), doc).map_err(|e| e.to_string())
        })
}

/// A parsed file: its name, signature, what it says, and the md5 of its rendering (UTC).
pub(crate) struct Parsed {
    pub name: String,
    pub stamp: Stamp,
    pub entry: Entry,
    pub text_md5: String,
}

fn parse_one(dir: &Path, prefix: &str, name: &str, stamp: Stamp) -> Parsed {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let file = format!("{prefix}{name}");
    let path = dir.join(name);
    let (entry, text_md5) = match load_item(&path, stem, &file) {
        Ok(item) => {
            let md5 = crate::db_index::md5_hex(&crate::to_fact(&item, &jiff::tz::TimeZone::UTC));
            (Entry::Item(Box::new(item.view())), md5)
        }
        Err(message) => (
            Entry::Broken {
                stem: stem.to_owned(),
                file,
                message,
            },
            crate::db_index::md5_hex(""),
        ),
    };
    Parsed {
        name: name.to_owned(),
        stamp,
        entry,
        text_md5,
    }
}

/// Parses many files, on all cores when there are enough of them (a first scan of a large home).
pub(crate) fn parse_all(dir: &Path, prefix: &str, files: Vec<(String, Stamp)>) -> Vec<Parsed> {
    let parse = |chunk: &[(String, Stamp)]| -> Vec<Parsed> {
        chunk
            .iter()
            .map(|(name, stamp)| parse_one(dir, prefix, name, *stamp))
            .collect()
    };
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if files.len() < 512 || threads < 2 {
        return parse(&files);
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|c| scope.spawn(move || parse(c)))
            .collect();
        let mut out = Vec::with_capacity(files.len());
        for (handle, c) in handles.into_iter().zip(files.chunks(chunk)) {
            // A panicking parser thread (none is expected) falls back to parsing here.
            out.extend(handle.join().unwrap_or_else(|_| parse(c)));
        }
        out
    })
}

/// A scan result: the entries sorted by file name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    pub entries: Arc<Vec<Arc<Entry>>>,
}
