//! Tool schemas: [`ToolSpec`] and its parameters, rendered as OpenAI tool JSON with Elroy's key order.

use serde_json::{Map, Value, json};

use crate::{Lineage, ToolEffect, ToolFamily};

/// The JSON-schema type of one tool parameter.
///
/// Built-in tools only use the four scalar types; plugin schemas (`docs/tool-rules.md#plugins`) may
/// also declare `object` and `array`, which argument validation checks too
/// (`docs/tool-rules.md#argument-validation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamType {
    /// `"string"`
    String,
    /// `"integer"`: 64-bit signed.
    Integer,
    /// `"number"`: 64-bit float.
    Number,
    /// `"boolean"`
    Boolean,
    /// `"object"` (plugin schemas only)
    Object,
    /// `"array"` (plugin schemas only)
    Array,
}

impl ParamType {
    /// The JSON-schema name of the type (`"string"`, `"integer"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
            ParamType::Object => "object",
            ParamType::Array => "array",
        }
    }

    /// Parses a JSON-schema type name; `None` for names elroy does not validate (`"null"`, unknown).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "string" => ParamType::String,
            "integer" => ParamType::Integer,
            "number" => ParamType::Number,
            "boolean" => ParamType::Boolean,
            "object" => ParamType::Object,
            "array" => ParamType::Array,
            _ => return None,
        })
    }
}

/// One parameter of a tool: a property of the schema's `parameters.properties`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// The property name (the JSON key the model sends).
    pub name: String,
    /// The declared type; `None` means any JSON value is accepted.
    pub ty: Option<ParamType>,
    /// Allowed values, rendered as `enum` between `type` and `description`. Not checked by argument
    /// validation: tools report bad values with their own messages
    /// (`docs/tool-rules.md#argument-validation`).
    pub enum_values: Option<Vec<String>>,
    /// The description shown to the model.
    pub description: Option<String>,
    /// Whether the parameter is listed in `required`.
    pub required: bool,
    /// The property's schema as a plugin declared it. When present it is rendered verbatim
    /// instead of `type`/`enum`/`description` (plugin schemas may carry any JSON-schema keys).
    pub raw: Option<Map<String, Value>>,
}

impl ParamSpec {
    /// A typed parameter with a description. A leading `r#` (from a raw identifier) is dropped from
    /// `name`.
    pub fn new(name: &str, ty: ParamType, description: &str, required: bool) -> Self {
        ParamSpec {
            name: name.strip_prefix("r#").unwrap_or(name).to_owned(),
            ty: Some(ty),
            enum_values: None,
            description: Some(description.to_owned()),
            required,
            raw: None,
        }
    }

    /// Adds an `enum` list (rendered between `type` and `description`).
    pub fn with_enum(mut self, values: &[&str]) -> Self {
        self.enum_values = Some(values.iter().map(|v| (*v).to_owned()).collect());
        self
    }

    /// The property's JSON schema object.
    pub fn to_json(&self) -> Value {
        if let Some(raw) = &self.raw {
            return Value::Object(raw.clone());
        }
        let mut obj = Map::new();
        if let Some(ty) = self.ty {
            obj.insert("type".into(), Value::String(ty.as_str().into()));
        }
        if let Some(values) = &self.enum_values {
            obj.insert("enum".into(), json!(values));
        }
        if let Some(description) = &self.description {
            obj.insert("description".into(), Value::String(description.clone()));
        }
        Value::Object(obj)
    }
}

/// A tool's schema: name, description and ordered parameters.
///
/// `params == None` means the tool takes no arguments and its JSON has no `parameters` key (K1);
/// `Some(vec![])` renders `"parameters": {"type": "object", "properties": {}, "required": []}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool name the model calls.
    pub name: String,
    /// The description shown to the model.
    pub description: String,
    /// The parameters in schema order, or `None` when the tool has no `parameters` key.
    pub params: Option<Vec<ParamSpec>>,
    /// Keys of the `parameters` object besides `type`, `properties` and `required`, kept as
    /// declared and rendered after them: `$defs` (which the `$ref`s of nested objects point
    /// to), `title`, `additionalProperties`, … of plugin and MCP server schemas. Empty for the
    /// built-in tools.
    pub parameters_extra: Map<String, Value>,
    /// What the tool may reach (`docs/security.md#effects`); not part of the schema JSON.
    /// [`ToolSpec::new`] starts from [`ToolEffect::EXECUTE`], the most cautious.
    pub effect: ToolEffect,
    /// The family `docs/tools.md` lists the tool under; `None` for plugin and MCP tools (a
    /// built-in tool without one fails `cargo xtask docs --check`). Not part of the schema JSON.
    pub family: Option<&'static ToolFamily>,
    /// Elroy 0.5.0's tool or elroy's own (the golden-schema test compares the former). Not part
    /// of the schema JSON.
    pub lineage: Lineage,
    /// Whether the full-screen interface's command palette lists the tool. `false` for tools no
    /// person calls (the model still sees them, `elroy tools call` still runs them).
    pub in_palette: bool,
}

