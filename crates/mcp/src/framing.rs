//! Framing of the stdio transport: every request gets an answer, however long its line.
//!
//! rmcp's stdio transport reads one JSON-RPC message per line and silently drops a line longer
//! than its limit (16 MiB), so a client that sent one waits for an answer forever (issue 13
//! item 7). [`BoundedLines`] sits in front of rmcp's reader and enforces the limit itself, a
//! little below rmcp's: lines up to [`MAX_MESSAGE_BYTES`] pass through untouched; for a longer
//! one it stops passing bytes on, ends the part rmcp already holds with a NUL byte and a line
//! break (never valid JSON, so rmcp ignores it), reads the rest of the line without keeping it,
//! and then, while the line streamed past, having looked for its top-level `id` and `method`:
//!
//! - a request (`id` and `method`): hands rmcp a short replacement request with the same `id`
//!   and method [`TOO_LARGE_METHOD`]; the server answers it with the JSON-RPC error `-32600`
//!   naming the size and the limit ([`too_large_error`]), and the connection stays usable;
//! - a notification (`method`, no `id`): dropped, as JSON-RPC wants no answer;
//! - anything else (no `id` to answer): ends the input, so the server stops and closes stdout
//!   and the client fails at once instead of waiting.
//!
//! Memory stays bounded: the wrapper holds one 64 KiB read buffer and the replacement line.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest line (one JSON-RPC message, without its line break) passed to rmcp: 16 MiB,
/// rmcp's own limit (`rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH`).
pub const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The line limit to give rmcp's transport behind [`BoundedLines`]: room for the longest
/// message plus the two bytes that end a cut one.
pub const RMCP_LINE_LIMIT: usize = MAX_MESSAGE_BYTES + 2;

/// The method of the replacement request for a message over the limit. Its `params` are
/// `{"bytes": N, "limit": L, "method": "<the original method>"}`.
pub const TOO_LARGE_METHOD: &str = "elroy/message_too_large";

const READ_CHUNK: usize = 64 * 1024;
/// Longest top-level key looked at (`method`), longest `id` or `method` value kept.
const MAX_KEY: usize = 16;
const MAX_VALUE: usize = 1024;

/// An [`AsyncRead`] of newline-delimited JSON-RPC that bounds every line (see the module docs).
#[derive(Debug)]
pub struct BoundedLines<R> {
    inner: R,
    limit: usize,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    /// Bytes to hand out before anything else (the end of a cut line, a replacement request).
    pending: Vec<u8>,
    pending_pos: usize,
    /// Bytes of the current line seen so far (without its line break).
    line_bytes: usize,
    /// The current line is over the limit; its rest is being skipped.
    skipping: bool,
    scanner: Scanner,
    /// End the input once `pending` is handed out.
    close: bool,
    eof: bool,
}

impl<R> BoundedLines<R> {
    /// Wraps `inner` with the limit [`MAX_MESSAGE_BYTES`].
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_MESSAGE_BYTES)
    }

    /// Wraps `inner` with a limit of `limit` bytes per line (tests use small limits). The
    /// transport behind it must accept lines of `limit + 2` bytes.
    pub fn with_limit(inner: R, limit: usize) -> Self {
        BoundedLines {
            inner,
            limit,
            buf: vec![0; READ_CHUNK].into_boxed_slice(),
            pos: 0,
            len: 0,
            pending: Vec::new(),
            pending_pos: 0,
            line_bytes: 0,
            skipping: false,
            scanner: Scanner::default(),
            close: false,
            eof: false,
        }
    }

    /// The line over the limit has ended: queue what rmcp gets instead.
    fn finish_oversized(&mut self) {
        let scanner = std::mem::take(&mut self.scanner);
        // Ends the part rmcp already holds; a NUL byte is never valid JSON.
        self.pending.extend_from_slice(b"\0\n");
        match (scanner.id, scanner.method) {
            (Some(id), Some(method)) => {
                let params = serde_json::json!({
                    "bytes": self.line_bytes,
                    "limit": self.limit,
                    "method": method,
                });
                let line = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{TOO_LARGE_METHOD}\",\"params\":{params}}}\n"
                );
                self.pending.extend_from_slice(line.as_bytes());
            }
            (None, Some(_)) => {}
            _ => self.close = true,
        }
        self.line_bytes = 0;
        self.skipping = false;
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.pending_pos < this.pending.len() {
                let n = out.remaining().min(this.pending.len() - this.pending_pos);
                out.put_slice(&this.pending[this.pending_pos..this.pending_pos + n]);
                this.pending_pos += n;
                if this.pending_pos == this.pending.len() {
                    this.pending.clear();
                    this.pending_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.close || this.eof || out.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            if this.pos == this.len {
                let mut read = ReadBuf::new(&mut this.buf);
                match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => {}
                }
                let filled = read.filled().len();
                if filled == 0 {
                    this.eof = true;
                    return Poll::Ready(Ok(()));
                }
                this.pos = 0;
                this.len = filled;
            }
            let available = &this.buf[this.pos..this.len];
            let newline = available.iter().position(|b| *b == b'\n');
            let content = newline.unwrap_or(available.len());
            if this.skipping {
                this.scanner.feed(&available[..content]);
                this.line_bytes = this.line_bytes.saturating_add(content);
                match newline {
                    Some(at) => {
                        this.pos += at + 1;
                        this.finish_oversized();
                    }
                    None => this.pos = this.len,
                }
                continue;
            }
            // Pass on at most what fits in `out`, and never a line over the limit.
            let take_content = content.min(out.remaining());
            if this.line_bytes.saturating_add(take_content) > this.limit {
                this.skipping = true;
                continue;
            }
            let ends_line =
                newline.is_some() && take_content == content && out.remaining() > content;
            let take = take_content + usize::from(ends_line);
            out.put_slice(&available[..take]);
            this.scanner.feed(&available[..take_content]);
            this.pos += take;
            if ends_line {
                this.line_bytes = 0;
                this.scanner = Scanner::default();
            } else {
                this.line_bytes += take_content;
            }
            return Poll::Ready(Ok(()));
        }
    }
}

