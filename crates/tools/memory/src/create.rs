//! `create_memory` (`docs/tools.md#create_memory`) and `update_outdated_or_incorrect_memory`
//! (`docs/tools.md#update_outdated_or_incorrect_memory`).

use elroy_core::{
    Effect, Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool,
};
use elroy_memory::MemorySource;
use elroy_transcript::TranscriptStore;

use crate::{err, memory_item, store, user_id};

const CREATE_DESCRIPTION: &str = "Creates a new memory for the assistant.\n\nExamples of good and bad memory titles are below. Note that in the BETTER examples, some titles have been split into two:\n\nBAD:\n- [User Name]'s project progress and personal goals: 'Personal goals' is too vague, and the title describes two different topics.\n\nBETTER:\n- [User Name]'s project on building a treehouse: More specific, and describes a single topic.\n- [User Name]'s goal to be more thoughtful in conversation: Describes a specific goal.\n\nBAD:\n- [User Name]'s weekend plans: 'Weekend plans' is too vague, and dates must be referenced in ISO 8601 format.\n\nBETTER:\n- [User Name]'s plan to attend a concert on 2022-02-11: More specific, and includes a specific date.\n\nBAD:\n- [User Name]'s preferred name and well being: Two different topics, and 'well being' is too vague.\n\nBETTER:\n- [User Name]'s preferred name: Describes a specific topic.\n- [User Name]'s feeling of rejuvenation after rest: Describes a specific topic.";

elroy_core::tool_args! {
    /// Arguments of `create_memory`.
    pub struct CreateMemoryArgs {
        name: String => "The name of the memory. Should be specific and discuss one topic.",
        text: String => "The text of the memory.",
    }
}

/// `create_memory`: writes the memory (sourced from the current context version), updates the
/// operation tracker, returns `New memory created: {name}` and `Pin(("Memory", id))`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CreateMemory;

impl TypedTool for CreateMemory {
    type Args = CreateMemoryArgs;
    const NAME: &'static str = "create_memory";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = CREATE_DESCRIPTION;

    fn run(&self, ctx: &ToolContext, args: CreateMemoryArgs) -> Result<ToolOutput, ToolError> {
        let store = store(ctx)?;
        let user = user_id(ctx)?;
        let sources = match ctx.services.get::<TranscriptStore>() {
            Some(t) => t
                .current_version(user)
                .map_err(err)?
                .map(|v| vec![MemorySource::context(v)])
                .unwrap_or_default(),
            None => Vec::new(),
        };
        // Files added or removed by hand since the last listing are indexed first, so their ids
        // count for the new one (`docs/formats.md#memory-ids`); nothing is listed when the
        // directory is as the last listing (or Elroy's own last write) left it.
        // A sync that cannot write the index (a full disk) does not stop the creation, whose
        // own write then fails with an error naming the file.
        let _ = store.sync_if_changed(ctx.time.now());
        let memory = store
            .create(&args.name, &args.text, &sources, ctx.time.now())
            .map_err(err)?;
        let between = ctx.services.get::<elroy_config::Config>().map_or_else(
            || elroy_config::Settings::default().memories_between_consolidation,
            |c| c.settings.memories_between_consolidation,
        );
        let between = i64::try_from(between).unwrap_or(i64::MAX);
        // The consolidation itself is the orchestrator's background work
        // (`docs/behaviour.md#consolidation`); the store's flag tells it consolidation became due.
        // The memory is saved: a count that cannot be written (a full disk) only delays
        // consolidation, and must not turn the saved memory into an error a retry duplicates.
        let _ = store.record_op_tracked(between);
        let mut out = ToolOutput::text(format!("New memory created: {}", args.name));
        out.effects = store
            .take_deactivated()
            .into_iter()
            .map(|id| Effect::Unpin(memory_item(id)))
            .collect();
        Ok(out.with_effect(Effect::Pin(memory_item(memory.id))))
    }
}

elroy_core::tool_args! {
    /// Arguments of `update_outdated_or_incorrect_memory`.
    pub struct UpdateMemoryArgs {
        memory_name: String => "Name of the existing memory to update",
        update_text: String => "The new information to append to the memory",
    }
}

/// `update_outdated_or_incorrect_memory` (D8): a new version with `Update ({now local}):`, the old
/// file archived; effects `Unpin(old)`, `Pin(new)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateOutdatedOrIncorrectMemory;

impl TypedTool for UpdateOutdatedOrIncorrectMemory {
    type Args = UpdateMemoryArgs;
    const NAME: &'static str = "update_outdated_or_incorrect_memory";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Updates an existing memory with new information.\nIn general, when new information arises, new memories should be created rather than updating.\nReserve use of this tool for cases in which the information in a memory changes or becomes out of date.";

    fn run(&self, ctx: &ToolContext, args: UpdateMemoryArgs) -> Result<ToolOutput, ToolError> {
        let store = store(ctx)?;
        match store
            .update(
                &args.memory_name,
                &args.update_text,
                ctx.time.now(),
                &ctx.time.tz,
            )
            .map_err(err)?
        {
            None => Ok(ToolOutput::text(format!(
                "Memory '{}' not found",
                args.memory_name
            ))),
            Some((old, new)) => Ok(ToolOutput::text(format!(
                "Memory '{}' has been updated",
                args.memory_name
            ))
            .with_effect(Effect::Unpin(memory_item(old.id)))
            .with_effect(Effect::Pin(memory_item(new.id)))),
        }
    }
}