impl ToolSpec {
    /// A spec from its parts.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        params: Option<Vec<ParamSpec>>,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            params,
            parameters_extra: Map::new(),
            effect: ToolEffect::EXECUTE,
            family: None,
            lineage: Lineage::Own,
            in_palette: true,
        }
    }

    /// The same spec with `effect` as its declared effect.
    pub fn with_effect(mut self, effect: ToolEffect) -> Self {
        self.effect = effect;
        self
    }

    /// The parameter called `name`, if any.
    pub fn param(&self, name: &str) -> Option<&ParamSpec> {
        self.params
            .as_deref()
            .unwrap_or_default()
            .iter()
            .find(|p| p.name == name)
    }

    /// The OpenAI tool JSON: `{"type":"function","function":{"name","description","parameters"?}}`
    /// with `parameters` = `{"type":"object","properties":{…},"required":[…]}` in that key order.
    pub fn to_json(&self) -> Value {
        let mut function = Map::new();
        function.insert("name".into(), Value::String(self.name.clone()));
        function.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        if let Some(params) = &self.params {
            let mut properties = Map::new();
            for p in params {
                properties.insert(p.name.clone(), p.to_json());
            }
            let required: Vec<Value> = params
                .iter()
                .filter(|p| p.required)
                .map(|p| Value::String(p.name.clone()))
                .collect();
            let mut parameters = Map::new();
            parameters.insert("type".into(), Value::String("object".into()));
            parameters.insert("properties".into(), Value::Object(properties));
            parameters.insert("required".into(), Value::Array(required));
            for (key, value) in &self.parameters_extra {
                parameters.insert(key.clone(), value.clone());
            }
            function.insert("parameters".into(), Value::Object(parameters));
        }
        let mut tool = Map::new();
        tool.insert("type".into(), Value::String("function".into()));
        tool.insert("function".into(), Value::Object(function));
        Value::Object(tool)
    }

    /// Reads a spec from OpenAI tool JSON (the shape [`ToolSpec::to_json`] writes), as plugins
    /// declare it with `--schema`. Accepts both the wrapped form (`{"type":"function","function":{…}}`)
    /// and the bare function object (`{"name","description","parameters"}`).
    ///
    /// # Errors
    /// [`SchemaError`], naming what is missing or mistyped.
    pub fn from_json(value: &Value) -> Result<Self, SchemaError> {
        let function = match value.get("function") {
            Some(f) => f,
            None => value,
        };
        let obj = function.as_object().ok_or(SchemaError::NotObject)?;
        let name = obj
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or(SchemaError::NoName)?;
        let description = obj
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match obj.get("parameters") {
            None | Some(Value::Null) => Ok(ToolSpec::new(name, description, None)),
            Some(parameters) => Self::from_input_schema(name, description, parameters),
        }
    }

    /// A spec from a name, a description and a JSON schema of the arguments (an MCP tool's
    /// `inputSchema`, a plugin's `parameters`): `properties` become the parameters (each
    /// property's schema kept verbatim), `required` marks them, and every other key
    /// (`$defs`, `title`, `additionalProperties`, …) is kept in
    /// [`ToolSpec::parameters_extra`]. A schema with no `properties` is a tool with no
    /// parameters (`"properties": {}`).
    ///
    /// # Errors
    /// [`SchemaError`], naming what is mistyped (`parameters.properties` not an object, a
    /// required name that is not a property, …).
    pub fn from_input_schema(
        name: &str,
        description: &str,
        parameters: &Value,
    ) -> Result<Self, SchemaError> {
        let Value::Object(parameters) = parameters else {
            return Err(SchemaError::ParametersNotObject);
        };
        let mut spec = ToolSpec::new(name, description, Some(Self::params_from_json(parameters)?));
        spec.parameters_extra = parameters
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "type" | "properties" | "required"))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Ok(spec)
    }

    fn params_from_json(parameters: &Map<String, Value>) -> Result<Vec<ParamSpec>, SchemaError> {
        let properties = match parameters.get("properties") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return Err(SchemaError::PropertiesNotObject),
        };
        let required: Vec<&str> = match parameters.get("required") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(r)) => r
                .iter()
                .map(|v| v.as_str().ok_or(SchemaError::RequiredNotStrings))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(SchemaError::RequiredNotArray),
        };
        let mut out = Vec::with_capacity(properties.len());
        for (name, schema) in properties {
            let schema = schema
                .as_object()
                .ok_or_else(|| SchemaError::PropertyNotObject(name.clone()))?;
            let ty = schema
                .get("type")
                .and_then(Value::as_str)
                .and_then(ParamType::parse);
            out.push(ParamSpec {
                required: required.contains(&name.as_str()),
                name,
                ty,
                enum_values: None,
                description: schema
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                raw: Some(schema.clone()),
            });
        }
        if let Some(missing) = required.iter().find(|r| !out.iter().any(|p| p.name == **r)) {
            return Err(SchemaError::RequiredNotProperty((*missing).to_owned()));
        }
        Ok(out)
    }
}

