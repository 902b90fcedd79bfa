//! # elroy-import
//!
//! `elroy import SOURCE [PATH…]` reads chat histories (ChatGPT and Claude.ai exports, Claude Code,
//! Codex and Gemini CLI sessions) into recallable memories: [`import_chats`], one module per
//! source, `docs/import.md`.
//!
//! `elroy import-elroy DIR [--db FILE]` (also `elroy import elroy DIR`): moves an Elroy 0.5.0 home into the elroy home of the
//! configured user token.
//!
//! - **Files keep their bytes.** `agenda/*.md`, `feature-requests/*.md`, `memories/*.md` and
//!   `memories/archive/*.md` are valid for elroy's stores as Elroy wrote them; they are copied
//!   byte for byte into the user home (`agenda/`, `feature-requests/`) and the memory directory.
//!   The one change: an agenda or due-item file gets a `name` front-matter key holding the name
//!   Elroy kept in its database when that name differs from the file's stem (elroy keeps names in
//!   the file, D6, `docs/formats.md#item-names-and-stems` and
//!   `docs/formats.md#names-from-elroys-database`; `docs/tool-rules.md#finding-a-due-item`). The
//!   key is inserted as one line; every other byte stays as Elroy wrote it.
//! - **Elroy's database** (`DIR/elroy.db`, or `--db FILE`), opened read-only, supplies the
//!   agenda and due-item names (`agendaitem.name` by file name), the memory names and active
//!   flags (`memory.name`, `memory.is_active` by the front-matter `id`; the memory store's own
//!   sync reads them, `docs/formats.md#names-from-elroys-database`), and the user names
//!   (`userpreference`: preferred name, full name, persona, assistant name), which go to the user
//!   profile in `state.db` (`docs/formats.md#users-and-preferences`). Without a database, agenda
//!   names are the stems and memory names the stems with `_` → space.
//! - **In place.** `DIR` may be the elroy home itself (Elroy and elroy share `~/.elroy` by
//!   default): files stay where they are and agenda files gain their name line.
//! - **Idempotent.** A file already in the elroy home exactly as an import writes it, or a user
//!   name already stored with the same value, counts as "already here"; running the import twice
//!   changes nothing the second time. A different file under the same name, a memory id already
//!   used in the elroy home, a user name already set to something else, files that are not
//!   markdown or whose front matter cannot be read are skipped with the reason.
//!
//! Writes are atomic and made under the home lock (D12). With `versioned_home` on, the files an
//! import wrote are one commit of the home's repository (`import-elroy: {n} files from {DIR}`),
//! which `elroy history` lists and `elroy undo` reverts.

mod chatgpt;
mod chats;
mod chunk;
mod claude_ai;
mod claude_code;
mod codex;
mod convo;
mod files;
mod gemini;
mod name_key;
mod report;
mod source_db;
mod stream;
mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_config::{Config, DatabaseLocation};
use elroy_db::{Db, PreferenceField, UserPreferences};
use elroy_markdown::{Document, HomeLock, Value};
use elroy_memory::{MemoryStore, MemoryStoreOptions};
use jiff::Timestamp;

pub use chats::{
    CHAT_COMMIT_PREFIX, ChatImportOptions, ChatImportReport, IMPORT_SOURCE_TYPE, Progress, Source,
    import_chats, import_chats_with,
};
pub use chunk::{Granularity, SPAN_CHARS};
pub use convo::Problem;
pub use report::{ImportReport, Skipped, Taken};
use source_db::SourceDb;
pub use source_db::SourceDbError;
pub use summary::{SUMMARY_INPUT_CHARS, SummarizeError, Summarizer};

/// The summary prefix of the versioned-home commit of an import:
/// `import-elroy: {n} files from {DIR}`, the changed paths in the body.
pub const IMPORT_COMMIT_PREFIX: &str = "import-elroy: ";

/// What to import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The Elroy home (the directory holding `agenda/`, `feature-requests/`, `memories/`).
    pub source_dir: PathBuf,
    /// Elroy's database; `None` means `source_dir/elroy.db` when that file exists.
    pub database: Option<PathBuf>,
}

