//! Tab completion of a typed line: command names, then arguments where they make sense.

use crate::parse::COMMANDS;

/// Names the front end knows for argument completion (gathered by
/// [`crate::ChatSession::completion_names`], or empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionNames {
    /// Chat model names and aliases for `/model NAME`.
    pub models: Vec<String>,
    /// Active memory names for `/memories QUESTION`.
    pub memories: Vec<String>,
}

/// One completion: replace `line[start..cursor]` with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Byte offset in the line where the replaced word starts.
    pub start: usize,
    /// The text that replaces `line[start..cursor]` (`/agenda`, `tomorrow`).
    pub replacement: String,
    /// One line describing the candidate (the command's help), or `""`.
    pub help: String,
}

/// The day words `/agenda` accepts besides `YYYY-MM-DD`.
pub(crate) const DAY_WORDS: &[&str] = &["today", "tomorrow", "yesterday", "week"];

/// Candidates for Tab at byte offset `cursor` of `line` (clamped to the line, and to a character
/// boundary): while the first word is being typed after `/`, the commands whose name starts with
/// it (case-insensitive, in [`COMMANDS`] order); after `/agenda `, the day words; after `/model `,
/// `names.models`; after `/memories `, `names.memories` — each filtered by the prefix typed so
/// far (case-insensitive). Nothing for messages or other arguments.
pub fn complete(line: &str, cursor: usize, names: &CompletionNames) -> Vec<Candidate> {
    let mut cursor = cursor.min(line.len());
    while !line.is_char_boundary(cursor) {
        cursor -= 1;
    }
    let before = &line[..cursor];
    let leading = before.len() - before.trim_start().len();
    let typed = &before[leading..];
    let Some(rest) = typed.strip_prefix('/') else {
        return Vec::new();
    };
    if rest.starts_with('/') {
        return Vec::new();
    }
    let starts = |candidate: &str, prefix: &str| {
        candidate.to_lowercase().starts_with(&prefix.to_lowercase())
    };
    match rest.find(char::is_whitespace) {
        None => COMMANDS
            .iter()
            .filter(|c| starts(c.name, rest))
            .map(|c| Candidate {
                start: leading,
                replacement: format!("/{}", c.name),
                help: c.help.to_owned(),
            })
            .collect(),
        Some(at) => {
            let word = rest[..at].to_lowercase();
            let argument = rest[at..].trim_start();
            let start = cursor - argument.len();
            let pool: Vec<&str> = match word.as_str() {
                "agenda" => DAY_WORDS.to_vec(),
                "model" => names.models.iter().map(String::as_str).collect(),
                "memories" => names.memories.iter().map(String::as_str).collect(),
                _ => Vec::new(),
            };
            pool.into_iter()
                .filter(|name| starts(name, argument))
                .map(|name| Candidate {
                    start,
                    replacement: name.to_owned(),
                    help: String::new(),
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replacements(line: &str, names: &CompletionNames) -> Vec<String> {
        complete(line, line.len(), names)
            .into_iter()
            .map(|c| c.replacement)
            .collect()
    }

    #[test]
    fn command_names() {
        let none = CompletionNames::default();
        assert_eq!(replacements("/a", &none), ["/agenda"]);
        assert_eq!(replacements("/re", &none), ["/remember", "/requests"]);
        assert_eq!(replacements("/RE", &none), ["/remember", "/requests"]);
        assert_eq!(replacements("/", &none).len(), COMMANDS.len());
        assert!(replacements("/zzz", &none).is_empty());
        assert!(replacements("hello /a", &none).is_empty());
        assert!(replacements("//a", &none).is_empty());
        let c = &complete("  /he", 5, &none)[0];
        assert_eq!((c.start, c.replacement.as_str()), (2, "/help"));
        assert_eq!(c.help, "list these commands");
        // The cursor in the middle of the word completes what is before it.
        assert_eq!(
            complete("/dxyz", 2, &none)
                .into_iter()
                .map(|c| c.replacement)
                .collect::<Vec<_>>(),
            ["/due"]
        );
        // Out-of-range and mid-character cursors are clamped, not a panic.
        assert!(!complete("/é", 2, &none).is_empty());
        assert!(!complete("/a", 99, &none).is_empty());
    }

    #[test]
    fn arguments() {
        let names = CompletionNames {
            models: vec!["sonnet".into(), "gpt-5".into(), "gpt5-mini".into()],
            memories: vec!["Dentist on Friday".into(), "Favourite tea".into()],
        };
        assert_eq!(replacements("/agenda t", &names), ["today", "tomorrow"]);
        let c = &complete("/agenda to", 10, &names)[0];
        assert_eq!((c.start, c.replacement.as_str()), (8, "today"));
        assert_eq!(replacements("/model gpt", &names), ["gpt-5", "gpt5-mini"]);
        assert_eq!(
            replacements("/memories dent", &names),
            ["Dentist on Friday"]
        );
        assert_eq!(replacements("/model ", &names).len(), 3);
        assert!(replacements("/remember d", &names).is_empty());
        assert!(replacements("/nope x", &names).is_empty());
    }
}
