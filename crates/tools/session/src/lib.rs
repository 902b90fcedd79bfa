//! # elroy-tools-session
//!
//! The session and time tools of `docs/tools.md#get_current_date` and
//! `docs/tools.md#get_fast_recall`: `get_current_date` and `get_fast_recall`, and the Session
//! [`FAMILY`] they share with `restart_session` (`docs/tools.md#restart_session`, in
//! elroy-tools-restart; the front ends that can restart apply its effect).

use elroy_core::{
    Lineage, NoArgs, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, ToolRegistry,
    TypedTool, sync_tool,
};

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Session",
    guide: "The clock (`ELROY_NOW` fixes it for scripted runs) and the conversation itself.",
};

/// Registers `get_current_date` and `get_fast_recall`.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(GetCurrentDate))
        .register(sync_tool(GetFastRecall));
}

/// Now in the configured zone as `%A, %B %d, %Y %I:%M %p %Z`, e.g.
/// `Monday, November 30, 2026 09:23 AM IST` (D7: the configured zone; Elroy uses the system zone).
#[derive(Debug, Clone, Copy, Default)]
pub struct GetCurrentDate;

impl TypedTool for GetCurrentDate {
    type Args = NoArgs;
    const NAME: &'static str = "get_current_date";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    // Not in the palette: tells the model the date; the person has a clock.
    const IN_PALETTE: bool = false;
    const DESCRIPTION: &'static str = "Returns the current date and time.";

    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format_display_time(&ctx.time.now_local())))
    }
}

/// The human display of an instant used by `get_current_date` and the session-context text
/// (`docs/formats.md#displayed-times`): `%A, %B %d, %Y %I:%M %p %Z`.
pub fn format_display_time(now: &jiff::ZonedDateTime) -> String {
    now.strftime("%A, %B %d, %Y %I:%M %p %Z").to_string()
}

/// A no-op that answers `OK`, so a model imitating the synthetic recall pairs is harmless
/// (`docs/tools.md#get_fast_recall`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GetFastRecall;

impl TypedTool for GetFastRecall {
    type Args = NoArgs;
    const NAME: &'static str = "get_fast_recall";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    // Not in the palette: a no-op the model answers synthetic recall context with.
    const IN_PALETTE: bool = false;
    const DESCRIPTION: &'static str = "No-op tool used to acknowledge synthetic recall context.";

    fn run(&self, _: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("OK"))
    }
}
