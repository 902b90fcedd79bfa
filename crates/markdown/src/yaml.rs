//! YAML emission: the fixed, byte-exact subset of `docs/formats.md#yaml-quoting-and-key-order`
//! (PyYAML block style, our quoting rule, non-ASCII raw, no folding).

use std::sync::LazyLock;

use regex::Regex;

use crate::{Mapping, Value};

/// Strings a YAML 1.1 reader (PyYAML) would resolve to null, bool, int, float, merge or value keys
/// (`docs/formats.md#yaml-quoting-and-key-order` rule 5), as one anchored pattern.
static IMPLICIT_NON_STRING: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:",
        r"~|null|Null|NULL",
        r"|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF",
        r"|[-+]?0b[01_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+",
        r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+",
        r"|[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?",
        r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+",
        r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*",
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        r"|<<|=",
        r")$"
    ))
    .ok()
});

/// Strings that elroy's own reader (serde-saphyr) resolves to non-strings although a YAML 1.1
/// reader keeps them as strings: `0o` octal and upper-case `0X`/`0B` integer prefixes, decimal
/// digits after a leading zero (`08` is read as the number 8), and the
/// YAML 1.1 booleans in any letter case (`nO`, `tRUE`). They are quoted too, so that what elroy
/// writes it reads back (found by `fuzz/`, `front_matter::written_front_matter_reads_back`);
/// PyYAML reads the quoted form identically.
static READER_NON_STRING: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:[-+]?0(?:[oO][0-7_]+|X[0-9a-fA-F_]+|B[01_]+|[0-9_]+)",
        // Case-insensitive by classes: the regex build has no `unicode-case` for `(?i)`.
        r"|[yY]|[yY][eE][sS]|[nN]|[nN][oO]|[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]|[oO][nN]|[oO][fF][fF])$"
    ))
    .ok()
});

static DATE_PREFIX: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}").ok());

/// Characters that force double quotes (`docs/formats.md#yaml-quoting-and-key-order` rule 2).
fn is_special_char(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1F}' | '\u{7F}' | '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}'
    )
}

fn matches(re: &LazyLock<Option<Regex>>, s: &str) -> bool {
    re.as_ref().is_some_and(|re| re.is_match(s))
}

