//! Scanning `agenda/` with an in-process parse cache. The files stay the source of truth:
//!
//! - A **full scan** lists the directory and compares each file's modification time, size and
//!   inode with the cache; only changed files are parsed again.
//! - On Linux the directory is also watched with inotify. While the watch is healthy, an operation
//!   only re-reads the files named by the events since the last operation (creates, writes,
//!   renames, deletions, attribute changes: edits by hand or by other processes included) and does
//!   no per-file `stat`. A lost watch or an event-queue overflow falls back to a full scan.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use elroy_markdown::{Document, read_text};
use jiff::Timestamp;

use crate::AgendaError;
use crate::item::Item;

/// One `*.md` file of `agenda/`.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A file whose front matter parsed.
    Item(Box<Item>),
    /// A file that could not be read or parsed. It is a candidate only through its stem, is
    /// reported by name and is never rewritten.
    Broken {
        /// File name without `.md`.
        stem: String,
        /// Display path.
        file: String,
        /// The error message (`invalid front matter in {file}: …`).
        message: String,
    },
}

impl Entry {
    /// The stem.
    pub fn stem(&self) -> &str {
        match self {
            Entry::Item(item) => &item.stem,
            Entry::Broken { stem, .. } => stem,
        }
    }

    /// The parsed item, if any.
    pub fn item(&self) -> Option<&Item> {
        match self {
            Entry::Item(item) => Some(item),
            Entry::Broken { .. } => None,
        }
    }
}

/// Cache key of a file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Signature {
    mtime_ns: i128,
    size: u64,
    inode: u64,
}

#[derive(Debug)]
struct Cached {
    signature: Signature,
    mtime: Timestamp,
    entry: Arc<Entry>,
}

/// When a file was last modified, and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    pub mtime: Timestamp,
    pub size: u64,
}

/// A scan result: the entries sorted by file name, with each file's stamp.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    pub entries: Arc<Vec<(Arc<Entry>, FileStamp)>>,
    /// Whether any file appeared, disappeared or changed since the previous scan (or this is the
    /// first scan).
    pub changed: bool,
}

/// The parse cache of one agenda directory.
#[derive(Debug, Default)]
pub(crate) struct ScanCache {
    files: BTreeMap<String, Cached>,
    snapshot: Arc<Vec<(Arc<Entry>, FileStamp)>>,
    scanned: bool,
    /// Every entry name of the directory (any kind), for the unique-path rule.
    all_names: HashSet<String>,
    /// Lower-cased entry names with their number of entries (names are compared ignoring case).
    all_lower: HashMap<String, u32>,
    #[cfg(target_os = "linux")]
    watch: Option<watch::Watch>,
}

fn signature(meta: &std::fs::Metadata) -> (Signature, Timestamp) {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| Timestamp::try_from(t).ok())
        .unwrap_or(Timestamp::UNIX_EPOCH);
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(meta);
    #[cfg(not(unix))]
    let inode = 0;
    (
        Signature {
            mtime_ns: mtime.as_nanosecond(),
            size: meta.len(),
            inode,
        },
        mtime,
    )
}

/// Reads and parses one file.
pub(crate) fn load_entry(path: &Path, stem: &str, file: &str) -> Entry {
    let parsed = read_text(path, file)
        .and_then(|text| Document::parse(&text, file))
        .map_err(|e| e.to_string())
        .and_then(|doc| Item::from_document(stem.to_owned(), file.to_owned(), doc));
    match parsed {
        Ok(item) => Entry::Item(Box::new(item)),
        Err(message) => Entry::Broken {
            stem: stem.to_owned(),
            file: file.to_owned(),
            message,
        },
    }
}

fn parse_one(
    dir: &Path,
    prefix: &str,
    name: &str,
    signature: Signature,
    mtime: Timestamp,
) -> Cached {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let file = format!("{prefix}{name}");
    Cached {
        signature,
        mtime,
        entry: Arc::new(load_entry(&dir.join(name), stem, &file)),
    }
}