/// Which top-level value is being kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Id,
    Method,
}

/// A streaming look at one line of JSON for its top-level `id` and `method`, in constant memory.
#[derive(Debug, Default)]
struct Scanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
    expect_key: bool,
    key: Vec<u8>,
    in_key: bool,
    /// After `"id":` / `"method":` at the top level, before the value starts.
    wanted: Option<Field>,
    /// The value being kept, for which field, and whether it is a string.
    value: Option<(Field, bool)>,
    raw: Vec<u8>,
    /// The `id` as JSON text (a number or a string).
    id: Option<String>,
    /// The method name.
    method: Option<String>,
}

impl Scanner {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn keep(&mut self, b: u8) {
        if self.raw.len() < MAX_VALUE {
            self.raw.push(b);
        } else {
            // Too long to be an id or a method elroy knows: forget it.
            self.value = None;
            self.raw.clear();
        }
    }

    fn finish_value(&mut self) {
        if let Some((field, _)) = self.value.take() {
            let value: Option<serde_json::Value> = serde_json::from_slice(&self.raw).ok();
            match (field, value) {
                (Field::Id, Some(v)) if v.is_number() || v.is_string() => {
                    self.id = Some(v.to_string());
                }
                (Field::Method, Some(serde_json::Value::String(m))) => self.method = Some(m),
                _ => {}
            }
        }
        self.raw.clear();
        self.wanted = None;
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            if self.in_key && !self.escaped && b != b'"' && b != b'\\' {
                if self.key.len() <= MAX_KEY {
                    self.key.push(b);
                }
            } else if self.in_key && (self.escaped || b == b'\\') {
                // An escaped key is not one elroy looks for.
                self.key.clear();
                self.key.extend_from_slice(b"\\");
            }
            let keeping = matches!(self.value, Some((_, true)));
            if keeping {
                self.keep(b);
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                self.in_key = false;
                if keeping {
                    self.finish_value();
                }
            }
            return;
        }
        if matches!(self.value, Some((_, false))) {
            if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                self.finish_value();
            } else {
                self.keep(b);
                return;
            }
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.in_key = true;
                    self.key.clear();
                } else if self.depth == 1
                    && let Some(field) = self.wanted.take()
                {
                    self.value = Some((field, true));
                    self.raw.clear();
                    self.raw.push(b);
                }
            }
            b'{' | b'[' => {
                self.wanted = None;
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = b == b'{';
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 => {
                self.expect_key = false;
                self.wanted = match self.key.as_slice() {
                    b"id" => Some(Field::Id),
                    b"method" => Some(Field::Method),
                    _ => None,
                };
            }
            b',' if self.depth == 1 => {
                self.expect_key = true;
                self.wanted = None;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            other => {
                if self.depth == 1
                    && let Some(field) = self.wanted.take()
                {
                    self.value = Some((field, false));
                    self.raw.clear();
                    self.raw.push(other);
                }
            }
        }
    }
}

