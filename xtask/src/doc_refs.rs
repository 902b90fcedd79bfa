//! The references from code to the repository's docs (`cargo xtask docs --check`).
//!
//! Every `docs/NAME.md#anchor` in `crates/`, `src/`, `xtask/` and `tests/` must name an existing
//! file and one of its headings, with GitHub's anchors (the heading text lower-cased, punctuation
//! dropped, spaces made `-`, a repeated heading suffixed `-1`, `-2`, …; headings read with
//! pulldown-cmark). The same holds in `docs/*.md`, README.md and ARCHITECTURE.md, whose relative
//! links (`[x](behaviour.md#recall)`) are checked the same way. Also refused: a citation of the
//! outside specification the repository once depended on (the bare name of one of its four files,
//! formats, orchestrator, robustness and tools, each with `.md`; `shared/spec`; a section number
//! after `§`), and a reference to
//! `../shared` outside test code (files under `tests/`, `tests.rs`, or after a `#[cfg(test)]` line),
//! since a clone without that directory must still explain itself. And refused in every `.rs`,
//! `.md` and `.toml` file read (the scanned directories, `docs/*.md`, README.md, ARCHITECTURE.md):
//! a reference to a numbered issue (the word issue followed by a number, with or without `#`, any
//! case), which resolves nowhere in the repository: a comment or page says what and why, and the
//! history lives in the commit messages. (A changelog, which is history, would not be read; the
//! repository has none.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use regex::Regex;

/// The directories whose files are scanned for references.
pub const SCANNED: [&str; 4] = ["crates", "src", "xtask", "tests"];

/// This file: it spells the refused forms out, so it is not scanned.
const SELF: &str = "xtask/src/doc_refs.rs";

/// File kinds read (others, and files over 1 MiB, are skipped).
const EXTENSIONS: [&str; 9] = ["rs", "toml", "md", "json", "txt", "sh", "yaml", "yml", "py"];

/// GitHub's anchor of a heading's text.
pub fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of every heading of `markdown`, in order, repeated ones suffixed as GitHub does.
pub fn anchors(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    let base = slug(&h);
                    let n = seen.entry(base.clone()).or_insert(0);
                    out.push(if *n == 0 { base } else { format!("{base}-{n}") });
                    *n += 1;
                }
            }
            _ => {}
        }
    }
    out
}

struct Patterns {
    doc_ref: Regex,
    doc_link: Regex,
    old_file: Regex,
    old_section: Regex,
    shared: Regex,
    issue: Regex,
}

impl Patterns {
    fn new() -> Patterns {
        let re = |s: &str| Regex::new(s).unwrap_or_else(|e| unreachable!("{s}: {e}"));
        Patterns {
            doc_ref: re(r"(?:^|[^\w/.-])docs/([\w./-]+?\.md)(?:#([\w-]+))?"),
            doc_link: re(r"\]\(([\w./-]+?\.md)(?:#([\w-]+))?\)"),
            old_file: re(r"(?:^|[^\w/.-])((?:formats|orchestrator|robustness|tools)\.md)\b"),
            old_section: re(r"§\s?[0-9]"),
            shared: re(r"\.\./shared\b|\bshared/(?:spec|fixtures|golden|tools)\b"),
            issue: re(r"(?i)\bissues?\s*[#-]?\s*[0-9]+\b"),
        }
    }
}

/// Every problem found under `root`, as `path:line: message`, in file and line order.
pub fn problems(root: &Path) -> Vec<String> {
    let patterns = Patterns::new();
    let mut docs = Docs::default();
    let mut out = Vec::new();
    for dir in SCANNED {
        let mut files = Vec::new();
        walk(&root.join(dir), &mut files);
        files.sort();
        for file in files {
            let relative = relative(root, &file);
            if relative == SELF {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            check_code(
                root,
                &relative,
                &text,
                Mode::Code,
                &patterns,
                &mut docs,
                &mut out,
            );
        }
    }
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.extend(["README.md", "ARCHITECTURE.md"].map(|p| root.join(p)));
    pages.sort();
    for page in pages {
        let Ok(text) = std::fs::read_to_string(&page) else {
            continue;
        };
        let relative = relative(root, &page);
        let mode = if relative.contains('/') {
            Mode::Docs
        } else {
            Mode::RootPage
        };
        check_code(root, &relative, &text, mode, &patterns, &mut docs, &mut out);
        let base = Path::new(&relative)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            for cap in patterns.doc_link.captures_iter(line) {
                let target = base.join(&cap[1]);
                let target = normalise(&target);
                if let Some(problem) = docs.resolve(root, &target, cap.get(2).map(|m| m.as_str())) {
                    out.push(format!("{relative}:{}: {problem}", n + 1));
                }
            }
        }
    }
    out
}

