//! `print_memory` (`docs/tools.md#print_memory`), `add_memory_to_current_context`
//! (`docs/tools.md#add_memory_to_current_context`) and `drop_memory_from_current_context`
//! (`docs/tools.md#drop_memory_from_current_context`).

use elroy_core::{
    Effect, Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool,
};

use crate::{err, memory_item, store};

elroy_core::tool_args! {
    /// Arguments of `print_memory`.
    pub struct PrintMemoryArgs {
        memory_name: String => "Name of the memory to retrieve",
    }
}

/// `print_memory`: the rendering of the active memory with that exact name.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrintMemory;

impl TypedTool for PrintMemory {
    type Args = PrintMemoryArgs;
    const NAME: &'static str = "print_memory";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Retrieve and return a memory by its exact name.";

    fn run(&self, ctx: &ToolContext, args: PrintMemoryArgs) -> Result<ToolOutput, ToolError> {
        let store = store(ctx)?;
        let mut found = store.active_by_name(&args.memory_name).map_err(err)?;
        // The file is checked by stat: an edit in place is indexed before the answer (and a
        // file that is gone makes the memory inactive).
        // A check that cannot write the index (a full disk) does not stop the read.
        if let Some(m) = &found
            && store
                .revalidate(std::slice::from_ref(m), ctx.time.now())
                .is_ok_and(|r| r.is_some())
        {
            found = store.active_by_name(&args.memory_name).map_err(err)?;
        }
        match found {
            Some(m) => {
                let rendering = store.rendering(&m).map_err(err)?;
                let file = store.path_of(&m).display().to_string();
                Ok(ToolOutput::text(
                    elroy_memory::bounded_text(&rendering, &file).into_owned(),
                ))
            }
            None => Ok(ToolOutput::text(format!(
                "Memory '{}' not found for the current user.",
                args.memory_name
            ))),
        }
    }
}

elroy_core::tool_args! {
    /// Arguments of `add_memory_to_current_context`.
    pub struct AddMemoryArgs {
        memory_name: String => "The name of the memory to add to context",
    }
}

/// `add_memory_to_current_context`: `Pin` of the active memory with that name (else the
/// lowest-id one of any status, D8).
#[derive(Debug, Clone, Copy, Default)]
pub struct AddMemoryToCurrentContext;

impl TypedTool for AddMemoryToCurrentContext {
    type Args = AddMemoryArgs;
    const NAME: &'static str = "add_memory_to_current_context";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str =
        "Adds memory with the given name to the current conversation context.";

    fn run(&self, ctx: &ToolContext, args: AddMemoryArgs) -> Result<ToolOutput, ToolError> {
        let store = store(ctx)?;
        let memory = match store.active_by_name(&args.memory_name).map_err(err)? {
            Some(m) => Some(m),
            None => store
                .all_by_name(&args.memory_name)
                .map_err(err)?
                .into_iter()
                .next(),
        };
        let Some(memory) = memory else {
            return Ok(ToolOutput::text(format!(
                "Memory '{}' not found.",
                args.memory_name
            )));
        };
        let item = memory_item(memory.id);
        let out = ToolOutput::text(format!("Memory '{}' added to context.", args.memory_name));
        Ok(if ctx.is_in_context(item) {
            out
        } else {
            out.with_effect(Effect::Pin(item))
        })
    }
}

elroy_core::tool_args! {
    /// Arguments of `drop_memory_from_current_context`.
    pub struct DropMemoryArgs {
        memory_name: String => "Name of the memory to remove from context",
    }
}

/// `drop_memory_from_current_context`: `Unpin` of every memory with that name (D8).
#[derive(Debug, Clone, Copy, Default)]
pub struct DropMemoryFromCurrentContext;

impl TypedTool for DropMemoryFromCurrentContext {
    type Args = DropMemoryArgs;
    const NAME: &'static str = "drop_memory_from_current_context";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str =
        "Drops the memory with the given name from current context. Does NOT delete the memory.";

    fn run(&self, ctx: &ToolContext, args: DropMemoryArgs) -> Result<ToolOutput, ToolError> {
        let store = store(ctx)?;
        let all = store.all_by_name(&args.memory_name).map_err(err)?;
        if all.is_empty() {
            return Ok(ToolOutput::text(format!(
                "Memory '{}' not found.",
                args.memory_name
            )));
        }
        let mut out = ToolOutput::text(format!(
            "Memory '{}' dropped from context.",
            args.memory_name
        ));
        for m in all {
            out = out.with_effect(Effect::Unpin(memory_item(m.id)));
        }
        Ok(out)
    }
}
