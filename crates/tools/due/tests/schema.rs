//! Elroy 0.5.0's due-item tools' schemas equal Elroy's golden entries by value and key order (K1).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

#[test]
fn schemas_equal_golden_entries() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../testdata/golden/tools_schema.json");
    let golden: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut registry = elroy_core::ToolRegistry::new();
    elroy_tools_due::register(&mut registry);
    // The tools whose definitions say they are Elroy 0.5.0's; elroy's own are not golden.
    let elroy: Vec<_> = registry
        .specs()
        .into_iter()
        .filter(|spec| spec.lineage.is_elroy())
        .collect();
    assert_eq!(elroy.len(), 6, "Elroy 0.5.0 has 6 of them");
    for spec in elroy {
        let want = golden
            .iter()
            .find(|g| g["function"]["name"] == spec.name.as_str())
            .unwrap_or_else(|| panic!("{} is not a golden tool", spec.name));
        // Serialised with key order preserved, so order differences fail too.
        assert_eq!(
            spec.to_json().to_string(),
            want.to_string(),
            "{}",
            spec.name
        );
    }
}
