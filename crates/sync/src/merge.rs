//! Three-way merge of one store file (issue 17, "Merging store files").
//!
//! Input: the merge base and both sides of one path (each side `None` when the file does not exist
//! there), with the commit time and host name of each side's change. Output: the files to write (the
//! merged file, a sibling, a renamed memory copy) and report entries. Pure: no IO, no git.

use jiff::Timestamp;

/// What a path relative to the home holds, which decides how it merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `agenda/*.md` of any user home: agenda items and due items (formats.md §4).
    Agenda,
    /// `memories/*.md` and `memories/archive/*.md` (formats.md §6).
    Memory,
    /// `feature-requests/*.md` (formats.md §5).
    FeatureRequest,
    /// `MEMORY.md` or `USER.md` of a user home (formats.md §7).
    Notes,
    /// Anything else git tracks in the home: merged as text, a sibling on conflict.
    Other,
}

impl FileKind {
    /// Classifies `rel_path` (relative to the home, `/`-separated), for the DEFAULT user home and for
    /// `users/<token>/`.
    pub fn of(rel_path: &str) -> FileKind {
        let rest = match rel_path.strip_prefix("users/") {
            Some(rest) => match rest.split_once('/') {
                Some((_token, rest)) => rest,
                None => return FileKind::Other,
            },
            None => rel_path,
        };
        let is_md = rest.ends_with(".md");
        if let Some(file) = rest.strip_prefix("agenda/") {
            if is_md && !file.contains('/') {
                return FileKind::Agenda;
            }
        } else if let Some(file) = rest.strip_prefix("memories/") {
            let file = file.strip_prefix("archive/").unwrap_or(file);
            if is_md && !file.contains('/') {
                return FileKind::Memory;
            }
        } else if let Some(file) = rest.strip_prefix("feature-requests/") {
            if is_md && !file.contains('/') {
                return FileKind::FeatureRequest;
            }
        } else if rest == "MEMORY.md" || rest == "USER.md" {
            return FileKind::Notes;
        }
        FileKind::Other
    }
}

/// One side of a merge: the file's bytes on that side (`None`: absent), when that side last changed it,
/// and the machine that side comes from.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The file's content on this side, `None` when the file does not exist there.
    pub bytes: Option<&'a [u8]>,
    /// Commit time of this side's latest change to the file (decides key-by-key conflicts).
    pub time: Timestamp,
    /// Host name of the machine this side comes from (names memory copies, `NAME (from HOST)`).
    pub host: &'a str,
}

/// The three versions of one path.
#[derive(Debug, Clone, Copy)]
pub struct MergeInput<'a> {
    /// Path relative to the home, `/`-separated.
    pub path: &'a str,
    /// The merge base's content, `None` when the file did not exist there.
    pub base: Option<&'a [u8]>,
    /// This machine's side.
    pub ours: Side<'a>,
    /// The remote's side.
    pub theirs: Side<'a>,
}

/// One entry of the sync report about a merged file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportEntry {
    /// Both sides changed front-matter `key`; the later change (`kept`) won, `other` is the value lost
    /// from the file (kept here, in the report).
    KeyConflict {
        /// The merged file.
        path: String,
        /// The front-matter key.
        key: String,
        /// The value now in the file (YAML text).
        kept: String,
        /// The other side's value (YAML text).
        other: String,
    },
    /// What could not be merged went to `sibling`, next to `path`.
    Sibling {
        /// The merged file.
        path: String,
        /// The sibling file holding the other side's content.
        sibling: String,
    },
    /// Both sides changed a memory's text: the other text became the new memory `new_path`.
    MemoryCopy {
        /// The merged memory file.
        path: String,
        /// The new memory file (no `id` yet: the sync assigns one).
        new_path: String,
        /// Its name, `NAME (from HOST)`.
        name: String,
    },
    /// Deleted on one side, edited on the other: the edit was kept.
    EditKeptOverDelete {
        /// The file kept.
        path: String,
    },
    /// Merged from changes on both sides without conflict.
    Merged {
        /// The merged file.
        path: String,
    },
}

/// The result of merging one path: files to write (relative path, `None` = delete) and report entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeOutcome {
    /// Files to write or delete, relative to the home. Always includes `input.path` when it changes.
    pub writes: Vec<(String, Option<Vec<u8>>)>,
    /// What the sync report says about this path.
    pub report: Vec<ReportEntry>,
}

/// Merges one path three ways.
///
/// When only one side changed the file (or both made the same change), that side wins as in git.
/// Otherwise the rules of the file's [`FileKind`] apply. Never produces conflict markers.
pub fn merge_file(input: &MergeInput<'_>) -> MergeOutcome {
    let (base, ours, theirs) = (input.base, input.ours.bytes, input.theirs.bytes);
    if ours == theirs || theirs == base {
        return MergeOutcome::default();
    }
    if ours == base {
        return MergeOutcome {
            writes: vec![(input.path.to_owned(), theirs.map(<[u8]>::to_vec))],
            report: Vec::new(),
        };
    }
    // Changed on both sides, differently.
    match (ours, theirs) {
        (None, Some(theirs)) => MergeOutcome {
            writes: vec![(input.path.to_owned(), Some(theirs.to_vec()))],
            report: vec![ReportEntry::EditKeptOverDelete {
                path: input.path.to_owned(),
            }],
        },
        (Some(_), None) => MergeOutcome {
            writes: Vec::new(),
            report: vec![ReportEntry::EditKeptOverDelete {
                path: input.path.to_owned(),
            }],
        },
        (Some(_), Some(theirs)) => {
            let sibling = sibling_path(input.path, input.theirs.host);
            MergeOutcome {
                writes: vec![(sibling.clone(), Some(theirs.to_vec()))],
                report: vec![ReportEntry::Sibling {
                    path: input.path.to_owned(),
                    sibling,
                }],
            }
        }
        (None, None) => MergeOutcome::default(),
    }
}

/// The sibling of `path` that holds the other side's content: `<stem>.sync-conflict-<host>.md.txt`
/// style names that no store reads (stores read `*.md` only) and `elroy doctor` lists
/// (`*.sync-conflict-*`).
pub fn sibling_path(path: &str, host: &str) -> String {
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{path}.sync-conflict-{host}")
}
