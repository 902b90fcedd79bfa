//! Reading a plugin's `--schema` output (`docs/tool-rules.md#plugins`).

use elroy_core::ToolSpec;
use serde_json::Value;

/// One object a plugin declares.
#[derive(Debug, Clone, PartialEq)]
pub enum Declaration {
    /// A tool, from an OpenAI tool schema.
    Tool(ToolSpec),
    /// A sidebar panel with this tab title.
    Panel(String),
}

/// Parses `--schema` stdout: one object or an array of objects, each a tool schema or a panel.
///
/// # Errors
/// The skip reason: `--schema output is not valid JSON` or `invalid schema: {detail}`.
pub fn parse_schema_output(stdout: &[u8]) -> Result<Vec<Declaration>, String> {
    let text = std::str::from_utf8(stdout).map_err(|_| "--schema output is not valid JSON")?;
    let value: Value =
        serde_json::from_str(text).map_err(|_| "--schema output is not valid JSON".to_owned())?;
    let objects = match value {
        Value::Array(items) => items,
        other => vec![other],
    };
    if objects.is_empty() {
        return Err("invalid schema: the list declares no tool and no panel".into());
    }
    objects
        .iter()
        .enumerate()
        .map(|(i, o)| declaration(o).map_err(|e| format!("invalid schema: item {}: {e}", i + 1)))
        .collect()
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn declaration(value: &Value) -> Result<Declaration, String> {
    let obj = value.as_object().ok_or("not a JSON object")?;
    match obj.get("type").and_then(Value::as_str) {
        Some("panel") => {
            let title = obj
                .get("title")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or("a panel needs a non-empty \"title\" string")?;
            Ok(Declaration::Panel(title.to_owned()))
        }
        Some("function") => {
            let function = obj
                .get("function")
                .and_then(Value::as_object)
                .ok_or("\"function\" must be an object")?;
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or("\"function.name\" must be a string")?;
            if !valid_name(name) {
                return Err(format!(
                    "tool name '{name}' must match ^[A-Za-z0-9_-]{{1,64}}$"
                ));
            }
            if !function.get("description").is_some_and(Value::is_string) {
                return Err(format!("tool '{name}': \"description\" must be a string"));
            }
            if let Some(parameters) = function.get("parameters") {
                check_parameters(parameters).map_err(|e| format!("tool '{name}': {e}"))?;
            }
            ToolSpec::from_json(value)
                .map(Declaration::Tool)
                .map_err(|e| format!("tool '{name}': {e}"))
        }
        _ => Err("\"type\" must be \"function\" or \"panel\"".into()),
    }
}

fn check_parameters(parameters: &Value) -> Result<(), String> {
    let obj = parameters
        .as_object()
        .ok_or("\"parameters\" must be an object")?;
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err("\"parameters.type\" must be \"object\"".into());
    }
    let properties = obj
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("\"parameters.properties\" must be an object")?;
    if let Some(required) = obj.get("required") {
        let names = required
            .as_array()
            .ok_or("\"parameters.required\" must be an array")?;
        for name in names {
            let name = name
                .as_str()
                .ok_or("\"parameters.required\" must list strings")?;
            if !properties.contains_key(name) {
                return Err(format!("required parameter '{name}' is not in properties"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_and_panels() {
        let out = br#"[{"type":"function","function":{"name":"hi","description":"d","parameters":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}}},{"type":"panel","title":"Hello"}]"#;
        let decl = parse_schema_output(out).unwrap();
        assert_eq!(decl.len(), 2);
        assert!(matches!(&decl[0], Declaration::Tool(s) if s.name == "hi"));
        assert_eq!(decl[1], Declaration::Panel("Hello".into()));
    }

    #[test]
    fn reasons() {
        assert_eq!(
            parse_schema_output(b"hello there").unwrap_err(),
            "--schema output is not valid JSON"
        );
        assert_eq!(
            parse_schema_output(
                br#"{"type":"function","function":{"name":"a b","description":""}}"#
            )
            .unwrap_err(),
            "invalid schema: item 1: tool name 'a b' must match ^[A-Za-z0-9_-]{1,64}$"
        );
        assert_eq!(
            parse_schema_output(br#"{"type":"panel","title":" "}"#).unwrap_err(),
            "invalid schema: item 1: a panel needs a non-empty \"title\" string"
        );
        assert_eq!(
            parse_schema_output(br#"{"type":"function","function":{"name":"x","description":"d","parameters":{"type":"object","properties":{},"required":["y"]}}}"#)
                .unwrap_err(),
            "invalid schema: item 1: tool 'x': required parameter 'y' is not in properties"
        );
    }
}
