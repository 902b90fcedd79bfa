//! `add_agenda_item`, `complete_agenda_item`, `delete_agenda_item`, `add_agenda_item_update`,
//! `list_agenda_items` (`docs/tools.md#agenda`, `docs/tools.md#agenda`).

use elroy_agenda::AgendaStore;
use elroy_core::{
    Effect, Lineage, RecallItem, RecallKind, ToolArgs, ToolContext, ToolEffect, ToolError,
    ToolFamily, ToolOutput, TypedTool,
};
use serde_json::json;

use crate::{item_date, tool_error};

elroy_core::tool_args! {
    /// Arguments of `add_agenda_item`.
    pub struct AddAgendaItemArgs {
        text: String => "The agenda item text.",
        item_date: Option<String> => "ISO 8601 date string (YYYY-MM-DD). Defaults to today.",
    }
}

/// `add_agenda_item`: a new plain agenda item (`docs/tools.md#add_agenda_item`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AddAgendaItem;

impl TypedTool for AddAgendaItem {
    type Args = AddAgendaItemArgs;
    const NAME: &'static str = "add_agenda_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Add a new agenda item for a given date (defaults to today).";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let date = item_date(ctx, args.item_date.as_deref())?;
        let store = ctx.services.require::<AgendaStore>()?;
        let added = store
            .add_item(&args.text, date, ctx.time.now())
            .map_err(tool_error)?;
        Ok(ToolOutput::text(format!(
            "Agenda item added for {date}: {}",
            added.name
        )))
    }
}

/// Arguments of the tools that take only `item_name` (`complete_agenda_item`,
/// `delete_agenda_item`).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ItemNameArgs {
    /// The stem or a substring of it.
    pub item_name: String,
}

impl ToolArgs for ItemNameArgs {
    fn parameters() -> Option<Vec<elroy_core::ParamSpec>> {
        Some(vec![elroy_core::ParamSpec::new(
            "item_name",
            elroy_core::ParamType::String,
            "The file stem (name without .md) of the agenda item, or a substring of it.",
            true,
        )])
    }
}

/// `complete_agenda_item` (`docs/tools.md#complete_agenda_item`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CompleteAgendaItem;

impl TypedTool for CompleteAgendaItem {
    type Args = ItemNameArgs;
    const NAME: &'static str = "complete_agenda_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Mark an agenda item as completed.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let item = store.complete_item(&args.item_name).map_err(tool_error)?;
        Ok(ToolOutput::text(format!(
            "Agenda item '{}' marked as completed.",
            item.stem
        )))
    }
}

/// `delete_agenda_item` (`docs/tools.md#delete_agenda_item`); unpins the item (D13).
#[derive(Debug, Clone, Copy, Default)]
pub struct DeleteAgendaItem;

impl TypedTool for DeleteAgendaItem {
    type Args = ItemNameArgs;
    const NAME: &'static str = "delete_agenda_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Delete an agenda item permanently.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let item = store.delete_item(&args.item_name).map_err(tool_error)?;
        Ok(
            ToolOutput::text(format!("Agenda item '{}' deleted.", item.stem)).with_effect(
                Effect::Unpin(RecallItem {
                    memory_type: RecallKind::AgendaItem,
                    memory_id: item.id,
                }),
            ),
        )
    }
}

elroy_core::tool_args! {
    /// Arguments of `add_agenda_item_update`.
    pub struct AddAgendaItemUpdateArgs {
        item_name: String => "Agenda item stem or a unique substring match.",
        note: String => "Update text to append.",
    }
}

/// `add_agenda_item_update` (`docs/tools.md#add_agenda_item_update`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AddAgendaItemUpdate;

impl TypedTool for AddAgendaItemUpdate {
    type Args = AddAgendaItemUpdateArgs;
    const NAME: &'static str = "add_agenda_item_update";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Append a timestamped progress note to an agenda item.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let (item, stamp) = store
            .add_update(&args.item_name, &args.note, &ctx.time.now_local())
            .map_err(tool_error)?;
        Ok(ToolOutput::text(format!(
            "Update added to '{}' at {stamp}.",
            item.stem
        )))
    }
}

elroy_core::tool_args! {
    /// Arguments of `list_agenda_items`.
    pub struct ListAgendaItemsArgs {
        item_date: Option<String> => "ISO 8601 date string (YYYY-MM-DD). Defaults to today.",
    }
}

/// `list_agenda_items` (`docs/tools.md#list_agenda_items`): compact JSON of the active plain items
/// of a date. When agenda files cannot be read, `skipped_files` (their count) and `skipped`
/// (`{file, reason}` each) follow `items`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListAgendaItems;

impl TypedTool for ListAgendaItems {
    type Args = ListAgendaItemsArgs;
    const NAME: &'static str = "list_agenda_items";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "List agenda items for a given date (defaults to today).";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let date = item_date(ctx, args.item_date.as_deref())?;
        let store = ctx.services.require::<AgendaStore>()?;
        let (items, broken) = store.listing(date).map_err(tool_error)?;
        let items: Vec<serde_json::Value> = items
            .into_iter()
            .map(|i| {
                json!({
                    "name": i.stem,
                    "text": i.text,
                    "checklist_completed": i.checklist_completed,
                    "checklist_total": i.checklist_total,
                })
            })
            .collect();
        let mut listing = json!({"item_date": date.to_string(), "items": items});
        // Files that cannot be read are not silently left out: the listing says how many were
        // skipped, which, and why (their date is unknown, so every unreadable file counts).
        if !broken.is_empty() {
            listing["skipped_files"] = json!(broken.len());
            listing["skipped"] = broken
                .into_iter()
                .map(|(file, reason)| json!({"file": file, "reason": reason}))
                .collect();
        }
        Ok(ToolOutput::json(&listing))
    }
}
