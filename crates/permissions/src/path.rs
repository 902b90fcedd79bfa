//! Paths as the permission check sees them: `~` expanded, relative paths joined to the working
//! directory, then resolved through symlinks and `..` as far as the path exists (the rest is
//! normalised by its words), so a symlink or a `..` cannot hide where a call reads.

use std::path::{Component, Path, PathBuf};

/// The directories paths and rules resolve against.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    /// The working directory (relative paths; `read` calls inside it run in `ask` mode).
    pub cwd: PathBuf,
    /// The person's home directory (`~`; where the secrets list looks).
    pub user_dir: Option<PathBuf>,
    /// The elroy home (`read` calls inside it run in `ask` mode).
    pub elroy_home: PathBuf,
}

fn expand(raw: &str, roots: &Roots) -> PathBuf {
    // `~//x` is `~/x` for the tools too: leading slashes after `~/` must not make the rest an
    // absolute path that replaces the home directory.
    let tilde = |rest: &str| match &roots.user_dir {
        Some(dir) => dir.join(rest.trim_start_matches('/')),
        None => PathBuf::from(raw),
    };
    let path = if raw == "~" {
        tilde("")
    } else if let Some(rest) = raw.strip_prefix("~/") {
        tilde(rest)
    } else {
        PathBuf::from(raw)
    };
    if path.is_absolute() {
        path
    } else {
        roots.cwd.join(path)
    }
}

/// Normalises `.` and `..` by the path's words (for the part that does not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Resolves `path` as the filesystem would: the longest existing prefix through
/// `canonicalize` (symlinks, `..`, `/proc/self`), the rest by its words.
pub fn resolve_existing(path: &Path) -> PathBuf {
    let mut prefix = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&prefix) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        match (prefix.file_name().map(ToOwned::to_owned), prefix.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                prefix = parent.to_path_buf();
            }
            // `..` at the end, or the root itself: normalise what is left by its words.
            _ => return normalize(path),
        }
    }
}

/// Resolves a path argument of a tool call (`~`, the working directory, symlinks, `..`), trimmed
/// as the tools that trim read it (`create_contrib_repo`); empty is the working directory.
pub fn resolve(raw: &str, roots: &Roots) -> PathBuf {
    let raw = raw.trim();
    resolve_existing(&expand(if raw.is_empty() { "." } else { raw }, roots))
}

/// Resolves a rule's path glob: `~` and the working directory, and the directories before the
/// first glob character through symlinks, so `~/notes/**` still matches when `~/notes` is a
/// link.
pub(crate) fn resolve_glob_prefix(glob: &str, roots: &Roots) -> String {
    let expanded = expand(glob, roots);
    let text = expanded.to_string_lossy();
    let first_glob = text.find(['*', '?', '[', '{']).unwrap_or(text.len());
    // The literal part ends at the last separator before the first glob character.
    let cut = text[..first_glob].rfind('/').map_or(0, |i| i + 1);
    if cut == text.len() || first_glob == text.len() {
        return resolve_existing(&expanded).to_string_lossy().into_owned();
    }
    let literal = resolve_existing(Path::new(&text[..cut]));
    let mut out = literal.to_string_lossy().into_owned();
    if !out.ends_with('/') {
        out.push('/');
    }
    out.push_str(&text[cut..]);
    out
}

/// True when `path` is `dir` or inside it (both resolved).
pub fn is_within(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}
