//! Warnings that scale: stores report problems with single files as [`FileWarning`]s,
//! and front ends show them through [`summarize_warnings`], so thousands of similar problems make
//! one line with a count and the first few paths instead of thousands of lines. The full list
//! belongs in the log.

use std::sync::Arc;

/// One problem with one file, found while a store read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWarning {
    /// What kind of problem it is, as the plural summary line says it after the count, e.g.
    /// `memory files had no id; ids were assigned`. Warnings with the same `kind` are summarized
    /// together.
    pub kind: &'static str,
    /// The file, as shown to the user (relative to `$ELROY_HOME`).
    pub path: String,
    /// The whole message for this file (what the log gets, and the line shown when there are
    /// few).
    pub message: String,
}

impl FileWarning {
    /// A warning of `kind` about `path`.
    pub fn new(kind: &'static str, path: impl Into<String>, message: impl Into<String>) -> Self {
        FileWarning {
            kind,
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Where a store sends the [`FileWarning`]s it finds (the runtime summarizes them for the front
/// end's warning sink and logs each one).
pub type FileWarningSink = Arc<dyn Fn(Vec<FileWarning>) + Send + Sync>;

/// Up to this many warnings of one kind are shown one per line; more make one summary line.
pub const ITEMIZED_WARNINGS: usize = 3;

/// How many paths a summary line names.
pub const SUMMARY_PATHS: usize = 3;

/// The lines to show for `warnings`, in the order their kinds first appear: each warning's message
/// when its kind has at most [`ITEMIZED_WARNINGS`], else one line
/// `{count} {kind} (first: {path}, {path}, {path})`, the count with thousands separators
/// (`5,000 memory files had no id; ids were assigned (first: memories/a.md, …)`).
pub fn summarize_warnings(warnings: &[FileWarning]) -> Vec<String> {
    summarize_warnings_with(warnings, "all of them are in the log")
}

/// [`summarize_warnings`] with another note after the first paths of a summary line (`first: a, b,
/// c; {note}`), for text that is not shown beside a log (a tool's result).
pub fn summarize_warnings_with(warnings: &[FileWarning], note: &str) -> Vec<String> {
    let mut kinds: Vec<(&str, Vec<&FileWarning>)> = Vec::new();
    for w in warnings {
        match kinds.iter_mut().find(|(k, _)| *k == w.kind) {
            Some((_, group)) => group.push(w),
            None => kinds.push((w.kind, vec![w])),
        }
    }
    let mut lines = Vec::new();
    for (kind, group) in kinds {
        if group.len() <= ITEMIZED_WARNINGS {
            lines.extend(group.iter().map(|w| w.message.clone()));
        } else {
            let first: Vec<&str> = group
                .iter()
                .take(SUMMARY_PATHS)
                .map(|w| w.path.as_str())
                .collect();
            lines.push(format!(
                "{} {kind} (first: {}; {note})",
                thousands(group.len()),
                first.join(", ")
            ));
        }
    }
    lines
}

/// `n` with a comma every three digits (`5,000`).
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(kind: &'static str, path: &str) -> FileWarning {
        FileWarning::new(kind, path, format!("{path}: {kind}"))
    }

    #[test]
    fn few_are_itemized_and_many_are_summarized() {
        let mut all: Vec<FileWarning> = (0..5000)
            .map(|i| {
                w(
                    "memory files had no id; ids were assigned",
                    &format!("m{i}.md"),
                )
            })
            .collect();
        all.insert(1, w("agenda files could not be read", "agenda/x.md"));
        assert_eq!(
            summarize_warnings(&all),
            vec![
                "5,000 memory files had no id; ids were assigned (first: m0.md, m1.md, m2.md; \
                 all of them are in the log)"
                    .to_owned(),
                "agenda/x.md: agenda files could not be read".to_owned(),
            ]
        );
        let few: Vec<FileWarning> = (0..3).map(|i| w("k", &format!("{i}"))).collect();
        assert_eq!(summarize_warnings(&few), vec!["0: k", "1: k", "2: k"]);
        assert!(summarize_warnings(&[]).is_empty());
    }

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
