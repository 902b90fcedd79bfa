//! Names to file names: `sanitize_filename` and the unique-path rule
//! (`docs/formats.md#file-names`).

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

use crate::MarkdownError;

// Python's `\w` and `\s` on `str` (what Elroy's `re.sub(r"[^\w\s-]", "_", name)` uses): word
// characters are those `str.isalnum()` accepts, letters and numbers (not combining marks or other
// connector punctuation), plus `_`; whitespace includes the separators U+001C..U+001F, which
// Unicode's White_Space property (Rust's `\s`) leaves out.
static NOT_WORD_SPACE_DASH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"[^\p{L}\p{N}_\s\x1C-\x1F-]").ok());
static WHITESPACE_RUN: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"[\s\x1C-\x1F]+").ok());

/// The most bytes of a file name on ext4, APFS, NTFS (UTF-16 units aside) and most other file
/// systems: 255 per path component.
pub const MAX_FILE_NAME_BYTES: usize = 255;

/// The most bytes [`sanitize_filename`] keeps of a base: [`MAX_FILE_NAME_BYTES`] minus room for
/// the unique-path suffix (`-N`, up to 11 digits) and `.md`. 80 characters of a 3-byte script
/// (CJK) fit exactly; 4-byte characters (emoji, CJK extension B) are cut to 60.
pub const MAX_BASE_BYTES: usize = 240;

