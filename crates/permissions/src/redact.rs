//! Secret values (configured API keys, MCP servers' tokens) removed from text before a model
//! reads it: tool results (through [`crate::Gate`]) and every request the runtime sends to a
//! model (`docs/security.md#secrets`).

/// Values shorter than this are not redacted (they would match ordinary words).
const MIN_REDACTED_LEN: usize = 8;

/// What a secret value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// A list of secret values and the one way they are removed from text.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Trimmed, at least [`MIN_REDACTED_LEN`] bytes, longest first (a key that contains another
    /// is removed whole), without duplicates.
    values: Vec<String>,
}

impl Redactor {
    /// A redactor for `values` (blank and short values are ignored).
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values
            .into_iter()
            .map(|v| v.trim().to_owned())
            .filter(|v| v.len() >= MIN_REDACTED_LEN)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Redactor { values }
    }

    /// True when there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// True when `text` holds a secret value.
    pub fn finds(&self, text: &str) -> bool {
        self.values.iter().any(|v| text.contains(v.as_str()))
    }

    /// Replaces every secret value in `text` with [`REDACTED`]; true when something was replaced.
    pub fn redact(&self, text: &mut String) -> bool {
        let mut changed = false;
        for value in &self.values {
            if text.contains(value.as_str()) {
                *text = text.replace(value.as_str(), REDACTED);
                changed = true;
            }
        }
        changed
    }
}
