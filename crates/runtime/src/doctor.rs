//! `elroy doctor`: checks the whole home — every store, every file, the database and the versioned
//! home — and returns typed [`Problem`]s; the CLI only prints them. Unlike every other command it
//! reads every file, so the problems commands report one by one as they meet them (or as a
//! summary line, `elroy_core::summarize_warnings`) are all listed here, one per file.

use std::path::Path;
use std::sync::Arc;

use elroy_config::{Config, DatabaseLocation};
use elroy_db::Db;

mod plugins;
pub use crate::doctor_fix::repair_home;

/// The part of the home a [`Problem`] is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Area {
    /// `state.db`: opening, migrations, `PRAGMA integrity_check`.
    Database,
    /// `agenda/*.md`.
    Agenda,
    /// `memories/*.md` and `memories/archive/*.md`.
    Memories,
    /// `feature-requests/*.md`.
    FeatureRequests,
    /// `MEMORY.md` and `USER.md`.
    Notebook,
    /// The git repository of the versioned home (`.git`).
    VersionedHome,
    /// The built-in embedder's model directory (`embedding_model_path`), when a session would
    /// use it.
    EmbeddingModel,
    /// Plugins elroy does not run until the person trusts them, and the trust list
    /// (`plugins-trusted.json`).
    Plugins,
}

impl Area {
    /// The lower-case name shown and used in `--json` (`database`, `agenda`, `memories`,
    /// `feature-requests`, `notebook`, `versioned-home`, `embedding-model`, `plugins`).
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Database => "database",
            Area::Agenda => "agenda",
            Area::Memories => "memories",
            Area::FeatureRequests => "feature-requests",
            Area::Notebook => "notebook",
            Area::VersionedHome => "versioned-home",
            Area::EmbeddingModel => "embedding-model",
            Area::Plugins => "plugins",
        }
    }
}

/// One problem: where, which file (relative to `$ELROY_HOME`, when it is about one), and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The store or part of the home.
    pub area: Area,
    /// The file, when the problem is about one.
    pub path: Option<String>,
    /// What is wrong, in plain words (for a file: the same message the tools give).
    pub message: String,
}

/// What [`check_home`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DoctorReport {
    /// Every problem, by area, then in file-name order.
    pub problems: Vec<Problem>,
}

impl Problem {
    /// The problem as one line, `{area}: {path}: {message}` (the path left out when the message
    /// names it already, as most do).
    pub fn line(&self) -> String {
        match &self.path {
            Some(path) if !self.message.contains(path.as_str()) => {
                format!("{}: {path}: {}", self.area.as_str(), self.message)
            }
            _ => format!("{}: {}", self.area.as_str(), self.message),
        }
    }
}

impl DoctorReport {
    /// Whether nothing is wrong.
    pub fn is_healthy(&self) -> bool {
        self.problems.is_empty()
    }

    /// The summary line: `no problems found in {home}` or `{n} problem(s) found in {home}`.
    pub fn summary(&self, home: &str) -> String {
        match self.problems.len() {
            0 => format!("no problems found in {home}"),
            n => format!(
                "{} problem{} found in {home}",
                elroy_core::thousands(n),
                if n == 1 { "" } else { "s" }
            ),
        }
    }

    /// `elroy doctor --json`: `ok`, `problems` (area, path, message) and, after `--fix`,
    /// `fixed` (one line per repair).
    pub fn to_json(&self, fixed: Option<&[String]>) -> serde_json::Value {
        let problems: Vec<serde_json::Value> = self
            .problems
            .iter()
            .map(|p| {
                serde_json::json!({
                    "area": p.area.as_str(),
                    "path": p.path,
                    "message": p.message,
                })
            })
            .collect();
        let mut out = serde_json::json!({
            "ok": self.is_healthy(),
            "problems": problems,
        });
        if let Some(fixed) = fixed {
            out["fixed"] = serde_json::json!(fixed);
        }
        out
    }
}

fn relative(elroy_home: &Path, path: &Path) -> String {
    match path.strip_prefix(elroy_home) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.display().to_string(),
    }
}

