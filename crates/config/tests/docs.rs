//! `docs/configuration.md` is current and names every key and environment variable.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_config::{CONFIGURATION_DOC_PATH, KEYS, configuration_markdown};

#[test]
fn configuration_doc_is_current_and_complete() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(CONFIGURATION_DOC_PATH);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == configuration_markdown(),
        "{CONFIGURATION_DOC_PATH} is out of date: run `cargo xtask docs` and commit the result"
    );
    for key in KEYS {
        assert!(
            committed.contains(&format!("| `{}` |", key.name)),
            "{} missing",
            key.name
        );
        assert!(
            committed.contains(&format!("`{}`", key.env)),
            "{} missing",
            key.env
        );
    }
}
