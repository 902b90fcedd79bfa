//! [`Memory`] and [`MemorySource`]: an index row of `docs/formats.md#memory-index`.

use serde_json::Value;

/// One source of a memory (`docs/formats.md#memory-index` `source_metadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemorySource {
    /// `ContextMessageSet` (id = a context version), `Memory` (a memory id) or `AgendaItem`.
    pub source_type: String,
    /// The id in that space.
    pub id: i64,
}

impl MemorySource {
    /// A context snapshot source.
    pub fn context(version: i64) -> Self {
        MemorySource {
            source_type: "ContextMessageSet".into(),
            id: version,
        }
    }

    /// A memory source.
    pub fn memory(id: i64) -> Self {
        MemorySource {
            source_type: "Memory".into(),
            id,
        }
    }
}

/// Writes sources as Elroy does (Python `json.dumps`: `, ` and `: ` separators):
/// `[{"source_type": "ContextMessageSet", "id": 12}]`.
pub fn sources_to_json(sources: &[MemorySource]) -> String {
    let items: Vec<String> = sources
        .iter()
        .map(|s| {
            format!(
                "{{\"source_type\": {}, \"id\": {}}}",
                Value::String(s.source_type.clone()),
                s.id
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// Reads `source_metadata` JSON; entries without a string `source_type` and an integer `id` are
/// skipped, and invalid JSON reads as no sources.
pub fn sources_from_json(text: &str) -> Vec<MemorySource> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|v| {
            Some(MemorySource {
                source_type: v.get("source_type")?.as_str()?.to_owned(),
                id: v.get("id")?.as_i64()?,
            })
        })
        .collect()
}

/// A memory's index row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    /// The front-matter id, unique among the user's memories.
    pub id: i64,
    /// The name (kept in the database only).
    pub name: String,
    /// Relative to the memory directory: `Dog.md` or `archive/Dog.md`.
    pub file_name: String,
    /// Whether the memory is current (recallable).
    pub is_active: bool,
    /// Where it came from, in order.
    pub sources: Vec<MemorySource>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_json_like_python() {
        let s = vec![MemorySource::context(8), MemorySource::memory(1)];
        let text = sources_to_json(&s);
        assert_eq!(
            text,
            r#"[{"source_type": "ContextMessageSet", "id": 8}, {"source_type": "Memory", "id": 1}]"#
        );
        assert_eq!(sources_from_json(&text), s);
        assert_eq!(sources_to_json(&[]), "[]");
        assert!(sources_from_json("not json").is_empty());
    }
}
