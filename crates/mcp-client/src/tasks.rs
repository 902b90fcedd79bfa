//! Tools a server can only run as tasks.
//!
//! A tool whose `execution.taskSupport` is `"required"` can be called only with task
//! augmentation, which elroy does not do; offered to the model, every call would fail. rmcp's
//! `Tool` type drops the `execution` field, so for a stdio server [`TaskTap`] reads the server's
//! output beside rmcp (it only looks, and hands every byte on unchanged) and keeps the names of
//! such tools from each `tools/list` answer; they are not offered.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest line looked at (a `tools/list` page); longer lines pass unexamined.
const MAX_LINE: usize = 8 * 1024 * 1024;

/// Names of tools that require task augmentation, shared between the tap and the server.
pub type TaskOnly = Arc<Mutex<HashSet<String>>>;

/// An [`AsyncRead`] over a server's stdout that records [`TaskOnly`] tools.
#[derive(Debug)]
pub struct TaskTap<R> {
    inner: R,
    line: Vec<u8>,
    overflow: bool,
    found: TaskOnly,
}

impl<R> TaskTap<R> {
    /// Looks at what `inner` yields, recording into `found`.
    pub fn new(inner: R, found: TaskOnly) -> Self {
        TaskTap {
            inner,
            line: Vec::new(),
            overflow: false,
            found,
        }
    }

    fn look(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let (content, ends) = match chunk.strip_suffix(b"\n") {
                Some(content) => (content, true),
                None => (chunk, false),
            };
            if !self.overflow {
                if self.line.len() + content.len() > MAX_LINE {
                    self.overflow = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(content);
                }
            }
            if ends {
                if !self.overflow {
                    record(&self.line, &self.found);
                }
                self.line.clear();
                self.overflow = false;
            }
        }
    }
}

/// Records the task-only tools of one message when it is a `tools/list` answer; a tool listed
/// again without `taskSupport: "required"` is offered again. Other messages are not parsed.
fn record(line: &[u8], found: &TaskOnly) {
    let mentions = |word: &[u8]| line.windows(word.len()).any(|w| w == word);
    if !mentions(b"\"tools\"") {
        return;
    }
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(line) else {
        return;
    };
    let Some(tools) = message
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(|t| t.as_array())
    else {
        return;
    };
    if let Ok(mut found) = found.lock() {
        for tool in tools {
            let Some(name) = tool.get("name").and_then(|n| n.as_str()) else {
                continue;
            };
            let required = tool
                .get("execution")
                .and_then(|e| e.get("taskSupport"))
                .and_then(|t| t.as_str())
                == Some("required");
            if required {
                found.insert(name.to_owned());
            } else {
                found.remove(name);
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TaskTap<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.look(&buf.filled()[before..]);
        }
        polled
    }
}
