//! The contrib repository: `create_contrib_repo` (`docs/tools.md#create_contrib_repo`) and the home
//! contrib directory that `edit_contrib_with_codex` prepares
//! (`docs/tools.md#edit_contrib_with_codex` step 2).

use std::io::Write;
use std::path::{Path, PathBuf};

use elroy_core::{
    CallTarget, Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool,
};
use jiff::Timestamp;

use crate::git;
use crate::stubs::{self, Stub};

elroy_core::tool_args! {
    /// Arguments of `create_contrib_repo`.
    pub struct CreateContribRepoArgs {
        path: String => "Filesystem path where the contrib repo should be created (will be created if absent).",
    }
}

/// `create_contrib_repo`: a git repository with the sample plugin, panel, README and .gitignore.
#[derive(Debug, Clone, Copy, Default)]
pub struct CreateContribRepo;

impl TypedTool for CreateContribRepo {
    type Args = CreateContribRepoArgs;
    const NAME: &'static str = "create_contrib_repo";
    const EFFECT: ToolEffect = ToolEffect::EXECUTE.with_target(CallTarget::Path("path"));
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Create a new contrib plugin repository that Elroy can load tools and UI panels from.\n\nSets up a minimal git repository at the given path with stub files for both\ntool functions and a sidebar UI plugin. After creation, point elroy's\n``contrib_tools_path`` config option at this directory so Elroy loads everything\non startup.\n\nEach ``.py`` file (except those starting with ``_``) is scanned for:\n- Functions decorated with ``@tool`` \u{2192} registered as assistant tools.\n- A module-level ``ELROY_PLUGIN`` variable (``ElroyPlugin`` instance) \u{2192} adds a\n tab to the TUI sidebar with the widget returned by ``widget_factory``.";

    fn run(&self, ctx: &ToolContext, args: CreateContribRepoArgs) -> Result<ToolOutput, ToolError> {
        let trimmed = args.path.trim();
        if trimmed.is_empty() {
            return Err("path must not be empty".into());
        }
        let home = std::env::home_dir();
        let path = elroy_config::resolve_path(trimmed, &ctx.cwd, home.as_deref());
        let shown = path.display().to_string();
        let created_dir = ensure_dir(&path)?;
        let (repo, created_repo) = git::open_or_init(&path)?;
        let unborn = git::is_unborn(&repo);
        let written = write_missing(&path, &stubs::ALL)?;
        if !written.is_empty() {
            let message = if unborn {
                "Initial Elroy contrib repo"
            } else {
                "Add Elroy contrib stubs"
            };
            git::commit_files(&repo, &written, message, ctx.time.now())?;
        }
        // Elroy's words, then how the person trusts the executables (elroy runs no plugin it
        // has not been told to trust: `docs/tool-rules.md#plugin-trust`).
        let executables: Vec<String> = stubs::ALL
            .iter()
            .filter(|(_, _, executable)| *executable)
            .map(|(name, _, _)| {
                let plugin = path.join(name).display().to_string();
                shlex::try_quote(&plugin).map_or(plugin.clone(), |q| q.into_owned())
            })
            .collect();
        let tail = format!(
            "Set contrib_tools_path to {shown} and restart Elroy to load its tools and panels. \
             Elroy runs them only after the person has read and trusted them: elroy plugins trust {}",
            executables.join(" ")
        );
        let text = if written.is_empty() {
            format!("Contrib repo at {shown} already has its stub files. {tail}")
        } else if created_dir || created_repo {
            format!(
                "Created contrib repo at {shown} (added {}). {tail}",
                written.join(", ")
            )
        } else {
            format!(
                "Updated contrib repo at {shown} (added {}). {tail}",
                written.join(", ")
            )
        };
        Ok(ToolOutput::text(text))
    }
}

/// Creates `path` with its parents when absent; returns whether it was created.
fn ensure_dir(path: &Path) -> Result<bool, ToolError> {
    if path.exists() {
        if !path.is_dir() {
            return Err(ToolError::new(format!(
                "Path exists and is not a directory: {}",
                path.display()
            )));
        }
        return Ok(false);
    }
    std::fs::create_dir_all(path)
        .map_err(|e| format!("Unable to create directory {}: {e}", path.display()))?;
    Ok(true)
}

/// Writes each stub that does not exist yet (atomically, never replacing a file); returns the
/// names written, in order.
pub(crate) fn write_missing(dir: &Path, list: &[Stub]) -> Result<Vec<&'static str>, ToolError> {
    let mut written = Vec::new();
    for (name, content, executable) in list {
        let target = dir.join(name);
        if target.symlink_metadata().is_ok() {
            continue;
        }
        write_new(&target, content, *executable)
            .map_err(|e| format!("Unable to write {}: {e}", target.display()))?;
        written.push(*name);
    }
    Ok(written)
}

fn write_new(target: &Path, content: &str, executable: bool) -> std::io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(content.as_bytes())?;
    file.as_file().sync_all()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if executable { 0o755 } else { 0o644 };
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    file.persist_noclobber(target).map_err(|e| e.error)?;
    Ok(())
}

/// Makes sure `$ELROY_HOME/contrib/` exists as the root of a git repository with `README.md` and
/// `.gitignore`, committed as `Initial Elroy contrib repo` when the repository has no commit yet
/// (`docs/tools.md#edit_contrib_with_codex` step 2). Returns the directory.
pub(crate) fn ensure_home_contrib(dir: PathBuf, now: Timestamp) -> Result<PathBuf, ToolError> {
    ensure_dir(&dir)?;
    let (repo, _) = git::open_or_init(&dir)?;
    write_missing(&dir, &stubs::DOCS_ONLY)?;
    if git::is_unborn(&repo) {
        let files: Vec<&str> = stubs::DOCS_ONLY.iter().map(|(n, _, _)| *n).collect();
        git::commit_files(&repo, &files, "Initial Elroy contrib repo", now)?;
    }
    Ok(dir)
}
