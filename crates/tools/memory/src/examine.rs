//! `examine_memories` (`docs/tools.md#examine_memories`, D10): readable markdown sections.

use elroy_core::{
    Effect, Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool,
};
use elroy_memory::{MemoryQuery, recall};

use crate::source::resolve_sources;
use crate::{err, store};

/// At most this many memories are shown.
pub const MAX_MEMORIES: usize = 5;

/// At most this many due items are shown.
pub const MAX_DUE_ITEMS: usize = 2;

/// How many ranked agenda hits one lookup checks against their files.
const HIT_CHUNK: usize = 16;

/// The `## Due item:` sections for `question`: active due items of the agenda store (when it is
/// open) ranked by the keyword leg over their renderings. Only the hits' rows are selected and
/// their files stat'ed, and only the shown items read; the whole agenda only when it changed
/// since the agenda rows of `recall_fts` were built.
fn due_sections(ctx: &ToolContext, question: &str) -> Result<Vec<String>, ToolError> {
    let (Some(agenda), Some(db)) = (
        ctx.services.get::<elroy_agenda::AgendaStore>(),
        ctx.services.get::<elroy_db::Db>(),
    ) else {
        return Ok(Vec::new());
    };
    let user = crate::user_id(ctx)?;
    let tz = &ctx.time.tz;
    // The agenda rows of `recall_fts` are rebuilt only when the agenda changed since they were
    // built; then only the hits are looked up, a few at a time, until enough due
    // items are found: a section is built from the item's own file.
    let loaded = crate::refresh_agenda_recall_rows(&agenda, &db, user, tz).map_err(err)?;
    let tokens = recall::recall_tokens(question);
    let ranked = db
        .with_conn(|c| recall::keyword_leg(c, user, "agenda", &tokens, &[]))
        .map_err(err)?;
    let mut due_ids = Vec::new();
    for chunk in ranked.chunks(HIT_CHUNK) {
        let due: Vec<i64> = match &loaded {
            Some(all) => all
                .iter()
                .filter(|e| e.kind == elroy_agenda::Kind::Due && chunk.contains(&e.id))
                .map(|e| e.id)
                .collect(),
            None => agenda
                .recall_due_entries_by_ids(chunk, tz)
                .map_err(err)?
                .into_iter()
                .map(|e| e.id)
                .collect(),
        };
        due_ids.extend(chunk.iter().filter(|id| due.contains(id)));
        if due_ids.len() >= MAX_DUE_ITEMS {
            break;
        }
    }
    let mut sections = Vec::new();
    for id in due_ids {
        if sections.len() == MAX_DUE_ITEMS {
            break;
        }
        let Some(item) = agenda
            .item_by_id(id)
            .map_err(err)?
            .filter(|i| i.is_active() && i.kind() == elroy_agenda::Kind::Due)
        else {
            continue;
        };
        let mut section = format!("## Due item: {}\n\n", item.name());
        if let Some(ts) = item.trigger_datetime {
            section.push_str(&format!(
                "Trigger time: {}\n",
                elroy_agenda::format_local_with_offset(ts, tz)
            ));
        }
        if let Some(context) = &item.trigger_context {
            section.push_str(&format!("Trigger context: {context}\n"));
        }
        section.push_str(item.text().trim());
        sections.push(section);
    }
    Ok(sections)
}

elroy_core::tool_args! {
    /// Arguments of `examine_memories`.
    pub struct ExamineArgs {
        question: String => "Question to examine memories for. Should be a full sentence, with any relevant context that might make the query more specific.",
    }
}

/// `examine_memories`: recall (keywords, plus embeddings when configured) with the question as
/// the query; items already in context are not excluded; `## Memory: {name}` sections, then
/// `## Due item: {name}` sections (keyword leg only).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExamineMemories;

impl TypedTool for ExamineMemories {
    type Args = ExamineArgs;
    const NAME: &'static str = "examine_memories";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Search through memories for the answer to a question.\n\nThis function searches summarized memories and goals. Each memory also contains source information.\n\nIf a retrieved memory is relevant but lacks detail to answer the question, use the get_source_content_for_memory tool. This can be useful in cases where broad information about a topic is provided, but more exact recollection is necessary.";

    fn run(&self, ctx: &ToolContext, args: ExamineArgs) -> Result<ToolOutput, ToolError> {
        let store = store(ctx)?;
        // A memory search picks up files added, removed or renamed since the last listing
        // (`docs/formats.md#memory-index-sync` as elroy overrides it); the memories it finds are
        // checked by stat. A sync that cannot write the index (a full disk) leaves the search to
        // the index as it is.
        let _ = store.sync_if_changed(ctx.time.now());
        // A memory whose file cannot be read is skipped and named; the others are returned.
        let found = store
            .search_readable(
                &MemoryQuery::from_text_on(&args.question, ctx.time.today()),
                MAX_MEMORIES,
            )
            .map_err(err)?;
        let skipped = found.skipped_lines();
        // Memories whose file left memories/ (seen by the sync or by the search) leave the
        // context.
        let unpins: Vec<Effect> = store
            .take_deactivated()
            .into_iter()
            .map(|id| Effect::Unpin(crate::memory_item(id)))
            .collect();
        let due = due_sections(ctx, &args.question)?;
        if found.hits.is_empty() && due.is_empty() {
            let mut text = format!("No relevant memories found for: {}", args.question);
            if !skipped.is_empty() {
                text.push_str("\n\n");
                text.push_str(&skipped);
            }
            let mut out = ToolOutput::text(text);
            out.effects = unpins;
            return Ok(out);
        }
        let mut sections = Vec::new();
        for (m, body) in found.hits {
            let text = body.as_deref().map(str::trim).unwrap_or_default();
            let file = store.path_of(&m).display().to_string();
            let text = elroy_memory::bounded_text(text, &file);
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
        sections.extend(due);
        if !skipped.is_empty() {
            sections.push(skipped);
        }
        let mut out = ToolOutput::text(sections.join("\n\n"));
        out.effects = unpins;
        Ok(out)
    }
}
