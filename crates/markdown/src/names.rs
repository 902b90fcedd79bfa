//! Names to file names: `sanitize_filename` and the unique-path rule (`formats.md` §2).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use crate::MarkdownError;

// Python's `\w` and `\s` on `str` (what Elroy's `re.sub(r"[^\w\s-]", "_", name)` uses): word
// characters are those `str.isalnum()` accepts, letters and numbers (not combining marks or other
// connector punctuation), plus `_`; whitespace includes the separators U+001C..U+001F, which
// Unicode's White_Space property (Rust's `\s`) leaves out.
static NOT_WORD_SPACE_DASH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"[^\p{L}\p{N}_\s\x1C-\x1F-]").ok());
static WHITESPACE_RUN: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"[\s\x1C-\x1F]+").ok());

/// Whether `name` is a Windows device name (`CON`, `PRN`, `AUX`, `NUL`, `COM1`…`COM9`,
/// `LPT1`…`LPT9`), ignoring ASCII case (`formats.md` §2.2).
pub fn is_windows_device_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        _ => {
            let bytes = upper.as_bytes();
            bytes.len() == 4
                && (upper.starts_with("COM") || upper.starts_with("LPT"))
                && (b'1'..=b'9').contains(&bytes[3])
        }
    }
}

/// Turns a name into a file-name base (`formats.md` §2.1): characters other than Unicode word
/// characters, whitespace and `-` become `_`; whitespace runs become one `_`; leading and trailing
/// `_` are stripped; at most 80 characters are kept; an empty result is `fallback`; a Windows
/// device name gets `_` appended (R4). The result never contains a path separator.
///
/// ```
/// use elroy_markdown::sanitize_filename;
/// assert_eq!(sanitize_filename("Buy milk: 2% & eggs!", "agenda_item"), "Buy_milk__2____eggs");
/// assert_eq!(sanitize_filename("../../etc/passwd", "memory"), "etc_passwd");
/// assert_eq!(sanitize_filename("!!!", "memory"), "memory");
/// assert_eq!(sanitize_filename("nul", "memory"), "nul_");
/// ```
pub fn sanitize_filename(name: &str, fallback: &str) -> String {
    let replaced = match NOT_WORD_SPACE_DASH.as_ref() {
        Some(re) => re.replace_all(name, "_").into_owned(),
        None => name.to_owned(),
    };
    let collapsed = match WHITESPACE_RUN.as_ref() {
        Some(re) => re.replace_all(&replaced, "_").into_owned(),
        None => replaced,
    };
    let stripped = collapsed.trim_matches('_');
    let mut base: String = stripped.chars().take(80).collect();
    if base.is_empty() {
        base = fallback.to_owned();
    }
    if is_windows_device_name(&base) {
        base.push('_');
    }
    base
}

