//! placeholder while the workspace is laid out

use elroy_core::ToolRegistry;

/// Registers this family's tools.
pub fn register(_registry: &mut ToolRegistry) {}
