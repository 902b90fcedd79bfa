//! Changing one key of the configuration file while keeping everything else a person wrote in
//! it: comments, blank lines, the order of the keys and the way each other value is written.
//!
//! No crate in the workspace edits YAML without losing comments (serde-saphyr reads, the
//! front-matter emitter writes whole documents), and elroy.conf.yaml is a flat mapping of
//! top-level keys, so the edit is made on the lines of the one key's block. Every edit is then
//! checked with the parser the configuration is loaded with: the changed key must read back as
//! asked and every other key exactly as before, else nothing is written
//! ([`EditError::Unchecked`]). The file is replaced atomically and left with mode 0600 (it may
//! hold API keys).

use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

/// Why the configuration file was not changed.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The file could not be read or written.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The file does not parse as a mapping now, so an edit could not be checked.
    #[error("{path} does not parse ({message}); fix it by hand first")]
    Unparsable {
        /// The file.
        path: std::path::PathBuf,
        /// The parser's first line.
        message: String,
    },
    /// The key holds something that is not a list (for [`append_to_list`]), or a list written
    /// over several lines in flow style, which is not edited line by line.
    #[error("{key} in {path} is not a list elroy can add to; add {item} by hand")]
    NotAList {
        /// The key.
        key: String,
        /// The file.
        path: std::path::PathBuf,
        /// The item, as it would have been written.
        item: String,
    },
    /// The edited text did not read back as intended (an unusual layout of the key's lines).
    #[error(
        "changing {key} in {path} line by line would not give the intended file; set it by hand"
    )]
    Unchecked {
        /// The key.
        key: String,
        /// The file.
        path: std::path::PathBuf,
    },
}

/// Sets top-level `key` to `value` in the YAML file `file` (created when missing, with the
/// parent directory): the key's lines are replaced in place (a comment at the end of its line
/// stays), or `key: VALUE` is appended. Strings are written plain when that reads back as the
/// same string, else double-quoted; other values as JSON (a YAML flow value).
///
/// # Errors
/// [`EditError`]; the file is then unchanged.
pub fn set_key(file: &Path, key: &str, value: &Value) -> Result<(), EditError> {
    let text = read(file)?;
    let before = parse(file, &text)?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let scalar = emit(value);
    match blocks(&lines, key).last() {
        Some(&(start, end)) => {
            let comment = inline_comment(&lines[start]);
            let new_line = format!("{key}: {scalar}{comment}");
            lines.splice(start..end, [new_line]);
        }
        None => lines.push(format!("{key}: {scalar}")),
    }
    let mut expected = before;
    expected.insert(key.to_owned(), value.clone());
    finish(file, key, &lines, &expected)
}

/// Appends `item` to the list at top-level `key` in the YAML file `file` (created when
/// missing): after the last `- …` line of a block list (with its indentation), inside a one-line
/// flow list (`[a, b]`), as the first item of an empty key, or as a new `key:` block at the end.
///
/// # Errors
/// [`EditError::NotAList`] when the key holds another value; other [`EditError`]s; the file is
/// then unchanged.
pub fn append_to_list(file: &Path, key: &str, item: &Value) -> Result<(), EditError> {
    let text = read(file)?;
    let before = parse(file, &text)?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let written = emit(item);
    let not_a_list = || EditError::NotAList {
        key: key.to_owned(),
        path: file.to_owned(),
        item: written.clone(),
    };
    let mut list = match before.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(not_a_list()),
    };
    append_in_lines(&mut lines, key, &written).map_err(|_| not_a_list())?;
    list.push(item.clone());
    let mut expected = before;
    expected.insert(key.to_owned(), Value::Array(list));
    finish(file, key, &lines, &expected)
}

/// The value at a key is not a list edited line by line.
pub(crate) struct NotAList;

