//! The due-item tools (`docs/tools.md#due-items`).

use elroy_agenda::{
    AgendaError, AgendaStore, NewDueItem, format_local_with_offset, format_spoken_instant,
    understand_trigger,
};
use elroy_core::{
    Effect, Lineage, RecallItem, RecallKind, ToolContext, ToolEffect, ToolError, ToolFamily,
    ToolOutput, TypedTool,
};

fn tool_error(e: AgendaError) -> ToolError {
    e.to_tool_error()
}

fn agenda_item(id: i64) -> RecallItem {
    RecallItem {
        memory_type: RecallKind::AgendaItem,
        memory_id: id,
    }
}

elroy_core::tool_args! {
    /// Arguments of `create_due_item`.
    pub struct CreateDueItemArgs {
        name: String => "Name of the due item. Must be unique.",
        text: String => "The item text to display when triggered.",
        trigger_time: Option<String> => "Trigger time in ``YYYY-MM-DD HH:MM`` format.",
        trigger_context: Option<String> => "Description of the triggering context or situation.",
    }
}

/// `create_due_item` (`docs/tools.md#create_due_item`): returns `Pin(("AgendaItem", id))`.
/// `trigger_time` is read by [`understand_trigger`]: Elroy 0.5.0's formats, times as people say
/// them, and repetitions, which store their rule in the `recurrence` key. When it was
/// not one of Elroy's formats, the success text keeps Elroy's sentence and adds what was
/// understood: `… created for tomorrow 9am (Wed 2026-03-18 09:00 +01:00).`, for a repetition with
/// its rule in words.
#[derive(Debug, Clone, Copy, Default)]
pub struct CreateDueItem;

impl TypedTool for CreateDueItem {
    type Args = CreateDueItemArgs;
    const NAME: &'static str = "create_due_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str =
        "Create a due item that can be triggered by time and/or context.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let now = ctx.time.now_local();
        let understood = match args.trigger_time.as_deref() {
            Some(text) => Some(
                understand_trigger(text, &now, ctx.time.day_start)
                    .map_err(|e| ToolError::new(e.to_string()))?,
            ),
            None => None,
        };
        let store = ctx.services.require::<AgendaStore>()?;
        let item = store
            .create_due_item_repeating(
                &NewDueItem {
                    name: &args.name,
                    text: &args.text,
                    trigger: understood.as_ref().map(|u| u.at),
                    trigger_context: args.trigger_context.as_deref(),
                },
                understood.as_ref().and_then(|u| u.recurrence.as_ref()),
                &now,
            )
            .map_err(tool_error)?;
        let name = &args.name;
        // Elroy's sentence; what was understood added when the time was said another way.
        let time = args.trigger_time.as_deref().map(|time| match &understood {
            Some(u) if !u.elroy_form => format!("{time} ({})", u.resolved(&ctx.time.tz)),
            _ => time.to_owned(),
        });
        let content = match (&time, &args.trigger_context) {
            (Some(time), Some(context)) => format!(
                "Hybrid due item '{name}' has been created for {time} and context: {context}."
            ),
            (Some(time), None) => format!("Timed due item '{name}' has been created for {time}."),
            _ => format!("Contextual due item '{name}' has been created."),
        };
        Ok(ToolOutput::text(content).with_effect(Effect::Pin(agenda_item(item.id))))
    }
}

elroy_core::tool_args! {
    /// Arguments of `complete_due_item`.
    pub struct CloseDueItemArgs {
        name: String => "Name of the due item to complete.",
        closing_comment: Option<String> => "Optional note explaining why it was completed.",
    }
}

/// `complete_due_item` (`docs/tools.md#complete_due_item`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CompleteDueItem;

impl TypedTool for CompleteDueItem {
    type Args = CloseDueItemArgs;
    const NAME: &'static str = "complete_due_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Mark a due item as completed.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let occurrence = store
            .complete_due_occurrence(
                &args.name,
                args.closing_comment.as_deref(),
                false,
                ctx.time.now(),
                &ctx.time.tz,
            )
            .map_err(tool_error)?;
        let name = &args.name;
        let mut content = match &args.closing_comment {
            Some(comment) => {
                format!("Due item '{name}' has been marked as completed. Comment: {comment}")
            }
            None => format!("Due item '{name}' has been marked as completed."),
        };
        // A repeating item: this occurrence is done; say when the next one is.
        match (occurrence.next, &occurrence.rule) {
            (Some(next), Some(rule)) => content.push_str(&format!(
                " It repeats {rule}: next on {}.",
                format_spoken_instant(next, &ctx.time.tz)
            )),
            (None, Some(rule)) => {
                content.push_str(&format!(" That was the last occurrence of {rule}."));
            }
            _ => {}
        }
        Ok(ToolOutput::text(content))
    }
}

elroy_core::tool_args! {
    /// Arguments of `delete_due_item`.
    pub struct DeleteDueItemArgs {
        name: String => "Name of the due item to delete.",
        closing_comment: Option<String> => "Optional note explaining why it was deleted.",
    }
}

/// `delete_due_item` (`docs/tools.md#delete_due_item`): removes the file; returns
/// `Unpin(("AgendaItem", id))`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeleteDueItem;

