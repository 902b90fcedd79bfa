//! What a tool may reach: [`ToolEffect`], declared once on every tool's definition
//! (`docs/security.md#effects`), and what the permission check needs to know about a call
//! ([`Caller`], [`PermissionGate`], [`Approver`]).
//!
//! The effect class decides what a model's call may do unasked; the check itself (modes, rules,
//! secrets) lives in `elroy-permissions`, installed on the registry by the composition root.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::{BoxFuture, ToolContext, ToolOrigin, ToolSpec};

/// How far a tool reaches (`docs/security.md#effects`), from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EffectClass {
    /// Reads or changes only the home's stores (memories, agenda, due items, notes, feature
    /// requests, names).
    Home,
    /// Reads outside the home (files, directories).
    Read,
    /// Reaches other machines.
    Network,
    /// Runs programs or writes outside the home.
    Execute,
}

impl EffectClass {
    /// Every class, from least to most.
    pub const ALL: [EffectClass; 4] = [
        EffectClass::Home,
        EffectClass::Read,
        EffectClass::Network,
        EffectClass::Execute,
    ];

    /// The class's name as `elroy tools list`, the docs and rules spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            EffectClass::Home => "home",
            EffectClass::Read => "read",
            EffectClass::Network => "network",
            EffectClass::Execute => "execute",
        }
    }
}

impl fmt::Display for EffectClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a tool does to the state it reaches, for MCP's `readOnlyHint`, `destructiveHint` and
/// `idempotentHint` and for the `read-only` permission mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Changes {
    /// Changes nothing (a read, a listing, a search).
    Nothing,
    /// Adds something new and never deletes or overwrites.
    Adds,
    /// May delete or overwrite what is there (in the home too: a client cannot see elroy's undo).
    Overwrites,
}

/// Which argument of a call names what it reaches, so that rules and the secrets list can be
/// matched against it (`read_file(~/notes/**)`, `fetch_page(domain:example.org)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallTarget {
    /// Nothing the call names (or nothing a rule can match).
    None,
    /// A filesystem path in this string argument, resolved from the working directory; when the
    /// argument is absent the working directory itself.
    Path(&'static str),
    /// A URL in this string argument.
    Url(&'static str),
}

/// A tool's declared effect: its class, what it changes, and which argument names its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolEffect {
    /// How far the tool reaches.
    pub class: EffectClass,
    /// What it does to what it reaches.
    pub changes: Changes,
    /// The argument naming its target.
    pub target: CallTarget,
}

impl ToolEffect {
    /// Reads the home's stores and changes nothing.
    pub const HOME_READS: ToolEffect = ToolEffect::new(EffectClass::Home, Changes::Nothing);
    /// Adds to the home's stores.
    pub const HOME_ADDS: ToolEffect = ToolEffect::new(EffectClass::Home, Changes::Adds);
    /// Changes or deletes what the home's stores hold.
    pub const HOME_OVERWRITES: ToolEffect = ToolEffect::new(EffectClass::Home, Changes::Overwrites);
    /// Runs a program, which may do anything: the effect of a tool elroy cannot see into
    /// (plugins, MCP tools over stdio) and the default of a spec that declares none.
    pub const EXECUTE: ToolEffect = ToolEffect::new(EffectClass::Execute, Changes::Overwrites);

    /// An effect with no target argument.
    pub const fn new(class: EffectClass, changes: Changes) -> Self {
        ToolEffect {
            class,
            changes,
            target: CallTarget::None,
        }
    }

    /// Reads the path in argument `param` (the working directory when absent).
    pub const fn reads_path(param: &'static str) -> Self {
        ToolEffect {
            class: EffectClass::Read,
            changes: Changes::Nothing,
            target: CallTarget::Path(param),
        }
    }

    /// Fetches the URL in argument `param` and changes nothing.
    pub const fn fetches_url(param: &'static str) -> Self {
        ToolEffect {
            class: EffectClass::Network,
            changes: Changes::Nothing,
            target: CallTarget::Url(param),
        }
    }

    /// The same effect with `target` as its target argument.
    pub const fn with_target(mut self, target: CallTarget) -> Self {
        self.target = target;
        self
    }

