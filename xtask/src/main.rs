//! Maintenance jobs for the elroy workspace.
//!
//! - `cargo xtask schema` regenerates `docs/tools_schema.md` from the registered built-in tools.
//! - `cargo xtask schema --check` exits 1 and prints a diff when the file is out of date.
//! - `cargo xtask docs [--check]` does the same for the other generated docs
//!   (`docs/configuration.md`, `docs/tools.md`, the crate table of `ARCHITECTURE.md` from
//!   `cargo metadata`, the migrations and store keys of `docs/formats.md`: `formats_doc.rs`) and
//!   checks the test layout rules (`workspace_doc.rs`) and that every reference in the code to a
//!   docs heading resolves (`doc_refs.rs`).
//! - `cargo xtask bench` builds the release binary and prints the headline performance figures
//!   (`bench.rs`, `docs/performance.md`).
//! - `cargo xtask scale-home DIR` writes a large synthetic home: 10,000 agenda items, 100,000
//!   memories, 10,000 commits of history (`scale_home.rs`).
//! - `cargo xtask vector-recall --model DIR --locomo DIR` measures how much of the exact top 10
//!   the embedding leg's sign-bit codes find on real sentence-model vectors (`vector_recall.rs`).

mod bench;
mod doc_refs;
mod formats_doc;
mod locomo;
mod recall_bench;
mod recall_oneproc;
mod scale_bench;
mod scale_home;
mod tools_doc;
mod vector_cache;
mod vector_recall;
mod workspace_doc;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use elroy_config::{CONFIGURATION_DOC_PATH, configuration_markdown};
use elroy_tools_builtin::{SCHEMA_DOC_PATH, builtin_registry, tools_schema_markdown};

const USAGE: &str = "usage: cargo xtask schema [--check] | docs [--check]

  schema           regenerate docs/tools_schema.md from the registered built-in tools
  schema --check   exit 1, showing the difference, when docs/tools_schema.md is out of date
  docs             regenerate docs/configuration.md (configuration keys), docs/tools.md (tool guide)
                   ARCHITECTURE.md's crate table (from cargo metadata) and docs/formats.md's
                   migrations and store keys; check the test layout and the code's docs references
  docs --check     exit 1, showing the difference, when one is out of date, the layout is broken
                   or a reference in the code names a docs file or heading that does not exist
                   (or an issue number, in code and docs)
  bench            build release and print the performance figures (cargo xtask bench --help)
  scale-home DIR   write a large synthetic home (cargo xtask scale-home --help)
  vector-recall    how much of the exact top 10 the embedding leg's codes find, on LoCoMo
                   (cargo xtask vector-recall --help)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["schema"] => generated(
            SCHEMA_DOC_PATH,
            &tools_schema_markdown(&builtin_registry()),
            false,
        ),
        ["schema", "--check"] => generated(
            SCHEMA_DOC_PATH,
            &tools_schema_markdown(&builtin_registry()),
            true,
        ),
        ["docs"] => docs(false),
        ["docs", "--check"] => docs(true),
        ["bench", rest @ ..] => bench::run(&workspace_root(), rest),
        ["scale-home", rest @ ..] => scale_home::run(rest),
        ["vector-recall", rest @ ..] => vector_recall::run(rest),
        ["-h" | "--help" | "help"] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// `cargo xtask docs [--check]`: `docs/configuration.md`, `docs/tools.md`, the crate table of
/// `ARCHITECTURE.md`, the generated parts of `docs/formats.md`, and the test layout rules and the
/// code's references to docs headings (both only checked, never fixed).
fn docs(check: bool) -> ExitCode {
    let configuration = generated(CONFIGURATION_DOC_PATH, &configuration_markdown(), check);
    let tools = generated(
        tools_doc::TOOLS_DOC_PATH,
        &tools_doc::tools_markdown(&builtin_registry()),
        check,
    );
    let workspace = workspace_docs(check);
    let current = std::fs::read_to_string(workspace_root().join(formats_doc::FORMATS_DOC_PATH))
        .unwrap_or_default();
    let formats = match formats_doc::expected(&current) {
        Ok(expected) => generated(formats_doc::FORMATS_DOC_PATH, &expected, check),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    };
    let references = match doc_refs::problems(&workspace_root()).as_slice() {
        [] => {
            println!(
                "docs references: every reference in the code names an existing heading, and \
                 none names an issue"
            );
            ExitCode::SUCCESS
        }
        problems => {
            eprintln!(
                "docs references ({} in {}, README.md, ARCHITECTURE.md, docs/; headings are \
                 GitHub anchors):",
                problems.len(),
                doc_refs::SCANNED.join(", ")
            );
            for p in problems {
                eprintln!("  {p}");
            }
            ExitCode::FAILURE
        }
    };
    if [configuration, tools, workspace, formats, references]
        .iter()
        .all(|c| *c == ExitCode::SUCCESS)
    {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The parts of `docs` that come from `cargo metadata`.
fn workspace_docs(check: bool) -> ExitCode {
    let root = workspace_root();
    let meta = match workspace_doc::cargo_metadata(&root) {
        Ok(meta) => meta,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let current =
        std::fs::read_to_string(root.join(workspace_doc::ARCHITECTURE_PATH)).unwrap_or_default();
    let expected =
        workspace_doc::crate_table(&meta).and_then(|t| workspace_doc::splice(&current, &t));
    let table = match expected {
        Ok(expected) => generated(workspace_doc::ARCHITECTURE_PATH, &expected, check),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    };
    let layout = match workspace_doc::layout_problems(&meta, &root) {
        Ok(problems) if problems.is_empty() => {
            println!("test layout: every test file and unit test is built");
            ExitCode::SUCCESS
        }
        Ok(problems) => {
            eprintln!("test layout (docs/development.md, \"Test layout\"):");
            for p in problems {
                eprintln!("  {p}");
            }
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    };
    if table == ExitCode::SUCCESS && layout == ExitCode::SUCCESS {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Compares (`check`) or writes the generated file `relative` with the text `expected`.
fn generated(relative: &str, expected: &str, check: bool) -> ExitCode {
    let path = workspace_root().join(relative);
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if check {
        if current == expected {
            println!("{relative} is up to date");
            return ExitCode::SUCCESS;
        }
        let job = if relative == SCHEMA_DOC_PATH {
            "schema"
        } else {
            "docs"
        };
        let what = if relative == workspace_doc::ARCHITECTURE_PATH {
            " (its crate table is generated from cargo metadata: the packages, their Cargo.toml \
             `description` and dependencies)"
        } else {
            ""
        };
        eprintln!(
            "{relative} is out of date{what}; run `cargo xtask {job}` and commit the result:"
        );
        let diff = similar::TextDiff::from_lines(current.as_str(), expected);
        eprint!(
            "{}",
            diff.unified_diff()
                .context_radius(2)
                .header("committed", "generated")
        );
        return ExitCode::FAILURE;
    }
    if current == expected {
        println!("{relative} is already up to date");
        return ExitCode::SUCCESS;
    }
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            let tmp = path.with_extension("md.tmp");
            std::fs::write(&tmp, expected)?;
            std::fs::rename(&tmp, &path)
        });
    match written {
        Ok(()) => {
            println!("wrote {relative}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cannot write {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}