impl TypedTool for DeleteDueItem {
    type Args = DeleteDueItemArgs;
    const NAME: &'static str = "delete_due_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Delete a due item permanently.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let item = store.delete_due_item(&args.name).map_err(tool_error)?;
        let name = &args.name;
        let content = match &args.closing_comment {
            Some(comment) => format!("Due item '{name}' has been deleted. Comment: {comment}"),
            None => format!("Due item '{name}' has been deleted."),
        };
        Ok(ToolOutput::text(content).with_effect(Effect::Unpin(agenda_item(item.id))))
    }
}

elroy_core::tool_args! {
    /// Arguments of `print_due_item`.
    pub struct DueNameArgs {
        name: String => "Name of the due item to retrieve.",
    }
}

/// `print_due_item` (`docs/tools.md#print_due_item`): trigger time in local time with the offset
/// (D7).
#[derive(Debug, Clone, Copy, Default)]
pub struct PrintDueItem;

impl TypedTool for PrintDueItem {
    type Args = DueNameArgs;
    const NAME: &'static str = "print_due_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Print the details for a due item by name.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        let item = store.due_item(&args.name).map_err(tool_error)?;
        Ok(ToolOutput::text(item.print(&args.name, &ctx.time.tz)))
    }
}

elroy_core::tool_args! {
    /// Arguments of `rename_due_item`.
    pub struct RenameDueItemArgs {
        old_name: String => "Current due item name.",
        new_name: String => "Replacement due item name.",
    }
}

/// `rename_due_item` (`docs/tools.md#rename_due_item`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RenameDueItem;

impl TypedTool for RenameDueItem {
    type Args = RenameDueItemArgs;
    const NAME: &'static str = "rename_due_item";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Rename an existing due item.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        // The numeric user id of the database; the token until a database is open.
        let user = ctx
            .user
            .id
            .map_or_else(|| ctx.user.token.clone(), |id| id.to_string());
        store
            .rename_due_item(&args.old_name, &args.new_name, &user)
            .map_err(tool_error)?;
        Ok(ToolOutput::text(format!(
            "Due item '{}' has been renamed to '{}'.",
            args.old_name, args.new_name
        )))
    }
}

elroy_core::tool_args! {
    /// Arguments of `update_due_item_text`.
    pub struct UpdateDueItemTextArgs {
        name: String => "Name of the due item to update.",
        new_text: String => "Replacement text for the due item.",
    }
}

/// `update_due_item_text` (`docs/tools.md#update_due_item_text`).
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateDueItemText;

impl TypedTool for UpdateDueItemText {
    type Args = UpdateDueItemTextArgs;
    const NAME: &'static str = "update_due_item_text";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Update the text of an existing due item.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let store = ctx.services.require::<AgendaStore>()?;
        store
            .update_due_item_text(&args.name, &args.new_text)
            .map_err(tool_error)?;
        Ok(ToolOutput::text(format!(
            "Due item '{}' text has been updated.",
            args.name
        )))
    }
}

/// How many due items `list_due_items` lists when the call gives no `limit`.
pub const DEFAULT_LIST_LIMIT: usize = 50;

elroy_core::tool_args! {
    /// Arguments of `list_due_items`.
    pub struct ListDueItemsArgs {
        limit: Option<i64> => "Most items to list, soonest first (default 50).",
    }
}

/// `list_due_items` (`docs/tools.md#list_due_items`): every active due item, so the model can
/// answer "what reminders do I have?" without knowing a name first. Compact JSON:
/// `{"total": N, "items": [{"name", "trigger_time", "repeats", "trigger_context", "text"}]}`,
/// timed items by their next trigger time, then items with only a context by name; times in the
/// configured zone with the offset (D7), absent values `null`; at most `limit` items, `total`
/// counting them all.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDueItems;

impl TypedTool for ListDueItems {
    type Args = ListDueItemsArgs;
    const NAME: &'static str = "list_due_items";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const DESCRIPTION: &'static str = "List the active due items (reminders), soonest first: name, \
        trigger time, repetition, trigger context and text.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let limit = match args.limit {
            None => DEFAULT_LIST_LIMIT,
            Some(n) => usize::try_from(n)
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| ToolError::new(format!("limit must be at least 1, not {n}")))?,
        };
        let store = ctx.services.require::<AgendaStore>()?;
        let mut items = store.active_due_items().map_err(tool_error)?;
        // Timed items first (`None` sorts before `Some`, hence the flag), soonest first.
        items.sort_by(|a, b| {
            (a.trigger_datetime.is_none(), a.trigger_datetime, &a.name).cmp(&(
                b.trigger_datetime.is_none(),
                b.trigger_datetime,
                &b.name,
            ))
        });
        let listed: Vec<serde_json::Value> = items
            .iter()
            .take(limit)
            .map(|item| {
                serde_json::json!({
                    "name": item.name,
                    "trigger_time": item
                        .trigger_datetime
                        .map(|ts| format_local_with_offset(ts, &ctx.time.tz)),
                    "repeats": item.repeats(),
                    "trigger_context": item.trigger_context,
                    "text": item.text,
                })
            })
            .collect();
        Ok(ToolOutput::json(
            &serde_json::json!({"total": items.len(), "items": listed}),
        ))
    }
}