/// Checks the home of `config` for its configured user: the database (opens and migrates,
/// `PRAGMA integrity_check`), every agenda file (through the agenda index, which re-reads the files
/// that changed), every memory file (read-only; the memory index is checked against every file), every feature request, `MEMORY.md` and `USER.md`
/// (UTF-8), and, when the home has a repository, the versioned home (the repository opens and its
/// history reads, git has finished what it was doing (no merge, rebase, cherry-pick, revert in
/// progress, no unmerged index, HEAD on a branch), no store file holds conflict markers, no change
/// is waiting in `.git/elroy-pending.jsonl`, no sync-conflict or merge leftover files in the
/// stores), and, when a session would use the built-in embedder, its model directory (it is
/// loaded: missing when it was asked for, unreadable or corrupt, with the warning a session
/// gives, [`crate::embedder::builtin_model_problem`]), and every plugin elroy does not run
/// because it is not trusted as it is now (`doctor/plugins.rs`; no plugin is run). Nothing a user
/// wrote is changed.
pub fn check_home(config: &Config) -> DoctorReport {
    let mut check = Check {
        config,
        home: &config.paths.elroy_home,
        problems: Vec::new(),
    };
    let db = check.database();
    // A broken database still lets the files be checked, through an index in memory.
    if let Some(db) = db.or_else(|| Db::open_in_memory().ok()).map(Arc::new) {
        check.indexed_stores(db);
    }
    check.memory_files();
    check.feature_requests();
    check.notebook();
    if check.home.join(".git").exists() {
        check.versioned_home();
        check.leftover_files();
    }
    // --- the built-in embedder's model ---
    if let Some((dir, message)) = crate::embedder::builtin_model_problem(config) {
        let path = relative(check.home, &dir);
        check.push(Area::EmbeddingModel, Some(path), message);
    }
    // --- plugins not trusted as they are now (none is run) ---
    let mut problems = check.problems;
    problems.extend(plugins::problems(config));
    problems.sort_by(|a, b| (a.area, &a.path).cmp(&(b.area, &b.path)));
    DoctorReport { problems }
}

/// One `elroy doctor` run: the home and the problems found so far.
struct Check<'a> {
    config: &'a Config,
    home: &'a Path,
    problems: Vec<Problem>,
}

