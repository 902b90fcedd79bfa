//! [`MemoryArgs`]: the `memory` tool's arguments and schema (`docs/tools.md#memory`), written by
//! hand because the schema has `enum` lists and the tool checks raw values itself
//! (`docs/tool-rules.md#actions-and-checks`).

use elroy_core::{ParamSpec, ParamType, ToolArgs};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The `memory` tool's arguments as raw JSON values: the tool reports wrong types and values
/// with its own messages (`unknown action: …`, `text must be a string`, …). A missing key is
/// `None`; an explicit `null` is `Some(Value::Null)`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct MemoryArgs {
    /// `add`, `replace` or `remove`.
    #[serde(default, deserialize_with = "present")]
    pub action: Option<Value>,
    /// `self` (default) or `user`.
    #[serde(default, deserialize_with = "present")]
    pub target: Option<Value>,
    /// The new entry, or the exact text to find.
    #[serde(default, deserialize_with = "present")]
    pub text: Option<Value>,
    /// The replacement text for `replace`.
    #[serde(default, deserialize_with = "present")]
    pub with: Option<Value>,
}

/// Keeps an explicit `null` as `Some(Value::Null)` (serde's default would make it `None`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl ToolArgs for MemoryArgs {
    fn parameters() -> Option<Vec<ParamSpec>> {
        Some(vec![
            ParamSpec::new(
                "action",
                ParamType::String,
                "What to do: add, replace or remove.",
                true,
            )
            .with_enum(&["add", "replace", "remove"]),
            ParamSpec::new(
                "target",
                ParamType::String,
                "Which notes file to edit: self for MEMORY.md (default) or user for USER.md.",
                false,
            )
            .with_enum(&["self", "user"]),
            ParamSpec::new(
                "text",
                ParamType::String,
                "For add, the new entry. For replace and remove, the exact existing text to find.",
                true,
            ),
            ParamSpec::new(
                "with",
                ParamType::String,
                "For replace, the text that takes the place of text.",
                false,
            ),
        ])
    }
}
