//! Running `{plugin} --schema` / `--panel` synchronously (start-up has no async runtime of its own).

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long `--schema` and `--panel` may take (`docs/tool-rules.md#plugins`).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The output of a finished probe.
#[derive(Debug)]
pub(crate) struct ProbeOutput {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why a probe produced no output.
#[derive(Debug)]
pub(crate) enum ProbeFailure {
    /// The program could not be started.
    Spawn(std::io::Error),
    /// It ran longer than the timeout and was killed.
    TimedOut,
}

fn reader<R: Read + Send + 'static>(
    stream: Option<R>,
    cap: usize,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        if let Some(stream) = stream {
            let mut limited = stream.take(u64::try_from(cap).unwrap_or(u64::MAX));
            let _ = limited.read_to_end(&mut kept);
            // Drain the rest so the plugin never blocks on a full pipe.
            let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
        }
        kept
    })
}

/// Runs `{plugin} {flag}` with empty stdin in the plugin's directory, stdout capped at
/// `stdout_cap` bytes, killed (with its process group) after `timeout`.
pub(crate) fn run_flag(
    plugin: &Path,
    flag: &str,
    timeout: Duration,
    stdout_cap: usize,
) -> Result<ProbeOutput, ProbeFailure> {
    let mut command = Command::new(plugin);
    command
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = plugin.parent().filter(|d| !d.as_os_str().is_empty()) {
        command.current_dir(dir);
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = crate::process::retry_busy(|| command.spawn()).map_err(ProbeFailure::Spawn)?;
    let out = reader(child.stdout.take(), stdout_cap);
    let err = reader(child.stderr.take(), 65_536);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => break None,
        }
    };
    let Some(status) = status else {
        crate::process::kill_group(Some(child.id()));
        let _ = child.kill();
        let _ = child.wait();
        let _ = (out.join(), err.join());
        return Err(ProbeFailure::TimedOut);
    };
    // Stragglers (a background child keeping the pipes open) go with the group.
    crate::process::kill_group(Some(child.id()));
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(ProbeOutput {
        status,
        stdout,
        stderr,
    })
}
