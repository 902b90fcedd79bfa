//! Running a child process with captured, capped output, a timeout and a process-group kill.
//! Shared by plugin calls (`docs/tool-rules.md#plugins`) and Codex runs
//! (`docs/tool-rules.md#running-codex`).

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// A started child process (its own process group).
#[derive(Debug)]
pub struct Running {
    child: Child,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The exit status; `None` when the run timed out (or could not be waited for) and was
    /// killed.
    pub status: Option<ExitStatus>,
    /// stdout, at most the cap (what was read before a timeout, too).
    pub stdout: Vec<u8>,
    /// Whether stdout was longer than the cap.
    pub stdout_truncated: bool,
    /// stderr, at most the cap.
    pub stderr: Vec<u8>,
}

impl Finished {
    /// Whether the run was killed for taking too long.
    pub fn timed_out(&self) -> bool {
        self.status.is_none()
    }
}

/// Limits for [`Running::finish`].
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The whole run must end within this.
    pub timeout: Duration,
    /// stdout bytes kept.
    pub stdout_cap: usize,
    /// stderr bytes kept.
    pub stderr_cap: usize,
}

/// Starts `command` with piped stdin/stdout/stderr in a new process group (Unix), killed when
/// dropped.
///
/// # Errors
/// The operating system's error when the program cannot be started.
pub fn spawn(mut command: Command) -> io::Result<Running> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    Ok(Running {
        child: retry_busy(|| command.spawn())?,
    })
}

/// Runs `spawn` again while it fails with "Text file busy" (`ETXTBSY`), at most 10 times, 20 ms
/// apart. Linux refuses to run a file that some process still has open for writing: a plugin the
/// user (or a test) has just written, while another thread forked and its child has not reached
/// `exec` yet (the inherited descriptor closes there). It passes within milliseconds.
///
/// # Errors
/// The last error, or the first that is not `ETXTBSY`.
pub fn retry_busy<T>(mut spawn: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let mut tries = 0;
    loop {
        match spawn() {
            Err(e) if e.kind() == io::ErrorKind::ExecutableFileBusy && tries < 10 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Reads `reader` to its end into `kept`, keeping the first `cap` bytes; sets `truncated` when
/// more came. What was read stays in `kept` even if the future is dropped (timeout).
async fn read_capped<R: AsyncRead + Unpin>(
    reader: Option<R>,
    cap: usize,
    kept: &mut Vec<u8>,
    truncated: &mut bool,
) {
    let Some(mut reader) = reader else {
        return;
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                if n > room {
                    *truncated = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

impl Running {
    /// The process id, if the process is still known.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Writes `stdin` (then closes it), reads stdout and stderr up to their caps while the process
    /// runs, and waits. On timeout the whole process group is killed and `status` is `None`.
    pub async fn finish(mut self, stdin: &[u8], limits: Limits) -> Finished {
        let pid = self.child.id();
        let input = self.child.stdin.take();
        let stdout = self.child.stdout.take();
        let stderr = self.child.stderr.take();
        let child = &mut self.child;
        let (mut out, mut out_truncated) = (Vec::new(), false);
        let (mut err, mut err_truncated) = (Vec::new(), false);
        let run = async {
            let write = async {
                if let Some(mut input) = input {
                    // A program that exits without reading its input is not an error.
                    let _ = input.write_all(stdin).await;
                    let _ = input.shutdown().await;
                }
            };
            let ((), (), (), status) = tokio::join!(
                write,
                read_capped(stdout, limits.stdout_cap, &mut out, &mut out_truncated),
                read_capped(stderr, limits.stderr_cap, &mut err, &mut err_truncated),
                child.wait(),
            );
            status.ok()
        };
        let outcome = tokio::time::timeout(limits.timeout, run).await;
        let status = match outcome {
            Ok(status) => status,
            Err(_) => {
                kill_group(pid);
                let _ = self.child.kill().await;
                None
            }
        };
        Finished {
            status,
            stdout: out,
            stdout_truncated: out_truncated,
            stderr: err,
        }
    }
}

/// Kills the process group led by `pid` (the child and everything it started).
pub fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// The signal that ended a process, if one did (Unix).
pub fn signal_of(status: &ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(status)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

/// `text` decoded as UTF-8 (invalid bytes → U+FFFD).
pub fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The last `n` characters of `text`.
pub fn last_chars(text: &str, n: usize) -> &str {
    let count = text.chars().count();
    if count <= n {
        return text;
    }
    let skip = count - n;
    text.char_indices()
        .nth(skip)
        .map_or(text, |(i, _)| &text[i..])
}
