//! Framing of the stdio transport: every line gets an answer, however long, and whatever it
//! holds.
//!
//! rmcp's stdio transport reads one JSON-RPC message per line; it silently drops a line longer
//! than its limit (16 MiB) and a line that is not JSON, so a client that sent one waits for an
//! answer forever. [`BoundedLines`] sits in front of rmcp's reader and looks at every line
//! first, holding at most [`MAX_MESSAGE_BYTES`] of it:
//!
//! - a line of JSON up to the limit passes to rmcp untouched (rmcp answers well-formed JSON that
//!   is not a message with `-32600`);
//! - a line that is not JSON is kept from rmcp and answered with the JSON-RPC error
//!   `-32700 Parse error`, `"id": null` ([`parse_error_reply`]);
//! - a line over the limit is read to its end without being kept, while a streaming look finds
//!   its top-level `id` and `method`: a request is answered with `-32600` naming its size and the
//!   limit, with its `id` ([`too_large_reply`]); a line without an `id` to answer gets the same
//!   error with `"id": null`; a notification (a `method`, no `id`) gets no answer, as JSON-RPC
//!   wants, and is logged.
//!
//! Either way the server goes on reading. The answers elroy makes itself travel on a channel to
//! [`write_lines`], the one writer of stdout, which puts them between rmcp's whole lines.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

/// The longest line (one JSON-RPC message, without its line break) passed to rmcp: 16 MiB,
/// rmcp's own limit (`rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH`).
pub const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The line limit to give rmcp's transport behind [`BoundedLines`]: room for the longest
/// message plus its line break.
pub const RMCP_LINE_LIMIT: usize = MAX_MESSAGE_BYTES + 2;

/// JSON-RPC's code for a message that is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for a message that is not a valid request (here: one over the size limit).
pub const INVALID_REQUEST: i64 = -32600;

const READ_CHUNK: usize = 64 * 1024;
/// Longest top-level key looked at (`method`), longest `id` or `method` value kept.
const MAX_KEY: usize = 16;
const MAX_VALUE: usize = 1024;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// An [`AsyncRead`] of newline-delimited JSON-RPC that hands on only lines of JSON within the
/// limit, and sends the answer to any other line on its channel (see the module docs).
#[derive(Debug)]
pub struct BoundedLines<R> {
    inner: R,
    limit: usize,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    /// The current line so far (without its line break), while within the limit.
    line: Vec<u8>,
    /// A whole line (with its line break) being handed to rmcp.
    ready: Vec<u8>,
    ready_pos: usize,
    /// Bytes of the current line seen so far, once it is over the limit.
    line_bytes: usize,
    /// The current line is over the limit; its rest is being skipped.
    skipping: bool,
    scanner: Scanner,
    /// Where the answers to lines rmcp never sees go (one JSON-RPC line each, with `\n`).
    replies: UnboundedSender<Vec<u8>>,
    eof: bool,
}

impl<R> BoundedLines<R> {
    /// Wraps `inner` with the limit [`MAX_MESSAGE_BYTES`]; answers go to `replies`.
    pub fn new(inner: R, replies: UnboundedSender<Vec<u8>>) -> Self {
        Self::with_limit(inner, MAX_MESSAGE_BYTES, replies)
    }

    /// Wraps `inner` with a limit of `limit` bytes per line (tests use small limits). The
    /// transport behind it must accept lines of `limit + 2` bytes.
    pub fn with_limit(inner: R, limit: usize, replies: UnboundedSender<Vec<u8>>) -> Self {
        BoundedLines {
            inner,
            limit,
            buf: vec![0; READ_CHUNK].into_boxed_slice(),
            pos: 0,
            len: 0,
            line: Vec::new(),
            ready: Vec::new(),
            ready_pos: 0,
            line_bytes: 0,
            skipping: false,
            scanner: Scanner::default(),
            replies,
            eof: false,
        }
    }

    fn reply(&self, line: Vec<u8>) {
        // The writer is gone only when the connection is closing.
        let _ = self.replies.send(line);
    }

    /// A whole line within the limit: to rmcp when it is JSON (or blank), otherwise answered.
    fn finish_line(&mut self) {
        let mut line = std::mem::take(&mut self.line);
        let content = line.strip_suffix(b"\r").unwrap_or(&line);
        let content = content.strip_prefix(UTF8_BOM).unwrap_or(content);
        if content.iter().all(u8::is_ascii_whitespace) {
            line.clear();
            self.line = line;
            return;
        }
        match serde_json::from_slice::<serde::de::IgnoredAny>(content) {
            Ok(_) => {
                line.push(b'\n');
                self.ready = line;
                self.ready_pos = 0;
            }
            Err(e) => {
                tracing::info!(
                    "mcp: a line that is not JSON ({} bytes): {e}",
                    content.len()
                );
                self.reply(parse_error_reply(&e.to_string()));
                line.clear();
                self.line = line;
            }
        }
    }

