#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Inputs found by the property-based fuzz targets in `fuzz/` (see `fuzz/README.md`), kept as
//! fast regression tests.

use elroy_markdown::{Document, Mapping, Value, emit_yaml_scalar_string};

/// `front_matter::written_front_matter_reads_back`: `0o17` was written plain (a YAML 1.1 reader
/// keeps it a string) but elroy's YAML 1.2 reader read it back as the integer 15. Upper-case
/// `0X`/`0B` prefixes had the same problem, and so had YAML 1.1 booleans in mixed case (`nO` was
/// read back as `false`, `oN` as `true`) and decimals with a leading zero (`08` read back as 8.0).
#[test]
fn yaml12_integer_spellings_are_quoted_and_read_back_as_strings() {
    for s in [
        "0o17", "-0o17", "+0O7", "0X1F", "0B101", "0o_1", "nO", "yEs", "tRUE", "oFf", "oN", "08",
        "-0089", "+09",
    ] {
        assert_eq!(emit_yaml_scalar_string(s), format!("'{s}'"));
        let mut map = Mapping::new();
        map.insert("name", Value::List(vec![Value::String(s.to_owned())]));
        let text = Document::render_with_body(&map, "body", true);
        let doc = Document::parse(&text, "x.md").unwrap();
        assert_eq!(doc.front_matter, map, "{text}");
    }
    // Spellings both readers keep as strings stay plain (byte-exact with PyYAML).
    for s in ["0o", "0o8", "0x", "x0o17", "0b2", "nope", "yess", "onn"] {
        assert_eq!(emit_yaml_scalar_string(s), s);
    }
}
