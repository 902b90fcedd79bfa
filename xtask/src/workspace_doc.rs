//! What `cargo xtask docs [--check]` derives from `cargo metadata`:
//!
//! - the crate table of `ARCHITECTURE.md` (between [`BEGIN`] and [`END`]): one row per workspace
//!   package in dependency order, its path, what it owns (the package's `description` in its
//!   `Cargo.toml`) and what it depends on (workspace crates, then the third-party crates that are
//!   not everywhere, see [`UBIQUITOUS`]); the prose around the markers is hand-written and kept;
//! - the test layout rules of `docs/development.md` ([`layout_problems`]): one test executable
//!   per package, so a file in `tests/` that `tests/main.rs` does not declare, or a unit test or
//!   code example in a target built with `test = false` / `doctest = false`, would never run.
//!
//! The metadata is `cargo metadata --format-version 1 --no-deps` parsed with serde_json.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The file whose crate table is generated, relative to the workspace root.
pub const ARCHITECTURE_PATH: &str = "ARCHITECTURE.md";
/// The line before the generated crate table.
pub const BEGIN: &str =
    "<!-- BEGIN GENERATED: crates (cargo xtask docs; edit descriptions in Cargo.toml) -->";
/// The line after the generated crate table.
pub const END: &str = "<!-- END GENERATED: crates -->";
/// Third-party crates left out of the "depends on" column: nearly every crate uses them.
pub const UBIQUITOUS: &[&str] = &["serde", "serde_json", "thiserror", "tracing"];

/// Runs `cargo metadata --format-version 1 --no-deps` in `root` and parses its JSON.
///
/// Errors: cargo cannot be run, exits non-zero (its stderr is returned), or prints invalid JSON.
pub fn cargo_metadata(root: &Path) -> Result<Value, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata printed bad JSON: {e}"))
}

/// One workspace package, as far as the table and the layout check need it.
struct Package {
    name: String,
    /// Directory of its `Cargo.toml`, relative to the workspace root (`.` for the root package).
    dir: String,
    description: String,
    /// Normal (not dev, not build) dependencies, by package name.
    deps: Vec<String>,
    /// `(kind, src_path, test, doctest)` of each target.
    targets: Vec<(String, PathBuf, bool, bool)>,
}

fn packages(meta: &Value) -> Result<Vec<Package>, String> {
    let root = meta["workspace_root"]
        .as_str()
        .ok_or("cargo metadata has no workspace_root")?;
    let list = meta["packages"]
        .as_array()
        .ok_or("cargo metadata has no packages")?;
    let mut out = Vec::new();
    for p in list {
        let name = p["name"]
            .as_str()
            .ok_or("a package has no name")?
            .to_owned();
        let manifest = Path::new(p["manifest_path"].as_str().unwrap_or_default());
        let dir = manifest
            .parent()
            .and_then(|d| d.strip_prefix(root).ok())
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        let deps = p["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str().map(str::to_owned))
            .collect();
        let targets = p["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                (
                    t["kind"][0].as_str().unwrap_or_default().to_owned(),
                    PathBuf::from(t["src_path"].as_str().unwrap_or_default()),
                    t["test"].as_bool().unwrap_or(true),
                    t["doctest"].as_bool().unwrap_or(false),
                )
            })
            .collect();
        out.push(Package {
            name,
            dir: if dir.is_empty() { ".".into() } else { dir },
            description: p["description"].as_str().unwrap_or_default().to_owned(),
            deps,
            targets,
        });
    }
    Ok(out)
}

/// `elroy-tools-agenda` → `tools-agenda`: workspace crates are named without the prefix.
fn short(name: &str) -> &str {
    name.strip_prefix("elroy-").unwrap_or(name)
}

