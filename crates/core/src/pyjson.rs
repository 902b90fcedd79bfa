//! JSON text written the way Python's `json.dumps(obj, indent=2)` writes it (with the default
//! `ensure_ascii=True`): two-space indentation, `", "`-free line ends, `": "` between key and value,
//! `[]` / `{}` for empty containers, and every character outside printable ASCII escaped as
//! `\uXXXX` with lower-case hex (surrogate pairs above U+FFFF). `docs/tools_schema.md` uses it (K2).

use serde_json::Value;
use std::fmt::Write as _;

/// Renders `value` like `json.dumps(value, indent=2)`.
pub fn dumps_indent2(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_string(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                write_value(out, item, depth + 1);
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                indent(out, depth + 1);
                write_string(out, key);
                out.push_str(": ");
                write_value(out, item, depth + 1);
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_python() {
        // Expected text produced by CPython 3.11: json.dumps(obj, indent=2)
        let value = json!({"a": [], "b": {}, "c": [1, true, null, "x\u{2192}\"\\\n\u{1}\u{7f}\u{1F600}"], "d": {"e": 1.5}});
        assert_eq!(
            dumps_indent2(&value),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    true,\n    null,\n    \"x\\u2192\\\"\\\\\\n\\u0001\\u007f\\ud83d\\ude00\"\n  ],\n  \"d\": {\n    \"e\": 1.5\n  }\n}"
        );
    }
}
