//! The streamed-text processor (`docs/behaviour.md#tags-thoughts-and-code`): splits the reply's
//! text deltas into reply text, private thoughts (`<internal_thought>`, `<think>`), fenced code
//! blocks and inline `<tool_call>` blocks, character by character, so tags split across chunks are
//! recognised.
//!
//! It only shapes events: the stored assistant content is always the raw concatenation of the
//! deltas, tags included (`docs/behaviour.md#tags-thoughts-and-code` rule 6).

use elroy_core::ToolCall;
use serde_json::Value;

/// One event of processed reply text. Consecutive events of one kind may be concatenated by the
/// consumer (the `docs/behaviour.md#tags-thoughts-and-code` vectors are stated merged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextEvent {
    /// Reply text the user reads.
    Text(String),
    /// Private reasoning inside thought tags.
    Thought(String),
    /// A complete fenced code block: the info string (trimmed; may be empty) and the code lines,
    /// each followed by `\n`.
    Code {
        /// The fence's info string.
        language: String,
        /// The code.
        content: String,
    },
    /// An inline `<tool_call>{"name": …, "arguments": {…}}</tool_call>` block; its id is 32 random
    /// lower-case hex characters and its arguments compact JSON.
    Call(ToolCall),
}

const THOUGHT_OPEN: &str = "<internal_thought>";
const THOUGHT_CLOSE: &str = "</internal_thought>";
const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
const CALL_OPEN: &str = "<tool_call>";
const CALL_CLOSE: &str = "</tool_call>";
const FENCE: &str = "```";
const OPENINGS: [&str; 4] = [THOUGHT_OPEN, THINK_OPEN, CALL_OPEN, FENCE];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Text,
    Thought(&'static str),
    Call,
    CodeInfo,
    Code,
}

/// Whitespace handling of one text or thought segment (`docs/behaviour.md#tags-thoughts-and-code`
/// rule 2): leading whitespace is dropped, inner whitespace is held until a non-whitespace
/// character follows, trailing whitespace is dropped when the segment ends.
#[derive(Debug, Default)]
struct Segment {
    started: bool,
    pending_ws: String,
}

impl Segment {
    /// Feeds one character; returns what becomes visible (held whitespace plus `c`).
    fn push(&mut self, c: char) -> Option<String> {
        if c.is_whitespace() {
            if self.started {
                self.pending_ws.push(c);
            }
            None
        } else {
            let mut out = std::mem::take(&mut self.pending_ws);
            out.push(c);
            self.started = true;
            Some(out)
        }
    }

    fn end(&mut self) {
        *self = Segment::default();
    }
}

/// The `docs/behaviour.md#tags-thoughts-and-code` state machine. Feed deltas with
/// [`push`](Self::push), then call
/// [`finish`](Self::finish) once when the stream ends.
#[derive(Debug)]
pub struct TextProcessor {
    mode: Mode,
    held: String,
    segment: Segment,
    buffer: String,
    code_language: String,
    code_line: String,
}

impl Default for TextProcessor {
    fn default() -> Self {
        TextProcessor::new()
    }
}

impl TextProcessor {
    /// A processor in text mode.
    pub fn new() -> Self {
        TextProcessor {
            mode: Mode::Text,
            held: String::new(),
            segment: Segment::default(),
            buffer: String::new(),
            code_language: String::new(),
            code_line: String::new(),
        }
    }

    /// Processes one text delta and returns the events it completes.
    pub fn push(&mut self, delta: &str) -> Vec<TextEvent> {
        let mut events = Events::default();
        for c in delta.chars() {
            self.step(c, &mut events);
        }
        events.finish()
    }

    /// Ends the stream: flushes held text, ends an open thought, parses an open tool-call block,
    /// and emits an open code block (with any partial last line).
    pub fn finish(mut self) -> Vec<TextEvent> {
        let mut events = Events::default();
        match self.mode {
            Mode::Text => {
                let held = std::mem::take(&mut self.held);
                for c in held.chars() {
                    events.text(self.segment.push(c));
                }
            }
            Mode::Thought(_) => {
                let held = std::mem::take(&mut self.held);
                for c in held.chars() {
                    events.thought(self.segment.push(c));
                }
            }
            Mode::Call => {
                let body = std::mem::take(&mut self.buffer);
                if let Some(call) = parse_inline_call(&body) {
                    events.push(TextEvent::Call(call));
                }
            }
            Mode::CodeInfo => {}
            Mode::Code => {
                if !self.code_line.is_empty() {
                    let line = std::mem::take(&mut self.code_line);
                    self.buffer.push_str(&line);
                    self.buffer.push('\n');
                }
                self.emit_code(&mut events);
            }
        }
        events.finish()
    }

