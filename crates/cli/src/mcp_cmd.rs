//! `elroy mcp`: serves every registered tool over the Model Context Protocol on stdin/stdout
//! (the server itself is `elroy-mcp`). Stdout carries the protocol only; warnings go to stderr.

use std::process::ExitCode;

use elroy_config::Config;
use elroy_runtime::Runtime;

pub(crate) fn run(config: Config) -> Result<ExitCode, String> {
    let runtime = Runtime::open(config).map_err(|e| e.to_string())?;
    for warning in &runtime.warnings {
        crate::output::eprintln(&format!("warning: {warning}"));
    }
    crate::block_on(elroy_mcp::serve_stdio(runtime))?.map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}
