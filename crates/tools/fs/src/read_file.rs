//! `read_file` (`docs/tools.md#read_file`; robustness R17, R18).

use elroy_core::{Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool};
use serde_json::json;

use crate::path::{display, home_dir, resolve};

/// At most this many lines per call (R18).
pub const MAX_LINES: i64 = 2_000;
/// At most this many characters of `content` per call (R18).
pub const MAX_CONTENT_CHARS: usize = 200_000;
/// Lines returned when `end_line` is absent: `start_line + 199`.
const DEFAULT_SPAN: i64 = 199;

elroy_core::tool_args! {
    /// Arguments of `read_file`.
    pub struct ReadFileArgs {
        path: String => "File path to read. Relative paths are resolved from the current working directory.",
        start_line: Option<i64> => "One-based starting line number to read from.",
        end_line: Option<i64> => "One-based ending line number to read through. Defaults to start_line + 199.",
    }
}

/// Reads a text file as numbered lines: JSON
/// `{"path","start_line","end_line","total_lines","truncated","content"}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

impl TypedTool for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";
    const EFFECT: ToolEffect = ToolEffect::reads_path("path");
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str = "Read a text file, optionally constrained to a line range.";

    fn run(&self, ctx: &ToolContext, args: ReadFileArgs) -> Result<ToolOutput, ToolError> {
        let start = args.start_line.unwrap_or(1);
        if start < 1 {
            return Err("start_line must be at least 1".into());
        }
        let given = args.path.as_str();
        let resolved = resolve(given, &ctx.cwd, home_dir().as_deref());
        let canonical = resolved
            .canonicalize()
            .map_err(|_| ToolError::new(format!("Path does not exist: {given}")))?;
        if canonical.is_dir() {
            return Err(ToolError::new(format!(
                "Path is a directory, not a file: {given}"
            )));
        }
        // Only regular files: a device (`/dev/zero`) or a FIFO would be read forever or block
        // the turn.
        if !canonical.is_file() {
            return Err(ToolError::new(format!("Unable to read file: {given}")));
        }
        let end = args.end_line.unwrap_or(start.saturating_add(DEFAULT_SPAN));
        let file = std::fs::File::open(&canonical)
            .map_err(|_| ToolError::new(format!("Unable to read file: {given}")))?;
        // The file is read (and checked as text) before the range, as the errors' order has it.
        let window = number_lines_from(
            file,
            start,
            end.max(start).min(start.saturating_add(MAX_LINES - 1)),
        )
        .map_err(|e| match e {
            ReadError::Io => ToolError::new(format!("Unable to read file: {given}")),
            ReadError::NotUtf8 => ToolError::new(format!("Unable to decode file as text: {given}")),
        })?;
        if end < start {
            return Err("end_line must be greater than or equal to start_line".into());
        }
        let cwd = ctx.cwd.canonicalize().unwrap_or_else(|_| ctx.cwd.clone());
        Ok(ToolOutput::json(&json!({
            "path": display(&canonical, &cwd),
            "start_line": start,
            "end_line": window.end_idx,
            "total_lines": window.total_lines,
            "truncated": window.truncated,
            "content": window.content,
        })))
    }
}

/// The numbered slice of a file.
#[derive(Debug, PartialEq, Eq)]
struct Window {
    content: String,
    end_idx: i64,
    total_lines: i64,
    truncated: bool,
}

/// Why a file could not be numbered.
#[derive(Debug, PartialEq, Eq)]
enum ReadError {
    /// Reading failed.
    Io,
    /// The file is not UTF-8 (anywhere in it).
    NotUtf8,
}

/// How many bytes are read from the file at a time.
const CHUNK: usize = 64 * 1024;

/// Lines `start..=end` of `text` as `{n}: {line}` joined by `\n`, within [`MAX_CONTENT_CHARS`].
#[cfg(test)]
fn number_lines(text: &str, start: i64, end: i64) -> Window {
    let mut w = Numberer::new(start, end);
    w.push_str(text);
    w.finish()
}