/// Appends the already written `written` to the list at top-level `key` of `lines` (see
/// [`append_to_list`] for where); `Err` when the key's value is not a list edited line by line.
pub(crate) fn append_in_lines(
    lines: &mut Vec<String>,
    key: &str,
    written: &str,
) -> Result<(), NotAList> {
    let not_a_list = || NotAList;
    match blocks(lines, key).last() {
        None => {
            lines.push(format!("{key}:"));
            lines.push(format!("  - {written}"));
        }
        Some(&(start, end)) => {
            let comment = inline_comment(&lines[start]);
            let value = value_part(&lines[start]).trim().to_owned();
            if end > start + 1 {
                // A block list: after its last item line, with that line's indentation.
                let last = (start + 1..end)
                    .rev()
                    .find(|&i| lines[i].trim_start().starts_with('-'))
                    .ok_or_else(not_a_list)?;
                let indent: String = lines[last]
                    .chars()
                    .take_while(|c| c.is_whitespace())
                    .collect();
                // The item's own continuation lines (a mapping item) end the block later.
                let after = (last + 1..end)
                    .take_while(|&i| {
                        let l = &lines[i];
                        let own = l.chars().take_while(|c| c.is_whitespace()).count();
                        !l.trim().is_empty()
                            && !l.trim_start().starts_with('#')
                            && own > indent.len()
                    })
                    .last()
                    .map_or(last + 1, |i| i + 1);
                lines.insert(after, format!("{indent}- {written}"));
            } else if value.is_empty() || value == "~" || value == "null" || value == "[]" {
                lines.splice(
                    start..end,
                    [format!("{key}:{comment}"), format!("  - {written}")],
                );
            } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                let inner = inner.trim();
                let joined = if inner.is_empty() {
                    written.to_owned()
                } else {
                    format!("{inner}, {written}")
                };
                lines[start] = format!("{key}: [{joined}]{comment}");
            } else {
                return Err(not_a_list());
            }
        }
    }
    Ok(())
}

pub(crate) fn read(file: &Path) -> Result<String, EditError> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(source) => Err(EditError::Io {
            action: "read",
            path: file.to_owned(),
            source,
        }),
    }
}

/// The file's mapping as the configuration loader reads it (a repeated key: the last wins).
pub(crate) fn parse(file: &Path, text: &str) -> Result<Map<String, Value>, EditError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::LastWins,
    };
    let unparsable = |message: String| EditError::Unparsable {
        path: file.to_owned(),
        message,
    };
    match serde_saphyr::from_str_with_options::<Value>(text, options) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(_) => Err(unparsable("it is not a mapping of keys to values".into())),
        Err(e) => Err(unparsable(
            e.to_string().lines().next().unwrap_or_default().to_owned(),
        )),
    }
}

/// Checks the edited lines against `expected` and writes them.
pub(crate) fn finish(
    file: &Path,
    key: &str,
    lines: &[String],
    expected: &Map<String, Value>,
) -> Result<(), EditError> {
    let mut text = lines.join("\n");
    text.push('\n');
    match parse(file, &text) {
        Ok(after) if &after == expected => write_private(file, text.as_bytes()),
        _ => Err(EditError::Unchecked {
            key: key.to_owned(),
            path: file.to_owned(),
        }),
    }
}

/// The line ranges `start..end` of every top-level `key:` block, in file order: the key's line,
/// then the lines that belong to its value (indented lines, and `- ` items at column 0), not
/// counting blank or comment lines after the value's last line (they belong to what follows).
pub(crate) fn blocks(lines: &[String], key: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        if !is_key_line(line, key) {
            continue;
        }
        let mut end = start + 1;
        let mut i = start + 1;
        while i < lines.len() {
            let l = &lines[i];
            let trimmed = l.trim_start();
            let top_level = !l.starts_with([' ', '\t']);
            if trimmed.is_empty() || trimmed.starts_with('#') {
                i += 1;
                continue;
            }
            if top_level && !(trimmed.starts_with("- ") || trimmed == "-") {
                break;
            }
            i += 1;
            end = i;
        }
        found.push((start, end));
    }
    found
}

