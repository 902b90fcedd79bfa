//! Maintenance jobs for the elroy workspace.
//!
//! - `cargo xtask schema` regenerates `docs/tools_schema.md` from the registered built-in tools.
//! - `cargo xtask schema --check` exits 1 and prints a diff when the file is out of date.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use elroy_tools_builtin::{SCHEMA_DOC_PATH, builtin_registry, tools_schema_markdown};

const USAGE: &str = "usage: cargo xtask schema [--check]

  schema           regenerate docs/tools_schema.md from the registered built-in tools
  schema --check   exit 1, showing the difference, when docs/tools_schema.md is out of date";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["schema"] => schema(false),
        ["schema", "--check"] => schema(true),
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

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn schema(check: bool) -> ExitCode {
    let path = workspace_root().join(SCHEMA_DOC_PATH);
    let expected = tools_schema_markdown(&builtin_registry());
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if check {
        if current == expected {
            println!("{SCHEMA_DOC_PATH} is up to date");
            return ExitCode::SUCCESS;
        }
        eprintln!(
            "{SCHEMA_DOC_PATH} is out of date; run `cargo xtask schema` and commit the result:"
        );
        let diff = similar::TextDiff::from_lines(&current, &expected);
        eprint!(
            "{}",
            diff.unified_diff()
                .context_radius(2)
                .header("committed", "generated")
        );
        return ExitCode::FAILURE;
    }
    if current == expected {
        println!("{SCHEMA_DOC_PATH} is already up to date");
        return ExitCode::SUCCESS;
    }
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            let tmp = path.with_extension("md.tmp");
            std::fs::write(&tmp, &expected)?;
            std::fs::rename(&tmp, &path)
        });
    match written {
        Ok(()) => {
            println!("wrote {SCHEMA_DOC_PATH}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cannot write {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}