/// Whether `s` may be written as a plain scalar (`docs/formats.md#yaml-quoting-and-key-order` rules
/// 1–5).
fn is_plain_safe(s: &str) -> bool {
    let (Some(first), Some(last)) = (s.chars().next(), s.chars().next_back()) else {
        return false;
    };
    if first.is_whitespace() || last.is_whitespace() {
        return false;
    }
    if s.chars().any(is_special_char) {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    !(matches(&IMPLICIT_NON_STRING, s)
        || matches(&READER_NON_STRING, s)
        || matches(&DATE_PREFIX, s))
}

/// Writes one string scalar by the rule of `docs/formats.md#yaml-quoting-and-key-order`: plain when
/// safe, else single-quoted (`'` doubled), else double-quoted with YAML escapes. Non-ASCII
/// printable characters stay raw.
///
/// ```
/// use elroy_markdown::emit_yaml_scalar_string as q;
/// assert_eq!(q("Write the Q2 report."), "Write the Q2 report.");
/// assert_eq!(q("Re: October 24 booking"), "'Re: October 24 booking'");
/// assert_eq!(q("2026-03-20"), "'2026-03-20'");
/// assert_eq!(q("line one\nline two"), "\"line one\\nline two\"");
/// assert_eq!(q(""), "''");
/// ```
pub fn emit_yaml_scalar_string(s: &str) -> String {
    if is_plain_safe(s) {
        return s.to_owned();
    }
    if !s.chars().any(is_special_char) {
        return format!("'{}'", s.replace('\'', "''"));
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{0}' => out.push_str("\\0"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if is_special_char(c) => {
                let n = u32::from(c);
                if n <= 0xFF {
                    out.push_str(&format!("\\x{n:02X}"));
                } else {
                    out.push_str(&format!("\\u{n:04X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn scalar(value: &Value) -> Option<String> {
    Some(match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) if f.is_nan() => ".nan".to_owned(),
        Value::Float(f) if f.is_infinite() => if *f > 0.0 { ".inf" } else { "-.inf" }.to_owned(),
        Value::Float(f) => format!("{f:?}"),
        Value::String(s) => emit_yaml_scalar_string(s),
        Value::Timestamp(s) => s.clone(),
        Value::List(items) if items.is_empty() => "[]".to_owned(),
        Value::Map(map) if map.is_empty() => "{}".to_owned(),
        Value::List(_) | Value::Map(_) => return None,
    })
}

fn ordered(map: &Mapping, sort_keys: bool) -> Vec<(&str, &Value)> {
    let mut entries: Vec<(&str, &Value)> = map.iter().collect();
    if sort_keys {
        // Unicode code point order is byte order for UTF-8 strings.
        entries.sort_by(|a, b| a.0.cmp(b.0));
    }
    entries
}

fn block_map(map: &Mapping, sort_keys: bool, out: &mut Vec<String>) {
    for (key, value) in ordered(map, sort_keys) {
        let key = emit_yaml_scalar_string(key);
        match (scalar(value), value) {
            (Some(s), _) => out.push(format!("{key}: {s}")),
            (None, Value::List(items)) => {
                out.push(format!("{key}:"));
                block_list(items, sort_keys, out);
            }
            (None, Value::Map(inner)) => {
                out.push(format!("{key}:"));
                let mut lines = Vec::new();
                block_map(inner, sort_keys, &mut lines);
                out.extend(lines.into_iter().map(|l| format!("  {l}")));
            }
            (None, _) => {}
        }
    }
}

fn block_list(items: &[Value], sort_keys: bool, out: &mut Vec<String>) {
    for item in items {
        let lines = match (scalar(item), item) {
            (Some(s), _) => vec![s],
            (None, Value::List(inner)) => {
                let mut lines = Vec::new();
                block_list(inner, sort_keys, &mut lines);
                lines
            }
            (None, Value::Map(inner)) => {
                let mut lines = Vec::new();
                block_map(inner, sort_keys, &mut lines);
                lines
            }
            (None, _) => Vec::new(),
        };
        for (i, line) in lines.into_iter().enumerate() {
            out.push(if i == 0 {
                format!("- {line}")
            } else {
                format!("  {line}")
            });
        }
    }
}

/// Block-style YAML for a front-matter mapping, without a trailing newline
/// (`docs/formats.md#yaml-quoting-and-key-order`).
///
/// `sort_keys`: sort keys by code point at every level (agenda items, due items, memories); `false`
/// keeps the mapping's order (feature requests). Lists are written at their key's indentation
/// (PyYAML style); empty lists and mappings as `[]` / `{}`; an empty top-level mapping as `{}`.
///
/// ```
/// use elroy_markdown::{emit_yaml, Mapping, Value};
/// let mut entry = Mapping::new();
/// entry.insert("text", "Draft outline");
/// entry.insert("id", 1i64);
/// entry.insert("completed", false);
/// let mut fm = Mapping::new();
/// fm.insert("status", "created");
/// fm.insert("checklist", Value::List(vec![Value::Map(entry)]));
/// assert_eq!(
///     emit_yaml(&fm, true),
///     "checklist:\n- completed: false\n  id: 1\n  text: Draft outline\nstatus: created"
/// );
/// ```
pub fn emit_yaml(map: &Mapping, sort_keys: bool) -> String {
    if map.is_empty() {
        return "{}".to_owned();
    }
    let mut lines = Vec::new();
    block_map(map, sort_keys, &mut lines);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_rule_table_of_the_spec() {
        let cases = [
            ("Write the Q2 report.", "Write the Q2 report."),
            ("Buy milk: 2% & eggs!", "'Buy milk: 2% & eggs!'"),
            ("Re: October 24 booking", "'Re: October 24 booking'"),
            ("2026-03-20", "'2026-03-20'"),
            (
                "2026-11-30T03:23:26.014063+00:00",
                "'2026-11-30T03:23:26.014063+00:00'",
            ),
            ("yes", "'yes'"),
            ("123", "'123'"),
            ("1.5", "'1.5'"),
            ("~", "'~'"),
            ("it's", "it's"),
            ("'quoted'", "'''quoted'''"),
            ("#tag", "'#tag'"),
            ("Café au lait", "Café au lait"),
            ("line one\nline two", "\"line one\\nline two\""),
            ("", "''"),
            ("a #b", "'a #b'"),
            ("ends:", "'ends:'"),
            (" lead", "' lead'"),
            ("tab\there", "\"tab\\there\""),
            ("bell\u{7}", "\"bell\\x07\""),
            ("bom\u{FEFF}", "\"bom\\uFEFF\""),
            ("q\"\\\n", "\"q\\\"\\\\\\n\""),
            ("1:30", "'1:30'"),
            ("0x1F", "'0x1F'"),
            ("-", "'-'"),
            ("a-b", "a-b"),
            (
                "Ask about café #wifi: password",
                "'Ask about café #wifi: password'",
            ),
            ("when user talks about Anika", "when user talks about Anika"),
            ("<<", "'<<'"),
            ("2026-3-1 extra", "'2026-3-1 extra'"),
            ("1_000", "'1_000'"),
            (".", "'.'"),
        ];
        for (input, expected) in cases {
            assert_eq!(emit_yaml_scalar_string(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn nested_structures() {
        let mut inner = Mapping::new();
        inner.insert("b", 2i64);
        inner.insert(
            "a",
            Value::List(vec![Value::from("x"), Value::List(vec![])]),
        );
        let mut fm = Mapping::new();
        fm.insert("z", Value::Map(inner));
        fm.insert("empty", Value::Map(Mapping::new()));
        fm.insert("t", Value::Timestamp("2026-12-02 03:30:00+00:00".into()));
        fm.insert("n", Value::Null);
        fm.insert("f", Value::Float(1000.0));
        assert_eq!(
            emit_yaml(&fm, true),
            "empty: {}\nf: 1000.0\n'n': null\nt: 2026-12-02 03:30:00+00:00\nz:\n  a:\n  - x\n  - []\n  b: 2"
        );
        assert_eq!(emit_yaml(&Mapping::new(), true), "{}");
    }
}
