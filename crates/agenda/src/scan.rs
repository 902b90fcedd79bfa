//! Reading `agenda/`: parsing the files whose stat signature changed (the listing, the
//! signatures and the `*.md` rule are elroy-markdown's directory index, shared with the memory
//! store and the versioned home). The index that remembers what each file said is [`crate::DbIndex`]; the
//! files stay the source of truth.

use std::path::Path;
use std::sync::Arc;

use elroy_markdown::{Document, read_text};

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

pub(crate) use elroy_markdown::{FileStamp, wall_clock_ns};

/// Reads and parses one file into an [`Item`].
///
/// # Errors
/// [`LoadError`]: the read or front-matter error, in plain words with the display path.
pub(crate) fn load_item(path: &Path, stem: &str, file: &str) -> Result<Item, LoadError> {
    let doc = read_text(path, file).and_then(|text| Document::parse(&text, file))?;
    Ok(Item::from_document(stem.to_owned(), file.to_owned(), doc)?)
}

/// Why an agenda file could not be loaded as an item; `Display` is the file's error as listed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    /// The file could not be read or its front matter parsed.
    #[error(transparent)]
    File(#[from] elroy_markdown::MarkdownError),
    /// A front-matter value has the wrong type.
    #[error(transparent)]
    Item(#[from] crate::item::InvalidBoolean),
}

impl From<LoadError> for crate::AgendaError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::File(e) => e.into(),
            LoadError::Item(e) => e.into(),
        }
    }
}

/// A parsed file: its name, signature, what it says, and the md5 of its rendering (UTC).
pub(crate) struct Parsed {
    pub name: String,
    pub stamp: FileStamp,
    pub entry: Entry,
    pub text_md5: String,
}

fn parse_one(dir: &Path, prefix: &str, name: &str, stamp: FileStamp) -> Parsed {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let file = format!("{prefix}{name}");
    let path = dir.join(name);
    let (entry, text_md5) = match load_item(&path, stem, &file) {
        Ok(item) => {
            let md5 = crate::db_index::md5_hex(&crate::to_fact(&item, &jiff::tz::TimeZone::UTC));
            (Entry::Item(Box::new(item.view())), md5)
        }
        Err(e) => (
            Entry::Broken {
                stem: stem.to_owned(),
                file,
                message: e.to_string(),
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
pub(crate) fn parse_all(dir: &Path, prefix: &str, files: Vec<(String, FileStamp)>) -> Vec<Parsed> {
    let parse = |chunk: &[(String, FileStamp)]| -> Vec<Parsed> {
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