/// A name in Unicode Normalization Form C (composed: `e` + U+0301 becomes `é`), borrowed when it
/// already is (the common case, checked without allocating).
///
/// Every store normalises names (agenda and due items, memories, feature requests, user names)
/// with this on input and on every lookup, so the composed and decomposed spellings of one name
/// are one item (macOS file names and some keyboards give NFD). Elroy 0.5.0 does not normalise;
/// its NFC names are unchanged by this, and its rare NFD names are found by either spelling.
pub fn normalize_name(name: &str) -> Cow<'_, str> {
    if is_nfc_quick(name.chars()) == IsNormalized::Yes {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(name.nfc().collect())
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Whether `name` is a Windows device name (`CON`, `PRN`, `AUX`, `NUL`, `COM1`…`COM9`,
/// `LPT1`…`LPT9`), ignoring ASCII case (`docs/formats.md#reserved-device-names`).
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

/// Turns a name into a file-name base (`docs/formats.md#file-names`): the name is put in NFC
/// ([`normalize_name`], so `Café` keeps its `é` whichever way it was typed); characters other than
/// Unicode word characters, whitespace and `-` become `_`; whitespace runs become one `_`; leading
/// and trailing `_` are stripped; at most 80 characters and at most [`MAX_BASE_BYTES`] bytes are
/// kept (cut at a character boundary, so with the `-N` suffix and `.md` every name fits the 255
/// bytes of ext4 and APFS, whatever its script); an empty result is `fallback`; a Windows device
/// name gets `_` appended (R4). The result never contains a path separator.
///
/// ```
/// use elroy_markdown::sanitize_filename;
/// assert_eq!(sanitize_filename("Buy milk: 2% & eggs!", "agenda_item"), "Buy_milk__2____eggs");
/// assert_eq!(sanitize_filename("../../etc/passwd", "memory"), "etc_passwd");
/// assert_eq!(sanitize_filename("!!!", "memory"), "memory");
/// assert_eq!(sanitize_filename("nul", "memory"), "nul_");
/// ```
pub fn sanitize_filename(name: &str, fallback: &str) -> String {
    let name = normalize_name(name);
    let replaced = match NOT_WORD_SPACE_DASH.as_ref() {
        Some(re) => re.replace_all(&name, "_").into_owned(),
        None => name.into_owned(),
    };
    let collapsed = match WHITESPACE_RUN.as_ref() {
        Some(re) => re.replace_all(&replaced, "_").into_owned(),
        None => replaced,
    };
    let stripped = collapsed.trim_matches('_');
    let chars: String = stripped.chars().take(80).collect();
    let mut base = cut_bytes(&chars, MAX_BASE_BYTES).to_owned();
    if base.is_empty() {
        base = fallback.to_owned();
    }
    if is_windows_device_name(&base) {
        base.push('_');
    }
    base
}

/// The first free file name for `base` (`docs/formats.md#unique-paths`): `B.md`, `B-2.md`,
/// `B-3.md`, … where `taken` says whether a candidate file name is taken. Callers compare ignoring
/// case (D12). Every candidate is at most [`MAX_FILE_NAME_BYTES`] bytes: a longer base (one not
/// from
/// [`sanitize_filename`], such as an archived file's stem) is cut at a character boundary.
pub fn unique_file_name(base: &str, mut taken: impl FnMut(&str) -> bool) -> String {
    let fit = |suffix: &str| {
        let room = MAX_FILE_NAME_BYTES.saturating_sub(suffix.len() + ".md".len());
        format!("{}{suffix}.md", cut_bytes(base, room))
    };
    let first = fit("");
    if !taken(&first) {
        return first;
    }
    let mut n: u64 = 2;
    loop {
        let candidate = fit(&format!("-{n}"));
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

/// The unique path for a new file with base `base` in `dir` (`docs/formats.md#unique-paths`): the
/// first of `B.md`, `B-2.md`, … that no entry of `dir` has, comparing names ignoring case (D12).
/// `except` is a file name that does not count as taken (the file being renamed). A missing `dir`
/// has no entries. Call it under the home lock, and write the file in the same locked operation.
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
            // Elroy keeps a decomposed accent apart (`cafe__au_lait`); elroy composes first (NFC).
            ("cafe\u{301} au lait", "café_au_lait"),
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

    /// Kind: one name in composed (NFC) and decomposed (NFD) spelling. Both give the same file
    /// name, which keeps the accented letter: `é` (e + U+0301) and Hangul built from jamo.
    #[test]
    fn composed_and_decomposed_names_are_one_file_name() {
        let nfc = "Call Jos\u{e9} about the caf\u{e9}";
        let nfd = "Call Jose\u{301} about the cafe\u{301}";
        assert_eq!(normalize_name(nfd), nfc);
        assert!(matches!(normalize_name(nfc), Cow::Borrowed(_)));
        assert_eq!(sanitize_filename(nfd, "x"), "Call_José_about_the_café");
        assert_eq!(sanitize_filename(nfc, "x"), "Call_José_about_the_café");
        // 한국 as conjoining jamo (NFD) and as syllables (NFC).
        let jamo = "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8} trip";
        assert_eq!(normalize_name(jamo), "한국 trip");
        assert_eq!(sanitize_filename(jamo, "x"), "한국_trip");
    }

    /// Kind: names no file system can store (more than 255 bytes per name once sanitised). The
    /// base is bounded in bytes as well as characters, cut at a character boundary, so that the
    /// unique suffix and `.md` still fit: 4-byte characters (emoji, CJK extension B), 3-byte CJK
    /// and 2-byte Cyrillic.
    #[test]
    fn file_names_fit_255_bytes_in_any_script() {
        // The first two candidates are taken: the name carries the suffix `-3`.
        let fits = |base: &str| {
            let mut calls = 0;
            let name = unique_file_name(base, |_| {
                calls += 1;
                calls <= 2
            });
            assert!(name.len() <= MAX_FILE_NAME_BYTES, "{} bytes", name.len());
            assert!(name.ends_with("-3.md"), "{name}");
            // The largest suffix a base of MAX_BASE_BYTES leaves room for (11 digits).
            assert!(base.len() + "-99999999999.md".len() <= MAX_FILE_NAME_BYTES);
            name
        };
        // CJK extension B (4 bytes each): 80 characters would be 320 bytes.
        let ext_b: String = std::iter::repeat_n('\u{20BB7}', 100).collect();
        let base = sanitize_filename(&ext_b, "x");
        assert_eq!(base.len(), 240);
        assert_eq!(base.chars().count(), 60);
        assert!(base.chars().all(|c| c == '\u{20BB7}'));
        assert_eq!(fits(&base).len(), 240 + "-3.md".len());
        // Letters around 4-byte emoji (emoji become `_`, letters stay): the cut lands between
        // characters.
        let mixed: String = "\u{1D4D0}b".repeat(100);
        let base = sanitize_filename(&mixed, "x");
        assert!(base.len() <= MAX_BASE_BYTES && base.chars().count() <= 80);
        assert!(std::str::from_utf8(base.as_bytes()).is_ok());
        fits(&base);
        // Cyrillic (2 bytes): 80 characters are 160 bytes and are all kept.
        let cyrillic =
            "Напомнить позвонить бабушке насчёт дачи и огурцов в субботу утром пораньше всем";
        let base = sanitize_filename(&cyrillic.repeat(2), "x");
        assert_eq!(base.chars().count(), 80);
        assert_eq!(
            base.len(),
            80 * 2 - base.chars().filter(char::is_ascii).count()
        );
        fits(&base);
        // CJK (3 bytes): 80 characters, exactly the byte bound.
        let cjk: String = std::iter::repeat_n('語', 90).collect();
        assert_eq!(sanitize_filename(&cjk, "x").chars().count(), 80);
        // A base longer than the bound (an archived stem) is cut when the suffix is added.
        let long: String = std::iter::repeat_n('é', 200).collect();
        let name = unique_file_name(&long, |c| !c.contains("-2."));
        assert!(
            name.len() <= MAX_FILE_NAME_BYTES && name.ends_with("é-2.md"),
            "{name}"
        );
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