/// The JSON-RPC error for a message over the limit: `-32600` (Invalid Request) with a message
/// naming the method, the size and the limit; `params` are those of a [`TOO_LARGE_METHOD`]
/// request.
pub fn too_large_error(params: Option<&serde_json::Value>) -> rmcp::ErrorData {
    let field = |name: &str| params.and_then(|p| p.get(name)).cloned();
    let bytes = field("bytes").and_then(|v| v.as_u64()).unwrap_or(0);
    let limit = field("limit")
        .and_then(|v| v.as_u64())
        .unwrap_or(MAX_MESSAGE_BYTES as u64);
    let method = field("method")
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "request".to_owned());
    rmcp::ErrorData::invalid_request(
        format!(
            "message too large: the {method} request is {bytes} bytes, over elroy's limit of {limit} bytes per message; it was not read (send less, for example a shorter text)"
        ),
        None,
    )
}

/// MCP's client request methods (rmcp parses these; one that reaches the custom-request
/// handler had `params` its type does not accept).
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// The JSON-RPC error for a request rmcp handed to the custom-request handler:
/// [`too_large_error`] for [`TOO_LARGE_METHOD`]; `-32602 Invalid params` for an MCP method whose
/// `params` do not fit it (`tools/call` with `params: null`, or without `name`); `-32601 Method
/// not found` for anything else.
pub fn custom_request_error(method: &str, params: Option<&serde_json::Value>) -> rmcp::ErrorData {
    if method == TOO_LARGE_METHOD {
        return too_large_error(params);
    }
    if MCP_METHODS.contains(&method) {
        let shown = match params {
            None | Some(serde_json::Value::Null) => "no params".to_owned(),
            Some(serde_json::Value::Object(map)) if method == "tools/call" => {
                if map.contains_key("name") {
                    "params whose name is not a string".to_owned()
                } else {
                    "params without a name".to_owned()
                }
            }
            Some(_) => "params of the wrong shape".to_owned(),
        };
        let expected = if method == "tools/call" {
            " (expected {\"name\": TOOL, \"arguments\": {…}})"
        } else {
            ""
        };
        return rmcp::ErrorData::invalid_params(
            format!("Invalid params: {method} with {shown}{expected}"),
            None,
        );
    }
    rmcp::ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        method.to_owned(),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn through(input: &[u8], limit: usize) -> String {
        let mut reader = BoundedLines::with_limit(input, limit);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn short_lines_pass_untouched() {
        let input =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n{\"a\":\"x\\n\"}\r\ntail";
        assert_eq!(through(input.as_bytes(), 64).await, input);
    }

    /// Kind: a message longer than the line limit (issue 13 item 7), with its `id` before the
    /// long part, after it, and as a string.
    #[tokio::test]
    async fn an_oversized_request_becomes_a_replacement_with_its_id() {
        let long = "x".repeat(500);
        for (line, id) in [
            (
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"a\",\"arguments\":{{\"text\":\"{long}\"}}}}}}"
                ),
                "7",
            ),
            (
                format!(
                    "{{\"params\":{{\"id\":99,\"t\":\"{long}\\\"}}\"}},\"method\":\"tools/call\",\"jsonrpc\":\"2.0\",\"id\":\"req-8\"}}"
                ),
                "\"req-8\"",
            ),
        ] {
            let input = format!("{line}\n{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}}\n");
            let out = through(input.as_bytes(), 100).await;
            let lines: Vec<&str> = out.split('\n').collect();
            assert!(lines[0].ends_with('\0') && lines[0].len() <= 101, "{out}");
            let replacement: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
            assert_eq!(replacement["id"].to_string(), id);
            assert_eq!(replacement["method"], TOO_LARGE_METHOD);
            assert_eq!(replacement["params"]["bytes"], line.len());
            assert_eq!(replacement["params"]["limit"], 100);
            assert_eq!(replacement["params"]["method"], "tools/call");
            assert_eq!(
                lines[2],
                "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}"
            );
        }
    }

    #[tokio::test]
    async fn an_oversized_notification_is_dropped_and_garbage_ends_the_input() {
        let long = "y".repeat(300);
        let notification = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":\"{long}\"}}\n{{\"id\":1}}\n"
        );
        let out = through(notification.as_bytes(), 100).await;
        assert!(out.ends_with("\0\n{\"id\":1}\n"), "{out:?}");
        let garbage = format!("{long}\n{{\"id\":1}}\n");
        let out = through(garbage.as_bytes(), 100).await;
        assert!(
            out.ends_with('\n') && !out.contains("{\"id\":1}"),
            "{out:?}"
        );
    }
}
