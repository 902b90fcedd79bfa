//! Reading `agenda/`: listing its files with their stat signatures, and parsing the files whose
//! signature changed. The index that remembers what each file said is [`crate::DbIndex`]; the
//! files stay the source of truth.

use std::collections::HashMap;
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

/// The stat signature of a file version: a file whose signature is unchanged is not read again.
///
/// Size, modification time (nanoseconds), inode and status-change time (nanoseconds): a `git
/// checkout` or an editor that renames a new file over the old one changes the inode; an edit in
/// place changes the mtime and the ctime, and the ctime also when the mtime is set back (`touch
/// -d`, `cp -p`) or the size stays the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub size: i64,
    pub mtime_ns: i64,
    pub ino: i64,
    pub ctime_ns: i64,
}

/// A stamp younger than this (by the wall clock) is "racy", as in git: the file may change again
/// within the file system's timestamp granularity without a visible change, so its row is stored
/// without a stamp and the file is read again at the next scan.
const RACY_NS: i64 = 2_000_000_000;

impl Stamp {
    /// The signature of `meta`.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
            Stamp {
                size: i64::try_from(meta.size()).unwrap_or(i64::MAX),
                mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
                ino: meta.ino() as i64,
                ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
            Stamp {
                size: i64::try_from(meta.len()).unwrap_or(i64::MAX),
                mtime_ns,
                ino: 0,
                ctime_ns: mtime_ns,
            }
        }
    }

    /// Whether the file was modified within [`RACY_NS`] of `now_ns` (or claims a future time).
    pub(crate) fn is_racy(&self, now_ns: i64) -> bool {
        now_ns.saturating_sub(self.mtime_ns) < RACY_NS
    }
}

/// The wall clock in nanoseconds since the epoch (file times are wall-clock times, whatever
/// `ELROY_NOW` says).
pub(crate) fn wall_clock_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The listing of `agenda/`.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// `*.md` regular files (symlinks followed) with their signatures, by file name.
    pub files: Vec<(String, Stamp)>,
    /// Lower-cased entry names of any kind with their count, for the unique-path rule (names are
    /// compared ignoring case, `formats.md` §2.3).
    pub names_lower: HashMap<String, u32>,
}

fn is_agenda_file(name: &str) -> bool {
    name.ends_with(".md") && !name.starts_with('.')
}

/// Lists `dir`: one `readdir` and one `stat` per `*.md` file, no file is opened. A missing
/// directory lists as empty.
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
        *listing.names_lower.entry(name.to_lowercase()).or_default() += 1;
        if !is_agenda_file(name) {
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
        if meta.is_file() {
            listing.files.push((name.to_owned(), Stamp::of(&meta)));
        }
    }
    // New files get their ids in file-name order.
    listing.files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(listing)
}

/// Reads and parses one file into an [`Item`].
///
/// # Errors
/// The read or front-matter error, in plain words with the display path.
pub(crate) fn load_item(path: &Path, stem: &str, file: &str) -> Result<Item, String> {
    read_text(path, file)
        .and_then(|text| Document::parse(&text, file))
        .map_err(|e| e.to_string())
        .and_then(|doc| Item::from_document(stem.to_owned(), file.to_owned(), doc))
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
