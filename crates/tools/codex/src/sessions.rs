//! `edit_contrib_with_codex` (`docs/tools.md#edit_contrib_with_codex`), `inspect_elroy_with_codex`
//! (`docs/tools.md#inspect_elroy_with_codex`) and `list_codex_sessions`
//! (`docs/tools.md#list_codex_sessions`).

use std::path::PathBuf;

use elroy_config::Config;
use elroy_core::{
    AsyncTypedTool, Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool,
};
use serde_json::json;

use crate::contrib::ensure_home_contrib;
use crate::runner::{RunRequest, run_codex};
use crate::store::{CodexSessions, Scope, format_time};

/// The prompt of `edit_contrib_with_codex` before the directory and the request.
const CONTRIB_PREAMBLE: &str = r#"You are editing the Elroy contrib plugin directory. Change only files inside it and never touch Elroy's own source code.

How plugins work:
- Every executable file whose name does not start with "_" or "." is a plugin.
- "<file> --schema" must print one OpenAI-style tool schema, or a JSON list of them. The list may also contain {"type": "panel", "title": "..."} to declare a sidebar panel.
- For a tool call, Elroy runs "<file>" with the JSON arguments on stdin and uses stdout as the result. A non-zero exit status reports stderr as an error.
- "<file> --panel" prints the markdown shown in the plugin's sidebar tab.
Keep the change small and focused on the request, and make new plugin files executable."#;

/// The prompt of `inspect_elroy_with_codex` before the request.
const INSPECT_PREAMBLE: &str = "Inspect the Elroy source tree. This is a read-only task: do not create, modify or delete any file. Report concrete findings with file paths and line numbers, the risks you see, and suggested next steps.";

/// Characters of the log included in an inspection prompt.
const LOG_EXCERPT_CHARS: usize = 20_000;

fn non_empty_prompt(prompt: &str) -> Result<&str, ToolError> {
    let trimmed = prompt.trim();
    if trimmed.is_empty() {
        Err("prompt must not be empty".into())
    } else {
        Ok(trimmed)
    }
}

fn model_of(model: Option<String>) -> Option<String> {
    model.map(|m| m.trim().to_owned()).filter(|m| !m.is_empty())
}

elroy_core::tool_args! {
    /// Arguments of `edit_contrib_with_codex`.
    pub struct EditContribArgs {
        prompt: String => "Plugin/tool edit request for Codex.",
        model: Option<String> => "Optional Codex model override.",
    }
}

/// `edit_contrib_with_codex`: Codex edits `$ELROY_HOME/contrib/`; completed changes are committed.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditContribWithCodex;

impl AsyncTypedTool for EditContribWithCodex {
    type Args = EditContribArgs;
    const NAME: &'static str = "edit_contrib_with_codex";
    const EFFECT: ToolEffect = ToolEffect::EXECUTE;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Run a Codex edit session directly in the Elroy-home contrib plugin directory.\n\nUse this for assistant self-improvements that should be loaded through the plugin system instead\nof changing core Elroy source code. Elroy ensures the contrib directory exists as a git repo,\nruns Codex directly in that directory, records the session, and commits completed changes.";

    async fn run(&self, ctx: &ToolContext, args: EditContribArgs) -> Result<ToolOutput, ToolError> {
        let prompt = non_empty_prompt(&args.prompt)?;
        let config = ctx.services.require::<Config>()?;
        let directory = ensure_home_contrib(config.paths.contrib_dir(), ctx.time.now())?;
        let codex_prompt = format!(
            "{CONTRIB_PREAMBLE}\n\nContrib directory: {}\n\nEdit request:\n{prompt}",
            directory.display()
        );
        run_codex(
            ctx,
            RunRequest {
                scope: Scope::Contrib,
                directory,
                codex_prompt,
                prompt: args.prompt.clone(),
                model: model_of(args.model),
                sandbox: "workspace-write",
                commit: true,
                warn_on_changes: false,
            },
        )
        .await
    }
}

elroy_core::tool_args! {
    /// Arguments of `inspect_elroy_with_codex`.
    pub struct InspectElroyArgs {
        prompt: String => "Inspection question or task for Codex.",
        include_logs: Option<bool> => "Whether to include the Elroy log path and recent log excerpt in the Codex prompt.",
        model: Option<String> => "Optional Codex model override.",
    }
}

/// `inspect_elroy_with_codex`: a read-only Codex session in the Elroy source tree.
#[derive(Debug, Clone, Copy, Default)]
pub struct InspectElroyWithCodex;

