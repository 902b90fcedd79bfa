//! `get_source_content_for_memory` (`docs/tools.md#get_source_content_for_memory`); the
//! conversation snapshot rendering is
//! [`elroy_transcript::render_snapshot`].

use elroy_core::{Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool};
use elroy_db::Db;
use elroy_memory::{Memory, MemoryStore};
use elroy_transcript::{TranscriptStore, render_snapshot};

use crate::{err, store, user_id};

elroy_core::tool_args! {
    /// Arguments of `get_source_content_for_memory`.
    pub struct GetSourceArgs {
        memory_name: String => "Type of the source",
        index: Option<i64> => "0-indexed index of which source to retrieve.",
    }
}

/// `get_source_content_for_memory`: the memory's sources resolved by type and id (D8);
/// `# Source content for memory: {name} ({index} / {n-1})\n\n{rendering}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct GetSourceContentForMemory;

/// A resolved source, rendered.
pub(crate) type Rendered = String;

/// Resolves `memory`'s sources in order (`docs/tools.md#get_source_content_for_memory` step 2) and
/// renders each; sources that cannot be resolved are dropped (`AgendaItem` sources also when no
/// agenda store is open, and `Memory` sources whose file is missing or unreadable).
pub(crate) fn resolve_sources(
    ctx: &ToolContext,
    store: &MemoryStore,
    memory: &Memory,
) -> Result<Vec<Rendered>, ToolError> {
    let user = user_id(ctx)?;
    let transcript = ctx.services.get::<TranscriptStore>();
    let mut out = Vec::new();
    for source in &memory.sources {
        match source.source_type.as_str() {
            "Memory" => {
                // A source memory whose file cannot be read is dropped like a missing one.
                if let Some(m) = store.get(source.id).map_err(err)?
                    && let Ok(Some(body)) = store.raw_body(&m)
                {
                    out.push(elroy_memory::render_memory(&m.name, Some(&body)));
                }
            }
            "AgendaItem" => {
                if let Some(agenda) = ctx.services.get::<elroy_agenda::AgendaStore>()
                    && let Some(fact) = agenda.fact_by_id(source.id, &ctx.time.tz).map_err(err)?
                {
                    out.push(fact);
                }
            }
            "ContextMessageSet" => {
                if let Some(t) = &transcript
                    && let Some(snapshot) = t.context_at(user, source.id).map_err(err)?
                {
                    let prefs = ctx
                        .services
                        .get::<Db>()
                        .and_then(|db| db.preferences(user).ok())
                        .unwrap_or_default();
                    out.push(render_snapshot(
                        &snapshot,
                        &ctx.time.tz,
                        prefs.preferred_name.as_deref(),
                        prefs.assistant_name.as_deref(),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

impl TypedTool for GetSourceContentForMemory {
    type Args = GetSourceArgs;
    const NAME: &'static str = "get_source_content_for_memory";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Retrieves content of the source for a memory, by source type and name.\n\nFor a given memory, there can be multiple sources.";

    fn run(&self, ctx: &ToolContext, args: GetSourceArgs) -> Result<ToolOutput, ToolError> {
        let store = store(ctx)?;
        let Some(memory) = store.active_by_name(&args.memory_name).map_err(err)? else {
            return Err(ToolError::new(format!(
                "Memory '{}' not found for the current user.",
                args.memory_name
            )));
        };
        let sources = resolve_sources(ctx, &store, &memory)?;
        if sources.is_empty() {
            return Ok(ToolOutput::text(format!(
                "No sources found for memory '{}'",
                args.memory_name
            )));
        }
        let n = i64::try_from(sources.len()).unwrap_or(i64::MAX);
        let index = args.index.unwrap_or(0);
        if index >= n || index < -n {
            let all: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            return Err(ToolError::new(format!(
                "Index {index} out of range. Available indices: [{}]",
                all.join(", ")
            )));
        }
        let position = usize::try_from(if index < 0 { n + index } else { index }).unwrap_or(0);
        Ok(ToolOutput::text(format!(
            "# Source content for memory: {} ({index} / {})\n\n{}",
            args.memory_name,
            n - 1,
            sources[position]
        )))
    }
}
