//! Reading a plugin's `--schema` output (`docs/tool-rules.md#plugins`).

use elroy_core::{SchemaError, ToolSpec};
use serde_json::Value;

/// Why a plugin's `--schema` output was not read ([`parse_schema_output`]); the text is the
/// skip reason after `plugin PATH: `.
#[derive(Debug, thiserror::Error)]
pub enum SchemaOutputError {
    /// The output is not UTF-8 JSON.
    #[error("--schema output is not valid JSON")]
    NotJson(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// An empty list.
    #[error("invalid schema: the list declares no tool and no panel")]
    Empty,
    /// One declaration (1-based `item`) is not valid.
    #[error("invalid schema: item {item}: {source}")]
    Item {
        /// Its position, from 1.
        item: usize,
        /// What is wrong with it.
        #[source]
        source: DeclarationError,
    },
}

/// What is wrong with one declaration of a plugin's `--schema` output.
#[derive(Debug, thiserror::Error)]
pub enum DeclarationError {
    /// Not a JSON object.
    #[error("not a JSON object")]
    NotObject,
    /// A panel without a title.
    #[error("a panel needs a non-empty \"title\" string")]
    PanelTitle,
    /// `function` is not an object.
    #[error("\"function\" must be an object")]
    FunctionNotObject,
    /// `function.name` is not a string.
    #[error("\"function.name\" must be a string")]
    NameNotString,
    /// The tool name is not `^[A-Za-z0-9_-]{1,64}$`.
    #[error("tool name '{0}' must match ^[A-Za-z0-9_-]{{1,64}}$")]
    BadName(String),
    /// The tool (named) has no description string.
    #[error("tool '{0}': \"description\" must be a string")]
    Description(String),
    /// The tool's (`name`) parameters schema is not valid.
    #[error("tool '{name}': {source}")]
    Schema {
        /// The tool's name.
        name: String,
        /// What is wrong with its schema.
        #[source]
        source: SchemaError,
    },
    /// `type` is neither `function` nor `panel`.
    #[error("\"type\" must be \"function\" or \"panel\"")]
    UnknownType,
}

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
/// [`SchemaOutputError`]: `--schema output is not valid JSON` or `invalid schema: {detail}`.
pub fn parse_schema_output(stdout: &[u8]) -> Result<Vec<Declaration>, SchemaOutputError> {
    let text = std::str::from_utf8(stdout).map_err(|e| SchemaOutputError::NotJson(e.into()))?;
    let value: Value =
        serde_json::from_str(text).map_err(|e| SchemaOutputError::NotJson(e.into()))?;
    let objects = match value {
        Value::Array(items) => items,
        other => vec![other],
    };
    if objects.is_empty() {
        return Err(SchemaOutputError::Empty);
    }
    objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            declaration(o).map_err(|source| SchemaOutputError::Item {
                item: i + 1,
                source,
            })
        })
        .collect()
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn declaration(value: &Value) -> Result<Declaration, DeclarationError> {
    let obj = value.as_object().ok_or(DeclarationError::NotObject)?;
    match obj.get("type").and_then(Value::as_str) {
        Some("panel") => {
            let title = obj
                .get("title")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or(DeclarationError::PanelTitle)?;
            Ok(Declaration::Panel(title.to_owned()))
        }
        Some("function") => {
            let function = obj
                .get("function")
                .and_then(Value::as_object)
                .ok_or(DeclarationError::FunctionNotObject)?;
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or(DeclarationError::NameNotString)?;
            if !valid_name(name) {
                return Err(DeclarationError::BadName(name.to_owned()));
            }
            if !function.get("description").is_some_and(Value::is_string) {
                return Err(DeclarationError::Description(name.to_owned()));
            }
            let in_tool = |source| DeclarationError::Schema {
                name: name.to_owned(),
                source,
            };
            if let Some(parameters) = function.get("parameters") {
                check_parameters(parameters).map_err(in_tool)?;
            }
            ToolSpec::from_json(value)
                .map(Declaration::Tool)
                .map_err(in_tool)
        }
        _ => Err(DeclarationError::UnknownType),
    }
}

fn check_parameters(parameters: &Value) -> Result<(), SchemaError> {
    let obj = parameters
        .as_object()
        .ok_or(SchemaError::ParametersNotObject)?;
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaError::ParametersTypeNotObject);
    }
    let properties = obj
        .get("properties")
        .and_then(Value::as_object)
        .ok_or(SchemaError::PropertiesNotObject)?;
    if let Some(required) = obj.get("required") {
        let names = required.as_array().ok_or(SchemaError::RequiredNotArray)?;
        for name in names {
            let name = name.as_str().ok_or(SchemaError::RequiredNotStrings)?;
            if !properties.contains_key(name) {
                return Err(SchemaError::RequiredNotProperty(name.to_owned()));
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
        assert!(matches!(
            parse_schema_output(b"hello there"),
            Err(SchemaOutputError::NotJson(_))
        ));
        assert!(matches!(
            parse_schema_output(b"[]"),
            Err(SchemaOutputError::Empty)
        ));
        assert_eq!(
            parse_schema_output(b"hello there").unwrap_err().to_string(),
            "--schema output is not valid JSON"
        );
        assert_eq!(
            parse_schema_output(
                br#"{"type":"function","function":{"name":"a b","description":""}}"#
            )
            .unwrap_err()
            .to_string(),
            "invalid schema: item 1: tool name 'a b' must match ^[A-Za-z0-9_-]{1,64}$"
        );
        assert_eq!(
            parse_schema_output(br#"{"type":"panel","title":" "}"#)
                .unwrap_err()
                .to_string(),
            "invalid schema: item 1: a panel needs a non-empty \"title\" string"
        );
        assert_eq!(
            parse_schema_output(br#"{"type":"function","function":{"name":"x","description":"d","parameters":{"type":"object","properties":{},"required":["y"]}}}"#)
                .unwrap_err().to_string(),
            "invalid schema: item 1: tool 'x': required parameter 'y' is not in properties"
        );
    }
}