    fn step(&mut self, c: char, events: &mut Events) {
        match self.mode {
            Mode::Text => self.step_text(c, events),
            Mode::Thought(close) => self.step_thought(c, close, events),
            Mode::Call => {
                self.buffer.push(c);
                if self.buffer.ends_with(CALL_CLOSE) {
                    let body_len = self.buffer.len() - CALL_CLOSE.len();
                    let body: String = self.buffer[..body_len].to_owned();
                    self.buffer.clear();
                    if let Some(call) = parse_inline_call(&body) {
                        events.push(TextEvent::Call(call));
                    }
                    self.mode = Mode::Text;
                }
            }
            Mode::CodeInfo => {
                if c == '\n' {
                    self.code_language = self.buffer.trim().to_owned();
                    self.buffer.clear();
                    self.mode = Mode::Code;
                } else {
                    self.buffer.push(c);
                }
            }
            Mode::Code => {
                self.code_line.push(c);
                if self.code_line.trim_start_matches([' ', '\t']) == FENCE {
                    self.code_line.clear();
                    self.emit_code(events);
                    self.mode = Mode::Text;
                } else if c == '\n' {
                    let line = std::mem::take(&mut self.code_line);
                    self.buffer.push_str(&line);
                }
            }
        }
    }

    fn step_text(&mut self, c: char, events: &mut Events) {
        self.held.push(c);
        loop {
            if let Some(opening) = OPENINGS.iter().find(|o| self.held == **o) {
                self.held.clear();
                self.segment.end();
                self.mode = match *opening {
                    THOUGHT_OPEN => Mode::Thought(THOUGHT_CLOSE),
                    THINK_OPEN => Mode::Thought(THINK_CLOSE),
                    CALL_OPEN => Mode::Call,
                    _ => Mode::CodeInfo,
                };
                self.buffer.clear();
                return;
            }
            if self.held.is_empty() || OPENINGS.iter().any(|o| o.starts_with(&self.held)) {
                return;
            }
            let first = self.held.remove(0);
            events.text(self.segment.push(first));
        }
    }

    fn step_thought(&mut self, c: char, close: &'static str, events: &mut Events) {
        self.held.push(c);
        loop {
            if self.held == close {
                self.held.clear();
                self.segment.end();
                self.mode = Mode::Text;
                return;
            }
            if self.held.is_empty() || close.starts_with(&self.held) {
                return;
            }
            let first = self.held.remove(0);
            events.thought(self.segment.push(first));
        }
    }

    fn emit_code(&mut self, events: &mut Events) {
        let content = std::mem::take(&mut self.buffer);
        let language = std::mem::take(&mut self.code_language);
        if !content.is_empty() {
            events.push(TextEvent::Code { language, content });
        }
    }
}

/// Collects events in order, merging consecutive text and thought runs.
#[derive(Default)]
struct Events {
    out: Vec<TextEvent>,
}

impl Events {
    fn text(&mut self, piece: Option<String>) {
        let Some(piece) = piece else { return };
        match self.out.last_mut() {
            Some(TextEvent::Text(t)) => t.push_str(&piece),
            _ => self.out.push(TextEvent::Text(piece)),
        }
    }

    fn thought(&mut self, piece: Option<String>) {
        let Some(piece) = piece else { return };
        match self.out.last_mut() {
            Some(TextEvent::Thought(t)) => t.push_str(&piece),
            _ => self.out.push(TextEvent::Thought(piece)),
        }
    }

    fn push(&mut self, event: TextEvent) {
        self.out.push(event);
    }

    fn finish(self) -> Vec<TextEvent> {
        self.out
    }
}

