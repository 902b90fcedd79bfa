//! Typed configuration values and their parsing from YAML and from strings
//! (`docs/configuration.md#sources`).

use serde_json::Value;

use crate::keys::KeyType;

/// A configuration value after parsing into its key's type.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigValue {
    /// Unset (null default, nothing given).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A list of strings (or paths).
    List(Vec<String>),
    /// A mapping (JSON object).
    Map(serde_json::Map<String, Value>),
}

impl ConfigValue {
    /// Whether the value is unset.
    pub fn is_null(&self) -> bool {
        matches!(self, ConfigValue::Null)
    }

    /// How `elroy config` shows the value (strings bare, lists as JSON arrays, null as `null`).
    pub fn display(&self) -> String {
        match self {
            ConfigValue::Null => "null".into(),
            ConfigValue::Bool(b) => b.to_string(),
            ConfigValue::Int(i) => i.to_string(),
            ConfigValue::Float(f) => format!("{f:?}"),
            ConfigValue::Str(s) => s.clone(),
            ConfigValue::List(l) => serde_json::to_string(l).unwrap_or_default(),
            ConfigValue::Map(m) => Value::Object(m.clone()).to_string(),
        }
    }
}

/// What went wrong parsing one value: the `expected …, got …` part of the error.
pub(crate) struct Mismatch {
    pub expected: String,
    pub got: String,
}

fn mismatch(expected: &str, got: String) -> Mismatch {
    Mismatch {
        expected: expected.to_owned(),
        got,
    }
}

fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// The parsed default of a key of type `ty` (`default` is YAML text; `None` is null).
pub(crate) fn default_value(ty: KeyType, default: Option<&str>) -> ConfigValue {
    default
        .and_then(|text| serde_saphyr::from_str::<Value>(text).ok())
        .and_then(|v| from_yaml(ty, &v).ok())
        .unwrap_or(ConfigValue::Null)
}

/// Whether a raw YAML value means "not given" (null or an empty string).
pub(crate) fn is_empty_yaml(value: &Value) -> bool {
    value.is_null() || value.as_str().is_some_and(|s| s.trim().is_empty())
}

/// Parses a YAML (file or default) value.
pub(crate) fn from_yaml(ty: KeyType, value: &Value) -> Result<ConfigValue, Mismatch> {
    match (ty, value) {
        (_, Value::Null) => Ok(ConfigValue::Null),
        (KeyType::Bool, Value::Bool(b)) => Ok(ConfigValue::Bool(*b)),
        (KeyType::Int { min }, Value::Number(n)) => match n.as_i64() {
            Some(i) => check_min(i, min),
            None => Err(mismatch("an integer", n.to_string())),
        },
        (KeyType::Float, Value::Number(n)) => n
            .as_f64()
            .map(ConfigValue::Float)
            .ok_or_else(|| mismatch("a number", n.to_string())),
        (KeyType::Str, Value::String(s)) => Ok(ConfigValue::Str(s.clone())),
        (KeyType::Str, Value::Number(n)) => Ok(ConfigValue::Str(n.to_string())),
        (KeyType::Str, Value::Bool(b)) => Ok(ConfigValue::Str(b.to_string())),
        (KeyType::List | KeyType::PathList, Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(mismatch("a list of strings", other.to_string())),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(ConfigValue::List),
        (KeyType::List | KeyType::PathList, Value::String(s)) => from_str(ty, s),
        (KeyType::Map, Value::Object(map)) => Ok(ConfigValue::Map(map.clone())),
        (_, Value::String(s)) => from_str(ty, s),
        (ty, other) => Err(mismatch(expected(ty), other.to_string())),
    }
}

fn expected(ty: KeyType) -> &'static str {
    match ty {
        KeyType::Bool => "a boolean",
        KeyType::Int { .. } => "an integer",
        KeyType::Float => "a number",
        KeyType::Str => "a string",
        KeyType::List | KeyType::PathList => "a list of strings",
        KeyType::Map => "a mapping",
    }
}

fn check_min(i: i64, min: i64) -> Result<ConfigValue, Mismatch> {
    if i < min {
        Err(mismatch(&format!("an integer >= {min}"), i.to_string()))
    } else {
        Ok(ConfigValue::Int(i))
    }
}

/// Parses a string value (environment variables, flags, and YAML strings).
pub(crate) fn from_str(ty: KeyType, raw: &str) -> Result<ConfigValue, Mismatch> {
    let s = raw.trim();
    match ty {
        KeyType::Bool => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(ConfigValue::Bool(true)),
            "false" | "no" | "off" | "0" => Ok(ConfigValue::Bool(false)),
            _ => Err(mismatch("a boolean", quoted(raw))),
        },
        KeyType::Int { min } => match s.parse::<i64>() {
            Ok(i) => check_min(i, min),
            Err(_) => Err(mismatch("an integer", quoted(raw))),
        },
        KeyType::Float => match s.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(ConfigValue::Float(f)),
            _ => Err(mismatch("a number", quoted(raw))),
        },
        KeyType::Str => Ok(ConfigValue::Str(raw.to_owned())),
        KeyType::Map => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => Ok(ConfigValue::Map(map)),
            _ => Err(mismatch("a JSON object", quoted(raw))),
        },
        KeyType::List | KeyType::PathList => {
            if s.starts_with('[') {
                return serde_json::from_str::<Vec<String>>(s)
                    .map(ConfigValue::List)
                    .map_err(|_| mismatch("a list of strings", quoted(raw)));
            }
            let sep = if ty == KeyType::PathList { ':' } else { ',' };
            Ok(ConfigValue::List(
                s.split(sep)
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_to_types() {
        assert_eq!(
            from_str(KeyType::Bool, "OFF").ok(),
            Some(ConfigValue::Bool(false))
        );
        assert_eq!(
            from_str(KeyType::Int { min: 1 }, " 5000 ").ok(),
            Some(ConfigValue::Int(5000))
        );
        assert_eq!(
            from_str(KeyType::Int { min: 1 }, "0")
                .err()
                .map(|m| m.expected),
            Some("an integer >= 1".into())
        );
        assert_eq!(
            from_str(KeyType::Int { min: 0 }, "5k").err().map(|m| m.got),
            Some("\"5k\"".into())
        );
        assert_eq!(
            from_str(KeyType::List, "a, b,").ok(),
            Some(ConfigValue::List(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            from_str(KeyType::List, r#"["a,b"]"#).ok(),
            Some(ConfigValue::List(vec!["a,b".into()]))
        );
        assert_eq!(
            from_str(KeyType::PathList, "/a:/b").ok(),
            Some(ConfigValue::List(vec!["/a".into(), "/b".into()]))
        );
    }
}
