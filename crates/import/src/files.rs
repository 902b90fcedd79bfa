//! Which files of a path belong to a source, and the reader each one goes to.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ImportError;
use crate::chats::{Sink, Source};
use crate::convo::Problem;

/// The files of `inputs` the source reads, in a stable order: a file given by name is read as
/// is; a folder is searched (recursively) for the source's file names.
pub(crate) fn list(source: Source, inputs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found = Vec::new();
            walk(input, 0, &mut |p| {
                if wanted(source, p) {
                    found.push(p.to_path_buf());
                }
            });
            found.sort();
            out.extend(found);
        } else {
            out.push(input.clone());
        }
    }
    out
}

fn walk(dir: &Path, depth: usize, each: &mut dyn FnMut(&Path)) {
    if depth > 6 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, depth + 1, each),
            Ok(t) if t.is_file() => each(&path),
            _ => {}
        }
    }
}

fn wanted(source: Source, path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    match source {
        Source::ChatGpt | Source::Claude => name == "conversations.json" || name.ends_with(".zip"),
        Source::ClaudeCode => name.ends_with(".jsonl"),
        Source::Codex => name.starts_with("rollout-") && name.ends_with(".jsonl"),
        Source::Gemini => {
            name.starts_with("session-") && (name.ends_with(".json") || name.ends_with(".jsonl"))
        }
    }
}

/// Reads one file of `source` into `sink`. Problems with the file are reported to the sink;
/// only a failed memory write is an error.
///
/// # Errors
/// [`ImportError`] from the sink.
pub(crate) fn read(source: Source, file: &Path, sink: &mut Sink<'_>) -> Result<(), ImportError> {
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    match source {
        Source::ChatGpt => crate::chatgpt::read(file, sink)?,
        Source::Claude => crate::claude_ai::read(file, sink)?,
        Source::ClaudeCode => crate::claude_code::read(file, sink)?,
        Source::Codex => crate::codex::read(file, sink)?,
        Source::Gemini => crate::gemini::read(file, sink)?,
    }
    sink.file_done(size);
    Ok(())
}

/// The JSON lines of a session file, each with its 1-based line number (blank lines left out).
/// `Err` names the first line that is not JSON (or the file that cannot be read): the session
/// it belongs to is skipped whole.
pub(crate) fn json_lines(file: &Path) -> Result<Vec<(u64, Value)>, Problem> {
    let f = std::fs::File::open(file)
        .map_err(|e| Problem::new(file, None, None, format!("cannot open it: {e}")))?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(f).lines().enumerate() {
        let n = i as u64 + 1;
        let line =
            line.map_err(|e| Problem::new(file, Some(n), None, format!("cannot read it: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(&line).map_err(|e| {
            Problem::new(
                file,
                Some(n),
                None,
                format!("not a JSON line ({e}); the session is skipped"),
            )
        })?;
        out.push((n, value));
    }
    Ok(out)
}

/// The JSON lines of one session file, or `None` after reporting to `sink` why the whole session
/// is skipped (named `session STEM`).
pub(crate) fn session_lines(file: &Path, sink: &mut Sink<'_>) -> Option<Vec<(u64, Value)>> {
    match json_lines(file) {
        Ok(lines) => Some(lines),
        Err(mut problem) => {
            problem.conversation = Some(format!("session {}", stem(file)));
            sink.problem(problem);
            None
        }
    }
}

/// The session id for problem reports: the file's stem.
pub(crate) fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
