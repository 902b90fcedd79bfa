//! [`ToolRegistry`]: every tool of a session, in a deterministic order, with the shared calling
//! contract: unknown names (D2), argument validation (D3) and error rendering (D1); and
//! [`ToolSource`], the tools that arrive while elroy runs (MCP servers' tools).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::validate::validate_value;
use crate::{
    BoxFuture, GateCall, PermissionGate, Tool, ToolContext, ToolResult, ToolSpec,
    validate_arguments,
};

/// Names elroy itself puts in the context as synthetic pairs (`docs/behaviour.md#synthetic-pairs`).
/// A model that calls one gets `OK` and nothing runs (`docs/tool-rules.md#unknown-tools`).
pub const SYNTHETIC_TOOL_NAMES: [&str; 5] = [
    "get_due_items",
    "get_session_context",
    "context_summary",
    "get_reflective_recall",
    "get_fast_recall",
];

/// A plugin tool not registered because its name is taken
/// ([`ToolRegistry::register_plugin`]): `tool name 'NAME' is already taken by a built-in tool`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool name '{name}' is already taken by {by}")]
pub struct NameTaken {
    /// The tool's name.
    pub name: String,
    /// What has it: `a built-in tool`, `the plugin PATH`, `the MCP server NAME`.
    pub by: String,
}

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOrigin {
    /// Compiled into elroy.
    Builtin,
    /// A plugin executable (`docs/tool-rules.md#plugins`).
    Plugin {
        /// The executable.
        path: PathBuf,
    },
    /// A tool of a Model Context Protocol server elroy is a client of (`mcp_servers`).
    Mcp {
        /// The server's name (its key in `mcp_servers`).
        server: String,
        /// The tool's name as the server lists it (the exposed name is `mcp__…`).
        tool: String,
    },
}

/// One tool a [`ToolSource`] provides, with where it comes from.
#[derive(Clone)]
pub struct SourcedTool {
    /// The tool (its spec's name is the exposed name).
    pub tool: Arc<dyn Tool>,
    /// Where it comes from.
    pub origin: ToolOrigin,
}

/// Tools that arrive while elroy runs: the tools of the MCP servers elroy is a client of, which
/// start in the background and may change their tool lists. A registry with a source offers
/// them after its built-in and plugin tools ([`ToolRegistry::snapshot`],
/// [`ToolRegistry::ready`]); a call of a name the registry does not know asks the source
/// ([`ToolSource::find`]). The source applies nothing of the registry's rules itself: the
/// registry drops names it already has and names in `exclude_tools`.
pub trait ToolSource: Send + Sync {
    /// The tools available now, without waiting or starting anything.
    fn available(&self) -> Vec<SourcedTool>;

    /// Starts whatever is not started, waits until nothing is still starting (each part bounded
    /// by its own startup timeout), and returns the tools available then.
    fn ready(&self) -> BoxFuture<'_, Vec<SourcedTool>>;

    /// The tool exposed as `name`, starting (and waiting for) only the parts that could provide
    /// it; `None` when none does.
    fn find<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Option<SourcedTool>>;
}

