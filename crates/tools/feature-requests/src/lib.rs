//! # elroy-tools-feature-requests
//!
//! The feature-request tools of `docs/tools.md#feature-requests` with Elroy 0.5.0's schemas (K1)
//! and strings (K3):
//! [`MakeFeatureRequest`], [`EditFeatureRequest`], [`ListFeatureRequests`]. They work on the
//! [`FeatureRequestStore`] the runtime puts in the context's services.

use elroy_core::{
    Lineage, NoArgs, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, ToolRegistry,
    TypedTool, sync_tool, tool_args,
};
use elroy_feature_requests::{EditRequest, Entry, FeatureRequestStore, MakeOutcome};
use elroy_markdown::MarkdownError;

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Feature requests",
    guide: "A backlog of ideas for elroy itself, one markdown file each in `feature-requests/`. \
            A new request that is very similar to an existing one (title, aliases and \
            description compared as Elroy 0.5.0 does) is merged into it instead of duplicated.",
};

/// Registers `make_feature_request`, `edit_feature_request` and `list_feature_requests`.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(MakeFeatureRequest))
        .register(sync_tool(ListFeatureRequests))
        .register(sync_tool(EditFeatureRequest));
}

fn store(ctx: &ToolContext) -> Result<std::sync::Arc<FeatureRequestStore>, ToolError> {
    ctx.services.require::<FeatureRequestStore>()
}

fn tool_error(e: MarkdownError) -> ToolError {
    ToolError::new(e.to_string()).with_io_kind(e.io_kind())
}

tool_args! {
    /// Arguments of `make_feature_request`.
    pub struct MakeFeatureRequestArgs {
        title: String => "Short title describing the requested feature.",
        description: String => "What the new feature should do.",
        rationale: Option<String> => "Optional explanation of why the feature matters.",
    }
}

/// `make_feature_request` (`docs/tools.md#make_feature_request`): merges into a duplicate or
/// creates a new file.
///
/// Results: `Created feature request: {title} ({file name}).` or
/// `Merged into existing feature request: {title} ({file name}; match reason: {reason}).`
pub struct MakeFeatureRequest;

impl TypedTool for MakeFeatureRequest {
    type Args = MakeFeatureRequestArgs;
    const NAME: &'static str = "make_feature_request";
    const EFFECT: ToolEffect = ToolEffect::HOME_ADDS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Create or merge a markdown feature request for future product work.\n\nUse this when the user asks for a net new capability, workflow, or product behavior\nthat Elroy does not currently support. First consider calling `list_feature_requests`\nto inspect the existing backlog. This tool will also try to merge into an existing\nfeature request when the request appears duplicative, to avoid backlog bloat.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let outcome = store(ctx)?
            .make(
                ctx.time.now(),
                &ctx.user.token,
                &args.title,
                &args.description,
                args.rationale.as_deref(),
            )
            .map_err(tool_error)?;
        Ok(ToolOutput::text(match outcome {
            MakeOutcome::Created(r) => {
                format!("Created feature request: {} ({}).", r.title, r.file_name)
            }
            MakeOutcome::Merged { request, reason } => format!(
                "Merged into existing feature request: {} ({}; match reason: {reason}).",
                request.title, request.file_name
            ),
        }))
    }
}

tool_args! {
    /// Arguments of `edit_feature_request`.
    pub struct EditFeatureRequestArgs {
        identifier: String => "Existing request id, title, alias, or filename stem to update.",
        title: Option<String> => "Replacement canonical title.",
        description: Option<String> => "Replacement summary of the request.",
        rationale: Option<String> => "Replacement rationale for why it matters.",
        status: Option<String> => "Replacement status value such as `open` or `closed`.",
    }
}

/// `edit_feature_request` (`docs/tools.md#edit_feature_request`). A miss is an ordinary result:
/// `Feature request '{identifier}' not found.`; success is
/// `Updated feature request: {new title} ({file name}).`
pub struct EditFeatureRequest;

impl TypedTool for EditFeatureRequest {
    type Args = EditFeatureRequestArgs;
    const NAME: &'static str = "edit_feature_request";
    const EFFECT: ToolEffect = ToolEffect::HOME_OVERWRITES;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Edit an existing markdown feature request.\n\nUse this when a feature request already exists and needs a better title,\nrefined summary, updated rationale, or status change. Prefer this over creating\na duplicate request for the same product need.";

    fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<ToolOutput, ToolError> {
        let changes = EditRequest {
            title: args.title,
            description: args.description,
            rationale: args.rationale,
            status: args.status,
        };
        let edited = store(ctx)?
            .edit(ctx.time.now(), &ctx.user.token, &args.identifier, &changes)
            .map_err(tool_error)?;
        Ok(ToolOutput::text(match edited {
            Some(r) => format!("Updated feature request: {} ({}).", r.title, r.file_name),
            None => format!("Feature request '{}' not found.", args.identifier),
        }))
    }
}

/// `list_feature_requests` (`docs/tools.md#list_feature_requests`): every request in file-name
/// order, closed ones included; unreadable files are reported after the list (R7).
pub struct ListFeatureRequests;

impl TypedTool for ListFeatureRequests {
    type Args = NoArgs;
    const NAME: &'static str = "list_feature_requests";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "List the current markdown-backed feature requests.\n\nUse this before creating a new feature request when you suspect the request may\nalready exist. This helps avoid duplicate backlog entries by surfacing the\ncanonical titles, aliases, statuses, and brief summaries of existing requests.";

    fn run(&self, ctx: &ToolContext, _args: NoArgs) -> Result<ToolOutput, ToolError> {
        let entries = store(ctx)?.entries().map_err(tool_error)?;
        Ok(ToolOutput::text(render_listing(&entries)))
    }
}

/// The text of `list_feature_requests` for these entries (`docs/tools.md#list_feature_requests`).
pub fn render_listing(entries: &[Entry]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut skipped: Vec<elroy_core::FileWarning> = Vec::new();
    let mut count = 0usize;
    for entry in entries {
        match entry {
            Entry::Request(r) => {
                count += 1;
                let aliases = if r.aliases.is_empty() {
                    String::new()
                } else {
                    format!(" | aliases: {}", r.aliases.join(", "))
                };
                lines.push(format!(
                    "- {} [{}] ({}){aliases}",
                    r.title, r.status, r.file_name
                ));
                lines.push(format!("  Summary: {}", r.summary));
            }
            Entry::Unreadable { file_name, error } => {
                let message = match error {
                    MarkdownError::InvalidFrontMatter { message, .. } => message.clone(),
                    other => other.to_string(),
                };
                skipped.push(elroy_core::FileWarning::new(
                    "feature request files could not be read and were skipped",
                    file_name.clone(),
                    format!("Skipped unreadable file {file_name}: {message}"),
                ));
            }
        }
    }
    let mut out = if count == 0 {
        vec!["No feature requests found.".to_owned()]
    } else {
        let mut head = vec![format!("Feature requests ({count}):"), String::new()];
        head.append(&mut lines);
        head
    };
    // A few unreadable files are named one per line (robustness R7); many make one line.
    out.extend(elroy_core::summarize_warnings_with(
        &skipped,
        "`elroy doctor` lists them all",
    ));
    out.join("\n")
}