/// [`number_lines`] of what `reader` holds, read once from start to end in [`CHUNK`]s: memory
/// stays bounded (the window, at most [`MAX_CONTENT_CHARS`] characters, and one chunk) however
/// large the file or its lines; `total_lines` counts the whole file.
///
/// # Errors
/// [`ReadError::Io`] when reading fails, [`ReadError::NotUtf8`] when any byte sequence of the
/// file is not UTF-8.
fn number_lines_from(
    mut reader: impl std::io::Read,
    start: i64,
    end: i64,
) -> Result<Window, ReadError> {
    let mut w = Numberer::new(start, end);
    let mut buf = vec![0u8; CHUNK];
    // Bytes of a character split across two chunks (at most 3).
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(ReadError::Io),
        };
        let mut bytes = std::mem::take(&mut carry);
        bytes.extend_from_slice(&buf[..n]);
        match std::str::from_utf8(&bytes) {
            Ok(text) => w.push_str(text),
            Err(e) if e.error_len().is_none() => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                w.push_str(std::str::from_utf8(valid).map_err(|_| ReadError::NotUtf8)?);
                carry = rest.to_vec();
            }
            Err(_) => return Err(ReadError::NotUtf8),
        }
    }
    if !carry.is_empty() {
        return Err(ReadError::NotUtf8);
    }
    Ok(w.finish())
}

/// Numbers lines as their characters arrive: `\r\n` and `\r` are breaks like `\n` (after
/// [`split_lines`]'s rules), only the lines of the window are kept (each at most
/// [`MAX_CONTENT_CHARS`] characters), every line is counted.
struct Numberer {
    start: i64,
    end: i64,
    content: String,
    chars: usize,
    /// Lines finished so far.
    n: i64,
    /// The current line's kept characters and its full length in characters.
    line: String,
    line_chars: usize,
    /// The last character was `\r` (a `\n` right after it ends no second line).
    after_cr: bool,
    /// Set when the window stopped early: the last line shown.
    stopped_at: Option<i64>,
    cut: bool,
}

impl Numberer {
    fn new(start: i64, end: i64) -> Self {
        Numberer {
            start,
            end,
            content: String::new(),
            chars: 0,
            n: 0,
            line: String::new(),
            line_chars: 0,
            after_cr: false,
            stopped_at: None,
            cut: false,
        }
    }

    fn in_window(&self, n: i64) -> bool {
        self.stopped_at.is_none() && n >= self.start && n <= self.end
    }

    fn push_str(&mut self, text: &str) {
        for c in text.chars() {
            let after_cr = std::mem::replace(&mut self.after_cr, c == '\r');
            match c {
                '\n' if after_cr => {}
                '\r' | '\n' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}'
                | '\u{2028}' | '\u{2029}' => self.end_line(),
                c => {
                    self.line_chars += 1;
                    if self.in_window(self.n + 1) && self.line_chars <= MAX_CONTENT_CHARS {
                        self.line.push(c);
                    }
                }
            }
        }
    }

    fn end_line(&mut self) {
        self.n += 1;
        let n = self.n;
        if self.in_window(n) {
            let prefix = if n == self.start {
                format!("{n}: ")
            } else {
                format!("\n{n}: ")
            };
            let piece_chars = prefix.chars().count() + self.line_chars;
            if self.chars + piece_chars > MAX_CONTENT_CHARS {
                if n == self.start {
                    self.content = prefix
                        .chars()
                        .chain(self.line.chars())
                        .take(MAX_CONTENT_CHARS)
                        .collect();
                    self.cut = true;
                    self.stopped_at = Some(n);
                } else {
                    self.stopped_at = Some(n - 1);
                }
            } else {
                self.content.push_str(&prefix);
                self.content.push_str(&self.line);
                self.chars += piece_chars;
            }
        }
        self.line.clear();
        self.line_chars = 0;
    }

    fn finish(mut self) -> Window {
        // A final line without a break; a final break starts no extra line.
        if self.line_chars > 0 {
            self.end_line();
        }
        let total_lines = self.n;
        let end_idx = self.stopped_at.unwrap_or(self.end.min(total_lines));
        Window {
            content: self.content,
            end_idx,
            total_lines,
            truncated: end_idx < total_lines || self.cut,
        }
    }
}