/// Told about every tool call that runs, whichever front-end makes it: a direct call, a model turn,
/// MCP. The runtime installs one to record what tools changed (the versioned home,
/// `elroy-history`); core itself does no IO.
///
/// [`CallObserver::call_starting`] is called just before the tool runs and returns an
/// [`ObservedCall`], which is told how the call ended (success or tool error), so an observer can
/// compare before and after. Neither is called for unknown tools, synthetic names or arguments that
/// failed validation (no tool ran). An observer must not fail the call: it reports its own
/// problems (logs) and returns, at most with a note the caller sees (see [`ObservedCall::finished`]).
pub trait CallObserver: Send + Sync {
    /// `name` is about to run with the validated `arguments`.
    fn call_starting(
        &self,
        ctx: &ToolContext,
        name: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Box<dyn ObservedCall>;
}

/// One call a [`CallObserver`] watches, from just before the tool ran until it returned.
pub trait ObservedCall: Send {
    /// The tool returned `result` (`result.is_error` for a tool error). A returned note (one or
    /// more sentences of plain text, e.g. that the change was saved but not recorded in the
    /// history) is appended to the result's content after a blank line, so the model and the user
    /// see it; the call's success or failure is unchanged.
    fn finished(self: Box<Self>, ctx: &ToolContext, result: &ToolResult) -> Option<String>;
}

#[derive(Clone)]
struct Entry {
    tool: Arc<dyn Tool>,
    origin: ToolOrigin,
    /// When a built-in tool was registered, counted from 0 (0 for other tools): the docs' order.
    registered: usize,
}

/// The tools of a session, keyed by name.
///
/// Order (`docs/tool-rules.md#registry-and-schemas`): built-in tools sorted by name, then plugin
/// tools sorted by name, then the tools of a [`ToolSource`] (MCP servers) sorted by name, as far as
/// a snapshot holds them.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    builtin: BTreeMap<String, Entry>,
    /// Built-in registrations so far (the next one's [`Entry::registered`]).
    registrations: usize,
    plugins: BTreeMap<String, Entry>,
    /// The source's tools as of the last [`ToolRegistry::snapshot`] / [`ToolRegistry::ready`].
    sourced: BTreeMap<String, Entry>,
    source: Option<Arc<dyn ToolSource>>,
    /// `exclude_tools`, kept so that tools arriving later are excluded too.
    excluded: BTreeSet<String>,
    observer: Option<Arc<dyn CallObserver>>,
    gate: Option<Arc<dyn PermissionGate>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs the permission check every call passes after its arguments were validated and
    /// before its tool runs (replacing any earlier one); its [`PermissionGate::redact`] cleans
    /// every result. Clones of the registry made afterwards share it.
    pub fn set_permission_gate(&mut self, gate: Arc<dyn PermissionGate>) -> &mut Self {
        self.gate = Some(gate);
        self
    }

    /// The installed permission check, if any.
    pub fn permission_gate(&self) -> Option<&Arc<dyn PermissionGate>> {
        self.gate.as_ref()
    }

    /// Installs the observer told about every call that runs a tool (replacing any earlier one).
    /// Clones of the registry made afterwards share it.
    pub fn set_call_observer(&mut self, observer: Arc<dyn CallObserver>) -> &mut Self {
        self.observer = Some(observer);
        self
    }

    /// The installed call observer, if any (a front-end that rebuilds its registry, such as the
    /// MCP server when plugins change, carries it over).
    pub fn call_observer(&self) -> Option<&Arc<dyn CallObserver>> {
        self.observer.as_ref()
    }

