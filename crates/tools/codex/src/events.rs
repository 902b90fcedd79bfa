//! Codex's `exec --json` events (`docs/tool-rules.md#running-codex` step 5).

use serde_json::Value;

use crate::store::CommandRecord;

/// What a run's JSONL stdout reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Events {
    /// `thread.started` → `thread_id`.
    pub thread_id: Option<String>,
    /// The last `agent_message` text.
    pub final_message: Option<String>,
    /// Every completed `command_execution`.
    pub commands: Vec<CommandRecord>,
    /// The last `turn.failed` / `error` message.
    pub error: Option<String>,
}

/// Reads the events of `stdout`. Lines that do not start with `{` or do not parse are ignored.
pub fn parse_events(stdout: &str) -> Events {
    let mut events = Events::default();
    for line in stdout.lines() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        match event.get("type").and_then(Value::as_str) {
            Some("thread.started") => {
                if let Some(id) = text(&event, "thread_id").filter(|s| !s.is_empty()) {
                    events.thread_id = Some(id);
                }
            }
            Some("item.completed") => {
                let Some(item) = event.get("item") else {
                    continue;
                };
                match item.get("type").and_then(Value::as_str) {
                    Some("agent_message") => {
                        if let Some(message) = text(item, "text") {
                            events.final_message = Some(message);
                        }
                    }
                    Some("command_execution") => {
                        let output = text(item, "aggregated_output").unwrap_or_default();
                        events.commands.push(CommandRecord {
                            command: text(item, "command").unwrap_or_default(),
                            exit_code: item.get("exit_code").and_then(Value::as_i64),
                            output_excerpt: output.chars().take(400).collect(),
                        });
                    }
                    _ => {}
                }
            }
            Some("turn.failed") => {
                if let Some(message) = event.get("error").and_then(|e| text(e, "message")) {
                    events.error = Some(message);
                }
            }
            Some("error") => {
                if let Some(message) = text(&event, "message") {
                    events.error = Some(message);
                }
            }
            _ => {}
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognised_events() {
        let out = r#"Reading prompt from stdin...
{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"thinking"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"a\nb\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"first"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Done."}}
{not json
{"type":"error","message":"stream hiccup"}
{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}
"#;
        let e = parse_events(out);
        assert_eq!(
            e.thread_id.as_deref(),
            Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
        );
        assert_eq!(e.final_message.as_deref(), Some("Done."));
        assert_eq!(
            e.commands,
            vec![CommandRecord {
                command: "bash -lc ls".into(),
                exit_code: Some(0),
                output_excerpt: "a\nb\n".into()
            }]
        );
        assert_eq!(e.error.as_deref(), Some("stream hiccup"));
        let failed = parse_events(r#"{"type":"turn.failed","error":{"message":"quota"}}"#);
        assert_eq!(failed.error.as_deref(), Some("quota"));
    }
}
