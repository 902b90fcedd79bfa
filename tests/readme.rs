//! README.md says what elroy really prints: its sample tool answers are produced by the real
//! binary here, and its command table names every subcommand `elroy --help` lists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{TestHome, stderr, stdout};

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

#[test]
fn the_interface_mock_up_shows_real_tool_answers() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .env("ELROY_NOW", "2026-12-01T09:00:00Z")
        .args([
            "tools",
            "call",
            "add_agenda_item",
            "--args",
            r#"{"text":"Plan the trip"}"#,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer = stdout(&out);
    let answer = answer.trim_end();
    let readme = readme();
    assert!(
        readme.contains(&format!("│ {answer}")),
        "README's mock-up should show `{answer}`"
    );
    let missing = home.call("read_file", r#"{"path":"notes.txt"}"#);
    let error = stderr(&missing);
    assert!(
        readme.contains(error.trim_end()),
        "README's mock-up should show `{}`",
        error.trim_end()
    );
}

#[test]
fn the_command_table_names_every_subcommand() {
    let home = TestHome::new();
    let out = home.cmd().arg("--help").output().unwrap();
    let help = stdout(&out);
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A command's line starts two spaces in; its description's continuation lines further.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() > 10, "{help}");
    let readme = readme();
    let table = readme
        .split("## The command line")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    for command in commands {
        assert!(
            table.contains(&format!("`elroy {command}")),
            "`elroy {command}` is not in README's command table"
        );
    }
}
