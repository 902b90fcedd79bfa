//! The write journal: which files under a home were written, removed or renamed during a scope
//! (a tool call, a piece of background work), so the versioned home commits exactly those paths
//! instead of walking the whole tree.
//!
//! Every store change goes through [`crate::write_atomic`], [`crate::remove_file`] or
//! [`crate::rename_file`]; each calls the journal just before it changes a file. While at least
//! one [`WriteScope`] is open for a directory that contains the file, the journal notes the file's
//! path (relative to the scope's root) and, on the first change of that path in the scope, its
//! content as it was just before ([`Before`]): the versioned home compares that with its last
//! commit, so a hand edit the call overwrote is committed first as `external edit`, never under
//! the tool's name. With no scope open a change costs one atomic load.
//!
//! Attribution when scopes overlap in one process: a change made on a thread that owns a scope
//! ([`WriteScope::on_this_thread`], background work run synchronously) belongs to the innermost
//! such scope only; any other change belongs to every open shared scope ([`WriteScope::begin`],
//! tool calls, which may hop between threads of an async runtime) of that root, and when none is
//! open, to every open scope of that root (so no change goes unrecorded). Two tool calls that run
//! at the same time in one process therefore both see each other's paths; whichever commits first
//! takes them, the other then finds them unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;

/// A path's content just before the first change a scope saw of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// The file did not exist.
    Missing,
    /// Its bytes.
    Bytes(Vec<u8>),
    /// It could not be read (the OS error); the journal cannot say what it held.
    Unreadable(String),
}

/// One path a scope changed: relative to the scope's root, `/`-separated, with its content before
/// the scope's first change of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    /// The path relative to the scope's root, e.g. `agenda/Water_the_plants.md`.
    pub path: String,
    /// Its content before the scope's first change.
    pub before: Before,
}

struct ScopeState {
    id: u64,
    root: PathBuf,
    /// `root` with symbolic links resolved (when it exists), to match paths spelt differently.
    canonical: Option<PathBuf>,
    thread: Option<ThreadId>,
    touched: BTreeMap<String, Before>,
}

static OPEN: AtomicUsize = AtomicUsize::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static SCOPES: Mutex<Vec<ScopeState>> = Mutex::new(Vec::new());