/// Whether `line` starts the top-level key `key` (`key:`, `"key":` or `'key':`).
fn is_key_line(line: &str, key: &str) -> bool {
    [key.to_owned(), format!("\"{key}\""), format!("'{key}'")]
        .iter()
        .any(|k| {
            line.strip_prefix(k.as_str())
                .and_then(|rest| rest.trim_start_matches([' ', '\t']).strip_prefix(':'))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
        })
}

/// What follows `key:` on its line, without a trailing comment.
pub(crate) fn value_part(line: &str) -> &str {
    let rest = line.split_once(':').map_or("", |(_, rest)| rest);
    let comment = comment_start(rest).unwrap_or(rest.len());
    &rest[..comment]
}

/// ` # comment` at the end of a key's line (with the spaces before it), or "".
pub(crate) fn inline_comment(line: &str) -> String {
    let Some((_, rest)) = line.split_once(':') else {
        return String::new();
    };
    match comment_start(rest) {
        Some(at) => {
            let spaces = rest[..at].len() - rest[..at].trim_end().len();
            let spaces = if spaces == 0 {
                " "
            } else {
                &rest[at - spaces..at]
            };
            format!("{spaces}{}", &rest[at..])
        }
        None => String::new(),
    }
}

/// Where a `#` comment starts in a value's text: a `#` at the start or after a space, outside
/// single or double quotes.
fn comment_start(text: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => return Some(i),
            None => {}
        }
        previous = c;
    }
    None
}

/// A value as YAML text on one line: a string plain when it reads back as the same string,
/// else as a double-quoted (JSON) string; anything else as JSON (valid YAML flow).
pub(crate) fn emit(value: &Value) -> String {
    match value {
        Value::String(s) if plain_is_safe(s) => s.clone(),
        other => other.to_string(),
    }
}

fn plain_is_safe(s: &str) -> bool {
    let simple = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:@+-=".contains(c))
        && !s.starts_with(['-', ':', '@'])
        && !s.contains(": ")
        && !s.ends_with(':');
    simple
        && serde_saphyr::from_str::<Value>(&format!("k: {s}"))
            .ok()
            .and_then(|v| v.get("k").cloned())
            == Some(Value::String(s.to_owned()))
}

