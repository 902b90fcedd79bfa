//! The `memory` schema equals the JSON of `docs/tools.md#memory` by value and key order.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

#[test]
fn schema_equals_the_spec() {
    let spec_md = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../testdata/spec/tools.md"),
    )
    .unwrap();
    let section = spec_md.split("### 10.2 Schema").nth(1).unwrap();
    let json_text = section
        .split("```json\n")
        .nth(1)
        .unwrap()
        .split("\n```")
        .next()
        .unwrap();
    let expected: serde_json::Value = serde_json::from_str(json_text).unwrap();
    let registry = common::registry();
    assert_eq!(registry.names(), ["memory"]);
    let spec = registry.get("memory").unwrap().spec().to_json();
    // preserve_order: equal text means equal values in equal key order.
    assert_eq!(
        serde_json::to_string(&spec).unwrap(),
        serde_json::to_string(&expected).unwrap()
    );
}
