//! Argument validation and coercion against a tool's schema
//! (`docs/tool-rules.md#argument-validation`, decision D3; robustness R11–R14).

use serde_json::{Map, Number, Value};

use crate::{ParamType, ToolSpec};

/// Arguments longer than this many bytes are refused unparsed
/// (`docs/tool-rules.md#argument-validation` step 1).
pub const MAX_ARGUMENT_BYTES: usize = 1_048_576;

/// Why a call's arguments were refused (`docs/tool-rules.md#argument-validation`). Its `Display`
/// is the message that follows `Error invoking tool {name}: `, for example
/// `missing required argument 'text'`; `unknown` lists the dropped arguments' descriptions that
/// follow it (`; unknown argument 'txt' — did you mean 'text'?`).
#[derive(Debug, thiserror::Error)]
pub enum ArgumentError {
    /// The raw text is longer than [`MAX_ARGUMENT_BYTES`].
    #[error(
        "arguments exceed the {MAX_ARGUMENT_BYTES}-byte limit ({received} bytes received); the call was not executed"
    )]
    TooLong {
        /// The length received, in bytes.
        received: usize,
    },
    /// The raw text is not JSON.
    #[error("arguments are not valid JSON ({received} bytes received); the call was not executed")]
    NotJson {
        /// The length received, in bytes.
        received: usize,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The arguments are JSON but not an object.
    #[error("arguments must be a JSON object, got {kind}")]
    NotObject {
        /// The JSON kind received (`array`, `string`, …).
        kind: &'static str,
    },
    /// A required argument is absent (or null).
    #[error("missing required argument '{name}'{}", with_unknown(.unknown))]
    Missing {
        /// The parameter's name.
        name: String,
        /// Descriptions of the unknown arguments given.
        unknown: Vec<String>,
    },
    /// An argument's value is not of its declared type and cannot be coerced.
    #[error("argument '{name}' must be {} {}, got {got}{}", article(*.expected), .expected.as_str(), with_unknown(.unknown))]
    WrongType {
        /// The parameter's name.
        name: String,
        /// Its declared type.
        expected: ParamType,
        /// The value received, as compact JSON cut to 50 characters.
        got: String,
        /// Descriptions of the unknown arguments given.
        unknown: Vec<String>,
    },
}

/// `; ` and the unknown arguments' descriptions, or nothing.
fn with_unknown(unknown: &[String]) -> String {
    if unknown.is_empty() {
        String::new()
    } else {
        format!("; {}", unknown.join("; "))
    }
}

/// The article before a type's name (`an integer`, `a string`).
fn article(ty: ParamType) -> &'static str {
    if ty == ParamType::Integer || ty == ParamType::Object || ty == ParamType::Array {
        "an"
    } else {
        "a"
    }
}

/// Arguments that passed validation: a JSON object holding only the schema's properties, with empty
/// optionals removed, required ones present and every value of its declared type (coerced where D3
/// allows).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidatedArgs(Map<String, Value>, Vec<String>);

impl ValidatedArgs {
    /// The arguments as a JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    /// The arguments as a JSON object, by value.
    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }

    /// Wraps a map without validating it. For callers that run a tool outside the registry (tests,
    /// embedders) and accept that the tool sees unchecked values.
    pub fn unchecked(map: Map<String, Value>) -> Self {
        ValidatedArgs(map, Vec::new())
    }

    /// The arguments given that the schema does not have (dropped), each described as
    /// `unknown argument 'txt' — did you mean 'text'?`; empty for a call without any.
    pub fn ignored(&self) -> &[String] {
        &self.1
    }
}

/// The note added to a tool's answer when arguments were ignored
/// ([`ValidatedArgs::ignored`]): `Note: ignored unknown argument 'txt' — did you mean 'text'?`;
/// `None` when none were, so a call without unknown arguments is answered exactly as before.
pub fn ignored_note(ignored: &[String]) -> Option<String> {
    (!ignored.is_empty()).then(|| format!("Note: ignored {}", ignored.join("; ")))
}