/// The source tree for inspections: `elroy_source_path`, else the workspace this crate was built
/// from if it still has a `Cargo.toml` (`docs/tools.md#inspect_elroy_with_codex` step 2).
fn source_tree(config: &Config) -> Result<PathBuf, ToolError> {
    if let Some(configured) = &config.settings.elroy_source_path {
        let cwd = std::env::current_dir().unwrap_or_default();
        let home = std::env::home_dir();
        let path = elroy_config::resolve_path(configured.trim(), &cwd, home.as_deref());
        if !path.is_dir() {
            return Err(ToolError::new(format!(
                "elroy_source_path {} is not a directory; set elroy_source_path to the directory of the Elroy source code",
                path.display()
            )));
        }
        return Ok(path);
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    if built.join("Cargo.toml").is_file() {
        return Ok(std::fs::canonicalize(&built).unwrap_or(built));
    }
    Err(
        "Elroy source tree not found; set elroy_source_path to the directory of the Elroy source code"
            .into(),
    )
}

impl AsyncTypedTool for InspectElroyWithCodex {
    type Args = InspectElroyArgs;
    const NAME: &'static str = "inspect_elroy_with_codex";
    const EFFECT: ToolEffect = ToolEffect::EXECUTE;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Run a read-only Codex inspection session against the running Elroy source tree and optional logs.\n\nUse this when you want a separate Codex session to investigate bugs, inspect code paths, or review\nrecent logs without making edits.";

    async fn run(
        &self,
        ctx: &ToolContext,
        args: InspectElroyArgs,
    ) -> Result<ToolOutput, ToolError> {
        let prompt = non_empty_prompt(&args.prompt)?;
        let config = ctx.services.require::<Config>()?;
        let directory = source_tree(&config)?;
        let mut codex_prompt = format!("{INSPECT_PREAMBLE}\n\nInspection request:\n{prompt}");
        if args.include_logs.unwrap_or(true) {
            let log = config.paths.logs_dir().join("elroy.log");
            let excerpt = match std::fs::read(&log) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    elroy_plugins::process::last_chars(&text, LOG_EXCERPT_CHARS).to_owned()
                }
                Err(_) => "(log file not found)".to_owned(),
            };
            codex_prompt.push_str(&format!(
                "\n\nElroy log file: {}\nRecent log excerpt:\n{excerpt}",
                log.display()
            ));
        }
        run_codex(
            ctx,
            RunRequest {
                scope: Scope::Elroy,
                directory,
                codex_prompt,
                prompt: args.prompt.clone(),
                model: model_of(args.model),
                sandbox: "read-only",
                commit: false,
                warn_on_changes: true,
            },
        )
        .await
    }
}

elroy_core::tool_args! {
    /// Arguments of `list_codex_sessions`.
    pub struct ListCodexSessionsArgs {
        scope: Option<String> => "Optional filter. Use \"contrib\" for plugin-directory sessions or \"elroy\" for running-code inspection sessions.",
        limit: Option<i64> => "Maximum number of sessions to return.",
    }
}

/// `list_codex_sessions`: recorded sessions, newest first.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListCodexSessions;

impl TypedTool for ListCodexSessions {
    type Args = ListCodexSessionsArgs;
    const NAME: &'static str = "list_codex_sessions";
    const EFFECT: ToolEffect = ToolEffect::HOME_READS;
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str =
        "List recently recorded Codex sessions and their latest summaries.";

    fn run(&self, ctx: &ToolContext, args: ListCodexSessionsArgs) -> Result<ToolOutput, ToolError> {
        let limit = match args.limit {
            None => 5,
            Some(n) if n < 1 => return Err("limit must be at least 1".into()),
            Some(n) => n.min(50),
        };
        let scope = match args.scope.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(s) => Some(
                Scope::parse(&s.to_ascii_lowercase())
                    .ok_or("scope must be 'contrib', 'elroy', or omitted")?,
            ),
        };
        let store = ctx.services.require::<CodexSessions>()?;
        let sessions = store
            .0
            .list(ctx.user_id(), scope, usize::try_from(limit).unwrap_or(5))
            .map_err(|e| format!("Unable to read Codex sessions: {e}"))?;
        let entries: Vec<serde_json::Value> = sessions
            .iter()
            .map(|s| {
                json!({
                    "session_id": s.session_id,
                    "scope": s.scope.as_str(),
                    "repo_path": s.repo_path,
                    "status": s.status.as_str(),
                    "started_at": format_time(s.started_at),
                    "updated_at": format_time(s.updated_at),
                    "summary": s.summary,
                    "final_message": s.final_message,
                    "touched_paths": s.touched_paths,
                    "commit": s.commit_sha,
                })
            })
            .collect();
        Ok(ToolOutput::json(&json!({ "sessions": entries })))
    }
}
