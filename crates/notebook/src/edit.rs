//! The `memory` tool's edits as pure functions on the file text
//! (`docs/tool-rules.md#actions-and-checks` step 6): append a bullet, replace or remove the first
//! exact occurrence. No IO here; [`crate::Notebook`] reads and writes the file around them under
//! the home lock.

/// One edit of a notes file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Append `- {text trimmed}` as a new line, after dropping trailing whitespace at the end of
    /// the file. The text must not be empty after trimming.
    Add {
        /// The new entry; surrounding whitespace is trimmed, inner line breaks are kept.
        text: String,
    },
    /// Replace the first exact occurrence of `text` (byte-wise, no normalisation, no regex) by
    /// `with`, literally (`$` and `\` have no special meaning). `text` must not be empty.
    Replace {
        /// The exact existing text to find.
        text: String,
        /// What takes its place (may be empty).
        with: String,
    },
    /// Delete the first exact occurrence of `text` (a replace by `""`). `text` must not be empty.
    Remove {
        /// The exact existing text to find.
        text: String,
    },
}

impl Edit {
    /// The action's name as the tool's schema spells it: `add`, `replace` or `remove`.
    pub fn action(&self) -> &'static str {
        match self {
            Edit::Add { .. } => "add",
            Edit::Replace { .. } => "replace",
            Edit::Remove { .. } => "remove",
        }
    }
}

/// Why an edit could not be applied. `Display` is the `memory` tool's message (the part after
/// `Error invoking tool memory: `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// `text must not be empty`: `add` with text that is empty after trimming, or `replace` /
    /// `remove` with `""`.
    EmptyText,
    /// `not found: {text}`: `replace` / `remove` found no occurrence.
    NotFound(String),
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditError::EmptyText => f.write_str("text must not be empty"),
            EditError::NotFound(text) => write!(f, "not found: {text}"),
        }
    }
}

impl std::error::Error for EditError {}

/// Checks the edit's own arguments (no file needed): an empty `text` is refused before anything
/// is read.
///
/// # Errors
/// [`EditError::EmptyText`].
pub fn check(edit: &Edit) -> Result<(), EditError> {
    let empty = match edit {
        Edit::Add { text } => text.trim().is_empty(),
        Edit::Replace { text, .. } | Edit::Remove { text } => text.is_empty(),
    };
    if empty {
        Err(EditError::EmptyText)
    } else {
        Ok(())
    }
}

/// The file's new content after `edit` (`docs/tool-rules.md#actions-and-checks` step 6).
///
/// - `add`: `- {entry}\n` when the content is empty after trimming trailing whitespace, else
///   `{content without trailing whitespace}\n- {entry}\n`.
/// - `replace` / `remove`: the first occurrence of `text` becomes `with` / nothing.
///
/// # Errors
/// [`EditError::EmptyText`] as [`check`]; [`EditError::NotFound`] when `text` does not occur.
pub fn apply(current: &str, edit: &Edit) -> Result<String, EditError> {
    check(edit)?;
    match edit {
        Edit::Add { text } => {
            let entry = text.trim();
            let base = current.trim_end();
            Ok(if base.is_empty() {
                format!("- {entry}\n")
            } else {
                format!("{base}\n- {entry}\n")
            })
        }
        Edit::Replace { text, with } => replace_first(current, text, with),
        Edit::Remove { text } => replace_first(current, text, ""),
    }
}

fn replace_first(current: &str, text: &str, with: &str) -> Result<String, EditError> {
    let Some(at) = current.find(text) else {
        return Err(EditError::NotFound(text.to_owned()));
    };
    let mut out = String::with_capacity(current.len() + with.len());
    out.push_str(&current[..at]);
    out.push_str(with);
    out.push_str(&current[at + text.len()..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(t: &str) -> Edit {
        Edit::Add { text: t.into() }
    }
    fn replace(t: &str, w: &str) -> Edit {
        Edit::Replace {
            text: t.into(),
            with: w.into(),
        }
    }
    fn remove(t: &str) -> Edit {
        Edit::Remove { text: t.into() }
    }

    #[test]
    fn add_cases() {
        assert_eq!(
            apply("", &add("prefers dark mode")).unwrap(),
            "- prefers dark mode\n"
        );
        assert_eq!(
            apply("# Notes\n\n- a\n\n\n", &add("b")).unwrap(),
            "# Notes\n\n- a\n- b\n"
        );
        assert_eq!(apply("", &add("   padded   ")).unwrap(), "- padded\n");
        assert_eq!(apply("x", &add("   ")), Err(EditError::EmptyText));
        assert_eq!(
            apply(" \n\t\n", &add("line one\n\nline two")).unwrap(),
            "- line one\n\nline two\n"
        );
    }

    #[test]
    fn replace_and_remove_cases() {
        assert_eq!(apply("x and x", &replace("x", "y")).unwrap(), "y and x");
        assert_eq!(
            apply("price $5", &replace("$5", "cost $$10")).unwrap(),
            "price cost $$10"
        );
        assert_eq!(
            apply("path C:\\dir\n", &replace("C:\\dir", "D:\\new\\1")).unwrap(),
            "path D:\\new\\1\n"
        );
        assert_eq!(
            apply("abc\n", &replace("a.c", "z")),
            Err(EditError::NotFound("a.c".into()))
        );
        assert_eq!(apply("- a\n", &replace("", "z")), Err(EditError::EmptyText));
        assert_eq!(apply("- a\n", &remove("")), Err(EditError::EmptyText));
        assert_eq!(
            apply("- tea\n- green tea\n", &remove("tea")).unwrap(),
            "- \n- green tea\n"
        );
        assert_eq!(
            apply(
                "- prefers dark mode\n- likes verbose logs\n",
                &replace("mode\n- likes", "mode; likes")
            )
            .unwrap(),
            "- prefers dark mode; likes verbose logs\n"
        );
        assert_eq!(
            EditError::NotFound("zzz".into()).to_string(),
            "not found: zzz"
        );
    }
}