    /// True when the tool changes nothing.
    pub fn is_read_only(&self) -> bool {
        self.changes == Changes::Nothing
    }
}

impl Default for ToolEffect {
    fn default() -> Self {
        ToolEffect::EXECUTE
    }
}

/// Who asked for a tool call: the permission check asks, refuses or lets through accordingly
/// (`docs/security.md#who-is-asked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Caller {
    /// A person's own act (`elroy tools call`, the palette, slash commands): never asked;
    /// secrets stay refused unless a rule names them.
    #[default]
    Person,
    /// The model, in a turn: the permission mode and rules apply.
    Model,
    /// Another program's model through `elroy mcp` or `elroy serve`: the rules apply, and a call
    /// that would ask is left to the client, which asks its person.
    Client,
}

/// One call the permission check looks at, after its arguments were validated.
#[derive(Debug, Clone, Copy)]
pub struct GateCall<'a> {
    /// The tool's schema and declared effect.
    pub spec: &'a ToolSpec,
    /// Where the tool comes from.
    pub origin: &'a ToolOrigin,
    /// The validated arguments.
    pub arguments: &'a Map<String, Value>,
}

/// A call the permission check did not let run ([`PermissionGate::check`]). Its `Display` is the
/// refusal the caller reads after `Error invoking tool NAME: ` (`not permitted: …`), made where
/// the decision is made because the model acts on its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// The check every call passes before its tool runs, installed on the registry
/// ([`crate::ToolRegistry::set_permission_gate`]); `elroy-permissions` implements it.
pub trait PermissionGate: Send + Sync {
    /// Lets the call run (`Ok`) or refuses it with the text the caller reads after
    /// `Error invoking tool NAME: `. May ask a person and wait for the answer.
    fn check<'a>(
        &'a self,
        ctx: &'a ToolContext,
        call: GateCall<'a>,
    ) -> BoxFuture<'a, Result<(), Refused>>;

    /// Removes secrets (configured API keys) from a result's text before the caller reads it.
    fn redact(&self, _content: &mut String) {}
}

/// A question to a person: may this call run?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The tool's name.
    pub tool: String,
    /// Its effect class.
    pub class: EffectClass,
    /// What matters in full: the resolved path, the URL, the MCP server, the arguments.
    pub details: Vec<(String, String)>,
    /// The narrowest rule that allows calls like this one (what *always allow* saves).
    pub rule: String,
}

/// A person's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run this call only.
    Once,
    /// Run calls the rule covers until the session ends.
    Session,
    /// Run calls the rule covers from now on: the rule is saved to `permissions.allow`.
    Always,
    /// Do not run it; the reason, when given, is passed to the model.
    Deny {
        /// The person's words for the model.
        reason: Option<String>,
    },
}

/// A front end that can ask its person (the full-screen interface, the line chat).
pub trait Approver: Send + Sync {
    /// Asks the person and waits for the answer.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval>;
}

/// The permission check the registry runs, also kept as a [`crate::Services`] entry so that a
/// tool whose target moves while it runs can have the new target checked the same way: the
/// composition root inserts it beside [`crate::ToolRegistry::set_permission_gate`].
#[derive(Clone)]
pub struct InstalledGate(pub Arc<dyn PermissionGate>);

impl ToolContext {
    /// Checks a call the running tool is about to make on the caller's behalf (`fetch_page`
    /// following a redirect to another host checks the new URL) exactly as if the caller had
    /// asked for it: the same modes, rules, grants and approval prompt. `Ok` when no check is
    /// installed (a registry used as a library without one).
    ///
    /// # Errors
    /// The [`Refused`], as [`PermissionGate::check`] gives it (`not permitted: …`).
    pub async fn check_follow_up(
        &self,
        name: &str,
        effect: ToolEffect,
        arguments: &Map<String, Value>,
    ) -> Result<(), Refused> {
        let Some(gate) = self.services.get::<InstalledGate>() else {
            return Ok(());
        };
        let spec = ToolSpec::new(name, "", None).with_effect(effect);
        let call = GateCall {
            spec: &spec,
            origin: &ToolOrigin::Builtin,
            arguments,
        };
        gate.0.check(self, call).await
    }
}