/// What is refused where.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `crates/`, `src/`, `xtask/`, `tests/`: everything.
    Code,
    /// README.md, ARCHITECTURE.md: everything but `../shared` (they explain what the tests read).
    RootPage,
    /// `docs/*.md`: as a root page, except that a page's bare file name names its sibling page.
    Docs,
}

/// The problems of one scanned file.
fn check_code(
    root: &Path,
    relative: &str,
    text: &str,
    mode: Mode,
    patterns: &Patterns,
    docs: &mut Docs,
    out: &mut Vec<String>,
) {
    let test_file = mode != Mode::Code
        || relative.split('/').any(|part| part == "tests")
        || relative.ends_with("/tests.rs");
    let mut in_tests = test_file;
    let prose = [".rs", ".md", ".toml"]
        .iter()
        .any(|x| relative.ends_with(x));
    for (n, line) in text.lines().enumerate() {
        let at = format!("{relative}:{}", n + 1);
        if let Some(m) = patterns.issue.find(line).filter(|_| prose) {
            out.push(format!(
                "{at}: `{}` refers to an issue, which resolves nowhere in the repository; say \
                 what and why instead (the history belongs in the commit message)",
                m.as_str()
            ));
        }
        if line.trim_start().starts_with("#[cfg(test)]") {
            in_tests = true;
        }
        for cap in patterns.doc_ref.captures_iter(line) {
            let target = format!("docs/{}", &cap[1]);
            if let Some(problem) = docs.resolve(root, &target, cap.get(2).map(|m| m.as_str())) {
                out.push(format!("{at}: {problem}"));
            }
        }
        for cap in patterns
            .old_file
            .captures_iter(line)
            .filter(|_| mode != Mode::Docs)
        {
            out.push(format!(
                "{at}: `{}` cites the outside specification, which is not in the repository; \
                 cite a heading of docs/ (docs/formats.md#agenda-items) instead",
                &cap[1]
            ));
        }
        if patterns.old_section.is_match(line) {
            out.push(format!(
                "{at}: a bare section number (§…) of the outside specification; cite a heading \
                 of docs/ instead"
            ));
        }
        if let Some(m) = patterns.shared.find(line) {
            if m.as_str() == "shared/spec" {
                out.push(format!(
                    "{at}: `shared/spec` is outside the repository; cite a heading of docs/ instead"
                ));
            } else if !in_tests {
                out.push(format!(
                    "{at}: `{}` is outside the repository and only tests may read it; explain \
                     it in docs/ or in the comment itself",
                    m.as_str()
                ));
            }
        }
    }
}

/// The docs read so far: path → anchors (`None`: no such file).
#[derive(Default)]
struct Docs(BTreeMap<String, Option<BTreeSet<String>>>);