/// Why a tool's JSON schema was not read ([`ToolSpec::from_json`],
/// [`ToolSpec::from_input_schema`]); the text names what is missing or mistyped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The schema is not a JSON object.
    #[error("the schema is not a JSON object")]
    NotObject,
    /// The schema has no non-empty `name` string.
    #[error("the schema has no \"name\" string")]
    NoName,
    /// `parameters` is not an object.
    #[error("\"parameters\" must be an object")]
    ParametersNotObject,
    /// `parameters.type` is not `object` (plugins must say it).
    #[error("\"parameters.type\" must be \"object\"")]
    ParametersTypeNotObject,
    /// `parameters.properties` is not an object.
    #[error("\"parameters.properties\" must be an object")]
    PropertiesNotObject,
    /// `parameters.required` lists something other than strings.
    #[error("\"parameters.required\" must list strings")]
    RequiredNotStrings,
    /// `parameters.required` is not an array.
    #[error("\"parameters.required\" must be an array")]
    RequiredNotArray,
    /// A property's schema (named) is not an object.
    #[error("property '{0}' must be an object")]
    PropertyNotObject(String),
    /// A required name that is not a property.
    #[error("required parameter '{0}' is not in properties")]
    RequiredNotProperty(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_params_has_no_parameters_key() {
        let spec = ToolSpec::new("pwd", "Print it.", None);
        assert_eq!(
            serde_json::to_string(&spec.to_json()).unwrap(),
            r#"{"type":"function","function":{"name":"pwd","description":"Print it."}}"#
        );
    }

    #[test]
    fn key_order_and_required() {
        let spec = ToolSpec::new(
            "t",
            "d",
            Some(vec![
                ParamSpec::new("a", ParamType::String, "A.", false),
                ParamSpec::new("r#b", ParamType::Integer, "B.", true).with_enum(&["1"]),
            ]),
        );
        assert_eq!(
            serde_json::to_string(&spec.to_json()).unwrap(),
            r#"{"type":"function","function":{"name":"t","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string","description":"A."},"b":{"type":"integer","enum":["1"],"description":"B."}},"required":["b"]}}}"#
        );
    }

    #[test]
    fn plugin_schema_round_trips_verbatim() {
        let raw = serde_json::json!({"type":"function","function":{"name":"hello_tool","description":"Say hi","parameters":{"type":"object","properties":{"who":{"type":"string","description":"Name","default":"you"},"n":{"type":"array","items":{"type":"integer"}}},"required":["who"]}}});
        let spec = ToolSpec::from_json(&raw).unwrap();
        assert_eq!(spec.to_json(), raw);
        assert_eq!(spec.param("n").unwrap().ty, Some(ParamType::Array));
        assert!(spec.param("who").unwrap().required);
    }

    /// An MCP server's schema (the official Python SDK's, for a pydantic model argument): `$defs`
    /// and `title` survive, so the nested object's `$ref` still resolves.
    #[test]
    fn input_schema_keeps_defs_and_title() {
        let schema = serde_json::json!({"type":"object","properties":{"address":{"$ref":"#/$defs/Address"},"note":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Note"}},"required":["address"],"title":"saveArguments","$defs":{"Address":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}});
        let spec = ToolSpec::from_input_schema("save", "Save.", &schema).unwrap();
        assert_eq!(spec.to_json()["function"]["parameters"], schema);
        assert_eq!(spec.param("note").unwrap().ty, None);
        assert!(spec.param("address").unwrap().required);
        assert_eq!(spec.parameters_extra.len(), 2);
    }

    #[test]
    fn plugin_schema_errors() {
        assert!(ToolSpec::from_json(&serde_json::json!([1])).is_err());
        assert!(ToolSpec::from_json(&serde_json::json!({"description":"x"})).is_err());
        let bad_required =
            serde_json::json!({"name":"x","parameters":{"properties":{},"required":["y"]}});
        assert_eq!(
            ToolSpec::from_json(&bad_required).unwrap_err(),
            SchemaError::RequiredNotProperty("y".into())
        );
        assert_eq!(
            ToolSpec::from_json(&bad_required).unwrap_err().to_string(),
            "required parameter 'y' is not in properties"
        );
    }
}
