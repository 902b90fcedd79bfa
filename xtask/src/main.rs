//! Maintenance jobs for the elroy workspace.
//!
//! - `cargo xtask schema` regenerates `docs/tools_schema.md` from the registered built-in tools.
//! - `cargo xtask schema --check` exits 1 and prints a diff when the file is out of date.
//! - `cargo xtask docs [--check]` does the same for the other generated docs
//!   (`docs/configuration.md`, `docs/tools.md`).
//! - `cargo xtask bench` builds the release binary and prints the headline performance figures
//!   (`bench.rs`, `docs/performance.md`).
//! - `cargo xtask scale-home DIR` writes a large synthetic home: 10,000 agenda items, 100,000
//!   memories, 10,000 commits of history (`scale_home.rs`).

mod bench;
mod scale_bench;
mod scale_home;
mod tools_doc;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use elroy_config::{CONFIGURATION_DOC_PATH, configuration_markdown};
use elroy_tools_builtin::{SCHEMA_DOC_PATH, builtin_registry, tools_schema_markdown};

const USAGE: &str = "usage: cargo xtask schema [--check] | docs [--check]

  schema           regenerate docs/tools_schema.md from the registered built-in tools
  schema --check   exit 1, showing the difference, when docs/tools_schema.md is out of date
  docs             regenerate docs/configuration.md (configuration keys) and docs/tools.md (tool guide)
  docs --check     exit 1, showing the difference, when it is out of date
  bench            build release and print the performance figures (cargo xtask bench --help)
  scale-home DIR   write a large synthetic home (cargo xtask scale-home --help)";

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

/// `cargo xtask docs [--check]`: `docs/configuration.md` and `docs/tools.md`.
fn docs(check: bool) -> ExitCode {
    let configuration = generated(CONFIGURATION_DOC_PATH, &configuration_markdown(), check);
    let tools = generated(
        tools_doc::TOOLS_DOC_PATH,
        &tools_doc::tools_markdown(&builtin_registry()),
        check,
    );
    if configuration == ExitCode::SUCCESS && tools == ExitCode::SUCCESS {
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
        eprintln!("{relative} is out of date; run `cargo xtask {job}` and commit the result:");
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
