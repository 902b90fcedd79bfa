//! The MCP handler: `tools/list` and `tools/call` over an opened [`Runtime`].

use std::sync::Arc;

use elroy_core::{Caller, Changes, EffectClass, ToolSpec};
use elroy_runtime::Runtime;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::RwLock;

/// What the server tells clients about itself at initialization.
const INSTRUCTIONS: &str = "elroy's tools: long-term memories (create_memory, examine_memories, \
print_memory, …), an agenda of dated items and due items, feature requests, and the MEMORY.md / \
USER.md notes. Each call acts on the user's elroy home exactly as when elroy's own model calls it.";

/// The MCP server handler. Clones share one runtime.
#[derive(Clone)]
pub struct ElroyMcpServer {
    runtime: Arc<RwLock<Runtime>>,
}

impl std::fmt::Debug for ElroyMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElroyMcpServer").finish_non_exhaustive()
    }
}

impl ElroyMcpServer {
    /// A server over `runtime` (its registry, stores and user).
    pub fn new(runtime: Runtime) -> Self {
        ElroyMcpServer {
            runtime: Arc::new(RwLock::new(runtime)),
        }
    }

    /// The shared runtime (the plugin watcher swaps its registry).
    pub(crate) fn shared(&self) -> Arc<RwLock<Runtime>> {
        Arc::clone(&self.runtime)
    }

    /// The MCP tools of the current registry the permissions list to a client
    /// ([`listed_specs`]), in registry order.
    pub async fn tools(&self) -> Vec<Tool> {
        let runtime = self.runtime.read().await;
        listed_specs(&runtime).iter().map(mcp_tool).collect()
    }

    /// Runs one call as a direct call on behalf of the client (`Runtime::call_tool_as` with
    /// [`Caller::Client`]): validation, the permission gate, error contract, effects.
    /// `arguments` absent means no arguments (`{}`).
    pub async fn call(&self, name: &str, arguments: Option<&JsonObject>) -> CallToolResult {
        let raw = arguments.map(|map| serde_json::Value::Object(map.clone()).to_string());
        let runtime = self.runtime.read().await;
        let result = runtime
            .call_tool_as(Caller::Client, name, raw.as_deref())
            .await;
        let content = vec![ContentBlock::text(result.content)];
        if result.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
    }
}

/// The specs of `runtime`'s registry a client is shown, in registry order: not a tool a deny
/// rule names, nor, in `read-only` mode, one that writes, reaches the network or runs a program
/// (`Policy::listed_for_client`). In `ask` mode `read` tools, `network` and `execute` tools are
/// listed, with their annotations, for the client to ask its person about; a call the rules
/// refuse is refused by the registry's permission gate whatever was listed.
pub(crate) fn listed_specs(runtime: &Runtime) -> Vec<ToolSpec> {
    let policy = runtime.permissions.policy();
    runtime
        .registry
        .specs()
        .into_iter()
        .filter(|spec| policy.listed_for_client(&spec.name, &spec.effect))
        .cloned()
        .collect()
}

/// The MCP `inputSchema` of a tool: its OpenAI `function.parameters` object
/// (`{"type":"object","properties":{…},"required":[…]}`, key order kept), or
/// `{"type":"object","properties":{}}` for a tool without a `parameters` key (K1), since MCP
/// requires an object schema.
pub fn input_schema(spec: &ToolSpec) -> JsonObject {
    let json = spec.to_json();
    match json.get("function").and_then(|f| f.get("parameters")) {
        Some(serde_json::Value::Object(parameters)) => parameters.clone(),
        _ => {
            let mut empty = JsonObject::new();
            empty.insert("type".into(), "object".into());
            empty.insert(
                "properties".into(),
                serde_json::Value::Object(JsonObject::new()),
            );
            empty
        }
    }
}

/// The MCP tool for `spec`: name and description verbatim, [`input_schema`], and the
/// [`annotations`] of its declared effect.
pub fn mcp_tool(spec: &ToolSpec) -> Tool {
    Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(input_schema(spec)),
    )
    .with_annotations(annotations(spec))
}

/// The MCP annotations of a tool, derived from its declared effect (`spec.effect`), every hint
/// set explicitly (MCP's defaults, destructive and open-world, fit few of elroy's tools):
///
/// - `readOnlyHint`: the tool changes nothing ([`Changes::Nothing`]);
/// - `destructiveHint`: it may delete or overwrite ([`Changes::Overwrites`]), in the home too,
///   since a client cannot see elroy's undo;
/// - `idempotentHint`: true for a read-only tool, false otherwise (an added memory or item is
///   added again);
/// - `openWorldHint`: the tool reaches other machines or runs programs ([`EffectClass::Network`]
///   and [`EffectClass::Execute`]).
pub fn annotations(spec: &ToolSpec) -> ToolAnnotations {
    let effect = spec.effect;
    let read_only = effect.changes == Changes::Nothing;
    ToolAnnotations::from_raw(
        None,
        Some(read_only),
        Some(effect.changes == Changes::Overwrites),
        Some(read_only),
        Some(effect.class >= EffectClass::Network),
    )
}

impl ServerHandler for ElroyMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("elroy", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut result = ListToolsResult::default();
        result.tools = self.tools().await;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = self.call(&request.name, request.arguments.as_ref()).await;
        tracing::info!(tool = %request.name, is_error = ?result.is_error, "mcp tool call");
        Ok(result.into())
    }

    /// Requests rmcp could not type: a method MCP defines whose `params` do not fit it (`tools/call` with `params: null` or without `name`) is `-32602 Invalid params`;
    /// any other method is `-32601 Method not found`, as before.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        tracing::info!(method = %request.method, "mcp request with a method or params rmcp does not know");
        Err(crate::framing::custom_request_error(
            &request.method,
            request.params.as_ref(),
        ))
    }
}