/// The Markdown crate table (header, separator, one row per package, no markers), packages in
/// dependency order (a crate after everything it depends on; ties by name).
///
/// Errors: the metadata lacks the fields `cargo metadata --format-version 1` always has.
pub fn crate_table(meta: &Value) -> Result<String, String> {
    let pkgs = packages(meta)?;
    let names: BTreeSet<&str> = pkgs.iter().map(|p| p.name.as_str()).collect();
    let by_name: BTreeMap<&str, &Package> = pkgs.iter().map(|p| (p.name.as_str(), p)).collect();
    let mut placed: Vec<&Package> = Vec::new();
    let mut left: BTreeSet<&str> = names.clone();
    while !left.is_empty() {
        let ready = left
            .iter()
            .copied()
            .find(|n| {
                by_name[n]
                    .deps
                    .iter()
                    .all(|d| !left.contains(d.as_str()) || d == n)
            })
            // A cycle cannot happen in cargo; take the first name rather than loop forever.
            .or_else(|| left.iter().copied().next())
            .ok_or("no package left")?;
        left.remove(ready);
        placed.push(by_name[ready]);
    }
    let mut table = String::from("| crate | path | owns | depends on |\n|---|---|---|---|\n");
    for p in placed {
        let mut ours: Vec<&str> = Vec::new();
        let mut theirs: Vec<&str> = Vec::new();
        for d in &p.deps {
            if names.contains(d.as_str()) {
                ours.push(short(d));
            } else if !UBIQUITOUS.contains(&d.as_str()) {
                theirs.push(d);
            }
        }
        ours.sort_unstable();
        ours.dedup();
        theirs.sort_unstable();
        theirs.dedup();
        let depends = match (ours.is_empty(), theirs.is_empty()) {
            (true, true) => "—".to_owned(),
            (false, true) => ours.join(", "),
            (true, false) => theirs.join(", "),
            (false, false) => format!("{}; {}", ours.join(", "), theirs.join(", ")),
        };
        table.push_str(&format!(
            "| `{}` | `{}` | {} | {} |\n",
            p.name,
            p.dir,
            cell(&p.description),
            depends
        ));
    }
    Ok(table)
}

/// A description as one table cell: `|` escaped, line breaks as spaces.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// `doc` with the text between the [`BEGIN`] and [`END`] lines replaced by `table`.
///
/// Errors: a marker is missing or they are out of order (the message names both markers).
pub fn splice(doc: &str, table: &str) -> Result<String, String> {
    let missing = || {
        format!(
            "{ARCHITECTURE_PATH} needs the generated crate table between the lines\n  {BEGIN}\n  {END}"
        )
    };
    let start = doc.find(BEGIN).ok_or_else(missing)? + BEGIN.len();
    let end = doc[start..].find(END).ok_or_else(missing)? + start;
    Ok(format!("{}\n{}{}", &doc[..start], table, &doc[end..]))
}

