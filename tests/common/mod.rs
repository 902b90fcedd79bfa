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
            "OPENAI_API_KEY"
                | "ANTHROPIC_API_KEY"
                | "GEMINI_API_KEY"
                | "OPENAI_API_BASE"
                | "TZ"
                | "RAYON_NUM_THREADS"
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

    /// `elroy` with this home, a scrubbed environment, `TZ=UTC0` and no resident embedding worker
    /// (`ELROY_EMBEDDING_WORKER_IDLE_SECONDS=0`).
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_elroy"));
        for (name, _) in std::env::vars() {
            if scrubbed(&name) {
                cmd.env_remove(&name);
            }
        }
        // No embedding worker stays after its work (tests that need one say so), so no
        // process outlives its test.
        cmd.env("HOME", self.dir.path())
            .env("ELROY_HOME", self.home())
            .env("ELROY_EMBEDDING_WORKER_IDLE_SECONDS", "0")
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

/// A Python virtual environment in the target directory (`$CARGO_TARGET_TMPDIR/NAME`, kept between
/// runs) where `import IMPORTS` works after `pip install PACKAGES`; its python, or why not (no
/// `python3 -m venv`, PyPI unreachable), for the test to print `SKIPPED: …`. The one place tests
/// reach a package registry.
pub fn python_venv(name: &str, packages: &[&str], imports: &str) -> Result<PathBuf, String> {
    use std::process::Stdio;
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let python = venv.join("bin/python");
    let importable = |python: &Path| {
        Command::new(python)
            .args(["-c", &format!("import {imports}")])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if importable(&python) {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("python3 is not available: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "python3 -m venv failed: {}",
            stderr(&made).lines().last().unwrap_or_default()
        ));
    }
    let pip = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--timeout",
            "20",
            "--retries",
            "1",
        ])
        .args(packages)
        .output()
        .map_err(|e| format!("pip could not run: {e}"))?;
    if !pip.status.success() || !importable(&python) {
        return Err(format!(
            "pip install {} failed (is PyPI reachable?): {}",
            packages.join(" "),
            stderr(&pip).lines().last().unwrap_or_default()
        ));
    }
    Ok(python)
}