/// Parses many files, on all cores when there are enough of them (a first scan of a large home).
fn parse_all(
    dir: &Path,
    prefix: &str,
    files: Vec<(String, Signature, Timestamp)>,
) -> Vec<(String, Cached)> {
    let parse = |chunk: &[(String, Signature, Timestamp)]| -> Vec<(String, Cached)> {
        chunk
            .iter()
            .map(|(name, sig, mtime)| (name.clone(), parse_one(dir, prefix, name, *sig, *mtime)))
            .collect()
    };
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if files.len() < 512 || threads < 2 {
        return parse(&files);
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|c| scope.spawn(move || parse(c)))
            .collect();
        let mut out = Vec::with_capacity(files.len());
        for (handle, c) in handles.into_iter().zip(files.chunks(chunk)) {
            // A panicking parser thread (none is expected) falls back to parsing here.
            out.extend(handle.join().unwrap_or_else(|_| parse(c)));
        }
        out
    })
}

fn is_agenda_file(name: &str) -> bool {
    name.ends_with(".md") && !name.starts_with('.')
}

/// The metadata of a regular file (following a symlink), or `None`.
fn file_metadata(
    path: &Path,
    meta: std::io::Result<std::fs::Metadata>,
) -> Option<std::fs::Metadata> {
    let meta = match meta {
        Ok(m) if m.file_type().is_symlink() => std::fs::metadata(path).ok()?,
        Ok(m) => m,
        Err(_) => return None,
    };
    meta.is_file().then_some(meta)
}

impl ScanCache {
    /// The current entries of `dir` (`*.md` regular files, sorted by name).
    pub(crate) fn scan(&mut self, dir: &Path, prefix: &str) -> Result<Snapshot, AgendaError> {
        #[cfg(target_os = "linux")]
        if self.scanned
            && let Some(watch) = &mut self.watch
        {
            match watch.changed_names() {
                Some(names) => return Ok(self.refresh_names(dir, prefix, names)),
                None => self.watch = None,
            }
        }
        #[cfg(target_os = "linux")]
        if self.watch.is_none() {
            // Watch first, then scan: nothing that happens after the scan starts is missed.
            self.watch = watch::Watch::new(dir);
        }
        self.full_scan(dir, prefix)
    }

    /// Re-reads the named files only (inotify told us they changed).
    #[cfg(target_os = "linux")]
    fn refresh_names(&mut self, dir: &Path, prefix: &str, names: BTreeSet<String>) -> Snapshot {
        let mut changed = false;
        for name in names {
            let path = dir.join(&name);
            let meta = std::fs::symlink_metadata(&path);
            if meta.is_ok() {
                self.note_present(&name);
            } else {
                self.note_absent(&name);
            }
            if !is_agenda_file(&name) {
                continue;
            }
            match file_metadata(&path, meta) {
                Some(meta) => {
                    let (sig, mtime) = signature(&meta);
                    let fresh = self.files.get(&name).is_some_and(|c| c.signature == sig);
                    if !fresh {
                        self.insert(dir, prefix, name, sig, mtime);
                        changed = true;
                    }
                }
                None => {
                    if self.files.remove(&name).is_some() {
                        changed = true;
                    }
                }
            }
        }
        if changed {
            self.rebuild_snapshot();
        }
        Snapshot {
            entries: Arc::clone(&self.snapshot),
            changed,
        }
    }

    fn insert(
        &mut self,
        dir: &Path,
        prefix: &str,
        name: String,
        signature: Signature,
        mtime: Timestamp,
    ) {
        let cached = parse_one(dir, prefix, &name, signature, mtime);
        self.files.insert(name, cached);
    }

    fn note_present(&mut self, name: &str) {
        if self.all_names.insert(name.to_owned()) {
            *self.all_lower.entry(name.to_lowercase()).or_default() += 1;
        }
    }

    fn note_absent(&mut self, name: &str) {
        if self.all_names.remove(name) {
            let lower = name.to_lowercase();
            if let Some(count) = self.all_lower.get_mut(&lower) {
                *count -= 1;
                if *count == 0 {
                    self.all_lower.remove(&lower);
                }
            }
        }
    }

    /// Whether the directory has an entry called `name`, ignoring case (`formats.md` §2.3, D12),
    /// as of the last scan. Call it inside the home lock, right after a scan.
    pub(crate) fn is_taken(&self, name: &str) -> bool {
        self.all_lower.contains_key(&name.to_lowercase())
    }