#[cfg(test)]
/// Splits like Python's `str.splitlines()`: at `\n`, `\v`, `\f`, `\x1c`, `\x1d`, `\x1e`, `\x85`,
/// `\u2028`, `\u2029` (`\r` is already normalised away); a final break starts no extra line.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text
        .split([
            '\n', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}',
        ])
        .collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitlines_like_python() {
        assert_eq!(split_lines("a\nb\n"), ["a", "b"]);
        assert_eq!(split_lines("a\n\nb"), ["a", "", "b"]);
        assert_eq!(split_lines("a\u{2028}b\u{c}c"), ["a", "b", "c"]);
        assert!(split_lines("").is_empty());
        assert_eq!(split_lines("\n"), [""]);
    }

    #[test]
    fn windows() {
        let text: String = (1..=205).map(|i| format!("line {i}\n")).collect();
        let w = number_lines(&text, 1, 200);
        assert_eq!((w.end_idx, w.total_lines, w.truncated), (200, 205, true));
        assert!(
            w.content.starts_with("1: line 1\n2: line 2") && w.content.ends_with("200: line 200")
        );
        let w = number_lines("alpha\nbeta\ngamma\ndelta", 2, 3);
        assert_eq!(w.content, "2: beta\n3: gamma");
        let w = number_lines("a\r\nb\rc\n", 5, 204);
        assert_eq!((w.content.as_str(), w.end_idx, w.truncated), ("", 3, false));
    }

    #[test]
    fn chunks_split_characters_and_lines_anywhere() {
        // The streaming reader gives what the whole text gives, wherever a chunk ends: in a
        // multi-byte character, between `\r` and `\n`.
        let text: String = (1..=30_000).map(|i| format!("é{i}\r\nß\u{2028}")).collect();
        for (start, end) in [(1, 200), (59_000, 60_500), (60_000, 60_000)] {
            let streamed = number_lines_from(text.as_bytes(), start, end).unwrap();
            assert_eq!(streamed, number_lines(&text, start, end));
        }
        let w = number_lines(&text, 59_999, 60_000);
        assert_eq!(
            (w.content.as_str(), w.total_lines),
            ("59999: é30000\n60000: ß", 60_000)
        );
        let mut bad = text.into_bytes();
        bad.push(0xff);
        assert_eq!(number_lines_from(&bad[..], 1, 2), Err(ReadError::NotUtf8));
        assert_eq!(
            number_lines_from(&[0xc3u8][..], 1, 2),
            Err(ReadError::NotUtf8)
        );
    }

    #[test]
    fn a_large_file_is_read_with_bounded_memory() {
        // 64 MiB of one line: only the window (at most MAX_CONTENT_CHARS) is kept.
        struct Zeros(usize);
        impl std::io::Read for Zeros {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(self.0);
                buf[..n].fill(b'0');
                self.0 -= n;
                Ok(n)
            }
        }
        let w = number_lines_from(Zeros(64 << 20), 1, 200).unwrap();
        assert_eq!(w.content.chars().count(), MAX_CONTENT_CHARS);
        assert!(w.content.capacity() < 2 * MAX_CONTENT_CHARS);
        assert_eq!((w.total_lines, w.truncated), (1, true));
    }

    #[test]
    fn one_huge_line_is_cut_to_the_cap() {
        let w = number_lines(&"x".repeat(500_000), 1, 200);
        assert_eq!(w.content.chars().count(), MAX_CONTENT_CHARS);
        assert!(w.content.starts_with("1: x"));
        assert_eq!((w.end_idx, w.truncated), (1, true));
    }

    #[test]
    fn content_cap_stops_before_a_line_that_does_not_fit() {
        let line = "y".repeat(150_000);
        let w = number_lines(&format!("{line}\n{line}\n"), 1, 200);
        assert_eq!((w.end_idx, w.truncated), (1, true));
        assert_eq!(w.content.chars().count(), 150_003);
    }
}
