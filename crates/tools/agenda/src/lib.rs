//! # elroy-tools-agenda
//!
//! The agenda tools of `docs/tools.md#agenda` over [`elroy_agenda::AgendaStore`]:
//! `add_agenda_item`, `add_agenda_checklist_item`, `add_agenda_item_update`,
//! `complete_agenda_checklist_item`, `complete_agenda_item`, `delete_agenda_item`,
//! `edit_agenda_checklist_item` and `list_agenda_items`. Schemas are Elroy 0.5.0's (K1), success
//! strings too (K3); failures follow the error contract (D1). Tools find the store with
//! `ctx.services.require::<AgendaStore>()` and take "now" and the zone from `ctx.time`.

mod checklist;
mod items;

use elroy_core::{ToolError, ToolFamily, ToolRegistry, sync_tool};

pub use checklist::{
    AddAgendaChecklistItem, AddAgendaChecklistItemArgs, CompleteAgendaChecklistItem,
    CompleteAgendaChecklistItemArgs, EditAgendaChecklistItem, EditAgendaChecklistItemArgs,
};
pub use items::{
    AddAgendaItem, AddAgendaItemArgs, AddAgendaItemUpdate, AddAgendaItemUpdateArgs,
    CompleteAgendaItem, DeleteAgendaItem, ItemNameArgs, ListAgendaItems, ListAgendaItemsArgs,
};

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Agenda",
    guide: "Dated to-do items, one markdown file each in `agenda/` (front matter with the date, \
            status and checklist; the text and a `## Updates` log as the body). An item is named \
            by its file stem or a unique part of it. Completing an item keeps its file; deleting \
            removes it.",
};

/// Registers the agenda tools, in the order `docs/tools.md` lists them.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(AddAgendaItem))
        .register(sync_tool(ListAgendaItems))
        .register(sync_tool(AddAgendaItemUpdate))
        .register(sync_tool(AddAgendaChecklistItem))
        .register(sync_tool(EditAgendaChecklistItem))
        .register(sync_tool(CompleteAgendaChecklistItem))
        .register(sync_tool(CompleteAgendaItem))
        .register(sync_tool(DeleteAgendaItem));
}

/// Store failures become tool errors with the same message.
pub(crate) fn tool_error(e: elroy_agenda::AgendaError) -> ToolError {
    e.to_tool_error()
}

/// Parses an optional `item_date`, defaulting to today (`docs/tools.md#add_agenda_item` step 1).
pub(crate) fn item_date(
    ctx: &elroy_core::ToolContext,
    item_date: Option<&str>,
) -> Result<jiff::civil::Date, ToolError> {
    match item_date {
        None => Ok(ctx.time.today()),
        Some(text) => elroy_agenda::parse_item_date(text).ok_or_else(|| {
            ToolError::new(format!("Invalid date format '{text}'. Use YYYY-MM-DD."))
        }),
    }
}
