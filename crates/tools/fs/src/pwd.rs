//! `pwd` (`docs/tools.md#pwd`).

use elroy_core::{
    Lineage, NoArgs, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool,
};

/// Returns the absolute working directory of the call.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pwd;

impl TypedTool for Pwd {
    type Args = NoArgs;
    const NAME: &'static str = "pwd";
    // Its target is the working directory (no argument names another).
    const EFFECT: ToolEffect = ToolEffect::reads_path("path");
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str =
        "Return the current working directory for filesystem tool calls.";

    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(ctx.cwd.to_string_lossy()))
    }
}
