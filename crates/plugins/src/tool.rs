//! Calling a plugin tool (`docs/tool-rules.md#plugins`, "Calling a plugin tool").

use std::path::PathBuf;
use std::time::Duration;

use elroy_core::{BoxFuture, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, ValidatedArgs};
use tokio::process::Command;

use crate::process::{self, Limits, last_chars, lossy, signal_of};
use crate::trust::TrustStore;

/// stdout kept from a plugin call.
pub const STDOUT_CAP: usize = 1_048_576;
/// stderr kept from a plugin call.
pub const STDERR_CAP: usize = 65_536;

/// A tool backed by a plugin executable.
#[derive(Debug, Clone)]
pub struct PluginTool {
    spec: ToolSpec,
    path: PathBuf,
    timeout_seconds: u64,
    trust: TrustStore,
}

impl PluginTool {
    /// A tool named and described by `spec`, run as `path`, killed after `timeout_seconds`
    /// (config `plugin_timeout_seconds`), run only while `trust` trusts `path` as it is then.
    pub fn new(spec: ToolSpec, path: PathBuf, timeout_seconds: u64, trust: TrustStore) -> Self {
        PluginTool {
            spec,
            path,
            timeout_seconds,
            trust,
        }
    }

    /// The executable.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    async fn invoke(
        &self,
        ctx: &ToolContext,
        args: ValidatedArgs,
    ) -> Result<ToolOutput, ToolError> {
        // Changed (by hand, by Codex) or untrusted since the session started: not run.
        self.trust
            .verify(&self.path)
            .map_err(|e| ToolError::new(e.to_string()))?;
        let mut stdin = serde_json::Value::Object(args.into_map()).to_string();
        stdin.push('\n');
        let mut command = Command::new(&self.path);
        if ctx.cwd.is_dir() {
            command.current_dir(&ctx.cwd);
        }
        command
            .env("ELROY_TOOL_NAME", &self.spec.name)
            .env("ELROY_HOME", &ctx.user.elroy_home)
            .env("ELROY_USER_TOKEN", &ctx.user.token)
            .env("ELROY_USER_HOME", &ctx.user.user_home);
        let running = process::spawn(command)
            .map_err(|e| format!("unable to run plugin {}: {e}", self.path.display()))?;
        let finished = running
            .finish(
                stdin.as_bytes(),
                Limits {
                    timeout: Duration::from_secs(self.timeout_seconds),
                    stdout_cap: STDOUT_CAP,
                    stderr_cap: STDERR_CAP,
                },
            )
            .await;
        let Some(status) = finished.status else {
            return Err(ToolError::new(format!(
                "plugin timed out after {} seconds",
                self.timeout_seconds
            )));
        };
        if status.success() {
            let mut out = lossy(&finished.stdout);
            if out.ends_with("\r\n") {
                out.truncate(out.len() - 2);
            } else if out.ends_with('\n') {
                out.truncate(out.len() - 1);
            }
            if out.is_empty() && !finished.stdout_truncated {
                out = "Success".to_owned();
            }
            if finished.stdout_truncated {
                out.push_str(&format!("\n[output truncated at {STDOUT_CAP} bytes]"));
            }
            return Ok(ToolOutput::text(out));
        }
        if let Some(signal) = signal_of(&status) {
            return Err(ToolError::new(format!(
                "plugin terminated by signal {signal}"
            )));
        }
        let stderr = lossy(&finished.stderr);
        let stderr = stderr.trim();
        if stderr.is_empty() {
            Err(ToolError::new(format!(
                "plugin exited with status {}",
                status.code().unwrap_or(-1)
            )))
        } else {
            Err(ToolError::new(last_chars(stderr, 4000)))
        }
    }
}

impl Tool for PluginTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: ValidatedArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.invoke(ctx, args))
    }
}
