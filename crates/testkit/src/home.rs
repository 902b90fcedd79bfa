//! [`TempHome`]: a throw-away elroy home wired to a [`MockServer`](crate::MockServer).

use std::path::{Path, PathBuf};

/// A temporary `$ELROY_HOME` (deleted on drop). Tests never touch `~/.elroy`.
#[derive(Debug)]
pub struct TempHome {
    dir: tempfile::TempDir,
}

impl TempHome {
    /// An empty home.
    ///
    /// # Panics
    /// When no temporary directory can be created (test set-up failure).
    #[allow(clippy::expect_used)]
    pub fn new() -> Self {
        TempHome {
            dir: tempfile::tempdir().expect("create a temporary elroy home"),
        }
    }

    /// A home whose config points the chat model at `base_url` (model `testkit-model`, no key,
    /// no embeddings unless the test configures them).
    pub fn with_model(base_url: &str) -> Self {
        let home = TempHome::new();
        home.write_config(&format!(
            "chat_model: testkit-model\nchat_model_api_base: {base_url}\n"
        ));
        home
    }

    /// `$ELROY_HOME`.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `$ELROY_HOME/elroy.conf.yaml`.
    pub fn config_path(&self) -> PathBuf {
        self.path().join("elroy.conf.yaml")
    }

    /// Replaces the config file.
    ///
    /// # Panics
    /// When the file cannot be written.
    #[allow(clippy::expect_used)]
    pub fn write_config(&self, yaml: &str) {
        std::fs::write(self.config_path(), yaml).expect("write elroy.conf.yaml");
    }

    /// Appends lines to the config file.
    ///
    /// # Panics
    /// When the file cannot be written.
    #[allow(clippy::expect_used)]
    pub fn append_config(&self, yaml: &str) {
        let mut text = std::fs::read_to_string(self.config_path()).unwrap_or_default();
        text.push_str(yaml);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        std::fs::write(self.config_path(), text).expect("append to elroy.conf.yaml");
    }

    /// Writes a file relative to the home, creating parent directories.
    ///
    /// # Panics
    /// When the file cannot be written.
    #[allow(clippy::expect_used)]
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path().join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent directories");
        }
        std::fs::write(&path, text).expect("write a file in the temporary home");
        path
    }

    /// Reads a file relative to the home (`None` when missing).
    pub fn read(&self, relative: &str) -> Option<String> {
        std::fs::read_to_string(self.path().join(relative)).ok()
    }

    /// Files directly inside `relative` (names, sorted; empty when missing).
    pub fn list(&self, relative: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path().join(relative))
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// The environment a child `elroy` process needs, isolated from the caller's: `ELROY_HOME`,
    /// `HOME` (the temp dir, so nothing reads the real `~`), `PATH`, `TZ=UTC`. Use with
    /// `Command::env_clear().envs(home.env())`.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("ELROY_HOME".to_owned(), self.path().display().to_string()),
            ("HOME".to_owned(), self.path().display().to_string()),
            ("TZ".to_owned(), "UTC".to_owned()),
        ];
        if let Ok(path) = std::env::var("PATH") {
            env.push(("PATH".to_owned(), path));
        }
        env
    }
}

impl Default for TempHome {
    fn default() -> Self {
        TempHome::new()
    }
}
