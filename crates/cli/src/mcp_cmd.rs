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
    match crate::block_on(elroy_mcp::serve_stdio(runtime))? {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // The client went away (`elroy mcp | true`): nothing to tell anyone, as with every other
        // command that prints to a closed pipe.
        Err(e) if is_broken_pipe(&e) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e.to_string()),
    }
}

/// Whether `error` comes from writing to a closed pipe: an `io::Error` of kind `BrokenPipe`
/// somewhere in its source chain, or (rmcp's transport errors carry the OS error only as text)
/// its text.
fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || e.to_string().contains("Broken pipe (os error 32)")
        {
            return true;
        }
        current = e.source();
    }
    false
}
