//! The three schemas equal the golden entries (`shared/golden/tools_schema.json`) by value and key
//! order (K1).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

#[test]
fn schemas_equal_golden() {
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::shared_dir().join("golden/tools_schema.json")).unwrap(),
    )
    .unwrap();
    let registry = common::registry();
    assert_eq!(
        registry.names(),
        [
            "edit_feature_request",
            "list_feature_requests",
            "make_feature_request"
        ]
    );
    for spec in registry.specs() {
        let expected = golden
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == spec.name.as_str())
            .unwrap_or_else(|| panic!("{} not in golden", spec.name));
        // Compared as serialised text: preserve_order keeps key order, so order counts too.
        assert_eq!(
            serde_json::to_string(&spec.to_json()).unwrap(),
            serde_json::to_string(expected).unwrap(),
            "{}",
            spec.name
        );
    }
}
