//! # elroy-tools-due
//!
//! The 6 due-item tools of `docs/tools.md#due-items` over [`elroy_agenda::AgendaStore`]:
//! `create_due_item` (pins the new item, D13), `complete_due_item`, `delete_due_item` (unpins),
//! `print_due_item`, `rename_due_item` and `update_due_item_text`. Schemas and success strings are
//! Elroy 0.5.0's (K1, K3); trigger times accept relative forms and are shown in local time with
//! the offset (D7).

mod tools;

use elroy_core::{ToolRegistry, sync_tool};

pub use tools::{
    CloseDueItemArgs, CompleteDueItem, CreateDueItem, CreateDueItemArgs, DeleteDueItem,
    DeleteDueItemArgs, DueNameArgs, PrintDueItem, RenameDueItem, RenameDueItemArgs,
    UpdateDueItemText, UpdateDueItemTextArgs,
};

/// Registers the 6 due-item tools.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(CreateDueItem))
        .register(sync_tool(CompleteDueItem))
        .register(sync_tool(DeleteDueItem))
        .register(sync_tool(PrintDueItem))
        .register(sync_tool(RenameDueItem))
        .register(sync_tool(UpdateDueItemText));
}
