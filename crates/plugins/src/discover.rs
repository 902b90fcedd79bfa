//! Where plugins come from (`docs/tool-rules.md#plugins`): the home contrib directory, then each
//! entry of `contrib_tools_path`, then each entry of `custom_tools_path`.

use std::path::{Path, PathBuf};

/// Plugin candidates in load order, and warnings for entries that do not exist.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Discovered {
    /// Executables to probe, each once (by canonical path), in order.
    pub plugins: Vec<PathBuf>,
    /// `plugin {entry}: path does not exist` for missing configured entries.
    pub warnings: Vec<String>,
}

/// Lists the plugins of `contrib_dir` (if it exists) and of the configured `entries` (already
/// expanded to absolute paths). A directory contributes its direct children sorted by name; a file
/// contributes itself. A plugin is a regular file (after following symlinks), executable, whose
/// name does not start with `_` or `.`; other files are ignored silently.
pub fn discover(contrib_dir: &Path, entries: &[PathBuf]) -> Discovered {
    let mut found = Discovered::default();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut add = |path: PathBuf, found: &mut Discovered| {
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.contains(&key) {
            seen.push(key);
            found.plugins.push(path);
        }
    };
    if contrib_dir.is_dir() {
        for child in children(contrib_dir) {
            add(child, &mut found);
        }
    }
    for entry in entries {
        if entry.is_dir() {
            for child in children(entry) {
                add(child, &mut found);
            }
        } else if entry.exists() {
            if is_plugin(entry) {
                add(entry.clone(), &mut found);
            }
        } else {
            found
                .warnings
                .push(format!("plugin {}: path does not exist", entry.display()));
        }
    }
    found
}

/// The plugin children of `dir`, sorted by name.
fn children(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| is_plugin(p))
        .collect();
    paths.sort();
    paths
}

/// Whether `path` is a plugin: visible name, regular file after symlinks, executable.
pub fn is_plugin(path: &Path) -> bool {
    let visible = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| !n.starts_with('_') && !n.starts_with('.'));
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    visible && meta.is_file() && is_executable(path, &meta)
}

#[cfg(unix)]
fn is_executable(_path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(path: &Path, _meta: &std::fs::Metadata) -> bool {
    let pathext = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{e}").to_ascii_uppercase());
    ext.is_some_and(|ext| {
        pathext
            .split(';')
            .any(|p| p.trim().eq_ignore_ascii_case(&ext))
    })
}
