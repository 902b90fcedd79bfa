//! How much of a memory's text a tool result holds (`docs/behaviour.md#r18-large-files-come-back-in-bounded-pieces`): at
//! most [`MAX_MEMORY_TEXT_CHARS`] characters, then a note saying where the rest is, so a memory
//! of megabytes (a pasted log, an import) never fills the model's context.

use std::borrow::Cow;

/// The most characters of one memory's text a tool result shows (`print_memory`,
/// `examine_memories`, a memory pinned into the context).
pub const MAX_MEMORY_TEXT_CHARS: usize = 20_000;

/// `text` when it has at most [`MAX_MEMORY_TEXT_CHARS`] characters; else its first
/// [`MAX_MEMORY_TEXT_CHARS`] characters and a note naming how long it is and the file
/// (`file`, as shown to the user) that holds all of it, with the `read_file` line to read on.
pub fn bounded_text<'a>(text: &'a str, file: &str) -> Cow<'a, str> {
    let Some((cut, _)) = text.char_indices().nth(MAX_MEMORY_TEXT_CHARS) else {
        return Cow::Borrowed(text);
    };
    let kept = &text[..cut];
    let total = text.chars().count();
    // The line the cut falls in (1-based, as `read_file` counts): reading from it shows the rest.
    let line = kept.matches('\n').count() + 1;
    Cow::Owned(format!(
        "{kept}\n\n[cut: this memory has {total} characters, {MAX_MEMORY_TEXT_CHARS} are shown; \
         all of it is in {file}: read on with read_file(path=\"{file}\", start_line={line})]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_stay_as_they_are() {
        let text = "é".repeat(MAX_MEMORY_TEXT_CHARS);
        assert!(matches!(bounded_text(&text, "m.md"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_texts_are_cut_with_a_note() {
        let text = format!("{}\n{}", "a".repeat(15_000), "b".repeat(10_000));
        let out = bounded_text(&text, "/h/memories/Log.md");
        assert!(out.starts_with(&"a".repeat(15_000)));
        assert_eq!(out.matches('b').count(), MAX_MEMORY_TEXT_CHARS - 15_001);
        assert!(out.ends_with(
            "[cut: this memory has 25001 characters, 20000 are shown; all of it is in \
             /h/memories/Log.md: read on with read_file(path=\"/h/memories/Log.md\", start_line=2)]"
        ));
    }
}
