//! The MCP handler: `tools/list` and `tools/call` over an opened [`Runtime`].

use std::sync::Arc;

use elroy_core::ToolSpec;
use elroy_runtime::Runtime;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
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

    /// The MCP tools of the current registry, in registry order.
    pub async fn tools(&self) -> Vec<Tool> {
        let runtime = self.runtime.read().await;
        runtime.registry.specs().into_iter().map(mcp_tool).collect()
    }

    /// Runs one call as a direct call (`Runtime::call_tool`): validation, error contract,
    /// effects. `arguments` absent means no arguments (`{}`).
    pub async fn call(&self, name: &str, arguments: Option<&JsonObject>) -> CallToolResult {
        let raw = arguments.map(|map| serde_json::Value::Object(map.clone()).to_string());
        let runtime = self.runtime.read().await;
        let result = runtime.call_tool(name, raw.as_deref()).await;
        let content = vec![ContentBlock::text(result.content)];
        if result.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
    }
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

/// The MCP tool for `spec`: name and description verbatim, [`input_schema`].
pub fn mcp_tool(spec: &ToolSpec) -> Tool {
    Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(input_schema(spec)),
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

    /// Requests rmcp could not type: a message over the line limit (replaced by
    /// [`crate::framing`]) is `-32600` naming its size; a method MCP defines whose `params` do not
    /// fit it (`tools/call` with `params: null` or without `name`) is `-32602 Invalid params`;
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