/// Parses the body of an inline `<tool_call>` block (`docs/behaviour.md#tags-thoughts-and-code`
/// rule 4): a JSON object with a string `name` and `arguments` as an object, a string holding a
/// JSON object, or missing (`{}`). Anything else is dropped (logged).
pub fn parse_inline_call(body: &str) -> Option<ToolCall> {
    let parsed: Value = match serde_json::from_str(body.trim()) {
        Ok(v) => v,
        Err(e) => {
            tracing::info!("inline tool call is not JSON ({e}): dropped");
            return None;
        }
    };
    let name = parsed.get("name").and_then(Value::as_str)?.to_owned();
    let arguments = match parsed.get("arguments") {
        None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
        Some(Value::Object(map)) => Value::Object(map.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ => {
                tracing::info!("inline tool call arguments are not an object: dropped");
                return None;
            }
        },
        Some(_) => {
            tracing::info!("inline tool call arguments are not an object: dropped");
            return None;
        }
    };
    Some(ToolCall {
        id: uuid::Uuid::new_v4().simple().to_string(),
        name,
        arguments: arguments.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Merged events, with calls reduced to their names (ids are random).
    #[derive(Debug, PartialEq)]
    enum E {
        Text(String),
        Thought(String),
        Code(String, String),
        Call(String),
    }

    fn run(chunks: &[&str]) -> Vec<E> {
        let mut p = TextProcessor::new();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(p.push(chunk));
        }
        events.extend(p.finish());
        let mut merged: Vec<E> = Vec::new();
        for event in events {
            let e = match event {
                TextEvent::Text(t) => E::Text(t),
                TextEvent::Thought(t) => E::Thought(t),
                TextEvent::Code { language, content } => E::Code(language, content),
                TextEvent::Call(c) => E::Call(c.name),
            };
            match (merged.last_mut(), e) {
                (Some(E::Text(a)), E::Text(b)) => a.push_str(&b),
                (Some(E::Thought(a)), E::Thought(b)) => a.push_str(&b),
                (_, e) => merged.push(e),
            }
        }
        merged
    }

    fn chars(s: &str) -> Vec<String> {
        s.chars().map(String::from).collect()
    }

    fn run_chars(s: &str) -> Vec<E> {
        let owned = chars(s);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        run(&refs)
    }

    fn text(s: &str) -> E {
        E::Text(s.into())
    }
    fn thought(s: &str) -> E {
        E::Thought(s.into())
    }
    fn code(l: &str, c: &str) -> E {
        E::Code(l.into(), c.into())
    }

    const CALL: &str = "<tool_call>{\n\"arguments\": {\"name\": \"Receiving instructions for tool calling\", \"text\": \"Today I learned how to call tools in Elroy.\"}, \"name\": \"create_memory\"\n}</tool_call>";

    #[test]
    fn vectors_1_to_10() {
        assert_eq!(
            run(&["<internal_thought>This is a thought</internal_thought>Some normal text"]),
            [thought("This is a thought"), text("Some normal text")]
        );
        let v2 = [thought("This is a thought"), text("Some normal text.")];
        assert_eq!(
            run(&[
                "<internal_th",
                "ought>This is a thought</inte",
                "rnal_thought>Some normal text."
            ]),
            v2
        );
        assert_eq!(
            run_chars("<internal_thought>This is a thought</internal_thought>Some normal text."),
            v2
        );
        assert_eq!(
            run_chars("Just some normal text with no special tags."),
            [text("Just some normal text with no special tags.")]
        );
        assert_eq!(
            run_chars("<internal_thou>This is a thought"),
            [text("<internal_thou>This is a thought")]
        );
        assert_eq!(
            run_chars("<<internal_thought>>This is a thought</internal_thought><Some normal text."),
            [
                text("<"),
                thought(">This is a thought"),
                text("<Some normal text.")
            ]
        );
        assert_eq!(
            run(&[
                "<unknown_tag>",
                "Should be treated as normal text",
                "</unknown_tag>"
            ]),
            [text(
                "<unknown_tag>Should be treated as normal text</unknown_tag>"
            )]
        );
        assert_eq!(
            run(&[
                "<internal_thought>Tho",
                "ught 1</i",
                "nternal_thought>",
                "Normal text ",
                "<internal_thought>Thought 2</internal_thought>",
                "More text"
            ]),
            [
                thought("Thought 1"),
                text("Normal text"),
                thought("Thought 2"),
                text("More text")
            ]
        );
        assert_eq!(
            run(&["<internal_thought>This is a thought", " and it continues"]),
            [thought("This is a thought and it continues")]
        );
        assert_eq!(
            run(&[
                "<internal_thought><internal_thought>Some text</another_tag></internal_thought>"
            ]),
            [thought("<internal_thought>Some text</another_tag>")]
        );
    }

    #[test]
    fn vectors_11_to_14_inline_calls() {
        assert_eq!(run(&[CALL]), [E::Call("create_memory".into())]);
        assert_eq!(run_chars(CALL), [E::Call("create_memory".into())]);
        let v13 = format!(
            "<internal_thought> I should call a tool </internal_thought>{CALL}Did the tool call work?"
        );
        let expected = [
            thought("I should call a tool"),
            E::Call("create_memory".into()),
            text("Did the tool call work?"),
        ];
        assert_eq!(run(&[&v13]), expected);
        assert_eq!(run_chars(&v13), expected);

        let mut p = TextProcessor::new();
        let mut events = p.push(CALL);
        events.extend(p.finish());
        let TextEvent::Call(call) = &events[0] else {
            panic!("{events:?}")
        };
        assert_eq!(
            call.arguments,
            r#"{"name":"Receiving instructions for tool calling","text":"Today I learned how to call tools in Elroy."}"#
        );
        assert_eq!(call.id.len(), 32);
    }

    #[test]
    fn vectors_15_to_18() {
        assert_eq!(
            run_chars("<think>Using alternative tag</think>"),
            [thought("Using alternative tag")]
        );
        assert_eq!(run_chars("<internal_thought></internal_thought>"), []);
        let expected = [thought("This is a thought"), text("This is the message")];
        assert_eq!(
            run_chars(
                "<internal_thought>\n\n    This is a thought\n\n    </internal_thought>This is the message"
            ),
            expected
        );
        assert_eq!(
            run_chars(
                "\n\n        <internal_thought>\n\n    This is a thought\n\n    </internal_thought>This is the message\n\n    "
            ),
            expected
        );
    }

    #[test]
    fn vectors_19_to_23_code() {
        assert_eq!(
            run_chars("```python\nprint('hello')\n```"),
            [code("python", "print('hello')\n")]
        );
        assert_eq!(
            run_chars("Here's some code:\n```python\nprint('hello')\n```\nMore text"),
            [
                text("Here's some code:"),
                code("python", "print('hello')\n"),
                text("More text")
            ]
        );
        assert_eq!(
            run_chars("```\nprint('hello')\n```"),
            [code("", "print('hello')\n")]
        );
        assert_eq!(
            run_chars("```python\ndef hello():\n    print('hello')\n    return True\n```"),
            [code(
                "python",
                "def hello():\n    print('hello')\n    return True\n"
            )]
        );
        assert_eq!(
            run(&["```py", "thon\ndef ", "hello():\n    ", "print('hi')\n```"]),
            [code("python", "def hello():\n    print('hi')\n")]
        );
    }

    #[test]
    fn open_code_block_ends_with_the_stream() {
        assert_eq!(run(&["```rs\nlet x = 1;"]), [code("rs", "let x = 1;\n")]);
        assert_eq!(run(&["```rs"]), []);
    }

    #[test]
    fn malformed_inline_calls_are_dropped() {
        assert_eq!(run(&["<tool_call>not json</tool_call>ok"]), [text("ok")]);
        assert_eq!(
            run(&["<tool_call>{\"name\":\"x\",\"arguments\":[1]}</tool_call>"]),
            []
        );
        assert_eq!(
            run(&["<tool_call>{\"name\":\"pwd\"}"]),
            [E::Call("pwd".into())]
        );
        assert_eq!(
            run(&[
                "<tool_call>{\"name\":\"ls\",\"arguments\":\"{\\\"path\\\":\\\".\\\"}\"}</tool_call>"
            ]),
            [E::Call("ls".into())]
        );
    }
}
