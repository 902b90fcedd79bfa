//! `elroy tools list | schema | call`.

use std::process::ExitCode;

use elroy_config::Config;
use elroy_core::{ToolOrigin, ToolRegistry, pyjson};
use elroy_runtime::Runtime;

/// `elroy tools …`
#[derive(Debug, clap::Args)]
pub struct ToolsArgs {
    /// What to do with the tools
    #[command(subcommand)]
    pub command: ToolsCommand,
}

/// `elroy tools` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ToolsCommand {
    /// List every registered tool (built-in, then plugins, then the tools of the configured MCP servers, which are started for it) with its description
    List {
        /// Print names only, one per line
        #[arg(long)]
        names: bool,
    },
    /// Print the schema of one tool, or of all tools, as the model sees it (OpenAI tool JSON)
    Schema {
        /// The tool (all tools when omitted)
        name: Option<String>,
    },
    /// Call a tool as the model would, print its result; exits 1 with the error on stderr when the call fails
    #[command(
        after_help = "Examples:\n  elroy tools call read_file --args '{\"path\":\"Cargo.toml\",\"start_line\":2,\"end_line\":3}'\n  elroy tools call get_current_date"
    )]
    Call {
        /// The tool name (see `elroy tools list`)
        name: String,
        /// Arguments as a JSON object; absent or "" means {}
        #[arg(long, value_name = "JSON")]
        args: Option<String>,
    },
}

pub(crate) fn run(config: Config, args: &ToolsArgs) -> Result<ExitCode, String> {
    let runtime = Runtime::open_for_command(config).map_err(|e| e.to_string())?;
    match &args.command {
        ToolsCommand::List { names } => list(&runtime, *names),
        ToolsCommand::Schema { name } => schema(&runtime, name.as_deref()),
        ToolsCommand::Call { name, args } => call(&runtime, name, args.as_deref()),
    }
}

/// The registry with the configured MCP servers' tools (every server started and waited for,
/// each at most `mcp_startup_timeout_seconds`; one that fails is a warning on stderr).
fn ready_registry(runtime: &Runtime) -> Result<ToolRegistry, String> {
    Ok(crate::block_on(runtime.registry.ready())?)
}

fn list(runtime: &Runtime, names_only: bool) -> Result<ExitCode, String> {
    let registry = &ready_registry(runtime)?;
    let width = registry.names().iter().map(|n| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for spec in registry.specs() {
        if names_only {
            out.push_str(&spec.name);
            out.push('\n');
            continue;
        }
        let summary = spec.description.lines().next().unwrap_or_default();
        let origin = match registry.origin(&spec.name) {
            Some(ToolOrigin::Plugin { path }) => format!(" [plugin: {}]", path.display()),
            Some(ToolOrigin::Mcp { server, .. }) => format!(" [mcp: {server}]"),
            _ => String::new(),
        };
        // The effect class (home, read, network, execute) in a column of its own.
        out.push_str(&format!(
            "{:width$}  {:<7}  {summary}{origin}\n",
            spec.name,
            spec.effect.class.as_str()
        ));
    }
    print(&out)
}

fn schema(runtime: &Runtime, name: Option<&str>) -> Result<ExitCode, String> {
    let value = match name {
        // One tool: only the MCP servers its name could belong to are started.
        Some(name) => match crate::block_on(runtime.registry.find(name))? {
            Some(found) => found.tool.spec().to_json(),
            None => return Err(runtime.registry.unknown_tool_message(name)),
        },
        None => serde_json::Value::Array(
            ready_registry(runtime)?
                .specs()
                .iter()
                .map(|s| s.to_json())
                .collect(),
        ),
    };
    print(&format!("{}\n", pyjson::dumps_indent2(&value)))
}

fn call(runtime: &Runtime, name: &str, args: Option<&str>) -> Result<ExitCode, String> {
    crate::print_tool_result(&crate::block_on(runtime.call_tool(name, args))?)
}

/// Writes to stdout through the CLI's output path (a closed pipe is not an error).
fn print(text: &str) -> Result<ExitCode, String> {
    crate::output::print(text)?;
    Ok(ExitCode::SUCCESS)
}