/// The test layout rules that a build cannot see, as one message per violation (empty when the
/// workspace follows them); `root` is the workspace root.
///
/// - every `tests/*.rs` of a package is declared (`mod NAME;`) in its `tests/main.rs`, else
///   `autotests = false` means it never runs;
/// - a lib or bin target with `test = false` has no `#[cfg(test)]` under its `src/`;
/// - a lib target with `doctest = false` has no Rust code example in its rustdoc.
///
/// Errors: the metadata lacks the fields `cargo metadata` always has.
pub fn layout_problems(meta: &Value, root: &Path) -> Result<Vec<String>, String> {
    let mut problems = Vec::new();
    for p in packages(meta)? {
        let dir = root.join(&p.dir);
        let tests = dir.join("tests");
        let mut files: Vec<String> = std::fs::read_dir(&tests)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".rs") && f != "main.rs")
            .collect();
        files.sort();
        if !files.is_empty() {
            let main = std::fs::read_to_string(tests.join("main.rs")).unwrap_or_default();
            for f in &files {
                let stem = f.trim_end_matches(".rs");
                if !main.lines().any(|l| l.trim() == format!("mod {stem};")) {
                    problems.push(format!(
                        "{}/tests/{f} is not declared in {}/tests/main.rs (`mod {stem};`): it is never compiled",
                        p.dir, p.dir
                    ));
                }
            }
        }
        for (kind, src, test, doctest) in &p.targets {
            if kind != "lib" && kind != "bin" {
                continue;
            }
            let Some(src_dir) = src.parent() else {
                continue;
            };
            let sources = rust_files(src_dir);
            if !test
                && let Some(f) = sources
                    .iter()
                    .find(|(_, text)| text.contains("#[cfg(test)]"))
            {
                problems.push(format!(
                    "{}: {kind} target has `test = false` but {} has #[cfg(test)] tests that never run; remove `test = false` from {}/Cargo.toml",
                    p.name,
                    f.0.strip_prefix(root).unwrap_or(&f.0).display(),
                    p.dir
                ));
            }
            if kind == "lib"
                && !doctest
                && let Some(f) = sources.iter().find(|(_, text)| has_doc_test(text))
            {
                problems.push(format!(
                    "{}: lib has `doctest = false` but {} has a code example in its rustdoc that never runs; remove `doctest = false` from {}/Cargo.toml",
                    p.name,
                    f.0.strip_prefix(root).unwrap_or(&f.0).display(),
                    p.dir
                ));
            }
        }
    }
    Ok(problems)
}

/// Every `.rs` file under `dir` with its text, sorted by path.
fn rust_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                out.push((path, text));
            }
        }
    }
    out.sort();
    out
}

