//! `elroy mcp`: serves every registered tool over the Model Context Protocol on stdin/stdout
//! (the server itself is `elroy-mcp`). Stdout carries the protocol only; warnings go to stderr.
//! `elroy mcp list`: the MCP servers elroy is a client of, started, with their tools or why they
//! failed.

use std::process::ExitCode;

use elroy_config::Config;
use elroy_mcp_client::Phase;
use elroy_runtime::Runtime;

/// `elroy mcp [list]`
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Without a subcommand: serve elroy's own tools on stdin/stdout (the tools of the servers
    /// elroy uses are not re-exported)
    #[command(subcommand)]
    pub command: Option<McpCommand>,
}

/// `elroy mcp` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// Start every configured MCP server (mcp_servers, --mcp-config), list each one's tools as elroy names them, and say which failed and why; exits 1 when one failed
    List,
}

pub(crate) fn run(config: Config, args: &McpArgs) -> Result<ExitCode, String> {
    match args.command {
        None => serve(config),
        Some(McpCommand::List) => list(config),
    }
}

/// `elroy mcp list`: one block per server (name, transport, state), its tools indented; exit 1
/// when a server failed.
fn list(config: Config) -> Result<ExitCode, String> {
    if config.mcp_servers.is_empty() {
        crate::output::print(
            "No MCP servers are configured (mcp_servers in elroy.conf.yaml, or --mcp-config FILE); see README, \"Use other MCP servers\".\n",
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    // Failures are printed below, once; the log has them too.
    let runtime =
        Runtime::open_with(config, elroy_runtime::logged_warnings()).map_err(|e| e.to_string())?;
    for warning in &runtime.warnings {
        crate::output::eprintln(&format!("warning: {warning}"));
    }
    let Some(mcp) = &runtime.mcp else {
        return Ok(ExitCode::SUCCESS);
    };
    let statuses = crate::block_on(mcp.start_and_wait())?;
    let mut out = String::new();
    let mut failed = 0;
    for status in &statuses {
        match &status.phase {
            Phase::Ready => out.push_str(&format!(
                "{} ({}): ready, {} tool{}\n",
                status.name,
                status.kind,
                status.tools.len(),
                if status.tools.len() == 1 { "" } else { "s" }
            )),
            Phase::Failed(reason) => {
                failed += 1;
                out.push_str(&format!(
                    "{} ({}): failed: {reason}\n",
                    status.name, status.kind
                ));
            }
            Phase::Starting | Phase::NotStarted => {
                out.push_str(&format!(
                    "{} ({}): still starting\n",
                    status.name, status.kind
                ));
            }
        }
        let width = status.tools.iter().map(|t| t.0.len()).max().unwrap_or(0);
        for (name, summary) in &status.tools {
            out.push_str(&format!("  {name:width$}  {summary}\n"));
        }
    }
    crate::output::print(&out)?;
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn serve(config: Config) -> Result<ExitCode, String> {
    let runtime = Runtime::open_for_command(config).map_err(|e| e.to_string())?;
    // Memories lacking a vector of the configured embedding model are embedded in the
    // background while the server answers; progress to the log and stderr (stdout is the
    // protocol's).
    let _embedding = runtime.start_background_embedding(elroy_runtime::reembed::stderr_progress());
    match crate::block_on(elroy_mcp::serve_stdio(runtime))? {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // The client went away (`elroy mcp | true`): nothing to tell anyone, as with every other
        // command that prints to a closed pipe.
        Err(e) if e.is_broken_pipe() => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.to_string()),
    }
}
