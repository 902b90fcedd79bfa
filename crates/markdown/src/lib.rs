//! # elroy-markdown
//!
//! Markdown files with a YAML front-matter block, read and written the way Elroy 0.5.0 does
//! (`docs/formats.md#file-names` to `docs/formats.md#front-matter-files`, decisions D5 and D12).
//! Store-agnostic: agenda items, feature requests and memories all build on it.
//!
//! - [`Document::parse`] / [`Document::render`]: the `---\n{yaml}\n---\n\n{body}` layout
//!   (`docs/formats.md#front-matter-files`).
//! - [`Value`] / [`Mapping`]: front-matter values, key order preserved; [`emit_yaml`] writes the
//!   byte-exact YAML subset of `docs/formats.md#yaml-quoting-and-key-order` (PyYAML's block style,
//!   our quoting rule, no folding).
//! - [`sanitize_filename`] and [`unique_path`]: names to file names (`docs/formats.md#file-names`),
//!   bounded to 255 bytes;
//!   [`normalize_name`]: the NFC form every store gives names on input and lookup.
//! - [`write_atomic`]: temp file + fsync + rename (`docs/formats.md#atomic-writes`); [`HomeLock`]:
//!   the per-home lock (`docs/formats.md#the-home-lock`).
//! - [`WriteScope`]: the write journal, the paths a tool call or background work changed under a
//!   home (the versioned home commits exactly those).
//! - [`read_text`]: reads a file as UTF-8 with the BOM skipped.
//! - The directory index the stores share: [`FileStamp`] (the one stat signature, with git's
//!   racy rule), [`is_md_name`] and [`list_md_dir`] (which entries are store files; symlinks
//!   never are), [`changes_since`] (what changed since an index's last look).

mod atomic;
mod dir_index;
mod error;
mod frontmatter;
mod journal;
mod lock;
mod names;
mod stamp;
mod value;
mod yaml;

pub use atomic::{
    PAUSE_BEFORE_RENAME_ENV, PAUSED_BEFORE_RENAME, link_file, remove_file, rename_file,
    write_atomic,
};
pub use dir_index::{Changes, MdListing, changes_since, is_md_name, list_md_dir};
pub use error::MarkdownError;
pub use frontmatter::{Document, read_text};
pub use journal::{Before, Touched, WriteScope};
pub use lock::{HomeLock, LOCK_FILE_NAME, LOCK_TIMEOUT};
pub use names::{
    MAX_BASE_BYTES, MAX_FILE_NAME_BYTES, is_windows_device_name, normalize_name, sanitize_filename,
    unique_file_name, unique_path,
};
pub use stamp::{FileStamp, RACY_NS, wall_clock_ns};
pub use value::{Mapping, Value};
pub use yaml::{emit_yaml, emit_yaml_scalar_string};

// The integration tests run in the unit-test executable (docs/development.md, "Test layout").
#[cfg(test)]
extern crate self as elroy_markdown;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
