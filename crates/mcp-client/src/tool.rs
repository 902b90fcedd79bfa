//! One MCP server tool as an elroy [`Tool`]: the server's description and `inputSchema`, calls
//! through the server's connection, the result's text.

use std::sync::Arc;

use elroy_core::{
    BoxFuture, Changes, EffectClass, SchemaError, Tool, ToolContext, ToolEffect, ToolError,
    ToolOutput, ToolSpec, ValidatedArgs,
};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::server::Server;

/// A tool of an MCP server, exposed as `mcp__<server>__<tool>`.
pub struct McpTool {
    pub(crate) spec: ToolSpec,
    /// The tool's name as the server lists it.
    pub(crate) tool: String,
    pub(crate) server: Arc<Server>,
}

impl McpTool {
    /// The tool for `listed` of `server`, exposed as `exposed`.
    ///
    /// # Errors
    /// [`SchemaError`] when the server's `inputSchema` cannot be read as a tool schema.
    pub(crate) fn new(
        server: &Arc<Server>,
        exposed: String,
        listed: &rmcp::model::Tool,
    ) -> Result<Self, SchemaError> {
        let description = listed
            .description
            .as_deref()
            .or(listed.title.as_deref())
            .unwrap_or_default();
        let schema = serde_json::Value::Object((*listed.input_schema).clone());
        let spec = ToolSpec::from_input_schema(&exposed, description, &schema)?
            .with_effect(effect(server.config.kind() == "http", listed));
        Ok(McpTool {
            spec,
            tool: listed.name.to_string(),
            server: Arc::clone(server),
        })
    }
}

/// The effect of a server's tool (`docs/security.md#effects`). Annotations are the server's
/// claims, so they can only lower the class as far as elroy can still vouch for:
///
/// - over stdio the server is a program elroy runs: [`EffectClass::Execute`], unless the tool
///   says it is read-only (`readOnlyHint: true`) and closed-world (`openWorldHint: false`), and
///   even then [`EffectClass::Read`] (the program can read what the user can);
/// - over HTTP the tool runs on another machine: [`EffectClass::Network`] whatever it says.
///
/// What it changes follows the hints: nothing when read-only, additions when it says it is not
/// destructive (`destructiveHint: false`), otherwise it may overwrite (MCP's default).
pub fn effect(http: bool, listed: &rmcp::model::Tool) -> ToolEffect {
    let hints = listed.annotations.as_ref();
    let read_only = hints.and_then(|a| a.read_only_hint) == Some(true);
    let closed_world = hints.and_then(|a| a.open_world_hint) == Some(false);
    let changes = if read_only {
        Changes::Nothing
    } else if hints.and_then(|a| a.destructive_hint) == Some(false) {
        Changes::Adds
    } else {
        Changes::Overwrites
    };
    let class = if http {
        EffectClass::Network
    } else if read_only && closed_world {
        EffectClass::Read
    } else {
        EffectClass::Execute
    };
    ToolEffect::new(class, changes)
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        _ctx: &'a ToolContext,
        args: ValidatedArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let result = self.server.call(&self.tool, args.into_map()).await?;
            let text = result_text(&result);
            if result.is_error == Some(true) {
                Err(ToolError::new(if text.is_empty() {
                    "the server reported an error without a message".to_owned()
                } else {
                    text
                }))
            } else {
                Ok(ToolOutput::text(text))
            }
        })
    }
}

/// What a call of a tool of a server that failed finds: an error naming the server and why it
/// is not available (rather than "unknown tool" with elroy's whole tool list).
pub(crate) struct Unavailable {
    pub(crate) spec: ToolSpec,
    pub(crate) message: String,
}

impl Tool for Unavailable {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        _ctx: &'a ToolContext,
        _args: ValidatedArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(std::future::ready(Err(ToolError::new(
            self.message.clone(),
        ))))
    }
}

/// The text of a call result: its text blocks joined by newlines; an embedded text resource's
/// text; other blocks named by kind (`[image: image/png]`); with no content at all, the
/// `structuredContent` as JSON. A tool returning a string sends both text and
/// `structuredContent` (the official Python SDK): the text is what is shown.
pub fn result_text(result: &CallToolResult) -> String {
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.clone(),
            ContentBlock::Image(image) => format!("[image: {}]", image.mime_type),
            ContentBlock::Audio(audio) => format!("[audio: {}]", audio.mime_type),
            ContentBlock::Resource(resource) => match &resource.resource {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                ResourceContents::BlobResourceContents { uri, .. } => format!("[resource: {uri}]"),
                #[allow(unreachable_patterns)]
                _ => "[resource]".to_owned(),
            },
            ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
            _ => "[content of a kind elroy does not show]".to_owned(),
        })
        .collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        return structured.to_string();
    }
    parts.join("\n")
}