/// Whether `text` has a rustdoc code block that rustdoc would compile: a fence in a `///` or
/// `//!` comment that opens with no language or with Rust attributes only (`rust`, `no_run`,
/// `ignore`, `compile_fail`, `should_panic`, `editionNNNN`); ```` ```text ```` and other
/// languages are not tests.
pub fn has_doc_test(text: &str) -> bool {
    let mut open = false;
    for line in text.lines() {
        let t = line.trim_start();
        let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) else {
            continue;
        };
        let Some(info) = doc.trim_start().strip_prefix("```") else {
            continue;
        };
        if open {
            open = false;
            continue;
        }
        open = true;
        let rust = info.split(',').map(str::trim).all(|a| {
            matches!(
                a,
                "" | "rust" | "no_run" | "ignore" | "compile_fail" | "should_panic"
            ) || a.starts_with("edition")
        });
        if rust {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    /// A two-crate workspace as `cargo metadata --no-deps` prints it (fields trimmed).
    fn meta(core_description: &str) -> Value {
        serde_json::json!({
            "workspace_root": "/w",
            "packages": [
                {
                    "name": "elroy-store",
                    "manifest_path": "/w/crates/store/Cargo.toml",
                    "description": "A store | on disk.",
                    "dependencies": [
                        {"name": "elroy-core", "kind": null},
                        {"name": "serde", "kind": null},
                        {"name": "rusqlite", "kind": null},
                        {"name": "tempfile", "kind": "dev"}
                    ],
                    "targets": [{"kind": ["lib"], "src_path": "/w/crates/store/src/lib.rs", "test": true, "doctest": true}]
                },
                {
                    "name": "elroy-core",
                    "manifest_path": "/w/crates/core/Cargo.toml",
                    "description": core_description,
                    "dependencies": [{"name": "jiff", "kind": null}],
                    "targets": [{"kind": ["lib"], "src_path": "/w/crates/core/src/lib.rs", "test": true, "doctest": true}]
                }
            ]
        })
    }

    #[test]
    fn table_rows_in_dependency_order_with_descriptions_and_dependencies() {
        let table = crate_table(&meta("The vocabulary.")).unwrap();
        assert_eq!(
            table,
            "| crate | path | owns | depends on |\n|---|---|---|---|\n\
             | `elroy-core` | `crates/core` | The vocabulary. | jiff |\n\
             | `elroy-store` | `crates/store` | A store \\| on disk. | core; rusqlite |\n"
        );
    }

    /// Kind: the committed table no longer matches the crates (a description or a dependency
    /// changed): the regenerated document differs, so `docs --check` fails.
    #[test]
    fn a_stale_table_is_detected_and_prose_is_kept() {
        let doc = format!("# A\n\nprose\n\n{BEGIN}\nold table\n{END}\n\nmore prose\n");
        let fresh = splice(&doc, &crate_table(&meta("The vocabulary.")).unwrap()).unwrap();
        assert_ne!(fresh, doc, "an old table is stale");
        assert!(fresh.starts_with("# A\n\nprose\n\n"));
        assert!(fresh.ends_with(&format!("{END}\n\nmore prose\n")));
        // Regenerating a current document changes nothing.
        let again = splice(&fresh, &crate_table(&meta("The vocabulary.")).unwrap()).unwrap();
        assert_eq!(again, fresh);
        // A changed description makes the current document stale again.
        let changed = splice(&fresh, &crate_table(&meta("Changed.")).unwrap()).unwrap();
        assert_ne!(changed, fresh);
    }

    #[test]
    fn missing_markers_are_a_clear_error() {
        let err = splice("# A\nno table\n", "t").unwrap_err();
        assert!(err.contains(BEGIN) && err.contains(END), "{err}");
        let err = splice(&format!("{END}\n{BEGIN}\n"), "t").unwrap_err();
        assert!(err.contains("needs the generated crate table"), "{err}");
    }

    #[test]
    fn doc_tests_are_rust_fences_only() {
        assert!(has_doc_test("/// ```\n/// x();\n/// ```\nfn f() {}"));
        assert!(has_doc_test("//! ```no_run\n//! x();\n//! ```"));
        assert!(has_doc_test("    /// ```rust,ignore\n    /// ```"));
        assert!(!has_doc_test("/// ```text\n/// out\n/// ```"));
        assert!(!has_doc_test("// ```\n// x\n// ```"));
        // The closing fence of a text block does not open a Rust block.
        assert!(!has_doc_test("/// ```json\n/// {}\n/// ```\n/// more"));
    }

    /// Kind: a test or example that would silently never run (an undeclared test file, unit
    /// tests under `test = false`, a doc example under `doctest = false`).
    #[test]
    fn layout_problems_name_what_would_never_run() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "crates/a/src/lib.rs",
            "/// ```\n/// a();\n/// ```\n#[cfg(test)]\nmod t {}\n",
        );
        write("crates/a/tests/main.rs", "mod one;\n");
        write("crates/a/tests/one.rs", "");
        write("crates/a/tests/two.rs", "");
        let root_str = root.to_string_lossy().into_owned();
        let meta = serde_json::json!({
            "workspace_root": root_str,
            "packages": [{
                "name": "elroy-a",
                "manifest_path": format!("{root_str}/crates/a/Cargo.toml"),
                "description": "",
                "dependencies": [],
                "targets": [{"kind": ["lib"], "src_path": format!("{root_str}/crates/a/src/lib.rs"), "test": false, "doctest": false}]
            }]
        });
        let problems = layout_problems(&meta, &root).unwrap();
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(
            problems[0]
                .starts_with("crates/a/tests/two.rs is not declared in crates/a/tests/main.rs")
        );
        assert!(problems[1].contains("`test = false` but crates/a/src/lib.rs has #[cfg(test)]"));
        assert!(
            problems[2].contains("`doctest = false` but crates/a/src/lib.rs has a code example")
        );
        // Declared, and the flags removed: nothing to report.
        write("crates/a/tests/main.rs", "mod one;\nmod two;\n");
        let mut meta = meta;
        meta["packages"][0]["targets"][0]["test"] = true.into();
        meta["packages"][0]["targets"][0]["doctest"] = true.into();
        assert_eq!(layout_problems(&meta, &root).unwrap(), Vec::<String>::new());
    }
}