/// Each key of `unknown` described for a person or a model, with the closest parameter name
/// when one is near enough to be a slip (`txt` for `text`).
fn describe_unknown(unknown: &[String], params: &[crate::ParamSpec]) -> Vec<String> {
    unknown
        .iter()
        .map(|key| {
            let close = params
                .iter()
                .filter(|p| !unknown.contains(&p.name))
                .map(|p| {
                    (
                        edit_distance(&key.to_lowercase(), &p.name.to_lowercase()),
                        p,
                    )
                })
                .filter(|(d, p)| *d <= 2 && *d < p.name.chars().count().max(2))
                .min_by_key(|(d, _)| *d);
            match close {
                Some((_, p)) => format!("unknown argument '{key}' — did you mean '{}'?", p.name),
                None => format!("unknown argument '{key}'"),
            }
        })
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

/// Validates a raw arguments string as a model (or `elroy tools call --args`) sends it.
///
/// `None`, `""` and whitespace-only text mean `{}`.
///
/// # Errors
/// The first problem found ([`ArgumentError`]), whose text follows `Error invoking tool {name}: `,
/// for example `missing required argument 'text'` or `arguments must be a JSON object, got array`.
pub fn validate_arguments(
    spec: &ToolSpec,
    raw: Option<&str>,
) -> Result<ValidatedArgs, ArgumentError> {
    let raw = raw.unwrap_or("");
    if raw.len() > MAX_ARGUMENT_BYTES {
        return Err(ArgumentError::TooLong {
            received: raw.len(),
        });
    }
    if raw.trim().is_empty() {
        return validate_value(spec, Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_str(raw).map_err(|source| ArgumentError::NotJson {
        received: raw.len(),
        source,
    })?;
    validate_value(spec, value)
}

/// Validates arguments that are already JSON (steps 4–8 of
/// `docs/tool-rules.md#argument-validation`).
///
/// # Errors
/// As [`validate_arguments`].
pub fn validate_value(spec: &ToolSpec, value: Value) -> Result<ValidatedArgs, ArgumentError> {
    let mut input = match value {
        Value::Object(map) => map,
        other => {
            return Err(ArgumentError::NotObject { kind: kind(&other) });
        }
    };
    let params = spec.params.as_deref().unwrap_or_default();
    // The keys the schema does not have, in the order given (named with a failure, else in the
    // answer's note).
    let unknown_keys: Vec<String> = input
        .keys()
        .filter(|k| !params.iter().any(|p| &p.name == *k))
        .cloned()
        .collect();
    let mut out = Map::new();
    for param in params {
        let Some(value) = input.remove(&param.name) else {
            continue;
        };
        let empty = value.is_null() || value.as_str().is_some_and(str::is_empty);
        if value.is_null() || (!param.required && empty) {
            continue;
        }
        out.insert(param.name.clone(), value);
    }
    let unknown = describe_unknown(&unknown_keys, params);
    if let Some(missing) = params
        .iter()
        .find(|p| p.required && !out.contains_key(&p.name))
    {
        return Err(ArgumentError::Missing {
            name: missing.name.clone(),
            unknown,
        });
    }
    for param in params {
        let (Some(ty), Some(value)) = (param.ty, out.get_mut(&param.name)) else {
            continue;
        };
        match coerce(ty, value) {
            Some(coerced) => *value = coerced,
            None => {
                return Err(ArgumentError::WrongType {
                    name: param.name.clone(),
                    expected: ty,
                    got: preview(value),
                    unknown,
                });
            }
        }
    }
    Ok(ValidatedArgs(out, unknown))
}

/// The JSON kind names used in `arguments must be a JSON object, got {kind}`.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Compact JSON of `value`, cut to 50 characters with `…` appended when longer.
fn preview(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(50) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Returns the value in its declared type, or `None` when it is not acceptable.
fn coerce(ty: ParamType, value: &Value) -> Option<Value> {
    match (ty, value) {
        (ParamType::String, Value::String(_))
        | (ParamType::Number, Value::Number(_))
        | (ParamType::Boolean, Value::Bool(_))
        | (ParamType::Object, Value::Object(_))
        | (ParamType::Array, Value::Array(_)) => Some(value.clone()),
        (ParamType::Integer, Value::Number(n)) => integer_from_number(n).map(Value::from),
        (ParamType::Integer, Value::String(s)) => integer_from_str(s).map(Value::from),
        (ParamType::Number, Value::String(s)) => number_from_str(s)
            .and_then(Number::from_f64)
            .map(Value::Number),
        (ParamType::Boolean, Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    }
}

fn integer_from_number(n: &Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    let f = n.as_f64()?;
    // -2^63 is exact in f64; 2^63 is not an i64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    (f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

/// `^\s*[+-]?[0-9]+\s*$`, fitting in 64 bits.
fn integer_from_str(s: &str) -> Option<i64> {
    let t = s.trim();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.strip_prefix('+').unwrap_or(t).parse().ok()
}

/// `^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$`.
fn number_from_str(s: &str) -> Option<f64> {
    let t = s.trim();
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if int_digits == 0 && i == frac_start {
            return None;
        }
    } else if int_digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    t.parse::<f64>().ok().filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParamSpec;

    fn spec() -> ToolSpec {
        ToolSpec::new(
            "t",
            "d",
            Some(vec![
                ParamSpec::new("name", ParamType::String, "", true),
                ParamSpec::new("id", ParamType::Integer, "", false),
                ParamSpec::new("ratio", ParamType::Number, "", false),
                ParamSpec::new("flag", ParamType::Boolean, "", false),
                ParamSpec::new("when", ParamType::String, "", false),
            ]),
        )
    }

    fn ok(raw: &str) -> String {
        serde_json::to_string(validate_arguments(&spec(), Some(raw)).unwrap().as_map()).unwrap()
    }

    fn err(raw: &str) -> String {
        validate_arguments(&spec(), Some(raw))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn empty_means_empty_object() {
        let s = ToolSpec::new(
            "x",
            "d",
            Some(vec![ParamSpec::new("a", ParamType::String, "", false)]),
        );
        for raw in [None, Some(""), Some("  \n")] {
            assert!(validate_arguments(&s, raw).unwrap().as_map().is_empty());
        }
    }

    #[test]
    fn not_json_and_cut_off() {
        assert_eq!(
            err(r#"{"memory_name":"#),
            "arguments are not valid JSON (15 bytes received); the call was not executed"
        );
    }

    /// The kinds behind the words: callers match on these, never on the text.
    #[test]
    fn refusals_are_kinds() {
        let refused = |raw: &str| validate_arguments(&spec(), Some(raw)).unwrap_err();
        assert!(matches!(
            refused("{"),
            ArgumentError::NotJson { received: 1, .. }
        ));
        assert!(matches!(
            refused("[1]"),
            ArgumentError::NotObject { kind: "array" }
        ));
        assert!(matches!(
            refused("7"),
            ArgumentError::NotObject { kind: "number" }
        ));
        assert!(matches!(
            refused(r#"{"nam":"x"}"#),
            ArgumentError::Missing { ref name, ref unknown } if name == "name" && unknown.len() == 1
        ));
        assert!(matches!(
            refused(r#"{"name":"x","id":"two"}"#),
            ArgumentError::WrongType { ref name, expected: ParamType::Integer, .. } if name == "id"
        ));
        let long = "x".repeat(MAX_ARGUMENT_BYTES + 1);
        assert!(matches!(
            refused(&long),
            ArgumentError::TooLong { received } if received == MAX_ARGUMENT_BYTES + 1
        ));
    }

    #[test]
    fn non_objects() {
        assert_eq!(err("[1,2]"), "arguments must be a JSON object, got array");
        assert_eq!(err("\"x\""), "arguments must be a JSON object, got string");
        assert_eq!(err("3"), "arguments must be a JSON object, got number");
        assert_eq!(err("true"), "arguments must be a JSON object, got boolean");
        assert_eq!(err("null"), "arguments must be a JSON object, got null");
    }

    #[test]
    fn too_large() {
        let big = format!("{{\"name\":\"{}\"}}", "a".repeat(MAX_ARGUMENT_BYTES));
        assert_eq!(
            err(&big),
            format!(
                "arguments exceed the 1048576-byte limit ({} bytes received); the call was not executed",
                big.len()
            )
        );
    }

    #[test]
    fn required_unknown_and_empty_optionals() {
        assert_eq!(err("{}"), "missing required argument 'name'");
        assert_eq!(err(r#"{"name":null}"#), "missing required argument 'name'");
        assert_eq!(ok(r#"{"name":""}"#), r#"{"name":""}"#);
        assert_eq!(
            ok(r#"{"name":"a","extra":1,"when":"","id":null}"#),
            r#"{"name":"a"}"#
        );
        assert_eq!(ok(r#"{"id":"","name":"a"}"#), r#"{"name":"a"}"#);
    }

    #[test]
    fn unknown_arguments_are_named_with_a_failure_and_listed_on_success() {
        assert_eq!(
            err(r#"{"nmae":"a"}"#),
            "missing required argument 'name'; unknown argument 'nmae' — did you mean 'name'?"
        );
        assert_eq!(
            err(r#"{"name":"a","id":"x","wehn":1,"colour":2}"#),
            "argument 'id' must be an integer, got \"x\"; unknown argument 'wehn' — did you mean 'when'?; unknown argument 'colour'"
        );
        let args = validate_arguments(&spec(), Some(r#"{"name":"a","Id":3,"zzz":1}"#)).unwrap();
        assert_eq!(
            args.ignored(),
            [
                "unknown argument 'Id' — did you mean 'id'?",
                "unknown argument 'zzz'"
            ]
        );
        assert_eq!(
            ignored_note(args.ignored()).unwrap(),
            "Note: ignored unknown argument 'Id' — did you mean 'id'?; unknown argument 'zzz'"
        );
        let clean = validate_arguments(&spec(), Some(r#"{"name":"a","id":3}"#)).unwrap();
        assert!(clean.ignored().is_empty());
        assert_eq!(ignored_note(clean.ignored()), None);
        assert_eq!(edit_distance("txt", "text"), 1);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn coercions() {
        assert_eq!(ok(r#"{"name":"a","id":"2"}"#), r#"{"name":"a","id":2}"#);
        assert_eq!(ok(r#"{"name":"a","id":" -7 "}"#), r#"{"name":"a","id":-7}"#);
        assert_eq!(ok(r#"{"name":"a","id":2.0}"#), r#"{"name":"a","id":2}"#);
        assert_eq!(
            ok(r#"{"name":"a","flag":" TRUE "}"#),
            r#"{"name":"a","flag":true}"#
        );
        assert_eq!(
            ok(r#"{"name":"a","ratio":".5e1"}"#),
            r#"{"name":"a","ratio":5.0}"#
        );
        assert_eq!(ok(r#"{"name":"a","ratio":3}"#), r#"{"name":"a","ratio":3}"#);
    }

    #[test]
    fn type_errors() {
        assert_eq!(
            err(r#"{"name":"a","id":"two"}"#),
            r#"argument 'id' must be an integer, got "two""#
        );
        assert_eq!(
            err(r#"{"name":"a","id":2.5}"#),
            "argument 'id' must be an integer, got 2.5"
        );
        assert_eq!(
            err(r#"{"name":"a","id":"99999999999999999999"}"#),
            r#"argument 'id' must be an integer, got "99999999999999999999""#
        );
        assert_eq!(
            err(r#"{"name":5}"#),
            "argument 'name' must be a string, got 5"
        );
        assert_eq!(
            err(r#"{"name":"a","flag":"yes"}"#),
            r#"argument 'flag' must be a boolean, got "yes""#
        );
        assert_eq!(
            err(r#"{"name":"a","ratio":"1e"}"#),
            r#"argument 'ratio' must be a number, got "1e""#
        );
        assert_eq!(
            err(r#"{"name":[1,2]}"#),
            "argument 'name' must be a string, got [1,2]"
        );
        let long = format!(r#"{{"name":"{}"}}"#, "é".repeat(60));
        let _ = long;
        let e = err(&format!(r#"{{"name":"a","id":"{}"}}"#, "x".repeat(60)));
        assert_eq!(
            e,
            format!(
                "argument 'id' must be an integer, got \"{}…",
                "x".repeat(49)
            )
        );
    }

    #[test]
    fn number_grammar() {
        for good in ["1", "+1.", "-.5", "1e5", "1.5E-3", " 2 "] {
            assert!(number_from_str(good).is_some(), "{good}");
        }
        for bad in ["", ".", "e5", "1e", "1.2.3", "0x10", "inf", "NaN"] {
            assert!(number_from_str(bad).is_none(), "{bad}");
        }
    }
}
