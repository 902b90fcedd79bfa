//! # elroy-tools-builtin
//!
//! Every built-in tool family in one registry. Each family crate exposes
//! `pub fn register(registry: &mut ToolRegistry)`; this crate calls them all. Plugins are not
//! included (the runtime adds them).

use elroy_core::ToolRegistry;

mod schema_doc;

pub use schema_doc::{SCHEMA_DOC_PATH, own_tool_names, tools_schema_markdown};

/// A registry holding every built-in tool (`docs/tools.md`), registered family by family in the
/// order `docs/tools.md` presents them.
pub fn builtin_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    // One line per tool family, in the order docs/tools.md presents them.
    elroy_tools_agenda::register(&mut registry);
    elroy_tools_due::register(&mut registry);
    elroy_tools_memory::register(&mut registry);
    elroy_tools_notebook::register(&mut registry);
    elroy_tools_feature_requests::register(&mut registry);
    elroy_tools_user::register(&mut registry);
    elroy_tools_session::register(&mut registry);
    elroy_tools_restart::register(&mut registry);
    elroy_tools_fs::register(&mut registry);
    elroy_tools_web::register(&mut registry);
    elroy_tools_codex::register(&mut registry);
    registry
}
