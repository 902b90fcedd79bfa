//! The checks of `elroy doctor` for states a fault leaves (a kill, a full disk, a sync stopped
//! halfway) and `elroy doctor --fix`, which repairs those that are safe to repair and says what
//! it did: symbolic links that loop in the memory directory are removed, a memory stranded in
//! the archive is put back, `.git/index` entries are set back to HEAD's, saved changes no commit
//! records are committed as `external edit`, and temporary files of interrupted writes go. A
//! sync merge that stopped halfway is left to `elroy sync`, which finishes it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_config::{Config, DatabaseLocation};
use elroy_db::Db;

use crate::doctor::{Area, Problem};

/// The symbolic links under `dir` (its subfolders too, not following links) that loop: the OS
/// answers "too many levels of symbolic links", or the link leads to `dir` or a folder that
/// contains it. Sorted.
pub(crate) fn symlink_loops(dir: &Path) -> Vec<PathBuf> {
    let Ok(top) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_symlink() {
                let loops = match std::fs::canonicalize(&path) {
                    // ELOOP: the link (or one it leads to) points back at itself.
                    Err(e) => e.raw_os_error() == Some(40),
                    Ok(target) => target.is_dir() && top.starts_with(&target),
                };
                if loops {
                    found.push(path);
                }
            }
        }
    }
    found.sort();
    found
}

/// The message of a looping link.
pub(crate) const SYMLINK_LOOP: &str = "a symbolic link that loops (it leads back to itself or to \
     a folder that holds it): elroy cannot read it, the history does not see hand edits and sync \
     refuses; remove it (elroy doctor --fix does)";

/// The problems of the versioned home at `home` that [`repair_home`] can act on: `.git/index`
/// entries that are not HEAD's, saved changes that no commit records (unless journaled changes
/// are waiting, which the caller names), and files a sync merge wrote before it stopped.
pub(crate) fn unrecorded_problems(home: &Path, journal_waiting: bool) -> Vec<Problem> {
    let found = match elroy_history::unrecorded(home) {
        Ok(found) => found,
        Err(e) => {
            return vec![Problem {
                area: Area::VersionedHome,
                path: Some(".git".to_owned()),
                message: format!("the repository's status cannot be read: {e}"),
            }];
        }
    };
    let mut out = Vec::new();
    for path in &found.stale_index {
        out.push(Problem {
            area: Area::VersionedHome,
            path: Some(path.clone()),
            message: "the git index does not have this file as the last commit has it (elroy \
                      was stopped between its commit and the index write); elroy doctor --fix \
                      sets the index back"
                .to_owned(),
        });
    }
    for path in &found.from_sync {
        out.push(Problem {
            area: Area::VersionedHome,
            path: Some(path.clone()),
            message: "written by an elroy sync that stopped before it finished its merge; run \
                      elroy sync again to finish it"
                .to_owned(),
        });
    }
    if !journal_waiting {
        for path in found
            .uncommitted
            .iter()
            .filter(|p| !found.from_sync.contains(p))
        {
            out.push(Problem {
                area: Area::VersionedHome,
                path: Some(path.clone()),
                message: "changed but not recorded in the history (a hand edit, or a change \
                          whose commit failed); elroy doctor --fix records it as an external edit"
                    .to_owned(),
            });
        }
    }
    out
}

/// The memory store doctor uses: no embedder, `db` for the configured user.
pub(crate) fn memory_store(config: &Config, db: Arc<Db>, user: i64) -> elroy_memory::MemoryStore {
    let paths = &config.paths;
    let token = &config.settings.user_token;
    elroy_memory::MemoryStore::new(
        db,
        elroy_memory::MemoryStoreOptions {
            elroy_home: paths.elroy_home.clone(),
            memory_dir: paths.memory_dir.clone(),
            elroy_db_path: (token == "DEFAULT").then(|| paths.elroy_db_path.clone()),
            user_id: user,
            embedder: None,
            cosine_threshold: 0.3,
        },
    )
}

fn relative(home: &Path, path: &Path) -> String {
    path.strip_prefix(home)
        .map(|r| r.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|_| path.display().to_string())
}

/// `elroy doctor --fix`: repairs what is safe to repair and returns one sentence per action, in
/// the order done. What it cannot repair (or what failed) is left for the check that follows.
pub fn repair_home(config: &Config) -> Vec<String> {
    let paths = &config.paths;
    let home = &paths.elroy_home;
    let now = jiff::Timestamp::now();
    let mut done = Vec::new();
    // 1. Looping links: they hold nothing, and they stop the history walk.
    for link in symlink_loops(&paths.memory_dir) {
        let shown = relative(home, &link);
        match std::fs::remove_file(&link) {
            Ok(()) => done.push(format!("removed {shown}, a symbolic link that looped")),
            Err(e) => done.push(format!("could not remove {shown}: {e}")),
        }
    }
    // 2. Memories stranded in the archive go back to memories/.
    if let DatabaseLocation::File(path) = &paths.database
        && let Ok(db) = Db::open(path)
        && db.read_only().is_none()
        && let Ok(user) = db.ensure_user(&config.settings.user_token, now)
    {
        let store = memory_store(config, Arc::new(db), user);
        for memory in store.stranded_in_archive().unwrap_or_default() {
            match store.restore_stranded(&memory, now) {
                Ok(file) => done.push(format!(
                    "put memory '{}' back: {} → memories/{file}",
                    memory.name,
                    relative(home, &store.path_of(&memory)),
                )),
                Err(e) => done.push(format!("could not put memory '{}' back: {e}", memory.name)),
            }
        }
    }
    // 3. The versioned home: the index back to HEAD, then unrecorded changes committed.
    if home.join(".git").exists()
        && elroy_history::unfinished(home).is_ok_and(|s| s.is_empty())
        && let Ok(found) = elroy_history::unrecorded(home)
    {
        {
            if !found.stale_index.is_empty() {
                match elroy_history::repair_index(home, &found.stale_index) {
                    Ok(()) => done.push(format!(
                        "set the git index back to the last commit for {} file(s)",
                        found.stale_index.len()
                    )),
                    Err(e) => done.push(format!("could not set the git index back: {e}")),
                }
            }
            let own: Vec<&String> = found
                .uncommitted
                .iter()
                .filter(|p| !found.from_sync.contains(p))
                .collect();
            if !own.is_empty() {
                match elroy_history::VersionedHome::open(home)
                    .and_then(|h| h.commit_outside_edits(now))
                {
                    Ok(true) => done.push(format!(
                        "recorded {} changed file(s) in the history as '{}'",
                        own.len(),
                        elroy_history::EXTERNAL_EDIT
                    )),
                    Ok(false) => {}
                    Err(e) => done.push(format!("could not record the changed files: {e}")),
                }
            }
        }
    }
    // 4. Temporary files of interrupted writes (older than a minute).
    for dir in crate::doctor::store_dirs(paths) {
        for file in crate::doctor::interrupted_writes(&dir) {
            if std::fs::remove_file(&file).is_ok() {
                done.push(format!(
                    "removed {}, left by an interrupted write",
                    relative(home, &file)
                ));
            }
        }
    }
    done
}