    fn rebuild_snapshot(&mut self) {
        self.snapshot = Arc::new(
            self.files
                .values()
                .map(|c| {
                    let stamp = FileStamp {
                        mtime: c.mtime,
                        size: c.signature.size,
                    };
                    (Arc::clone(&c.entry), stamp)
                })
                .collect(),
        );
    }

    /// Lists `dir` and compares every file's signature with the cache.
    fn full_scan(&mut self, dir: &Path, prefix: &str) -> Result<Snapshot, AgendaError> {
        let first = !self.scanned;
        self.scanned = true;
        let read = match std::fs::read_dir(dir) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let changed = first || !self.files.is_empty();
                self.files.clear();
                self.all_names.clear();
                self.all_lower.clear();
                self.rebuild_snapshot();
                return Ok(Snapshot {
                    entries: Arc::clone(&self.snapshot),
                    changed,
                });
            }
            Err(e) => {
                return Err(AgendaError::new(format!(
                    "Unable to read {}: {e}",
                    prefix.trim_end_matches('/')
                )));
            }
        };
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut changed = false;
        self.all_names.clear();
        self.all_lower.clear();
        let mut to_parse = Vec::new();
        for dirent in read.flatten() {
            let name = dirent.file_name();
            let Some(name) = name.to_str() else { continue };
            self.note_present(name);
            if !is_agenda_file(name) {
                continue;
            }
            let Some(meta) = file_metadata(&dirent.path(), dirent.metadata()) else {
                continue;
            };
            let (sig, mtime) = signature(&meta);
            seen.insert(name.to_owned());
            match self.files.get(name) {
                Some(cached) if cached.signature == sig => {}
                _ => {
                    changed = true;
                    to_parse.push((name.to_owned(), sig, mtime));
                }
            }
        }
        for (name, cached) in parse_all(dir, prefix, to_parse) {
            self.files.insert(name, cached);
        }
        if seen.len() != self.files.len() {
            self.files.retain(|name, _| seen.contains(name));
            changed = true;
        }
        if changed || first {
            self.rebuild_snapshot();
        }
        Ok(Snapshot {
            entries: Arc::clone(&self.snapshot),
            changed: changed || first,
        })
    }
}

#[cfg(target_os = "linux")]
mod watch {
    //! An inotify watch on the agenda directory.

    use std::collections::BTreeSet;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;

    #[derive(Debug)]
    pub(super) struct Watch {
        fd: OwnedFd,
    }

    impl Watch {
        /// Watches `dir`; `None` when it does not exist or inotify is unavailable.
        pub(super) fn new(dir: &Path) -> Option<Watch> {
            let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?;
            let flags = WatchFlags::CREATE
                | WatchFlags::DELETE
                | WatchFlags::MODIFY
                | WatchFlags::CLOSE_WRITE
                | WatchFlags::MOVED_FROM
                | WatchFlags::MOVED_TO
                | WatchFlags::ATTRIB
                | WatchFlags::DELETE_SELF
                | WatchFlags::MOVE_SELF
                | WatchFlags::ONLYDIR;
            inotify::add_watch(&fd, dir, flags).ok()?;
            Some(Watch { fd })
        }

        /// The file names touched since the last call; `None` when the watch can no longer be
        /// trusted (queue overflow, directory moved or deleted, read error): scan fully.
        pub(super) fn changed_names(&mut self) -> Option<BTreeSet<String>> {
            let mut names = BTreeSet::new();
            let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            loop {
                match reader.next() {
                    Ok(event) => {
                        let flags = event.events();
                        if flags.intersects(
                            ReadFlags::QUEUE_OVERFLOW
                                | ReadFlags::IGNORED
                                | ReadFlags::DELETE_SELF
                                | ReadFlags::MOVE_SELF
                                | ReadFlags::UNMOUNT,
                        ) {
                            return None;
                        }
                        if let Some(name) = event.file_name() {
                            names.insert(name.to_string_lossy().into_owned());
                        }
                    }
                    Err(Errno::AGAIN) => return Some(names),
                    Err(Errno::INTR) => {}
                    Err(_) => return None,
                }
            }
        }
    }
}
