//! The home directory layout (`docs/formats.md#home-layout`, decisions K4 and D4).

use std::path::{Path, PathBuf};

/// Where the database lives (`docs/formats.md#connection-and-migrations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseLocation {
    /// A SQLite file.
    File(PathBuf),
    /// An in-memory database (`sqlite::memory:`, tests).
    Memory,
}

/// Every path elroy uses for one home and user token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HomePaths {
    /// `$ELROY_HOME` (default `~/.elroy`).
    pub elroy_home: PathBuf,
    /// The user home: `$ELROY_HOME` for the `DEFAULT` token, else `$ELROY_HOME/users/<token>`.
    pub user_home: PathBuf,
    /// The database.
    pub database: DatabaseLocation,
    /// Memories (`memory_dir`, default `<user home>/memories`); `archive/` is inside it.
    pub memory_dir: PathBuf,
    /// Elroy's own database, opened read-only for memory names (`elroy_db_path`).
    pub elroy_db_path: PathBuf,
    /// The built-in embedder's model directory (`embedding_model_path`, default
    /// `$ELROY_HOME/models/all-MiniLM-L6-v2`).
    pub embedding_model_dir: PathBuf,
}

impl HomePaths {
    /// `agenda/` of the user home.
    pub fn agenda_dir(&self) -> PathBuf {
        self.user_home.join("agenda")
    }
    /// `feature-requests/` of the user home.
    pub fn feature_requests_dir(&self) -> PathBuf {
        self.user_home.join("feature-requests")
    }
    /// `memories/archive/` (inside the memory directory).
    pub fn memory_archive_dir(&self) -> PathBuf {
        self.memory_dir.join("archive")
    }
    /// The home lock file, `$ELROY_HOME/.lock`.
    pub fn lock_file(&self) -> PathBuf {
        self.elroy_home.join(".lock")
    }
    /// `$ELROY_HOME/logs/`.
    pub fn logs_dir(&self) -> PathBuf {
        self.elroy_home.join("logs")
    }
    /// `$ELROY_HOME/cache/history`: the interactive prompt history.
    pub fn history_file(&self) -> PathBuf {
        self.elroy_home.join("cache").join("history")
    }
    /// `$ELROY_HOME/contrib/`: the home contrib plugin repository.
    pub fn contrib_dir(&self) -> PathBuf {
        self.elroy_home.join("contrib")
    }
    /// A bootstrap or notes file of the user home (`MEMORY.md`, `USER.md`, `SOUL.md`, …).
    pub fn user_file(&self, name: &str) -> PathBuf {
        self.user_home.join(name)
    }
}

/// The user home for `token` below `elroy_home` (`docs/formats.md#home-layout`).
pub fn user_home_for(elroy_home: &Path, token: &str) -> PathBuf {
    if token == "DEFAULT" {
        elroy_home.to_path_buf()
    } else {
        elroy_home.join("users").join(token)
    }
}

/// Expands a leading `~` or `~/` to `home` (decision D17); `~user` is left alone.
pub fn expand_tilde(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix('~'), home) {
        (Some(""), Some(h)) => h.to_path_buf(),
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(rest.trim_start_matches('/')),
        _ => PathBuf::from(path),
    }
}

/// `path` expanded (`~`) and made absolute against `cwd`.
pub fn resolve_path(path: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let p = expand_tilde(path, home);
    if p.is_absolute() { p } else { cwd.join(p) }
}

/// Whether `token` is a valid user token (`docs/formats.md#user-tokens`):
/// `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`, not a Windows device name, not ending with `.`.
pub fn valid_user_token(token: &str) -> bool {
    let bytes = token.as_bytes();
    let shape = !bytes.is_empty()
        && bytes.len() <= 128
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    shape && !token.ends_with('.') && !is_device_name(token)
}

/// Windows device names (`docs/formats.md#reserved-device-names`), ignoring ASCII case.
pub fn is_device_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    matches!(upper.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((upper.starts_with("COM") || upper.starts_with("LPT"))
            && upper.len() == 4
            && matches!(upper.as_bytes()[3], b'1'..=b'9'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        for ok in ["DEFAULT", "fixture-user-public", "a", "a.b_c"] {
            assert!(valid_user_token(ok), "{ok}");
        }
        for bad in ["", "-a", "a/b", "..", "a.", "con", "COM1", &"a".repeat(129)] {
            assert!(!valid_user_token(bad), "{bad}");
        }
    }

    #[test]
    fn tilde() {
        let home = Path::new("/home/u");
        assert_eq!(expand_tilde("~", Some(home)), PathBuf::from("/home/u"));
        assert_eq!(expand_tilde("~/x", Some(home)), PathBuf::from("/home/u/x"));
        assert_eq!(expand_tilde("~bob/x", Some(home)), PathBuf::from("~bob/x"));
        assert_eq!(user_home_for(home, "DEFAULT"), PathBuf::from("/home/u"));
        assert_eq!(user_home_for(home, "t1"), PathBuf::from("/home/u/users/t1"));
    }
}