/// Why an import could not run at all (nothing was written), or stopped. Each variant keeps its
/// source; the CLI prints its text.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// `elroy import-elroy`'s source is not a directory.
    #[error(
        "{} is not a directory (expected an Elroy home with agenda/, feature-requests/, memories/)",
        .0.display()
    )]
    NotAHome(PathBuf),
    /// `--project` given for a source whose conversations name no folder (its label).
    #[error(
        "--project applies to claude-code, codex and gemini sessions ({0} conversations name no folder)"
    )]
    ProjectNotApplicable(&'static str),
    /// No path given and the source's default place (shown) has no files.
    #[error("no {label} files at {} (give the path)", dir.display())]
    NoFiles {
        /// The source's label.
        label: &'static str,
        /// Where it looked.
        dir: PathBuf,
    },
    /// No path given and the source has no default place (its label).
    #[error("give the path of the {0} export (conversations.json or the export's zip)")]
    NoPath(&'static str),
    /// A given path does not exist.
    #[error("{} does not exist", .0.display())]
    Missing(PathBuf),
    /// A file already in the elroy home cannot be read to compare it.
    #[error("cannot read {}: {source}", path.display())]
    ReadHere {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// Elroy's database cannot be read.
    #[error(transparent)]
    SourceDb(#[from] source_db::SourceDbError),
    /// elroy's database failed.
    #[error(transparent)]
    Database(#[from] elroy_db::DbError),
    /// The memory store failed.
    #[error(transparent)]
    Memory(#[from] elroy_memory::MemoryError),
    /// A file could not be written, or the home lock taken.
    #[error(transparent)]
    File(#[from] elroy_markdown::MarkdownError),
}

/// Imports the Elroy home of `options` into the elroy home of `config` (its user token, user
/// home and memory directory). `now` stamps new database rows.
///
/// # Errors
/// [`ImportError`] when the source is not a directory, an explicit `--db` cannot be read as
/// Elroy's database, or the elroy home cannot be opened or written (files written before such a
/// failure stay; a second run completes the import).
pub fn import(
    config: &Config,
    options: &ImportOptions,
    now: Timestamp,
) -> Result<ImportReport, ImportError> {
    let source = &options.source_dir;
    if !source.is_dir() {
        return Err(ImportError::NotAHome(source.clone()));
    }
    let mut report = ImportReport {
        source_dir: source.clone(),
        ..ImportReport::default()
    };
    let source_db = match &options.database {
        Some(path) => Some((path.clone(), SourceDb::open(path)?)),
        None => {
            let path = source.join("elroy.db");
            if path.exists() {
                match SourceDb::open(&path) {
                    Ok(db) => Some((path, db)),
                    Err(reason) => {
                        report.notes.push(format!(
                            "Elroy's database not used ({reason}); names come from file names"
                        ));
                        None
                    }
                }
            } else {
                report.notes.push(format!(
                    "no Elroy database ({} not found, no --db): agenda names are the file stems, memory names the stems with '_' as spaces, every memory active",
                    path.display()
                ));
                None
            }
        }
    };
    report.database = source_db.as_ref().map(|(p, _)| p.clone());

    let paths = &config.paths;
    let db = Arc::new(match &paths.database {
        DatabaseLocation::File(path) => Db::open(path)?,
        DatabaseLocation::Memory => Db::open_in_memory()?,
    });
    let token = config.settings.user_token.as_str();
    let user_id = db.ensure_user(token, now)?;
    // The versioned home (elroy-history): earlier hand edits are committed as a session start
    // commits them, so the import is one change of its own that `elroy undo` can revert.
    let versioned = if config.settings.versioned_home {
        match elroy_history::VersionedHome::start(&paths.elroy_home, now) {
            Ok(home) => Some(home),
            Err(e) => {
                report
                    .notes
                    .push(format!("versioned home: {e}; the import is not committed"));
                None
            }
        }
    } else {
        None
    };
    let memory_options = |elroy_db_path: Option<PathBuf>| MemoryStoreOptions {
        elroy_home: paths.elroy_home.clone(),
        memory_dir: paths.memory_dir.clone(),
        elroy_db_path,
        user_id,
        embedder: None,
        cosine_threshold: 0.3,
    };
    // The home as a session would see it before the import (the runtime's rule for Elroy's
    // database: the DEFAULT home only), so ids already in use are known.
    let default_elroy_db = (token == "DEFAULT").then(|| paths.elroy_db_path.clone());
    let (before, _) = MemoryStore::open(Arc::clone(&db), memory_options(default_elroy_db), now)?;

    let agenda_names = match &source_db {
        Some((_, sdb)) => sdb.agenda_names()?,
        None => Default::default(),
    };

    let mut new_memories: Vec<(String, i64)> = Vec::new();
    {
        let _lock = HomeLock::acquire(&paths.elroy_home)?;
        import_agenda(
            &source.join("agenda"),
            &paths.agenda_dir(),
            &agenda_names,
            &mut report,
        )?;
        copy_tree(
            &source.join("feature-requests"),
            &paths.feature_requests_dir(),
            "feature-requests",
            &mut report,
            |_, _| Ok(()),
        )?;
        for (sub, rel) in [("", "memories"), ("archive", "memories/archive")] {
            let from = source.join("memories").join(sub);
            let to = paths.memory_dir.join(sub);
            copy_tree(&from, &to, rel, &mut report, |display, doc| {
                let Some(id) = front_matter_id(doc) else {
                    return Ok(());
                };
                match before.get(id) {
                    Ok(Some(taken)) => Err(Refusal::IdTaken {
                        id,
                        name: taken.name,
                        file: taken.file_name,
                    }),
                    Ok(None) => {
                        new_memories.push((display.to_owned(), id));
                        Ok(())
                    }
                    Err(e) => Err(Refusal::Lookup(e)),
                }
            })?;
        }
    }

    // Index the new memory files now, with Elroy's names and active flags
    // (`docs/formats.md#names-from-elroys-database`): the first indexing of a file is the only one
    // that reads Elroy's database.
    let elroy_db_path = report.database.clone();
    let (after, sync) = MemoryStore::open(Arc::clone(&db), memory_options(elroy_db_path), now)?;
    report
        .notes
        .extend(sync.warnings.into_iter().map(|w| w.message));
    for taken in &mut report.taken {
        if let Some((_, id)) = new_memories.iter().find(|(d, _)| *d == taken.source)
            && let Ok(Some(memory)) = after.get(*id)
        {
            taken.detail = format!(
                "memory {id} '{}' ({})",
                memory.name,
                if memory.is_active {
                    "active"
                } else {
                    "inactive"
                }
            );
        }
    }

    if let Some((_, sdb)) = &source_db {
        import_user_names(sdb, &db, user_id, token, now, &mut report)?;
    }
    if let Some(home) = versioned {
        let from = source.display().to_string();
        let message = |paths: &[String]| {
            format!(
                "{IMPORT_COMMIT_PREFIX}{} files from {from}\n\n{}",
                paths.len(),
                paths.join("\n")
            )
        };
        if let Err(e) = home.commit_changes(now, &message) {
            report
                .notes
                .push(format!("versioned home: {e}; the import is not committed"));
        }
    }
    Ok(report)
}

fn front_matter_id(doc: &Document) -> Option<i64> {
    match doc.front_matter.get("id")? {
        Value::Int(i) => Some(*i),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The `.md` files of `dir` (sorted), with the entries that are skipped and why.
fn list_markdown(dir: &Path, rel: &str, report: &mut ImportReport) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let display = format!("{rel}/{name}");
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            if !(rel == "memories" && name == "archive") {
                report.skipped.push(Skipped {
                    source: format!("{display}/"),
                    reason: "a folder; elroy's stores are flat".into(),
                });
            }
        } else if !name.ends_with(".md") {
            report.skipped.push(Skipped {
                source: display,
                reason: "not a markdown file".into(),
            });
        } else {
            files.push((display, entry.path()));
        }
    }
    files
}

/// Where one file stands against the elroy home.
enum Placed {
    Written,
    AlreadyHere,
    Different,
}

/// Writes `bytes` at `dest` when no file is there, or when the file there is `upgradable` (the
/// same Elroy file without what the import adds, as when an Elroy home is imported in place: its
/// agenda files gain their name line). The same bytes count as already imported; anything else is
/// left alone.
fn place(
    dest: &Path,
    bytes: &[u8],
    upgradable: Option<&[u8]>,
    display: &str,
) -> Result<Placed, ImportError> {
    match std::fs::read(dest) {
        Ok(existing) if existing == bytes => Ok(Placed::AlreadyHere),
        Ok(existing) if upgradable == Some(existing.as_slice()) => {
            elroy_markdown::write_atomic(dest, bytes, display)?;
            Ok(Placed::Written)
        }
        Ok(_) => Ok(Placed::Different),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            elroy_markdown::write_atomic(dest, bytes, display)?;
            Ok(Placed::Written)
        }
        Err(source) => Err(ImportError::ReadHere {
            path: dest.to_path_buf(),
            source,
        }),
    }
}

/// Why a markdown file of the Elroy home was skipped; the text is the skip reason.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    /// It cannot be read.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// It is not UTF-8.
    #[error("not UTF-8 text")]
    NotUtf8(#[from] std::string::FromUtf8Error),
    /// Its front matter is not valid.
    #[error(transparent)]
    Markdown(#[from] elroy_markdown::MarkdownError),
}

fn read_document(path: &Path, display: &str) -> Result<(String, Document), ReadError> {
    let bytes = std::fs::read(path)?;
    let text = String::from_utf8(bytes)?;
    let doc = Document::parse(&text, display)?;
    Ok((text, doc))
}

/// Why a file of the Elroy home is not copied (`copy_tree`'s check); the text is the skip reason.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    /// A memory's id is already another memory's here.
    #[error("memory id {id} is already used in this elroy home (by '{name}', {file})")]
    IdTaken {
        /// The id.
        id: i64,
        /// The memory that has it.
        name: String,
        /// Its file.
        file: String,
    },
    /// The memory store could not be asked.
    #[error(transparent)]
    Lookup(elroy_memory::MemoryError),
}

const DIFFERENT: &str = "a different file with this name is already in the elroy home";

/// Copies the markdown files of `from` into `to` byte for byte; `check` may refuse a file (its
/// message becomes the skip reason) before it is written.
fn copy_tree(
    from: &Path,
    to: &Path,
    rel: &str,
    report: &mut ImportReport,
    mut check: impl FnMut(&str, &Document) -> Result<(), Refusal>,
) -> Result<(), ImportError> {
    for (display, path) in list_markdown(from, rel, report) {
        let (text, doc) = match read_document(&path, &display) {
            Ok(read) => read,
            Err(reason) => {
                report.skipped.push(Skipped {
                    source: display,
                    reason: reason.to_string(),
                });
                continue;
            }
        };
        let Some(name) = path.file_name() else {
            continue;
        };
        let dest = to.join(name);
        if dest.exists() {
            match place(&dest, text.as_bytes(), None, &display)? {
                Placed::AlreadyHere => report.unchanged += 1,
                _ => report.skipped.push(Skipped {
                    source: display,
                    reason: DIFFERENT.into(),
                }),
            }
            continue;
        }
        if let Err(reason) = check(&display, &doc) {
            report.skipped.push(Skipped {
                source: display,
                reason: reason.to_string(),
            });
            continue;
        }
        if let Placed::Written = place(&dest, text.as_bytes(), None, &display)? {
            report.taken.push(Taken {
                source: display,
                detail: "copied".into(),
            });
        }
    }
    Ok(())
}

/// Copies agenda and due-item files, adding the `name` key from Elroy's database.
fn import_agenda(
    from: &Path,
    to: &Path,
    names: &std::collections::HashMap<String, String>,
    report: &mut ImportReport,
) -> Result<(), ImportError> {
    for (display, path) in list_markdown(from, "agenda", report) {
        let (text, _doc) = match read_document(&path, &display) {
            Ok(read) => read,
            Err(reason) => {
                report.skipped.push(Skipped {
                    source: display,
                    reason: reason.to_string(),
                });
                continue;
            }
        };
        let Some(file_name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let stem = file_name.trim_end_matches(".md");
        let (bytes, detail) = match names.get(&file_name) {
            Some(name) if name != stem => match name_key::with_name_key(&text, name, &display) {
                Some(named) => (named, format!("name '{name}'")),
                None => (
                    text.clone(),
                    format!("name kept as in the file ('{name}' in Elroy's database)"),
                ),
            },
            Some(name) => (text.clone(), format!("name '{name}'")),
            None => (
                text.clone(),
                format!("name '{stem}' (the file name; not in Elroy's database)"),
            ),
        };
        match place(
            &to.join(&file_name),
            bytes.as_bytes(),
            Some(text.as_bytes()),
            &display,
        )? {
            Placed::Written => report.taken.push(Taken {
                source: display,
                detail,
            }),
            Placed::AlreadyHere => report.unchanged += 1,
            Placed::Different => report.skipped.push(Skipped {
                source: display,
                reason: DIFFERENT.into(),
            }),
        }
    }
    Ok(())
}

/// The user names of the Elroy user whose token is `token`, else of Elroy's only user, into the
/// profile of elroy's user `user_id`.
fn import_user_names(
    sdb: &SourceDb,
    db: &Db,
    user_id: i64,
    token: &str,
    now: Timestamp,
    report: &mut ImportReport,
) -> Result<(), ImportError> {
    let users = sdb.users()?;
    let elroy_user = match users.iter().find(|(_, t)| t == token) {
        Some(user) => user,
        None if users.len() == 1 => &users[0],
        None if users.is_empty() => return Ok(()),
        None => {
            report.skipped.push(Skipped {
                source: "user profile".into(),
                reason: format!(
                    "Elroy's database has {} users and none has the token '{token}' (choose one with --user)",
                    users.len()
                ),
            });
            return Ok(());
        }
    };
    let theirs = sdb.preferences(elroy_user.0)?;
    let ours: UserPreferences = db.preferences(user_id)?;
    let fields = [
        (
            PreferenceField::PreferredName,
            "preferred name",
            theirs.preferred_name,
            ours.preferred_name,
        ),
        (
            PreferenceField::FullName,
            "full name",
            theirs.full_name,
            ours.full_name,
        ),
        (
            PreferenceField::SystemPersona,
            "persona",
            theirs.system_persona,
            ours.system_persona,
        ),
        (
            PreferenceField::AssistantName,
            "assistant name",
            theirs.assistant_name,
            ours.assistant_name,
        ),
    ];
    let mut any = false;
    for (field, label, theirs, ours) in fields {
        let Some(value) = theirs.filter(|v| !v.trim().is_empty()) else {
            continue;
        };
        any = true;
        match ours {
            Some(current) if current == value => report.unchanged += 1,
            Some(current) => report.skipped.push(Skipped {
                source: "user profile".into(),
                reason: format!("{label} '{value}': already set to '{current}' here"),
            }),
            None => {
                db.set_preference(user_id, field, Some(&value), now)?;
                report.taken.push(Taken {
                    source: "user profile".into(),
                    detail: format!("{label} '{value}' (Elroy user '{}')", elroy_user.1),
                });
            }
        }
    }
    if !any {
        report.notes.push(format!(
            "no user names stored for Elroy user '{}'",
            elroy_user.1
        ));
    }
    Ok(())
}

// The integration tests (`tests/*.rs`) run in this crate's unit-test executable, so the package
// builds one test executable (docs/development.md, "Test layout"); they use the crate by its name.
#[cfg(test)]
extern crate self as elroy_import;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
