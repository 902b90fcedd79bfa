//! What an import did, and its rendering for the terminal.

use std::fmt;
use std::path::PathBuf;

/// One file or value the import took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// Where it came from, relative to the Elroy home (`agenda/Renew_passport.md`), or
    /// `user profile` for user names.
    pub source: String,
    /// What was recorded (name, active flag, value).
    pub detail: String,
}

/// One file or value the import left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// As [`Taken::source`].
    pub source: String,
    /// Why it was left out.
    pub reason: String,
}

/// The outcome of one `elroy import-elroy` run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// The Elroy home read.
    pub source_dir: PathBuf,
    /// Elroy's database used for names, if any.
    pub database: Option<PathBuf>,
    /// What was written into the elroy home.
    pub taken: Vec<Taken>,
    /// What was left out.
    pub skipped: Vec<Skipped>,
    /// Files and values already present exactly as an import writes them (an earlier import).
    pub unchanged: usize,
    /// Remarks that are neither (no database, nothing of a kind found).
    pub notes: Vec<String>,
}

impl ImportReport {
    /// Whether this run changed nothing in the elroy home.
    pub fn nothing_new(&self) -> bool {
        self.taken.is_empty()
    }
}

impl fmt::Display for ImportReport {
    /// ```text
    /// Imported from /path/to/elroy-home (names from /path/to/elroy.db):
    ///   agenda/Renew_passport.md  name 'Renew passport'
    ///   …
    /// Skipped:
    ///   agenda/notes.txt  not a markdown file
    /// Already here: 3
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = match &self.database {
            Some(db) => format!(
                "{} (names from {})",
                self.source_dir.display(),
                db.display()
            ),
            None => format!("{} (no Elroy database)", self.source_dir.display()),
        };
        if self.taken.is_empty() {
            writeln!(f, "Nothing new to import from {from}.")?;
        } else {
            writeln!(f, "Imported {} from {from}:", self.taken.len())?;
            for t in &self.taken {
                writeln!(f, "  {}  {}", t.source, t.detail)?;
            }
        }
        if !self.skipped.is_empty() {
            writeln!(f, "Skipped {}:", self.skipped.len())?;
            for s in &self.skipped {
                writeln!(f, "  {}  {}", s.source, s.reason)?;
            }
        }
        if self.unchanged > 0 {
            writeln!(f, "Already here (imported before): {}", self.unchanged)?;
        }
        for note in &self.notes {
            writeln!(f, "Note: {note}")?;
        }
        Ok(())
    }
}
