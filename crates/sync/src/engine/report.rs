//! What a sync reports: the files pulled and pushed, and one line per merge decision.

use crate::identity::Renumbered;
use crate::merge::{FileKind, ReportEntry};

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A new file.
    Added,
    /// A changed file.
    Modified,
    /// A removed file.
    Deleted,
}

/// One file a sync brought in (pulled) or sent (pushed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the home.
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
    /// The item's name: the `name` front-matter key when the file has one, else its stem with
    /// `_` read as a space.
    pub name: String,
}

impl FileChange {
    /// The store the file belongs to, for the report: `agenda`, `memories`, `feature requests`,
    /// `notes`, `user names` ([`crate::people`]), or `other`.
    pub fn store(&self) -> &'static str {
        if crate::people::token_of(&self.path).is_some() {
            return "user names";
        }
        match FileKind::of(&self.path) {
            FileKind::Agenda => "agenda",
            FileKind::Memory => "memories",
            FileKind::FeatureRequest => "feature requests",
            FileKind::Notes => "notes",
            FileKind::Other => "other",
        }
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Files changed in this home by the pull, sorted by path.
    pub pulled: Vec<FileChange>,
    /// Files the remote got from this machine, sorted by path.
    pub pushed: Vec<FileChange>,
    /// What the merge of files changed on both sides did (conflicts and where each text went).
    pub merged: Vec<ReportEntry>,
    /// Memories that got a new id.
    pub renumbered: Vec<Renumbered>,
    /// The machine the pulled changes came from (the remote head's), when anything was pulled.
    pub from: Option<String>,
    /// Whether the remote had no branch yet (the first push made it).
    pub remote_was_empty: bool,
    /// What the sync did to the repository besides syncing, one sentence each (a git lock left by
    /// a killed elroy removed, ...).
    pub notes: Vec<String>,
}

/// The report's lines about merged files.
pub fn merge_lines(entries: &[ReportEntry]) -> Vec<String> {
    entries
        .iter()
        .map(|entry| match entry {
            ReportEntry::KeyConflict {
                path,
                key,
                kept,
                other,
            } => format!(
                "{path}: both machines changed '{key}'; kept the later value {kept}, the other was {other}"
            ),
            ReportEntry::Sibling { path, sibling } => format!(
                "{path}: changed on both machines; this machine's text stays in it, the other's is in {sibling}"
            ),
            ReportEntry::MemoryCopy {
                path,
                new_path,
                name,
            } => format!(
                "{path}: both machines changed the text; the other text is now the memory '{name}' ({new_path})"
            ),
            ReportEntry::EditKeptOverDelete { path } => {
                format!("{path}: deleted on one machine, edited on the other; the edit was kept")
            }
            ReportEntry::Merged { path } => {
                format!("{path}: changes from both machines merged")
            }
            ReportEntry::Renamed { path, from } => format!(
                "{from}: renamed to {path} on one machine and changed on the other; one item, with the new name and the change"
            ),
            ReportEntry::Twin {
                path,
                new_path,
                name,
            } => format!(
                "{path}: both machines made an item of this name; the other is now '{name}' ({new_path}), and both stay active"
            ),
        })
        .collect()
}