    /// Registers a built-in tool, replacing one of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> &mut Self {
        let name = tool.spec().name.clone();
        self.plugins.remove(&name);
        self.builtin.insert(
            name,
            Entry {
                tool,
                origin: ToolOrigin::Builtin,
                registered: self.registrations,
            },
        );
        self.registrations += 1;
        self
    }

    /// Registers a plugin tool from `path`.
    ///
    /// # Errors
    /// [`NameTaken`] when a tool of that name is already registered (built-in tools win; the
    /// first plugin of a name wins).
    pub fn register_plugin(&mut self, tool: Arc<dyn Tool>, path: PathBuf) -> Result<(), NameTaken> {
        let name = tool.spec().name.clone();
        if let Some(existing) = self.builtin.get(&name).or_else(|| self.plugins.get(&name)) {
            let by = match &existing.origin {
                ToolOrigin::Builtin => "a built-in tool".to_owned(),
                ToolOrigin::Plugin { path } => format!("the plugin {}", path.display()),
                ToolOrigin::Mcp { server, .. } => format!("the MCP server {server}"),
            };
            return Err(NameTaken { name, by });
        }
        self.plugins.insert(
            name,
            Entry {
                tool,
                origin: ToolOrigin::Plugin { path },
                registered: 0,
            },
        );
        Ok(())
    }

    /// Removes the named tools (config `exclude_tools`; applies to plugins and to the tools of a
    /// [`ToolSource`], also those that arrive later). Unknown names are ignored.
    pub fn exclude<S: AsRef<str>>(&mut self, names: &[S]) -> &mut Self {
        for name in names {
            self.builtin.remove(name.as_ref());
            self.plugins.remove(name.as_ref());
            self.sourced.remove(name.as_ref());
            self.excluded.insert(name.as_ref().to_owned());
        }
        self
    }

    /// Adds the tools of `source` (the MCP servers' tools), replacing an earlier source. None of
    /// them is listed until [`ToolRegistry::snapshot`] or [`ToolRegistry::ready`]; calls of
    /// their names work at once ([`ToolRegistry::invoke`] asks the source).
    pub fn set_source(&mut self, source: Arc<dyn ToolSource>) -> &mut Self {
        self.source = Some(source);
        self.sourced.clear();
        self
    }

    /// Drops the source and its tools (`elroy mcp` serves elroy's own tools only, so two elroys
    /// never call each other in a loop).
    pub fn remove_source(&mut self) -> &mut Self {
        self.source = None;
        self.sourced.clear();
        self
    }

    /// Whether a [`ToolSource`] is set.
    pub fn has_source(&self) -> bool {
        self.source.is_some()
    }

    /// A copy listing the source's tools available now (nothing is started or waited for): the
    /// palette's view. Without a source, a plain copy.
    pub fn snapshot(&self) -> ToolRegistry {
        let mut copy = self.clone();
        if let Some(source) = &self.source {
            copy.fill_sourced(source.available());
        }
        copy
    }

    /// A copy listing the source's tools once nothing is still starting ([`ToolSource::ready`]):
    /// what a turn offers the model, what `elroy tools list` prints. Without a source, a plain
    /// copy at once.
    pub async fn ready(&self) -> ToolRegistry {
        let mut copy = self.clone();
        if let Some(source) = &self.source {
            copy.fill_sourced(source.ready().await);
        }
        copy
    }

    fn fill_sourced(&mut self, tools: Vec<SourcedTool>) {
        self.sourced.clear();
        for SourcedTool { tool, origin } in tools {
            let name = tool.spec().name.clone();
            if self.accepts_sourced(&name) {
                self.sourced.insert(
                    name,
                    Entry {
                        tool,
                        origin,
                        registered: 0,
                    },
                );
            }
        }
    }

    /// Whether a source's tool called `name` may be offered: not excluded, not taken by a
    /// built-in tool or a plugin.
    fn accepts_sourced(&self, name: &str) -> bool {
        !self.excluded.contains(name)
            && !self.builtin.contains_key(name)
            && !self.plugins.contains_key(name)
    }

    fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.builtin
            .values()
            .chain(self.plugins.values())
            .chain(self.sourced.values())
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.builtin
            .get(name)
            .or_else(|| self.plugins.get(name))
            .or_else(|| self.sourced.get(name))
    }

    /// The tool called `name` (a source's tool only when a snapshot holds it; see
    /// [`ToolRegistry::find`]).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.entry(name).map(|e| &e.tool)
    }

    /// The tool called `name`, asking the source ([`ToolSource::find`], which starts only what
    /// could provide it) when no snapshot holds it; with where it comes from.
    pub async fn find(&self, name: &str) -> Option<SourcedTool> {
        if let Some(entry) = self.entry(name) {
            return Some(SourcedTool {
                tool: Arc::clone(&entry.tool),
                origin: entry.origin.clone(),
            });
        }
        let source = self.source.as_ref()?;
        if !self.accepts_sourced(name) {
            return None;
        }
        source.find(name).await
    }

    /// Where the tool called `name` comes from.
    pub fn origin(&self, name: &str) -> Option<&ToolOrigin> {
        self.entry(name).map(|e| &e.origin)
    }

    /// Whether a tool called `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.builtin.len() + self.plugins.len() + self.sourced.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tool names in registry order (built-ins, then plugins, then a source's, each sorted).
    pub fn names(&self) -> Vec<&str> {
        self.entries()
            .map(|e| e.tool.spec().name.as_str())
            .collect()
    }

    /// Specs in registry order: the tool list sent to the model.
    pub fn specs(&self) -> Vec<&ToolSpec> {
        self.entries().map(|e| e.tool.spec()).collect()
    }

    /// Specs of the built-in tools only, sorted by name (what `docs/tools_schema.md` lists).
    pub fn builtin_specs(&self) -> Vec<&ToolSpec> {
        self.builtin.values().map(|e| e.tool.spec()).collect()
    }

    /// Specs of the built-in tools in the order they were registered: `docs/tools.md` lists
    /// families in the order of their first tool and each family's tools in this order, so a
    /// family's `register` decides its reading order.
    pub fn builtin_specs_in_registration_order(&self) -> Vec<&ToolSpec> {
        let mut entries: Vec<&Entry> = self.builtin.values().collect();
        entries.sort_by_key(|e| e.registered);
        entries.into_iter().map(|e| e.tool.spec()).collect()
    }

    /// The unknown-tool message (D2): `Unknown tool '{name}'. Available tools: {sorted names}`.
    pub fn unknown_tool_message(&self, name: &str) -> String {
        let mut names = self.names();
        names.sort_unstable();
        format!(
            "Unknown tool '{name}'. Available tools: {}",
            names.join(", ")
        )
    }

    /// Calls a tool with a raw arguments string, as a model sends it
    /// (`docs/tool-rules.md#rules-every-tool-shares`): unknown names give the D2 error (synthetic
    /// names answer `OK`), arguments are validated and coerced, and failures come back as `Error
    /// invoking tool {name}: …` results. Never panics on model input.
    pub async fn invoke(
        &self,
        name: &str,
        raw_arguments: Option<&str>,
        ctx: &ToolContext,
    ) -> ToolResult {
        let Some(SourcedTool { tool, origin }) = self.find(name).await else {
            return self.unknown(name);
        };
        match validate_arguments(tool.spec(), raw_arguments) {
            Ok(args) => self.run(tool.as_ref(), &origin, args, ctx).await,
            Err(e) => ToolResult::error(name, &e.to_string()),
        }
    }

    /// Calls a tool with arguments that are already JSON (MCP, embedders); otherwise as
    /// [`ToolRegistry::invoke`].
    pub async fn invoke_value(
        &self,
        name: &str,
        arguments: Value,
        ctx: &ToolContext,
    ) -> ToolResult {
        let Some(SourcedTool { tool, origin }) = self.find(name).await else {
            return self.unknown(name);
        };
        match validate_value(tool.spec(), arguments) {
            Ok(args) => self.run(tool.as_ref(), &origin, args, ctx).await,
            Err(e) => ToolResult::error(name, &e.to_string()),
        }
    }

    fn unknown(&self, name: &str) -> ToolResult {
        if SYNTHETIC_TOOL_NAMES.contains(&name) {
            return ToolResult {
                content: "OK".into(),
                is_error: false,
                effects: Vec::new(),
                io_kind: None,
            };
        }
        ToolResult::error(name, &self.unknown_tool_message(name))
    }

    async fn run(
        &self,
        tool: &dyn Tool,
        origin: &ToolOrigin,
        args: crate::ValidatedArgs,
        ctx: &ToolContext,
    ) -> ToolResult {
        if let Some(gate) = &self.gate {
            let call = GateCall {
                spec: tool.spec(),
                origin,
                arguments: args.as_map(),
            };
            if let Err(refusal) = gate.check(ctx, call).await {
                return ToolResult::error(&tool.spec().name, &refusal.to_string());
            }
        }
        let observed = self
            .observer
            .as_ref()
            .map(|o| o.call_starting(ctx, &tool.spec().name, args.as_map()));
        let ignored = crate::ignored_note(args.ignored());
        let mut result = match tool.call(ctx, args).await {
            Ok(output) => ToolResult::ok(output),
            Err(error) => ToolResult::failed(&tool.spec().name, &error),
        };
        // Arguments the schema does not have were dropped: say so (`txt` for `text`).
        if let Some(note) = ignored {
            if !result.content.is_empty() {
                result.content.push_str("\n\n");
            }
            result.content.push_str(&note);
        }
        if let Some(note) = observed.and_then(|call| call.finished(ctx, &result)) {
            if !result.content.is_empty() {
                result.content.push_str("\n\n");
            }
            result.content.push_str(&note);
        }
        if let Some(gate) = &self.gate {
            gate.redact(&mut result.content);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NoArgs, ToolError, ToolOutput, TypedTool, UserInfo, sync_tool};

    crate::tool_args! {
        struct EchoArgs {
            text: String => "Text.",
            times: Option<i64> => "Repeat count.",
        }
    }

    struct Echo;
    impl TypedTool for Echo {
        type Args = EchoArgs;
        const NAME: &'static str = "echo";
        const EFFECT: crate::ToolEffect = crate::ToolEffect::HOME_READS;
        const DESCRIPTION: &'static str = "Echo text.";
        fn run(&self, _: &ToolContext, args: EchoArgs) -> Result<ToolOutput, ToolError> {
            if args.text == "fail" {
                return Err(ToolError::new("asked to fail"));
            }
            let n =
                usize::try_from(args.times.unwrap_or(1)).map_err(|_| "times must be at least 0")?;
            Ok(ToolOutput::text(args.text.repeat(n)))
        }
    }

    struct Pwd;
    impl TypedTool for Pwd {
        type Args = NoArgs;
        const NAME: &'static str = "pwd";
        const EFFECT: crate::ToolEffect = crate::ToolEffect::HOME_READS;
        const DESCRIPTION: &'static str = "Where.";
        fn run(&self, _: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("/"))
        }
    }

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register(sync_tool(Pwd)).register(sync_tool(Echo));
        r
    }

    fn ctx() -> ToolContext {
        ToolContext::new(UserInfo {
            id: None,
            token: "DEFAULT".into(),
            elroy_home: "/h".into(),
            user_home: "/h".into(),
        })
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        // The registry's futures never pend for sync tools; poll once with a no-op waker.
        let mut f = std::pin::pin!(f);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => unreachable!("sync tools are ready at once"),
        }
    }

    #[test]
    fn unknown_arguments_are_reported_when_failing_and_noted_when_succeeding() {
        let r = registry();
        let c = ctx();
        let slip = block_on(r.invoke("echo", Some(r#"{"txt":"hi"}"#), &c));
        assert_eq!(
            slip.content,
            "Error invoking tool echo: missing required argument 'text'; unknown argument 'txt' — did you mean 'text'?"
        );
        let noted = block_on(r.invoke("echo", Some(r#"{"text":"hi","tims":2}"#), &c));
        assert_eq!(
            (noted.content.as_str(), noted.is_error),
            (
                "hi\n\nNote: ignored unknown argument 'tims' — did you mean 'times'?",
                false
            )
        );
        let failed = block_on(r.invoke_value("echo", serde_json::json!({"text":"fail","x":1}), &c));
        assert_eq!(
            failed.content,
            "Error invoking tool echo: asked to fail\n\nNote: ignored unknown argument 'x'"
        );
    }

    #[test]
    fn order_and_names() {
        let r = registry();
        assert_eq!(r.names(), ["echo", "pwd"]);
        let registered: Vec<&str> = r
            .builtin_specs_in_registration_order()
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(registered, ["pwd", "echo"]);
    }

    #[test]
    fn invoke_contract() {
        let r = registry();
        let c = ctx();
        let ok = block_on(r.invoke("echo", Some(r#"{"text":"ab","times":"2"}"#), &c));
        assert_eq!((ok.content.as_str(), ok.is_error), ("abab", false));
        let fail = block_on(r.invoke("echo", Some(r#"{"text":"fail"}"#), &c));
        assert_eq!(fail.content, "Error invoking tool echo: asked to fail");
        assert!(fail.is_error);
        let invalid = block_on(r.invoke("echo", Some("[1,2]"), &c));
        assert_eq!(
            invalid.content,
            "Error invoking tool echo: arguments must be a JSON object, got array"
        );
        let unknown = block_on(r.invoke("nope", None, &c));
        assert_eq!(
            unknown.content,
            "Error invoking tool nope: Unknown tool 'nope'. Available tools: echo, pwd"
        );
        let synthetic = block_on(r.invoke("get_due_items", None, &c));
        assert_eq!(
            (synthetic.content.as_str(), synthetic.is_error),
            ("OK", false)
        );
        let no_args = block_on(r.invoke("pwd", Some(r#"{"x":1}"#), &c));
        assert_eq!(no_args.content, "/\n\nNote: ignored unknown argument 'x'");
    }

    #[test]
    fn the_observer_sees_calls_that_ran() {
        #[derive(Default)]
        struct Seen(Arc<std::sync::Mutex<Vec<String>>>);
        struct Call(Arc<std::sync::Mutex<Vec<String>>>, String);
        impl CallObserver for Seen {
            fn call_starting(
                &self,
                _: &ToolContext,
                name: &str,
                arguments: &serde_json::Map<String, Value>,
            ) -> Box<dyn ObservedCall> {
                let call = format!("{name} {}", Value::Object(arguments.clone()));
                self.0.lock().unwrap().push(format!("start {call}"));
                Box::new(Call(Arc::clone(&self.0), call))
            }
        }
        impl ObservedCall for Call {
            fn finished(self: Box<Self>, _: &ToolContext, result: &ToolResult) -> Option<String> {
                self.0
                    .lock()
                    .unwrap()
                    .push(format!("end {} {}", self.1, result.is_error));
                (self.1.contains("fail")).then(|| "Noted by the observer.".to_owned())
            }
        }
        let seen = Arc::new(Seen::default());
        let mut r = registry();
        r.set_call_observer(seen.clone());
        let r = r.clone();
        let c = ctx();
        block_on(r.invoke("echo", Some(r#"{"text":"ab","times":"2"}"#), &c));
        let noted = block_on(r.invoke_value("echo", serde_json::json!({"text": "fail"}), &c));
        // The observer's note follows the result after a blank line; the error stays an error.
        assert!(noted.is_error);
        assert!(
            noted
                .content
                .ends_with("asked to fail\n\nNoted by the observer."),
            "{}",
            noted.content
        );
        block_on(r.invoke("echo", Some("[1]"), &c));
        block_on(r.invoke("nope", None, &c));
        block_on(r.invoke("get_due_items", None, &c));
        assert_eq!(
            *seen.0.lock().unwrap(),
            [
                r#"start echo {"text":"ab","times":2}"#,
                r#"end echo {"text":"ab","times":2} false"#,
                r#"start echo {"text":"fail"}"#,
                r#"end echo {"text":"fail"} true"#
            ]
        );
    }

    #[test]
    fn plugins_follow_builtins_and_cannot_shadow_them() {
        let mut r = registry();
        assert!(
            r.register_plugin(sync_tool(Pwd), "/p/pwd".into())
                .unwrap_err()
                .by
                == "a built-in tool"
        );
        r.exclude(&["pwd"]);
        r.register_plugin(sync_tool(Pwd), "/p/pwd".into()).unwrap();
        assert_eq!(r.names(), ["echo", "pwd"]);
        assert_eq!(
            r.origin("pwd"),
            Some(&ToolOrigin::Plugin {
                path: "/p/pwd".into()
            })
        );
        assert_eq!(r.builtin_specs().len(), 1);
    }

    /// A source's tools: listed only in snapshots, callable at once, never shadowing a built-in
    /// tool, and `exclude_tools` applies to them even when they arrive after the exclusion.
    #[test]
    fn source_tools_follow_the_registry_rules() {
        struct Source;
        fn tool(name: &str) -> SourcedTool {
            struct Named(ToolSpec);
            impl Tool for Named {
                fn spec(&self) -> &ToolSpec {
                    &self.0
                }
                fn call<'a>(
                    &'a self,
                    _: &'a ToolContext,
                    _: crate::ValidatedArgs,
                ) -> BoxFuture<'a, Result<crate::ToolOutput, crate::ToolError>> {
                    let name = self.0.name.clone();
                    Box::pin(async move { Ok(crate::ToolOutput::text(format!("ran {name}"))) })
                }
            }
            SourcedTool {
                tool: Arc::new(Named(ToolSpec::new(name, "From a server.", Some(vec![])))),
                origin: ToolOrigin::Mcp {
                    server: "s".into(),
                    tool: name.into(),
                },
            }
        }
        impl ToolSource for Source {
            fn available(&self) -> Vec<SourcedTool> {
                vec![tool("mcp__s__a"), tool("pwd"), tool("mcp__s__hidden")]
            }
            fn ready(&self) -> BoxFuture<'_, Vec<SourcedTool>> {
                Box::pin(async { self.available() })
            }
            fn find<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Option<SourcedTool>> {
                Box::pin(async move {
                    self.available()
                        .into_iter()
                        .find(|t| t.tool.spec().name == name)
                })
            }
        }
        let mut r = registry();
        r.exclude(&["mcp__s__hidden"]);
        r.set_source(Arc::new(Source));
        assert_eq!(r.names(), ["echo", "pwd"]);
        let c = ctx();
        let called = block_on(r.invoke("mcp__s__a", None, &c));
        assert_eq!(called.content, "ran mcp__s__a");
        let hidden = block_on(r.invoke("mcp__s__hidden", None, &c));
        assert!(hidden.is_error, "{}", hidden.content);
        let snapshot = block_on(r.ready());
        assert_eq!(snapshot.names(), ["echo", "pwd", "mcp__s__a"]);
        assert_eq!(snapshot.origin("pwd"), Some(&ToolOrigin::Builtin));
        assert_eq!(r.snapshot().names(), snapshot.names());
        r.remove_source();
        assert!(block_on(r.invoke("mcp__s__a", None, &c)).is_error);
    }
}
