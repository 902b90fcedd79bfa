//! # elroy-tools-notebook
//!
//! The toolnexus-style `memory` tool (`docs/tools.md#memory`): one tool, three actions (`add`,
//! `replace`, `remove`) on two notes files of the user home, `MEMORY.md` (`target: self`, the
//! default) and `USER.md` (`target: user`). Writes reach disk at once; the session's soul
//! snapshot is not changed (`docs/behaviour.md#the-soul-snapshot`). The store is
//! [`elroy_notebook::Notebook`], taken from the context's services.

mod args;

pub use args::MemoryArgs;

use elroy_core::{
    ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, ToolRegistry, TypedTool, sync_tool,
};
use elroy_notebook::{Edit, Notebook, Target};
use serde_json::Value;

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Notes files",
    guide: "Two plain notes files in the home: `MEMORY.md` (the assistant's own working notes) \
            and `USER.md` (what it knows about you). Both are loaded at the start of every \
            session; a change shows up from the next session on.",
};

/// Registers the `memory` tool.
pub fn register(registry: &mut ToolRegistry) {
    registry.register(sync_tool(MemoryTool));
}

/// The `memory` tool. Its checks run in the order of `docs/tool-rules.md#actions-and-checks`, so a
/// call the argument validator did not see (an embedder, a test) gets the same messages:
/// `unknown action: {a}`, `unknown target: {t}`, `text must be a string`,
/// `text must not be empty`, `with is required for replace`, `with must be a string`,
/// `not found: {text}`, `{FILE} is not valid UTF-8; not modified`.
/// Success: `ok ({action} → {FILE}); loads next session`.
pub struct MemoryTool;

/// The value as the messages show it: a string as is, anything else as compact JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Turns the raw arguments into a target and an edit (`docs/tool-rules.md#actions-and-checks` steps
/// 1–4).
///
/// # Errors
/// The tool's message for the first failed check.
pub fn parse_call(args: &MemoryArgs) -> Result<(Target, Edit), ToolError> {
    let action = match &args.action {
        Some(Value::String(a)) if matches!(a.as_str(), "add" | "replace" | "remove") => a.as_str(),
        Some(other) => return Err(ToolError::new(format!("unknown action: {}", shown(other)))),
        None => return Err(ToolError::new("unknown action: ")),
    };
    let target = match &args.target {
        None | Some(Value::Null) => Target::SelfNotes,
        Some(Value::String(t)) if t.is_empty() => Target::SelfNotes,
        Some(Value::String(t)) => {
            Target::parse(t).ok_or_else(|| ToolError::new(format!("unknown target: {t}")))?
        }
        Some(other) => {
            return Err(ToolError::new(format!("unknown target: {}", shown(other))));
        }
    };
    let Some(Value::String(text)) = &args.text else {
        return Err(ToolError::new("text must be a string"));
    };
    let text = text.clone();
    let edit = match action {
        "add" => Edit::Add { text },
        "remove" => Edit::Remove { text },
        _ => {
            // replace: `text` is checked before `with`.
            if text.is_empty() {
                return Err(ToolError::new("text must not be empty"));
            }
            let with = match &args.with {
                None | Some(Value::Null) => {
                    return Err(ToolError::new("with is required for replace"));
                }
                Some(Value::String(w)) => w.clone(),
                Some(_) => return Err(ToolError::new("with must be a string")),
            };
            Edit::Replace { text, with }
        }
    };
    elroy_notebook::edit::check(&edit).map_err(|e| ToolError::new(e.to_string()))?;
    Ok((target, edit))
}

impl TypedTool for MemoryTool {
    type Args = MemoryArgs;
    const NAME: &'static str = "memory";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const DESCRIPTION: &'static str = "Keep durable notes that carry over to future sessions. Two notes files exist: MEMORY.md holds your own working notes (target self, the default) and USER.md holds what you know about the user (target user). action=add appends text as a new bullet line; action=replace changes the first exact occurrence of text into with; action=remove deletes the first exact occurrence of text. Changes are saved to disk at once but only show up in your instructions from the next session on; they do not alter this conversation.";

    fn run(&self, ctx: &ToolContext, args: MemoryArgs) -> Result<ToolOutput, ToolError> {
        let (target, edit) = parse_call(&args)?;
        let notebook = ctx.services.require::<Notebook>()?;
        notebook.edit(target, &edit).map_err(|e| {
            let kind = match &e {
                elroy_notebook::NotebookError::Io(e) => e.io_kind(),
                _ => None,
            };
            ToolError::new(e.to_string()).with_io_kind(kind)
        })?;
        Ok(ToolOutput::text(format!(
            "ok ({} \u{2192} {}); loads next session",
            edit.action(),
            target.file_name()
        )))
    }
}
