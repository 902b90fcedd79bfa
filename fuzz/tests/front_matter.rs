//! Front matter (elroy-markdown, `formats.md` §3): parsing never panics, and what elroy writes it
//! reads back unchanged — both for generated data and for whatever the parser accepted from
//! arbitrary text (the read-modify-write path of every store).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use elroy_fuzz::fuzz;
use elroy_markdown::{Document, Mapping, Value};
use proptest::prelude::*;

/// Strings that stress YAML quoting: indicators, booleans/nulls of YAML 1.1, numbers, blanks.
fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[-:#&*!|>'\"%@`{}\\[\\],?~ \t\n\r.+_eE0-9yYnNoOtTfF\u{85}\u{a0}\u{2028}\u{feff}]{0,12}",
        prop::sample::select(vec![
            "yes",
            "No",
            "on",
            "OFF",
            "null",
            "~",
            "true",
            "1e3",
            "0x1F",
            "0o17",
            "1_000",
            ".inf",
            "-.NaN",
            "2026-03-16",
            "2026-03-16 08:30:00+00:00",
            "12:30",
            "1:2:3",
            "---",
            "...",
            "- a",
            "a: b",
            "#x",
            "'",
            "\"",
            "",
            " ",
            "\t",
            "<<",
            "=",
            "!tag",
            "&a",
            "*a",
            "%",
        ])
        .prop_map(str::to_owned),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        (prop::num::f64::NORMAL | prop::num::f64::ZERO | prop::num::f64::SUBNORMAL)
            .prop_map(Value::Float),
        tricky_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..4).prop_map(|entries| {
                let mut map = Mapping::new();
                for (k, v) in entries {
                    map.insert(k, v);
                }
                Value::Map(map)
            }),
        ]
    })
}

fn mapping() -> impl Strategy<Value = Mapping> {
    prop::collection::vec(
        (prop_oneof!["[a-z_]{1,10}", tricky_string()], value()),
        0..6,
    )
    .prop_map(|entries| {
        let mut map = Mapping::new();
        for (k, v) in entries {
            map.insert(k, v);
        }
        map
    })
}

/// Equality with NaN equal to itself and -0.0 equal to 0.0.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Map(x), Value::Map(y)) => same_map(x, y),
        _ => a == b,
    }
}

fn same_map(a: &Mapping, b: &Mapping) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b.iter())
            .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
}

/// PyYAML's `sort_keys=True` order, applied at every level.
fn sort_map(map: &mut Mapping) {
    map.0.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, v) in &mut map.0 {
        sort_value(v);
    }
}

fn sort_value(value: &mut Value) {
    match value {
        Value::Map(m) => sort_map(m),
        Value::List(items) => items.iter_mut().for_each(sort_value),
        _ => {}
    }
}

fn round_trip(front_matter: &Mapping, body: &str, sort_keys: bool) -> Result<(), TestCaseError> {
    let text = Document::render_with_body(front_matter, body, sort_keys);
    let doc = Document::parse(&text, "fuzz.md").map_err(|e| {
        TestCaseError::fail(format!("elroy cannot read what it wrote: {e}\n{text}"))
    })?;
    let mut expected = front_matter.clone();
    if sort_keys {
        sort_map(&mut expected);
    }
    prop_assert!(doc.has_front_matter, "no front matter in\n{}", text);
    prop_assert!(
        same_map(&doc.front_matter, &expected),
        "front matter changed on the way back\nwritten: {:?}\nread:    {:?}\ntext:\n{}",
        expected,
        doc.front_matter,
        text
    );
    prop_assert_eq!(doc.raw_body, format!("\n{body}"));
    Ok(())
}

#[test]
fn written_front_matter_reads_back() {
    fuzz(
        "front_matter::written_front_matter_reads_back",
        (mapping(), any::<String>(), any::<bool>()),
        |(front_matter, body, sort_keys)| round_trip(&front_matter, &body, sort_keys),
    );
}

/// Text that looks like a front-matter file: fences, YAML-ish lines, CRLF, BOM-less garbage.
fn file_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("---".to_owned()),
        Just("---\r".to_owned()),
        "[a-z_]{1,6}: [-:#&*!|>'\"%@`{}\\[\\],?~ .0-9a-zA-Z\\\\]{0,16}",
        "  - [-:'\"{}\\[\\], a-z0-9]{0,10}",
        "[ \t]{0,4}[a-z]{0,4}:?[ ]?[|>]?[-+]?",
        any::<String>(),
    ];
    prop_oneof![
        prop::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n")),
        any::<String>(),
    ]
}

#[test]
fn any_text_parses_or_errors_and_accepted_front_matter_survives_a_rewrite() {
    fuzz(
        "front_matter::any_text",
        (file_text(), any::<bool>()),
        |(text, sort_keys)| {
            let Ok(doc) = Document::parse(&text, "fuzz.md") else {
                return Ok(());
            };
            if !doc.has_front_matter {
                prop_assert_eq!(&doc.raw_body, &text);
                return Ok(());
            }
            // The stores rewrite a file they read: the values must survive.
            round_trip(&doc.front_matter, doc.body_trimmed(), sort_keys)
        },
    );
}
