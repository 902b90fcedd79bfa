//! Path resolution and display shared by the filesystem tools (`docs/tool-rules.md#paths`).

use std::path::{Component, Path, PathBuf};

/// `arg` with a leading `~` / `~/` expanded to `home` (D17), joined to `cwd` when relative, with `.`
/// components dropped. Not canonicalised.
pub(crate) fn resolve(arg: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let expanded = match (arg.strip_prefix('~'), home) {
        (Some(""), Some(h)) => h.to_path_buf(),
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(rest.trim_start_matches('/')),
        _ => PathBuf::from(arg),
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    joined
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// The display path: relative to `cwd` when inside it (`cwd` itself is `.`), else absolute.
pub(crate) fn display(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// The user's home directory for `~` expansion.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::home_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_and_display() {
        let cwd = Path::new("/w");
        let home = Some(Path::new("/home/u"));
        assert_eq!(resolve("a/./b", cwd, home), PathBuf::from("/w/a/b"));
        assert_eq!(
            resolve("~/n.txt", cwd, home),
            PathBuf::from("/home/u/n.txt")
        );
        assert_eq!(resolve("~bob", cwd, home), PathBuf::from("/w/~bob"));
        assert_eq!(resolve(".", cwd, home), PathBuf::from("/w"));
        assert_eq!(display(Path::new("/w"), cwd), ".");
        assert_eq!(display(Path::new("/w/a/b"), cwd), "a/b");
        assert_eq!(display(Path::new("/x/y"), cwd), "/x/y");
    }
}