    /// The line over the limit has ended: answer it if it can be answered.
    fn finish_oversized(&mut self) {
        let scanner = std::mem::take(&mut self.scanner);
        let bytes = self.line_bytes;
        self.line_bytes = 0;
        self.skipping = false;
        match (scanner.id, scanner.method) {
            (None, Some(method)) => tracing::warn!(
                "mcp: a {method} notification of {bytes} bytes is over the limit of {} bytes; dropped (notifications get no answer)",
                self.limit
            ),
            (id, method) => {
                tracing::warn!(
                    "mcp: a message of {bytes} bytes is over the limit of {} bytes",
                    self.limit
                );
                self.reply(too_large_reply(
                    id.as_deref(),
                    bytes,
                    self.limit,
                    method.as_deref(),
                ));
            }
        }
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
            if this.ready_pos < this.ready.len() {
                let n = out.remaining().min(this.ready.len() - this.ready_pos);
                out.put_slice(&this.ready[this.ready_pos..this.ready_pos + n]);
                this.ready_pos += n;
                if this.ready_pos == this.ready.len() {
                    // Keep the allocation for the next line.
                    let mut spent = std::mem::take(&mut this.ready);
                    spent.clear();
                    this.ready_pos = 0;
                    if this.line.is_empty() {
                        this.line = spent;
                    }
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof || out.remaining() == 0 {
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
                    // A last line without its line break is a line too.
                    if this.skipping {
                        this.finish_oversized();
                    } else if !this.line.is_empty() {
                        this.finish_line();
                    }
                    continue;
                }
                this.pos = 0;
                this.len = filled;
            }
            let available = &this.buf[this.pos..this.len];
            let newline = available.iter().position(|b| *b == b'\n');
            let content = &available[..newline.unwrap_or(available.len())];
            if !this.skipping && this.line.len().saturating_add(content.len()) > this.limit {
                // Over the limit: look for the id in what was kept, then skip the rest.
                this.skipping = true;
                this.scanner.feed(&this.line);
                this.line_bytes = this.line.len();
                this.line = Vec::new();
            }
            if this.skipping {
                this.scanner.feed(content);
                this.line_bytes = this.line_bytes.saturating_add(content.len());
            } else {
                this.line.extend_from_slice(content);
            }
            match newline {
                Some(at) => {
                    this.pos += at + 1;
                    if this.skipping {
                        this.finish_oversized();
                    } else {
                        this.finish_line();
                    }
                }
                None => this.pos = this.len,
            }
        }
    }
}

/// Copies rmcp's output (`from`, whole lines) to `to`, and puts each answer elroy made itself
/// (`replies`, from [`BoundedLines`]) between two of those lines; flushes after each line. Ends
/// when `from` ends (answers still queued are written first) or `to` fails.
///
/// # Errors
/// The error writing to `to` (the client went away).
pub async fn write_lines<F, W>(
    from: F,
    mut replies: UnboundedReceiver<Vec<u8>>,
    mut to: W,
) -> std::io::Result<()>
where
    F: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut from = tokio::io::BufReader::new(from);
    let mut line = Vec::new();
    let mut replies_open = true;
    loop {
        tokio::select! {
            // Cancel safe: bytes read so far stay in `line`, and the next call goes on.
            read = from.read_until(b'\n', &mut line) => {
                let done = !matches!(read, Ok(n) if n > 0);
                if line.ends_with(b"\n") || (done && !line.is_empty()) {
                    to.write_all(&line).await?;
                    to.flush().await?;
                    line.clear();
                }
                if done {
                    while let Ok(reply) = replies.try_recv() {
                        to.write_all(&reply).await?;
                    }
                    return to.flush().await;
                }
            }
            reply = replies.recv(), if replies_open => match reply {
                Some(reply) => {
                    to.write_all(&reply).await?;
                    to.flush().await?;
                }
                None => replies_open = false,
            },
        }
    }
}

/// The answer to a line that is not JSON: `-32700 Parse error`, `"id": null`, with serde's
/// reason (where in the line it stopped), as one line with its line break.
pub fn parse_error_reply(reason: &str) -> Vec<u8> {
    error_line(
        None,
        PARSE_ERROR,
        &format!(
            "Parse error: the message is not JSON ({reason}); send one JSON-RPC message per line"
        ),
    )
}

/// The answer to a message over the limit: `-32600` naming its method, its size and the limit,
/// with its `id` (JSON text, as found) or `"id": null` when it had none.
pub fn too_large_reply(
    id: Option<&str>,
    bytes: usize,
    limit: usize,
    method: Option<&str>,
) -> Vec<u8> {
    let what = method.map_or_else(|| "message".to_owned(), |m| format!("{m} request"));
    error_line(
        id,
        INVALID_REQUEST,
        &format!(
            "message too large: the {what} is {bytes} bytes, over elroy's limit of {limit} bytes per message; it was not read (send less, for example a shorter text)"
        ),
    )
}