impl Docs {
    /// `None` when `target` (relative to the root) exists and has `anchor`; else the problem.
    fn resolve(&mut self, root: &Path, target: &str, anchor: Option<&str>) -> Option<String> {
        let entry = self.0.entry(target.to_owned()).or_insert_with(|| {
            std::fs::read_to_string(root.join(target))
                .ok()
                .map(|t| anchors(&t).into_iter().collect())
        });
        match (entry, anchor) {
            (None, _) => Some(format!("{target} does not exist")),
            (Some(found), Some(anchor)) if !found.contains(anchor) => Some(format!(
                "{target}#{anchor}: {target} has no heading with that anchor"
            )),
            _ => None,
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                walk(&path, out);
            }
        } else if kind.is_file()
            && path
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| EXTENSIONS.contains(&x))
            && entry.metadata().is_ok_and(|m| m.len() <= 1 << 20)
        {
            out.push(path);
        }
    }
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// `a/./b/../c` as `a/c`, with `/` separators.
fn normalise(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_githubs() {
        let md = "# The home's files\n## `add_agenda_item`\n### D1: every failure is one error form\n\
                  ## Deliberate differences from Elroy 0.5.0\n## Notes\n## Notes\n";
        assert_eq!(
            anchors(md),
            [
                "the-homes-files",
                "add_agenda_item",
                "d1-every-failure-is-one-error-form",
                "deliberate-differences-from-elroy-050",
                "notes",
                "notes-1",
            ]
        );
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    const DOC: &str = "# Formats\n\n## Agenda items\n\nSee [memories](behaviour.md#recall).\n";

    #[test]
    fn a_sound_tree_has_no_problems() {
        let dir = tree(&[
            ("docs/formats.md", DOC),
            ("docs/behaviour.md", "## Recall\n"),
            (
                "crates/a/src/lib.rs",
                "//! An item (`docs/formats.md#agenda-items`, D6).\nfn a() {}\n",
            ),
            (
                "crates/a/tests/fixture.rs",
                "//! reads ../shared/fixtures\nconst P: &str = \"../shared/fixtures\";\n",
            ),
        ]);
        assert_eq!(problems(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn a_broken_anchor_a_missing_file_and_old_citations_are_named_by_file_and_line() {
        let dir = tree(&[
            // The heading the code cites was renamed: its anchor no longer exists.
            (
                "docs/formats.md",
                &DOC.replace("Agenda items", "Agenda entries"),
            ),
            ("docs/behaviour.md", "## Recall\n"),
            (
                "crates/a/src/lib.rs",
                "//! An item (`docs/formats.md#agenda-items`).\n\
                 //! Gone (`docs/gone.md#x`), whole file fine (`docs/behaviour.md`).\n\
                 //! Old: `formats\x2emd` §4.1, then (§4.2).\n\
                 //! Old: `shared/spec/tools.md`.\n\
                 const P: &str = \"../shared/golden\";\n\
                 #[cfg(test)]\nconst Q: &str = \"../shared/golden\";\n",
            ),
            (
                "src/main.rs",
                "// `tools\x2emd` §8.0 and robustness\x2emd R2\n",
            ),
        ]);
        let problems = problems(dir.path());
        let at: Vec<&str> = problems
            .iter()
            .map(|p| p.split(": ").next().unwrap())
            .collect();
        assert_eq!(
            at,
            [
                "crates/a/src/lib.rs:1",
                "crates/a/src/lib.rs:2",
                "crates/a/src/lib.rs:3",
                "crates/a/src/lib.rs:3",
                "crates/a/src/lib.rs:4",
                "crates/a/src/lib.rs:5",
                "src/main.rs:1",
                "src/main.rs:1",
                "src/main.rs:1",
            ],
            "{problems:#?}"
        );
        assert!(
            problems[0].contains("docs/formats.md#agenda-items: docs/formats.md has no heading")
        );
        assert!(problems[1].contains("docs/gone.md does not exist"));
        assert!(problems[4].contains("`shared/spec` is outside the repository"));
        assert!(problems[5].contains("`../shared` is outside the repository"));
    }

    #[test]
    fn links_between_the_docs_are_checked() {
        let dir = tree(&[
            ("docs/formats.md", DOC),
            ("docs/behaviour.md", "## Recall now\n"),
        ]);
        assert_eq!(
            problems(dir.path()),
            [
                "docs/formats.md:5: docs/behaviour.md#recall: docs/behaviour.md has no heading with that anchor"
            ]
        );
    }

    #[test]
    fn issue_numbers_are_refused_in_code_and_pages_and_plain_words_are_not() {
        let dir = tree(&[
            ("docs/formats.md", "# Formats\n\nKept since issue 31.\n"),
            (
                "crates/a/src/lib.rs",
                "// A fix (Issue #12).\n// ISSUES 7 and 8\n// issue-4\n\
                 // An issue with the lock; issue_id: 3; tissue 5; issues.\n",
            ),
            ("README.md", "The reader (see issue 2) and an open issue.\n"),
            // Not prose of the repository: data files and a changelog are not refused.
            ("crates/a/tests/data/chat.json", "{\"text\": \"issue 9\"}\n"),
            ("CHANGELOG.md", "- issue 1: first release\n"),
        ]);
        let problems = problems(dir.path());
        let at: Vec<&str> = problems
            .iter()
            .map(|p| p.split(": ").next().unwrap())
            .collect();
        assert_eq!(
            at,
            [
                "crates/a/src/lib.rs:1",
                "crates/a/src/lib.rs:2",
                "crates/a/src/lib.rs:3",
                "README.md:1",
                "docs/formats.md:3",
            ],
            "{problems:#?}"
        );
        assert!(problems[0].contains("`Issue #12` refers to an issue"));
    }
}
