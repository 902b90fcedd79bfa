//! Loading plugins into a registry at session start (`docs/tool-rules.md#plugins`) and drawing
//! panels.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_config::Config;
use elroy_core::ToolRegistry;

use elroy_core::ToolEffect;

use crate::discover::discover;
use crate::probe::{PROBE_TIMEOUT, ProbeFailure, run_flag};
use crate::schema::{Declaration, SchemaOutputError, parse_schema_output};
use crate::status::untrusted_summary;
use crate::tool::PluginTool;
use crate::trust::{TrustList, TrustState, TrustStore};

/// `--schema` output kept (a schema is small; more is not a valid answer anyway).
const SCHEMA_CAP: usize = 1_048_576;
/// `--panel` output kept.
pub const PANEL_CAP: usize = 262_144;

/// A sidebar panel a plugin declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panel {
    /// The tab title.
    pub title: String,
    /// The plugin executable (run with `--panel`).
    pub path: PathBuf,
    /// The trust list checked before each `--panel` run.
    pub trust: TrustStore,
}

/// What loading found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Registered plugin tools: name and executable, in load order.
    pub tools: Vec<(String, PathBuf)>,
    /// Declared panels, in load order.
    pub panels: Vec<Panel>,
    /// One line per skipped plugin or tool: `plugin {path}: {reason}`; plus one line for all the
    /// plugins not run because they are not trusted ([`crate::untrusted_summary`]).
    pub warnings: Vec<String>,
    /// The plugins not run because they are not trusted, with their state, in load order.
    pub untrusted: Vec<(PathBuf, TrustState)>,
}

/// The panels of a session, as the runtime keeps them in [`elroy_core::Services`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Panels(pub Vec<Panel>);

/// The plugins a session did not run because they are not trusted (path and state, in load
/// order), as the runtime keeps them in [`elroy_core::Services`] for a front end that shows
/// [`crate::untrusted_summary`] itself (the full-screen interface, whose stderr is hidden).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Untrusted(pub Vec<(PathBuf, TrustState)>);

/// The configured plugin entries: `contrib_tools_path`, then `custom_tools_path`, each with `~`
/// expanded and relative paths resolved against the working directory.
pub fn configured_entries(config: &Config) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let home = std::env::home_dir();
    let keys = &config.settings;
    keys.contrib_tools_path
        .iter()
        .chain(&keys.custom_tools_path)
        .map(|entry| {
            elroy_config::resolve_path(entry.to_string_lossy().trim(), &cwd, home.as_deref())
        })
        .collect()
}

/// Probes every trusted plugin of the home contrib directory and the configured paths, and
/// registers their tools after the tools already in `registry`. Names in `exclude_tools` are left
/// out. Nothing here is fatal: untrusted plugins (never run), invalid plugins and taken names
/// become warnings.
pub fn load_plugins(config: &Config, registry: &mut ToolRegistry) -> LoadReport {
    load_from(
        &config.paths.contrib_dir(),
        &configured_entries(config),
        &TrustStore::new(&config.paths.elroy_home),
        &config.settings.exclude_tools,
        config.settings.plugin_timeout_seconds,
        registry,
    )
}

/// [`load_plugins`] with explicit inputs: the home contrib directory, the other entries, the
/// home's trust list, the excluded names and the call timeout in seconds. Only plugins the list
/// trusts as they are now are run (`--schema`); their tools and panels check the list again
/// before each run.
pub fn load_from(
    contrib_dir: &Path,
    entries: &[PathBuf],
    trust: &TrustStore,
    exclude: &[String],
    timeout_seconds: u64,
    registry: &mut ToolRegistry,
) -> LoadReport {
    let found = discover(contrib_dir, entries);
    let mut report = LoadReport {
        warnings: found.warnings,
        ..LoadReport::default()
    };
    let list = match trust.load() {
        Ok(list) => list,
        Err(e) => {
            report.warnings.push(e.to_string());
            TrustList::default()
        }
    };
    let mut trusted = Vec::new();
    for path in found.plugins {
        match list.assess(&path) {
            TrustState::Trusted => trusted.push(path),
            state => report.untrusted.push((path, state)),
        }
    }
    // Probes run in parallel: a slow plugin costs its own time only once.
    let probed: Vec<Result<Vec<Declaration>, ProbeError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = trusted
            .iter()
            .map(|path| scope.spawn(move || probe(path)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(ProbeError::Panicked)))
            .collect()
    });
    for (path, outcome) in trusted.iter().zip(probed) {
        let declarations = match outcome {
            Ok(d) => d,
            Err(reason) => {
                report
                    .warnings
                    .push(format!("plugin {}: {reason}", path.display()));
                continue;
            }
        };
        for declaration in declarations {
            match declaration {
                Declaration::Panel(title) => report.panels.push(Panel {
                    title,
                    path: path.clone(),
                    trust: trust.clone(),
                }),
                Declaration::Tool(spec) => {
                    let name = spec.name.clone();
                    if exclude.contains(&name) {
                        continue;
                    }
                    // A plugin runs programs: whatever its schema says, it is `execute`.
                    let spec = spec.with_effect(ToolEffect::EXECUTE);
                    let tool = PluginTool::new(spec, path.clone(), timeout_seconds, trust.clone());
                    if registry
                        .register_plugin(Arc::new(tool), path.clone())
                        .is_ok()
                    {
                        report.tools.push((name, path.clone()));
                    } else {
                        report.warnings.push(format!(
                            "plugin {}: duplicate tool name '{name}'",
                            path.display()
                        ));
                    }
                }
            }
        }
    }
    report.warnings.extend(untrusted_summary(&report.untrusted));
    report
}

