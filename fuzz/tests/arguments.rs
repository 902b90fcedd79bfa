//! Argument validation (elroy-core `validate_arguments`, `tools.md` §0.5, D3): never panics, and
//! what it accepts has exactly the schema's shape, with values of the declared types, and passes
//! validation again unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use elroy_core::{ParamSpec, ParamType, ToolSpec, validate_arguments};
use elroy_fuzz::fuzz;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const NAMES: &[&str] = &["text", "id", "ratio", "flag", "when", "items", "opts", "x"];

fn param_type() -> impl Strategy<Value = Option<ParamType>> {
    prop::option::weighted(
        0.9,
        prop::sample::select(vec![
            ParamType::String,
            ParamType::Integer,
            ParamType::Number,
            ParamType::Boolean,
            ParamType::Object,
            ParamType::Array,
        ]),
    )
}

fn spec() -> impl Strategy<Value = ToolSpec> {
    prop::option::weighted(
        0.95,
        prop::sample::subsequence(NAMES.to_vec(), 0..=NAMES.len())
            .prop_flat_map(|names| {
                let n = names.len();
                (
                    Just(names),
                    prop::collection::vec((param_type(), any::<bool>()), n),
                )
            })
            .prop_map(|(names, kinds)| {
                names
                    .into_iter()
                    .zip(kinds)
                    .map(|(name, (ty, required))| {
                        let mut p = ParamSpec::new(name, ParamType::String, "d", required);
                        p.ty = ty;
                        p
                    })
                    .collect::<Vec<_>>()
            }),
    )
    .prop_map(|params| ToolSpec::new("fuzz_tool", "A fuzzed tool.", params))
}

/// Strings that sit at the edges of the coercion rules.
fn numeric_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ \t\n]{0,2}[+-]?[0-9]{0,20}(\\.[0-9]{0,3})?([eE][+-]?[0-9]{0,4})?[ \t\n]{0,2}",
        prop::sample::select(vec![
            "true",
            " TRUE ",
            "False",
            "yes",
            "1",
            "0",
            "",
            " ",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "1e308",
            "1e309",
            "-0",
            "+0",
            ".5",
            "5.",
            ".",
            "+",
            "NaN",
            "inf",
            "١٢",
            "0x10",
            "1_0",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec![
            9_007_199_254_740_993.0f64,
            9.223_372_036_854_776e18,
            -9.223_372_036_854_776e18,
            1.5,
            -0.0,
            1e300,
            2.0,
        ])
        .prop_map(|f| json!(f)),
        numeric_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,3}", inner), 0..3)
                .prop_map(|e| Value::Object(e.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Raw argument text: mostly JSON objects over the schema's names, sometimes anything.
fn raw(names: Vec<String>) -> impl Strategy<Value = Option<String>> {
    let object = prop::collection::vec(
        (
            prop_oneof![prop::sample::select(names), "[a-z]{1,4}"],
            json_value(),
        ),
        0..8,
    )
    .prop_map(|e| Value::Object(e.into_iter().collect::<Map<_, _>>()).to_string());
    prop::option::weighted(
        0.97,
        prop_oneof![
            6 => object,
            1 => json_value().prop_map(|v| v.to_string()),
            1 => any::<String>(),
            1 => "[ \t\r\n{}\\[\\]\":,0-9a-z\\\\]{0,24}",
        ],
    )
}

fn type_matches(ty: ParamType, value: &Value) -> bool {
    match ty {
        ParamType::String => value.is_string(),
        ParamType::Integer => value.is_i64(),
        ParamType::Number => value.is_number(),
        ParamType::Boolean => value.is_boolean(),
        ParamType::Object => value.is_object(),
        ParamType::Array => value.is_array(),
    }
}

/// JSON equality, numbers within a few units in the last place: serde_json's default float
/// parser (without its `float_roundtrip` feature) can read a printed float back a few ULP off —
/// a finding reported in README.md, not a validation bug.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x != y => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => {
                x.is_finite()
                    && (x - y).abs() <= (x.abs() * 8.0 * f64::EPSILON).max(f64::MIN_POSITIVE)
            }
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, a), (kb, b))| ka == kb && same(a, b))
        }
        _ => a == b,
    }
}

fn check(spec: &ToolSpec, raw: Option<&str>) -> Result<(), TestCaseError> {
    match validate_arguments(spec, raw) {
        Err(error) => {
            let message = error.to_string();
            prop_assert!(!message.is_empty());
            prop_assert!(!message.contains('\n'), "multi-line error: {:?}", message);
            prop_assert!(!message.starts_with("Error invoking tool"));
        }
        Ok(args) => {
            let params = spec.params.as_deref().unwrap_or_default();
            let map = args.as_map();
            for (key, value) in map {
                let Some(param) = params.iter().find(|p| &p.name == key) else {
                    return Err(TestCaseError::fail(format!("unknown key {key:?} kept")));
                };
                prop_assert!(!value.is_null(), "null kept for {}", key);
                if !param.required {
                    prop_assert!(
                        value.as_str() != Some(""),
                        "empty optional kept for {}",
                        key
                    );
                }
                if let Some(ty) = param.ty {
                    prop_assert!(
                        type_matches(ty, value),
                        "{} is not a {:?}: {}",
                        key,
                        ty,
                        value
                    );
                }
            }
            for p in params.iter().filter(|p| p.required) {
                prop_assert!(map.contains_key(&p.name), "required {} missing", p.name);
            }
            let again = validate_arguments(spec, Some(&Value::Object(map.clone()).to_string()))
                .map_err(|e| TestCaseError::fail(format!("accepted once, refused again: {e}")))?;
            let (a, b) = (Value::Object(again.into_map()), Value::Object(map.clone()));
            prop_assert!(same(&a, &b), "changed on re-validation: {} vs {}", a, b);
        }
    }
    Ok(())
}

#[test]
fn generated_schemas() {
    fuzz(
        "arguments::generated_schemas",
        (spec(), raw(NAMES.iter().map(|n| (*n).to_owned()).collect())),
        |(spec, raw)| check(&spec, raw.as_deref()),
    );
}

/// The 40 seed tool schemas of Elroy 0.5.0.
fn golden_specs() -> Vec<ToolSpec> {
    // `shared/` sits beside the repository; ELROY_SHARED_DIR points elsewhere (a worktree).
    let shared = std::env::var("ELROY_SHARED_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared").to_owned());
    let path = format!("{shared}/golden/tools_schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let list: Vec<Value> = serde_json::from_str(&text).unwrap();
    list.iter()
        .map(|v| ToolSpec::from_json(v).unwrap())
        .collect()
}

#[test]
fn elroy_tool_schemas() {
    let specs = golden_specs();
    assert_eq!(specs.len(), 40);
    let mut names: Vec<String> = specs
        .iter()
        .flat_map(|s| s.params.iter().flatten().map(|p| p.name.clone()))
        .collect();
    names.sort();
    names.dedup();
    fuzz(
        "arguments::elroy_tool_schemas",
        (prop::sample::select(specs), raw(names)),
        |(spec, raw)| check(&spec, raw.as_deref()),
    );
}
