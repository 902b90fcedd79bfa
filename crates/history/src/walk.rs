//! The outside-edit walk in a stat per store file, without git: `.git/elroy-walk.json`, the
//! stamp of the last walk that found the work tree as HEAD has it.
//!
//! libgit2's status walk (`tree::store_candidates`) reads `.git/index` (11 MB at 110,000 store
//! files, checked by SHA-1), iterates HEAD's whole tree (the 5.5 MB `memories/` tree inflated) and
//! stats every file; `elroy history | head` spent 1.6 s there. The stamp says: at the fs time
//! `since`, every store file was as the commit `head` has it. A file changed after that has a
//! `ctime` at or after `since` (the kernel sets `ctime` on every write, rename, chmod; nobody can set
//! it back, unlike `mtime`), and a directory whose `mtime`, `ctime` and inode are those the stamp
//! noted has had no entry added or removed. So while HEAD is still `head`, the walk stats each
//! store file and directory (no file read, no git object read) and compares names with HEAD's
//! tree only in directories that changed. Every elroy commit whose parent is the stamp's `head`
//! moves the stamp to the new commit ([`advance`]): elroy commits only files it wrote after
//! `since`, which the next walk looks at anyway. Any other change of HEAD (a `git commit`,
//! `reset`, `checkout` by the user, a sync merge) makes the stamp stale: the next walk is
//! libgit2's, which writes a new stamp.
//!
//! Trade-off: a clock stepped backwards (an NTP correction larger than the time between two walks)
//! could hide an in-place edit made in that window from the walk until the file changes again; a
//! new `since` older than the stamp's makes the walk libgit2's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use elroy_markdown::FileStamp;
use git2::{ObjectType, Oid, Repository};
use serde_json::{Value, json};

use crate::error::HistoryError;
use crate::paths::is_store_path;
use crate::reader::TreeReader;

/// The stamp, relative to the home.
pub(crate) const STAMP: &str = ".git/elroy-walk.json";
/// A file written at the start of each walk to read the filesystem's clock from its `ctime`.
const CLOCK: &str = ".git/elroy-walk.clock";

/// The store directories of a home or of a `users/<token>/` home.
const STORE_DIRS: [&str; 3] = ["agenda", "feature-requests", "memories"];
/// The notebook files of a home or of a `users/<token>/` home.
const NOTEBOOK_FILES: [&str; 2] = ["MEMORY.md", "USER.md"];

/// What the last complete walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The commit the work tree matched.
    pub(crate) head: Oid,
    /// The fs time (ns since the epoch) at the start of that walk.
    pub(crate) since: i64,
    /// Each store directory's state seen by that walk, by path relative to the home.
    pub(crate) dirs: BTreeMap<String, FileStamp>,
    /// Paths committed since whose `.git/index` entry was left stale (a large index; see
    /// `tree::sync_index_after_call`), refreshed by the next walk.
    pub(crate) stale_index: BTreeSet<String>,
    /// `.git/index` as elroy last wrote it ([`index_state`]): one written by anything else (the
    /// user's `git add`, `rm .git/index`) makes the walk libgit2's, which refreshes it.
    pub(crate) index: Option<FileStamp>,
}

/// The identity of `.git/index` (`mtime`, `ctime`, inode: git writes it by rename;
/// [`FileStamp::sizeless`]), or `None`.
pub(crate) fn index_state(root: &Path) -> Option<FileStamp> {
    std::fs::symlink_metadata(root.join(".git/index"))
        .ok()
        .map(|meta| FileStamp::sizeless(&meta))
}

/// A stamp's form in the JSON: `[mtime_ns, ctime_ns, ino]`.
fn stamp_json(stamp: &FileStamp) -> Value {
    json!([stamp.mtime_ns, stamp.ctime_ns, stamp.ino])
}

/// The stamp of a `[mtime_ns, ctime_ns, ino]` array (`None` for anything else).
fn stamp_of_json(value: &Value) -> Option<FileStamp> {
    let state = value.as_array()?;
    Some(FileStamp {
        size: 0,
        mtime_ns: state.first()?.as_i64()?,
        ctime_ns: state.get(1)?.as_i64()?,
        ino: state.get(2)?.as_i64()?,
    })
}

/// Removes the stamp: the next walk is libgit2's (`.git/index` could not be kept current).
pub(crate) fn forget(root: &Path) {
    let _ = std::fs::remove_file(root.join(STAMP));
}

/// Notes in the stamp that elroy has just written `.git/index`. Call with the home lock held.
pub(crate) fn note_index_written(root: &Path) {
    if let Some(mut stamp) = Stamp::read(root) {
        stamp.index = index_state(root);
        stamp.write(root);
    }
}