/// The first free file name for `base` (`formats.md` §2.3): `B.md`, `B-2.md`, `B-3.md`, … where
/// `taken` says whether a candidate file name is taken. Callers compare ignoring case (D12).
pub fn unique_file_name(base: &str, mut taken: impl FnMut(&str) -> bool) -> String {
    let first = format!("{base}.md");
    if !taken(&first) {
        return first;
    }
    let mut n: u64 = 2;
    loop {
        let candidate = format!("{base}-{n}.md");
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

/// The unique path for a new file with base `base` in `dir` (`formats.md` §2.3): the first of
/// `B.md`, `B-2.md`, … that no entry of `dir` has, comparing names ignoring case (D12). `except` is a
/// file name that does not count as taken (the file being renamed). A missing `dir` has no entries.
/// Call it under the home lock, and write the file in the same locked operation.
///
/// # Errors
/// [`MarkdownError::Read`] when `dir` exists but cannot be listed; `dir_display` names it.
pub fn unique_path(
    dir: &Path,
    base: &str,
    except: Option<&str>,
    dir_display: &str,
) -> Result<PathBuf, MarkdownError> {
    let mut names: HashSet<String> = HashSet::new();
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries.flatten() {
                names.insert(entry.file_name().to_string_lossy().to_lowercase());
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(MarkdownError::Read {
                file: dir_display.to_owned(),
                message: e.to_string(),
            });
        }
    }
    if let Some(except) = except {
        names.remove(&except.to_lowercase());
    }
    Ok(dir.join(unique_file_name(base, |c| {
        names.contains(&c.to_lowercase())
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_table_of_the_spec() {
        let cases = [
            ("Write the Q2 report.", "Write_the_Q2_report"),
            ("Buy milk: 2% & eggs!", "Buy_milk__2____eggs"),
            ("Café au lait – déjà vu", "Café_au_lait___déjà_vu"),
            ("日本語のタスク", "日本語のタスク"),
            ("a/b\\c", "a_b_c"),
            ("../../etc/passwd", "etc_passwd"),
            ("!!!", "agenda_item"),
            ("", "agenda_item"),
            ("  ___  ", "agenda_item"),
            ("CON", "CON_"),
            ("nul", "nul_"),
            ("com1", "com1_"),
            ("com0", "com0"),
            (
                "Call Dr. Müller: lab results #2",
                "Call_Dr__Müller__lab_results__2",
            ),
            (
                "Ask about café #wifi: password",
                "Ask_about_café__wifi__password",
            ),
            ("日本語の練習 — 30 minutes", "日本語の練習___30_minutes"),
            ("C:\\Windows\\win.ini", "C__Windows_win_ini"),
            ("/etc/hosts", "etc_hosts"),
        ];
        for (input, expected) in cases {
            assert_eq!(
                sanitize_filename(input, "agenda_item"),
                expected,
                "{input:?}"
            );
        }
        let long = "x".repeat(100);
        assert_eq!(sanitize_filename(&long, "f").chars().count(), 80);
        // Truncation after stripping may leave a trailing underscore (as Elroy).
        let s = format!("{}!{}", "a".repeat(79), "b");
        assert_eq!(sanitize_filename(&s, "f"), format!("{}_", "a".repeat(79)));
    }

    #[test]
    fn word_and_space_classes_are_pythons() {
        // Expected values computed with CPython 3.11's `re` (Elroy's rule): combining marks,
        // variation selectors and connector punctuation other than `_` are not word characters;
        // U+001C..U+001F are whitespace.
        for (input, expected) in [
            ("Voice input \u{1F399}\u{FE0F}", "Voice_input"),
            ("cafe\u{301} au lait", "cafe__au_lait"),
            ("a\u{203F}b", "a_b"),
            ("\u{216B} chapters", "\u{216B}_chapters"),
            ("x\u{1C}y", "x_y"),
            ("tab\there", "tab_here"),
            ("nb\u{A0}sp", "nb_sp"),
            ("emoji \u{1F44D}\u{1F3FD} ok", "emoji____ok"),
            ("a\u{200B}b", "a_b"),
        ] {
            assert_eq!(sanitize_filename(input, "x"), expected, "{input:?}");
        }
    }

    #[test]
    fn unique_paths_ignore_case() {
        let dir = tempfile::tempdir().unwrap();
        let p = unique_path(dir.path(), "Foo", None, "d").unwrap();
        assert_eq!(p.file_name().unwrap(), "Foo.md");
        std::fs::write(dir.path().join("foo.md"), "").unwrap();
        std::fs::write(dir.path().join("Foo-2.md"), "").unwrap();
        let p = unique_path(dir.path(), "Foo", None, "d").unwrap();
        assert_eq!(p.file_name().unwrap(), "Foo-3.md");
        let p = unique_path(dir.path(), "FOO", Some("foo.md"), "d").unwrap();
        assert_eq!(p.file_name().unwrap(), "FOO.md");
        let missing = dir.path().join("missing");
        let p = unique_path(&missing, "Foo", None, "d").unwrap();
        assert_eq!(p, missing.join("Foo.md"));
    }
}