/// Why a plugin's `--schema` probe gave no declarations: the skip reason after `plugin PATH: `.
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    /// The probe ran past [`PROBE_TIMEOUT`] and was killed.
    #[error("--schema timed out after {} seconds", PROBE_TIMEOUT.as_secs())]
    TimedOut,
    /// The program could not be started.
    #[error("unable to run --schema: {0}")]
    Spawn(#[source] std::io::Error),
    /// It exited unsuccessfully: its status and the end of its stderr.
    #[error("--schema exited with status {status}: {stderr}")]
    Exited {
        /// The exit code or signal.
        status: String,
        /// The last characters of its stderr.
        stderr: String,
    },
    /// Its output is not a valid declaration.
    #[error(transparent)]
    Schema(#[from] SchemaOutputError),
    /// The probe's thread panicked.
    #[error("--schema probe failed")]
    Panicked,
}

/// Runs `{plugin} --schema` and reads its declarations, or the skip reason.
fn probe(path: &Path) -> Result<Vec<Declaration>, ProbeError> {
    let output = run_flag(path, "--schema", PROBE_TIMEOUT, SCHEMA_CAP).map_err(|f| match f {
        ProbeFailure::TimedOut => ProbeError::TimedOut,
        ProbeFailure::Spawn(e) => ProbeError::Spawn(e),
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(ProbeError::Exited {
            status: exit_text(&output.status),
            stderr: crate::process::last_chars(stderr.trim(), 4000).to_owned(),
        });
    }
    Ok(parse_schema_output(&output.stdout)?)
}

fn exit_text(status: &std::process::ExitStatus) -> String {
    match (status.code(), crate::process::signal_of(status)) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "unknown".to_owned(),
    }
}

/// The text of a panel tab: its markdown, or the [`PanelError`] as `Panel error: …`
/// ([`panel_markdown`]).
pub fn render_panel(panel: &Panel) -> String {
    panel_markdown(panel).unwrap_or_else(|e| e.to_string())
}

/// Why a panel shows no markdown; `Display` is the tab's text, `Panel error: …`.
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    /// The plugin is no longer trusted as it is now and was not run.
    #[error("Panel error: {0}")]
    NotTrusted(#[source] crate::trust::TrustError),
    /// `--panel` failed: its standard error, or `exit status N` when it wrote none.
    #[error("Panel error: {0}")]
    Failed(String),
    /// `--panel` ran longer than [`PROBE_TIMEOUT`](crate::PROBE_TIMEOUT) and was killed.
    #[error("Panel error: --panel timed out after {} seconds", PROBE_TIMEOUT.as_secs())]
    TimedOut,
    /// The plugin could not be started.
    #[error("Panel error: {0}")]
    Spawn(#[source] std::io::Error),
}

/// The markdown of a panel tab: `{plugin} --panel` (plugin's directory, empty stdin, 10-second
/// timeout, stdout capped at 262,144 bytes).
///
/// # Errors
/// [`PanelError`]: a plugin no longer trusted as it is now is not run; `--panel` failed, timed
/// out or could not start.
pub fn panel_markdown(panel: &Panel) -> Result<String, PanelError> {
    panel
        .trust
        .verify(&panel.path)
        .map_err(PanelError::NotTrusted)?;
    match run_flag(&panel.path, "--panel", PROBE_TIMEOUT, PANEL_CAP) {
        Ok(output) if output.status.success() => {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        }
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let stderr = stderr.trim();
            Err(PanelError::Failed(if stderr.is_empty() {
                format!("exit status {}", exit_text(&output.status))
            } else {
                stderr.to_owned()
            }))
        }
        Err(ProbeFailure::TimedOut) => Err(PanelError::TimedOut),
        Err(ProbeFailure::Spawn(e)) => Err(PanelError::Spawn(e)),
    }
}
