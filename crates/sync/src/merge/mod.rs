//! Three-way merge of one store file.
//!
//! Input: the merge base and both sides of one path (each side `None` when the file does not exist
//! there), with the commit time and host name of each side's change. Output: the files to write (the
//! merged file, a sibling, a renamed memory copy) and report entries. Pure: no IO, no git.
//!
//! One module per file kind (`agenda`, `memory`, `feature`, `notes`); `text` is the three-way
//! line merge (diff3 over `similar`'s line matching) they share, `keys` the key-by-key
//! front-matter merge.

use elroy_markdown::{Document, Mapping, Value, emit_yaml};
use jiff::Timestamp;

use keys::KeyClash;

mod agenda;
mod feature;
mod keys;
mod memory;
mod notes;
#[cfg(test)]
mod tests;
mod text;

/// What a path relative to the home holds, which decides how it merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `agenda/*.md` of any user home: agenda items and due items (`docs/formats.md#agenda-items`).
    Agenda,
    /// `memories/*.md` and `memories/archive/*.md` (`docs/formats.md#memories`).
    Memory,
    /// `feature-requests/*.md` (`docs/formats.md#feature-requests`).
    FeatureRequest,
    /// `MEMORY.md` or `USER.md` of a user home (`docs/formats.md#notes-and-bootstrap-files`).
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

/// The three versions of one path, and what the merge needs to name new files.
///
/// Build it with [`MergeInput::new`] and the `with_*` methods, so that fields added later keep
/// callers compiling.
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
    /// Paths (relative to the home, `/`-separated) a new file must not take: every path in our
    /// tree and theirs, plus every path earlier merges of the same sync wrote. Compared ignoring
    /// case (`docs/formats.md#unique-paths`, D12). New files are sibling files and memory copies;
    /// `path` itself and the files of this outcome never count as free.
    pub taken: &'a [String],
    /// For [`FileKind::Memory`]: the memory's name as this machine's index knows it (`state.db`);
    /// names the copy `NAME (from HOST)`. `None`: the front-matter `name` key, else the stem with
    /// `_` read as spaces (Elroy's rule, `docs/formats.md#memory-index-sync`).
    pub memory_name: Option<&'a str>,
}

