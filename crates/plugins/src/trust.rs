//! Plugin trust (`docs/tool-rules.md#plugin-trust`): a plugin is run — for `--schema`, `--panel` or
//! a call — only while the home's trust list holds its path with the canonical target and the
//! SHA-256 of the content it has now. The person adds entries with `elroy plugins trust`; nothing
//! else writes the list (no tool can reach it).
//!
//! The list is `$ELROY_HOME/plugins-trusted.json` ([`TRUST_FILE`], `docs/formats.md#plugin-trust-list`):
//! `{"version": 1, "plugins": [{"path", "target", "sha256", "trusted_at"}, …]}`, written atomically
//! under the home lock.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The trust list's file name inside `$ELROY_HOME`.
pub const TRUST_FILE: &str = "plugins-trusted.json";

/// The format version this elroy reads and writes.
const VERSION: u32 = 1;

/// One trusted plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustEntry {
    /// The plugin as elroy finds it: absolute, symlinks not resolved (`contrib/NAME` of the
    /// home, or a file of a configured plugin path).
    pub path: PathBuf,
    /// What `path` resolved to (symlinks followed) when it was trusted.
    pub target: PathBuf,
    /// SHA-256 of the content when it was trusted, 64 lower-case hex digits.
    pub sha256: String,
    /// When it was trusted (RFC 3339, UTC).
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    plugins: Vec<TrustEntry>,
}

/// How a plugin differs from what was trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Same target, other content.
    Content,
    /// The path now resolves to another file (a symlink retargeted, a directory moved).
    Target {
        /// The target when trusted.
        was: PathBuf,
        /// The target now.
        now: PathBuf,
    },
}

/// A plugin's trust, as [`TrustList::assess`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// Trusted, and unchanged since: it may run.
    Trusted,
    /// Never trusted: not run.
    New,
    /// Trusted once, changed since: not run.
    Changed(Change),
    /// It cannot be read (the OS error), so its content cannot be checked: not run.
    Unreadable(String),
}

impl TrustState {
    /// Whether the plugin may run.
    pub fn is_trusted(&self) -> bool {
        matches!(self, TrustState::Trusted)
    }

    /// Short words for lists: `trusted`, `new`, `changed since trusted`, `now points to …`,
    /// `unreadable: …`.
    pub fn describe(&self) -> String {
        match self {
            TrustState::Trusted => "trusted".to_owned(),
            TrustState::New => "new".to_owned(),
            TrustState::Changed(Change::Content) => "changed since trusted".to_owned(),
            TrustState::Changed(Change::Target { now, .. }) => {
                format!("changed since trusted: now points to {}", now.display())
            }
            TrustState::Unreadable(e) => format!("unreadable: {e}"),
        }
    }
}

