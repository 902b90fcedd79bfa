//! # elroy-core
//!
//! The vocabulary every other elroy crate shares. It does no IO and needs no async runtime.
//!
//! - [`ToolSpec`] / [`ParamSpec`]: a tool's schema, rendered exactly like Elroy's OpenAI tool JSON
//!   (`docs/tool-rules.md#registry-and-schemas`, decision K1). Built-in tools declare their
//!   arguments once with
//!   [`tool_args!`], which produces both the argument struct and its parameter list, so schema and
//!   parsing cannot drift (robustness R14).
//! - [`Tool`], [`TypedTool`], [`AsyncTypedTool`]: what a tool is; its definition also declares
//!   its [`ToolFamily`], its [`Lineage`] (Elroy 0.5.0's or elroy's own) and whether the palette
//!   lists it, so that docs, tests and front ends derive them instead of keeping lists.
//! - [`ToolRegistry`]: deterministic order, lookup, argument validation and coercion (D3), the error
//!   contract (D1), unknown tools (D2).
//! - [`ToolOutput`], [`ToolResult`], [`ToolError`], [`Effect`]: what a call produces
//!   (`docs/tool-rules.md#results`, `docs/tool-rules.md#effects`).
//! - [`ToolEffect`], [`Caller`], [`PermissionGate`], [`Approver`]: what a tool may reach and the
//!   check every call passes (`docs/security.md`).
//! - [`ToolContext`]: what a tool receives besides its arguments
//!   (`docs/tool-rules.md#what-a-tool-receives`).
//! - [`Message`], [`ToolCall`], [`Role`]: the message model shared by transcript, llm and orchestrator.
//! - [`Clock`], [`TimeContext`]: injectable time (`docs/formats.md#the-configured-time-zone`).
//! - [`Embedder`]: an embedding model, for the embedding leg of recall (D9).
//! - [`FileWarning`], [`summarize_warnings`]: problems with single files, shown so that thousands of
//!   similar ones make one line.
//! - [`pyjson`]: JSON written the way Python's `json.dumps(indent=2)` writes it (K2).

mod args;
mod clock;
mod context;
mod effect;
mod embed;
mod error;
mod family;
mod message;
mod output;
pub mod pyjson;
mod registry;
mod spec;
mod tool;
mod validate;
mod warnings;

pub use args::{ArgType, NoArgs, ToolArgs, parse_args};
pub use clock::{Clock, DEFAULT_DAY_START, FixedClock, SystemClock, TimeContext};
pub use context::{
    Capabilities, Conversation, ServiceError, Services, ToolContext, UserId, UserInfo,
};
pub use effect::{
    Approval, ApprovalRequest, Approver, CallTarget, Caller, Changes, EffectClass, GateCall,
    InstalledGate, PermissionGate, Refused, ToolEffect,
};
pub use embed::{EmbedError, Embedder};
pub use error::ToolError;
pub use family::{Lineage, ToolFamily};
pub use message::{
    Message, RecallItem, RecallKind, RecallMetadata, RecallPayload, Role, SYNTHETIC_MODEL, ToolCall,
};
pub use output::{Effect, ToolOutput, ToolResult};
pub use registry::{
    CallObserver, NameTaken, ObservedCall, SYNTHETIC_TOOL_NAMES, SourcedTool, ToolOrigin,
    ToolRegistry, ToolSource,
};
pub use spec::{ParamSpec, ParamType, SchemaError, ToolSpec};
pub use tool::{AsyncTypedTool, BoxFuture, Tool, TypedTool, async_tool, sync_tool};
pub use validate::{
    ArgumentError, MAX_ARGUMENT_BYTES, ValidatedArgs, ignored_note, validate_arguments,
};
pub use warnings::{
    FileWarning, FileWarningSink, ITEMIZED_WARNINGS, SUMMARY_PATHS, summarize_warnings,
    summarize_warnings_with, thousands,
};

/// Private re-exports used by [`tool_args!`]; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use serde;
}