impl<'a> MergeInput<'a> {
    /// The input for `path` with no taken paths and no memory name.
    pub fn new(
        path: &'a str,
        base: Option<&'a [u8]>,
        ours: Side<'a>,
        theirs: Side<'a>,
    ) -> MergeInput<'a> {
        MergeInput {
            path,
            base,
            ours,
            theirs,
            taken: &[],
            memory_name: None,
        }
    }

    /// Sets [`MergeInput::taken`].
    pub fn with_taken(mut self, taken: &'a [String]) -> MergeInput<'a> {
        self.taken = taken;
        self
    }

    /// Sets [`MergeInput::memory_name`].
    pub fn with_memory_name(mut self, name: Option<&'a str>) -> MergeInput<'a> {
        self.memory_name = name;
        self
    }
}

/// One entry of the sync report about a merged file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportEntry {
    /// Both sides changed front-matter `key`; the later change (`kept`) won, `other` is the value lost
    /// from the file (kept here, in the report).
    KeyConflict {
        /// The merged file.
        path: String,
        /// The front-matter key; `checklist[ID].KEY` for a key of the checklist entry with id `ID`.
        key: String,
        /// The value now in the file (YAML text as elroy emits it; empty: the key is absent).
        kept: String,
        /// The other side's value (YAML text; empty: the key was absent there).
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
    /// Renamed on one side and changed on the other: one item at the new path, with the change.
    Renamed {
        /// The new path (the file now).
        path: String,
        /// The old path (gone).
        from: String,
    },
    /// Two different items of the same name (or of names equal ignoring case and Unicode
    /// normalisation) made on both sides: both stay active, one renamed `NAME (from MACHINE)`.
    Twin {
        /// The item that kept its name.
        path: String,
        /// The renamed one's file.
        new_path: String,
        /// Its new name.
        name: String,
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
/// Deleted on one side and edited on the other: the edit is kept ([`ReportEntry::EditKeptOverDelete`]).
/// Otherwise the rules of the file's [`FileKind`] apply:
///
/// - [`FileKind::Agenda`]: front-matter keys key by key (both changed one key: the later
///   [`Side::time`] wins, ours on a tie, [`ReportEntry::KeyConflict`]); checklist entries by id,
///   position and text; the main text as lines; the `## Updates` section as the union of both
///   sides' updates in time order. Keys sorted, emitted as elroy writes them.
/// - [`FileKind::Memory`]: front-matter keys key by key; both changed the text: ours stays, theirs
///   becomes a new memory `NAME (from HOST)` with a `name` key and no `id`
///   ([`ReportEntry::MemoryCopy`]).
/// - [`FileKind::FeatureRequest`]: front-matter keys key by key in the file's order (`aliases` as a
///   set, `updated_at` the later instant), sections (`## Summary`, …) as lines, the entries of
///   `## Supporting Context` (blocks separated by blank lines) as a set.
/// - [`FileKind::Notes`]: lines as text; where both sides changed the same region, lines as a set
///   (added on either side: kept once; removed on one side and unchanged on the other: removed).
/// - [`FileKind::Other`]: lines as text.
///
/// What these rules cannot merge (lines both sides changed differently in an agenda item's text, a
/// feature request's section or another file; a file whose front matter does not parse or that is
/// not UTF-8) keeps our version in place and puts theirs, whole, in a sibling file
/// ([`sibling_path`], made unique against [`MergeInput::taken`]): [`ReportEntry::Sibling`]. When
/// both sides changed the file and nothing clashed, the report says [`ReportEntry::Merged`].
///
/// Never produces conflict markers (it adds none; text either side wrote is kept as it is). Pure:
/// no IO.
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
    let (ours, theirs) = match (ours, theirs) {
        (None, Some(theirs)) => {
            return MergeOutcome {
                writes: vec![(input.path.to_owned(), Some(theirs.to_vec()))],
                report: vec![ReportEntry::EditKeptOverDelete {
                    path: input.path.to_owned(),
                }],
            };
        }
        (Some(_), None) => {
            return MergeOutcome {
                writes: Vec::new(),
                report: vec![ReportEntry::EditKeptOverDelete {
                    path: input.path.to_owned(),
                }],
            };
        }
        (None, None) => return MergeOutcome::default(),
        (Some(ours), Some(theirs)) => (ours, theirs),
    };
    let ctx = Ctx::new(input);
    let texts = (base.map(decode), decode(ours), decode(theirs));
    let merged = match texts {
        (Some(None), _, _) | (_, None, _) | (_, _, None) => None,
        (base, Some(ours), Some(theirs)) => {
            let base = base.flatten();
            match FileKind::of(input.path) {
                FileKind::Agenda => agenda::merge(&ctx, base, ours, theirs),
                FileKind::Memory => memory::merge(&ctx, base, ours, theirs),
                FileKind::FeatureRequest => feature::merge(&ctx, base, ours, theirs),
                FileKind::Notes => Some(notes::merge(base.unwrap_or_default(), ours, theirs)),
                FileKind::Other => Some(
                    match text::merge_text(base.unwrap_or_default(), ours, theirs) {
                        Some(content) => KindMerge::clean(content),
                        None => KindMerge::clean(ours.to_owned()).with_sibling(),
                    },
                ),
            }
        }
    };
    let merged = merged.unwrap_or_else(|| KindMerge {
        content: None,
        sibling: true,
        clashes: Vec::new(),
        new_files: Vec::new(),
    });
    ctx.outcome(merged, ours, theirs)
}

/// Text of a file: UTF-8 with a leading byte-order mark skipped; `None` when not UTF-8.
fn decode(bytes: &[u8]) -> Option<&str> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).ok()
}

/// What a file kind's merge produced.
#[derive(Debug, Default)]
struct KindMerge {
    /// The merged file (`None`: ours, unchanged).
    content: Option<String>,
    /// Whether theirs goes, whole, to a sibling file.
    sibling: bool,
    /// Keys both sides changed differently.
    clashes: Vec<KeyClash>,
    /// New memory files: (path, content, name).
    new_files: Vec<(String, String, String)>,
}

impl KindMerge {
    fn clean(content: String) -> KindMerge {
        KindMerge {
            content: Some(content),
            ..KindMerge::default()
        }
    }

    fn with_sibling(mut self) -> KindMerge {
        self.sibling = true;
        self
    }
}

/// What every kind's merge needs besides the texts.
struct Ctx<'i> {
    input: &'i MergeInput<'i>,
    /// Whether theirs' change is the later one (ties: ours).
    theirs_later: bool,
    /// Paths given to new files by this merge (lower-cased).
    claimed: std::cell::RefCell<Vec<String>>,
}