/// Why the trust list could not be read or changed, or a plugin may not run.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The list exists but cannot be read.
    #[error("{file} cannot be read: {source}")]
    Read {
        /// The list's path.
        file: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The list is not the JSON this elroy writes (no plugin counts as trusted until it is
    /// fixed or removed).
    #[error("{file} is not a plugin trust list elroy can read ({message}); fix or remove it")]
    Parse {
        /// The list's path.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The list could not be written, or the home lock not taken.
    #[error("{0}")]
    Write(#[from] elroy_markdown::MarkdownError),
    /// `elroy plugins trust` was given something that is not a plugin.
    #[error("{path}: {reason}")]
    NotAPlugin {
        /// The path as given.
        path: PathBuf,
        /// Why (`no such file`, `not an executable file`, …).
        reason: String,
    },
    /// `elroy plugins untrust` was given a path the list does not hold.
    #[error("{0} is not trusted")]
    NotTrusted(PathBuf),
    /// A plugin was about to run without being trusted.
    #[error("plugin {} is not run: {}", path.display(), refusal(state, path))]
    Untrusted {
        /// The plugin.
        path: PathBuf,
        /// Its state.
        state: TrustState,
    },
    /// A plugin was about to run and the list could not be read.
    #[error("plugin {} is not run: {source}", path.display())]
    ListUnreadable {
        /// The plugin.
        path: PathBuf,
        /// Why the list could not be read.
        source: Box<TrustError>,
    },
}

/// Why a plugin in `state` is not run, and what the person can do.
fn refusal(state: &TrustState, path: &Path) -> String {
    let trust = format!("read it, then run `elroy plugins trust {}`", path.display());
    match state {
        TrustState::Trusted => "it is trusted".to_owned(),
        TrustState::New => format!("it is not trusted; {trust}"),
        TrustState::Changed(Change::Content) => {
            format!("it changed since it was trusted; {trust}")
        }
        TrustState::Changed(Change::Target { now, .. }) => format!(
            "it now points to {}, not to the file that was trusted; {trust}",
            now.display()
        ),
        TrustState::Unreadable(e) => format!("it cannot be read ({e})"),
    }
}

/// The identity of a plugin's content now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    /// The path with every symlink resolved.
    pub target: PathBuf,
    /// SHA-256 of the content, 64 lower-case hex digits.
    pub sha256: String,
}

/// Resolves `path` and hashes what it resolves to (the content is streamed, never held whole).
///
/// # Errors
/// The OS error of resolving, opening or reading it.
pub fn fingerprint(path: &Path) -> std::io::Result<Fingerprint> {
    let target = std::fs::canonicalize(path)?;
    let mut file = std::fs::File::open(&target)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let digest = hasher.finalize();
    let sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(Fingerprint { target, sha256 })
}

/// `path` made absolute against the working directory (no symlink resolved), the form the list
/// keys its entries by.
pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The trust list as read from the home.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustList {
    entries: Vec<TrustEntry>,
}

impl TrustList {
    /// The entries, in the order they were trusted.
    pub fn entries(&self) -> &[TrustEntry] {
        &self.entries
    }

    /// The entry for `path` (compared in [`absolute`] form), if any.
    pub fn entry(&self, path: &Path) -> Option<&TrustEntry> {
        let key = absolute(path);
        self.entries.iter().find(|e| e.path == key)
    }

    /// Whether `path` may run now: its entry's target and hash equal what it resolves to and
    /// holds now. Reads and hashes the file.
    pub fn assess(&self, path: &Path) -> TrustState {
        self.assess_with(path).0
    }

    /// [`TrustList::assess`] and the fingerprint it computed (none when unreadable).
    pub fn assess_with(&self, path: &Path) -> (TrustState, Option<Fingerprint>) {
        let now = match fingerprint(path) {
            Ok(now) => now,
            Err(e) => return (TrustState::Unreadable(e.to_string()), None),
        };
        let state = match self.entry(path) {
            None => TrustState::New,
            Some(entry) if entry.target != now.target => TrustState::Changed(Change::Target {
                was: entry.target.clone(),
                now: now.target.clone(),
            }),
            Some(entry) if entry.sha256 != now.sha256 => TrustState::Changed(Change::Content),
            Some(_) => TrustState::Trusted,
        };
        (state, Some(now))
    }
}

/// The trust list of one home: where it lives, reading it, changing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    home: PathBuf,
}

impl TrustStore {
    /// The trust list of the home `elroy_home`.
    pub fn new(elroy_home: &Path) -> Self {
        TrustStore {
            home: elroy_home.to_path_buf(),
        }
    }

    /// `$ELROY_HOME/plugins-trusted.json`.
    pub fn file(&self) -> PathBuf {
        self.home.join(TRUST_FILE)
    }

    /// Reads the list; a missing file is an empty list.
    ///
    /// # Errors
    /// [`TrustError::Read`] or [`TrustError::Parse`].
    pub fn load(&self) -> Result<TrustList, TrustError> {
        let file = self.file();
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TrustList::default());
            }
            Err(source) => return Err(TrustError::Read { file, source }),
        };
        let parsed: TrustFile = serde_json::from_slice(&bytes).map_err(|e| TrustError::Parse {
            file: file.clone(),
            message: e.to_string(),
        })?;
        if parsed.version != VERSION {
            return Err(TrustError::Parse {
                file,
                message: format!("version {} (this elroy reads {VERSION})", parsed.version),
            });
        }
        Ok(TrustList {
            entries: parsed.plugins,
        })
    }

    /// Checks, just before a plugin is run, that it is trusted as it is now (the list is read
    /// again, so a change or an `untrust` since the session started counts).
    ///
    /// # Errors
    /// [`TrustError::Untrusted`] or [`TrustError::ListUnreadable`].
    pub fn verify(&self, path: &Path) -> Result<(), TrustError> {
        let list = self.load().map_err(|e| TrustError::ListUnreadable {
            path: path.to_path_buf(),
            source: Box::new(e),
        })?;
        match list.assess(path) {
            TrustState::Trusted => Ok(()),
            state => Err(TrustError::Untrusted {
                path: path.to_path_buf(),
                state,
            }),
        }
    }

    /// Trusts each plugin of `plugins` as it is now (absolute paths, as the loader finds them;
    /// see [`crate::resolve_plugin_path`]): its entry is replaced or added with its target, hash
    /// and `now` (RFC 3339). Under the home lock; the list is written atomically. Returns the
    /// new entries in the order given.
    ///
    /// # Errors
    /// [`TrustError::NotAPlugin`] when one cannot be hashed (nothing is written), or the
    /// errors of [`TrustStore::load`] and the write.
    pub fn trust(&self, plugins: &[PathBuf], now: &str) -> Result<Vec<TrustEntry>, TrustError> {
        let _lock = elroy_markdown::HomeLock::acquire(&self.home)?;
        let mut list = self.load()?;
        let mut added = Vec::new();
        for path in plugins {
            let path = absolute(path);
            let print = fingerprint(&path).map_err(|e| TrustError::NotAPlugin {
                path: path.clone(),
                reason: e.to_string(),
            })?;
            if path.to_str().is_none() || print.target.to_str().is_none() {
                return Err(TrustError::NotAPlugin {
                    path,
                    reason: "the path is not valid UTF-8".to_owned(),
                });
            }
            let entry = TrustEntry {
                path: path.clone(),
                target: print.target,
                sha256: print.sha256,
                trusted_at: now.to_owned(),
            };
            list.entries.retain(|e| e.path != path);
            list.entries.push(entry.clone());
            added.push(entry);
        }
        self.write(list)?;
        Ok(added)
    }

    /// Removes the entries of `paths` (each matched in [`absolute`] form, or, for a file that
    /// still exists, by what it resolves to). Returns the removed entries.
    ///
    /// # Errors
    /// [`TrustError::NotTrusted`] for a path the list does not hold (nothing is written), or
    /// the errors of [`TrustStore::load`] and the write.
    pub fn untrust(&self, paths: &[PathBuf]) -> Result<Vec<TrustEntry>, TrustError> {
        let _lock = elroy_markdown::HomeLock::acquire(&self.home)?;
        let mut list = self.load()?;
        let mut removed = Vec::new();
        for given in paths {
            let key = absolute(given);
            let canonical = std::fs::canonicalize(given).ok();
            let matches = |e: &TrustEntry| {
                e.path == key
                    || canonical
                        .as_ref()
                        .is_some_and(|c| std::fs::canonicalize(&e.path).is_ok_and(|p| &p == c))
            };
            let before = list.entries.len();
            removed.extend(list.entries.iter().filter(|e| matches(e)).cloned());
            list.entries.retain(|e| !matches(e));
            if list.entries.len() == before {
                return Err(TrustError::NotTrusted(given.clone()));
            }
        }
        self.write(list)?;
        Ok(removed)
    }

    fn write(&self, list: TrustList) -> Result<(), TrustError> {
        let file = TrustFile {
            version: VERSION,
            plugins: list.entries,
        };
        let mut text = serde_json::to_string_pretty(&file).map_err(|e| TrustError::Parse {
            file: self.file(),
            message: e.to_string(),
        })?;
        text.push('\n');
        elroy_markdown::write_atomic(&self.file(), text.as_bytes(), TRUST_FILE)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn fingerprint_is_sha256_of_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p");
        std::fs::write(&file, "abc").unwrap();
        let print = fingerprint(&file).unwrap();
        assert_eq!(
            print.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(print.target, std::fs::canonicalize(&file).unwrap());
    }

    #[test]
    fn a_list_of_another_version_or_shape_trusts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(dir.path());
        assert_eq!(store.load().unwrap(), TrustList::default());
        std::fs::write(store.file(), r#"{"version":2,"plugins":[]}"#).unwrap();
        assert!(matches!(store.load(), Err(TrustError::Parse { .. })));
        std::fs::write(store.file(), "[1, 2").unwrap();
        let err = store.load().unwrap_err().to_string();
        assert!(err.contains("fix or remove it"), "{err}");
        // Changing a list elroy cannot read would lose what it held: refused.
        let plugin = dir.path().join("p");
        std::fs::write(&plugin, "x").unwrap();
        assert!(store.trust(&[plugin], "2026-01-01T00:00:00Z").is_err());
        assert_eq!(std::fs::read_to_string(store.file()).unwrap(), "[1, 2");
    }
}
