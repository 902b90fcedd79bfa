//! Assembling streamed tool-call deltas into calls (`docs/behaviour.md#assembling-tool-calls`;
//! robustness R15, R16).
//!
//! These rules are elroy's, not a client library's: genai 0.7.2 opens a call for every new index
//! and names id-less calls `call_{index}`, which breaks vectors B and G of
//! `docs/behaviour.md#assembling-tool-calls`, so elroy reads OpenAI-compatible streams itself and
//! feeds each `delta.tool_calls` entry to a
//! [`ToolCallAccumulator`].

use std::collections::HashMap;

use elroy_core::ToolCall;

/// One entry of a streamed `delta.tool_calls` array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCallDelta {
    /// The entry's `index`.
    pub index: u64,
    /// `id`, when present and non-empty.
    pub id: Option<String>,
    /// `function.name`, when present and non-empty.
    pub name: Option<String>,
    /// `function.arguments` fragment (`""` when absent).
    pub arguments: String,
}

impl ToolCallDelta {
    /// Reads one OpenAI `delta.tool_calls` entry. `None` when it has no integer `index`.
    pub fn from_openai_json(value: &serde_json::Value) -> Option<Self> {
        let index = value.get("index")?.as_u64()?;
        let non_empty = |v: Option<&serde_json::Value>| {
            v.and_then(serde_json::Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let function = value.get("function");
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(serde_json::Value::String(s)) => s.clone(),
            None | Some(serde_json::Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        Some(ToolCallDelta {
            index,
            id: non_empty(value.get("id")),
            name: non_empty(function.and_then(|f| f.get("name"))),
            arguments,
        })
    }
}

#[derive(Debug, Clone)]
struct Partial {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Accumulates tool-call deltas by index until the stream ends.
///
/// 1. A new index with a non-empty name opens a call (its id, if any, is the call's id).
/// 2. A new index without a name opens nothing: its fragment goes to the most recently opened call
///    and its id is ignored; with no open call the delta is dropped (logged).
/// 3. A known index appends its fragment (plain append, never replaced or de-duplicated); the id is
///    set only if the call has none; later names are ignored.
/// 4. [`finish`](Self::finish) returns the calls in the order they were opened; a call without an
///    id gets `call_` + 24 lower-case hex characters. Arguments are returned as received; the
///    registry validates them later (`""` means `{}`, invalid JSON is reported and not executed).
#[derive(Debug, Clone, Default)]
pub struct ToolCallAccumulator {
    calls: Vec<Partial>,
    by_index: HashMap<u64, usize>,
    dropped: usize,
}

impl ToolCallAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one delta (deltas of one chunk are applied in order).
    pub fn push(&mut self, delta: ToolCallDelta) {
        if let Some(&slot) = self.by_index.get(&delta.index) {
            if let Some(call) = self.calls.get_mut(slot) {
                call.arguments.push_str(&delta.arguments);
                if call.id.is_none() {
                    call.id = delta.id;
                }
            }
            return;
        }
        match delta.name {
            Some(name) => {
                self.by_index.insert(delta.index, self.calls.len());
                self.calls.push(Partial {
                    id: delta.id,
                    name,
                    arguments: delta.arguments,
                });
            }
            None => match self.calls.last_mut() {
                Some(last) => last.arguments.push_str(&delta.arguments),
                None => {
                    self.dropped += 1;
                    tracing::info!(
                        index = delta.index,
                        "tool-call delta without a name and no open call: dropped"
                    );
                }
            },
        }
    }

    /// Whether any call has been opened.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Deltas dropped because no call was open (rule 2).
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The final calls, in the order they were opened.
    pub fn finish(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .map(|c| ToolCall {
                id: c.id.unwrap_or_else(generated_call_id),
                name: c.name,
                arguments: c.arguments,
            })
            .collect()
    }
}

/// `call_` followed by 24 random lower-case hex characters
/// (`docs/behaviour.md#assembling-tool-calls` rule 5).
pub fn generated_call_id() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("call_{}", &hex[..24])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> ToolCallDelta {
        ToolCallDelta {
            index,
            id: id.map(Into::into),
            name: name.map(Into::into),
            arguments: args.into(),
        }
    }

    fn run(deltas: Vec<ToolCallDelta>) -> Vec<ToolCall> {
        let mut acc = ToolCallAccumulator::new();
        for delta in deltas {
            acc.push(delta);
        }
        acc.finish()
    }

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn vector_a_fragments_of_one_call() {
        let calls = run(vec![
            d(0, Some("call_a"), Some("web_search"), ""),
            d(0, None, None, "{\"query\":"),
            d(0, None, None, "\"rust\"}"),
        ]);
        assert_eq!(
            calls,
            [call("call_a", "web_search", "{\"query\":\"rust\"}")]
        );
    }

    #[test]
    fn vector_b_unnamed_new_indexes_extend_the_open_call() {
        let calls = run(vec![
            d(0, Some("a"), Some("read_file"), ""),
            d(1, Some("b"), None, "{\"pa"),
            d(2, Some("c"), None, "th\":\"x\"}"),
        ]);
        assert_eq!(calls, [call("a", "read_file", "{\"path\":\"x\"}")]);
    }

    #[test]
    fn vector_c_plain_append() {
        let calls = run(vec![
            d(0, Some("q"), Some("web_search"), "{\"query\":\"ab"),
            d(0, None, None, "abc\"}"),
        ]);
        assert_eq!(calls, [call("q", "web_search", "{\"query\":\"ababc\"}")]);
    }

    #[test]
    fn vector_d_two_calls() {
        let calls = run(vec![
            d(0, Some("p"), Some("pwd"), ""),
            d(1, Some("l"), Some("ls"), "{}"),
        ]);
        assert_eq!(calls, [call("p", "pwd", ""), call("l", "ls", "{}")]);
    }

    #[test]
    fn vector_e_same_index_twice_in_one_chunk() {
        let calls = run(vec![
            d(0, Some("x"), Some("ls"), "{\"pa"),
            d(0, None, None, "th\":\".\"}"),
        ]);
        assert_eq!(calls, [call("x", "ls", "{\"path\":\".\"}")]);
    }

    #[test]
    fn vector_f_cut_off_arguments_are_kept_as_received() {
        let calls = run(vec![d(
            0,
            Some("m"),
            Some("print_memory"),
            "{\"memory_name\":\"Do",
        )]);
        assert_eq!(calls[0].arguments.len(), 18);
        let spec = elroy_core::ToolSpec::new("print_memory", "d", None);
        assert_eq!(
            elroy_core::validate_arguments(&spec, Some(&calls[0].arguments))
                .unwrap_err()
                .to_string(),
            "arguments are not valid JSON (18 bytes received); the call was not executed"
        );
    }

    #[test]
    fn vector_g_missing_id_is_generated() {
        let calls = run(vec![d(0, None, Some("pwd"), "")]);
        let id = &calls[0].id;
        assert!(id.starts_with("call_"), "{id}");
        let hex = &id[5..];
        assert_eq!(hex.len(), 24);
        assert!(
            hex.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
    }

    #[test]
    fn r16_repeated_text_is_not_deduplicated() {
        let calls = run(vec![
            d(0, Some("c"), Some("f"), "{\"a\":1"),
            d(0, None, None, "{\"a\":1,\"b\":2}"),
        ]);
        assert_eq!(calls[0].arguments, "{\"a\":1{\"a\":1,\"b\":2}");
    }

    #[test]
    fn later_ids_and_names_do_not_replace_earlier_ones() {
        let calls = run(vec![
            d(0, None, Some("ls"), ""),
            d(0, Some("late"), Some("other"), "{}"),
            d(0, Some("later"), None, ""),
        ]);
        assert_eq!(calls, [call("late", "ls", "{}")]);
    }

    #[test]
    fn unnamed_delta_without_open_call_is_dropped() {
        let mut acc = ToolCallAccumulator::new();
        acc.push(d(0, Some("x"), None, "{}"));
        assert_eq!(acc.dropped(), 1);
        assert!(acc.finish().is_empty());
    }

    #[test]
    fn reads_openai_delta_json() {
        let v = serde_json::json!({"index": 1, "id": "", "type": "function",
            "function": {"name": "ls", "arguments": "{}"}});
        assert_eq!(
            ToolCallDelta::from_openai_json(&v),
            Some(d(1, None, Some("ls"), "{}"))
        );
        assert_eq!(
            ToolCallDelta::from_openai_json(&serde_json::json!({"id": "x"})),
            None
        );
    }
}