impl Check<'_> {
    fn push(&mut self, area: Area, path: Option<String>, message: String) {
        self.problems.push(Problem {
            area,
            path,
            message,
        });
    }

    /// The database: opened and checked (`PRAGMA integrity_check`); `None` when it cannot be
    /// opened.
    fn database(&mut self) -> Option<Db> {
        let path = match &self.config.paths.database {
            DatabaseLocation::File(path) => path,
            DatabaseLocation::Memory => return Db::open_in_memory().ok(),
        };
        let shown = relative(self.home, path);
        match Db::open(path) {
            Ok(db) => {
                match db.integrity_problems() {
                    Ok(found) => found
                        .into_iter()
                        .for_each(|p| self.push(Area::Database, Some(shown.clone()), p)),
                    Err(e) => self.push(Area::Database, Some(shown.clone()), e.to_string()),
                }
                Some(db)
            }
            Err(e) => {
                // The line names the file already: SQLite's own words after it.
                let message = match e {
                    elroy_db::DbError::SqliteIn { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                self.push(Area::Database, Some(shown), message);
                None
            }
        }
    }

    /// The stores read through their index in `db`: memories and agenda.
    fn indexed_stores(&mut self, db: Arc<Db>) {
        let token = &self.config.settings.user_token;
        let user = match db.ensure_user(token, jiff::Timestamp::now()) {
            Ok(user) => user,
            Err(e) => return self.push(Area::Database, None, e.to_string()),
        };
        self.memory_index(&db, user);
        let paths = &self.config.paths;
        let agenda = elroy_agenda::AgendaStore::new(
            self.home,
            &paths.user_home,
            elroy_agenda::DbIndex::new(db, user),
        );
        match agenda.broken_files() {
            Ok(broken) => broken
                .into_iter()
                .for_each(|(file, message)| self.push(Area::Agenda, Some(file), message)),
            Err(e) => self.push(Area::Agenda, None, e.to_string()),
        }
        self.due_items(&agenda);
        self.unreadable_dates(&agenda);
    }

    /// Memories: the full check re-indexes files edited in place that no query has touched
    /// (ARCHITECTURE.md, "memory index"); it writes no file.
    fn memory_index(&mut self, db: &Arc<Db>, user: i64) {
        let memory = crate::doctor_fix::memory_store(self.config, Arc::clone(db), user);
        if let Err(e) = memory.check_all(jiff::Timestamp::now()) {
            self.push(Area::Memories, None, e.to_string());
        }
        if let Some(message) = crate::doctor_vectors::missing_vectors(self.config, db, user) {
            self.push(Area::Memories, None, message);
        }
        // A memory an update archived and then could not replace.
        for m in memory.stranded_in_archive().unwrap_or_default() {
            self.push(
                Area::Memories,
                Some(relative(self.home, &memory.path_of(&m))),
                format!(
                    "memory '{}' is only in the archive: nothing replaced it (an update \
                     that failed halfway); elroy doctor --fix puts it back",
                    m.name
                ),
            );
        }
    }

    /// Due items that never fire as meant: a trigger time or a repetition rule that cannot be
    /// read.
    fn due_items(&mut self, agenda: &elroy_agenda::AgendaStore) {
        let items = match agenda.active_items_with_ids(Some(elroy_agenda::Kind::Due), None) {
            Ok(items) => items,
            Err(e) => return self.push(Area::Agenda, None, e.to_string()),
        };
        for (_, item) in items {
            // A due item whose trigger time cannot be read never fires (a hand edit such as
            // `2026-12-01 8:30`): the file is valid, so only this check names it.
            if let (Some(raw), None) = (&item.trigger_raw, item.trigger_datetime) {
                self.push(
                    Area::Agenda,
                    Some(format!("agenda/{}.md", item.stem)),
                    format!(
                        "trigger_datetime {raw:?} is not a time elroy can read \
                         (YYYY-MM-DD HH:MM:SS+00:00); this due item never fires"
                    ),
                );
            }
            // A rule that cannot be read (a hand edit): the item fires once, at
            // its trigger_datetime, and then no more.
            if let Some(Err(e)) = item
                .recurrence
                .as_deref()
                .map(elroy_agenda::Recurrence::from_text)
            {
                self.push(
                    Area::Agenda,
                    Some(format!("agenda/{}.md", item.stem)),
                    format!("{e}; this due item fires once and does not repeat"),
                );
            }
        }
    }

    /// An agenda item whose date cannot be read is listed on no day
    /// (`docs/formats.md#agenda-item-keys`; `elroy agenda` warns when it meets one).
    fn unreadable_dates(&mut self, agenda: &elroy_agenda::AgendaStore) {
        match agenda.items_with_unreadable_dates() {
            Ok(items) => {
                for (item, raw) in items {
                    self.push(
                        Area::Agenda,
                        Some(format!("agenda/{}.md", item.stem)),
                        format!(
                            "date {raw:?} is not a date elroy can read (YYYY-MM-DD); this \
                             item is listed on no day"
                        ),
                    );
                }
            }
            Err(e) => self.push(Area::Agenda, None, e.to_string()),
        }
    }

    /// Memory files that cannot be read, and symlink loops in the memories folder (read-only).
    fn memory_files(&mut self) {
        let (home, paths) = (self.home, &self.config.paths);
        for (file, message) in elroy_memory::unreadable_memory_files(home, &paths.memory_dir) {
            self.push(Area::Memories, Some(file), message);
        }
        for link in crate::doctor_fix::symlink_loops(&paths.memory_dir) {
            self.push(
                Area::Memories,
                Some(relative(home, &link)),
                crate::doctor_fix::SYMLINK_LOOP.to_owned(),
            );
        }
    }

    fn feature_requests(&mut self) {
        let requests = elroy_feature_requests::FeatureRequestStore::new(
            self.home,
            &self.config.paths.user_home,
        );
        match requests.entries() {
            Ok(entries) => {
                for entry in entries {
                    if let elroy_feature_requests::Entry::Unreadable { file_name, error } = entry {
                        self.push(
                            Area::FeatureRequests,
                            Some(requests.display(&file_name)),
                            error.to_string(),
                        );
                    }
                }
            }
            Err(e) => self.push(Area::FeatureRequests, None, e.to_string()),
        }
    }

    fn notebook(&mut self) {
        let notebook = elroy_notebook::Notebook::new(self.home, &self.config.paths.user_home);
        for target in [
            elroy_notebook::Target::SelfNotes,
            elroy_notebook::Target::User,
        ] {
            if let Err(e) = notebook.read(target) {
                self.push(
                    Area::Notebook,
                    Some(relative(self.home, &notebook.path(target))),
                    e.to_string(),
                );
            }
        }
    }

    /// The versioned home: the repository readable, git finished, no conflict markers, nothing
    /// unrecorded or waiting in the journal.
    fn versioned_home(&mut self) {
        let home = self.home;
        if let Err(e) = elroy_history::VersionedHome::open(home).and_then(|h| h.check_readable()) {
            self.push(
                Area::VersionedHome,
                Some(".git".to_owned()),
                format!("the repository cannot be read: {e}"),
            );
        }
        self.unfinished_git();
        for path in elroy_history::marker_files(home) {
            self.push(
                Area::VersionedHome,
                Some(path.clone()),
                format!(
                    "{path} holds git conflict markers (<<<<<<< … >>>>>>> lines): edit it to keep \
                     the text you want and delete the marker lines"
                ),
            );
        }
        let journal = home.join(".git").join("elroy-pending.jsonl");
        let waiting = std::fs::read_to_string(&journal)
            .map(|text| text.lines().filter(|l| !l.trim().is_empty()).count())
            .unwrap_or(0);
        // Files the history has not recorded (only when git has finished what it was doing: an
        // unfinished merge is named above and explains them).
        if elroy_history::unfinished(home).is_ok_and(|s| s.is_empty()) {
            for p in crate::doctor_fix::unrecorded_problems(home, waiting > 0) {
                self.push(p.area, p.path, p.message);
            }
        }
        if waiting > 0 {
            self.push(
                Area::VersionedHome,
                Some(".git/elroy-pending.jsonl".to_owned()),
                format!(
                    "{waiting} saved change(s) are not recorded in the history yet; the next \
                     elroy command or `elroy undo` records them"
                ),
            );
        }
    }

    /// What git has not finished (a merge, a rebase, a detached HEAD, an unmerged index):
    /// elroy commits nothing and `elroy sync` refuses until it is done.
    fn unfinished_git(&mut self) {
        let states = match elroy_history::unfinished(self.home) {
            Ok(states) => states,
            Err(e) => {
                return self.push(
                    Area::VersionedHome,
                    Some(".git".to_owned()),
                    format!("the repository's state cannot be read: {e}"),
                );
            }
        };
        for state in states {
            let path = match &state {
                elroy_history::Unfinished::Unmerged { paths } => paths.first().cloned(),
                _ => Some(".git".to_owned()),
            };
            self.push(
                Area::VersionedHome,
                path,
                format!(
                    "{}: {}; until then elroy records no change and elroy sync refuses",
                    state.state(),
                    state.remedy()
                ),
            );
        }
    }

    /// Files a killed write left in the stores, and sync-conflict or merge leftovers.
    fn leftover_files(&mut self) {
        let (home, paths) = (self.home, &self.config.paths);
        for dir in store_dirs(paths) {
            for file in interrupted_writes(&dir) {
                self.push(
                    Area::VersionedHome,
                    Some(relative(home, &file)),
                    "left by a write that was interrupted (elroy was killed while saving); the \
                     file it was replacing is intact, delete this one"
                        .to_owned(),
                );
            }
            if dir == paths.user_home {
                continue;
            }
            for file in conflict_files(&dir) {
                self.push(
                    Area::VersionedHome,
                    Some(relative(home, &file)),
                    LEFTOVER.to_owned(),
                );
            }
        }
        // The notes files and elroy sync's names file live in the user home itself
        // (`MEMORY.md.sync-conflict-laptop` after both machines changed MEMORY.md in ways its
        // entries cannot merge, `user-names.yaml.sync-conflict-laptop` after both changed a
        // name); only the leftovers of those files are listed there, not every `*.orig` a
        // person keeps in the home.
        for file in conflict_files(&paths.user_home) {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if NOTES_FILES
                .iter()
                .any(|notes| name.starts_with(notes) && name.len() > notes.len())
            {
                self.push(
                    Area::VersionedHome,
                    Some(relative(home, &file)),
                    LEFTOVER.to_owned(),
                );
            }
        }
    }
}

/// The problem of a sync-conflict or merge leftover file.
const LEFTOVER: &str = "a sync-conflict or merge leftover file; merge it by hand and delete it";

/// Temporary files of atomic writes (`.<name>.tmp-<pid>-<hex>`, elroy_markdown::write_atomic)
/// that a killed process left in `dir`: older than a minute, so a write running now is not listed.
/// No store reads them and the versioned home ignores hidden files; they only take space.
/// The folders a killed write can leave a temporary file in: the stores' and the user home.
pub(crate) fn store_dirs(paths: &elroy_config::HomePaths) -> [std::path::PathBuf; 5] {
    [
        paths.user_home.join("agenda"),
        paths.memory_dir.clone(),
        paths.memory_dir.join("archive"),
        paths
            .user_home
            .join(elroy_feature_requests::FEATURE_REQUESTS_DIR),
        paths.user_home.clone(),
    ]
}

pub(crate) fn interrupted_writes(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let old = |e: &std::fs::DirEntry| {
        e.metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(60))
    };
    let mut found: Vec<std::path::PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with('.') && name.contains(".tmp-")
        })
        .filter(old)
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// The files directly in a user home whose sync-conflict or merge leftovers doctor lists: the
/// notes files and elroy sync's names file.
const NOTES_FILES: [&str; 3] = ["MEMORY.md", "USER.md", "user-names.yaml"];

/// Files of `dir` that sync tools or merges leave beside the real ones: `*.orig`, `*.rej`,
/// `*.BACKUP.*`/`*.LOCAL.*`/`*.REMOTE.*`/`*.BASE.*` (git mergetool), Syncthing's
/// `*.sync-conflict-*` and Dropbox's `* (… conflicted copy …)`.
fn conflict_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<std::path::PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".orig")
                || name.ends_with(".rej")
                || name.contains(".sync-conflict-")
                || name.contains("conflicted copy")
                || [".BACKUP.", ".LOCAL.", ".REMOTE.", ".BASE."]
                    .iter()
                    .any(|m| name.contains(m))
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}
