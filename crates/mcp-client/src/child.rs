//! A stdio MCP server's child process: its own process group, stdin and stdout for the protocol,
//! stderr to the log with its last lines kept for failure messages; killed (the whole group) and
//! reaped when the connection ends, fails or times out.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};

/// Lines of a server's stderr kept for its failure message.
pub const STDERR_LINES_KEPT: usize = 20;
/// Characters kept of one stderr line.
const STDERR_LINE_CHARS: usize = 500;
/// How long a server has to exit after SIGTERM before its group gets SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);

/// The last lines a server wrote to its stderr.
#[derive(Debug, Default)]
pub struct StderrTail(Mutex<VecDeque<String>>);

impl StderrTail {
    fn push(&self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let line: String = line.chars().take(STDERR_LINE_CHARS).collect();
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == STDERR_LINES_KEPT {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// The last `n` lines, oldest first.
    pub fn last(&self, n: usize) -> Vec<String> {
        self.0.lock().map_or_else(
            |_| Vec::new(),
            |lines| {
                lines
                    .iter()
                    .skip(lines.len().saturating_sub(n))
                    .cloned()
                    .collect()
            },
        )
    }
}

/// A started server process.
#[derive(Debug)]
pub struct ServerProcess {
    child: tokio::process::Child,
    /// Its stderr's last lines.
    pub stderr: Arc<StderrTail>,
}

/// What a stdio server is started with.
#[derive(Debug, Clone)]
pub struct Spawn<'a> {
    /// The server's name (for the log).
    pub server: &'a str,
    /// The program.
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// The variables of its entry's `env`, set over the minimal environment
    /// ([`INHERITED_ENV`]).
    pub env: &'a BTreeMap<String, String>,
    /// Its working directory.
    pub cwd: Option<&'a PathBuf>,
}

/// The variables of elroy's environment a stdio server gets (when set): what a program needs
/// to find its home, its programs, its user, its terminal, its language and a temporary
/// directory. Nothing else passes, so provider keys (`*_API_KEY`), tokens and elroy's own
/// settings reach a server only when its entry's `env` names them (`${VAR}` is expanded there).
pub const INHERITED_ENV: [&str; 8] = [
    "HOME", "PATH", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR",
];

/// Starts the server: a new process group, stdin and stdout piped for the protocol, stderr
/// piped to the log (never elroy's own stdout or stderr), killed on drop. Its environment is
/// [`INHERITED_ENV`] of elroy's plus the entry's `env`.
///
/// # Errors
/// The operating system's error when the program cannot be started (not found, not
/// executable, a `cwd` that does not exist).
pub fn spawn(spec: &Spawn<'_>) -> std::io::Result<(ServerProcess, ChildStdout, ChildStdin)> {
    let mut command = Command::new(spec.command);
    command.env_clear();
    for name in INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
        .args(spec.args)
        .envs(spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = spec.cwd {
        command.current_dir(cwd);
    }
    #[cfg(unix)]
    command.process_group(0);
    let mut child = elroy_plugins::process::retry_busy(|| command.spawn())?;
    let missing = || std::io::Error::other("the child's pipes were not set up");
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stderr = Arc::new(StderrTail::default());
    if let Some(pipe) = child.stderr.take() {
        let tail = Arc::clone(&stderr);
        let server = spec.server.to_owned();
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(target: "elroy_mcp_client::stderr", server = %server, "{line}");
                tail.push(&line);
            }
        });
    }
    Ok((ServerProcess { child, stderr }, stdout, stdin))
}

impl Drop for ServerProcess {
    /// A server dropped before it was stopped (elroy ended while it was starting): its whole
    /// group gets SIGKILL, not only its first process.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            elroy_plugins::process::kill_group(self.child.id());
        }
    }
}

impl ServerProcess {
    /// Waits for the process to exit; its status as text (`exit status: 1`, `signal: 9`).
    pub async fn wait(&mut self) -> String {
        match self.child.wait().await {
            Ok(status) => status.to_string(),
            Err(e) => format!("could not be waited for: {e}"),
        }
    }

    /// Stops the server and everything it started: SIGTERM to its process group, SIGKILL after
    /// a short grace, then reaps it.
    pub async fn stop(&mut self) {
        let pid = self.child.id();
        if pid.is_none() {
            return;
        }
        #[cfg(unix)]
        if let Some(group) = pid
            .and_then(|p| i32::try_from(p).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::TERM);
        }
        if tokio::time::timeout(TERM_GRACE, self.child.wait())
            .await
            .is_err()
        {
            elroy_plugins::process::kill_group(pid);
            let _ = self.child.kill().await;
        }
        // The leader is reaped; whatever of its group outlived SIGTERM gets SIGKILL too.
        elroy_plugins::process::kill_group(pid);
    }
}