/// Replaces `file` with `contents`: a temporary file in the same directory created with mode
/// 0600 (it never holds the contents with wider permissions), synced, renamed over the file;
/// the file then has mode 0600 too.
fn write_private(file: &Path, contents: &[u8]) -> Result<(), EditError> {
    let io = |source| EditError::Io {
        action: "write",
        path: file.to_owned(),
        source,
    };
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let result = (|| {
        let mut out = options.open(&tmp)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            out.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        out.write_all(contents)?;
        out.sync_all()?;
        drop(out);
        std::fs::rename(&tmp, file)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn edited(start: &str, edit: impl FnOnce(&Path) -> Result<(), EditError>) -> String {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("elroy.conf.yaml");
        if !start.is_empty() {
            std::fs::write(&file, start).unwrap();
        }
        edit(&file).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        std::fs::read_to_string(&file).unwrap()
    }

    #[test]
    fn a_key_is_replaced_in_place_keeping_comments_and_order() {
        let start = "# my settings\nchat_model: gpt-5 # the best\n\n# sync\nsync_remote: /a\n";
        let got = edited(start, |f| set_key(f, "chat_model", &json!("llama3.1")));
        assert_eq!(
            got,
            "# my settings\nchat_model: llama3.1 # the best\n\n# sync\nsync_remote: /a\n"
        );
        let got = edited(start, |f| {
            set_key(f, "chat_model_api_base", &json!("http://127.0.0.1:8080/v1"))
        });
        assert_eq!(
            got,
            format!("{start}chat_model_api_base: http://127.0.0.1:8080/v1\n")
        );
    }

    #[test]
    fn a_value_that_would_read_back_otherwise_is_quoted() {
        for value in [
            "yes",
            "123",
            "a # b",
            "- x",
            "",
            "null",
            "x: y",
            "tab\there",
        ] {
            let got = edited("", |f| set_key(f, "chat_model", &json!(value)));
            let back: Value = serde_saphyr::from_str(&got).unwrap();
            assert_eq!(back["chat_model"], json!(value), "{got}");
        }
        assert_eq!(
            edited("", |f| set_key(f, "max_tokens", &json!(5000))),
            "max_tokens: 5000\n"
        );
    }

    #[test]
    fn a_block_value_is_replaced_whole() {
        let start = "exclude_tools:\n  - a\n  - b\n# next\nui: full\n";
        let got = edited(start, |f| set_key(f, "exclude_tools", &json!([])));
        assert_eq!(got, "exclude_tools: []\n# next\nui: full\n");
    }

    #[test]
    fn an_item_is_appended_to_each_kind_of_list() {
        let block = "# tools\nexclude_tools:\n  - a # first\n  - b\n\n# ui\nui: full\n";
        assert_eq!(
            edited(block, |f| append_to_list(f, "exclude_tools", &json!("c"))),
            "# tools\nexclude_tools:\n  - a # first\n  - b\n  - c\n\n# ui\nui: full\n"
        );
        let flush = "exclude_tools:\n- a\nui: full\n";
        assert_eq!(
            edited(flush, |f| append_to_list(f, "exclude_tools", &json!("c"))),
            "exclude_tools:\n- a\n- c\nui: full\n"
        );
        let flow = "exclude_tools: [a, b] # mine\n";
        assert_eq!(
            edited(flow, |f| append_to_list(f, "exclude_tools", &json!("c"))),
            "exclude_tools: [a, b, c] # mine\n"
        );
        let empty = "exclude_tools: # none yet\nui: full\n";
        assert_eq!(
            edited(empty, |f| append_to_list(f, "exclude_tools", &json!("c"))),
            "exclude_tools: # none yet\n  - c\nui: full\n"
        );
        assert_eq!(
            edited("ui: full\n", |f| append_to_list(
                f,
                "allow",
                &json!({"tool": "ls"})
            )),
            "ui: full\nallow:\n  - {\"tool\":\"ls\"}\n"
        );
        let maps = "allow:\n  - tool: ls\n    effect: read\n# end\n";
        assert_eq!(
            edited(maps, |f| append_to_list(
                f,
                "allow",
                &json!({"tool": "pwd"})
            )),
            "allow:\n  - tool: ls\n    effect: read\n  - {\"tool\":\"pwd\"}\n# end\n"
        );
    }

    #[test]
    fn what_cannot_be_edited_safely_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("elroy.conf.yaml");
        std::fs::write(&file, "ui: full\n").unwrap();
        let e = append_to_list(&file, "ui", &json!("x")).unwrap_err();
        assert!(matches!(e, EditError::NotAList { .. }), "{e}");
        std::fs::write(&file, "ui: [full\n").unwrap();
        let e = set_key(&file, "ui", &json!("plain")).unwrap_err();
        assert!(matches!(e, EditError::Unparsable { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "ui: [full\n");
        // A flow list over several lines is not edited line by line.
        std::fs::write(&file, "exclude_tools: [a,\n  b]\n").unwrap();
        assert!(append_to_list(&file, "exclude_tools", &json!("c")).is_err());
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "exclude_tools: [a,\n  b]\n"
        );
    }

    #[test]
    fn the_last_of_a_repeated_key_is_the_one_changed() {
        let start = "ui: plain\nui: full\n";
        assert_eq!(
            edited(start, |f| set_key(f, "ui", &json!("plain"))),
            "ui: plain\nui: plain\n"
        );
    }
}
