//! `elroy remember [TEXT] [--name NAME]`: stores a memory without a model turn.
//!
//! The memory is created by the `create_memory` tool as a direct call, so it is written, indexed,
//! op-tracked, sourced from the current context version and pinned exactly as when the model
//! creates one (`docs/tools.md#create_memory`).

use std::process::ExitCode;

use clap::Args;
use elroy_config::Config;
use elroy_runtime::Runtime;

/// `elroy remember …`
#[derive(Debug, Args)]
pub struct RememberArgs {
    /// The text to remember; read from standard input when omitted
    pub text: Option<String>,
    /// The memory's name (default: the text's first line, cut to 60 characters)
    #[arg(long)]
    pub name: Option<String>,
}

pub(crate) fn run(config: Config, args: &RememberArgs) -> Result<ExitCode, String> {
    let text = crate::text_or_stdin(args.text.as_deref(), "the memory")?;
    if text.trim().is_empty() {
        return Err("nothing to remember: the text is empty".to_owned());
    }
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| elroy_commands::default_memory_name(&text));
    let runtime = Runtime::open_for_command(config).map_err(|e| e.to_string())?;
    let arguments = serde_json::json!({ "name": name, "text": text }).to_string();
    let result = crate::block_on(runtime.call_tool("create_memory", Some(&arguments)))?;
    crate::print_tool_result(&result)
}
