//! Every built-in tool whose definition says it is Elroy 0.5.0's (`Lineage::Elroy050`) has a
//! schema equal to Elroy's golden schema by value and key order
//! (`testdata/golden/tools_schema.json`, decision K1), every golden tool is one of them, and
//! elroy's own tools are not in the golden file; `docs/tools_schema.md` is current (K2).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use elroy_core::Lineage;
use elroy_tools_builtin::{SCHEMA_DOC_PATH, builtin_registry, tools_schema_markdown};
use serde_json::Value;

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn golden() -> Vec<Value> {
    let path = workspace_root().join("testdata/golden/tools_schema.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("golden schema parses")
}

fn golden_name(entry: &Value) -> &str {
    entry["function"]["name"]
        .as_str()
        .expect("golden entry has a name")
}

/// Kind: a golden tool that is not registered (removed from `builtin_registry()`, renamed, or
/// never added) must fail this test, not shrink the number of tools compared.
#[test]
fn all_40_golden_tools_are_registered_and_equal_golden_by_value_and_key_order() {
    let registry = builtin_registry();
    let golden = golden();
    assert_eq!(golden.len(), 40);
    let missing: Vec<&str> = golden
        .iter()
        .map(golden_name)
        .filter(|n| !registry.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "golden tools not registered by builtin_registry() ({}): {}",
        missing.len(),
        missing.join(", ")
    );
    let mut compared = 0;
    for entry in &golden {
        let tool = registry
            .get(golden_name(entry))
            .unwrap_or_else(|| panic!("{} is registered", golden_name(entry)));
        // serde_json keeps insertion order (preserve_order), so equal strings mean equal key order.
        assert_eq!(
            serde_json::to_string(&tool.spec().to_json()).unwrap(),
            serde_json::to_string(entry).unwrap(),
            "schema of {} differs from golden",
            golden_name(entry)
        );
        compared += 1;
    }
    assert_eq!(compared, 40, "every golden tool is compared");
}

/// Kind: a tool's declared lineage disagrees with the golden file, either way (an Elroy tool
/// that Elroy does not have, an own tool whose name Elroy uses).
#[test]
fn the_declared_lineage_of_every_builtin_matches_the_golden_file() {
    let golden = golden();
    let registry = builtin_registry();
    let mut own = 0;
    for spec in registry.builtin_specs() {
        let in_golden = golden.iter().any(|g| golden_name(g) == spec.name);
        match spec.lineage {
            Lineage::Elroy050 => assert!(
                in_golden,
                "{} is declared Elroy 0.5.0's but is not in the golden file: \
                 declare `const LINEAGE: Lineage = Lineage::Own` (the default)",
                spec.name
            ),
            Lineage::Own => {
                own += 1;
                assert!(
                    !in_golden,
                    "{} is Elroy 0.5.0's (in the golden file): declare \
                     `const LINEAGE: Lineage = Lineage::Elroy050`",
                    spec.name
                );
            }
        }
    }
    assert!(own >= 1, "`memory` at least is elroy's own");
    assert_eq!(registry.builtin_specs().len(), golden.len() + own);
}

#[test]
fn schema_doc_is_current() {
    let path = workspace_root().join(SCHEMA_DOC_PATH);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == tools_schema_markdown(&builtin_registry()),
        "{SCHEMA_DOC_PATH} is out of date: run `cargo xtask schema` and commit the result"
    );
}

#[test]
fn schema_doc_escapes_non_ascii_and_ends_with_one_newline() {
    let doc = tools_schema_markdown(&builtin_registry());
    assert!(doc.is_ascii());
    assert!(doc.ends_with("```\n") && !doc.ends_with("\n\n"));
    assert!(doc.contains("\n## Tool schemas\n```json\n[\n  {\n    \"type\": \"function\",\n"));
}
