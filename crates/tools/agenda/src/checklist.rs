//! The checklist tools (`docs/tools.md#agenda`).

use elroy_agenda::AgendaStore;
use elroy_core::{Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool};

use crate::tool_error;

elroy_core::tool_args! {
    /// Arguments of `add_agenda_checklist_item`.
    pub struct AddAgendaChecklistItemArgs {
        item_name: String => "Agenda item stem or a unique substring match.",
        text: String => "Checklist item text.",
        due_date: Option<String> => "Optional ISO date string (YYYY-MM-DD).",
    }
}

/// `add_agenda_checklist_item` (`docs/tools.md#add_agenda_checklist_item`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AddAgendaChecklistItem;

impl TypedTool for AddAgendaChecklistItem {
    type Args = AddAgendaChecklistItemArgs;
    const NAME: &'static str = "add_agenda_checklist_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Add a checklist sub-task to an agenda item.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let (item, id) = store
            .add_checklist_item(&args.item_name, &args.text, args.due_date.as_deref())
            .map_err(tool_error)?;
        Ok(ToolOutput::text(format!(
            "Checklist item {id} added to '{}'.",
            item.stem
        )))
    }
}

elroy_core::tool_args! {
    /// Arguments of `complete_agenda_checklist_item`.
    pub struct CompleteAgendaChecklistItemArgs {
        item_name: String => "Agenda item stem or a unique substring match.",
        checklist_item_id: i64 => "Checklist entry id to complete.",
    }
}

/// `complete_agenda_checklist_item` (`docs/tools.md#complete_agenda_checklist_item`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CompleteAgendaChecklistItem;

impl TypedTool for CompleteAgendaChecklistItem {
    type Args = CompleteAgendaChecklistItemArgs;
    const NAME: &'static str = "complete_agenda_checklist_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Mark a single checklist sub-task as completed.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let item = store
            .complete_checklist_item(&args.item_name, args.checklist_item_id)
            .map_err(tool_error)?;
        Ok(ToolOutput::text(format!(
            "Checklist item {} on '{}' marked as completed.",
            args.checklist_item_id, item.stem
        )))
    }
}

elroy_core::tool_args! {
    /// Arguments of `edit_agenda_checklist_item`.
    pub struct EditAgendaChecklistItemArgs {
        item_name: String => "Agenda item stem or a unique substring match.",
        checklist_item_id: i64 => "Checklist entry id to edit.",
        new_text: String => "Replacement text.",
    }
}

/// `edit_agenda_checklist_item` (`docs/tools.md#edit_agenda_checklist_item`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EditAgendaChecklistItem;

impl TypedTool for EditAgendaChecklistItem {
    type Args = EditAgendaChecklistItemArgs;
    const NAME: &'static str = "edit_agenda_checklist_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Update the text of an agenda checklist item.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let item = store
            .edit_checklist_item(&args.item_name, args.checklist_item_id, &args.new_text)
            .map_err(tool_error)?;
        Ok(ToolOutput::text(format!(
            "Checklist item {} on '{}' updated.",
            args.checklist_item_id, item.stem
        )))
    }
}