fn scopes() -> MutexGuard<'static, Vec<ScopeState>> {
    // A panic while the list was held leaves it consistent (each change is one push or insert).
    SCOPES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An open journal scope for one home: every change of a file under its root is noted (see the
/// module documentation for which scope a change belongs to) until [`WriteScope::finish`] returns
/// the paths, or the scope is dropped.
#[derive(Debug)]
pub struct WriteScope {
    id: u64,
}

impl WriteScope {
    /// Opens a scope shared by every thread: it gets the changes under `root` made on any thread
    /// that does not own a scope of its own (a tool call, which may run on several threads).
    pub fn begin(root: &Path) -> WriteScope {
        Self::open(root, None)
    }

    /// Opens a scope owned by the current thread: it gets the changes under `root` made on this
    /// thread (background work run synchronously), and no shared scope gets them.
    pub fn on_this_thread(root: &Path) -> WriteScope {
        Self::open(root, Some(std::thread::current().id()))
    }

    fn open(root: &Path, thread: Option<ThreadId>) -> WriteScope {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let canonical = root.canonicalize().ok().filter(|c| c != root);
        scopes().push(ScopeState {
            id,
            root: root.to_path_buf(),
            canonical,
            thread,
            touched: BTreeMap::new(),
        });
        OPEN.fetch_add(1, Ordering::SeqCst);
        WriteScope { id }
    }

    /// Closes the scope and returns the paths it saw changed, sorted.
    pub fn finish(self) -> Vec<Touched> {
        let touched = close(self.id);
        std::mem::forget(self);
        touched
    }
}

impl Drop for WriteScope {
    fn drop(&mut self) {
        close(self.id);
    }
}

fn close(id: u64) -> Vec<Touched> {
    let mut list = scopes();
    let Some(at) = list.iter().position(|s| s.id == id) else {
        return Vec::new();
    };
    let state = list.remove(at);
    OPEN.fetch_sub(1, Ordering::SeqCst);
    state
        .touched
        .into_iter()
        .map(|(path, before)| Touched { path, before })
        .collect()
}

/// `path` relative to `state`'s root, `/`-separated, when it is inside it.
fn relative(
    state: &ScopeState,
    path: &Path,
    canonical: &dyn Fn() -> Option<PathBuf>,
) -> Option<String> {
    let rel = match path.strip_prefix(&state.root) {
        Ok(rel) => rel.to_path_buf(),
        Err(_) => {
            let root = state.canonical.as_ref().unwrap_or(&state.root);
            canonical()?.strip_prefix(root).ok()?.to_path_buf()
        }
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Notes that `path` is about to be changed (written, replaced, removed, renamed away or onto).
/// Called by the write functions of this crate before they change anything; cheap when no scope
/// is open.
pub(crate) fn before_change(path: &Path) {
    if OPEN.load(Ordering::SeqCst) == 0 {
        return;
    }
    // The path with its directory's symbolic links resolved, computed only when a scope's root
    // does not match as spelt.
    let canonical_cell: std::cell::OnceCell<Option<PathBuf>> = std::cell::OnceCell::new();
    let canonical = || {
        canonical_cell
            .get_or_init(|| {
                let dir = path.parent()?.canonicalize().ok()?;
                Some(dir.join(path.file_name()?))
            })
            .clone()
    };
    let thread = std::thread::current().id();
    // Which scopes get the change, and under which relative path; the file is read outside the
    // list's lock.
    let targets: Vec<(u64, String)> = {
        let list = scopes();
        let matching: Vec<(&ScopeState, String)> = list
            .iter()
            .filter_map(|s| relative(s, path, &canonical).map(|rel| (s, rel)))
            .collect();
        let chosen: Vec<&(&ScopeState, String)> = match matching
            .iter()
            .rev()
            .find(|(s, _)| s.thread == Some(thread))
        {
            Some(own) => vec![own],
            None => {
                let shared: Vec<_> = matching
                    .iter()
                    .filter(|(s, _)| s.thread.is_none())
                    .collect();
                if shared.is_empty() {
                    matching.iter().collect()
                } else {
                    shared
                }
            }
        };
        chosen
            .into_iter()
            .filter(|(s, rel)| !s.touched.contains_key(rel))
            .map(|(s, rel)| (s.id, rel.clone()))
            .collect()
    };
    if targets.is_empty() {
        return;
    }
    let before = match std::fs::read(path) {
        Ok(bytes) => Before::Bytes(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Before::Missing,
        Err(e) => Before::Unreadable(e.to_string()),
    };
    let mut list = scopes();
    for (id, rel) in targets {
        if let Some(state) = list.iter_mut().find(|s| s.id == id) {
            state.touched.entry(rel).or_insert_with(|| before.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_notes_writes_removals_and_renames_with_their_content_before() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("agenda")).unwrap();
        std::fs::write(root.join("agenda/old.md"), "old").unwrap();
        std::fs::write(root.join("agenda/gone.md"), "gone").unwrap();
        let outside = tempfile::tempdir().unwrap();
        let scope = WriteScope::begin(root);
        crate::write_atomic(&root.join("agenda/new.md"), b"1", "new").unwrap();
        crate::write_atomic(&root.join("agenda/new.md"), b"2", "new").unwrap();
        crate::rename_file(
            &root.join("agenda/old.md"),
            &root.join("agenda/moved.md"),
            "m",
        )
        .unwrap();
        crate::remove_file(&root.join("agenda/gone.md"), "gone").unwrap();
        crate::write_atomic(&outside.path().join("x.md"), b"x", "x").unwrap();
        let touched = scope.finish();
        let seen: Vec<(&str, &Before)> = touched
            .iter()
            .map(|t| (t.path.as_str(), &t.before))
            .collect();
        assert_eq!(
            seen,
            vec![
                ("agenda/gone.md", &Before::Bytes(b"gone".to_vec())),
                ("agenda/moved.md", &Before::Missing),
                ("agenda/new.md", &Before::Missing),
                ("agenda/old.md", &Before::Bytes(b"old".to_vec())),
            ]
        );
        // Closed: later writes are not noted anywhere.
        crate::write_atomic(&root.join("agenda/late.md"), b"x", "late").unwrap();
        assert!(WriteScope::begin(root).finish().is_empty());
    }

    #[test]
    fn a_thread_scope_takes_its_threads_writes_and_shared_scopes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let call = WriteScope::begin(&root);
        let background = {
            let root = root.clone();
            std::thread::spawn(move || {
                let scope = WriteScope::on_this_thread(&root);
                crate::write_atomic(&root.join("memories/m.md"), b"m", "m").unwrap();
                scope.finish()
            })
        };
        let background: Vec<String> = background
            .join()
            .unwrap()
            .into_iter()
            .map(|t| t.path)
            .collect();
        crate::write_atomic(&root.join("agenda/a.md"), b"a", "a").unwrap();
        let call: Vec<String> = call.finish().into_iter().map(|t| t.path).collect();
        assert_eq!(background, vec!["memories/m.md"]);
        assert_eq!(call, vec!["agenda/a.md"]);
    }

    #[test]
    fn with_no_shared_scope_a_thread_scope_takes_other_threads_writes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let scope = WriteScope::on_this_thread(&root);
        let r = root.clone();
        std::thread::spawn(move || crate::write_atomic(&r.join("agenda/b.md"), b"b", "b"))
            .join()
            .unwrap()
            .unwrap();
        let seen: Vec<String> = scope.finish().into_iter().map(|t| t.path).collect();
        assert_eq!(seen, vec!["agenda/b.md"]);
    }
}
