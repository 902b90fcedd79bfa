//! [`Value`] and [`Mapping`]: front-matter data with key order preserved.

/// A front-matter value. Reading maps YAML scalars to the closest variant; writing follows the
/// emission rules of `docs/formats.md#yaml-quoting-and-key-order`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null` (also `~` and an empty value when read).
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float (written with Rust's shortest round-trip form).
    Float(f64),
    /// A string, quoted on output only when YAML would misread it.
    String(String),
    /// A UTC instant already formatted as `YYYY-MM-DD HH:MM:SS+00:00`; written unquoted
    /// (PyYAML writes Python datetimes this way, `docs/formats.md#yaml-quoting-and-key-order`
    /// `trigger_datetime`).
    Timestamp(String),
    /// A list.
    List(Vec<Value>),
    /// A nested mapping.
    Map(Mapping),
}

impl Value {
    /// The string, if this is a [`Value::String`] or [`Value::Timestamp`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) | Value::Timestamp(s) => Some(s),
            _ => None,
        }
    }

    /// Whether this is [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// A short, single-line rendering for messages (`invalid boolean for 'completed' in …: {value}`).
    pub fn display_short(&self) -> String {
        match self {
            Value::Null => "null".to_owned(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::String(s) | Value::Timestamp(s) => s.clone(),
            Value::List(_) => "[…]".to_owned(),
            Value::Map(_) => "{…}".to_owned(),
        }
    }

    /// Converts parsed JSON-model data (what the YAML reader produces) into a [`Value`].
    pub fn from_json(value: serde_json::Value) -> Value {
        match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            serde_json::Value::String(s) => Value::String(s),
            serde_json::Value::Array(items) => {
                Value::List(items.into_iter().map(Value::from_json).collect())
            }
            serde_json::Value::Object(map) => Value::Map(Mapping(
                map.into_iter()
                    .map(|(k, v)| (k, Value::from_json(v)))
                    .collect(),
            )),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}

/// An ordered mapping of string keys to values: the front matter of one file. Keys keep the order
/// they were read or inserted in; [`emit_yaml`](crate::emit_yaml) sorts them when asked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mapping(pub Vec<(String, Value)>);

impl Mapping {
    /// An empty mapping.
    pub fn new() -> Self {
        Mapping(Vec::new())
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value under `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`: in place when present (keeping its position), else appended.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        let key = key.into();
        let value = value.into();
        match self.get_mut(&key) {
            Some(slot) => *slot = value,
            None => self.0.push((key, value)),
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(pos).1)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

impl From<Mapping> for Value {
    fn from(m: Mapping) -> Self {
        Value::Map(m)
    }
}
