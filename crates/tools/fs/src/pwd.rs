//! `pwd` (`docs/tools.md#pwd`).

use elroy_core::{NoArgs, ToolContext, ToolEffect, ToolError, ToolOutput, TypedTool};

/// Returns the absolute working directory of the call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pwd;

impl TypedTool for Pwd {
    type Args = NoArgs;
    const NAME: &'static str = "pwd";
    // Its target is the working directory (no argument names another).
    const EFFECT: ToolEffect = ToolEffect::reads_path("path");
    const DESCRIPTION: &'static str =
        "Return the current working directory for filesystem tool calls.";

    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(ctx.cwd.to_string_lossy()))
    }
}
