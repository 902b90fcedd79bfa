//! [`Recorder`]: the call observer that commits what each tool call changed.

use serde_json::{Map, Value};

use elroy_core::{CallObserver, ToolContext, ToolResult};

use crate::VersionedHome;
use crate::home::tool_message;

/// Commits the store files a tool call changed as `{tool}: {paths}` (e.g.
/// `delete_agenda_item: agenda/Water_the_plants.md`). Installed on the registry by the runtime
/// ([`elroy_core::ToolRegistry::set_call_observer`]), so direct calls, model turns and MCP calls are
/// all recorded. A call that changed nothing costs one status walk and makes no commit; a commit
/// that fails is logged (`tracing::warn!`) and never fails the call.
#[derive(Debug, Clone)]
pub struct Recorder {
    home: VersionedHome,
}

impl Recorder {
    /// A recorder for `home`.
    pub fn new(home: VersionedHome) -> Self {
        Recorder { home }
    }
}

impl CallObserver for Recorder {
    fn tool_called(
        &self,
        ctx: &ToolContext,
        name: &str,
        _arguments: &Map<String, Value>,
        _result: &ToolResult,
    ) {
        match self
            .home
            .commit_changes(ctx.time.now(), &|paths| tool_message(name, paths))
        {
            Ok(Some(id)) => tracing::debug!(tool = name, commit = %id, "versioned home: committed"),
            Ok(None) => {}
            Err(e) => tracing::warn!(tool = name, "versioned home: could not commit: {e}"),
        }
    }
}
