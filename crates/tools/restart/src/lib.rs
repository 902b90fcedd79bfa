//! # elroy-tools-restart
//!
//! `restart_session` (`docs/tools.md#restart_session`): in a front-end that can restart (the
//! interactive chat,
//! [`Capabilities::can_restart`](elroy_core::Capabilities)), it answers
//! `Restart scheduled. Elroy will restart after this response completes.` and returns a
//! [`Effect::Restart`] with the resume message; elsewhere (one-shot messages, direct tool calls,
//! background turns) it fails with `Session restart is not available in this Elroy runtime.`
//! What happens next is `docs/behaviour.md#restarting-a-session` (the chat re-executes itself with
//! `ELROY_RESTART_RESUME_MESSAGE`).

use elroy_core::{
    Effect, Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, ToolRegistry,
    TypedTool, sync_tool,
};

/// The resume message when the model gives none (`docs/tools.md#restart_session`).
pub const DEFAULT_RESUME_MESSAGE: &str =
    "Elroy just restarted. Send a brief message that you are back and ready to continue.";

/// The result text when a restart is scheduled.
pub const SCHEDULED: &str = "Restart scheduled. Elroy will restart after this response completes.";

/// The error message where the front-end cannot restart.
pub const NOT_AVAILABLE: &str = "Session restart is not available in this Elroy runtime.";

elroy_core::tool_args! {
    /// Arguments of `restart_session`.
    pub struct RestartArgs {
        resume_message: Option<String> => "Hidden prompt injected after restart to trigger the assistant's first reply",
    }
}

/// The `restart_session` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct RestartSession;

impl TypedTool for RestartSession {
    type Args = RestartArgs;
    const NAME: &'static str = "restart_session";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&elroy_tools_session::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    // Not in the palette: the model's way to reload elroy after a change; a person leaves and starts elroy.
    const IN_PALETTE: bool = false;
    const DESCRIPTION: &'static str =
        "Restart the active Elroy session after the current response completes.";

    fn run(&self, ctx: &ToolContext, args: RestartArgs) -> Result<ToolOutput, ToolError> {
        if !ctx.capabilities.can_restart {
            return Err(ToolError::new(NOT_AVAILABLE));
        }
        let resume_message = args
            .resume_message
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_RESUME_MESSAGE.to_owned());
        Ok(ToolOutput::text(SCHEDULED).with_effect(Effect::Restart { resume_message }))
    }
}

/// Registers `restart_session`.
pub fn register(registry: &mut ToolRegistry) {
    registry.register(sync_tool(RestartSession));
}
