//! `elroy remember [TEXT] [--name NAME]`: stores a memory without a model turn.
//!
//! The memory is created by the `create_memory` tool as a direct call, so it is written, indexed,
//! op-tracked, sourced from the current context version and pinned exactly as when the model
//! creates one (`docs/tools.md#create_memory`).

use std::process::ExitCode;

use crate::output;

use clap::Args;
use elroy_config::Config;
use elroy_runtime::Runtime;

/// The longest default name, in characters (`DESIGN.md`, the CLI table).
pub const DEFAULT_NAME_CHARS: usize = 60;

/// `elroy remember …`
#[derive(Debug, Args)]
pub struct RememberArgs {
    /// The text to remember; read from standard input when omitted
    pub text: Option<String>,
    /// The memory's name (default: the text's first line, cut to 60 characters)
    #[arg(long)]
    pub name: Option<String>,
}

/// The default name of a memory: the first non-blank line of `text`, trimmed, cut to
/// [`DEFAULT_NAME_CHARS`] characters.
pub fn default_name(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .chars()
        .take(DEFAULT_NAME_CHARS)
        .collect::<String>()
        .trim_end()
        .to_owned()
}

pub(crate) fn run(config: Config, args: &RememberArgs) -> Result<ExitCode, String> {
    let text = crate::text_or_stdin(args.text.as_deref(), "the memory")?;
    if text.trim().is_empty() {
        return Err("nothing to remember: the text is empty".to_owned());
    }
    let name = args.name.clone().unwrap_or_else(|| default_name(&text));
    let runtime = Runtime::open(config).map_err(|e| e.to_string())?;
    for warning in &runtime.warnings {
        output::eprintln(&format!("warning: {warning}"));
    }
    let arguments = serde_json::json!({ "name": name, "text": text }).to_string();
    let result = crate::block_on(runtime.call_tool("create_memory", Some(&arguments)))?;
    if result.is_error {
        output::eprintln(&result.content);
        return Ok(ExitCode::FAILURE);
    }
    output::println(&result.content)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names() {
        assert_eq!(default_name("Buy milk\nand eggs"), "Buy milk");
        assert_eq!(
            default_name("\n  \n  Dentist on Friday  \nmore"),
            "Dentist on Friday"
        );
        let long = "é".repeat(70);
        assert_eq!(default_name(&long).chars().count(), 60);
        assert_eq!(default_name(""), "");
    }
}
