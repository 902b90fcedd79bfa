//! # elroy-plugins
//!
//! The plugin protocol (decision D15, `docs/tool-rules.md#plugins`): executables in any language
//! become tools and sidebar panels at session start.
//!
//! - Discovery ([`discover`]): `$ELROY_HOME/contrib/`, then `contrib_tools_path`, then
//!   `custom_tools_path`; directories contribute their executable children, sorted by name.
//! - Description: `{plugin} --schema` prints an OpenAI tool schema, a panel declaration
//!   `{"type":"panel","title":…}`, or an array of them ([`parse_schema_output`]).
//! - Calls ([`PluginTool`]): JSON arguments on stdin, the result on stdout, errors from the exit
//!   status and stderr, `plugin_timeout_seconds`.
//! - Loading ([`load_plugins`]) registers plugin tools after the built-in ones with
//!   [`elroy_core::ToolRegistry::register_plugin`]; invalid plugins are reported as warnings
//!   (`plugin {path}: {reason}`) and skipped, never fatal.
//! - Panels ([`render_panel`]): `{plugin} --panel` prints the tab's markdown.
//! - Trust ([`TrustStore`], [`trust_report`]): a plugin is run (`--schema`, `--panel`, a call)
//!   only while `$ELROY_HOME/plugins-trusted.json` holds its path, target and SHA-256 as they are
//!   now; `elroy plugins trust` adds it. A new or changed plugin is never run, and a command
//!   names the ones it skipped in one line ([`untrusted_summary`]).
//!
//! [`process`] is the child-process runner (capped output, timeout, process-group kill) that the
//! Codex tools share.

mod discover;
mod listing;
mod load;
mod probe;
pub mod process;
mod schema;
mod status;
mod tool;
mod trust;

pub use discover::{Discovered, discover, is_plugin};
pub use listing::{ListRow, TrustChoice};
pub use load::{
    LoadReport, PANEL_CAP, Panel, PanelError, Panels, Untrusted, configured_entries, load_from,
    load_plugins, panel_markdown, render_panel,
};
pub use probe::PROBE_TIMEOUT;
pub use schema::{Declaration, DeclarationError, SchemaOutputError, parse_schema_output};
pub use status::{
    PluginStatus, Stale, TrustReport, config_trust_report, resolve_plugin_path, trust_report,
    untrusted_summary,
};
pub use tool::{PluginTool, STDERR_CAP, STDOUT_CAP};
pub use trust::{
    Change, Fingerprint, TRUST_FILE, TrustEntry, TrustError, TrustList, TrustState, TrustStore,
    absolute, fingerprint,
};

// The integration tests (`tests/*.rs`) run in this crate's unit-test executable, so the package
// builds one test executable (docs/development.md, "Test layout"); they use the crate by its name.
#[cfg(test)]
extern crate self as elroy_plugins;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
