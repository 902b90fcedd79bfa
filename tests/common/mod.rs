//! Helpers shared by the end-to-end tests: a temporary home and the real `elroy` binary, isolated
//! from the developer's environment (no `ELROY_*` variables, no provider keys, `HOME` inside the
//! temporary directory, so nothing touches `~/.elroy`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary elroy home.
pub struct TestHome {
    dir: tempfile::TempDir,
}

/// The repository's `testdata/`: the Elroy 0.5.0 fixture home with every call and answer, the
/// golden tool schemas, and the tool contract (`testdata/README.md`).
pub fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Environment variables a test must never inherit.
fn scrubbed(name: &str) -> bool {
    name.starts_with("ELROY_")
        || matches!(
            name,
            "OPENAI_API_KEY" | "ANTHROPIC_API_KEY" | "GEMINI_API_KEY" | "OPENAI_API_BASE" | "TZ"
        )
}

impl TestHome {
    /// A new, empty home.
    pub fn new() -> Self {
        TestHome {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }

    /// `$ELROY_HOME` of this test.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join(".elroy")
    }

    /// The temporary directory that stands in for the user's `$HOME`.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `elroy` with this home, a scrubbed environment and `TZ=UTC0`.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_elroy"));
        for (name, _) in std::env::vars() {
            if scrubbed(&name) {
                cmd.env_remove(&name);
            }
        }
        cmd.env("HOME", self.dir.path())
            .env("ELROY_HOME", self.home())
            .env("TZ", "UTC0");
        cmd.current_dir(self.dir.path());
        cmd
    }

    /// `elroy tools call NAME --args ARGS`.
    pub fn call(&self, tool: &str, args: &str) -> Output {
        self.cmd()
            .args(["tools", "call", tool, "--args", args])
            .output()
            .expect("run elroy")
    }
}

/// Standard output as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A temporary home whose chat model is the testkit's loopback `server`, with `extra_config`
/// (YAML lines) appended to its `elroy.conf.yaml`.
pub fn home_with_model(server: &elroy_testkit::MockServer, extra_config: &str) -> TestHome {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "chat_model: testkit-model\nchat_model_api_base: {}\n{extra_config}",
            server.base_url()
        ),
    )
    .unwrap();
    home
}
