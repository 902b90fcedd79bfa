//! Reading large exports with bounded memory: a JSON array read one element at a time (serde's
//! `SeqAccess`, so a ChatGPT `conversations.json` of hundreds of MB never sits in memory whole),
//! byte and line counts for progress and problem reports, and the `conversations.json` inside an
//! export's zip.

use std::cell::Cell;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::Value;

/// Bytes and lines read so far (shared with the reader that counts them).
#[derive(Debug, Default)]
pub(crate) struct Position {
    bytes: Cell<u64>,
    lines: Cell<u64>,
}

impl Position {
    /// Bytes read.
    pub fn bytes(&self) -> u64 {
        self.bytes.get()
    }

    /// The current line, 1-based.
    pub fn line(&self) -> u64 {
        self.lines.get() + 1
    }
}

/// A reader that counts what passes through it.
struct Counting<R> {
    inner: R,
    position: Rc<Position>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let read = &buf[..n];
        self.position
            .bytes
            .set(self.position.bytes.get() + n as u64);
        let newlines = read.iter().filter(|b| **b == b'\n').count() as u64;
        if newlines > 0 {
            self.position
                .lines
                .set(self.position.lines.get() + newlines);
        }
        Ok(n)
    }
}

/// Why an array could not be read to its end.
#[derive(Debug)]
pub(crate) struct StreamError {
    /// The 1-based line of the error.
    pub line: u64,
    /// What serde_json said (`EOF while parsing an object at line 1 column 2049`).
    pub message: String,
    /// How many elements were read whole before it.
    pub elements: usize,
    /// Whether the input is not an array at all.
    pub not_an_array: bool,
}

struct Each<'f, F> {
    each: &'f mut F,
    count: &'f mut usize,
}

impl<'de, F: FnMut(Value) -> bool> Visitor<'de> for Each<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of conversations")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(element) = seq.next_element::<Value>()? {
            *self.count += 1;
            if !(self.each)(element) {
                break;
            }
        }
        Ok(())
    }
}

/// Reads the JSON array of `reader` one element at a time, calling `each` with every element
/// until it returns `false`. `position` follows the bytes and lines read.
///
/// # Errors
/// [`StreamError`] when the input is not an array or breaks off (elements read before the break
/// were given to `each`).
pub(crate) fn each_element(
    reader: impl Read,
    position: &Rc<Position>,
    mut each: impl FnMut(Value) -> bool,
) -> Result<(), StreamError> {
    let counting = Counting {
        inner: BufReader::with_capacity(1 << 16, reader),
        position: Rc::clone(position),
    };
    let mut de = serde_json::Deserializer::from_reader(counting);
    let mut count = 0;
    let result = (&mut de).deserialize_seq(Each {
        each: &mut each,
        count: &mut count,
    });
    let result = result.and_then(|()| de.end());
    result.map_err(|e| StreamError {
        line: if e.line() > 0 {
            e.line() as u64
        } else {
            position.line()
        },
        message: e.to_string(),
        elements: count,
        not_an_array: count == 0 && e.classify() == serde_json::error::Category::Data,
    })
}

/// Why an export file could not be opened; the text is the problem's reason.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    /// The file cannot be opened.
    #[error("cannot open it: {0}")]
    Open(#[source] std::io::Error),
    /// It starts like a zip but is not a readable one.
    #[error("not a readable zip: {0}")]
    Zip(#[source] zip::result::ZipError),
    /// The zip has no entry of this name.
    #[error("the zip holds no {0}")]
    NoEntry(String),
    /// The entry (its path in the zip) cannot be read.
    #[error("{name} in the zip: {source}")]
    Entry {
        /// The entry's path.
        name: String,
        /// The zip reader's error.
        #[source]
        source: zip::result::ZipError,
    },
}

/// Opens `path` and gives `read` its content and size in bytes: a zip (by its magic bytes)
/// gives its entry whose file name is `entry` (the shortest path when several are; the size
/// uncompressed), anything else is read as is.
///
/// # Errors
/// [`ExportError`] when the file cannot be read, the zip is damaged or holds no `entry`.
pub(crate) fn with_export<T>(
    path: &Path,
    entry: &str,
    read: impl FnOnce(&mut dyn Read, u64) -> T,
) -> Result<T, ExportError> {
    let mut file = File::open(path).map_err(ExportError::Open)?;
    let mut magic = [0u8; 4];
    let is_zip = file.read_exact(&mut magic).is_ok() && magic == *b"PK\x03\x04";
    let mut file = File::open(path).map_err(ExportError::Open)?;
    if !is_zip {
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        return Ok(read(&mut file, size));
    }
    let mut archive = zip::ZipArchive::new(file).map_err(ExportError::Zip)?;
    let wanted = archive
        .file_names()
        .filter_map(Result::ok)
        .filter(|n| n.rsplit('/').next() == Some(entry))
        .min_by_key(|n| n.len())
        .map(|n| n.into_owned())
        .ok_or_else(|| ExportError::NoEntry(entry.to_owned()))?;
    let mut zipped = archive
        .by_name(&wanted)
        .map_err(|source| ExportError::Entry {
            name: wanted.clone(),
            source,
        })?;
    let size = zipped.size();
    Ok(read(&mut zipped, size))
}
