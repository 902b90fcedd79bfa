//! Effects of direct tool calls, applied to the active context window (`orchestrator.md` §7.4).

use elroy_core::{Effect, Message, Services, TimeContext, UserInfo};

/// The active context window plus nothing else (a direct call has no turn), for
/// `ToolContext::conversation`. Empty until a transcript store is registered.
pub(crate) fn active_conversation(_services: &Services, _user: &UserInfo) -> Vec<Message> {
    Vec::new()
}

/// Applies `effects` of a direct call as one context version.
///
/// Until a transcript store is registered there is no context window to change: the effects stay
/// in the [`elroy_core::ToolResult`] for the caller.
pub(crate) fn apply_direct(
    _services: &Services,
    _user: &UserInfo,
    _time: &TimeContext,
    effects: &[Effect],
) -> Result<(), String> {
    Err(format!(
        "no transcript store is open; {} effect(s) left unapplied",
        effects.len()
    ))
}