impl Stamp {
    /// The stamp of `root`, if there is a readable one.
    pub(crate) fn read(root: &Path) -> Option<Stamp> {
        let text = std::fs::read_to_string(root.join(STAMP)).ok()?;
        let value: Value = serde_json::from_str(&text).ok()?;
        let dirs = value
            .get("dirs")?
            .as_object()?
            .iter()
            .map(|(path, state)| Some((path.clone(), stamp_of_json(state)?)))
            .collect::<Option<BTreeMap<_, _>>>()?;
        let stale_index = value
            .get("stale_index")?
            .as_array()?
            .iter()
            .map(|p| p.as_str().map(str::to_owned))
            .collect::<Option<BTreeSet<_>>>()?;
        let index = match value.get("index")? {
            Value::Null => None,
            state => Some(stamp_of_json(state)?),
        };
        Some(Stamp {
            head: Oid::from_str(value.get("head")?.as_str()?).ok()?,
            since: value.get("since")?.as_i64()?,
            dirs,
            stale_index,
            index,
        })
    }

    /// Writes the stamp (a cache: written in place of the old one by rename, not synced; a stamp
    /// lost or unreadable only makes the next walk libgit2's). Call with the home lock held.
    pub(crate) fn write(&self, root: &Path) {
        let dirs: serde_json::Map<String, Value> = self
            .dirs
            .iter()
            .map(|(path, stamp)| (path.clone(), stamp_json(stamp)))
            .collect();
        let text = json!({
            "head": self.head.to_string(),
            "since": self.since,
            "dirs": dirs,
            "stale_index": self.stale_index,
            "index": self.index.as_ref().map(stamp_json),
        })
        .to_string();
        let path = root.join(STAMP);
        let temporary = root.join(format!("{STAMP}.tmp"));
        let written =
            std::fs::write(&temporary, text).and_then(|()| std::fs::rename(&temporary, &path));
        if let Err(e) = written {
            tracing::debug!("versioned home: {STAMP} not written: {e}");
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Moves the stamp from `parent` to `commit` after elroy committed files it wrote (see the
/// module documentation); a stamp of another commit is left (stale). Call with the home lock held.
pub(crate) fn advance(root: &Path, parent: Oid, commit: Oid) {
    if let Some(mut stamp) = Stamp::read(root)
        && stamp.head == parent
    {
        stamp.head = commit;
        stamp.write(root);
    }
}

/// Notes that `.git/index` was left stale for `paths` (refreshed by the next walk).
pub(crate) fn note_stale_index(root: &Path, paths: &[String]) {
    if let Some(mut stamp) = Stamp::read(root) {
        stamp.stale_index.extend(paths.iter().cloned());
        stamp.write(root);
    }
}

/// The filesystem's clock now (ns since the epoch): the `ctime` of a file written now, the
/// clock every file's `ctime` comes from.
pub(crate) fn fs_now(root: &Path) -> Result<i64, HistoryError> {
    let path = root.join(CLOCK);
    let err = |e: std::io::Error| HistoryError::Read {
        path: CLOCK.into(),
        message: e.to_string(),
    };
    std::fs::write(&path, b"the time of elroy's last walk of the home\n").map_err(err)?;
    let meta = std::fs::symlink_metadata(&path).map_err(err)?;
    Ok(ctime(&meta))
}

/// The status-change time of `meta` (ns since the epoch; off Unix the modification time,
/// which is what changes on a write there).
fn ctime(meta: &std::fs::Metadata) -> i64 {
    FileStamp::of(meta).ctime_ns
}

/// What a walk found: the store paths that may differ from HEAD, and each store directory's
/// state (taken before its entries were listed).
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) candidates: BTreeSet<String>,
    pub(crate) dirs: BTreeMap<String, FileStamp>,
}

/// The walk with `stamp` (whose `head` is HEAD's commit, `head`): every store file whose `ctime`
/// is at or after `stamp.since`, and in each directory whose state differs from the stamp's (or
/// that is new, or gone), every store path that is on one side only of the directory and HEAD's
/// tree of it. With `stamp` `None`, only the directory states are collected (before a libgit2
/// walk, so the stamp written after it notes states seen before that walk).
pub(crate) fn walk(
    repo: &Repository,
    root: &Path,
    head: &git2::Tree<'_>,
    stamp: Option<&Stamp>,
) -> Result<Found, HistoryError> {
    let mut walker = Walker {
        root,
        stamp,
        head: TreeReader::new(repo, head.clone()),
        found: Found::default(),
    };
    let mut homes = vec![String::new()];
    let mut tokens: BTreeSet<String> = BTreeSet::new();
    match std::fs::read_dir(root.join("users")) {
        Ok(entries) => {
            for entry in entries {
                let entry = entry.map_err(|e| read_error("users", &e))?;
                if entry.file_type().is_ok_and(|t| t.is_dir())
                    && let Some(name) = entry.file_name().to_str()
                {
                    tokens.insert(name.to_owned());
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(read_error("users", &e)),
    }
    if stamp.is_some() {
        // A user home deleted whole is in HEAD only.
        if let Some(users) = walker.head.tree("users")? {
            for entry in users.iter() {
                if entry.kind() == Some(ObjectType::Tree)
                    && let Ok(name) = entry.name()
                {
                    tokens.insert(name.to_owned());
                }
            }
        }
    }
    homes.extend(tokens.into_iter().map(|t| format!("users/{t}/")));
    for home in &homes {
        if stamp.is_some() {
            for file in NOTEBOOK_FILES {
                walker.file(&format!("{home}{file}"))?;
            }
        }
        for dir in STORE_DIRS {
            walker.dir(&format!("{home}{dir}"))?;
        }
    }
    Ok(walker.found)
}

fn read_error(path: &str, e: &std::io::Error) -> HistoryError {
    HistoryError::Read {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

struct Walker<'a, 'r> {
    root: &'a Path,
    stamp: Option<&'a Stamp>,
    head: TreeReader<'r>,
    found: Found,
}

impl Walker<'_, '_> {
    /// A file the stores name outside their directories (`MEMORY.md`, `USER.md`).
    fn file(&mut self, rel: &str) -> Result<(), HistoryError> {
        let Some(stamp) = self.stamp else {
            return Ok(());
        };
        match std::fs::symlink_metadata(self.root.join(rel)) {
            Ok(meta) => {
                if ctime(&meta) >= stamp.since || self.head.blob(rel)?.is_none() {
                    self.found.candidates.insert(rel.to_owned());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if self.head.blob(rel)?.is_some() {
                    self.found.candidates.insert(rel.to_owned());
                }
            }
            Err(e) => return Err(read_error(rel, &e)),
        }
        Ok(())
    }

    /// A store directory and everything below it.
    fn dir(&mut self, rel: &str) -> Result<(), HistoryError> {
        let path = self.root.join(rel);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => meta,
            Ok(_) => return self.gone(rel),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return self.gone(rel),
            Err(e) => return Err(read_error(rel, &e)),
        };
        let state = FileStamp::sizeless(&meta);
        self.found.dirs.insert(rel.to_owned(), state);
        let changed = self
            .stamp
            .is_some_and(|stamp| stamp.dirs.get(rel) != Some(&state));
        let entries = std::fs::read_dir(&path).map_err(|e| read_error(rel, &e))?;
        let mut names: BTreeSet<String> = BTreeSet::new();
        for entry in entries {
            let entry = entry.map_err(|e| read_error(rel, &e))?;
            // A name that is not UTF-8 is never a store path (`is_store_path` takes `&str`).
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let child = format!("{rel}/{name}");
            let kind = entry.file_type().map_err(|e| read_error(&child, &e))?;
            if kind.is_dir() {
                self.dir(&child)?;
            } else if let Some(stamp) = self.stamp {
                if !is_store_path(&child) {
                    continue;
                }
                let meta = match entry.metadata() {
                    Ok(meta) => meta,
                    // Removed meanwhile: the directory changed, the next walk sees it.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        self.found.candidates.insert(child);
                        continue;
                    }
                    Err(e) => return Err(read_error(&child, &e)),
                };
                if ctime(&meta) >= stamp.since {
                    self.found.candidates.insert(child.clone());
                }
                if changed {
                    names.insert(name);
                }
            }
        }
        if changed {
            // Entries added or removed: compare the names with HEAD's.
            let in_head: Vec<(String, Option<ObjectType>)> = match self.head.tree(rel)? {
                Some(tree) => tree
                    .iter()
                    .filter_map(|e| Some((e.name().ok()?.to_owned(), e.kind())))
                    .collect(),
                None => Vec::new(),
            };
            let mut head_files = BTreeSet::new();
            for (name, kind) in in_head {
                let child = format!("{rel}/{name}");
                match kind {
                    Some(ObjectType::Tree) => {
                        if !path.join(&name).is_dir() {
                            self.gone(&child)?;
                        }
                    }
                    _ => {
                        if !names.contains(&name) && is_store_path(&child) {
                            self.found.candidates.insert(child);
                        }
                        head_files.insert(name);
                    }
                }
            }
            for name in names.difference(&head_files) {
                self.found.candidates.insert(format!("{rel}/{name}"));
            }
        }
        Ok(())
    }

    /// A store directory that is not there: every store file HEAD has below it.
    fn gone(&mut self, rel: &str) -> Result<(), HistoryError> {
        if self.stamp.is_none() {
            return Ok(());
        }
        let Some(tree) = self.head.tree(rel)? else {
            return Ok(());
        };
        let mut paths = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                paths.push(format!("{rel}/{dir}{name}"));
            }
            git2::TreeWalkResult::Ok
        })?;
        self.found
            .candidates
            .extend(paths.into_iter().filter(|p| is_store_path(p)));
        Ok(())
    }
}