fn error_line(id: Option<&str>, code: i64, message: &str) -> Vec<u8> {
    let id = id
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        .unwrap_or(serde_json::Value::Null);
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
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
/// `-32602 Invalid params` for an MCP method whose
/// `params` do not fit it (`tools/call` with `params: null`, or without `name`); `-32601 Method
/// not found` for anything else.
pub fn custom_request_error(method: &str, params: Option<&serde_json::Value>) -> rmcp::ErrorData {
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

    /// What rmcp gets from `input` with a line limit of `limit`, and the answers elroy made.
    async fn through(input: &[u8], limit: usize) -> (String, Vec<serde_json::Value>) {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut reader = BoundedLines::with_limit(input, limit, tx);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        drop(reader);
        let mut replies = Vec::new();
        while let Some(line) = rx.recv().await {
            assert!(line.ends_with(b"\n"));
            replies.push(serde_json::from_slice(&line).unwrap());
        }
        (String::from_utf8_lossy(&out).into_owned(), replies)
    }

    const PING: &str = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";

    #[tokio::test]
    async fn lines_of_json_pass_untouched() {
        let input = format!("{PING}\n\n{{\"a\":\"x\\n\"}}\r\n[1,2]\n\u{feff}{PING}");
        let (out, replies) = through(input.as_bytes(), 64).await;
        assert_eq!(
            out,
            format!("{PING}\n{{\"a\":\"x\\n\"}}\r\n[1,2]\n\u{feff}{PING}\n")
        );
        assert!(replies.is_empty(), "{replies:?}");
    }

    /// Kind: a line that is not JSON (plain text, JSON cut short, a stray byte), each answered
    /// with -32700 and `"id": null`; the lines after them still pass.
    #[tokio::test]
    async fn a_line_that_is_not_json_is_answered_with_a_parse_error() {
        let input = format!("hello\n{PING}\n{{\"jsonrpc\":\"2.0\",\"id\":3\n\u{1}\n{PING}\n");
        let (out, replies) = through(input.as_bytes(), 64).await;
        assert_eq!(out, format!("{PING}\n{PING}\n"));
        assert_eq!(replies.len(), 3, "{replies:?}");
        for reply in &replies {
            assert_eq!(reply["jsonrpc"], "2.0");
            assert!(reply["id"].is_null(), "{reply}");
            assert_eq!(reply["error"]["code"], PARSE_ERROR, "{reply}");
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("Parse error: the message is not JSON ("),
                "{reply}"
            );
        }
    }

    /// Kind: a message longer than the line limit, with its `id` before the long part, after it
    /// (as a string), and with no id at all (garbage): each answered, nothing of it passed on.
    #[tokio::test]
    async fn an_oversized_message_is_answered_and_reading_goes_on() {
        let long = "x".repeat(500);
        for (line, id) in [
            (
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"a\",\"arguments\":{{\"text\":\"{long}\"}}}}}}"
                ),
                serde_json::json!(7),
            ),
            (
                format!(
                    "{{\"params\":{{\"id\":99,\"t\":\"{long}\\\"}}\"}},\"method\":\"tools/call\",\"jsonrpc\":\"2.0\",\"id\":\"req-8\"}}"
                ),
                serde_json::json!("req-8"),
            ),
            (long.clone(), serde_json::Value::Null),
        ] {
            let input = format!("{line}\n{PING}\n");
            let (out, replies) = through(input.as_bytes(), 100).await;
            assert_eq!(out, format!("{PING}\n"));
            assert_eq!(replies.len(), 1, "{replies:?}");
            let reply = &replies[0];
            assert_eq!(reply["id"], id, "{reply}");
            assert_eq!(reply["error"]["code"], INVALID_REQUEST, "{reply}");
            let message = reply["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(&format!(
                    " is {} bytes, over elroy's limit of 100 bytes",
                    line.len()
                )),
                "{message}"
            );
        }
    }

    #[tokio::test]
    async fn an_oversized_notification_gets_no_answer() {
        let long = "y".repeat(300);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":\"{long}\"}}\n{PING}"
        );
        let (out, replies) = through(input.as_bytes(), 100).await;
        assert_eq!(out, format!("{PING}\n"));
        assert!(replies.is_empty(), "{replies:?}");
    }

    /// The writer keeps rmcp's lines whole and puts answers between them, also those queued when
    /// rmcp's output ends.
    #[tokio::test]
    async fn answers_go_between_whole_lines() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (mut rmcp_side, from) = tokio::io::duplex(64);
        let mut out = Vec::new();
        let writer = async {
            write_lines(from, rx, &mut out).await.unwrap();
        };
        let feeder = async {
            use tokio::io::AsyncWriteExt;
            rmcp_side.write_all(b"{\"a\":").await.unwrap();
            tokio::task::yield_now().await;
            tx.send(b"{\"reply\":1}\n".to_vec()).unwrap();
            tokio::task::yield_now().await;
            rmcp_side.write_all(b"1}\n").await.unwrap();
            tx.send(b"{\"reply\":2}\n".to_vec()).unwrap();
            drop(rmcp_side);
        };
        tokio::join!(writer, feeder);
        let text = String::from_utf8(out).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        lines.sort_unstable();
        assert_eq!(lines, ["{\"a\":1}", "{\"reply\":1}", "{\"reply\":2}"]);
    }
}