impl<'i> Ctx<'i> {
    fn new(input: &'i MergeInput<'i>) -> Ctx<'i> {
        Ctx {
            input,
            theirs_later: input.theirs.time > input.ours.time,
            claimed: std::cell::RefCell::new(vec![input.path.to_lowercase()]),
        }
    }

    /// Parses a side's text as a markdown file; `None` when its front matter is invalid.
    fn parse(&self, text: &str) -> Option<Document> {
        Document::parse(text, self.input.path).ok()
    }

    /// Parses the base (an empty document when the file did not exist there).
    fn parse_base(&self, text: Option<&str>) -> Option<Document> {
        self.parse(text.unwrap_or_default())
    }

    /// Whether `path` is free: not in [`MergeInput::taken`], not given out by this merge.
    fn is_free(&self, path: &str) -> bool {
        let lower = path.to_lowercase();
        !self.claimed.borrow().contains(&lower)
            && !self.input.taken.iter().any(|t| t.to_lowercase() == lower)
    }

    /// Claims `path` for a new file.
    fn claim(&self, path: &str) {
        self.claimed.borrow_mut().push(path.to_lowercase());
    }

    /// A free sibling path for theirs' version: [`sibling_path`], then `-2`, `-3`, … appended.
    fn sibling(&self) -> String {
        let first = sibling_path(self.input.path, self.input.theirs.host);
        let mut candidate = first.clone();
        let mut n = 2u64;
        while !self.is_free(&candidate) {
            candidate = format!("{first}-{n}");
            n += 1;
        }
        self.claim(&candidate);
        candidate
    }

    fn outcome(&self, merged: KindMerge, ours: &[u8], theirs: &[u8]) -> MergeOutcome {
        let path = self.input.path.to_owned();
        let mut out = MergeOutcome::default();
        if let Some(content) = merged.content
            && content.as_bytes() != ours
        {
            out.writes.push((path.clone(), Some(content.into_bytes())));
        }
        for clash in merged.clashes {
            out.report.push(ReportEntry::KeyConflict {
                path: path.clone(),
                key: clash.key,
                kept: keys::yaml_text(clash.kept.as_ref()),
                other: keys::yaml_text(clash.other.as_ref()),
            });
        }
        for (new_path, content, name) in merged.new_files {
            out.writes
                .push((new_path.clone(), Some(content.into_bytes())));
            out.report.push(ReportEntry::MemoryCopy {
                path: path.clone(),
                new_path,
                name,
            });
        }
        if merged.sibling {
            let sibling = self.sibling();
            out.writes.push((sibling.clone(), Some(theirs.to_vec())));
            out.report.push(ReportEntry::Sibling { path, sibling });
        } else if out.report.is_empty() {
            out.report.push(ReportEntry::Merged { path });
        }
        out
    }
}

/// Renders a merged markdown file: the front matter `front` (emitted as elroy writes it, keys
/// sorted when `sort_keys`; byte for byte as read when it equals the front matter of one of
/// `sources`) and `raw_body` after the closing `---` line.
fn render(front: &Mapping, sort_keys: bool, raw_body: &str, sources: &[&Document]) -> String {
    let same = |doc: &&&Document| {
        doc.has_front_matter
            && if sort_keys {
                sorted(&doc.front_matter) == sorted(front)
            } else {
                doc.front_matter == *front
            }
    };
    if let Some(doc) = sources.iter().find(same) {
        return format!("---\n{}---\n{raw_body}", doc.raw_yaml);
    }
    if front.is_empty() && !sources.iter().any(|d| d.has_front_matter) {
        return raw_body.to_owned();
    }
    format!("---\n{}\n---\n{raw_body}", emit_yaml(front, sort_keys))
}

/// The entries of a mapping sorted by key, for order-insensitive comparison.
fn sorted(map: &Mapping) -> Vec<(&str, &Value)> {
    let mut entries: Vec<(&str, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// The sibling of `path` that holds the other side's content: `<path>.sync-conflict-<host>`, a name
/// no store reads (stores read `*.md` only) and `elroy doctor` lists (`*.sync-conflict-*`). `host`
/// is reduced to ASCII letters, digits and `-` (others become `_`). [`merge_file`] appends `-2`,
/// `-3`, … when that path is taken ([`MergeInput::taken`]).
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
