//! Appending to a list one level down (`permissions.allow`), with the same guarantees as the
//! top-level edits of [`crate::edit`]: the parent key's block is cut out, its common indentation
//! removed, the list edited as a top-level one, and the block indented back; the result is
//! checked by parsing before it is written.

use std::path::Path;

use serde_json::{Map, Value};

use crate::edit::{
    EditError, append_in_lines, blocks, emit, finish, inline_comment, parse, read, value_part,
};

/// Indentation of a nested block elroy creates.
const INDENT: &str = "  ";

/// Appends `item` to the list at `parent.key` in the YAML file `file` (created when missing):
/// `parent:` and `key:` are created when absent (at the end of the file, and at the end of the
/// parent's block), a block list gets a `- item` line after its last item, a one-line flow list
/// `[a, b]` gets `, item`. Comments, blank lines and the order of every key are kept.
///
/// # Errors
/// [`EditError::NotAList`] when `parent` is not a mapping written as a block, or `key` holds
/// something that is not a list; other [`EditError`]s. The file is then unchanged.
pub fn append_to_nested_list(
    file: &Path,
    parent: &str,
    key: &str,
    item: &Value,
) -> Result<(), EditError> {
    let text = read(file)?;
    let before = parse(file, &text)?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let written = emit(item);
    let dotted = format!("{parent}.{key}");
    let not_a_list = || EditError::NotAList {
        key: dotted.clone(),
        path: file.to_owned(),
        item: written.clone(),
    };
    let mut section = match before.get(parent) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(not_a_list()),
    };
    let mut list = match section.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(not_a_list()),
    };
    match blocks(&lines, parent).last() {
        None => {
            lines.push(format!("{parent}:"));
            lines.push(format!("{INDENT}{key}:"));
            lines.push(format!("{INDENT}{INDENT}- {written}"));
        }
        Some(&(start, end)) => {
            let value = value_part(&lines[start]).trim().to_owned();
            if !(value.is_empty() || value == "~" || value == "null" || value == "{}") {
                // A flow mapping on the key's line is not edited line by line.
                return Err(not_a_list());
            }
            let inner: Vec<String> = lines[start + 1..end].to_vec();
            let indent = inner
                .iter()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                .map(|l| l.len() - l.trim_start().len())
                .min()
                .filter(|&n| n > 0);
            let indent = match indent {
                Some(n) => " ".repeat(n),
                None => INDENT.to_owned(),
            };
            // Lines less indented than the block (comments only, by construction) stay as they are.
            let mut dedented: Vec<String> = inner
                .iter()
                .map(|l| {
                    l.strip_prefix(indent.as_str())
                        .unwrap_or(l.trim_start())
                        .to_owned()
                })
                .collect();
            append_in_lines(&mut dedented, key, &written).map_err(|_| not_a_list())?;
            let reindented = dedented.iter().map(|l| {
                if l.is_empty() {
                    String::new()
                } else {
                    format!("{indent}{l}")
                }
            });
            let head = format!("{parent}:{}", inline_comment(&lines[start]));
            let mut replacement = vec![head];
            replacement.extend(reindented);
            lines.splice(start..end, replacement);
        }
    }
    list.push(item.clone());
    section.insert(key.to_owned(), Value::Array(list));
    let mut expected = before;
    expected.insert(parent.to_owned(), Value::Object(section));
    finish(file, &dotted, &lines, &expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edited(start: &str) -> Result<String, Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("elroy.conf.yaml");
        std::fs::write(&file, start)?;
        append_to_nested_list(
            &file,
            "permissions",
            "allow",
            &Value::from("read_file(/etc/**)"),
        )?;
        Ok(std::fs::read_to_string(&file)?)
    }

    #[test]
    fn a_missing_section_is_created_after_everything_else() {
        let out = edited("# my settings\nchat_model: gpt-4o # the good one\n").unwrap();
        assert_eq!(
            out,
            "# my settings\nchat_model: gpt-4o # the good one\npermissions:\n  allow:\n    - \"read_file(/etc/**)\"\n"
        );
    }

    #[test]
    fn a_missing_list_is_added_to_an_existing_section() {
        let out =
            edited("permissions:\n    mode: ask # careful\n# after\nchat_model: x\n").unwrap();
        assert_eq!(
            out,
            "permissions:\n    mode: ask # careful\n    allow:\n      - \"read_file(/etc/**)\"\n# after\nchat_model: x\n"
        );
    }

    #[test]
    fn an_item_goes_after_the_last_of_a_block_list() {
        let out = edited(
            "permissions:\n  allow:\n    # mine\n    - ls\n  deny: [web_search]\nuser_token: me\n",
        )
        .unwrap();
        assert_eq!(
            out,
            "permissions:\n  allow:\n    # mine\n    - ls\n    - \"read_file(/etc/**)\"\n  deny: [web_search]\nuser_token: me\n"
        );
    }

    #[test]
    fn an_item_joins_a_flow_list() {
        let out = edited("permissions:\n  allow: [ls, pwd] # both\n  mode: ask\n").unwrap();
        assert_eq!(
            out,
            "permissions:\n  allow: [ls, pwd, \"read_file(/etc/**)\"] # both\n  mode: ask\n"
        );
        let empty = edited("permissions:\n  allow: []\n").unwrap();
        assert_eq!(
            empty,
            "permissions:\n  allow:\n    - \"read_file(/etc/**)\"\n"
        );
    }

    #[test]
    fn what_is_not_a_block_mapping_or_a_list_is_left_alone() {
        for start in [
            "permissions: {allow: [ls]}\n",
            "permissions:\n  allow: ls\n",
            "permissions: ask\n",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("elroy.conf.yaml");
            std::fs::write(&file, start).unwrap();
            let err = append_to_nested_list(&file, "permissions", "allow", &Value::from("ls"));
            assert!(
                matches!(err, Err(EditError::NotAList { .. })),
                "{start}: {err:?}"
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), start);
        }
    }
}
