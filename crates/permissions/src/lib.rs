//! # elroy-permissions
//!
//! The permission check every tool call passes (`docs/security.md`). The model reads text nobody
//! vetted (web pages, other MCP servers' output, files), so what a model's call may do unasked
//! depends on the tool's declared effect ([`elroy_core::ToolEffect`]), the permission [`Mode`]
//! and the person's rules:
//!
//! - [`Rule`]: `read_file`, `mcp__fs__*`, `read_file(~/notes/**)`, `fetch_page(domain:example.org)`;
//! - [`Policy`]: secrets first (never read unless an allow rule names that exact path), then deny,
//!   ask and allow rules, then the mode ([`Policy::decide`]);
//! - [`Gate`]: the [`elroy_core::PermissionGate`] the composition root installs on the registry:
//!   asks through the front end's [`elroy_core::Approver`] (once, for the session, always), refuses
//!   where nobody can answer, shows refusals ([`Notice`]) and redacts API keys from results.
//!
//! Paths are resolved through symlinks and `..` before any matching ([`path::resolve`]).

mod gate;
pub mod path;
mod policy;
mod redact;
mod rule;
mod secrets;

pub use gate::{Gate, Notice, NoticeSink, RuleSaver, approval_request, model_message};
pub use path::Roots;
pub use policy::{
    CallView, Decision, Mode, ModeError, PermissionSettings, Policy, PolicyError, Refusal,
};
pub use redact::{REDACTED, Redactor};
pub use rule::{ResolvedTarget, Rule, RuleError, Specifier};
pub use secrets::{SecretKind, Secrets};
