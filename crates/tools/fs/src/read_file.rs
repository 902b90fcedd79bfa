//! `read_file` (`docs/tools.md#read_file`; robustness R17, R18).

use elroy_core::{ToolContext, ToolEffect, ToolError, ToolOutput, TypedTool};
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
        let bytes = std::fs::read(&canonical)
            .map_err(|_| ToolError::new(format!("Unable to read file: {given}")))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::new(format!("Unable to decode file as text: {given}")))?;
        let end = args.end_line.unwrap_or(start.saturating_add(DEFAULT_SPAN));
        if end < start {
            return Err("end_line must be greater than or equal to start_line".into());
        }
        let end = end.min(start.saturating_add(MAX_LINES - 1));
        let cwd = ctx.cwd.canonicalize().unwrap_or_else(|_| ctx.cwd.clone());
        let window = number_lines(&text, start, end);
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

/// Lines `start..=end` of `text` as `{n}: {line}` joined by `\n`, within [`MAX_CONTENT_CHARS`].
fn number_lines(text: &str, start: i64, end: i64) -> Window {
    let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines = split_lines(&normalised);
    let total_lines = i64::try_from(lines.len()).unwrap_or(i64::MAX);
    let mut content = String::new();
    let mut chars = 0usize;
    let mut end_idx = end.min(total_lines);
    let mut cut = false;
    let first = usize::try_from(start - 1).unwrap_or(usize::MAX);
    for (offset, line) in lines.iter().enumerate().skip(first) {
        let n = i64::try_from(offset).unwrap_or(i64::MAX) + 1;
        if n > end_idx {
            break;
        }
        let piece = if n == start {
            format!("{n}: {line}")
        } else {
            format!("\n{n}: {line}")
        };
        let piece_chars = piece.chars().count();
        if chars + piece_chars > MAX_CONTENT_CHARS {
            if n == start {
                content = piece.chars().take(MAX_CONTENT_CHARS).collect();
                cut = true;
                end_idx = n;
            } else {
                end_idx = n - 1;
            }
            break;
        }
        content.push_str(&piece);
        chars += piece_chars;
    }
    Window {
        content,
        end_idx,
        total_lines,
        truncated: end_idx < total_lines || cut,
    }
}

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
