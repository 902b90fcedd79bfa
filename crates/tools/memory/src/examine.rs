//! `examine_memories` (`tools.md` §3.4, D10): readable markdown sections.

use elroy_core::{ToolContext, ToolError, ToolOutput, TypedTool};
use elroy_memory::MemoryQuery;

use crate::source::resolve_sources;
use crate::{err, store};

/// At most this many memories are shown.
pub const MAX_MEMORIES: usize = 5;

elroy_core::tool_args! {
    /// Arguments of `examine_memories`.
    pub struct ExamineArgs {
        question: String => "Question to examine memories for. Should be a full sentence, with any relevant context that might make the query more specific.",
    }
}

/// `examine_memories`: recall (keywords, plus embeddings when configured) with the question as
/// the query; items already in context are not excluded; `## Memory: {name}` sections.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExamineMemories;

impl TypedTool for ExamineMemories {
    type Args = ExamineArgs;
    const NAME: &'static str = "examine_memories";
    const DESCRIPTION: &'static str = "Search through memories for the answer to a question.\n\nThis function searches summarized memories and goals. Each memory also contains source information.\n\nIf a retrieved memory is relevant but lacks detail to answer the question, use the get_source_content_for_memory tool. This can be useful in cases where broad information about a topic is provided, but more exact recollection is necessary.";

    fn run(&self, ctx: &ToolContext, args: ExamineArgs) -> Result<ToolOutput, ToolError> {
        let store = store(ctx)?;
        let hits = store
            .search(&MemoryQuery::from_text(&args.question), MAX_MEMORIES)
            .map_err(err)?;
        if hits.is_empty() {
            return Ok(ToolOutput::text(format!(
                "No relevant memories found for: {}",
                args.question
            )));
        }
        let mut sections = Vec::new();
        for m in hits {
            let text = store.text(&m).map_err(err)?;
            let n = resolve_sources(ctx, &store, &m)?.len();
            let mut section = format!("## Memory: {}\n\n{text}", m.name);
            if n >= 1 {
                let range = if n == 1 {
                    "0".to_owned()
                } else {
                    format!("0..{}", n - 1)
                };
                section.push_str(&format!(
                    "\n\n*Source content: get_source_content_for_memory(memory_name=\"{}\", index={range})*",
                    m.name
                ));
            }
            sections.push(section);
        }
        Ok(ToolOutput::text(sections.join("\n\n")))
    }
}
